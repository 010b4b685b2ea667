/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 9.12: set_lock/clear_lock give mutual exclusion: a non-atomic read-modify-write of
 * a counter on PE 0 under the lock loses no update. test_lock acquires only a free lock, and PEs
 * spinning on it all get it in turn within a deadline. Arrays of locks in the static data, the
 * heap and a space created at run time (whose queues live on different PEs) each keep their own
 * counters exact. */
#include "check.h"

#define LOCKS 8
enum { TEST_LOCK_ROUNDS = 20, TEST_LOCK_DEADLINE_S = 10 };

static long lock;
static long second_lock;
static long counter;
static long inside;
static long static_locks[LOCKS];

/* Every PE takes each of the locks in turn, rounds times, and under lock j adds one to
 * counters[j] on PE j % n with a get and a put (not atomic, so only the lock keeps it exact);
 * insiders[j] on PE 0 counts the holders of lock j. */
static void check_lock_array(const char *where, long *locks, long *counters, long *insiders,
                             int rounds)
{
    int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < rounds; i++) {
        for (int j = 0; j < LOCKS; j++) {
            int owner = j % n;
            shmem_set_lock(&locks[j]);
            long holders = shmem_long_atomic_fetch_inc(&insiders[j], 0);
            CHECK(holders == 0, "%s lock %d: %ld other PE(s) inside", where, j, holders);
            long value = shmem_long_g(&counters[j], owner);
            shmem_long_p(&counters[j], value + 1, owner);
            shmem_long_atomic_add(&insiders[j], -1, 0);
            shmem_clear_lock(&locks[j]);
        }
    }
    shmem_barrier_all();
    for (int j = 0; j < LOCKS; j++)
        if (j % n == me)
            CHECK(counters[j] == (long)n * rounds, "%s lock %d: counter %ld, expected %ld", where,
                  j, counters[j], (long)n * rounds);
    shmem_barrier_all();
}

static void check_lock_arrays(void)
{
    /* counters and holder counts for the three arrays, in the default heap */
    long *words = shmem_calloc(3 * 2 * LOCKS, sizeof(long));
    long *heap_locks = shmem_calloc(LOCKS, sizeof(long));
    check_lock_array("static", static_locks, words, words + LOCKS, 50);
    check_lock_array("heap", heap_locks, words + 2 * LOCKS, words + 3 * LOCKS, 50);

    shmem_space_config_t config = {SHMEM_DEVICE_CPU, 1 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    shmem_team_t team;
    CHECK(shmem_space_create(&config, &space, &team) == 0, "a CPU space for locks");
    long *space_locks = shmem_space_calloc(space, LOCKS, sizeof(long));
    CHECK(space_locks != NULL, "locks in the CPU space");
    if (space_locks) {
        check_lock_array("space", space_locks, words + 4 * LOCKS, words + 5 * LOCKS, 50);
        shmem_space_free(space, space_locks);
    }
    shmem_team_destroy(team);
    CHECK_EQ(shmem_space_destroy(space), 0);
    shmem_free(heap_locks);
    shmem_free(words);
}

/* Every PE spins with test_lock until it holds the lock, then hands it on. The PE that holds
 * the lock's queue spins on calls to itself, yet must serve the holder's release. */
static void spin_with_test_lock(int round)
{
    double deadline = check_now_s() + TEST_LOCK_DEADLINE_S;
    int held;
    while ((held = shmem_test_lock(&second_lock)) != 0 && check_now_s() < deadline)
        ;
    CHECK(held == 0, "round %d: test_lock failed for %d s", round, TEST_LOCK_DEADLINE_S);
    if (held == 0) {
        long taken = shmem_long_atomic_fetch_inc(&inside, 0);
        CHECK(taken == 0, "round %d: test_lock: %ld other holders", round, taken);
        shmem_long_atomic_add(&inside, -1, 0);
        shmem_clear_lock(&second_lock);
    }
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    const int rounds = 200;
    for (int i = 0; i < rounds; i++) {
        shmem_set_lock(&lock);
        long holders = shmem_long_atomic_fetch_inc(&inside, 0);
        CHECK(holders == 0, "%ld other PE(s) inside the critical section", holders);
        long value = shmem_long_g(&counter, 0); /* deliberately not atomic */
        shmem_long_p(&counter, value + 1, 0);
        shmem_long_atomic_add(&inside, -1, 0);
        shmem_clear_lock(&lock);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK_EQ(counter, (long)n * rounds);

    /* test_lock: PE 0 holds the lock, everyone else must fail to take it */
    if (me == 0)
        shmem_set_lock(&second_lock);
    shmem_barrier_all();
    if (me != 0)
        CHECK(shmem_test_lock(&second_lock) == 1, "test_lock took a held lock");
    shmem_barrier_all();
    if (me == 0)
        shmem_clear_lock(&second_lock);
    shmem_barrier_all();
    for (int round = 0; round < TEST_LOCK_ROUNDS; round++)
        spin_with_test_lock(round);

    check_lock_arrays();
    return check_finish();
}
