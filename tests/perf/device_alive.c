/* SPDX-License-Identifier: BSD-3-Clause */
/* What device spaces on this PE cost host traffic: PE 0 puts, gets and fetch-adds 8 bytes on
 * PE 1's heap, first with no device space, then with 1, 4 and 16 test device spaces alive on both
 * PEs (SHMEM_TEST_DEVICE_PES=0-1), and prints the ratio of each time with the spaces to without
 * (device_alive_<op>_heap_ratio for one space, _ratio_4 and _ratio_16 for more) and the times
 * without (device_alive_<op>_ns). Host operations keep their fast path beside device memory: the
 * ratios should stay near 1. Strata only (the spaces API). */
#include <shmem.h>
#include <stdio.h>
#include <time.h>

#define ITERS 200000

static volatile long fetched; /* keeps the fetch-adds' results alive */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per put, get and fetch-add of 8 bytes on PE 1's heap word, measured by PE 0; each kept
 * as the least seen so far in best[]. */
static void measure(long *word, double best[3])
{
    long value = 1, sum = 0;
    shmem_barrier_all();
    if (shmem_my_pe() == 0) {
        double t0 = now_ns();
        for (int i = 0; i < ITERS; i++)
            shmem_long_put(word, &value, 1, 1);
        shmem_quiet();
        double t1 = now_ns();
        for (int i = 0; i < ITERS; i++)
            shmem_long_get(&value, word, 1, 1);
        double t2 = now_ns();
        for (int i = 0; i < ITERS; i++)
            sum += shmem_long_atomic_fetch_add(word, 1, 1);
        double t3 = now_ns(), ns[3] = {(t1 - t0) / ITERS, (t2 - t1) / ITERS, (t3 - t2) / ITERS};
        for (int k = 0; k < 3; k++)
            if (ns[k] < best[k])
                best[k] = ns[k];
        fetched = sum;
    }
    shmem_barrier_all();
}

/* Rounds alternate between no device space and some alive, so that the machine's noise hits
 * both alike; the least time of each is kept. */
#define ROUNDS 5
#define MAX_SPACES 16

/* Creates n test device spaces (each with its team), measures, destroys them; 0 when the PEs
 * have no device to make them on. */
static int measure_with(long *word, int n, double best[3])
{
    shmem_space_t spaces[MAX_SPACES];
    shmem_team_t teams[MAX_SPACES];
    int made = 0;
    for (; made < n; made++) {
        shmem_space_config_t config = {SHMEM_DEVICE_GPU, 1 << 20, SHMEM_SPACE_FLAG_DEFAULT};
        if (shmem_space_create(&config, &spaces[made], &teams[made]) != 0 ||
            spaces[made] == SHMEM_SPACE_INVALID)
            break;
    }
    if (made == n)
        measure(word, best);
    while (made-- > 0) {
        shmem_team_destroy(teams[made]);
        shmem_space_destroy(spaces[made]);
    }
    return made == -1 && n > 0;
}

int main(void)
{
    shmem_init();
    if (shmem_n_pes() < 2) {
        shmem_finalize();
        return 0;
    }
    long *word = shmem_calloc(1, sizeof(long));
    static const int counts[3] = {1, 4, MAX_SPACES};
    double without[3] = {1e30, 1e30, 1e30}, with[3][3];
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < 3; k++)
            with[c][k] = 1e30;
    int alive = 1;
    measure(word, without); /* warm-up */
    for (int round = 0; round < ROUNDS && alive; round++) {
        measure(word, without);
        for (int c = 0; c < 3 && alive; c++)
            alive = measure_with(word, counts[c], with[c]);
    }
    if (shmem_my_pe() == 0 && alive) {
        const char *names[3] = {"put8", "get8", "fetch_add"};
        for (int i = 0; i < 3; i++) {
            printf("device_alive_%s_ns %.2f\n", names[i], without[i]);
            printf("device_alive_%s_heap_ratio %.3f\n", names[i], with[0][i] / without[i]);
            for (int c = 1; c < 3; c++)
                printf("device_alive_%s_heap_ratio_%d %.3f\n", names[i], counts[c],
                       with[c][i] / without[i]);
        }
    }
    shmem_free(word);
    shmem_finalize();
    return 0;
}
