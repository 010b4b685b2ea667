/* SPDX-License-Identifier: BSD-3-Clause */
/* Several GPUs per PE (SHMEMX_SPACE_TRAIT_DEVICE_INDEX): a space on each of the PE's devices,
 * alive at once, each on the device its index names (the PE's own first, then the others by
 * locality, or as SHMEM_DEVICE_MAP lists them), its team exactly the PEs that have that many
 * devices; puts between PEs and between spaces, atomics and a reduction in each with every value
 * right, and RMA between the spaces of one PE; an index beyond every PE's devices fails on every PE
 * under BIND, and under PREFERRED falls back to index 0 on the PEs short of it, which
 * shmemx_space_get_traits reports.
 *
 * Usage: spaces_multi_device DEVICES, the devices of the node (the double's count). On one node;
 * unbound PEs, so a PE's first device is its local rank's modulo DEVICES. */
#include "check.h"
#include "gpu_runtime.h"

#include <shmemx.h>

enum { N = 1000, MAX_DEVICES = 8 };

static int devices;

/* This PE's devices in index order, as the library is to order them; returns how many. */
static int my_devices(int *order)
{
    const char *map = getenv("SHMEM_DEVICE_MAP");
    int rank = shmem_team_my_pe(SHMEM_TEAM_SHARED), n = 0;
    if (!map || !*map) {
        order[n++] = rank % devices;
        for (int d = 0; d < devices; d++)
            if (d != rank % devices)
                order[n++] = d;
        return n;
    }
    int entries = 1;
    for (const char *c = map; *c; c++)
        entries += *c == ',';
    const char *c = map;
    for (int i = 0; i < rank % entries; i++)
        c = strchr(c, ',') + 1;
    while (*c && *c != ',' && *c != '-') {
        char *end;
        order[n++] = (int)strtol(c, &end, 10);
        c = *end == '+' ? end + 1 : end;
    }
    return n;
}

static shmem_space_config_t config(void)
{
    shmem_space_config_t c = {gpu_runtime_type(), (size_t)4 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    return c;
}

static int create(int index, int policy, shmem_space_t *space, shmem_team_t *team)
{
    shmem_space_config_t c = config();
    shmemx_space_traits_t traits = {0};
    traits.mask = SHMEMX_SPACE_TRAIT_DEVICE_INDEX | SHMEMX_SPACE_TRAIT_ALLOC_POLICY;
    traits.device_index = index;
    traits.alloc_policy = policy;
    return shmemx_space_create_traits(&c, &traits, space, team);
}

static int device_index_of(shmem_space_t space)
{
    shmemx_space_traits_t got = {.mask = SHMEMX_SPACE_TRAIT_DEVICE_INDEX};
    CHECK(shmemx_space_get_traits(space, &got) == 0 && got.mask & SHMEMX_SPACE_TRAIT_DEVICE_INDEX,
          "the space's device index is known");
    return got.device_index;
}

static long value(int pe, int index, int i)
{
    return pe * 1000000L + index * 10000L + i;
}

/* The values of dev (this PE's GPU memory), read back through the library. */
static void check_values(const long *dev, int pe, int index, const char *what)
{
    static long host[N];
    shmem_long_get(host, dev, N, shmem_my_pe());
    for (int i = 0; i < N; i++)
        if (host[i] != value(pe, index, i)) {
            CHECK(0, "space %d, %s: element %d is %ld, expected %ld", index, what, i, host[i],
                  value(pe, index, i));
            return;
        }
}

struct on_device {
    shmem_space_t space;
    shmem_team_t team;
    long *src, *dst, *sum, *cross, *counter;
};

/* The spaces of every index some PE has, each with its team of those PEs. */
static void make_spaces(struct on_device *s, int count, const long *counts)
{
    int me = shmem_my_pe(), n = shmem_n_pes(), order[MAX_DEVICES];
    my_devices(order);
    for (int k = 0; k < count; k++) {
        int members = 0;
        for (int pe = 0; pe < n; pe++)
            members += counts[pe] > k;
        CHECK(create(k, SHMEMX_SPACE_POLICY_BIND, &s[k].space, &s[k].team) == 0,
              "a space on device index %d", k);
        int member = counts[me] > k;
        CHECK((s[k].space != SHMEM_SPACE_INVALID) == member,
              "index %d: a member exactly where the PE has %d devices", k, k + 1);
        if (!member)
            continue;
        CHECK(shmem_team_n_pes(s[k].team) == members, "index %d: a team of %d PEs, not %d", k,
              members, shmem_team_n_pes(s[k].team));
        CHECK(device_index_of(s[k].space) == k, "index %d reported", k);
        s[k].src = shmem_space_malloc(s[k].space, N * sizeof(long));
        s[k].dst = shmem_space_malloc(s[k].space, N * sizeof(long));
        s[k].sum = shmem_space_malloc(s[k].space, N * sizeof(long));
        s[k].cross = shmem_space_malloc(s[k].space, N * sizeof(long));
        s[k].counter = shmem_space_calloc(s[k].space, 1, sizeof(long));
        CHECK(s[k].src && s[k].dst && s[k].sum && s[k].cross && s[k].counter,
              "index %d: allocations", k);
        int at = gpu_runtime_device_of(s[k].src);
        CHECK(at == order[k], "index %d: the heap is on device %d, not %d", k, at, order[k]);
    }
}

/* Puts into every space, interleaved, then a ring of puts between the members of each. */
static void exchange(struct on_device *s, int count)
{
    int me = shmem_my_pe();
    static long values[N];
    for (int k = 0; k < count; k++) {
        if (s[k].space == SHMEM_SPACE_INVALID)
            continue;
        for (int i = 0; i < N; i++)
            values[i] = value(me, k, i);
        shmem_long_put(s[k].src, values, N, me);
    }
    shmem_barrier_all();
    for (int k = 0; k < count; k++) {
        if (s[k].space == SHMEM_SPACE_INVALID)
            continue;
        int rank = shmem_team_my_pe(s[k].team), size = shmem_team_n_pes(s[k].team);
        int next = shmem_team_translate_pe(s[k].team, (rank + 1) % size, SHMEM_TEAM_WORLD);
        for (int i = 0; i < N; i += 100)
            shmem_long_put_nbi(s[k].dst + i, s[k].src + i, 100, next);
        shmem_long_atomic_add(s[k].counter, k + 1,
                              shmem_team_translate_pe(s[k].team, 0, SHMEM_TEAM_WORLD));
    }
    shmem_quiet();
    shmem_barrier_all();
    for (int k = 0; k < count; k++) {
        if (s[k].space == SHMEM_SPACE_INVALID)
            continue;
        int rank = shmem_team_my_pe(s[k].team), size = shmem_team_n_pes(s[k].team);
        int prev = shmem_team_translate_pe(s[k].team, (rank + size - 1) % size, SHMEM_TEAM_WORLD);
        check_values(s[k].dst, prev, k, "put from the previous member");
        check_values(s[k].src, me, k, "put from host memory");
        long counter = 0;
        shmem_long_get(&counter, s[k].counter, 1, me);
        CHECK(rank != 0 || counter == (long)size * (k + 1), "index %d: counter %ld, expected %ld",
              k, counter, (long)size * (k + 1));
        CHECK(shmem_long_sum_reduce(s[k].team, s[k].sum, s[k].src, N) == 0, "index %d: sum", k);
        long members = 0;
        for (int r = 0; r < size; r++)
            members += shmem_team_translate_pe(s[k].team, r, SHMEM_TEAM_WORLD);
        static long host[N];
        shmem_long_get(host, s[k].sum, N, me);
        for (int i = 0; i < N; i++)
            if (host[i] != members * 1000000L + size * (k * 10000L + i)) {
                CHECK(0, "index %d: sum element %d is %ld", k, i, host[i]);
                break;
            }
    }
}

/* RMA between a PE's devices: a put into space k (k > 0) whose source is this PE's memory of
 * space 0, on another of its devices, and a get of the next member's memory of space k into
 * space 0's memory here. */
static void between_spaces(struct on_device *s, int count)
{
    for (int k = 1; k < count; k++) {
        int member = s[k].space != SHMEM_SPACE_INVALID, next = -1, prev = -1;
        if (member) {
            int rank = shmem_team_my_pe(s[k].team), size = shmem_team_n_pes(s[k].team);
            next = shmem_team_translate_pe(s[k].team, (rank + 1) % size, SHMEM_TEAM_WORLD);
            prev = shmem_team_translate_pe(s[k].team, (rank + size - 1) % size, SHMEM_TEAM_WORLD);
            shmem_long_put(s[k].cross, s[0].src, N, next);
        }
        shmem_barrier_all();
        if (member) {
            check_values(s[k].cross, prev, 0, "put from space 0 of the previous member");
            shmem_long_get(s[0].cross, s[k].src, N, next);
            check_values(s[0].cross, next, k, "get of the next member's space into space 0");
        }
        shmem_barrier_all();
    }
}

static void destroy_spaces(struct on_device *s, int count)
{
    for (int k = 0; k < count; k++) {
        if (s[k].space == SHMEM_SPACE_INVALID)
            continue;
        shmem_space_free(s[k].space, s[k].counter);
        shmem_space_free(s[k].space, s[k].cross);
        shmem_space_free(s[k].space, s[k].sum);
        shmem_space_free(s[k].space, s[k].dst);
        shmem_space_free(s[k].space, s[k].src);
        shmem_team_destroy(s[k].team);
        CHECK(shmem_space_destroy(s[k].space) == 0, "index %d: destroy", k);
    }
}

/* An index no PE has: no space under BIND, index 0 everywhere under PREFERRED; a negative index
 * is invalid everywhere. */
static void check_beyond(int most)
{
    shmem_space_t space;
    shmem_team_t team;
    CHECK(create(most, SHMEMX_SPACE_POLICY_BIND, &space, &team) != 0 &&
              space == SHMEM_SPACE_INVALID && team == SHMEM_TEAM_INVALID,
          "index %d (beyond every PE's devices) fails under BIND", most);
    CHECK(create(-1, SHMEMX_SPACE_POLICY_BIND, &space, &team) != 0 &&
              space == SHMEM_SPACE_INVALID && team == SHMEM_TEAM_INVALID,
          "index -1 fails");
    int made = create(most, SHMEMX_SPACE_POLICY_PREFERRED, &space, &team) == 0 &&
               space != SHMEM_SPACE_INVALID;
    CHECK(made, "index %d under PREFERRED: a space on every PE", most);
    if (!made)
        return;
    CHECK(shmem_team_n_pes(team) == shmem_n_pes(), "PREFERRED: every PE a member");
    CHECK(device_index_of(space) == 0, "PREFERRED: the fall-back to index 0 is reported");
    int order[MAX_DEVICES];
    my_devices(order);
    long *p = shmem_space_malloc(space, sizeof(long));
    CHECK(p && gpu_runtime_device_of(p) == order[0], "PREFERRED: on the PE's first device");
    shmem_space_free(space, p);
    shmem_team_destroy(team);
    CHECK(shmem_space_destroy(space) == 0, "PREFERRED: destroy");
}

int main(int argc, char **argv)
{
    devices = argc > 1 ? atoi(argv[1]) : 0;
    shmem_init();
    CHECK(devices > 0 && devices <= MAX_DEVICES, "usage: spaces_multi_device DEVICES (1..%d)",
          MAX_DEVICES);
    int order[MAX_DEVICES];
    static long mine, counts[4096];
    mine = devices > 0 && devices <= MAX_DEVICES ? my_devices(order) : 0;
    shmem_long_fcollect(SHMEM_TEAM_WORLD, counts, &mine, 1);
    long most = 0;
    for (int pe = 0; pe < shmem_n_pes(); pe++)
        most = counts[pe] > most ? counts[pe] : most;
    struct on_device spaces[MAX_DEVICES] = {0};
    make_spaces(spaces, (int)most, counts);
    exchange(spaces, (int)most);
    between_spaces(spaces, (int)most);
    shmem_barrier_all();
    destroy_spaces(spaces, (int)most);
    check_beyond((int)most);
    shmem_finalize();
    return check_finish();
}
