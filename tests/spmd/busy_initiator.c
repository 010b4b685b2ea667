/* SPDX-License-Identifier: BSD-3-Clause */
/* What a PE issued moves on while the PE computes (1.6 section 4.1: one-sided calls involving a
 * PE that computes should progress regardless of its next call). On each kind of context (the
 * default one, a shareable, a private and a serialized one; the program asks for
 * SHMEM_THREAD_MULTIPLE, where only a shareable one may be used by two threads at once), every PE
 * issues an operation to its right neighbour and then computes, reading its own memory only,
 * until its left neighbour's has landed there, or a deadline passes:
 * - a non-fetching atomic on the context's first connection, which UCX keeps on the initiator
 *   until the connection is made, which takes the initiator's worker to answer;
 * - a 4 MiB put-with-signal, more than a TCP connection takes in at once: the rest leaves as
 *   the initiator's worker is progressed;
 * - an 8-byte put_nbi right after a barrier, and another after computing for a while: to a peer
 *   reached by message it joins a batch of such puts, which leaves when full or at the PE's
 *   next call, or once it stops growing while the PE computes.
 * Where peers are mapped all land in the call; through UCX, before, the atomic waited for the
 * context's quiet, after the computing, and the puts (over TCP) for the PE's next call. Every
 * value is checked on every PE. */
#include "check.h"

enum { KINDS = 4, BIG = 4 << 20, DEADLINE_S = 20, COMPUTE_MS = 50 };

static uint64_t arrived[KINDS], signals[KINDS], after_barrier[KINDS], after_computing[KINDS];
static unsigned char dest[BIG], source[BIG];

/* Computes without calling the library for ms milliseconds. */
static void compute_for(int ms)
{
    double end = check_now_s() + ms * 1e-3;
    volatile double x = 0;
    while (check_now_s() < end)
        for (int i = 0; i < 10000; i++)
            x += i;
}

/* Computes without calling the library until *word is expected or the deadline passes. */
static void compute_until(const uint64_t *word, uint64_t expected, const char *what, long option)
{
    double begun = check_now_s(), deadline = begun + DEADLINE_S;
    volatile double x = 0;
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != expected && check_now_s() < deadline)
        for (int i = 0; i < 10000; i++)
            x += i;
    CHECK(__atomic_load_n(word, __ATOMIC_ACQUIRE) == expected,
          "context options %ld: the left neighbour's %s had not landed after %d s of computing "
          "(word %llu)",
          option, what, DEADLINE_S, (unsigned long long)*word);
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK_EQ(provided, SHMEM_THREAD_MULTIPLE);
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    const long options[KINDS] = {-1, 0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED}; /* -1: default */

    /* Made together, so that none takes over the connections of another one destroyed. */
    shmem_ctx_t contexts[KINDS] = {SHMEM_CTX_DEFAULT};
    for (int k = 1; k < KINDS; k++)
        CHECK(shmem_ctx_create(options[k], &contexts[k]) == 0, "ctx_create %ld", options[k]);
    for (int k = 0; k < KINDS; k++) {
        shmem_ctx_t ctx = contexts[k];
        if (ctx == SHMEM_CTX_INVALID)
            continue;
        shmem_ctx_uint64_atomic_add(ctx, &arrived[k], 5, right);
        compute_until(&arrived[k], 5, "atomic add", options[k]);

        for (size_t i = 0; i < BIG; i++)
            source[i] = check_pattern_byte(i, me * KINDS + k);
        shmem_ctx_putmem_signal_nbi(ctx, dest, source, BIG, &signals[k], 1, SHMEM_SIGNAL_SET,
                                    right);
        compute_until(&signals[k], 1, "put-with-signal", options[k]);
        size_t wrong = 0;
        for (size_t i = 0; i < BIG; i++)
            wrong += dest[i] != check_pattern_byte(i, left * KINDS + k);
        CHECK(wrong == 0, "context options %ld: %zu of %d bytes from PE %d wrong", options[k],
              wrong, BIG, left);

        shmem_ctx_quiet(ctx);
        shmem_barrier_all(); /* dest and source are the next kind's */

        uint64_t value = 100 + (uint64_t)me;
        shmem_ctx_uint64_put_nbi(ctx, &after_barrier[k], &value, 1, right);
        compute_until(&after_barrier[k], 100 + (uint64_t)left, "put_nbi after a barrier",
                      options[k]);
        compute_for(COMPUTE_MS);
        uint64_t later = 200 + (uint64_t)me;
        shmem_ctx_uint64_put_nbi(ctx, &after_computing[k], &later, 1, right);
        compute_until(&after_computing[k], 200 + (uint64_t)left, "put_nbi after computing",
                      options[k]);
        shmem_ctx_quiet(ctx); /* value and later are sources until then */
    }
    for (int k = 1; k < KINDS; k++)
        shmem_ctx_destroy(contexts[k]);
    return check_finish();
}
