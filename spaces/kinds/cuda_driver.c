/* Resolving the CUDA driver's entry points (cuda_driver.h). */
#include "cuda_driver.h"

#include "../runtimes/runtime.h"

#include <stdio.h>

struct cuda_driver cuda;

#define CUDA_SYMBOL_(fn) #fn
#define CUDA_SYMBOL(fn) CUDA_SYMBOL_(fn) /* after cuda.h's renaming */

static int cuda_loaded;

int cuda_driver_load(const char *path, char *why, size_t whylen)
{
    static const struct runtime_symbol symbols[] = {
#define CUDA_DRIVER_SYMBOL(fn) {CUDA_SYMBOL(fn), (void **)&cuda.fn},
        CUDA_DRIVER_CALLS(CUDA_DRIVER_SYMBOL)
#undef CUDA_DRIVER_SYMBOL
    };
    if (cuda_loaded)
        return 0;
    void *lib = runtime_cuda_open(path);
    CUresult rc;
    if (!lib)
        snprintf(why, whylen, "%s not loadable", path ? path : "libcuda.so.1");
    else if (runtime_resolve(lib, symbols, sizeof(symbols) / sizeof(symbols[0]), "the CUDA driver",
                             why, whylen))
        ;
    else if ((rc = cuda.cuInit(0)) != CUDA_SUCCESS)
        snprintf(why, whylen, "cuInit failed (error %d)", (int)rc);
    else
        cuda_loaded = 1;
    /* The driver stays loaded once used: its state lives as long as the process. */
    return cuda_loaded ? 0 : -1;
}
