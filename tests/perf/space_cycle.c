/* SPDX-License-Identifier: BSD-3-Clause */
/* The cost of a space's life: create a CPU space, allocate, put a word to the next PE, sync,
 * free, destroy the team and the space. Prints the median cycle time around cycle 10 and around
 * cycle 1000: a creation must cost the same however many came before it. Strata only (the spaces
 * API). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CYCLES 1000
#define WINDOW 11 /* cycles timed around each point */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int n)
{
    qsort(values, (size_t)n, sizeof(double), by_value);
    return values[n / 2];
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    double early[WINDOW], late[WINDOW];
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        shmem_barrier_all();
        double start = now_ms();
        shmem_space_config_t config = {SHMEM_DEVICE_CPU, 1 << 16, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space;
        shmem_team_t team;
        if (shmem_space_create(&config, &space, &team))
            shmem_global_exit(1);
        long *word = shmem_space_malloc(space, sizeof(long));
        shmem_long_p(word, me, (me + 1) % n);
        shmem_team_sync(team);
        shmem_space_free(space, word);
        shmem_team_destroy(team);
        shmem_space_destroy(space);
        double took = now_ms() - start;
        if (cycle >= 10 - WINDOW / 2 && cycle <= 10 + WINDOW / 2)
            early[cycle - (10 - WINDOW / 2)] = took;
        if (cycle >= CYCLES - WINDOW)
            late[cycle - (CYCLES - WINDOW)] = took;
    }
    if (me == 0) {
        printf("space_cycle_%dpe_at_10_ms %.3f\n", n, median(early, WINDOW));
        printf("space_cycle_%dpe_at_1000_ms %.3f\n", n, median(late, WINDOW));
    }
    shmem_finalize();
    return 0;
}
