#!/usr/bin/env bash
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
benches="rma_latency amo_latency coll_latency"

ompi_cc=/usr/bin/oshcc
ompi_run=/usr/bin/oshrun
have_ompi=0
[ -x "$ompi_cc" ] && [ -x "$ompi_run" ] && have_ompi=1
[ "$have_ompi" = 1 ] || echo "Open MPI OSHMEM not installed (apt-get install openmpi-bin libopenmpi-dev): Strata figures only"

for b in $benches; do
    cc -O2 -I"$src/include" -o "$work/$b.strata" "$src/tests/perf/$b.c" -L"$build/.libs" \
        -Wl,-rpath,"$build/.libs" -lstrata || exit 1
    if [ "$have_ompi" = 1 ]; then
        "$ompi_cc" -O2 -o "$work/$b.ompi" "$src/tests/perf/$b.c" 2>/dev/null || have_ompi=0
    fi
done

run_strata() { "$build/oshrun/oshrun" -np 2 "$1"; }
# Open MPI's OSHMEM segfaults in its own finalize unless its one-sided layer is UCX.
run_ompi() { OMPI_MCA_osc=ucx timeout 120 "$ompi_run" --allow-run-as-root --oversubscribe -np 2 "$1" 2>/dev/null; }

cc -O2 -o "$work/limits" "$src/tests/perf/limits.c" || exit 1
cc -O2 -I"$src/include" -o "$work/hello.strata" "$src/examples/hello.c" -L"$build/.libs" \
    -Wl,-rpath,"$build/.libs" -lstrata || exit 1
[ "$have_ompi" = 1 ] && "$ompi_cc" -O2 -o "$work/hello.ompi" "$src/examples/hello.c" 2>/dev/null

# Wall time of a whole 2-PE hello world, launcher included, in milliseconds.
launch_ms() {
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    echo "launch_hello_2pe_ms $(((t1 - t0) / 1000000))"
}

# Alternate the two implementations so that machine noise hits both alike.
for i in $(seq "$runs"); do
    "$work/limits" >>"$work/limits.txt"
    launch_ms run_strata "$work/hello.strata" >>"$work/strata.txt"
    [ "$have_ompi" = 1 ] && launch_ms run_ompi "$work/hello.ompi" >>"$work/ompi.txt"
done
for b in $benches; do
    for i in $(seq "$runs"); do
        run_strata "$work/$b.strata" >>"$work/strata.txt"
        [ "$have_ompi" = 1 ] && run_ompi "$work/$b.ompi" >>"$work/ompi.txt"
    done
done

median() { # median METRIC FILE
    grep "^$1 " "$2" 2>/dev/null | awk '{print $2}' | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'
}

ratio() { # ratio A B: A / B with 3 decimals, or - when either is missing
    [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}' || echo "-"
}
json_num() { [ -z "$1" ] || [ "$1" = - ] && echo null || echo "$1"; }

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
