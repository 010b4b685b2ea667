#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The OSU OpenSHMEM micro-benchmarks, the yardstick users compare libraries with, on two PEs:
# built from their snapshot (BSD licensed, outside this tree) with Strata and with Open MPI's
# OSHMEM, and run alternately, each library going first in every other run. WHERE says where the
# two PEs are:
#   node  both on this host, each library under its own launcher;
#   ucx   one on each of two Slurm nodes (tests/cluster/slurm_nodes.sh), both libraries over UCX
#         (UCX_TLS, tcp,self unless set);
#   ofi   the same, Strata over libfabric (SHMEM_OFI_PROVIDER, tcp;ofi_rxm unless set), Open MPI
#         over UCX (it has no libfabric path here).
# Each figure (a benchmark at a message size) is printed with both medians, the median and range
# of the ratios of runs side by side, and the floor for a transfer of that size, measured in the
# same run: a round trip plus the size at the floor's bandwidth for times, the lower of the
# bandwidth's and the small-message rate for message rates. The floors are this host's (cache-line
# round trip, memcpy) on one node, ucx_perftest's or the provider's (fi_pingpong, ofi_floor.c)
# between nodes. A summary per benchmark then says where Strata is behind.
# OSU_BENCHMARKS, when set, names the benchmarks to run (e.g. "put_mr collect").
# Between nodes each node's processes are bound to a CPU of their own (BENCH_BIND=0: not), as on
# two machines; a PE's progress thread shares its CPU.
# Ends with one machine-readable line "BENCH_OSU {...}".
# Usage: run_bench_osu.sh BUILDDIR SRCDIR OSU_TARBALL node|ucx|ofi [RUNS]
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
tarball=$3
where=$4
runs=${5:-5}
case $where in node | ucx | ofi) ;; *) echo "run_bench_osu.sh: node, ucx or ofi, not $where" >&2; exit 2 ;; esac
[ -f "$tarball" ] || {
    echo "SKIPPED: no OSU OpenSHMEM benchmarks at $tarball (make: STRATA_BENCHMARKS_DIR=its folder)"
    exit 0
}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-bench-osu.XXXXXX")
chmod 755 "$work" # munged wants every directory above its socket open to all
cluster=$work/cluster
[ "$where" = node ] || BENCH_BIND=${BENCH_BIND:-1}
. "$src/tests/perf/bench_lib.sh"
trap 'bash "$src/tests/cluster/slurm_nodes.sh" stop "$cluster"; rm -rf "$work"' EXIT
bench_lib_init
[ "$have_ompi" = 1 ] || exit 0

# The snapshot's benchmarks, as its BUILD.txt says, with 3 decimals (its default of 2 rounds
# one-node latencies to 10 ns). OSHM_1_3 is what OSU's configure defines for a 1.3 library.
tar -xzf "$tarball" -C "$work" || exit 1
osu=$(echo "$work"/osu-micro-benchmarks-*)
osu_flags=(-O2 -DOSHM_1_3 -DPACKAGE_VERSION='"7.4"' -DFIELD_WIDTH=20 -DFLOAT_PRECISION=3
    -I"$osu/c/util")
# shellcheck disable=SC2054 # the comma belongs to the linker option
strata_cc=(cc -I"$src/include" -L"$build/.libs" -Wl,-rpath,"$build/.libs")
benchmarks=""
for source in "$osu"/c/openshmem/osu_oshm_*.c; do
    name=$(basename "$source" .c)
    [ -z "${OSU_BENCHMARKS:-}" ] || [[ " $OSU_BENCHMARKS " == *" ${name#osu_oshm_} "* ]] || continue
    for lib in strata ompi; do
        compiler=("$ompi_cc") libs=(-lm)
        [ "$lib" = strata ] && compiler=("${strata_cc[@]}") libs=(-lstrata -lm)
        "${compiler[@]}" "${osu_flags[@]}" -o "$work/$name.$lib" "$source" "$osu/c/util/osu_util.c" \
            "$osu/c/util/osu_util_pgas.c" "${libs[@]}" || exit 1
    done
    benchmarks="$benchmarks $name"
done

# osu_figures BENCHMARK: "figure value" lines from a benchmark's table. Latencies are in us,
# message rates per second; osu_oshm_atomics gives each operation's latency, put_overlap the
# pure communication time of each size.
osu_figures() {
    awk -v b="${1#osu_oshm_}" '
        /^#/ || NF == 0 { next }
        b == "atomics" && NF == 3 { sub(/^shmem_/, "", $1); print b "_" $1 "_us", $3; next }
        b == "barrier" && NF == 1 { print "barrier_us", $1; next }
        b == "put_overlap" && NF == 6 { print b "_" $1 "_us", $5; next }
        b ~ /_mr/ && NF == 2 { print b "_" $1 "_per_s", $2; next }
        NF == 2 && $1 ~ /^[0-9]+$/ { print b "_" $1 "_us", $2 }'
}
osu_args() { case $1 in *put* | *get* | *atomics*) echo heap ;; esac; }

# run_osu LIB BENCHMARK RUN: one run's figures, tagged with RUN, appended to LIB.txt.
if [ "$where" = node ]; then
    run_lib() { "run_$1" 2 "${@:2}"; }
else
    require_tools "slurmd slurmctld slurm-client munge" srun slurmd
    cluster_start
    export UCX_TLS=${UCX_TLS:-tcp,self} SHMEM_OFI_PROVIDER=${SHMEM_OFI_PROVIDER:-tcp;ofi_rxm}
    strata_env=()
    [ "$where" = ofi ] && strata_env=(SHMEM_TRANSPORT=ofi)
    # Open MPI's collectives go through its MPI layer, which would reach the other "node" (this
    # same host) by shared memory: TCP only, as between real nodes.
    run_lib() {
        case $1 in
        strata) net_run "${strata_env[@]}" "${@:2}" ;;
        ompi) net_run OMPI_MCA_osc=ucx OMPI_MCA_btl=self,tcp "${@:2}" ;;
        esac
    }
fi
# Open MPI 4.1's osu_oshm_atomics aborts (a glibc fortify check): on one node the job ends, between
# nodes the other PE spins until the time limit. Strata's figures for it stand alone.
run_osu() {
    [ "$1/$2" = ompi/osu_oshm_atomics ] && return
    # shellcheck disable=SC2046 # the benchmark's argument, when it takes one
    run_lib "$1" "$work/$2.$1" $(osu_args "$2") | osu_figures "$2" | sed "s/\$/ $3/" >>"$work/$1.txt"
}

# The floors, as "round_trip_us", "bandwidth_MBps" and "rate_per_s" (small messages) lines.
floors() {
    case $where in
    node)
        "$work/limits" | awk '$1 == "memcpy_1MiB_MBps" {print "bandwidth_MBps", $2}
            $1 == "cacheline_round_trip_ns" {print "round_trip_us", $2 / 1000}'
        ;;
    ucx)
        ucx_floor round_trip_us ucp_am_lat 8 20000 5 | awk '{print $1, 2 * $2}'
        ucx_floor bandwidth_MBps ucp_am_bw 1048576 500 6
        ucx_floor rate_per_s ucp_put_bw 8 100000 9
        ;;
    ofi)
        ofi_pingpong | awk '{print "round_trip_us", 2 * $2}'
        net_run "${ofi_floor_env[@]}" "$work/ofi_floor" | awk '$1 == "put_bw_1MiB_MBps" {print "bandwidth_MBps", $2}
            $1 == "put8_rate_per_s" {print "rate_per_s", $2}'
        ;;
    esac
}
case $where in
node) cc -O2 -o "$work/limits" "$src/tests/perf/limits.c" || exit 1 ;;
ofi) build_ofi_floor || exit 1 ;;
esac

for i in $(seq "$runs"); do
    floors >>"$work/limits.txt"
    for b in $benchmarks; do
        if [ $((i % 2)) = 1 ]; then
            run_osu strata "$b" "$i"
            run_osu ompi "$b" "$i"
        else
            run_osu ompi "$b" "$i"
            run_osu strata "$b" "$i"
        fi
    done
done

round_trip=$(median round_trip_us "$work/limits.txt")
bandwidth=$(median bandwidth_MBps "$work/limits.txt")
rate=$(median rate_per_s "$work/limits.txt")
echo "OSU OpenSHMEM benchmarks, 2 PEs ($where): floors ${round_trip} us round trip," \
    "${bandwidth} MB/s, ${rate:--} small messages/s; medians of $runs alternated runs"
[ -s "$work/failed.txt" ] && sed 's/^/a run that did not finish: /' "$work/failed.txt"
[ ${#node_cpu[@]} -gt 0 ] && echo "bound: each node's processes to a CPU of its own"
printf '%-28s %12s %12s %9s %12s %9s %17s %11s\n' "figure" "Strata" "floor" "/floor" "Open MPI" \
    "/OpenMPI" "runs" "OMPI/floor"
json="\"where\": \"$where\", \"round_trip_us\": $(json_num "$round_trip"), \"bandwidth_MBps\": $(json_num "$bandwidth"), \"rate_per_s\": $(json_num "$rate")"
touch "$work/ompi.txt"
for metric in $(awk '{print $1}' "$work/strata.txt" | awk '!seen[$0]++'); do
    size=$(echo "$metric" | sed -n 's/.*_\([0-9][0-9]*\)_[a-z_]*$/\1/p')
    limit=$(awk -v rt="$round_trip" -v bw="$bandwidth" -v rate="$rate" -v s="${size:-0}" -v m="$metric" 'BEGIN {
        if (m ~ /_per_s$/) { f = s ? bw * 1e6 / s : 0; if (rate != "" && (f == 0 || rate < f)) f = rate }
        else f = rt + s / bw
        if (f) printf "%.4g", f }')
    bench_row "$metric" "$limit" "$work/strata.txt" "$work/ompi.txt" openmpi
done >"$work/table.txt"
cat "$work/table.txt"

# Behind: a time ratio over 1, or a rate ratio under 1, in the median of the paired runs.
echo "Per benchmark: the range of the paired ratios' medians (Strata / Open MPI; times: under 1 is" \
    "ahead, rates: over 1 is ahead), and the figures where Strata is behind"
awk '$6 != "-" { b = $1; sub(/_[0-9]+_[a-z_]*$|_us$/, "", b); if (b ~ /^atomics_/) b = "atomics"
        r = $6 + 0; if (!(b in lo) || r < lo[b]) lo[b] = r; if (!(b in hi) || r > hi[b]) hi[b] = r
        behind = ($1 ~ /_per_s$/) ? r < 1 : r > 1
        if (behind) late[b] = late[b] " " $1 "(" $6 ")"
        if (!(b in seen)) { seen[b]; order[++n] = b } }
    END { for (i = 1; i <= n; i++) { b = order[i]
        printf "  %-16s %.3f-%.3f  behind:%s\n", b, lo[b], hi[b], (b in late) ? late[b] : " none" } }' \
    "$work/table.txt"
echo "BENCH_OSU {$json}"
