/* A PE that computes without calling the library is still a target: over TCP its progress thread
 * must perform what peers send it (atomics, puts, gets) while it computes. PE 0 computes until
 * its peers' last atomic lands (or a deadline passes), reading its memory only; the others work
 * on it meanwhile. Every value is checked on every PE. */
#include "check.h"

#include <time.h>

enum { OPS = 200, DEADLINE_S = 60 };
static long counter, done, table[OPS], slots[1024];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* PE 0's work: no library call until every peer has finished (or the deadline). */
static void compute_until_done(int peers)
{
    double deadline = now_s() + DEADLINE_S;
    volatile double x = 0;
    while (__atomic_load_n(&done, __ATOMIC_ACQUIRE) < peers && now_s() < deadline)
        for (int i = 0; i < 10000; i++)
            x += i;
    CHECK(__atomic_load_n(&done, __ATOMIC_ACQUIRE) == peers,
          "%ld of %d peers done after %d s of computing", done, peers, DEADLINE_S);
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

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < OPS; i++)
        table[i] = 7L * i;
    shmem_barrier_all();
    if (me == 0)
        compute_until_done(n - 1);
    else
        work_on_pe0(me);
    shmem_barrier_all();
    if (me == 0) {
        CHECK_EQ(counter, (long)(n - 1) * OPS);
        for (int pe = 1; pe < n; pe++)
            CHECK_EQ(slots[pe], 1000L * pe);
    }
    return check_finish();
}
