/* SPDX-License-Identifier: BSD-3-Clause */
/* Contexts made and destroyed over and over, each carrying puts to the next PE, between barriers
 * whose quiet flushes the default context. Over TCP, a destroyed context's connections once
 * closed under peers (their flushes then failed), and a default-context flush waited for a
 * peer's idle context worker. Every round's data is checked on every PE. */
#include "check.h"

enum { ROUNDS = 100, WORDS = 512 };
static long in[WORDS];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    long out[WORDS];
    for (int round = 0; round < ROUNDS; round++) {
        shmem_ctx_t ctx;
        long options = round % 2 ? SHMEM_CTX_PRIVATE : 0;
        CHECK(shmem_ctx_create(options, &ctx) == 0, "round %d: no context", round);
        size_t words = 1 + (size_t)(round * 37) % WORDS;
        for (size_t i = 0; i < words; i++)
            out[i] = me * 1000000L + round * 1000L + (long)i;
        shmem_ctx_long_put(ctx, in, out, words, right);
        shmem_ctx_quiet(ctx);
        shmem_ctx_destroy(ctx);
        shmem_barrier_all();
        long wrong = 0;
        for (size_t i = 0; i < words; i++)
            wrong += in[i] != left * 1000000L + round * 1000L + (long)i;
        CHECK(wrong == 0, "round %d: %ld of %zu words from PE %d wrong", round, wrong, words, left);
        shmem_barrier_all();
    }
    return check_finish();
}
