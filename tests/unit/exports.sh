#!/usr/bin/env bash
# The library exports the OpenSHMEM API and nothing else: 1.6 names and their deprecated forms,
# the spaces proposal's, and the predefined handles. Usage: exports.sh LIBSTRATA.so
set -u
# A sanitizer build adds an ODR indicator beside each exported variable: it names the variable.
symbols=$(nm -D --defined-only "$1" | awk '{print $3}' | sed 's/^__odr_asan\.//')
api='^(shmem_|shmemx_|pshmem_|SHMEM_|_my_pe$|_num_pes$|start_pes$|shmalloc$|shfree$|shrealloc$|shmemalign$)'
others=$(grep -v -E "$api" <<<"$symbols")
count=$(grep -c '^shmem_' <<<"$symbols")
echo "$count shmem_ symbols exported"
if [ -n "$others" ]; then
    echo "exported but not API: $(tr '\n' ' ' <<<"$others")"
    exit 1
fi
# An empty or unreadable library must not pass: the API alone has over a thousand routines.
[ "$count" -gt 1000 ]
