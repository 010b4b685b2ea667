/* SPDX-License-Identifier: BSD-3-Clause */
/* Strata extensions beyond OpenSHMEM 1.6. The memory-spaces API lives in shmem.h itself, as the
 * spaces proposal specifies. */
#ifndef SHMEMX_H
#define SHMEMX_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* A testing aid: a buffer of the test device kind that belongs to no space, as a program's own
 * cudaMalloc'd buffer would be (its addresses fault on load and store; RMA and collectives take
 * it as a local buffer and copy it through the kind). NULL when no test device stands in on this
 * PE (SHMEM_TEST_DEVICE_PES) or size is 0. */
void *shmemx_test_device_malloc(size_t size);
void shmemx_test_device_free(void *ptr);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
