/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 9.5: contexts on the world and on a team (PE numbers relative to the team), their
 * options, ctx_get_team, destroy with its implicit quiet, invalid cases, and threads each using
 * a private context at SHMEM_THREAD_MULTIPLE. */
#include "check.h"

#include <pthread.h>

#define THREADS 2
#define PER_THREAD 500

static long box[64];
static long counters[THREADS];
static long from_threads[THREADS][PER_THREAD];
static long thread_sources[THREADS][PER_THREAD]; /* put_nbi sources stay untouched until quiet */

struct thread_arg {
    int id, me, n;
    int failed;
};

/* Each thread owns a private context: puts and atomics to the right neighbour, then its quiet. */
static void *thread_main(void *p)
{
    struct thread_arg *arg = p;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) != 0) {
        arg->failed = 1;
        return NULL;
    }
    int right = (arg->me + 1) % arg->n;
    for (int i = 0; i < PER_THREAD; i++) {
        long *v = &thread_sources[arg->id][i];
        *v = arg->me * 100000L + arg->id * 10000L + i;
        shmem_ctx_long_put_nbi(ctx, &from_threads[arg->id][i], v, 1, right);
        shmem_ctx_long_atomic_inc(ctx, &counters[arg->id], right);
    }
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    return NULL;
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    shmem_team_t team;

    /* Communication progresses without the context's quiet (1.6 section 4.1): a non-fetching
     * atomic on a fresh context, shareable, private and serialized, reaches the right neighbour
     * while the PE waits for the left one's, in wait_until and in a loop of tests. First of all,
     * and on contexts made together, since a destroyed context's connections are kept for the
     * next. Through UCX's shared memory such an atomic on a new connection stayed on its PE until
     * the context's quiet: every PE waited (a serialized one's under SHMEM_THREAD_MULTIPLE until
     * this release, which no waiting thread drove). */
    enum { FRESH = 3 };
    static uint64_t arrived[FRESH];
    const long fresh_options[FRESH] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED};
    shmem_ctx_t fresh[FRESH];
    for (int o = 0; o < FRESH; o++)
        CHECK(shmem_ctx_create(fresh_options[o], &fresh[o]) == 0, "ctx_create %ld",
              fresh_options[o]);
    for (int o = 0; o < FRESH; o++) {
        shmem_ctx_uint64_atomic_add(fresh[o], &arrived[o], 7, right);
        if (o != 1) {
            shmem_uint64_wait_until(&arrived[o], SHMEM_CMP_EQ, 7);
        } else {
            long tests = 0;
            while (!shmem_uint64_test(&arrived[o], SHMEM_CMP_EQ, 7) && tests < 100000000)
                tests++;
        }
        CHECK_EQ(arrived[o], 7);
        shmem_ctx_quiet(fresh[o]);
    }
    for (int o = 0; o < FRESH; o++)
        shmem_ctx_destroy(fresh[o]);
    shmem_barrier_all();

    /* world contexts with each option */
    const long options[] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED, SHMEM_CTX_NOSTORE};
    for (int o = 0; o < 4; o++) {
        shmem_ctx_t ctx;
        CHECK(shmem_ctx_create(options[o], &ctx) == 0 && ctx != SHMEM_CTX_INVALID,
              "ctx_create options %ld", options[o]);
        CHECK(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD, "ctx team");
        shmem_ctx_long_p(ctx, &box[o], 10L * o + me, right);
        long old = shmem_ctx_long_atomic_fetch_add(ctx, &box[8 + o], 1, right);
        CHECK(old >= 0, "fetch_add on a context");
        shmem_ctx_quiet(ctx);
        shmem_ctx_destroy(ctx);
    }
    shmem_barrier_all();
    for (int o = 0; o < 4; o++)
        CHECK(box[o] == 10L * o + left && box[8 + o] == 1, "context %d delivered", o);
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &team) == 0 && team == SHMEM_TEAM_WORLD,
          "default context's team");

    CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &team) != 0 && team == SHMEM_TEAM_INVALID,
          "invalid context's team");

    /* a context on the odd PEs: PE arguments are ranks in that team */
    shmem_team_t odds;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, n / 2, NULL, 0, &odds);
    shmem_ctx_t tctx;
    int rc = shmem_team_create_ctx(odds, 0, &tctx);
    if (odds != SHMEM_TEAM_INVALID) {
        int r = shmem_team_my_pe(odds), size = shmem_team_n_pes(odds);
        CHECK(rc == 0, "team_create_ctx on a member");
        CHECK(shmem_ctx_get_team(tctx, &team) == 0 && team == odds, "team context's team");
        shmem_ctx_long_p(tctx, &box[20], 1000 + r, (r + 1) % size); /* team rank, not world */
        shmem_ctx_long_atomic_add(tctx, &box[21], r + 1, 0);
        shmem_ctx_quiet(tctx);
        shmem_team_sync(odds);
        CHECK(box[20] == 1000 + (r + size - 1) % size, "team-relative put: %ld", box[20]);
        if (r == 0)
            CHECK(box[21] == (long)size * (size + 1) / 2, "team-relative atomics: %ld", box[21]);
        shmem_ctx_destroy(tctx);
    } else {
        CHECK(rc != 0 && tctx == SHMEM_CTX_INVALID, "team_create_ctx on a non-member");
    }
    shmem_team_destroy(odds);
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &tctx) != 0 && tctx == SHMEM_CTX_INVALID,
          "team_create_ctx on SHMEM_TEAM_INVALID");
    shmem_ctx_destroy(SHMEM_CTX_INVALID); /* no operation */
    shmem_ctx_quiet(SHMEM_CTX_INVALID);

    /* threads with private contexts */
    shmem_barrier_all();
    if (provided == SHMEM_THREAD_MULTIPLE) {
        pthread_t threads[THREADS];
        struct thread_arg args[THREADS];
        for (int t = 0; t < THREADS; t++) {
            args[t] = (struct thread_arg){t, me, n, 0};
            pthread_create(&threads[t], NULL, thread_main, &args[t]);
        }
        for (int t = 0; t < THREADS; t++) {
            pthread_join(threads[t], NULL);
            CHECK(!args[t].failed, "thread %d could not create its context", t);
        }
        shmem_barrier_all();
        long bad = 0;
        for (int t = 0; t < THREADS; t++) {
            CHECK(counters[t] == PER_THREAD, "thread %d atomics: %ld", t, counters[t]);
            for (int i = 0; i < PER_THREAD; i++)
                bad += from_threads[t][i] != left * 100000L + t * 10000L + i;
        }
        CHECK(bad == 0, "%ld values from threads missing", bad);
    }
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "SHMEM_THREAD_MULTIPLE not provided: %d", provided);

    /* Destroying a team destroys its shareable contexts, with their implicit quiet: values put
     * non-blocking on them have landed once the team is gone. */
    shmem_team_t dup;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &dup);
    shmem_ctx_t shareable[3];
    static long landed[3], values[3]; /* nbi sources stay untouched until the quiet */
    for (int c = 0; c < 3; c++) {
        CHECK(shmem_team_create_ctx(dup, c == 1 ? SHMEM_CTX_SERIALIZED : 0, &shareable[c]) == 0,
              "shareable context %d", c);
        values[c] = 1000L * me + c;
        shmem_ctx_long_put_nbi(shareable[c], &landed[c], &values[c], 1, (me + 1) % n);
    }
    shmem_team_destroy(dup);
    shmem_barrier_all();
    for (int c = 0; c < 3; c++)
        CHECK_EQ(landed[c], 1000L * ((me + n - 1) % n) + c);
    return check_finish();
}
