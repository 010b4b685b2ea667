/* Blocks tile [0, size) in address order (prev/next) so that a freed block merges with free
 * neighbours in O(1). Free blocks also sit in segregated lists, one per power-of-two size class,
 * for a fit search bounded by the number of classes; live blocks are found by offset through a
 * hash table. Every list order depends only on the call sequence, which keeps the allocator
 * deterministic across PEs. */
#include "heap.h"

#include <stdint.h>
#include <stdlib.h>

#define HEAP_CLASSES 64

struct block {
    size_t offset, size;
    struct block *prev, *next;           /* neighbours in address order */
    struct block *free_prev, *free_next; /* size-class list, free blocks only */
    struct block *hash_next;             /* live-block hash chain */
    int free;
};

struct heap {
    size_t size, min_align;
    struct block *classes[HEAP_CLASSES];
    struct block **buckets; /* live blocks by offset */
    size_t n_buckets, n_live, used;
};

static unsigned size_class(size_t size)
{
    return (unsigned)(63 - __builtin_clzll((unsigned long long)size));
}

static size_t hash_index(const struct heap *heap, size_t offset)
{
    return (size_t)(((uint64_t)(offset / heap->min_align) * 0x9E3779B97F4A7C15ull) >> 20) &
           (heap->n_buckets - 1);
}

static void free_list_push(struct heap *heap, struct block *b)
{
    struct block **head = &heap->classes[size_class(b->size)];
    b->free = 1;
    b->free_prev = NULL;
    b->free_next = *head;
    if (*head)
        (*head)->free_prev = b;
    *head = b;
}

static void free_list_remove(struct heap *heap, struct block *b)
{
    if (b->free_prev)
        b->free_prev->free_next = b->free_next;
    else
        heap->classes[size_class(b->size)] = b->free_next;
    if (b->free_next)
        b->free_next->free_prev = b->free_prev;
    b->free = 0;
}

static int hash_grow(struct heap *heap)
{
    size_t n = heap->n_buckets ? heap->n_buckets * 2 : 64;
    struct block **buckets = calloc(n, sizeof(*buckets));
    if (!buckets)
        return -1;
    struct block **old = heap->buckets;
    size_t old_n = heap->n_buckets;
    heap->buckets = buckets;
    heap->n_buckets = n;
    for (size_t i = 0; i < old_n; i++) {
        for (struct block *b = old[i], *next; b; b = next) {
            next = b->hash_next;
            size_t at = hash_index(heap, b->offset);
            b->hash_next = buckets[at];
            buckets[at] = b;
        }
    }
    free(old);
    return 0;
}

static void hash_insert(struct heap *heap, struct block *b)
{
    size_t at = hash_index(heap, b->offset);
    b->hash_next = heap->buckets[at];
    heap->buckets[at] = b;
    heap->n_live++;
}

static struct block **hash_slot(const struct heap *heap, size_t offset)
{
    struct block **slot = &heap->buckets[hash_index(heap, offset)];
    while (*slot && (*slot)->offset != offset)
        slot = &(*slot)->hash_next;
    return slot;
}

/* Splits b at offset b->offset + first: b keeps the first part, rest (allocated by the caller
 * before it changed anything, so that a malloc failure leaves the heap as it was) becomes the
 * block after it, in no list. Returns rest. */
static struct block *block_split(struct block *b, size_t first, struct block *rest)
{
    rest->offset = b->offset + first;
    rest->size = b->size - first;
    rest->prev = b;
    rest->next = b->next;
    if (b->next)
        b->next->prev = rest;
    b->next = rest;
    b->size = first;
    return rest;
}

/* Merges b->next into b and releases it. */
static void block_absorb_next(struct block *b)
{
    struct block *n = b->next;
    b->size += n->size;
    b->next = n->next;
    if (n->next)
        n->next->prev = b;
    free(n);
}

struct heap *heap_create(size_t size, size_t min_align)
{
    if (min_align < 8 || (min_align & (min_align - 1)))
        return NULL;
    struct heap *heap = calloc(1, sizeof(*heap));
    if (!heap || hash_grow(heap))
        goto fail;
    heap->min_align = min_align;
    heap->size = size & ~(min_align - 1);
    if (heap->size) {
        struct block *all = calloc(1, sizeof(*all));
        if (!all)
            goto fail;
        all->size = heap->size;
        free_list_push(heap, all);
    }
    return heap;
fail:
    if (heap)
        free(heap->buckets);
    free(heap);
    return NULL;
}

void heap_destroy(struct heap *heap)
{
    if (!heap)
        return;
    struct block *b = NULL;
    /* Find the first block through any block: free lists or live hash. */
    for (unsigned c = 0; c < HEAP_CLASSES && !b; c++)
        b = heap->classes[c];
    for (size_t i = 0; i < heap->n_buckets && !b; i++)
        b = heap->buckets[i];
    while (b && b->prev)
        b = b->prev;
    while (b) {
        struct block *next = b->next;
        free(b);
        b = next;
    }
    free(heap->buckets);
    free(heap);
}

static size_t align_up(size_t value, size_t align)
{
    return (value + align - 1) & ~(align - 1);
}

/* The first block in class c (list order) that holds size bytes at the alignment. */
static struct block *class_find(struct heap *heap, unsigned c, size_t size, size_t align)
{
    for (struct block *b = heap->classes[c]; b; b = b->free_next) {
        size_t pad = align_up(b->offset, align) - b->offset;
        if (b->size >= pad && b->size - pad >= size)
            return b;
    }
    return NULL;
}

int heap_alloc(struct heap *heap, size_t size, size_t align, size_t *offset)
{
    if (!size || size > heap->size || (align & (align - 1)))
        return -1;
    if (align < heap->min_align)
        align = heap->min_align;
    size = align_up(size, heap->min_align);
    struct block *b = NULL;
    for (unsigned c = size_class(size); c < HEAP_CLASSES && !b; c++)
        b = class_find(heap, c, size, align);
    if (!b || (heap->n_live * 2 >= heap->n_buckets && hash_grow(heap)))
        return -1;
    size_t pad = align_up(b->offset, align) - b->offset;
    struct block *aligned = pad ? calloc(1, sizeof(*aligned)) : NULL;
    struct block *tail = b->size - pad > size ? calloc(1, sizeof(*tail)) : NULL;
    if ((pad && !aligned) || (b->size - pad > size && !tail)) {
        free(aligned);
        free(tail);
        return -1;
    }
    free_list_remove(heap, b);
    if (pad) { /* b keeps the padding in front and goes back to the free lists */
        block_split(b, pad, aligned);
        free_list_push(heap, b);
        b = aligned;
    }
    if (tail)
        free_list_push(heap, block_split(b, size, tail));
    hash_insert(heap, b);
    heap->used += b->size;
    *offset = b->offset;
    return 0;
}

int heap_free(struct heap *heap, size_t offset)
{
    struct block **slot = hash_slot(heap, offset);
    struct block *b = *slot;
    if (!b)
        return -1;
    *slot = b->hash_next;
    heap->n_live--;
    heap->used -= b->size;
    if (b->next && b->next->free) {
        free_list_remove(heap, b->next);
        block_absorb_next(b);
    }
    if (b->prev && b->prev->free) {
        struct block *p = b->prev;
        free_list_remove(heap, p);
        block_absorb_next(p);
        b = p;
    }
    free_list_push(heap, b);
    return 0;
}

size_t heap_block_size(const struct heap *heap, size_t offset)
{
    struct block *b = *hash_slot(heap, offset);
    return b ? b->size : 0;
}

int heap_resize(struct heap *heap, size_t offset, size_t new_size)
{
    struct block *b = *hash_slot(heap, offset);
    if (!b || !new_size || new_size > heap->size)
        return -1;
    new_size = align_up(new_size, heap->min_align);
    struct block *n = b->next;
    size_t room = b->size + (n && n->free ? n->size : 0);
    if (new_size > room)
        return -1;
    if (new_size == b->size)
        return 0;
    /* Give the following free range (if any) back to b, then split off what is not needed. */
    struct block *rest = room > new_size ? calloc(1, sizeof(*rest)) : NULL;
    if (room > new_size && !rest)
        return -1;
    heap->used += new_size - b->size;
    if (n && n->free) {
        free_list_remove(heap, n);
        block_absorb_next(b);
    }
    if (rest)
        free_list_push(heap, block_split(b, new_size, rest));
    return 0;
}

void heap_stats(const struct heap *heap, struct heap_stats *stats)
{
    stats->used = heap->used;
    stats->free = heap->size - heap->used;
    stats->live_blocks = heap->n_live;
    stats->largest_free = 0;
    for (unsigned c = HEAP_CLASSES; c-- > 0 && !stats->largest_free;)
        for (struct block *b = heap->classes[c]; b; b = b->free_next)
            if (b->size > stats->largest_free)
                stats->largest_free = b->size;
}
