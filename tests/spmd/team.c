/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 9.4: predefined teams, split_strided (forward, reverse, single, invalid triplets),
 * split_2d with a partial last row, splits of splits, translate_pe, team_ptr, get_config,
 * team_sync, destroy, and running out of team slots gracefully. Across nodes, teams that span
 * them with several members on a node sync by node: the same checks hold. */
#include "check.h"

static long inbox[64];

/* Each member writes to the next member's inbox, syncs, and checks what its predecessor wrote.
 * Teams that overlap in time (the x and y teams of a 2D split) use different inbox words. */
static void check_sync_at(shmem_team_t team, long tag, int box)
{
    int r = shmem_team_my_pe(team), size = shmem_team_n_pes(team);
    int next = shmem_team_translate_pe(team, (r + 1) % size, SHMEM_TEAM_WORLD);
    int prev = shmem_team_translate_pe(team, (r + size - 1) % size, SHMEM_TEAM_WORLD);
    shmem_long_p(&inbox[box], tag * 100 + r, next);
    shmem_quiet();
    CHECK(shmem_team_sync(team) == 0, "team_sync failed");
    CHECK(inbox[box] == tag * 100 + (r + size - 1) % size, "after team_sync: %ld from world PE %d",
          inbox[box], prev);
    shmem_team_sync(team);
}

static void check_sync(shmem_team_t team, long tag)
{
    check_sync_at(team, tag, 0);
}

/* Round after round, every member puts the round's number to every member, syncs, and must find
 * every member's number: a sync that let a member through before every other had entered it
 * shows as an old number. Teams that overlap in time must not be checked at once. */
static long board[64];

static void check_sync_everyone(shmem_team_t team, long tag, long rounds)
{
    if (team == SHMEM_TEAM_INVALID)
        return;
    int r = shmem_team_my_pe(team), size = shmem_team_n_pes(team);
    long stale = 0, first_stale = -1;
    for (long k = tag * 1000; k < tag * 1000 + rounds; k++) {
        for (int p = 0; p < size; p++)
            shmem_long_p(&board[r], k, shmem_team_translate_pe(team, p, SHMEM_TEAM_WORLD));
        shmem_quiet();
        shmem_team_sync(team);
        for (int p = 0; p < size; p++)
            if (board[p] != k && stale++ == 0)
                first_stale = board[p];
        shmem_team_sync(team);
    }
    CHECK(stale == 0, "team of %d: %ld stale numbers after team_sync (first %ld)", size, stale,
          first_stale);
}

/* SHMEM_TEAM_SHARED is the PEs of this node in world order, whichever way the launcher placed
 * them (STRATA_TEST_NODES). */
static void check_shared_team(void)
{
    int me = shmem_my_pe(), n = shmem_n_pes(), size = 0, my_rank = -1;
    for (int pe = 0; pe < n; pe++) {
        if (!check_same_node(pe)) {
            CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED) == -1,
                  "world PE %d of another node is in the shared team", pe);
            continue;
        }
        if (pe == me)
            my_rank = size;
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_SHARED, size, SHMEM_TEAM_WORLD) == pe,
              "shared rank %d is world PE %d, expected %d", size,
              shmem_team_translate_pe(SHMEM_TEAM_SHARED, size, SHMEM_TEAM_WORLD), pe);
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED) == size,
              "world PE %d is shared rank %d, expected %d", pe,
              shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED), size);
        size++;
    }
    CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == size, "shared team of %d PEs, expected %d",
          shmem_team_n_pes(SHMEM_TEAM_SHARED), size);
    CHECK(shmem_team_my_pe(SHMEM_TEAM_SHARED) == my_rank, "my shared rank %d, expected %d",
          shmem_team_my_pe(SHMEM_TEAM_SHARED), my_rank);
    check_sync_at(SHMEM_TEAM_SHARED, 2, 3); /* its own word: other nodes may be ahead */
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_team_config_t config = {0};

    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == n,
          "world team");
    check_shared_team();
    CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1 && shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1,
          "invalid team queries");
    CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &config) == 0,
          "get_config on world");
    check_sync(SHMEM_TEAM_WORLD, 1);
    check_sync_everyone(SHMEM_TEAM_WORLD, 1, 50);

    /* even PEs */
    shmem_team_t evens;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, NULL, 0, &evens);
    CHECK(rc == 0, "split evens returned %d", rc);
    if (me % 2 == 0) {
        CHECK(evens != SHMEM_TEAM_INVALID && shmem_team_my_pe(evens) == me / 2, "evens rank");
        CHECK(shmem_team_n_pes(evens) == (n + 1) / 2, "evens size");
        CHECK(shmem_team_translate_pe(evens, shmem_team_my_pe(evens), SHMEM_TEAM_WORLD) == me,
              "translate to world");
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, evens) == me / 2, "translate back");
        CHECK(shmem_team_ptr(evens, inbox, 0) == shmem_ptr(inbox, 0), "team_ptr of rank 0");
        for (long k = 0; k < 20; k++)
            check_sync(evens, 10 + k);
        /* split of a split: the first member alone */
        shmem_team_t first;
        CHECK(shmem_team_split_strided(evens, 0, 1, 1, NULL, 0, &first) == 0, "split of split");
        CHECK((first != SHMEM_TEAM_INVALID) == (me == 0), "only PE 0 in the single team");
        shmem_team_destroy(first);
    } else {
        CHECK(evens == SHMEM_TEAM_INVALID, "odd PE got a team");
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, evens) == -1, "translate to invalid");
    }
    shmem_team_destroy(evens);

    /* reverse order */
    shmem_team_t reversed;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, &config, 0, &reversed) == 0,
          "reverse split");
    CHECK(shmem_team_my_pe(reversed) == n - 1 - me, "reverse rank %d", shmem_team_my_pe(reversed));
    check_sync(reversed, 40);
    check_sync_everyone(reversed, 2, 50);
    shmem_team_destroy(reversed);

    /* all but PE 0: across two nodes, one of them holds a single member */
    shmem_team_t upper = SHMEM_TEAM_INVALID;
    if (n > 1)
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, n - 1, NULL, 0, &upper) == 0,
              "split of all but PE 0");
    check_sync_everyone(upper, 3, 50);
    shmem_team_destroy(upper);

    /* invalid triplets: nonzero and SHMEM_TEAM_INVALID on every PE */
    shmem_team_t bad = SHMEM_TEAM_WORLD;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n + 1, NULL, 0, &bad) != 0 &&
              bad == SHMEM_TEAM_INVALID,
          "size beyond the parent");
    CHECK(shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &bad) != 0 &&
              bad == SHMEM_TEAM_INVALID,
          "invalid parent");
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 0, 2, NULL, 0, &bad) != 0, "stride 0");

    /* 2D: xrange 2; with 3 PEs the last row is partial */
    shmem_team_t xteam, yteam;
    config.num_contexts = 3;
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, &config, SHMEM_TEAM_NUM_CONTEXTS, &xteam, NULL,
                              0, &yteam) == 0,
          "split_2d");
    int xsize = (me / 2 + 1) * 2 <= n ? 2 : n - (me / 2) * 2;
    CHECK(shmem_team_my_pe(xteam) == me % 2 && shmem_team_n_pes(xteam) == (n < 2 ? 1 : xsize),
          "x team rank %d size %d", shmem_team_my_pe(xteam), shmem_team_n_pes(xteam));
    CHECK(shmem_team_my_pe(yteam) == me / 2 && shmem_team_n_pes(yteam) == (n - me % 2 + 1) / 2,
          "y team rank %d size %d", shmem_team_my_pe(yteam), shmem_team_n_pes(yteam));
    shmem_team_config_t got = {0};
    shmem_team_get_config(xteam, SHMEM_TEAM_NUM_CONTEXTS, &got);
    CHECK(got.num_contexts == 3, "x team config num_contexts %d", got.num_contexts);
    check_sync_at(xteam, 50, 1);
    check_sync_at(yteam, 60, 2);
    check_sync_everyone(xteam, 4, 50);
    shmem_barrier_all();
    check_sync_everyone(yteam, 5, 50);
    shmem_team_destroy(xteam);
    shmem_team_destroy(yteam);

    /* slots are reused: many more create/destroy cycles than there are slots */
    for (int k = 0; k < 150; k++) {
        shmem_team_t t;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &t) == 0,
              "cycle %d failed", k);
        if (k % 50 == 0)
            check_sync(t, 70 + k);
        shmem_team_destroy(t);
    }

    /* running out of slots: a nonzero return on every PE, then recovery */
    shmem_team_t held[80];
    int made = 0;
    while (made < 80 &&
           shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &held[made]) == 0)
        made++;
    CHECK(made > 50 && made < 80, "created %d teams before running out", made);
    static long counts[64];
    shmem_long_p(&counts[me], made, 0);
    shmem_barrier_all();
    if (me == 0)
        for (int p = 0; p < n; p++)
            CHECK(counts[p] == made, "PE %d ran out after %ld teams, PE 0 after %d", p, counts[p],
                  made);
    for (int i = made - 1; i >= 0; i--)
        shmem_team_destroy(held[i]);
    shmem_team_t again;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &again) == 0,
          "creation after freeing every slot");
    check_sync(again, 99);
    shmem_team_destroy(again);
    return check_finish();
}
