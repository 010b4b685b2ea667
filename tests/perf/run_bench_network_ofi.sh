#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The network path over libfabric: the RMA, atomic and collective benchmarks on two PEs, one on
# each of two Slurm nodes (a throwaway cluster on this host, tests/cluster/slurm_nodes.sh), with
# SHMEM_TRANSPORT=ofi over the provider SHMEM_OFI_PROVIDER names (tcp;ofi_rxm unless set), and,
# where SOS_PREFIX names an installed Sandia OpenSHMEM built with libfabric, the same programs
# built with it over the same provider, run alternately under `srun --mpi=pmix`. Each figure is
# printed beside the provider's own floor between the same two nodes, measured in the same run:
# ofi_floor.c (one-sided operations, each waited for: 8-byte put, get and fetch-add, 1 MiB put and
# 1 MiB puts 16 in flight) for the figures it has, and fi_pingpong's message round trip for the
# other times.
# Ends with one machine-readable line "BENCH_OFI {...}".
# Usage: run_bench_network_ofi.sh BUILDDIR SRCDIR [RUNS]
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
runs=${3:-5}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-bench-ofi.XXXXXX")
chmod 755 "$work" # munged wants every directory above its socket open to all
cluster=$work/cluster
export SHMEM_OFI_PROVIDER=${SHMEM_OFI_PROVIDER:-tcp;ofi_rxm}
. "$src/tests/perf/bench_lib.sh"
trap 'bash "$src/tests/cluster/slurm_nodes.sh" stop "$cluster"; rm -rf "$work"' EXIT

require_tools "slurmd slurmctld slurm-client munge libfabric-bin" srun slurmd fi_pingpong pkg-config
pkg-config --exists libfabric pmix || {
    echo "SKIPPED: libfabric-dev or libpmix-dev not installed"
    exit 0
}
cluster_start

# The benchmarks with Strata and, where SOS_PREFIX has its oshcc, with Sandia OpenSHMEM.
benches="rma_latency amo_latency coll_latency"
have_sos=0
[ -n "${SOS_PREFIX:-}" ] && [ -x "$SOS_PREFIX/bin/oshcc" ] && have_sos=1
for b in $benches; do
    build_strata "$src/tests/perf/$b.c" "$b"
    [ "$have_sos" = 0 ] || "$SOS_PREFIX/bin/oshcc" -O2 -Wno-deprecated-declarations \
        -o "$work/$b.sos" "$src/tests/perf/$b.c" || have_sos=0
done
[ "$have_sos" = 1 ] || echo "Sandia OpenSHMEM not given (SOS_PREFIX=its prefix): Strata figures only"
build_ofi_floor || exit 1

run_net() { net_run "$@" | figure_lines; }
# Unset, each run_net's environment adds to what the caller has; srun takes it to both nodes.
run_strata() { run_net SHMEM_TRANSPORT=ofi "$@"; }
run_sos() { run_net SHMEM_SYMMETRIC_SIZE=512M "$@"; }

for i in $(seq "$runs"); do
    ofi_pingpong >>"$work/limits.txt"
    run_net "${ofi_floor_env[@]}" "$work/ofi_floor" >>"$work/limits.txt"
done
run_tagged() { # run_tagged WHO BENCH RUN
    "run_$1" "$work/$2.$1" | sed "s/\$/ $3/" >>"$work/$1.txt"
}
for b in $benches; do
    for i in $(seq "$runs"); do
        if [ $((i % 2)) = 1 ] || [ "$have_sos" = 0 ]; then
            run_tagged strata "$b" "$i"
            [ "$have_sos" = 0 ] || run_tagged sos "$b" "$i"
        else
            run_tagged sos "$b" "$i"
            run_tagged strata "$b" "$i"
        fi
    done
done

one_way_us=$(median msg_one_way_us "$work/limits.txt")
round_trip_ns=$(awk -v t="$one_way_us" 'BEGIN {if (t != "") printf "%.1f", 2000 * t}')
echo "libfabric between the nodes (SHMEM_OFI_PROVIDER=$SHMEM_OFI_PROVIDER): message round trip" \
    "${round_trip_ns} ns (fi_pingpong); one-sided floors from ofi_floor: medians of $runs runs"
[ -s "$work/failed.txt" ] && sed 's/^/a run that did not finish: /' "$work/failed.txt"
echo "Strata and Sandia OpenSHMEM: medians of $runs runs; /SOS: the median of the runs' ratios," \
    "each Strata run to the SOS run beside it, then their range and (count)"
printf '%-28s %12s %12s %9s %12s %9s %17s %11s\n' "figure" "Strata" "floor" "/floor" "SOS" \
    "/SOS" "runs" "SOS/floor"
json="\"provider\": \"$SHMEM_OFI_PROVIDER\", \"msg_round_trip_ns\": $(json_num "$round_trip_ns")"
touch "$work/sos.txt"
for metric in $(awk '{print $1}' "$work/strata.txt" | awk '!seen[$0]++'); do
    limit=$(median "$metric" "$work/limits.txt")
    if [ -z "$limit" ]; then
        case "$metric" in
        *_ns) limit=$round_trip_ns ;;
        esac
    fi
    bench_row "$metric" "$limit" "$work/strata.txt" "$work/sos.txt" sos
done
echo "BENCH_OFI {$json}"
