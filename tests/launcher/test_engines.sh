#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# oshrun's hand-off to engines, without a cluster: fake srun, prterun and mpirun found through
# PATH record the arguments and environment they get and exit with a chosen status. Checked: when
# a job leaves this node, the exact command line for each engine and option (--dry-run prints it
# as a shell line, and running that line gives the engine the same arguments), the environment
# that reaches the engine, that the engine's status is oshrun's, and the errors without one.
# Usage: test_engines.sh OSHRUN CLIENT (CLIENT: tests/launcher/behave, for a run on this node)
set -u
. "$(dirname "$0")/check.sh"
oshrun=$1
client=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/test_engines.XXXXXX")
out=$work/out
trap 'rm -rf "$work"' EXIT
# A sanitizer build keeps its settings (its leak check would fail a dry run's exit otherwise).
sanitizers=()
for var in ASAN_OPTIONS UBSAN_OPTIONS LD_LIBRARY_PATH; do
    [ -n "${!var:-}" ] && sanitizers+=("$var=${!var}")
done
root_env=""
[ "$(id -u)" = 0 ] && root_env=yes

# One directory per fake engine, so that PATH chooses which are installed. A fake records, with
# shell builtins only (PATH holds nothing else), one line per argument, its environment and the
# signals it ignores, then exits with FAKE_STATUS.
for engine in srun prterun mpirun; do
    mkdir "$work/$engine"
    cat >"$work/$engine/$engine" <<'FAKE'
#!/bin/sh
log=${0%/*}/log
: >"$log"
for word in "$0" "$@"; do printf 'arg %s\n' "$word" >>"$log"; done
export -p | while read -r _ assignment; do printf 'env %s\n' "$assignment"; done >>"$log"
while read -r key value; do [ "$key" = SigIgn: ] && echo "ignored $value" >>"$log"; done \
    </proc/$$/status
exit "${FAKE_STATUS:-0}"
FAKE
    chmod +x "$work/$engine/$engine"
done
all="$work/srun:$work/prterun:$work/mpirun"

# The arguments the last engine run got, joined by '|'.
engine_args() {
    sed -n 's/^arg //p' "$work"/*/log 2>/dev/null | paste -sd'|'
}

# osh PATH [VAR=VALUE...] -- ARGS...: oshrun with only that environment (and the options in
# the array first, --dry-run or none).
first=()
osh() {
    local path=$1
    shift
    local vars=()
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    rm -f "$work"/*/log
    env -i PATH="$path" "${sanitizers[@]}" "${vars[@]}" "$oshrun" "${first[@]}" "$@" >"$out" 2>&1
}

# The variables oshrun adds for an engine that refuses root (prefix $1), as a dry-run prints them.
root_prefix() {
    [ -n "$root_env" ] && printf '%s_ALLOW_RUN_AS_ROOT=1 %s_ALLOW_RUN_AS_ROOT_CONFIRM=1 ' "$1" "$1"
}

# translated NAME ENGINE-DIR EXPECTED-ARGS PATH [VAR=VALUE...] -- ARGS...: the dry run prints
# the engine's path and EXPECTED-ARGS ('|'-separated, without the engine), exits 0 and runs
# nothing; a real run gives the engine exactly those arguments; the printed line, run by a shell,
# does too.
translated() {
    local name=$1 dir=$2 want=$3
    shift 3
    local prefix="" engine=${dir##*/} why="" line got
    [ "$engine" = mpirun ] && prefix=$(root_prefix OMPI)
    [ "$engine" = prterun ] && prefix=$(root_prefix PRTE)
    first=(--dry-run)
    osh "$@"
    local rc=$?
    first=()
    line=$(cat "$out")
    [ "$rc" = 0 ] || why="dry run: status $rc"
    [ ! -e "$dir/log" ] || why="$why; the dry run ran the engine"
    [ "$line" = "$prefix$dir/$engine ${want//|/ }" ] || [[ "$want" == *"'"* ]] ||
        why="$why; dry run printed '$line'"
    osh "$@"
    got=$(engine_args)
    [ "$got" = "$dir/$engine|$want" ] || why="$why; the engine got '$got'"
    rm -f "$work"/*/log
    env -i /bin/sh -c "$line" >/dev/null 2>&1
    got=$(engine_args)
    [ "$got" = "$dir/$engine|$want" ] || why="$why; the printed line gave the engine '$got'"
    why="${why#; }"
    check "$name" "$([ -z "$why" ]; echo $?)" "$why"
}

prog=$client
mp=$work/mpirun
pr=$work/prterun
sr=$work/srun

# Open MPI: every host gets its share of the slots (a host named in --host has one otherwise).
translated "mpirun: --host a,b -np 4 gives each host 2 slots" "$mp" \
    "-n|4|--host|a:2,b:2|$prog|ok" "$mp" -- --host a,b -np 4 "$prog" ok
translated "mpirun: --host a,b -np 3 rounds the share up" "$mp" "-n|3|--host|a:2,b:2|$prog|ok" \
    "$mp" -- --host a,b -np 3 "$prog" ok
translated "mpirun: slots given are kept, oversubscribed when short" "$mp" \
    "-n|4|--host|a:1,b:1|--oversubscribe|$prog|ok" "$mp" -- -H a:1,b:1 -np 4 "$prog" ok
printf '# hosts\na slots=3 max_slots=8\nb:1\n\nc  # no slots\na\n' >"$work/hosts"
translated "mpirun: a host file's slots, a host named twice once" "$mp" \
    "-n|5|--host|a:3,b:1,c:2|$prog|ok" "$mp" -- --hostfile "$work/hosts" -np 5 "$prog" ok
translated "mpirun: host file and host list together" "$mp" \
    "-n|6|--host|a:3,b:1,c:2,d:2|$prog|ok" "$mp" -- --hostfile "$work/hosts" --host d -np 6 \
    "$prog" ok
translated "mpirun: SHMEM_*, UCX_* and FI_* forwarded with -x, nothing else" "$mp" \
    "-n|2|--host|a:1,b:1|-x|SHMEM_SYMMETRIC_SIZE|-x|UCX_TLS|-x|FI_PROVIDER|$prog" "$mp" \
    SHMEM_SYMMETRIC_SIZE=1G OTHER=1 UCX_TLS=tcp FI_PROVIDER=cxi -- --host a,b -np 2 "$prog"
translated "mpirun: --bind-to handed on" "$mp" "-n|2|--host|a:1,b:1|--bind-to|core|$prog" "$mp" \
    -- --bind-to core --host a,b -np 2 "$prog"
translated "mpirun: the program's arguments as given, quoted in the dry run" "$mp" \
    "-n|2|--host|a:1,b:1|$prog|it's|a b|*" "$mp" -- --host a,b -np 2 "$prog" "it's" "a b" "*"
osh "$mp" -- --dry-run --host a,b -np 2 "$prog" "it's" "a b"
grep -q -F -- "$prog 'it'\\''s' 'a b'" "$out"
check "mpirun: dry run quotes for a shell" $? "printed '$(cat "$out")'"

# PRRTE is preferred to mpirun outside Slurm.
translated "prterun before mpirun, with its own oversubscription" "$pr" \
    "-n|3|--host|a:1|--map-by|:OVERSUBSCRIBE|-x|SHMEM_DEBUG|$prog" "$pr:$mp" SHMEM_DEBUG=1 -- \
    --host a:1 -np 3 "$prog"

# Slurm: srun inside an allocation of more than one node, even where the others are installed.
translated "srun in a 2-node allocation" "$sr" \
    "--mpi=pmix|--kill-on-bad-exit=1|--export=ALL|-n|4|$prog|ok" "$all" SLURM_JOB_ID=5 \
    SLURM_NNODES=2 SLURM_NTASKS=4 -- -np 4 "$prog" ok
translated "srun: SLURM_JOB_NUM_NODES counts too" "$sr" \
    "--mpi=pmix|--kill-on-bad-exit=1|--export=ALL|-n|2|$prog" "$all" SLURM_JOB_ID=5 \
    SLURM_JOB_NUM_NODES=2 -- -np 2 "$prog"
translated "srun: --host becomes --nodelist" "$sr" \
    "--mpi=pmix|--kill-on-bad-exit=1|--export=ALL|-n|2|--nodelist=n1,n2|$prog" "$all" \
    SLURM_JOB_ID=5 SLURM_NNODES=2 -- --host n1:3,n2 -np 2 "$prog"
translated "srun: --bind-to becomes --cpu-bind" "$sr" \
    "--mpi=pmix|--kill-on-bad-exit=1|--export=ALL|-n|2|--cpu-bind=cores|$prog" "$all" \
    SLURM_JOB_ID=5 SLURM_NNODES=2 -- --bind-to core -np 2 "$prog"
translated "srun: more PEs than the allocation's tasks overcommit" "$sr" \
    "--mpi=pmix|--kill-on-bad-exit=1|--export=ALL|-n|4|--overcommit|$prog" "$all" \
    SLURM_JOB_ID=5 SLURM_NNODES=2 SLURM_NTASKS=2 -- -np 4 "$prog"
translated "srun: more PEs than the allocation's CPUs overcommit" "$sr" \
    "--mpi=pmix|--kill-on-bad-exit=1|--export=ALL|-n|5|--overcommit|$prog" "$all" \
    SLURM_JOB_ID=5 SLURM_NNODES=3 'SLURM_JOB_CPUS_PER_NODE=2(x1),1(x2)' -- -np 5 "$prog"
translated "srun: as many PEs as CPUs do not" "$sr" \
    "--mpi=pmix|--kill-on-bad-exit=1|--export=ALL|-n|4|$prog" "$all" SLURM_JOB_ID=5 \
    SLURM_NNODES=3 'SLURM_JOB_CPUS_PER_NODE=2(x1),1(x2)' -- -np 4 "$prog"
translated "SHMEM_LAUNCHER=srun chooses srun without an allocation" "$sr" \
    "--mpi=pmix|--kill-on-bad-exit=1|--export=ALL|-n|2|$prog" "$all" SHMEM_LAUNCHER=srun -- \
    -np 2 "$prog"
translated "SHMEM_LAUNCHER=mpirun chooses mpirun on this host" "$mp" \
    "-n|2|--host|localhost:4|-x|SHMEM_LAUNCHER|$prog" "$all" SHMEM_LAUNCHER=mpirun -- \
    --host localhost:4 -np 2 "$prog"
translated "SHMEM_LAUNCHER=mpirun in a Slurm allocation" "$mp" "-n|2|-x|SHMEM_LAUNCHER|$prog" \
    "$all" SHMEM_LAUNCHER=mpirun SLURM_JOB_ID=5 SLURM_NNODES=2 -- -np 2 "$prog"
translated "outside an allocation srun is the last resort" "$sr" \
    "--mpi=pmix|--kill-on-bad-exit=1|--export=ALL|-n|2|--nodelist=a,b|$prog" "$sr" -- \
    --host a,b -np 2 "$prog"

# The job stays here: one node of Slurm, local hosts only, SHMEM_LAUNCHER=oshrun.
stays() { # stays NAME PATH [VAR=VALUE...] -- ARGS...
    local name=$1
    shift
    first=(--dry-run)
    osh "$@"
    local rc=$? line
    first=()
    line=$(cat "$out")
    local want="# 2 PEs on this node under oshrun's own PMIx server: $prog ok"
    [ "$rc" = 0 ] && [ "$line" = "$want" ] && [ -z "$(engine_args)" ]
    check "$name" $? "status $rc, printed '$line'"
}
stays "a 1-node Slurm allocation stays here" "$all" SLURM_JOB_ID=5 SLURM_NNODES=1 -- -np 2 \
    "$prog" ok
printf 'localhost slots=4\n%s\n' "$(hostname)" >"$work/local"
stays "local host list and host file stay here" "$all" -- --hostfile "$work/local" \
    --host "localhost,127.0.0.1,$(hostname)" -np 2 "$prog" ok
stays "hosts given decide over the allocation" "$all" SLURM_JOB_ID=5 SLURM_NNODES=2 -- \
    --host localhost -np 2 "$prog" ok
stays "SHMEM_LAUNCHER=oshrun stays here in a 2-node allocation" "$all" SHMEM_LAUNCHER=oshrun \
    SLURM_JOB_ID=5 SLURM_NNODES=2 -- -np 2 "$prog" ok

# And it runs there, under oshrun's own server.
osh "$all:/usr/bin:/bin" -- --hostfile "$work/local" -np 2 "$client" ok
rc=$?
[ "$rc" = 0 ] && grep -q -E "(rank|PE) 1 of 2 ok" "$out" && [ -z "$(engine_args)" ]
check "local hosts: the job runs here" $? "status $rc"

# What reaches the engine besides its arguments, and what comes back.
osh "$mp" FAKE_STATUS=7 SHMEM_X=1 -- --host a,b -np 2 "$prog"
rc=$?
why=""
[ "$rc" = 7 ] || why="status $rc, expected the engine's 7"
grep -q "^env SHMEM_X='1'$" "$mp/log" || why="$why; SHMEM_X not in the engine's environment"
if [ -n "$root_env" ]; then
    for var in OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM; do
        grep -q "^env $var='1'$" "$mp/log" || why="$why; no $var=1 for mpirun as root"
    done
fi
mask=$(sed -n 's/^ignored //p' "$mp/log")
(((0x$mask >> 12) & 1)) && why="$why; SIGPIPE ignored in the engine"
why="${why#; }"
check "mpirun's status is oshrun's; its environment" "$([ -z "$why" ]; echo $?)" "$why"
osh "$sr" FAKE_STATUS=143 SLURM_JOB_ID=5 SLURM_NNODES=2 -- -np 2 "$prog"
rc=$?
[ "$rc" = 143 ] && ! grep -q ALLOW_RUN_AS_ROOT "$sr/log"
check "srun's status is oshrun's; no root permission needed" $? "status $rc"
if [ -n "$root_env" ]; then
    osh "$pr" -- --host a -np 1 "$prog"
    grep -q "^env PRTE_ALLOW_RUN_AS_ROOT='1'$" "$pr/log" &&
        grep -q "^env PRTE_ALLOW_RUN_AS_ROOT_CONFIRM='1'$" "$pr/log"
    check "prterun as root gets its permission" $? "$(grep ^env "$pr/log")"
fi

# Errors: one line, status 1, nothing run.
refused() { # refused NAME TEXT PATH [VAR=VALUE...] -- ARGS...
    local name=$1 text=$2
    shift 2
    osh "$@"
    local rc=$?
    [ "$rc" = 1 ] && [ "$(wc -l <"$out")" = 1 ] && grep -q -F -- "$text" "$out" &&
        [ -z "$(engine_args)" ]
    check "$name" $? "status $rc: $(cat "$out")"
}
refused "no engine installed" \
    "oshrun: a job on other nodes needs an engine, and none is in PATH: install slurm-client (srun) or openmpi-bin (mpirun)" \
    "$work/none" -- --host a,b -np 2 "$prog"
refused "SHMEM_LAUNCHER names an engine that is not installed" \
    "oshrun: SHMEM_LAUNCHER=prterun, but prterun is not in PATH: install PRRTE (prterun)" \
    "$mp:$sr" SHMEM_LAUNCHER=prterun -- -np 2 "$prog"
refused "SHMEM_LAUNCHER with an unknown engine" \
    "oshrun: SHMEM_LAUNCHER='rsh' is not one of srun, prterun, mpirun, oshrun" "$all" \
    SHMEM_LAUNCHER=rsh -- -np 2 "$prog"
refused "a host file that cannot be read" "oshrun: cannot read host file" "$all" -- \
    --hostfile "$work/nonexistent" -np 2 "$prog"

# The real engines on this host, where they are installed (as root too: oshrun gives them the
# permission): a job, shmem_global_exit's status, a PE's death named by the engine.
engine_real() { # engine_real ENGINE NAME STATUS TEXT MODE...
    local engine=$1 name=$2 status=$3 text=$4
    shift 4
    SHMEM_LAUNCHER=$engine timeout -k 5 60 "$oshrun" --host localhost:4 -np 2 "$client" "$@" \
        >"$out" 2>&1
    local rc=$?
    [ "$rc" = "$status" ] && { [ -z "$text" ] || grep -a -q -E -- "$text" "$out"; }
    check "real $engine: $name" $? "status $rc, expected $status and '$text'"
}
# engine_runs ENGINE: whether it starts a plain program here at all (one built against other
# libraries than those the environment points at may not).
engine_runs() {
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PRTE_ALLOW_RUN_AS_ROOT=1 \
        PRTE_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 5 30 "$1" -n 1 true >"$out" 2>&1
}
for engine in mpirun prterun; do
    if ! command -v "$engine" >/dev/null; then
        [ "$engine" = mpirun ] && package="openmpi-bin" || package="PRRTE, not packaged by Debian 12"
        echo "SKIP: real $engine (not installed: $package)"
    elif ! engine_runs "$engine"; then
        echo "SKIP: real $engine (it cannot start a plain program here: $(head -n 1 "$out"))"
    else
        engine_real "$engine" "2 PEs" 0 "(rank|PE) 1 of 2 ok" ok
        engine_real "$engine" "shmem_global_exit(7) on PE 1 ends the job with 7" 7 "" abort 1 7
        engine_real "$engine" "shmem_global_exit(0) on PE 1 ends the job with 0" 0 "" \
            abort_wait 1 0
        engine_real "$engine" "PE 1 killed by SIGSEGV: named, status 139" 139 \
            "rank 1 .*signal 11" segv 1
        engine_real "$engine" "PE 1 returns from main without shmem_finalize" 1 \
            "PE 1 .*exited with status 0 without calling shmem_finalize" return 1
    fi
done

echo "engines: $passed passed, $failed failed"
[ "$failed" = 0 ]
