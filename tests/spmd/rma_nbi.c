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

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
#define RUN_TYPE(T, NAME, ...) test_##NAME(me, n);
    STRATA_RMA_TYPES(RUN_TYPE)
    test_untyped(me, n);
    return check_finish();
}
