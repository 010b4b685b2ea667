/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 9.3: malloc, calloc, align, realloc, free, malloc_with_hints and the deprecated
 * names. Offsets are symmetric, out-of-memory gives NULL on every PE, and the heap survives
 * fragmentation and exhaustion. */
#include "check.h"

#include <string.h>

static long offsets[64];
static long votes[64];

/* Every PE reports a value to PE 0's slot array; returns 1 on PE 0 if all agree. */
static int all_agree(long value, int me, int n)
{
    shmem_long_p(&offsets[me], value, 0);
    shmem_barrier_all();
    int same = 1;
    if (me == 0)
        for (int p = 1; p < n; p++)
            same &= offsets[p] == offsets[0];
    shmem_barrier_all();
    return same;
}

static void test_symmetric_offsets(int me, int n, char *base)
{
    char *a = shmem_malloc(1000), *b = shmem_malloc_with_hints(3000, SHMEM_MALLOC_ATOMICS_REMOTE);
    char *c = shmem_align(4096, 100);
    CHECK(a && b && c, "allocations returned NULL");
    CHECK(all_agree(a - base, me, n), "shmem_malloc offset differs between PEs");
    CHECK(all_agree(b - base, me, n), "shmem_malloc_with_hints offset differs between PEs");
    CHECK(all_agree(c - base, me, n), "shmem_align offset differs between PEs");
    CHECK(((uintptr_t)c % 4096) == 0, "shmem_align(4096) gave %p", (void *)c);
    /* alignments up to the heap size hold for absolute addresses, not only heap offsets */
    char *d = shmem_align(1 << 26, 10), *e = shmem_align(64, 10);
    char *f = shmem_align(1 << 20, 3000);
    CHECK(d && ((uintptr_t)d % (1 << 26)) == 0, "shmem_align(64 MiB) gave %p", (void *)d);
    CHECK(e && ((uintptr_t)e % 64) == 0, "shmem_align(64) gave %p", (void *)e);
    CHECK(f && ((uintptr_t)f % (1 << 20)) == 0, "shmem_align(1 MiB) gave %p", (void *)f);
    CHECK(all_agree(d - base, me, n), "shmem_align(64 MiB) offset differs between PEs");
    CHECK(all_agree(e - base, me, n), "shmem_align(64) offset differs between PEs");
    CHECK(all_agree(f - base, me, n), "shmem_align(1 MiB) offset differs between PEs");
    /* aligned blocks are usable remotely up to their last byte */
    if (c && d && e && f) {
        int right = (me + 1) % n, left = (me + n - 1) % n;
        shmem_char_p(&c[99], (char)(me + 1), right);
        shmem_char_p(&d[9], (char)(me + 2), right);
        shmem_char_p(&e[9], (char)(me + 3), right);
        shmem_char_p(&f[2999], (char)(me + 4), right);
        shmem_barrier_all();
        CHECK(c[99] == left + 1 && d[9] == left + 2 && e[9] == left + 3 && f[2999] == left + 4,
              "puts into aligned blocks: %d %d %d %d", c[99], d[9], e[9], f[2999]);
    }
    CHECK(shmem_align(48, 10) == NULL, "shmem_align with a non-power-of-two alignment");
    CHECK(shmem_align(4096, 0) == NULL, "shmem_align of 0 bytes");
    CHECK(shmem_malloc_with_hints(0, SHMEM_MALLOC_ATOMICS_REMOTE) == NULL,
          "shmem_malloc_with_hints of 0 bytes");
    shmem_free(f);
    shmem_free(e);
    shmem_free(d);
    shmem_free(c);
    shmem_free(b);
    shmem_free(a);
}

static void test_calloc_realloc(int me, int n)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    long *z = shmem_calloc(1000, sizeof(long));
    long nonzero = 0;
    for (int i = 0; i < 1000; i++)
        nonzero += z[i] != 0;
    CHECK(nonzero == 0, "shmem_calloc: %ld non-zero elements", nonzero);
    CHECK(shmem_calloc(0, 8) == NULL && shmem_calloc(8, 0) == NULL, "calloc of 0 bytes");
    CHECK(shmem_calloc(SIZE_MAX / 2, 4) == NULL, "calloc overflow gives NULL");
    /* memory that was used and freed comes back zeroed from calloc */
    unsigned char *dirty = shmem_malloc(8192);
    memset(dirty, 0xFF, 8192);
    shmem_free(dirty);
    unsigned char *clean = shmem_calloc(1024, 8);
    size_t nonzero_bytes = 0;
    for (int i = 0; clean && i < 8192; i++)
        nonzero_bytes += clean[i] != 0;
    CHECK(clean && nonzero_bytes == 0, "calloc after free: %zu non-zero bytes", nonzero_bytes);
    shmem_free(clean);
    for (int i = 0; i < 1000; i++)
        z[i] = me * 1000 + i;
    /* grow: contents kept, and the new block is symmetric (a peer can write into it) */
    long *g = shmem_realloc(z, 100000 * sizeof(long));
    CHECK(g != NULL, "realloc grow");
    long bad = 0;
    for (int i = 0; i < 1000; i++)
        bad += g[i] != me * 1000 + i;
    CHECK(bad == 0, "realloc grow lost %ld values", bad);
    shmem_long_p(&g[99999], me, right);
    shmem_barrier_all();
    CHECK(g[99999] == left, "put into the grown block");
    long *s = shmem_realloc(g, 10 * sizeof(long));
    CHECK(s != NULL, "realloc shrink");
    if (!s)
        return;
    bad = 0;
    for (int i = 0; i < 10; i++)
        bad += s[i] != me * 1000 + i;
    CHECK(bad == 0, "realloc shrink lost %ld values", bad);
    shmem_barrier_all();
    shmem_long_p(&s[9], -me, right);
    shmem_barrier_all();
    CHECK(s[9] == -left, "put into the shrunk block: %ld", s[9]);
    /* a failed realloc returns NULL and leaves the block as it was */
    long *failed = shmem_realloc(s, (size_t)1 << 50);
    CHECK(failed == NULL, "realloc to 1 PiB succeeded");
    bad = 0;
    for (int i = 0; i < 9; i++)
        bad += s[i] != me * 1000 + i;
    CHECK(bad == 0, "failed realloc changed %ld values", bad);
    shmem_barrier_all(); /* every PE has checked before s[0] changes */
    shmem_long_p(&s[0], me + 5, right);
    shmem_barrier_all();
    CHECK(s[0] == left + 5, "put into the block kept by a failed realloc: %ld", s[0]);
    CHECK(shmem_realloc(s, 0) == NULL, "realloc to 0 frees and returns NULL");
    long *fresh = shmem_realloc(NULL, 64);
    CHECK(fresh != NULL, "realloc(NULL) allocates");
    shmem_free(fresh);
}

static void test_exhaustion(int me, int n)
{
    CHECK(shmem_malloc(0) == NULL, "malloc(0) gives NULL");
    void *huge = shmem_malloc((size_t)1 << 50);
    CHECK(huge == NULL, "a 1 PiB allocation succeeded");
    /* every PE agrees on the NULL */
    shmem_long_p(&votes[me], huge == NULL, 0);
    shmem_barrier_all();
    if (me == 0)
        for (int p = 0; p < n; p++)
            CHECK(votes[p] == 1, "PE %d did not get NULL", p);
    long *small = shmem_malloc(sizeof(long));
    CHECK(small != NULL, "heap unusable after a failed allocation");
    shmem_long_p(small, 42 + me, (me + 1) % n);
    shmem_barrier_all();
    CHECK(*small == 42 + (me + n - 1) % n, "put after exhaustion");
    shmem_free(small);
}

/* Many blocks, every other freed: a block bigger than any hole goes elsewhere and nothing
 * overlaps, as remote writes of distinct patterns show. */
static void test_fragmentation(int me, int n)
{
    enum { BLOCKS = 64, SIZE = 4096 };
    unsigned char *blocks[BLOCKS];
    for (int i = 0; i < BLOCKS; i++)
        blocks[i] = shmem_malloc(SIZE);
    for (int i = 0; i < BLOCKS; i += 2)
        shmem_free(blocks[i]);
    unsigned char *big = shmem_malloc(SIZE * 8);
    CHECK(big != NULL, "large block after fragmentation");
    unsigned char pattern[SIZE * 8];
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 1; i < BLOCKS; i += 2) {
        memset(pattern, i, SIZE);
        shmem_putmem(blocks[i], pattern, SIZE, right);
    }
    memset(pattern, 0xBB, sizeof(pattern));
    shmem_putmem(big, pattern, sizeof(pattern), right);
    shmem_barrier_all();
    size_t bad = 0;
    for (int i = 1; i < BLOCKS; i += 2)
        for (int k = 0; k < SIZE; k++)
            bad += blocks[i][k] != i;
    for (int k = 0; k < SIZE * 8; k++)
        bad += big[k] != 0xBB;
    CHECK(bad == 0, "overlapping blocks: %zu bytes wrong (from PE %d)", bad, left);
    shmem_free(big);
    for (int i = 1; i < BLOCKS; i += 2)
        shmem_free(blocks[i]);
}

static void test_deprecated(int me, int n)
{
    long *p = shmalloc(16 * sizeof(long));
    long *q = shmemalign(256, 8);
    CHECK(p && q && ((uintptr_t)q % 256) == 0, "shmalloc/shmemalign");
    p[0] = me;
    p = shrealloc(p, 32 * sizeof(long));
    CHECK(p && p[0] == me, "shrealloc kept contents");
    shmem_long_p(&p[31], me, (me + 1) % n);
    shmem_barrier_all();
    CHECK(p[31] == (me + n - 1) % n, "put into a shrealloc'd block");
    shfree(q);
    shfree(p);
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    char *base = shmem_malloc(1);
    test_symmetric_offsets(me, n, base);
    test_calloc_realloc(me, n);
    test_exhaustion(me, n);
    test_fragmentation(me, n);
    test_deprecated(me, n);
    /* Everything freed: the same first block comes back. */
    char *again = shmem_malloc(1);
    CHECK(all_agree(again - base, me, n), "offsets diverged after the whole test");
    shmem_free(again);
    shmem_free(base);
    return check_finish();
}
