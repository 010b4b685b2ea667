/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 9.5.1-9.5.2: shmem_put and shmem_get for every standard RMA type, their context
 * forms, and putmem/getmem at odd sizes and offsets. Each PE writes to its right neighbour and
 * reads from it, then checks the values carry the right PE's signature. */
#include "check.h"

#include <string.h>

#define N 10
#define VALUE(T, pe, i) ((T)((pe)*10 + (i) + 1))

#define TEST_TYPE(T, NAME, ...)                                                                    \
    static void test_##NAME(int me, int n)                                                         \
    {                                                                                              \
        T *dest = shmem_calloc(N + 1, sizeof(T)), *src = shmem_malloc(N * sizeof(T));              \
        T got[N];                                                                                  \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = VALUE(T, me, i);                                                              \
        shmem_barrier_all();                                                                       \
        shmem_##NAME##_put(dest, src, N, right);                                                   \
        shmem_barrier_all();                                                                       \
        for (int i = 0; i < N; i++)                                                                \
            CHECK(dest[i] == VALUE(T, left, i), #NAME "_put: dest[%d] from PE %d", i, left);       \
        CHECK(dest[N] == 0, #NAME "_put wrote past nelems");                                       \
        shmem_##NAME##_get(got, src, N, right);                                                    \
        for (int i = 0; i < N; i++)                                                                \
            CHECK(got[i] == VALUE(T, right, i), #NAME "_get: got[%d] from PE %d", i, right);       \
        shmem_barrier_all();                                                                       \
        memset(dest, 0, (N + 1) * sizeof(T));                                                      \
        shmem_barrier_all();                                                                       \
        shmem_ctx_##NAME##_put(SHMEM_CTX_DEFAULT, dest, src, N, left);                             \
        shmem_barrier_all();                                                                       \
        for (int i = 0; i < N; i++)                                                                \
            CHECK(dest[i] == VALUE(T, right, i), #NAME " ctx_put: dest[%d]", i);                   \
        memset(got, 0, sizeof(got));                                                               \
        shmem_ctx_##NAME##_get(SHMEM_CTX_DEFAULT, got, src, N, left);                              \
        for (int i = 0; i < N; i++)                                                                \
            CHECK(got[i] == VALUE(T, left, i), #NAME " ctx_get: got[%d]", i);                      \
        shmem_barrier_all();                                                                       \
        /* nelems == 0 moves nothing */                                                            \
        dest[0] = VALUE(T, 9, 0);                                                                  \
        shmem_barrier_all();                                                                       \
        shmem_##NAME##_put(dest, src, 0, right);                                                   \
        shmem_##NAME##_get(got, src, 0, right);                                                    \
        shmem_barrier_all();                                                                       \
        CHECK(dest[0] == VALUE(T, 9, 0), #NAME "_put of 0 elements changed dest");                 \
        shmem_free(src);                                                                           \
        shmem_free(dest);                                                                          \
    }
STRATA_RMA_TYPES(TEST_TYPE)

/* putmem/getmem at sizes that are not multiples of anything, at unaligned offsets: up to 2.5 MiB,
 * which a transport moving large transfers a piece at a time cuts into several. */
static void test_mem(int me, int n)
{
    const size_t sizes[] = {1, 7, 4099, 1 << 20, (5 << 19) + 3};
    const size_t max = (5 << 19) + 64;
    unsigned char *dest = shmem_malloc(max), *src = shmem_malloc(max);
    unsigned char *got = malloc(max);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        size_t len = sizes[s], off = s * 3 + 1;
        memset(dest, 0xEE, max);
        for (size_t i = 0; i < max; i++)
            src[i] = check_pattern_byte(i, me);
        shmem_barrier_all();
        shmem_putmem(dest + off, src + off, len, right);
        shmem_barrier_all();
        size_t bad = 0;
        for (size_t i = 0; i < max; i++) {
            unsigned char expect = i >= off && i < off + len ? check_pattern_byte(i, left) : 0xEE;
            bad += dest[i] != expect;
        }
        CHECK(bad == 0, "putmem of %zu bytes at offset %zu: %zu wrong bytes", len, off, bad);
        /* getmem into an unaligned private buffer, plain and context forms */
        for (int form = 0; form < 2; form++) {
            memset(got, 0xEE, max);
            if (form)
                shmem_ctx_getmem(SHMEM_CTX_DEFAULT, got + 1, src + off, len, right);
            else
                shmem_getmem(got + 1, src + off, len, right);
            bad = got[0] != 0xEE || (len + 1 < max && got[len + 1] != 0xEE);
            for (size_t i = 0; i < len; i++)
                bad += got[i + 1] != check_pattern_byte(i + off, right);
            CHECK(bad == 0, "%sgetmem of %zu bytes at offset %zu: %zu wrong bytes",
                  form ? "ctx_" : "", len, off, bad);
        }
        shmem_barrier_all();
        /* ctx_putmem from the left neighbour, to a different unaligned offset */
        memset(dest, 0xEE, max);
        shmem_barrier_all();
        shmem_ctx_putmem(SHMEM_CTX_DEFAULT, dest + off + 2, src, len, right);
        shmem_barrier_all();
        bad = 0;
        for (size_t i = 0; i < max; i++) {
            unsigned char expect =
                i >= off + 2 && i < off + 2 + len ? check_pattern_byte(i - off - 2, left) : 0xEE;
            bad += dest[i] != expect;
        }
        CHECK(bad == 0, "ctx_putmem of %zu bytes at offset %zu: %zu wrong bytes", len, off + 2,
              bad);
        shmem_barrier_all();
    }
    /* zero bytes: nothing moves */
    memset(dest, 0x5A, 16);
    memset(got, 0x5A, 16);
    shmem_barrier_all();
    shmem_putmem(dest, src, 0, right);
    shmem_getmem(got, src, 0, right);
    shmem_barrier_all();
    size_t touched = 0;
    for (int i = 0; i < 16; i++)
        touched += (dest[i] != 0x5A) + (got[i] != 0x5A);
    CHECK(touched == 0, "putmem/getmem of 0 bytes changed %zu bytes", touched);
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
    test_mem(me, n);
    return check_finish();
}
