/* SPDX-License-Identifier: BSD-3-Clause */
/* Where a distributed lock's queue tail lives (lock.c): a PE chosen by hashing the lock's place
 * in symmetric memory, the same on every PE. Spreading the tails keeps a program with many
 * locks (one per bucket of a table, say) from sending every acquisition to one PE. */
#ifndef STRATA_LOCK_HOME_H
#define STRATA_LOCK_HOME_H

#include <stddef.h>
#include <stdint.h>

/* Fibonacci hashing: the word's index times 2^64 / golden ratio, whose top 32 bits are scaled to
 * [0, n_pes). Consecutive indices (an array of locks), and indices a constant stride apart (a lock
 * in each element of an array of structs), land on the PEs about evenly, where a plain modulo
 * puts every lock of a stride that divides n_pes on one PE. The region id keeps equal offsets of
 * different spaces apart. */
static inline int lock_home_pe(int region_id, size_t offset, int n_pes)
{
    uint64_t index = ((uint64_t)(unsigned)region_id << 40) ^ (uint64_t)(offset / sizeof(long));
    uint64_t fraction = (index * 0x9e3779b97f4a7c15ull) >> 32;
    return (int)((fraction * (uint64_t)n_pes) >> 32);
}

#endif
