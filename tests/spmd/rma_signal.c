/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 9.8: put-with-signal delivers the data before the signal; signal_add accumulates
 * exactly; signal_set replaces; signal_fetch reads. Sized, mem, context and nbi forms. */
#include "check.h"

#include <sched.h>
#include <string.h>

#define N 100

static uint64_t sig;
static uint64_t counter;

/* Spins on a local signal word: a local read needs no progress from this PE. */
static void wait_signal_at_least(uint64_t value)
{
    while (shmem_signal_fetch(&sig) < value)
        sched_yield(); /* oversubscribed: let the sender run */
}

#define TEST_TYPE(T, NAME, ...)                                                                    \
    static void test_##NAME(int me, int n)                                                         \
    {                                                                                              \
        T *dest = shmem_calloc(N, sizeof(T)), *src = malloc(N * sizeof(T));                        \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = (T)(me + i % 50 + 1);                                                         \
        sig = 0;                                                                                   \
        shmem_barrier_all();                                                                       \
        shmem_##NAME##_put_signal(dest, src, N, &sig, 1, SHMEM_SIGNAL_SET, right);                 \
        wait_signal_at_least(1);                                                                   \
        for (int i = 0; i < N; i++)                                                                \
            CHECK(dest[i] == (T)(left + i % 50 + 1), #NAME "_put_signal data [%d]", i);            \
        shmem_barrier_all();                                                                       \
        shmem_ctx_##NAME##_put_signal_nbi(SHMEM_CTX_DEFAULT, dest, src, N / 2, &sig, 2,            \
                                          SHMEM_SIGNAL_ADD, left);                                 \
        shmem_quiet();                                                                             \
        wait_signal_at_least(3);                                                                   \
        CHECK(shmem_signal_fetch(&sig) == 3, #NAME ": set 1 then add 2 gives 3");                  \
        for (int i = 0; i < N / 2; i++)                                                            \
            CHECK(dest[i] == (T)(right + i % 50 + 1), #NAME "_put_signal_nbi data [%d]", i);       \
        shmem_barrier_all();                                                                       \
        free(src);                                                                                 \
        shmem_free(dest);                                                                          \
    }
STRATA_RMA_TYPES(TEST_TYPE)

static void test_untyped(int me, int n)
{
    enum { BYTES = 1 << 16 };
    unsigned char *dest = shmem_calloc(1, BYTES), *src = malloc(BYTES);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < BYTES; i++)
        src[i] = (unsigned char)(me + i);
    sig = 0;
    shmem_barrier_all();
    shmem_putmem_signal(dest, src, BYTES, &sig, 5, SHMEM_SIGNAL_SET, right);
    wait_signal_at_least(5);
    size_t bad = 0;
    for (int i = 0; i < BYTES; i++)
        bad += dest[i] != (unsigned char)(left + i);
    CHECK(bad == 0, "putmem_signal: %zu wrong bytes of %d", bad, BYTES);
    shmem_barrier_all();
    /* SET replaces a larger value; an unaligned odd-sized nbi transfer */
    shmem_ctx_putmem_signal_nbi(SHMEM_CTX_DEFAULT, dest + 3, src + 1, 1001, &sig, 2,
                                SHMEM_SIGNAL_SET, right);
    while (shmem_signal_fetch(&sig) != 2)
        sched_yield(); /* oversubscribed: let the sender run */
    bad = 0;
    for (int i = 3; i < 1004; i++)
        bad += dest[i] != (unsigned char)(left + i - 2);
    bad += dest[1004] != (unsigned char)(left + 1004); /* past the end: the first transfer's */
    CHECK(bad == 0, "ctx_putmem_signal_nbi: %zu wrong bytes", bad);
    /* every PE has seen its 2 before any PE sends the next SET, and this PE's nbi transfer is
     * complete before its next one to the same PE */
    shmem_barrier_all();
    shmem_putmem_signal_nbi(dest, src, BYTES, &sig, 5, SHMEM_SIGNAL_SET, right);
    wait_signal_at_least(5);
    bad = 0;
    for (int i = 0; i < BYTES; i++)
        bad += dest[i] != (unsigned char)(left + i);
    CHECK(bad == 0, "putmem_signal_nbi: %zu wrong bytes of %d", bad, BYTES);
    shmem_quiet();
    shmem_barrier_all();
    shmem_put64_signal_nbi(dest, src, 8, &sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_put32_signal(SHMEM_CTX_DEFAULT, dest + 64, src + 64, 4, &sig, 1, SHMEM_SIGNAL_ADD,
                           right);
    shmem_quiet();
    wait_signal_at_least(7);
    bad = 0;
    for (int i = 0; i < 80; i++)
        bad += dest[i] != (unsigned char)(left + i);
    CHECK(bad == 0, "put64_signal_nbi/put32_signal: %zu wrong bytes", bad);
    shmem_barrier_all();
    free(src);
    shmem_free(dest);
}

/* Sized forms, blocking and nbi, SET then ADD: put##BITS_signal counts BITS-bit elements. */
#define SIZED_COUNT 3
#define TEST_SIZED(BITS, BYTES)                                                                    \
    static void test_sized##BITS(int me, int n)                                                    \
    {                                                                                              \
        enum { ROOM = 4 * SIZED_COUNT * BYTES };                                                   \
        unsigned char *dest = shmem_calloc(1, ROOM), src[ROOM];                                    \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        for (int i = 0; i < ROOM; i++)                                                             \
            src[i] = (unsigned char)(me * 50 + i + 1);                                             \
        sig = 0;                                                                                   \
        shmem_barrier_all();                                                                       \
        shmem_put##BITS##_signal(dest, src, SIZED_COUNT, &sig, 10, SHMEM_SIGNAL_SET, right);       \
        wait_signal_at_least(10);                                                                  \
        size_t bad = 0; /* the third quarter may already hold the ADD transfer below */            \
        for (int i = 0; i < ROOM; i++)                                                             \
            if (i < 2 * SIZED_COUNT * BYTES || i >= 3 * SIZED_COUNT * BYTES)                       \
                bad +=                                                                             \
                    dest[i] != (i < SIZED_COUNT * BYTES ? (unsigned char)(left * 50 + i + 1) : 0); \
        CHECK(bad == 0, "put%d_signal: %zu wrong bytes", BITS, bad);                               \
        shmem_fence(); /* the ADD must not overtake this PE's SET to the same target */            \
        shmem_ctx_put##BITS##_signal_nbi(SHMEM_CTX_DEFAULT, dest + 2 * SIZED_COUNT * BYTES,        \
                                         src + 2 * SIZED_COUNT * BYTES, SIZED_COUNT, &sig, 5,      \
                                         SHMEM_SIGNAL_ADD, right);                                 \
        wait_signal_at_least(15);                                                                  \
        CHECK_EQ(shmem_signal_fetch(&sig), 15);                                                    \
        bad = 0;                                                                                   \
        for (int i = 0; i < ROOM; i++) {                                                           \
            int set = i < SIZED_COUNT * BYTES ||                                                   \
                      (i >= 2 * SIZED_COUNT * BYTES && i < 3 * SIZED_COUNT * BYTES);               \
            bad += dest[i] != (set ? (unsigned char)(left * 50 + i + 1) : 0);                      \
        }                                                                                          \
        CHECK(bad == 0, "ctx_put%d_signal_nbi: %zu wrong bytes", BITS, bad);                       \
        shmem_quiet();                                                                             \
        shmem_barrier_all();                                                                       \
        shmem_free(dest);                                                                          \
    }
STRATA_RMA_SIZES(TEST_SIZED)

/* Every PE sends K put-with-signal ADD operations into its own slot on PE 0; PE 0 waits until
 * the signal reaches n*K and then finds every PE's last data in place. */
static uint64_t gather_sig;
static void test_signal_gather(int me, int n)
{
    enum { K = 20, LEN = 32 };
    long *slots = shmem_calloc((size_t)n * LEN, sizeof(long));
    long src[LEN];
    shmem_barrier_all();
    for (int k = 0; k < K; k++) {
        for (int i = 0; i < LEN; i++)
            src[i] = (long)me * 1000 + k * 10 + i % 10;
        if (k % 2)
            shmem_long_put_signal(&slots[me * LEN], src, LEN, &gather_sig, 1, SHMEM_SIGNAL_ADD, 0);
        else
            shmem_long_put_signal_nbi(&slots[me * LEN], src, LEN, &gather_sig, 1, SHMEM_SIGNAL_ADD,
                                      0);
        shmem_quiet(); /* the next round reuses src and overwrites the same slot */
    }
    if (me == 0) {
        while (shmem_signal_fetch(&gather_sig) < (uint64_t)n * K)
            sched_yield(); /* oversubscribed: let the sender run */
        CHECK_EQ(shmem_signal_fetch(&gather_sig), (uint64_t)n * K);
        long bad = 0;
        for (int p = 0; p < n; p++)
            for (int i = 0; i < LEN; i++)
                bad += slots[p * LEN + i] != (long)p * 1000 + (K - 1) * 10 + i % 10;
        CHECK(bad == 0, "put_signal ADD onto PE 0: %ld wrong values", bad);
    }
    shmem_barrier_all();
    CHECK_EQ(shmem_signal_fetch(&gather_sig), me == 0 ? (uint64_t)n * K : 0);
    shmem_barrier_all();
    shmem_free(slots);
}

/* Every PE adds its (rank+1) 10 times to PE 0's counter: n(n+1)/2 * 10 exactly. */
static void test_signal_add_set(int me, int n)
{
    counter = 0;
    shmem_barrier_all();
    for (int k = 0; k < 10; k++) {
        if (k % 2)
            shmem_signal_add(&counter, (uint64_t)me + 1, 0);
        else
            shmem_ctx_signal_add(SHMEM_CTX_DEFAULT, &counter, (uint64_t)me + 1, 0);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK_EQ(shmem_signal_fetch(&counter), (uint64_t)n * (n + 1) / 2 * 10);
    shmem_barrier_all();
    shmem_signal_set(&counter, 1000 + (uint64_t)me, (me + 1) % n);
    shmem_barrier_all();
    CHECK_EQ(shmem_signal_fetch(&counter), 1000 + (me + n - 1) % n);
    shmem_barrier_all();
    shmem_ctx_signal_set(SHMEM_CTX_DEFAULT, &counter, 7, me);
    shmem_quiet();
    CHECK_EQ(shmem_signal_fetch(&counter), 7);
    shmem_barrier_all();
}

/* 1.6: signal_wait_until returns the value that satisfied the comparison. PE 1 flips PE 0's
 * signal between 1 and 2 as fast as it can; each of PE 0's waits for 2 must return 2, never the 1
 * that a second read after the wait could see. */
#define FLIP_WAITS 2000
static uint64_t flip, flips_done;
static void test_wait_returns_what_held(int me, int n)
{
    flip = 0;
    flips_done = 0;
    shmem_barrier_all();
    if (n >= 2 && me == 1) {
        for (uint64_t k = 0; !shmem_uint64_atomic_fetch(&flips_done, 1); k++)
            shmem_signal_set(&flip, 1 + (k & 1), 0);
    } else if (n >= 2 && me == 0) {
        int wrong = 0;
        for (int i = 0; i < FLIP_WAITS; i++)
            wrong += shmem_signal_wait_until(&flip, SHMEM_CMP_EQ, 2) != 2;
        CHECK(wrong == 0, "%d of %d signal_wait_until(EQ 2) returned another value", wrong,
              FLIP_WAITS);
        shmem_uint64_atomic_set(&flips_done, 1, 1);
    }
    shmem_barrier_all();
}

/* A put-with-signal larger than any one message of a transport (several 256 KiB pieces, one odd):
 * the signal arrives with the last byte in place, whatever the pieces. Then nbi puts, a fence and
 * a signal_add: the fence orders the queued puts before the signal. */
static void test_large_and_fenced(int me, int n)
{
    enum { BYTES = 3 * 262144 + 100, ROUNDS = 3 };
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *dest = shmem_calloc(1, BYTES), *src = malloc(BYTES);
    sig = 0;
    shmem_barrier_all();
    for (int round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < BYTES; i++)
            src[i] = (unsigned char)(i * 7 + me * 13 + round);
        if (round == 2) {
            for (int off = 0; off < BYTES; off += 4096)
                shmem_putmem_nbi(dest + off, src + off, BYTES - off < 4096 ? BYTES - off : 4096,
                                 right);
            shmem_fence();
            shmem_signal_add(&sig, 1, right);
        } else {
            shmem_putmem_signal(dest, src, BYTES, &sig, 1, SHMEM_SIGNAL_ADD, right);
        }
        wait_signal_at_least((uint64_t)round);
        size_t bad = 0;
        for (int i = 0; i < BYTES; i++)
            bad += dest[i] != (unsigned char)(i * 7 + left * 13 + round);
        CHECK(bad == 0, "round %d from PE %d: %zu wrong bytes of %d when the signal came", round,
              left, bad, (int)BYTES);
        shmem_barrier_all(); /* src and dest are rewritten next round */
    }
    CHECK_EQ(shmem_signal_fetch(&sig), ROUNDS);
    shmem_barrier_all();
    /* No data: only the signal, whatever dest is (zero-length collectives pass NULL). */
    shmem_putmem_signal(NULL, NULL, 0, &sig, 10, SHMEM_SIGNAL_ADD, right);
    wait_signal_at_least(ROUNDS + 10);
    CHECK_EQ(shmem_signal_fetch(&sig), ROUNDS + 10);
    shmem_barrier_all();
    free(src);
    shmem_free(dest);
}

/* A long run of puts in a row, each continuing the last, as an array sent in pieces: past a few
 * L2 caches a node peer's copies go around the caches, and the signal on the last piece still
 * comes after every byte of the run. Then the run comes back by gets in a row into private
 * memory. */
static void test_streamed_run(int me, int n)
{
    enum { PIECE = 256 << 10, PIECES = 96, ROUNDS = 2 }; /* 24 MiB */
    const size_t bytes = (size_t)PIECE * PIECES;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    unsigned char *dest = shmem_malloc(bytes), *src = malloc(bytes), *back = malloc(bytes);
    CHECK(dest && src && back, "%zu bytes for the run", bytes);
    if (!dest || !src || !back)
        shmem_global_exit(1);
    sig = 0;
    shmem_barrier_all();
    for (int round = 1; round <= ROUNDS; round++) {
        for (size_t i = 0; i < bytes; i++)
            src[i] = (unsigned char)(i * 5 + (size_t)me * 11 + (size_t)round);
        for (int k = 0; k < PIECES - 1; k++)
            shmem_putmem(dest + (size_t)k * PIECE, src + (size_t)k * PIECE, PIECE, right);
        shmem_putmem_signal(dest + bytes - PIECE, src + bytes - PIECE, PIECE, &sig, 1,
                            SHMEM_SIGNAL_ADD, right);
        wait_signal_at_least((uint64_t)round);
        size_t bad = 0;
        for (size_t i = 0; i < bytes; i++)
            bad += dest[i] != (unsigned char)(i * 5 + (size_t)left * 11 + (size_t)round);
        CHECK(bad == 0, "round %d from PE %d: %zu wrong bytes of %zu when the signal came", round,
              left, bad, bytes);
        shmem_barrier_all(); /* every PE has checked its dest: now each reads its right's */
        for (int k = 0; k < PIECES; k++)
            shmem_getmem(back + (size_t)k * PIECE, dest + (size_t)k * PIECE, PIECE, right);
        bad = 0;
        for (size_t i = 0; i < bytes; i++)
            bad += back[i] != (unsigned char)(i * 5 + (size_t)me * 11 + (size_t)round);
        CHECK(bad == 0, "round %d: %zu wrong bytes of %zu got back from PE %d", round, bad, bytes,
              right);
        shmem_barrier_all(); /* dest is written again next round */
    }
    free(back);
    free(src);
    shmem_free(dest);
}

/* A fence orders a put-with-signal before a put to the same words that follows it, however the
 * two travel (the signal's data as a message, the put as the network's own). */
enum { FENCED_WORDS = 512 };
static uint64_t fenced[FENCED_WORDS];

static void test_fence_after_signal(int me, int n)
{
    enum { ROUNDS = 50 };
    uint64_t first[FENCED_WORDS], second[FENCED_WORDS];
    int right = (me + 1) % n, left = (me + n - 1) % n;
    sig = 0;
    shmem_barrier_all();
    for (int round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < FENCED_WORDS; i++) {
            first[i] = (uint64_t)round * 100000 + (uint64_t)i;
            second[i] = first[i] + 50000;
        }
        shmem_uint64_put_signal(fenced, first, FENCED_WORDS, &sig, (uint64_t)round,
                                SHMEM_SIGNAL_SET, right);
        shmem_fence();
        shmem_uint64_put(fenced, second, FENCED_WORDS, right);
        shmem_barrier_all();
        int stale = 0;
        for (int i = 0; i < FENCED_WORDS; i++)
            stale += fenced[i] != (uint64_t)round * 100000 + (uint64_t)i + 50000;
        CHECK(stale == 0,
              "round %d: %d of %d words from PE %d hold the put-with-signal's data, "
              "not the put after the fence",
              round, stale, (int)FENCED_WORDS, left);
        CHECK_EQ(shmem_signal_fetch(&sig), (uint64_t)round);
        shmem_barrier_all(); /* fenced is written again next round */
    }
}

/* Puts, non-fetching atomics and signals are complete at their target once shmem_quiet returns:
 * PE me writes (puts, or adds and signals) to its right neighbour, quiets, then tells the PE two
 * to its right, which reads the neighbour's words by a get of its own, over another connection
 * than the writes took. Puts and adds in separate phases: one's completion must not hide the
 * other's. */
enum { MARKS = 131072 }; /* 1 MiB: several pieces of any transport's messages */
static uint64_t told, marks[MARKS], values[MARKS];

/* Tells the PE two to the right that this PE's phase is complete; waits for the same word from
 * the PE two to the left. */
static void tell_and_wait(int me, int n, uint64_t phase)
{
    shmem_uint64_p(&told, phase, (me + 2) % n);
    shmem_uint64_wait_until(&told, SHMEM_CMP_GE, phase);
}

static void test_quiet_completes(int me, int n)
{
    enum { ADDS = 50, ROUNDS = 3 };
    int right = (me + 1) % n, left = (me + n - 1) % n, writer = (me + n - 2) % n;
    counter = told = 0;
    shmem_barrier_all();
    for (int round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < MARKS; i++)
            values[i] = (uint64_t)round * 100000 + (uint64_t)i;
        shmem_uint64_put(marks, values, MARKS, right);
        shmem_quiet();
        tell_and_wait(me, n, 2 * (uint64_t)round - 1);
        shmem_uint64_get(values, marks, MARKS, left);
        int stale = 0;
        for (int i = 0; i < MARKS; i++)
            stale += values[i] != (uint64_t)round * 100000 + (uint64_t)i;
        CHECK(stale == 0, "round %d: %d of %d words put by PE %d before its quiet not there", round,
              stale, (int)MARKS, writer);

        for (int k = 0; k < ADDS; k++) {
            if (k % 2)
                shmem_uint64_atomic_add(&counter, 1, right);
            else
                shmem_signal_add(&counter, 1, right);
        }
        shmem_quiet();
        tell_and_wait(me, n, 2 * (uint64_t)round);
        uint64_t seen = shmem_uint64_g(&counter, left);
        CHECK(seen == (uint64_t)ADDS * round,
              "round %d: PE %d's count on PE %d after its quiet: expected %d, saw %llu", round,
              writer, left, ADDS * round, (unsigned long long)seen);
        shmem_barrier_all(); /* told and marks are written again next round */
    }
    CHECK_EQ(shmem_signal_fetch(&counter), ROUNDS * ADDS);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
#define RUN_TYPE(T, NAME, ...) test_##NAME(me, n);
    STRATA_RMA_TYPES(RUN_TYPE)
    test_untyped(me, n);
#define RUN_SIZED(BITS, BYTES) test_sized##BITS(me, n);
    STRATA_RMA_SIZES(RUN_SIZED)
    test_signal_gather(me, n);
    test_signal_add_set(me, n);
    test_wait_returns_what_held(me, n);
    test_large_and_fenced(me, n);
    test_streamed_run(me, n);
    test_fence_after_signal(me, n);
    test_quiet_completes(me, n);
    return check_finish();
}
