/* SPDX-License-Identifier: BSD-3-Clause */
/* A buffer of the program's own in device memory is a valid local buffer of RMA: a get lands in
 * it and a put takes from it, through the kind, to and from every space kind: the default heap,
 * static data, a CPU space and a device space, on this PE and the next. The buffer is the test
 * device kind's (shmemx_test_device_malloc) when SHMEM_TEST_DEVICE_PES is set, else the GPU
 * runtime's (cuMemAlloc or hipMalloc, from the runtime gpu_runtime.h chooses), as a cudaMalloc'd
 * or hipMalloc'd buffer would be. Device memory is never loaded or stored here.
 *
 * With STRATA_TEST_RUNTIME_FIRST set, the program sets the GPU runtime up and allocates its
 * buffer before shmem_init, and makes no GPU space: the library recognises the buffer from
 * start-up. Otherwise the GPU space comes first. */
#include "check.h"
#include "gpu_runtime.h"

#include <shmemx.h>
#include <stdlib.h>
#include <string.h>

enum { N = 300 };

static long static_in[64 * N], static_out[64 * N];

/* Through the private device buffer: host -> in (on pe) -> device buffer -> out (on pe) ->
 * host. in and out hold one slot of N words per source PE. */
static void round_trip(const char *where, long *in, long *out, long *device, int pe)
{
    int me = shmem_my_pe();
    long sent[N], back[N];
    for (int i = 0; i < N; i++)
        sent[i] = (long)me * 1000000 + pe * 10000 + i;
    memset(back, 0, sizeof(back));
    shmem_long_put(in + me * N, sent, N, pe);
    shmem_quiet();
    shmem_long_get(device, in + me * N, N, pe);      /* into device memory */
    shmem_long_put_nbi(out + me * N, device, N, pe); /* out of device memory */
    shmem_quiet();
    shmem_long_get(back, out + me * N, N, pe);
    CHECK(!memcmp(sent, back, sizeof(sent)), "%s on PE %d: [0] %ld, [%d] %ld", where, pe, back[0],
          N - 1, back[N - 1]);
    long one = shmem_long_g(out + me * N + 7, pe);
    CHECK_EQ(one, sent[7]);
}

static void every_target(const char *where, long *in, long *out, long *device)
{
    int me = shmem_my_pe(), n = shmem_n_pes();
    round_trip(where, in, out, device, me);
    round_trip(where, in, out, device, (me + 1) % n);
}

static int test_device(void)
{
    const char *pes = getenv("SHMEM_TEST_DEVICE_PES");
    return pes && *pes;
}

int main(void)
{
    int runtime_first = getenv("STRATA_TEST_RUNTIME_FIRST") != NULL;
    long *device = runtime_first ? gpu_runtime_malloc(N * sizeof(long)) : NULL;
    shmem_init();
    int n = shmem_n_pes();
    shmem_space_config_t gpu = {SHMEM_DEVICE_GPU, 1 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t gpu_space = SHMEM_SPACE_INVALID;
    shmem_team_t gpu_team = SHMEM_TEAM_INVALID;
    if (!runtime_first) {
        CHECK(shmem_space_create(&gpu, &gpu_space, &gpu_team) == 0, "a GPU space on every PE");
        device = test_device() ? shmemx_test_device_malloc(N * sizeof(long))
                               : gpu_runtime_malloc(N * sizeof(long));
    }
    CHECK(device != NULL, "a private device buffer (a device on every PE)");
    if (device) {
        long *heap_in = shmem_calloc((size_t)n * N, sizeof(long));
        long *heap_out = shmem_calloc((size_t)n * N, sizeof(long));
        every_target("default heap", heap_in, heap_out, device);
        every_target("static data", static_in, static_out, device);

        shmem_space_config_t cpu = {SHMEM_DEVICE_CPU, 1 << 20, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t cpu_space;
        shmem_team_t cpu_team;
        CHECK(shmem_space_create(&cpu, &cpu_space, &cpu_team) == 0, "a CPU space");
        const shmem_space_t spaces[] = {cpu_space, gpu_space};
        const char *names[] = {"CPU space", "device space"};
        for (int t = 0; t < (runtime_first ? 1 : 2); t++) {
            long *in = shmem_space_calloc(spaces[t], (size_t)n * N, sizeof(long));
            long *out = shmem_space_calloc(spaces[t], (size_t)n * N, sizeof(long));
            every_target(names[t], in, out, device);
            shmem_space_free(spaces[t], out);
            shmem_space_free(spaces[t], in);
        }
        shmem_team_destroy(cpu_team);
        shmem_space_destroy(cpu_space);
        shmem_barrier_all();
        shmem_free(heap_out);
        shmem_free(heap_in);
        if (test_device())
            shmemx_test_device_free(device);
        else
            CHECK(gpu_runtime_free(device) == 0, "the private device buffer freed");
    }
    if (!runtime_first) {
        shmem_team_destroy(gpu_team);
        shmem_space_destroy(gpu_space);
    }
    return check_finish();
}
