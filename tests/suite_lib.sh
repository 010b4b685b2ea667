# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# The harness shared by run_suite.sh and run_multinode.sh, sourced with BUILDDIR SRCDIR: `run`
# counts each test, `finish` checks that nothing was left behind and prints "N passed, N failed".
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
oshrun="$build/oshrun/oshrun"
cuda_double="$build/tests/cuda/.libs/libcuda_double.so" # built where configure found cuda.h
hip_double="$build/tests/hip/.libs/libhip_double.so"    # and where it found the HIP headers
per_test_timeout=${STRATA_TEST_TIMEOUT:-120}
passed=0
failed=0
failures=()
log_dir=$(mktemp -d "${TMPDIR:-/tmp}/strata-tests.XXXXXX")
# oshrun makes its PMIx directory under TMPDIR: a private one, open like /tmp (a test's second
# user reaches into it), holds this suite's launcher directories and no other job's.
suite_outer_tmp=${TMPDIR:-/tmp}
export TMPDIR=$log_dir/tmp
mkdir -m 1777 "$TMPDIR"
chmod 755 "$log_dir"
suite_exit() {
    rm -rf "$log_dir"
}
trap suite_exit EXIT

# run NAME COMMAND...: runs a test with a time limit; its output is shown only when it fails.
# run_label, where set, is added to every name (a group of tests run again another way).
run_label=""
run() {
    local name="$1$run_label"
    shift
    local log="$log_dir/log"
    local start=$SECONDS
    if timeout -k 5 "$per_test_timeout" "$@" >"$log" 2>&1; then
        passed=$((passed + 1))
        echo "PASS: $name ($((SECONDS - start)) s)"
    else
        local rc=$?
        failed=$((failed + 1))
        failures+=("$name")
        echo "FAIL: $name (exit $rc, $((SECONDS - start)) s)"
        sed 's/^/    | /' "$log" | tail -n 40
    fi
}

shm_before=$(ls /dev/shm 2>/dev/null | grep '^strata-' | sort)

# outcome OK PASS_TEXT FAILURE FAIL_TEXT: counts a check done here (OK 1 or 0).
outcome() {
    if [ "$1" = 1 ]; then
        passed=$((passed + 1))
        echo "PASS: $2"
    else
        failed=$((failed + 1))
        failures+=("$3")
        echo "FAIL: $4"
    fi
}
# Counts two more tests (no shared-memory file and no launcher directory left behind), lists the
# failures, prints the counts line and returns nonzero when a test failed.
finish() {
    local shm_after leftover tmp_after
    shm_after=$(ls /dev/shm 2>/dev/null | grep '^strata-' | sort)
    leftover=$(comm -13 <(echo "$shm_before") <(echo "$shm_after") | grep -c . || true)
    outcome "$((leftover == 0))" "no shared-memory files left behind" "leftover shared memory" \
        "$leftover shared-memory files left in /dev/shm"
    tmp_after=$(ls "$TMPDIR" 2>/dev/null | grep -c '^oshrun\.' || true)
    outcome "$((tmp_after == 0))" "no launcher directory left behind" \
        "leftover launcher directory" "$tmp_after oshrun directories left in TMPDIR"
    if [ "$failed" -gt 0 ]; then
        echo "Failed tests:"
        printf '  %s\n' "${failures[@]}"
    fi
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
