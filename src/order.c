/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory ordering and whole-job synchronization (1.6 sections 9.9 and 9.11). */
#include "../transports/transport.h"
#include "amo.h"
#include "route_target.h"
#include "runtime.h"
#include "team.h"

/* Direct-mapped writes are CPU stores (memcpy may use non-temporal ones): a full fence makes them
 * visible and ordered. Transport operations are completed by flushing the context's worker. */
static inline void order_flush(struct strata_ctx *ctx)
{
    if (ctx == SHMEM_CTX_INVALID)
        return;
    struct transport_worker *w = ctx->worker;
    if (!w)
        return;
    if (unlikely(w == CTX_WORKER_UNINITIALIZED))
        runtime_report_uninit("shmem_quiet");
    if (transport_flush_needed(w) && transport_flush(w, -1))
        log_fatal("shmem_quiet", "the transport failed to complete outstanding operations");
}

/* The kinds' asynchronous writes of ctx's queue (every queue: all). */
static void order_land(struct strata_ctx *ctx, int all)
{
    if (all)
        kind_land_all();
    else if (ctx != SHMEM_CTX_INVALID)
        kind_land_queue(ctx->queue);
}

/* Out of line so that the common quiet keeps ctx in its argument register (no frame). */
static __attribute__((noinline)) void order_land_and_flush(struct strata_ctx *ctx, int all)
{
    order_land(ctx, all);
    order_flush(ctx);
}

/* Inline in every routine of this file that quiets: a call from one exported routine to another
 * goes through the PLT. One load tells whether any queue has writes to land; which queue is asked
 * for only then. */
static inline void order_quiet_inline(struct strata_ctx *ctx, int all)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (unlikely(kind_unlanded))
        order_land_and_flush(ctx, all);
    else
        order_flush(ctx);
}

void order_quiet(struct strata_ctx *ctx)
{
    order_quiet_inline(ctx, 0);
}

void order_quiet_all(void)
{
    order_quiet_inline(SHMEM_CTX_DEFAULT, 1);
}

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    order_quiet_inline(ctx, 0);
}

void shmem_quiet(void)
{
    order_quiet_inline(SHMEM_CTX_DEFAULT, 0);
}

void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes)
{
    runtime_require_init("shmem_pe_quiet");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (unlikely(kind_unlanded))
        order_land(ctx, 0);
    if (ctx == SHMEM_CTX_INVALID || !ctx->worker)
        return;
    for (size_t i = 0; i < npes; i++) {
        int pe = ctx_world_pe(ctx, "shmem_pe_quiet", target_pes[i]);
        if (unlikely((unsigned)pe >= (unsigned)rt.n_pes))
            log_fatal("shmem_pe_quiet", "target_pes[%zu] = %d is out of range (0..%d)", i, pe,
                      rt.n_pes - 1);
        if (transport_flush(ctx->worker, pe))
            log_fatal("shmem_pe_quiet", "the transport failed to complete operations to PE %d", pe);
    }
}

void shmem_pe_quiet(const int *target_pes, size_t npes)
{
    shmem_ctx_pe_quiet(SHMEM_CTX_DEFAULT, target_pes, npes);
}

void shmem_ctx_fence(shmem_ctx_t ctx)
{
    runtime_require_init("shmem_fence");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (unlikely(kind_unlanded))
        order_land(ctx, 0);
    if (ctx == SHMEM_CTX_INVALID || !ctx->worker)
        return;
    /* A store after the fence is the CPU's, which the transport's fence does not order after an
     * atomic it carries: such atomics are completed, unless a completed flush (this thread's or
     * another's) already covers the last one (amo_mark_beside_stores). */
    unsigned long beside = __atomic_load_n(&ctx->atomic_beside_stores, __ATOMIC_ACQUIRE);
    if (beside && !transport_flushed_through(ctx->worker, beside)) {
        if (transport_flush(ctx->worker, -1))
            log_fatal("shmem_fence", "the transport failed to complete outstanding operations");
    } else if (transport_fence(ctx->worker))
        log_fatal("shmem_fence", "the transport failed to order operations");
}

void shmem_fence(void)
{
    shmem_ctx_fence(SHMEM_CTX_DEFAULT);
}

/* The world's barrier (team.c) over the library's own counters. */
static inline void order_sync_all(const char *routine)
{
    runtime_require_init(routine);
    team_sync_world();
}

/* Every context's kind writes land: a peer reads them after the barrier, whichever context wrote
 * them (the transport's operations complete by the default context's quiet alone). */
static inline void order_barrier_all_inline(void)
{
    order_quiet_inline(SHMEM_CTX_DEFAULT, 1);
    order_sync_all("shmem_barrier_all");
}

void order_barrier_all(void)
{
    order_barrier_all_inline();
}

void shmem_barrier_all(void)
{
    order_barrier_all_inline();
}

void shmem_sync_all(void)
{
    order_sync_all("shmem_sync_all");
}
