/* What a PE issued on a context moves on while the PE computes (1.6 section 4.1: one-sided calls
 * involving a PE that computes should progress regardless of its next call). On each kind of
 * context (shareable, private, serialized; the program asks for SHMEM_THREAD_MULTIPLE, where
 * only a shareable one may be used by two threads at once), every PE issues an operation to its
 * right neighbour and then computes, reading its own memory only, until its left neighbour's
 * has landed there, or a deadline passes:
 * - a non-fetching atomic on the context's first connection, which UCX keeps on the initiator
 *   until the connection is made, which takes the initiator's worker to answer;
 * - a 4 MiB put-with-signal, more than a TCP connection takes in at once: the rest leaves as
 *   the initiator's worker is progressed.
 * Where peers are mapped both land in the call; through UCX, before, both waited for the
 * context's quiet, after the computing. Every value is checked on every PE. */
#include "check.h"

#include <time.h>

enum { KINDS = 3, BIG = 4 << 20, DEADLINE_S = 20 };

static uint64_t arrived[KINDS], signals[KINDS];
static unsigned char dest[BIG], source[BIG];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Computes without calling the library until *word is expected or the deadline passes. */
static void compute_until(const uint64_t *word, uint64_t expected, const char *what, long option)
{
    double begun = now_s(), deadline = begun + DEADLINE_S;
    volatile double x = 0;
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != expected && now_s() < deadline)
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
    const long options[KINDS] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED};

    /* Made together, so that none takes over the connections of another one destroyed. */
    shmem_ctx_t contexts[KINDS];
    for (int k = 0; k < KINDS; k++)
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
    }
    for (int k = 0; k < KINDS; k++)
        shmem_ctx_destroy(contexts[k]);
    return check_finish();
}
