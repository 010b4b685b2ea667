#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The test suite: unit tests, SPMD tests under oshrun on 1, 2, 3 and 4 PEs (and the transport path
# with node-direct mapping off, over each network built in), launcher failure handling and error
# reporting. With STRATA_SUITE_LEAN=1 (CI's sanitizer build, whose release build runs it all)
# libfabric's group with node peers through it is left out; its network group stays.
# Usage: run_suite.sh BUILDDIR SRCDIR UNIT_TEST... (the unit tests as Makefile.am lists them, so
# that a new one cannot be built and never run). Prints one line per test and ends with
# "N passed, N failed".
set -u
. "$(dirname "$0")/suite_lib.sh" "$1" "$2"
. "$src/tests/spmd_suite.sh"
shift 2

for t in "$@"; do
    name=$(basename "$t")
    if [ "$name" = test_copy ]; then # counts stores with hardware watchpoints where it may
        if "$build/$t" --can-watch; then
            run "unit/$name, stores counted" "$build/$t" stores
        else
            run "unit/$name" "$build/$t"
            echo "SKIP: unit/$name, stores counted (no hardware watchpoint that counts stores here)"
        fi
    elif [ "$name" = test_discovery ]; then # reads a topology, and the GPU runtimes' doubles
        run "unit/$name" "$build/$t" "$src/tests/unit/topo-2socket-2gpu.xml" \
            $([ -f "$cuda_double" ] && echo "cuda=$cuda_double") \
            $([ -f "$hip_double" ] && echo "hip=$hip_double")
    elif [ "$name" = test_numa ]; then # hwloc's saved machines, shared beside the tree
        topologies=${STRATA_TOPOLOGIES_DIR:-$src/../shared/topologies}
        [ -d "$topologies" ] || topologies=""
        run "unit/$name" "$build/$t" "$topologies" "$src/tests/unit/topo-2socket-hbm.xml" \
            "$log_dir"
    elif [ "$name" = test_transport ]; then # against each network built in
        # UCX's loopback transport (self) gets fetching AND, OR and XOR wrong; a PE never sends
        # its own operations through the network, so the test reaches itself as a peer would.
        run "unit/$name ucx (shared memory)" env "UCX_TLS=^self" "$build/$t" ucx
        run "unit/$name ucx (TCP, by message)" env UCX_TLS=tcp "$build/$t" ucx
        if network_built ofi; then
            run "unit/$name ofi ($ofi_provider)" "$build/$t" ofi "$ofi_provider"
            run "unit/$name ofi ($ofi_provider), atomics by message" "$build/$t" ofi \
                "$ofi_provider" by-message
            for provider in shm sockets; do # libfabric's others that need no hardware
                run "unit/$name ofi ($provider)" "$build/$t" ofi "$provider"
            done
        fi
    else
        run "unit/$name" "$build/$t"
    fi
done

spmd_tests
spmd_traits_tests
spmd_network_tests
spmd_via_network_tests
# The same through libfabric, where the build has it.
if network_built ofi; then
    network_use ofi
    spmd_network_tests
    if [ "${STRATA_SUITE_LEAN:-0}" = 1 ]; then
        echo "SKIP: spmd groups with node peers through libfabric (lean run; the full run has them)"
    else
        spmd_via_network_tests
    fi
    network_use ucx
else
    echo "SKIP: the libfabric network (built without libfabric-dev)"
fi
spmd_device_tests
spmd_cuda_tests
spmd_hip_tests
# A transport queue of two messages makes puts wait inside UCX: quiet must still complete them
# before their source is reused.
run "spmd/rma_nbi -np 2 via UCX, puts queued in the transport" env SHMEM_NODE_DIRECT=0 \
    UCX_TLS=posix,self UCX_POSIX_FIFO_SIZE=2 UCX_POSIX_SEG_SIZE=256 "$oshrun" -np 2 \
    "$build/tests/spmd/rma_nbi" 65536
# The library's settings for UCX's TCP transport only where UCX_TLS lets it load: UCX warns on
# every PE about settings of a transport left out (InfiniBand clusters set rc,sm,self).
for tls in sm,self ^tcp; do
    run "spmd/rma_put_get -np 2 via UCX_TLS=$tls: no UCX warning" bash -c \
        "out=\$(SHMEM_NODE_DIRECT=0 UCX_TLS='$tls' '$oshrun' -np 2 '$build/tests/spmd/rma_put_get' 2>&1);
         rc=\$?; echo \"\$out\"; [ \$rc -eq 0 ] && ! grep -q 'UCX  *WARN' <<<\"\$out\""
done
run "spmd/shm_names singleton" "$build/tests/spmd/shm_names"
run "SHMEM_DEFAULT_SPACE=gpu without a device on PE 1 fails on every PE" bash -c \
    "out=\$(SHMEM_DEFAULT_SPACE=gpu SHMEM_TEST_DEVICE_PES=0 '$oshrun' -np 2 \
        '$build/tests/spmd/hello' 2>&1); rc=\$?; echo \"\$out\";
     [ \$rc -ne 0 ] && [ \$(grep -c 'PE 1 cannot reach' <<<\"\$out\") -eq 2 ]"
run "spmd/hello singleton" "$build/tests/spmd/hello"
run "oshcc, oshc++ and oshCC" bash "$src/tests/unit/wrappers.sh" "$build" "$src"
# The library exports the OpenSHMEM API and nothing else.
run "libstrata exports only the OpenSHMEM API" bash "$src/tests/unit/exports.sh" \
    "$build/.libs/libstrata.so"
run "GPU runtimes loaded only for GPU spaces, never from the current directory" bash \
    "$src/tests/unit/runtime_loading.sh" "$oshrun" "$build/tests/spmd/hello" \
    "$build/tests/spmd/spaces_device" "$src/tests/unit/fake_runtime.c" \
    "$([ -f "$cuda_double" ] && echo "$cuda_double")"
run "oshinfo names the memory kinds this build has" bash -c \
    "line=\$('$build/oshrun/oshinfo' | grep '^Memory kinds:'); echo \"\$line\";
     [ \$(grep -c 'CUDA GPUs' <<<\"\$line\") -eq $([ -f "$cuda_double" ] && echo 1 || echo 0) ] &&
     [ \$(grep -c 'HIP (AMD) GPUs' <<<\"\$line\") -eq $([ -f "$hip_double" ] && echo 1 || echo 0) ]"
run "oshinfo lists the networks built in and what each sees" bash -c \
    "out=\$('$build/oshrun/oshinfo'); echo \"\$out\"; grep -qx '  ucx' <<<\"\$out\" &&
     grep -q '^    UCX [0-9]' <<<\"\$out\" &&
     { ! grep -q 'STRATA_HAVE_OFI' '$build/Makefile' ||
       { grep -qx '  ofi' <<<\"\$out\" && grep -q '^    provider tcp;ofi_rxm, domain' <<<\"\$out\"; }; }"
if network_built ofi; then
    # SHMEM_TRANSPORT=auto takes libfabric only where the node has a device of a network UCX
    # cannot drive and libfabric a provider for it: here a fake sysfs shows an EFA device.
    sysfs=$(mktemp -d "$TMPDIR/sysfs.XXXXXX")
    mkdir -p "$sysfs/class/infiniband/rdmap0s6/device"
    ln -s ../../../../bus/pci/drivers/efa "$sysfs/class/infiniband/rdmap0s6/device/driver"
    run "SHMEM_TRANSPORT=auto: UCX beside an EFA device that libfabric has no provider for" \
        bash -c "out=\$(SHMEM_LOG=init STRATA_TEST_SYSFS='$sysfs' SHMEM_NODE_DIRECT=0 \
            '$oshrun' -np 2 '$build/tests/spmd/rma_put_get' 2>&1); rc=\$?; echo \"\$out\";
            [ \$rc = 0 ] && [ \$(grep -c 'transport: network ucx' <<<\"\$out\") = 2 ] &&
            [ \$(grep -c 'a device for libfabric.s efa here, but no such provider' <<<\"\$out\") = 2 ]"
    run "SHMEM_TRANSPORT=ofi with a provider libfabric lacks fails on every PE, naming it" \
        bash -c "out=\$(SHMEM_TRANSPORT=ofi SHMEM_OFI_PROVIDER=nonesuch SHMEM_NODE_DIRECT=0 \
            '$oshrun' -np 2 '$build/tests/spmd/hello' 2>&1); rc=\$?; echo \"\$out\";
            [ \$rc != 0 ] && grep -q 'no libfabric provider named nonesuch' <<<\"\$out\""
fi
# docs/knobs.md's table is generated from the knob table in the code (make update-knobs-doc):
# it must match.
run "docs/knobs.md table matches oshinfo" bash -c \
    "diff <('$build/oshrun/oshinfo' --knobs-markdown) <(awk '/^\\| Variable \\|/ { on = 1 } on && /^\$/ { exit } on' '$src/docs/knobs.md')"
run "documents: links and example programs" bash "$src/tests/docs.sh" "$src" "$build"
run "every routine of shmem.h and shmemx.h has a man page" bash "$src/tests/api_pages.sh" "$src" \
    "$build"
# Build systems find the installed library: CI installs each build before it tests it.
prefix=$(sed -n 's/^prefix = //p' "$build/Makefile")
if [ -f "$prefix/lib/cmake/Strata/StrataConfig.cmake" ] && command -v cmake >/dev/null; then
    run "programs built with pkg-config and CMake" bash "$src/tests/consumers.sh" "$prefix" "$src"
else
    echo "SKIP: programs built with pkg-config and CMake (not installed in $prefix, or no cmake)"
fi
# The pages are the same in every build: a sanitizer build leaves rendering them to the others.
if [ ! -f "$build/man/oshrun.1" ]; then
    echo "SKIP: the man pages (configured without pandoc)"
elif "$build/oshrun/oshinfo" | grep -q "^Sanitizers: *yes"; then
    echo "SKIP: rendering the man pages (the same in the build without sanitizers)"
else
    run "man pages render" bash "$src/tests/man_pages.sh" "$build"
fi
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
finish
