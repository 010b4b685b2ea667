/* SPDX-License-Identifier: BSD-3-Clause */
/* What the CUDA kind's files share: cuda.c (the driver's calls for the GPU kind core, gpu.h) and
 * cuda_kernels.c (the PTX kernels: atomics, reductions, the batch scatter). */
#ifndef STRATA_CUDA_INTERNAL_H
#define STRATA_CUDA_INTERNAL_H

#include "cuda_driver.h"
#include "gpu.h"

#include <stdint.h>

/* Ends the process with a message naming what failed, unless rc is success. */
void cuda_check(CUresult rc, const char *what);
/* The runtime table's enter and leave (gpu.h): the library's context current on the calling
 * thread, then the program's again. */
uintptr_t cuda_enter(void);
void cuda_leave(uintptr_t previous);

static inline CUdeviceptr cuda_address(const void *ptr)
{
    return (CUdeviceptr)(uintptr_t)ptr;
}

/* ---- Heaps of the virtual memory management API (cuda_vmm.c) ---- */
/* Decides once, at set-up, whether heaps on device are VMM allocations: the device supports
 * them with file-descriptor handles, and node peers may take each other's descriptors. */
void cuda_vmm_setup(CUdevice device);
int cuda_vmm_heaps(void);
/* size bytes (rounded up to the granularity) at wish where those addresses are free, else
 * anywhere aligned to align: addresses are reserved aligned, no memory is spent on it. */
CUresult cuda_vmm_alloc(void **ptr, size_t size, size_t align, void *wish);
/* Unmaps and releases the VMM heap at ptr (own or attached); CUDA_ERROR_NOT_FOUND when ptr is
 * none, and so a legacy allocation or IPC mapping. */
CUresult cuda_vmm_release(void *ptr);
/* The attach handle (GPU_IPC_HANDLE bytes) of the own VMM heap at ptr, or CUDA_ERROR_NOT_FOUND. */
CUresult cuda_vmm_export(void *handle, const void *ptr);
/* Attaches a node peer's VMM heap from its handle, or CUDA_ERROR_NOT_FOUND when the handle is a
 * legacy IPC handle. */
CUresult cuda_vmm_attach(void **ptr, const void *handle);
/* The device holding the VMM heap that holds ptr, or -1 when no VMM heap does (the driver's
 * pointer query writes no ordinal for VMM memory). */
int cuda_vmm_device_of(const void *ptr);

/* ---- Kernels (cuda_kernels.c), loaded on first use (a JIT compile, once) ---- */
uint64_t cuda_atomic(void *word, enum transport_amo op, uint64_t value, uint64_t compare,
                     size_t size);
void cuda_reduce(void *acc, const void *in, size_t count, enum kind_reduction what);
void *cuda_scratch(size_t bytes);
/* Issues count writes (entries and data in mapped host memory) as one kernel on stream. */
void cuda_scatter(const struct gpu_batch_entry *entries, const char *data, unsigned count,
                  void *stream);

#endif
