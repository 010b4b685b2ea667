/* SPDX-License-Identifier: BSD-3-Clause */
/* What the CUDA kind's files share: cuda.c (the driver's calls for the GPU kind core, gpu.h) and
 * cuda_kernels.c (the PTX kernels: atomics, reductions, the batch scatter). */
#ifndef STRATA_CUDA_INTERNAL_H
#define STRATA_CUDA_INTERNAL_H

#include "cuda_driver.h"
#include "gpu.h"

#include <stdint.h>

/* Heaps of the virtual memory management API on a device (cuda_vmm.c). */
struct cuda_vmm {
    int on; /* heaps on the device are VMM allocations */
    size_t granularity;
    CUmemAllocationProp prop;
};

/* The library's kernels as loaded in a device's context (cuda_kernels.c). */
struct cuda_kernels {
    int loaded;
    CUfunction amo[2]; /* 32 and 64 bits */
    CUfunction reduce[KIND_REDUCTIONS_COUNT];
    CUfunction scatter;
    CUfunction wait;
    volatile uint64_t *amo_old; /* mapped pinned host memory */
    uint64_t *amo_sink;         /* where atomics on a program's stream leave the old value */
};

/* What the CUDA kind keeps of a device it uses (gpu_device.state). */
struct cuda_device {
    CUcontext context; /* the program's at set-up, else the device's primary one */
    CUdevice device;
    int context_primary;
    int stream_priority; /* the device's greatest */
    struct cuda_vmm vmm;
    struct cuda_kernels kernels;
};

static inline struct cuda_device *cuda_of(const struct gpu_device *dev)
{
    return dev->state;
}

/* Ends the process with a message naming what failed, unless rc is success. */
void cuda_check(CUresult rc, const char *what);
/* The runtime table's enter and leave (gpu.h): dev's context current on the calling thread,
 * then the program's again. */
uintptr_t cuda_enter(struct gpu_device *dev);
void cuda_leave(struct gpu_device *dev, uintptr_t previous);

static inline CUdeviceptr cuda_address(const void *ptr)
{
    return (CUdeviceptr)(uintptr_t)ptr;
}

/* ---- Heaps of the virtual memory management API (cuda_vmm.c) ---- */
/* Decides once per device, at its set-up, whether its heaps are VMM allocations: the device
 * supports them with file-descriptor handles, and node peers may take each other's descriptors. */
void cuda_vmm_setup(struct cuda_vmm *vmm, CUdevice device);
/* size bytes of the device's (rounded up to the granularity) at wish where those addresses are
 * free, else anywhere aligned to align: addresses are reserved aligned, no memory is spent on
 * it. */
CUresult cuda_vmm_alloc(const struct cuda_vmm *vmm, void **ptr, size_t size, size_t align,
                        void *wish);
/* Unmaps and releases the VMM heap at ptr (own or attached); CUDA_ERROR_NOT_FOUND when ptr is
 * none, and so a legacy allocation or IPC mapping. */
CUresult cuda_vmm_release(void *ptr);
/* The attach handle (GPU_IPC_HANDLE bytes) of the own VMM heap at ptr, or CUDA_ERROR_NOT_FOUND. */
CUresult cuda_vmm_export(void *handle, const void *ptr);
/* Attaches a node peer's VMM heap from its handle for the device of vmm, or CUDA_ERROR_NOT_FOUND
 * when the handle is a legacy IPC handle. */
CUresult cuda_vmm_attach(const struct cuda_vmm *vmm, void **ptr, const void *handle);
/* The device holding the VMM heap that holds ptr, or -1 when no VMM heap does (the driver's
 * pointer query writes no ordinal for VMM memory). */
int cuda_vmm_device_of(const void *ptr);

/* ---- Kernels (cuda_kernels.c), loaded on a device's first use (a JIT compile, once) ---- */
uint64_t cuda_atomic(struct gpu_device *dev, void *word, enum transport_amo op, uint64_t value,
                     uint64_t compare, size_t size);
void cuda_reduce(struct gpu_device *dev, void *acc, const void *in, size_t count,
                 enum kind_reduction what);
void *cuda_scratch(struct gpu_device *dev, size_t bytes);
/* Loads dev's kernels now (gpu_runtime.prepare). */
void cuda_kernels_prepare(struct gpu_device *dev);
/* Kernels on a stream of the program's (gpu_runtime.wait_kernel, atomic_async). */
int cuda_wait_kernel(struct gpu_device *dev, void *stream, const void *word, int cmp,
                     uint64_t value);
int cuda_atomic_async(struct gpu_device *dev, void *stream, void *word, enum transport_amo op,
                      uint64_t value);
/* Issues count writes (entries and data in mapped host memory) as one kernel on stream. */
void cuda_scatter(struct gpu_device *dev, const struct gpu_batch_entry *entries, const char *data,
                  unsigned count, void *stream);

#endif
