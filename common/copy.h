/* SPDX-License-Identifier: BSD-3-Clause */
/* Copying into memory that a peer or the program may be watching: the target's copy of a put.
 *
 * memcpy may store a byte more than once: glibc stores a block of 2 to 31 bytes as two
 * overlapping halves, so 4 bytes are the same word stored twice. A PE that sees the first store
 * of a flag and resets the flag before the second sees the flag arrive again, a put it has
 * already consumed. So a block of one element, what a shmem_p carries, is stored piece by piece,
 * each byte once. */
#ifndef STRATA_COMMON_COPY_H
#define STRATA_COMMON_COPY_H

#include "log.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The longest block stored piece by piece: one element of any type (long double and the
 * complex types take 16 bytes). A put of several elements is no signal its target may consume
 * one element at a time, so it keeps memcpy's speed, which storing it piece by piece would lose. */
#define COPY_ONCE_MAX 16

/* Unaligned words the compiler stores with one instruction (where the CPU has it), whatever
 * the address; volatile keeps it from splitting them or merging a run of them into a memcpy. */
typedef uint8_t copy_u8 __attribute__((may_alias));
typedef uint16_t copy_u16 __attribute__((aligned(1), may_alias));
typedef uint32_t copy_u32 __attribute__((aligned(1), may_alias));
typedef uint64_t copy_u64 __attribute__((aligned(1), may_alias));
typedef uint64_t copy_u128 __attribute__((vector_size(16), aligned(1), may_alias));

#define COPY_PIECE(type, to, from)                                                                 \
    do {                                                                                           \
        type piece_;                                                                               \
        memcpy(&piece_, from, sizeof(type));                                                       \
        *(volatile type *)(void *)(to) = piece_;                                                   \
    } while (0)

/* Stores len (at most COPY_ONCE_MAX) bytes of src at dst, each byte once and an element aligned
 * like the block in one store. Out of line, like the memcpy it stands for. */
void copy_once_short(void *dst, const void *src, size_t len);

/* No core's L2 cache is smaller: a shorter block, every small put and get among them, goes to
 * memcpy inline, without the out-of-line choice of copy_large. */
#define COPY_LARGE_MIN ((size_t)256 << 10)

/* Blocks of at least this many bytes go through copy_movsb, where copy_tune found it faster
 * than memcpy; SIZE_MAX (never) until then and elsewhere. */
extern size_t copy_movsb_min;

/* A block whose destination continues a run of at least this many bytes that this thread has
 * just copied in blocks of COPY_LARGE_MIN or more goes through copy_stream: the run has outgrown
 * the caches, so the lines it writes would be evicted unread, and reading each before writing it
 * only costs memory traffic. SIZE_MAX (never) until copy_tune and where the CPU has no such
 * stores. */
extern size_t copy_stream_after;

/* Finds this machine's copy_movsb_min and copy_stream_after: once, at start-up. */
void copy_tune(void);

/* The CPU's string copy (rep movsb): where a block outgrows the core's L2 cache, AMD's C
 * library leaves it for a vector loop that is slower on the same CPUs, both when the lines are
 * cached and when they come from and go to memory. */
void copy_movsb(void *dst, const void *src, size_t len);

/* Non-temporal stores (memcpy where the CPU has none): the destination's lines go to memory
 * without being read first and without taking the cache from what it holds. Ordered before any
 * later store on return, as plain stores are. */
void copy_stream(void *dst, const void *src, size_t len);

enum copy_way { COPY_MEMCPY, COPY_MOVSB, COPY_STREAM };

/* How copy_large copies a block of len bytes to dst, by its length and by the run of this
 * thread's destination bytes it continues; the block becomes the end of that run. */
enum copy_way copy_way_next(void *dst, size_t len);

/* A block of at least COPY_LARGE_MIN bytes, as copy_way_next says. */
void copy_large(void *dst, const void *src, size_t len);

/* A block of any size, neither end watched piece by piece: a get, a collective's block, a
 * staging copy. */
static inline void copy_bulk(void *dst, const void *src, size_t len)
{
    if (unlikely(len >= COPY_LARGE_MIN))
        copy_large(dst, src, len);
    else
        memcpy(dst, src, len);
}

/* 8 bytes, the commonest element, inline: between node peers a call, to memcpy or, dearer
 * still, to copy_once_short, is a large share of an 8-byte put. */
static inline void copy_once(void *dst, const void *src, size_t len)
{
    if (len == sizeof(uint64_t))
        COPY_PIECE(copy_u64, dst, src);
    else if (len > COPY_ONCE_MAX)
        copy_bulk(dst, src, len);
    else
        copy_once_short(dst, src, len);
}

#endif
