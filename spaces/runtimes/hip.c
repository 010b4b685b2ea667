/* HIP devices through libamdhip64 (ROCm 6, then 5). Never linked: without ROCm or an AMD GPU
 * there are simply no HIP devices. */
#include "runtime.h"

#include <dlfcn.h>
#include <stdio.h>

typedef int (*hip_count_fn)(int *count);
typedef int (*hip_busid_fn)(char *busid, int len, int device);
typedef int (*hip_mem_fn)(size_t *bytes, int device);

int runtime_hip_probe(struct device *out, int max, char *why, size_t whylen)
{
    void *lib = runtime_library_open("libamdhip64.so.6");
    if (!lib)
        lib = runtime_library_open("libamdhip64.so.5");
    if (!lib) {
        snprintf(why, whylen, "libamdhip64 not loadable");
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
    if (!found)
        dlclose(lib);
    return found;
}
