/* Device memory (staged.h): every transfer is cut into chunks that pass through a host bounce
 * buffer where a side cannot be loaded or stored, and a remote device target is written, read
 * and updated by its owner on an active message. */
#include "staged.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define STAGED_CHUNK ((size_t)64 * 1024)

/* Atomics on device words are read-modify-write sequences through the kind's copies: one at a
 * time per PE, whether they come from a peer's message or from this PE itself. */
static pthread_mutex_t staged_atomic_lock = PTHREAD_MUTEX_INITIALIZER;

static char *staged_bounce(void)
{
    static __thread char *bounce;
    if (!bounce && !(bounce = malloc(STAGED_CHUNK)))
        log_fatal("shmem_put", "cannot allocate a %zu-byte staging buffer", STAGED_CHUNK);
    return bounce;
}

static struct transport_worker *staged_worker(shmem_ctx_t ctx, const char *routine, int pe)
{
    struct transport_worker *w = ctx != SHMEM_CTX_INVALID ? ctx->worker : NULL;
    if (unlikely(!w))
        rma_report_no_transport(routine, pe);
    return w;
}

/* The device region of this PE with id, checked against the range a message names. */
static struct region *staged_local_region(int id, size_t offset, size_t len)
{
    struct region *region = registry_find_id(id);
    if (!region || kind_direct(region->kind) || offset > region->size ||
        len > region->size - offset)
        return NULL;
    return region;
}

void staged_read_local(const void *addr, void *dest, size_t len)
{
    struct region *region = region_lookup(addr);
    if (region && !kind_direct(region->kind))
        region->kind->copy_out(&region->mem, (size_t)((const char *)addr - region->base), dest,
                               len);
    else
        memcpy(dest, addr, len);
}

static void staged_write_local(void *addr, const void *src, size_t len)
{
    struct region *region = region_lookup(addr);
    if (region && !kind_direct(region->kind))
        region->kind->copy_in(&region->mem, (size_t)((char *)addr - region->base), src, len);
    else
        memcpy(addr, src, len);
}

/* Moves one chunk between host memory and the target, however the target is reached: a put
 * writes data there, a get reads it into data. */
static void staged_chunk(shmem_ctx_t ctx, const char *routine, const struct rma_target *target,
                         size_t at, void *data, size_t len, int pe, int put)
{
    struct region *region = target->region;
    size_t offset = target->offset + at;
    int rc = 0;
    if (target->mapped)
        put ? memcpy(target->mapped + at, data, len) : memcpy(data, target->mapped + at, len);
    else if (pe == rt.my_pe)
        put ? staged_write_local(region->base + offset, data, len)
            : staged_read_local(region->base + offset, data, len);
    else if (!kind_direct(region->kind))
        rc = put ? transport_am_put(staged_worker(ctx, routine, pe), pe, region->id, offset, data,
                                    len)
                 : transport_am_get(staged_worker(ctx, routine, pe), pe, region->id, offset, data,
                                    len);
    else
        rc = put ? transport_put(staged_worker(ctx, routine, pe), pe, region->id, offset, data, len,
                                 0)
                 : transport_get(staged_worker(ctx, routine, pe), pe, region->id, offset, data, len,
                                 0);
    if (rc)
        rma_report_transport(routine, pe);
}

void staged_put(shmem_ctx_t ctx, const char *routine, const struct rma_target *target,
                const void *src, size_t len, int pe)
{
    int src_device = staged_is_device(src);
    for (size_t at = 0; at < len; at += STAGED_CHUNK) {
        size_t chunk = len - at < STAGED_CHUNK ? len - at : STAGED_CHUNK;
        const void *data = (const char *)src + at;
        if (src_device) {
            staged_read_local(data, staged_bounce(), chunk);
            data = staged_bounce();
        }
        staged_chunk(ctx, routine, target, at, (void *)data, chunk, pe, 1);
    }
}

void staged_get(shmem_ctx_t ctx, const char *routine, const struct rma_target *target, void *dest,
                size_t len, int pe)
{
    int dest_device = staged_is_device(dest);
    for (size_t at = 0; at < len; at += STAGED_CHUNK) {
        size_t chunk = len - at < STAGED_CHUNK ? len - at : STAGED_CHUNK;
        char *data = dest_device ? staged_bounce() : (char *)dest + at;
        staged_chunk(ctx, routine, target, at, data, chunk, pe, 0);
        if (dest_device)
            staged_write_local((char *)dest + at, data, chunk);
    }
}

static uint64_t staged_combine(enum transport_amo op, uint64_t old, uint64_t value,
                               uint64_t compare)
{
    switch (op) {
    case TRANSPORT_AMO_ADD:
        return old + value;
    case TRANSPORT_AMO_AND:
        return old & value;
    case TRANSPORT_AMO_OR:
        return old | value;
    case TRANSPORT_AMO_XOR:
        return old ^ value;
    case TRANSPORT_AMO_SWAP:
        return value;
    case TRANSPORT_AMO_CSWAP:
        return old == compare ? value : old;
    }
    return old;
}

/* The atomic itself, on this PE's device word at offset of region. */
static uint64_t staged_atomic_local(struct region *region, size_t offset, enum transport_amo op,
                                    uint64_t value, uint64_t compare, size_t size)
{
    uint64_t mask = size == 4 ? UINT32_MAX : UINT64_MAX, old = 0;
    pthread_mutex_lock(&staged_atomic_lock);
    region->kind->copy_out(&region->mem, offset, &old, size);
    uint64_t next = staged_combine(op, old, value & mask, compare & mask) & mask;
    region->kind->copy_in(&region->mem, offset, &next, size);
    pthread_mutex_unlock(&staged_atomic_lock);
    return old;
}

uint64_t staged_atomic(shmem_ctx_t ctx, const char *routine, enum transport_amo op,
                       const struct rma_target *target, size_t size, uint64_t value,
                       uint64_t compare, int pe)
{
    if (pe == rt.my_pe)
        return staged_atomic_local(target->region, target->offset, op, value, compare, size);
    uint64_t old = 0;
    if (transport_am_atomic(staged_worker(ctx, routine, pe), op, pe, target->region->id,
                            target->offset, value, compare, size, &old))
        rma_report_transport(routine, pe);
    return old;
}

/* ---- The target side: peers' messages, run by this PE's progress engine ---- */
static int staged_on_write(int id, size_t offset, const void *src, size_t len)
{
    struct region *region = staged_local_region(id, offset, len);
    if (!region)
        return -1;
    region->kind->copy_in(&region->mem, offset, src, len);
    return 0;
}

static int staged_on_read(int id, size_t offset, void *dst, size_t len)
{
    struct region *region = staged_local_region(id, offset, len);
    if (!region)
        return -1;
    region->kind->copy_out(&region->mem, offset, dst, len);
    return 0;
}

static int staged_on_atomic(int id, size_t offset, enum transport_amo op, uint64_t value,
                            uint64_t compare, size_t size, uint64_t *old)
{
    struct region *region = staged_local_region(id, offset, size);
    if (!region || (size != 4 && size != 8))
        return -1;
    *old = staged_atomic_local(region, offset, op, value, compare, size);
    return 0;
}

const struct transport_target_ops staged_target_ops = {
    .write = staged_on_write,
    .read = staged_on_read,
    .atomic = staged_on_atomic,
};
