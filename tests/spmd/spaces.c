/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory spaces on the host (the memory spaces proposal): the default space as a space, CPU spaces
 * beside it, RMA, atomics and collectives between spaces, many spaces at once, fragmentation and
 * exhaustion, and every return rule of the proposal on every PE. */
#include "check.h"

#include <stdint.h>
#include <string.h>

static long global_word;

/* A CPU space of size bytes on every PE; the test fails if creation does. */
static shmem_space_t cpu_space(size_t size, shmem_team_t *team)
{
    shmem_space_config_t config = {SHMEM_DEVICE_CPU, size, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    CHECK(shmem_space_create(&config, &space, team) == 0, "CPU space of %zu bytes", size);
    CHECK(space != SHMEM_SPACE_INVALID && *team != SHMEM_TEAM_INVALID, "valid handles");
    return space;
}

static void check_default_space(void)
{
    int n = shmem_n_pes();
    long *heap = shmem_malloc(sizeof(long));
    shmem_space_t space = SHMEM_SPACE_INVALID;
    CHECK(shmem_get_space(heap, &space) == 0 && space == SHMEM_SPACE_DEFAULT,
          "shmem_malloc memory is in the default space");
    CHECK(shmem_get_space(&global_word, &space) == 0 && space == SHMEM_SPACE_DEFAULT,
          "static data belongs to the default space");
    CHECK(shmem_team_get_space(SHMEM_TEAM_WORLD, &space) == 0 && space == SHMEM_SPACE_DEFAULT,
          "the world team's space");
    shmem_team_t team = SHMEM_TEAM_INVALID;
    CHECK(shmem_space_get_team(SHMEM_SPACE_DEFAULT, &team) == 0 && team == SHMEM_TEAM_WORLD,
          "the default space's team is the world");
    shmem_device_type_t type = SHMEM_DEVICE_GPU;
    CHECK(shmem_space_get_device_type(SHMEM_SPACE_DEFAULT, &type) == 0 && type == SHMEM_DEVICE_CPU,
          "default space on the CPU");
    shmem_space_cap_t caps = 0, must = SHMEM_SPACE_CAP_RMA | SHMEM_SPACE_CAP_COLLECTIVES |
                                       SHMEM_SPACE_CAP_ATOMICS | SHMEM_SPACE_CAP_DIRECT_ACCESS |
                                       SHMEM_SPACE_CAP_WORLD_ACCESS;
    CHECK(shmem_space_get_caps(SHMEM_SPACE_DEFAULT, &caps) == 0 && (caps & must) == must,
          "default caps 0x%llx", (unsigned long long)caps);
    /* IDENT_ADDR must tell the truth: compare every PE's heap address. */
    uintptr_t *bases = shmem_malloc((size_t)n * sizeof(uintptr_t));
    uintptr_t mine = (uintptr_t)heap;
    shmem_fcollectmem(SHMEM_TEAM_WORLD, bases, &mine, sizeof(mine));
    int same = 1;
    for (int pe = 0; pe < n; pe++)
        same &= bases[pe] == mine;
    CHECK(!!(caps & SHMEM_SPACE_CAP_IDENT_ADDR) == same, "IDENT_ADDR %d but same addresses %d",
          !!(caps & SHMEM_SPACE_CAP_IDENT_ADDR), same);
    CHECK(shmem_get_space(NULL, &space) != 0, "get_space(NULL) fails");
    CHECK(shmem_team_get_space(SHMEM_TEAM_INVALID, &space) != 0, "team_get_space(INVALID)");
    CHECK(shmem_space_get_team(SHMEM_SPACE_INVALID, &team) != 0, "get_team(INVALID)");
    CHECK(shmem_space_get_device_type(SHMEM_SPACE_INVALID, &type) != 0, "device_type(INVALID)");
    CHECK(shmem_space_get_caps(SHMEM_SPACE_INVALID, &caps) != 0, "get_caps(INVALID)");
    CHECK(shmem_space_destroy(SHMEM_SPACE_DEFAULT) != 0, "the default space is not destroyed");
    shmem_free(bases);
    shmem_free(heap);
}

/* The proposal's example of shmem_space_free, as written there. */
static void proposal_free_example(void)
{
    shmem_space_t space;
    shmem_team_t space_team;
    shmem_space_config_t cfg = {.device_type = SHMEM_DEVICE_CPU,
                                .size = 128 * 1024 * 1024,
                                .flags = SHMEM_SPACE_FLAG_DEFAULT};

    int ran = 0;
    if (shmem_space_create(&cfg, &space, &space_team) == 0 && shmem_team_is_valid(space_team)) {
        size_t nelems = 16;
        int *a = (int *)shmem_space_malloc(space, nelems * sizeof(int));
        int *b = (int *)shmem_space_calloc(space, nelems, sizeof(int));

        shmem_team_sync(space_team);
        CHECK(a && b && a != b, "two blocks");
        for (size_t i = 0; i < nelems; i++)
            CHECK_EQ(b[i], 0);

        shmem_space_free(space, a);
        shmem_space_free(space, b);
        shmem_team_destroy(space_team);
        CHECK_EQ(shmem_space_destroy(space), 0);
        ran = 1;
    }
    CHECK(ran, "the CPU space example runs on every PE");
}

/* The proposal's team example. Its shmem_team_split_2d call is written with four arguments; the
 * 1.6 routine takes the configurations and both axis teams, so that one call is spelled out. */
static void proposal_team_example(void)
{
    shmem_space_t space;
    shmem_team_t space_team;
    shmem_space_config_t config = {
        .device_type = SHMEM_DEVICE_CPU, .size = 1024 * 1024, .flags = SHMEM_SPACE_FLAG_DEFAULT};

    int ran = 0;
    if (shmem_space_create(&config, &space, &space_team) == 0 && shmem_team_is_valid(space_team)) {
        shmem_team_t team_2d, team_y;
        if (shmem_team_split_2d(space_team, 2, NULL, 0, &team_2d, NULL, 0, &team_y) == 0) {
            size_t nelems = 16;
            int *data = shmem_space_malloc(space, nelems * sizeof(int));
            for (size_t i = 0; i < nelems; i++)
                data[i] = shmem_team_my_pe(team_2d) == 0 ? (int)(i * 7 + shmem_my_pe()) : -1;
            int root_world = shmem_team_translate_pe(team_2d, 0, SHMEM_TEAM_WORLD);
            shmem_team_sync(team_2d); /* every dest is ready before the root sends */
            shmem_int_broadcast(team_2d, data, data, nelems, 0);
            for (size_t i = 0; i < nelems; i++)
                CHECK_EQ(data[i], (int)(i * 7 + root_world));
            shmem_space_t of_team;
            CHECK(shmem_team_get_space(team_2d, &of_team) == 0 && of_team == space,
                  "a split of the space team belongs to the space");
            /* While derived teams live the space cannot go, on any PE. */
            shmem_team_destroy(space_team);
            CHECK(shmem_space_destroy(space) != 0, "destroy refused while a split team lives");
            data[0] = 5; /* the space is untouched and usable */
            shmem_space_free(space, data);
            shmem_team_destroy(team_2d);
            shmem_team_destroy(team_y);
            CHECK_EQ(shmem_space_destroy(space), 0);
            ran = 1;
        }
    }
    CHECK(ran, "the team example runs on every PE");
}

/* RMA, atomics and collectives with buffers in different spaces. */
static void check_between_spaces(void)
{
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    shmem_team_t team;
    shmem_space_t space = cpu_space(1 << 20, &team);
    shmem_space_cap_t caps = 0;
    shmem_space_get_caps(space, &caps);
    CHECK((caps & (SHMEM_SPACE_CAP_WORLD_ACCESS | SHMEM_SPACE_CAP_DIRECT_ACCESS)) ==
              (SHMEM_SPACE_CAP_WORLD_ACCESS | SHMEM_SPACE_CAP_DIRECT_ACCESS),
          "a CPU space on every PE: caps 0x%llx", (unsigned long long)caps);
    CHECK_EQ(shmem_team_n_pes(team), n);
    CHECK_EQ(shmem_team_my_pe(team), me);

    long *in_space = shmem_space_malloc(space, 64 * sizeof(long));
    long *in_default = shmem_malloc(64 * sizeof(long));
    shmem_space_t owner;
    CHECK(shmem_get_space(in_space + 3, &owner) == 0 && owner == space, "pointer -> its space");
    for (int i = 0; i < 64; i++)
        in_default[i] = me * 1000 + i;
    shmem_barrier_all();
    /* default space -> CPU space on the right, CPU space -> static data on the left */
    shmem_long_put(in_space, in_default, 64, right);
    shmem_barrier_all();
    for (int i = 0; i < 64; i++)
        CHECK_EQ(in_space[i], left * 1000 + i);
    long got[64];
    shmem_long_get(got, in_space, 64, right);
    for (int i = 0; i < 64; i++)
        CHECK_EQ(got[i], me * 1000 + i);
    /* PE x reads word 5 of its left neighbour (written by x - 2) and stores it in the static
     * word of its right neighbour: PE me ends up with what PE me - 3 wrote. */
    shmem_long_p(&global_word, shmem_long_g(&in_space[5], left), right);
    shmem_barrier_all();
    CHECK_EQ(global_word, ((me + 3 * n - 3) % n) * 1000L + 5);

    /* contended atomics on PE 0's word of the space */
    long *counter = shmem_space_calloc(space, 1, sizeof(long));
    for (int i = 0; i < 100; i++)
        shmem_long_atomic_fetch_add(counter, 1, 0);
    shmem_long_atomic_add(counter, me, 0);
    shmem_barrier_all();
    if (me == 0)
        CHECK_EQ(*counter, 100L * n + (long)n * (n - 1) / 2);

    /* collectives on the space team with space buffers */
    long *src = shmem_space_malloc(space, 8 * sizeof(long));
    long *dst = shmem_space_malloc(space, 8 * (size_t)n * sizeof(long));
    for (int i = 0; i < 8; i++)
        src[i] = me + i;
    shmem_long_sum_reduce(team, dst, src, 8);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(dst[i], (long)n * (n - 1) / 2 + (long)i * n);
    shmem_team_sync(team); /* every PE has read the sums before dst is written again */
    shmem_long_fcollect(team, dst, src, 8);
    for (int pe = 0; pe < n; pe++)
        CHECK_EQ(dst[pe * 8 + 7], pe + 7);

    shmem_space_free(space, dst);
    shmem_space_free(space, src);
    shmem_space_free(space, counter);
    shmem_space_free(space, in_space);
    shmem_free(in_default);
    shmem_team_destroy(team);
    CHECK_EQ(shmem_space_destroy(space), 0);
}

/* Eight spaces at once, each with its own values; destroyed out of order, then made again (so
 * region ids are reused) and still correct. */
static void check_many_spaces(void)
{
    enum { COUNT = 8 };
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    for (int round = 0; round < 2; round++) {
        shmem_space_t spaces[COUNT];
        shmem_team_t teams[COUNT];
        int *blocks[COUNT];
        for (int s = 0; s < COUNT; s++) {
            spaces[s] = cpu_space(((size_t)s + 1) * 65536, &teams[s]);
            blocks[s] = shmem_space_malloc(spaces[s], 4096);
        }
        for (int s = 0; s < COUNT; s++)
            shmem_int_p(&blocks[s][s * 100], 10000 * round + 100 * s + me, right);
        shmem_barrier_all();
        for (int s = 0; s < COUNT; s++)
            CHECK_EQ(blocks[s][s * 100], 10000 * round + 100 * s + left);
        for (int k = 0; k < COUNT; k++) {
            int s = (k * 3 + round) % COUNT; /* an order unrelated to creation */
            shmem_space_free(spaces[s], blocks[s]);
            shmem_team_destroy(teams[s]);
            CHECK_EQ(shmem_space_destroy(spaces[s]), 0);
        }
    }
}

/* A small space: allocation fails on every PE at the same point and the space stays usable. */
static void check_exhaustion(void)
{
    enum { MAX_BLOCKS = 64 };
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_team_t team;
    shmem_space_t space = cpu_space(64 * 1024, &team);
    char *blocks[MAX_BLOCKS];
    int count = 0;
    while (count < MAX_BLOCKS && (blocks[count] = shmem_space_malloc(space, 4096)))
        count++;
    CHECK(count > 0 && count < MAX_BLOCKS, "%d blocks of 4 KiB in a 64 KiB space", count);
    int *counts = shmem_malloc((size_t)n * sizeof(int));
    shmem_int_fcollect(SHMEM_TEAM_WORLD, counts, &count, 1);
    for (int pe = 0; pe < n; pe++)
        CHECK(counts[pe] == count, "PE %d got %d blocks, this PE %d", pe, counts[pe], count);
    /* free every other block: 32 KiB are free but no 8 KiB run is */
    for (int i = 0; i < count; i += 2)
        shmem_space_free(space, blocks[i]);
    CHECK(shmem_space_malloc(space, 8192) == NULL, "no contiguous 8 KiB in a fragmented space");
    char *small = shmem_space_malloc(space, 1024);
    CHECK(small != NULL, "small blocks still fit");
    if (small) {
        memset(small, me, 1024);
        shmem_barrier_all();
        char seen[1024];
        shmem_getmem(seen, small, sizeof(seen), (me + 1) % n);
        CHECK(seen[0] == (char)((me + 1) % n) && seen[1023] == (char)((me + 1) % n),
              "the space still moves data");
        shmem_space_free(space, small);
    }
    for (int i = 1; i < count; i += 2)
        shmem_space_free(space, blocks[i]);
    char *whole = shmem_space_malloc(space, 32768);
    CHECK(whole != NULL, "freed blocks coalesce");
    shmem_space_free(space, whole);
    shmem_free(counts);
    shmem_team_destroy(team);
    CHECK_EQ(shmem_space_destroy(space), 0);
}

/* Every failure returns nonzero with invalid handles on every PE. */
static void check_error_rules(void)
{
    struct {
        shmem_space_config_t config;
        const char *what;
    } bad[] = {
        {{(shmem_device_type_t)42, 4096, SHMEM_SPACE_FLAG_DEFAULT}, "unknown device type"},
        {{SHMEM_DEVICE_CPU, 0, SHMEM_SPACE_FLAG_DEFAULT}, "size 0"},
        {{SHMEM_DEVICE_CPU, 4096, 0x40}, "unknown flag"},
        {{SHMEM_DEVICE_CPU, (size_t)1 << 60, SHMEM_SPACE_FLAG_DEFAULT}, "more than the memory"},
        {{SHMEM_DEVICE_HIP, 4096, SHMEM_SPACE_FLAG_DEFAULT}, "no HIP device anywhere"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        shmem_space_t space = (shmem_space_t)&global_word;
        shmem_team_t team = SHMEM_TEAM_WORLD;
        CHECK(shmem_space_create(&bad[i].config, &space, &team) != 0, "%s accepted", bad[i].what);
        CHECK(space == SHMEM_SPACE_INVALID && team == SHMEM_TEAM_INVALID,
              "%s: handles must be invalid", bad[i].what);
    }
    if (!getenv("SHMEM_TEST_DEVICE_PES")) {
        shmem_space_config_t gpu = {SHMEM_DEVICE_GPU, 4096, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space;
        shmem_team_t team;
        CHECK(shmem_space_create(&gpu, &space, &team) != 0 && space == SHMEM_SPACE_INVALID &&
                  team == SHMEM_TEAM_INVALID,
              "no GPU on any PE: creation fails everywhere");
    }
    CHECK(shmem_space_malloc(SHMEM_SPACE_INVALID, 64) == NULL, "malloc on INVALID");
    CHECK(shmem_space_calloc(SHMEM_SPACE_INVALID, 1, 64) == NULL, "calloc on INVALID");
    shmem_space_free(SHMEM_SPACE_INVALID, &global_word); /* no operation */
    CHECK_EQ(shmem_space_destroy(SHMEM_SPACE_INVALID), 0);

    /* size 0 gives NULL without a barrier: only PE 0 calls it */
    shmem_team_t team;
    shmem_space_t space = cpu_space(4096, &team);
    if (shmem_my_pe() == 0) {
        CHECK(shmem_space_malloc(space, 0) == NULL, "malloc of 0 bytes");
        CHECK(shmem_space_calloc(space, 0, 8) == NULL, "calloc of 0 elements");
        CHECK(shmem_space_calloc(space, 8, 0) == NULL, "calloc of 0-byte elements");
    }
    shmem_space_free(space, NULL); /* no barrier either */
    CHECK(shmem_space_destroy(space) != 0, "the space team still lives");
    shmem_team_destroy(team);
    CHECK_EQ(shmem_space_destroy(space), 0);
}

/* Spaces until team slots (two per space) or region ids run out: creation then fails on every
 * PE alike, with invalid handles, and works again once spaces are destroyed. */
static void check_space_exhaustion(void)
{
    enum { MAX = 70 };
    int n = shmem_n_pes();
    shmem_space_t spaces[MAX];
    shmem_team_t teams[MAX];
    shmem_space_config_t config = {SHMEM_DEVICE_CPU, 4096, SHMEM_SPACE_FLAG_DEFAULT};
    int made = 0;
    while (made < MAX && shmem_space_create(&config, &spaces[made], &teams[made]) == 0)
        made++;
    CHECK(made > 8 && made < MAX, "%d spaces before running out", made);
    if (made < MAX)
        CHECK(spaces[made] == SHMEM_SPACE_INVALID && teams[made] == SHMEM_TEAM_INVALID,
              "the failed creation leaves invalid handles");
    int *counts = shmem_malloc((size_t)n * sizeof(int));
    shmem_int_fcollect(SHMEM_TEAM_WORLD, counts, &made, 1);
    for (int pe = 0; pe < n; pe++)
        CHECK(counts[pe] == made, "PE %d made %d spaces, this PE %d", pe, counts[pe], made);
    shmem_free(counts);
    for (int i = made - 1; i >= 0; i--) {
        shmem_team_destroy(teams[i]);
        CHECK_EQ(shmem_space_destroy(spaces[i]), 0);
    }
    shmem_team_t team;
    shmem_space_t again = cpu_space(4096, &team);
    shmem_team_destroy(team);
    CHECK_EQ(shmem_space_destroy(again), 0);
}

int main(void)
{
    /* No PE gets a GPU, also on a machine that has one: the GPU check below is about device-less
     * PEs (the library still enumerates the devices). */
    setenv("SHMEM_DEVICE_MAP", "-,-,-,-,-,-,-,-", 0);
    shmem_init();
    check_default_space();
    proposal_free_example();
    proposal_team_example();
    check_between_spaces();
    check_many_spaces();
    check_exhaustion();
    check_error_rules();
    check_space_exhaustion();
    return check_finish();
}
