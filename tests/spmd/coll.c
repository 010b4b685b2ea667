/* SPDX-License-Identifier: BSD-3-Clause */
/* Buffers are static: symmetric without shmem_malloc, which is collective over the world and so
 * cannot be called from code only a sub-team runs.
 *
 * 1.6 section 9.9: team collectives for every type of their tables, on the world team, on a
 * reversed team and on a strided sub-team: broadcast (root's dest too), collect with blocks of
 * different sizes, fcollect, alltoall, alltoalls with strides, every reduction, in-place
 * reduction, inclusive and exclusive scans, the mem forms, and an invalid team. A collective may
 * write a member's dest before that member has entered it (1.6: the caller makes every dest ready
 * first), so a dest that was just read is synced before the next collective into it. */
#include "check.h"

#include <string.h>
#include <unistd.h>

#define N 4 /* elements per block */
#define MAXPES 16

#define VALUE(T, a, b) ((T)((a)*8 + (b) + 1))

#define TEST_DATA(T, NAME, ...)                                                                    \
    static void data_##NAME(shmem_team_t team)                                                     \
    {                                                                                              \
        int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);                               \
        static T src[MAXPES * N * 3], dst[MAXPES * N * 3];                                         \
        for (int i = 0; i < MAXPES * N * 3; i++)                                                   \
            src[i] = VALUE(T, me, i % 8), dst[i] = (T)0;                                           \
        shmem_team_sync(team);                                                                     \
        CHECK(shmem_##NAME##_broadcast(team, dst, src, N, n - 1) == 0, #NAME " broadcast");        \
        for (int i = 0; i < N; i++)                                                                \
            CHECK(dst[i] == VALUE(T, n - 1, i), #NAME " broadcast [%d]", i);                       \
        shmem_team_sync(team); /* everyone has read dst: it is ready for the next result */        \
        CHECK(shmem_##NAME##_fcollect(team, dst, src, N) == 0, #NAME " fcollect");                 \
        for (int r = 0; r < n; r++)                                                                \
            for (int i = 0; i < N; i++)                                                            \
                CHECK(dst[r * N + i] == VALUE(T, r, i), #NAME " fcollect [%d][%d]", r, i);         \
        shmem_team_sync(team);                                                                     \
        /* collect: rank r contributes r + 1 elements */                                           \
        CHECK(shmem_##NAME##_collect(team, dst, src, (size_t)me + 1) == 0, #NAME " collect");      \
        for (int r = 0, at = 0; r < n; at += r + 1, r++)                                           \
            for (int i = 0; i <= r; i++)                                                           \
                CHECK(dst[at + i] == VALUE(T, r, i), #NAME " collect rank %d [%d]", r, i);         \
        shmem_team_sync(team);                                                                     \
        /* alltoall: block r of my source goes to rank r */                                        \
        for (int r = 0; r < n; r++)                                                                \
            for (int i = 0; i < N; i++)                                                            \
                src[r * N + i] = VALUE(T, me, r + i);                                              \
        CHECK(shmem_##NAME##_alltoall(team, dst, src, N) == 0, #NAME " alltoall");                 \
        for (int r = 0; r < n; r++)                                                                \
            for (int i = 0; i < N; i++)                                                            \
                CHECK(dst[r * N + i] == VALUE(T, r, me + i), #NAME " alltoall [%d][%d]", r, i);    \
        shmem_team_sync(team);                                                                     \
        /* alltoalls: source stride 3, dest stride 2 */                                            \
        for (int i = 0; i < MAXPES * N * 3; i++)                                                   \
            src[i] = VALUE(T, me, i % 8), dst[i] = (T)0;                                           \
        shmem_team_sync(team);                                                                     \
        CHECK(shmem_##NAME##_alltoalls(team, dst, src, 2, 3, N) == 0, #NAME " alltoalls");         \
        for (int r = 0; r < n; r++)                                                                \
            for (int k = 0; k < N; k++) {                                                          \
                CHECK(dst[(r * N + k) * 2] == VALUE(T, r, ((me * N + k) * 3) % 8),                 \
                      #NAME " alltoalls [%d][%d]", r, k);                                          \
                CHECK(dst[(r * N + k) * 2 + 1] == (T)0, #NAME " alltoalls gap");                   \
            }                                                                                      \
        shmem_team_sync(team);                                                                     \
    }
STRATA_RMA_TYPES(TEST_DATA)

/* Reductions: rank r contributes r + 1 (+ i), small enough for every type. */
#define TEST_BITWISE(T, NAME, ...)                                                                 \
    static void bitwise_##NAME(shmem_team_t team)                                                  \
    {                                                                                              \
        int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);                               \
        static T src[N], dst[N];                                                                   \
        T and_ = (T) ~(T)0, or_ = 0, xor_ = 0;                                                     \
        for (int r = 0; r < n; r++) {                                                              \
            and_ &= (T)(0x7F ^ (1 << (r % 7)));                                                    \
            or_ |= (T)(1 << (r % 7));                                                              \
            xor_ ^= (T)(r + 1);                                                                    \
        }                                                                                          \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = (T)(0x7F ^ (1 << (me % 7)));                                                  \
        shmem_##NAME##_and_reduce(team, dst, src, N);                                              \
        CHECK(dst[N - 1] == and_, #NAME " and_reduce");                                            \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = (T)(1 << (me % 7));                                                           \
        shmem_##NAME##_or_reduce(team, dst, src, N);                                               \
        CHECK(dst[0] == or_, #NAME " or_reduce");                                                  \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = (T)(me + 1);                                                                  \
        shmem_##NAME##_xor_reduce(team, src, src, N); /* in place */                               \
        CHECK(src[1] == xor_, #NAME " in-place xor_reduce");                                       \
    }
STRATA_REDUCE_BITWISE_TYPES(TEST_BITWISE)

#define TEST_MINMAX(T, NAME, ...)                                                                  \
    static void minmax_##NAME(shmem_team_t team)                                                   \
    {                                                                                              \
        int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);                               \
        static T src[N], dst[N];                                                                   \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = (T)((me + i) % n + 1);                                                        \
        shmem_##NAME##_max_reduce(team, dst, src, N);                                              \
        for (int i = 0; i < N; i++)                                                                \
            CHECK(dst[i] == (T)n, #NAME " max_reduce [%d]", i);                                    \
        shmem_##NAME##_min_reduce(team, dst, src, N);                                              \
        for (int i = 0; i < N; i++)                                                                \
            CHECK(dst[i] == (T)1, #NAME " min_reduce [%d]", i);                                    \
    }
STRATA_REDUCE_MINMAX_TYPES(TEST_MINMAX)

#define TEST_SUM(T, NAME, ...)                                                                     \
    static void sum_##NAME(shmem_team_t team)                                                      \
    {                                                                                              \
        int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);                               \
        static T src[N], dst[N];                                                                   \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = (T)(me + 1);                                                                  \
        shmem_##NAME##_sum_reduce(team, dst, src, N);                                              \
        CHECK(dst[2] == (T)(n * (n + 1) / 2), #NAME " sum_reduce");                                \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = (T)(me % 2 ? 2 : 1);                                                          \
        shmem_##NAME##_prod_reduce(team, dst, src, N);                                             \
        CHECK(dst[0] == (T)(1 << (n / 2)), #NAME " prod_reduce");                                  \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = (T)(me + 1);                                                                  \
        shmem_##NAME##_sum_inscan(team, dst, src, N);                                              \
        CHECK(dst[1] == (T)((me + 1) * (me + 2) / 2), #NAME " sum_inscan");                        \
        shmem_##NAME##_sum_exscan(team, dst, src, N);                                              \
        CHECK(dst[3] == (T)(me * (me + 1) / 2), #NAME " sum_exscan");                              \
    }
STRATA_REDUCE_SUM_TYPES(TEST_SUM)

static void mem_forms(shmem_team_t team)
{
    int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);
    static unsigned char src[MAXPES * 16], dst[MAXPES * 16];
    for (int i = 0; i < MAXPES * 16; i++)
        src[i] = (unsigned char)(me * 16 + i % 16);
    /* dst is read after each call and written by others in the next: a sync in between */
    shmem_broadcastmem(team, dst, src, 7, 0);
    CHECK(dst[6] == 6, "broadcastmem");
    shmem_sync(team);
    shmem_fcollectmem(team, dst, src, 5);
    CHECK(dst[(n - 1) * 5 + 4] == (unsigned char)((n - 1) * 16 + 4), "fcollectmem");
    shmem_sync(team);
    shmem_collectmem(team, dst, src, 3);
    CHECK(dst[(n - 1) * 3] == (unsigned char)((n - 1) * 16), "collectmem");
    shmem_sync(team);
    shmem_alltoallmem(team, dst, src, 2);
    CHECK(dst[(n - 1) * 2 + 1] == (unsigned char)((n - 1) * 16 + me * 2 + 1), "alltoallmem");
    shmem_sync(team);
    shmem_alltoallsmem(team, dst, src, 1, 1, 2);
    CHECK(dst[0] == (unsigned char)(me * 2), "alltoallsmem");
    CHECK(shmem_sync(team) == 0, "shmem_sync");
    /* C11 generic names */
    static long lsrc[2], ldst[2 * MAXPES];
    static double dsrc, ddst;
    lsrc[0] = lsrc[1] = me + 1;
    dsrc = 0.5 * (me + 1);
    shmem_sync(team);
    CHECK(shmem_broadcast(team, ldst, lsrc, 2, 0) == 0 && ldst[1] == 1, "generic broadcast");
    shmem_sync(team);
    CHECK(shmem_fcollect(team, ldst, lsrc, 1) == 0 && ldst[n - 1] == n, "generic fcollect");
    CHECK(shmem_sum_reduce(team, &ddst, &dsrc, 1) == 0 && ddst == 0.25 * n * (n + 1),
          "generic sum_reduce: %g", ddst);
    shmem_sync(team);
    CHECK(shmem_max_reduce(team, ldst, lsrc, 2) == 0 && ldst[0] == n, "generic max_reduce");
    shmem_sync(team);
}

static void run_all(shmem_team_t team)
{
#define RUN_DATA(T, NAME, ...) data_##NAME(team);
#define RUN_BITWISE(T, NAME, ...) bitwise_##NAME(team);
#define RUN_MINMAX(T, NAME, ...) minmax_##NAME(team);
#define RUN_SUM(T, NAME, ...) sum_##NAME(team);
    STRATA_RMA_TYPES(RUN_DATA)
    STRATA_REDUCE_BITWISE_TYPES(RUN_BITWISE)
    STRATA_REDUCE_MINMAX_TYPES(RUN_MINMAX)
    STRATA_REDUCE_SUM_TYPES(RUN_SUM)
    mem_forms(team);
}

/* Team broadcasts in turn into two dest buffers without a sync, roots changing, a member
 * sometimes slow: no root may write a buffer that a member still reads from two calls before.
 * The team is made and destroyed again and again, so its slot is reused while the broadcasts'
 * completion of the last calls may still be under way. */
static void alternating_team_broadcasts(void)
{
    enum { TEAMS = 6, CALLS = 40, WORDS = 256 };
    static long out[2][WORDS], in[2][WORDS];
    long bad = 0;
    for (int t = 0; t < TEAMS; t++) {
        shmem_team_t team;
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, shmem_n_pes(), NULL, 0, &team);
        int me = shmem_team_my_pe(team), n = shmem_team_n_pes(team);
        for (int i = 0; i < CALLS; i++) {
            int b = i % 2, root = (i / 3) % n;
            for (int k = 0; k < WORDS; k++)
                out[b][k] = t * 100000 + i * 1000 + k;
            shmem_long_broadcast(team, in[b], out[b], WORDS, root);
            for (int k = 0; k < WORDS; k++)
                bad += in[b][k] != t * 100000 + i * 1000 + k;
            if (me == (i + 1) % n && i % 5 == 0)
                usleep(300); /* a slow member: the next root but one must wait for it */
            for (int k = 0; k < WORDS; k++)
                in[b][k] = -1; /* reused: the call after next must not have landed yet */
        }
        shmem_team_destroy(team);
    }
    CHECK(bad == 0, "%ld words of alternating team broadcasts were wrong", bad);
    shmem_barrier_all();
}

/* The same for alltoalls: block j of PE i's source goes to PE j's dest; consecutive calls into
 * two dest buffers in turn, a member sometimes slow. */
static void alternating_team_alltoalls(void)
{
    enum { CALLS = 60, WORDS = 16 };
    static long out[MAXPES * WORDS], in[2][MAXPES * WORDS];
    int me = shmem_my_pe(), n = shmem_n_pes();
    long bad = 0;
    for (int i = 0; i < CALLS; i++) {
        int b = i % 2;
        for (int j = 0; j < n * WORDS; j++)
            out[j] = i * 100000 + me * 1000 + j;
        shmem_long_alltoall(SHMEM_TEAM_WORLD, in[b], out, WORDS);
        for (int from = 0; from < n; from++)
            for (int w = 0; w < WORDS; w++)
                bad += in[b][from * WORDS + w] != i * 100000 + from * 1000 + me * WORDS + w;
        if (me == i % n && i % 7 == 0)
            usleep(300);
        for (int j = 0; j < n * WORDS; j++)
            in[b][j] = -1;
    }
    CHECK(bad == 0, "%ld words of alternating alltoalls were wrong", bad);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    alternating_team_broadcasts();
    alternating_team_alltoalls();
    int me = shmem_my_pe(), n = shmem_n_pes();
    run_all(SHMEM_TEAM_WORLD);
    shmem_team_t reversed, evens;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &reversed);
    run_all(reversed);
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens);
    if (evens != SHMEM_TEAM_INVALID)
        run_all(evens);
    static long x;
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_INVALID, &x, &x, 1) != 0, "reduce on an invalid team");
    CHECK(shmem_long_broadcast(evens, &x, &x, 1, 0) == (me % 2 ? -1 : 0),
          "broadcast by a non-member");
    shmem_team_destroy(evens);
    shmem_team_destroy(reversed);
    return check_finish();
}
