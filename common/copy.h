/* Copying into memory that a peer or the program may be watching: the target's copy of a put.
 *
 * memcpy may store a byte more than once: glibc stores a block of 2 to 31 bytes as two
 * overlapping halves, so 4 bytes are the same word stored twice. A PE that saw the first store
 * of a flag and reset the flag before the second saw the flag arrive again, a put it had already
 * consumed (over two nodes, about once in 100,000 rounds of a put, a fence and a flag). So short
 * blocks, which is what a shmem_p or a put of a few elements carries, are stored piece by piece,
 * each byte once and an aligned element in one store. A longer put is no signal its target may
 * consume piecemeal: it keeps memcpy's speed. */
#ifndef STRATA_COMMON_COPY_H
#define STRATA_COMMON_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The longest block stored piece by piece: 8 stores at most. */
#define COPY_ONCE_MAX 64

/* The largest aligned piece of at most 8 bytes that starts at dst and fits in len (> 0). */
static inline size_t copy_once_piece(const char *dst, size_t len)
{
    size_t piece = 8;
    while (piece > len || ((uintptr_t)dst & (piece - 1)))
        piece >>= 1;
    return piece;
}

static inline void copy_once(void *dst, const void *src, size_t len)
{
    if (len > COPY_ONCE_MAX) {
        memcpy(dst, src, len);
        return;
    }
    char *to = dst;
    const char *from = src;
    while (len) {
        size_t piece = copy_once_piece(to, len);
        /* Atomic stores: the compiler may neither split them nor merge them into a memcpy. */
        if (piece == 8) {
            uint64_t v;
            memcpy(&v, from, 8);
            __atomic_store_n((uint64_t *)(void *)to, v, __ATOMIC_RELAXED);
        } else if (piece == 4) {
            uint32_t v;
            memcpy(&v, from, 4);
            __atomic_store_n((uint32_t *)(void *)to, v, __ATOMIC_RELAXED);
        } else if (piece == 2) {
            uint16_t v;
            memcpy(&v, from, 2);
            __atomic_store_n((uint16_t *)(void *)to, v, __ATOMIC_RELAXED);
        } else {
            __atomic_store_n(to, *from, __ATOMIC_RELAXED);
        }
        to += piece;
        from += piece;
        len -= piece;
    }
}

#endif
