#!/usr/bin/env bash
# Builds each benchmark with Strata and, when installed, with Open MPI's OSHMEM (Debian
# openmpi-bin), runs them alternately on 2 PEs, and prints the median of several runs of each
# figure with the ratio Strata / Open MPI. Ends with one machine-readable line "BENCH {...}".
# Usage: run_bench.sh BUILDDIR SRCDIR [RUNS]
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
runs=${3:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
benches="amo_latency coll_latency"

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

# Alternate the two implementations so that machine noise hits both alike.
for b in $benches; do
    for i in $(seq "$runs"); do
        run_strata "$work/$b.strata" >>"$work/strata.txt"
        [ "$have_ompi" = 1 ] && run_ompi "$work/$b.ompi" >>"$work/ompi.txt"
    done
done

median() { # median METRIC FILE
    grep "^$1 " "$2" 2>/dev/null | awk '{print $2}' | sort -g | awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'
}

printf '%-28s %14s %14s %8s\n' "figure" "Strata" "Open MPI" "ratio"
json=""
for metric in $(awk '{print $1}' "$work/strata.txt" | awk '!seen[$0]++'); do
    ours=$(median "$metric" "$work/strata.txt")
    theirs=$(median "$metric" "$work/ompi.txt")
    ratio=$( [ -n "$theirs" ] && awk -v a="$ours" -v b="$theirs" 'BEGIN {printf "%.3f", a / b}' || echo "-")
    printf '%-28s %14s %14s %8s\n' "$metric" "$ours" "${theirs:--}" "$ratio"
    json="$json${json:+, }\"$metric\": {\"strata\": $ours, \"openmpi\": ${theirs:-null}, \"ratio\": $( [ "$ratio" = - ] && echo null || echo "$ratio")}"
done
echo "BENCH {$json}"
