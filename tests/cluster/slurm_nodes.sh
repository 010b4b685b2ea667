#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A throwaway Slurm cluster of two or three nodes (n1, n2, n3) on this host, for multi-node tests
# and benchmarks: a private munged, one slurmctld and a slurmd per node, each on its own port,
# everything under DIR. `start DIR [NODES]` (2 by default) prints nothing and exits 0 once
# `srun -N NODES` works (SLURM_CONF=DIR/slurm.conf); jobs that ask for fewer nodes get the first
# ones. `stop DIR` stops every daemon it started and removes DIR.
# Needs root (slurmd runs jobs as their users) and the packages slurmd slurmctld slurm-client munge.
set -u
action=${1:?usage: slurm_nodes.sh start|stop DIR}
dir=${2:?usage: slurm_nodes.sh start|stop DIR [NODES]}
nodes=${3:-2}
case $nodes in 2 | 3) ;; *) echo "slurm_nodes.sh: 2 or 3 nodes, not $nodes" >&2; exit 2 ;; esac
names=$(seq -s, -f 'n%g' "$nodes")

# slurmstepd starts each task in a session of its own, and with the kernel's autogroups every
# session is a scheduling group of its own: the PEs of the two "nodes", which on real nodes would
# not share cores, here compete as groups on this host's cores, and the kernel then kept runnable
# PEs off the cores for up to 1.7 s: flags put to four PEs spinning on them without calling the
# library came up to 1.07 s late, 8.2 s with other processes computing (16-37 ms with
# autogroups off). Autogroups are off while the cluster runs, as if each node had cores of its
# own, and back as they were after.
autogroup=/proc/sys/kernel/sched_autogroup_enabled

stop() {
    if [ -f "$dir/autogroup" ] && [ -w "$autogroup" ]; then
        cat "$dir/autogroup" >"$autogroup"
    fi
    [ -f "$dir/slurm.conf" ] && SLURM_CONF="$dir/slurm.conf" scontrol shutdown >/dev/null 2>&1
    [ -S "$dir/munge/munge.sock" ] && munged -s --socket="$dir/munge/munge.sock" >/dev/null 2>&1
    for pidfile in "$dir"/slurmd.n*.pid "$dir"/slurmctld.pid "$dir"/munge/munged.pid; do
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile")
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null
    done
    rm -rf "$dir"
}

start() {
    mkdir -p "$dir"/{munge,key,state,log} || return 1
    for node in ${names//,/ }; do
        mkdir -p "$dir/spool/$node" "$dir/tmp/$node" || return 1
    done
    # munged wants its key private and its socket's directory open to every client.
    chmod 700 "$dir/key"
    chmod 755 "$dir" "$dir/munge"
    if [ -w "$autogroup" ]; then
        cat "$autogroup" >"$dir/autogroup" && echo 0 >"$autogroup"
    fi
    local host
    host=$(hostname)
    mungekey -c -k "$dir/key/munge.key" || return 1
    munged --socket="$dir/munge/munge.sock" --key-file="$dir/key/munge.key" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
        --seed-file="$dir/key/munged.seed" || return 1
    # Ports from the directory's name so that two clusters on one host do not collide.
    local base=$((16800 + $(cksum <<<"$dir" | cut -d' ' -f1) % 2000 * 4))
    cat >"$dir/slurm.conf" <<CONF
ClusterName=strata
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
TmpFS=$dir/tmp/%n
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
CONF
    for ((i = 1; i <= nodes; i++)); do
        echo "NodeName=n$i NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + i)) CPUs=2" \
            "RealMemory=8000" >>"$dir/slurm.conf"
    done
    echo "PartitionName=p Nodes=$names Default=YES MaxTime=INFINITE State=UP" \
        "OverSubscribe=FORCE:4" >>"$dir/slurm.conf"
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -f "$SLURM_CONF" || return 1
    for node in ${names//,/ }; do
        slurmd -f "$SLURM_CONF" -N "$node" || return 1
    done
    # Ready when every node runs a job step.
    for _ in $(seq 60); do
        if [ "$(timeout 10 srun -N "$nodes" -n "$nodes" hostname 2>/dev/null | wc -l)" = "$nodes" ]; then
            return 0
        fi
        sleep 1
    done
    echo "slurm_nodes.sh: the $nodes nodes did not come up; logs:" >&2
    tail -n 5 "$dir"/log/*.log >&2
    return 1
}

case $action in
start) start || { stop; exit 1; } ;;
stop) stop ;;
*) echo "usage: slurm_nodes.sh start|stop DIR" >&2; exit 2 ;;
esac
