/* SPDX-License-Identifier: BSD-3-Clause */
/* Large copies between host heaps and GPU heaps (a CUDA or HIP space on every PE, the runtime
 * as gpu_runtime.h chooses it): a put from this PE's CPU-space heap into the next PE's GPU heap, a
 * get from the next PE's CPU-space heap (mapped here) into this PE's GPU heap, and a get from a GPU
 * heap into the CPU-space heap, every word checked. On a runtime's test double
 * (SHMEM_TEST_CUDA_DRIVER, SHMEM_TEST_HIP_RUNTIME) the test also asks the double what is
 * registered: those copies registered the host mappings they touched, and destroying the CPU space
 * unregistered them all. With both runtimes' doubles named, a space of the other runtime is
 * refused. Two contexts write the next PE's GPU heap, each landing its writes with its own quiet
 * (on a double, on a stream of its own), and a context's put-with-signal delivers its data
 * first. */
#include "check.h"
#include "gpu_runtime.h"

#include <stdlib.h>
#include <string.h>

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

enum { CTX_SMALL = 64, CTX_LARGE = 8192 }; /* words: small puts are batched, a large one is not */

/* Context c's pattern from PE pe in round r. */
static long ctx_value(int pe, int r, int c, long i)
{
    return expected(pe, i) + r * 10000000L + c * 1000000L;
}

/* Whether this PE's words hold left's pattern of round r, as contexts 0 and 1 wrote them. */
static int ctx_words_right(const long *words, int left, int r)
{
    long *seen = malloc((CTX_SMALL + CTX_LARGE) * sizeof(long)), wrong = 0;
    shmem_getmem(seen, words, (CTX_SMALL + CTX_LARGE) * sizeof(long), shmem_my_pe());
    for (long i = 0; i < CTX_SMALL; i++)
        wrong += seen[i] != ctx_value(left, r, 0, i);
    for (long i = 0; i < CTX_LARGE; i++)
        wrong += seen[CTX_SMALL + i] != ctx_value(left, r, 1, i);
    free(seen);
    return wrong == 0;
}

/* Context 0 writes the small words one at a time. */
static void ctx_write_small(shmem_ctx_t ctx, long *words, int me, int right, int r)
{
    for (long i = 0; i < CTX_SMALL; i++)
        shmem_ctx_long_p(ctx, words + i, ctx_value(me, r, 0, i), right);
}

/* Context 1 writes the large block in one put, with a signal where sig is given. */
static void ctx_write_large(shmem_ctx_t ctx, long *words, uint64_t *sig, int me, int right, int r)
{
    long *block = malloc(CTX_LARGE * sizeof(long));
    for (long i = 0; i < CTX_LARGE; i++)
        block[i] = ctx_value(me, r, 1, i);
    if (sig)
        shmem_ctx_long_put_signal(ctx, words + CTX_SMALL, block, CTX_LARGE, sig, 1,
                                  SHMEM_SIGNAL_SET, right);
    else
        shmem_ctx_long_put(ctx, words + CTX_SMALL, block, CTX_LARGE, right);
    free(block);
}

/* A barrier lands the contexts' first writes into an attached peer's heap, unquieted (the
 * library's own rule: 1.6 asks a barrier to complete the default context's operations only, so
 * writes through the transport, to another node, are quieted first). Then each context's quiet
 * lands its own writes: the sync after them lands nothing, and the double runs a stream's work
 * only when that stream is synchronized. Last, context 1's put-with-signal, after context 0's
 * quiet: the signal may only arrive once its block landed. */
static void check_contexts(shmem_space_t gpu, int me, int right, int left)
{
    gpu_streams_fn streams = gpu_runtime_double_streams();
    int before = streams ? streams() : 0;
    long *words = shmem_space_malloc(gpu, (CTX_SMALL + CTX_LARGE) * sizeof(long));
    uint64_t *sig = shmem_calloc(1, sizeof(*sig));
    shmem_ctx_t ctx[2];
    CHECK(!shmem_ctx_create(0, &ctx[0]) && !shmem_ctx_create(0, &ctx[1]), "two contexts");
    shmem_barrier_all();

    ctx_write_small(ctx[0], words, me, right, 1); /* the contexts' first writes */
    ctx_write_large(ctx[1], words, NULL, me, right, 1);
    int attached = shmem_ptr(words, right) != NULL; /* written through this PE's streams */
    if (!attached) {
        shmem_ctx_quiet(ctx[0]);
        shmem_ctx_quiet(ctx[1]);
    }
    shmem_barrier_all();
    CHECK(ctx_words_right(words, left, 1), "contexts' writes from PE %d landed by a barrier", left);

    shmem_barrier_all();
    ctx_write_small(ctx[0], words, me, right, 2);
    ctx_write_large(ctx[1], words, NULL, me, right, 2);
    shmem_ctx_quiet(ctx[0]);
    shmem_ctx_quiet(ctx[1]);
    shmem_sync_all();
    CHECK(ctx_words_right(words, left, 2), "two contexts' writes from PE %d, each quieted", left);
    if (streams && attached)
        CHECK(streams() - before >= 2, "two contexts wrote on two new streams: %d made",
              streams() - before);

    shmem_barrier_all();
    ctx_write_small(ctx[0], words, me, right, 3);
    shmem_ctx_quiet(ctx[0]);
    ctx_write_large(ctx[1], words, sig, me, right, 3);
    shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
    CHECK(ctx_words_right(words, left, 3), "a context's signal after its data from PE %d", left);

    shmem_barrier_all();
    shmem_ctx_destroy(ctx[0]);
    shmem_ctx_destroy(ctx[1]);
    shmem_free(sig);
    shmem_space_free(gpu, words);
}

/* How many of the count words at buffer (on this PE, any kind) are not writer's pattern. Read
 * into private memory, which the library never registers. */
static long wrong_words(const long *buffer, long count, int writer)
{
    long *seen = malloc(count * sizeof(long)), wrong = 0;
    if (!seen)
        return count;
    shmem_getmem(seen, buffer, count * sizeof(long), shmem_my_pe());
    for (long i = 0; i < count; i++)
        wrong += seen[i] != expected(writer, i);
    free(seen);
    return wrong;
}

/* A copy of 40 MiB between this PE's host heap and its GPU heap, each way: its host side covers
 * a boundary of the library's 32 MiB registration granules, so two registrations, which the
 * runtime refuses to copy across in one piece (a real driver and the doubles alike). */
static void check_granule_crossing(shmem_space_t gpu, shmem_space_t cpu, int me)
{
    enum { SPAN = 5 << 20 }; /* words */
    long *host = shmem_space_malloc(cpu, SPAN * sizeof(long));
    long *device = shmem_space_malloc(gpu, SPAN * sizeof(long));
    CHECK(host && device, "40 MiB in each space");
    if (!host || !device)
        return;
    for (long i = 0; i < SPAN; i++)
        host[i] = expected(me, i);
    shmem_long_put(device, host, SPAN, me);
    shmem_quiet();
    long wrong = wrong_words(device, SPAN, me);
    CHECK(wrong == 0, "40 MiB from the host heap into the GPU heap: %ld words wrong", wrong);
    memset(host, 0, SPAN * sizeof(long));
    shmem_long_get(host, device, SPAN, me);
    wrong = wrong_words(host, SPAN, me);
    CHECK(wrong == 0, "40 MiB from the GPU heap into the host heap: %ld words wrong", wrong);
    shmem_space_free(gpu, device);
    shmem_space_free(cpu, host);
}

/* A put of count words at src (this PE's pattern at offsets from `from`) into the right PE's GPU
 * words, which it checks after the barrier; then src is overwritten at once: a put returns when
 * its source may be reused. */
static void put_checked(long *words, long *src, long from, long count, int me, int right,
                        const char *what)
{
    for (long i = 0; i < count; i++)
        src[i] = expected(me, from + i);
    shmem_long_put(words, src, count, right);
    memset(src, 0xee, count * sizeof(long));
    shmem_barrier_all();
    long *seen = malloc(count * sizeof(long)), wrong = 0;
    shmem_getmem(seen, words, count * sizeof(long), me);
    for (long i = 0; seen && i < count; i++)
        wrong += seen[i] != expected((me + shmem_n_pes() - 1) % shmem_n_pes(), from + i);
    CHECK(seen && wrong == 0, "%s: %ld of %ld words wrong", what, wrong, count);
    free(seen);
    shmem_barrier_all();
}

/* The program registers host memory of its own inside a symmetric heap, before the library
 * registered the granule around it (the library's registration is then refused, and copies go
 * through both kinds of memory) and after (the runtime answers that it is registered already).
 * Copies that start in the program's registration and run out of it, or run into it, are right,
 * and a put's source is reusable on return. */
static void check_program_registrations(shmem_space_t gpu, int me, int right)
{
    enum { MIB = 1 << 20, WORDS_4MIB = 4 * MIB / 8 };
    shmem_space_config_t config = {SHMEM_DEVICE_CPU, 128 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t cpu;
    shmem_team_t team;
    CHECK(shmem_space_create(&config, &cpu, &team) == 0, "a CPU space of 128 MiB");
    char *block = shmem_space_malloc(cpu, 100 * MIB);
    long *words = shmem_space_malloc(gpu, 4 * MIB);
    CHECK(block && words, "100 MiB of host heap, 4 MiB of GPU heap");
    if (!block || !words)
        return;
    /* Two of the library's 32 MiB registration granules inside the block. */
    char *first = (char *)(((uintptr_t)block + 32 * MIB - 1) & ~(uintptr_t)(32 * MIB - 1));
    char *second = first + 32 * MIB;

    int rc = gpu_runtime_host_register(first + MIB, 2 * MIB);
    CHECK(rc == 0, "the program registers 2 MiB of the heap first (error %d)", rc);
    put_checked(words, (long *)(first + 2 * MIB), 0, WORDS_4MIB, me, right,
                "a put out of the program's registration");
    put_checked(words, (long *)(first + MIB / 2), 7, MIB / 8, me, right,
                "a put into the program's registration");
    long *back = (long *)(first + 2 * MIB);
    shmem_long_get(back, words, WORDS_4MIB, me);
    long wrong = 0;
    for (long i = 0; i < MIB / 8; i++)
        wrong += back[i] != expected((me + shmem_n_pes() - 1) % shmem_n_pes(), 7 + i);
    CHECK(wrong == 0, "a get out of the program's registration: %ld words wrong", wrong);
    shmem_barrier_all(); /* before the left PE's next put into words */

    put_checked(words, (long *)second, 0, WORDS_4MIB, me, right, "a put the library registers");
    int late = gpu_runtime_host_register(second + MIB, MIB);
    CHECK(late == 0 || late == GPU_RUNTIME_ALREADY_REGISTERED,
          "the program registers inside the library's registration: error %d", late);
    put_checked(words, (long *)(second + MIB + MIB / 2), 3, WORDS_4MIB, me, right,
                "a put out of the program's late registration");

    CHECK(gpu_runtime_host_unregister(first + MIB) == 0, "the program's unregistration");
    if (late == 0)
        gpu_runtime_host_unregister(second + MIB);
    shmem_space_free(gpu, words);
    shmem_space_free(cpu, block);
    shmem_team_destroy(team);
    CHECK(shmem_space_destroy(cpu) == 0, "the CPU space destroyed");
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
    check_program_registrations(gpu, me, right);
    check_contexts(gpu, me, right, left);
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
    CHECK(wrong_words(device, WORDS, left) == 0, "put from PE %d's host heap", left);

    shmem_long_get(device2, host, WORDS, right); /* peer's host heap -> GPU heap */
    CHECK(wrong_words(device2, WORDS, right) == 0, "get from PE %d's host heap", right);

    shmem_barrier_all();
    shmem_long_get(host, device, WORDS, me); /* GPU heap -> host heap */
    long wrong = 0;
    for (long i = 0; i < WORDS; i++)
        wrong += host[i] != expected(left, i);
    CHECK(wrong == 0, "get into the host heap: %ld words wrong", wrong);
    if (registered)
        CHECK(registered() > before, "large copies registered host memory: %zu bytes",
              registered());
    check_granule_crossing(gpu, cpu, me);

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
