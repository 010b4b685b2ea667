/* SPDX-License-Identifier: BSD-3-Clause */
/* A test double of the CUDA driver: the subset of the driver API the CUDA kind uses, in the
 * driver's names, types and error codes, over the GPU doubles' core (tests/gpu/gpu_double.h). The
 * library loads it instead of libcuda.so.1 when SHMEM_TEST_CUDA_DRIVER names it. Like the driver,
 * every call on memory, streams or modules needs a current context.
 *
 * STRATA_CUDA_DOUBLE_DEVICES sets how many devices it reports (default 1). */
#include "../gpu/gpu_double.h"

#include <cuda.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static CUresult status(enum double_status s)
{
    static const CUresult codes[] = {
        [DOUBLE_OK] = CUDA_SUCCESS,
        [DOUBLE_INVALID_VALUE] = CUDA_ERROR_INVALID_VALUE,
        [DOUBLE_OUT_OF_MEMORY] = CUDA_ERROR_OUT_OF_MEMORY,
        [DOUBLE_INVALID_HANDLE] = CUDA_ERROR_INVALID_HANDLE,
        [DOUBLE_ALREADY_REGISTERED] = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
        [DOUBLE_NOT_REGISTERED] = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
        [DOUBLE_NOT_FOUND] = CUDA_ERROR_NOT_FOUND,
        [DOUBLE_PEER_UNSUPPORTED] = CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
        [DOUBLE_CAPTURE_UNSUPPORTED] = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
        [DOUBLE_CAPTURE_INVALIDATED] = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
    };
    return codes[s];
}

/* A context: a device's primary one, or one the program created (cuCtxCreate). Each thread has a
 * current context, and a stack of them (cuCtxPushCurrent) under it. */
struct double_context {
    int device;
    int usable; /* a primary context retained and not reset since; a created one not destroyed */
};
#define DOUBLE_MAX_DEVICES 16
#define DOUBLE_STACK 8
static struct double_context primary_contexts[DOUBLE_MAX_DEVICES];
static __thread struct double_context *current;
static __thread struct double_context *stack[DOUBLE_STACK];
static __thread int stacked;

/* Makes c the calling thread's current context, its device the one whose work it issues. */
static void become(struct double_context *c)
{
    current = c;
    double_use_device(c ? c->device : -1);
}

/* A context that calls may use. */
static int usable(const struct double_context *c)
{
    return c && __atomic_load_n(&c->usable, __ATOMIC_ACQUIRE);
}

static int current_device(void)
{
    return current->device;
}

static int device_valid(int device)
{
    return device >= 0 && device < double_device_count("STRATA_CUDA_DOUBLE_DEVICES") &&
           device < DOUBLE_MAX_DEVICES;
}

EXPORT CUresult cuInit(unsigned int flags)
{
    return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
    *count = double_device_count("STRATA_CUDA_DOUBLE_DEVICES");
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    if (!device_valid(ordinal))
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetPCIBusId(char *busid, int len, CUdevice device)
{
    snprintf(busid, (size_t)len, "0000:%02x:00.0", 0xc0 + (int)device);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetByPCIBusId(CUdevice *device, const char *busid)
{
    unsigned bus = 0;
    if (sscanf(busid, "0000:%x:00.0", &bus) != 1 || !device_valid((int)bus - 0xc0))
        return CUDA_ERROR_INVALID_VALUE;
    *device = (CUdevice)bus - 0xc0;
    return CUDA_SUCCESS;
}

/* A device is not its own peer, as the driver says. */
EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice device, CUdevice peer)
{
    if (!device_valid(device) || !device_valid(peer))
        return CUDA_ERROR_INVALID_DEVICE;
    *can = device != peer && double_peer_access(device, peer);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute attribute, CUdevice from,
                                        CUdevice to)
{
    if (!device_valid(from) || !device_valid(to) || from == to)
        return CUDA_ERROR_INVALID_DEVICE;
    *value = attribute == CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED ? double_peer_access(from, to)
             : attribute == CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED
                 ? double_peer_atomics(from, to)
                 : 0;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device)
{
    (void)device;
    *bytes = DOUBLE_MEMORY;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device)
{
    if (!device_valid(device))
        return CUDA_ERROR_INVALID_DEVICE;
    primary_contexts[device].device = device;
    __atomic_store_n(&primary_contexts[device].usable, 1, __ATOMIC_RELEASE);
    *context = (CUcontext)&primary_contexts[device];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice device, unsigned int *flags, int *active)
{
    if (!device_valid(device))
        return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = usable(&primary_contexts[device]);
    return CUDA_SUCCESS;
}

/* What cudaDeviceReset does: the primary context's memory, streams and host registrations go,
 * and it is inactive until retained again. */
EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice device)
{
    if (!device_valid(device))
        return CUDA_ERROR_INVALID_DEVICE;
    __atomic_store_n(&primary_contexts[device].usable, 0, __ATOMIC_RELEASE);
    double_reset(device, &primary_contexts[device]);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetApiVersion(CUcontext context, unsigned int *version)
{
    if (!usable((struct double_context *)context))
        return CUDA_ERROR_INVALID_CONTEXT;
    *version = 12000;
    return CUDA_SUCCESS;
}

/* The classic form, which the program's test calls by this name: a new context of the device,
 * pushed on the thread's stack and current. */
EXPORT CUresult cuCtxCreate_v2(CUcontext *context, unsigned int flags, CUdevice device)
{
    struct double_context *made = device_valid(device) ? malloc(sizeof(*made)) : NULL;
    (void)flags;
    if (!made)
        return device_valid(device) ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_DEVICE;
    made->device = device;
    made->usable = 1;
    if (current && stacked < DOUBLE_STACK)
        stack[stacked++] = current;
    become(made);
    *context = (CUcontext)made;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxDestroy(CUcontext context)
{
    struct double_context *c = (struct double_context *)context;
    if (!c || (c >= primary_contexts && c < primary_contexts + DOUBLE_MAX_DEVICES))
        return CUDA_ERROR_INVALID_CONTEXT;
    if (current == c)
        become(stacked ? stack[--stacked] : NULL);
    __atomic_store_n(&c->usable, 0, __ATOMIC_RELEASE); /* kept: a stale handle stays recognisable */
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext context)
{
    become((struct double_context *)context);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *context)
{
    *context = (CUcontext)current;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPushCurrent(CUcontext context)
{
    if (!context || stacked == DOUBLE_STACK)
        return CUDA_ERROR_INVALID_VALUE;
    if (current)
        stack[stacked++] = current;
    become((struct double_context *)context);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxPopCurrent(CUcontext *context)
{
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (context)
        *context = (CUcontext)current;
    become(stacked ? stack[--stacked] : NULL);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    if (!current)
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = current->device;
    return CUDA_SUCCESS;
}

/* Every call below needs a current context, as the driver's do. */
#define NEED_CONTEXT()                                                                             \
    do {                                                                                           \
        if (!usable(current))                                                                      \
            return CUDA_ERROR_INVALID_CONTEXT;                                                     \
    } while (0)

/* A stream is used in the context it was made in (NULL: the legacy default stream). */
#define NEED_STREAM(stream)                                                                        \
    do {                                                                                           \
        NEED_CONTEXT();                                                                            \
        if ((stream) && (double_stream_owner((struct double_stream *)(stream)) != current ||       \
                         !double_stream_alive((struct double_stream *)(stream))))                  \
            return CUDA_ERROR_INVALID_HANDLE;                                                      \
    } while (0)

/* What a capture in global mode refuses of a thread that did not relax its mode. */
#define NEED_NO_CAPTURE()                                                                          \
    do {                                                                                           \
        if (double_capture_forbids())                                                              \
            return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;                                          \
    } while (0)

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    NEED_CONTEXT();
    NEED_NO_CAPTURE();
    uintptr_t p = 0;
    CUresult rc = status(double_alloc(&p, size, current_device()));
    *dptr = p;
    return rc;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    NEED_CONTEXT();
    return status(double_free(dptr));
}

EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr dptr)
{
    NEED_CONTEXT();
    return status(double_ipc_get(dptr, handle->reserved));
}

EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle handle, unsigned int flags)
{
    (void)flags;
    NEED_CONTEXT();
    uintptr_t p = 0;
    CUresult rc = status(double_ipc_open(handle.reserved, current_device(), &p));
    *dptr = p;
    return rc;
}

EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    NEED_CONTEXT();
    return status(double_ipc_close(dptr));
}

EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    if (attribute == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
        int device = double_device_of(ptr);
        if (device < 0)
            return CUDA_ERROR_INVALID_VALUE;
        if (!double_vmm_mapped(ptr)) /* the driver answers success and writes nothing there */
            *(int *)data = device;
        return CUDA_SUCCESS;
    }
    if (attribute == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR ||
        attribute == CU_POINTER_ATTRIBUTE_RANGE_SIZE) {
        uintptr_t start;
        size_t size;
        if (double_range_of(ptr, &start, &size) != DOUBLE_OK)
            return CUDA_ERROR_INVALID_VALUE;
        if (attribute == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR)
            *(CUdeviceptr *)data = start;
        else
            *(size_t *)data = size;
        return CUDA_SUCCESS;
    }
    if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
        return CUDA_ERROR_NOT_SUPPORTED;
    switch (double_memory_of(ptr)) {
    case DOUBLE_DEVICE:
        *(unsigned *)data = CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
    case DOUBLE_PINNED:
        *(unsigned *)data = CU_MEMORYTYPE_HOST;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE; /* what the driver answers for pageable memory */
    }
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
    (void)flags;
    NEED_CONTEXT();
    NEED_NO_CAPTURE();
    return status(double_host_register(p, size));
}

EXPORT CUresult cuMemHostUnregister(void *p)
{
    NEED_CONTEXT();
    return status(double_host_unregister(p));
}

/* Not the driver's: how many bytes are registered (cuMemHostRegister), for tests. */
EXPORT size_t cuda_double_registered_bytes(void)
{
    return double_registered_bytes();
}

/* Not the driver's: how many streams were created (cuStreamCreate), for tests. */
EXPORT int cuda_double_streams_created(void)
{
    return double_streams_created();
}

/* Not the driver's: how many batch scatter kernels were launched, for tests. */
EXPORT int cuda_double_scatters(void)
{
    return double_scatters_launched();
}

/* Not the driver's: how many of them were below the greatest priority, for tests. */
EXPORT int cuda_double_streams_below_greatest(void)
{
    return double_streams_below_greatest();
}

EXPORT CUresult cuMemGetInfo(size_t *free, size_t *total)
{
    NEED_CONTEXT();
    *total = DOUBLE_MEMORY;
    *free = DOUBLE_MEMORY - double_held_bytes();
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t size, unsigned int flags)
{
    (void)flags;
    NEED_CONTEXT();
    NEED_NO_CAPTURE();
    return status(double_host_alloc(p, size));
}

/* Priorities from 0 (least) to -5 (greatest), as on the GPUs measured. */
#define DOUBLE_PRIORITY_GREATEST (-5)

EXPORT CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest)
{
    NEED_CONTEXT();
    *least = 0;
    *greatest = DOUBLE_PRIORITY_GREATEST;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamCreateWithPriority(CUstream *stream, unsigned int flags, int priority)
{
    NEED_CONTEXT();
    if (priority > 0 || priority < DOUBLE_PRIORITY_GREATEST)
        return CUDA_ERROR_INVALID_VALUE;
    *stream = (CUstream)double_stream_create(!(flags & CU_STREAM_NON_BLOCKING), current,
                                             priority == DOUBLE_PRIORITY_GREATEST);
    return *stream ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
    return cuStreamCreateWithPriority(stream, flags, 0);
}

EXPORT CUresult cuStreamQuery(CUstream stream)
{
    NEED_STREAM(stream);
    return CUDA_SUCCESS; /* the double's work runs when synchronized: nothing is under way */
}

EXPORT CUresult cuStreamSynchronize(CUstream stream)
{
    NEED_STREAM(stream);
    if (!stream)
        NEED_NO_CAPTURE();
    return status(double_stream_sync((struct double_stream *)stream));
}

EXPORT CUresult cuStreamDestroy_v2(CUstream stream)
{
    NEED_STREAM(stream);
    if (!stream)
        return CUDA_ERROR_INVALID_HANDLE;
    double_stream_destroy((struct double_stream *)stream);
    return CUDA_SUCCESS;
}

/* A destroyed stream's handle is refused, as the driver refuses most stale handles. */
EXPORT CUresult cuStreamGetCtx(CUstream stream, CUcontext *context)
{
    if (!stream) {
        NEED_CONTEXT();
        *context = (CUcontext)current;
        return CUDA_SUCCESS;
    }
    const struct double_stream *s = (const struct double_stream *)stream;
    if (!double_stream_alive(s))
        return CUDA_ERROR_INVALID_HANDLE;
    *context = (CUcontext)double_stream_owner(s);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count, CUstream stream)
{
    NEED_STREAM(stream);
    return status(double_set32(dst, value, count, (struct double_stream *)stream));
}

/* ---- Stream memory operations ---- */
#define WAIT_FLAGS                                                                                 \
    3u /* CU_STREAM_WAIT_VALUE_GEQ, _EQ, _AND, _NOR; the flush bit is no matter here */
_Static_assert((int)CU_STREAM_WAIT_VALUE_GEQ == (int)DOUBLE_WAIT_GEQ &&
                   (int)CU_STREAM_WAIT_VALUE_EQ == (int)DOUBLE_WAIT_EQ &&
                   (int)CU_STREAM_WAIT_VALUE_AND == (int)DOUBLE_WAIT_AND &&
                   (int)CU_STREAM_WAIT_VALUE_NOR == (int)DOUBLE_WAIT_NOR,
               "the double numbers waits as the driver does");

EXPORT CUresult cuStreamWriteValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                        unsigned int flags)
{
    NEED_STREAM(stream);
    (void)flags;
    return status(double_write_value(addr, value, 32, (struct double_stream *)stream));
}

EXPORT CUresult cuStreamWriteValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                        unsigned int flags)
{
    NEED_STREAM(stream);
    (void)flags;
    return status(double_write_value(addr, value, 64, (struct double_stream *)stream));
}

EXPORT CUresult cuStreamWaitValue32_v2(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                                       unsigned int flags)
{
    NEED_STREAM(stream);
    return status(double_wait_value(addr, value, 32, (enum double_wait)(flags & WAIT_FLAGS),
                                    (struct double_stream *)stream));
}

EXPORT CUresult cuStreamWaitValue64_v2(CUstream stream, CUdeviceptr addr, cuuint64_t value,
                                       unsigned int flags)
{
    NEED_STREAM(stream);
    return status(double_wait_value(addr, value, 64, (enum double_wait)(flags & WAIT_FLAGS),
                                    (struct double_stream *)stream));
}

/* ---- Capture and graphs: a graph executable is a copy of the graph ---- */
EXPORT CUresult cuStreamBeginCapture_v2(CUstream stream, CUstreamCaptureMode mode)
{
    NEED_STREAM(stream);
    return status(double_capture_begin((struct double_stream *)stream,
                                       mode == CU_STREAM_CAPTURE_MODE_GLOBAL));
}

EXPORT CUresult cuStreamEndCapture(CUstream stream, CUgraph *graph)
{
    NEED_STREAM(stream);
    return status(
        double_capture_end((struct double_stream *)stream, (struct double_graph **)graph));
}

EXPORT CUresult cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus *capture)
{
    NEED_STREAM(stream);
    *capture = double_capturing((struct double_stream *)stream) ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                                                : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    int was = double_capture_relax(*mode == CU_STREAM_CAPTURE_MODE_RELAXED);
    *mode = was ? CU_STREAM_CAPTURE_MODE_RELAXED : CU_STREAM_CAPTURE_MODE_GLOBAL;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph graph,
                                            unsigned long long flags)
{
    (void)flags;
    if (!graph)
        return CUDA_ERROR_INVALID_VALUE;
    *exec = (CUgraphExec)double_graph_copy((const struct double_graph *)graph);
    return *exec ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream)
{
    NEED_STREAM(stream);
    return status(
        double_graph_launch((const struct double_graph *)exec, (struct double_stream *)stream));
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    double_graph_destroy((struct double_graph *)exec);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphDestroy(CUgraph graph)
{
    double_graph_destroy((struct double_graph *)graph);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t len)
{
    NEED_CONTEXT();
    NEED_NO_CAPTURE();
    return status(double_copy(dst, src, len, NULL));
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t len, CUstream stream)
{
    NEED_STREAM(stream);
    return status(double_copy(dst, src, len, (struct double_stream *)stream));
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char byte, size_t len, CUstream stream)
{
    NEED_STREAM(stream);
    return status(double_set(dst, byte, len, (struct double_stream *)stream));
}

/* ---- Modules: the library's kernels, by name ---- */
static int module;

/* Where STRATA_CUDA_DOUBLE_PTXAS names the toolkit's ptxas, the image is assembled for sm_90, as
 * the driver's JIT compiles it, and refused where that fails (its messages on stderr). */
static int ptx_assembles(const char *image)
{
    const char *ptxas = getenv("STRATA_CUDA_DOUBLE_PTXAS"), *tmp = getenv("TMPDIR");
    char path[4096], command[8300];
    if (!ptxas || !*ptxas)
        return 1;
    snprintf(path, sizeof(path), "%s/cuda-double-ptx.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    size_t len = strlen(image);
    int written = fd >= 0 && write(fd, image, len) == (ssize_t)len;
    if (fd >= 0)
        close(fd);
    snprintf(command, sizeof(command), "'%s' --gpu-name sm_90 -o /dev/null '%s'", ptxas, path);
    int assembles = written && system(command) == 0;
    if (fd >= 0)
        unlink(path);
    return assembles;
}

EXPORT CUresult cuModuleLoadData(CUmodule *out, const void *image)
{
    NEED_CONTEXT();
    if (!double_module_valid(image) || !ptx_assembles(image))
        return CUDA_ERROR_INVALID_PTX;
    *out = (CUmodule)&module;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *out, CUmodule mod, const char *name)
{
    if (mod != (CUmodule)&module)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = (CUfunction)double_kernel_named(name);
    return *out ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz,
                               unsigned int shared, CUstream stream, void **params, void **extra)
{
    NEED_STREAM(stream);
    if (gy * gz * by * bz != 1 || shared || extra || !params || bx > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    return status(double_launch((const struct double_kernel *)f, gx * bx,
                                (struct double_stream *)stream, params));
}

/* ---- Virtual memory management: an allocation handle is its memory file's descriptor + 1 ---- */
#define DOUBLE_GRANULARITY ((size_t)2 << 20)

static int handle_fd(CUmemGenericAllocationHandle handle)
{
    return (int)handle - 1;
}

/* Whether the knob is unset or other than 0. */
static int knob_on(const char *name)
{
    const char *value = getenv(name);
    return !value || strcmp(value, "0");
}

/* VMM supported unless STRATA_CUDA_DOUBLE_VMM=0, so the suite also runs the heaps of cuMemAlloc;
 * GPUDirect RDMA with VMM unless STRATA_CUDA_DOUBLE_RDMA=0. */
EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    if (!device_valid(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    *pi = 0;
    if (attrib == CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED ||
        attrib == CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED)
        *pi = knob_on("STRATA_CUDA_DOUBLE_VMM");
    if (attrib == CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED)
        *pi = knob_on("STRATA_CUDA_DOUBLE_RDMA");
    return CUDA_SUCCESS;
}

static int created_without_rdma; /* physical allocations a network adapter could not register */

/* Not the driver's: how many physical allocations were made without the GPUDirect RDMA flag on
 * a device that takes it, for tests. */
EXPORT int cuda_double_created_without_rdma(void)
{
    return __atomic_load_n(&created_without_rdma, __ATOMIC_RELAXED);
}

EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop,
                                              CUmemAllocationGranularity_flags option)
{
    (void)prop;
    (void)option;
    *granularity = DOUBLE_GRANULARITY;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
                            const CUmemAllocationProp *prop, unsigned long long flags)
{
    NEED_CONTEXT();
    if (flags || size % DOUBLE_GRANULARITY || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        !device_valid(prop->location.id) ||
        (prop->allocFlags.gpuDirectRDMACapable && !knob_on("STRATA_CUDA_DOUBLE_RDMA")))
        return CUDA_ERROR_INVALID_VALUE;
    if (!prop->allocFlags.gpuDirectRDMACapable && knob_on("STRATA_CUDA_DOUBLE_RDMA"))
        __atomic_add_fetch(&created_without_rdma, 1, __ATOMIC_RELAXED);
    int fd = double_vmm_create(size, prop->location.id);
    if (fd < 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *handle = (CUmemGenericAllocationHandle)fd + 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
    return double_vmm_release(handle_fd(handle)) ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* STRATA_CUDA_DOUBLE_RESERVE_MAX (bytes) refuses larger reservations, as a driver short of
 * addresses would. */
EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
                                    CUdeviceptr addr, unsigned long long flags)
{
    const char *max = getenv("STRATA_CUDA_DOUBLE_RESERVE_MAX");
    if (flags || size % DOUBLE_GRANULARITY || (alignment & (alignment - 1)))
        return CUDA_ERROR_INVALID_VALUE;
    if (max && size > strtoull(max, NULL, 0))
        return CUDA_ERROR_OUT_OF_MEMORY;
    uintptr_t at = 0;
    CUresult rc = status(double_vmm_reserve(&at, size, addr, alignment));
    *ptr = at;
    return rc;
}

EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
    double_vmm_free_range(ptr, size);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                         CUmemGenericAllocationHandle handle, unsigned long long flags)
{
    if (offset || flags)
        return CUDA_ERROR_INVALID_VALUE;
    return status(double_vmm_map(ptr, size, handle_fd(handle)));
}

EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
    (void)size;
    return status(double_vmm_unmap(ptr));
}

/* A device is given access to another's memory only with peer access. */
EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc,
                               size_t count)
{
    (void)size;
    if (!count || !double_vmm_mapped(ptr))
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++)
        if (!double_peer_access(desc[i].location.id, double_device_of(ptr)))
            return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemExportToShareableHandle(void *shareable, CUmemGenericAllocationHandle handle,
                                             CUmemAllocationHandleType type,
                                             unsigned long long flags)
{
    int fd = type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR && !flags
                 ? fcntl(handle_fd(handle), F_DUPFD_CLOEXEC, 0)
                 : -1;
    if (fd < 0)
        return CUDA_ERROR_INVALID_VALUE;
    *(int *)shareable = fd;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
                                               void *os_handle, CUmemAllocationHandleType type)
{
    int fd = type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR &&
                     double_vmm_device((int)(uintptr_t)os_handle) >= 0
                 ? fcntl((int)(uintptr_t)os_handle, F_DUPFD_CLOEXEC, 0)
                 : -1;
    if (fd < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    *handle = (CUmemGenericAllocationHandle)fd + 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
                                                       CUmemGenericAllocationHandle handle)
{
    int device = double_vmm_device(handle_fd(handle));
    if (device < 0)
        return CUDA_ERROR_INVALID_VALUE;
    memset(prop, 0, sizeof(*prop));
    prop->type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop->location.id = device;
    prop->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return CUDA_SUCCESS;
}
