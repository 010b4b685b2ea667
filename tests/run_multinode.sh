#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The SPMD tests across nodes: a throwaway three-node Slurm cluster on this host
# (cluster/slurm_nodes.sh), the SPMD suite's tests under srun on 2, 3 and 4 PEs over two nodes
# placed in blocks (the host-memory group on 3 and 4, the device groups on 4), the tests that
# depend on placement again placed cyclically and over three nodes, the collectives'
# algorithms with three PEs on each node, atomics, signals and collectives with
# UCX's shared memory between the nodes (RMA and atomics of the transport's own, as InfiniBand
# has), the suite's host-memory and device groups again over libfabric (tcp;ofi_rxm) and
# the host-memory group again under Open MPI's mpirun with two faked hosts, both on 4 PEs (and
# oshrun's hand-off to mpirun there), and the launcher's own cluster tests where there are any.
# With STRATA_MULTINODE_LEAN=1 (CI's sanitizer build) the suite's groups run on 4 PEs only, with
# the nodes in blocks, over UCX: the placements and PE counts that test placement logic, not
# memory safety, and the libfabric repeat (make check runs libfabric's groups) are left out;
# every kind of peer, the thread mixes and the launcher tests stay.
# Usage: run_multinode.sh BUILDDIR SRCDIR. Ends with "N passed, N failed"; where this host cannot
# run the cluster it says "SKIPPED: why" and "0 passed, 0 failed".
set -u
. "$(dirname "$0")/suite_lib.sh" "$1" "$2"
. "$src/tests/spmd_suite.sh"
# Each test takes seconds on one node: one that needs over a minute across two fails as too slow,
# and the whole run stays within ten minutes.
per_test_timeout=${STRATA_TEST_TIMEOUT:-60}

skip() {
    echo "SKIPPED: $*"
    echo "0 passed, 0 failed"
    exit 0
}
for cmd in slurmctld slurmd srun scontrol munged mungekey; do
    command -v "$cmd" >/dev/null ||
        skip "no $cmd here (Debian packages slurmd slurmctld slurm-client munge)"
done
[ "$(id -u)" = 0 ] || skip "the cluster's slurmd runs jobs as their users: it needs root"

# Its own directory: munged wants every directory above its socket open to all.
cluster=$(mktemp -d "$suite_outer_tmp/strata-cluster.XXXXXX")
trap 'bash "$src/tests/cluster/slurm_nodes.sh" stop "$cluster"; suite_exit' EXIT
run "a three-node Slurm cluster starts" bash "$src/tests/cluster/slurm_nodes.sh" start "$cluster" 3
if [ ! -f "$cluster/slurm.conf" ]; then
    finish
    exit
fi
export SLURM_CONF="$cluster/slurm.conf"
# The two nodes are one host, so UCX would join them by shared memory: tcp makes the path between
# them the network's, as on a cluster. PEs of one node still meet through Strata's own mappings.
export UCX_TLS=tcp,self
placed() {
    launch=(bash "$src/tests/cluster/launch_pes.sh" "$@")
}

# Node peers that are not neighbours in world order.
placements_and_three_nodes() {
    placed srun cyclic
    for t in team ptr_access coll coll_algos; do
        for np in 3 4; do
            run "spmd/$t -np $np, cyclic" "${launch[@]}" "$np" "$build/tests/spmd/$t"
        done
    done
    # Three nodes: the leaders' own collectives then run on teams of three (binomial broadcast
    # with lagged syncs, recursive doubling with the non-power-of-two fold) where two nodes give
    # pairs.
    export NODES=3
    for placement in block cyclic; do
        placed srun "$placement"
        for t in team coll coll_algos; do
            run "spmd/$t -np 6 over 3 nodes, $placement" "${launch[@]}" 6 "$build/tests/spmd/$t"
        done
    done
    placed srun block
    check_teams_by_node 6 3 17 3 # 6 + 6 + 5, and 3
    # A collect's leaders exchange its sizes in rounds of 1024 team ranks: in rounds of 1 and 3
    # here, which split the nodes' runs of ranks (two per node) at the rounds' edges.
    for round in 1 3; do
        run "spmd/coll_algos -np 6 over 3 nodes, collect sizes in rounds of $round" \
            env SHMEM_TEST_COLLECT_ROUND=$round "${launch[@]}" 6 "$build/tests/spmd/coll_algos"
    done
    unset NODES
    # Three PEs on each of two nodes: node parts of three, whose members each combine a third of
    # a large reduction's sources and copy a collect's result from their leader.
    for placement in block cyclic; do
        placed srun "$placement"
        run "spmd/coll_algos -np 6 over 2 nodes, $placement" "${launch[@]}" 6 \
            "$build/tests/spmd/coll_algos"
    done
}

placed srun block
lean=${STRATA_MULTINODE_LEAN:-0}
min_pes=2
[ "$lean" = 1 ] && min_pes=4
# The nodes share this machine's cores: every PE must count the other node's PEs as sharing them
# (and so spin briefly before it yields), and see the two nodes the world barrier goes through.
run "start-up sees 2 nodes sharing one machine (SHMEM_LOG=init)" bash -c \
    '"$@" 2>&1 |
     grep -c "4 PEs, 2 on this node, 2 nodes, 4 PEs on this machine, 4 on this PE.s CPUs (waits spin 64 " |
     grep -qx 4' _ env SHMEM_LOG=init "${launch[@]}" 4 "$build/tests/spmd/hello"
# Teams that span the nodes with several members on one go by node, the others stay flat:
# coll_algos's teams on NP PEs placed in blocks over NODES nodes, BY_NODE log lines of teams by
# node (the world, the reversed one and all but PE 0, a line per member) and FLAT of the even PEs'
# team, one on each node.
check_teams_by_node() { # NP NODES BY_NODE FLAT
    # shellcheck disable=SC2016 # expanded by the inner shell
    run "teams of $1 PEs over $2 nodes go by node, the even PEs' stays flat (SHMEM_LOG=team)" \
        bash -c 'out=$("${@:5}" 2>&1) && [ "$(grep -c "goes by node: $2 nodes" <<<"$out")" = "$3" ] &&
                 [ "$(grep -c "is flat: $2 nodes, one PE on each" <<<"$out")" = "$4" ]' \
        _ "$1" "$2" "$3" "$4" env SHMEM_LOG=team "${launch[@]}" "$1" "$build/tests/spmd/coll_algos"
}
check_teams_by_node 4 2 11 2 # 4 + 4 + 3, and 2
# The bulk lane: a PE on each node, connections that are not a peer's refused, the collectives'
# large messages on the lane (each PE connects to the other once), and without it through UCX.
# shellcheck disable=SC2016 # expanded by the inner shell
run "spmd/bulk_lane -np 2 over 2 nodes: foreign connections refused, each PE connects once" \
    bash -c 'out=$("$@" 2>&1) && [ "$(grep -c "bulk lane: connected to PE" <<<"$out")" = 2 ] &&
             [ "$(grep -c "that is not a peer.s was closed" <<<"$out")" = 4 ]' \
    _ env SHMEM_LOG=init "${launch[@]}" 2 "$build/tests/spmd/bulk_lane"
# shellcheck disable=SC2016 # expanded by the inner shell
run "spmd/bulk_lane flood -np 2 over 2 nodes: a peer's full queue turns the lane off, not the data" \
    bash -c 'out=$("$@" 2>&1) && [ "$(grep -c "did not answer; no lane from this PE" <<<"$out")" = 2 ]' \
    _ env SHMEM_LOG=init "${launch[@]}" 2 "$build/tests/spmd/bulk_lane" flood
for t in coll coll_algos; do
    run "spmd/$t -np 4 over 2 nodes, without the bulk lane (SHMEM_BULK_LANE=0)" \
        env SHMEM_BULK_LANE=0 "${launch[@]}" 4 "$build/tests/spmd/$t"
done
# PE 0 alone without it: the others reach it through UCX, and it them.
# shellcheck disable=SC2016 # expanded by the inner shell
run "spmd/coll_algos -np 4 over 2 nodes, PE 0 without the bulk lane" "${launch[@]}" 4 \
    bash -c '[ "$PMIX_RANK" != 0 ] || export SHMEM_BULK_LANE=0; exec "$@"' _ \
    "$build/tests/spmd/coll_algos"
# Not the group with node peers through the network (spmd_via_network_tests): every peer is then
# the network's, on one node as on two, and make check runs it over each network (its network
# group, which runs here, puts node peers behind TCP too). For the same reason the host-memory
# group leaves out 2 PEs, whose only peer is the network's, and the device groups run on 4 PEs,
# two on each node, as in the lean run.
min_pes_of_run=$min_pes
[ "$min_pes" -lt 3 ] && min_pes=3
spmd_tests
min_pes=$min_pes_of_run
spmd_network_tests
min_pes=4
spmd_device_tests
spmd_cuda_tests
spmd_hip_tests
min_pes=$min_pes_of_run
# The host-memory and device groups between the nodes over libfabric's tcp;ofi_rxm, where the
# build has it, on 4 PEs: two on each node, so both kinds of peer (2 and 3 PEs test the
# collectives' shapes, which do not depend on the network, and 2 only network peers, as make
# check's libfabric groups do). Its network group, whose peers are all the network's, is make
# check's on one node. The lean run leaves libfabric to make check's own groups.
if [ "$lean" = 1 ]; then
    echo "SKIP: the libfabric network between nodes (lean run; make check covers libfabric)"
elif network_built ofi; then
    network_use ofi
    export SHMEM_TRANSPORT=ofi "SHMEM_OFI_PROVIDER=tcp;ofi_rxm"
    run_label=" (libfabric between nodes)"
    min_pes=4
    spmd_tests
    spmd_device_tests
    min_pes=2
    run_label=""
    unset SHMEM_TRANSPORT SHMEM_OFI_PROVIDER
    network_use ucx
else
    echo "SKIP: the libfabric network (built without libfabric-dev)"
fi
# Node peers that are not neighbours in world order, and three nodes (not in the lean run).
[ "$lean" = 1 ] || placements_and_three_nodes

# Between the nodes through a transport with RMA and atomics of its own, as InfiniBand's rc has:
# UCX's shared memory, which reaches the other "node" of this host. A node's PEs still meet
# through Strata's mappings, so the default space has both kinds of peer (every atomic then goes
# through the transport).
ucx_placements="block cyclic"
[ "$lean" = 1 ] && ucx_placements=block
for placement in $ucx_placements; do
    placed srun "$placement"
    for t in amo_types amo_contention lock rma_signal rma_nbi sessions rma_mix coll coll_algos team \
             spaces; do
        run "spmd/$t -np 4 over 2 nodes, $placement, UCX between them with RMA (sm)" \
            env UCX_TLS=sm,self "${launch[@]}" 4 "$build/tests/spmd/$t"
    done
    # Threads sharing the default context: one's fence must complete another's atomics too.
    run "spmd/rma_mix -np 4 over 2 nodes, $placement, UCX between them with RMA (sm), 3 threads" \
        env UCX_TLS=sm,self "${launch[@]}" 4 "$build/tests/spmd/rma_mix" 200 0x5eed 3
done
if command -v mpirun >/dev/null; then
    # The host-memory group again under Open MPI's mpirun (its PMIx server, not Slurm's), whose
    # daemons start from an empty environment, as on other nodes: on 4 PEs, the PE count where
    # each PE has a node peer and network peers (what differs is the PMIx server, not the
    # shapes).
    if [ "$lean" != 1 ]; then
        placed mpirun block
        run_label=" under mpirun"
        min_pes=4
        spmd_tests
        min_pes=2
        run_label=""
        placed mpirun cyclic
        run "spmd/team -np 3 under mpirun, cyclic" "${launch[@]}" 3 "$build/tests/spmd/team"
    fi
    # oshrun's own hand-off to mpirun on the same two hosts: a PE there gets SHMEM_*, UCX_* and
    # FI_* (which oshrun forwards) and nothing else of the environment, and a job runs.
    export OSHRUN=$oshrun
    placed oshrun block
    # shellcheck disable=SC2016 # expanded by the PEs' shell
    run "oshrun -> mpirun on two hosts: every PE gets SHMEM_*, UCX_* and FI_*, nothing else" \
        bash -c '[ "$(SHMEM_PROBE=s UCX_PROBE=u FI_PROBE=f OTHER_PROBE=o "$@" |
                      grep -cx "probe s u f -")" = 4 ]' \
        _ "${launch[@]}" 4 \
        sh -c 'echo "probe ${SHMEM_PROBE:--} ${UCX_PROBE:--} ${FI_PROBE:--} ${OTHER_PROBE:--}"'
    run "spmd/rma_put_get -np 4, oshrun -> mpirun on two hosts" "${launch[@]}" 4 \
        "$build/tests/spmd/rma_put_get"
    # A PE's death, shmem_global_exit and a return without finalize end the job there too, with
    # the PE's status and a line naming it, and no PE left running (zombies aside).
    # shellcheck disable=SC2016 # expanded by bash -c
    ends='status=$1 text=$2; shift 2; "$@" >"$TMPDIR/job.out" 2>&1; rc=$?; sleep 1
          [ "$rc" = "$status" ] && grep -q -E -- "$text" "$TMPDIR/job.out" &&
              [ -z "$(ps -C behave -o stat= | grep -v Z)" ]'
    behave=("${launch[@]}" 2 "$build/tests/launcher/behave")
    run "oshrun -> mpirun on two hosts: PE 1 killed by SIGSEGV ends the job, named, status 139" \
        bash -c "$ends" _ 139 "rank 1 .* signal 11" "${behave[@]}" segv 1
    run "oshrun -> mpirun on two hosts: shmem_global_exit(7) on PE 1 ends the job with 7" \
        bash -c "$ends" _ 7 "PE 1 misbehaves" "${behave[@]}" abort 1 7
    # shellcheck disable=SC2016 # expanded by bash -c
    run "oshrun -> mpirun on two hosts: shmem_global_exit(0) on PE 1 ends the job with 0" \
        bash -c "$ends"' && ! grep -q "got past" "$TMPDIR/job.out"' _ 0 "PE 1 misbehaves" \
        "${behave[@]}" abort_wait 1 0
    run "oshrun -> mpirun on two hosts: PE 1 returns without shmem_finalize: named, status 1" \
        bash -c "$ends" _ 1 "PE 1 .*without calling shmem_finalize; ending the job" "${behave[@]}" \
        return 1
else
    echo "SKIP: mpirun (Debian package openmpi-bin)"
fi
# The launcher's tests that need a cluster (oshrun's hand-off to srun, PE death, global_exit):
# each is called as SCRIPT OSHRUN CLIENT CLUSTER_DIR, reuses this cluster and counts as one test,
# with five minutes for its own many.
for script in "$src"/tests/launcher/*_cluster.sh; do
    [ -f "$script" ] || continue
    per_test_timeout=300 run "launcher/$(basename "$script" .sh)" bash "$script" "$oshrun" \
        "$build/tests/launcher/behave" "$cluster"
done
finish
