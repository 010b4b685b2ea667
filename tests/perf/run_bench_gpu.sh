#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# GPU spaces beside the GPU's own limits: builds gpu_bench (Strata, 2 PEs with a CUDA space each),
# gpu_stream_bench (the on-stream routines beside the host-ordered ones a program calls after a
# stream synchronize) and gpu_limits (plain driver copies: device to device through CUDA IPC between two processes,
# pinned host <-> device), runs them alternately, and prints the median of each figure, the
# matching limit measured in the same run and the ratio. Ends with "BENCH {...}".
# With SHMEM_TEST_CUDA_DRIVER set, both run on that driver (the test double): the harness is
# exercised, the figures say nothing about a GPU.
# Usage: run_bench_gpu.sh BUILDDIR SRCDIR [RUNS]
set -u
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
runs=${3:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/strata-bench-gpu.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$src/tests/perf/bench_lib.sh"

cc -O2 -o "$work/gpu_limits" "$src/tests/perf/gpu_limits.c" -ldl || exit 1
cc -O2 -I"$src/include" -o "$work/gpu_bench" "$src/tests/perf/gpu_bench.c" -L"$build/.libs" \
    -Wl,-rpath,"$build/.libs" -lstrata -ldl || exit 1
cc -O2 -I"$src/include" -o "$work/gpu_stream_bench" "$src/tests/perf/gpu_stream_bench.c" \
    -L"$build/.libs" -Wl,-rpath,"$build/.libs" -lstrata -ldl || exit 1
[ -n "${SHMEM_TEST_CUDA_DRIVER:-}" ] &&
    echo "Driver: $SHMEM_TEST_CUDA_DRIVER (a test double: these figures say nothing about a GPU)"

for i in $(seq "$runs"); do
    "$work/gpu_limits" >>"$work/limits.txt" || { echo "gpu_limits failed: no CUDA device?"; exit 1; }
    "$build/oshrun/oshrun" -np 2 "$work/gpu_bench" >>"$work/strata.txt" || exit 1
    STRATA_GPU_DOUBLE_ASYNC=1 "$build/oshrun/oshrun" -np 2 "$work/gpu_stream_bench" \
        >>"$work/strata.txt" || exit 1
done

# limit_of FIGURE: the name of the limit a figure is read against.
limit_of() {
    case "$1" in
    gpu_put_*_GBps | gpu_get_*_GBps) echo "ipc_d2d_${1#gpu_???_}" ;;
    host_to_gpu_*) echo "pinned_h2d_${1#host_to_gpu_}" ;;
    gpu_to_host_*) echo "pinned_d2h_${1#gpu_to_host_}" ;;
    private_to_gpu_16MiB_GBps) echo ipc_d2d_16MiB_GBps ;;
    private_host_to_gpu_16MiB_GBps) echo pinned_h2d_16MiB_GBps ;;
    *_8B_us | gpu_fetch_add_us) echo ipc_d2d_8B_us ;;
    stream_put_1MiB_GBps | host_put_1MiB_GBps) echo ipc_d2d_1MiB_GBps ;;
    esac
}

printf '%-36s %12s %12s %9s\n' "figure" "Strata" "limit" "/limit"
json=""
for metric in $(awk '{print $1}' "$work/strata.txt" | awk '!seen[$0]++'); do
    name=$(limit_of "$metric")
    limit=""
    [ -n "$name" ] && limit=$(median "$name" "$work/limits.txt")
    case "$metric" in
    *_put_nbi_8B_Mps) # one copy at a time, as a rate
        us=$(median ipc_d2d_8B_us "$work/limits.txt")
        limit=$(awk -v us="$us" 'BEGIN {if (us > 0) printf "%.3f", 1 / us}') ;;
    gpu_heap_memory_per_byte) # a heap costs its size
        limit=1 ;;
    *_rtt_8B_us | *_barrier_us) # a round trip: two 8-byte copies
        us=$(median ipc_d2d_8B_us "$work/limits.txt")
        limit=$(awk -v us="$us" 'BEGIN {if (us > 0) printf "%.3f", 2 * us}') ;;
    gpu_*_1MiB_us | stream_*_1MiB_us | host_*_1MiB_us) # one device-to-device copy of the buffer
        gbps=$(median ipc_d2d_1MiB_GBps "$work/limits.txt")
        limit=$(awk -v g="$gbps" 'BEGIN {if (g > 0) printf "%.1f", 1048576 / g / 1000}') ;;
    esac
    limit_row "$metric" "$limit" "$work/strata.txt"
done
echo "Limits (medians):"
for metric in $(awk '{print $1}' "$work/limits.txt" | awk '!seen[$0]++'); do
    printf '  %-26s %12s\n' "$metric" "$(median "$metric" "$work/limits.txt")"
done
echo "BENCH {$json}"
