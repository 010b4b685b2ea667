/* SPDX-License-Identifier: BSD-3-Clause */
/* Where a host heap's pages go and how large they are: asked for by a space's traits, applied by
 * the host kind as it makes the memory (before anything touches it), and read back from the
 * kernel afterwards, so that a space reports what it got rather than what it asked for. */
#ifndef STRATA_PLACEMENT_H
#define STRATA_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

/* page_size: transparent huge pages (madvise), not a page size the heap is bound to. */
#define PLACEMENT_PAGE_TRANSPARENT ((size_t)-1)

enum placement_policy {
    PLACEMENT_ANY,        /* the kernel's default: near whoever first touches a page */
    PLACEMENT_BIND,       /* only on nodes */
    PLACEMENT_PREFERRED,  /* on nodes while they have room, elsewhere after */
    PLACEMENT_INTERLEAVE, /* page by page over nodes */
};

struct placement {
    size_t page_size; /* 0: the base pages; PLACEMENT_PAGE_TRANSPARENT; else huge pages (hugetlb) */
    enum placement_policy policy;
    uint64_t nodes; /* OS indices of NUMA nodes, with a policy other than PLACEMENT_ANY */
    /* Where the huge pages (or transparent ones) cannot be had: base pages, not a failure. */
    int fall_back;
    /* The nodes are those of a saved topology (a testing aid): nothing is asked of this
     * machine's kernel, and what it would have been asked is what is observed. */
    int simulated;
};

/* Creates the unnamed file of a heap of size bytes (a multiple of the page size) for p's pages,
 * open on *fd: huge pages of the kernel's pool, or for transparent huge pages a file of the
 * kernel's own shared-memory mount, which follows shmem_enabled (a tmpfs such as /dev/shm has
 * its own huge= option, usually never). Returns 0, or -1 with errno (ENOMEM: too few free
 * pages). */
int placement_file_create(const struct placement *p, size_t size, int *fd);
/* Applies p to memory just mapped at base: its NUMA policy, transparent huge pages, and huge
 * pages committed now (so that a shortage fails here, not as a fault later). Returns 0, or -1
 * with the reason logged. */
int placement_apply(void *base, size_t size, const struct placement *p);
/* What the kernel says of the memory at base: page size (its base page size where it holds no
 * huge pages), policy and nodes. */
void placement_observe(const void *base, const struct placement *p, struct placement *got);

#endif
