/* SPDX-License-Identifier: BSD-3-Clause */
/* RMA between two PEs: PE 0 works on PE 1's memory while PE 1 waits in a barrier. Plain
 * OpenSHMEM 1.4, so the same source builds with any implementation. Prints one line per figure:
 * "name value" (nanoseconds, or MB/s and millions of messages per second where the name says).
 *   put8_quiet_{heap,static}_ns  8-byte put followed by quiet
 *   get8_{heap,static}_ns        8-byte get
 *   put_<size>_ns                put of size bytes + quiet, 8 B .. 4 MiB (heap)
 *   get_<size>_ns                get of size bytes (heap)
 *   put_bw_1MiB_MBps             back-to-back 1 MiB puts, quiet at the end
 *   put_nbi_rate_Mmsgps          8-byte put_nbi, quiet every 256
 *   put_signal_round_trip_ns     8-byte put-with-signal to PE 1, which answers the same way */
#include "bench_iterations.h"

#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BYTES (4 << 20)

static long static_word;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Iterations so that each figure takes a few milliseconds at any size. */
static int iterations(size_t bytes)
{
    return bench_iterations(bytes <= 4096 ? 100000 : bytes <= (64 << 10) ? 5000 : 200);
}

static void small_ops(long *heap_word, int target)
{
    long *words[2] = {heap_word, &static_word};
    const char *where[2] = {"heap", "static"};
    long v = 1, sink = 0;
    int iters = bench_iterations(200000);
    for (int w = 0; w < 2; w++) {
        for (int i = 0; i < 1000; i++)
            shmem_long_put(words[w], &v, 1, target);
        shmem_quiet();
        double t0 = now_ns();
        for (int i = 0; i < iters; i++) {
            shmem_long_put(words[w], &v, 1, target);
            shmem_quiet();
        }
        printf("put8_quiet_%s_ns %.1f\n", where[w], (now_ns() - t0) / iters);
        t0 = now_ns();
        for (int i = 0; i < iters; i++) {
            long got;
            shmem_long_get(&got, words[w], 1, target);
            sink += got;
        }
        printf("get8_%s_ns %.1f\n", where[w], (now_ns() - t0) / iters);
    }
    if (sink == 42)
        printf("\n");
}

static void sizes(char *heap, char *local, int target)
{
    static const size_t all[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20, MAX_BYTES};
    for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++) {
        size_t bytes = all[k];
        int iters = iterations(bytes);
        double t0 = now_ns();
        for (int i = 0; i < iters; i++) {
            shmem_putmem(heap, local, bytes, target);
            shmem_quiet();
        }
        printf("put_%zu_ns %.1f\n", bytes, (now_ns() - t0) / iters);
        t0 = now_ns();
        for (int i = 0; i < iters; i++)
            shmem_getmem(local, heap, bytes, target);
        printf("get_%zu_ns %.1f\n", bytes, (now_ns() - t0) / iters);
    }
    size_t mib = 1 << 20;
    double t0 = now_ns();
    for (int i = 0; i < 500; i++)
        shmem_putmem(heap + (i % 4) * mib, local, mib, target);
    shmem_quiet();
    printf("put_bw_1MiB_MBps %.0f\n", 500.0 * mib / ((now_ns() - t0) / 1e9) / 1e6);
}

static void message_rate(long *heap_words, int target)
{
    static long sources[256];
    double t0 = now_ns();
    int total = 0;
    for (int round = 0; round < 1000; round++) {
        for (int i = 0; i < 256; i++)
            shmem_long_put_nbi(&heap_words[i], &sources[i], 1, target);
        shmem_quiet();
        total += 256;
    }
    printf("put_nbi_rate_Mmsgps %.2f\n", total / ((now_ns() - t0) / 1e9) / 1e6);
}

/* Each side waits for the other's signal, then answers: a round trip is two puts-with-signal.
 * Signals are OpenSHMEM 1.5: an older implementation skips this figure. */
static void signal_ping_pong(long *data, uint64_t *signal, int me)
{
#ifdef SHMEM_SIGNAL_SET
    long v = 7;
    int iters = bench_iterations(50000), peer = 1 - me;
    shmem_barrier_all();
    double t0 = now_ns();
    for (int i = 1; i <= iters; i++) {
        if (me == 0) {
            shmem_long_put_signal(data, &v, 1, signal, (uint64_t)i, SHMEM_SIGNAL_SET, peer);
            shmem_signal_wait_until(signal, SHMEM_CMP_GE, (uint64_t)i);
        } else {
            shmem_signal_wait_until(signal, SHMEM_CMP_GE, (uint64_t)i);
            shmem_long_put_signal(data, &v, 1, signal, (uint64_t)i, SHMEM_SIGNAL_SET, peer);
        }
    }
    if (me == 0)
        printf("put_signal_round_trip_ns %.1f\n", (now_ns() - t0) / iters);
#else
    (void)data, (void)signal, (void)me;
#endif
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int target = n > 1 ? 1 : 0;
    char *heap = shmem_malloc(MAX_BYTES);
    long *words = shmem_malloc(256 * sizeof(long));
    uint64_t *signal = shmem_calloc(1, sizeof(uint64_t));
    /* Page-aligned like the heap blocks, so that copies between the two never pay for 4 KiB
     * aliasing of source and destination. */
    char *local;
    if (posix_memalign((void **)&local, 4096, MAX_BYTES))
        return 1;
    memset(local, 1, MAX_BYTES);
    shmem_barrier_all();
    if (me == 0) {
        small_ops(words, target);
        sizes(heap, local, target);
        message_rate(words, target);
        fflush(stdout);
    }
    shmem_barrier_all();
    if (n == 2)
        signal_ping_pong(words, signal, me);
    fflush(stdout);
    shmem_barrier_all();
    free(local);
    shmem_free(signal);
    shmem_free(words);
    shmem_free(heap);
    shmem_finalize();
    return 0;
}
