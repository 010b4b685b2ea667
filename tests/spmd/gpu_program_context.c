/* SPDX-License-Identifier: BSD-3-Clause */
/* A GPU program that owns its device and its context, as one ported from NVSHMEM or MPI+CUDA
 * is: it chooses its GPU (a context of its own, or the runtime's choice of device) before
 * shmem_init, or after it and before its GPU space, and every shmem call on the space (create,
 * malloc, put, get, put_nbi and quiet, atomics, a reduction, barrier, free, destroy, finalize)
 * leaves that context (HIP: device) current on the calling thread, with the heap on the device
 * the program chose and every value right. The library's streams are made at the device's
 * greatest priority, so its copies and kernels go before a program's kernels that wait for them.
 *
 * Usage: gpu_program_context own|runtime DEVICE [late]. own: cuCtxCreate on DEVICE (HIP:
 * hipSetDevice); runtime: the device's primary context made current, as cudaSetDevice does.
 * late: the choice is made after shmem_init. */
#include "check.h"
#include "gpu_runtime.h"

#include <string.h>

enum { N = 1000 };

static uintptr_t mine;

#define CHECK_CURRENT(after)                                                                       \
    CHECK(gpu_runtime_current() == mine, "after %s the program's %s is no longer current", after,  \
          gpu_runtime_is_hip() ? "device" : "context")

static void check_longs(const long *dev, size_t count, long first, long step, const char *what)
{
    long *host = malloc(count * sizeof(long));
    CHECK(host && gpu_runtime_read(host, dev, count * sizeof(long)) == 0, "%s: copy back", what);
    for (size_t i = 0; host && i < count; i++)
        if (host[i] != first + step * (long)i) {
            CHECK(0, "%s: element %zu is %ld, expected %ld", what, i, host[i],
                  first + step * (long)i);
            break;
        }
    free(host);
}

static void exchange(long *src, long *dst, long *counter, shmem_team_t team)
{
    int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    long values[N];
    for (int i = 0; i < N; i++)
        values[i] = me * 100000L + i;
    shmem_long_put(src, values, N, me); /* host -> this PE's GPU heap */
    CHECK_CURRENT("a put from host memory");
    shmem_barrier_all();
    CHECK_CURRENT("shmem_barrier_all");
    shmem_long_put(dst, src, N, next);
    CHECK_CURRENT("a put between GPU heaps");
    shmem_barrier_all();
    check_longs(dst, N, prev * 100000L, 1, "put");
    shmem_long_get(dst, src, N, next);
    CHECK_CURRENT("a get");
    check_longs(dst, N, next * 100000L, 1, "get");
    shmem_barrier_all();
    for (int i = 0; i < N; i += 10)
        shmem_long_put_nbi(dst + i, src + i, 10, next);
    CHECK_CURRENT("put_nbi");
    shmem_quiet();
    CHECK_CURRENT("shmem_quiet");
    shmem_barrier_all();
    check_longs(dst, N, prev * 100000L, 1, "put_nbi");

    long old = shmem_long_atomic_fetch_add(counter, me + 1, 0);
    CHECK_CURRENT("a fetch-add");
    CHECK(old >= 0 && old <= (long)n * (n + 1) / 2 + 1, "fetch-add returned %ld", old);
    shmem_long_atomic_add(counter, 1, next);
    CHECK_CURRENT("an add");
    shmem_barrier_all();
    /* PE 0's word: every PE's fetch-add, and PE n - 1's add. */
    CHECK_EQ(shmem_long_atomic_fetch(counter, 0), (long)n * (n + 1) / 2 + 1);
    CHECK_CURRENT("an atomic fetch");
    shmem_barrier_all();

    CHECK(shmem_long_sum_reduce(team, dst, src, N) == 0, "sum reduction");
    CHECK_CURRENT("a sum reduction");
    check_longs(dst, N, 100000L * n * (n - 1) / 2, n, "sum reduction");
}

int main(int argc, char **argv)
{
    int own = argc > 1 && !strcmp(argv[1], "own"), device = argc > 2 ? atoi(argv[2]) : 0;
    int late = argc > 3 && !strcmp(argv[3], "late");
    if (!late)
        mine = gpu_runtime_choose(device, own);
    shmem_init();
    if (late)
        mine = gpu_runtime_choose(device, own);
    CHECK(mine != 0, "the program chooses device %d (%s)", device, own ? "own context" : "runtime");
    CHECK_CURRENT("shmem_init");

    shmem_space_config_t config = {gpu_runtime_type(), 8 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    shmem_team_t team;
    CHECK(shmem_space_create(&config, &space, &team) == 0 && space != SHMEM_SPACE_INVALID,
          "a GPU space on every PE");
    CHECK_CURRENT("shmem_space_create");
    if (space != SHMEM_SPACE_INVALID) {
        long *src = shmem_space_malloc(space, N * sizeof(long));
        long *dst = shmem_space_malloc(space, N * sizeof(long));
        long *counter = shmem_space_calloc(space, 1, sizeof(long));
        CHECK_CURRENT("shmem_space_malloc");
        CHECK(src && dst && counter, "space allocations");
        int at = gpu_runtime_device_of(src);
        if (at < 0)
            printf("PE %d: the runtime does not say which device holds the heap\n", shmem_my_pe());
        else
            CHECK(at == device, "the heap is on device %d, the program chose %d", at, device);
        if (src && dst && counter)
            exchange(src, dst, counter, team);
        shmem_space_free(space, counter);
        shmem_space_free(space, dst);
        shmem_space_free(space, src);
        CHECK_CURRENT("shmem_space_free");
        shmem_team_destroy(team);
        CHECK(shmem_space_destroy(space) == 0, "space destroy");
        CHECK_CURRENT("shmem_space_destroy");
    }
    gpu_streams_fn made = gpu_runtime_double_streams(),
                   below = gpu_runtime_double_streams_below_greatest(),
                   without_rdma = gpu_runtime_double_count("cuda_double_created_without_rdma");
    if (made && below) {
        CHECK(made() > 0, "the library made streams");
        CHECK_EQ(below(), 0);
    }
    /* VMM heaps are GPUDirect RDMA capable where the device can make them so. */
    if (without_rdma)
        CHECK_EQ(without_rdma(), 0);
    int failed = check_failures;
    shmem_finalize();
    if (gpu_runtime_current() != mine) {
        fprintf(stderr, "after shmem_finalize the program's context is no longer current\n");
        failed++;
    }
    return failed ? 1 : 0;
}
