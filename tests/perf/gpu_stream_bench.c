/* SPDX-License-Identifier: BSD-3-Clause */
/* Work in a stream's order against what a program does without it (2 PEs, a CUDA space each, a
 * stream each). Prints "name value", each on-stream figure beside its host-ordered one:
 *   stream_put_signal_rtt_8B_us   a ping-pong of 8-byte put-with-signal and stream waits, per round
 *   host_put_signal_rtt_8B_us     the same with a stream synchronize, the host put-with-signal and
 *                                 the host wait at each step
 *   stream_put_1MiB_GBps          1 MiB on-stream puts from PE 0's GPU heap to PE 1's, a quiet on
 *                                 the stream after each
 *   host_put_1MiB_GBps            a stream synchronize, then put and quiet, each time
 *   stream_barrier_us, host_barrier_us           a barrier of both PEs
 *   stream_sum_reduce_1MiB_us, host_sum_reduce_1MiB_us   a float sum reduction of 1 MiB
 * The driver is libcuda.so.1, or the file SHMEM_TEST_CUDA_DRIVER names. */
#include <dlfcn.h>
#include <shmem.h>
#include <shmemx.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MIB ((size_t)1 << 20)

static int (*stream_sync)(void *stream);
static int me;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The driver with the primary context of device 0 current, and a stream of the program's. */
static void *driver_stream(void)
{
    const char *path = getenv("SHMEM_TEST_CUDA_DRIVER");
    void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW), *context, *stream = NULL;
    int (*init)(unsigned) = lib ? dlsym(lib, "cuInit") : NULL;
    int (*retain)(void **, int) = lib ? dlsym(lib, "cuDevicePrimaryCtxRetain") : NULL;
    int (*set)(void *) = lib ? dlsym(lib, "cuCtxSetCurrent") : NULL;
    int (*create)(void **, unsigned) = lib ? dlsym(lib, "cuStreamCreate") : NULL;
    stream_sync = lib ? dlsym(lib, "cuStreamSynchronize") : NULL;
    if (!init || !retain || !set || !create || !stream_sync || init(0) || retain(&context, 0) ||
        set(context) || create(&stream, 1 /* CU_STREAM_NON_BLOCKING */))
        return NULL;
    return stream;
}

/* Seconds per round of body (best of 3 batches of reps), both PEs running it. */
#define TIMED(reps, body)                                                                          \
    ({                                                                                             \
        double best_ = 1e30;                                                                       \
        for (int batch_ = 0; batch_ < 3; batch_++) {                                               \
            shmem_barrier_all();                                                                   \
            double t0_ = now_s();                                                                  \
            for (int i = 0; i < (reps); i++) {                                                     \
                body;                                                                              \
            }                                                                                      \
            double t_ = (now_s() - t0_) / (reps);                                                  \
            best_ = t_ < best_ ? t_ : best_;                                                       \
        }                                                                                          \
        best_;                                                                                     \
    })

static void report(const char *name, double value)
{
    if (me == 0)
        printf("%s %.3f\n", name, value);
}

int main(void)
{
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, NULL);
    me = shmem_my_pe();
    int other = 1 - me, reps = 200;
    void *stream = driver_stream();
    shmem_space_config_t config = {SHMEM_DEVICE_CUDA, 64 * MIB, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t gpu;
    shmem_team_t team;
    if (shmem_n_pes() != 2 || !stream || shmem_space_create(&config, &gpu, &team)) {
        fprintf(stderr, "gpu_stream_bench: needs 2 PEs and a CUDA device\n");
        shmem_global_exit(1);
    }
    char *src = shmem_space_calloc(gpu, MIB, 1), *dst = shmem_space_calloc(gpu, MIB, 1);
    uint64_t *sig = shmem_space_calloc(gpu, 1, sizeof(uint64_t));
    uint64_t round = 0;

    /* Ping-pong: PE 0 sends, PE 1 answers; each waits for the other's signal to pass round. */
    double t = TIMED(reps, {
        round++;
        if (me == 0) {
            shmemx_putmem_signal_on_stream(dst, src, 8, sig, round, SHMEM_SIGNAL_SET, other,
                                           stream);
            shmemx_signal_wait_until_on_stream(sig, SHMEM_CMP_GE, round, stream);
        } else {
            shmemx_signal_wait_until_on_stream(sig, SHMEM_CMP_GE, round, stream);
            shmemx_putmem_signal_on_stream(dst, src, 8, sig, round, SHMEM_SIGNAL_SET, other,
                                           stream);
        }
        if (i == reps - 1)
            stream_sync(stream);
    });
    report("stream_put_signal_rtt_8B_us", t * 1e6);
    t = TIMED(reps, {
        round++;
        stream_sync(stream);
        if (me == 0) {
            shmem_putmem_signal(dst, src, 8, sig, round, SHMEM_SIGNAL_SET, other);
            shmem_signal_wait_until(sig, SHMEM_CMP_GE, round);
        } else {
            shmem_signal_wait_until(sig, SHMEM_CMP_GE, round);
            shmem_putmem_signal(dst, src, 8, sig, round, SHMEM_SIGNAL_SET, other);
        }
    });
    report("host_put_signal_rtt_8B_us", t * 1e6);

    int big = 20;
    t = TIMED(big, {
        if (me == 0) {
            shmemx_putmem_on_stream(dst, src, MIB, other, stream);
            shmemx_quiet_on_stream(stream);
        }
        if (i == big - 1)
            stream_sync(stream);
    });
    report("stream_put_1MiB_GBps", (double)MIB / t / 1e9);
    t = TIMED(big, {
        if (me == 0) {
            stream_sync(stream);
            shmem_putmem(dst, src, MIB, other);
            shmem_quiet();
        }
    });
    report("host_put_1MiB_GBps", (double)MIB / t / 1e9);

    t = TIMED(reps, {
        shmemx_barrier_all_on_stream(stream);
        if (i == reps - 1)
            stream_sync(stream);
    });
    report("stream_barrier_us", t * 1e6);
    t = TIMED(reps, {
        stream_sync(stream);
        shmem_barrier_all();
    });
    report("host_barrier_us", t * 1e6);

    t = TIMED(big, {
        shmemx_float_sum_reduce_on_stream(SHMEM_TEAM_WORLD, (float *)dst, (const float *)src,
                                          MIB / sizeof(float), stream);
        if (i == big - 1)
            stream_sync(stream);
    });
    report("stream_sum_reduce_1MiB_us", t * 1e6);
    t = TIMED(big, {
        stream_sync(stream);
        shmem_float_sum_reduce(SHMEM_TEAM_WORLD, (float *)dst, (const float *)src,
                               MIB / sizeof(float));
    });
    report("host_sum_reduce_1MiB_us", t * 1e6);

    shmem_barrier_all();
    shmem_space_free(gpu, sig);
    shmem_space_free(gpu, dst);
    shmem_space_free(gpu, src);
    shmem_space_destroy(gpu);
    shmem_finalize();
    return 0;
}
