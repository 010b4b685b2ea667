/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 sections 9.5.3-9.5.4: shmem_p and shmem_g for every standard RMA type and their context
 * forms, with values that need every bit of the type (fractions for floating types). */
#include "check.h"

#define VALUE(T, pe) ((T)(((T)3 / (T)2) + (T)(pe)*7)) /* 1.5 + 7pe, or 1 + 7pe for integers */

#define TEST_TYPE(T, NAME, ...)                                                                    \
    static T NAME##_target[2];                                                                     \
    static void test_##NAME(int me, int n)                                                         \
    {                                                                                              \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        shmem_##NAME##_p(&NAME##_target[0], VALUE(T, me), right);                                  \
        shmem_ctx_##NAME##_p(SHMEM_CTX_DEFAULT, &NAME##_target[1], VALUE(T, me + 1), left);        \
        shmem_barrier_all();                                                                       \
        CHECK(NAME##_target[0] == VALUE(T, left), #NAME "_p from PE %d", left);                    \
        CHECK(NAME##_target[1] == VALUE(T, right + 1), #NAME " ctx_p from PE %d", right);          \
        T a = shmem_##NAME##_g(&NAME##_target[0], right);                                          \
        T b = shmem_ctx_##NAME##_g(SHMEM_CTX_DEFAULT, &NAME##_target[1], left);                    \
        CHECK(a == VALUE(T, me), #NAME "_g of PE %d", right);                                      \
        CHECK(b == VALUE(T, me + 1), #NAME " ctx_g of PE %d", left);                               \
        T *heap = shmem_malloc(sizeof(T));                                                         \
        *heap = VALUE(T, me + 2);                                                                  \
        shmem_barrier_all();                                                                       \
        CHECK(shmem_##NAME##_g(heap, right) == VALUE(T, right + 2), #NAME "_g on the heap");       \
        shmem_barrier_all();                                                                       \
        shmem_free(heap);                                                                          \
    }
STRATA_RMA_TYPES(TEST_TYPE)

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
#define RUN_TYPE(T, NAME, ...) test_##NAME(me, n);
    STRATA_RMA_TYPES(RUN_TYPE)
    /* Floating values that are not integers survive exactly. */
    static double d;
    shmem_double_p(&d, 0.1 * (me + 1), (me + 1) % n);
    shmem_barrier_all();
    CHECK(d == 0.1 * ((me + n - 1) % n + 1), "double_p of a fraction: %g", d);
    return check_finish();
}
