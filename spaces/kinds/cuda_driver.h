/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA driver API as the CUDA kind uses it: the entry points of libcuda.so.1 (or of the
 * driver a testing knob names), resolved with dlopen/dlsym into one table. Types and prototypes
 * come from the toolkit's cuda.h, so a call through the table is checked like a linked call;
 * the library is never linked against the driver, and runs where there is none. */
#ifndef STRATA_CUDA_DRIVER_H
#define STRATA_CUDA_DRIVER_H

#include <cuda.h>

/* Every entry point used, by its cuda.h name (which cuda.h maps to the versioned symbol, such as
 * cuMemAlloc -> cuMemAlloc_v2: the table's field and the symbol looked up follow it). */
#define CUDA_DRIVER_CALLS(X)                                                                       \
    X(cuInit)                                                                                      \
    X(cuDeviceGet)                                                                                 \
    X(cuDeviceGetCount)                                                                            \
    X(cuDeviceGetPCIBusId)                                                                         \
    X(cuDeviceGetByPCIBusId)                                                                       \
    X(cuDeviceCanAccessPeer)                                                                       \
    X(cuDeviceGetP2PAttribute)                                                                     \
    X(cuDevicePrimaryCtxRetain)                                                                    \
    X(cuDevicePrimaryCtxGetState)                                                                  \
    X(cuCtxGetApiVersion)                                                                          \
    X(cuCtxSetCurrent)                                                                             \
    X(cuCtxGetCurrent)                                                                             \
    X(cuCtxGetDevice)                                                                              \
    X(cuCtxGetStreamPriorityRange)                                                                 \
    X(cuMemAlloc)                                                                                  \
    X(cuMemFree)                                                                                   \
    X(cuMemcpy)                                                                                    \
    X(cuMemcpyAsync)                                                                               \
    X(cuMemsetD8Async)                                                                             \
    X(cuStreamCreateWithPriority)                                                                  \
    X(cuStreamSynchronize)                                                                         \
    X(cuStreamQuery)                                                                               \
    X(cuStreamGetCtx)                                                                              \
    X(cuStreamWriteValue64)                                                                        \
    X(cuStreamWaitValue64)                                                                         \
    X(cuStreamIsCapturing)                                                                         \
    X(cuThreadExchangeStreamCaptureMode)                                                           \
    X(cuIpcGetMemHandle)                                                                           \
    X(cuIpcOpenMemHandle)                                                                          \
    X(cuIpcCloseMemHandle)                                                                         \
    X(cuPointerGetAttribute)                                                                       \
    X(cuMemHostRegister)                                                                           \
    X(cuMemHostUnregister)                                                                         \
    X(cuMemHostAlloc)                                                                              \
    X(cuModuleLoadData)                                                                            \
    X(cuModuleGetFunction)                                                                         \
    X(cuLaunchKernel)                                                                              \
    X(cuDeviceGetAttribute)                                                                        \
    X(cuMemGetAllocationGranularity)                                                               \
    X(cuMemCreate)                                                                                 \
    X(cuMemRelease)                                                                                \
    X(cuMemAddressReserve)                                                                         \
    X(cuMemAddressFree)                                                                            \
    X(cuMemMap)                                                                                    \
    X(cuMemUnmap)                                                                                  \
    X(cuMemSetAccess)                                                                              \
    X(cuMemExportToShareableHandle)                                                                \
    X(cuMemImportFromShareableHandle)                                                              \
    X(cuMemGetAllocationPropertiesFromHandle)

struct cuda_driver {
#define CUDA_DRIVER_FIELD(fn) __typeof__(fn) *fn;
    CUDA_DRIVER_CALLS(CUDA_DRIVER_FIELD)
#undef CUDA_DRIVER_FIELD
};

/* The driver's entry points, once cuda_driver_load succeeded. */
extern struct cuda_driver cuda;

/* Loads the driver (path: the testing knob's file, or NULL for libcuda.so.1) and initializes it.
 * Returns 0, or -1 with the reason in why. Loading twice is loading once. Called under gpu_use's
 * lock. */
int cuda_driver_load(const char *path, char *why, size_t whylen);

#endif
