/* SPDX-License-Identifier: BSD-3-Clause */
/* A flag put lands once: a PE that saw a peer's flag arrive and reset it does not see it come
 * back. Each round every PE puts a block to the next PE, fences, and puts the flag 1 there, by
 * one routine after another (shmem_p, a one-element put, putmem, a context's p, a non-blocking
 * put and a quiet, a long flag); each PE spins on its own flag with loads only, resets it, then
 * watches it stay 0 while it checks the block. Copies that stored a short block's bytes twice
 * (as memcpy does with 4 bytes) brought a reset flag back, about once in 100,000 rounds over two
 * nodes: this test has a chance to see that, and the spec's answer is never. */
#include "check.h"

enum { ROUNDS = 600, BLOCK = 16, ROUTINES = 6, DEADLINE_S = 10, WATCH_LOADS = 20000 };
static long block[BLOCK], long_flag;
static int flag;

/* Puts the flag 1 to pe with routine r (a context's p on ctx); a long flag for the last one. */
static void put_flag(int r, shmem_ctx_t ctx, int pe)
{
    static const int one = 1;
    static const long long_one = 1;
    switch (r) {
    case 0:
        shmem_int_p(&flag, 1, pe);
        break;
    case 1:
        shmem_int_put(&flag, &one, 1, pe);
        break;
    case 2:
        shmem_putmem(&flag, &one, sizeof(one), pe);
        break;
    case 3:
        shmem_ctx_int_p(ctx, &flag, 1, pe);
        shmem_ctx_quiet(ctx);
        break;
    case 4:
        shmem_int_put_nbi(&flag, &one, 1, pe);
        shmem_quiet();
        break;
    default:
        shmem_long_put(&long_flag, &long_one, 1, pe);
    }
}

/* Waits for the flag with loads only, resets it, and watches it stay reset. */
static void consume_flag(int r, int round, int prev)
{
    int is_long = r == ROUTINES - 1;
    double deadline = check_now_s() + DEADLINE_S;
    while ((is_long ? __atomic_load_n(&long_flag, __ATOMIC_ACQUIRE)
                    : __atomic_load_n(&flag, __ATOMIC_ACQUIRE)) != 1 &&
           check_now_s() < deadline)
        ;
    long seen = is_long ? __atomic_exchange_n(&long_flag, 0, __ATOMIC_ACQ_REL)
                        : __atomic_exchange_n(&flag, 0, __ATOMIC_ACQ_REL);
    CHECK(seen == 1, "round %d (routine %d): no flag from PE %d after %d s", round, r, prev,
          DEADLINE_S);
    for (int i = 0; i < WATCH_LOADS; i++) {
        long again = is_long ? __atomic_load_n(&long_flag, __ATOMIC_ACQUIRE)
                             : __atomic_load_n(&flag, __ATOMIC_ACQUIRE);
        if (again) {
            CHECK(0, "round %d (routine %d): the flag from PE %d came back (%ld) after its reset",
                  round, r, prev, again);
            break;
        }
    }
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx))
        ctx = SHMEM_CTX_DEFAULT;
    long mine[BLOCK];
    for (int round = 0; round < ROUNDS; round++) {
        int r = round % ROUTINES, len = 1 + round % BLOCK;
        for (int i = 0; i < BLOCK; i++)
            mine[i] = 1000000L * round + 1000L * me + i;
        shmem_barrier_all(); /* the previous round's block has been checked everywhere */
        shmem_ctx_t c = r == 3 ? ctx : SHMEM_CTX_DEFAULT; /* the flag's context orders it */
        shmem_ctx_long_put(c, block, mine, len, next);
        shmem_ctx_fence(c);
        put_flag(r, c, next);
        consume_flag(r, round, prev);
        for (int i = 0; i < len; i++)
            CHECK_EQ(block[i], 1000000L * round + 1000L * prev + i);
    }
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    return check_finish();
}
