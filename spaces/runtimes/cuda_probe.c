/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA devices through the driver API of libcuda.so.1. Never linked: a machine without the
 * driver (or without a GPU) simply has no CUDA devices. */
#include "device_runtime.h"

#include <dlfcn.h>
#include <stdio.h>

typedef int (*cu_init_fn)(unsigned flags);
typedef int (*cu_count_fn)(int *count);
typedef int (*cu_get_fn)(int *device, int ordinal);
typedef int (*cu_busid_fn)(char *busid, int len, int device);
typedef int (*cu_mem_fn)(size_t *bytes, int device);
typedef int (*cu_current_fn)(void **context);
typedef int (*cu_ctx_device_fn)(int *device);

/* The device of the context the program made current on this thread (cuCtxCreate, or the
 * runtime's cudaSetDevice), or -1: the library never leaves one of its own current. */
static int cuda_program_device(void *lib)
{
    cu_current_fn get_current = (cu_current_fn)dlsym(lib, "cuCtxGetCurrent");
    cu_ctx_device_fn get_device = (cu_ctx_device_fn)dlsym(lib, "cuCtxGetDevice");
    void *context = NULL;
    int device;
    if (!get_current || !get_device || get_current(&context) || !context || get_device(&device))
        return -1;
    return device;
}

void *device_runtime_cuda_open(const char *driver_path)
{
    if (driver_path && *driver_path)
        return dlopen(driver_path, RTLD_NOW | RTLD_LOCAL);
    return device_runtime_library_open("libcuda.so.1");
}

int device_runtime_cuda_in_process(const char *driver_path)
{
    return device_runtime_in_process(driver_path && *driver_path ? driver_path : "libcuda.so.1");
}

int device_runtime_cuda_probe(const char *driver_path, struct device *out, int max,
                              int *program_device, char *why, size_t whylen)
{
    void *lib = device_runtime_cuda_open(driver_path);
    if (!lib) {
        snprintf(why, whylen, "%s not loadable",
                 driver_path && *driver_path ? driver_path : "libcuda.so.1");
        return 0;
    }
    cu_init_fn cu_init = (cu_init_fn)dlsym(lib, "cuInit");
    cu_count_fn cu_count = (cu_count_fn)dlsym(lib, "cuDeviceGetCount");
    cu_get_fn cu_get = (cu_get_fn)dlsym(lib, "cuDeviceGet");
    cu_busid_fn cu_busid = (cu_busid_fn)dlsym(lib, "cuDeviceGetPCIBusId");
    cu_mem_fn cu_mem = (cu_mem_fn)dlsym(lib, "cuDeviceTotalMem_v2");
    int count = 0, rc;
    if (!cu_init || !cu_count || !cu_get || !cu_busid || !cu_mem) {
        snprintf(why, whylen, "libcuda.so.1 lacks the driver API");
        count = 0;
    } else if ((rc = cu_init(0)) != 0 || cu_count(&count) != 0) {
        snprintf(why, whylen, "cuInit failed (error %d)", rc);
        count = 0;
    } else if (count == 0) {
        snprintf(why, whylen, "no CUDA device");
    } else {
        *program_device = cuda_program_device(lib);
    }
    int found = 0;
    for (int i = 0; i < count && found < max; i++) {
        int dev;
        struct device *d = &out[found];
        if (cu_get(&dev, i) || cu_busid(d->busid, sizeof(d->busid), dev) || cu_mem(&d->memory, dev))
            continue;
        d->family = DEVICE_FAMILY_CUDA;
        d->ordinal = i;
        found++;
    }
    /* The driver stays loaded: its state lives as long as the process. */
    if (!found)
        dlclose(lib);
    return found;
}
