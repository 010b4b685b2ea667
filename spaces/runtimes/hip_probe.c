/* SPDX-License-Identifier: BSD-3-Clause */
/* HIP devices through libamdhip64, the newest the node has (ROCm 7, 6, then 5). Never linked:
 * without ROCm or an AMD GPU there are simply no HIP devices. */
#include "device_runtime.h"

#include <dlfcn.h>
#include <stdio.h>

typedef int (*hip_count_fn)(int *count);
typedef int (*hip_busid_fn)(char *busid, int len, int device);
typedef int (*hip_mem_fn)(size_t *bytes, int device);
typedef int (*hip_get_device_fn)(int *device);

/* The device the program set on this thread (hipSetDevice), or -1. A thread starts on device 0,
 * so a program's choice of device 0 looks like no choice: SHMEM_DEVICE_MAP says it then. */
static int hip_program_device(void *lib)
{
    hip_get_device_fn get_device = (hip_get_device_fn)dlsym(lib, "hipGetDevice");
    int device = 0;
    if (!get_device || get_device(&device) || device == 0)
        return -1;
    return device;
}

static const char *const hip_sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                          "libamdhip64.so.5"};
#define HIP_SONAMES (sizeof(hip_sonames) / sizeof(hip_sonames[0]))

void *device_runtime_hip_open(const char *runtime_path)
{
    if (runtime_path && *runtime_path)
        return dlopen(runtime_path, RTLD_NOW | RTLD_LOCAL);
    void *lib = NULL;
    for (size_t i = 0; i < HIP_SONAMES && !lib; i++)
        lib = device_runtime_library_open(hip_sonames[i]);
    return lib;
}

int device_runtime_hip_in_process(const char *runtime_path)
{
    if (runtime_path && *runtime_path)
        return device_runtime_in_process(runtime_path);
    for (size_t i = 0; i < HIP_SONAMES; i++)
        if (device_runtime_in_process(hip_sonames[i]))
            return 1;
    return 0;
}

int device_runtime_hip_probe(const char *runtime_path, struct device *out, int max,
                             int *program_device, char *why, size_t whylen)
{
    void *lib = device_runtime_hip_open(runtime_path);
    if (!lib) {
        snprintf(why, whylen, "%s not loadable",
                 runtime_path && *runtime_path ? runtime_path : "libamdhip64");
        return 0;
    }
    hip_count_fn hip_count = (hip_count_fn)dlsym(lib, "hipGetDeviceCount");
    hip_busid_fn hip_busid = (hip_busid_fn)dlsym(lib, "hipDeviceGetPCIBusId");
    hip_mem_fn hip_mem = (hip_mem_fn)dlsym(lib, "hipDeviceTotalMem");
    int count = 0, rc = -1;
    if (!hip_count || !hip_busid || !hip_mem)
        snprintf(why, whylen, "libamdhip64 lacks the runtime API");
    else if ((rc = hip_count(&count)) != 0 || count == 0) {
        snprintf(why, whylen, "no HIP device (error %d)", rc);
        count = 0;
    } else {
        *program_device = hip_program_device(lib);
    }
    int found = 0;
    for (int i = 0; i < count && found < max; i++) {
        struct device *d = &out[found];
        if (hip_busid(d->busid, sizeof(d->busid), i) || hip_mem(&d->memory, i))
            continue;
        d->family = DEVICE_FAMILY_HIP;
        d->ordinal = i;
        found++;
    }
    /* The runtime stays loaded: its state lives as long as the process. */
    if (!found)
        dlclose(lib);
    return found;
}
