/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 sections 9.5.5-9.5.8: iput/iget (strided) and ibput/ibget (blocked strided) for every
 * standard RMA type and the sized forms. Elements between the strides must keep their values. */
#include "check.h"

#include <string.h>

#define LEN 64
#define SENTINEL(T) ((T)99)
#define VALUE(T, pe, i) ((T)((pe)*10 + (i) % 8 + 1))

/* Reference: where element j of block b lands, for a blocked strided transfer. */
static int in_block(int index, ptrdiff_t stride, size_t bsize, size_t nblocks, int *elem)
{
    for (size_t b = 0; b < nblocks; b++)
        for (size_t j = 0; j < bsize; j++)
            if ((ptrdiff_t)b * stride + (ptrdiff_t)j == index) {
                *elem = (int)(b * bsize + j);
                return 1;
            }
    return 0;
}

#define TEST_TYPE(T, NAME, ...)                                                                    \
    static void test_##NAME(int me, int n)                                                         \
    {                                                                                              \
        T *dest = shmem_malloc(LEN * sizeof(T)), *src = shmem_malloc(LEN * sizeof(T));             \
        T got[LEN];                                                                                \
        int right = (me + 1) % n, left = (me + n - 1) % n, e;                                      \
        for (int i = 0; i < LEN; i++) {                                                            \
            src[i] = VALUE(T, me, i);                                                              \
            dest[i] = SENTINEL(T);                                                                 \
        }                                                                                          \
        shmem_barrier_all();                                                                       \
        /* iput: dest stride 3, source stride 2, 10 elements */                                    \
        shmem_##NAME##_iput(dest, src, 3, 2, 10, right);                                           \
        shmem_barrier_all();                                                                       \
        for (int i = 0; i < LEN; i++) {                                                            \
            T expect = i % 3 == 0 && i / 3 < 10 ? VALUE(T, left, (i / 3) * 2) : SENTINEL(T);       \
            CHECK(dest[i] == expect, #NAME "_iput: dest[%d]", i);                                  \
        }                                                                                          \
        /* ctx forms: contiguous strides (1, 1) into dest[40..45), and a 0-element iput */         \
        shmem_barrier_all();                                                                       \
        shmem_ctx_##NAME##_iput(SHMEM_CTX_DEFAULT, dest + 40, src + 1, 1, 1, 5, right);            \
        shmem_ctx_##NAME##_iput(SHMEM_CTX_DEFAULT, dest + 50, src, 2, 2, 0, right);                \
        shmem_barrier_all();                                                                       \
        for (int i = 39; i < 52; i++) {                                                            \
            T expect = i >= 40 && i < 45 ? VALUE(T, left, i - 39) : SENTINEL(T);                   \
            CHECK(dest[i] == expect, #NAME " ctx_iput: dest[%d]", i);                              \
        }                                                                                          \
        for (int i = 0; i < LEN; i++)                                                              \
            got[i] = SENTINEL(T);                                                                  \
        shmem_ctx_##NAME##_iget(SHMEM_CTX_DEFAULT, got + 1, src, 4, 1, 3, right);                  \
        for (int i = 0; i < 16; i++) {                                                             \
            T expect = i % 4 == 1 && i / 4 < 3 ? VALUE(T, right, i / 4) : SENTINEL(T);             \
            CHECK(got[i] == expect, #NAME " ctx_iget: got[%d]", i);                                \
        }                                                                                          \
        /* iget: local dest stride 2, remote source stride 3, 7 elements */                        \
        for (int i = 0; i < LEN; i++)                                                              \
            got[i] = SENTINEL(T);                                                                  \
        shmem_##NAME##_iget(got, src, 2, 3, 7, right);                                             \
        for (int i = 0; i < LEN; i++) {                                                            \
            T expect = i % 2 == 0 && i / 2 < 7 ? VALUE(T, right, (i / 2) * 3) : SENTINEL(T);       \
            CHECK(got[i] == expect, #NAME "_iget: got[%d]", i);                                    \
        }                                                                                          \
        shmem_barrier_all();                                                                       \
        for (int i = 0; i < LEN; i++)                                                              \
            dest[i] = SENTINEL(T);                                                                 \
        shmem_barrier_all();                                                                       \
        /* ibput: 4 blocks of 3, dest blocks 5 apart, source blocks 4 apart */                     \
        shmem_ctx_##NAME##_ibput(SHMEM_CTX_DEFAULT, dest, src, 5, 4, 3, 4, right);                 \
        shmem_barrier_all();                                                                       \
        for (int i = 0; i < LEN; i++) {                                                            \
            T expect = SENTINEL(T);                                                                \
            if (in_block(i, 5, 3, 4, &e))                                                          \
                expect = VALUE(T, left, (e / 3) * 4 + e % 3);                                      \
            CHECK(dest[i] == expect, #NAME "_ibput: dest[%d]", i);                                 \
        }                                                                                          \
        /* plain ibput, blocks of 1 (as iput) with dest stride 2, into dest[48..54] */             \
        shmem_barrier_all();                                                                       \
        shmem_##NAME##_ibput(dest + 48, src, 2, 5, 1, 4, right);                                   \
        shmem_barrier_all();                                                                       \
        for (int i = 47; i < LEN; i++) {                                                           \
            T expect =                                                                             \
                i >= 48 && i < 56 && i % 2 == 0 ? VALUE(T, left, (i - 48) / 2 * 5) : SENTINEL(T);  \
            CHECK(dest[i] == expect, #NAME "_ibput bsize 1: dest[%d]", i);                         \
        }                                                                                          \
        /* ibget: 3 blocks of 2, local dest blocks 3 apart, remote source blocks 6 apart */        \
        for (int i = 0; i < LEN; i++)                                                              \
            got[i] = SENTINEL(T);                                                                  \
        shmem_##NAME##_ibget(got, src, 3, 6, 2, 3, right);                                         \
        for (int i = 0; i < LEN; i++) {                                                            \
            T expect = SENTINEL(T);                                                                \
            if (in_block(i, 3, 2, 3, &e))                                                          \
                expect = VALUE(T, right, (e / 2) * 6 + e % 2);                                     \
            CHECK(got[i] == expect, #NAME "_ibget: got[%d]", i);                                   \
        }                                                                                          \
        shmem_barrier_all();                                                                       \
        shmem_free(src);                                                                           \
        shmem_free(dest);                                                                          \
    }
STRATA_RMA_TYPES(TEST_TYPE)

/* Sized forms: elements of BITS bits, filled with a byte pattern. */
#define TEST_SIZED(BITS, BYTES)                                                                    \
    static void test_sized##BITS(int me, int n)                                                    \
    {                                                                                              \
        unsigned char *dest = shmem_malloc(LEN * BYTES), *src = shmem_malloc(LEN * BYTES);         \
        unsigned char got[LEN * BYTES];                                                            \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        for (int i = 0; i < LEN * BYTES; i++)                                                      \
            src[i] = (unsigned char)(me * 50 + i);                                                 \
        memset(dest, 0xAA, LEN *BYTES);                                                            \
        shmem_barrier_all();                                                                       \
        shmem_iput##BITS(dest, src, 2, 3, 5, right);                                               \
        shmem_ctx_ibput##BITS(SHMEM_CTX_DEFAULT, dest + 20 * BYTES, src, 4, 2, 2, 3, right);       \
        shmem_barrier_all();                                                                       \
        size_t bad = 0;                                                                            \
        for (int e = 0; e < 5; e++)                                                                \
            for (int b = 0; b < BYTES; b++)                                                        \
                bad += dest[2 * e * BYTES + b] != (unsigned char)(left * 50 + 3 * e * BYTES + b);  \
        for (int e = 0; e < 6; e++)                                                                \
            for (int b = 0; b < BYTES; b++)                                                        \
                bad += dest[(20 + (e / 2) * 4 + e % 2) * BYTES + b] !=                             \
                       (unsigned char)(left * 50 + ((e / 2) * 2 + e % 2) * BYTES + b);             \
        bad += dest[1 * BYTES] != 0xAA; /* between strides */                                      \
        CHECK(bad == 0, "iput%d/ibput%d: %zu wrong bytes", BITS, BITS, bad);                       \
        memset(got, 0xAA, sizeof(got));                                                            \
        shmem_iget##BITS(got, src, 3, 2, 4, right);                                                \
        shmem_ibget##BITS(got + 30 * BYTES, src, 2, 5, 1, 3, right);                               \
        bad = 0;                                                                                   \
        for (int e = 0; e < 4; e++)                                                                \
            for (int b = 0; b < BYTES; b++)                                                        \
                bad += got[3 * e * BYTES + b] != (unsigned char)(right * 50 + 2 * e * BYTES + b);  \
        for (int e = 0; e < 3; e++)                                                                \
            for (int b = 0; b < BYTES; b++)                                                        \
                bad += got[(30 + 2 * e) * BYTES + b] !=                                            \
                       (unsigned char)(right * 50 + 5 * e * BYTES + b);                            \
        bad += got[1 * BYTES] != 0xAA;                                                             \
        CHECK(bad == 0, "iget%d/ibget%d: %zu wrong bytes", BITS, BITS, bad);                       \
        shmem_barrier_all();                                                                       \
        shmem_free(src);                                                                           \
        shmem_free(dest);                                                                          \
    }
STRATA_RMA_SIZES(TEST_SIZED)

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
#define RUN_TYPE(T, NAME, ...) test_##NAME(me, n);
    STRATA_RMA_TYPES(RUN_TYPE)
#define RUN_SIZED(BITS, BYTES) test_sized##BITS(me, n);
    STRATA_RMA_SIZES(RUN_SIZED)
    return check_finish();
}
