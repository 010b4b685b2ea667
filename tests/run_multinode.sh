#!/usr/bin/env bash
# SPMD tests across two nodes: a throwaway two-node Slurm cluster on this host
# (tests/cluster/slurm_nodes.sh), PEs started by `srun --mpi=pmix`, UCX over TCP between the
# nodes and Strata's direct path between PEs of one node. Prints one line per test and ends with
# "N passed, N failed"; prints "SKIPPED: why" (and 0 failed) where Slurm is not installed.
# Usage: run_multinode.sh BUILDDIR SRCDIR
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
per_test_timeout=${STRATA_TEST_TIMEOUT:-120}
for tool in srun slurmd slurmctld munged; do
    if ! command -v "$tool" >/dev/null; then
        echo "SKIPPED: multi-node tests: $tool not installed (slurmd slurmctld slurm-client munge)"
        echo "0 passed, 0 failed"
        exit 0
    fi
done
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-multinode.XXXXXX")
chmod 755 "$work" # munged wants every directory above its socket open to all
cluster=$work/cluster
trap 'bash "$src/tests/cluster/slurm_nodes.sh" stop "$cluster"; rm -rf "$work"' EXIT
passed=0
failed=0
failures=()

# run NAME COMMAND...: a test with a time limit; its output is shown only when it fails.
run() {
    local name=$1 start=$SECONDS
    shift
    if timeout -k 5 "$per_test_timeout" "$@" >"$work/log" 2>&1; then
        passed=$((passed + 1))
        echo "PASS: $name ($((SECONDS - start)) s)"
    else
        local rc=$?
        failed=$((failed + 1))
        failures+=("$name")
        echo "FAIL: $name (exit $rc)"
        sed 's/^/    | /' "$work/log" | tail -n 40
    fi
}

if ! bash "$src/tests/cluster/slurm_nodes.sh" start "$cluster"; then
    echo "FAIL: the two-node cluster did not start"
    echo "0 passed, 1 failed"
    exit 1
fi
export SLURM_CONF=$cluster/slurm.conf UCX_TLS=tcp,self

# Tests whose checks hold wherever the PEs are: PEs 0-1 on one node and 2-3 on the other (block),
# one PE per node, and three PEs (two on one node).
tests="hello setup_query mem_alloc rma_put_get rma_p_g rma_strided rma_nbi rma_sized rma_signal
       rma_static order_barrier rma_generic amo_types amo_contention p2p_wait lock ctx coll
       coll_legacy coll_algos spaces spaces_cycles busy_target ctx_reuse finalize_busy"
for t in $tests; do
    run "spmd/$t, 2 nodes x 2 PEs" srun --mpi=pmix -N 2 -n 4 "$build/tests/spmd/$t"
done
for t in rma_put_get amo_contention lock coll busy_target ctx_reuse; do
    run "spmd/$t, 2 nodes x 1 PE" srun --mpi=pmix -N 2 -n 2 "$build/tests/spmd/$t"
    run "spmd/$t, 3 PEs on 2 nodes" srun --mpi=pmix -N 2 -n 3 "$build/tests/spmd/$t"
done
run "spmd/coll, 2 nodes x 2 PEs, cyclic" srun --mpi=pmix -N 2 -n 4 --distribution=cyclic \
    "$build/tests/spmd/coll"

if [ "$failed" -gt 0 ]; then
    echo "Failed tests:"
    printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
