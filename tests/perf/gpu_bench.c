/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU spaces, measured by PE 0 against PE 1 (2 PEs, a CUDA space on each). Prints "name value":
 *   gpu_put_8B_us, gpu_get_8B_us          8 bytes into / out of PE 1's GPU heap (put + quiet)
 *   gpu_put_<size>_GBps, gpu_get_<size>_GBps   PE 0's GPU heap <-> PE 1's GPU heap
 *   host_to_gpu_<size>_GBps, gpu_to_host_<size>_GBps   PE 0's host heap <-> its GPU heap
 *   private_to_gpu_16MiB_GBps             a cuMemAlloc'd buffer of PE 0 -> PE 1's GPU heap
 *   private_host_to_gpu_16MiB_GBps        a malloc'd (pageable) buffer of PE 0 -> PE 1's GPU heap
 *   host_put_8B_us                        8 bytes of host memory into PE 1's GPU heap (+ quiet)
 *   gpu_put_nbi_8B_Mps, host_put_nbi_8B_Mps   8-byte put_nbi from PE 0's GPU heap, from host
 *                                         memory, to PE 1's GPU heap, millions per second
 *   gpu_fetch_add_us                      fetch-add on a word of PE 1's GPU heap
 *   gpu_broadcast_1MiB_us, gpu_sum_reduce_1MiB_us   team collectives on GPU buffers (float)
 *   gpu_heap_memory_per_byte              device memory a PE's heap of 768 MiB holds, per byte of
 *                                         heap (the device's free memory before and after; both
 *                                         PEs share the GPU, a double counts its own process)
 * The driver is libcuda.so.1, or the file SHMEM_TEST_CUDA_DRIVER names. */
#include <dlfcn.h>
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MAX_BYTES ((size_t)256 << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int reps_for(size_t len)
{
    return len <= 4096 ? 2000 : len <= ((size_t)16 << 20) ? 20 : 4;
}

enum transfer { PUT, GET };

/* Seconds per blocking transfer of len bytes between PE 0's local and PE pe's remote (best of 3
 * batches), on PE 0 while PE 1 only waits. pe 0 times a copy within PE 0 (host <-> GPU heap):
 * two PEs copying at once would share the host link. */
static double transfer_time(enum transfer how, void *remote, void *local, size_t len, int pe)
{
    double best = 1e30;
    int reps = reps_for(len);
    shmem_barrier_all();
    if (shmem_my_pe() == 0)
        for (int batch = 0; batch < 3; batch++) {
            double t0 = now_s();
            for (int i = 0; i < reps; i++) {
                if (how == PUT) {
                    shmem_putmem(remote, local, len, pe);
                    shmem_quiet();
                } else {
                    shmem_getmem(local, remote, len, pe);
                }
            }
            double t = (now_s() - t0) / reps;
            best = t < best ? t : best;
        }
    shmem_barrier_all();
    return best;
}

static void *cuda_driver(void)
{
    const char *path = getenv("SHMEM_TEST_CUDA_DRIVER");
    return dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW);
}

/* As a CUDA program does before shmem_init (cudaSetDevice(0)): device 0's primary context
 * current on this thread, which the library then uses too. */
static void cuda_choose_device(void)
{
    void *lib = cuda_driver(), *context;
    int (*init)(unsigned) = lib ? dlsym(lib, "cuInit") : NULL;
    int (*retain)(void **, int) = lib ? dlsym(lib, "cuDevicePrimaryCtxRetain") : NULL;
    int (*set)(void *) = lib ? dlsym(lib, "cuCtxSetCurrent") : NULL;
    if (init && retain && set && !init(0) && !retain(&context, 0))
        set(context);
}

/* The device's free memory (cuMemGetInfo), or 0. */
static size_t cuda_free_memory(void)
{
    void *lib = cuda_driver();
    int (*info)(size_t *, size_t *) = lib ? dlsym(lib, "cuMemGetInfo_v2") : NULL;
    size_t free = 0, total;
    return info && !info(&free, &total) ? free : 0;
}

/* A buffer of the program's own on its device, or NULL. */
static void *cuda_malloc(size_t size)
{
    void *lib = cuda_driver();
    int (*alloc)(unsigned long long *, size_t) = lib ? dlsym(lib, "cuMemAlloc_v2") : NULL;
    unsigned long long ptr;
    return alloc && !alloc(&ptr, size) ? (void *)(uintptr_t)ptr : NULL;
}

static void print_bandwidths(const char *name, double (*time_of)(size_t, void *), void *arg)
{
    static const size_t sizes[] = {(size_t)1 << 20, (size_t)16 << 20, (size_t)256 << 20};
    static const char *const names[] = {"1MiB", "16MiB", "256MiB"};
    for (int i = 0; i < 3; i++) {
        double t = time_of(sizes[i], arg);
        if (shmem_my_pe() == 0)
            printf("%s_%s_GBps %.2f\n", name, names[i], (double)sizes[i] / t / 1e9);
    }
}

static char *gpu_a, *gpu_b, *host_heap, *private_buffer, *pageable_buffer;
static char host_word[8]; /* the program's own host memory */

/* Millions of 8-byte put_nbi per second from src into PE 1's GPU heap, completed by a quiet. */
static double nbi_rate(const char *src)
{
    int n = 20000;
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        shmem_putmem_nbi(gpu_b + 8 * (i % 1024), src, 8, 1);
    shmem_quiet();
    return n / (now_s() - t0) / 1e6;
}

static double put_time(size_t len, void *arg)
{
    (void)arg;
    return transfer_time(PUT, gpu_b, gpu_a, len, 1);
}
static double get_time(size_t len, void *arg)
{
    (void)arg;
    return transfer_time(GET, gpu_b, gpu_a, len, 1);
}
static double host_to_gpu(size_t len, void *arg)
{
    (void)arg;
    return transfer_time(PUT, gpu_a, host_heap, len, 0);
}
static double gpu_to_host(size_t len, void *arg)
{
    (void)arg;
    return transfer_time(PUT, host_heap, gpu_a, len, 0);
}

int main(void)
{
    cuda_choose_device();
    shmem_init();
    int me = shmem_my_pe();
    shmem_space_config_t config = {SHMEM_DEVICE_CUDA, 3 * MAX_BYTES, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t gpu;
    shmem_team_t team;
    size_t free_before = cuda_free_memory();
    shmem_barrier_all();
    if (shmem_n_pes() != 2 || shmem_space_create(&config, &gpu, &team)) {
        if (me == 0)
            fprintf(stderr, "gpu_bench: needs 2 PEs with a CUDA device each\n");
        shmem_finalize();
        return 1;
    }
    shmem_barrier_all();
    const char *driver = getenv("SHMEM_TEST_CUDA_DRIVER");
    double sharers = driver && *driver ? 1 : shmem_n_pes();
    if (me == 0)
        printf("gpu_heap_memory_per_byte %.3f\n",
               (double)(free_before - cuda_free_memory()) / sharers / (double)config.size);
    gpu_a = shmem_space_calloc(gpu, MAX_BYTES, 1);
    gpu_b = shmem_space_calloc(gpu, MAX_BYTES, 1);
    host_heap = shmem_calloc(MAX_BYTES, 1);
    private_buffer = cuda_malloc((size_t)16 << 20);
    pageable_buffer = calloc(16 << 20, 1);
    if (!gpu_a || !gpu_b || !host_heap || !private_buffer || !pageable_buffer) {
        fprintf(stderr, "gpu_bench: PE %d cannot allocate its buffers\n", me);
        shmem_global_exit(1);
    }

    double put8 = transfer_time(PUT, gpu_b, gpu_a, 8, 1),
           get8 = transfer_time(GET, gpu_b, gpu_a, 8, 1);
    double host8 = transfer_time(PUT, gpu_b, host_word, 8, 1);
    if (me == 0)
        printf("gpu_put_8B_us %.3f\ngpu_get_8B_us %.3f\nhost_put_8B_us %.3f\n", put8 * 1e6,
               get8 * 1e6, host8 * 1e6);
    print_bandwidths("gpu_put", put_time, NULL);
    print_bandwidths("gpu_get", get_time, NULL);
    print_bandwidths("host_to_gpu", host_to_gpu, NULL);
    print_bandwidths("gpu_to_host", gpu_to_host, NULL);
    double private16 = transfer_time(PUT, gpu_b, private_buffer, (size_t)16 << 20, 1);
    double pageable16 = transfer_time(PUT, gpu_b, pageable_buffer, (size_t)16 << 20, 1);
    if (me == 0)
        printf("private_to_gpu_16MiB_GBps %.2f\nprivate_host_to_gpu_16MiB_GBps %.2f\n",
               (double)(16 << 20) / private16 / 1e9, (double)(16 << 20) / pageable16 / 1e9);

    shmem_barrier_all();
    if (me == 0) {
        printf("gpu_put_nbi_8B_Mps %.3f\n", nbi_rate(gpu_a));
        printf("host_put_nbi_8B_Mps %.3f\n", nbi_rate(host_word));
        double t0;
        long *word = (long *)gpu_b;
        double best = 1e30;
        for (int batch = 0; batch < 3; batch++) {
            t0 = now_s();
            for (int i = 0; i < 1000; i++)
                shmem_long_atomic_fetch_add(word, 1, 1);
            double t = (now_s() - t0) / 1000;
            best = t < best ? t : best;
        }
        printf("gpu_fetch_add_us %.3f\n", best * 1e6);
    }

    size_t floats = ((size_t)1 << 20) / sizeof(float);
    double broadcast = 1e30, reduce = 1e30;
    for (int batch = 0; batch < 3; batch++) {
        shmem_barrier_all();
        double t0 = now_s();
        for (int i = 0; i < 20; i++)
            shmem_float_broadcast(team, (float *)gpu_b, (float *)gpu_a, floats, 0);
        double t1 = now_s();
        for (int i = 0; i < 20; i++)
            shmem_float_sum_reduce(team, (float *)gpu_b, (float *)gpu_a, floats);
        double t2 = now_s();
        broadcast = (t1 - t0) / 20 < broadcast ? (t1 - t0) / 20 : broadcast;
        reduce = (t2 - t1) / 20 < reduce ? (t2 - t1) / 20 : reduce;
    }
    if (me == 0)
        printf("gpu_broadcast_1MiB_us %.1f\ngpu_sum_reduce_1MiB_us %.1f\n", broadcast * 1e6,
               reduce * 1e6);
    shmem_barrier_all();
    shmem_free(host_heap);
    shmem_space_free(gpu, gpu_b);
    shmem_space_free(gpu, gpu_a);
    shmem_team_destroy(team);
    shmem_space_destroy(gpu);
    shmem_finalize();
    return 0;
}
