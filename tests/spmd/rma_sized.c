/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 9.5.1-9.5.2: the sized forms put8..put128 and get8..get128 count elements of
 * SIZE bits: put128 of 3 elements moves 48 bytes and not one more. */
#include "check.h"

#include <string.h>

#define COUNT 3
#define ROOM 64

#define TEST_SIZED(BITS, BYTES)                                                                    \
    static void test_##BITS(int me, int n)                                                         \
    {                                                                                              \
        unsigned char *dest = shmem_malloc(ROOM * 2), *src = shmem_malloc(ROOM * 2);               \
        unsigned char got[ROOM * 2];                                                               \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        for (int i = 0; i < ROOM * 2; i++)                                                         \
            src[i] = (unsigned char)(me * 40 + i + 1);                                             \
        memset(dest, 0, ROOM * 2);                                                                 \
        shmem_barrier_all();                                                                       \
        shmem_put##BITS(dest, src, COUNT, right);                                                  \
        shmem_ctx_put##BITS(SHMEM_CTX_DEFAULT, dest + ROOM, src + ROOM, COUNT, right);             \
        shmem_barrier_all();                                                                       \
        size_t bad = 0;                                                                            \
        for (int half = 0; half < 2; half++)                                                       \
            for (int i = 0; i < ROOM; i++) {                                                       \
                int k = half * ROOM + i;                                                           \
                unsigned char expect = i < COUNT * BYTES ? (unsigned char)(left * 40 + k + 1) : 0; \
                bad += dest[k] != expect;                                                          \
            }                                                                                      \
        CHECK(bad == 0, "put%d of %d elements: %zu wrong bytes", BITS, COUNT, bad);                \
        memset(got, 0, sizeof(got));                                                               \
        shmem_get##BITS(got, src, COUNT, right);                                                   \
        shmem_ctx_get##BITS(SHMEM_CTX_DEFAULT, got + ROOM, src + ROOM, COUNT, right);              \
        bad = 0;                                                                                   \
        for (int half = 0; half < 2; half++)                                                       \
            for (int i = 0; i < ROOM; i++) {                                                       \
                int k = half * ROOM + i;                                                           \
                unsigned char expect =                                                             \
                    i < COUNT * BYTES ? (unsigned char)(right * 40 + k + 1) : 0;                   \
                bad += got[k] != expect;                                                           \
            }                                                                                      \
        CHECK(bad == 0, "get%d of %d elements: %zu wrong bytes", BITS, COUNT, bad);                \
        shmem_barrier_all();                                                                       \
        shmem_free(src);                                                                           \
        shmem_free(dest);                                                                          \
    }
STRATA_RMA_SIZES(TEST_SIZED)

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
#define RUN_SIZED(BITS, BYTES) test_##BITS(me, n);
    STRATA_RMA_SIZES(RUN_SIZED)
    return check_finish();
}
