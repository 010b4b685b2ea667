#!/usr/bin/env bash
# How start-up time and memory per PE grow with the number of PEs: for each count, the median
# wall time of oshrun running a hello world, and the resident memory of the largest PE
# (footprint.c) with SHMEM_SYMMETRIC_SIZE=4G, for Strata and, when installed, Open MPI's OSHMEM,
# run alternately. Ends with one machine-readable line "SCALING {...}".
# Usage: scaling.sh BUILDDIR SRCDIR [RUNS] [PE COUNTS...]
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
runs=${3:-5}
shift $(($# < 3 ? $# : 3))
counts=${*:-1 2 4 8 16}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-scaling.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$src/tests/perf/bench_lib.sh"
bench_lib_init

build_both "$src/examples/hello.c" hello
build_both "$src/tests/perf/footprint.c" footprint
export SHMEM_SYMMETRIC_SIZE=4G
per_count() { awk -v n="$1" '{print $1 "_" n, $2}'; } # names each figure after the PE count

for n in $counts; do
    for _ in $(seq "$runs"); do
        launch_ms "launch_$n" run_strata "$n" "$work/hello.strata" >>"$work/strata.txt"
        [ "$have_ompi" = 1 ] && launch_ms "launch_$n" run_ompi "$n" "$work/hello.ompi" >>"$work/ompi.txt"
    done
    run_strata "$n" "$work/footprint.strata" | per_count "$n" >>"$work/strata.txt"
    [ "$have_ompi" = 1 ] && run_ompi "$n" "$work/footprint.ompi" | per_count "$n" >>"$work/ompi.txt"
done

printf '%5s %12s %12s %12s %12s %12s %12s\n' "PEs" "launch ms" "RSS KiB" "anon KiB" \
    "OMPI launch" "OMPI RSS" "OMPI anon"
json=""
for n in $counts; do
    row=()
    for f in strata ompi; do
        for m in launch rss_per_pe_KiB rss_anon_per_pe_KiB; do
            v=$(median "${m}_$n" "$work/$f.txt")
            row+=("${v:--}")
            json="$json${json:+, }\"${f}_${m}_$n\": $(json_num "$v")"
        done
    done
    printf '%5s %12s %12s %12s %12s %12s %12s\n' "$n" "${row[@]}"
done
echo "SCALING {$json}"
