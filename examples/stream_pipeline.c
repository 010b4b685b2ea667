/* SPDX-License-Identifier: BSD-3-Clause */
/* A ring pipeline on the GPU, ordered on one CUDA stream per PE: each round the PE's "kernel"
 * fills a buffer, a put with signal takes it to the right neighbour, the stream waits for the
 * left neighbour's signal, and a second "kernel" takes the value that came in. The host enqueues
 * every round and synchronizes the stream once, at the end.
 *
 * The kernels here are the driver's memset and copy, so that the program is plain C; a real
 * program launches its own kernels at those two places, on the same stream.
 *
 * Build: oshcc stream_pipeline.c -o stream_pipeline -I$CUDA_HOME/include -L$CUDA_HOME/lib64 -lcuda
 * Run:   oshrun -np 4 ./stream_pipeline */
#include <cuda.h>
#include <shmem.h>
#include <shmemx.h>
#include <stdint.h>
#include <stdio.h>

#define ROUNDS 100
#define WORDS 1024

static void check(CUresult rc, const char *what)
{
    if (rc != CUDA_SUCCESS) {
        fprintf(stderr, "PE %d: %s failed (CUDA error %d)\n", shmem_my_pe(), what, (int)rc);
        shmem_global_exit(1);
    }
}

int main(void)
{
    /* The library's agent thread runs what the stream cannot do by itself (shmemx.h). */
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, NULL);
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;

    /* The program's device and context first: the GPU space then lives there too. */
    CUdevice device;
    CUcontext context;
    int devices = 0;
    check(cuInit(0), "cuInit");
    check(cuDeviceGetCount(&devices), "cuDeviceGetCount");
    if (devices == 0) {
        fprintf(stderr, "PE %d: no CUDA device\n", me);
        shmem_global_exit(1);
    }
    check(cuDeviceGet(&device, shmem_team_my_pe(SHMEM_TEAM_SHARED) % devices), "cuDeviceGet");
    check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    check(cuCtxSetCurrent(context), "cuCtxSetCurrent");

    shmem_space_config_t config = {SHMEM_DEVICE_CUDA, (size_t)16 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    shmem_team_t team;
    if (shmem_space_create(&config, &space, &team) != 0) {
        fprintf(stderr, "PE %d: no CUDA space\n", me);
        shmem_global_exit(1);
    }
    uint32_t *out = shmem_space_malloc(space, WORDS * sizeof(uint32_t));
    uint32_t *in = shmem_space_malloc(space, (size_t)ROUNDS * WORDS * sizeof(uint32_t));
    uint32_t *taken = shmem_space_malloc(space, ROUNDS * sizeof(uint32_t));
    uint64_t *signal = shmem_space_malloc(space, sizeof(uint64_t));
    CUstream stream;
    check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    check(cuMemsetD8Async((CUdeviceptr)(uintptr_t)signal, 0, sizeof(*signal), stream), "memset");
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    shmem_barrier_all(); /* every signal word is 0 before anyone sends */

    for (int r = 0; r < ROUNDS; r++) {
        uint32_t *slot = in + (size_t)r * WORDS;
        /* kernel 1: this round's data */
        check(
            cuMemsetD32Async((CUdeviceptr)(uintptr_t)out, (unsigned)(r * npes + me), WORDS, stream),
            "kernel 1");
        shmemx_putmem_signal_on_stream(slot, out, WORDS * sizeof(uint32_t), signal, (uint64_t)r + 1,
                                       SHMEM_SIGNAL_SET, right, stream);
        shmemx_signal_wait_until_on_stream(signal, SHMEM_CMP_GE, (uint64_t)r + 1, stream);
        /* kernel 2: takes what the left neighbour sent this round */
        check(cuMemcpyAsync((CUdeviceptr)(uintptr_t)(taken + r), (CUdeviceptr)(uintptr_t)slot,
                            sizeof(uint32_t), stream),
              "kernel 2");
    }
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");

    uint32_t result[ROUNDS];
    check(cuMemcpy((CUdeviceptr)(uintptr_t)result, (CUdeviceptr)(uintptr_t)taken, sizeof(result)),
          "cuMemcpy");
    int wrong = 0;
    for (int r = 0; r < ROUNDS; r++)
        wrong += result[r] != (uint32_t)(r * npes + left);
    printf("PE %d: %d rounds from PE %d, %d wrong\n", me, ROUNDS, left, wrong);

    shmem_barrier_all();
    check(cuStreamDestroy(stream), "cuStreamDestroy");
    shmem_space_free(space, signal);
    shmem_space_free(space, taken);
    shmem_space_free(space, in);
    shmem_space_free(space, out);
    shmem_team_destroy(team);
    shmem_space_destroy(space);
    shmem_finalize();
    return wrong != 0;
}
