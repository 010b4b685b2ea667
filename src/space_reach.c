/* SPDX-License-Identifier: BSD-3-Clause */
/* Device types -> memory kinds. SHMEM_DEVICE_GPU is the PE's GPU of any vendor, or, when
 * SHMEM_TEST_DEVICE_PES is set, the test device kind on the PEs it names (a testing aid). */
#include "space_reach.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

size_t space_reach_host_capacity(char *where, size_t len)
{
    size_t memory = rt.devices.host_memory, room = memory;
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) == 0)
        room = (size_t)fs.f_bavail * fs.f_frsize;
    snprintf(where, len,
             "/dev/shm, where host heaps live, has %zu bytes free and memory is %zu bytes", room,
             memory);
    return room < memory ? room : memory;
}

/* GPU runtimes are loaded when a space first asks for a GPU, not by every PE at start-up.
 * Returns 0, or -1 after reporting a malformed SHMEM_DEVICE_MAP. */
static int reach_gpus(const char *routine)
{
    char err[256];
    if (discovery_probe_gpus(&rt.devices, err, sizeof(err)) == 0)
        return 0;
    log_error(routine, "%s", err);
    return -1;
}

/* Sets up the kind of a GPU family on device ordinal: NULL with the reason in why when it cannot
 * be used, or with why empty when the build has no such kind (configure found no headers). */
static const struct kind_ops *reach_kind(enum device_family family, int ordinal, char *why,
                                         size_t len)
{
    struct kind_gpu_setup setup = {NULL, ordinal, rt.n_pes, rt.knobs.GPU_COPY_ENGINES_ONLY};
    (void)setup; /* unused in a build without GPU kinds */
    (void)why;
    (void)len;
    switch (family) {
#ifdef STRATA_HAVE_CUDA
    case DEVICE_FAMILY_CUDA:
        setup.runtime_path = rt.devices.job.cuda_driver;
        return kind_cuda_use(&setup, why, len);
#endif
#ifdef STRATA_HAVE_HIP
    case DEVICE_FAMILY_HIP:
        setup.runtime_path = rt.devices.job.hip_runtime;
        return kind_hip_use(&setup, why, len);
#endif
    default:
        return NULL;
    }
}

/* The device at index of this PE's devices of family (discovery.h), or NULL with why where it
 * has not as many. */
static const struct device *reach_device(enum device_family family, int index, char *why,
                                         size_t whylen)
{
    int n = rt.devices.n_chosen[family];
    if (index >= 0 && index < n)
        return rt.devices.chosen[family][index];
    if (n)
        snprintf(why, whylen, "device_index %d: this PE has %d %s device%s", index, n,
                 discovery_family_name(family), n == 1 ? "" : "s");
    return NULL;
}

/* The kind of this PE's GPU of family at index. Returns 0, or -1 when it has none or it cannot
 * be used (reported: a device that discovery found but the runtime refuses is worth knowing
 * about). */
static int reach_gpu(const char *routine, enum device_family family, int index,
                     const struct kind_ops **kind, size_t *capacity, char *absent, size_t len)
{
    const struct device *gpu = reach_device(family, index, absent, len);
    char why[160] = "";
    const struct kind_ops *found = gpu ? reach_kind(family, gpu->ordinal, why, sizeof(why)) : NULL;
    if (!found) {
        if (*why)
            log_error(routine, "%s", why);
        return -1;
    }
    *kind = found;
    *capacity = gpu->memory;
    return 0;
}

void space_reach_program_gpus(void)
{
    enum device_family family = discovery_program_runtime(&rt.devices);
    const struct kind_ops *kind;
    size_t capacity;
    char absent[96];
    if (family != DEVICE_FAMILIES && reach_gpus("shmem_init") == 0)
        reach_gpu("shmem_init", family, 0, &kind, &capacity, absent, sizeof(absent));
}

enum space_verdict space_reach(const char *routine, const shmem_space_config_t *config,
                               int device_index, const struct kind_ops **kind, char *why,
                               size_t whylen)
{
    if (!config) {
        log_error(routine, "config is NULL");
        return SPACE_BAD_CONFIG;
    }
    if (config->flags != SHMEM_SPACE_FLAG_DEFAULT) {
        log_error(routine, "unknown flags 0x%x in the space configuration", config->flags);
        return SPACE_BAD_CONFIG;
    }
    if (config->size == 0) {
        log_error(routine, "the space size is 0 bytes");
        return SPACE_BAD_CONFIG;
    }
    size_t capacity;
    char where[160] = "";
    switch (config->device_type) {
    case SHMEM_DEVICE_CPU:
        if (device_index != 0) {
            snprintf(why, whylen, "device_index %d: the host is one device", device_index);
            return SPACE_NO_DEVICE;
        }
        *kind = &kind_host;
        capacity = space_reach_host_capacity(where, sizeof(where));
        break;
    case SHMEM_DEVICE_GPU:
        if (reach_gpus(routine))
            return SPACE_NO_DEVICE;
        /* Asked for, the test device answers on the PEs it lists and no other, even beside a
         * real GPU: a space's members must all have the same kind. */
        if (*rt.knobs.TEST_DEVICE_PES) {
            const struct device *test = reach_device(DEVICE_FAMILY_TEST, device_index, why, whylen);
            if (!test)
                return SPACE_NO_DEVICE;
            *kind = &kind_testdev;
            capacity = test->memory;
            break;
        }
        /* The PE's GPU of any vendor: NVIDIA's where it has one, else AMD's. */
        if (reach_gpu(routine,
                      rt.devices.n_chosen[DEVICE_FAMILY_CUDA] ? DEVICE_FAMILY_CUDA
                                                              : DEVICE_FAMILY_HIP,
                      device_index, kind, &capacity, why, whylen))
            return SPACE_NO_DEVICE;
        break;
    case SHMEM_DEVICE_CUDA:
        if (reach_gpus(routine) ||
            reach_gpu(routine, DEVICE_FAMILY_CUDA, device_index, kind, &capacity, why, whylen))
            return SPACE_NO_DEVICE;
        break;
    case SHMEM_DEVICE_HIP:
        if (reach_gpus(routine) ||
            reach_gpu(routine, DEVICE_FAMILY_HIP, device_index, kind, &capacity, why, whylen))
            return SPACE_NO_DEVICE;
        break;
    default:
        log_error(routine, "unknown device type %d", (int)config->device_type);
        return SPACE_BAD_CONFIG;
    }
    if (config->size > capacity) {
        log_error(routine, "%zu bytes exceed the %zu bytes of the device%s%s", config->size,
                  capacity, *where ? ": " : "", where);
        return SPACE_TOO_BIG;
    }
    return SPACE_REACHABLE;
}

enum space_verdict space_reach_default(const char *name, size_t size, const struct kind_ops **kind,
                                       int *type)
{
    static const struct {
        const char *name;
        shmem_device_type_t type;
    } types[] = {{"gpu", SHMEM_DEVICE_GPU}, {"cuda", SHMEM_DEVICE_CUDA}, {"hip", SHMEM_DEVICE_HIP}};
    shmem_space_config_t config = {SHMEM_DEVICE_CPU, size, SHMEM_SPACE_FLAG_DEFAULT};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (!strcmp(name, types[i].name))
            config.device_type = types[i].type;
    *type = (int)config.device_type;
    char why[96];
    return space_reach("shmem_init", &config, 0, kind, why, sizeof(why));
}
