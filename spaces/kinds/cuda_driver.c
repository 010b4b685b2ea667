/* Resolving the CUDA driver's entry points (cuda_driver.h). */
#include "cuda_driver.h"

#include "../runtimes/runtime.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

struct cuda_driver cuda;

#define CUDA_SYMBOL_(fn) #fn
#define CUDA_SYMBOL(fn) CUDA_SYMBOL_(fn) /* after cuda.h's renaming */

static pthread_mutex_t cuda_load_lock = PTHREAD_MUTEX_INITIALIZER;
static int cuda_loaded;

static int cuda_resolve(void *lib, char *why, size_t whylen)
{
#define CUDA_DRIVER_RESOLVE(fn)                                                                    \
    if (!(cuda.fn = (__typeof__(fn) *)dlsym(lib, CUDA_SYMBOL(fn)))) {                              \
        snprintf(why, whylen, "the CUDA driver lacks %s", CUDA_SYMBOL(fn));                        \
        return -1;                                                                                 \
    }
    CUDA_DRIVER_CALLS(CUDA_DRIVER_RESOLVE)
#undef CUDA_DRIVER_RESOLVE
    return 0;
}

int cuda_driver_load(const char *path, char *why, size_t whylen)
{
    pthread_mutex_lock(&cuda_load_lock);
    if (!cuda_loaded) {
        void *lib = runtime_cuda_open(path);
        CUresult rc;
        if (!lib)
            snprintf(why, whylen, "%s not loadable", path ? path : "libcuda.so.1");
        else if (cuda_resolve(lib, why, whylen))
            ;
        else if ((rc = cuda.cuInit(0)) != CUDA_SUCCESS)
            snprintf(why, whylen, "cuInit failed (error %d)", (int)rc);
        else
            cuda_loaded = 1;
        /* The driver stays loaded once used: its state lives as long as the process. */
    }
    int loaded = cuda_loaded;
    pthread_mutex_unlock(&cuda_load_lock);
    return loaded ? 0 : -1;
}
