/* Memory ordering and whole-job synchronization (1.6 sections 9.9 and 9.11). */
#include "../transports/transport.h"
#include "amo.h"
#include "runtime.h"

/* Direct-mapped writes are CPU stores (memcpy may use non-temporal ones): a full fence makes them
 * visible and ordered. Transport operations are completed by flushing the context's worker. */
void order_quiet(struct strata_ctx *ctx)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (ctx != SHMEM_CTX_INVALID && ctx->transport && transport_flush(ctx->transport, -1))
        log_fatal("shmem_quiet", "the transport failed to complete outstanding operations");
}

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    order_quiet(ctx);
}

void shmem_quiet(void)
{
    order_quiet(SHMEM_CTX_DEFAULT);
}

void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (ctx == SHMEM_CTX_INVALID || !ctx->transport)
        return;
    for (size_t i = 0; i < npes; i++) {
        if (unlikely((unsigned)target_pes[i] >= (unsigned)rt.n_pes))
            log_fatal("shmem_pe_quiet", "target_pes[%zu] = %d is out of range (0..%d)", i,
                      target_pes[i], rt.n_pes - 1);
        if (transport_flush(ctx->transport, target_pes[i]))
            log_fatal("shmem_pe_quiet", "the transport failed to complete operations to PE %d",
                      target_pes[i]);
    }
}

void shmem_pe_quiet(const int *target_pes, size_t npes)
{
    shmem_ctx_pe_quiet(SHMEM_CTX_DEFAULT, target_pes, npes);
}

void shmem_ctx_fence(shmem_ctx_t ctx)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (ctx != SHMEM_CTX_INVALID && ctx->transport && transport_fence(ctx->transport))
        log_fatal("shmem_fence", "the transport failed to order operations");
}

void shmem_fence(void)
{
    shmem_ctx_fence(SHMEM_CTX_DEFAULT);
}

/* Dissemination barrier over all PEs: in round k each PE adds one to sync word k of PE
 * (me + 2^k) mod n and waits until its own word k has been bumped once per barrier so far.
 * Counters only grow, so an early arrival of the next barrier's signal is harmless. */
static void order_sync_all(const char *routine)
{
    runtime_require_init(routine);
    uint64_t epoch = ++rt.barrier_epoch;
    for (int round = 0, dist = 1; dist < rt.n_pes; round++, dist <<= 1) {
        int partner = (rt.my_pe + dist) % rt.n_pes;
        amo_op(SHMEM_CTX_DEFAULT, routine, TRANSPORT_AMO_ADD, &rt.sync_words[round],
               sizeof(uint64_t), 1, 0, 0, partner);
        unsigned spins = 0;
        while (__atomic_load_n(&rt.sync_words[round], __ATOMIC_ACQUIRE) < epoch)
            progress_wait_step(&spins);
    }
}

void order_barrier_all(void)
{
    order_quiet(SHMEM_CTX_DEFAULT);
    order_sync_all("shmem_barrier_all");
}

void shmem_barrier_all(void)
{
    order_barrier_all();
}

void shmem_sync_all(void)
{
    order_sync_all("shmem_sync_all");
}
