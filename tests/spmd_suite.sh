# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# The SPMD tests, sourced after suite_lib.sh, in groups that run every program on several PE
# counts under the launcher the caller chose: spmd_tests (host memory, node peers by load/store),
# spmd_via_network_tests (the same with node peers through the network network_use chose),
# spmd_network_tests (what depends on the network, for each of them), spmd_device_tests (device spaces on
# the test device kind), spmd_cuda_tests and spmd_hip_tests (the CUDA and HIP kinds on their
# runtimes' test doubles).
#   launch=(COMMAND...)  run as "${launch[@]}" NP PROG ARGS (default: oshrun -np NP PROG ARGS)
#   min_pes=N            PE counts below N are left out (a launcher over two nodes needs 2)
launch=("$oshrun" -np)
min_pes=1
# The libfabric provider the tests run over: on every Linux host, no special hardware.
ofi_provider="tcp;ofi_rxm"

# network_use NETWORK: the network (ucx, ofi) that the tests reaching node peers through one use:
# via_env/via_label for node peers through it, tcp_env/tcp_label for node peers through it over
# TCP, where every operation needs the target's progress.
network_use() {
    network=$1
    case $1 in
    ucx)
        via_label=UCX
        via_env=(SHMEM_NODE_DIRECT=0 SHMEM_TRANSPORT=ucx)
        tcp_label="UCX over TCP"
        tcp_env=("${via_env[@]}" UCX_TLS=tcp,self)
        ;;
    ofi)
        via_label="libfabric ($ofi_provider)"
        via_env=(SHMEM_NODE_DIRECT=0 SHMEM_TRANSPORT=ofi "SHMEM_OFI_PROVIDER=$ofi_provider")
        tcp_label=$via_label
        tcp_env=("${via_env[@]}")
        ;;
    esac
}
network_use ucx

# network_built NAME: whether this build has the network NAME (oshinfo lists it).
network_built() {
    "$build/oshrun/oshinfo" | grep -qx "  $1"
}

# nps N...: those of the PE counts N... that the launcher can run.
nps() {
    local np
    for np; do
        [ "$np" -ge "$min_pes" ] && echo "$np"
    done
}

spmd_tests() {
    local t np i
    for t in hello setup_query mem_alloc rma_put_get rma_p_g rma_strided rma_nbi rma_sized \
             rma_signal rma_static order_barrier ptr_access rma_generic amo_types amo_contention \
             p2p_wait lock sessions sessions_threads rma_mix; do
        for np in $(nps 1 2 4); do
            run "spmd/$t -np $np" "${launch[@]}" "$np" "$build/tests/spmd/$t"
        done
    done
    # Several threads of each PE at once (SHMEM_THREAD_MULTIPLE), each on contexts and windows of
    # its own: 200 rounds, seed 0x5eed, 4 threads.
    for np in $(nps 2 4); do
        run "spmd/rma_mix -np $np, 4 threads" "${launch[@]}" "$np" "$build/tests/spmd/rma_mix" 200 \
            0x5eed 4
    done
    # PEs bound one per CPU (mpirun --bind-to core) share no CPU: their waits spin as on
    # cores of their own, not the few dozen times of an oversubscribed machine.
    if [ "$(nproc)" -ge 2 ] && [ "$(nps 2)" = 2 ]; then
        run "start-up: 2 PEs bound one per CPU share none (SHMEM_LOG=init)" bash -c \
            '"$@" 2>&1 | grep "2 PEs on this machine, 1 on this PE.s CPUs (waits spin" |
             grep -vc "waits spin 64 times" | grep -qx 2' _ env SHMEM_LOG=init "${launch[@]}" 2 \
            bash -c 'exec taskset -c "$PMIX_RANK" "$@"' _ "$build/tests/spmd/hello"
        run "start-up: 3 unbound PEs on 2 CPUs share them (SHMEM_LOG=init)" bash -c \
            '"$@" 2>&1 | grep -c "3 PEs on this machine, 3 on this PE.s CPUs (waits spin 64 " |
             grep -qx 3' _ env SHMEM_LOG=init taskset -c 0,1 "${launch[@]}" 3 \
            "$build/tests/spmd/hello"
    fi
    # Teams and team contexts need non-powers of two: 3 PEs too.
    for t in team ctx coll coll_legacy coll_algos; do
        for np in $(nps 1 2 3 4); do
            run "spmd/$t -np $np" "${launch[@]}" "$np" "$build/tests/spmd/$t"
        done
    done
    # What the PEs do while peers compute, on mapped memory (through a network: spmd_network_tests).
    run "spmd/busy_target -np 2" "${launch[@]}" 2 "$build/tests/spmd/busy_target"
    run "spmd/busy_initiator -np 2" "${launch[@]}" 2 "$build/tests/spmd/busy_initiator"
    run "spmd/contended_waits -np 2" "${launch[@]}" 2 "$build/tests/spmd/contended_waits"
    for np in $(nps 2 4); do
        run "spmd/flag_reset -np $np" "${launch[@]}" "$np" "$build/tests/spmd/flag_reset"
    done
    run "spmd/ctx_reuse -np 4" "${launch[@]}" 4 "$build/tests/spmd/ctx_reuse"
    run "spmd/lazy_heap -np 2 (4 GiB heap)" env SHMEM_SYMMETRIC_SIZE=4G "${launch[@]}" 2 \
        "$build/tests/spmd/lazy_heap"
    # Node peers' heaps are mapped when first reached, not at start-up.
    for np in $(nps 2 4); do
        run "spmd/peer_mapping -np $np" env SHMEM_SYMMETRIC_SIZE=96M "${launch[@]}" "$np" \
            "$build/tests/spmd/peer_mapping"
    done
    # Memory spaces: host spaces on every PE count.
    for np in $(nps 1 2 4); do
        run "spmd/spaces -np $np" "${launch[@]}" "$np" "$build/tests/spmd/spaces"
    done
    # Reductions keep no large private memory: on one node, and through the transport (a team of
    # two's direct reduction in place).
    run "spmd/coll_scratch -np 2" "${launch[@]}" 2 "$build/tests/spmd/coll_scratch"
    run "spmd/coll_scratch -np 2 via $via_label" env "${via_env[@]}" "${launch[@]}" 2 \
        "$build/tests/spmd/coll_scratch"
    # A thousand create/use/destroy cycles leave nothing behind.
    for np in 2 4; do
        run "spmd/spaces_cycles -np $np" "${launch[@]}" "$np" "$build/tests/spmd/spaces_cycles"
    done
    # Shared-memory names nobody can guess: files taken in advance under the names a job could be
    # expected to use do not stop it.
    run "spmd/shm_names -np 2" "${launch[@]}" 2 "$build/tests/spmd/shm_names"
    run "examples/ring -np 4" "${launch[@]}" 4 "$build/examples/ring"
    # shmem.h from C++ (typed routines, teams, contexts, spaces).
    for np in $(nps 1 3); do
        run "spmd/cxx_api -np $np (C++)" "${launch[@]}" "$np" "$build/tests/spmd/cxx_api"
    done
    # A program's own names do not clash with the library's internals.
    for np in $(nps 1 2); do
        run "spmd/symbols -np $np (program names like the library's internals)" "${launch[@]}" \
            "$np" "$build/tests/spmd/symbols"
    done
    # The profiling interface: a tool's own shmem_ routines over the library's pshmem_ ones.
    for np in $(nps 1 2 4); do
        run "spmd/profiling -np $np" "${launch[@]}" "$np" "$build/tests/spmd/profiling"
    done
}

# What depends on the network that network_use chose: node peers reached through it over TCP,
# where every operation needs the target's progress.
spmd_network_tests() {
    local t np i
    # Finalize while a peer computes, over TCP without the progress thread: 8 runs in 10 hung
    # before the fence progressed the transport, so three runs.
    for i in 1 2 3; do
        run "spmd/finalize_busy -np 2 via $tcp_label, no progress thread (run $i)" timeout 30 \
            env "${tcp_env[@]}" SHMEM_PROGRESS_THREAD=0 "${launch[@]}" 2 \
            "$build/tests/spmd/finalize_busy"
    done
    # Every pair of PEs makes its first contact from both ends at once, puts under way: over TCP
    # a race in UCX 1.13's TCP put protocol crashed a PE in a few jobs of 100 (the library turns
    # that protocol off), so several jobs.
    for i in 1 2 3 4; do
        run "spmd/first_contact -np 4 via $tcp_label (job $i)" env "${tcp_env[@]}" "${launch[@]}" 4 "$build/tests/spmd/first_contact"
    done
    # Between PEs that UCX reaches over TCP, puts-with-signal, signals, non-fetching atomics and
    # short non-blocking puts (gathered per peer, and in a batch session short blocking puts and
    # non-fetching atomics too) travel as one-way messages that a quiet confirms, and gets of
    # 4 KiB and more as this library's own requests: on one node too.
    for t in rma_signal amo_types rma_nbi rma_put_get sessions sessions_threads rma_mix; do
        run "spmd/$t -np 3 via $tcp_label" env "${tcp_env[@]}" \
            "${launch[@]}" 3 "$build/tests/spmd/$t"
    done
    run "spmd/rma_mix -np 3 via $tcp_label, 3 threads" env "${tcp_env[@]}" \
        "${launch[@]}" 3 "$build/tests/spmd/rma_mix" 200 0x5eed 3
    # There a root's one-way messages let it run calls ahead (a team of two's eager broadcasts).
    run "spmd/coll_algos -np 2 via $tcp_label" env "${tcp_env[@]}" \
        "${launch[@]}" 2 "$build/tests/spmd/coll_algos"
    # A PE computing without library calls is served by its progress thread (over TCP every
    # operation needs the target's progress); without the thread this one waits out its deadline.
    for np in 2 3; do
        run "spmd/busy_target -np $np via $tcp_label" env "${tcp_env[@]}" \
            "${launch[@]}" "$np" "$build/tests/spmd/busy_target"
    done
    # The same for what a computing PE itself issued on a context: its progress thread moves it on.
    for np in $(nps 2 3); do
        run "spmd/busy_initiator -np $np via $tcp_label" env "${tcp_env[@]}" "${launch[@]}" "$np" "$build/tests/spmd/busy_initiator"
    done
    # While the PEs progress the transport themselves their progress threads stay asleep. Two PEs
    # on two cores: with more PEs than cores a PE taken off its core mid-wait lets its thread
    # look, as it must (the wait may be one that does not progress this transport).
    run "spmd/progress_rest -np 2 via $tcp_label" env "${tcp_env[@]}" \
        SHMEM_PROGRESS_THREAD=1 "${launch[@]}" 2 "$build/tests/spmd/progress_rest"
    # Beside busy threads on every core a wait that progresses the transport sleeps on its events
    # between spins; on mapped memory it yields.
    run "spmd/contended_waits -np 2 via $tcp_label" env "${tcp_env[@]}" \
        "${launch[@]}" 2 "$build/tests/spmd/contended_waits"
    # A flag put lands once: reset by its target once it arrived, it stays reset (copies that
    # stored a short block's bytes twice brought it back), by load/store and through UCX.
    run "spmd/flag_reset -np 3 via $tcp_label" env "${tcp_env[@]}" \
        "${launch[@]}" 3 "$build/tests/spmd/flag_reset"
    # Over TCP a quiet confirms the program's one-way messages with a flush (4 per PE here), but
    # not a collective's, which their targets wait for (SHMEM_LOG=rma prints each flush).
    for np in $([ "$network" = ucx ] && echo 2 3); do
        # shellcheck disable=SC2016 # expanded by the inner shell
        run "spmd/coll_flush -np $np via $tcp_label: a quiet after collectives flushes nothing" \
            bash -c 'out=$("$@" coll 2>&1) && [ "$(grep -c "a flush asks PE" <<<"$out")" = 0 ]' \
            _ env SHMEM_LOG=rma "${tcp_env[@]}" "${launch[@]}" "$np" \
            "$build/tests/spmd/coll_flush"
        # shellcheck disable=SC2016 # expanded by the inner shell
        run "spmd/coll_flush -np $np via $tcp_label: a quiet flushes signals and atomics" \
            bash -c 'out=$("${@:2}" user 2>&1) &&
                     [ "$(grep -c "a flush asks PE" <<<"$out")" = $((4 * $1)) ]' \
            _ "$np" env SHMEM_LOG=rma "${tcp_env[@]}" "${launch[@]}" "$np" \
            "$build/tests/spmd/coll_flush"
    done
    # Contexts made and destroyed a hundred times over TCP: their workers' connections stay up.
    for np in 2 3; do
        run "spmd/ctx_reuse -np $np via $tcp_label" env "${tcp_env[@]}" \
            "${launch[@]}" "$np" "$build/tests/spmd/ctx_reuse"
    done

    # A provider that takes a message in one part (as some do): libfabric's active messages go
    # from one buffer (owner-route puts, gets and atomics to device memory, atomics by message).
    if [ "$network" = ofi ]; then
        run "spmd/private_device -np 3 via $via_label, messages in one part" env "${via_env[@]}" \
            STRATA_TEST_OFI_IOV_LIMIT=1 SHMEM_TEST_DEVICE_PES=0-2 "${launch[@]}" 3 \
            "$build/tests/spmd/private_device"
        run "spmd/amo_types -np 3 via $via_label, atomics by message in one part" \
            env "${via_env[@]}" STRATA_TEST_OFI_IOV_LIMIT=1 SHMEM_TEST_ATOMICS_BY_MESSAGE=1 \
            "${launch[@]}" 3 "$build/tests/spmd/amo_types"
    fi
    # Where the network has no atomics of its own (EFA's), their targets perform them all.
    for t in amo_types amo_contention lock rma_mix; do
        run "spmd/$t -np 3 via $via_label, atomics by message" env "${via_env[@]}" \
            SHMEM_TEST_ATOMICS_BY_MESSAGE=1 "${launch[@]}" 3 "$build/tests/spmd/$t"
    done
}

# Node peers through the network instead of direct load/store, as between nodes.
spmd_via_network_tests() {
    local t
    for t in rma_put_get rma_p_g rma_strided rma_nbi rma_signal rma_static order_barrier \
             ptr_access amo_types amo_contention p2p_wait lock sessions rma_mix; do
        run "spmd/$t -np 2 via $via_label" env "${via_env[@]}" "${launch[@]}" 2 \
            "$build/tests/spmd/$t"
    done
    for t in team ctx coll coll_legacy coll_algos spaces spaces_cycles; do
        run "spmd/$t -np 3 via $via_label" env "${via_env[@]}" "${launch[@]}" 3 \
            "$build/tests/spmd/$t"
    done
    # Collectives' transport algorithms on a power of two too (no fold), and on a team of two
    # (a broadcast's data stands for its root's lagged-sync notification).
    for t in coll coll_algos; do
        run "spmd/$t -np 4 via $via_label" env "${via_env[@]}" "${launch[@]}" 4 \
            "$build/tests/spmd/$t"
    done
    run "spmd/coll -np 2 via $via_label" env "${via_env[@]}" "${launch[@]}" 2 "$build/tests/spmd/coll"
    # A team collect's sizes in rounds of 1 and 3 members, as teams above 1024 members do.
    for round in 1 3; do
        run "spmd/coll -np 4 via $via_label, collect sizes in rounds of $round" env "${via_env[@]}" \
            SHMEM_TEST_COLLECT_ROUND=$round "${launch[@]}" 4 "$build/tests/spmd/coll"
    done
    run "spmd/ctx -np 4 via $via_label (a worker per context)" env "${via_env[@]}" \
        "${launch[@]}" 4 "$build/tests/spmd/ctx"
    # rma_mix: a context's first atomic on a new connection waited there for the context's quiet.
    for t in amo_contention lock rma_mix; do
        run "spmd/$t -np 4 via $via_label" env "${via_env[@]}" "${launch[@]}" 4 \
            "$build/tests/spmd/$t"
    done
    run "spmd/rma_mix -np 3 via $via_label, 3 threads" env "${via_env[@]}" "${launch[@]}" 3 \
        "$build/tests/spmd/rma_mix" 200 0x5eed 3
    # ... and stayed there while its PE computed: the progress thread serves contexts' workers.
    for np in $(nps 2 3); do
        run "spmd/busy_initiator -np $np via $via_label" env "${via_env[@]}" "${launch[@]}" "$np" \
            "$build/tests/spmd/busy_initiator"
    done
    run "spmd/private_device -np 2 via $via_label" env SHMEM_TEST_DEVICE_PES=0-1 "${via_env[@]}" \
        "${launch[@]}" 2 "$build/tests/spmd/private_device"
}

# Device spaces on some PEs only: the test device kind stands in for a GPU.
spmd_device_tests() {
    local np
    for np in $(nps 1); do
        run "spmd/spaces_device -np $np, device on PE 0" env SHMEM_TEST_DEVICE_PES=0 \
            "${launch[@]}" "$np" "$build/tests/spmd/spaces_device"
    done
    run "spmd/spaces_device -np 2, devices on every PE" env SHMEM_TEST_DEVICE_PES=0-1 \
        "${launch[@]}" 2 "$build/tests/spmd/spaces_device"
    run "spmd/spaces_device -np 4, devices on PEs 0,2" env SHMEM_TEST_DEVICE_PES=0,2 \
        "${launch[@]}" 4 "$build/tests/spmd/spaces_device"
    run "spmd/spaces_device -np 4, devices on PEs 1-3, no progress thread" env \
        SHMEM_TEST_DEVICE_PES=1-3 SHMEM_PROGRESS_THREAD=0 "${launch[@]}" 4 \
        "$build/tests/spmd/spaces_device"
    run "spmd/spaces_device -np 2, no device anywhere" env SHMEM_DEVICE_MAP=-,- "${launch[@]}" 2 \
        "$build/tests/spmd/spaces_device"
    for np in $(nps 1 3); do
        run "spmd/default_device -np $np (SHMEM_DEFAULT_SPACE=gpu)" env SHMEM_DEFAULT_SPACE=gpu \
            SHMEM_TEST_DEVICE_PES=0-$((np - 1)) "${launch[@]}" "$np" \
            "$build/tests/spmd/default_device"
    done
    # The program's own device buffers as RMA's local side, to and from every space kind.
    for np in $(nps 1 2 3); do
        run "spmd/private_device -np $np" env SHMEM_TEST_DEVICE_PES=0-$((np - 1)) \
            "${launch[@]}" "$np" "$build/tests/spmd/private_device"
    done
    # Random sequences into a device window beside host ones, ordered by fences, read back.
    run "spmd/rma_mix -np 4, devices on every PE" env SHMEM_TEST_DEVICE_PES=0-3 "${launch[@]}" 4 \
        "$build/tests/spmd/rma_mix"
    run "spmd/rma_mix -np 3, devices on every PE, via $via_label" env SHMEM_TEST_DEVICE_PES=0-2 \
        "${via_env[@]}" "${launch[@]}" 3 "$build/tests/spmd/rma_mix"
    run "examples/spaces_tour -np 4, devices on PEs 0,2" env SHMEM_TEST_DEVICE_PES=0,2 \
        "${launch[@]}" 4 "$build/examples/spaces_tour"
}

# A GPU kind's own code on its runtime's test double (IPC between PEs, streams, pointer queries,
# atomics: CUDA's kernels, HIP's owner route), where the build found the runtime's headers.
# Usage: spmd_gpu_tests NAME DOUBLE TYPE ENV...: TYPE as SHMEM_DEFAULT_SPACE names it, ENV the
# variables that load the double.
spmd_gpu_tests() {
    local name=$1 double=$2 type=$3
    shift 3
    if [ -n "$double" ] && [ ! -f "$double" ]; then
        echo "SKIP: $name kind (built without its headers: configure --with-$type=DIR)"
        return
    fi
    local np with_gpu=(env "$@")
    for np in $(nps 1 2); do
        run "spmd/spaces_device -np $np, $name on every PE" "${with_gpu[@]}" \
            STRATA_TEST_GPU_PES=0-$((np - 1)) "${launch[@]}" "$np" "$build/tests/spmd/spaces_device"
    done
    # The maps give devices by local rank: the test works out which PEs have one from the
    # placement (on one node PEs 0,2 and 1-3).
    run "spmd/spaces_device -np 4, $name map 0,-,0,-" "${with_gpu[@]}" SHMEM_DEVICE_MAP=0,-,0,- \
        "${launch[@]}" 4 "$build/tests/spmd/spaces_device"
    run "spmd/spaces_device -np 4, $name map -,0,0,0, no progress thread" "${with_gpu[@]}" \
        SHMEM_DEVICE_MAP=-,0,0,0 SHMEM_PROGRESS_THREAD=0 "${launch[@]}" 4 \
        "$build/tests/spmd/spaces_device"
    run "spmd/spaces_device -np 3, $name via $via_label (owner route)" "${with_gpu[@]}" \
        "${via_env[@]}" STRATA_TEST_GPU_PES=0-2 "${launch[@]}" 3 \
        "$build/tests/spmd/spaces_device"
    for np in $(nps 1 2 3); do
        run "spmd/private_device -np $np, $name buffers" "${with_gpu[@]}" "${launch[@]}" "$np" \
            "$build/tests/spmd/private_device"
    done
    for np in $(nps 2); do
        run "spmd/private_device -np $np, $name buffers from before shmem_init, no GPU space" \
            "${with_gpu[@]}" STRATA_TEST_RUNTIME_FIRST=1 "${launch[@]}" "$np" \
            "$build/tests/spmd/private_device"
    done
    for np in $(nps 1 2 3); do
        run "spmd/gpu_host_copies -np $np, $name (registered host heaps)" "${with_gpu[@]}" \
            "${launch[@]}" "$np" "$build/tests/spmd/gpu_host_copies"
    done
    for np in $(nps 1 2 4); do
        run "spmd/gpu_patterns -np $np, $name (the GPU's own memsets moved)" "${with_gpu[@]}" \
            "${launch[@]}" "$np" "$build/tests/spmd/gpu_patterns"
    done
    # Work in a stream's order, on streams that run by themselves (the doubles' threads): the GPU
    # shared by the PEs, and node peers reached through the transport instead of attached.
    for np in $(nps 1 2 4); do
        run "spmd/gpu_streams -np $np, $name" "${with_gpu[@]}" STRATA_GPU_DOUBLE_ASYNC=1 \
            "${launch[@]}" "$np" "$build/tests/spmd/gpu_streams"
    done
    for np in $(nps 2); do
        run "spmd/gpu_streams -np $np, $name through the transport" "${with_gpu[@]}" \
            STRATA_GPU_DOUBLE_ASYNC=1 SHMEM_NODE_DIRECT=0 "${launch[@]}" "$np" \
            "$build/tests/spmd/gpu_streams"
    done
    # Mistakes on a stream: one line naming the routine and the value, the job ended. The stream's
    # own (the runtime answers) on each runtime, the others once, on 2 PEs (not across nodes).
    local what pattern mistakes=(destroyed:"shmemx_putmem_on_stream: stream 0x[0-9a-f]* is not a live"
        context:"shmemx_putmem_on_stream: stream 0x[0-9a-f]* is not of [A-Z]* device [0-9]")
    [ "$type" = cuda ] && mistakes+=(sig_op:"shmemx_signal_op_on_stream: sig_op 7 is neither"
        root:"shmemx_broadcastmem_on_stream: PE_root 5 is not a rank of the team"
        private:"shmemx_fcollectmem_on_stream: dest 0x[0-9a-f]* and source 0x[0-9a-f]* must both be symmetric"
        noruntime:"shmemx_quiet_on_stream: no GPU runtime is in use on this PE")
    [ -n "$(nps 2)" ] || mistakes=()
    for what in "${mistakes[@]}"; do
        pattern=${what#*:}
        what=${what%%:*}
        run "spmd/gpu_streams -np 2, $name: the error of a $what stream call" bash -c \
            'out=$("${@:2}" 2>&1); rc=$?; echo "$out"; [ $rc -ne 0 ] && grep -q -- "$1" <<<"$out"' \
            _ "$pattern" "${with_gpu[@]}" STRATA_GPU_DOUBLE_ASYNC=1 SHMEM_DEBUG=1 \
            STRATA_CUDA_DOUBLE_DEVICES=2 STRATA_HIP_DOUBLE_DEVICES=2 "${launch[@]}" 2 \
            "$build/tests/spmd/gpu_streams" error "$what"
    done
    for np in $(nps 2 4); do
        run "spmd/rma_mix -np $np, $name on every PE" "${with_gpu[@]}" \
            STRATA_TEST_GPU_PES=0-$((np - 1)) "${launch[@]}" "$np" "$build/tests/spmd/rma_mix"
    done
    for np in $(nps 1 3); do
        run "spmd/default_device -np $np (SHMEM_DEFAULT_SPACE=$type)" "${with_gpu[@]}" \
            SHMEM_DEFAULT_SPACE=$type "${launch[@]}" "$np" "$build/tests/spmd/default_device"
    done
    # The program's context or device stays current through every call; the heap is where the
    # program chose, before shmem_init or after it.
    for np in $(nps 1 2); do
        run "spmd/gpu_program_context -np $np, $name: the program's own context" \
            "${with_gpu[@]}" "${launch[@]}" "$np" "$build/tests/spmd/gpu_program_context" own 0
        run "spmd/gpu_program_context -np $np, $name: the runtime's device, after shmem_init" \
            "${with_gpu[@]}" "${launch[@]}" "$np" "$build/tests/spmd/gpu_program_context" \
            runtime 0 late
    done
    # A program that resets the device before shmem_finalize ends cleanly; one that then puts into
    # the reset device's heap ends with a line that says so.
    for np in $(nps 1 2); do
        run "spmd/gpu_device_reset -np $np, $name" "${with_gpu[@]}" "${launch[@]}" "$np" \
            "$build/tests/spmd/gpu_device_reset"
        run "spmd/gpu_device_reset -np $np, $name: a put after the reset" bash -c \
            'out=$("${@:2}" 2>&1); rc=$?; echo "$out"; [ $rc -ne 0 ] && grep -q -- "$1" <<<"$out"' \
            _ "failed (error [0-9]*) on device 0: the program reset the device" "${with_gpu[@]}" \
            "${launch[@]}" "$np" "$build/tests/spmd/gpu_device_reset" use
    done
}

# A GPU kind on its double with several devices a node: spmd_gpu_devices_tests NAME COUNT_VAR
# ENV...: COUNT_VAR the double's variable for its number of devices.
spmd_gpu_devices_tests() {
    local name=$1 count=$2
    shift 2
    local np peers map with_gpu=(env "$@")
    # A PE on each device, with peer access between them (node peers attach each other's heaps;
    # reductions combine on each member's device) and without (node peers go through the
    # transport, staged through host memory; the double ends a process that touches a device it
    # may not reach).
    for np in $(nps 2 4); do
        map=$(seq -s, 0 $((np - 1)))
        for peers in 1 0; do
            run "spmd/spaces_device -np $np, $name on $np devices, peer access $peers" \
                "${with_gpu[@]}" "$count=$np" SHMEM_DEVICE_MAP="$map" STRATA_GPU_DOUBLE_PEERS=$peers \
                "${launch[@]}" "$np" "$build/tests/spmd/spaces_device"
            run "spmd/gpu_patterns -np $np, $name on $np devices, peer access $peers" \
                "${with_gpu[@]}" "$count=$np" SHMEM_DEVICE_MAP="$map" STRATA_GPU_DOUBLE_PEERS=$peers \
                "${launch[@]}" "$np" "$build/tests/spmd/gpu_patterns"
            run "spmd/gpu_streams -np $np, $name on $np devices, peer access $peers" \
                "${with_gpu[@]}" "$count=$np" SHMEM_DEVICE_MAP="$map" STRATA_GPU_DOUBLE_PEERS=$peers \
                STRATA_GPU_DOUBLE_ASYNC=1 "${launch[@]}" "$np" "$build/tests/spmd/gpu_streams"
        done
    done
    # Several devices per PE (device_index): every PE all four, its own first; PEs with three,
    # one and two devices (teams of the PEs that have the index); devices without peer access.
    for np in $(nps 2 4); do
        run "spmd/spaces_multi_device -np $np, $name: 4 devices on every PE" "${with_gpu[@]}" \
            "$count=4" "${launch[@]}" "$np" "$build/tests/spmd/spaces_multi_device" 4
    done
    for np in $(nps 3); do
        run "spmd/spaces_multi_device -np $np, $name: map 0+1+2,1,2+0" "${with_gpu[@]}" \
            "$count=4" SHMEM_DEVICE_MAP=0+1+2,1,2+0 "${launch[@]}" "$np" \
            "$build/tests/spmd/spaces_multi_device" 4
    done
    for np in $(nps 2); do
        run "spmd/spaces_multi_device -np $np, $name: 2 devices, no peer access" "${with_gpu[@]}" \
            "$count=2" STRATA_GPU_DOUBLE_PEERS=0 "${launch[@]}" "$np" \
            "$build/tests/spmd/spaces_multi_device" 2
    done
    # Peer access without native atomics between the devices: atomics go to their owners.
    for np in $(nps 2); do
        run "spmd/gpu_patterns -np $np, $name on $np devices, peer access without atomics" \
            "${with_gpu[@]}" "$count=$np" SHMEM_DEVICE_MAP=0,1 STRATA_GPU_DOUBLE_PEER_ATOMICS=0 \
            "${launch[@]}" "$np" "$build/tests/spmd/gpu_patterns"
    done
    # The program's choice of device wins over the map.
    for np in $(nps 2); do
        run "spmd/gpu_program_context -np $np, $name: the program's device 1 of 2 (map 0,0)" \
            "${with_gpu[@]}" "$count=2" SHMEM_DEVICE_MAP=0,0 "${launch[@]}" "$np" \
            "$build/tests/spmd/gpu_program_context" runtime 1
        run "spmd/gpu_program_context -np $np, $name: its own context on device 1 of 2" \
            "${with_gpu[@]}" "$count=2" "${launch[@]}" "$np" \
            "$build/tests/spmd/gpu_program_context" own 1
    done
}

# Where node peers may take each other's descriptors (Yama's ptrace scope 0 or no Yama), CUDA
# heaps are VMM allocations at the address every member wishes for: the spaces are IDENT_ADDR.
vmm_ident=()
[ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" = 0 ] &&
    vmm_ident=(STRATA_TEST_IDENT_ADDR=1)

spmd_cuda_tests() {
    spmd_gpu_tests CUDA "$cuda_double" cuda SHMEM_TEST_CUDA_DRIVER="$cuda_double" "${vmm_ident[@]}"
    # The library's PTX as the driver's JIT takes it: assembled by the toolkit's ptxas, where
    # there is one, when the double loads the module.
    local ptxas
    ptxas=$(command -v ptxas || echo "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas")
    if [ -f "$cuda_double" ] && [ -x "$ptxas" ]; then
        run "spmd/gpu_streams -np 1, CUDA, the kernels assembled by ptxas for sm_90" env \
            SHMEM_TEST_CUDA_DRIVER="$cuda_double" STRATA_CUDA_DOUBLE_PTXAS="$ptxas" \
            STRATA_GPU_DOUBLE_ASYNC=1 "${launch[@]}" 1 "$build/tests/spmd/gpu_streams"
    else
        echo "SKIP: the kernels' PTX through ptxas (no CUDA toolkit's ptxas here)"
    fi
    # The stream example, linked against the double as a program links libcuda.
    local np
    for np in $(nps 1 2 4); do
        [ -f "$cuda_double" ] || break
        run "examples/stream_pipeline -np $np, on the CUDA double" env \
            SHMEM_TEST_CUDA_DRIVER="$cuda_double" STRATA_GPU_DOUBLE_ASYNC=1 "${launch[@]}" "$np" \
            "$build/examples/stream_pipeline"
    done
    [ -f "$cuda_double" ] && spmd_gpu_devices_tests CUDA STRATA_CUDA_DOUBLE_DEVICES \
        SHMEM_TEST_CUDA_DRIVER="$cuda_double"
    # Reductions among members that share a device are combined by rank 0 alone (above: the
    # double's one device); on a device each, every member combines for itself.
    local with_double=(env SHMEM_TEST_CUDA_DRIVER="$cuda_double")
    for np in $(nps 2); do
        [ -f "$cuda_double" ] || break
        # Heaps of cuMemAlloc and legacy IPC handles, where the device has no VMM.
        run "spmd/spaces_device -np $np, CUDA without VMM" "${with_double[@]}" \
            STRATA_CUDA_DOUBLE_VMM=0 STRATA_TEST_GPU_PES=0-$((np - 1)) "${launch[@]}" "$np" \
            "$build/tests/spmd/spaces_device"
        run "spmd/gpu_patterns -np $np, CUDA without VMM" "${with_double[@]}" \
            STRATA_CUDA_DOUBLE_VMM=0 "${launch[@]}" "$np" "$build/tests/spmd/gpu_patterns"
        # VMM heaps anywhere when the driver will not reserve a whole slot of addresses.
        run "spmd/spaces_device -np $np, CUDA VMM heaps outside their slots" "${with_double[@]}" \
            STRATA_CUDA_DOUBLE_RESERVE_MAX=1073741824 STRATA_TEST_GPU_PES=0-$((np - 1)) \
            "${launch[@]}" "$np" "$build/tests/spmd/spaces_device"
        run "spmd/gpu_patterns -np $np, CUDA VMM heaps outside their slots" "${with_double[@]}" \
            STRATA_CUDA_DOUBLE_RESERVE_MAX=1073741824 "${launch[@]}" "$np" \
            "$build/tests/spmd/gpu_patterns"
        run "spmd/gpu_patterns -np $np, CUDA small writes on the copy engines only" \
            "${with_double[@]}" SHMEM_GPU_COPY_ENGINES_ONLY=1 "${launch[@]}" "$np" \
            "$build/tests/spmd/gpu_patterns"
        # A device without GPUDirect RDMA for VMM memory: heaps made without the flag.
        run "spmd/gpu_program_context -np $np, CUDA without GPUDirect RDMA" "${with_double[@]}" \
            STRATA_CUDA_DOUBLE_RDMA=0 "${launch[@]}" "$np" "$build/tests/spmd/gpu_program_context" \
            own 0
    done
    # The same on this machine's own NVIDIA GPU, where it has one: all PEs share GPU 0.
    if [ -f "$cuda_double" ] && env -u SHMEM_TEST_CUDA_DRIVER "$build/oshrun/oshinfo" 2>/dev/null |
        grep -q '^  cuda: [1-9]'; then
        spmd_gpu_tests "CUDA GPU" "" cuda "${vmm_ident[@]}"
    fi
}

# The HIP kind on its double as the PEs' GPU of any vendor too (SHMEM_DEVICE_GPU in spaces_device):
# no CUDA driver is loaded, so a machine's NVIDIA GPU does not take its place.
# hip_runtime_dir SONAME: a directory where the HIP double is installed as SONAME, for the
# library's own search of LD_LIBRARY_PATH to find it.
hip_runtime_dir() {
    local dir="$log_dir/hip-runtime/$1"
    mkdir -p "$dir" && ln -sf "$hip_double" "$dir/$1" && echo "$dir"
}

spmd_hip_tests() {
    if [ ! -f "$hip_double" ]; then
        spmd_gpu_tests HIP "$hip_double" hip
        return
    fi
    # Found as a ROCm 7 runtime by the library's search, beside Debian's libamdhip64.so.5.
    local np with_hip=(LD_LIBRARY_PATH="$(hip_runtime_dir libamdhip64.so.7)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        STRATA_TEST_HIP_SONAME=libamdhip64.so.7 STRATA_HIP_DOUBLE_VERSION=7.0
        SHMEM_TEST_CUDA_DRIVER=/nonexistent/libcuda.so.1)
    spmd_gpu_tests HIP "$hip_double" hip "${with_hip[@]}"
    spmd_gpu_devices_tests HIP STRATA_HIP_DOUBLE_DEVICES "${with_hip[@]}"
    # The runtimes of HIP 5 and 6 (hipMemoryType numbered apart), each the newest found.
    local version
    for version in 5.7 6.2; do
        for np in $(nps 2); do
            run "spmd/gpu_patterns -np $np, HIP $version runtime (libamdhip64.so.${version%.*})" \
                env LD_LIBRARY_PATH="$(hip_runtime_dir "libamdhip64.so.${version%.*}")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
                STRATA_TEST_HIP_SONAME="libamdhip64.so.${version%.*}" \
                STRATA_HIP_DOUBLE_VERSION=$version SHMEM_TEST_CUDA_DRIVER=/nonexistent/libcuda.so.1 \
                "${launch[@]}" "$np" "$build/tests/spmd/gpu_patterns"
        done
    done
    # A runtime newer than the versions the kind knows is refused, saying which it knows.
    run "SHMEM_DEFAULT_SPACE=hip on a HIP 8.0 runtime is refused, naming the versions known" \
        bash -c 'out=$("$@" 2>&1); rc=$?; echo "$out"; [ $rc -ne 0 ] &&
                 grep -q "HIP runtime 8.0 is not supported: this build knows HIP 5, 6 and 7" <<<"$out"' \
        _ env LD_LIBRARY_PATH="$(hip_runtime_dir libamdhip64.so.7)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        STRATA_HIP_DOUBLE_VERSION=8.0 SHMEM_TEST_CUDA_DRIVER=/nonexistent/libcuda.so.1 \
        SHMEM_DEFAULT_SPACE=hip "${launch[@]}" 1 "$build/tests/spmd/hello"
    if [ -f "$hip_double" ] && [ -f "$cuda_double" ]; then
        run "spmd/gpu_host_copies -np 2, HIP beside the CUDA double (one GPU runtime a process)" \
            env SHMEM_TEST_HIP_RUNTIME="$hip_double" SHMEM_TEST_CUDA_DRIVER="$cuda_double" \
            STRATA_TEST_BOTH_RUNTIMES=1 "${launch[@]}" 2 "$build/tests/spmd/gpu_host_copies"
    fi
}

# Memory traits, on one machine only (its huge-page pool is one for all PEs). On this machine for
# real: as root the suite reserves 2 MiB huge pages and lets shared memory take transparent ones
# for the run, and puts both settings back after it; without root those runs are skipped, said
# so. On a saved two-socket machine with HBM (SHMEM_TEST_TOPOLOGY), for what this one cannot
# show: which PEs the traits hold on.
spmd_traits_tests() {
    local np pool=/proc/sys/vm/nr_hugepages thp=/sys/kernel/mm/transparent_hugepage/shmem_enabled
    local free_file=/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages
    local topologies=${STRATA_TOPOLOGIES_DIR:-$src/../shared/topologies}
    for np in $(nps 1 2 4); do
        if [ -f "$topologies/64intel64-heteromem.xml" ]; then
            run "spmd/space_traits heteromem -np $np (hwloc's export of a machine with HBM)" \
                env "SHMEM_TEST_TOPOLOGY=$topologies/64intel64-heteromem.xml" "${launch[@]}" \
                "$np" "$build/tests/spmd/space_traits" heteromem
        else
            echo "SKIP: spmd/space_traits heteromem -np $np (no $topologies/64intel64-heteromem.xml)"
        fi
        run "spmd/space_traits invalid -np $np" "${launch[@]}" "$np" \
            "$build/tests/spmd/space_traits" invalid
        run "spmd/space_traits numa -np $np" "${launch[@]}" "$np" "$build/tests/spmd/space_traits" \
            numa
        run "spmd/space_traits mismatch -np $np (SHMEM_DEBUG=1)" env SHMEM_DEBUG=1 \
            "${launch[@]}" "$np" "$build/tests/spmd/space_traits" mismatch
        run "spmd/space_traits default -np $np (SHMEM_SYMMETRIC_HEAP_NUMA=0)" \
            env SHMEM_SYMMETRIC_HEAP_NUMA=0 "${launch[@]}" "$np" \
            "$build/tests/spmd/space_traits" default 0 0
        run "spmd/space_traits topology -np $np (saved machine)" \
            env "SHMEM_TEST_TOPOLOGY=$src/tests/unit/topo-2socket-hbm.xml" "${launch[@]}" "$np" \
            "$build/tests/spmd/space_traits" topology
    done
    if [ -w "$pool" ] && [ -r "$free_file" ]; then
        local total used free
        total=$(cat "$pool")
        used=$((total - $(cat "$free_file")))
        for np in $(nps 1 2 4); do
            echo $((used + 2 * np)) >"$pool"
            free=$(cat "$free_file")
            if [ "$free" -ge $((2 * np)) ]; then
                run "spmd/space_traits huge -np $np (2 MiB pages)" "${launch[@]}" "$np" \
                    "$build/tests/spmd/space_traits" huge "$free"
            else
                echo "SKIP: spmd/space_traits huge -np $np: the kernel reserved $free of $((2 * np)) 2 MiB pages"
            fi
            run "spmd/space_traits default -np $np (SHMEM_SYMMETRIC_HEAP_USE_HUGE_PAGES=1)" \
                env SHMEM_SYMMETRIC_SIZE=4M SHMEM_SYMMETRIC_HEAP_USE_HUGE_PAGES=1 \
                "${launch[@]}" "$np" "$build/tests/spmd/space_traits" default $((2 << 20)) 0 "$np"
            run "spmd/space_traits default -np $np (free 2 MiB pages, taken unasked)" \
                env SHMEM_SYMMETRIC_SIZE=4M "${launch[@]}" "$np" \
                "$build/tests/spmd/space_traits" default $((2 << 20)) 0 "$np"
            run "spmd/space_traits default -np $np (free 2 MiB pages, left by USE_HUGE_PAGES=0)" \
                env SHMEM_SYMMETRIC_SIZE=4M SHMEM_SYMMETRIC_HEAP_USE_HUGE_PAGES=0 \
                "${launch[@]}" "$np" "$build/tests/spmd/space_traits" default \
                "$(getconf PAGESIZE)" 0 0
            echo $((used + 2 * np - 1)) >"$pool"
            # Unasked, the PEs that find room take huge pages whole, the rest base pages, and
            # nothing is said; every page goes back at the end.
            run "default heap one 2 MiB page short, unasked: $((np - 1)) of $np PEs in them" \
                bash -c "out=\$(SHMEM_SYMMETRIC_SIZE=4M '$oshrun' -np $np \
                    '$build/tests/spmd/space_traits' default 0 0 $((np - 1)) 2>&1); rc=\$?;
                 echo \"\$out\"; [ \$rc -eq 0 ] && [ -z \"\$out\" ] &&
                 [ \$(cat '$free_file') -eq $((2 * np - 1)) ]"
            run "spmd/space_traits scarce -np $np (one 2 MiB page short)" "${launch[@]}" "$np" \
                "$build/tests/spmd/space_traits" scarce
            run "default heap one 2 MiB page short: shmem_init fails on every PE -np $np" bash -c \
                "out=\$(SHMEM_SYMMETRIC_SIZE=4M SHMEM_SYMMETRIC_HEAP_USE_HUGE_PAGES=1 \
                    '$oshrun' -np $np '$build/tests/spmd/space_traits' default 0 0 2>&1); rc=\$?;
                 echo \"\$out\"; [ \$rc -ne 0 ] &&
                 grep -q 'SHMEM_SYMMETRIC_HEAP_USE_HUGE_PAGES.*free.*reserve more' <<<\"\$out\""
            run "spmd/space_traits default -np $np (one page short, policy preferred)" \
                env SHMEM_SYMMETRIC_SIZE=4M SHMEM_SYMMETRIC_HEAP_USE_HUGE_PAGES=1 \
                SHMEM_SYMMETRIC_HEAP_POLICY=preferred "${launch[@]}" "$np" \
                "$build/tests/spmd/space_traits" default 0 0
        done
        echo "$total" >"$pool"
    else
        echo "SKIP: spmd/space_traits huge and scarce: $pool is not writable (needs root)"
    fi
    if [ -w "$thp" ]; then
        local before
        before=$(sed 's/.*\[\(.*\)\].*/\1/' "$thp")
        echo advise >"$thp"
        for np in $(nps 1 2 4); do
            run "spmd/space_traits thp -np $np (transparent huge pages)" "${launch[@]}" "$np" \
                "$build/tests/spmd/space_traits" thp
            run "spmd/space_traits default -np $np (transparent huge pages)" \
                env SHMEM_SYMMETRIC_HEAP_USE_HUGE_PAGES=1 SHMEM_SYMMETRIC_HEAP_PAGE_SIZE=transparent \
                "${launch[@]}" "$np" "$build/tests/spmd/space_traits" default \
                "$(printf '%u' -1)" 0 "$np"
            run "spmd/space_traits default -np $np (transparent huge pages, taken unasked)" \
                env SHMEM_SYMMETRIC_HEAP_PAGE_SIZE=transparent "${launch[@]}" "$np" \
                "$build/tests/spmd/space_traits" default "$(printf '%u' -1)" 0 "$np"
        done
        echo never >"$thp"
        run "default heap unasked where shared memory has no transparent huge pages: base pages" \
            bash -c "out=\$(SHMEM_SYMMETRIC_HEAP_PAGE_SIZE=transparent '$oshrun' -np 2 \
                '$build/tests/spmd/space_traits' default $(getconf PAGESIZE) 0 0 2>&1); rc=\$?;
             echo \"\$out\"; [ \$rc -eq 0 ] && [ -z \"\$out\" ]"
        echo "$before" >"$thp"
    else
        echo "SKIP: spmd/space_traits thp: $thp is not writable (needs root)"
    fi
}
