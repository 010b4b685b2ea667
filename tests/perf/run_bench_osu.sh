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
# On one node every benchmark runs twice, the two PEs bound each to a CPU of its own (both
# launchers' --bind-to core) and not bound, and the floor of a message size is the best copy
# between two cores of that size (limits.c copy), streamed for a rate, repeated for a time.
# Between nodes each node's processes are bound to a CPU of their own (BENCH_BIND=0: not), as on
# two machines; a PE's progress thread shares its CPU.
# With gnuplot installed (Debian's gnuplot-nox) it draws each benchmark's figures against the
# message size, both libraries and the floor, as BENCH_PLOTS/osu_BENCHMARK.svg (BENCH_PLOTS:
# bench-plots in the build directory unless set).
# Ends with one machine-readable line "BENCH_OSU {...}" per binding.
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

# run_lib LIB PROGRAM [ARG...]: one run of the benchmark under LIB's launcher, bound as $bind
# says on one node.
if [ "$where" = node ]; then
    binds=(core none)
    run_lib() { "run_$1" 2 --bind-to "$bind" "${@:2}"; }
else
    binds=("$([ "$BENCH_BIND" = 1 ] && echo core || echo none)")
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
# run_osu LIB BENCHMARK RUN: one run's figures, tagged with RUN, appended to BIND/LIB.txt.
# Open MPI 4.1's osu_oshm_atomics aborts (a glibc fortify check): on one node the job ends, between
# nodes the other PE spins until the time limit. Strata's figures for it stand alone.
run_osu() {
    [ "$1/$2" = ompi/osu_oshm_atomics ] && return
    # shellcheck disable=SC2046 # the benchmark's argument, when it takes one
    run_lib "$1" "$work/$2.$1" $(osu_args "$2") | osu_figures "$2" | sed "s/\$/ $3/" \
        >>"$work/$bind/$1.txt"
}

# The floors, as "round_trip_us", "bandwidth_MBps" and "rate_per_s" (small messages) lines.
floors() {
    case $where in
    node)
        "$work/limits" | awk '$1 == "memcpy_1MiB_MBps" {print "bandwidth_MBps", $2}
            $1 == "cacheline_round_trip_ns" {print "round_trip_us", $2 / 1000}'
        "$work/limits" copy
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

for bind in "${binds[@]}"; do mkdir -p "$work/$bind" && touch "$work/$bind/ompi.txt"; done
for i in $(seq "$runs"); do
    floors >>"$work/limits.txt"
    for bind in "${binds[@]}"; do
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
done

round_trip=$(median round_trip_us "$work/limits.txt")
bandwidth=$(median bandwidth_MBps "$work/limits.txt")
rate=$(median rate_per_s "$work/limits.txt")
echo "OSU OpenSHMEM benchmarks, 2 PEs ($where): floors ${round_trip} us round trip," \
    "${bandwidth} MB/s, ${rate:--} small messages/s; medians of $runs alternated runs"
[ "$where" = node ] && echo "the floor of a size: a round trip plus the size at the best copy" \
    "of that size between two cores (limits.c copy: repeated); of a rate, that copy's (streamed)"
[ -s "$work/failed.txt" ] && sed 's/^/a run that did not finish: /' "$work/failed.txt"

# floor_of METRIC: a time's floor is a round trip plus the size at the floor's bandwidth, a rate's
# the lower of the bandwidth's and the small-message rate. On one node the bandwidth is the best
# copy of that very size between two cores: blocks streamed through memory for a rate, as the
# message-rate benchmarks stream them, one block repeated for a time, as the others repeat it.
floor_of() {
    local size bw copy=copy_repeated_
    size=$(echo "$1" | sed -n 's/.*_\([0-9][0-9]*\)_[a-z_]*$/\1/p')
    [[ $1 == *_per_s ]] && copy=copy_
    [ -n "$size" ] && bw=$(median "$copy${size}_MBps" "$work/limits.txt")
    awk -v rt="$round_trip" -v bw="${bw:-$bandwidth}" -v rate="$rate" -v s="${size:-0}" -v m="$1" 'BEGIN {
        if (m ~ /_per_s$/) { f = s ? bw * 1e6 / s : 0; if (rate != "" && (f == 0 || rate < f)) f = rate }
        else f = rt + s / bw
        if (f) printf "%.4g", f }'
}

# report BIND: one binding's table, the summary per benchmark, and its JSON line.
report() {
    local dir=$work/$1 metric json
    case $1 in
    core) echo "bound: each PE (each node's processes) on a CPU of its own" ;;
    none) echo "not bound: each PE where the kernel puts it" ;;
    esac
    printf '%-28s %12s %12s %9s %12s %9s %17s %11s\n' "figure" "Strata" "floor" "/floor" \
        "Open MPI" "/OpenMPI" "runs" "OMPI/floor"
    json="\"where\": \"$where\", \"bind\": \"$1\", \"round_trip_us\": $(json_num "$round_trip"), \"bandwidth_MBps\": $(json_num "$bandwidth"), \"rate_per_s\": $(json_num "$rate")"
    for metric in $(awk '{print $1}' "$dir/strata.txt" | awk '!seen[$0]++'); do
        bench_row "$metric" "$(floor_of "$metric")" "$dir/strata.txt" "$dir/ompi.txt" openmpi
    done >"$dir/table.txt"
    cat "$dir/table.txt"
    # Behind: a time ratio over 1, or a rate ratio under 1, in the median of the paired runs;
    # "every run" where each paired run had Strata behind, not only their median.
    echo "Per benchmark: the range of the paired ratios' medians (Strata / Open MPI; times: under" \
        "1 is ahead, rates: over 1 is ahead), and the figures where Strata is behind"
    awk '$6 != "-" { b = $1; sub(/_[0-9]+_[a-z_]*$|_us$/, "", b); if (b ~ /^atomics_/) b = "atomics"
            r = $6 + 0; if (!(b in lo) || r < lo[b]) lo[b] = r; if (!(b in hi) || r > hi[b]) hi[b] = r
            split($7, range, "-"); rate = $1 ~ /_per_s$/
            behind = rate ? r < 1 : r > 1
            always = rate ? range[2] + 0 < 1 : range[1] + 0 > 1
            if (behind) late[b] = late[b] " " $1 "(" $6 (always ? ", every run" : "") ")"
            if (!(b in seen)) { seen[b]; order[++n] = b } }
        END { for (i = 1; i <= n; i++) { b = order[i]
            printf "  %-16s %.3f-%.3f  behind:%s\n", b, lo[b], hi[b], (b in late) ? late[b] : " none" } }' \
        "$dir/table.txt"
    echo "BENCH_OSU {$json}"
}
for bind in "${binds[@]}"; do
    report "$bind"
done

# plot BENCHMARK: its figures against the message size (each binding's Strata and Open MPI, and
# the floor) above how far Strata is ahead (the median of the paired runs' ratios, as a time's
# inverse: above 1 is ahead), drawn by gnuplot as $plots/osu_BENCHMARK.svg.
plot() {
    local b=$1 data=$work/plot-$1 unit="time per operation (us)" rates=0 column=2 dash=1 format=%g
    local how figures=() leads=()
    for bind in "${binds[@]}"; do
        awk -v b="$b" '{ n = $1; if (sub("^" b "_", "", n) && n ~ /^[0-9]+_(us|per_s)$/) {
            sub(/_.*/, "", n); print n, $2, $5, $3, $6 } }' "$work/$bind/table.txt" >"$data.$bind"
    done
    [ -s "$data.${binds[0]}" ] || return 0
    paste -d' ' "${binds[@]/#/$data.}" >"$data"
    if grep -q "^${b}_[0-9]*_per_s " "$work/${binds[0]}/table.txt"; then
        unit="messages per second" rates=1 format=%.0s%c
    fi
    for bind in "${binds[@]}"; do
        how=bound
        [ "$bind" = none ] && how="not bound"
        local strata=$column ompi=$((column + 1)) ratio="(1/\$$((column + 3)))"
        [ "$rates" = 1 ] && ratio=$((column + 3))
        figures+=("'$data' using 1:$strata with linespoints lw 2 dt $dash lc rgb '#1f77b4' title 'Strata, $how'"
            "'$data' using 1:$ompi with linespoints lw 2 dt $dash lc rgb '#d62728' title 'Open MPI, $how'")
        leads+=("'$data' using 1:$ratio with linespoints lw 2 dt $dash lc rgb '#1f77b4' title '$how'")
        column=$((column + 5)) dash=$((dash + 1))
    done
    figures+=("'$data' using 1:4 with lines lw 1 lc rgb '#555555' title 'floor'")
    gnuplot <<EOF
set terminal svg size 800,620 dynamic font "sans,12" background "white"
set output "$plots/osu_$b.svg"
set multiplot layout 2,1 title "osu_oshm_$b, 2 PEs ($where), medians of $runs alternated runs" noenhanced
set logscale x 2
set xtics ("1" 1, "16" 16, "256" 256, "4Ki" 4096, "64Ki" 65536, "1Mi" 1048576)
set key outside right
set grid
set logscale y
set format y "$format"
set ylabel "$unit"
plot $(IFS=,; echo "${figures[*]}")
set logscale y 2
set ytics (0.5, 0.8, 1, 1.25, 2, 4, 8, 16, 32)
set format y "%g"
set xlabel "message size (bytes)"
set ylabel "Strata ahead by (x)"
plot $(IFS=,; echo "${leads[*]}"), 1 with lines lc rgb '#555555' notitle
unset multiplot
EOF
}
plots=${BENCH_PLOTS:-$build/bench-plots}
if command -v gnuplot >/dev/null; then
    mkdir -p "$plots"
    for b in $benchmarks; do
        plot "${b#osu_oshm_}"
    done
    echo "plots: $plots/osu_*.svg"
else
    echo "plots: SKIPPED: gnuplot not installed (apt-get install gnuplot-nox)"
fi
