/* RMA, atomics and reads on device memory: memory of a kind the library may not load or store
 * (spaces/kinds/kind.h: kind_direct). Bytes move through the kind's copy functions and host
 * bounce buffers; a remote target performs the operation itself, from its progress engine,
 * on an active message (transport.h). */
#ifndef STRATA_STAGED_H
#define STRATA_STAGED_H

#include "../transports/transport.h"
#include "rma.h"

/* Whether addr lies in device memory of this PE (cheap when no device space exists). */
static inline int staged_is_device(const void *addr)
{
    if (likely(!rt.device_memory))
        return 0;
    struct region *region = region_lookup(addr);
    return region && !kind_direct(region->kind);
}

/* A put or get where the target is device memory or the local buffer is. Completes before it
 * returns (non-blocking forms included, which the spec allows). */
void staged_put(shmem_ctx_t ctx, const char *routine, const struct rma_target *target,
                const void *src, size_t len, int pe);
void staged_get(shmem_ctx_t ctx, const char *routine, const struct rma_target *target, void *dest,
                size_t len, int pe);
/* An atomic on a device-memory word: performed by its owner, one at a time. */
uint64_t staged_atomic(shmem_ctx_t ctx, const char *routine, enum transport_amo op,
                       const struct rma_target *target, size_t size, uint64_t value,
                       uint64_t compare, int pe);
/* Reads len bytes at addr of this PE, which may be device memory (waits poll through this). */
void staged_read_local(const void *addr, void *dest, size_t len);

/* What this PE's progress engine does for peers' active messages. */
extern const struct transport_target_ops staged_target_ops;

#endif
