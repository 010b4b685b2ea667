/* SPDX-License-Identifier: BSD-3-Clause */
/* Every algorithm path of the collectives, with every element checked on every PE: sizes on both
 * sides of the chunk and algorithm thresholds (1, 7, 1000 and 100000 elements), roots other than
 * 0, in-place reductions and scans, on the world team, the reversed world, the even PEs (stride 2)
 * and PEs 1..n-1, so team sizes 1 to 6 with 3 and 5 among them. Under SHMEM_NODE_DIRECT=0 the same
 * calls take the transport algorithms (binomial, ring, pairwise, recursive doubling and
 * Rabenseifner with the non-power-of-two fold). The legacy active-set forms run on the whole job
 * and on the even PEs. A dest that was just read is synced before the next collective into it. */
#include "check.h"

#include <string.h>
#include <unistd.h>

#define MAXPES 6
#define MAXC 100000

static const size_t counts[] = {1, 7, 1000, MAXC};
static long *lsrc, *ldst;
static double *dsrc, *ddst;

static long value(int rank, size_t i)
{
    return (long)rank * 1000003 + (long)(i % 9973);
}

static void fill(int rank, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        lsrc[i] = value(rank, i);
        dsrc[i] = 0.5 * (double)value(rank, i);
    }
}

static void broadcasts(shmem_team_t team, int me, int n, size_t c)
{
    for (int root = n - 1; root >= 0; root -= n > 2 ? 2 : 1) {
        fill(me, c);
        shmem_team_sync(team);
        shmem_long_broadcast(team, ldst, lsrc, c, root);
        long bad = 0;
        for (size_t i = 0; i < c; i++)
            bad += ldst[i] != value(root, i);
        CHECK(bad == 0, "broadcast of %zu from %d of %d: %ld wrong", c, root, n, bad);
        shmem_team_sync(team);
    }
}

static void collects(shmem_team_t team, int me, int n, size_t c)
{
    fill(me, c);
    shmem_team_sync(team);
    shmem_long_fcollect(team, ldst, lsrc, c);
    long bad = 0;
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < c; i++)
            bad += ldst[(size_t)r * c + i] != value(r, i);
    CHECK(bad == 0, "fcollect of %zu on %d: %ld wrong", c, n, bad);
    shmem_team_sync(team);
    /* collect: rank r contributes c / (r + 1) elements, 0 for some */
    shmem_long_collect(team, ldst, lsrc, c / (size_t)(me + 1));
    size_t at = 0;
    bad = 0;
    for (int r = 0; r < n; at += c / (size_t)(r + 1), r++)
        for (size_t i = 0; i < c / (size_t)(r + 1); i++)
            bad += ldst[at + i] != value(r, i);
    CHECK(bad == 0, "collect of up to %zu on %d: %ld wrong", c, n, bad);
    shmem_team_sync(team);
}

static void alltoalls(shmem_team_t team, int me, int n, size_t c)
{
    if (c > 1000)
        return;
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < c; i++)
            lsrc[(size_t)r * c + i] = value(me, (size_t)r * 7 + i);
    shmem_team_sync(team);
    shmem_long_alltoall(team, ldst, lsrc, c);
    long bad = 0;
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < c; i++)
            bad += ldst[(size_t)r * c + i] != value(r, (size_t)me * 7 + i);
    CHECK(bad == 0, "alltoall of %zu on %d: %ld wrong", c, n, bad);
    shmem_team_sync(team);
    shmem_long_alltoalls(team, ldst, lsrc, 2, 1, c);
    bad = 0;
    for (int r = 0; r < n; r++)
        for (size_t i = 0; i < c; i++)
            bad += ldst[((size_t)r * c + i) * 2] != value(r, (size_t)me * 7 + i);
    CHECK(bad == 0, "alltoalls of %zu on %d: %ld wrong", c, n, bad);
    shmem_team_sync(team);
}

/* Sum of value(r, i) over ranks first..last. */
static long sum_of(int first, int last, size_t i)
{
    long s = 0;
    for (int r = first; r <= last; r++)
        s += value(r, i);
    return s;
}

static void reductions(shmem_team_t team, int me, int n, size_t c)
{
    fill(me, c);
    shmem_team_sync(team);
    shmem_long_sum_reduce(team, ldst, lsrc, c);
    shmem_double_max_reduce(team, ddst, dsrc, c);
    long bad = 0;
    for (size_t i = 0; i < c; i++)
        bad += ldst[i] != sum_of(0, n - 1, i) || ddst[i] != 0.5 * (double)value(n - 1, i);
    CHECK(bad == 0, "sum/max reduce of %zu on %d: %ld wrong", c, n, bad);
    shmem_long_sum_reduce(team, lsrc, lsrc, c); /* in place */
    shmem_double_sum_reduce(team, dsrc, dsrc, c);
    bad = 0;
    for (size_t i = 0; i < c; i++)
        bad += lsrc[i] != sum_of(0, n - 1, i) || dsrc[i] != 0.5 * (double)sum_of(0, n - 1, i);
    CHECK(bad == 0, "in-place sum reduce of %zu on %d: %ld wrong", c, n, bad);
    if (c > 1000)
        return;
    fill(me, c);
    shmem_team_sync(team);
    shmem_long_sum_inscan(team, ldst, lsrc, c);
    shmem_long_sum_exscan(team, lsrc, lsrc, c); /* in place */
    bad = 0;
    for (size_t i = 0; i < c; i++)
        bad += ldst[i] != sum_of(0, me, i) || (me > 0 && lsrc[i] != sum_of(0, me - 1, i));
    CHECK(bad == 0, "scans of %zu on %d: %ld wrong", c, n, bad);
    shmem_team_sync(team);
}

/* Reductions back to back with no sync between them, of sizes that take different algorithms
 * (and, for the direct one, one or several blocks), each round from its own source, while one
 * member lags: a call's scratch and signals must not mix with its neighbours'. */
#define STREAM_ROUNDS 4
#define STREAM_MAX 20000
static void reduction_stream(shmem_team_t team, int me, int n)
{
    static const size_t sizes[] = {3, 5000, 1, 600, STREAM_MAX, 300};
    const size_t kinds = sizeof(sizes) / sizeof(sizes[0]);
    for (int r = 0; r < STREAM_ROUNDS; r++)
        for (size_t i = 0; i < STREAM_MAX; i++)
            lsrc[(size_t)r * STREAM_MAX + i] = value(me, i) + r;
    shmem_team_sync(team);
    for (int r = 0; r < STREAM_ROUNDS; r++)
        for (size_t k = 0, at = 0; k < kinds; at += sizes[k++]) {
            if (me == (r + (int)k) % n)
                usleep(300);
            shmem_long_sum_reduce(team, ldst + at, lsrc + (size_t)r * STREAM_MAX, sizes[k]);
        }
    long bad = 0, r = STREAM_ROUNDS - 1;
    for (size_t k = 0, at = 0; k < kinds; at += sizes[k++])
        for (size_t i = 0; i < sizes[k]; i++)
            bad += ldst[at + i] != sum_of(0, n - 1, i) + n * r;
    CHECK(bad == 0, "reductions back to back on %d: %ld wrong", n, bad);
    shmem_team_sync(team);
}

/* Broadcasts back to back into two dest buffers in turn (spaced apart elements apart), no
 * sync between them: sizes below a team of two's eager slots (large and small in turn), or above
 * them, the root changing every root_calls calls, the other members lagging at each change (so a
 * root may run calls ahead); at two changes in three the first call is above the slots, so tree
 * and eager calls follow each other, whatever the calls' numbers modulo the slots (root_calls is
 * prime to them, and above their number: a root that ignored them would overwrite a slot not yet
 * read); each member checks every call's data as it returns. */
static void broadcast_stream(shmem_team_t team, int me, int n, const size_t *sizes, int kinds,
                             int calls, int root_calls, size_t apart)
{
    long *dest[2] = {ldst, ldst + apart};
    long bad = 0;
    for (int call = 0; call < calls; call++) {
        int change = call % root_calls == 0, root = call / root_calls % n;
        size_t c = change && call / root_calls % 3 ? 5000 : sizes[call % kinds];
        if (me == root)
            for (size_t i = 0; i < c; i++)
                lsrc[i] = value(root, i) + call;
        if (me != root && change)
            usleep(5000); /* the root may run ahead through the next calls */
        shmem_long_broadcast(team, dest[call & 1], lsrc, c, root);
        for (size_t i = 0; i < c; i++)
            bad += dest[call & 1][i] != value(root, i) + call;
    }
    CHECK(bad == 0, "broadcasts back to back on %d (%d calls a root): %ld wrong", n, root_calls,
          bad);
    shmem_team_sync(team);
}

/* Reductions of 600000 longs (4.8 MB): on a team that goes by node, more than a node's leader
 * combines alone (the node's PEs then combine a segment each into its dest) or copies into its
 * node's dests alone (they then copy the result from it). Back to back into two dests in turn,
 * sources rewritten every call, a member lagging at each; then in place. */
static void large_reductions(shmem_team_t team, int me, int n)
{
    const size_t c = (size_t)MAXC * MAXPES;
    long *dest[2] = {ldst, ldst + c};
    long bad = 0;
    for (int call = 0; call < 4; call++) {
        for (size_t i = 0; i < c; i++)
            lsrc[i] = value(me, i) + call;
        if (me == call % n)
            usleep(2000);
        shmem_long_sum_reduce(team, dest[call & 1], lsrc, c);
        for (size_t i = 0; i < c; i++)
            bad += dest[call & 1][i] != sum_of(0, n - 1, i) + (long)n * call;
    }
    shmem_long_sum_reduce(team, lsrc, lsrc, c);
    for (size_t i = 0; i < c; i++)
        bad += lsrc[i] != sum_of(0, n - 1, i) + (long)n * 3;
    CHECK(bad == 0, "reductions of %zu on %d: %ld wrong", c, n, bad);
    shmem_team_sync(team);
}

/* Reductions of 200000 longs (1.6 MB) into one dest back to back, every other one in place,
 * sources rewritten every call, a member checking each result only after a pause while the
 * others go on: a team of two (and the leaders of a team by node over two nodes) puts its pieces
 * straight into the partner's dest, where in place the partner's own segments were (it copies
 * them aside first), and Strata keeps a dest the program's until its member enters the call (the
 * spec asks for every dest to be ready before any member calls).
 * Between them broadcasts of 1 and 8192 elements into another part of dest, from another root
 * (on a team of two the eager and the tree broadcast, whose lagged syncs the reduction's entry
 * shares): the root goes on to the next reduction at once. */
static void reductions_into_one_dest(shmem_team_t team, int me, int n)
{
    const size_t c = (size_t)MAXC * 2;
    long *bcast_dest = ldst + c, *bcast_src = lsrc + c;
    long bad = 0, bad_bcast = 0;
    for (int call = 0; call < 6; call++) {
        long *source = call % 2 ? ldst : lsrc;
        for (size_t i = 0; i < c; i++)
            source[i] = value(me, i) + call;
        shmem_long_sum_reduce(team, ldst, source, c);
        if (me == call % n)
            usleep(20000);
        for (size_t i = 0; i < c; i++)
            bad += ldst[i] != sum_of(0, n - 1, i) + (long)n * call;
        size_t b = call / 2 % 2 ? 8192 : 1;
        int root = (call + 1) % n;
        for (size_t i = 0; me == root && i < b; i++)
            bcast_src[i] = value(root, i) - call;
        shmem_long_broadcast(team, bcast_dest, bcast_src, b, root);
        for (size_t i = 0; i < b; i++)
            bad_bcast += bcast_dest[i] != value(root, i) - call;
    }
    CHECK(bad == 0 && bad_bcast == 0,
          "reductions of %zu into one dest on %d: %ld wrong, broadcasts between: %ld wrong", c, n,
          bad, bad_bcast);
    shmem_team_sync(team);
}

/* Member r's block in call `call` of a collect stream: an fcollect's blocks change size from call
 * to call, a collect's differ between members too, some empty; every fifth call's blocks add up
 * to 4.5 MiB, more than a node's leader copies into its node's dests itself on a team that goes
 * by node (its members then copy the whole from its dest). */
static size_t stream_count(int call, int r, int n, int fixed)
{
    static const size_t sizes[] = {1, 300, 7, 2000, 0};
    size_t skew = fixed ? 0 : (size_t)r;
    if (call % 5 == 4)
        return ((size_t)9 << 19) / sizeof(long) / (size_t)n + skew;
    return sizes[((size_t)call + skew) % 5];
}

/* Collects back to back into two dests in turn, with no sync between: sources rewritten every
 * call, a different member lagging at each, every block checked on return. */
static void collect_stream(shmem_team_t team, int me, int n, int fixed)
{
    long *dest[2] = {ldst, ldst + (size_t)MAXC * MAXPES};
    long bad = 0;
    for (int call = 0; call < 24; call++) {
        size_t c = stream_count(call, me, n, fixed);
        for (size_t i = 0; i < c; i++)
            lsrc[i] = value(me, i) + call;
        if (me == call % n)
            usleep(2000);
        if (fixed)
            shmem_long_fcollect(team, dest[call & 1], lsrc, c);
        else
            shmem_long_collect(team, dest[call & 1], lsrc, c);
        size_t at = 0;
        for (int r = 0; r < n; r++) {
            size_t count = stream_count(call, r, n, fixed);
            for (size_t i = 0; i < count; i++)
                bad += dest[call & 1][at + i] != value(r, i) + call;
            at += count;
        }
    }
    CHECK(bad == 0, "%s back to back on %d: %ld wrong", fixed ? "fcollects" : "collects", n, bad);
    shmem_team_sync(team);
}

/* Alltoalls back to back into two dests in turn, with no sync between, as collect_stream: blocks
 * of 0 to 300 elements, contiguous or strided on either side. */
static void alltoall_stream(shmem_team_t team, int me, int n)
{
    static const size_t sizes[] = {1, 300, 7, 0, 40};
    static const ptrdiff_t strides[][2] = {{1, 1}, {2, 1}, {1, 3}}; /* dst, sst */
    long *dest[2] = {ldst, ldst + (size_t)MAXC * MAXPES};
    long bad = 0;
    for (int call = 0; call < 24; call++) {
        size_t c = sizes[call % 5];
        ptrdiff_t dst = strides[call % 3][0], sst = strides[call % 3][1];
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < c; i++)
                lsrc[((size_t)r * c + i) * (size_t)sst] = value(me, (size_t)r * 7 + i) + call;
        if (me == call % n)
            usleep(2000);
        shmem_long_alltoalls(team, dest[call & 1], lsrc, dst, sst, c);
        for (int r = 0; r < n; r++)
            for (size_t i = 0; i < c; i++)
                bad += dest[call & 1][((size_t)r * c + i) * (size_t)dst] !=
                       value(r, (size_t)me * 7 + i) + call;
    }
    CHECK(bad == 0, "alltoalls back to back on %d: %ld wrong", n, bad);
    shmem_team_sync(team);
}

/* Large and small slots in turn, 19 calls a root (above the 16 large slots); then on a team of
 * two, small slots only, 131 calls a root (above the 128 small ones), tree broadcasts of
 * 40 KB to 2.4 MB with 72-byte ones (small slots) among them, 7 calls a root, and both slot kinds
 * 2600 calls a root: a root that mails its partner runs up to 1024 calls ahead, and a receiver
 * that announced its entries too seldom for that would leave it waiting for good. */
static void broadcast_streams(shmem_team_t team, int me, int n)
{
    static const size_t mixed[] = {1, 512, 3, 100, 9}, small[] = {1, 32, 3, 9},
                        large[] = {131072, 5000, 300000, 131072, 9};
    broadcast_stream(team, me, n, mixed, 5, 96, 19, STREAM_MAX);
    if (n == 2) {
        broadcast_stream(team, me, n, small, 4, 3 * 131 + 1, 131, STREAM_MAX);
        broadcast_stream(team, me, n, large, 5, 3 * 7 + 1, 7, 300000);
        broadcast_stream(team, me, n, mixed, 5, 2 * 2600 + 1, 2600, STREAM_MAX);
    }
}

static void run_team(shmem_team_t team)
{
    if (team == SHMEM_TEAM_INVALID)
        return;
    int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        broadcasts(team, me, n, counts[k]);
        collects(team, me, n, counts[k]);
        alltoalls(team, me, n, counts[k]);
        reductions(team, me, n, counts[k]);
    }
    reduction_stream(team, me, n);
    broadcast_streams(team, me, n);
    collect_stream(team, me, n, 1);
    collect_stream(team, me, n, 0);
    alltoall_stream(team, me, n);
    large_reductions(team, me, n);
    reductions_into_one_dest(team, me, n);
}

/* The legacy forms over PE_start 0, stride 2^log_stride: pSync arrays taken in turn. */
static long psyncs[2][SHMEM_REDUCE_SYNC_SIZE];
static long pwrk[MAXC / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static int turn;

static long *next_psync(void)
{
    return psyncs[turn++ & 1];
}

static void run_set(int log_stride, int size, int rank)
{
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        size_t c = counts[k];
        fill(rank, c);
        memset(ldst, 0, c * sizeof(long));
        shmem_barrier(0, log_stride, size, next_psync());
        int root = size - 1;
        shmem_broadcast64(ldst, lsrc, c, root, 0, log_stride, size, next_psync());
        long bad = 0;
        for (size_t i = 0; i < c; i++)
            bad += ldst[i] != (rank == root ? 0 : value(root, i));
        shmem_barrier(0, log_stride, size, next_psync());
        shmem_fcollect64(ldst, lsrc, c, 0, log_stride, size, next_psync());
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < c; i++)
                bad += ldst[(size_t)r * c + i] != value(r, i);
        shmem_long_sum_to_all(lsrc, lsrc, (int)c, 0, log_stride, size, pwrk, next_psync());
        for (size_t i = 0; i < c; i++)
            bad += lsrc[i] != sum_of(0, size - 1, i);
        CHECK(bad == 0, "active set (stride 2^%d, %d PEs) with %zu elements: %ld wrong", log_stride,
              size, c, bad);
    }
}

int main(void)
{
    for (int i = 0; i < 2 * SHMEM_REDUCE_SYNC_SIZE; i++)
        psyncs[i / SHMEM_REDUCE_SYNC_SIZE][i % SHMEM_REDUCE_SYNC_SIZE] = SHMEM_SYNC_VALUE;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (n > MAXPES) {
        if (me == 0)
            fprintf(stderr, "coll_algos runs on up to %d PEs\n", MAXPES);
        return check_finish();
    }
    size_t words = (size_t)MAXC * MAXPES * 2;
    lsrc = shmem_malloc(words * sizeof(long));
    ldst = shmem_malloc(words * sizeof(long));
    dsrc = shmem_malloc(MAXC * sizeof(double));
    ddst = shmem_malloc(MAXC * sizeof(double));
    shmem_team_t reversed, evens, upper = SHMEM_TEAM_INVALID;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &reversed);
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens);
    if (n > 1)
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, n - 1, NULL, 0, &upper);
    run_team(SHMEM_TEAM_WORLD);
    run_team(reversed);
    run_team(evens);
    run_team(upper);
    shmem_barrier_all();
    run_set(0, n, me);
    if (me % 2 == 0)
        run_set(1, (n + 1) / 2, me / 2);
    shmem_barrier_all();
    long dirty = 0;
    for (int i = 0; i < 2 * SHMEM_REDUCE_SYNC_SIZE; i++)
        dirty += psyncs[i / SHMEM_REDUCE_SYNC_SIZE][i % SHMEM_REDUCE_SYNC_SIZE] != SHMEM_SYNC_VALUE;
    CHECK(dirty == 0, "%ld pSync words not restored", dirty);
    shmem_barrier_all();
    shmem_team_destroy(upper);
    shmem_team_destroy(evens);
    shmem_team_destroy(reversed);
    shmem_free(ddst);
    shmem_free(dsrc);
    shmem_free(ldst);
    shmem_free(lsrc);
    return check_finish();
}
