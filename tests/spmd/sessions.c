/* SPDX-License-Identifier: BSD-3-Clause */
/* Sessions (1.6 section 9.9): hints that change no completion or ordering, though between nodes
 * a batch session gathers short puts and atomics into shared messages. As in the specification's
 * example, every PE XORs pseudo-random values into a table spread over the PEs inside a batch
 * session on a private context, and checks its part of the table against a replay of every PE's
 * updates; fenced puts and atomics keep their order (in a session or not), pairs of PEs answer each
 * other's flags inside a session, and puts go in a session on the default context started twice
 * (options combined). Sessions on SHMEM_CTX_INVALID, stops without a start, and a config left
 * unread (mask 0) do nothing. */
#include "xor_table.h"

enum { TABLE_WORDS = 64, UPDATES = 3000, RING_WORDS = 8 };

/* This PE's stream, in a batch session on ctx that expects as many calls (total_ops). */
static void xor_updates(shmem_ctx_t ctx, uint64_t *table, int me)
{
    shmem_ctx_session_config_t config = {.total_ops = UPDATES};
    shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, &config, SHMEM_CTX_SESSION_TOTAL_OPS);
    xor_table_update(ctx, table, TABLE_WORDS, me, UPDATES);
    shmem_ctx_session_stop(ctx);
    shmem_ctx_quiet(ctx);
}

/* Puts, fences and atomics on one word apply in that order, in a batch session or not, a
 * fetching atomic after a fence sees them, and a get after the quiet too. Where the word's
 * space also has members on other nodes, atomics to a node peer go through the transport while
 * puts are stores: the fence must complete the atomics before the next store. */
static void check_fenced(shmem_ctx_t ctx, long *word, int me, int n, int session)
{
    int target = (me + 1) % n;
    if (session)
        shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    for (long round = 0; round < 50; round++) {
        shmem_ctx_long_p(ctx, word, 10 * round, target);
        shmem_ctx_fence(ctx);
        shmem_ctx_long_atomic_add(ctx, word, 3, target);
        shmem_ctx_fence(ctx);
        shmem_ctx_long_atomic_add(ctx, word, 4, target);
        shmem_ctx_fence(ctx);
    }
    CHECK_EQ(shmem_ctx_long_atomic_fetch(ctx, word, target), 497);
    shmem_ctx_session_stop(ctx);
    shmem_ctx_quiet(ctx);
    CHECK_EQ(shmem_ctx_long_g(ctx, word, target), 497);
    shmem_barrier_all();
    CHECK(*word == 497, "%ld, expected 497 (%s)", *word, session ? "in a session" : "no session");
    shmem_barrier_all();
}

/* Pairs of PEs answer each other's flags, put in a session on ctx: a PE that waits sends what
 * its sessions gathered (the wait itself is on no context), or both would wait for ever. */
static void ping_pong(shmem_ctx_t ctx, long *flag, int me, int n)
{
    int partner = me ^ 1;
    if (partner >= n)
        return;
    shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    for (long round = 1; round <= 200; round++) {
        if (me & 1)
            shmem_long_wait_until(flag, SHMEM_CMP_GE, round);
        shmem_ctx_long_p(ctx, flag, round, partner);
        if (!(me & 1))
            shmem_long_wait_until(flag, SHMEM_CMP_GE, round);
    }
    shmem_ctx_session_stop(ctx);
    CHECK_EQ(*flag, 200);
}

/* Puts in a session started twice on the default context (where a session gathers nothing),
 * the second adding nothing. */
static void ring_puts(long *ring, int me, int n)
{
    shmem_ctx_session_config_t unread = {.total_ops = 0};
    shmem_ctx_session_start(SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    shmem_ctx_session_start(SHMEM_CTX_DEFAULT, 0, &unread, 0);
    for (int i = 0; i < RING_WORDS; i++)
        shmem_ctx_long_p(SHMEM_CTX_DEFAULT, &ring[i], 1000L * me + i, (me + 1) % n);
    shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
    shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();
    int before = (me + n - 1) % n;
    for (int i = 0; i < RING_WORDS; i++)
        CHECK_EQ(ring[i], 1000L * before + i);
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_ctx_session_start(SHMEM_CTX_INVALID, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    shmem_ctx_session_stop(SHMEM_CTX_INVALID);
    shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);

    uint64_t *table = shmem_calloc(TABLE_WORDS, sizeof(uint64_t));
    long *ring = shmem_calloc(RING_WORDS, sizeof(long));
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx))
        ctx = SHMEM_CTX_DEFAULT;
    xor_updates(ctx, table, me);
    shmem_barrier_all();
    xor_table_check(table, TABLE_WORDS, n, UPDATES);
    check_fenced(ctx, ring, me, n, 0);
    check_fenced(ctx, ring, me, n, 1);
    ping_pong(ctx, ring + 1, me, n);
    if (ctx != SHMEM_CTX_DEFAULT)
        shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    ring_puts(ring, me, n);
    shmem_free(ring);
    shmem_free(table);
    return check_finish();
}
