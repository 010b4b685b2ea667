/* Large copies between host heaps and GPU heaps (a CUDA or HIP space on every PE, the runtime
 * as gpu_runtime.h chooses it): a put from this PE's CPU-space heap into the next PE's GPU heap, a
 * get from the next PE's CPU-space heap (mapped here) into this PE's GPU heap, and a get from a GPU
 * heap into the CPU-space heap, every word checked. On a runtime's test double
 * (SHMEM_TEST_CUDA_DRIVER, SHMEM_TEST_HIP_RUNTIME) the test also asks the double what is
 * registered: those copies registered the host mappings they touched, and destroying the CPU space
 * unregistered them all. With both runtimes' doubles named, a space of the other runtime is
 * refused. */
#include "check.h"
#include "gpu_runtime.h"

#include <stdlib.h>

enum { WORDS = 512 * 1024 }; /* 4 MiB: large enough to be registered */

/* Where the suite names both runtimes' doubles (STRATA_TEST_BOTH_RUNTIMES): a process uses one GPU
 * runtime, so a space of the other is refused on every PE. */
static void check_other_runtime_refused(void)
{
    const char *both = getenv("STRATA_TEST_BOTH_RUNTIMES");
    if (!both || !*both)
        return;
    shmem_space_config_t other = {gpu_runtime_is_hip() ? SHMEM_DEVICE_CUDA : SHMEM_DEVICE_HIP,
                                  1 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    shmem_team_t team;
    CHECK(shmem_space_create(&other, &space, &team) != 0 && space == SHMEM_SPACE_INVALID &&
              team == SHMEM_TEAM_INVALID,
          "a space of the other GPU runtime refused");
}

static long expected(int pe, long i)
{
    return (long)pe * 100000000L + i;
}

/* How many of the WORDS words at buffer (on this PE, any kind) are not writer's pattern. Read
 * into private memory, which the library never registers. */
static long wrong_words(const long *buffer, int writer)
{
    long *seen = malloc(WORDS * sizeof(long)), wrong = 0;
    shmem_getmem(seen, buffer, WORDS * sizeof(long), shmem_my_pe());
    for (long i = 0; i < WORDS; i++)
        wrong += seen[i] != expected(writer, i);
    free(seen);
    return wrong;
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    shmem_space_config_t gpu_config = {gpu_runtime_type(), 64 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_config_t cpu_config = {SHMEM_DEVICE_CPU, 64 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t gpu, cpu;
    shmem_team_t gpu_team, cpu_team;
    if (shmem_space_create(&gpu_config, &gpu, &gpu_team) ||
        shmem_space_create(&cpu_config, &cpu, &cpu_team)) {
        CHECK(0, "a GPU space and a CPU space on every PE");
        return check_finish();
    }
    check_other_runtime_refused();
    gpu_registered_fn registered = gpu_runtime_double_registered(); /* loaded by the GPU space */
    size_t before = registered ? registered() : 0;
    long *host = shmem_space_malloc(cpu, WORDS * sizeof(long));
    long *device = shmem_space_malloc(gpu, WORDS * sizeof(long));
    long *device2 = shmem_space_malloc(gpu, WORDS * sizeof(long));
    for (long i = 0; i < WORDS; i++)
        host[i] = expected(me, i);
    shmem_barrier_all();

    shmem_long_put(device, host, WORDS, right); /* host heap -> peer's GPU heap */
    shmem_barrier_all();
    CHECK(wrong_words(device, left) == 0, "put from PE %d's host heap", left);

    shmem_long_get(device2, host, WORDS, right); /* peer's host heap -> GPU heap */
    CHECK(wrong_words(device2, right) == 0, "get from PE %d's host heap", right);

    shmem_barrier_all();
    shmem_long_get(host, device, WORDS, me); /* GPU heap -> host heap */
    long wrong = 0;
    for (long i = 0; i < WORDS; i++)
        wrong += host[i] != expected(left, i);
    CHECK(wrong == 0, "get into the host heap: %ld words wrong", wrong);
    if (registered)
        CHECK(registered() > before, "large copies registered host memory: %zu bytes",
              registered());

    shmem_barrier_all();
    shmem_space_free(gpu, device2);
    shmem_space_free(gpu, device);
    shmem_space_free(cpu, host);
    shmem_team_destroy(cpu_team);
    shmem_space_destroy(cpu);
    if (registered)
        CHECK(registered() == before, "the CPU space's mappings unregistered: %zu bytes left",
              registered() - before);
    shmem_team_destroy(gpu_team);
    shmem_space_destroy(gpu);
    return check_finish();
}
