/* SPDX-License-Identifier: BSD-3-Clause */
/* Atomic operations on symmetric words, by the route of the target (spaces/route_table.h): CPU
 * instructions where the route allows them, the transport's atomics, or the kind's copy engine
 * and the owner for device memory. Used by signals and the internal barrier too. */
#ifndef STRATA_AMO_H
#define STRATA_AMO_H

#include "../transports/transport.h"
#include "runtime.h"

#include <stdint.h>

/* CPU atomics on a mapped word. Fetching AND/OR/XOR are done here, never by UCX over shared
 * memory, whose fetching forms store a wrong value on this platform. */
#define AMO_CPU(TYPE, word, op, value, compare)                                                    \
    ({                                                                                             \
        TYPE *w_ = (TYPE *)(word), v_ = (TYPE)(value), c_ = (TYPE)(compare), old_ = 0;             \
        switch (op) {                                                                              \
        case TRANSPORT_AMO_ADD:                                                                    \
            old_ = __atomic_fetch_add(w_, v_, __ATOMIC_SEQ_CST);                                   \
            break;                                                                                 \
        case TRANSPORT_AMO_AND:                                                                    \
            old_ = __atomic_fetch_and(w_, v_, __ATOMIC_SEQ_CST);                                   \
            break;                                                                                 \
        case TRANSPORT_AMO_OR:                                                                     \
            old_ = __atomic_fetch_or(w_, v_, __ATOMIC_SEQ_CST);                                    \
            break;                                                                                 \
        case TRANSPORT_AMO_XOR:                                                                    \
            old_ = __atomic_fetch_xor(w_, v_, __ATOMIC_SEQ_CST);                                   \
            break;                                                                                 \
        case TRANSPORT_AMO_SWAP:                                                                   \
            old_ = __atomic_exchange_n(w_, v_, __ATOMIC_SEQ_CST);                                  \
            break;                                                                                 \
        case TRANSPORT_AMO_CSWAP:                                                                  \
            old_ = c_;                                                                             \
            __atomic_compare_exchange_n(w_, &old_, v_, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);     \
            break;                                                                                 \
        }                                                                                          \
        (uint64_t) old_;                                                                           \
    })

/* After a one-way atomic (or signal) went through ctx's transport to a word this PE also stores
 * to directly (target_pointer non-NULL: a space with members elsewhere has one atomics
 * mechanism): the context's fences complete it (order.c) until a flush has, since the transport
 * orders it only against its own operations. The mark is the worker's issued count once it is
 * issued, raised only and never cleared by a fence: a fence returns only once some flush has
 * completed through the mark, so it never relies on another thread's fence whose flush is still
 * under way. */
static inline void amo_mark_beside_stores(shmem_ctx_t ctx, const void *target_pointer)
{
    if (!target_pointer)
        return;
    unsigned long issued = transport_issued(ctx->worker);
    unsigned long marked = __atomic_load_n(&ctx->atomic_beside_stores, __ATOMIC_RELAXED);
    while (marked < issued &&
           !__atomic_compare_exchange_n(&ctx->atomic_beside_stores, &marked, issued, 0,
                                        __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
}

/* Every case: contexts, checks, the transport, device memory. */
uint64_t amo_op_slow(shmem_ctx_t ctx, const char *routine, enum transport_amo op, void *addr,
                     size_t size, uint64_t value, uint64_t compare, int fetch, int pe);
/* The same for the plain forms, with the default context: op, size and fetch packed in how (as
 * AMO_HOW makes it), so that six arguments travel in registers and the fast path that calls it
 * needs no stack frame of its own. */
#define AMO_HOW(op, size, fetch)                                                                   \
    ((unsigned)(op) | (unsigned)(size) << 8 | (unsigned)!!(fetch) << 16)
uint64_t amo_op_slow_plain(const char *routine, unsigned how, void *addr, uint64_t value,
                           uint64_t compare, int pe);

/* What the plain (context-free) forms pass as their context: a constant the compiler sees
 * through, so their fast path neither loads SHMEM_CTX_DEFAULT nor compares it. */
#define AMO_PLAIN ((shmem_ctx_t)(uintptr_t)1)

/* Performs op on the size-byte (4 or 8) word at addr on pe. value is the operand (the new value
 * for SWAP and CSWAP), compare is CSWAP's expected value. Returns the old value when fetch is
 * non-zero (SWAP and CSWAP always fetch). Inline, so that the common case (default context, a
 * word whose route allows CPU atomics) is a lookup and one instruction: op and size are constants
 * at every call site. */
__attribute__((always_inline)) static inline uint64_t amo_op(shmem_ctx_t ctx, const char *routine,
                                                             enum transport_amo op, void *addr,
                                                             size_t size, uint64_t value,
                                                             uint64_t compare, int fetch, int pe)
{
    int plain = ctx == AMO_PLAIN;
    if (likely((plain || ctx == SHMEM_CTX_DEFAULT) && !rt.checked &&
               (unsigned)pe < (unsigned)rt.n_pes)) {
        struct region *region = region_lookup(addr);
        char *copy = region ? region_route(region, pe).cpu_atomics : NULL;
        if (likely(copy)) {
            char *word = copy + ((char *)addr - region->base);
            return size == 4 ? AMO_CPU(uint32_t, word, op, value, compare)
                             : AMO_CPU(uint64_t, word, op, value, compare);
        }
    }
    if (plain)
        return amo_op_slow_plain(routine, AMO_HOW(op, size, fetch), addr, value, compare, pe);
    return amo_op_slow(ctx, routine, op, addr, size, value, compare, fetch, pe);
}

/* The signal update of put-with-signal and shmem_signal_set/add. */
void amo_signal(shmem_ctx_t ctx, const char *routine, uint64_t *sig_addr, uint64_t signal,
                int sig_op, int pe);

#endif
