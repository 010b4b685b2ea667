/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 9.10: wait_until, test and the _all/_any/_some forms (scalar and vector) with every
 * comparison, status masks and empty sets, for every point-to-point type, the fairness of the _any
 * forms, and signal_wait_until. The awaited values are written by another PE. */
#include "check.h"

#include <string.h>

#define K 4
static const int cmps[] = {SHMEM_CMP_EQ, SHMEM_CMP_NE, SHMEM_CMP_GT,
                           SHMEM_CMP_GE, SHMEM_CMP_LT, SHMEM_CMP_LE};
static uint64_t sig;

#define TEST_P2P(T, N, ...)                                                                        \
    static void p2p_##N(int me, int n)                                                             \
    {                                                                                              \
        static T ivars[K];                                                                         \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        size_t idx[K];                                                                             \
        int status[K] = {0, 1, 0, 0};                                                              \
        for (int i = 0; i < K; i++)                                                                \
            ivars[i] = (T)10;                                                                      \
        shmem_barrier_all();                                                                       \
        /* every comparison on 10, with a value it holds for and one it fails for */               \
        const T holds[] = {(T)10, (T)11, (T)9, (T)10, (T)11, (T)10};                               \
        const T fails[] = {(T)11, (T)10, (T)10, (T)11, (T)10, (T)9};                               \
        for (int c = 0; c < 6; c++) {                                                              \
            CHECK(shmem_##N##_test(&ivars[0], cmps[c], holds[c]) == 1, #N " test cmp %d", c);      \
            shmem_##N##_wait_until(&ivars[0], cmps[c], holds[c]);                                  \
            CHECK(shmem_##N##_test(&ivars[0], cmps[c], fails[c]) == 0, #N " test cmp %d false",    \
                  c);                                                                              \
        }                                                                                          \
        /* 1.6: an empty set satisfies test_all; test_any finds nothing; test_some counts 0 */     \
        int all_masked[K] = {1, 1, 1, 1};                                                          \
        CHECK(shmem_##N##_test_all(ivars, 0, NULL, SHMEM_CMP_EQ, (T)3) == 1,                       \
              #N " empty test_all");                                                               \
        CHECK(shmem_##N##_test_all(ivars, K, all_masked, SHMEM_CMP_EQ, (T)3) == 1,                 \
              #N " masked test_all");                                                              \
        CHECK(shmem_##N##_test_any(ivars, K, all_masked, SHMEM_CMP_EQ, (T)10) == SIZE_MAX,         \
              #N " masked test_any");                                                              \
        CHECK(shmem_##N##_test_some(ivars, 0, idx, NULL, SHMEM_CMP_EQ, (T)10) == 0,                \
              #N " empty test_some");                                                              \
        CHECK(shmem_##N##_wait_until_any(ivars, K, all_masked, SHMEM_CMP_EQ, (T)3) == SIZE_MAX,    \
              #N " empty wait_until_any");                                                         \
        CHECK(shmem_##N##_wait_until_some(ivars, K, idx, all_masked, SHMEM_CMP_EQ, (T)3) == 0,     \
              #N " empty wait_until_some");                                                        \
        shmem_##N##_wait_until_all(ivars, K, all_masked, SHMEM_CMP_EQ, (T)3);                      \
        shmem_barrier_all();                                                                       \
        /* the left neighbour sets element 2, then 3, then 0 (element 1 is masked out) */          \
        shmem_##N##_p(&ivars[2], (T)20, right);                                                    \
        size_t any = shmem_##N##_wait_until_any(ivars, K, status, SHMEM_CMP_EQ, (T)20);            \
        CHECK(any == 2, #N " wait_until_any gave %zu", any);                                       \
        CHECK(shmem_##N##_test_any(ivars, K, status, SHMEM_CMP_GT, (T)15) == 2, #N " test_any");   \
        shmem_barrier_all();                                                                       \
        shmem_##N##_p(&ivars[3], (T)30, right);                                                    \
        size_t some = shmem_##N##_wait_until_some(ivars, K, idx, status, SHMEM_CMP_GE, (T)20);     \
        CHECK(some >= 1 && idx[0] >= 2, #N " wait_until_some gave %zu", some);                     \
        shmem_##N##_wait_until(&ivars[3], SHMEM_CMP_EQ, (T)30);                                    \
        CHECK(shmem_##N##_test_some(ivars, K, idx, status, SHMEM_CMP_GE, (T)20) == 2 &&            \
                  idx[0] == 2 && idx[1] == 3,                                                      \
              #N " test_some");                                                                    \
        CHECK(shmem_##N##_test_all(ivars, K, status, SHMEM_CMP_GE, (T)20) == 0,                    \
              #N " test_all before the last update");                                              \
        shmem_barrier_all();                                                                       \
        shmem_##N##_p(&ivars[0], (T)40, right);                                                    \
        shmem_##N##_wait_until_all(ivars, K, status, SHMEM_CMP_GE, (T)20);                         \
        CHECK(ivars[0] == (T)40 && ivars[1] == (T)10, #N " wait_until_all (from PE %d)", left);    \
        /* vector forms: per-element comparison values */                                          \
        T want[K] = {(T)40, (T)99, (T)20, (T)30};                                                  \
        CHECK(shmem_##N##_test_all_vector(ivars, K, status, SHMEM_CMP_EQ, want) == 1,              \
              #N " test_all_vector");                                                              \
        shmem_##N##_wait_until_all_vector(ivars, K, status, SHMEM_CMP_EQ, want);                   \
        size_t hit = shmem_##N##_wait_until_any_vector(ivars, K, NULL, SHMEM_CMP_EQ, want);        \
        CHECK(hit == 0 || hit == 2 || hit == 3, #N " wait_until_any_vector gave %zu", hit);        \
        CHECK(shmem_##N##_test_any_vector(ivars, K, NULL, SHMEM_CMP_NE, want) == 1,                \
              #N " test_any_vector");                                                              \
        CHECK(shmem_##N##_wait_until_some_vector(ivars, K, idx, NULL, SHMEM_CMP_EQ, want) == 3,    \
              #N " wait_until_some_vector");                                                       \
        CHECK(shmem_##N##_test_some_vector(ivars, K, idx, status, SHMEM_CMP_LE, want) == 3,        \
              #N " test_some_vector");                                                             \
        /* 1.6: every element that keeps satisfying the test is returned by some call of a series: \
         * elements 0, 2 and 3 hold (1 is masked), so three calls of each form return all three */ \
        unsigned seen[4] = {0, 0, 0, 0};                                                           \
        for (int call = 0; call < 3; call++) {                                                     \
            seen[0] |= 1u << shmem_##N##_test_any(ivars, K, status, SHMEM_CMP_GE, (T)20);          \
            seen[1] |= 1u << shmem_##N##_test_any_vector(ivars, K, NULL, SHMEM_CMP_EQ, want);      \
            seen[2] |= 1u << shmem_##N##_wait_until_any(ivars, K, status, SHMEM_CMP_GE, (T)20);    \
            seen[3] |=                                                                             \
                1u << shmem_##N##_wait_until_any_vector(ivars, K, NULL, SHMEM_CMP_EQ, want);       \
        }                                                                                          \
        for (int form = 0; form < 4; form++)                                                       \
            CHECK(seen[form] == 0xd, #N " _any form %d: indices returned 0x%x, expected 0, 2, 3",  \
                  form, seen[form]);                                                               \
        shmem_barrier_all();                                                                       \
    }
STRATA_P2P_TYPES(TEST_P2P)

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
#define RUN_P2P(T, N, ...) p2p_##N(me, n);
    STRATA_P2P_TYPES(RUN_P2P)
    /* signal_wait_until returns the value that satisfied it */
    static long data;
    long value = 1000 + me;
    shmem_long_put_signal(&data, &value, 1, &sig, 3, SHMEM_SIGNAL_ADD, (me + 1) % n);
    uint64_t seen = shmem_signal_wait_until(&sig, SHMEM_CMP_GE, 3);
    CHECK(seen == 3, "signal_wait_until returned %llu", (unsigned long long)seen);
    CHECK(data == 1000 + (me + n - 1) % n, "data before signal");
    /* generic and deprecated forms */
    static int flag;
    shmem_barrier_all();
    shmem_int_p(&flag, 5, (me + 1) % n);
    shmem_wait_until(&flag, SHMEM_CMP_EQ, 5);
    shmem_int_wait(&flag, 0);
    CHECK(shmem_test(&flag, SHMEM_CMP_EQ, 5) == 1, "generic test");
    shmem_barrier_all();
    return check_finish();
}
