#!/usr/bin/env bash
# The test suite: unit tests, SPMD tests under oshrun on 1, 2 and 4 PEs (and the transport path
# with node-direct mapping off), launcher failure handling and error reporting.
# Usage: run_suite.sh BUILDDIR SRCDIR. Prints one line per test and ends with "N passed, N failed".
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
oshrun="$build/oshrun/oshrun"
per_test_timeout=${STRATA_TEST_TIMEOUT:-120}
passed=0
failed=0
failures=()
log_dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-tests.XXXXXX")
trap 'rm -rf "$log_dir"' EXIT

# run NAME COMMAND...: runs a test with a time limit; its output is shown only when it fails.
run() {
    local name=$1
    shift
    local log="$log_dir/log"
    local start=$SECONDS
    if timeout -k 5 "$per_test_timeout" "$@" >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "PASS: $name ($((SECONDS - start)) s)"
    else
        local rc=$?
        failed=$((failed + 1))
        failures+=("$name")
        echo "FAIL: $name (exit $rc)"
        sed 's/^/    | /' "$log" | tail -n 40
    fi
}

shm_before=$(ls /dev/shm 2>/dev/null | grep '^strata-' | sort)
tmp_before=$(ls "${TMPDIR:-/tmp}" 2>/dev/null | grep -c '^oshrun\.' || true)

for t in test_heap test_knobs test_registry test_routes test_amo_routing test_boot_event; do
    run "unit/$t" "$build/tests/unit/$t"
done
cuda_double="$build/tests/cuda/.libs/libcuda_double.so"
run "unit/test_discovery" "$build/tests/unit/test_discovery" "$src/tests/unit/topo-2socket-2gpu.xml" \
    $([ -f "$cuda_double" ] && echo "$cuda_double")

spmd_tests="hello setup_query mem_alloc rma_put_get rma_p_g rma_strided rma_nbi rma_sized
            rma_signal rma_static order_barrier ptr_access rma_generic amo_types amo_contention
            p2p_wait lock"
for t in $spmd_tests; do
    for np in 1 2 4; do
        run "spmd/$t -np $np" "$oshrun" -np "$np" "$build/tests/spmd/$t"
    done
done
# The same routines through UCX instead of direct load/store, as between nodes.
for t in rma_put_get rma_p_g rma_strided rma_nbi rma_signal rma_static order_barrier ptr_access \
         amo_types amo_contention p2p_wait lock; do
    run "spmd/$t -np 2 via UCX" env SHMEM_NODE_DIRECT=0 "$oshrun" -np 2 "$build/tests/spmd/$t"
done
# A transport queue of two messages makes puts wait inside UCX: quiet must still complete them
# before their source is reused.
run "spmd/rma_nbi -np 2 via UCX, puts queued in the transport" env SHMEM_NODE_DIRECT=0 \
    UCX_TLS=posix,self UCX_POSIX_FIFO_SIZE=2 UCX_POSIX_SEG_SIZE=256 "$oshrun" -np 2 \
    "$build/tests/spmd/rma_nbi" 65536
# Teams and team contexts need non-powers of two: 3 PEs too.
for t in team ctx coll coll_legacy coll_algos; do
    for np in 1 2 3 4; do
        run "spmd/$t -np $np" "$oshrun" -np "$np" "$build/tests/spmd/$t"
    done
    run "spmd/$t -np 3 via UCX" env SHMEM_NODE_DIRECT=0 "$oshrun" -np 3 "$build/tests/spmd/$t"
done
# Collectives' transport algorithms on a power of two too (no fold).
for t in coll coll_algos; do
    run "spmd/$t -np 4 via UCX" env SHMEM_NODE_DIRECT=0 "$oshrun" -np 4 "$build/tests/spmd/$t"
done
run "spmd/ctx -np 4 via UCX (a worker per context)" env SHMEM_NODE_DIRECT=0 "$oshrun" -np 4 \
    "$build/tests/spmd/ctx"
for t in amo_contention lock; do
    run "spmd/$t -np 4 via UCX" env SHMEM_NODE_DIRECT=0 "$oshrun" -np 4 "$build/tests/spmd/$t"
done
# Finalize while a peer computes, over TCP without the progress thread: 8 runs in 10 hung before
# the fence progressed the transport, so three runs.
for i in 1 2 3; do
    run "spmd/finalize_busy -np 2 via UCX over TCP, no progress thread (run $i)" timeout 30 env \
        SHMEM_NODE_DIRECT=0 UCX_TLS=tcp,self SHMEM_PROGRESS_THREAD=0 "$oshrun" -np 2 \
        "$build/tests/spmd/finalize_busy"
done
run "spmd/lazy_heap -np 2 (4 GiB heap)" env SHMEM_SYMMETRIC_SIZE=4G "$oshrun" -np 2 \
    "$build/tests/spmd/lazy_heap"
# Memory spaces: host spaces on every PE count, through UCX too; a device space on some PEs only
# (the test device kind stands in for a GPU).
for np in 1 2 4; do
    run "spmd/spaces -np $np" "$oshrun" -np "$np" "$build/tests/spmd/spaces"
done
run "spmd/spaces -np 3 via UCX" env SHMEM_NODE_DIRECT=0 "$oshrun" -np 3 "$build/tests/spmd/spaces"
# A thousand create/use/destroy cycles leave nothing behind, through UCX too.
for np in 2 4; do
    run "spmd/spaces_cycles -np $np" "$oshrun" -np "$np" "$build/tests/spmd/spaces_cycles"
done
run "spmd/spaces_cycles -np 3 via UCX" env SHMEM_NODE_DIRECT=0 "$oshrun" -np 3 \
    "$build/tests/spmd/spaces_cycles"
# Shared-memory names nobody can guess: files taken in advance under the names a job could be
# expected to use do not stop it.
run "spmd/shm_names -np 2" "$oshrun" -np 2 "$build/tests/spmd/shm_names"
run "spmd/shm_names singleton" "$build/tests/spmd/shm_names"
run "spmd/spaces_device -np 1, device on PE 0" env SHMEM_TEST_DEVICE_PES=0 "$oshrun" -np 1 \
    "$build/tests/spmd/spaces_device"
run "spmd/spaces_device -np 2, devices on every PE" env SHMEM_TEST_DEVICE_PES=0-1 "$oshrun" \
    -np 2 "$build/tests/spmd/spaces_device"
run "spmd/spaces_device -np 4, devices on PEs 0,2" env SHMEM_TEST_DEVICE_PES=0,2 "$oshrun" \
    -np 4 "$build/tests/spmd/spaces_device"
run "spmd/spaces_device -np 4, devices on PEs 1-3, no progress thread" env \
    SHMEM_TEST_DEVICE_PES=1-3 SHMEM_PROGRESS_THREAD=0 "$oshrun" -np 4 \
    "$build/tests/spmd/spaces_device"
run "spmd/spaces_device -np 2, no device anywhere" "$oshrun" -np 2 \
    "$build/tests/spmd/spaces_device"
for np in 1 3; do
    run "spmd/default_device -np $np (SHMEM_DEFAULT_SPACE=gpu)" env SHMEM_DEFAULT_SPACE=gpu \
        SHMEM_TEST_DEVICE_PES=0-$((np - 1)) "$oshrun" -np "$np" "$build/tests/spmd/default_device"
done
# The program's own device buffers as RMA's local side, to and from every space kind.
for np in 1 2 3; do
    run "spmd/private_device -np $np" env SHMEM_TEST_DEVICE_PES=0-$((np - 1)) "$oshrun" -np "$np" \
        "$build/tests/spmd/private_device"
done
run "spmd/private_device -np 2 via UCX" env SHMEM_TEST_DEVICE_PES=0-1 SHMEM_NODE_DIRECT=0 \
    "$oshrun" -np 2 "$build/tests/spmd/private_device"
# The CUDA kind's own code on the driver's test double (IPC between PEs, streams, pointer
# queries, atomic kernels), where the build found cuda.h.
if [ -f "$cuda_double" ]; then
    with_cuda=(env SHMEM_TEST_CUDA_DRIVER="$cuda_double")
    for np in 1 2; do
        run "spmd/spaces_device -np $np, CUDA on every PE" "${with_cuda[@]}" \
            STRATA_TEST_GPU_PES=0-$((np - 1)) "$oshrun" -np "$np" "$build/tests/spmd/spaces_device"
    done
    run "spmd/spaces_device -np 4, CUDA on PEs 0,2" "${with_cuda[@]}" SHMEM_DEVICE_MAP=0,-,0,- \
        STRATA_TEST_GPU_PES=0,2 "$oshrun" -np 4 "$build/tests/spmd/spaces_device"
    run "spmd/spaces_device -np 4, CUDA on PEs 1-3, no progress thread" "${with_cuda[@]}" \
        SHMEM_DEVICE_MAP=-,0,0,0 STRATA_TEST_GPU_PES=1-3 SHMEM_PROGRESS_THREAD=0 "$oshrun" -np 4 \
        "$build/tests/spmd/spaces_device"
    run "spmd/spaces_device -np 3, CUDA via UCX (owner route)" "${with_cuda[@]}" SHMEM_NODE_DIRECT=0 \
        STRATA_TEST_GPU_PES=0-2 "$oshrun" -np 3 "$build/tests/spmd/spaces_device"
    for np in 1 2 3; do
        run "spmd/private_device -np $np, CUDA buffers" "${with_cuda[@]}" "$oshrun" -np "$np" \
            "$build/tests/spmd/private_device"
    done
    for np in 1 2 3; do
        run "spmd/cuda_host_copies -np $np (registered host heaps)" "${with_cuda[@]}" "$oshrun" \
            -np "$np" "$build/tests/spmd/cuda_host_copies"
    done
    for np in 1 3; do
        run "spmd/default_device -np $np (SHMEM_DEFAULT_SPACE=cuda)" "${with_cuda[@]}" \
            SHMEM_DEFAULT_SPACE=cuda "$oshrun" -np "$np" "$build/tests/spmd/default_device"
    done
else
    echo "SKIP: CUDA kind (built without cuda.h: configure --with-cuda=DIR)"
fi
run "SHMEM_DEFAULT_SPACE=gpu without a device on PE 1 fails on every PE" bash -c \
    "out=\$(SHMEM_DEFAULT_SPACE=gpu SHMEM_TEST_DEVICE_PES=0 '$oshrun' -np 2 \
        '$build/tests/spmd/hello' 2>&1); rc=\$?; echo \"\$out\";
     [ \$rc -ne 0 ] && [ \$(grep -c 'PE 1 cannot reach' <<<\"\$out\") -eq 2 ]"
run "examples/spaces_tour -np 4, devices on PEs 0,2" env SHMEM_TEST_DEVICE_PES=0,2 "$oshrun" \
    -np 4 "$build/examples/spaces_tour"
run "spmd/hello singleton" "$build/tests/spmd/hello"
run "examples/ring -np 4" "$oshrun" -np 4 "$build/examples/ring"
run "oshcc, oshc++ and oshCC" bash "$src/tests/unit/wrappers.sh" "$build" "$src"
# shmem.h from C++ (typed routines, teams, contexts, spaces).
for np in 1 3; do
    run "spmd/cxx_api -np $np (C++)" "$oshrun" -np "$np" "$build/tests/spmd/cxx_api"
done
# The library exports the OpenSHMEM API and nothing else, and a program's own names do not clash
# with its internals.
run "libstrata exports only the OpenSHMEM API" bash "$src/tests/unit/exports.sh" \
    "$build/.libs/libstrata.so"
for np in 1 2; do
    run "spmd/symbols -np $np (program names like the library's internals)" "$oshrun" -np "$np" \
        "$build/tests/spmd/symbols"
done
run "GPU runtimes loaded only for GPU spaces, never from the current directory" bash \
    "$src/tests/unit/runtime_loading.sh" "$oshrun" "$build/tests/spmd/hello" \
    "$build/tests/spmd/spaces_device" "$src/tests/unit/fake_runtime.c"
# The README's knob table is generated from the knob table in the code: it must match.
run "README knob table matches oshinfo" bash -c \
    "diff <('$build/oshrun/oshinfo' --knobs-markdown) <(sed -n '/^| Variable |/,/^\$/p' '$src/README.md' | sed '/^\$/d')"
run "errors" bash "$src/tests/spmd/errors.sh" "$oshrun" "$build/tests/spmd/errors"
run "launcher" bash "$src/tests/launcher/test_launcher.sh" "$oshrun" "$build/tests/launcher/behave"
run "launcher hand-off to engines" bash "$src/tests/launcher/test_engines.sh" "$oshrun" \
    "$build/tests/launcher/behave"
if [ "$(id -u)" = 0 ]; then
    run "launcher security" bash "$src/tests/launcher/test_security.sh" "$oshrun" \
        "$build/tests/launcher/behave" "$build/tests/launcher/intruder"
else
    echo "SKIP: launcher security (needs root to create a second user)"
fi

shm_after=$(ls /dev/shm 2>/dev/null | grep '^strata-' | sort)
leftover=$(comm -13 <(echo "$shm_before") <(echo "$shm_after") | grep -c . || true)
if [ "$leftover" -eq 0 ]; then
    passed=$((passed + 1))
    echo "PASS: no shared-memory files left behind"
else
    failed=$((failed + 1))
    failures+=("leftover shared memory")
    echo "FAIL: $leftover shared-memory files left in /dev/shm"
fi

tmp_after=$(ls "${TMPDIR:-/tmp}" 2>/dev/null | grep -c '^oshrun\.' || true)
if [ "$tmp_after" -le "$tmp_before" ]; then
    passed=$((passed + 1))
    echo "PASS: no launcher directory left behind"
else
    failed=$((failed + 1))
    failures+=("leftover launcher directory")
    echo "FAIL: $((tmp_after - tmp_before)) oshrun directories left in ${TMPDIR:-/tmp}"
fi

if [ "$failed" -gt 0 ]; then
    echo "Failed tests:"
    printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
