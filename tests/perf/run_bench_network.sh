#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The network path: the RMA, atomic and collective benchmarks on two PEs, one on each of two Slurm
# nodes (a throwaway cluster on this host, tests/cluster/slurm_nodes.sh), built with Strata and
# with Open MPI's OSHMEM and run alternately under `srun --mpi=pmix`, UCX between the nodes over
# the transports in UCX_TLS (tcp,self unless set). Each figure is printed beside UCX's own floor
# between the same two nodes, measured in the same run with ucx_perftest (both sides active):
# the active-message round trip for times, 1 MiB active-message bandwidth for bandwidths.
# With "loaded", everything runs while another job's processes compute on every core (one busy
# loop per core, or BENCH_LOAD_PROCS of them), which is what a waiting PE then competes with.
# With BENCH_BIND=1 the PEs of node i and its busy process are bound to CPU i (n1: CPU 0), as on
# real nodes, whose cores no other node's PE can take: unbound, the kernel may put the two
# nodes' PEs on one core, which real nodes never share, and a sleeping PE is woken on the core
# of the peer whose message woke it.
# Ends with one machine-readable line "BENCH {...}" ("BENCH_NETWORK_LOADED {...}" when loaded).
# Usage: run_bench_network.sh BUILDDIR SRCDIR [RUNS] [loaded]
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
runs=${3:-5}
loaded=${4:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-bench-net.XXXXXX")
# munged wants every directory above its socket open to all.
chmod 755 "$work"
cluster=$work/cluster
export UCX_TLS=${UCX_TLS:-tcp,self}
. "$src/tests/perf/bench_lib.sh"
trap 'stop_load; bash "$src/tests/cluster/slurm_nodes.sh" stop "$cluster"; rm -rf "$work"' EXIT
bench_lib_init

require_tools "slurmd slurmctld slurm-client munge ucx-utils" srun slurmd ucx_perftest
cluster_start
build_latency_benches

run_net() { net_run "$@" | figure_lines; }
# Open MPI's OSHMEM segfaults in its own finalize unless its one-sided layer is UCX. Its
# collectives go through its MPI layer, which would reach the other "node" (this same host) by
# shared memory: TCP only, as between real nodes.
run_net_ompi() { run_net OMPI_MCA_osc=ucx OMPI_MCA_btl=self,tcp "$1"; }

if [ "$loaded" = loaded ]; then
    # Round trips take about 100 us there: a tenth of the iterations keeps each run in its limit.
    export BENCH_ITERATIONS_DIVISOR=${BENCH_ITERATIONS_DIVISOR:-10}
    start_load
    echo "loaded: $load_processes busy processes of another job on the $(nproc) cores"
fi
[ ${#node_cpu[@]} -gt 0 ] && echo "bound: each node's PE and busy process to the node's CPU"

for i in $(seq "$runs"); do
    ucx_floor am_lat_us ucp_am_lat 8 20000 5 >>"$work/limits.txt"
    ucx_floor am_bw_1MiB_MBps ucp_am_bw 1048576 500 6 >>"$work/limits.txt"
done
# Alternate the two implementations so that machine noise hits both alike, each going first in
# every other run (the second of two runs back to back tends to be the slower, whichever it is);
# each line is tagged with its run, so that the two runs of a pair can be compared.
run_strata_tagged() { run_net "$work/$1.strata" | sed "s/\$/ $2/" >>"$work/strata.txt"; }
run_ompi_tagged() {
    [ "$have_ompi" = 1 ] && run_net_ompi "$work/$1.ompi" | sed "s/\$/ $2/" >>"$work/ompi.txt"
}
for b in $benches; do
    for i in $(seq "$runs"); do
        if [ $((i % 2)) = 1 ]; then
            run_strata_tagged "$b" "$i"
            run_ompi_tagged "$b" "$i"
        else
            run_ompi_tagged "$b" "$i"
            run_strata_tagged "$b" "$i"
        fi
    done
done

stop_load
bw_limit=$(median am_bw_1MiB_MBps "$work/limits.txt")
one_way_us=$(median am_lat_us "$work/limits.txt")
round_trip_us=$(awk -v t="$one_way_us" 'BEGIN {if (t != "") printf "%.3f", 2 * t}')
round_trip_ns=$(awk -v t="$one_way_us" 'BEGIN {if (t != "") printf "%.1f", 2000 * t}')
echo "UCX between the nodes (UCX_TLS=$UCX_TLS): active-message round trip ${round_trip_us} us," \
    "1 MiB bandwidth ${bw_limit} MB/s"
[ -s "$work/failed.txt" ] && sed 's/^/a run that did not finish: /' "$work/failed.txt"
echo "Strata and Open MPI: medians of $runs runs; /OpenMPI: the median of the runs' ratios, each" \
    "Strata's run to the Open MPI run beside it, then their range and (count)"
printf '%-28s %12s %12s %9s %12s %9s %17s %11s\n' "figure" "Strata" "UCX floor" "/floor" \
    "Open MPI" "/OpenMPI" "runs" "OMPI/floor"
json="\"ucx_tls\": \"$UCX_TLS\", \"am_round_trip_us\": $(json_num "$round_trip_us"), \"am_bw_1MiB_MBps\": $(json_num "$bw_limit")"
for metric in $(awk '{print $1}' "$work/strata.txt" | awk '!seen[$0]++'); do
    case "$metric" in
    *_MBps) limit=$bw_limit ;;
    *_ns) limit=$round_trip_ns ;;
    *_us) limit=$round_trip_us ;;
    *) limit="" ;;
    esac
    bench_row "$metric" "$limit" "$work/strata.txt" "$work/ompi.txt" openmpi
done
[ "$loaded" = loaded ] && echo "BENCH_NETWORK_LOADED {$json}" || echo "BENCH {$json}"
