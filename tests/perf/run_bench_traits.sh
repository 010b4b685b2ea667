#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Memory traits on 2 PEs (tests/perf/traits_bench.c): 1 MiB put and get bandwidth and 8-byte
# ping-pong in the default heap and in spaces of each page size and NUMA placement, and random
# 8-byte gets across a large space in 4 KiB and 2 MiB pages, each the median of RUNS runs beside
# the machine's limit measured in the same runs (one core's memcpy over the same pattern, the
# cross-core cache-line round trip, plain loads through the same pages). As root it reserves the
# 2 MiB pages and allows transparent huge pages for shared memory while it runs, and puts both
# back; without root the figures that need them are left out. Strata only: Open MPI has no
# memory traits. Ends with one machine-readable line "BENCH {...}".
# Usage: run_bench_traits.sh BUILDDIR SRCDIR [RUNS] (STRATA_BENCH_RANDOM_BYTES: 4 GiB)
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
runs=${3:-5}
random_bytes=${STRATA_BENCH_RANDOM_BYTES:-$((4 << 30))}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-bench.XXXXXX")
pool=/proc/sys/vm/nr_hugepages
thp=/sys/kernel/mm/transparent_hugepage/shmem_enabled
pool_before=$(cat "$pool")
thp_before=$(sed 's/.*\[\(.*\)\].*/\1/' "$thp" 2>/dev/null)
restore() {
    [ -w "$pool" ] && echo "$pool_before" >"$pool"
    [ -w "$thp" ] && [ -n "$thp_before" ] && echo "$thp_before" >"$thp"
    rm -rf "$work"
}
trap restore EXIT
. "$src/tests/perf/bench_lib.sh"

build_strata "$src/tests/perf/traits_bench.c" traits_bench
cc -O2 -o "$work/limits" "$src/tests/perf/limits.c" || exit 1
# Both PEs' parts of the random-get space in 2 MiB pages, and the 64 MiB spaces beside.
if [ -w "$pool" ]; then
    echo $((pool_before + 2 * (random_bytes >> 21) + 64)) >"$pool"
    echo "Reserved $(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages) free 2 MiB pages"
else
    echo "Not root: no 2 MiB pages reserved; their figures are left out"
fi
[ -w "$thp" ] && echo advise >"$thp"

for i in $(seq "$runs"); do
    "$work/limits" >>"$work/limits.txt"
    run_strata 2 "$work/traits_bench.strata" "$random_bytes" | figure_lines >>"$work/strata.txt"
done

memcpy_limit=$(median traits_memcpy_1MiB_limit_MBps "$work/strata.txt")
line_limit=$(median cacheline_round_trip_ns "$work/limits.txt")
echo "Machine limits: memcpy ${memcpy_limit} MB/s (1 MiB at a time over 32 MiB, one core)," \
    "cache-line round trip ${line_limit} ns; random gets beside plain loads through the same pages"
printf '%-36s %12s %12s %9s\n' "figure" "Strata" "limit" "/limit"
json="\"cacheline_round_trip_ns\": $(json_num "$line_limit")"
for metric in $(awk '{print $1}' "$work/strata.txt" | awk '!seen[$0]++'); do
    case "$metric" in
    traits_random_g_*) limit=$(median "${metric/_random_g_/_random_load_}" "$work/strata.txt") ;;
    *_limit_MBps | traits_random_load_*) limit="" ;;
    *_MBps) limit=$memcpy_limit ;;
    *_ns) limit=$line_limit ;;
    esac
    limit_row "$metric" "$limit" "$work/strata.txt"
done
echo "BENCH {$json}"
