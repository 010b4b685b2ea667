#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Many PEs on one host, with scale_job.c (start-up, collectives, an atomic, a put and a memory
# space, each checked on every PE) and SHMEM_SYMMETRIC_SIZE=16M. Start-up is the longest
# shmem_init of any PE, and the most CPU time one took (what it costs a PE with a core of its own).
#   check  COUNT:RUNS...  (default 512:20 1024:2) Strata only: each run must end with status 0,
#          no report of a PE's death, no process and no shared-memory file left. Prints each
#          run, the medians, and a last line "N passed, N failed"; fails if any run did.
#   curve  RUNS COUNT...  (default 3 1 2 4 ... 1024) Strata and, when installed, Open MPI's
#          OSHMEM, alternately: the median job wall time, start-up (the longest shmem_init) and
#          peak resident memory per PE, as a table and a last line "SCALE {...}". A run that
#          fails or passes the time limit (SCALE_TIMEOUT seconds, 900) counts as missing.
# Usage: scale.sh BUILDDIR SRCDIR check|curve [ARGS...]
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
mode=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$src/tests/perf/bench_lib.sh"
export SHMEM_SYMMETRIC_SIZE=16M
bench_timeout=${SCALE_TIMEOUT:-900}

# run_job LIBRARY NPES: runs scale_job once; "wall_ms N" and the program's lines in $work/out,
# Strata's errors in $work/err; returns the job's status (124: past the limit).
run_job() {
    local t0 t1 rc
    t0=$(date +%s%N)
    "run_$1" "$2" "$work/scale_job.$1" >"$work/out" 2>"$work/err"
    rc=$?
    t1=$(date +%s%N)
    echo "wall_ms $(((t1 - t0) / 1000000))" >>"$work/out"
    return $rc
}

# leftovers: what a finished job left on this host (processes of the program, its files).
leftovers() {
    pgrep -f "$work/scale_job" | sed 's/^/process /'
    find /dev/shm -mindepth 1 -maxdepth 1 -user "$(id -u)" -newer "$work/started" 2>/dev/null | sed 's/^/file /'
}

value() { awk -v k="$1" '$1 == k {print $2}' "$2"; }

check() {
    local passed=0 failed=0 spec n runs i rc left
    [ $# -eq 0 ] && set -- 512:20 1024:2
    for spec in "$@"; do
        n=${spec%%:*} runs=${spec#*:}
        for i in $(seq "$runs"); do
            touch "$work/started"
            run_job strata "$n"
            rc=$?
            left=$(leftovers)
            if [ "$rc" = 0 ] && [ -n "$(value init_ms "$work/out")" ] && [ -z "$left" ]; then
                passed=$((passed + 1))
                printf 'PASS %5d PEs run %2d: wall %6.1f s, start-up %6.1f s (CPU %4.2f s), work %5.2f s, peak RSS %s KiB (mean %s)\n' \
                    "$n" "$i" "$(value wall_ms "$work/out")e-3" "$(value init_ms "$work/out")e-3" \
                    "$(value init_cpu_ms "$work/out")e-3" "$(value work_ms "$work/out")e-3" \
                    "$(value peak_rss_KiB_max "$work/out")" "$(value peak_rss_KiB_mean "$work/out")"
                awk -v n="$n" '{print $1 "_" n, $2}' "$work/out" >>"$work/strata.txt"
            else
                failed=$((failed + 1))
                echo "FAIL $n PEs run $i: status $rc"
                tail -5 "$work/err"
                [ -n "$left" ] && echo "left behind:" && echo "$left"
            fi
        done
    done
    echo "Medians; times in ms, memory in KiB per PE"
    printf '%5s %9s %9s %9s %9s %9s %9s\n' PEs wall start-up "its CPU" work "RSS max" "RSS mean"
    for spec in "$@"; do
        n=${spec%%:*}
        printf '%5d' "$n"
        for m in wall_ms init_ms init_cpu_ms work_ms peak_rss_KiB_max peak_rss_KiB_mean; do
            printf ' %9s' "$(median "${m}_$n" "$work/strata.txt")"
        done
        echo
    done
    echo "$passed passed, $failed failed"
    [ "$failed" = 0 ]
}

curve() {
    local runs=${1:-3} n i f json="" v
    shift $(($# > 0 ? 1 : 0))
    [ $# -eq 0 ] && set -- 1 2 4 8 16 32 64 128 256 512 1024
    for n in "$@"; do
        for i in $(seq "$runs"); do
            for f in strata ompi; do
                [ "$f" = ompi ] && [ "$have_ompi" = 0 ] && continue
                run_job "$f" "$n" && [ -n "$(value init_ms "$work/out")" ] &&
                    awk -v n="$n" '{print $1 "_" n, $2}' "$work/out" >>"$work/$f.txt"
            done
        done
    done
    echo "Medians of $runs runs; times in ms, memory in KiB per PE; - : no run ended well"
    printf '%5s %9s %9s %9s %9s %9s | %9s %9s %9s %9s %9s\n' PEs wall start-up "its CPU" \
        "RSS max" "RSS mean" "OMPI wall" start-up "its CPU" "RSS max" "RSS mean"
    for n in "$@"; do
        local row=()
        for f in strata ompi; do
            for m in wall_ms init_ms init_cpu_ms peak_rss_KiB_max peak_rss_KiB_mean; do
                v=$(median "${m}_$n" "$work/$f.txt" 2>/dev/null)
                row+=("${v:--}")
                json="$json${json:+, }\"${f}_${m}_$n\": $(json_num "$v")"
            done
        done
        printf '%5s %9s %9s %9s %9s %9s | %9s %9s %9s %9s %9s\n' "$n" "${row[@]}"
    done
    echo "SCALE {$json}"
}

bench_lib_init >/dev/null
[ "$mode" = check ] && have_ompi=0
build_both "$src/tests/perf/scale_job.c" scale_job
touch "$work/strata.txt" "$work/ompi.txt"
case $mode in
check) check "$@" ;;
curve) curve "$@" ;;
*)
    echo "usage: scale.sh BUILDDIR SRCDIR check|curve [ARGS...]" >&2
    exit 2
    ;;
esac
