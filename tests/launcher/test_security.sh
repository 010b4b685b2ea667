#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Only the job's own processes may talk to oshrun's PMIx server. A process of a second user, that
# knows the job's server address, namespace and rank and claims the job owner's uid and gid,
# tries to connect as rank 1 and abort the job: its connection must be refused, oshrun must say
# so, and the job must finish untouched (status 0, every PE's output). A flood of connections
# from that user leaves oshrun's stderr a bounded number of lines.
# Usage: test_security.sh OSHRUN CLIENT INTRUDER (as root: it creates the second user)
#   CLIENT is tests/launcher/behave, INTRUDER tests/launcher/intruder.
set -u
. "$(dirname "$0")/check.sh"
oshrun=$1
client=$2
intruder=$3
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: launcher security (needs root to create a second user)"
    exit 77
fi
user=strata-intruder
# Idempotent, and a test running beside this one may have just created it.
id -u "$user" >/dev/null 2>&1 || useradd -M -r -s /usr/sbin/nologin "$user" 2>/dev/null ||
    id -u "$user" >/dev/null 2>&1 || { echo "FAIL: cannot create user $user"; exit 1; }
# The intruder's copy must be reachable by its user: a directory of its own under /tmp.
work=$(mktemp -d /tmp/test_security.XXXXXX)
chmod 755 "$work"
cp "$intruder" "$work/intruder"
chmod 755 "$work/intruder"
marker="security-test-$$"
cleanup() {
    pkill -KILL -f -- "$marker" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# The PEs wait for the gate file, then go through a process-manager exchange and print.
gate=$work/gate
timeout -k 3 30 "$oshrun" -np 2 "$client" gate "$gate" "$marker" >"$work/job" 2>&1 &
job=$!
# PE 1 is the process of the job (the marker is in its command line, whatever name a build's
# wrapper gives it) that was told PMIX_RANK=1; the job's own limit is the wait's.
pe1=""
for _ in $(seq 250); do
    for pid in $(pgrep -f -- "$marker"); do
        tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep -qx 'PMIX_RANK=1' && pe1=$pid
    done
    [ -n "$pe1" ] && break
    sleep 0.1
done
# Worst case: the intruder knows everything PE 1 was told.
mapfile -t pmix_env < <(tr '\0' '\n' <"/proc/${pe1:-0}/environ" 2>/dev/null | grep '^PMIX_')
if ! printf '%s\n' "${pmix_env[@]}" | grep -q '^PMIX_SERVER_URI'; then
    echo "FAIL: PE 1's PMIx environment not found; the job's processes:"
    pgrep -a -f -- "$marker" | sed 's/^/    | /'
    touch "$gate" # the job still ends by itself, cleaning up after itself
    wait "$job"
    exit 1
fi
timeout -k 3 20 runuser -u "$user" -- env -i "${pmix_env[@]}" "$work/intruder" 0 0 \
    >"$work/intruder.out" 2>&1
rc=$?
[ "$rc" = 0 ] && grep -q '^refused: ' "$work/intruder.out"
check "an intruder claiming uid 0 as rank 1 is refused" $? "status $rc" "$work/intruder.out"

# A flood of connections from that user: each refused, and oshrun's stderr names the first
# three and then only counts, a line every five seconds at most and one at the end.
flood=1000
flood_began=$SECONDS
timeout -k 3 120 runuser -u "$user" -- env -i "${pmix_env[@]}" "$work/intruder" 0 0 flood \
    "$flood" >"$work/flood.out" 2>&1
rc=$?
flood_took=$((SECONDS - flood_began))
[ "$rc" = 0 ] && grep -qx "flood: $flood refused" "$work/flood.out"
check "a flood of $flood connections is refused, each one" $? "status $rc" "$work/flood.out"

touch "$gate"
wait "$job"
rc=$?
[ "$rc" = 0 ] && grep -q '^PE 0 of 2 ok$' "$work/job" && grep -q '^PE 1 of 2 ok$' "$work/job"
check "the job finishes untouched" $? "status $rc" "$work/job"
grep -q "^oshrun: refused a connection to the PMIx server from user $(id -u "$user")\$" "$work/job"
check "oshrun reports the refused connection" $? "no message" "$work/job"
lines=$(grep -c "^oshrun: refused" "$work/job")
[ "$lines" -le $((3 + flood_took / 5 + 2)) ] &&
    [ "$(grep -c "^oshrun: refused a connection" "$work/job")" = 3 ] &&
    tail -n 1 <(grep "^oshrun: refused" "$work/job") |
    grep -qx "oshrun: refused [0-9]* more connections to the PMIx server ($((flood + 1)) in all)"
check "oshrun names 3 refusals and counts the other $flood in $lines lines" $? \
    "$lines lines after $flood_took s" "$work/job"

echo "launcher security: $passed passed, $failed failed"
[ "$failed" = 0 ]
