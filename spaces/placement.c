/* SPDX-License-Identifier: BSD-3-Clause */
/* Placement of host heaps (placement.h): huge-page files, hwloc's memory binding, and the
 * kernel's own account of both (/proc/self/smaps, get_mempolicy). */
#define _GNU_SOURCE /* memfd_create */
#include "placement.h"

#include "../common/log.h"
#include "discovery.h"

#include <errno.h>
#include <hwloc.h>
#include <linux/memfd.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int placement_file_create(const struct placement *p, size_t size, int *fd)
{
    unsigned flags = MFD_CLOEXEC;
    if (p->page_size != PLACEMENT_PAGE_TRANSPARENT)
        flags |= MFD_HUGETLB | (unsigned)__builtin_ctzll((unsigned long long)p->page_size)
                                   << MFD_HUGE_SHIFT;
    *fd = memfd_create("strata-heap", flags);
    if (*fd < 0)
        return -1;
    if (ftruncate(*fd, (off_t)size)) {
        int why = errno;
        close(*fd);
        *fd = -1;
        errno = why;
        return -1;
    }
    return 0;
}

static int placement_hwloc_policy(enum placement_policy policy, int *flags)
{
    *flags = HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_NOCPUBIND;
    switch (policy) {
    case PLACEMENT_BIND:
        *flags |= HWLOC_MEMBIND_STRICT;
        return HWLOC_MEMBIND_BIND;
    case PLACEMENT_INTERLEAVE:
        *flags |= HWLOC_MEMBIND_STRICT;
        return HWLOC_MEMBIND_INTERLEAVE;
    default: /* hwloc binds without STRICT as the kernel's "preferred" */
        return HWLOC_MEMBIND_BIND;
    }
}

/* The NUMA policy of [base, base+size), through hwloc. */
static int placement_bind(void *base, size_t size, const struct placement *p)
{
    hwloc_topology_t topo;
    if (discovery_topology_load(&topo, NULL, 0)) {
        log_error("spaces", "hwloc cannot load this node's topology to place a heap");
        return -1;
    }
    hwloc_nodeset_t nodes = hwloc_bitmap_alloc();
    int rc = -1, flags;
    for (int i = 0; nodes && i < 64; i++)
        if (p->nodes >> i & 1)
            hwloc_bitmap_set(nodes, (unsigned)i);
    int policy = placement_hwloc_policy(p->policy, &flags);
    if (nodes)
        rc = hwloc_set_area_membind(topo, base, size, nodes, (hwloc_membind_policy_t)policy, flags);
    if (rc)
        log_error("spaces", "cannot bind %zu bytes to NUMA nodes 0x%llx: %s", size,
                  (unsigned long long)p->nodes, strerror(errno));
    hwloc_bitmap_free(nodes);
    hwloc_topology_destroy(topo);
    return rc ? -1 : 0;
}

int placement_apply(void *base, size_t size, const struct placement *p)
{
    if (p->simulated || !size)
        return 0;
    if (p->policy != PLACEMENT_ANY && placement_bind(base, size, p))
        return -1;
    if (p->page_size == PLACEMENT_PAGE_TRANSPARENT && madvise(base, size, MADV_HUGEPAGE)) {
        if (!p->fall_back)
            log_error("spaces", "madvise(MADV_HUGEPAGE) on %zu bytes: %s", size, strerror(errno));
        return -1;
    }
    /* Huge pages are reserved at mmap but taken from a node at first touch: committing them now
     * makes a node without free pages fail here, not with SIGBUS in the program. */
    if (p->page_size && p->page_size != PLACEMENT_PAGE_TRANSPARENT &&
        madvise(base, size, MADV_POPULATE_WRITE)) {
        if (errno == EINVAL && !p->fall_back)
            log_error("spaces", "this kernel cannot commit huge pages ahead of use "
                                "(MADV_POPULATE_WRITE needs Linux 5.14)");
        return -1;
    }
    return 0;
}

/* The smaps entry of the mapping that starts at base: its kernel page size, and whether it was
 * advised to take transparent huge pages ("hg" among its VmFlags). */
static void placement_smaps(const void *base, size_t *page_size, int *thp_advised)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int inside = 0;
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long start, end, kb;
        if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
            if (inside)
                break;
            inside = start == (unsigned long)(uintptr_t)base;
        } else if (inside && sscanf(line, "KernelPageSize: %lu kB", &kb) == 1) {
            *page_size = (size_t)kb << 10;
        } else if (inside && !strncmp(line, "VmFlags:", 8)) {
            *thp_advised = strstr(line, " hg") != NULL;
        }
    }
    if (f)
        fclose(f);
}

static enum placement_policy placement_from_kernel(int mode)
{
    switch (mode) {
    case MPOL_BIND:
        return PLACEMENT_BIND;
    case MPOL_INTERLEAVE:
        return PLACEMENT_INTERLEAVE;
    case MPOL_PREFERRED:
    case MPOL_PREFERRED_MANY:
        return PLACEMENT_PREFERRED;
    default:
        return PLACEMENT_ANY;
    }
}

void placement_observe(const void *base, const struct placement *p, struct placement *got)
{
    if (p->simulated) {
        *got = *p;
        return;
    }
    memset(got, 0, sizeof(*got));
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int thp_advised = 0;
    placement_smaps(base, &page, &thp_advised);
    got->page_size = page > (size_t)sysconf(_SC_PAGESIZE) ? page
                     : thp_advised && p->page_size == PLACEMENT_PAGE_TRANSPARENT
                         ? PLACEMENT_PAGE_TRANSPARENT
                         : 0;
    int mode = MPOL_DEFAULT;
    unsigned long mask[1024 / (8 * sizeof(unsigned long))] = {0};
    if (syscall(SYS_get_mempolicy, &mode, mask, 1024UL, base, (unsigned long)MPOL_F_ADDR) == 0) {
        got->policy = placement_from_kernel(mode);
        got->nodes = got->policy == PLACEMENT_ANY ? 0 : (uint64_t)mask[0];
    }
}
