/* SPDX-License-Identifier: BSD-3-Clause */
/* Patterns the GPU itself writes (the runtime's memset into device memory, never the library),
 * moved between the PEs' GPU heaps by put, get, strided put and get, put-with-signal, atomics and
 * collectives, then read back with the runtime's own copy: every byte is checked on every PE.
 * Every PE needs a GPU: the CUDA driver (a real one, or its test double) or the HIP double. */
#include "check.h"
#include "gpu_runtime.h"

#include <stdint.h>

/* Segments of a length that is not a multiple of 8, so that a word of a pattern mixes two fills. */
enum { SEGMENT = 4099, SEGMENTS = 37, LEN = SEGMENT * SEGMENTS, ROUNDS = 50 };

static int me, n;
static shmem_team_t team;

/* The byte PE pe's GPU writes at offset of its pattern. The "small" pattern keeps every byte at
 * 16 or less, so that a sum of up to 15 PEs' words adds byte by byte without carries. */
static int pattern_at(int pe, size_t offset)
{
    return (pe * 31 + (int)(offset / SEGMENT) * 7 + 1) & 0xff;
}

static int small_at(int pe, size_t offset)
{
    return 1 + (pe * 3 + (int)(offset / SEGMENT)) % 16;
}

static void fill(void *dev, int (*byte_at)(int, size_t), int pe)
{
    for (size_t s = 0; s < SEGMENTS; s++)
        CHECK(gpu_runtime_fill((char *)dev + s * SEGMENT, byte_at(pe, s * SEGMENT), SEGMENT) == 0,
              "the runtime's memset of segment %zu", s);
}

static void zero(void *dev, size_t len)
{
    CHECK(gpu_runtime_fill(dev, 0, len) == 0, "the runtime's memset to zero");
}

/* What a check expects at each byte offset of the device buffer it reads. */
struct expected {
    int (*at)(const struct expected *e, size_t offset);
    int pe;       /* whose pattern */
    size_t len;   /* bytes written; zero after them */
    size_t count; /* elements of a strided transfer */
};

static void check_bytes(const void *dev, size_t len, const struct expected *e, const char *what)
{
    unsigned char *host = malloc(len);
    CHECK(host && gpu_runtime_read(host, dev, len) == 0, "%s: the runtime's copy back", what);
    size_t bad = 0, first = 0;
    for (size_t i = 0; host && i < len; i++)
        if (host[i] != e->at(e, i) && !bad++)
            first = i;
    CHECK(bad == 0, "%s: %zu of %zu bytes wrong, the first at %zu: 0x%02x, expected 0x%02x", what,
          bad, len, first, host ? host[first] : 0, e->at(e, first));
    free(host);
}

static int prefix_at(const struct expected *e, size_t offset)
{
    return offset < e->len ? pattern_at(e->pe, offset) : 0;
}

/* 3-byte pieces at offsets 8001 + 4k, counted from e->len = 8000 (the buffer checked starts
 * there): the byte before each piece stays zero. */
static int pieces_at(const struct expected *e, size_t offset)
{
    size_t at = e->len + offset;
    return offset % 4 != 0 && at + (4 - offset % 4) <= 12000 ? pattern_at(e->pe, at) : 0;
}

/* Longs put with a target stride of 3 from a source stride of 2: target element 3k holds source
 * element 2k for k < count; the rest stays zero. */
static int iput_at(const struct expected *e, size_t offset)
{
    size_t k = offset / 8, byte = offset % 8;
    return k % 3 == 0 && k / 3 < e->count ? pattern_at(e->pe, k / 3 * 2 * 8 + byte) : 0;
}

/* Longs got with a target stride of 2 from a source stride of 3. */
static int iget_at(const struct expected *e, size_t offset)
{
    size_t k = offset / 8, byte = offset % 8;
    return k % 2 == 0 && k / 2 < e->count ? pattern_at(e->pe, k / 2 * 3 * 8 + byte) : 0;
}

static void test_put_get(unsigned char *src, unsigned char *dst)
{
    const size_t sizes[] = {1, 8, 500, 70000, LEN};
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    fill(src, pattern_at, me);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char what[64];
        zero(dst, LEN);
        shmem_barrier_all();
        shmem_putmem(dst, src, sizes[i], next);
        shmem_barrier_all();
        snprintf(what, sizeof what, "put of %zu bytes", sizes[i]);
        check_bytes(dst, LEN, &(struct expected){prefix_at, prev, sizes[i], 0}, what);

        zero(dst, LEN);
        shmem_getmem(dst, src, sizes[i], next);
        snprintf(what, sizeof what, "get of %zu bytes", sizes[i]);
        check_bytes(dst, LEN, &(struct expected){prefix_at, next, sizes[i], 0}, what);
        shmem_barrier_all();
    }

    /* Non-blocking, device to device: the source may be read, and dest filled, as late as the
     * quiet. Then 1000 words one put_nbi each, and 3-byte pieces between odd offsets. */
    zero(dst, LEN);
    shmem_barrier_all();
    shmem_putmem_nbi(dst, src, LEN, next);
    shmem_quiet();
    shmem_barrier_all();
    check_bytes(dst, LEN, &(struct expected){prefix_at, prev, LEN, 0}, "put_nbi");
    zero(dst, LEN);
    shmem_getmem_nbi(dst, src, LEN, next);
    shmem_quiet();
    check_bytes(dst, LEN, &(struct expected){prefix_at, next, LEN, 0}, "get_nbi");
    zero(dst, LEN);
    shmem_barrier_all();
    for (size_t i = 0; i < 1000; i++)
        shmem_putmem_nbi(dst + 8 * i, src + 8 * i, 8, next);
    for (size_t at = 8001; at + 3 <= 12000; at += 4)
        shmem_putmem_nbi(dst + at, src + at, 3, next);
    shmem_quiet();
    shmem_barrier_all();
    check_bytes(dst, 8000, &(struct expected){prefix_at, prev, 8000, 0}, "1000 8-byte put_nbi");
    check_bytes(dst + 8000, 4000, &(struct expected){pieces_at, prev, 8000, 0},
                "3-byte put_nbi pieces");
    shmem_barrier_all();

    size_t count = LEN / 8 / 3;
    zero(dst, LEN);
    shmem_barrier_all();
    shmem_long_iput((long *)dst, (long *)src, 3, 2, count, next);
    shmem_barrier_all();
    check_bytes(dst, LEN, &(struct expected){iput_at, prev, 0, count}, "iput");
    zero(dst, LEN);
    shmem_long_iget((long *)dst, (long *)src, 2, 3, count, next);
    check_bytes(dst, LEN, &(struct expected){iget_at, next, 0, count}, "iget");
    shmem_barrier_all();
}

/* Small writes that overlap land in the order issued, and a small copy out of GPU memory reads
 * what a small write issued before it put there, not what one issued after it does: a GPU
 * applies the entries of a batch in parallel. */
static void test_batch_order(unsigned char *dst, long *word)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    const long a = 0x1111111111111111L, b = 0x2222222222222222L;
    const int c = 0x33333333;
    for (int round = 0; round < 3; round++) {
        zero(dst, 32);
        zero(word, sizeof(long));
        shmem_barrier_all();
        shmem_putmem_nbi(dst, &a, 8, next);
        shmem_putmem_nbi(dst, &b, 8, next);
        shmem_putmem_nbi(dst + 2, &c, 4, next);
        shmem_long_p(word, me * 10L + round, me);
        shmem_putmem_nbi(dst + 16, word, 8, next); /* reads the word when the batch runs */
        shmem_long_p(word, -1L, me);
        shmem_quiet();
        shmem_barrier_all();
        unsigned char expected[32] = {0}, seen[32];
        long carried = prev * 10L + round, last;
        memcpy(expected, &b, 8);
        memcpy(expected + 2, &c, 4);
        memcpy(expected + 16, &carried, 8);
        CHECK(gpu_runtime_read(seen, dst, 32) == 0 && gpu_runtime_read(&last, word, 8) == 0,
              "copy back");
        for (int i = 0; i < 32; i++)
            if (seen[i] != expected[i]) {
                CHECK(0, "round %d: byte %d is 0x%02x, expected 0x%02x", round, i, seen[i],
                      expected[i]);
                break;
            }
        CHECK_EQ(last, -1L);
        shmem_barrier_all();
    }
}

/* Block j (e->len bytes) holds PE j's pattern at its own offsets. */
static int own_blocks_at(const struct expected *e, size_t offset)
{
    return pattern_at((int)(offset / e->len), offset);
}

/* The data of a put-with-signal is in place when the target sees the signal: read with the
 * runtime's copy right after the wait, with no barrier between. */
static void test_put_signal(unsigned char *src, unsigned char *dst, uint64_t *signals)
{
    int next = (me + 1) % n, prev = (me + n - 1) % n;
    zero(dst, LEN);
    zero(signals, 2 * sizeof(uint64_t));
    shmem_barrier_all();
    shmem_putmem_signal(dst, src, LEN, &signals[0], (uint64_t)me + 1, SHMEM_SIGNAL_SET, next);
    shmem_signal_wait_until(&signals[0], SHMEM_CMP_EQ, (uint64_t)prev + 1);
    check_bytes(dst, LEN, &(struct expected){prefix_at, prev, LEN, 0}, "put with signal set");

    /* Every PE adds its block of dst on PE 0 and one to PE 0's count. */
    size_t block = LEN / (size_t)n;
    shmem_barrier_all();
    shmem_putmem_signal(dst + (size_t)me * block, src + (size_t)me * block, block, &signals[1], 1,
                        SHMEM_SIGNAL_ADD, 0);
    if (me == 0) {
        shmem_signal_wait_until(&signals[1], SHMEM_CMP_EQ, (uint64_t)n);
        check_bytes(dst, block * (size_t)n, &(struct expected){own_blocks_at, 0, block, 0},
                    "put with signal add");
    }
    shmem_barrier_all();
}

static void test_atomics(long *counter, int *counter32, long *slots)
{
    /* The counters start as the GPU's memset left them. */
    if (me == 0) {
        CHECK(gpu_runtime_fill(counter, 0x01, sizeof(long)) == 0, "memset of the counter");
        CHECK(gpu_runtime_fill(counter32, 0x02, sizeof(int)) == 0, "memset of the 32-bit one");
        zero(slots, (size_t)n * sizeof(long));
    }
    shmem_barrier_all();
    CHECK_EQ(shmem_long_atomic_fetch(counter, 0), 0x0101010101010101L);
    shmem_barrier_all();
    for (int r = 0; r < ROUNDS; r++) {
        shmem_long_atomic_fetch_add(counter, me + 1, 0);
        shmem_int_atomic_add(counter32, me + 1, 0);
    }
    CHECK_EQ(shmem_long_atomic_compare_swap(&slots[me], 0, me + 1, 0), 0);
    CHECK_EQ(shmem_long_atomic_compare_swap(&slots[me], 0, 99, 0), me + 1);
    shmem_barrier_all();
    if (me == 0) {
        long total = (long)ROUNDS * n * (n + 1) / 2, seen[2];
        int seen32;
        CHECK(gpu_runtime_read(seen, counter, sizeof(long)) == 0, "copy back");
        CHECK_EQ(seen[0], 0x0101010101010101L + total);
        CHECK(gpu_runtime_read(&seen32, counter32, sizeof(int)) == 0, "copy back");
        CHECK_EQ(seen32, 0x02020202 + total);
        long *host = malloc((size_t)n * sizeof(long));
        CHECK(host && gpu_runtime_read(host, slots, (size_t)n * sizeof(long)) == 0, "copy back");
        for (int pe = 0; host && pe < n; pe++)
            CHECK_EQ(host[pe], pe + 1);
        free(host);
    }
    shmem_barrier_all();
}

/* fcollect: block j of dest is PE j's pattern (each block LEN long); alltoall: block j of dest
 * is block `me` of PE j's source. */
static int collected_at(const struct expected *e, size_t offset)
{
    return pattern_at((int)(offset / e->len), offset % e->len);
}

static int exchanged_at(const struct expected *e, size_t offset)
{
    return pattern_at((int)(offset / e->len), (size_t)e->pe * e->len + offset % e->len);
}

/* A sum of ints or longs of the small patterns: each byte is the sum of the PEs' bytes. */
static int summed_at(const struct expected *e, size_t offset)
{
    int sum = 0;
    for (int pe = 0; pe < n; pe++)
        sum += small_at(pe, offset);
    return offset < e->len ? sum : 0;
}

static void test_collectives(unsigned char *src, unsigned char *dst)
{
    fill(src, pattern_at, me);
    zero(dst, (size_t)n * LEN);
    shmem_team_sync(team);
    CHECK(shmem_broadcastmem(team, dst, src, LEN, 0) == 0, "broadcastmem");
    check_bytes(dst, LEN, &(struct expected){prefix_at, 0, LEN, 0}, "broadcast from PE 0");

    zero(dst, (size_t)n * LEN);
    shmem_team_sync(team);
    CHECK(shmem_fcollectmem(team, dst, src, LEN) == 0, "fcollectmem");
    check_bytes(dst, (size_t)n * LEN, &(struct expected){collected_at, 0, LEN, 0}, "fcollect");

    size_t block = LEN / (size_t)n;
    zero(dst, (size_t)n * LEN);
    shmem_team_sync(team);
    CHECK(shmem_alltoallmem(team, dst, src, block) == 0, "alltoallmem");
    check_bytes(dst, (size_t)n * block, &(struct expected){exchanged_at, me, block, 0}, "alltoall");

    fill(src, small_at, me);
    size_t ints = LEN / 4, longs = LEN / 8;
    zero(dst, LEN);
    shmem_team_sync(team);
    CHECK(shmem_int_sum_reduce(team, (int *)dst, (int *)src, ints) == 0, "int sum");
    check_bytes(dst, LEN, &(struct expected){summed_at, 0, ints * 4, 0}, "int sum reduction");
    zero(dst, LEN);
    shmem_team_sync(team);
    CHECK(shmem_long_sum_reduce(team, (long *)dst, (long *)src, longs) == 0, "long sum");
    check_bytes(dst, LEN, &(struct expected){summed_at, 0, longs * 8, 0}, "long sum reduction");
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    n = shmem_n_pes();
    shmem_space_config_t config = {gpu_runtime_type(), 16 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    size_t free_before = gpu_runtime_memory_free();
    shmem_barrier_all();
    CHECK(shmem_space_create(&config, &space, &team) == 0 && space != SHMEM_SPACE_INVALID,
          "a GPU space on every PE");
    shmem_barrier_all();
    /* A heap costs its size in device memory (a granule more at most), not the double that an
     * aligned one carved out of a larger allocation cost. A GPU's count is the device's: every
     * PE of the node on it, with some room for what the runtime makes for the library's streams;
     * a double's is this process's. */
    size_t held = free_before - gpu_runtime_memory_free();
    size_t bound = gpu_runtime_double_streams()
                       ? config.size + ((size_t)2 << 20)
                       : (size_t)shmem_team_n_pes(SHMEM_TEAM_SHARED) * (config.size * 3 / 2);
    CHECK(free_before > 0 && held <= bound,
          "a GPU heap of %zu bytes took %zu bytes of device memory (at most %zu expected)",
          config.size, held, bound);
    if (space != SHMEM_SPACE_INVALID) {
        unsigned char *src = shmem_space_malloc(space, LEN);
        unsigned char *dst = shmem_space_malloc(space, (size_t)n * LEN);
        uint64_t *signals = shmem_space_malloc(space, 2 * sizeof(uint64_t));
        long *counter = shmem_space_malloc(space, sizeof(long));
        int *counter32 = shmem_space_malloc(space, sizeof(int));
        long *slots = shmem_space_malloc(space, (size_t)n * sizeof(long));
        CHECK(src && dst && signals && counter && counter32 && slots, "space allocations");
        test_put_get(src, dst);
        test_batch_order(dst, counter);
        test_put_signal(src, dst, signals);
        test_atomics(counter, counter32, slots);
        test_collectives(src, dst);
        shmem_barrier_all();
        /* Small writes went as one scatter kernel a batch, or (SHMEM_GPU_COPY_ENGINES_ONLY) as
         * copies alone, leaving the SMs to the program. (Small writes into the next PE's heap
         * are batched here where it is attached: on this node, on a device this one reaches.) */
        gpu_streams_fn scatters = gpu_runtime_double_count("cuda_double_scatters");
        const char *engines_only = getenv("SHMEM_GPU_COPY_ENGINES_ONLY");
        int attached =
            check_node_direct() && check_same_node((me + 1) % n) && !gpu_runtime_devices_apart();
        if (scatters && engines_only && !strcmp(engines_only, "1"))
            CHECK_EQ(scatters(), 0);
        else if (scatters && attached)
            CHECK(scatters() > 0, "no scatter kernel ran");
        shmem_space_destroy(space);
    }
    shmem_finalize();
    return check_finish();
}
