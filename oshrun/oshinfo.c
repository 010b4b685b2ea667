/* SPDX-License-Identifier: BSD-3-Clause */
/* oshinfo: what this Strata build is and how it is configured right now. */
#include "../spaces/discovery.h"
#include "../spaces/numa.h"
#include "../src/knobs.h"
#include "../transports/transport.h"

#include <config.h>
#include <shmem.h>
#include <stdio.h>
#include <string.h>

/* The GPU kinds this build has (configure found their headers). */
#ifdef STRATA_HAVE_CUDA
#define STRATA_KIND_CUDA ", CUDA GPUs"
#else
#define STRATA_KIND_CUDA ""
#endif
#ifdef STRATA_HAVE_HIP
#define STRATA_KIND_HIP ", HIP (AMD) GPUs"
#else
#define STRATA_KIND_HIP ""
#endif

/* The node's memory, as memory traits choose from it (SHMEM_TEST_TOPOLOGY: a saved machine's). */
static int print_memory(const struct knobs *knobs)
{
    struct numa_source source = {*knobs->TEST_TOPOLOGY ? knobs->TEST_TOPOLOGY : NULL, "/sys", 0, 1};
    struct numa_memory memory;
    char err[256];
    printf("Memory of this node (memory traits, as local rank 0 sees it):\n");
    if (numa_discover(&source, &memory, err, sizeof(err))) {
        printf("  %s\n", err);
        return 1;
    }
    numa_print(&memory, stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--knobs-markdown")) {
        knobs_print_markdown(stdout);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "usage: oshinfo [--knobs-markdown]\n");
        return 2;
    }
    printf("Strata %s (OpenSHMEM %d.%d)\n", PACKAGE_VERSION, SHMEM_MAJOR_VERSION,
           SHMEM_MINOR_VERSION);
    printf("Prefix:          %s\n", STRATA_PREFIX);
    const char *configure_args = STRATA_CONFIGURE_ARGS; /* autoconf's list starts with a space */
    printf("Configure args:  %s\n", configure_args + strspn(configure_args, " "));
    printf("Sanitizers:      %s\n", STRATA_SANITIZERS);
    printf(
        "Transports:      direct load/store on the node, and between nodes (SHMEM_TRANSPORT):\n");
    transport_describe(stdout);
    printf("Memory kinds:    host (shared memory)%s%s, test device (a testing aid)\n",
           STRATA_KIND_CUDA, STRATA_KIND_HIP);
    printf("Knobs (environment):\n");
    struct knobs knobs;
    char err[256];
    if (knobs_read(&knobs, err, sizeof(err))) {
        printf("  %s\n", err);
        return 1;
    }
    knobs_print(&knobs, stdout);
    /* As a single PE sees them: local rank 0 of 1. */
    struct discovery_job job = {0,
                                1,
                                0,
                                1,
                                knobs.DEVICE_MAP,
                                knobs.TEST_DEVICE_PES,
                                knobs.TEST_DEVICE_SIZE,
                                knobs.TEST_CUDA_DRIVER,
                                knobs.TEST_HIP_RUNTIME};
    struct discovery found;
    printf("Devices on this node:\n");
    if (discovery_run(&job, &found, err, sizeof(err)) ||
        discovery_probe_gpus(&found, err, sizeof(err))) {
        printf("  %s\n", err);
        return 1;
    }
    discovery_print(&found, stdout);
    printf(
        "  A PE's GPU: the device its program made current before the PE first needs one (a CUDA\n"
        "  context, cuCtxCreate or cudaSetDevice; a HIP device other than 0), else\n"
        "  SHMEM_DEVICE_MAP's entry for its local rank, else one near its CPUs, spread over\n"
        "  local ranks.\n");
    return print_memory(&knobs);
}
