#!/usr/bin/env bash
# oshrun's failure handling: status, message, no stray process, no leftover file.
# Usage: test_launcher.sh OSHRUN BEHAVE
set -u
oshrun=$1
behave=$2
passed=0
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

check() { # check NAME CONDITION-RESULT WHY
    if [ "$2" = 0 ]; then
        passed=$((passed + 1))
        echo "PASS: $1"
    else
        failed=$((failed + 1))
        echo "FAIL: $1 ($3)"
        sed 's/^/    | /' "$out" | tail -n 15
    fi
}

# expect NAME STATUS STDERR-TEXT NP ARGS...: runs the job, checks status, message, duration,
# and that nothing of it is left.
expect() {
    local name=$1 status=$2 text=$3 np=$4
    shift 4
    local start=$SECONDS
    timeout 20 "$oshrun" -np "$np" "$behave" "$@" >"$out" 2>&1
    local rc=$?
    local took=$((SECONDS - start))
    local strays
    strays=$(pgrep -f "^$behave( |$)" | wc -l)
    local ok=0 why=""
    [ "$rc" = "$status" ] || { ok=1; why="status $rc, expected $status"; }
    [ -z "$text" ] || grep -q -- "$text" "$out" || { ok=1; why="$why; no '$text' in output"; }
    [ "$took" -lt 10 ] || { ok=1; why="$why; took $took s: survivors not killed"; }
    [ "$strays" = 0 ] || { ok=1; why="$why; $strays stray processes"; pkill -9 -f "^$behave( |$)"; }
    check "$name" "$ok" "$why"
}

leftovers() { ls /dev/shm | grep -c '^strata-[0-9a-f-]*\.' ; }
before=$(leftovers)

expect "ok on 1 PE" 0 "PE 0 of 1 ok" 1 ok
expect "ok on 2 PEs" 0 "PE 1 of 2 ok" 2 ok
expect "ok on 4 PEs" 0 "PE 3 of 4 ok" 4 ok
expect "PE 1 segfaults" 139 "PE 1 killed by SIGSEGV" 4 segv 1
expect "PE 2 exits 3" 3 "PE 2 exited with status 3" 4 exit 2 3
expect "PE 0 exits 5 on 2 PEs" 5 "PE 0 exited with status 5" 2 exit 0 5
expect "PE 1 calls shmem_global_exit(7)" 7 "PE 1 aborted the job with status 7" 4 abort 1 7
expect "PE 1 leaves a shared-memory file and dies" 139 "PE 1 killed by SIGSEGV" 2 shm 1
after=$(leftovers)
[ "$before" = "$after" ]
check "no shared-memory file left" $? "$before before, $after after"

# SIGTERM to oshrun itself.
timeout 20 "$oshrun" -np 4 "$behave" sleep >"$out" 2>&1 &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
sleep 0.2
strays=$(pgrep -f "^$behave( |$)" | wc -l)
[ "$rc" = 143 ] && [ "$strays" = 0 ] && grep -q "terminated by SIGTERM" "$out"
check "SIGTERM to oshrun" $? "status $rc, $strays strays"

# Timeout knob.
SHMEM_OSHRUN_TIMEOUT=1 timeout 20 "$oshrun" -np 2 "$behave" sleep >"$out" 2>&1
rc=$?
[ "$rc" = 124 ] && grep -q "timeout after 1 s" "$out"
check "SHMEM_OSHRUN_TIMEOUT" $? "status $rc"

# Bad input: one line, non-zero, nothing started.
bad() { # bad NAME ARGS...
    local name=$1
    shift
    timeout 10 "$oshrun" "$@" >"$out" 2>&1
    local rc=$?
    local lines
    lines=$(wc -l <"$out")
    [ "$rc" != 0 ] && [ "$lines" = 1 ] && grep -q '^oshrun: ' "$out" && ! pgrep -f "^$behave( |$)" >/dev/null
    check "$name" $? "status $rc, $lines lines"
}
bad "-np 0" -np 0 "$behave" ok
bad "-np -2" -np -2 "$behave" ok
bad "-np abc" -np abc "$behave" ok
bad "missing program" -np 2
bad "nonexistent program" -np 2 /nonexistent/program
plain=$(mktemp)
chmod 644 "$plain"
bad "non-executable file" -np 2 "$plain"
rm -f "$plain"
bad "unknown option" --frobnicate -np 2 "$behave" ok

# Multi-node hand-off: oshrun execs the engine found in PATH with the job's size and program.
fake=$(mktemp -d)
for engine in srun prterun mpirun; do
    printf '#!/bin/sh\necho "%s $*" >"%s/called"\n' "$engine" "$fake" >"$fake/$engine"
    chmod +x "$fake/$engine"
done
PATH="$fake:$PATH" SLURM_JOB_ID=1 SLURM_NNODES=2 "$oshrun" -np 4 "$behave" ok >"$out" 2>&1
grep -q "^srun --mpi=pmix -n 4 $behave ok\$" "$fake/called" 2>/dev/null
check "hand-off to srun inside a 2-node Slurm allocation" $? "$(cat "$fake/called" 2>/dev/null)"
rm -f "$fake/called" "$fake/srun"
PATH="$fake:$PATH" "$oshrun" --host nodeA,nodeB -np 2 "$behave" ok >"$out" 2>&1
grep -q "^prterun -n 2 --host nodeA,nodeB $behave ok\$" "$fake/called" 2>/dev/null
check "hand-off to prterun for other hosts" $? "$(cat "$fake/called" 2>/dev/null)"
rm -rf "$fake"

echo "launcher: $passed passed, $failed failed"
[ "$failed" = 0 ]
