/* SPDX-License-Identifier: BSD-3-Clause */
/* Strata's extensions (shmemx.h). */
#include "runtime.h"

#include <shmemx.h>

void *shmemx_test_device_malloc(size_t size)
{
    runtime_require_init("shmemx_test_device_malloc");
    if (!rt.devices.chosen[DEVICE_FAMILY_TEST][0] || !size)
        return NULL;
    return kind_testdev_private_alloc(size);
}

void shmemx_test_device_free(void *ptr)
{
    runtime_require_init("shmemx_test_device_free");
    if (ptr && kind_testdev_private_free(ptr) && rt.debug)
        log_error("shmemx_test_device_free",
                  "%p is not a buffer of shmemx_test_device_malloc (PE %d): nothing freed", ptr,
                  rt.my_pe);
}
