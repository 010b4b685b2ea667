/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 9.7: every atomic operation of the extended, standard and bitwise AMO tables, for
 * every type, in its plain, context and non-blocking forms, plus the deprecated names and the
 * C11 generic forms. Each PE operates on its right neighbour's word and checks the old value it
 * gets back and the value left behind. */
#include "check.h"

#define TEST_EXT(T, N, ...)                                                                        \
    static void ext_##N(int me, int n)                                                             \
    {                                                                                              \
        static T word;                                                                             \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        T got;                                                                                     \
        word = (T)(10 + me);                                                                       \
        shmem_barrier_all();                                                                       \
        CHECK(shmem_##N##_atomic_fetch(&word, right) == (T)(10 + right), #N " fetch");             \
        shmem_ctx_##N##_atomic_fetch_nbi(SHMEM_CTX_DEFAULT, &got, &word, right);                   \
        shmem_quiet();                                                                             \
        CHECK(got == (T)(10 + right), #N " ctx fetch_nbi");                                        \
        shmem_barrier_all();                                                                       \
        shmem_##N##_atomic_set(&word, (T)(20 + me), right);                                        \
        shmem_barrier_all();                                                                       \
        CHECK(word == (T)(20 + left), #N " set");                                                  \
        shmem_barrier_all();                                                                       \
        CHECK(shmem_ctx_##N##_atomic_swap(SHMEM_CTX_DEFAULT, &word, (T)(30 + me), right) ==        \
                  (T)(20 + me),                                                                    \
              #N " swap returns the old value");                                                   \
        shmem_barrier_all();                                                                       \
        CHECK(word == (T)(30 + left), #N " swap stores");                                          \
        shmem_barrier_all();                                                                       \
        shmem_##N##_atomic_swap_nbi(&got, &word, (T)(40 + me), right);                             \
        shmem_quiet();                                                                             \
        CHECK(got == (T)(30 + me), #N " swap_nbi");                                                \
        shmem_barrier_all();                                                                       \
        CHECK(word == (T)(40 + left), #N " swap_nbi stores");                                      \
        shmem_barrier_all();                                                                       \
    }
STRATA_AMO_EXT_TYPES(TEST_EXT)

#define TEST_STD(T, N, ...)                                                                        \
    static void std_##N(int me, int n)                                                             \
    {                                                                                              \
        static T word;                                                                             \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        T got;                                                                                     \
        word = (T)(5 + me);                                                                        \
        shmem_barrier_all();                                                                       \
        CHECK(shmem_##N##_atomic_compare_swap(&word, (T)99, (T)7, right) == (T)(5 + right),        \
              #N " compare_swap with a wrong condition");                                          \
        CHECK(shmem_##N##_atomic_fetch(&word, right) == (T)(5 + right), #N " cswap must fail");    \
        shmem_barrier_all();                                                                       \
        CHECK(shmem_ctx_##N##_atomic_compare_swap(SHMEM_CTX_DEFAULT, &word, (T)(5 + right),        \
                                                  (T)(50 + me), right) == (T)(5 + right),          \
              #N " compare_swap with the right condition");                                        \
        shmem_barrier_all();                                                                       \
        CHECK(word == (T)(50 + left), #N " compare_swap stores");                                  \
        shmem_barrier_all();                                                                       \
        CHECK(shmem_##N##_atomic_fetch_inc(&word, right) == (T)(50 + me), #N " fetch_inc");        \
        shmem_##N##_atomic_inc(&word, right);                                                      \
        shmem_ctx_##N##_atomic_inc(SHMEM_CTX_DEFAULT, &word, right);                               \
        CHECK(shmem_##N##_atomic_fetch_add(&word, (T)10, right) == (T)(53 + me), #N " fetch_add"); \
        shmem_##N##_atomic_add(&word, (T)3, right);                                                \
        shmem_##N##_atomic_fetch_inc_nbi(&got, &word, right);                                      \
        shmem_quiet();                                                                             \
        CHECK(got == (T)(66 + me), #N " fetch_inc_nbi");                                           \
        shmem_ctx_##N##_atomic_fetch_add_nbi(SHMEM_CTX_DEFAULT, &got, &word, (T)2, right);         \
        shmem_quiet();                                                                             \
        CHECK(got == (T)(67 + me), #N " fetch_add_nbi");                                           \
        shmem_##N##_atomic_compare_swap_nbi(&got, &word, (T)(69 + me), (T)1, right);               \
        shmem_quiet();                                                                             \
        CHECK(got == (T)(69 + me), #N " compare_swap_nbi");                                        \
        shmem_barrier_all();                                                                       \
        CHECK(word == (T)1, #N " final value %lld", (long long)word);                              \
        shmem_barrier_all();                                                                       \
    }
STRATA_AMO_STD_TYPES(TEST_STD)

#define TEST_BIT(T, N, ...)                                                                        \
    static void bit_##N(int me, int n)                                                             \
    {                                                                                              \
        static T word;                                                                             \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        T got;                                                                                     \
        word = (T)0xF0F0;                                                                          \
        shmem_barrier_all();                                                                       \
        CHECK(shmem_##N##_atomic_fetch_and(&word, (T)0xFF00, right) == (T)0xF0F0,                  \
              #N " fetch_and");                                                                    \
        CHECK(shmem_##N##_atomic_fetch_or(&word, (T)0x000F, right) == (T)0xF000, #N " fetch_or");  \
        CHECK(shmem_ctx_##N##_atomic_fetch_xor(SHMEM_CTX_DEFAULT, &word, (T)0x0101, right) ==      \
                  (T)0xF00F,                                                                       \
              #N " fetch_xor");                                                                    \
        shmem_##N##_atomic_and(&word, (T)0xFFF0, right);                                           \
        shmem_##N##_atomic_or(&word, (T)0x0020, right);                                            \
        shmem_ctx_##N##_atomic_xor(SHMEM_CTX_DEFAULT, &word, (T)0x1000, right);                    \
        shmem_##N##_atomic_fetch_and_nbi(&got, &word, (T)0xFFFF, right);                           \
        shmem_quiet();                                                                             \
        CHECK(got == (T)0xE120, #N " fetch_and_nbi %llx", (unsigned long long)got);                \
        shmem_##N##_atomic_fetch_or_nbi(&got, &word, (T)0x0004, right);                            \
        shmem_ctx_##N##_atomic_fetch_xor_nbi(SHMEM_CTX_DEFAULT, &got, &word, (T)0x0001, right);    \
        shmem_quiet();                                                                             \
        CHECK(got == (T)0xE124, #N " fetch_xor_nbi %llx", (unsigned long long)got);                \
        shmem_barrier_all();                                                                       \
        CHECK(word == (T)0xE125, #N " stored %llx (from PE %d)", (unsigned long long)word, left);  \
        shmem_barrier_all();                                                                       \
    }
STRATA_AMO_BIT_TYPES(TEST_BIT)

/* Deprecated names and C11 generics on a few types. */
static void legacy_and_generic(int me, int n)
{
    static int iw;
    static long lw;
    static double dw;
    static unsigned long uw;
    int right = (me + 1) % n, left = (me + n - 1) % n;
    iw = 0;
    lw = 0;
    dw = 0;
    uw = 0;
    shmem_barrier_all();
    CHECK(shmem_int_fadd(&iw, 5, right) == 0 && shmem_int_finc(&iw, right) == 5, "int fadd/finc");
    shmem_long_add(&lw, 7, right);
    shmem_long_inc(&lw, right);
    CHECK(shmem_long_cswap(&lw, 8, 100, right) == 8, "long cswap");
    CHECK(shmem_double_swap(&dw, 1.5, right) == 0.0, "double swap");
    shmem_double_set(&dw, 2.5, right);
    CHECK(shmem_double_fetch(&dw, right) == 2.5, "double fetch/set");
    CHECK(shmem_atomic_fetch_add(&lw, 1L, right) == 100, "generic fetch_add");
    shmem_atomic_inc(SHMEM_CTX_DEFAULT, &iw, right);
    CHECK(shmem_atomic_fetch(&dw, right) == 2.5, "generic fetch on double");
    shmem_atomic_or(&uw, 6UL, right);
    CHECK(shmem_atomic_fetch_xor(&uw, 2UL, right) == 6UL, "generic fetch_xor");
    CHECK(shmem_fadd(&lw, 1L, right) == 101, "deprecated generic fadd");
    shmem_barrier_all();
    CHECK(iw == 7 && lw == 102 && uw == 4UL, "final values %d %ld %lu (from PE %d)", iw, lw, uw,
          left);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
#define RUN_EXT(T, N, ...) ext_##N(me, n);
#define RUN_STD(T, N, ...) std_##N(me, n);
#define RUN_BIT(T, N, ...) bit_##N(me, n);
    STRATA_AMO_EXT_TYPES(RUN_EXT)
    STRATA_AMO_STD_TYPES(RUN_STD)
    STRATA_AMO_BIT_TYPES(RUN_BIT)
    legacy_and_generic(me, n);
    return check_finish();
}
