/* SPDX-License-Identifier: BSD-3-Clause */
/* The node's memory as a PE sees it: each NUMA node with its kind (DRAM, HBM, far memory), its
 * capacity, its bandwidth and latency from the PE's CPUs where the firmware gives them, whether
 * it is near the PE, and its free huge pages of each size; and the choice of the nodes a
 * space's memory traits name. Read from hwloc and sysfs, or from a saved topology (a testing aid
 * that also places the PE on a CPU of that machine). */
#ifndef STRATA_NUMA_H
#define STRATA_NUMA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Nodes are named by their OS index in a 64-bit set: nodes past index 63 are not offered. */
#define NUMA_MAX_NODES 64
#define NUMA_PAGE_SIZES 4 /* huge page sizes a kernel offers (x86-64: 2 MiB and 1 GiB) */

enum numa_kind { NUMA_KIND_DRAM, NUMA_KIND_HBM, NUMA_KIND_FAR, NUMA_KINDS };

struct numa_node {
    int os_index;
    enum numa_kind kind;
    char subtype[16];                     /* hwloc's name of its memory, "" where it gives none */
    uint64_t capacity;                    /* bytes */
    uint64_t bandwidth;                   /* MiB/s from this PE's CPUs; 0 unknown */
    uint64_t latency;                     /* ns from this PE's CPUs; 0 unknown */
    int local;                            /* near this PE's CPUs */
    uint64_t free_pages[NUMA_PAGE_SIZES]; /* free huge pages of each of page_sizes */
};

struct numa_memory {
    int n_nodes;
    struct numa_node nodes[NUMA_MAX_NODES];
    int n_page_sizes;
    size_t page_sizes[NUMA_PAGE_SIZES]; /* the kernel's huge page sizes, ascending */
    size_t base_page;
    int thp_shared; /* madvise(MADV_HUGEPAGE) gives shared memory transparent huge pages */
    int real;       /* this machine: placement calls act on it (0: a saved topology) */
};

/* Where the memory is read from. */
struct numa_source {
    const char *xml;   /* a saved topology (testing aid), or NULL for this machine */
    const char *sysfs; /* root of this machine's sysfs ("/sys"; tests pass a tree of their own) */
    int local_rank, local_size; /* with xml: the PE is placed on a CPU of that machine by these */
};

/* Fills m. Returns 0, or -1 with the reason in err. */
int numa_discover(const struct numa_source *source, struct numa_memory *m, char *err,
                  size_t errlen);

/* What a space's traits ask of the nodes (the SHMEMX_SPACE_MEMORY_* and _NUMA_* values). */
struct numa_request {
    int has_memory, memory;
    int has_domain, domain;
};
/* The nodes that hold a request, as a set of OS indices (*interleave: spread pages over them).
 * Returns 0, or -1 with the reason in why when no node does. A node index must exist: callers
 * check with numa_node_of. */
int numa_choose(const struct numa_memory *m, const struct numa_request *request, uint64_t *nodes,
                int *interleave, char *why, size_t whylen);
/* The node with OS index os_index, or NULL. */
const struct numa_node *numa_node_of(const struct numa_memory *m, int os_index);
/* The index of size in m's huge page sizes, or -1. */
int numa_page_size_index(const struct numa_memory *m, size_t size);
/* Free huge pages of page bytes on this machine as sysfs (its root) counts them now. */
uint64_t numa_free_pages_now(const char *sysfs, size_t page);
/* Whether madvise(MADV_HUGEPAGE) gives shared memory transparent huge pages on this machine, as
 * sysfs (its root) says now. */
int numa_thp_shared_now(const char *sysfs);
/* Free huge pages of page size index i on the nodes of the set (0: every node), as discovered. */
uint64_t numa_free_pages(const struct numa_memory *m, int i, uint64_t nodes);
const char *numa_kind_name(enum numa_kind kind);
/* One line per node: kind, size, free huge pages, and which measures it wins. */
void numa_print(const struct numa_memory *m, FILE *out);

#endif
