/* Resolving a symmetric address on a target PE: the region that holds it, and either a direct
 * mapping of the target's copy or the transport. Shared by RMA, signals and atomics. */
#ifndef STRATA_RMA_H
#define STRATA_RMA_H

#include "runtime.h"

#include <stddef.h>

struct rma_target {
    struct region *region;
    size_t offset;
    char *mapped; /* the target's copy in this process, or NULL: use the transport */
};

void rma_report_bad_pe(const char *routine, int pe) __attribute__((noreturn, cold));
void rma_report_bad_address(const char *routine, const void *addr, int pe)
    __attribute__((noreturn, cold));
void rma_report_overrun(const char *routine, const void *addr, size_t len, int pe)
    __attribute__((noreturn, cold));
void rma_report_transport(const char *routine, int pe) __attribute__((noreturn, cold));
void rma_report_not_member(const char *routine, const void *addr, int pe)
    __attribute__((noreturn, cold));
void rma_report_no_transport(const char *routine, int pe) __attribute__((noreturn, cold));

int ctx_translate_pe(shmem_ctx_t ctx, const char *routine, int pe);

/* The world rank of a context's PE argument: the default context numbers PEs in the world team,
 * so it needs no translation and is not even dereferenced. */
static inline int ctx_world_pe(shmem_ctx_t ctx, const char *routine, int pe)
{
    if (likely(ctx == SHMEM_CTX_DEFAULT))
        return pe;
    return ctx_translate_pe(ctx, routine, pe);
}

/* The transport worker of a context, for targets that are not mapped. */
static inline struct transport_worker *ctx_worker(shmem_ctx_t ctx, const char *routine, int pe)
{
    if (unlikely(ctx == SHMEM_CTX_INVALID || !ctx->worker))
        rma_report_no_transport(routine, pe);
    return ctx->worker;
}

static inline struct rma_target rma_resolve(const char *routine, const void *addr, size_t len,
                                            int pe)
{
    if (unlikely((unsigned)pe >= (unsigned)rt.n_pes))
        rma_report_bad_pe(routine, pe);
    struct region *region = region_lookup(addr);
    if (unlikely(!region))
        rma_report_bad_address(routine, addr, pe);
    size_t offset = (size_t)((const char *)addr - region->base);
    if (unlikely(rt.debug && len > region->size - offset))
        rma_report_overrun(routine, addr, len, pe);
    char *peer = region->peer_base[pe];
    if (!peer && unlikely(!region->space->member[pe]))
        rma_report_not_member(routine, addr, pe);
    return (struct rma_target){region, offset, peer ? peer + offset : NULL};
}

/* The common case of p and g, inline: default context, no checks or logging asked for, no
 * device memory anywhere on this PE, and the target's copy mapped here. Returns where to load or
 * store, or NULL for the general path. */
static inline char *rma_mapped_fast(const void *addr, int pe)
{
    if (unlikely((unsigned)pe >= (unsigned)rt.n_pes || rt.debug || rt.device_memory ||
                 (log_mask & LOG_RMA)))
        return NULL;
    struct region *region = region_lookup(addr);
    char *peer = region ? region->peer_base[pe] : NULL;
    return peer ? peer + ((const char *)addr - region->base) : NULL;
}

#endif