/* Accessibility queries and direct pointers (1.6 sections 9.1.7, 9.1.8, 9.2.1). */
#include "runtime.h"

void *shmem_ptr(const void *dest, int pe)
{
    runtime_require_init("shmem_ptr");
    if ((unsigned)pe >= (unsigned)rt.n_pes)
        return NULL;
    struct region *region = region_lookup(dest);
    char *copy = region ? region_route(region, pe)->load_store : NULL;
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
    return region && region_route(region, pe)->kind != ROUTE_NONE;
}
