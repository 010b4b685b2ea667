/* Atomic operations on symmetric words, routed by the owning space's coherence rule
 * (space.h: transport_atomics). Used by signals and the internal barrier. */
#ifndef STRATA_AMO_H
#define STRATA_AMO_H

#include "../transports/transport.h"
#include "runtime.h"

#include <stdint.h>

/* Performs op on the size-byte (4 or 8) word at addr on pe. value is the operand (the new value
 * for SWAP and CSWAP), compare is CSWAP's expected value. Returns the old value when fetch is
 * non-zero (SWAP and CSWAP always fetch). */
uint64_t amo_op(shmem_ctx_t ctx, const char *routine, enum transport_amo op, void *addr,
                size_t size, uint64_t value, uint64_t compare, int fetch, int pe);

/* The signal update of put-with-signal and shmem_signal_set/add. */
void amo_signal(shmem_ctx_t ctx, const char *routine, uint64_t *sig_addr, uint64_t signal,
                int sig_op, int pe);

#endif
