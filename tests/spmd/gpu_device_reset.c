/* SPDX-License-Identifier: BSD-3-Clause */
/* A GPU program that resets its device (cudaDeviceReset, hipDeviceReset) before shmem_finalize,
 * as many CUDA programs end: the reset takes every allocation, stream and registration of the
 * process with it, the library's too, and the library then has nothing left to free. A space
 * destroyed after the reset, one left for shmem_finalize, and host heaps the runtime had
 * registered all end cleanly, and the PE exits 0. Every PE has device 0's primary context
 * current, as after cudaSetDevice(0). With "use", a put into a GPU heap after the reset ends the
 * job instead, with a line that names the reset. */
#include "check.h"
#include "gpu_runtime.h"

#include <string.h>

enum { N = 1 << 17 }; /* longs: a 1 MiB copy, which registers the host heap with the runtime */

int main(int argc, char **argv)
{
    CHECK(gpu_runtime_choose(0, 0) != 0, "device 0 chosen");
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_space_config_t config = {gpu_runtime_type(), 4 * N * sizeof(long),
                                   SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t kept, destroyed;
    shmem_team_t kept_team, destroyed_team;
    CHECK(shmem_space_create(&config, &kept, &kept_team) == 0 &&
              shmem_space_create(&config, &destroyed, &destroyed_team) == 0,
          "two GPU spaces");
    long *host = shmem_malloc(N * sizeof(long));
    long *gpu = shmem_space_malloc(kept, N * sizeof(long));
    long *other = shmem_space_malloc(destroyed, N * sizeof(long));
    CHECK(host && gpu && other, "allocations");
    for (int i = 0; host && i < N; i++)
        host[i] = me * 1000000L + i;
    shmem_barrier_all();
    shmem_long_put(gpu, host, N, (me + 1) % n); /* host heap -> a node peer's GPU heap */
    shmem_barrier_all();
    shmem_long_put(other, gpu, N, (me + 1) % n); /* GPU heap -> GPU heap */
    shmem_barrier_all();
    shmem_long_get(host, other, N, me); /* back into the host heap */
    int from = (me + 2 * n - 2) % n, bad = 0;
    for (int i = 0; i < N; i++)
        bad += host[i] != from * 1000000L + i;
    CHECK(bad == 0, "%d of %d longs wrong after two hops from PE %d", bad, N, from);
    shmem_barrier_all();

    CHECK(gpu_runtime_reset(0) == 0, "the runtime's device reset");
    if (argc > 1 && !strcmp(argv[1], "use")) {
        shmem_long_put(gpu, host, N, me);
        shmem_quiet();
        CHECK(0, "a put into the GPU heap of a reset device returned");
        return check_finish();
    }
    shmem_team_destroy(destroyed_team);
    CHECK(shmem_space_destroy(destroyed) == 0, "a space destroyed after the reset");
    shmem_team_destroy(kept_team);
    return check_finish(); /* shmem_finalize, with the other space still alive */
}
