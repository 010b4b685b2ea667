#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The library exports the OpenSHMEM API and nothing else: 1.6 names and their deprecated forms,
# the spaces proposal's, and the predefined handles; and, for the profiling interface, every
# routine under its name with a leading "p" too (pshmem_long_put, pstart_pes), no more and no less.
# Usage: exports.sh LIBSTRATA.so
set -u
# A sanitizer build adds an ODR indicator beside each exported variable: it names the variable.
symbols=$(nm -D --defined-only "$1" | awk '{print $3}' | sed 's/^__odr_asan\.//')
routines=$(nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "W" {print $3}' | LC_ALL=C sort)
api='^(shmem_|shmemx_|SHMEM_|_my_pe$|_num_pes$|start_pes$|shmalloc$|shfree$|shrealloc$|shmemalign$)'
shifted=$(sed -n 's/^p//p' <<<"$symbols" | grep -E "$api")
others=$(grep -v -E "$api" <<<"$symbols" | grep -v -E "^p${api#^}")
count=$(grep -c '^shmem_' <<<"$symbols")
echo "$count shmem_ symbols exported, $(grep -c . <<<"$shifted") profiling names"
status=0
if [ -n "$others" ]; then
    echo "exported but not API: $(tr '\n' ' ' <<<"$others")"
    status=1
fi
# Each routine and its shifted name, both exported: the routines are the unshifted names.
unpaired=$(LC_ALL=C comm -3 <(grep -E "$api" <<<"$routines") <(LC_ALL=C sort <<<"$shifted"))
if [ -n "$unpaired" ]; then
    echo "routines without their profiling name, or the reverse: $(tr '\n\t' '  ' <<<"$unpaired")"
    status=1
fi
# An empty or unreadable library must not pass: the API alone has over a thousand routines.
[ "$count" -gt 1000 ] || status=1
exit "$status"
