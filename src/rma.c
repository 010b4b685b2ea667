/* SPDX-License-Identifier: BSD-3-Clause */
/* Remote memory access (1.6 section 9.5): put, get, p, g, strided and blocked-strided forms,
 * non-blocking forms and put-with-signal. One core routine per operation; every typed, sized and
 * context form is generated from the type tables in shmem.h. */
#include "../common/copy.h"
#include "../transports/transport.h"
#include "amo.h"
#include "mailbox.h"
#include "route_target.h"
#include "staged.h"

#include <string.h>

void rma_report_bad_pe(const char *routine, int pe)
{
    runtime_require_init(routine); /* before init, no PE is in range */
    log_fatal(routine, "target PE %d is out of range: the job has %d PEs (0..%d)", pe, rt.n_pes,
              rt.n_pes - 1);
}

void rma_report_bad_address(const char *routine, const void *addr, int pe)
{
    log_fatal(routine,
              "address %p (target PE %d) is not symmetric: it is neither in a symmetric heap nor "
              "in the program's global/static data",
              addr, pe);
}

void rma_report_overrun(const char *routine, const void *addr, size_t len, int pe)
{
    log_fatal(routine, "%zu bytes at %p (target PE %d) run past the end of its symmetric region",
              len, addr, pe);
}

void rma_report_transport(const char *routine, int pe)
{
    log_fatal(routine, "the transport failed to reach PE %d", pe);
}

void rma_report_not_member(const char *routine, const void *addr, int pe)
{
    log_fatal(routine, "target PE %d is not a member of the space that holds %p", pe, addr);
}

void rma_report_no_transport(const char *routine, int pe)
{
    log_fatal(routine, "no transport reaches PE %d from this context", pe);
}

static const char *const route_names[] = {
    [ROUTE_NONE] = "none",           [ROUTE_LOAD_STORE] = "load/store",
    [ROUTE_KIND_COPY] = "kind copy", [ROUTE_TRANSPORT] = "transport",
    [ROUTE_OWNER] = "owner",
};

static inline void rma_put(shmem_ctx_t ctx, const char *routine, void *dest, const void *src,
                           size_t len, int pe, int nbi)
{
    if (unlikely(!len))
        return;
    pe = ctx_world_pe(ctx, routine, pe);
    struct route_target target = route_resolve(ctx, routine, dest, len, pe);
    LOG(LOG_RMA, routine, "%zu bytes to %p on PE %d (%s)", len, dest, pe, route_names[target.kind]);
    const struct kind_ops *src_kind = route_local_kind(src);
    if (likely(target.kind == ROUTE_LOAD_STORE && !src_kind)) {
        copy_once(target.pointer, src, len);
        return;
    }
    if (target.kind == ROUTE_TRANSPORT && !src_kind) {
        if (transport_put(route_worker(&target, routine, pe), pe, target.region->id, target.offset,
                          src, len, nbi))
            rma_report_transport(routine, pe);
        return;
    }
    staged_put(ctx, routine, &target, src, src_kind, len, pe, nbi);
}

static inline void rma_get(shmem_ctx_t ctx, const char *routine, void *dest, const void *src,
                           size_t len, int pe, int nbi)
{
    if (unlikely(!len))
        return;
    pe = ctx_world_pe(ctx, routine, pe);
    struct route_target target = route_resolve(ctx, routine, src, len, pe);
    LOG(LOG_RMA, routine, "%zu bytes from %p on PE %d (%s)", len, src, pe,
        route_names[target.kind]);
    const struct kind_ops *dest_kind = route_local_kind(dest);
    if (likely(target.kind == ROUTE_LOAD_STORE && !dest_kind)) {
        copy_bulk(dest, target.pointer, len);
        return;
    }
    if (target.kind == ROUTE_TRANSPORT && !dest_kind) {
        if (transport_get(route_worker(&target, routine, pe), pe, target.region->id, target.offset,
                          dest, len, nbi))
            rma_report_transport(routine, pe);
        return;
    }
    staged_get(ctx, routine, &target, dest, dest_kind, len, pe, nbi);
}

void rma_notify(const char *routine, uint64_t *word, uint64_t value, int pe)
{
    struct route_target target = route_resolve(SHMEM_CTX_DEFAULT, routine, word, sizeof(value), pe);
    if (target.kind == ROUTE_LOAD_STORE) {
        __atomic_store_n((uint64_t *)target.pointer, value, __ATOMIC_RELEASE);
        return;
    }
    if (target.kind == ROUTE_TRANSPORT) {
        if (transport_put_notify(route_worker(&target, routine, pe), pe, target.region->id,
                                 target.offset, &value, sizeof(value)))
            rma_report_transport(routine, pe);
        return;
    }
    rma_put(SHMEM_CTX_DEFAULT, routine, word, &value, sizeof(value), pe, 0);
}

/* Blocked strided transfer (ibput/ibget; iput/iget are the case bsize == 1): nblocks blocks of
 * bsize elements, block starts dst elements apart in dest and sst apart in source. */
struct rma_blocks {
    size_t elem, bsize, nblocks;
    ptrdiff_t dst, sst;
};

static void rma_put_blocks(shmem_ctx_t ctx, const char *routine, char *dest, const char *src,
                           struct rma_blocks b, int pe)
{
    for (size_t i = 0; i < b.nblocks; i++)
        rma_put(ctx, routine, dest + (ptrdiff_t)i * b.dst * (ptrdiff_t)b.elem,
                src + (ptrdiff_t)i * b.sst * (ptrdiff_t)b.elem, b.bsize * b.elem, pe, 0);
}

static void rma_get_blocks(shmem_ctx_t ctx, const char *routine, char *dest, const char *src,
                           struct rma_blocks b, int pe)
{
    for (size_t i = 0; i < b.nblocks; i++)
        rma_get(ctx, routine, dest + (ptrdiff_t)i * b.dst * (ptrdiff_t)b.elem,
                src + (ptrdiff_t)i * b.sst * (ptrdiff_t)b.elem, b.bsize * b.elem, pe, 0);
}

/* The inline common case of a put or get (route_load_store): the target's copy loadable and
 * storable here and the local buffer known to be host memory; 0 when rma_put_beside or
 * rma_get_beside must run. Nothing here calls a function, so the fast path needs no stack frame. */
__attribute__((always_inline)) static inline int rma_put_fast(void *dest, const void *src,
                                                              size_t len, int pe)
{
    char *there = route_load_store(dest, pe);
    if (unlikely(!there || !route_local_is_host(src)))
        return 0;
    copy_once(there, src, len);
    return 1;
}

__attribute__((always_inline)) static inline int rma_get_fast(void *dest, const void *src,
                                                              size_t len, int pe)
{
    const char *there = route_load_store(src, pe);
    if (unlikely(!there || !route_local_is_host(dest)))
        return 0;
    copy_bulk(dest, there, len);
    return 1;
}

/* Out of line: the same load/store case when the local buffer's kind takes a search (a symmetric
 * buffer, a private one, a new gap), then the general path. */
__attribute__((noinline)) static void rma_put_beside(const char *routine, void *dest,
                                                     const void *src, size_t len, int pe, int nbi)
{
    char *there = route_load_store(dest, pe);
    if (likely(there && !route_local_kind(src)))
        copy_once(there, src, len);
    else
        rma_put(SHMEM_CTX_DEFAULT, routine, dest, src, len, pe, nbi);
}

__attribute__((noinline)) static void rma_get_beside(const char *routine, void *dest,
                                                     const void *src, size_t len, int pe, int nbi)
{
    const char *there = route_load_store(src, pe);
    if (likely(there && !route_local_kind(dest)))
        copy_bulk(dest, there, len);
    else
        rma_get(SHMEM_CTX_DEFAULT, routine, dest, src, len, pe, nbi);
}

/* A put-with-signal whose data (if any) and signal both go through the context's transport, from
 * host memory: handed over whole, since the transport may carry it as one message. 0 when it is
 * not such a one. */
static int rma_put_signal_transport(shmem_ctx_t ctx, const char *routine, void *dest,
                                    const void *src, size_t len, uint64_t *sig_addr,
                                    uint64_t signal, int sig_op, int pe, int watched)
{
    if (ctx == SHMEM_CTX_INVALID || !ctx->worker)
        return 0; /* no transport */
    int world_pe = ctx_world_pe(ctx, routine, pe);
    struct route_target sig = route_resolve(ctx, routine, sig_addr, sizeof(*sig_addr), world_pe);
    if (sig.kind != ROUTE_TRANSPORT || sig.cpu_atomics)
        return 0;
    struct route_target data = sig; /* no data: no dest to resolve (zero-length calls pass NULL) */
    if (len) {
        data = route_resolve(ctx, routine, dest, len, world_pe);
        if (data.kind != ROUTE_TRANSPORT || route_local_kind(src))
            return 0;
    }
    enum transport_amo op = sig_op == SHMEM_SIGNAL_ADD ? TRANSPORT_AMO_ADD : TRANSPORT_AMO_SWAP;
    if (transport_put_signal(route_worker(&data, routine, world_pe), world_pe, data.region->id,
                             data.offset, src, len, sig.region->id, sig.offset, op, signal,
                             watched))
        rma_report_transport(routine, world_pe);
    amo_mark_beside_stores(ctx, sig.pointer);
    return 1;
}

/* Put-with-signal (1.6 section 9.8.2): the signal update is delivered after the data. */
static void rma_put_signal(shmem_ctx_t ctx, const char *routine, void *dest, const void *src,
                           size_t len, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                           int nbi, int watched)
{
    if (unlikely(sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD))
        log_fatal(routine, "sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD", sig_op);
    if (!(ctx == SHMEM_CTX_DEFAULT && len && rma_put_fast(dest, src, len, pe))) {
        if (rma_put_signal_transport(ctx, routine, dest, src, len, sig_addr, signal, sig_op, pe,
                                     watched))
            return;
        if (!len) {
            amo_signal(ctx, routine, sig_addr, signal, sig_op, pe); /* no data to order */
            return;
        }
        rma_put(ctx, routine, dest, src, len, pe, nbi);
    }
    /* Data written by memcpy (possibly with non-temporal stores), by a kind's asynchronous copy
     * on the context's queue or queued in the transport must be ordered before the signal. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (unlikely(kind_unlanded) && ctx != SHMEM_CTX_INVALID)
        kind_land_queue(ctx->queue);
    if (ctx != SHMEM_CTX_INVALID && ctx->worker)
        transport_fence(ctx->worker);
    amo_signal(ctx, routine, sig_addr, signal, sig_op, pe);
}

void rma_put_signal_watched(const char *routine, void *dest, const void *src, size_t len,
                            uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    rma_put_signal(SHMEM_CTX_DEFAULT, routine, dest, src, len, sig_addr, signal, sig_op, pe, 0, 1);
}

int rma_reaches_by_message(int pe)
{
    return rt.worker && transport_by_message(rt.worker, pe);
}

void rma_mail(const char *routine, int pe, uint32_t box, uint64_t tag, const void *data, size_t len)
{
    struct mailbox_mail mail = {tag, box};
    if (transport_message(rt.worker, pe, RUNTIME_MESSAGE_MAIL, &mail, sizeof(mail), data, len))
        rma_report_transport(routine, pe);
}

/* ---- Generated API ----
 * A namer builds a routine's name from (context prefix, table name, operation, suffix), so the
 * typed (shmem_long_put_nbi) and sized (shmem_put64_nbi, shmem_putmem_nbi) families come from the
 * same generators. */
#define STRINGIFY(x) STRINGIFY_(x)
#define STRINGIFY_(x) #x
#define TYPED_NAME(CTX, N, OP, SUFFIX) shmem_##CTX##N##_##OP##SUFFIX
#define SIZED_NAME(CTX, N, OP, SUFFIX) shmem_##CTX##OP##N##SUFFIX

#define GEN_CONTIGUOUS(FN, CTX_FN, T, ELEM, OP, NBI)                                               \
    void CTX_FN(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, int pe)                  \
    {                                                                                              \
        rma_##OP(ctx, STRINGIFY(FN), dest, source, nelems *(ELEM), pe, NBI);                       \
    }                                                                                              \
    void FN(T *dest, const T *source, size_t nelems, int pe)                                       \
    {                                                                                              \
        if (!rma_##OP##_fast(dest, source, nelems * (ELEM), pe))                                   \
            rma_##OP##_beside(STRINGIFY(FN), dest, source, nelems *(ELEM), pe, NBI);               \
    }

#define GEN_SIGNAL(FN, CTX_FN, T, ELEM, NBI)                                                       \
    void CTX_FN(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems, uint64_t *sig_addr,      \
                uint64_t signal, int sig_op, int pe)                                               \
    {                                                                                              \
        rma_put_signal(ctx, STRINGIFY(FN), dest, source, nelems *(ELEM), sig_addr, signal, sig_op, \
                       pe, NBI, 0);                                                                \
    }                                                                                              \
    void FN(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal,          \
            int sig_op, int pe)                                                                    \
    {                                                                                              \
        CTX_FN(SHMEM_CTX_DEFAULT, dest, source, nelems, sig_addr, signal, sig_op, pe);             \
    }

/* ibput/ibget and their bsize == 1 case, iput/iget. */
#define GEN_BLOCKS(IB_FN, IB_CTX_FN, I_FN, I_CTX_FN, T, ELEM, OP)                                  \
    void IB_CTX_FN(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,        \
                   size_t bsize, size_t nblocks, int pe)                                           \
    {                                                                                              \
        struct rma_blocks b = {ELEM, bsize, nblocks, dst, sst};                                    \
        rma_##OP##_blocks(ctx, STRINGIFY(IB_FN), (char *)dest, (const char *)source, b, pe);       \
    }                                                                                              \
    void IB_FN(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize,               \
               size_t nblocks, int pe)                                                             \
    {                                                                                              \
        IB_CTX_FN(SHMEM_CTX_DEFAULT, dest, source, dst, sst, bsize, nblocks, pe);                  \
    }                                                                                              \
    void I_CTX_FN(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,         \
                  size_t nelems, int pe)                                                           \
    {                                                                                              \
        struct rma_blocks b = {ELEM, 1, nelems, dst, sst};                                         \
        rma_##OP##_blocks(ctx, STRINGIFY(I_FN), (char *)dest, (const char *)source, b, pe);        \
    }                                                                                              \
    void I_FN(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe)       \
    {                                                                                              \
        I_CTX_FN(SHMEM_CTX_DEFAULT, dest, source, dst, sst, nelems, pe);                           \
    }

#define GEN_CONTIGUOUS_FAMILY(NAMER, N, T, ELEM)                                                   \
    GEN_CONTIGUOUS(NAMER(, N, put, ), NAMER(ctx_, N, put, ), T, ELEM, put, 0)                      \
    GEN_CONTIGUOUS(NAMER(, N, get, ), NAMER(ctx_, N, get, ), T, ELEM, get, 0)                      \
    GEN_CONTIGUOUS(NAMER(, N, put, _nbi), NAMER(ctx_, N, put, _nbi), T, ELEM, put, 1)              \
    GEN_CONTIGUOUS(NAMER(, N, get, _nbi), NAMER(ctx_, N, get, _nbi), T, ELEM, get, 1)              \
    GEN_SIGNAL(NAMER(, N, put, _signal), NAMER(ctx_, N, put, _signal), T, ELEM, 0)                 \
    GEN_SIGNAL(NAMER(, N, put, _signal_nbi), NAMER(ctx_, N, put, _signal_nbi), T, ELEM, 1)

#define GEN_STRIDED_FAMILY(NAMER, N, T, ELEM)                                                      \
    GEN_BLOCKS(NAMER(, N, ibput, ), NAMER(ctx_, N, ibput, ), NAMER(, N, iput, ),                   \
               NAMER(ctx_, N, iput, ), T, ELEM, put)                                               \
    GEN_BLOCKS(NAMER(, N, ibget, ), NAMER(ctx_, N, ibget, ), NAMER(, N, iget, ),                   \
               NAMER(ctx_, N, iget, ), T, ELEM, get)

/* p and g of values up to 8 bytes: the general path takes the value's bits by value, so that
 * their fast path keeps the value in a register and needs no stack frame. */
#define RMA_BITS(T, value)                                                                         \
    ({                                                                                             \
        uint64_t bits_ = 0;                                                                        \
        memcpy(&bits_, &(value), sizeof(T) <= sizeof(bits_) ? sizeof(T) : sizeof(bits_));          \
        bits_;                                                                                     \
    })

__attribute__((noinline)) static void rma_p_slow(const char *routine, void *dest, uint64_t bits,
                                                 size_t size, int pe)
{
    rma_put(SHMEM_CTX_DEFAULT, routine, dest, &bits, size, pe, 0);
}

__attribute__((noinline)) static uint64_t rma_g_slow(const char *routine, const void *source,
                                                     size_t size, int pe)
{
    uint64_t bits = 0;
    rma_get(SHMEM_CTX_DEFAULT, routine, &bits, source, size, pe, 0);
    return bits;
}

#define DEFINE_TYPED_RMA(T, N, ...)                                                                \
    GEN_CONTIGUOUS_FAMILY(TYPED_NAME, N, T, sizeof(T))                                             \
    GEN_STRIDED_FAMILY(TYPED_NAME, N, T, sizeof(T))                                                \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe)                              \
    {                                                                                              \
        rma_put(ctx, "shmem_" #N "_p", dest, &value, sizeof(T), pe, 0);                            \
    }                                                                                              \
    void shmem_##N##_p(T *dest, T value, int pe)                                                   \
    {                                                                                              \
        char *there = route_load_store(dest, pe);                                                  \
        if (likely(there))                                                                         \
            memcpy(there, &value, sizeof(T)); /* one store */                                      \
        else if (sizeof(T) <= sizeof(uint64_t))                                                    \
            rma_p_slow("shmem_" #N "_p", dest, RMA_BITS(T, value), sizeof(T), pe);                 \
        else                                                                                       \
            rma_put(SHMEM_CTX_DEFAULT, "shmem_" #N "_p", dest, &value, sizeof(T), pe, 0);          \
    }                                                                                              \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe)                                  \
    {                                                                                              \
        T value;                                                                                   \
        rma_get(ctx, "shmem_" #N "_g", &value, source, sizeof(T), pe, 0);                          \
        return value;                                                                              \
    }                                                                                              \
    T shmem_##N##_g(const T *source, int pe)                                                       \
    {                                                                                              \
        const char *there = route_load_store(source, pe);                                          \
        T value;                                                                                   \
        if (likely(there)) {                                                                       \
            memcpy(&value, there, sizeof(T)); /* one load */                                       \
        } else if (sizeof(T) <= sizeof(uint64_t)) {                                                \
            uint64_t bits = rma_g_slow("shmem_" #N "_g", source, sizeof(T), pe);                   \
            memcpy(&value, &bits, sizeof(T) <= sizeof(bits) ? sizeof(T) : sizeof(bits));           \
        } else {                                                                                   \
            rma_get(SHMEM_CTX_DEFAULT, "shmem_" #N "_g", &value, source, sizeof(T), pe, 0);        \
        }                                                                                          \
        return value;                                                                              \
    }
STRATA_RMA_TYPES(DEFINE_TYPED_RMA)

#define DEFINE_SIZED_RMA(BITS, BYTES)                                                              \
    GEN_CONTIGUOUS_FAMILY(SIZED_NAME, BITS, void, BYTES)                                           \
    GEN_STRIDED_FAMILY(SIZED_NAME, BITS, void, BYTES)
STRATA_RMA_SIZES(DEFINE_SIZED_RMA)
GEN_CONTIGUOUS_FAMILY(SIZED_NAME, mem, void, 1)
