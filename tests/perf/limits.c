/* SPDX-License-Identifier: BSD-3-Clause */
/* The machine's own limits, measured beside the benchmarks so that every figure can be read
 * against what the hardware allows:
 *   memcpy_1MiB_MBps          single-core memcpy of 1 MiB blocks (what a 1 MiB put can reach)
 *   cacheline_round_trip_ns   two processes on different cores bouncing a flag in one cache line
 *                             of shared memory (the floor of any cross-PE handshake)
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

int main(void)
{
    memcpy_bandwidth();
    cacheline_round_trip();
    return 0;
}
