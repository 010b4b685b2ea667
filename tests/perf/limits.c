/* SPDX-License-Identifier: BSD-3-Clause */
/* The machine's own limits, measured beside the benchmarks so that every figure can be read
 * against what the hardware allows:
 *   memcpy_1MiB_MBps          single-core memcpy of 1 MiB blocks (what a 1 MiB put can reach)
 *   cacheline_round_trip_ns   two processes on different cores bouncing a flag in one cache line
 *                             of shared memory (the floor of any cross-PE handshake)
 * With the argument "copy", instead, for each OSU message size SIZE:
 *   copy_SIZE_MBps            the best copy between two cores: a process streams SIZE-byte
 *                             blocks into memory shared with a process on another core that has
 *                             just written all of it, as the OSU message-rate benchmarks do; the
 *                             best of memcpy, rep movsb and non-temporal stores
 *   copy_repeated_SIZE_MBps   the same, one block copied again and again to the same place, as
 *                             the OSU latency benchmarks do
 * Prints "name value" lines. Not an OpenSHMEM program. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu % CPU_SETSIZE, &set);
    sched_setaffinity(0, sizeof(set), &set); /* best effort: unpinned still measures */
}

/* Copies into 4 rotating destinations, as the put bandwidth benchmark does. */
static void memcpy_bandwidth(void)
{
    size_t mib = 1 << 20;
    char *src = malloc(mib), *dst = malloc(4 * mib);
    memset(src, 1, mib);
    memset(dst, 0, 4 * mib);
    double best = 0;
    for (int trial = 0; trial < 5; trial++) {
        double t0 = now_ns();
        for (int i = 0; i < 500; i++)
            memcpy(dst + (i % 4) * mib, src, mib);
        double rate = 500.0 * mib / ((now_ns() - t0) / 1e9) / 1e6;
        best = rate > best ? rate : best;
    }
    printf("memcpy_1MiB_MBps %.0f\n", best);
    free(src);
    free(dst);
}

/* The parent writes i, the child answers -i: each round trip moves the line there and back.
 * The best of a few trials: the limit is what the machine can do, not what a noisy moment
 * allowed. */
static double cacheline_trial(volatile int64_t *line)
{
    enum { ROUNDS = 100000 };
    line[0] = 0;
    pid_t child = fork();
    if (child == 0) {
        pin(1);
        for (int64_t i = 1; i <= ROUNDS; i++) {
            while (line[0] != i)
                ;
            line[0] = -i;
        }
        _exit(0);
    }
    pin(0);
    double t0 = now_ns();
    for (int64_t i = 1; i <= ROUNDS; i++) {
        line[0] = i;
        while (line[0] != -i)
            ;
    }
    double elapsed = now_ns() - t0;
    waitpid(child, NULL, 0);
    return elapsed / ROUNDS;
}

static void cacheline_round_trip(void)
{
    volatile int64_t *line =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (line == MAP_FAILED)
        return;
    double best = 0;
    for (int trial = 0; trial < 5; trial++) {
        double t = cacheline_trial(line);
        best = trial == 0 || t < best ? t : best;
    }
    printf("cacheline_round_trip_ns %.1f\n", best);
    munmap((void *)line, 4096);
}

/* ---- The best copy between two cores, per size ---- */

typedef void copy_fn(void *dst, const void *src, size_t len);

static void copy_memcpy(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

#if defined(__x86_64__)
static void copy_movsb(void *dst, const void *src, size_t len)
{
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(len) : : "memory");
}

/* Stores that do not read the target line first: 16-byte aligned stores after a memcpy head. */
static void copy_streaming(void *dst, const void *src, size_t len)
{
    char *to = dst;
    const char *from = src;
    size_t head = (16 - ((uintptr_t)to & 15)) & 15;
    head = head < len ? head : len;
    memcpy(to, from, head);
    to += head, from += head, len -= head;
    for (; len >= 64; len -= 64, to += 64, from += 64)
        for (int i = 0; i < 4; i++)
            _mm_stream_si128((__m128i *)(void *)(to + 16 * i),
                             _mm_loadu_si128((const __m128i *)(const void *)(from + 16 * i)));
    _mm_sfence();
    memcpy(to, from, len);
}
static copy_fn *const copies[] = {copy_memcpy, copy_movsb, copy_streaming};
#else
static copy_fn *const copies[] = {copy_memcpy};
#endif

/* As osu_util.h: 4 MiB the largest message, 50 of them past 8 KiB and 500 below. */
enum { COPY_MAX = 1 << 22, COPY_REGION = 50 * COPY_MAX };

/* The child on another core writes the whole region on each token the parent posts, then
 * answers it: the lines the parent then copies into are the child's, as a target PE's are. */
static void copy_target(volatile int64_t *token, char *region)
{
    pin(1);
    for (int64_t seen = 0;;) {
        int64_t t;
        while ((t = token[0]) == seen)
            sched_yield();
        if (t < 0)
            _exit(0);
        memset(region, (int)t, COPY_REGION);
        token[8] = seen = t;
    }
}

/* Nanoseconds per block of size bytes copied by copy, the best of a few trials: blocks in a row
 * through the region the child has just written, or (repeated) one block again and again, its
 * lines ours after the first copy. Block counts as osu_util.h's loops. */
static double copy_trial(copy_fn *copy, size_t size, int repeated, volatile int64_t *token,
                         char *shared, char *own)
{
    int blocks = repeated ? (size < 8192 ? 1000 : 100) : (size < 8192 ? 500 : 50);
    size_t step = repeated ? 0 : size;
    double best = 0;
    for (int trial = 0; trial < 5; trial++) {
        int64_t t = token[0] + 1;
        if (repeated) {
            copy(shared, own, size);
        } else {
            token[0] = t;
            memset(own, (int)t, COPY_REGION);
            while (token[8] != t)
                sched_yield();
        }
        double t0 = now_ns();
        for (int i = 0; i < blocks; i++)
            copy(shared + i * step, own + i * step, size);
        double ns = (now_ns() - t0) / blocks;
        best = trial == 0 || ns < best ? ns : best;
    }
    return best;
}

static void copy_between_cores(void)
{
    volatile int64_t *token =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *shared =
        mmap(NULL, COPY_REGION, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    /* Shared memory on both sides, as both ends of a put between PEs' heaps are. */
    char *own = mmap(NULL, COPY_REGION, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (token == MAP_FAILED || shared == MAP_FAILED || own == MAP_FAILED)
        return;
    memset(shared, 0, COPY_REGION);
    pid_t child = fork();
    if (child == 0)
        copy_target(token, shared);
    pin(0);
    for (int repeated = 0; repeated < 2; repeated++)
        for (size_t size = 1; size <= COPY_MAX; size *= 2) {
            double best = 0;
            for (size_t c = 0; c < sizeof(copies) / sizeof(copies[0]); c++) {
                double ns = copy_trial(copies[c], size, repeated, token, shared, own);
                best = c == 0 || ns < best ? ns : best;
            }
            printf("copy_%s%zu_MBps %.0f\n", repeated ? "repeated_" : "", size, size / best * 1e3);
        }
    token[0] = -1;
    waitpid(child, NULL, 0);
    munmap(own, COPY_REGION);
    munmap(shared, COPY_REGION);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "copy")) {
        copy_between_cores();
        return 0;
    }
    memcpy_bandwidth();
    cacheline_round_trip();
    return 0;
}
