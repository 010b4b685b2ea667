/* SPDX-License-Identifier: BSD-3-Clause */
/* Device discovery: what memory this PE can reach. At init each PE loads the node's topology
 * (hwloc), asks each device runtime (loaded with dlopen, so none is required) for its devices,
 * and orders its devices per family: the closest to its CPU binding first, spread over local
 * ranks, or as SHMEM_DEVICE_MAP says. A space asks for one by its place in that order
 * (SHMEMX_SPACE_TRAIT_DEVICE_INDEX, 0 by default). The test family stands in for a GPU on the PEs
 * that SHMEM_TEST_DEVICE_PES lists, so device spaces are exercised without one. */
#ifndef STRATA_DISCOVERY_H
#define STRATA_DISCOVERY_H

#include <stddef.h>
#include <stdio.h>

enum device_family { DEVICE_FAMILY_CUDA, DEVICE_FAMILY_HIP, DEVICE_FAMILY_TEST, DEVICE_FAMILIES };

#define DISCOVERY_MAX_DEVICES 32

struct device {
    enum device_family family;
    int ordinal;    /* the runtime's device number */
    size_t memory;  /* bytes */
    char busid[32]; /* PCI bus id ("0000:3b:00.0"), empty for the test device */
};

struct discovery_job {
    int my_pe, n_pes, local_rank, local_size;
    const char *device_map;      /* SHMEM_DEVICE_MAP */
    const char *test_device_pes; /* SHMEM_TEST_DEVICE_PES */
    size_t test_device_size;     /* SHMEM_TEST_DEVICE_SIZE */
    const char *cuda_driver;     /* SHMEM_TEST_CUDA_DRIVER: a stand-in for libcuda.so.1 */
    const char *hip_runtime;     /* SHMEM_TEST_HIP_RUNTIME: a stand-in for libamdhip64 */
};

struct discovery {
    struct discovery_job job;
    int gpus_probed;    /* the GPU runtimes were asked (discovery_probe_gpus) */
    size_t host_memory; /* the node's RAM */
    int n_devices;
    struct device devices[DISCOVERY_MAX_DEVICES]; /* every device on the node */
    /* This PE's devices, per family, in the order of SHMEMX_SPACE_TRAIT_DEVICE_INDEX: [0] the
     * one it uses unless told otherwise, NULL after the last (n_chosen). */
    const struct device *chosen[DEVICE_FAMILIES][DISCOVERY_MAX_DEVICES];
    int n_chosen[DEVICE_FAMILIES];
    int program_chose[DEVICE_FAMILIES]; /* chosen[f][0] is the device the program was on */
    char absent[DEVICE_FAMILIES][96];   /* why a family has no device here */
};

/* Fills d for this PE: host memory and the test device (one, index 0). The GPU runtimes are not
 * touched (a CPU-only job never loads them). Returns 0, or -1 with a message naming the knob and
 * its bad value. */
int discovery_run(const struct discovery_job *job, struct discovery *d, char *err, size_t errlen);
/* Asks the GPU runtimes (loaded here, the first time) for their devices and orders this PE's:
 * the device the program chose on the calling thread (a CUDA context current, a HIP device
 * other than 0) first, then the others by locality; else SHMEM_DEVICE_MAP's entry (only the
 * devices it lists, in its order); else the closest (spread over local ranks) first, then the
 * others by locality. Returns 0, or -1 with a message naming SHMEM_DEVICE_MAP when it is
 * malformed or names a device that does not exist. */
int discovery_probe_gpus(struct discovery *d, char *err, size_t errlen);
/* The family of the GPU runtime the program has loaded itself (CUDA first), or DEVICE_FAMILIES
 * when it has none: asking loads nothing. */
enum device_family discovery_program_runtime(const struct discovery *d);
void discovery_print(const struct discovery *d, FILE *out);
const char *discovery_family_name(enum device_family family);

/* Loads the topology of this machine (xml NULL) or a saved one, with the PCI devices where
 * with_io is set, never through hwloc's accelerator components (they would load GPU runtimes
 * behind Strata's back). Returns 0 or -1. */
struct hwloc_topology;
int discovery_topology_load(struct hwloc_topology **topo, const char *xml, int with_io);

/* ---- Parts, exposed for the unit test ---- */
/* Whether pe is in a list of ranks and ranges ("0,2", "1-3"); -1 for a malformed list or a rank
 * outside 0..n_pes-1. */
int discovery_pe_listed(const char *list, int pe, int n_pes);
/* The SHMEM_DEVICE_MAP entry of local_rank ("1", "1+3", "-"): its device ordinals, at most max,
 * into devices, and how many (0 for "-", no device); -2 when the map is empty, -3 when it is
 * malformed (a device twice in an entry included). */
int discovery_map_entry(const char *map, int local_rank, int *devices, int max);
/* Index into busids of the device closest to cpuset_string (a hwloc bitmap string, or NULL for
 * an unbound PE) in the topology at xml_or_null (NULL: this machine), spreading local ranks
 * round-robin over equally close devices, with the order of all n in order (the pick first, then
 * those near the PE, then the others). -1 when n is 0. */
int discovery_pick(const char *xml_or_null, const char *const *busids, int n,
                   const char *cpuset_string, int local_rank, int *order);

#endif
