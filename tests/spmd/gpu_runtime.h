/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU runtime of a test's job, as the testing knobs choose it: the HIP runtime where
 * SHMEM_TEST_HIP_RUNTIME or STRATA_TEST_HIP_SONAME names one (its test double), else the CUDA
 * driver (SHMEM_TEST_CUDA_DRIVER's double, or libcuda.so.1). Tests build without either runtime's
 * headers: the few calls made here are declared by their ABI. */
#ifndef STRATA_TEST_GPU_RUNTIME_H
#define STRATA_TEST_GPU_RUNTIME_H

#include <dlfcn.h>
#include <shmem.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The HIP runtime's file where the test runs on HIP: the path SHMEM_TEST_HIP_RUNTIME names, or
 * the soname STRATA_TEST_HIP_SONAME names (the suite's double installed under it, where the
 * loader finds it); NULL otherwise. */
static inline const char *gpu_runtime_hip_file(void)
{
    const char *path = getenv("SHMEM_TEST_HIP_RUNTIME"), *soname = getenv("STRATA_TEST_HIP_SONAME");
    return path && *path ? path : soname && *soname ? soname : NULL;
}

static inline int gpu_runtime_is_hip(void)
{
    return gpu_runtime_hip_file() != NULL;
}

/* The device type of the runtime's spaces. */
static inline shmem_device_type_t gpu_runtime_type(void)
{
    return gpu_runtime_is_hip() ? SHMEM_DEVICE_HIP : SHMEM_DEVICE_CUDA;
}

static inline void *gpu_runtime_open(int flags)
{
    const char *path =
        gpu_runtime_is_hip() ? gpu_runtime_hip_file() : getenv("SHMEM_TEST_CUDA_DRIVER");
    return path && *path ? dlopen(path, flags) : dlopen("libcuda.so.1", flags);
}

/* Whether the PEs' GPUs are a double's devices, one a PE (SHMEM_DEVICE_MAP), without peer access
 * between them (STRATA_GPU_DOUBLE_PEERS=0): node peers then reach each other's heaps through the
 * transport, not by attaching them. */
static inline int gpu_runtime_devices_apart(void)
{
    const char *peers = getenv("STRATA_GPU_DOUBLE_PEERS"), *map = getenv("SHMEM_DEVICE_MAP");
    return peers && !strcmp(peers, "0") && map && strchr(map, ',') && !strchr(map, '-');
}

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_retain_fn)(void **context, int device);
typedef int (*cu_set_fn)(void *context);
typedef int (*cu_get_fn)(void **context);
typedef int (*cu_create_fn)(void **context, unsigned flags, int device);
typedef int (*cu_attribute_fn)(void *data, int attribute, unsigned long long ptr);
typedef int (*hip_device_fn)(int device);
typedef int (*hip_get_device_fn)(int *device);
typedef int (*cu_alloc_fn)(unsigned long long *ptr, size_t size);
typedef int (*cu_free_fn)(unsigned long long ptr);
typedef int (*cu_memset_fn)(unsigned long long dst, unsigned char byte, size_t len, void *stream);
typedef int (*cu_copy_fn)(unsigned long long dst, unsigned long long src, size_t len);
typedef int (*gpu_sync_fn)(void *stream);
typedef int (*hip_malloc_fn)(void **ptr, size_t size);
typedef int (*hip_free_fn)(void *ptr);
typedef int (*hip_memset_fn)(void *dst, int byte, size_t len, void *stream);
typedef int (*hip_copy_fn)(void *dst, const void *src, size_t len, int kind, void *stream);

/* The CUDA driver with a context current on this thread: the program's own where it made one
 * current, else device 0's primary context (where the library's spaces are on one GPU), or
 * NULL. */
static inline void *gpu_runtime_cuda_current(void)
{
    void *lib = gpu_runtime_open(RTLD_NOW), *context = NULL;
    cu_init_fn init = lib ? (cu_init_fn)dlsym(lib, "cuInit") : NULL;
    cu_retain_fn retain = lib ? (cu_retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain") : NULL;
    cu_set_fn set = lib ? (cu_set_fn)dlsym(lib, "cuCtxSetCurrent") : NULL;
    cu_get_fn get = lib ? (cu_get_fn)dlsym(lib, "cuCtxGetCurrent") : NULL;
    if (!init || !retain || !set || !get || init(0) || get(&context))
        return NULL;
    if (!context && (retain(&context, 0) || set(context)))
        return NULL;
    return lib;
}

/* What the program has current on this thread: the CUDA context, or the HIP device + 1 (0: the
 * runtime does not answer). */
static inline uintptr_t gpu_runtime_current(void)
{
    void *lib = gpu_runtime_open(RTLD_NOW), *context = NULL;
    if (gpu_runtime_is_hip()) {
        hip_get_device_fn get = lib ? (hip_get_device_fn)dlsym(lib, "hipGetDevice") : NULL;
        int device;
        return get && !get(&device) ? (uintptr_t)device + 1 : 0;
    }
    cu_get_fn get = lib ? (cu_get_fn)dlsym(lib, "cuCtxGetCurrent") : NULL;
    return get && !get(&context) ? (uintptr_t)context : 0;
}

/* The program chooses device on this thread as a GPU program does before it allocates: with a
 * context of its own (own: cuCtxCreate), or the runtime's choice of device (cudaSetDevice, which
 * makes the device's primary context current; hipSetDevice). Returns what is then current, as
 * gpu_runtime_current says it, or 0. */
static inline uintptr_t gpu_runtime_choose(int device, int own)
{
    void *lib = gpu_runtime_open(RTLD_NOW), *context;
    if (gpu_runtime_is_hip()) {
        hip_device_fn set = lib ? (hip_device_fn)dlsym(lib, "hipSetDevice") : NULL;
        return set && !set(device) ? gpu_runtime_current() : 0;
    }
    cu_init_fn init = lib ? (cu_init_fn)dlsym(lib, "cuInit") : NULL;
    cu_create_fn create = lib ? (cu_create_fn)dlsym(lib, "cuCtxCreate_v2") : NULL;
    cu_retain_fn retain = lib ? (cu_retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain") : NULL;
    cu_set_fn set = lib ? (cu_set_fn)dlsym(lib, "cuCtxSetCurrent") : NULL;
    if (!init || !create || !retain || !set || init(0))
        return 0;
    if (own ? create(&context, 0, device) : retain(&context, device) || set(context))
        return 0;
    return gpu_runtime_current();
}

/* The device whose memory ptr is, as the runtime says (-1: it does not say, as the CUDA driver
 * for memory of its virtual memory management), or the double's own record where it has one. */
static inline int gpu_runtime_device_of(const void *ptr)
{
    void *lib = gpu_runtime_open(RTLD_NOW);
    int device = -1;
    typedef int (*double_device_fn)(const void *ptr);
    double_device_fn recorded = lib ? (double_device_fn)dlsym(lib, "gpu_double_device_of") : NULL;
    if (recorded)
        return recorded(ptr);
    cu_attribute_fn attribute = lib ? (cu_attribute_fn)dlsym(lib, "cuPointerGetAttribute") : NULL;
    if (!gpu_runtime_is_hip() && attribute &&
        attribute(&device, 9 /* CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL */, (uintptr_t)ptr))
        return -1;
    return device;
}

typedef int (*gpu_mem_info_fn)(size_t *free, size_t *total);

/* The device memory free as the runtime reports it (cuMemGetInfo, hipMemGetInfo): the device's
 * on a GPU, what this process holds subtracted on a double. 0 when the runtime does not say.
 * Where no CUDA context is current, device 0's is current for the question only: one left
 * current would be the program's choice of device. */
static inline size_t gpu_runtime_memory_free(void)
{
    typedef int (*cu_pop_fn)(void **context);
    void *lib = gpu_runtime_open(RTLD_NOW), *context = NULL;
    gpu_mem_info_fn info =
        lib ? (gpu_mem_info_fn)dlsym(lib,
                                     gpu_runtime_is_hip() ? "hipMemGetInfo" : "cuMemGetInfo_v2")
            : NULL;
    cu_init_fn init = lib ? (cu_init_fn)dlsym(lib, "cuInit") : NULL;
    cu_get_fn get = lib ? (cu_get_fn)dlsym(lib, "cuCtxGetCurrent") : NULL;
    cu_retain_fn retain = lib ? (cu_retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain") : NULL;
    cu_set_fn push = lib ? (cu_set_fn)dlsym(lib, "cuCtxPushCurrent_v2") : NULL;
    cu_pop_fn pop = lib ? (cu_pop_fn)dlsym(lib, "cuCtxPopCurrent_v2") : NULL;
    int pushed = !gpu_runtime_is_hip() && init && get && retain && push && pop && !init(0) &&
                 !get(&context) && !context && !retain(&context, 0) && !push(context);
    size_t free = 0, total = 0;
    if (!info || info(&free, &total))
        free = 0;
    if (pushed)
        pop(&context);
    return free;
}

/* A buffer of the program's own on device 0 (cuMemAlloc, hipMalloc), or NULL. */
static inline void *gpu_runtime_malloc(size_t size)
{
    void *ptr = NULL;
    if (gpu_runtime_is_hip()) {
        void *lib = gpu_runtime_open(RTLD_NOW);
        hip_malloc_fn alloc = lib ? (hip_malloc_fn)dlsym(lib, "hipMalloc") : NULL;
        return alloc && !alloc(&ptr, size) ? ptr : NULL;
    }
    void *lib = gpu_runtime_cuda_current();
    cu_alloc_fn alloc = lib ? (cu_alloc_fn)dlsym(lib, "cuMemAlloc_v2") : NULL;
    unsigned long long address;
    if (!alloc || alloc(&address, size))
        return NULL;
    return (void *)(uintptr_t)address;
}

typedef int (*cu_ctx_device_fn)(int *device);

/* The runtime with the device that holds dev current on this thread, as a program works on its
 * own device's memory (a context of that device current is kept, else the device's primary one
 * is made current; HIP: the device is set), or NULL. */
static inline void *gpu_runtime_on(const void *dev)
{
    int device = gpu_runtime_device_of(dev), current = -1;
    if (gpu_runtime_is_hip()) {
        void *lib = gpu_runtime_open(RTLD_NOW);
        hip_get_device_fn get = lib ? (hip_get_device_fn)dlsym(lib, "hipGetDevice") : NULL;
        hip_device_fn set = lib ? (hip_device_fn)dlsym(lib, "hipSetDevice") : NULL;
        if (device >= 0 && get && set && (get(&current) || current != device))
            set(device);
        return lib;
    }
    void *lib = gpu_runtime_cuda_current(), *context;
    cu_ctx_device_fn of = lib ? (cu_ctx_device_fn)dlsym(lib, "cuCtxGetDevice") : NULL;
    cu_retain_fn retain = lib ? (cu_retain_fn)dlsym(lib, "cuDevicePrimaryCtxRetain") : NULL;
    cu_set_fn set = lib ? (cu_set_fn)dlsym(lib, "cuCtxSetCurrent") : NULL;
    if (lib && device >= 0 && of && retain && set && (of(&current) || current != device) &&
        !retain(&context, device))
        set(context);
    return lib;
}

/* Sets len bytes of device memory to byte with the runtime's own memset on its default stream
 * (the GPU writes them, not the library), and waits for it; 0 on success. */
static inline int gpu_runtime_fill(void *dev, int byte, size_t len)
{
    if (gpu_runtime_is_hip()) {
        void *lib = gpu_runtime_on(dev);
        hip_memset_fn set = lib ? (hip_memset_fn)dlsym(lib, "hipMemsetAsync") : NULL;
        gpu_sync_fn sync = lib ? (gpu_sync_fn)dlsym(lib, "hipStreamSynchronize") : NULL;
        return set && sync ? set(dev, byte, len, NULL) || sync(NULL) : -1;
    }
    void *lib = gpu_runtime_on(dev);
    cu_memset_fn set = lib ? (cu_memset_fn)dlsym(lib, "cuMemsetD8Async") : NULL;
    gpu_sync_fn sync = lib ? (gpu_sync_fn)dlsym(lib, "cuStreamSynchronize") : NULL;
    return set && sync ? set((uintptr_t)dev, (unsigned char)byte, len, NULL) || sync(NULL) : -1;
}

/* Copies len bytes of device memory into host memory with the runtime's own copy, complete on
 * return; 0 on success. */
static inline int gpu_runtime_read(void *host, const void *dev, size_t len)
{
    if (gpu_runtime_is_hip()) {
        void *lib = gpu_runtime_on(dev);
        hip_copy_fn copy = lib ? (hip_copy_fn)dlsym(lib, "hipMemcpyAsync") : NULL;
        gpu_sync_fn sync = lib ? (gpu_sync_fn)dlsym(lib, "hipStreamSynchronize") : NULL;
        return copy && sync ? copy(host, dev, len, 4 /* hipMemcpyDefault */, NULL) || sync(NULL)
                            : -1;
    }
    void *lib = gpu_runtime_on(dev);
    cu_copy_fn copy = lib ? (cu_copy_fn)dlsym(lib, "cuMemcpy") : NULL;
    return copy ? copy((uintptr_t)host, (uintptr_t)dev, len) : -1;
}

/* Frees a buffer of gpu_runtime_malloc; 0 on success. */
static inline int gpu_runtime_free(void *ptr)
{
    void *lib = gpu_runtime_open(RTLD_NOW);
    if (lib && gpu_runtime_is_hip()) {
        hip_free_fn release = (hip_free_fn)dlsym(lib, "hipFree");
        return release ? release(ptr) : -1;
    }
    cu_free_fn release = lib ? (cu_free_fn)dlsym(lib, "cuMemFree_v2") : NULL;
    return release ? release((unsigned long long)(uintptr_t)ptr) : -1;
}

typedef size_t (*gpu_registered_fn)(void);

/* The double's count of registered host bytes once the library loaded it, or NULL on a real
 * runtime. */
static inline gpu_registered_fn gpu_runtime_double_registered(void)
{
    void *lib = gpu_runtime_open(RTLD_NOW | RTLD_NOLOAD);
    return lib ? (gpu_registered_fn)dlsym(lib, gpu_runtime_is_hip()
                                                   ? "hip_double_registered_bytes"
                                                   : "cuda_double_registered_bytes")
               : NULL;
}

typedef int (*gpu_streams_fn)(void);

/* The double's count of streams created once the library loaded it, or NULL on a real runtime. */
static inline gpu_streams_fn gpu_runtime_double_streams(void)
{
    void *lib = gpu_runtime_open(RTLD_NOW | RTLD_NOLOAD);
    return lib ? (gpu_streams_fn)dlsym(lib, gpu_runtime_is_hip() ? "hip_double_streams_created"
                                                                 : "cuda_double_streams_created")
               : NULL;
}

/* Resets the device, as cudaDeviceReset (the primary context of device) or hipDeviceReset (the
 * current device) does: every allocation, stream and registration of the process on it goes.
 * Returns 0 on success. */
static inline int gpu_runtime_reset(int device)
{
    typedef int (*reset_fn)(int device);
    void *lib = gpu_runtime_open(RTLD_NOW);
    reset_fn reset = lib ? (reset_fn)dlsym(lib, gpu_runtime_is_hip() ? "hipDeviceReset"
                                                                     : "cuDevicePrimaryCtxReset_v2")
                         : NULL;
    return reset ? reset(device) : -1;
}

/* The program's own registration of host memory with the runtime (cuMemHostRegister,
 * hipHostRegister, no flags) and its end; the runtime's code. */
static inline int gpu_runtime_host_register(void *ptr, size_t len)
{
    typedef int (*register_fn)(void *ptr, size_t len, unsigned flags);
    void *lib = gpu_runtime_is_hip() ? gpu_runtime_open(RTLD_NOW) : gpu_runtime_cuda_current();
    register_fn reg = lib ? (register_fn)dlsym(lib, gpu_runtime_is_hip() ? "hipHostRegister"
                                                                         : "cuMemHostRegister_v2")
                          : NULL;
    return reg ? reg(ptr, len, 0) : -1;
}

static inline int gpu_runtime_host_unregister(void *ptr)
{
    typedef int (*unregister_fn)(void *ptr);
    void *lib = gpu_runtime_is_hip() ? gpu_runtime_open(RTLD_NOW) : gpu_runtime_cuda_current();
    unregister_fn unreg =
        lib ? (unregister_fn)dlsym(lib, gpu_runtime_is_hip() ? "hipHostUnregister"
                                                             : "cuMemHostUnregister")
            : NULL;
    return unreg ? unreg(ptr) : -1;
}

/* What both runtimes answer for memory registered already
 * (CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, hipErrorHostMemoryAlreadyRegistered). */
#define GPU_RUNTIME_ALREADY_REGISTERED 712

/* A count of the double's own (name: its function), or NULL on a real runtime or another
 * runtime's double. */
static inline gpu_streams_fn gpu_runtime_double_count(const char *name)
{
    void *lib = gpu_runtime_open(RTLD_NOW | RTLD_NOLOAD);
    return lib ? (gpu_streams_fn)dlsym(lib, name) : NULL;
}

/* The double's count of streams made below the device's greatest priority, or NULL on a real
 * runtime. */
static inline gpu_streams_fn gpu_runtime_double_streams_below_greatest(void)
{
    return gpu_runtime_double_count(gpu_runtime_is_hip() ? "hip_double_streams_below_greatest"
                                                         : "cuda_double_streams_below_greatest");
}

/* ---- A program's streams (the CUDA driver's or HIP's calls, by their ABI) ----
 * Each returns the runtime's code, 0 on success. CUDA's need the context of the stream's device
 * current on the calling thread (gpu_runtime_on). */
static inline void *gpu_stream_call(const char *cuda_name, const char *hip_name)
{
    void *lib = gpu_runtime_open(RTLD_NOW);
    return lib ? dlsym(lib, gpu_runtime_is_hip() ? hip_name : cuda_name) : NULL;
}

/* A stream the legacy default stream does not wait for (CU_STREAM_NON_BLOCKING,
 * hipStreamNonBlocking). */
static inline int gpu_stream_create(void **stream)
{
    typedef int (*fn)(void **stream, unsigned flags);
    fn create = (fn)gpu_stream_call("cuStreamCreate", "hipStreamCreateWithFlags");
    return create ? create(stream, 1) : -1;
}

static inline int gpu_stream_destroy(void *stream)
{
    typedef int (*fn)(void *stream);
    fn destroy = (fn)gpu_stream_call("cuStreamDestroy_v2", "hipStreamDestroy");
    return destroy ? destroy(stream) : -1;
}

static inline int gpu_stream_sync(void *stream)
{
    typedef int (*fn)(void *stream);
    fn sync = (fn)gpu_stream_call("cuStreamSynchronize", "hipStreamSynchronize");
    return sync ? sync(stream) : -1;
}

/* count 32-bit words at dst set to value, on stream: the program's kernel of these tests. */
static inline int gpu_stream_set32(void *dst, uint32_t value, size_t count, void *stream)
{
    typedef int (*fn)(uintptr_t dst, uint32_t value, size_t count, void *stream);
    fn set = (fn)gpu_stream_call("cuMemsetD32Async", "hipMemsetD32Async");
    return set ? set((uintptr_t)dst, value, count, stream) : -1;
}

static inline int gpu_stream_copy(void *dst, const void *src, size_t len, void *stream)
{
    if (gpu_runtime_is_hip()) {
        hip_copy_fn copy = (hip_copy_fn)gpu_stream_call("", "hipMemcpyAsync");
        return copy ? copy(dst, src, len, 4 /* hipMemcpyDefault */, stream) : -1;
    }
    typedef int (*fn)(uintptr_t dst, uintptr_t src, size_t len, void *stream);
    fn copy = (fn)gpu_stream_call("cuMemcpyAsync", "");
    return copy ? copy((uintptr_t)dst, (uintptr_t)src, len, stream) : -1;
}

/* Captures what the calls between begin and end issue on stream (global mode) into a graph,
 * which instantiate makes launchable. */
static inline int gpu_stream_capture_begin(void *stream)
{
    typedef int (*fn)(void *stream, int mode);
    fn begin = (fn)gpu_stream_call("cuStreamBeginCapture_v2", "hipStreamBeginCapture");
    return begin ? begin(stream, 0) : -1;
}

static inline int gpu_stream_capture_end(void *stream, void **graph)
{
    typedef int (*fn)(void *stream, void **graph);
    fn end = (fn)gpu_stream_call("cuStreamEndCapture", "hipStreamEndCapture");
    return end ? end(stream, graph) : -1;
}

static inline int gpu_graph_instantiate(void **exec, void *graph)
{
    if (gpu_runtime_is_hip()) {
        typedef int (*fn)(void **exec, void *graph, void *node, char *log, size_t size);
        fn instantiate = (fn)gpu_stream_call("", "hipGraphInstantiate");
        return instantiate ? instantiate(exec, graph, NULL, NULL, 0) : -1;
    }
    typedef int (*fn)(void **exec, void *graph, unsigned long long flags);
    fn instantiate = (fn)gpu_stream_call("cuGraphInstantiateWithFlags", "");
    return instantiate ? instantiate(exec, graph, 0) : -1;
}

static inline int gpu_graph_launch(void *exec, void *stream)
{
    typedef int (*fn)(void *exec, void *stream);
    fn launch = (fn)gpu_stream_call("cuGraphLaunch", "hipGraphLaunch");
    return launch ? launch(exec, stream) : -1;
}

#endif
