/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA kind: the GPU kind core (gpu.h) on the driver API (cuda_driver.h), on the context
 * the program has current for a device when the device is set up, else the device's primary
 * context, so the program's kernels and the library share it. Atomics and reductions are PTX
 * kernels (cuda_kernels.c), as is the scatter that applies a batch of small writes. */
#include "../../common/log.h"
#include "cuda_internal.h"

#include <stdio.h>
#include <string.h>

static struct cuda_device cuda_devices[GPU_DEVICES_MAX]; /* by the gpu_device's slot */

void cuda_check(CUresult rc, const char *what)
{
    if (rc != CUDA_SUCCESS)
        log_fatal("spaces", "CUDA %s failed (error %d)", what, (int)rc);
}

/* A context that cannot be made current is fatal, unless the program reset the device (or
 * destroyed its context) under the library: the calls that follow then fail, as teardown
 * expects them to. */
uintptr_t cuda_enter(struct gpu_device *dev)
{
    CUcontext current = NULL, context = cuda_of(dev)->context;
    cuda_check(cuda.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    CUresult rc = current == context ? CUDA_SUCCESS : cuda.cuCtxSetCurrent(context);
    if (rc != CUDA_SUCCESS && !gpu_device_lost(dev))
        cuda_check(rc, "cuCtxSetCurrent");
    return (uintptr_t)current;
}

void cuda_leave(struct gpu_device *dev, uintptr_t previous)
{
    if ((CUcontext)previous != cuda_of(dev)->context)
        cuda_check(cuda.cuCtxSetCurrent((CUcontext)previous), "cuCtxSetCurrent (the program's)");
}

/* The context the program made current on this thread for device (cuCtxCreate, or the runtime's
 * cudaSetDevice), which the library then shares as NVSHMEM does; NULL when there is none. */
static CUcontext cuda_program_context(CUdevice device)
{
    CUcontext current = NULL;
    CUdevice of;
    if (cuda.cuCtxGetCurrent(&current) != CUDA_SUCCESS || !current ||
        cuda.cuCtxGetDevice(&of) != CUDA_SUCCESS || of != device)
        return NULL;
    return current;
}

static int cuda_open(struct gpu_device *dev, const char *path, int ordinal, char *why,
                     size_t whylen)
{
    CUdevice device;
    int least = 0;
    if (cuda_driver_load(path, why, whylen))
        return -1;
    if (cuda.cuDeviceGet(&device, ordinal) != CUDA_SUCCESS) {
        snprintf(why, whylen, "CUDA device %d cannot be set up", ordinal);
        return -1;
    }
    struct cuda_device *c = &cuda_devices[dev->slot];
    *c = (struct cuda_device){.context = cuda_program_context(device), .device = device};
    c->context_primary = !c->context;
    if (!c->context && cuda.cuDevicePrimaryCtxRetain(&c->context, device) != CUDA_SUCCESS) {
        snprintf(why, whylen, "CUDA device %d has no primary context", ordinal);
        return -1;
    }
    dev->state = c;
    uintptr_t previous = cuda_enter(dev);
    if (cuda.cuCtxGetStreamPriorityRange(&least, &c->stream_priority) != CUDA_SUCCESS)
        c->stream_priority = 0;
    cuda_leave(dev, previous);
    cuda_vmm_setup(&c->vmm, device);
    return 0;
}

static int cuda_alloc(struct gpu_device *dev, void **ptr, size_t size, size_t align, void *wish)
{
    const struct cuda_vmm *vmm = &cuda_of(dev)->vmm;
    if (vmm->on)
        return cuda_vmm_alloc(vmm, ptr, size, align, wish);
    CUdeviceptr block;
    CUresult rc = cuda.cuMemAlloc(&block, size);
    *ptr = (void *)(uintptr_t)block;
    return rc;
}

static int cuda_free(void *ptr)
{
    CUresult rc = cuda_vmm_release(ptr);
    return rc == CUDA_ERROR_NOT_FOUND ? cuda.cuMemFree(cuda_address(ptr)) : rc;
}

static int cuda_copy_async(void *dst, const void *src, size_t len, void *stream)
{
    return cuda.cuMemcpyAsync(cuda_address(dst), cuda_address(src), len, stream);
}

static int cuda_fill_async(void *dst, int byte, size_t len, void *stream)
{
    return cuda.cuMemsetD8Async(cuda_address(dst), (unsigned char)byte, len, stream);
}

/* At the device's greatest priority: the library's copies and kernels go before the program's
 * work waiting for the same SMs. */
static int cuda_stream_create(struct gpu_device *dev, void **stream)
{
    return cuda.cuStreamCreateWithPriority((CUstream *)stream, CU_STREAM_NON_BLOCKING,
                                           cuda_of(dev)->stream_priority);
}

static int cuda_stream_sync(void *stream)
{
    return cuda.cuStreamSynchronize(stream);
}

/* The library's context is gone (the program destroyed it, or reset the device: cudaDeviceReset
 * resets the primary context), or it was made anew and stream, of the old one, no longer works. */
static int cuda_lost(struct gpu_device *dev, void *stream)
{
    const struct cuda_device *c = cuda_of(dev);
    unsigned flags, version;
    int active = 0;
    CUcontext previous = NULL;
    if (c->context_primary
            ? cuda.cuDevicePrimaryCtxGetState(c->device, &flags, &active) != CUDA_SUCCESS || !active
            : cuda.cuCtxGetApiVersion(c->context, &version) != CUDA_SUCCESS)
        return 1;
    if (cuda.cuCtxGetCurrent(&previous) != CUDA_SUCCESS ||
        cuda.cuCtxSetCurrent(c->context) != CUDA_SUCCESS)
        return 1;
    CUresult rc = cuda.cuStreamQuery(stream);
    cuda.cuCtxSetCurrent(previous);
    return rc != CUDA_SUCCESS && rc != CUDA_ERROR_NOT_READY;
}

_Static_assert(sizeof(CUipcMemHandle) == GPU_IPC_HANDLE, "a CUDA IPC handle is 64 bytes");

static int cuda_ipc_get(void *handle, void *block)
{
    CUresult rc = cuda_vmm_export(handle, block);
    return rc == CUDA_ERROR_NOT_FOUND ? cuda.cuIpcGetMemHandle(handle, cuda_address(block)) : rc;
}

static int cuda_ipc_open(struct gpu_device *dev, void **block, const void *handle)
{
    CUresult rc = cuda_vmm_attach(&cuda_of(dev)->vmm, block, handle);
    if (rc != CUDA_ERROR_NOT_FOUND)
        return rc;
    CUipcMemHandle h;
    CUdeviceptr address;
    memcpy(&h, handle, sizeof(h));
    rc = cuda.cuIpcOpenMemHandle(&address, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
    *block = (void *)(uintptr_t)address;
    return rc;
}

static int cuda_ipc_close(void *block)
{
    CUresult rc = cuda_vmm_release(block);
    return rc == CUDA_ERROR_NOT_FOUND ? cuda.cuIpcCloseMemHandle(cuda_address(block)) : rc;
}

static int cuda_host_register(void *ptr, size_t len)
{
    return cuda.cuMemHostRegister(ptr, len, CU_MEMHOSTREGISTER_PORTABLE);
}

static int cuda_host_unregister(void *ptr)
{
    return cuda.cuMemHostUnregister(ptr);
}

static int cuda_host_alloc_mapped(void **ptr, size_t len)
{
    return cuda.cuMemHostAlloc(ptr, len, CU_MEMHOSTALLOC_DEVICEMAP);
}

/* The driver answers an error for pageable memory. */
static enum gpu_memory cuda_memory(const void *ptr)
{
    unsigned type = 0;
    if (cuda.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, cuda_address(ptr)) !=
        CUDA_SUCCESS)
        return GPU_MEMORY_PAGEABLE;
    return type == CU_MEMORYTYPE_DEVICE ? GPU_MEMORY_DEVICE
           : type == CU_MEMORYTYPE_HOST ? GPU_MEMORY_PINNED
                                        : GPU_MEMORY_PAGEABLE;
}

/* Pinned memory's registration, by the driver's address range of its pointer. */
static int cuda_host_range(const void *ptr, uintptr_t *start, size_t *len)
{
    CUdeviceptr base = 0;
    CUresult rc = cuda_memory(ptr) == GPU_MEMORY_PINNED
                      ? cuda.cuPointerGetAttribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                                   cuda_address(ptr))
                      : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        rc = cuda.cuPointerGetAttribute(len, CU_POINTER_ATTRIBUTE_RANGE_SIZE, cuda_address(ptr));
    *start = (uintptr_t)base;
    return rc;
}

static int cuda_device_count(void)
{
    int count = 0;
    return cuda.cuDeviceGetCount(&count) == CUDA_SUCCESS ? count : 0;
}

static int cuda_device_busid(int ordinal, char *busid, int len)
{
    CUdevice device;
    CUresult rc = cuda.cuDeviceGet(&device, ordinal);
    return rc == CUDA_SUCCESS ? cuda.cuDeviceGetPCIBusId(busid, len, device) : rc;
}

static int cuda_device_by_busid(const char *busid)
{
    CUdevice device;
    return cuda.cuDeviceGetByPCIBusId(&device, busid) == CUDA_SUCCESS ? (int)device : -1;
}

static unsigned cuda_peer(struct gpu_device *dev, int ordinal)
{
    CUdevice other, device = cuda_of(dev)->device;
    int access = 0, atomics = 0;
    if (cuda.cuDeviceGet(&other, ordinal) != CUDA_SUCCESS ||
        cuda.cuDeviceCanAccessPeer(&access, device, other) != CUDA_SUCCESS || !access)
        return 0;
    if (cuda.cuDeviceGetP2PAttribute(&atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
                                     device, other) != CUDA_SUCCESS)
        atomics = 0;
    return GPU_PEER_ACCESS | (atomics ? GPU_PEER_ATOMICS : 0);
}

/* ---- A stream of the program's ---- */

static uintptr_t cuda_owner(struct gpu_device *dev)
{
    return (uintptr_t)cuda_of(dev)->context;
}

static int cuda_stream_owner(void *stream, uintptr_t *owner)
{
    CUcontext context = NULL;
    CUresult rc = cuda.cuStreamGetCtx(stream, &context);
    *owner = (uintptr_t)context;
    return rc == CUDA_SUCCESS && !context ? CUDA_ERROR_INVALID_CONTEXT : rc;
}

static uintptr_t cuda_swap_current(uintptr_t owner)
{
    CUcontext current = NULL;
    cuda_check(cuda.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if ((uintptr_t)current != owner)
        cuda_check(cuda.cuCtxSetCurrent((CUcontext)owner), "cuCtxSetCurrent (a stream's context)");
    return (uintptr_t)current;
}

static int cuda_write_value(void *stream, void *word, uint64_t value)
{
    return cuda.cuStreamWriteValue64(stream, cuda_address(word), value,
                                     CU_STREAM_WRITE_VALUE_DEFAULT);
}

static int cuda_wait_value(void *stream, const void *word, uint64_t value, int equal)
{
    return cuda.cuStreamWaitValue64(stream, cuda_address(word), value,
                                    equal ? CU_STREAM_WAIT_VALUE_EQ : CU_STREAM_WAIT_VALUE_GEQ);
}

static int cuda_capturing(void *stream, int *capturing)
{
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult rc = cuda.cuStreamIsCapturing(stream, &status);
    *capturing = status != CU_STREAM_CAPTURE_STATUS_NONE;
    return rc;
}

static void cuda_capture_relax(void)
{
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    cuda_check(cuda.cuThreadExchangeStreamCaptureMode(&mode), "cuThreadExchangeStreamCaptureMode");
}

static int cuda_device_of(struct gpu_device *dev, const void *ptr)
{
    int ordinal = cuda_vmm_device_of(ptr);
    if (ordinal >= 0)
        return ordinal;
    GPU_ENTERED(dev);
    if (cuda.cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   cuda_address(ptr)) != CUDA_SUCCESS)
        return -1;
    return ordinal;
}

static const struct gpu_runtime cuda_runtime = {
    .name = "CUDA",
    .kind_name = "cuda",
    .mem_type = TRANSPORT_MEM_CUDA,
    GPU_RUNTIME_CALLS(cuda),
    .scatter = cuda_scatter,
    .atomic = cuda_atomic,
    .reduce = cuda_reduce,
    .scratch = cuda_scratch,
    .device_of = cuda_device_of,
    .prepare = cuda_kernels_prepare,
    .wait_kernel = cuda_wait_kernel,
    .atomic_async = cuda_atomic_async,
};

const struct kind_ops *kind_cuda_use(const struct kind_gpu_setup *setup, char *why, size_t whylen)
{
    return gpu_use(&cuda_runtime, setup, why, whylen);
}
