/* SPDX-License-Identifier: BSD-3-Clause */
/* The HIP kind: the GPU kind core (gpu.h) on the HIP runtime of an AMD GPU, libamdhip64, loaded
 * with dlopen and never linked. Types and prototypes come from the HIP headers configure found,
 * so a call through the table is checked like a linked call.
 *
 * The runtime loaded is the newest the node has (libamdhip64.so.7, .6, .5), whatever the headers'
 * version: the one structure whose meaning changed between them, what hipPointerGetAttributes
 * answers (hipMemoryType was renumbered in HIP 6), is read by the runtime's own version
 * (hipRuntimeGetVersion), and a runtime newer than the versions known here is refused.
 *
 * There are no kernels: a HIP code object cannot be built without the ROCm compiler. Atomics on
 * HIP heaps take the owner route (only the owner updates its words, reading, modifying and writing
 * them through copies under a lock; node peers ask it to), reductions on them are staged through
 * host memory, and each write of a batch is a copy of its own. */
#include "../../common/log.h"
#include "../runtimes/device_runtime.h"
#include "gpu.h"

#include <hip/hip_runtime_api.h>
#include <stdio.h>
#include <string.h>

/* HIP 6 declares it; older headers do not, though their runtimes have it. */
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device);

/* Every entry point used, by its name in hip_runtime_api.h. */
#define HIP_RUNTIME_CALLS(X)                                                                       \
    X(hipInit)                                                                                     \
    X(hipRuntimeGetVersion)                                                                        \
    X(hipSetDevice)                                                                                \
    X(hipGetDevice)                                                                                \
    X(hipMalloc)                                                                                   \
    X(hipFree)                                                                                     \
    X(hipMemcpyAsync)                                                                              \
    X(hipMemsetAsync)                                                                              \
    X(hipStreamCreateWithPriority)                                                                 \
    X(hipDeviceGetStreamPriorityRange)                                                             \
    X(hipStreamSynchronize)                                                                        \
    X(hipStreamQuery)                                                                              \
    X(hipIpcGetMemHandle)                                                                          \
    X(hipIpcOpenMemHandle)                                                                         \
    X(hipIpcCloseMemHandle)                                                                        \
    X(hipHostRegister)                                                                             \
    X(hipHostUnregister)                                                                           \
    X(hipHostMalloc)                                                                               \
    X(hipPointerGetAttributes)                                                                     \
    X(hipGetDeviceCount)                                                                           \
    X(hipDeviceGetPCIBusId)                                                                        \
    X(hipDeviceGetByPCIBusId)                                                                      \
    X(hipDeviceCanAccessPeer)                                                                      \
    X(hipPointerGetAttribute)                                                                      \
    X(hipStreamGetDevice)                                                                          \
    X(hipStreamWriteValue64)                                                                       \
    X(hipStreamWaitValue64)                                                                        \
    X(hipStreamIsCapturing)                                                                        \
    X(hipThreadExchangeStreamCaptureMode)

static struct {
#define HIP_RUNTIME_FIELD(fn) __typeof__(fn) *fn;
    HIP_RUNTIME_CALLS(HIP_RUNTIME_FIELD)
#undef HIP_RUNTIME_FIELD
} hip;

/* hipPointerAttribute_t as HIP 5, 6 and 7 lay it out (the first field is memoryType in 5, type
 * from 6 on), with room for a runtime that grows it. */
struct hip_pointer_attributes {
    int type;
    int device;
    void *device_pointer;
    void *host_pointer;
    int is_managed;
    unsigned allocation_flags;
    char room[64];
};

/* What hipMemoryType numbers host and device memory, by the runtime's major version. */
static const struct hip_layout {
    int major, host, device;
} hip_layouts[] = {{5, 0, 1}, {6, 1, 2}, {7, 1, 2}};
static const struct hip_layout *hip_layout;

static int hip_loaded;

/* What the HIP kind keeps of a device it uses (gpu_device.state). */
struct hip_device {
    int ordinal;
    int stream_priority; /* the device's greatest */
};
static struct hip_device hip_devices[GPU_DEVICES_MAX]; /* by the gpu_device's slot */

static const struct hip_device *hip_of(const struct gpu_device *dev)
{
    return dev->state;
}

/* Loads the runtime, once (under gpu_use's lock): it stays loaded, its state living as long as
 * the process. */
static int hip_load(const char *path, char *why, size_t whylen)
{
    static const struct device_runtime_symbol symbols[] = {
#define HIP_RUNTIME_SYMBOL(fn) {#fn, (void **)&hip.fn},
        HIP_RUNTIME_CALLS(HIP_RUNTIME_SYMBOL)
#undef HIP_RUNTIME_SYMBOL
    };
    if (hip_loaded)
        return 0;
    if (device_runtime_bind(device_runtime_hip_open(path),
                            path && *path ? path : DEVICE_RUNTIME_HIP_SONAMES, symbols,
                            sizeof(symbols) / sizeof(symbols[0]), "the HIP runtime", why, whylen))
        return -1;
    int version = 0;
    hipError_t rc = hip.hipRuntimeGetVersion(&version);
    for (size_t i = 0; !rc && i < sizeof(hip_layouts) / sizeof(hip_layouts[0]); i++)
        if (hip_layouts[i].major == version / 10000000)
            hip_layout = &hip_layouts[i];
    if (!hip_layout) {
        snprintf(why, whylen,
                 "HIP runtime %d.%d is not supported: this build knows HIP 5, 6 and 7 (error %d)",
                 version / 10000000, version / 100000 % 100, (int)rc);
        return -1;
    }
    rc = hip.hipInit(0);
    if (rc != hipSuccess) {
        snprintf(why, whylen, "hipInit failed (error %d)", (int)rc);
        return -1;
    }
    hip_loaded = 1;
    return 0;
}

static uintptr_t hip_enter(struct gpu_device *dev)
{
    int current = -1, ordinal = hip_of(dev)->ordinal;
    gpu_check(dev, hip.hipGetDevice(&current), "hipGetDevice");
    if (current != ordinal)
        gpu_check(dev, hip.hipSetDevice(ordinal), "hipSetDevice");
    return (uintptr_t)current;
}

static void hip_leave(struct gpu_device *dev, uintptr_t previous)
{
    if ((int)previous != hip_of(dev)->ordinal)
        gpu_check(dev, hip.hipSetDevice((int)previous), "hipSetDevice (the program's)");
}

static int hip_open(struct gpu_device *dev, const char *path, int ordinal, char *why, size_t whylen)
{
    int current = -1, least = 0;
    if (hip_load(path, why, whylen))
        return -1;
    if (hip.hipGetDevice(&current) != hipSuccess || hip.hipSetDevice(ordinal) != hipSuccess) {
        snprintf(why, whylen, "HIP device %d cannot be set up", ordinal);
        return -1;
    }
    struct hip_device *h = &hip_devices[dev->slot];
    *h = (struct hip_device){.ordinal = ordinal};
    if (hip.hipDeviceGetStreamPriorityRange(&least, &h->stream_priority) != hipSuccess)
        h->stream_priority = 0;
    dev->state = h;
    hip_leave(dev, (uintptr_t)current);
    return 0;
}

static int hip_alloc(struct gpu_device *dev, void **ptr, size_t size, size_t align, void *wish)
{
    (void)dev;   /* the device entered */
    (void)align; /* HIP's allocations go where the runtime puts them */
    (void)wish;
    return hip.hipMalloc(ptr, size);
}

static int hip_free(void *ptr)
{
    return hip.hipFree(ptr);
}

static int hip_copy_async(void *dst, const void *src, size_t len, void *stream)
{
    return hip.hipMemcpyAsync(dst, src, len, hipMemcpyDefault, stream);
}

static int hip_fill_async(void *dst, int byte, size_t len, void *stream)
{
    return hip.hipMemsetAsync(dst, byte, len, stream);
}

/* At the device's greatest priority: the library's copies go before the program's work waiting
 * for the same compute units. */
static int hip_stream_create(struct gpu_device *dev, void **stream)
{
    return hip.hipStreamCreateWithPriority((hipStream_t *)stream, hipStreamNonBlocking,
                                           hip_of(dev)->stream_priority);
}

static int hip_stream_sync(void *stream)
{
    return hip.hipStreamSynchronize(stream);
}

/* The program reset the device (hipDeviceReset): stream, of the library, no longer works. A
 * device that cannot even be made current is lost too. Not through hip_enter: its failure asks
 * gpu_check, which asks this again. */
static int hip_lost(struct gpu_device *dev, void *stream)
{
    int previous = -1, ordinal = hip_of(dev)->ordinal;
    if (hip.hipGetDevice(&previous) != hipSuccess ||
        (previous != ordinal && hip.hipSetDevice(ordinal) != hipSuccess))
        return 1;
    hipError_t rc = hip.hipStreamQuery(stream);
    if (previous != ordinal)
        hip.hipSetDevice(previous); /* the program's, which it was a moment ago */
    return rc != hipSuccess && rc != hipErrorNotReady;
}

_Static_assert(sizeof(hipIpcMemHandle_t) == GPU_IPC_HANDLE, "a HIP IPC handle is 64 bytes");

static int hip_ipc_get(void *handle, void *block)
{
    return hip.hipIpcGetMemHandle(handle, block);
}

static int hip_ipc_open(struct gpu_device *dev, void **block, const void *handle)
{
    (void)dev; /* the device entered */
    hipIpcMemHandle_t h;
    memcpy(&h, handle, sizeof(h));
    return hip.hipIpcOpenMemHandle(block, h, hipIpcMemLazyEnablePeerAccess);
}

static int hip_ipc_close(void *block)
{
    return hip.hipIpcCloseMemHandle(block);
}

static int hip_host_register(void *ptr, size_t len)
{
    return hip.hipHostRegister(ptr, len, hipHostRegisterPortable);
}

static int hip_host_unregister(void *ptr)
{
    return hip.hipHostUnregister(ptr);
}

static int hip_host_alloc_mapped(void **ptr, size_t len)
{
    return hip.hipHostMalloc(ptr, len, hipHostMallocMapped);
}

/* The runtime answers an error for pageable memory. */
static enum gpu_memory hip_memory(const void *ptr)
{
    struct hip_pointer_attributes attributes;
    if (hip.hipPointerGetAttributes((hipPointerAttribute_t *)(void *)&attributes, ptr) !=
        hipSuccess)
        return GPU_MEMORY_PAGEABLE;
    return attributes.type == hip_layout->device ? GPU_MEMORY_DEVICE
           : attributes.type == hip_layout->host ? GPU_MEMORY_PINNED
                                                 : GPU_MEMORY_PAGEABLE;
}

/* Pinned memory's registration, by the runtime's address range of its pointer. */
static int hip_host_range(const void *ptr, uintptr_t *start, size_t *len)
{
    void *base = NULL;
    hipError_t rc = hip_memory(ptr) == GPU_MEMORY_PINNED
                        ? hip.hipPointerGetAttribute(&base, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                                     (hipDeviceptr_t)ptr)
                        : hipErrorInvalidValue;
    if (rc == hipSuccess)
        rc = hip.hipPointerGetAttribute(len, HIP_POINTER_ATTRIBUTE_RANGE_SIZE, (hipDeviceptr_t)ptr);
    *start = (uintptr_t)base;
    return rc;
}

static int hip_device_count(void)
{
    int count = 0;
    return hip.hipGetDeviceCount(&count) == hipSuccess ? count : 0;
}

static int hip_device_busid(int ordinal, char *busid, int len)
{
    return hip.hipDeviceGetPCIBusId(busid, len, ordinal);
}

static int hip_device_by_busid(const char *busid)
{
    int device;
    return hip.hipDeviceGetByPCIBusId(&device, busid) == hipSuccess ? device : -1;
}

/* Access only: the HIP kind runs no kernels, and its atomics are its owners'. */
static unsigned hip_peer(struct gpu_device *dev, int ordinal)
{
    int access = 0;
    return hip.hipDeviceCanAccessPeer(&access, hip_of(dev)->ordinal, ordinal) == hipSuccess &&
                   access
               ? GPU_PEER_ACCESS
               : 0;
}

/* ---- A stream of the program's ---- */

static uintptr_t hip_owner(struct gpu_device *dev)
{
    return (uintptr_t)hip_of(dev)->ordinal + 1;
}

static int hip_stream_owner(void *stream, uintptr_t *owner)
{
    hipDevice_t device = -1;
    hipError_t rc = hip.hipStreamGetDevice(stream, &device);
    *owner = (uintptr_t)device + 1;
    return rc;
}

static uintptr_t hip_swap_current(uintptr_t owner)
{
    int current = -1;
    if (hip.hipGetDevice(&current) != hipSuccess ||
        ((uintptr_t)current + 1 != owner && hip.hipSetDevice((int)owner - 1) != hipSuccess))
        log_fatal("spaces", "HIP cannot make device %d current for a stream's work",
                  (int)owner - 1);
    return (uintptr_t)current + 1;
}

static int hip_write_value(void *stream, void *word, uint64_t value)
{
    return hip.hipStreamWriteValue64(stream, word, value, 0);
}

static int hip_wait_value(void *stream, const void *word, uint64_t value, int equal)
{
    return hip.hipStreamWaitValue64(stream, (void *)(uintptr_t)word, value,
                                    equal ? hipStreamWaitValueEq : hipStreamWaitValueGte,
                                    ~(uint64_t)0);
}

static int hip_capturing(void *stream, int *capturing)
{
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    hipError_t rc = hip.hipStreamIsCapturing(stream, &status);
    *capturing = status != hipStreamCaptureStatusNone;
    return rc;
}

static void hip_capture_relax(void)
{
    hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
    if (hip.hipThreadExchangeStreamCaptureMode(&mode) != hipSuccess)
        log_fatal("spaces", "HIP cannot relax the library thread's stream capture mode");
}

static const struct gpu_runtime hip_runtime = {
    .name = "HIP",
    .kind_name = "hip",
    .mem_type = TRANSPORT_MEM_ROCM,
    GPU_RUNTIME_CALLS(hip),
};

const struct kind_ops *kind_hip_use(const struct kind_gpu_setup *setup, char *why, size_t whylen)
{
    return gpu_use(&hip_runtime, setup, why, whylen);
}
