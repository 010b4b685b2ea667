/* SPDX-License-Identifier: BSD-3-Clause */
/* The symmetric allocator.
 *
 * Blocks (live or free) tile [0, size) and are linked in address order, so a freed block merges
 * with its free neighbours in O(1). Free blocks also sit in one list per power-of-two size class
 * (class c holds sizes [2^c, 2^(c+1))), with a bitmap of the non-empty classes; live blocks are
 * found by offset through a chained hash table. Lists are pushed at the head and scanned from it,
 * so every order depends only on the call sequence, never on addresses: every PE that makes the
 * same calls gets the same offsets. The managed memory is never touched; all metadata is
 * malloc'd host memory. */
#include "heap.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define HEAP_CLASSES 64
/* Entries of the request's own class tried first: a recently freed block of the same size is
 * reused instead of cutting into a larger range, at a bounded cost. */
#define HEAP_OWN_CLASS_PROBE 4
#define HEAP_MIN_BUCKET_BITS 6

struct block {
    size_t offset, size;
    struct block *prev, *next;           /* address order */
    struct block *list_prev, *list_next; /* free: size-class list; spare: list_next only */
    struct block *hash_next;             /* live: hash chain */
    bool is_free;
};

struct heap {
    size_t size, min_align;
    struct block *first; /* the block at offset 0: splits and merges always keep it */
    struct block *classes[HEAP_CLASSES];
    uint64_t nonempty; /* bit c: classes[c] holds a block */
    struct block **buckets;
    unsigned bucket_bits;
    size_t live_blocks, used;
    struct block *spare; /* released descriptors, reused before calling malloc */
};

/* ---- arithmetic (every caller guarantees value >= 1; nothing here can wrap) ---- */

static unsigned floor_log2(size_t value)
{
    return (unsigned)(63 - __builtin_clzll((unsigned long long)value));
}

static unsigned ceil_log2(size_t value)
{
    return value == 1 ? 0 : floor_log2(value - 1) + 1;
}

/* Bytes from offset up to the next multiple of align; cannot overflow, unlike offset+align-1. */
static size_t padding_to(size_t offset, size_t align)
{
    return (align - (offset & (align - 1))) & (align - 1);
}

/* ---- block descriptors ---- */

/* A cleared descriptor, in no list; NULL on malloc failure. */
static struct block *descriptor_get(struct heap *heap)
{
    struct block *b = heap->spare;
    if (b)
        heap->spare = b->list_next;
    else if (!(b = malloc(sizeof(*b))))
        return NULL;
    *b = (struct block){0};
    return b;
}

static void descriptor_put(struct heap *heap, struct block *b)
{
    if (!b)
        return;
    b->list_next = heap->spare;
    heap->spare = b;
}

/* ---- size-class lists of free blocks ---- */

static void class_insert(struct heap *heap, struct block *b)
{
    unsigned c = floor_log2(b->size);
    b->is_free = true;
    b->list_prev = NULL;
    b->list_next = heap->classes[c];
    if (b->list_next)
        b->list_next->list_prev = b;
    heap->classes[c] = b;
    heap->nonempty |= 1ull << c;
}

static void class_remove(struct heap *heap, struct block *b)
{
    unsigned c = floor_log2(b->size);
    if (b->list_prev)
        b->list_prev->list_next = b->list_next;
    else
        heap->classes[c] = b->list_next;
    if (b->list_next)
        b->list_next->list_prev = b->list_prev;
    if (!heap->classes[c])
        heap->nonempty &= ~(1ull << c);
    b->is_free = false;
}

static bool block_fits(const struct block *b, size_t size, size_t align)
{
    size_t pad = padding_to(b->offset, align);
    return b->size >= pad && b->size - pad >= size;
}

/* The first of at most `limit` blocks of class c, in list order, that holds the request. */
static struct block *class_first_fit(const struct heap *heap, unsigned c, size_t size, size_t align,
                                     size_t limit)
{
    for (struct block *b = heap->classes[c]; b && limit; b = b->list_next, limit--)
        if (block_fits(b, size, align))
            return b;
    return NULL;
}

/* The free block to carve size bytes at align from (size and align multiples of min_align,
 * size <= heap->size), or NULL when none holds it. */
static struct block *find_fit(const struct heap *heap, size_t size, size_t align)
{
    unsigned own = floor_log2(size);
    struct block *b = class_first_fit(heap, own, size, align, HEAP_OWN_CLASS_PROBE);
    if (b)
        return b;
    /* Blocks start at multiples of min_align, so padding is at most align - min_align: any
     * block of at least size + that slack fits, and so does the head of any class from
     * ceil_log2(size + slack) up. Taking the smallest such class is O(1). */
    unsigned sure = HEAP_CLASSES;
    size_t slack = align - heap->min_align;
    if (slack <= heap->size - size) {
        sure = ceil_log2(size + slack);
        uint64_t sure_classes = sure < HEAP_CLASSES ? heap->nonempty & (~0ull << sure) : 0;
        if (sure_classes)
            return heap->classes[__builtin_ctzll(sure_classes)];
    }
    /* Nothing fits for sure: scan every block that might, so that -1 means nothing fits. This
     * is linear, but only runs when the heap is nearly full or badly fragmented. */
    for (unsigned c = own; c < sure; c++)
        if ((heap->nonempty >> c & 1) && (b = class_first_fit(heap, c, size, align, SIZE_MAX)))
            return b;
    return NULL;
}

/* ---- live blocks by offset ---- */

static size_t bucket_of(const struct heap *heap, size_t offset)
{
    /* Fibonacci hashing: the top bits of the product mix every bit of the offset. */
    uint64_t key = (uint64_t)(offset / heap->min_align) * 0x9E3779B97F4A7C15ull;
    return (size_t)(key >> (64 - heap->bucket_bits));
}

static struct block **live_slot(const struct heap *heap, size_t offset)
{
    struct block **slot = &heap->buckets[bucket_of(heap, offset)];
    while (*slot && (*slot)->offset != offset)
        slot = &(*slot)->hash_next;
    return slot;
}

static struct block *live_find(const struct heap *heap, size_t offset)
{
    return heap ? *live_slot(heap, offset) : NULL;
}

static void live_insert(struct heap *heap, struct block *b)
{
    struct block **bucket = &heap->buckets[bucket_of(heap, b->offset)];
    b->hash_next = *bucket;
    *bucket = b;
    heap->live_blocks++;
    heap->used += b->size;
}

/* Doubles the table (or makes the first one); on malloc failure the old table stays. */
static int live_table_grow(struct heap *heap)
{
    unsigned bits = heap->buckets ? heap->bucket_bits + 1 : HEAP_MIN_BUCKET_BITS;
    struct block **buckets = calloc((size_t)1 << bits, sizeof(*buckets));
    if (!buckets)
        return -1;
    struct block **old = heap->buckets;
    size_t old_count = old ? (size_t)1 << heap->bucket_bits : 0;
    heap->buckets = buckets;
    heap->bucket_bits = bits;
    for (size_t i = 0; i < old_count; i++) {
        for (struct block *b = old[i], *next; b; b = next) {
            next = b->hash_next;
            size_t at = bucket_of(heap, b->offset);
            b->hash_next = buckets[at];
            buckets[at] = b;
        }
    }
    free(old);
    return 0;
}

/* ---- address-order list ---- */

/* Cuts b after its first `keep` bytes; `rest` (obtained by the caller before changing anything,
 * so that a malloc failure leaves the heap as it was) becomes the block after it, in no list. */
static struct block *block_split(struct block *b, size_t keep, struct block *rest)
{
    rest->offset = b->offset + keep;
    rest->size = b->size - keep;
    rest->prev = b;
    rest->next = b->next;
    if (b->next)
        b->next->prev = rest;
    b->next = rest;
    b->size = keep;
    return rest;
}

/* Merges the block after b (taken off every list by the caller) into b and releases it. */
static void block_absorb_next(struct heap *heap, struct block *b)
{
    struct block *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    descriptor_put(heap, n);
}

/* ---- interface ---- */

struct heap *heap_create(size_t size, size_t min_align)
{
    if (min_align < 8 || (min_align & (min_align - 1)))
        return NULL;
    struct heap *heap = calloc(1, sizeof(*heap));
    if (!heap)
        return NULL;
    heap->min_align = min_align;
    heap->size = size & ~(min_align - 1); /* a partial last unit could hold no block */
    if (live_table_grow(heap))
        goto fail;
    if (heap->size) {
        heap->first = calloc(1, sizeof(*heap->first));
        if (!heap->first)
            goto fail;
        heap->first->size = heap->size;
        class_insert(heap, heap->first);
    }
    return heap;
fail:
    free(heap->buckets);
    free(heap);
    return NULL;
}

void heap_destroy(struct heap *heap)
{
    if (!heap)
        return;
    for (struct block *b = heap->first, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    for (struct block *b = heap->spare, *next; b; b = next) {
        next = b->list_next;
        free(b);
    }
    free(heap->buckets);
    free(heap);
}

/* Takes a live block of exactly size bytes at align out of free block b, returning the front
 * padding and the tail to the free lists; NULL (heap unchanged) on malloc failure. */
static struct block *block_carve(struct heap *heap, struct block *b, size_t size, size_t align)
{
    size_t pad = padding_to(b->offset, align);
    size_t tail = b->size - pad - size;
    struct block *aligned = NULL, *rest = NULL;
    if ((pad && !(aligned = descriptor_get(heap))) || (tail && !(rest = descriptor_get(heap)))) {
        descriptor_put(heap, aligned);
        return NULL;
    }
    class_remove(heap, b);
    if (pad) { /* b keeps the padding and stays free */
        block_split(b, pad, aligned);
        class_insert(heap, b);
        b = aligned;
    }
    if (tail)
        class_insert(heap, block_split(b, size, rest));
    return b;
}

int heap_alloc(struct heap *heap, size_t size, size_t align, size_t *offset)
{
    if (!heap || !offset || !size || size > heap->size || (align & (align - 1)))
        return -1;
    if (align < heap->min_align)
        align = heap->min_align;
    /* No wrap: heap->size is a multiple of min_align, so rounding size up stays within it. */
    size = (size + heap->min_align - 1) & ~(heap->min_align - 1);
    struct block *b = find_fit(heap, size, align);
    if (!b)
        return -1;
    if (heap->live_blocks >= ((size_t)1 << heap->bucket_bits) && live_table_grow(heap))
        return -1;
    b = block_carve(heap, b, size, align);
    if (!b)
        return -1;
    live_insert(heap, b);
    *offset = b->offset;
    return 0;
}

int heap_free(struct heap *heap, size_t offset)
{
    if (!heap)
        return -1;
    struct block **slot = live_slot(heap, offset);
    struct block *b = *slot;
    if (!b)
        return -1;
    *slot = b->hash_next;
    heap->live_blocks--;
    heap->used -= b->size;
    if (b->next && b->next->is_free) {
        class_remove(heap, b->next);
        block_absorb_next(heap, b);
    }
    if (b->prev && b->prev->is_free) {
        b = b->prev;
        class_remove(heap, b); /* its size changes, and with it its class */
        block_absorb_next(heap, b);
    }
    class_insert(heap, b);
    return 0;
}

size_t heap_block_size(const struct heap *heap, size_t offset)
{
    const struct block *b = live_find(heap, offset);
    return b ? b->size : 0;
}

int heap_resize(struct heap *heap, size_t offset, size_t new_size)
{
    struct block *b = live_find(heap, offset);
    if (!b || !new_size || new_size > heap->size)
        return -1;
    new_size = (new_size + heap->min_align - 1) & ~(heap->min_align - 1);
    bool next_free = b->next && b->next->is_free;
    size_t room = b->size + (next_free ? b->next->size : 0);
    if (new_size > room)
        return -1;
    if (new_size == b->size)
        return 0;
    /* Take the following free range whole, then give back what new_size does not need. */
    struct block *rest = NULL;
    if (new_size < room && !(rest = descriptor_get(heap)))
        return -1;
    heap->used = heap->used - b->size + new_size;
    if (next_free) {
        class_remove(heap, b->next);
        block_absorb_next(heap, b);
    }
    if (rest)
        class_insert(heap, block_split(b, new_size, rest));
    return 0;
}

void heap_stats(const struct heap *heap, struct heap_stats *stats)
{
    if (!stats)
        return;
    *stats = (struct heap_stats){0};
    if (!heap)
        return;
    stats->used = heap->used;
    stats->free = heap->size - heap->used;
    stats->live_blocks = heap->live_blocks;
    /* The largest free range is in the highest non-empty class. */
    if (heap->nonempty) {
        unsigned top = (unsigned)(63 - __builtin_clzll(heap->nonempty));
        for (const struct block *b = heap->classes[top]; b; b = b->list_next)
            if (b->size > stats->largest_free)
                stats->largest_free = b->size;
    }
}
