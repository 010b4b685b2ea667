/* SPDX-License-Identifier: BSD-3-Clause */
/* Waits while other threads want every core: each PE runs one busy thread per online CPU beside
 * its work, so the machine's runnable threads outnumber its CPUs and a wait that progresses the
 * transport sleeps on the transport's events between spins instead of yielding
 * (transport_wait_idle). Round trips (fetch-add, compare-swap, get), a put and its quiet, a
 * barrier, a broadcast and a wait on a flag the previous PE puts must give, round after round, the
 * values they give on idle cores, on every PE. */
#include "check.h"

#include <pthread.h>
#include <unistd.h>

enum { ROUNDS = 100, WORDS = 16 };
static long counter, swapped, table[WORDS], slot, bcast_src[WORDS], bcast_dest[WORDS];
static int flag, busy_stop;
static long psync[SHMEM_BCAST_SYNC_SIZE];

static void *busy(void *arg)
{
    volatile unsigned long x = 0;
    (void)arg;
    while (!__atomic_load_n(&busy_stop, __ATOMIC_ACQUIRE))
        x++;
    return NULL;
}

static void one_round(int round, int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    /* Each PE adds 1 to the next PE's counter once a round. */
    long old = shmem_long_atomic_fetch_add(&counter, 1, next);
    CHECK(old == round, "round %d: fetch-add on PE %d returned %ld", round, next, old);
    /* The next PE's word holds the round it was last swapped in by this PE. */
    long seen = shmem_long_atomic_compare_swap(&swapped, round, round + 1, next);
    CHECK(seen == round, "round %d: compare-swap on PE %d saw %ld", round, next, seen);
    long row[WORDS];
    shmem_long_get(row, table, WORDS, next);
    for (int i = 0; i < WORDS; i++)
        CHECK_EQ(row[i], 1000L * next + i);
    long mine = 1000000L * round + me;
    shmem_long_put(&slot, &mine, 1, next);
    shmem_quiet();
    shmem_barrier_all();
    CHECK_EQ(slot, 1000000L * round + prev);
    int root = round % n;
    for (int i = 0; i < WORDS; i++)
        bcast_src[i] = 100L * round + i;
    shmem_barrier_all();
    shmem_broadcast64(bcast_dest, bcast_src, WORDS, root, 0, 0, n, psync);
    if (me != root)
        for (int i = 0; i < WORDS; i++)
            CHECK_EQ(bcast_dest[i], 100L * round + i);
    shmem_int_p(&flag, round + 1, next);
    shmem_int_wait_until(&flag, SHMEM_CMP_GE, round + 1);
    CHECK(flag == round + 1, "round %d: flag from PE %d is %d", round, prev, flag);
}

int main(void)
{
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < WORDS; i++)
        table[i] = 1000L * me + i;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    pthread_t threads[64];
    int started = 0;
    for (; started < cpus && started < 64; started++)
        if (pthread_create(&threads[started], NULL, busy, NULL))
            break;
    CHECK(started > 0, "no busy thread started");
    shmem_barrier_all();
    for (int round = 0; round < ROUNDS; round++)
        one_round(round, me, n);
    __atomic_store_n(&busy_stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    shmem_barrier_all();
    CHECK_EQ(counter, ROUNDS);
    CHECK_EQ(swapped, ROUNDS);
    shmem_finalize();
    return check_finish();
}
