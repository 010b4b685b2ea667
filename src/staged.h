/* SPDX-License-Identifier: BSD-3-Clause */
/* RMA and atomics that the CPU cannot do with a load or a store: a target reached by the kind's
 * copy engine or by its owner (spaces/route_table.h), or a local buffer in device memory (symmetric
 * or the program's own). Bytes move through the kinds' copy functions and host bounce buffers; a
 * target reached through its owner performs the operation itself, from its progress engine, on
 * an active message (transport.h). */
#ifndef STRATA_STAGED_H
#define STRATA_STAGED_H

#include "../transports/transport.h"
#include "route_target.h"

/* A put or get on any route, with a local buffer of a kind (NULL: host memory), on ctx (whose
 * queue the kinds' writes go on). Completes before it returns, but for a write into a target's
 * kind memory, owed to ctx's quiet or fence; a non-blocking one (nbi) between two buffers of one
 * kind is all owed to the quiet, as the spec allows: its source may be read until then. */
void staged_put(shmem_ctx_t ctx, const char *routine, const struct route_target *target,
                const void *src, const struct kind_ops *src_kind, size_t len, int pe, int nbi);
void staged_get(shmem_ctx_t ctx, const char *routine, const struct route_target *target, void *dest,
                const struct kind_ops *dest_kind, size_t len, int pe, int nbi);
/* An atomic on a word reached by the kind's copy engine or by its owner, one at a time. */
uint64_t staged_atomic(const char *routine, enum transport_amo op,
                       const struct route_target *target, size_t size, uint64_t value,
                       uint64_t compare, int pe);
/* Reads len bytes at addr of this PE's symmetric memory, whatever its kind (waits poll through
 * this). */
void staged_read_local(const void *addr, void *dest, size_t len);

/* What this PE's progress engine does for peers' active messages. */
extern const struct transport_target_ops staged_target_ops;

#endif
