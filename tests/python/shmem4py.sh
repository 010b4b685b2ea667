#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# shmem4py, the Python bindings, built from a snapshot of its source against the installed
# Strata as docs/python.md says, and its test suite run on 1, 2 and 4 PEs: one test per PE count
# (all its tests pass on every PE). Needs python3-dev python3-cffi python3-numpy
# python3-setuptools python3-venv python3-wheel; PYTHON names the interpreter (python3).
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
    # unittest ends each PE's report with OK; all n must.
    if out=$(cd "$work/src" && timeout 300 oshrun -np "$n" "$work/venv/bin/python" -m unittest \
        discover -s test 2>&1) && [ "$(grep -c '^OK' <<<"$out")" = "$n" ]; then
        passed=$((passed + 1))
        echo "PASS: shmem4py's tests on $n PEs"
    else
        failed=$((failed + 1))
        echo "FAIL: shmem4py's tests on $n PEs"
        tail -n 20 <<<"$out" | sed 's/^/    | /'
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
