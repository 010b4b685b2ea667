#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The test suite (make check: unit tests, then the SPMD tests under oshrun on 1, 2 and 4 PEs) in a
# build tree, _build unless named; ends with its line "N passed, N failed" and fails if any did.
# Usage: bash scripts/test.sh [BUILDDIR]   (after scripts/quickstart.sh, or any configured tree)
set -u
build=${1:-$(cd "$(dirname "$0")/.." && pwd)/_build}
[ -f "$build/Makefile" ] ||
    { echo "no configured build in $build: run bash scripts/quickstart.sh first"; exit 1; }
log=$(mktemp "${TMPDIR:-/tmp}/strata-check.XXXXXX")
trap 'rm -f "$log"' EXIT
make -C "$build" -j2 check 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
echo "${counts:-0 passed, 1 failed}"
[ "$status" = 0 ] && [ -n "$counts" ]
