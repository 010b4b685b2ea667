/* SPDX-License-Identifier: BSD-3-Clause */
/* Collective latency on all PEs: barrier_all, and broadcast, fcollect, sum reduction and alltoall
 * of 8 B, 4 KiB, 64 KiB and 1 MiB per PE, through the active-set forms that every OpenSHMEM
 * since 1.0 has, so the same source builds with any implementation; and each 8-byte one followed
 * by shmem_barrier_all, as programs often call them (the barrier's quiet completes whatever of
 * the collective a library counts as outstanding).
 * Each figure is the slowest PE's time per call: a stream of collectives is done when every PE
 * is done with it, and a root whose sends a library only queues may finish its loop long before
 * the others have their data (an eager broadcast's root, 4 KiB between two nodes: 3.5-4.9 us a
 * call, its receiver 6.2-7.0 us).
 * Prints one line per figure: "name microseconds". */
#include <shmem.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_BYTES (1 << 20)

/* Large enough for every implementation's pSync sizes; two of them, used in turn, so that
 * consecutive calls need no barrier in between (the spec's rule for pSync reuse). */
static long psync[2][4096];
static long pwrk[MAX_BYTES / 8 / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];
/* For slowest(): its own pSync, reused only after a barrier. */
static long psync_slowest[SHMEM_REDUCE_SYNC_SIZE];
static double pwrk_slowest[SHMEM_REDUCE_MIN_WRKDATA_SIZE + 4];
static double times_mine[4], times_slowest[4];

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Calls timed per figure, after a tenth as many untimed ones: the first use of a size faults in
 * pages of dst and of the libraries' buffers (3 us a page on the test VM; 13-18 ms for the first
 * 1 MiB fcollect between two nodes), and a TCP connection's first megabytes go slower while it
 * ramps up (a stream of 1 MiB fcollects between two nodes, both libraries: 450-700 us a call
 * over its first 20 calls, 350-420 after). Twenty 1 MiB calls after one, as before, timed
 * mostly the ramp and swung by 2x from run to run. */
static int iterations(size_t bytes)
{
    return bytes <= 4096 ? 2000 : bytes <= 65536 ? 200 : 100;
}

/* Collective op (0 broadcast, 1 fcollect, 2 sum reduction, 3 alltoall) of words 64-bit words
 * per PE over all n PEs. */
static void collective(int op, char *dst, const char *src, size_t words, int n, long *ps)
{
    if (op == 0)
        shmem_broadcast64(dst, src, words, 0, 0, 0, n, ps);
    else if (op == 1)
        shmem_fcollect64(dst, src, words, 0, 0, n, ps);
    else if (op == 2)
        shmem_long_sum_to_all((long *)dst, (long *)src, (int)words, 0, 0, n, pwrk, ps);
    else
        shmem_alltoall64(dst, src, words, 0, 0, n, ps);
}

/* Replaces times[0 .. count) with their maxima over the n PEs, outside the timed loops. */
static void slowest(double *times, int count, int n)
{
    for (int i = 0; i < count; i++)
        times_mine[i] = times[i];
    shmem_barrier_all();
    shmem_double_max_to_all(times_slowest, times_mine, count, 0, 0, n, pwrk_slowest, psync_slowest);
    for (int i = 0; i < count; i++)
        times[i] = times_slowest[i];
}

int main(void)
{
    for (int i = 0; i < 4096; i++)
        psync[0][i] = psync[1][i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync_slowest[i] = SHMEM_SYNC_VALUE;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    char *src = shmem_malloc((size_t)MAX_BYTES * n), *dst = shmem_malloc((size_t)MAX_BYTES * n);
    memset(src, 1, (size_t)MAX_BYTES * n);
    const size_t sizes[] = {8, 4096, 65536, MAX_BYTES};
    const char *names[] = {"8B", "4KiB", "64KiB", "1MiB"};
    const char *ops[] = {"broadcast", "fcollect", "reduce_sum", "alltoall"}; /* collective()'s */

    shmem_barrier_all();
    double t0 = now_us();
    for (int i = 0; i < 20000; i++)
        shmem_barrier_all();
    double barrier = (now_us() - t0) / 20000;
    slowest(&barrier, 1, n);
    if (me == 0)
        printf("barrier_all_us %.3f\n", barrier);

    for (int s = 0; s < 4; s++) {
        size_t bytes = sizes[s], words = bytes / 8;
        int iters = iterations(bytes);
        double times[4];
        for (int op = 0; op < 4; op++) {
            /* Barriers around the untimed calls, so that no pSync is reused without one in
             * between. */
            shmem_barrier_all();
            for (int i = 0; i < iters / 10; i++)
                collective(op, dst, src, words, n, psync[i & 1]);
            shmem_barrier_all();
            t0 = now_us();
            for (int i = 0; i < iters; i++)
                collective(op, dst, src, words, n, psync[i & 1]);
            times[op] = (now_us() - t0) / iters;
        }
        slowest(times, 4, n);
        for (int op = 0; op < 4 && me == 0; op++)
            printf("%s_%s_us %.3f\n", ops[op], names[s], times[op]);
    }
    double took[4];
    for (int op = 0; op < 4; op++) {
        shmem_barrier_all();
        double start = now_us();
        for (int i = 0; i < iterations(8); i++) {
            collective(op, dst, src, 1, n, psync[i & 1]);
            shmem_barrier_all();
        }
        took[op] = (now_us() - start) / iterations(8);
    }
    slowest(took, 4, n);
    for (int op = 0; op < 4 && me == 0; op++)
        printf("%s_then_barrier_8B_us %.3f\n", ops[op], took[op]);
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return 0;
}
