/* SPDX-License-Identifier: BSD-3-Clause */
/* Resolving a symmetric address on a target PE to the route that reaches it (spaces/route_table.h):
 * the only place in src/ that decides how to reach a peer. RMA, atomics, signals, waits,
 * shmem_ptr and the collectives read what it gives. */
#ifndef STRATA_ROUTE_TARGET_H
#define STRATA_ROUTE_TARGET_H

#include "runtime.h"

#include <stddef.h>

struct route_target {
    enum route_kind kind;
    struct region *region;
    size_t offset;
    /* load/store or kind copy: the target's bytes as this process reaches them */
    char *pointer;
    /* transport or owner: the worker of the calling context (NULL without a transport) */
    struct transport_worker *worker;
    /* the target's bytes for CPU atomics, where atomics on its space are CPU instructions */
    char *cpu_atomics;
};

/* Stores value into word (symmetric, in the library's or a host space) on world PE pe, for a
 * peer that waits to see it (barrier counters): no quiet waits for it. */
void rma_notify(const char *routine, uint64_t *word, uint64_t value, int pe);
/* A put-with-signal on the default context (len 0: the signal alone, dest unused) whose signal
 * its target waits for before it reads the data or returns (a collective's data and counts): no
 * quiet waits for it, since the target has it by the time it leaves the collective. */
void rma_put_signal_watched(const char *routine, void *dest, const void *src, size_t len,
                            uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
/* Whether the default context's transport reaches world PE pe by message (UCX over TCP): a
 * collective may then mail pe its data (rma_mail) instead of putting it into a slot. */
int rma_reaches_by_message(int pe);
/* Sends len bytes of data to world PE pe's mailbox box, tagged tag (mailbox.h), one way on the
 * default context, in order with its other messages to pe; pe must be reached by message. */
void rma_mail(const char *routine, int pe, uint32_t box, uint64_t tag, const void *data,
              size_t len);
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

/* The route to len bytes at addr on world PE pe, for the context ctx; reports what is wrong
 * (PE out of range, memory not symmetric, a target outside the space) and ends the job. */
static inline struct route_target route_resolve(shmem_ctx_t ctx, const char *routine,
                                                const void *addr, size_t len, int pe)
{
    if (unlikely((unsigned)pe >= (unsigned)rt.n_pes))
        rma_report_bad_pe(routine, pe);
    struct region *region = region_lookup(addr);
    if (unlikely(!region))
        rma_report_bad_address(routine, addr, pe);
    size_t offset = (size_t)((const char *)addr - region->base);
    if (unlikely(rt.debug && len > region->size - offset))
        rma_report_overrun(routine, addr, len, pe);
    struct route route = region_route(region, pe);
    if (unlikely(route.kind == ROUTE_NONE))
        rma_report_not_member(routine, addr, pe);
    char *copy = route.load_store ? route.load_store : route.attached;
    return (struct route_target){route.kind,
                                 region,
                                 offset,
                                 copy ? copy + offset : NULL,
                                 ctx != SHMEM_CTX_INVALID ? ctx->worker : NULL,
                                 route.cpu_atomics ? route.cpu_atomics + offset : NULL};
}

/* The worker of a transport or owner route, reporting a context without one. */
static inline struct transport_worker *route_worker(const struct route_target *target,
                                                    const char *routine, int pe)
{
    if (unlikely(!target->worker))
        rma_report_no_transport(routine, pe);
    return target->worker;
}

/* The common case of p, g, put and get, inline: default context, no checks or logging asked for,
 * and the target's copy loadable and storable here. Returns where to load or store, or NULL for
 * the general path. */
__attribute__((always_inline)) static inline char *route_load_store(const void *addr, int pe)
{
    if (unlikely((unsigned)pe >= (unsigned)rt.n_pes || rt.checked))
        return NULL;
    struct region *region = region_lookup(addr);
    char *copy = region ? region_route(region, pe).load_store : NULL;
    return copy ? copy + ((const char *)addr - region->base) : NULL;
}

/* Whether a local buffer of this PE could be device memory at all. */
static inline int route_local_may_be_device(void)
{
    return space_device_regions | kind_private_kinds;
}

/* 1 when buffer is known to be host memory without a call: no device memory here, or no private
 * device buffers and buffer in this thread's last gap between regions (a program's own stack,
 * heap and globals outside the symmetric ones). 0 means ask route_local_kind. Only right after
 * route_load_store found the target of the same call: its lookup left this thread's cache of the
 * registry current, so the gap's range alone answers. */
__attribute__((always_inline)) static inline int route_local_is_host(const void *buffer)
{
    if (likely(!route_local_may_be_device()))
        return 1;
    return !kind_private_kinds && registry_in_cached_gap_range(buffer);
}

/* The kind that must move the bytes of a local buffer of this PE (a put's source, a get's
 * destination), or NULL for memory the CPU may load and store: a symmetric buffer of a kind
 * without load/store, or the program's own device buffer. Free while this PE has neither. */
__attribute__((always_inline)) static inline const struct kind_ops *
route_local_kind(const void *buffer)
{
    if (likely(!route_local_may_be_device()))
        return NULL;
    if (!kind_private_kinds && registry_in_gap(buffer))
        return NULL; /* private, and no kind hands out private buffers */
    struct region *region = region_lookup(buffer);
    if (region)
        return region_route(region, rt.my_pe).load_store ? NULL : region->kind;
    return kind_private_owner(buffer);
}

#endif
