/* SPDX-License-Identifier: BSD-3-Clause */
/* The symmetric allocator: manages the offsets [0, size) of a symmetric heap.
 *
 * Deterministic: the same sequence of calls gives the same offsets on every PE, so symmetric
 * offsets need no communication. It never touches the memory it manages (which may be device
 * memory): its metadata lives in ordinary host memory beside it. */
#ifndef STRATA_HEAP_H
#define STRATA_HEAP_H

#include <stddef.h>

struct heap;

struct heap_stats {
    size_t used;         /* bytes in live blocks */
    size_t free;         /* bytes in free ranges */
    size_t largest_free; /* the largest free range */
    size_t live_blocks;
};

/* min_align: a power of two >= 8; every block's start and size are multiples of it. */
struct heap *heap_create(size_t size, size_t min_align);
void heap_destroy(struct heap *heap);
/* Allocates size > 0 bytes aligned to max(align, min_align) (align: 0 or a power of two).
 * Returns 0 and sets *offset, or -1 when nothing fits (heap unchanged). */
int heap_alloc(struct heap *heap, size_t size, size_t align, size_t *offset);
/* Frees the live block starting at offset; -1 if there is none (heap unchanged). */
int heap_free(struct heap *heap, size_t offset);
/* Size of the live block starting at offset (as rounded), or 0 if none. */
size_t heap_block_size(const struct heap *heap, size_t offset);
/* Resizes the live block at offset in place when the following free range allows; 0 or -1. */
int heap_resize(struct heap *heap, size_t offset, size_t new_size);
void heap_stats(const struct heap *heap, struct heap_stats *stats);

#endif
