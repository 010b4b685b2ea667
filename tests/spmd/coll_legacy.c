/* SPDX-License-Identifier: BSD-3-Clause */
/* The legacy active-set collectives (deprecated in 1.6, still specified): barrier, sync,
 * broadcast32/64 (dest on the root untouched), collect/fcollect/alltoall/alltoalls 32/64 and the
 * to_all reductions, on the whole job and on the active set of even PEs (stride 2^1). pSync is
 * back to SHMEM_SYNC_VALUE after every call. */
#include "check.h"

#include <unistd.h>

#define MAXPES 16

/* Back-to-back calls take the two pSync arrays in turn: 1.6 lets a pSync be reused only once every
 * PE has finished the previous call on it, which the call in between guarantees. */
static long psyncs[2][SHMEM_BCAST_SYNC_SIZE];
static int turn;

static long *next_psync(void)
{
    return psyncs[turn++ & 1];
}
static long pwrk_long[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static double pwrk_double[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static int32_t src32[MAXPES * 4], dst32[MAXPES * 8];
static int64_t src64[MAXPES * 4], dst64[MAXPES * 8];
static long lsrc[4], ldst[4];
static double dsrc[4], ddst[4];

/* Two barriers: every PE has returned before pSync is read, and nobody starts the next call
 * (and signals) before everyone has read it. */
#define BARRIERS_PER_RUN (6 * 2)

static void check_psync_clean(const char *what)
{
    shmem_barrier_all();
    long dirty = 0;
    for (int i = 0; i < 2 * SHMEM_BCAST_SYNC_SIZE; i++)
        dirty += psyncs[i / SHMEM_BCAST_SYNC_SIZE][i % SHMEM_BCAST_SYNC_SIZE] != SHMEM_SYNC_VALUE;
    CHECK(dirty == 0, "%s left %ld pSync words changed", what, dirty);
    shmem_barrier_all();
}

static void run(int start, int log_stride, int size, int me)
{
    int rank = (me - start) >> log_stride;
    for (int i = 0; i < MAXPES * 4; i++) {
        src32[i] = rank * 100 + i;
        src64[i] = (int64_t)rank << 40 | i;
    }
    for (int i = 0; i < MAXPES * 8; i++)
        dst32[i] = -1, dst64[i] = -1;
    shmem_barrier(start, log_stride, size, next_psync());
    shmem_sync(start, log_stride, size, next_psync());
    check_psync_clean("barrier/sync");

    shmem_broadcast64(dst64, src64, 3, 0, start, log_stride, size, next_psync());
    for (int i = 0; i < 3; i++)
        CHECK(dst64[i] == (rank == 0 ? -1 : (int64_t)i), "broadcast64 [%d] rank %d", i, rank);
    check_psync_clean("broadcast64");
    shmem_broadcast32(dst32, src32, 2, size - 1, start, log_stride, size, next_psync());
    CHECK(dst32[1] == (rank == size - 1 ? -1 : (size - 1) * 100 + 1), "broadcast32");
    check_psync_clean("broadcast32");

    shmem_fcollect32(dst32, src32, 2, start, log_stride, size, next_psync());
    for (int r = 0; r < size; r++)
        CHECK(dst32[2 * r + 1] == r * 100 + 1, "fcollect32 rank %d", r);
    shmem_collect64(dst64, src64, (size_t)rank + 1, start, log_stride, size, next_psync());
    for (int r = 0, at = 0; r < size; at += r + 1, r++)
        CHECK(dst64[at + r] == ((int64_t)r << 40 | r), "collect64 rank %d", r);
    check_psync_clean("collect");

    shmem_alltoall32(dst32, src32, 2, start, log_stride, size, next_psync());
    for (int r = 0; r < size; r++)
        CHECK(dst32[2 * r] == r * 100 + 2 * rank, "alltoall32 from rank %d", r);
    shmem_alltoalls64(dst64, src64, 2, 1, 1, start, log_stride, size, next_psync());
    for (int r = 0; r < size; r++)
        CHECK(dst64[2 * r] == ((int64_t)r << 40 | rank), "alltoalls64 from rank %d", r);
    check_psync_clean("alltoall");

    for (int i = 0; i < 4; i++)
        lsrc[i] = rank + 1, dsrc[i] = 0.5 * (rank + 1);
    shmem_long_sum_to_all(ldst, lsrc, 4, start, log_stride, size, pwrk_long, next_psync());
    CHECK(ldst[3] == (long)size * (size + 1) / 2, "long_sum_to_all %ld", ldst[3]);
    shmem_double_max_to_all(ddst, dsrc, 4, start, log_stride, size, pwrk_double, next_psync());
    CHECK(ddst[0] == 0.5 * size, "double_max_to_all %g", ddst[0]);
    shmem_long_xor_to_all(lsrc, lsrc, 4, start, log_stride, size, pwrk_long, next_psync());
    long x = 0;
    for (int r = 0; r < size; r++)
        x ^= r + 1;
    CHECK(lsrc[2] == x, "in-place long_xor_to_all %ld", lsrc[2]);
    check_psync_clean("to_all");
}

/* Broadcasts in a loop with two dest buffers and two pSync arrays in turn and no barrier, as
 * programs have long written them: each member checks and then reuses its buffer, so a root
 * must never run two calls ahead of a member. */
static void alternating_broadcasts(int me, int n)
{
    enum { ROUNDS = 200, WORDS = 1024 };
    static int32_t out[2][WORDS], in[2][WORDS];
    long bad = 0;
    for (int i = 0; i < ROUNDS; i++) {
        int b = i % 2;
        for (int k = 0; k < WORDS; k++)
            out[b][k] = i * 7 + k;
        shmem_broadcast32(in[b], out[b], WORDS, 0, 0, 0, n, psyncs[b]);
        if (me != 0)
            for (int k = 0; k < WORDS; k++)
                bad += in[b][k] != i * 7 + k;
        if (me != 0 && i % 8 == 0)
            usleep(200); /* a slow member: the root must wait for it */
        for (int k = 0; k < WORDS; k++)
            in[b][k] = -1; /* reuse: the next call on this buffer must not have landed yet */
    }
    CHECK(bad == 0, "%ld words of alternating broadcasts were wrong", bad);
    shmem_barrier_all();
}

/* Alltoalls on the active set of all PEs but the last (a set that is no team), back to back into
 * two dest buffers and two pSync arrays in turn, every third one strided, a member sometimes
 * slow: each member checks and then reuses its buffer, so no member may finish a call before
 * every block of it has landed, nor a block of a later call land on a buffer still being read. */
static void alternating_set_alltoalls(int me, int n)
{
    enum { CALLS = 60, WORDS = 4 };
    static int64_t out[MAXPES * WORDS], in[2][MAXPES * WORDS * 2];
    int size = n > 2 ? n - 1 : 1;
    long bad = 0;
    for (int j = 0; j < 2 * MAXPES * WORDS * 2; j++)
        in[j / (MAXPES * WORDS * 2)][j % (MAXPES * WORDS * 2)] = -1;
    shmem_barrier_all(); /* before any block can land */
    for (int i = 0; i < CALLS && me < size; i++) {
        int b = i % 2, stride = i % 3 == 0 ? 2 : 1;
        for (int j = 0; j < size * WORDS; j++)
            out[j] = i * 100000 + me * 1000 + j;
        if (stride == 2)
            shmem_alltoalls64(in[b], out, 2, 1, WORDS, 0, 0, size, psyncs[b]);
        else
            shmem_alltoall64(in[b], out, WORDS, 0, 0, size, psyncs[b]);
        for (int j = 0; j < size * WORDS * 2; j++) {
            int from = j / stride / WORDS, w = j / stride % WORDS, gap = j % stride != 0;
            int64_t want = gap || from >= size ? -1 : i * 100000 + from * 1000 + me * WORDS + w;
            bad += in[b][j] != want;
        }
        if (me == i % size && i % 7 == 0)
            usleep(300);
        for (int j = 0; j < MAXPES * WORDS * 2; j++)
            in[b][j] = -1;
    }
    CHECK(bad == 0, "%ld words of alternating active-set alltoalls were wrong", bad);
    check_psync_clean("alternating alltoalls");
}

/* A PE outside an active set calling a collective on it does nothing (and reports nothing
 * unless SHMEM_DEBUG asks). */
static void outsider_call(int me, int n)
{
    if (n < 2)
        return;
    static long psync[SHMEM_REDUCE_SYNC_SIZE], one = 1, sum = 0;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    sum = 0;
    shmem_long_sum_to_all(&sum, &one, 1, 0, 0, 1, pwrk_long, psync); /* the set is PE 0 alone */
    CHECK_EQ(sum, me == 0 ? 1 : 0);
    shmem_barrier_all();
}

int main(void)
{
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        psyncs[0][i] = psyncs[1][i] = SHMEM_SYNC_VALUE;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    run(0, 0, n, me);
    if (me % 2 == 0)
        run(0, 1, (n + 1) / 2, me);
    else
        for (int k = 0; k < BARRIERS_PER_RUN; k++) /* the evens' barrier_all calls */
            shmem_barrier_all();
    alternating_broadcasts(me, n);
    alternating_set_alltoalls(me, n);
    outsider_call(me, n);
    return check_finish();
}
