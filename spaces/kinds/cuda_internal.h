/* What the CUDA kind's files share: cuda.c (set-up, heaps, IPC, copies), cuda_kernels.c (the PTX
 * kernels: atomics, reductions, the batch scatter) and cuda_batch.c (small writes applied
 * together). Every piece of work the kind issues goes on one stream, in the order issued. */
#ifndef STRATA_CUDA_INTERNAL_H
#define STRATA_CUDA_INTERNAL_H

#include "cuda_driver.h"
#include "kind.h"

#include <stdint.h>

extern CUstream cuda_stream; /* the library's copies and kernels */

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
/* One write of a batch: len bytes at offset in its data to dst. */
struct cuda_batch_entry {
    uint64_t dst, offset, len;
};
/* Issues count writes (entries and data in mapped host memory) as one kernel on the stream. */
void cuda_scatter(const struct cuda_batch_entry *entries, const char *data, unsigned count);

/* ---- Batched small writes (cuda_batch.c) ---- */
#define CUDA_BATCH_SMALL 512 /* bytes: larger writes are copies of their own */
/* Queues a write of len (at most CUDA_BATCH_SMALL) bytes of src to dst; src is copied now. */
void cuda_batch_write(void *dst, const void *src, size_t len);
/* Issues the queued writes on the stream. Called before any other work is issued there, so the
 * stream applies every write in the order the library made it. */
void cuda_batch_flush(void);
/* Issues the queued writes and waits for everything on the stream. */
void cuda_batch_sync(void);

#endif
