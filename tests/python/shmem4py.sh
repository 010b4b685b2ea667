#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shmem4py, the Python bindings, built from a snapshot of its source against the installed
# Strata as docs/python.md says, and its test suite run on 1, 2 and 4 PEs: one test per PE count
# (all its tests pass on every PE, judged from each PE's own report). Needs python3-dev
# python3-cffi python3-numpy python3-setuptools python3-venv python3-wheel; PYTHON names the
# interpreter (python3).
# Usage: shmem4py.sh PREFIX SNAPSHOT (a directory or a .tar.gz of shmem4py's source)
set -u
prefix=$1
snapshot=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-shmem4py.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

if [ -d "$snapshot" ]; then
    cp -r "$snapshot" "$work/src"
else
    mkdir "$work/src" && tar -xzf "$snapshot" -C "$work/src" --strip-components=1
fi || { echo "FAIL: shmem4py snapshot $snapshot unreadable"; echo "0 passed, 1 failed"; exit 1; }
export PATH=$prefix/bin:$PATH
if ! "${PYTHON:-python3}" -m venv --system-site-packages "$work/venv" >"$work/build.log" 2>&1 ||
    ! (cd "$work/src" && CFLAGS=-DPySHMEM_VENDOR_Sandia=1 "$work/venv/bin/python" -m pip install \
        --no-build-isolation --no-deps --no-index . >>"$work/build.log" 2>&1); then
    echo "FAIL: shmem4py builds against Strata"
    tail -n 20 "$work/build.log" | sed 's/^/    | /'
    echo "0 passed, 1 failed"
    exit 1
fi
for n in 1 2 4; do
    # Each PE writes unittest's report to a file of its own, which ends with OK where every test
    # passed there: the PEs' reports on one stream interleave, even within a line.
    rm -rf "$work/pe" && mkdir "$work/pe"
    (cd "$work/src" && timeout 300 oshrun -np "$n" sh -c \
        'exec "$0" -m unittest discover -s test >"$1/$PMIX_RANK" 2>&1' \
        "$work/venv/bin/python" "$work/pe") >"$work/job.log" 2>&1
    rc=$?
    ok=$(for pe in $(seq 0 $((n - 1))); do tail -n 1 "$work/pe/$pe" 2>/dev/null; done |
        grep -c '^OK')
    if [ "$rc" = 0 ] && [ "$ok" = "$n" ]; then
        passed=$((passed + 1))
        echo "PASS: shmem4py's tests on $n PEs"
    else
        failed=$((failed + 1))
        echo "FAIL: shmem4py's tests on $n PEs: status $rc, $ok of $n PEs' reports end with OK"
        for pe in $(seq 0 $((n - 1))); do
            echo "    PE $pe:"
            tail -n 8 "$work/pe/$pe" 2>/dev/null | sed 's/^/    | /'
        done
        tail -n 8 "$work/job.log" | sed 's/^/    | /'
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
