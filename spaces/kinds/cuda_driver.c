/* SPDX-License-Identifier: BSD-3-Clause */
/* Resolving the CUDA driver's entry points (cuda_driver.h). */
#include "cuda_driver.h"

#include "../runtimes/device_runtime.h"

#include <stdio.h>

struct cuda_driver cuda;

#define CUDA_SYMBOL_(fn) #fn
#define CUDA_SYMBOL(fn) CUDA_SYMBOL_(fn) /* after cuda.h's renaming */

static int cuda_loaded;

int cuda_driver_load(const char *path, char *why, size_t whylen)
{
    static const struct device_runtime_symbol symbols[] = {
#define CUDA_DRIVER_SYMBOL(fn) {CUDA_SYMBOL(fn), (void **)&cuda.fn},
        CUDA_DRIVER_CALLS(CUDA_DRIVER_SYMBOL)
#undef CUDA_DRIVER_SYMBOL
    };
    if (cuda_loaded)
        return 0;
    if (device_runtime_bind(device_runtime_cuda_open(path), path ? path : "libcuda.so.1", symbols,
                            sizeof(symbols) / sizeof(symbols[0]), "the CUDA driver", why, whylen))
        return -1;
    CUresult rc = cuda.cuInit(0);
    if (rc != CUDA_SUCCESS) {
        snprintf(why, whylen, "cuInit failed (error %d)", (int)rc);
        return -1;
    }
    /* The driver stays loaded once used: its state lives as long as the process. */
    cuda_loaded = 1;
    return 0;
}
