/* SPDX-License-Identifier: BSD-3-Clause */
/* The profiling interface: a tool defines the routines it intercepts under their own names and
 * reaches the library through the name-shifted ones (pshmem_...), as the specification's profiler
 * example does. Every PE checks that its calls reach the tool's routines once each, that the
 * library behind them does the work, and that the shifted names are the library's routines. */
#include "check.h"

#include <pshmem.h>

static int put_calls, barrier_calls, fetch_add_calls;

void shmem_long_put(long *dest, const long *source, size_t nelems, int pe)
{
    put_calls++;
    pshmem_long_put(dest, source, nelems, pe);
}

void shmem_barrier_all(void)
{
    barrier_calls++;
    pshmem_barrier_all();
}

long shmem_long_atomic_fetch_add(long *dest, long value, int pe)
{
    fetch_add_calls++;
    return pshmem_long_atomic_fetch_add(dest, value, pe);
}

enum { WORDS = 4 };

/* Each PE puts its words to the next and checks those of the one before. */
static void check_ring(long *ring, int me, int n)
{
    long mine[WORDS];
    for (int i = 0; i < WORDS; i++)
        mine[i] = 100L * me + i;
    int puts = put_calls, barriers = barrier_calls;
    shmem_long_put(ring, mine, 2, (me + 1) % n);
    shmem_put(ring + 2, mine + 2, 2, (me + 1) % n); /* the C11 generic names the same routine */
    shmem_barrier_all();
    CHECK_EQ(put_calls - puts, 2);
    CHECK_EQ(barrier_calls - barriers, 1);
    int before = (me + n - 1) % n;
    for (int i = 0; i < WORDS; i++)
        CHECK_EQ(ring[i], 100L * before + i);
}

/* Every PE adds me + 1 to PE 0's counter; the fetched values are distinct sums below the total. */
static void check_fetch_add(long *counter, int me, int n)
{
    int calls = fetch_add_calls;
    long fetched = shmem_long_atomic_fetch_add(counter, me + 1, 0);
    shmem_barrier_all();
    CHECK_EQ(fetch_add_calls - calls, 1);
    long total = (long)n * (n + 1) / 2;
    CHECK(fetched >= 0 && fetched <= total - (me + 1), "fetched %ld of a total of %ld", fetched,
          total);
    if (me == 0)
        CHECK_EQ(*counter, total);
}

/* The shifted names call the library directly, past the tool's routines. */
static void check_shifted_names(long *ring, int me, int n)
{
    CHECK_EQ(pshmem_my_pe(), me);
    CHECK_EQ(pshmem_n_pes(), n);
    CHECK_EQ(p_my_pe(), me);
    CHECK_EQ(p_num_pes(), n);
    pshmem_pcontrol(1);
    long word = -me - 1;
    int puts = put_calls, barriers = barrier_calls;
    pshmem_long_put(ring, &word, 1, (me + 1) % n);
    pshmem_barrier_all();
    CHECK_EQ(put_calls, puts);
    CHECK_EQ(barrier_calls, barriers);
    CHECK_EQ(ring[0], -((me + n - 1) % n) - 1);
    CHECK_EQ(pshmem_long_g(&ring[1], me), ring[1]);
}

int main(void)
{
    pshmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *ring = shmem_calloc(WORDS, sizeof(long));
    long *counter = pshmem_calloc(1, sizeof(long));
    CHECK(ring && counter, "symmetric allocations of %d and 1 words", WORDS);
    if (ring && counter) {
        check_ring(ring, me, n);
        check_fetch_add(counter, me, n);
        shmem_barrier_all();
        check_shifted_names(ring, me, n);
    }
    shmem_barrier_all();
    pshmem_free(counter);
    shmem_free(ring);
    return check_finish();
}
