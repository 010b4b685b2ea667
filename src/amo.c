/* SPDX-License-Identifier: BSD-3-Clause */
#include "amo.h"

#include "route_target.h"
#include "staged.h"

static uint64_t amo_transport(struct transport_worker *t, const char *routine,
                              enum transport_amo op, const struct route_target *target, size_t size,
                              uint64_t value, uint64_t compare, int pe)
{
    uint64_t old = 0;
    if (transport_atomic(t, op, pe, target->region->id, target->offset, value, compare, &old, size))
        rma_report_transport(routine, pe);
    return old;
}

/* UCX 1.13 stores op(old, old) for fetching AND/OR/XOR over shared memory, so the fetching forms
 * are built from a fetch and a compare-and-swap loop, which every transport does right. */
static uint64_t amo_fetch_bitwise_by_cswap(struct transport_worker *t, const char *routine,
                                           enum transport_amo op, const struct route_target *target,
                                           size_t size, uint64_t value, int pe)
{
    uint64_t mask = size == 4 ? UINT32_MAX : UINT64_MAX;
    uint64_t old = amo_transport(t, routine, TRANSPORT_AMO_ADD, target, size, 0, 0, pe);
    for (;;) {
        uint64_t next = op == TRANSPORT_AMO_AND  ? old & value
                        : op == TRANSPORT_AMO_OR ? old | value
                                                 : old ^ value;
        uint64_t seen =
            amo_transport(t, routine, TRANSPORT_AMO_CSWAP, target, size, next & mask, old, pe);
        if (seen == old)
            return old;
        old = seen;
    }
}

uint64_t amo_op_slow(shmem_ctx_t ctx, const char *routine, enum transport_amo op, void *addr,
                     size_t size, uint64_t value, uint64_t compare, int fetch, int pe)
{
    pe = ctx_world_pe(ctx, routine, pe);
    struct route_target target = route_resolve(ctx, routine, addr, size, pe);
    if (unlikely(rt.debug && ((uintptr_t)addr & (size - 1))))
        log_fatal(routine, "address %p (target PE %d) is not aligned to %zu bytes", addr, pe, size);
    if (likely(target.cpu_atomics)) {
        char *word = target.cpu_atomics;
        return size == 4 ? AMO_CPU(uint32_t, word, op, value, compare)
                         : AMO_CPU(uint64_t, word, op, value, compare);
    }
    if (target.kind == ROUTE_KIND_COPY || target.kind == ROUTE_OWNER)
        return staged_atomic(routine, op, &target, size, value, compare, pe);
    /* The transport's atomics: the target's route, or a space whose atomics are all the
     * transport's because some member reaches another through it. */
    struct transport_worker *worker = route_worker(&target, routine, pe);
    int bitwise = op == TRANSPORT_AMO_AND || op == TRANSPORT_AMO_OR || op == TRANSPORT_AMO_XOR;
    if (fetch && bitwise)
        return amo_fetch_bitwise_by_cswap(worker, routine, op, &target, size, value, pe);
    uint64_t old = 0;
    if (transport_atomic(worker, op, pe, target.region->id, target.offset, value, compare,
                         fetch ? &old : NULL, size))
        rma_report_transport(routine, pe);
    if (!fetch) /* a fetching one is done */
        amo_mark_beside_stores(ctx, target.pointer);
    return old;
}

uint64_t amo_op_slow_plain(const char *routine, unsigned how, void *addr, uint64_t value,
                           uint64_t compare, int pe)
{
    return amo_op_slow(SHMEM_CTX_DEFAULT, routine, (enum transport_amo)(how & 0xff), addr,
                       how >> 8 & 0xff, value, compare, (int)(how >> 16), pe);
}

void amo_signal(shmem_ctx_t ctx, const char *routine, uint64_t *sig_addr, uint64_t signal,
                int sig_op, int pe)
{
    enum transport_amo op = sig_op == SHMEM_SIGNAL_ADD ? TRANSPORT_AMO_ADD : TRANSPORT_AMO_SWAP;
    amo_op(ctx, routine, op, sig_addr, sizeof(uint64_t), signal, 0, 0, pe);
}
