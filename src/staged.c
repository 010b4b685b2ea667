/* SPDX-License-Identifier: BSD-3-Clause */
/* Device memory (staged.h): every transfer is cut into chunks that pass through a host bounce
 * buffer where a side is device memory the other side's mechanism cannot reach, and a target
 * reached through its owner is written, read and updated by the owner on an active message. */
#include "staged.h"

#include "../common/copy.h"
#include "amo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define STAGED_CHUNK ((size_t)64 * 1024)

/* Atomics on device words are read-modify-write sequences through the kind's copies: one at a
 * time per PE, whether they come from a peer's message or from this PE itself. */
static pthread_mutex_t staged_atomic_lock = PTHREAD_MUTEX_INITIALIZER;

static char *staged_bounce(const char *routine)
{
    static __thread char *bounce;
    if (!bounce && !(bounce = malloc(STAGED_CHUNK)))
        log_fatal(routine, "cannot allocate a %zu-byte staging buffer", STAGED_CHUNK);
    return bounce;
}

/* This PE's copy of (id, offset, len) for a peer's message, in range: device memory (*kind set),
 * or host memory (*kind NULL), which peers reached by message also write and update. */
static char *staged_local_copy(int id, size_t offset, size_t len, const struct kind_ops **kind)
{
    struct region *region = registry_find_id(id);
    if (!region || offset > region->size || len > region->size - offset)
        return NULL;
    struct route self = region_route(region, rt.my_pe);
    *kind = self.load_store ? NULL : region->kind;
    if (self.load_store)
        return self.load_store + offset;
    return self.kind == ROUTE_KIND_COPY ? self.attached + offset : NULL;
}

void staged_read_local(const void *addr, void *dest, size_t len)
{
    struct region *region = region_lookup(addr);
    if (region && !region_route(region, rt.my_pe).load_store)
        region->kind->copy_to_host(dest, addr, len);
    else
        copy_bulk(dest, addr, len);
}

/* Moves one chunk between host memory data and the target, however it is reached: a put writes
 * data there, a get reads the target into data. */
static void staged_chunk(const char *routine, const struct route_target *target, size_t at,
                         void *data, size_t len, int pe, int put, int queue)
{
    const struct kind_ops *kind = target->region->kind;
    char *there = target->pointer + at;
    size_t offset = target->offset + at;
    int id = target->region->id, rc = 0;
    switch (target->kind) {
    case ROUTE_LOAD_STORE:
        if (put)
            copy_once(there, data, len);
        else
            copy_bulk(data, there, len);
        break;
    case ROUTE_KIND_COPY:
        if (put) {
            kind->copy_from_host(there, data, len, queue);
            kind_wrote(kind, queue); /* owed to the context's next quiet or fence */
        } else {
            kind->copy_to_host(data, there, len);
        }
        break;
    case ROUTE_TRANSPORT:
        rc = put ? transport_put(route_worker(target, routine, pe), pe, id, offset, data, len, 0)
                 : transport_get(route_worker(target, routine, pe), pe, id, offset, data, len, 0);
        break;
    case ROUTE_OWNER:
        rc = put ? transport_am_put(route_worker(target, routine, pe), pe, id, offset, data, len)
                 : transport_am_get(route_worker(target, routine, pe), pe, id, offset, data, len);
        break;
    case ROUTE_NONE:
        rma_report_not_member(routine, target->region->base + target->offset, pe);
    }
    if (rc)
        rma_report_transport(routine, pe);
}

/* Whether a kind copies between local and target memory itself, with no host bounce: both are
 * memory of one kind that has a device-to-device copy. */
static int staged_direct(const struct route_target *target, const struct kind_ops *local_kind)
{
    return local_kind && target->kind == ROUTE_KIND_COPY && local_kind == target->region->kind &&
           local_kind->copy;
}

/* A side in host memory and the other reached by a kind's copy engine move in one copy; a
 * bounce buffer, in chunks, is only for two sides that no single mechanism reaches. */
void staged_put(shmem_ctx_t ctx, const char *routine, const struct route_target *target,
                const void *src, const struct kind_ops *src_kind, size_t len, int pe, int nbi)
{
    const struct kind_ops *kind = target->region->kind;
    if (staged_direct(target, src_kind)) {
        src_kind->copy(target->pointer, src, len, ctx->queue);
        if (nbi)
            kind_wrote(src_kind, ctx->queue);
        else
            kind_land(src_kind, ctx->queue); /* it reads src later; src is the caller's on return */
        return;
    }
    if (src_kind && target->kind == ROUTE_LOAD_STORE) { /* straight into the mapped copy */
        src_kind->copy_to_host(target->pointer, src, len);
        return;
    }
    if (!src_kind && target->kind == ROUTE_KIND_COPY) { /* straight from host memory */
        kind->copy_from_host(target->pointer, src, len, ctx->queue);
        kind_wrote(kind, ctx->queue); /* owed to the context's next quiet or fence */
        return;
    }
    for (size_t at = 0; at < len; at += STAGED_CHUNK) {
        size_t chunk = len - at < STAGED_CHUNK ? len - at : STAGED_CHUNK;
        const char *data = (const char *)src + at;
        if (src_kind) {
            src_kind->copy_to_host(staged_bounce(routine), data, chunk);
            data = staged_bounce(routine);
        }
        staged_chunk(routine, target, at, (void *)data, chunk, pe, 1, ctx->queue);
    }
}

void staged_get(shmem_ctx_t ctx, const char *routine, const struct route_target *target, void *dest,
                const struct kind_ops *dest_kind, size_t len, int pe, int nbi)
{
    const struct kind_ops *kind = target->region->kind;
    int queue = ctx->queue;
    if (staged_direct(target, dest_kind)) {
        dest_kind->copy(dest, target->pointer, len, queue);
        if (nbi) {
            kind_wrote(dest_kind, queue); /* dest is filled by the quiet */
            return;
        }
    } else if (dest_kind && target->kind == ROUTE_LOAD_STORE) { /* straight from the mapped copy */
        dest_kind->copy_from_host(dest, target->pointer, len, queue);
    } else if (!dest_kind && target->kind == ROUTE_KIND_COPY) { /* straight into host memory */
        kind->copy_to_host(dest, target->pointer, len);
    } else {
        for (size_t at = 0; at < len; at += STAGED_CHUNK) {
            size_t chunk = len - at < STAGED_CHUNK ? len - at : STAGED_CHUNK;
            char *data = (char *)dest + at;
            staged_chunk(routine, target, at, dest_kind ? staged_bounce(routine) : data, chunk, pe,
                         0, queue);
            if (dest_kind)
                dest_kind->copy_from_host(data, staged_bounce(routine), chunk, queue);
        }
    }
    if (dest_kind)
        kind_land(dest_kind, queue); /* a get returns with dest filled */
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

/* The atomic itself, on a device word the kind's copies reach: the kind's own atomic, or a
 * read-modify-write that only the owner does. */
static uint64_t staged_atomic_copy(const struct kind_ops *kind, char *word, enum transport_amo op,
                                   uint64_t value, uint64_t compare, size_t size)
{
    if (kind->atomic)
        return kind->atomic(word, op, value, compare, size);
    uint64_t mask = size == 4 ? UINT32_MAX : UINT64_MAX, old = 0;
    pthread_mutex_lock(&staged_atomic_lock);
    kind->copy_to_host(&old, word, size);
    uint64_t next = staged_combine(op, old, value & mask, compare & mask) & mask;
    kind->copy_from_host(word, &next, size, 0);
    kind_land(kind, 0); /* the next atomic reads it */
    pthread_mutex_unlock(&staged_atomic_lock);
    return old;
}

uint64_t staged_atomic(const char *routine, enum transport_amo op,
                       const struct route_target *target, size_t size, uint64_t value,
                       uint64_t compare, int pe)
{
    /* A kind without atomics of its own, or whose atomics do not reach a node peer's device,
     * leaves that peer's words to their owner. */
    const struct kind_ops *kind = target->region->kind;
    if (target->kind == ROUTE_KIND_COPY &&
        (pe == rt.my_pe ||
         (kind->atomic && (!kind->atomic_reaches || kind->atomic_reaches(target->pointer)))))
        return staged_atomic_copy(kind, target->pointer, op, value, compare, size);
    uint64_t old = 0;
    if (transport_am_atomic(route_worker(target, routine, pe), op, pe, target->region->id,
                            target->offset, value, compare, size, &old))
        rma_report_transport(routine, pe);
    return old;
}

/* ---- The target side: peers' messages, run by this PE's progress engine (device memory, and
 * host memory of a PE that peers reach by message) ---- */
static int staged_on_write(int id, size_t offset, const void *src, size_t len)
{
    const struct kind_ops *kind;
    char *copy = staged_local_copy(id, offset, len, &kind);
    if (!copy)
        return -1;
    if (!kind) {
        copy_once(copy, src, len);
        return 0;
    }
    kind->copy_from_host(copy, src, len, 0);
    kind_land(kind, 0); /* acknowledged as done once this returns */
    return 0;
}

static int staged_on_read(int id, size_t offset, void *dst, size_t len)
{
    const struct kind_ops *kind;
    char *copy = staged_local_copy(id, offset, len, &kind);
    if (!copy)
        return -1;
    if (!kind)
        copy_bulk(dst, copy, len);
    else
        kind->copy_to_host(dst, copy, len);
    return 0;
}

static int staged_on_atomic(int id, size_t offset, enum transport_amo op, uint64_t value,
                            uint64_t compare, size_t size, uint64_t *old)
{
    const struct kind_ops *kind;
    char *copy = staged_local_copy(id, offset, size, &kind);
    if (!copy || (size != 4 && size != 8))
        return -1;
    if (!kind)
        *old = size == 4 ? AMO_CPU(uint32_t, copy, op, value, compare)
                         : AMO_CPU(uint64_t, copy, op, value, compare);
    else
        *old = staged_atomic_copy(kind, copy, op, value, compare, size);
    return 0;
}

static void *staged_on_host_place(int id, size_t offset, size_t len)
{
    const struct kind_ops *kind = NULL;
    char *copy = staged_local_copy(id, offset, len, &kind);
    return kind ? NULL : copy;
}

const struct transport_target_ops staged_target_ops = {
    .write = staged_on_write,
    .read = staged_on_read,
    .atomic = staged_on_atomic,
    .host_place = staged_on_host_place,
};
