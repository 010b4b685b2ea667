/* SPDX-License-Identifier: BSD-3-Clause */
/* Accessibility queries and direct pointers (1.6 sections 9.1.7, 9.1.8, 9.2.1). */
#include "runtime.h"

/* The copy of pe the CPU may load and store, or, in a space of a kind node peers attach (a GPU),
 * the copy as this process maps it, for the program's own device code (as nvshmem_ptr): either
 * way a pointer the caller can use on the memory's own terms. */
void *shmem_ptr(const void *dest, int pe)
{
    runtime_require_init("shmem_ptr");
    if ((unsigned)pe >= (unsigned)rt.n_pes)
        return NULL;
    struct region *region = region_lookup(dest);
    if (!region)
        return NULL;
    struct route route = region_route(region, pe);
    char *copy = route.load_store;
    if (!copy && route.kind == ROUTE_KIND_COPY && kind_can(region->kind, KIND_CAP_PEER_ATTACH))
        copy = route.attached;
    return copy ? copy + ((const char *)dest - region->base) : NULL;
}

int shmem_pe_accessible(int pe)
{
    runtime_require_init("shmem_pe_accessible");
    return (unsigned)pe < (unsigned)rt.n_pes;
}

int shmem_addr_accessible(const void *addr, int pe)
{
    runtime_require_init("shmem_addr_accessible");
    if ((unsigned)pe >= (unsigned)rt.n_pes)
        return 0;
    struct region *region = region_lookup(addr);
    return region && region_route(region, pe).kind != ROUTE_NONE;
}
