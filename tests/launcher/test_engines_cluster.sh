#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# oshrun's hand-off to srun on a real two-node Slurm cluster (tests/cluster/slurm_nodes.sh): jobs
# with one PE alone on each node, more PEs than the allocation's tasks, --host; a PE that dies,
# exits or returns without shmem_finalize ends the job within a few seconds with a line naming
# it and a non-zero status; shmem_global_exit's status is the job's (0 included, with every PE
# ending by itself).
# Usage: test_engines_cluster.sh OSHRUN CLIENT [CLUSTER_DIR]
#   CLIENT is tests/launcher/behave. CLUSTER_DIR is a cluster already started with
#   `slurm_nodes.sh start CLUSTER_DIR`; without it the script starts one of its own and stops it
#   at the end. Prints "SKIPPED: <why>" and exits 77 where Slurm cannot run here.
# Ends with "N passed, N failed".
set -u
. "$(dirname "$0")/check.sh"
oshrun=$(realpath "$1")
client=$(realpath "$2")
cluster=${3:-}
# A death must end the job within this many seconds.
limit=5

for tool in slurmd slurmctld srun salloc munged mungekey; do
    command -v "$tool" >/dev/null || {
        echo "SKIPPED: $tool is not installed (packages slurmd slurmctld slurm-client munge)"
        exit 77
    }
done
if [ -z "$cluster" ] && [ "$(id -u)" != 0 ]; then
    echo "SKIPPED: starting a Slurm cluster needs root"
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/test_engines_cluster.XXXXXX")
chmod 755 "$work" # munged serves its socket only from a path every user can search
out=$work/out
own_cluster=""
cleanup() {
    [ -z "$own_cluster" ] || bash "$(dirname "$0")/../cluster/slurm_nodes.sh" stop "$own_cluster"
    rm -rf "$work"
}
trap cleanup EXIT
if [ -z "$cluster" ]; then
    own_cluster=$work/cluster
    cluster=$own_cluster
    bash "$(dirname "$0")/../cluster/slurm_nodes.sh" start "$cluster" || {
        echo "FAIL: the two-node Slurm cluster did not start"
        echo "0 passed, 1 failed"
        exit 1
    }
fi
export SLURM_CONF=$cluster/slurm.conf

# Runs its command, then writes its status and the time it ended.
cat >"$work/timed" <<'TIMED'
#!/bin/sh
"$@"
rc=$?
echo "$rc $(date +%s.%N)" >"${0%/*}/ended"
exit $rc
TIMED
chmod +x "$work/timed"

# job NODES TASKS OSHRUN-ARGS...: oshrun in a fresh allocation; output in $out, status in $rc,
# and in $took the seconds from "PE R misbehaves at T" to oshrun's end (empty without one).
job() {
    local nodes=$1 tasks=$2
    shift 2
    rm -f "$work/ended"
    timeout -k 5 120 salloc --quiet -N "$nodes" -n "$tasks" "$work/timed" "$oshrun" "$@" \
        >"$out" 2>&1
    rc=$(cut -d' ' -f1 "$work/ended" 2>/dev/null || echo "none (salloc: $?)")
    local died ended
    died=$(sed -n 's/^PE [0-9]* misbehaves at //p' "$out" | head -n 1)
    ended=$(cut -d' ' -f2 "$work/ended" 2>/dev/null)
    took=""
    [ -z "$died" ] || [ -z "$ended" ] || took=$(echo "$ended - $died" | bc)
}

# ended NAME STATUS-REGEX TEXT-REGEX...: the last job's status matched, every text is in its
# output, and, where a PE misbehaved, the job ended within the limit.
ended() {
    local name=$1 status=$2 why=""
    shift 2
    [[ "$rc" =~ ^($status)$ ]] || why="status $rc, expected $status"
    for text in "$@"; do
        grep -q -E -- "$text" "$out" || why="$why; no '$text'"
    done
    if [ -n "$took" ]; then
        name="$name (ended $(printf '%.2f' "$took") s after)"
        [ "$(echo "$took < $limit" | bc)" = 1 ] || why="$why; more than $limit s"
    fi
    why="${why#; }"
    check "$name" "$([ -z "$why" ]; echo $?)" "$why"
}

# What may not be in the output of a job that ends by shmem_global_exit(0).
reported="Killed|CANCELLED|aborted|got past"

# Where the PEs run: one per node.
job 2 2 -np 2 /bin/sh -c 'echo "on $SLURMD_NODENAME"'
[ "$rc" = 0 ] && [ "$(sort "$out" | paste -sd' ')" = "on n1 on n2" ]
check "salloc -N 2 -n 2 oshrun -np 2: one PE on each node" $? "status $rc"

job 2 2 -np 2 "$client" ok
ended "two PEs on two nodes" 0 "PE 0 of 2 ok" "PE 1 of 2 ok"
job 2 2 -np 4 "$client" ok
ended "salloc -N 2 -n 2 oshrun -np 4: more PEs than tasks" 0 "PE 3 of 4 ok"
job 2 4 --host n1,n2 -np 4 "$client" ok
ended "--host n1,n2 inside the allocation" 0 "PE 3 of 4 ok"

# A PE alone on its node fails: srun ends the job (its status is the highest of the PEs': 128 +
# the signal that ended one, the survivors' SIGTERM included).
job 2 2 -np 2 "$client" segv 1
ended "PE 1 killed by SIGSEGV" "139|143" "task 1: Segmentation fault"
# The PE's own line ("exited with status 3 without calling shmem_finalize") is printed before
# its abort, but srun often ends the step before that line reaches it (it came in 11 of 20 runs):
# srun's own line is the one that always names the PE. It names it by its exit, or as killed
# where the step's cancel, which the abort asks for, reached the PE still exiting (once in the
# sanitizer build, whose exit is slow); the job's status is the PE's either way.
job 2 2 -np 2 "$client" exit 1 3
ended "PE 1 exits with 3 before shmem_finalize" 3 "task 1: (Exited with exit code 3|Killed)"
job 2 2 -np 2 "$client" return 1
ended "PE 1 returns from main without shmem_finalize" 1 "task 1: (Exited with exit code 1|Killed)"
job 2 2 -np 4 "$client" segv 3
ended "PE 3 of 4 (two per node) killed by SIGSEGV" "139|143" "task 3: Segmentation fault"

# shmem_global_exit ends the job with its status, from either node.
job 2 2 -np 2 "$client" abort 1 7
ended "shmem_global_exit(7) on PE 1" 7
job 2 2 -np 2 "$client" abort 0 5
ended "shmem_global_exit(5) on PE 0" 5
# With 0, which a process manager's abort cannot carry (Slurm cancels the step and reports the
# PEs it killed, status 137), every PE ends with 0 by itself: one that computes (its progress
# thread answers), or that waits in a barrier PE 3 never enters, and nobody is killed.
job 2 2 -np 2 "$client" abort 1 0
ended "shmem_global_exit(0) on PE 1, PE 0 computing" 0
absent "shmem_global_exit(0) on PE 1, PE 0 computing: nothing killed or reported" "$reported"
job 2 2 -np 4 "$client" abort_wait 3 0
ended "shmem_global_exit(0) on PE 3 of 4, the others in a barrier" 0
absent "shmem_global_exit(0) on PE 3 of 4, the others in a barrier: nothing killed or reported" \
    "$reported"
job 2 2 -np 4 "$client" abort_all 0
ended "shmem_global_exit(0) on every PE of 4 at once" 0
absent "shmem_global_exit(0) on every PE of 4 at once: nothing killed or reported" "$reported"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
