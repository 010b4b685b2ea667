/* SPDX-License-Identifier: BSD-3-Clause */
/* What a quiet waits for between PEs that the transport reaches by message (UCX over TCP): the
 * program's puts-with-signal, signals and non-fetching atomics are one-way messages that a quiet
 * confirms with a flush (the target answers once it has performed everything sent before), while
 * a collective's own messages are not, since every member waits for what was sent to it before it
 * leaves the collective; a barrier after a collective then costs no flush round trip.
 * Run with SHMEM_LOG=rma, which prints "a flush asks PE n to confirm ..." for each flush message;
 * the suite counts those lines.
 *   coll_flush coll  collectives of every kind (teams and active sets, small and pipelined),
 *                    each followed by shmem_barrier_all and a quiet; checks their results (no
 *                    flush expected)
 *   coll_flush user  one put-with-signal, one with no data, one signal and one atomic add to the
 *                    next PE, each followed by a quiet; checks that they landed (4 flushes a PE) */
#include "check.h"

#include <stdint.h>

#define BIG_LONGS 16384 /* 128 KiB: a broadcast in several pipelined pieces */

static long psync[SHMEM_BCAST_SYNC_SIZE + SHMEM_REDUCE_SYNC_SIZE];
static long pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long word_src, word_dest, legacy_src, legacy_dest;
static long block[4], signalled_block[4];
static uint64_t signals[3];
static long added;

/* Every member's result of one call, then a barrier (whose quiet is what is counted) and a
 * quiet of its own. */
static void settle(void)
{
    shmem_barrier_all();
    shmem_quiet();
}

static void team_collectives(int me, int n)
{
    long *big_src = shmem_malloc(BIG_LONGS * sizeof(long));
    long *big_dest = shmem_malloc(BIG_LONGS * sizeof(long));
    long *all = shmem_malloc((size_t)n * sizeof(long));
    long *pairs_src = shmem_malloc((size_t)n * sizeof(long));
    long *pairs_dest = shmem_malloc((size_t)n * sizeof(long));
    CHECK(big_src && big_dest && all && pairs_src && pairs_dest, "shmem_malloc failed");
    for (int round = 0; round < 3; round++) {
        word_src = me == round % n ? 100 + round : -1;
        shmem_long_broadcast(SHMEM_TEAM_WORLD, &word_dest, &word_src, 1, round % n);
        settle();
        CHECK_EQ(word_dest, 100 + round);

        for (int i = 0; i < BIG_LONGS; i++)
            big_src[i] = me == 0 ? (long)i * 3 + round : -1;
        shmem_long_broadcast(SHMEM_TEAM_WORLD, big_dest, big_src, BIG_LONGS, 0);
        settle();
        for (int i = 0; i < BIG_LONGS; i += 1021)
            CHECK_EQ(big_dest[i], (long)i * 3 + round);

        word_src = me * 10 + round;
        shmem_long_fcollect(SHMEM_TEAM_WORLD, all, &word_src, 1);
        settle();
        for (int pe = 0; pe < n; pe++)
            CHECK_EQ(all[pe], pe * 10 + round);

        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, &word_dest, &word_src, 1);
        settle();
        CHECK_EQ(word_dest, 10L * n * (n - 1) / 2 + (long)n * round);

        for (int pe = 0; pe < n; pe++)
            pairs_src[pe] = me * 100 + pe + round;
        shmem_long_alltoall(SHMEM_TEAM_WORLD, pairs_dest, pairs_src, 1);
        settle();
        for (int pe = 0; pe < n; pe++)
            CHECK_EQ(pairs_dest[pe], pe * 100 + me + round);
    }
    shmem_free(pairs_dest);
    shmem_free(pairs_src);
    shmem_free(all);
    shmem_free(big_dest);
    shmem_free(big_src);
}

/* The active-set forms (deprecated, still in 1.6) go through pSync and their own syncs. */
static void active_set_collectives(int me, int n)
{
    for (size_t i = 0; i < sizeof(psync) / sizeof(psync[0]); i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    legacy_src = me == 0 ? 7 : -1;
    shmem_broadcast64(&legacy_dest, &legacy_src, 1, 0, 0, 0, n, psync);
    settle();
    if (me != 0)
        CHECK_EQ(legacy_dest, 7);
    legacy_src = me + 1;
    shmem_long_sum_to_all(&legacy_dest, &legacy_src, 1, 0, 0, n, pwrk, psync);
    settle();
    CHECK_EQ(legacy_dest, (long)n * (n + 1) / 2);
}

/* Each awaited kind of message once to the next PE, each quieted: one flush each. */
static void user_messages(int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    long mine[4] = {me, me + 1, me + 2, me + 3};
    shmem_long_put_signal(signalled_block, mine, 4, &signals[0], 11, SHMEM_SIGNAL_SET, next);
    shmem_quiet();
    shmem_long_put_signal(block, mine, 0, &signals[1], 5, SHMEM_SIGNAL_ADD, next);
    shmem_quiet();
    shmem_signal_add(&signals[2], 3, next);
    shmem_quiet();
    shmem_long_atomic_add(&added, me + 1, next);
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < 4; i++)
        CHECK_EQ(signalled_block[i], prev + i);
    CHECK_EQ(signals[0], 11);
    CHECK_EQ(signals[1], 5);
    CHECK_EQ(signals[2], 3);
    CHECK_EQ(added, prev + 1);
}

int main(int argc, char **argv)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "coll")) {
        team_collectives(me, n);
        active_set_collectives(me, n);
    } else if (!strcmp(mode, "user")) {
        user_messages(me, n);
    } else {
        CHECK(0, "usage: coll_flush coll|user (saw \"%s\")", mode);
    }
    return check_finish();
}
