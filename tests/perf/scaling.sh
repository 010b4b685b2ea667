#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# How start-up time and memory per PE grow with the number of PEs: for each count, the median
# wall time of oshrun running a hello world, and the resident memory of the largest PE
# (footprint.c: once up, and once it has reached every PE) with SHMEM_SYMMETRIC_SIZE=4G, for
# Strata and, when installed, Open MPI's OSHMEM, run alternately; and, Strata only, what a memory
# space's whole life costs (space_cycle.c). Ends with one machine-readable line "SCALING {...}".
# With SCALING_NODES=2 the PEs are spread over two Slurm nodes started on this machine
# (tests/cluster/slurm_nodes.sh) by `srun --mpi=pmix`, UCX over TCP between them, and start-up is
# srun's wall time.
# Usage: scaling.sh BUILDDIR SRCDIR [RUNS] [PE COUNTS...]
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
runs=${3:-5}
shift $(($# < 3 ? $# : 3))
nodes=${SCALING_NODES:-1}
default_counts="1 2 4 8 16"
[ "$nodes" -gt 1 ] && default_counts="2 4 8 16"
counts=${*:-$default_counts}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-scaling.XXXXXX")
# munged wants every directory above its socket open to all.
chmod 755 "$work"
trap '[ "$nodes" -gt 1 ] && bash "$src/tests/cluster/slurm_nodes.sh" stop "$work/cluster"; rm -rf "$work"' EXIT
. "$src/tests/perf/bench_lib.sh"
bench_lib_init

if [ "$nodes" -gt 1 ]; then
    command -v srun >/dev/null || {
        echo "SKIPPED: srun not installed (slurmd slurmctld slurm-client munge)"
        exit 0
    }
    bash "$src/tests/cluster/slurm_nodes.sh" start "$work/cluster" || exit 1
    export SLURM_CONF=$work/cluster/slurm.conf UCX_TLS=${UCX_TLS:-tcp,self}
    # More PEs than the nodes have CPUs: --overcommit.
    run_strata() { timeout 300 srun --mpi=pmix --overcommit -N "$nodes" -n "$1" "$2"; }
    # As in run_bench_network.sh: its MPI layer kept on TCP, its one-sided layer UCX.
    run_ompi() {
        OMPI_MCA_osc=ucx OMPI_MCA_btl=self,tcp timeout 300 srun --mpi=pmix --overcommit -N "$nodes" -n "$1" \
            "$2" 2>/dev/null
    }
fi

build_both "$src/examples/hello.c" hello
build_both "$src/tests/perf/footprint.c" footprint
build_strata "$src/tests/perf/space_cycle.c" space_cycle
export SHMEM_SYMMETRIC_SIZE=4G
per_count() { awk -v n="$1" '{print $1 "_" n, $2}'; } # names each figure after the PE count

for n in $counts; do
    for _ in $(seq "$runs"); do
        launch_ms "launch_$n" run_strata "$n" "$work/hello.strata" >>"$work/strata.txt"
        [ "$have_ompi" = 1 ] && launch_ms "launch_$n" run_ompi "$n" "$work/hello.ompi" >>"$work/ompi.txt"
    done
    run_strata "$n" "$work/footprint.strata" | per_count "$n" >>"$work/strata.txt"
    [ "$have_ompi" = 1 ] && run_ompi "$n" "$work/footprint.ompi" | per_count "$n" >>"$work/ompi.txt"
    # The space's life at its 10th cycle: creation, allocation, a put, a sync, destruction.
    [ "$n" -gt 1 ] && run_strata "$n" "$work/space_cycle.strata" |
        awk -v n="$n" '/_at_10_ms/ {print "space_cycle_ms_" n, $2}' >>"$work/strata.txt"
done

echo "PEs over $nodes node(s); memory in KiB per PE (the most of any PE); anon+: private memory once every PE was reached"
printf '%5s %10s %9s %9s %9s %10s %12s %9s %9s %9s\n' "PEs" "launch ms" "RSS" "anon" "anon+" \
    "space ms" "OMPI launch" "OMPI RSS" "OMPI anon" "OMPI anon+"
json="\"nodes\": $nodes"
for n in $counts; do
    row=()
    for f in strata ompi; do
        for m in launch rss_per_pe_KiB rss_anon_per_pe_KiB rss_anon_all_peers_per_pe_KiB \
            space_cycle_ms; do
            [ "$f" = ompi ] && [ "$m" = space_cycle_ms ] && continue
            v=$(median "${m}_$n" "$work/$f.txt")
            row+=("${v:--}")
            json="$json, \"${f}_${m}_$n\": $(json_num "$v")"
        done
    done
    printf '%5s %10s %9s %9s %9s %10s %12s %9s %9s %9s\n' "$n" "${row[@]}"
done
echo "SCALING {$json}"
