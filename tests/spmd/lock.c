/* 1.6 section 9.12: set_lock/clear_lock give mutual exclusion: a non-atomic read-modify-write of
 * a counter on PE 0 under the lock loses no update. test_lock acquires only a free lock. */
#include "check.h"

static long lock;
static long second_lock;
static long counter;
static long inside;

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
    /* now free: spin with test_lock until this PE holds it, then hand it on */
    long taken = 0;
    while (shmem_test_lock(&second_lock) != 0)
        ;
    taken = shmem_long_atomic_fetch_inc(&inside, 0);
    CHECK(taken == 0, "test_lock: %ld other holders", taken);
    shmem_long_atomic_add(&inside, -1, 0);
    shmem_clear_lock(&second_lock);
    shmem_barrier_all();
    return check_finish();
}
