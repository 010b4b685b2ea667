/* SPDX-License-Identifier: BSD-3-Clause */
/* The specification's batch example as a test: streams of pseudo-random 64-bit values XORed into
 * random words of a table spread over the PEs, and a replay of every stream that tells each PE
 * what its part of the table must hold. A stream is numbered; a number gives the same values,
 * and the same targets, on every PE. */
#ifndef STRATA_TESTS_XOR_TABLE_H
#define STRATA_TESTS_XOR_TABLE_H

#include "check.h"

#include <stdint.h>

struct xor_stream {
    uint64_t state; /* a 64-bit LCG */
    int n_pes, words;
};

static inline struct xor_stream xor_stream_start(int stream, int n_pes, int words)
{
    return (struct xor_stream){0x9e3779b97f4a7c15ull * (uint64_t)(stream + 1), n_pes, words};
}

/* The next value, and where it goes: a PE and a word there. */
static inline uint64_t xor_stream_next(struct xor_stream *s, int *pe, int *word)
{
    s->state = s->state * 6364136223846793005ull + 1442695040888963407ull;
    *pe = (int)((s->state >> 33) % (uint64_t)s->n_pes);
    *word = (int)((s->state >> 17) % (uint64_t)s->words);
    return s->state;
}

/* XORs count values of stream into table (words long on every PE) through ctx. */
static inline void xor_table_update(shmem_ctx_t ctx, uint64_t *table, int words, int stream,
                                    int count)
{
    struct xor_stream s = xor_stream_start(stream, shmem_n_pes(), words);
    for (int i = 0; i < count; i++) {
        int pe, word;
        uint64_t value = xor_stream_next(&s, &pe, &word);
        shmem_ctx_uint64_atomic_xor(ctx, &table[word], value, pe);
    }
}

/* Checks this PE's table against a replay of streams 0 .. streams-1, count values each. */
static inline void xor_table_check(const uint64_t *table, int words, int streams, int count)
{
    int me = shmem_my_pe(), wrong = 0;
    uint64_t *expected = calloc((size_t)words, sizeof(uint64_t));
    CHECK(expected != NULL, "room for the replay of %d words", words);
    if (!expected)
        return;
    for (int stream = 0; stream < streams; stream++) {
        struct xor_stream s = xor_stream_start(stream, shmem_n_pes(), words);
        for (int i = 0; i < count; i++) {
            int pe, word;
            uint64_t value = xor_stream_next(&s, &pe, &word);
            if (pe == me)
                expected[word] ^= value;
        }
    }
    for (int w = 0; w < words; w++)
        wrong += table[w] != expected[w];
    CHECK(wrong == 0, "%d of %d table words differ from the replay (word 0: %llx, expected %llx)",
          wrong, words, (unsigned long long)table[0], (unsigned long long)expected[0]);
    free(expected);
}

#endif
