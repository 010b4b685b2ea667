/* Atomic operations on symmetric words, by the route of the target (spaces/route.h): CPU
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

/* Every case: contexts, checks, the transport, device memory. */
uint64_t amo_op_slow(shmem_ctx_t ctx, const char *routine, enum transport_amo op, void *addr,
                     size_t size, uint64_t value, uint64_t compare, int fetch, int pe);

/* Performs op on the size-byte (4 or 8) word at addr on pe. value is the operand (the new value
 * for SWAP and CSWAP), compare is CSWAP's expected value. Returns the old value when fetch is
 * non-zero (SWAP and CSWAP always fetch). Inline, so that the common case (default context, a
 * word mapped on the node, CPU atomics for its space) is a lookup and one instruction: op and
 * size are constants at every call site. */
static inline uint64_t amo_op(shmem_ctx_t ctx, const char *routine, enum transport_amo op,
                              void *addr, size_t size, uint64_t value, uint64_t compare, int fetch,
                              int pe)
{
    if (likely(ctx == SHMEM_CTX_DEFAULT && !rt.checked && (unsigned)pe < (unsigned)rt.n_pes)) {
        struct region *region = region_lookup(addr);
        char *copy = region ? region_route(region, pe)->cpu_atomics : NULL;
        if (likely(copy)) {
            char *word = copy + ((char *)addr - region->base);
            return size == 4 ? AMO_CPU(uint32_t, word, op, value, compare)
                             : AMO_CPU(uint64_t, word, op, value, compare);
        }
    }
    return amo_op_slow(ctx, routine, op, addr, size, value, compare, fetch, pe);
}

/* The signal update of put-with-signal and shmem_signal_set/add. */
void amo_signal(shmem_ctx_t ctx, const char *routine, uint64_t *sig_addr, uint64_t signal,
                int sig_op, int pe);

#endif
