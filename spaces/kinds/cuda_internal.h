/* What the CUDA kind's files share: cuda.c (the driver's calls for the GPU kind core, gpu.h) and
 * cuda_kernels.c (the PTX kernels: atomics, reductions, the batch scatter). */
#ifndef STRATA_CUDA_INTERNAL_H
#define STRATA_CUDA_INTERNAL_H

#include "cuda_driver.h"
#include "gpu.h"

#include <stdint.h>

/* Ends the process with a message naming what failed, unless rc is success. */
void cuda_check(CUresult rc, const char *what);
/* Makes the device's primary context current on the calling thread. */
void cuda_enter(void);

static inline CUdeviceptr cuda_address(const void *ptr)
{
    return (CUdeviceptr)(uintptr_t)ptr;
}

/* ---- Kernels (cuda_kernels.c), loaded on first use (a JIT compile of about 90 ms) ---- */
uint64_t cuda_atomic(void *word, enum transport_amo op, uint64_t value, uint64_t compare,
                     size_t size);
void cuda_reduce(void *acc, const void *in, size_t count, enum kind_reduction what);
void *cuda_scratch(size_t bytes);
/* Issues count writes (entries and data in mapped host memory) as one kernel on stream. */
void cuda_scatter(const struct gpu_batch_entry *entries, const char *data, unsigned count,
                  void *stream);

#endif
