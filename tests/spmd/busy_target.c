/* SPDX-License-Identifier: BSD-3-Clause */
/* A PE that computes without calling the library is still a target: over TCP its progress thread
 * must perform what peers send it (atomics, puts, gets) while it computes. PE 0 computes until
 * its peers' last atomic lands (or a deadline passes), reading its memory only; the others work
 * on it meanwhile. Then every PE is such a target at once, round after round: each puts a block
 * and a flag to the next PE and spins on its own flag without calling the library, with the
 * public verifier's limit of 10 s (the scheduler once kept the PEs that would serve it off the
 * cores for longer). Last, PE 0 computes right after a stream of broadcasts, during which its
 * progress thread kept off the worker, and is served again while its peers add to its counter.
 * Every value is checked on every PE. */
#include "check.h"

enum { OPS = 200, DEADLINE_S = 60, ROUNDS = 200, BLOCK = 64, FLAG_DEADLINE_S = 10, CALLS = 500 };
static long counter, done, table[OPS], slots[1024], block[BLOCK];
static long late_counter, late_done, broadcast_source, broadcast_dest[2];
static int flag;

/* PE 0's work: no library call until every peer has counted itself done in *done_word (or the
 * deadline). */
static void compute_until_done(const long *done_word, int peers)
{
    double deadline = check_now_s() + DEADLINE_S;
    volatile double x = 0;
    while (__atomic_load_n(done_word, __ATOMIC_ACQUIRE) < peers && check_now_s() < deadline)
        for (int i = 0; i < 10000; i++)
            x += i;
    CHECK(__atomic_load_n(done_word, __ATOMIC_ACQUIRE) == peers,
          "%ld of %d peers done after %d s of computing", *done_word, peers, DEADLINE_S);
}

static void work_on_pe0(int me)
{
    long last = -1, row[OPS];
    for (int i = 0; i < OPS; i++) {
        long old = shmem_long_atomic_fetch_add(&counter, 1, 0);
        CHECK(old > last, "fetch-add %d returned %ld after %ld", i, old, last);
        last = old;
    }
    shmem_long_get(row, table, OPS, 0);
    for (int i = 0; i < OPS; i++)
        CHECK_EQ(row[i], 7L * i);
    long mine = 1000L * me;
    shmem_long_put(&slots[me], &mine, 1, 0);
    shmem_fence();
    shmem_long_atomic_add(&done, 1, 0);
    shmem_quiet();
}

/* Every PE puts to the next and waits for the previous one's flag with loads only. The flag is
 * the round's own number, so an earlier round's flag arriving late is never taken for it. */
static void spin_on_flags(int me, int n)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    long mine[BLOCK];
    for (int round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < BLOCK; i++)
            mine[i] = 1000000L * round + 1000L * me + i;
        shmem_barrier_all();
        shmem_long_put(block, mine, 1 + round % BLOCK, next);
        shmem_fence();
        shmem_int_p(&flag, round, next);
        double deadline = check_now_s() + FLAG_DEADLINE_S;
        while (__atomic_load_n(&flag, __ATOMIC_ACQUIRE) != round && check_now_s() < deadline)
            ;
        CHECK(__atomic_load_n(&flag, __ATOMIC_ACQUIRE) == round,
              "round %d: no flag from PE %d after %d s", round, prev, FLAG_DEADLINE_S);
        for (int i = 0; i < 1 + round % BLOCK; i++)
            CHECK_EQ(block[i], 1000000L * round + 1000L * prev + i);
    }
}

/* A stream of broadcasts from rotating roots, each checked; then PE 0 computes while the others
 * fetch-add to it. The broadcasts alternate two dests: the next call's root may write a dest as
 * soon as this PE has returned from the call before (it is then "ready to accept" the data, in
 * the spec's words), so one dest read between calls could already hold the next call's data. */
static void served_after_collectives(int me, int n)
{
    for (int i = 0; i < CALLS; i++) {
        broadcast_source = 1000L * i + me;
        long *dest = &broadcast_dest[i % 2];
        shmem_long_broadcast(SHMEM_TEAM_WORLD, dest, &broadcast_source, 1, i % n);
        CHECK_EQ(*dest, 1000L * i + i % n);
    }
    if (me == 0) {
        compute_until_done(&late_done, n - 1);
    } else {
        for (int i = 0; i < OPS; i++)
            shmem_long_atomic_fetch_add(&late_counter, 1, 0);
        shmem_long_atomic_add(&late_done, 1, 0);
        shmem_quiet();
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK_EQ(late_counter, (long)(n - 1) * OPS);
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < OPS; i++)
        table[i] = 7L * i;
    shmem_barrier_all();
    if (me == 0)
        compute_until_done(&done, n - 1);
    else
        work_on_pe0(me);
    shmem_barrier_all();
    if (me == 0) {
        CHECK_EQ(counter, (long)(n - 1) * OPS);
        for (int pe = 1; pe < n; pe++)
            CHECK_EQ(slots[pe], 1000L * pe);
    }
    if (n > 1)
        spin_on_flags(me, n);
    shmem_barrier_all();
    served_after_collectives(me, n);
    return check_finish();
}
