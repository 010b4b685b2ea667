/* SPDX-License-Identifier: BSD-3-Clause */
/* Atomics under contention: every PE hammers words on PE 0. Totals must be exact, tickets
 * distinct, exactly one PE wins each compare-and-swap election, and the fetching bitwise
 * operations leave exactly the bits set that every PE's update implies. */
#include "check.h"

#define ROUNDS 2000

static long counter;
static int counter32;
static long tickets_seen[64 * ROUNDS / 8];
static long winner;
static unsigned long bits;
static unsigned int bits32;
static long wins[64];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int rounds = ROUNDS / (n > 8 ? 8 : 1);
    long *mine = malloc(sizeof(long) * (size_t)rounds);

    /* fetch_add tickets: each value 0..n*rounds-1 handed out exactly once */
    for (int i = 0; i < rounds; i++) {
        mine[i] = shmem_long_atomic_fetch_add(&counter, 1, 0);
        shmem_int_atomic_inc(&counter32, 0);
    }
    for (int i = 0; i < rounds; i++)
        shmem_long_atomic_inc(&tickets_seen[mine[i] / 8 % (64 * ROUNDS / 8)], 0);
    shmem_barrier_all();
    if (me == 0) {
        CHECK_EQ(counter, (long)n * rounds);
        CHECK_EQ(counter32, n * rounds);
        long total = 0;
        for (size_t i = 0; i < sizeof(tickets_seen) / sizeof(tickets_seen[0]); i++)
            total += tickets_seen[i];
        CHECK_EQ(total, (long)n * rounds);
    }
    int ascending = 1;
    for (int i = 1; i < rounds; i++)
        ascending &= mine[i] > mine[i - 1];
    CHECK(ascending, "one PE's tickets are not increasing");

    /* compare-and-swap elections: one winner per round */
    for (long round = 1; round <= 50; round++) {
        long old = shmem_long_atomic_compare_swap(&winner, round - 1, round, 0);
        if (old == round - 1)
            wins[me]++;
        shmem_barrier_all();
    }
    long total_wins = 0;
    for (int p = 0; p < n; p++)
        total_wins += shmem_long_g(&wins[p], p);
    CHECK_EQ(total_wins, 50);

    /* fetching OR/XOR/AND from every PE: each PE owns bit me (and bit me+32 in 64 bits) */
    unsigned long mybit = 1UL << (me % 32), mybit_hi = mybit << 32;
    unsigned long before = shmem_ulong_atomic_fetch_or(&bits, mybit | mybit_hi, 0);
    CHECK(!(before & mybit), "fetch_or: my bit was already set");
    shmem_uint_atomic_fetch_or(&bits32, (unsigned)mybit, 0);
    shmem_barrier_all();
    unsigned long all = 0;
    for (int p = 0; p < n; p++)
        all |= 1UL << (p % 32);
    if (me == 0) {
        CHECK(bits == (all | all << 32), "fetch_or total %lx, expected %lx", bits, all | all << 32);
        CHECK(bits32 == (unsigned)all, "32-bit fetch_or total %x", bits32);
    }
    shmem_barrier_all();
    before = shmem_ulong_atomic_fetch_xor(&bits, mybit_hi, 0);
    CHECK(before & mybit_hi, "fetch_xor: my high bit was lost");
    before = shmem_ulong_atomic_fetch_and(&bits, ~mybit, 0);
    CHECK(before & mybit, "fetch_and: my low bit was lost");
    shmem_uint_atomic_fetch_and(&bits32, ~(unsigned)mybit, 0);
    shmem_barrier_all();
    if (me == 0) {
        CHECK(bits == 0, "after xor and and every bit is clear: %lx", bits);
        CHECK(bits32 == 0, "32-bit: %x", bits32);
    }
    free(mine);
    return check_finish();
}
