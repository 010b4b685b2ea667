/* SPDX-License-Identifier: BSD-3-Clause */
/* A five-minute tour of memory spaces.
 *
 * Every symmetric heap is a *space*: shmem_malloc uses the default one, and a program can create
 * more at run time, each on a device type. Only the PEs that can reach the device join a space;
 * its team tells you who they are. RMA, atomics and collectives find the space of each pointer
 * by themselves.
 *
 *   oshrun -np 4 ./spaces_tour
 *   SHMEM_TEST_DEVICE_PES=0,2 oshrun -np 4 ./spaces_tour   # pretend PEs 0 and 2 have a GPU */
#include <shmem.h>
#include <stdio.h>

static void describe(const char *name, shmem_space_t space)
{
    shmem_space_cap_t caps;
    shmem_team_t team;
    shmem_space_get_caps(space, &caps);
    shmem_space_get_team(space, &team);
    printf("%-8s team of %d PEs, caps:%s%s%s%s%s%s\n", name, shmem_team_n_pes(team),
           caps & SHMEM_SPACE_CAP_RMA ? " rma" : "",
           caps & SHMEM_SPACE_CAP_ATOMICS ? " atomics" : "",
           caps & SHMEM_SPACE_CAP_COLLECTIVES ? " collectives" : "",
           caps & SHMEM_SPACE_CAP_DIRECT_ACCESS ? " load/store" : "",
           caps & SHMEM_SPACE_CAP_WORLD_ACCESS ? " every-PE" : "",
           caps & SHMEM_SPACE_CAP_IDENT_ADDR ? " same-addresses" : "");
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();

    /* 1. The default space is a space like any other. */
    if (me == 0)
        describe("default", SHMEM_SPACE_DEFAULT);

    /* 2. A CPU space of 1 MiB per PE: collective over all PEs, every PE joins. */
    shmem_space_config_t cpu_config = {SHMEM_DEVICE_CPU, 1 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t cpu;
    shmem_team_t cpu_team;
    if (shmem_space_create(&cpu_config, &cpu, &cpu_team) != 0) {
        fprintf(stderr, "PE %d: no CPU space\n", me);
        shmem_global_exit(1);
    }
    if (me == 0)
        describe("cpu", cpu);

    /* Allocate in it (collective on its team) and use it like any symmetric memory. */
    long *ring = shmem_space_malloc(cpu, sizeof(long));
    shmem_long_p(ring, me, (me + 1) % n); /* to my right neighbour */
    shmem_barrier_all();
    long sum;
    long *total = shmem_space_malloc(cpu, sizeof(long));
    shmem_long_sum_reduce(cpu_team, total, ring, 1);
    sum = *total;
    if (me == 0)
        printf("cpu      ring passed, sum of PE numbers = %ld\n", sum);

    /* 3. A GPU space: only the PEs with a GPU are members; the others get invalid handles. */
    shmem_space_config_t gpu_config = {SHMEM_DEVICE_GPU, 1 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t gpu;
    shmem_team_t gpu_team;
    if (shmem_space_create(&gpu_config, &gpu, &gpu_team) != 0) {
        if (me == 0)
            printf("gpu      no PE has a GPU (try SHMEM_TEST_DEVICE_PES=0,2)\n");
    } else if (gpu != SHMEM_SPACE_INVALID) {
        int rank = shmem_team_my_pe(gpu_team), size = shmem_team_n_pes(gpu_team);
        if (rank == 0)
            describe("gpu", gpu);
        /* Device memory is not for loads and stores: move it with RMA. Team PE numbers are
         * translated to world numbers for RMA on the default context. */
        long *on_device = shmem_space_calloc(gpu, 1, sizeof(long));
        int root = shmem_team_translate_pe(gpu_team, 0, SHMEM_TEAM_WORLD);
        shmem_long_atomic_add(on_device, rank + 1, root);
        shmem_quiet(); /* a team's sync completes stores, not remote updates */
        shmem_team_sync(gpu_team);
        if (rank == 0)
            printf("gpu      %d members added 1..%d on the device: %ld\n", size, size,
                   shmem_long_g(on_device, root));
        shmem_space_free(gpu, on_device);
        shmem_team_destroy(gpu_team);
        shmem_space_destroy(gpu);
    }

    /* 4. Tear down: teams first, then the space. */
    shmem_space_free(cpu, total);
    shmem_space_free(cpu, ring);
    shmem_team_destroy(cpu_team);
    shmem_space_destroy(cpu);
    shmem_finalize();
    return 0;
}
