/* SPDX-License-Identifier: BSD-3-Clause */
// shmem.h from C++: typed routines (C++ has no _Generic, so the typed names), teams, contexts
// and memory spaces, all through the C declarations with C linkage; pshmem.h's shifted names too.
#include <cstdio>
#include <mpp/shmem.h>
#include <pshmem.h>
#include <shmem.h>
#include <shmemx.h>
#include <vector>

static int failures;

static void expect(bool ok, const char *what, long seen, long wanted)
{
    if (!ok && failures++ < 20)
        std::fprintf(stderr, "PE %d: %s: expected %ld, saw %ld\n", shmem_my_pe(), what, wanted,
                     seen);
}

int main()
{
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n;

    // Typed RMA and atomics on the default heap.
    long *counter = static_cast<long *>(shmem_calloc(1, sizeof(long)));
    double *values = static_cast<double *>(shmem_malloc(4 * sizeof(double)));
    std::vector<double> mine(4, me + 0.5);
    shmem_double_put(values, mine.data(), 4, right);
    shmem_long_atomic_add(counter, me + 1, 0);
    shmem_barrier_all();
    expect(values[3] == (me + n - 1) % n + 0.5, "double put", long(values[3]), (me + n - 1) % n);
    if (me == 0)
        expect(*counter == long(n) * (n + 1) / 2, "atomic add", *counter, long(n) * (n + 1) / 2);

    // A team of the even PEs and a context on it.
    shmem_team_t evens;
    if (shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, nullptr, 0, &evens) == 0 &&
        evens != SHMEM_TEAM_INVALID) {
        shmem_ctx_t ctx;
        expect(shmem_team_create_ctx(evens, 0, &ctx) == 0, "team context", 1, 0);
        int size = shmem_team_n_pes(evens), rank = shmem_team_my_pe(evens);
        shmem_ctx_int_p(ctx, reinterpret_cast<int *>(counter), rank, (rank + 1) % size);
        shmem_ctx_quiet(ctx);
        shmem_team_sync(evens);
        int got = *reinterpret_cast<int *>(counter);
        expect(got == (rank + size - 1) % size, "context put on a team", got,
               (rank + size - 1) % size);
        shmem_ctx_destroy(ctx);
        shmem_team_destroy(evens);
    }
    shmem_barrier_all();

    // A CPU space: allocate, reduce over its team, destroy.
    shmem_space_config_t config = {SHMEM_DEVICE_CPU, 1 << 16, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    shmem_team_t team;
    expect(shmem_space_create(&config, &space, &team) == 0, "space create", 1, 0);
    long *src = static_cast<long *>(shmem_space_malloc(space, sizeof(long)));
    long *sum = static_cast<long *>(shmem_space_malloc(space, sizeof(long)));
    *src = me;
    shmem_team_sync(team);
    shmem_long_sum_reduce(team, sum, src, 1);
    expect(*sum == long(n) * (n - 1) / 2, "sum over the space's team", *sum, long(n) * (n - 1) / 2);
    shmem_space_free(space, sum);
    shmem_space_free(space, src);
    shmem_team_destroy(team);
    expect(shmem_space_destroy(space) == 0, "space destroy", 1, 0);

    // The profiling interface's names are the same routines.
    expect(pshmem_my_pe() == me, "pshmem_my_pe", pshmem_my_pe(), me);
    const double left_value = pshmem_double_g(&values[3], right);
    expect(left_value == me + 0.5, "pshmem_double_g", long(left_value), me);

    shmem_free(values);
    shmem_free(counter);
    shmem_finalize();
    return failures ? 1 : 0;
}
