/* Device types -> memory kinds. SHMEM_DEVICE_GPU is the PE's GPU of any vendor; without one, the
 * test device kind stands in on the PEs SHMEM_TEST_DEVICE_PES names (a testing aid). */
#include "space_reach.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

/* Host spaces live in shared-memory files: the smaller of memory and the room of /dev/shm. */
static size_t reach_host_capacity(void)
{
    size_t memory = rt.devices.host_memory;
    struct statvfs fs;
    if (statvfs("/dev/shm", &fs) == 0 && (size_t)fs.f_bavail * fs.f_frsize < memory)
        memory = (size_t)fs.f_bavail * fs.f_frsize;
    return memory;
}

enum space_verdict space_reach(const char *routine, const shmem_space_config_t *config,
                               const struct kind_ops **kind)
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
    switch (config->device_type) {
    case SHMEM_DEVICE_CPU:
        *kind = &kind_host;
        capacity = reach_host_capacity();
        break;
    case SHMEM_DEVICE_GPU: {
        /* No CUDA or HIP memory kind yet: only the test device answers, and only where no real
         * GPU would (the test kind stands in for a GPU, never beside one). */
        const struct device *test = rt.devices.chosen[DEVICE_FAMILY_TEST];
        if (!test || rt.devices.chosen[DEVICE_FAMILY_CUDA] || rt.devices.chosen[DEVICE_FAMILY_HIP])
            return SPACE_NO_DEVICE;
        *kind = &kind_testdev;
        capacity = test->memory;
        break;
    }
    case SHMEM_DEVICE_CUDA:
    case SHMEM_DEVICE_HIP:
        return SPACE_NO_DEVICE; /* no CUDA or HIP memory kind in this release */
    default:
        log_error(routine, "unknown device type %d", (int)config->device_type);
        return SPACE_BAD_CONFIG;
    }
    if (config->size > capacity) {
        log_error(routine, "%zu bytes exceed the %zu bytes of the device", config->size, capacity);
        return SPACE_TOO_BIG;
    }
    return SPACE_REACHABLE;
}

int space_reach_default(const char *name, size_t size, const struct kind_ops **kind, int *type,
                        char *err, size_t errlen)
{
    static const struct {
        const char *name;
        shmem_device_type_t type;
    } types[] = {{"cpu", SHMEM_DEVICE_CPU},
                 {"gpu", SHMEM_DEVICE_GPU},
                 {"cuda", SHMEM_DEVICE_CUDA},
                 {"hip", SHMEM_DEVICE_HIP}};
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        if (strcmp(name, types[i].name))
            continue;
        shmem_space_config_t config = {types[i].type, size, SHMEM_SPACE_FLAG_DEFAULT};
        *type = types[i].type;
        *kind = types[i].type == SHMEM_DEVICE_CPU ? &kind_host : &kind_testdev;
        return space_reach("shmem_init", &config, kind) == SPACE_REACHABLE;
    }
    snprintf(err, errlen, "SHMEM_DEFAULT_SPACE=%s is not one of cpu, gpu, cuda, hip", name);
    return -1;
}
