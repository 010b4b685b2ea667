/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 C11 bindings: the generic forms of every RMA routine select the typed routine from the
 * pointer's type, with or without a leading context. */
#include "check.h"

#include <sched.h>

static int i_dst[8], i_src[8];
static long l_dst[8];
static double d_dst[8];
static long double ld_dst[4];
static unsigned char uc_dst[8];
static int64_t i64_dst[8];
static uint64_t sig;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    long l_src[8];
    double d_src[8];
    long double ld_src[4];
    unsigned char uc_src[8];
    int64_t i64_src[8];
    for (int i = 0; i < 8; i++) {
        i_src[i] = me * 10 + i;
        l_src[i] = me * 20 + i;
        d_src[i] = me + i / 4.0;
        uc_src[i] = (unsigned char)(me * 5 + i);
        i64_src[i] = (int64_t)me << 40 | i;
    }
    for (int i = 0; i < 4; i++)
        ld_src[i] = me + i / 8.0L;
    shmem_barrier_all();

    shmem_put(i_dst, i_src, 8, right);
    shmem_put(SHMEM_CTX_DEFAULT, l_dst, l_src, 8, right);
    shmem_put_nbi(d_dst, d_src, 8, right);
    shmem_put_nbi(SHMEM_CTX_DEFAULT, ld_dst, ld_src, 4, right);
    shmem_iput(uc_dst, uc_src, 2, 1, 4, right);
    shmem_ibput(SHMEM_CTX_DEFAULT, i64_dst, i64_src, 4, 2, 2, 2, right);
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < 8; i++) {
        CHECK(i_dst[i] == left * 10 + i, "generic put int [%d]", i);
        CHECK(l_dst[i] == left * 20 + i, "generic ctx put long [%d]", i);
        CHECK(d_dst[i] == left + i / 4.0, "generic put_nbi double [%d]", i);
    }
    for (int i = 0; i < 4; i++) {
        CHECK(ld_dst[i] == left + i / 8.0L, "generic ctx put_nbi long double [%d]", i);
        CHECK(uc_dst[2 * i] == (unsigned char)(left * 5 + i), "generic iput uchar [%d]", i);
    }
    CHECK(i64_dst[0] == ((int64_t)left << 40 | 0) && i64_dst[1] == ((int64_t)left << 40 | 1) &&
              i64_dst[4] == ((int64_t)left << 40 | 2) && i64_dst[5] == ((int64_t)left << 40 | 3),
          "generic ibput int64_t");

    int i_got[8];
    long double ld_got[4];
    unsigned char uc_got[8] = {0};
    int64_t i64_got[8] = {0};
    shmem_get(i_got, i_dst, 8, right);
    shmem_get_nbi(SHMEM_CTX_DEFAULT, ld_got, ld_dst, 4, right);
    shmem_iget(uc_got, uc_dst, 1, 2, 4, right);
    shmem_ibget(i64_got, i64_dst, 2, 4, 2, 2, right);
    shmem_quiet();
    for (int i = 0; i < 8; i++)
        CHECK(i_got[i] == me * 10 + i, "generic get int [%d]", i);
    for (int i = 0; i < 4; i++) {
        CHECK(ld_got[i] == me + i / 8.0L, "generic ctx get_nbi long double [%d]", i);
        CHECK(uc_got[i] == (unsigned char)(me * 5 + i), "generic iget uchar [%d]", i);
    }
    CHECK(i64_got[0] == ((int64_t)me << 40 | 0) && i64_got[3] == ((int64_t)me << 40 | 3),
          "generic ibget int64_t");

    /* the remaining context forms: get, iget, ibget, and iput/ibput/put without one */
    long l_got[8] = {0};
    double d_got[8] = {0};
    shmem_get(SHMEM_CTX_DEFAULT, l_got, l_dst, 8, right);
    shmem_iget(SHMEM_CTX_DEFAULT, d_got, d_dst, 2, 3, 3, right);
    for (int i = 0; i < 8; i++)
        CHECK(l_got[i] == me * 20 + i, "generic ctx get long [%d]", i);
    for (int i = 0; i < 8; i++)
        CHECK(d_got[i] == (i % 2 == 0 && i < 6 ? me + (i / 2) * 3 / 4.0 : 0.0),
              "generic ctx iget double [%d]: %g", i, d_got[i]);
    unsigned char uc_blocks[8] = {0};
    shmem_ibget(SHMEM_CTX_DEFAULT, uc_blocks, uc_dst, 3, 2, 1, 2, right);
    CHECK(uc_blocks[0] == (unsigned char)(me * 5) && uc_blocks[3] == (unsigned char)(me * 5 + 1) &&
              uc_blocks[1] == 0 && uc_blocks[2] == 0 && uc_blocks[4] == 0,
          "generic ctx ibget uchar");
    shmem_barrier_all(); /* every PE has read before the next writes */
    shmem_iput(SHMEM_CTX_DEFAULT, i_dst, i_src, 3, 2, 3, right); /* i_dst[0,3,6] = src[0,2,4] */
    shmem_ibput(d_dst, d_src, 4, 3, 1, 2, right);                /* d_dst[0,4] = src[0,3] */
    shmem_barrier_all();
    CHECK(i_dst[0] == left * 10 && i_dst[3] == left * 10 + 2 && i_dst[6] == left * 10 + 4 &&
              i_dst[1] == left * 10 + 1 && i_dst[4] == left * 10 + 4,
          "generic ctx iput int");
    CHECK(d_dst[0] == left && d_dst[4] == left + 3 / 4.0 && d_dst[1] == left + 1 / 4.0,
          "generic ibput double");

    shmem_barrier_all(); /* every PE has checked l_dst and d_dst before they change */
    shmem_p(&l_dst[7], 77L * me, right);
    shmem_p(SHMEM_CTX_DEFAULT, &d_dst[7], 0.25 * me, right);
    shmem_barrier_all();
    CHECK(l_dst[7] == 77L * left && d_dst[7] == 0.25 * left, "generic p");
    CHECK(shmem_g(&l_dst[7], right) == 77L * me, "generic g");
    CHECK(shmem_g(SHMEM_CTX_DEFAULT, &d_dst[7], right) == 0.25 * me, "generic ctx g");

    shmem_barrier_all();
    shmem_put_signal(i_dst, i_src, 2, &sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_put_signal_nbi(SHMEM_CTX_DEFAULT, l_dst, l_src, 2, &sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_quiet();
    while (shmem_signal_fetch(&sig) < 2)
        sched_yield(); /* oversubscribed: let the sender run */
    CHECK(i_dst[1] == left * 10 + 1 && l_dst[1] == left * 20 + 1, "generic put_signal data");
    shmem_barrier_all();
    return check_finish();
}
