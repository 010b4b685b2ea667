/* SPDX-License-Identifier: BSD-3-Clause */
/* A collective is the first thing every PE does after shmem_init, so every pair of neighbours
 * connects from both ends at once with puts and signals under way: across two nodes over TCP,
 * UCX 1.13's TCP put protocol crashed a PE in that race (3 jobs in 100, PEs placed in blocks),
 * until the library turned that protocol off.
 * Then every PE puts a block into its slot on every other PE and adds to that PE's arrival
 * count, the pairs the ring did not connect meeting for the first time; last, a private context
 * (a worker of its own, so connections of its own) puts one word to the next PE and quiets: the
 * smallest job that had crashed. */
#include "check.h"

#define MAX_PES 16
#define BLOCK_LONGS 64

static long mine[BLOCK_LONGS], collected[MAX_PES * BLOCK_LONGS], blocks[MAX_PES][BLOCK_LONGS];
static long arrived, from_context;

static long expected(int pe, int i)
{
    return (long)pe * 1000000 + i;
}

/* How many longs of a block from pe differ from what pe sent. */
static int wrong_longs(const long *block, int pe)
{
    int wrong = 0;
    for (int i = 0; i < BLOCK_LONGS; i++)
        wrong += block[i] != expected(pe, i);
    return wrong;
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (n > MAX_PES) {
        CHECK(0, "at most %d PEs, not %d", MAX_PES, n);
        return check_finish();
    }
    for (int i = 0; i < BLOCK_LONGS; i++)
        mine[i] = expected(me, i);
    shmem_fcollectmem(SHMEM_TEAM_WORLD, collected, mine, sizeof(mine));
    for (int pe = 0; pe < n; pe++)
        CHECK(wrong_longs(&collected[pe * BLOCK_LONGS], pe) == 0, "collected block of PE %d wrong",
              pe);
    for (int step = 1; step < n; step++) {
        int peer = (me + step) % n;
        shmem_long_put_nbi(blocks[me], mine, BLOCK_LONGS, peer);
        shmem_fence();
        shmem_long_atomic_add(&arrived, 1, peer);
    }
    shmem_long_wait_until(&arrived, SHMEM_CMP_EQ, n - 1);
    for (int pe = 0; pe < n; pe++)
        CHECK(pe == me || wrong_longs(blocks[pe], pe) == 0, "%d longs of PE %d's put block wrong",
              wrong_longs(blocks[pe], pe), pe);

    shmem_ctx_t ctx;
    int made = shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0;
    CHECK(made, "shmem_ctx_create(SHMEM_CTX_PRIVATE) failed");
    if (made) {
        shmem_ctx_long_p(ctx, &from_context, expected(me, 1), (me + 1) % n);
        shmem_ctx_quiet(ctx);
        shmem_ctx_destroy(ctx);
    }
    shmem_barrier_all();
    int prev = (me + n - 1) % n;
    CHECK(!made || from_context == expected(prev, 1), "word from PE %d's private context: %ld",
          prev, from_context);
    shmem_barrier_all();
    shmem_finalize();
    return check_finish();
}
