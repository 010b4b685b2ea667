# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash disable=SC2154
# Helpers shared by the benchmark scripts (sourced, not run). The caller sets build, src and work
# (a scratch directory); bench_lib_init finds Open MPI's OSHMEM.

bench_lib_init() {
    ompi_cc=/usr/bin/oshcc
    ompi_run=/usr/bin/oshrun
    have_ompi=0
    # openmpi-bin alone installs the wrappers without the headers they compile against.
    [ -x "$ompi_cc" ] && [ -x "$ompi_run" ] &&
        echo '#include <shmem.h>' | "$ompi_cc" -E -x c - >/dev/null 2>&1 && have_ompi=1
    [ "$have_ompi" = 1 ] ||
        echo "Open MPI OSHMEM not installed (apt-get install openmpi-bin libopenmpi-dev): Strata figures only"
}

# build_strata SOURCE NAME: NAME.strata in $work, built against this build's library.
build_strata() {
    cc -O2 -I"$src/include" -o "$work/$2.strata" "$1" -L"$build/.libs" \
        -Wl,-rpath,"$build/.libs" -lstrata || exit 1
}

# build_both SOURCE NAME: NAME.strata and, when Open MPI is there, NAME.ompi in $work.
build_both() {
    build_strata "$@"
    if [ "$have_ompi" = 1 ]; then
        "$ompi_cc" -O2 -o "$work/$2.ompi" "$1" 2>/dev/null || have_ompi=0
    fi
}

# Both end a job past bench_timeout seconds (status 124): Strata's never unless set (timeout's 0),
# Open MPI's after 120.
run_strata() { # run_strata NPES PROGRAM [ARG...]
    timeout "${bench_timeout:-0}" "$build/oshrun/oshrun" -np "$1" "${@:2}"
}
# Open MPI's OSHMEM segfaults in its own finalize unless its one-sided layer is UCX.
run_ompi() { # run_ompi NPES PROGRAM [ARG...]
    OMPI_MCA_osc=ucx timeout "${bench_timeout:-120}" "$ompi_run" --allow-run-as-root --oversubscribe \
        -np "$1" "${@:2}" 2>/dev/null
}

# require_tools PACKAGES TOOL...: ends the script with SKIPPED, naming the PACKAGES that bring
# them, unless every TOOL is on the PATH.
require_tools() {
    local packages=$1 tool
    shift
    for tool in "$@"; do
        command -v "$tool" >/dev/null || {
            echo "SKIPPED: $tool not installed ($packages)"
            exit 0
        }
    done
}

# cluster_start: two Slurm nodes on this host in $cluster (tests/cluster/slurm_nodes.sh), with
# SLURM_CONF exported for srun.
cluster_start() {
    bash "$src/tests/cluster/slurm_nodes.sh" start "$cluster" || exit 1
    export SLURM_CONF=$cluster/slurm.conf
}

# Two PEs on two Slurm nodes (cluster_start). node_cpu, set when BENCH_BIND=1, is a command
# prefix that binds each node's processes to a CPU of the node's own, as on two machines: unbound,
# the scheduler moves both nodes' processes over the same cores, and whole runs of either library
# come out fast or slow by where it put them.
node_cpu=()
# The node's number from its name (n1, n2): a step on one node is node 0 of its own.
# shellcheck disable=SC2016 # expanded by the shell on the node
[ "${BENCH_BIND:-0}" = 1 ] &&
    node_cpu=(bash -c 'exec taskset -c $(((${SLURMD_NODENAME#n} - 1) % $(nproc))) "$@"' _)

# net_run [VAR=VALUE...] PROGRAM [ARG...]: one PE on each node, its standard output (not its
# errors). A run that fails or outlasts its limit is listed in $work/failed.txt, printed above the
# table: the figures it did not print are missing from the medians.
net_run() {
    local vars=()
    while [ $# -gt 1 ] && [[ $1 == *=* ]]; do
        vars+=("$1")
        shift
    done
    timeout 300 env "${vars[@]}" srun --mpi=pmix -N 2 -n 2 "${node_cpu[@]}" "$@" 2>/dev/null
    local status=$?
    [ "$status" = 0 ] || echo "${1##*/}: exit status $status (124: past the 300 s limit)" >>"$work/failed.txt"
}

# Only the "name value" lines of the library's benchmarks (not a transport's own messages).
figure_lines() { grep -E '^[A-Za-z][A-Za-z0-9_]* [-0-9.e+]+$'; }

# ucx_floor NAME TEST SIZE ITERS FIELD: "NAME value", ucx_perftest's final figure (FIELD of its
# "Final:" line: 5 latency, 6 bandwidth, 9 message rate), server on n1, client on n2; ITERS
# divided as the benchmarks' are (BENCH_ITERATIONS_DIVISOR): under load both its sides poll, and
# bound beside a busy process each round trip may wait for a time slice on each side.
perftest_port=$((20000 + RANDOM % 20000))
ucx_floor() {
    local name=$1 test=$2 size=$3 iters=$(($4 / ${BENCH_ITERATIONS_DIVISOR:-1})) field=$5
    perftest_port=$((perftest_port + 1))
    srun -N 1 -w n1 "${node_cpu[@]}" timeout 60 ucx_perftest -p "$perftest_port" >/dev/null 2>&1 &
    local server=$!
    local value=""
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        sleep 0.3
        value=$(srun -N 1 -w n2 "${node_cpu[@]}" timeout 60 ucx_perftest 127.0.0.1 -p "$perftest_port" -t "$test" \
            -s "$size" -n "$iters" 2>/dev/null | awk -v f="$field" '/^Final:/ {print $f}')
        [ -n "$value" ] && break
    done
    wait "$server" 2>/dev/null
    [ -n "$value" ] && echo "$name $value"
}

# The libfabric provider as Strata sets it up (ofi.c sets these unless the user does), for the
# floors measured beside it.
ofi_floor_env=("FI_TCP_PREFETCH_RBUF_SIZE=${FI_TCP_PREFETCH_RBUF_SIZE:-0}"
    "FI_OFI_RXM_MSG_RX_SIZE=${FI_OFI_RXM_MSG_RX_SIZE:-256}")

# ofi_pingpong: "msg_one_way_us value", fi_pingpong's one-way time over SHMEM_OFI_PROVIDER (its
# "usec/xfer"), server on n1.
pingpong_port=$((30000 + RANDOM % 20000))
ofi_pingpong() {
    pingpong_port=$((pingpong_port + 1))
    srun -N 1 -w n1 env "${ofi_floor_env[@]}" timeout 60 fi_pingpong -p "$SHMEM_OFI_PROVIDER" -e rdm -S 8 \
        -I 10000 -B "$pingpong_port" >/dev/null 2>&1 &
    local server=$! value=""
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        sleep 0.3
        value=$(srun -N 1 -w n2 env "${ofi_floor_env[@]}" timeout 60 fi_pingpong -p "$SHMEM_OFI_PROVIDER" -e rdm \
            -S 8 -I 10000 -P "$pingpong_port" 127.0.0.1 2>/dev/null | awk '$1 == "8" {print $(NF - 1)}')
        [ -n "$value" ] && break
    done
    wait "$server" 2>/dev/null
    [ -n "$value" ] && echo "msg_one_way_us $value"
}

# build_ofi_floor: ofi_floor in $work, the provider's one-sided floors.
build_ofi_floor() {
    # shellcheck disable=SC2046 # pkg-config's flags are words
    cc -O2 -o "$work/ofi_floor" "$src/tests/perf/ofi_floor.c" $(pkg-config --cflags --libs libfabric pmix)
}

# launch_ms NAME COMMAND...: "NAME milliseconds", the wall time of the command, launcher included.
launch_ms() {
    local name=$1 t0 t1
    shift
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    echo "$name $(((t1 - t0) / 1000000))"
}

# Another job on the same cores: start_load runs load_processes busy processes, one per core
# unless BENCH_LOAD_PROCS says how many (fewer than the cores: each PE may keep a core of its own,
# which decides how a wait should give its core away), stop_load ends them. With BENCH_BIND=1
# the i-th is bound to CPU i-1, as the PEs of the i-th node are (run_bench_network.sh).
load_processes=${BENCH_LOAD_PROCS:-$(nproc)}
load_pids=()
start_load() {
    local i bind=()
    for i in $(seq "$load_processes"); do
        [ "${BENCH_BIND:-0}" = 1 ] && bind=(taskset -c $(((i - 1) % $(nproc))))
        "${bind[@]}" sh -c 'while :; do :; done' &
        load_pids+=($!)
    done
}
stop_load() {
    [ ${#load_pids[@]} -gt 0 ] && kill "${load_pids[@]}" 2>/dev/null
    wait 2>/dev/null
    load_pids=()
}

median() { # median METRIC FILE
    grep "^$1 " "$2" 2>/dev/null | awk '{print $2}' | sort -g |
        awk '{v[NR]=$1} END {if (NR) print v[int((NR+1)/2)]}'
}

ratio() { # ratio A B: A / B with 3 decimals, or - when either is missing
    [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}' || echo "-"
}

# paired_ratios METRIC FILE_A FILE_B: "median min max count" of A / B over the runs both files hold,
# each line "METRIC VALUE RUN": two runs back to back share the machine's mood (minutes long on a
# shared VM), which a ratio of the two files' medians, taken from different runs, would not.
paired_ratios() {
    awk -v m="$1" 'FNR == 1 {f++} $1 == m && NF >= 3 {v[f, $3] = $2; runs[$3]}
        END {for (r in runs) if ((1, r) in v && (2, r) in v && v[2, r] != 0) print v[1, r] / v[2, r]}' \
        "$2" "$3" | sort -g |
        awk '{v[NR] = $1} END {if (NR) printf "%.3f %.3f %.3f %d\n", v[int((NR + 1) / 2)], v[1], v[NR], NR}'
}

json_num() { [ -z "$1" ] || [ "$1" = - ] && echo null || echo "$1"; }

# bench_row METRIC LIMIT OURS PEERS PEER: the table's row for METRIC, from the runs in files OURS
# (Strata's) and PEERS (the other library's, named PEER in the JSON): both medians, Strata's to
# the floor LIMIT, the median and range of the paired runs' ratios, and the peer's to the floor.
# Appends the row's JSON to $json.
bench_row() {
    local metric=$1 limit=$2 ours theirs to_limit to_peer lowest highest pairs spread peer_to_limit
    ours=$(median "$metric" "$3")
    theirs=$(median "$metric" "$4")
    to_limit=$(ratio "$ours" "$limit")
    read -r to_peer lowest highest pairs <<<"$(paired_ratios "$metric" "$3" "$4")"
    spread=${lowest:+$lowest-$highest ($pairs)}
    peer_to_limit=$(ratio "$theirs" "$limit")
    printf '%-28s %12s %12s %9s %12s %9s %17s %11s\n' "$metric" "$ours" "${limit:--}" "$to_limit" \
        "${theirs:--}" "${to_peer:--}" "${spread:--}" "$peer_to_limit"
    json="$json, \"$metric\": {\"strata\": $ours, \"floor\": $(json_num "$limit"), \"to_floor\": $(json_num "$to_limit"), \"$5\": $(json_num "$theirs"), \"to_$5\": $(json_num "$to_peer"), \"to_${5}_lowest\": $(json_num "$lowest"), \"to_${5}_highest\": $(json_num "$highest"), \"paired_runs\": ${pairs:-0}, \"${5}_to_floor\": $(json_num "$peer_to_limit")}"
}

# limit_row METRIC LIMIT FILE: the row of a Strata-only table: the median of METRIC in FILE, the
# machine's LIMIT and their ratio. Appends the row's JSON to $json.
limit_row() {
    local ours to_limit
    ours=$(median "$1" "$3")
    to_limit=$(ratio "$ours" "$2")
    printf '%-36s %12s %12s %9s\n' "$1" "$ours" "${2:--}" "$to_limit"
    json="$json${json:+, }\"$1\": {\"strata\": $ours, \"limit\": $(json_num "$2"), \"to_limit\": $(json_num "$to_limit")}"
}

# The RMA, atomic and collective latency benchmarks, built both ways; their names in $benches.
build_latency_benches() {
    benches="rma_latency amo_latency coll_latency"
    local b
    for b in $benches; do
        build_both "$src/tests/perf/$b.c" "$b"
    done
}
