#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# oshrun's own tests: job start, failure handling (status, message, survivors killed), signals,
# bad input, and that nothing is left behind (process, shared-memory file, PMIx directory).
# Usage: test_launcher.sh OSHRUN CLIENT
#   CLIENT is tests/launcher/behave (its modes are listed at its top), a trailing marker
#   argument ignored.
set -u
. "$(dirname "$0")/check.sh"
oshrun=$1
client=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/test_launcher.XXXXXX")
out=$work/out
# oshrun puts its PMIx directory under TMPDIR: a private one shows exactly what a run left.
export TMPDIR=$work/tmp
mkdir "$TMPDIR"
marker="launcher-test-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

strays() { pgrep -f -- "$marker" | wc -l; }

# How many PEs the oshrun started by process $1 (its timeout wrapper) runs now.
pes_up() {
    local launcher
    launcher=$(pgrep -P "$1" -x oshrun) || { echo 0; return; }
    pgrep -P "$launcher" -x "$(basename "$client")" | wc -l
}

# Waits up to 5 s until $2 PEs of the job of process $1 are up.
wait_pes() {
    for _ in $(seq 50); do
        [ "$(pes_up "$1")" -ge "$2" ] && return
        sleep 0.1
    done
}

# The job shared-memory files now in /dev/shm ("strata-<oshrun pid>-<stamp>.<rank>.<name>").
# shellcheck disable=SC2010 # names are plain
strata_shm() { ls /dev/shm | grep '^strata-[0-9]*-[0-9a-f]*\.'; }

# Files that were not there before and whose oshrun is gone: left behind by a finished job. A
# job running beside this script keeps its oshrun alive, so its files do not count.
orphan_shm() {
    local name pid
    comm -13 <(echo "$shm_before") <(strata_shm) | while read -r name; do
        pid=${name#strata-}
        pid=${pid%%-*}
        kill -0 "$pid" 2>/dev/null || echo "$name"
    done
}

# What a finished run may have left: processes, its PMIx directory, its shared-memory files
# (the client prints its namespace; without it, the files that orphan_shm finds).
leftovers() {
    local why="" n nspace
    sleep 0.1 # a SIGKILLed process is reaped by init, not at once
    n=$(strays)
    [ "$n" = 0 ] || { why="$why; $n stray processes"; pkill -KILL -f -- "$marker"; }
    n=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 | wc -l)
    [ "$n" = 0 ] || { why="$why; $n entries left in TMPDIR"; rm -rf "${TMPDIR:?}"/*; }
    nspace=$(sed -n 's/^nspace \(strata-[0-9a-f-]*\)$/\1/p' "$out" | head -n 1)
    if [ -n "$nspace" ]; then
        n=$(strata_shm | grep -c -F "$nspace.")
    else
        n=$(orphan_shm | wc -l)
    fi
    [ "$n" = 0 ] || why="$why; $n shared-memory files left"
    echo "${why#; }"
}

# expect NAME STATUS TEXT NP ARGS...: runs a job; checks its status, that TEXT (an extended
# regular expression) is in its output, that it ended quickly (survivors killed, not waited
# for: within expect_quick seconds, 8 unless set; a job of many PEs takes longer only to start
# on 2 cores), and that nothing is left.
expect() {
    local name=$1 status=$2 text=$3 np=$4 quick=${expect_quick:-8}
    shift 4
    shm_before=$(strata_shm)
    local start=$SECONDS
    timeout -k 3 $((quick + 4)) "$oshrun" -np "$np" "$client" "$@" "$marker" >"$out" 2>&1
    local rc=$? took=$((SECONDS - start)) why=""
    [ "$rc" = "$status" ] || why="status $rc, expected $status"
    [ -z "$text" ] || grep -q -E -- "$text" "$out" || why="$why; no '$text' in output"
    [ "$took" -lt "$quick" ] || why="$why; took $took s: survivors not killed"
    why="${why#; }"
    local left
    left=$(leftovers)
    [ -z "$left" ] || why="${why:+$why; }$left"
    check "$name" "$([ -z "$why" ]; echo $?)" "$why"
}

expect "ok on 1 PE" 0 "(rank|PE) 0 of 1 ok" 1 ok
expect "ok on 2 PEs" 0 "(rank|PE) 1 of 2 ok" 2 ok
expect "ok on 4 PEs" 0 "(rank|PE) 3 of 4 ok" 4 ok
# A PE that finalized, whose finalize oshrun's PMIx server had not yet seen when it exited (the
# client stops waiting for the answer after 2 s), is no PE that exited without finalizing.
SHMEM_TEST_OSHRUN_SLOW_FINALIZE=1 expect "a finalize the server sees late is a finalize" 0 \
    "(rank|PE) 0 of 1 ok" 1 ok
expect "PE 1 segfaults" 139 "^oshrun: PE 1 killed by SIGSEGV$" 4 segv 1
expect "PE 2 exits with 3" 3 "^oshrun: PE 2 exited with status 3$" 4 exit 2 3
expect "PE 0 exits with 5 on 2 PEs" 5 "^oshrun: PE 0 exited with status 5$" 2 exit 0 5
expect "PE 1 aborts with 7" 7 "^oshrun: PE 1 aborted the job with status 7$" 4 abort 1 7
# shmem_global_exit(0): every PE ends with 0 by itself, none gets past the barrier, and nobody
# reports an abort; where a PE computes without a progress thread (every PE mapped: no
# transport), it is aborted with 0 after 3 s.
expect "shmem_global_exit(0) while the others wait" 0 "" 4 abort_wait 1 0
absent "shmem_global_exit(0) while the others wait: nothing reported" "aborted|got past"
SHMEM_NODE_DIRECT=0 expect "shmem_global_exit(0) while the others compute, through UCX" 0 "" 4 \
    abort 1 0
absent "shmem_global_exit(0) while the others compute, through UCX: nothing reported" \
    "aborted|got past"
expect "shmem_global_exit(0) while the others compute, no transport" 0 \
    "^oshrun: PE 1 aborted the job with status 0$" 2 abort 1 0
# Every PE calls shmem_global_exit(0) at once: each one's request is the others' answer, and none
# waits on a PE that may have left (one waiting for a fetch's reply from a caller that had all
# its answers hung the job, 2 runs in 5 through UCX), so several runs.
expect "shmem_global_exit(0) on every PE at once" 0 "" 4 abort_all 0
absent "shmem_global_exit(0) on every PE at once: nothing reported" "aborted|got past"
for run in 1 2 3; do
    SHMEM_NODE_DIRECT=0 expect "shmem_global_exit(0) on every PE at once, through UCX (run $run)" \
        0 "" 4 abort_all 0
    absent "shmem_global_exit(0) on every PE at once, through UCX (run $run): nothing reported" \
        "aborted|got past"
done
expect "PE 1 leaves a shared-memory file and dies" 139 "PE 1 killed by SIGSEGV" 2 shm 1
SHMEM_OSHRUN_TIMEOUT=1 expect "SHMEM_OSHRUN_TIMEOUT=1" 124 "^oshrun: timeout after 1 s$" 2 sleep
# oshrun holds a PMIx connection per PE: it takes the hard limit of open files for itself, gives
# its PEs back the soft one and none of those connections (PE 99 would inherit 99 of them). A
# hard limit too low for the job is said before anything starts.
oshrun_real=$oshrun
files_limited() { # files_limited LIMIT-OPTION LIMIT: oshrun under that limit, through a script
    printf '#!/bin/sh\nulimit %s %s || exit 99\nexec "%s" "$@"\n' "$1" "$2" "$oshrun_real" \
        >"$work/limited"
    chmod +x "$work/limited"
}
files_limited -Sn 64
oshrun=$work/limited
expect_quick=90 expect "100 PEs under a soft limit of 64 open files" 0 "(rank|PE) 99 of 100 ok" \
    100 ok
files_limited -n 40
expect "a hard limit of 40 open files for 10 PEs" 1 \
    "^oshrun: 10 PEs need 74 open files here, and the limit is 40: raise it \(ulimit -n\) or run fewer PEs$" \
    10 ok
oshrun=$oshrun_real
# An OpenSHMEM 1.0 program starts with start_pes and returns from main: the library finalizes it.
expect "start_pes program returning from main" 0 "(rank|PE) 1 of 2 ok" 2 legacy
# Returning from main without shmem_finalize would leave the others waiting in theirs.
expect "PE 1 returns without shmem_finalize" 1 \
    "^oshrun: PE 1 exited without calling shmem_finalize \(status 0\)$" 2 return 1

# An engine that reports a PE's end as a PMIx event (PRRTE does; oshrun, Slurm 22.05 and Open MPI
# 4.1 send none): a death makes the PE that hears of it leave at once, naming the dead PE; a
# normal end with status 0 does not. The event is delivered to PE 1 by PE 1 itself.
expect "a reported death: the PE that hears of it names the dead PE and leaves" 1 \
    "PE 2 died \(killed by a signal, status 11\); leaving the job$" 3 notify_death 1
expect "a reported end with status 0 is no death" 0 "(rank|PE) 1 of 3 ok" 3 notify_end 1

# A program that never talks to the PMIx server has nothing to finalize.
timeout -k 3 12 "$oshrun" -np 2 /bin/sh -c 'exit 0' "$marker" >"$out" 2>&1
rc=$?
left=$(leftovers)
[ "$rc" = 0 ] && [ ! -s "$out" ] && [ -z "$left" ]
check "a program without PMIx exits with 0" $? "status $rc; $left"

# PE 1 dies while the others wait for it: in a process-manager fence they abort because they
# lost it, and oshrun must name PE 1 and its signal, not one of them, every time. lost_segv makes
# the worst order certain (the others' finalize fence loses PE 1 0.1 s before it dies);
# preinit_segv dies before PE 1 ever connected, while the others wait in start-up's fence;
# space_segv dies while they wait in space creation's exchange.
cause_named() { # cause_named RUNS NP MODE
    local named=0 rc seen=""
    for _ in $(seq "$1"); do
        timeout -k 3 12 "$oshrun" -np "$2" "$client" "$3" 1 "$marker" >"$out" 2>&1
        rc=$?
        if [ "$rc" = 139 ] && grep -q "^oshrun: PE 1 killed by SIGSEGV$" "$out"; then
            named=$((named + 1))
        else
            seen="$rc: $(grep '^oshrun:' "$out" | head -n 1)"
        fi
    done
    local why="PE 1 named in $named of $1 runs, else $seen" left
    left=$(leftovers)
    [ -z "$left" ] || why="$why; $left"
    check "$3 on $2 PEs: the PE that died is named ($1 runs)" \
        "$([ "$named" = "$1" ] && [ -z "$left" ]; echo $?)" "$why"
}
shm_before=$(strata_shm)
cause_named 4 2 lost_segv
cause_named 3 4 lost_segv
cause_named 20 4 space_segv
cause_named 3 2 preinit_segv

# A signal to oshrun while the PEs sleep: forwarded, and the job ends with 128+signal.
signalled() { # signalled SIGNAL STATUS
    shm_before=$(strata_shm)
    # Job control gives the job its own group and leaves SIGINT at its default (a background
    # job of a script would otherwise start with SIGINT ignored).
    set -m
    timeout -k 3 12 "$oshrun" -np 4 "$client" sleep "$marker" >"$out" 2>&1 &
    local pid=$!
    set +m
    wait_pes "$pid" 4
    sleep 0.3
    pkill -"$1" -P "$pid" # oshrun, the child of timeout
    wait "$pid"
    local rc=$? why=""
    [ "$rc" = "$2" ] || why="status $rc, expected $2"
    grep -q "^oshrun: terminated by SIG$1\$" "$out" || why="$why; no 'terminated by SIG$1'"
    why="${why#; }"
    local left
    left=$(leftovers)
    [ -z "$left" ] || why="${why:+$why; }$left"
    check "SIG$1 to oshrun" "$([ -z "$why" ]; echo $?)" "$why"
}
signalled TERM 143
signalled INT 130

# oshrun killed by SIGKILL: its PEs die with it, and what the job had created goes too (its
# PMIx directory; the shared-memory file a PE made, in shm_sleep) within a short time.
killed() { # killed NAME MODE...
    local name=$1
    shift
    shm_before=$(strata_shm)
    timeout -k 3 12 "$oshrun" -np 2 "$client" "$@" "$marker" >"$out" 2>&1 &
    local pid=$!
    wait_pes "$pid" 2
    sleep 0.3 # the PEs are past shmem_init and have made their file
    local launcher files want=0
    launcher=$(pgrep -P "$pid" -x oshrun)
    files=$(find /dev/shm -maxdepth 1 -name "strata-$launcher-*" | wc -l)
    [ "$1" = shm_sleep ] && want=1
    kill -KILL "$launcher"
    wait "$pid" 2>/dev/null # timeout passes the SIGKILL on to itself
    for _ in $(seq 20); do # up to 2 s for everything to go
        [ "$(strays)" = 0 ] && [ -z "$(ls -A "$TMPDIR")" ] &&
            [ -z "$(find /dev/shm -maxdepth 1 -name "strata-$launcher-*")" ] && break
        sleep 0.1
    done
    local left
    left=$(leftovers)
    [ "$files" -ge "$want" ] || left="${left:+$left; }the PE made no file"
    check "$name" "$([ -z "$left" ]; echo $?)" "$left"
}
killed "SIGKILL to oshrun: nothing left" sleep
killed "SIGKILL to oshrun with a job's shared-memory file: nothing left" shm_sleep 1

# Bad input: a one-line error, non-zero status, nothing started, nothing created.
bad() { # bad NAME ARGS...
    local name=$1
    shift
    timeout -k 5 10 "$oshrun" "$@" >"$out" 2>&1
    local rc=$? lines why=""
    lines=$(wc -l <"$out")
    [ "$rc" != 0 ] || why="status 0"
    [ "$lines" = 1 ] && grep -q '^oshrun: ' "$out" || why="$why; $lines lines of output"
    why="${why#; }"
    local left
    left=$(leftovers)
    [ -z "$left" ] || why="${why:+$why; }$left"
    check "$name" "$([ -z "$why" ]; echo $?)" "$why"
}
shm_before=$(strata_shm)
bad "-np 0" -np 0 "$client" ok "$marker"
bad "-np -2" -np -2 "$client" ok "$marker"
bad "-np abc" -np abc "$client" ok "$marker"
bad "-np without a value" -np
bad "missing program" -np 2
bad "nonexistent program" -np 2 /nonexistent/program "$marker"
bad "program not in PATH" -np 2 no-such-program-"$marker"
plain=$work/plain
touch "$plain"
chmod 644 "$plain"
bad "non-executable file" -np 2 "$plain" "$marker"
bad "directory as program" -np 2 "$work" "$marker"
bad "unknown option" --frobnicate -np 2 "$client" ok "$marker"
bad "--bind-to socket" --bind-to socket -np 2 "$client" ok "$marker"
bad "--bind-to without a value" --bind-to

# --bind-to core: PE i on the i-th CPU this shell may use, taken in turn past the last one;
# without it (or with none) every PE may use them all.
cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$$/status)
mapfile -t cpu_list < <(echo "$cpus" | tr ',' '\n' | awk -F- '{for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c}')
affinity() { # affinity ARGS...: "rank cpus" per PE, sorted by rank
    timeout -k 3 12 "$oshrun" "$@" -np 3 /bin/sh -c \
        'echo "$PMIX_RANK $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"' \
        "$marker" 2>&1 | sort -n
}
want=$(for r in 0 1 2; do echo "$r ${cpu_list[r % ${#cpu_list[@]}]}"; done)
got=$(affinity --bind-to core)
[ "$got" = "$want" ]
check "--bind-to core: each PE on the next CPU" $? "got '$got', want '$want'"
want=$(for r in 0 1 2; do echo "$r $cpus"; done)
got=$(affinity --bind-to none)
[ "$got" = "$want" ] && [ "$(affinity)" = "$want" ]
check "--bind-to none and no option: every CPU" $? "got '$got', want '$want'"

"$oshrun" --help >"$out" 2>&1 && grep -q '^usage: oshrun' "$out"
check "--help" $? "no usage text"
"$oshrun" --version >"$out" 2>&1 && grep -q '^oshrun (Strata)' "$out"
check "--version" $? "no version"

echo "launcher: $passed passed, $failed failed"
[ "$failed" = 0 ]
