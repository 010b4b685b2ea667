/* SPDX-License-Identifier: BSD-3-Clause */
/* Latency of atomics and locks between two PEs: PE 0 operates on PE 1's memory (a global and a
 * heap word) while PE 1 waits in a barrier; and the rate of the specification's batch example,
 * non-fetching XORs into PE 1's table. Plain OpenSHMEM 1.4, so the same source builds with any
 * implementation (a library with 1.6 sessions runs the XORs in a batch session). Prints one line
 * per figure: "name value", nanoseconds or millions of updates a second. */
#include "bench_iterations.h"

#include <shmem.h>
#include <stdio.h>
#include <time.h>

#define LOCKS 16

static long word;
static long locks[LOCKS];

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#define XOR_TABLE_WORDS 1024

/* 8-byte XORs of pseudo-random values into random words of the target's table on a context of
 * their own, as the batch example issues them, a quiet every 256. */
static void xor_rate(unsigned long *table, int target, int iters)
{
    shmem_ctx_t ctx;
    if (shmem_ctx_create(0, &ctx))
        ctx = SHMEM_CTX_DEFAULT;
#ifdef SHMEM_CTX_SESSION_BATCH
    shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, NULL, 0);
#endif
    unsigned long value = 12345;
    double t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        value = value * 6364136223846793005ul + 1442695040888963407ul;
        shmem_ctx_ulong_atomic_xor(ctx, &table[(value >> 20) % XOR_TABLE_WORDS], value, target);
        if (i % 256 == 255)
            shmem_ctx_quiet(ctx);
    }
#ifdef SHMEM_CTX_SESSION_BATCH
    shmem_ctx_session_stop(ctx);
#endif
    shmem_ctx_quiet(ctx);
    printf("xor_rate_Mupdps %.3f\n", iters / ((now_ns() - t0) / 1e9) / 1e6);
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int target = n > 1 ? 1 : 0;
    long *heap_word = shmem_malloc(sizeof(long));
    unsigned long *table = shmem_calloc(XOR_TABLE_WORDS, sizeof(unsigned long));
    long sink = 0;
    int iters = bench_iterations(200000), lock_iters = bench_iterations(20000);
    shmem_barrier_all();
    if (me == 0) {
        long *words[2] = {&word, heap_word};
        const char *where[2] = {"static", "heap"};
        for (int w = 0; w < 2; w++) {
            for (int i = 0; i < 1000; i++)
                sink += shmem_long_atomic_fetch_add(words[w], 1, target);
            double t0 = now_ns();
            for (int i = 0; i < iters; i++)
                sink += shmem_long_atomic_fetch_add(words[w], 1, target);
            printf("fetch_add_%s_ns %.1f\n", where[w], (now_ns() - t0) / iters);
            long v = shmem_long_atomic_fetch(words[w], target);
            t0 = now_ns();
            for (int i = 0; i < iters; i++)
                sink += shmem_long_atomic_compare_swap(words[w], v + i, v + i + 1, target);
            printf("compare_swap_%s_ns %.1f\n", where[w], (now_ns() - t0) / iters);
        }
        xor_rate(table, target, iters);
        if (sink == 42)
            printf("\n");
        fflush(stdout);
    }
    /* The last PE takes and releases each of 16 locks in turn. Where an implementation keeps a
     * lock's state (on one PE, or on a PE chosen by the lock's address) decides whether taking it
     * crosses PEs; over 16 locks the figure averages those places instead of depending on where
     * the linker put one lock. */
    shmem_barrier_all();
    if (me == n - 1) {
        double t0 = now_ns();
        for (int i = 0; i < lock_iters; i++) {
            shmem_set_lock(&locks[i % LOCKS]);
            shmem_clear_lock(&locks[i % LOCKS]);
        }
        printf("lock_round_trip_ns %.1f\n", (now_ns() - t0) / lock_iters);
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}
