/* SPDX-License-Identifier: BSD-3-Clause */
/* A test double of the HIP runtime (libamdhip64): the subset of the runtime API the HIP kind
 * uses, in the runtime's names, types and error codes, over the GPU doubles' core
 * (tests/gpu/gpu_double.h). The library loads it instead of libamdhip64 when
 * SHMEM_TEST_HIP_RUNTIME names it. Like the runtime, each thread has a current device (0 until it
 * sets one); copies take hipMemcpyDefault only, the kind the library relies on (the runtime tells
 * where each pointer is).
 *
 * STRATA_HIP_DOUBLE_DEVICES sets how many devices it reports (default 1), and
 * STRATA_HIP_DOUBLE_VERSION the runtime version it reports ("7.0"; default the headers'), with
 * hipPointerGetAttributes numbering memory types as that version does. The suite installs it
 * under the runtime's sonames (libamdhip64.so.7, ...), for the library's own search to find. */
#include "../gpu/gpu_double.h"

#include <hip/hip_runtime_api.h>
#include <hip/hip_version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static hipError_t status(enum double_status s)
{
    static const hipError_t codes[] = {
        [DOUBLE_OK] = hipSuccess,
        [DOUBLE_INVALID_VALUE] = hipErrorInvalidValue,
        [DOUBLE_OUT_OF_MEMORY] = hipErrorOutOfMemory,
        [DOUBLE_INVALID_HANDLE] = hipErrorInvalidHandle,
        [DOUBLE_ALREADY_REGISTERED] = hipErrorHostMemoryAlreadyRegistered,
        [DOUBLE_NOT_REGISTERED] = hipErrorHostMemoryNotRegistered,
        [DOUBLE_NOT_FOUND] = hipErrorNotFound,
        [DOUBLE_PEER_UNSUPPORTED] = hipErrorPeerAccessUnsupported,
        [DOUBLE_CAPTURE_UNSUPPORTED] = hipErrorStreamCaptureUnsupported,
        [DOUBLE_CAPTURE_INVALIDATED] = hipErrorStreamCaptureInvalidated,
    };
    return codes[s];
}

static int devices(void)
{
    return double_device_count("STRATA_HIP_DOUBLE_DEVICES");
}

static __thread int current; /* this thread's device */

/* The version reported, as HIP_VERSION encodes it: major * 10000000 + minor * 100000. */
static int version(void)
{
    const char *v = getenv("STRATA_HIP_DOUBLE_VERSION");
    int major = HIP_VERSION_MAJOR, minor = HIP_VERSION_MINOR;
    if (v && *v)
        sscanf(v, "%d.%d", &major, &minor);
    return major * 10000000 + minor * 100000;
}

EXPORT hipError_t hipRuntimeGetVersion(int *runtime_version)
{
    *runtime_version = version();
    return hipSuccess;
}

EXPORT hipError_t hipInit(unsigned int flags)
{
    return flags ? hipErrorInvalidValue : hipSuccess;
}

EXPORT hipError_t hipGetDeviceCount(int *count)
{
    *count = devices();
    return hipSuccess;
}

EXPORT hipError_t hipDeviceGetPCIBusId(char *busid, int len, int device)
{
    if (device < 0 || device >= devices())
        return hipErrorInvalidDevice;
    snprintf(busid, (size_t)len, "0000:%02x:00.0", 0xc0 + device);
    return hipSuccess;
}

EXPORT hipError_t hipDeviceGetByPCIBusId(int *device, const char *busid)
{
    unsigned bus = 0;
    if (sscanf(busid, "0000:%x:00.0", &bus) != 1 || (int)bus - 0xc0 < 0 ||
        (int)bus - 0xc0 >= devices())
        return hipErrorInvalidValue;
    *device = (int)bus - 0xc0;
    return hipSuccess;
}

EXPORT hipError_t hipDeviceCanAccessPeer(int *can, int device, int peer)
{
    if (device < 0 || device >= devices() || peer < 0 || peer >= devices())
        return hipErrorInvalidDevice;
    *can = device != peer && double_peer_access(device, peer);
    return hipSuccess;
}

EXPORT hipError_t hipDeviceTotalMem(size_t *bytes, hipDevice_t device)
{
    if (device < 0 || device >= devices())
        return hipErrorInvalidDevice;
    *bytes = DOUBLE_MEMORY;
    return hipSuccess;
}

EXPORT hipError_t hipSetDevice(int device)
{
    if (device < 0 || device >= devices())
        return hipErrorInvalidDevice;
    current = device;
    double_use_device(device);
    return hipSuccess;
}

EXPORT hipError_t hipGetDevice(int *device)
{
    *device = current;
    return hipSuccess;
}

EXPORT hipError_t hipMalloc(void **ptr, size_t size)
{
    uintptr_t p = 0;
    if (double_capture_forbids())
        return hipErrorStreamCaptureUnsupported;
    hipError_t rc = status(double_alloc(&p, size, current));
    *ptr = (void *)p;
    return rc;
}

EXPORT hipError_t hipFree(void *ptr)
{
    return status(double_free((uintptr_t)ptr));
}

EXPORT hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t *handle, void *ptr)
{
    return status(double_ipc_get((uintptr_t)ptr, handle->reserved));
}

EXPORT hipError_t hipIpcOpenMemHandle(void **ptr, hipIpcMemHandle_t handle, unsigned int flags)
{
    uintptr_t p = 0;
    if (flags != hipIpcMemLazyEnablePeerAccess)
        return hipErrorInvalidValue; /* the only flag the runtime defines */
    hipError_t rc = status(double_ipc_open(handle.reserved, current, &p));
    *ptr = (void *)p;
    return rc;
}

EXPORT hipError_t hipIpcCloseMemHandle(void *ptr)
{
    return status(double_ipc_close((uintptr_t)ptr));
}

/* Pageable memory is an error, as in the runtime of HIP 5. */
EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t *attributes, const void *ptr)
{
    enum double_memory memory = double_memory_of((uintptr_t)ptr);
    if (memory == DOUBLE_PAGEABLE)
        return hipErrorInvalidValue;
    memset(attributes, 0, sizeof(*attributes));
    /* hipMemoryType as the version reported numbers it: host 0 and device 1 in HIP 5, host 1 and
     * device 2 from HIP 6 on (the field is the structure's first in both). */
    int type = (memory == DOUBLE_DEVICE ? 1 : 0) + (version() >= 60000000);
    memcpy(attributes, &type, sizeof(type));
    attributes->device = double_device_of((uintptr_t)ptr);
    attributes->devicePointer = (void *)ptr;
    attributes->hostPointer = memory == DOUBLE_PINNED ? (void *)ptr : NULL;
    return hipSuccess;
}

EXPORT hipError_t hipPointerGetAttribute(void *data, hipPointer_attribute attribute,
                                         hipDeviceptr_t ptr)
{
    uintptr_t start;
    size_t size;
    if (attribute != HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR &&
        attribute != HIP_POINTER_ATTRIBUTE_RANGE_SIZE)
        return hipErrorNotSupported;
    if (double_range_of((uintptr_t)ptr, &start, &size) != DOUBLE_OK)
        return hipErrorInvalidValue;
    if (attribute == HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR)
        *(void **)data = (void *)start;
    else
        *(size_t *)data = size;
    return hipSuccess;
}

EXPORT hipError_t hipHostRegister(void *p, size_t size, unsigned int flags)
{
    (void)flags;
    if (double_capture_forbids())
        return hipErrorStreamCaptureUnsupported;
    return status(double_host_register(p, size));
}

EXPORT hipError_t hipHostUnregister(void *p)
{
    return status(double_host_unregister(p));
}

/* Not the runtime's: how many bytes are registered (hipHostRegister), for tests. */
EXPORT size_t hip_double_registered_bytes(void)
{
    return double_registered_bytes();
}

/* Not the runtime's: how many streams were created (hipStreamCreateWithFlags), for tests. */
EXPORT int hip_double_streams_created(void)
{
    return double_streams_created();
}

/* Not the runtime's: how many of them were below the greatest priority, for tests. */
EXPORT int hip_double_streams_below_greatest(void)
{
    return double_streams_below_greatest();
}

EXPORT hipError_t hipMemGetInfo(size_t *free, size_t *total)
{
    *total = DOUBLE_MEMORY;
    *free = DOUBLE_MEMORY - double_held_bytes();
    return hipSuccess;
}

EXPORT hipError_t hipHostMalloc(void **p, size_t size, unsigned int flags)
{
    (void)flags;
    if (double_capture_forbids())
        return hipErrorStreamCaptureUnsupported;
    return status(double_host_alloc(p, size));
}

/* A stream's owner: its device, as a pointer that is never NULL. */
static const void *device_owner(int device)
{
    return (const void *)(uintptr_t)(1 + device);
}

/* A stream is used on the device it was made on (NULL: the null stream). */
#define NEED_STREAM(stream)                                                                        \
    do {                                                                                           \
        if ((stream) &&                                                                            \
            (double_stream_owner((struct double_stream *)(stream)) != device_owner(current) ||     \
             !double_stream_alive((struct double_stream *)(stream))))                              \
            return hipErrorInvalidHandle;                                                          \
    } while (0)

/* Priorities from 0 (least) to -1 (greatest), as ROCm reports them. */
#define DOUBLE_PRIORITY_GREATEST (-1)

EXPORT hipError_t hipDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    *least = 0;
    *greatest = DOUBLE_PRIORITY_GREATEST;
    return hipSuccess;
}

EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t *stream, unsigned int flags, int priority)
{
    if (priority > 0 || priority < DOUBLE_PRIORITY_GREATEST)
        return hipErrorInvalidValue;
    *stream =
        (hipStream_t)double_stream_create(!(flags & hipStreamNonBlocking), device_owner(current),
                                          priority == DOUBLE_PRIORITY_GREATEST);
    return *stream ? hipSuccess : hipErrorOutOfMemory;
}

EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t *stream, unsigned int flags)
{
    return hipStreamCreateWithPriority(stream, flags, 0);
}

EXPORT hipError_t hipStreamQuery(hipStream_t stream)
{
    NEED_STREAM(stream);
    return hipSuccess; /* the double's work runs when synchronized: nothing is under way */
}

/* The current device's memory, streams and host registrations go. */
EXPORT hipError_t hipDeviceReset(void)
{
    double_reset(current, device_owner(current));
    return hipSuccess;
}

EXPORT hipError_t hipStreamSynchronize(hipStream_t stream)
{
    NEED_STREAM(stream);
    if (!stream && double_capture_forbids())
        return hipErrorStreamCaptureUnsupported;
    return status(double_stream_sync((struct double_stream *)stream));
}

EXPORT hipError_t hipStreamCreate(hipStream_t *stream)
{
    return hipStreamCreateWithPriority(stream, 0, 0);
}

EXPORT hipError_t hipStreamDestroy(hipStream_t stream)
{
    NEED_STREAM(stream);
    if (!stream)
        return hipErrorInvalidHandle;
    double_stream_destroy((struct double_stream *)stream);
    return hipSuccess;
}

/* A destroyed stream's handle is refused. */
EXPORT hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t *device)
{
    if (!stream) {
        *device = current;
        return hipSuccess;
    }
    const struct double_stream *s = (const struct double_stream *)stream;
    if (!double_stream_alive(s))
        return hipErrorContextIsDestroyed;
    *device = (int)((uintptr_t)double_stream_owner(s) - 1);
    return hipSuccess;
}

EXPORT hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count, hipStream_t stream)
{
    NEED_STREAM(stream);
    return status(
        double_set32((uintptr_t)dst, (uint32_t)value, count, (struct double_stream *)stream));
}

/* ---- Stream memory operations: HIP's flags number the waits as the double does ---- */
_Static_assert(hipStreamWaitValueGte == DOUBLE_WAIT_GEQ && hipStreamWaitValueEq == DOUBLE_WAIT_EQ &&
                   hipStreamWaitValueAnd == DOUBLE_WAIT_AND &&
                   hipStreamWaitValueNor == DOUBLE_WAIT_NOR,
               "the double numbers waits as HIP does");

EXPORT hipError_t hipStreamWriteValue32(hipStream_t stream, void *ptr, uint32_t value,
                                        unsigned int flags)
{
    NEED_STREAM(stream);
    (void)flags;
    return status(double_write_value((uintptr_t)ptr, value, 32, (struct double_stream *)stream));
}

EXPORT hipError_t hipStreamWriteValue64(hipStream_t stream, void *ptr, uint64_t value,
                                        unsigned int flags)
{
    NEED_STREAM(stream);
    (void)flags;
    return status(double_write_value((uintptr_t)ptr, value, 64, (struct double_stream *)stream));
}

/* Only a full mask: the library masks nothing. */
EXPORT hipError_t hipStreamWaitValue32(hipStream_t stream, void *ptr, uint32_t value,
                                       unsigned int flags, uint32_t mask)
{
    NEED_STREAM(stream);
    if (mask != 0xFFFFFFFFu || flags > hipStreamWaitValueNor)
        return hipErrorInvalidValue;
    return status(double_wait_value((uintptr_t)ptr, value, 32, (enum double_wait)flags,
                                    (struct double_stream *)stream));
}

EXPORT hipError_t hipStreamWaitValue64(hipStream_t stream, void *ptr, uint64_t value,
                                       unsigned int flags, uint64_t mask)
{
    NEED_STREAM(stream);
    if (mask != ~(uint64_t)0 || flags > hipStreamWaitValueNor)
        return hipErrorInvalidValue;
    return status(double_wait_value((uintptr_t)ptr, value, 64, (enum double_wait)flags,
                                    (struct double_stream *)stream));
}

/* ---- Capture and graphs: a graph executable is a copy of the graph ---- */
EXPORT hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode)
{
    NEED_STREAM(stream);
    return status(
        double_capture_begin((struct double_stream *)stream, mode == hipStreamCaptureModeGlobal));
}

EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t *graph)
{
    NEED_STREAM(stream);
    return status(
        double_capture_end((struct double_stream *)stream, (struct double_graph **)graph));
}

EXPORT hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus *capture)
{
    NEED_STREAM(stream);
    *capture = double_capturing((struct double_stream *)stream) ? hipStreamCaptureStatusActive
                                                                : hipStreamCaptureStatusNone;
    return hipSuccess;
}

EXPORT hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode *mode)
{
    int was = double_capture_relax(*mode == hipStreamCaptureModeRelaxed);
    *mode = was ? hipStreamCaptureModeRelaxed : hipStreamCaptureModeGlobal;
    return hipSuccess;
}

EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t *exec, hipGraph_t graph,
                                      hipGraphNode_t *error_node, char *log, size_t log_size)
{
    (void)error_node;
    (void)log;
    (void)log_size;
    if (!graph)
        return hipErrorInvalidValue;
    *exec = (hipGraphExec_t)double_graph_copy((const struct double_graph *)graph);
    return *exec ? hipSuccess : hipErrorOutOfMemory;
}

EXPORT hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream)
{
    NEED_STREAM(stream);
    return status(
        double_graph_launch((const struct double_graph *)exec, (struct double_stream *)stream));
}

EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t exec)
{
    double_graph_destroy((struct double_graph *)exec);
    return hipSuccess;
}

EXPORT hipError_t hipGraphDestroy(hipGraph_t graph)
{
    double_graph_destroy((struct double_graph *)graph);
    return hipSuccess;
}

EXPORT hipError_t hipMemcpyAsync(void *dst, const void *src, size_t len, hipMemcpyKind kind,
                                 hipStream_t stream)
{
    NEED_STREAM(stream);
    if (kind != hipMemcpyDefault)
        return hipErrorInvalidValue;
    return status(double_copy((uintptr_t)dst, (uintptr_t)src, len, (struct double_stream *)stream));
}

EXPORT hipError_t hipMemsetAsync(void *dst, int byte, size_t len, hipStream_t stream)
{
    NEED_STREAM(stream);
    return status(double_set((uintptr_t)dst, byte, len, (struct double_stream *)stream));
}
