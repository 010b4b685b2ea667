#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds each benchmark with Strata and, when installed, with Open MPI's OSHMEM (Debian
# openmpi-bin), runs them alternately on 2 PEs, and prints the median of several runs of each
# figure beside the machine's own limit measured in the same run (single-core memcpy bandwidth
# for bandwidths, a cross-core cache-line round trip for times) and Open MPI's figure, with both
# ratios. Ends with one machine-readable line "BENCH {...}".
# Usage: run_bench.sh BUILDDIR SRCDIR [RUNS]
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
runs=${3:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$src/tests/perf/bench_lib.sh"
bench_lib_init

build_latency_benches
build_both "$src/examples/hello.c" hello
cc -O2 -o "$work/limits" "$src/tests/perf/limits.c" || exit 1
# Strata only (the spaces API): a space's whole life, early and after a thousand; what a device
# space alive on the PEs costs host RMA and atomics.
for b in space_cycle device_alive; do
    build_strata "$src/tests/perf/$b.c" "$b"
done

# Alternate the two implementations so that machine noise hits both alike.
for i in $(seq "$runs"); do
    "$work/limits" >>"$work/limits.txt"
    launch_ms launch_hello_2pe_ms run_strata 2 "$work/hello.strata" >>"$work/strata.txt"
    [ "$have_ompi" = 1 ] && launch_ms launch_hello_2pe_ms run_ompi 2 "$work/hello.ompi" >>"$work/ompi.txt"
done
for b in $benches; do
    for i in $(seq "$runs"); do
        run_strata 2 "$work/$b.strata" >>"$work/strata.txt"
        [ "$have_ompi" = 1 ] && run_ompi 2 "$work/$b.ompi" >>"$work/ompi.txt"
    done
done

for i in $(seq "$runs"); do
    run_strata 4 "$work/space_cycle.strata" >>"$work/strata.txt"
    # Without the progress thread that a space the CPU cannot load/store starts: on 2 cores its
    # wake-ups would dominate what this measures, the host fast path's cost.
    SHMEM_PROGRESS_THREAD=0 SHMEM_TEST_DEVICE_PES=0-1 run_strata 2 "$work/device_alive.strata" \
        >>"$work/strata.txt"
done

memcpy_limit=$(median memcpy_1MiB_MBps "$work/limits.txt")
line_limit=$(median cacheline_round_trip_ns "$work/limits.txt")
echo "Machine limits: memcpy ${memcpy_limit} MB/s (1 MiB, one core), cache-line round trip ${line_limit} ns"
printf '%-28s %12s %12s %9s %12s %9s\n' "figure" "Strata" "limit" "/limit" "Open MPI" "/OpenMPI"
json="\"memcpy_1MiB_MBps\": $(json_num "$memcpy_limit"), \"cacheline_round_trip_ns\": $(json_num "$line_limit")"
for metric in $(awk '{print $1}' "$work/strata.txt" | awk '!seen[$0]++'); do
    ours=$(median "$metric" "$work/strata.txt")
    theirs=$(median "$metric" "$work/ompi.txt")
    case "$metric" in
    *_MBps) limit=$memcpy_limit ;;
    *_ns) limit=$line_limit ;;
    *_us) limit=$(awk -v ns="$line_limit" 'BEGIN {printf "%.3f", ns / 1000}') ;;
    *) limit="" ;;
    esac
    to_limit=$(ratio "$ours" "$limit")
    to_ompi=$(ratio "$ours" "$theirs")
    printf '%-28s %12s %12s %9s %12s %9s\n' "$metric" "$ours" "${limit:--}" "$to_limit" "${theirs:--}" "$to_ompi"
    json="$json, \"$metric\": {\"strata\": $ours, \"limit\": $(json_num "$limit"), \"to_limit\": $(json_num "$to_limit"), \"openmpi\": $(json_num "$theirs"), \"to_openmpi\": $(json_num "$to_ompi")}"
done
echo "BENCH {$json}"
