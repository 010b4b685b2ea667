#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Waits when the cores are shared: the RMA, atomic and collective benchmarks on 2 PEs of one
# node, built with Strata and with Open MPI's OSHMEM and run alternately, first on idle cores,
# then with another job's two processes computing on the same cores (one busy loop per core, as
# a second two-process job would be; BENCH_LOAD_PROCS sets another count). Prints each figure
# idle and loaded for both libraries, how much load slows each (loaded / idle), and Strata /
# Open MPI under load. Ends with one machine-readable line "BENCH_LOAD {...}".
# Usage: run_bench_load.sh BUILDDIR SRCDIR [RUNS]
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
runs=${3:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-bench-load.XXXXXX")
. "$src/tests/perf/bench_lib.sh"
trap 'stop_load; rm -rf "$work"' EXIT
bench_lib_init

build_latency_benches

# measure PHASE: every benchmark, both libraries alternately; figures into PHASE.strata/.ompi.
measure() {
    for b in $benches; do
        for _ in $(seq "$runs"); do
            timeout 300 "$build/oshrun/oshrun" -np 2 "$work/$b.strata" >>"$work/$1.strata"
            [ "$have_ompi" = 1 ] && run_ompi 2 "$work/$b.ompi" >>"$work/$1.ompi"
        done
    done
}

measure idle
start_load
measure loaded
stop_load

echo "2 PEs on one node; loaded: $load_processes busy processes of another job on the" \
    "$(nproc) cores"
printf '%-24s %10s %10s %8s %10s %10s %8s %10s\n' "figure" "Strata" "loaded" "x" "Open MPI" \
    "loaded" "x" "S/O load"
json="\"load_processes\": $load_processes"
for metric in $(awk '{print $1}' "$work/idle.strata" | awk '!seen[$0]++'); do
    case "$metric" in *_MBps | *_Mmsgps) continue ;; esac # times only: "x" is a slowdown
    si=$(median "$metric" "$work/idle.strata")
    sl=$(median "$metric" "$work/loaded.strata")
    oi=$(median "$metric" "$work/idle.ompi")
    ol=$(median "$metric" "$work/loaded.ompi")
    printf '%-24s %10s %10s %8s %10s %10s %8s %10s\n' "$metric" "${si:--}" "${sl:--}" \
        "$(ratio "$sl" "$si")" "${oi:--}" "${ol:--}" "$(ratio "$ol" "$oi")" "$(ratio "$sl" "$ol")"
    json="$json, \"$metric\": {\"strata\": $(json_num "$si"), \"strata_loaded\": $(json_num "$sl"), \"openmpi\": $(json_num "$oi"), \"openmpi_loaded\": $(json_num "$ol")}"
done
echo "BENCH_LOAD {$json}"
