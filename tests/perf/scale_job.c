/* SPDX-License-Identifier: BSD-3-Clause */
/* A whole job as many PEs run it: start-up, a barrier, an fcollect, a sum reduction, an atomic
 * and a put around the ring, each checked on every PE, and (Strata) a memory space made, used
 * and destroyed. Plain OpenSHMEM 1.4 apart from the space, so the same source builds with any
 * implementation. A PE whose check fails says so and exits 1. PE 0 prints "name value" lines:
 *   init_ms            the longest shmem_init of any PE
 *   init_cpu_ms        the most CPU time any PE's shmem_init took, its threads included: what
 *                      start-up costs a PE that has a core to itself
 *   work_ms            PE 0's time from the first barrier to the last check
 *   peak_rss_KiB_max   the largest peak resident set of any PE (getrusage)
 *   peak_rss_KiB_mean  the mean of the PEs' peak resident sets */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define SYNC_WORDS                                                                                 \
    (SHMEM_REDUCE_SYNC_SIZE > SHMEM_COLLECT_SYNC_SIZE ? SHMEM_REDUCE_SYNC_SIZE                     \
                                                      : SHMEM_COLLECT_SYNC_SIZE)

static long psync[SYNC_WORDS];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static double dwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long arrivals, from_left;
static double init_ms[2], init_ms_max[2]; /* wall, CPU */
static long rss[2], rss_max[2], rss_sum[2];
static int failures;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "scale_job: PE %d: ", shmem_my_pe());                                  \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static double clock_ms(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static double now_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

/* The 1.4 collectives over all PEs reuse psync: a barrier between two calls lets every PE
 * finish with it first. */
static void psync_ready(void)
{
    for (int i = 0; i < SYNC_WORDS; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
}

static void check_fcollect(int me, int n)
{
    int *mine = shmem_malloc(sizeof(int)), *all = shmem_malloc((size_t)n * sizeof(int));
    EXPECT(mine && all, "no heap for the fcollect");
    if (!mine || !all)
        return;
    *mine = me * 3 + 1;
    shmem_fcollect32(all, mine, 1, 0, 0, n, psync);
    for (int pe = 0; pe < n; pe++)
        EXPECT(all[pe] == pe * 3 + 1, "fcollect: word of PE %d is %d", pe, all[pe]);
    shmem_free(all);
    shmem_free(mine);
}

static void check_sum(int me, int n)
{
    long *value = shmem_malloc(sizeof(long)), *sum = shmem_malloc(sizeof(long));
    EXPECT(value && sum, "no heap for the reduction");
    if (!value || !sum)
        return;
    *value = me + 1;
    shmem_long_sum_to_all(sum, value, 1, 0, 0, n, pwrk, psync);
    EXPECT(*sum == (long)n * (n + 1) / 2, "sum of 1..%d is %ld", n, *sum);
    shmem_free(sum);
    shmem_free(value);
}

/* Every PE increments a counter on PE 0: the values fetched are each of 0..n-1 once, so their
 * sum is known, and PE 0's counter ends at n. */
static void check_atomic(int n)
{
    long *fetched = shmem_malloc(sizeof(long)), *total = shmem_malloc(sizeof(long));
    EXPECT(fetched && total, "no heap for the atomic");
    if (!fetched || !total)
        return;
    *fetched = shmem_long_atomic_fetch_inc(&arrivals, 0);
    EXPECT(*fetched >= 0 && *fetched < n, "fetch-increment gave %ld", *fetched);
    psync_ready();
    shmem_long_sum_to_all(total, fetched, 1, 0, 0, n, pwrk, psync);
    EXPECT(*total == (long)n * (n - 1) / 2, "fetched values sum to %ld", *total);
    if (shmem_my_pe() == 0)
        EXPECT(arrivals == n, "counter on PE 0 is %ld after %d increments", arrivals, n);
    shmem_free(total);
    shmem_free(fetched);
}

static void check_ring(int me, int n)
{
    shmem_long_p(&from_left, me + 1, (me + 1) % n);
    shmem_barrier_all();
    EXPECT(from_left == (me + n - 1) % n + 1, "from the left: %ld", from_left);
}

#ifdef SHMEM_SPACE_CAP_RMA
/* A host space over every PE: made, a word put around its team's ring, destroyed. */
static void check_space(void)
{
    shmem_space_config_t config = {SHMEM_DEVICE_CPU, 1 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    shmem_team_t team;
    int rc = shmem_space_create(&config, &space, &team);
    EXPECT(rc == 0 && space != SHMEM_SPACE_INVALID, "space creation returned %d", rc);
    if (rc)
        return;
    int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);
    long *word = shmem_space_malloc(space, sizeof(long));
    EXPECT(word != NULL, "no memory in the space");
    if (word) {
        shmem_long_p(word, me, shmem_team_translate_pe(team, (me + 1) % n, SHMEM_TEAM_WORLD));
        shmem_quiet();
        shmem_team_sync(team);
        EXPECT(*word == (me + n - 1) % n, "space word from the left: %ld", *word);
        shmem_space_free(space, word);
    }
    shmem_team_destroy(team);
    EXPECT(shmem_space_destroy(space) == 0, "space destruction");
}
#endif

static void report(int me, int n, double work_ms)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    rss[0] = rss[1] = usage.ru_maxrss;
    psync_ready();
    shmem_double_max_to_all(init_ms_max, init_ms, 2, 0, 0, n, dwrk, psync);
    psync_ready();
    shmem_long_max_to_all(rss_max, rss, 2, 0, 0, n, pwrk, psync);
    psync_ready();
    shmem_long_sum_to_all(rss_sum, rss, 2, 0, 0, n, pwrk, psync);
    if (me == 0)
        printf("init_ms %.0f\ninit_cpu_ms %.0f\nwork_ms %.0f\npeak_rss_KiB_max %ld\n"
               "peak_rss_KiB_mean %ld\n",
               init_ms_max[0], init_ms_max[1], work_ms, rss_max[0], rss_sum[0] / n);
}

int main(void)
{
    double start = now_ms(), start_cpu = clock_ms(CLOCK_PROCESS_CPUTIME_ID);
    shmem_init();
    init_ms[0] = now_ms() - start;
    init_ms[1] = clock_ms(CLOCK_PROCESS_CPUTIME_ID) - start_cpu;
    int me = shmem_my_pe(), n = shmem_n_pes();
    psync_ready();
    double work_start = now_ms();
    check_fcollect(me, n);
    psync_ready();
    check_sum(me, n);
    psync_ready();
    check_atomic(n);
    check_ring(me, n);
#ifdef SHMEM_SPACE_CAP_RMA
    check_space();
#endif
    shmem_barrier_all();
    report(me, n, now_ms() - work_start);
    shmem_finalize();
    return failures ? 1 : 0;
}
