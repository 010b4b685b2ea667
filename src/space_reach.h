/* SPDX-License-Identifier: BSD-3-Clause */
/* Whether this PE can hold a space of a given configuration, and in which memory kind: the
 * bridge between the device types of the API and what discovery found on this PE. */
#ifndef STRATA_SPACE_REACH_H
#define STRATA_SPACE_REACH_H

#include "runtime.h"

enum space_verdict {
    SPACE_REACHABLE,  /* this PE has the device and room for the size */
    SPACE_NO_DEVICE,  /* this PE cannot reach the device type */
    SPACE_TOO_BIG,    /* it can, but the size exceeds the device's memory */
    SPACE_BAD_CONFIG, /* the configuration is invalid everywhere */
};

/* The verdict for config on this PE's device of the type at device_index (discovery.h; the
 * host is one device), and the kind to use when reachable. A bad configuration is reported,
 * naming routine and the bad value; why tells why this PE has no such device, where it has not
 * as many. */
enum space_verdict space_reach(const char *routine, const shmem_space_config_t *config,
                               int device_index, const struct kind_ops **kind, char *why,
                               size_t whylen);

/* The verdict for a default space of size bytes on SHMEM_DEFAULT_SPACE's device type (a name the
 * knob table accepted: cpu, gpu, cuda or hip), with the type and the kind to use. */
enum space_verdict space_reach_default(const char *name, size_t size, const struct kind_ops **kind,
                                       int *type);

/* A program that set a GPU runtime up before shmem_init (it picks its device first) may give RMA
 * its own device buffers before it makes any GPU space: where the program has loaded a runtime,
 * its kind is set up now, so those buffers are recognised. Elsewhere runtimes are loaded only
 * when a space asks for a GPU. */
void space_reach_program_gpus(void);

/* The most host memory a PE can hold in a space: the smaller of the node's memory and the free
 * room of /dev/shm, which holds host heaps. where describes both, for messages. */
size_t space_reach_host_capacity(char *where, size_t len);

#endif
