#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# GPU runtimes are loaded only when a space asks for a GPU, and never from the current
# directory, whatever LD_LIBRARY_PATH says; hwloc's OpenCL component, which would load them
# through each vendor's ICD, never runs. A fake libcuda.so.1 marks every load.
# Usage: runtime_loading.sh OSHRUN CPU_PROGRAM GPU_PROGRAM FAKE_RUNTIME_SOURCE [CUDA_DOUBLE]
set -u
oshrun=$1
cpu_program=$2
gpu_program=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/runtime_loading.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/lib" "$work/cwd"
cc -shared -fPIC -o "$work/lib/libcuda.so.1" "$4" &&
    cp "$work/lib/libcuda.so.1" "$work/cwd/libcuda.so.1" || exit 1
export STRATA_TEST_RUNTIME_MARK=$work/mark
# No PE gets a GPU, also where the machine has one (the GPU program expects none); the runtime
# is still loaded to enumerate devices. LD_LIBRARY_PATH keeps what it held after the test's
# entries: the job's own libraries may be found through it.
export SHMEM_DEVICE_MAP=-,-
outer_path=${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
failed=0

# loaded NAME EXPECTED(yes|no) DIR LD_LIBRARY_PATH PROGRAM
loaded() {
    rm -f "$STRATA_TEST_RUNTIME_MARK"
    (cd "$3" && LD_LIBRARY_PATH=$4$outer_path "$oshrun" -np 2 "$5" >"$work/out" 2>&1)
    local rc=$? seen=no
    [ -e "$STRATA_TEST_RUNTIME_MARK" ] && seen=yes
    if [ "$rc" = 0 ] && [ "$seen" = "$2" ]; then
        echo "PASS: $1"
    else
        echo "FAIL: $1 (status $rc, loaded: $seen, expected $2)"
        sed 's/^/    | /' "$work/out" | tail -n 10
        failed=$((failed + 1))
    fi
}

loaded "a CPU-only job does not load the runtime" no "$work" "$work/lib" "$cpu_program"
loaded "a GPU space loads it from LD_LIBRARY_PATH" yes "$work" "$work/lib" "$gpu_program"
loaded "an empty LD_LIBRARY_PATH entry does not mean the current directory" no "$work/cwd" \
    ":/nonexistent" "$gpu_program"
loaded "a relative LD_LIBRARY_PATH entry is not searched" no "$work/cwd" "." "$gpu_program"
loaded "absolute entries beside a relative one are" yes "$work/cwd" ".:$work/lib" "$gpu_program"
# hwloc's OpenCL component loads every vendor's ICD (NVIDIA's loads libcuda.so.1) where it runs:
# neither oshrun's PMIx server nor a PE may run it. A fake ICD leaves the same mark.
mkdir "$work/vendors" && echo "$work/lib/libcuda.so.1" >"$work/vendors/fake.icd"
export OCL_ICD_VENDORS=$work/vendors
loaded "no OpenCL ICD loaded by a CPU-only job (hwloc's OpenCL component)" no "$work" \
    /nonexistent "$cpu_program"
if [ -n "${5:-}" ]; then # the CUDA driver's double: a device to discover
    export SHMEM_TEST_CUDA_DRIVER=$5
    loaded "no OpenCL ICD loaded by a GPU space's device discovery" no "$work" /nonexistent \
        "$gpu_program"
    unset SHMEM_TEST_CUDA_DRIVER
fi
unset OCL_ICD_VENDORS
[ "$failed" = 0 ]
