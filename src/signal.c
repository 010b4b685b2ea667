/* SPDX-License-Identifier: BSD-3-Clause */
/* Signal operations (1.6 sections 9.8.3-9.8.5). */
#include "amo.h"
#include "staged.h"

uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    runtime_require_init("shmem_signal_fetch");
    if (likely(!space_device_regions))
        return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
    uint64_t value;
    staged_read_local(sig_addr, &value, sizeof(value));
    return value;
}

void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe)
{
    amo_signal(ctx, "shmem_signal_add", sig_addr, signal, SHMEM_SIGNAL_ADD, pe);
}

void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)
{
    amo_signal(SHMEM_CTX_DEFAULT, "shmem_signal_add", sig_addr, signal, SHMEM_SIGNAL_ADD, pe);
}

void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe)
{
    amo_signal(ctx, "shmem_signal_set", sig_addr, signal, SHMEM_SIGNAL_SET, pe);
}

void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe)
{
    amo_signal(SHMEM_CTX_DEFAULT, "shmem_signal_set", sig_addr, signal, SHMEM_SIGNAL_SET, pe);
}
