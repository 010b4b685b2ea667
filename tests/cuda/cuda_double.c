/* A test double of the CUDA driver: the subset of the driver API the CUDA kind uses, in the
 * driver's names, types and error codes, over the GPU doubles' core (tests/gpu/gpu_double.h). The
 * library loads it instead of libcuda.so.1 when SHMEM_TEST_CUDA_DRIVER names it. Like the driver,
 * every call on memory, streams or modules needs a current context.
 *
 * STRATA_CUDA_DOUBLE_DEVICES sets how many devices it reports (default 1). */
#include "../gpu/gpu_double.h"

#include <cuda.h>
#include <stdio.h>

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
    };
    return codes[s];
}

static __thread CUcontext current;
#define DOUBLE_MAX_DEVICES 16
static int primary_contexts[DOUBLE_MAX_DEVICES]; /* a device's context is its entry's address */

/* The device of the current context. */
static int current_device(void)
{
    return (int)((int *)current - primary_contexts);
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
    if (ordinal < 0 || ordinal >= double_device_count("STRATA_CUDA_DOUBLE_DEVICES"))
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetPCIBusId(char *busid, int len, CUdevice device)
{
    snprintf(busid, (size_t)len, "0000:%02x:00.0", 0xc0 + (int)device);
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
    if (device < 0 || device >= DOUBLE_MAX_DEVICES)
        return CUDA_ERROR_INVALID_DEVICE;
    *context = (CUcontext)&primary_contexts[device];
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext context)
{
    current = context;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *context)
{
    *context = current;
    return CUDA_SUCCESS;
}

/* Every call below needs a current context, as the driver's do. */
#define NEED_CONTEXT()                                                                             \
    do {                                                                                           \
        if (!current)                                                                              \
            return CUDA_ERROR_INVALID_CONTEXT;                                                     \
    } while (0)

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    NEED_CONTEXT();
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
    CUresult rc = status(double_ipc_open(handle.reserved, &p));
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
        *(int *)data = device;
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

EXPORT CUresult cuMemHostAlloc(void **p, size_t size, unsigned int flags)
{
    (void)flags;
    NEED_CONTEXT();
    return status(double_host_alloc(p, size));
}

EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
    NEED_CONTEXT();
    *stream = (CUstream)double_stream_create(!(flags & CU_STREAM_NON_BLOCKING));
    return *stream ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuStreamSynchronize(CUstream stream)
{
    NEED_CONTEXT();
    double_stream_sync((struct double_stream *)stream);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t len)
{
    NEED_CONTEXT();
    return status(double_copy(dst, src, len, NULL));
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t len, CUstream stream)
{
    NEED_CONTEXT();
    return status(double_copy(dst, src, len, (struct double_stream *)stream));
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char byte, size_t len, CUstream stream)
{
    NEED_CONTEXT();
    return status(double_set(dst, byte, len, (struct double_stream *)stream));
}

/* ---- Modules: the library's kernels, by name ---- */
static int module;

EXPORT CUresult cuModuleLoadData(CUmodule *out, const void *image)
{
    NEED_CONTEXT();
    if (!double_module_valid(image))
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
    NEED_CONTEXT();
    if (gy * gz * by * bz != 1 || shared || extra || !params || bx > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    return status(double_launch((const struct double_kernel *)f, gx * bx,
                                (struct double_stream *)stream, params));
}
