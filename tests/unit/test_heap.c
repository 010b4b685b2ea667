/* The symmetric allocator: alignment, exhaustion, coalescing, resize, determinism, and a random
 * sequence checked against a simple model (no overlap, inside the heap, used bytes add up). */
#include "heap.h"
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HEAP_SIZE (1u << 24)

static void test_basics(void)
{
    struct heap *h = heap_create(HEAP_SIZE, 64);
    size_t a, b, c;
    UNIT_CHECK(heap_alloc(h, 100, 0, &a) == 0 && a == 0, "first block at 0, got %zu", a);
    UNIT_CHECK(heap_block_size(h, a) == 128, "100 bytes round to 128, got %zu",
               heap_block_size(h, a));
    UNIT_CHECK(heap_alloc(h, 64, 0, &b) == 0 && b == 128, "second block at 128, got %zu", b);
    UNIT_CHECK(heap_alloc(h, 0, 0, &c) == -1, "size 0 is refused");
    UNIT_CHECK(heap_alloc(h, 10, 4096, &c) == 0 && c % 4096 == 0, "4 KiB aligned: %zu", c);
    UNIT_CHECK(heap_alloc(h, 10, 1 << 20, &c) == 0 && c % (1 << 20) == 0, "1 MiB aligned: %zu", c);
    UNIT_CHECK(heap_alloc(h, 10, 48, &c) == -1, "non-power-of-two alignment refused");
    UNIT_CHECK(heap_free(h, a + 64) == -1, "free inside a block refused");
    UNIT_CHECK(heap_free(h, a) == 0, "free");
    UNIT_CHECK(heap_free(h, a) == -1, "double free refused");
    UNIT_CHECK(heap_block_size(h, a) == 0, "freed block has no size");
    heap_destroy(h);
}

static void test_exhaustion_and_coalescing(void)
{
    struct heap *h = heap_create(HEAP_SIZE, 64);
    size_t x, blocks[4];
    UNIT_CHECK(heap_alloc(h, SIZE_MAX, 0, &x) == -1, "SIZE_MAX fails");
    UNIT_CHECK(heap_alloc(h, SIZE_MAX / 2, 0, &x) == -1, "SIZE_MAX/2 fails");
    UNIT_CHECK(heap_alloc(h, HEAP_SIZE + 1, 0, &x) == -1, "larger than heap fails");
    for (int i = 0; i < 4; i++)
        UNIT_CHECK(heap_alloc(h, HEAP_SIZE / 4, 0, &blocks[i]) == 0, "quarter %d", i);
    UNIT_CHECK(heap_alloc(h, 64, 0, &x) == -1, "full heap refuses");
    UNIT_CHECK(heap_free(h, blocks[0]) == 0 && heap_free(h, blocks[2]) == 0, "free two");
    struct heap_stats st;
    heap_stats(h, &st);
    UNIT_CHECK(st.largest_free == HEAP_SIZE / 4 && st.free == HEAP_SIZE / 2,
               "fragmented: largest %zu free %zu", st.largest_free, st.free);
    UNIT_CHECK(heap_alloc(h, HEAP_SIZE / 2, 0, &x) == -1, "half does not fit in the holes");
    UNIT_CHECK(heap_free(h, blocks[1]) == 0, "free the block between the holes");
    UNIT_CHECK(heap_alloc(h, HEAP_SIZE / 2, 0, &x) == 0 && x == 0, "merged hole takes half");
    UNIT_CHECK(heap_free(h, x) == 0 && heap_free(h, blocks[3]) == 0, "free the rest");
    heap_stats(h, &st);
    UNIT_CHECK(st.largest_free == HEAP_SIZE && st.used == 0 && st.live_blocks == 0,
               "all coalesced: largest %zu used %zu", st.largest_free, st.used);
    UNIT_CHECK(heap_alloc(h, HEAP_SIZE, 0, &x) == 0 && x == 0, "whole heap again");
    heap_destroy(h);
}

static void test_resize(void)
{
    struct heap *h = heap_create(HEAP_SIZE, 64);
    size_t a, b;
    heap_alloc(h, 1000, 0, &a);
    UNIT_CHECK(heap_resize(h, a, 5000) == 0 && heap_block_size(h, a) == 5056, "grow into free");
    heap_alloc(h, 64, 0, &b);
    UNIT_CHECK(b == 5056, "next block follows: %zu", b);
    UNIT_CHECK(heap_resize(h, a, 6000) == -1 && heap_block_size(h, a) == 5056, "blocked grow");
    UNIT_CHECK(heap_resize(h, a, 64) == 0 && heap_block_size(h, a) == 64, "shrink");
    size_t c;
    UNIT_CHECK(heap_alloc(h, 4992, 0, &c) == 0 && c == 64, "freed tail reused: %zu", c);
    UNIT_CHECK(heap_resize(h, a + 8, 10) == -1, "resize of a non-block refused");
    heap_destroy(h);
}

/* A seeded random sequence on two heaps: identical offsets (determinism), and a model check. */
struct live {
    size_t offset, size;
};

static int overlaps(const struct live *l, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (l[i].offset < l[j].offset + l[j].size && l[j].offset < l[i].offset + l[i].size)
                return 1;
    return 0;
}

static void test_random_sequence(void)
{
    enum { OPS = 20000, MAX_LIVE = 200 };
    struct heap *h1 = heap_create(HEAP_SIZE, 64), *h2 = heap_create(HEAP_SIZE, 64);
    struct live live[MAX_LIVE];
    int n = 0, mismatches = 0, model_errors = 0;
    srand(12345);
    for (int op = 0; op < OPS; op++) {
        int r = rand();
        if (n < MAX_LIVE && (r % 3 != 0 || n == 0)) {
            size_t size = (size_t)(rand() % 100000) + 1, align = (size_t)1 << (rand() % 14);
            size_t o1, o2;
            int rc1 = heap_alloc(h1, size, align, &o1), rc2 = heap_alloc(h2, size, align, &o2);
            if (rc1 != rc2 || (rc1 == 0 && o1 != o2))
                mismatches++;
            if (rc1 == 0) {
                if (o1 % align || o1 % 64 || o1 + size > HEAP_SIZE)
                    model_errors++;
                live[n++] = (struct live){o1, heap_block_size(h1, o1)};
            }
        } else if (r % 2) {
            int i = rand() % n;
            if (heap_free(h1, live[i].offset) || heap_free(h2, live[i].offset))
                model_errors++;
            live[i] = live[--n];
        } else {
            int i = rand() % n;
            size_t size = (size_t)(rand() % 200000) + 1;
            int rc1 = heap_resize(h1, live[i].offset, size);
            if (rc1 != heap_resize(h2, live[i].offset, size))
                mismatches++;
            live[i].size = heap_block_size(h1, live[i].offset);
            if (rc1 == 0 && live[i].size < size)
                model_errors++;
        }
        if (op % 1000 == 0) {
            struct heap_stats st;
            heap_stats(h1, &st);
            size_t sum = 0;
            for (int i = 0; i < n; i++)
                sum += live[i].size;
            if (overlaps(live, n) || st.used != sum || st.live_blocks != (size_t)n)
                model_errors++;
        }
    }
    UNIT_CHECK(mismatches == 0, "two heaps diverged %d times", mismatches);
    UNIT_CHECK(model_errors == 0, "%d model violations", model_errors);
    heap_destroy(h1);
    heap_destroy(h2);
}

int main(void)
{
    UNIT_CHECK(heap_create(1024, 12) == NULL, "min_align must be a power of two");
    UNIT_CHECK(heap_create(1024, 4) == NULL, "min_align must be at least 8");
    test_basics();
    test_exhaustion_and_coalescing();
    test_resize();
    test_random_sequence();
    return unit_finish("test_heap");
}
