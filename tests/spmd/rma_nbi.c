/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 sections 9.5.9-9.5.10: put_nbi and get_nbi complete by shmem_quiet. Many operations to
 * every PE are outstanding at once before the quiet. */
#include "check.h"

#include <string.h>

#define N 16
#define VALUE(T, pe, i) ((T)((pe)*10 + (i) % 9 + 1))

#define TEST_TYPE(T, NAME, ...)                                                                    \
    static void test_##NAME(int me, int n)                                                         \
    {                                                                                              \
        /* row p of dest receives PE p's data */                                                   \
        T *dest = shmem_calloc((size_t)n * N, sizeof(T)), *src = shmem_malloc(N * sizeof(T));      \
        T *got = malloc((size_t)n * N * sizeof(T));                                                \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = VALUE(T, me, i);                                                              \
        shmem_barrier_all();                                                                       \
        for (int pe = 0; pe < n; pe++)                                                             \
            shmem_##NAME##_put_nbi(dest + me * N, src, N, pe);                                     \
        shmem_quiet();                                                                             \
        shmem_barrier_all();                                                                       \
        for (int p = 0; p < n; p++)                                                                \
            for (int i = 0; i < N; i++)                                                            \
                CHECK(dest[p * N + i] == VALUE(T, p, i), #NAME "_put_nbi row %d [%d]", p, i);      \
        for (int pe = 0; pe < n; pe++)                                                             \
            shmem_ctx_##NAME##_get_nbi(SHMEM_CTX_DEFAULT, got + pe * N, src, N, pe);               \
        shmem_quiet();                                                                             \
        for (int p = 0; p < n; p++)                                                                \
            for (int i = 0; i < N; i++)                                                            \
                CHECK(got[p * N + i] == VALUE(T, p, i), #NAME "_get_nbi row %d [%d]", p, i);       \
        shmem_barrier_all();                                                                       \
        free(got);                                                                                 \
        shmem_free(src);                                                                           \
        shmem_free(dest);                                                                          \
    }
STRATA_RMA_TYPES(TEST_TYPE)

static void test_untyped(int me, int n)
{
    enum { BYTES = 1000 };
    unsigned char *dest = shmem_calloc((size_t)n, BYTES), *src = shmem_malloc(BYTES);
    unsigned char *got = malloc((size_t)n * BYTES);
    for (int i = 0; i < BYTES; i++)
        src[i] = (unsigned char)(me * 3 + i);
    shmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        shmem_putmem_nbi(dest + me * BYTES, src, 500, pe);
        shmem_put64_nbi(dest + me * BYTES + 504, src + 504, 62, pe); /* 496 bytes */
    }
    shmem_quiet();
    shmem_barrier_all();
    size_t bad = 0;
    for (int p = 0; p < n; p++)
        for (int i = 0; i < BYTES; i++)
            if (i < 500 || i >= 504)
                bad += dest[p * BYTES + i] != (unsigned char)(p * 3 + i);
    CHECK(bad == 0, "putmem_nbi/put64_nbi: %zu wrong bytes", bad);
    for (int pe = 0; pe < n; pe++) {
        shmem_getmem_nbi(got + pe * BYTES, src, 600, pe);
        shmem_ctx_get32_nbi(SHMEM_CTX_DEFAULT, got + pe * BYTES + 600, src + 600, 100, pe);
    }
    shmem_quiet();
    bad = 0;
    for (int p = 0; p < n; p++)
        for (int i = 0; i < BYTES; i++)
            bad += got[p * BYTES + i] != (unsigned char)(p * 3 + i);
    CHECK(bad == 0, "getmem_nbi/get32_nbi: %zu wrong bytes", bad);
    shmem_barrier_all();
    free(got);
    shmem_free(src);
    shmem_free(dest);
}

/* Sized forms: put##BITS_nbi / get##BITS_nbi count elements of BITS bits; plain and ctx forms,
 * to every PE, all outstanding until one quiet. */
#define SIZED_COUNT 5
#define TEST_SIZED(BITS, BYTES)                                                                    \
    static void test_sized##BITS(int me, int n)                                                    \
    {                                                                                              \
        enum { ROW = (2 * SIZED_COUNT + 2) * BYTES };                                              \
        unsigned char *dest = shmem_calloc((size_t)n, ROW), *src = shmem_malloc(ROW);              \
        unsigned char *got = malloc((size_t)n * ROW);                                              \
        for (int i = 0; i < ROW; i++)                                                              \
            src[i] = (unsigned char)(me * 40 + i + 1);                                             \
        memset(got, 0xEE, (size_t)n *ROW);                                                         \
        shmem_barrier_all();                                                                       \
        for (int pe = 0; pe < n; pe++) {                                                           \
            shmem_put##BITS##_nbi(dest + me * ROW, src, SIZED_COUNT, pe);                          \
            shmem_ctx_put##BITS##_nbi(SHMEM_CTX_DEFAULT, dest + me * ROW + SIZED_COUNT * BYTES,    \
                                      src + SIZED_COUNT * BYTES, SIZED_COUNT, pe);                 \
        }                                                                                          \
        shmem_quiet();                                                                             \
        shmem_barrier_all();                                                                       \
        size_t bad = 0;                                                                            \
        for (int p = 0; p < n; p++)                                                                \
            for (int i = 0; i < ROW; i++)                                                          \
                bad += dest[p * ROW + i] !=                                                        \
                       (i < 2 * SIZED_COUNT * BYTES ? (unsigned char)(p * 40 + i + 1) : 0);        \
        CHECK(bad == 0, "put%d_nbi of %d elements: %zu wrong bytes", BITS, SIZED_COUNT, bad);      \
        for (int pe = 0; pe < n; pe++) {                                                           \
            shmem_get##BITS##_nbi(got + pe * ROW, src, SIZED_COUNT, pe);                           \
            shmem_ctx_get##BITS##_nbi(SHMEM_CTX_DEFAULT, got + pe * ROW + SIZED_COUNT * BYTES,     \
                                      src + SIZED_COUNT * BYTES, SIZED_COUNT, pe);                 \
        }                                                                                          \
        shmem_quiet();                                                                             \
        bad = 0;                                                                                   \
        for (int p = 0; p < n; p++)                                                                \
            for (int i = 0; i < ROW; i++)                                                          \
                bad += got[p * ROW + i] !=                                                         \
                       (i < 2 * SIZED_COUNT * BYTES ? (unsigned char)(p * 40 + i + 1) : 0xEE);     \
        CHECK(bad == 0, "get%d_nbi of %d elements: %zu wrong bytes", BITS, SIZED_COUNT, bad);      \
        shmem_barrier_all();                                                                       \
        free(got);                                                                                 \
        shmem_free(src);                                                                           \
        shmem_free(dest);                                                                          \
    }
STRATA_RMA_SIZES(TEST_SIZED)

/* Many small operations to every PE outstanding at once: 256 one-element puts per target, each
 * from its own source slot (so no source is reused before the quiet), then one quiet. */
static void test_many(int me, int n)
{
    enum { OPS = 256 };
    long *dest = shmem_calloc((size_t)n * OPS, sizeof(long));
    long *src = malloc(OPS * sizeof(long)), *got = malloc((size_t)n * OPS * sizeof(long));
    for (int i = 0; i < n * OPS; i++)
        got[i] = -7; /* what a get that has not landed leaves */
    for (int k = 0; k < OPS; k++)
        src[k] = (long)me * 100000 + k * 3 + 1;
    shmem_barrier_all();
    for (int k = 0; k < OPS; k++)
        for (int pe = 0; pe < n; pe++)
            shmem_long_put_nbi(&dest[me * OPS + k], &src[k], 1, pe);
    shmem_quiet();
    shmem_barrier_all();
    long bad = 0;
    for (int p = 0; p < n; p++)
        for (int k = 0; k < OPS; k++)
            bad += dest[p * OPS + k] != (long)p * 100000 + k * 3 + 1;
    CHECK(bad == 0, "%d outstanding put_nbi per PE: %ld wrong", OPS, bad);
    for (int k = 0; k < OPS; k++)
        for (int pe = 0; pe < n; pe++)
            shmem_long_get_nbi(&got[pe * OPS + k], &dest[((pe + 1) % n) * OPS + k], 1, pe);
    shmem_quiet();
    for (int p = 0; p < n; p++) {
        bad = 0;
        int first = -1;
        for (int k = 0; k < OPS; k++)
            if (got[p * OPS + k] != (long)((p + 1) % n) * 100000 + k * 3 + 1) {
                bad++;
                if (first < 0)
                    first = k;
            }
        CHECK(bad == 0,
              "%d outstanding get_nbi from PE %d: %ld wrong after shmem_quiet (first: "
              "[%d] expected %ld, saw %ld)",
              OPS, p, bad, first, (long)((p + 1) % n) * 100000 + first * 3 + 1,
              first < 0 ? 0 : got[p * OPS + first]);
    }
    shmem_barrier_all();
    free(got);
    free(src);
    shmem_free(dest);
}

/* A source buffer may be rewritten once shmem_quiet returns (1.6 section 9.5.9: quiet completes
 * the put_nbi, source included): thousands of put_nbi of 1..64 words from one reused buffer,
 * each followed by a quiet and a rewrite, must leave exactly the last data of every word. Through
 * UCX a put that found the transport's queue full is sent later, from its source: the quiet must
 * wait for it. */
static void test_reused_source(int me, int n, int ops)
{
    enum { WORDS = 4096, MAX_LEN = 64 };
    long *dest = shmem_calloc(WORDS, sizeof(long));
    long *src = malloc(MAX_LEN * sizeof(long)), *expected = calloc(WORDS, sizeof(long));
    int target = (me + 1) % n, from = (me + n - 1) % n;
    shmem_barrier_all();
    for (int op = 0; op < ops; op++) {
        size_t len = 1 + (size_t)op % MAX_LEN, at = ((size_t)op * 97) % (WORDS - MAX_LEN);
        for (size_t j = 0; j < len; j++)
            src[j] = (long)me * 10000000 + op * 100 + (long)j;
        shmem_long_put_nbi(&dest[at], src, len, target);
        shmem_quiet();
        for (size_t j = 0; j < MAX_LEN; j++)
            src[j] = -1; /* what a put that read its source late would deliver */
    }
    shmem_barrier_all();
    for (int op = 0; op < ops; op++) {
        size_t len = 1 + (size_t)op % MAX_LEN, at = ((size_t)op * 97) % (WORDS - MAX_LEN);
        for (size_t j = 0; j < len; j++)
            expected[at + j] = (long)from * 10000000 + op * 100 + (long)j;
    }
    long bad = 0, first = -1;
    for (long i = 0; i < WORDS; i++)
        if (dest[i] != expected[i] && bad++ == 0)
            first = i;
    CHECK(bad == 0,
          "put_nbi + quiet from a reused source: %ld of %d words wrong at PE %d (first [%ld]: "
          "expected %ld, saw %ld)",
          bad, WORDS, me, first, first < 0 ? 0 : expected[first], first < 0 ? 0 : dest[first]);
    shmem_barrier_all();
    free(expected);
    free(src);
    shmem_free(dest);
}

/* Streams of short put_nbi, which a transport may gather into one message: to one PE, then a
 * fence and an atomic add (the add finds every put in place); alternating between two PEs, then a
 * quiet; and ping-pong without a quiet, each PE waiting for the other's answer to its put (the put
 * must leave when its PE waits, or both wait for ever). */
#define STREAM 1500
static uint64_t stream_dest[2][STREAM], stream_src[STREAM], stream_sig, ping, pong;

static uint64_t stream_value(int pe, int i)
{
    return (uint64_t)pe << 32 | (uint64_t)i;
}

static void test_streams(int me, int n)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    memset(stream_dest, 0, sizeof(stream_dest));
    stream_sig = ping = pong = 0;
    for (int i = 0; i < STREAM; i++) /* a put_nbi's source stays as it is until the quiet */
        stream_src[i] = stream_value(me, i);
    shmem_barrier_all();
    for (int i = 0; i < STREAM; i++)
        shmem_putmem_nbi(&stream_dest[0][i], &stream_src[i], sizeof(uint64_t), right);
    shmem_fence();
    shmem_uint64_atomic_add(&stream_sig, 1, right);
    shmem_uint64_wait_until(&stream_sig, SHMEM_CMP_GE, 1);
    int bad = 0;
    for (int i = 0; i < STREAM; i++)
        bad += stream_dest[0][i] != stream_value(left, i);
    CHECK(bad == 0, "%d of %d fenced put_nbi from PE %d missing when its add came", bad, STREAM,
          left);
    for (int i = 0; i < STREAM; i++)
        shmem_putmem_nbi(&stream_dest[1][i], &stream_src[i], sizeof(uint64_t),
                         i & 1 ? right : left);
    shmem_quiet();
    shmem_barrier_all();
    bad = 0;
    for (int i = 0; i < STREAM; i++)
        bad += stream_dest[1][i] != stream_value(i & 1 ? left : right, i);
    CHECK(bad == 0, "%d of %d put_nbi alternating between two PEs wrong after a quiet", bad,
          STREAM);
    static uint64_t rounds[11];
    for (uint64_t round = 1; n > 1 && me < 2 && round <= 10; round++) {
        rounds[round] = round;
        if (me == 0) {
            shmem_uint64_put_nbi(&ping, &rounds[round], 1, 1);
            shmem_uint64_wait_until(&pong, SHMEM_CMP_GE, round);
        } else {
            shmem_uint64_wait_until(&ping, SHMEM_CMP_GE, round);
            shmem_uint64_put_nbi(&pong, &rounds[round], 1, 0);
        }
    }
    shmem_barrier_all();
}

/* argv[1]: how many put_nbi the reused-source test issues (default 4096). */
/* Large non-blocking gets: several of just over 1 MiB from every PE outstanding at once (more
 * bytes than a transport may keep in flight, so some wait for others' answers), all in place
 * after the quiet, byte for byte. */
#define LARGE_GET ((1 << 20) + 3)
#define LARGE_GETS 3

static void test_large_gets(int me, int n)
{
    unsigned char *src = shmem_malloc(LARGE_GET + LARGE_GETS);
    unsigned char *got = malloc((size_t)n * LARGE_GETS * LARGE_GET);
    for (size_t i = 0; i < LARGE_GET + LARGE_GETS; i++)
        src[i] = check_pattern_byte(i, me);
    memset(got, 0xEE, (size_t)n * LARGE_GETS * LARGE_GET);
    shmem_barrier_all();
    for (int k = 0; k < LARGE_GETS; k++)
        for (int pe = 0; pe < n; pe++)
            shmem_getmem_nbi(got + ((size_t)k * n + pe) * LARGE_GET, src + k, LARGE_GET, pe);
    shmem_quiet();
    for (int k = 0; k < LARGE_GETS; k++)
        for (int pe = 0; pe < n; pe++) {
            const unsigned char *row = got + ((size_t)k * n + pe) * LARGE_GET;
            size_t bad = 0;
            for (size_t i = 0; i < LARGE_GET; i++)
                bad += row[i] != check_pattern_byte(i + (size_t)k, pe);
            CHECK(bad == 0, "getmem_nbi %d of %d bytes from PE %d: %zu wrong bytes", k, LARGE_GET,
                  pe, bad);
        }
    shmem_barrier_all();
    free(got);
    shmem_free(src);
}

int main(int argc, char **argv)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
#define RUN_TYPE(T, NAME, ...) test_##NAME(me, n);
    STRATA_RMA_TYPES(RUN_TYPE)
    test_untyped(me, n);
#define RUN_SIZED(BITS, BYTES) test_sized##BITS(me, n);
    STRATA_RMA_SIZES(RUN_SIZED)
    test_many(me, n);
    test_streams(me, n);
    test_large_gets(me, n);
    test_reused_source(me, n, argc > 1 ? atoi(argv[1]) : 4096);
    return check_finish();
}
