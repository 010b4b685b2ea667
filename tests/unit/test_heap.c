/* SPDX-License-Identifier: BSD-3-Clause */
/* The symmetric allocator: basics, alignment, exhaustion, coalescing, fragmentation, resize,
 * huge sizes, and a seeded random sequence run on two heaps (the offsets must agree) and checked
 * after every operation against a model of the live blocks. */
#include "heap.h"
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HEAP_SIZE ((size_t)1 << 24)
#define NONE SIZE_MAX

static size_t round_up(size_t value, size_t align)
{
    return (value + align - 1) & ~(align - 1);
}

/* The offset of a new block, or NONE when heap_alloc fails. */
static size_t alloc_at(struct heap *h, size_t size, size_t align)
{
    size_t offset = 0;
    return heap_alloc(h, size, align, &offset) == 0 ? offset : NONE;
}

static int stats_equal(const struct heap_stats *a, const struct heap_stats *b)
{
    return a->used == b->used && a->free == b->free && a->largest_free == b->largest_free &&
           a->live_blocks == b->live_blocks;
}

static void test_create(void)
{
    UNIT_CHECK(heap_create(1024, 12) == NULL, "min_align must be a power of two");
    UNIT_CHECK(heap_create(1024, 4) == NULL, "min_align must be at least 8");
    UNIT_CHECK(heap_create(1024, 0) == NULL, "min_align 0 refused");

    struct heap *h = heap_create(0, 64);
    struct heap_stats st;
    UNIT_CHECK(h != NULL, "an empty heap can be made");
    UNIT_CHECK(alloc_at(h, 64, 0) == NONE, "an empty heap allocates nothing");
    heap_stats(h, &st);
    UNIT_CHECK(st.used == 0 && st.free == 0 && st.largest_free == 0 && st.live_blocks == 0,
               "empty heap stats");
    heap_destroy(h);

    h = heap_create(1000, 64); /* the partial last 64-byte unit can hold no block */
    heap_stats(h, &st);
    UNIT_CHECK(st.free == 960 && st.largest_free == 960, "size rounds down: %zu", st.free);
    UNIT_CHECK(alloc_at(h, 960, 0) == 0, "the whole rounded heap");
    heap_destroy(h);
    heap_destroy(NULL);
}

static void test_basics(void)
{
    struct heap *h = heap_create(HEAP_SIZE, 64);
    size_t a = alloc_at(h, 100, 0), b = alloc_at(h, 64, 0), c = 0;
    UNIT_CHECK(a == 0, "first block at 0, got %zu", a);
    UNIT_CHECK(heap_block_size(h, a) == 128, "100 bytes round to 128, got %zu",
               heap_block_size(h, a));
    UNIT_CHECK(b == 128, "second block follows at 128, got %zu", b);
    UNIT_CHECK(heap_alloc(h, 0, 0, &c) == -1, "size 0 is refused");
    UNIT_CHECK(heap_alloc(h, 10, 48, &c) == -1, "non-power-of-two alignment refused");
    UNIT_CHECK(heap_block_size(h, a + 64) == 0, "no block starts inside a block");
    UNIT_CHECK(heap_free(h, a + 64) == -1, "free inside a block refused");
    UNIT_CHECK(heap_free(h, HEAP_SIZE - 64) == -1, "free of a free offset refused");
    UNIT_CHECK(heap_free(h, HEAP_SIZE * 2) == -1, "free outside the heap refused");
    UNIT_CHECK(heap_free(h, a) == 0, "free");
    UNIT_CHECK(heap_free(h, a) == -1, "double free refused");
    UNIT_CHECK(heap_block_size(h, a) == 0, "freed block has no size");
    UNIT_CHECK(heap_block_size(h, b) == 64, "the other block is intact");
    UNIT_CHECK(alloc_at(h, 128, 0) == 0, "same-size hole reused");
    struct heap_stats st;
    heap_stats(h, &st);
    UNIT_CHECK(st.used == 192 && st.live_blocks == 2 && st.free == HEAP_SIZE - 192,
               "stats: used %zu live %zu", st.used, st.live_blocks);
    heap_destroy(h);
}

static void test_alignment(void)
{
    struct heap *h = heap_create(HEAP_SIZE, 64);
    alloc_at(h, 100, 0); /* so that nothing after it is aligned by accident */
    size_t page = alloc_at(h, 10, 4096), mib = alloc_at(h, 10, (size_t)1 << 20);
    UNIT_CHECK(page != NONE && page % 4096 == 0 && page > 0, "4 KiB aligned: %zu", page);
    UNIT_CHECK(mib != NONE && mib % ((size_t)1 << 20) == 0 && mib > 0, "1 MiB aligned: %zu", mib);
    size_t small = alloc_at(h, 8, 16);
    UNIT_CHECK(small != NONE && small % 64 == 0, "align below min_align gives min_align");
    UNIT_CHECK(heap_block_size(h, small) == 64, "small block rounds to min_align");
    /* The padding before an aligned block is free and gets used. */
    size_t in_padding = alloc_at(h, 64, 0);
    UNIT_CHECK(in_padding < mib, "padding before the 1 MiB block reused: %zu", in_padding);
    for (size_t align = 8; align <= HEAP_SIZE / 4; align *= 2) {
        size_t o = alloc_at(h, align / 2 + 1, align);
        UNIT_CHECK(o != NONE && o % align == 0, "align %zu: %zu", align, o);
    }
    heap_destroy(h);

    h = heap_create(HEAP_SIZE, 8);
    size_t o = alloc_at(h, 8, (size_t)1 << 63);
    UNIT_CHECK(o == 0, "a fresh heap is aligned to anything at 0: %zu", o);
    UNIT_CHECK(alloc_at(h, 8, (size_t)1 << 63) == NONE, "no other 2^63-aligned offset");
    UNIT_CHECK(alloc_at(h, 8, HEAP_SIZE) == NONE, "no other heap-size-aligned offset");
    UNIT_CHECK(alloc_at(h, 8, HEAP_SIZE / 2) == HEAP_SIZE / 2, "half-heap alignment");
    heap_destroy(h);
}

static void test_exhaustion(void)
{
    enum { UNIT = 4096, COUNT = HEAP_SIZE / UNIT };
    struct heap *h = heap_create(HEAP_SIZE, 64);
    size_t n = 0, o;
    while ((o = alloc_at(h, UNIT, 0)) != NONE && n <= COUNT) {
        if (o != n * UNIT)
            break;
        n++;
    }
    UNIT_CHECK(n == COUNT && o == NONE, "filled by %zu blocks, expected %d", n, COUNT);
    struct heap_stats before, after;
    heap_stats(h, &before);
    UNIT_CHECK(before.free == 0 && before.largest_free == 0 && before.live_blocks == COUNT,
               "full: free %zu", before.free);
    UNIT_CHECK(alloc_at(h, 64, 0) == NONE, "a full heap refuses even 64 bytes");
    UNIT_CHECK(alloc_at(h, UNIT, 4096) == NONE, "and aligned requests");
    heap_stats(h, &after);
    UNIT_CHECK(stats_equal(&before, &after), "failure leaves the heap unchanged");
    UNIT_CHECK(heap_free(h, 7 * UNIT) == 0, "free one block");
    UNIT_CHECK(alloc_at(h, 2 * UNIT, 0) == NONE, "a larger block still does not fit");
    UNIT_CHECK(alloc_at(h, 64, 0) == 7 * UNIT, "the hole is used");
    UNIT_CHECK(alloc_at(h, UNIT - 64, 0) == 7 * UNIT + 64, "and the rest of it");
    UNIT_CHECK(alloc_at(h, 64, 0) == NONE, "full again");
    heap_destroy(h);
}

/* A, B, C freed in every order: the three always merge back into one range. */
static void test_coalescing(void)
{
    static const int orders[6][3] = {{0, 2, 1}, {0, 1, 2}, {1, 0, 2},
                                     {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    struct heap *h = heap_create(HEAP_SIZE, 64);
    for (int k = 0; k < 6; k++) {
        size_t blocks[3] = {alloc_at(h, 1000, 0), alloc_at(h, 5000, 0), alloc_at(h, 300, 0)};
        for (int i = 0; i < 3; i++)
            UNIT_CHECK(heap_free(h, blocks[orders[k][i]]) == 0, "order %d free %d", k, i);
        struct heap_stats st;
        heap_stats(h, &st);
        UNIT_CHECK(st.largest_free == HEAP_SIZE && st.free == HEAP_SIZE && st.used == 0 &&
                       st.live_blocks == 0,
                   "order %d: largest free %zu", k, st.largest_free);
    }
    UNIT_CHECK(alloc_at(h, HEAP_SIZE, 0) == 0, "whole heap in one block after all that");
    heap_destroy(h);
}

static void test_fragmentation(void)
{
    struct heap *h = heap_create(HEAP_SIZE, 64);
    size_t q[4];
    for (int i = 0; i < 4; i++)
        q[i] = alloc_at(h, HEAP_SIZE / 4, 0);
    UNIT_CHECK(heap_free(h, q[0]) == 0 && heap_free(h, q[2]) == 0, "free two quarters");
    struct heap_stats st;
    heap_stats(h, &st);
    UNIT_CHECK(st.largest_free == HEAP_SIZE / 4 && st.free == HEAP_SIZE / 2,
               "fragmented: largest %zu free %zu", st.largest_free, st.free);
    UNIT_CHECK(alloc_at(h, HEAP_SIZE / 2, 0) == NONE, "half fails though half is free");
    UNIT_CHECK(alloc_at(h, HEAP_SIZE / 4 + 64, 0) == NONE, "a bit over a quarter fails too");
    UNIT_CHECK(heap_free(h, q[1]) == 0, "free the quarter between the holes");
    UNIT_CHECK(alloc_at(h, HEAP_SIZE / 2, 0) == 0, "merged hole takes half");
    size_t rest = alloc_at(h, HEAP_SIZE / 4, 0);
    UNIT_CHECK(rest == HEAP_SIZE / 2, "and the last free quarter: %zu", rest);
    heap_destroy(h);
}

static void test_resize(void)
{
    struct heap *h = heap_create(HEAP_SIZE, 64);
    size_t a = alloc_at(h, 1000, 0);
    UNIT_CHECK(heap_resize(h, a, 5000) == 0 && heap_block_size(h, a) == 5056, "grow into free");
    size_t b = alloc_at(h, 64, 0);
    UNIT_CHECK(b == 5056, "next block follows the grown one: %zu", b);
    UNIT_CHECK(heap_resize(h, a, 6000) == -1 && heap_block_size(h, a) == 5056,
               "grow blocked by a live block");
    UNIT_CHECK(heap_resize(h, a, 5000) == 0 && heap_block_size(h, a) == 5056, "same size");
    UNIT_CHECK(heap_resize(h, a, 64) == 0 && heap_block_size(h, a) == 64, "shrink");
    UNIT_CHECK(heap_resize(h, a, 5056) == 0 && heap_block_size(h, a) == 5056,
               "grow back into exactly the freed tail");
    UNIT_CHECK(heap_resize(h, a, 64) == 0, "shrink again");
    UNIT_CHECK(alloc_at(h, 4992, 0) == 64, "freed tail reused");
    UNIT_CHECK(heap_resize(h, b, HEAP_SIZE - 5056) == 0, "last block grows to the heap end");
    UNIT_CHECK(heap_resize(h, b, HEAP_SIZE - 5056 + 64) == -1, "not past the end");
    UNIT_CHECK(heap_resize(h, a + 8, 10) == -1, "resize of a non-block refused");
    UNIT_CHECK(heap_resize(h, a, 0) == -1 && heap_block_size(h, a) == 64, "size 0 refused");
    UNIT_CHECK(heap_resize(h, a, SIZE_MAX) == -1 && heap_resize(h, a, SIZE_MAX - 63) == -1,
               "huge resize fails");
    struct heap_stats st;
    heap_stats(h, &st);
    UNIT_CHECK(st.used == HEAP_SIZE && st.free == 0, "used follows resizes: %zu", st.used);
    UNIT_CHECK(heap_free(h, b) == 0 && heap_resize(h, b, 64) == -1, "resize after free refused");
    heap_destroy(h);
}

static void test_huge(void)
{
    struct heap *h = heap_create(HEAP_SIZE, 64);
    size_t x = 0;
    struct heap_stats before, after;
    heap_stats(h, &before);
    UNIT_CHECK(heap_alloc(h, SIZE_MAX, 0, &x) == -1, "SIZE_MAX fails");
    UNIT_CHECK(heap_alloc(h, SIZE_MAX / 2, 0, &x) == -1, "SIZE_MAX/2 fails");
    UNIT_CHECK(heap_alloc(h, SIZE_MAX - 62, 0, &x) == -1, "just below SIZE_MAX fails");
    UNIT_CHECK(heap_alloc(h, HEAP_SIZE + 1, 0, &x) == -1, "one byte over the heap fails");
    UNIT_CHECK(heap_alloc(h, HEAP_SIZE, (size_t)1 << 63, &x) == 0 && x == 0,
               "whole heap at the largest alignment");
    UNIT_CHECK(heap_free(h, 0) == 0, "and back");
    heap_stats(h, &after);
    UNIT_CHECK(stats_equal(&before, &after), "heap unchanged by the failures");
    heap_destroy(h);

    /* A heap spanning almost all of size_t: offsets near the top must not wrap. */
    h = heap_create(SIZE_MAX, 64);
    size_t top = SIZE_MAX & ~(size_t)63;
    UNIT_CHECK(alloc_at(h, SIZE_MAX, 0) == NONE, "SIZE_MAX over the rounded heap fails");
    UNIT_CHECK(alloc_at(h, 64, (size_t)1 << 63) == 0, "first 2^63-aligned block at 0");
    UNIT_CHECK(alloc_at(h, 64, (size_t)1 << 63) == (size_t)1 << 63, "second at 2^63");
    UNIT_CHECK(alloc_at(h, 64, (size_t)1 << 63) == NONE, "no third");
    UNIT_CHECK(alloc_at(h, top - ((size_t)1 << 63) - 64, 0) == ((size_t)1 << 63) + 64,
               "the top half's rest");
    UNIT_CHECK(alloc_at(h, SIZE_MAX / 2, 0) == NONE, "SIZE_MAX/2 no longer fits");
    UNIT_CHECK(heap_resize(h, 0, SIZE_MAX) == -1, "resize to SIZE_MAX fails");
    UNIT_CHECK(heap_resize(h, 0, ((size_t)1 << 63) + 1) == -1, "resize over the next fails");
    UNIT_CHECK(heap_resize(h, 0, (size_t)1 << 63) == 0, "resize to the next block works");
    struct heap_stats st;
    heap_stats(h, &st);
    UNIT_CHECK(st.used == top && st.free == 0, "huge heap full: used %zu", st.used);
    heap_destroy(h);
}

/* ---- the random sequence ---- */

struct live {
    size_t offset, size, align;
};

struct model {
    struct live blocks[512];
    int n;
    size_t heap_size, min_align;
};

static uint64_t rng_state;

static uint64_t rng(void) /* xorshift64*: the same sequence on every libc */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

static int by_offset(const void *a, const void *b)
{
    size_t x = ((const struct live *)a)->offset, y = ((const struct live *)b)->offset;
    return (x > y) - (x < y);
}

/* The free gaps between live blocks (sorted by offset): gap i ends at sorted[i]. */
static size_t gap_start(const struct live *sorted, int i)
{
    return i == 0 ? 0 : sorted[i - 1].offset + sorted[i - 1].size;
}

static size_t gap_end(const struct model *m, const struct live *sorted, int i)
{
    return i == m->n ? m->heap_size : sorted[i].offset;
}

static int model_can_fit(const struct model *m, const struct live *sorted, size_t size,
                         size_t align)
{
    size = round_up(size, m->min_align);
    if (align < m->min_align)
        align = m->min_align;
    for (int i = 0; i <= m->n; i++) {
        size_t start = gap_start(sorted, i), end = gap_end(m, sorted, i);
        size_t aligned = round_up(start, align);
        if (aligned <= end && end - aligned >= size)
            return 1;
    }
    return 0;
}

/* Everything the heap reports must agree with the model; returns the number of violations. */
static int model_check(const struct model *m, const struct heap *h, struct live *sorted)
{
    int errors = 0;
    size_t used = 0, largest = 0;
    memcpy(sorted, m->blocks, sizeof(*sorted) * (size_t)m->n);
    qsort(sorted, (size_t)m->n, sizeof(*sorted), by_offset);
    for (int i = 0; i < m->n; i++) {
        const struct live *b = &sorted[i];
        used += b->size;
        errors += b->offset % b->align != 0 || b->offset % m->min_align != 0;
        errors += b->size % m->min_align != 0 || b->size > m->heap_size ||
                  b->offset > m->heap_size - b->size;
        errors += heap_block_size(h, b->offset) != b->size;
    }
    for (int i = 0; i <= m->n; i++) { /* overlap shows as a gap that ends before it starts */
        size_t start = gap_start(sorted, i), end = gap_end(m, sorted, i);
        if (end < start)
            errors++;
        else if (end - start > largest)
            largest = end - start;
    }
    struct heap_stats st;
    heap_stats(h, &st);
    /* Free ranges always merge, so each gap between live blocks is exactly one free range. */
    errors += st.used != used || st.free != m->heap_size - used || st.largest_free != largest ||
              st.live_blocks != (size_t)m->n;
    return errors;
}

struct run_counts {
    int allocs, alloc_failures, frees, resizes, resize_failures, bad_frees;
    int mismatches, model_errors;
};

/* One random operation on both heaps. The second heap's descriptors come from a malloc that
 * is disturbed between operations, so agreement shows that addresses do not matter. */
static void random_op(struct model *m, struct heap *h1, struct heap *h2, struct live *sorted,
                      struct run_counts *k)
{
    uint64_t r = rng() % 100;
    if (m->n == 0 || (r < 50 && m->n < (int)(sizeof(m->blocks) / sizeof(m->blocks[0])))) {
        size_t size = rng() % 8 ? rng() % 4096 + 1 : rng() % (m->heap_size / 16) + 1;
        size_t align = rng() % 4 ? 0 : (size_t)1 << (rng() % 21);
        size_t o1 = alloc_at(h1, size, align), o2 = alloc_at(h2, size, align);
        k->mismatches += o1 != o2;
        if (o1 == NONE) {
            k->alloc_failures++;
            k->model_errors += model_can_fit(m, sorted, size, align);
            return;
        }
        k->allocs++;
        size_t rounded = round_up(size, m->min_align);
        k->model_errors += heap_block_size(h1, o1) != rounded;
        m->blocks[m->n++] = (struct live){o1, rounded, align ? align : 1};
    } else if (r < 80) {
        int i = (int)(rng() % (uint64_t)m->n);
        size_t offset = m->blocks[i].offset;
        k->frees++;
        k->model_errors += heap_free(h1, offset) != 0;
        k->mismatches += heap_free(h2, offset) != 0;
        m->blocks[i] = m->blocks[--m->n];
        k->bad_frees++; /* a double free must fail on both and change nothing */
        k->model_errors += heap_free(h1, offset) != -1;
        k->mismatches += heap_free(h2, offset) != -1;
    } else if (r < 85) {
        struct live *b = &m->blocks[rng() % (uint64_t)m->n];
        size_t inside = b->offset + m->min_align * (1 + rng() % 4);
        if (inside - b->offset < b->size) {
            k->bad_frees++;
            k->model_errors += heap_free(h1, inside) != -1 || heap_resize(h1, inside, 8) != -1;
            k->mismatches += heap_free(h2, inside) != -1;
        }
    } else {
        struct live *b = &m->blocks[rng() % (uint64_t)m->n];
        size_t size = rng() % 2 ? rng() % (2 * b->size) + 1 : rng() % 65536 + 1;
        int rc1 = heap_resize(h1, b->offset, size), rc2 = heap_resize(h2, b->offset, size);
        k->mismatches += rc1 != rc2;
        size_t rounded = round_up(size, m->min_align);
        /* Resize must succeed exactly when the block plus the gap after it holds the size. */
        struct live *after = NULL;
        for (int i = 0; i < m->n; i++)
            if (m->blocks[i].offset > b->offset && (!after || m->blocks[i].offset < after->offset))
                after = &m->blocks[i];
        size_t room = (after ? after->offset : m->heap_size) - b->offset;
        k->model_errors += (rc1 == 0) != (rounded <= room);
        if (rc1 == 0) {
            k->resizes++;
            b->size = rounded;
        } else {
            k->resize_failures++;
        }
    }
}

static void test_random_sequence(size_t heap_size, size_t min_align, uint64_t seed)
{
    enum { OPS = 20000 };
    struct model *m = calloc(1, sizeof(*m));
    struct live *sorted = malloc(sizeof(m->blocks));
    struct heap *h1 = heap_create(heap_size, min_align), *h2 = heap_create(heap_size, min_align);
    void *junk[64] = {0};
    struct run_counts k = {0};
    m->heap_size = heap_size;
    m->min_align = min_align;
    rng_state = seed;
    model_check(m, h1, sorted);
    for (int op = 0; op < OPS; op++) {
        random_op(m, h1, h2, sorted, &k);
        k.model_errors += model_check(m, h1, sorted);
        size_t j = (size_t)op % 64;
        free(junk[j]);
        junk[j] = malloc((size_t)(op * 37 % 500) + 1);
    }
    for (int j = 0; j < 64; j++)
        free(junk[j]);
    UNIT_CHECK(k.mismatches == 0, "min_align %zu: two heaps diverged %d times", min_align,
               k.mismatches);
    UNIT_CHECK(k.model_errors == 0, "min_align %zu: %d model violations", min_align,
               k.model_errors);
    /* The sequence must reach every path, exhaustion included. */
    UNIT_CHECK(k.allocs > 1000 && k.alloc_failures > 50 && k.frees > 1000 && k.resizes > 100 &&
                   k.resize_failures > 100 && k.bad_frees > 1000,
               "coverage: %d allocs, %d failed, %d frees, %d resizes, %d failed, %d bad frees",
               k.allocs, k.alloc_failures, k.frees, k.resizes, k.resize_failures, k.bad_frees);
    for (int i = 0; i < m->n; i++)
        heap_free(h1, m->blocks[i].offset);
    struct heap_stats st;
    heap_stats(h1, &st);
    UNIT_CHECK(st.largest_free == heap_size / min_align * min_align && st.live_blocks == 0,
               "all freed: one range of %zu", st.largest_free);
    heap_destroy(h1);
    heap_destroy(h2);
    free(sorted);
    free(m);
}

int main(void)
{
    test_create();
    test_basics();
    test_alignment();
    test_exhaustion();
    test_coalescing();
    test_fragmentation();
    test_resize();
    test_huge();
    test_random_sequence((size_t)1 << 22, 64, 12345);
    test_random_sequence((size_t)3 << 20, 8, 777);
    test_random_sequence(((size_t)1 << 23) + 4096 * 3, 4096, 99);
    return unit_finish("test_heap");
}
