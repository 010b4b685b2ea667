/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory traits: what a space's page size and NUMA placement cost or bring. On 2 PEs, PE 0 puts
 * and gets 1 MiB into PE 1's part of a 64 MiB space and ping-pongs 8 bytes with it, in the default
 * heap and in spaces of base pages, 2 MiB pages, transparent huge pages, bound to node 0 and
 * interleaved, beside memcpy over the same pattern; then chases random 8-byte gets across PE 1's
 * part of a space of RANDOM_BYTES (4 GiB unless given) in base pages and in 2 MiB pages, beside
 * plain loads through the same mapping, the machine's limit for such loads. A configuration whose
 * space cannot be made here (no huge pages reserved) prints no figure. Prints "NAME VALUE" lines.
 * Strata only (shmemx.h). Usage: traits_bench [RANDOM_BYTES] */
#include <shmem.h>
#include <shmemx.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB ((size_t)1 << 20)
#define SPACE_BYTES (64 * MIB)
#define ROUNDS 5

static int me;
static volatile long sink; /* keeps results the benchmark only times */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct config {
    const char *name;
    shmemx_space_traits_t traits; /* mask 0 and name "default": the default heap */
};

/* A space of size bytes with traits t on every PE, or SHMEM_SPACE_INVALID where it cannot be. */
static shmem_space_t space_make(size_t size, const shmemx_space_traits_t *t, shmem_team_t *team)
{
    shmem_space_config_t config = {SHMEM_DEVICE_CPU, size, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    if (shmemx_space_create_traits(&config, t, &space, team))
        return SHMEM_SPACE_INVALID;
    return space;
}

static void space_drop(shmem_space_t space, shmem_team_t team)
{
    shmem_team_destroy(team);
    shmem_space_destroy(space);
}

/* 1 MiB copies rotate through SPREAD bytes, beyond the caches of a small machine, so that the
 * memory's placement shows; the limit is memcpy over the same pattern in private memory. */
#define SPREAD (32 * MIB)
#define COPIES 64

static double best_of(double a, double b)
{
    return a < b ? a : b;
}

/* MB/s of 1 MiB puts and gets from PE 0 into buf (SPREAD bytes) on PE 1, best of ROUNDS. */
static void bandwidth(const char *name, char *buf, char *local)
{
    double best_put = 1e30, best_get = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        shmem_barrier_all();
        if (me == 0) {
            double t0 = now_ns();
            for (int i = 0; i < COPIES; i++)
                shmem_putmem(buf + (size_t)i * MIB % SPREAD, local + (size_t)i * MIB % SPREAD, MIB,
                             1);
            shmem_quiet();
            double t1 = now_ns();
            for (int i = 0; i < COPIES; i++)
                shmem_getmem(local + (size_t)i * MIB % SPREAD, buf + (size_t)i * MIB % SPREAD, MIB,
                             1);
            double t2 = now_ns();
            best_put = best_of(best_put, t1 - t0);
            best_get = best_of(best_get, t2 - t1);
        }
    }
    if (me == 0) {
        printf("traits_put_1MiB_%s_MBps %.0f\n", name, COPIES * (double)MIB / best_put * 1e3);
        printf("traits_get_1MiB_%s_MBps %.0f\n", name, COPIES * (double)MIB / best_get * 1e3);
    }
}

/* The same pattern as memcpy between two private buffers of this PE. */
static void bandwidth_limit(void)
{
    char *a = malloc(SPREAD), *b = malloc(SPREAD);
    memset(a, 1, SPREAD);
    memset(b, 2, SPREAD);
    double best = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns();
        for (int i = 0; i < COPIES; i++)
            memcpy(b + (size_t)i * MIB % SPREAD, a + (size_t)i * MIB % SPREAD, MIB);
        best = best_of(best, now_ns() - t0);
    }
    sink = b[7];
    printf("traits_memcpy_1MiB_limit_MBps %.0f\n", COPIES * (double)MIB / best * 1e3);
    free(a);
    free(b);
}

/* The round trip of an 8-byte put answered by the other PE, best of ROUNDS. */
static void pingpong(const char *name, long *flags)
{
    enum { REPS = 20000 };
    double best = 1e30;
    for (int r = 0; r < ROUNDS; r++) {
        flags[0] = flags[1] = 0;
        shmem_barrier_all();
        double t0 = now_ns();
        for (long i = 1; i <= REPS; i++) {
            if (me == 0) {
                shmem_long_p(&flags[0], i, 1);
                shmem_long_wait_until(&flags[1], SHMEM_CMP_EQ, i);
            } else {
                shmem_long_wait_until(&flags[0], SHMEM_CMP_EQ, i);
                shmem_long_p(&flags[1], i, 0);
            }
        }
        best = best_of(best, (now_ns() - t0) / REPS);
    }
    if (me == 0)
        printf("traits_pingpong_8B_%s_ns %.1f\n", name, best);
}

static void measure(const struct config *c)
{
    shmem_team_t team = SHMEM_TEAM_INVALID;
    shmem_space_t space = SHMEM_SPACE_DEFAULT;
    int in_default = !c->traits.mask;
    if (!in_default && (space = space_make(SPACE_BYTES, &c->traits, &team)) == SHMEM_SPACE_INVALID)
        return;
    char *buf = in_default ? shmem_malloc(SPREAD + MIB) : shmem_space_malloc(space, SPREAD + MIB);
    long *flags = (long *)(buf + SPREAD);
    char *local = malloc(SPREAD);
    memset(local, 1, SPREAD);
    memset(buf, 0, SPREAD + MIB);
    bandwidth(c->name, buf, local);
    pingpong(c->name, flags);
    free(local);
    shmem_barrier_all();
    if (in_default) {
        shmem_free(buf);
    } else {
        shmem_space_free(space, buf);
        space_drop(space, team);
    }
}

/* ns per dependent random 8-byte read of n words through read (a get, or a load), best of
 * ROUNDS: each index depends on the value the last read returned, so reads cannot overlap. */
#define RANDOM_CHASE(read)                                                                         \
    do {                                                                                           \
        enum { REPS = 400000 };                                                                    \
        uint64_t x = 88172645463325252ull;                                                         \
        size_t index = 0;                                                                          \
        for (int r = 0; r < ROUNDS; r++) {                                                         \
            double t0 = now_ns();                                                                  \
            for (int i = 0; i < REPS; i++) {                                                       \
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;                                           \
                index = (size_t)((x ^ (uint64_t)(read)) % n);                                      \
            }                                                                                      \
            best = best_of(best, (now_ns() - t0) / REPS);                                          \
        }                                                                                          \
        sink = (long)index;                                                                        \
    } while (0)

static double random_gets(const long *words, size_t n, int pe)
{
    double best = 1e30;
    RANDOM_CHASE(shmem_long_g(&words[index], pe));
    return best;
}

static double random_loads(const volatile long *words, size_t n)
{
    double best = 1e30;
    RANDOM_CHASE(words[index]);
    return best;
}

/* The page-size share of random gets across a large space: PE 1 touches its part, and PE 0 maps
 * every page of it (so that the chase measures the TLB, not first-touch faults), chases through
 * it with gets, then with plain loads through the same mapping: the limit for that page size. */
static void random_space(const char *name, size_t bytes, const shmemx_space_traits_t *t)
{
    shmem_team_t team;
    shmem_space_t space = space_make(bytes, t, &team);
    if (space == SHMEM_SPACE_INVALID)
        return;
    long *words = shmem_space_malloc(space, bytes - MIB);
    size_t n = (bytes - MIB) / sizeof(long);
    if (me == 1)
        memset(words, 0, n * sizeof(long));
    shmem_barrier_all();
    const volatile long *peer = shmem_ptr(words, 1);
    if (me == 0 && peer) {
        for (size_t i = 0; i < n; i += 4096 / sizeof(long))
            sink = peer[i];
        printf("traits_random_g_%zuMiB_%s_ns %.1f\n", bytes / MIB, name, random_gets(words, n, 1));
        printf("traits_random_load_%zuMiB_%s_ns %.1f\n", bytes / MIB, name, random_loads(peer, n));
    }
    shmem_barrier_all();
    shmem_space_free(space, words);
    space_drop(space, team);
}

int main(int argc, char **argv)
{
    shmem_init();
    me = shmem_my_pe();
    if (shmem_n_pes() != 2) {
        if (me == 0)
            fprintf(stderr, "traits_bench: run it on 2 PEs\n");
        shmem_finalize();
        return 1;
    }
    const uint64_t page = SHMEMX_SPACE_TRAIT_PAGE_SIZE, numa = SHMEMX_SPACE_TRAIT_NUMA_DOMAIN;
    const struct config configs[] = {
        {"default", {0, 0, 0, 0, 0, 0}},
        {"base", {page, 4096, 0, 0, 0, 0}},
        {"huge2M", {page, 2 * MIB, 0, 0, 0, 0}},
        {"thp", {page, SHMEMX_SPACE_PAGE_TRANSPARENT, 0, 0, 0, 0}},
        {"node0", {numa, 0, 0, 0, 0, 0}},
        {"interleave", {numa, 0, 0, SHMEMX_SPACE_NUMA_INTERLEAVE, 0, 0}},
    };
    if (me == 0)
        bandwidth_limit();
    for (size_t i = 0; i < sizeof(configs) / sizeof(*configs); i++)
        measure(&configs[i]);
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)4 << 30;
    random_space("4KiB", bytes, &configs[1].traits);
    random_space("2MiB", bytes, &configs[2].traits);
    shmem_finalize();
    return 0;
}
