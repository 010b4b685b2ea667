# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# The launcher scripts' verdicts (sourced): counts into passed and failed.
passed=0
failed=0

# check NAME STATUS WHY [LOG]: STATUS 0 passes; a failure shows the end of LOG (default: $out).
check() {
    if [ "$2" = 0 ]; then
        passed=$((passed + 1))
        echo "PASS: $1"
    else
        failed=$((failed + 1))
        echo "FAIL: $1 ($3)"
        local log=${4:-${out:-}}
        [ -z "$log" ] || sed 's/^/    | /' "$log" | tail -n 15
    fi
}

# absent NAME REGEX: nothing in the last job's output ($out) matches the extended REGEX.
absent() {
    ! grep -q -E -- "$2" "$out"
    check "$1" $? "'$2' in the output"
}
