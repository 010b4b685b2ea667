/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU's own limits, measured beside the GPU benchmarks with plain driver copies (no
 * OpenSHMEM), so every Strata figure can be read against what the hardware allows:
 *   ipc_d2d_<size>_GBps   cuMemcpy from this process's device memory into another process's,
 *                         opened with a CUDA IPC handle (the floor of a put between GPU heaps)
 *   ipc_d2d_8B_us         the same for 8 bytes, one copy at a time
 *   pinned_h2d_<size>_GBps, pinned_d2h_<size>_GBps   pinned host memory <-> device memory
 * Prints "name value" lines. The driver is libcuda.so.1, or the file SHMEM_TEST_CUDA_DRIVER names
 * (its test double: figures then say nothing of a GPU). Built without cuda.h: the few entry points
 * are declared by their ABI. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef unsigned long long devptr;
typedef struct {
    char bytes[64];
} ipc_handle;

static struct {
    int (*init)(unsigned);
    int (*retain)(void **context, int device);
    int (*set)(void *context);
    int (*alloc)(devptr *ptr, size_t size);
    int (*host_alloc)(void **ptr, size_t size, unsigned flags);
    int (*copy)(devptr dst, devptr src, size_t len);
    int (*sync)(void *stream);
    int (*get_handle)(ipc_handle *handle, devptr ptr);
    int (*open_handle)(devptr *ptr, ipc_handle handle, unsigned flags);
} cu;

static int driver_load(void)
{
    const char *path = getenv("SHMEM_TEST_CUDA_DRIVER");
    void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW);
    void *context;
    if (!lib)
        return -1;
    *(void **)&cu.init = dlsym(lib, "cuInit");
    *(void **)&cu.retain = dlsym(lib, "cuDevicePrimaryCtxRetain");
    *(void **)&cu.set = dlsym(lib, "cuCtxSetCurrent");
    *(void **)&cu.alloc = dlsym(lib, "cuMemAlloc_v2");
    *(void **)&cu.host_alloc = dlsym(lib, "cuMemHostAlloc");
    *(void **)&cu.copy = dlsym(lib, "cuMemcpy");
    *(void **)&cu.sync = dlsym(lib, "cuStreamSynchronize");
    *(void **)&cu.get_handle = dlsym(lib, "cuIpcGetMemHandle");
    *(void **)&cu.open_handle = dlsym(lib, "cuIpcOpenMemHandle_v2");
    return cu.init && cu.retain && cu.set && cu.alloc && cu.host_alloc && cu.copy && cu.sync &&
                   cu.get_handle && cu.open_handle && !cu.init(0) && !cu.retain(&context, 0) &&
                   !cu.set(context)
               ? 0
               : -1;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds per copy of len bytes, the best of a few timed batches. A copy between two device
 * buffers returns before it is done: each copy waits for the default stream, where cuMemcpy runs.
 */
static double copy_time(devptr dst, devptr src, size_t len)
{
    int reps = len <= 4096 ? 2000 : len <= (16u << 20) ? 20 : 4;
    double best = 1e30;
    cu.copy(dst, src, len); /* first touch */
    cu.sync(NULL);
    for (int batch = 0; batch < 3; batch++) {
        double t0 = now_s();
        for (int i = 0; i < reps; i++) {
            cu.copy(dst, src, len);
            cu.sync(NULL);
        }
        double t = (now_s() - t0) / reps;
        best = t < best ? t : best;
    }
    return best;
}

static const size_t sizes[] = {1u << 20, 16u << 20, 256u << 20};
static const char *const size_names[] = {"1MiB", "16MiB", "256MiB"};
#define MAX_BYTES (256u << 20)

/* The child: copies from its own device memory into the parent's, opened by IPC handle. */
static int ipc_child(int from_parent)
{
    ipc_handle handle;
    devptr peer, mine;
    if (read(from_parent, &handle, sizeof(handle)) != (ssize_t)sizeof(handle) || driver_load() ||
        cu.open_handle(&peer, handle, 1) || cu.alloc(&mine, MAX_BYTES))
        return 1;
    printf("ipc_d2d_8B_us %.3f\n", copy_time(peer, mine, 8) * 1e6);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        printf("ipc_d2d_%s_GBps %.2f\n", size_names[i],
               (double)sizes[i] / copy_time(peer, mine, sizes[i]) / 1e9);
    fflush(stdout);
    return 0;
}

int main(void)
{
    int pipe_fds[2];
    if (pipe(pipe_fds))
        return 1;
    pid_t child = fork();
    if (child == 0)
        _exit(ipc_child(pipe_fds[0]));
    devptr device;
    void *host;
    ipc_handle handle;
    if (driver_load() || cu.alloc(&device, MAX_BYTES) || cu.host_alloc(&host, MAX_BYTES, 0) ||
        cu.get_handle(&handle, device)) {
        fprintf(stderr, "gpu_limits: no CUDA device\n");
        return 1;
    }
    memset(host, 1, MAX_BYTES);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        devptr h = (devptr)(uintptr_t)host;
        printf("pinned_h2d_%s_GBps %.2f\n", size_names[i],
               (double)sizes[i] / copy_time(device, h, sizes[i]) / 1e9);
        printf("pinned_d2h_%s_GBps %.2f\n", size_names[i],
               (double)sizes[i] / copy_time(h, device, sizes[i]) / 1e9);
    }
    fflush(stdout);
    /* The parent's memory stays alive while the child copies into it. */
    if (write(pipe_fds[1], &handle, sizeof(handle)) != (ssize_t)sizeof(handle))
        return 1;
    int status;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
