/* SPDX-License-Identifier: BSD-3-Clause */
/* The target's copy of a put (common/copy.h): every length up to a few blocks and every
 * alignment copies exactly the source's bytes and touches nothing around them. With "stores",
 * a hardware watchpoint on each destination byte counts the stores that hit it: exactly one for
 * a short block, where memcpy stores the bytes of a 4-byte one twice (and the watch sees two
 * stores of one word as two). "--can-watch" exits with 0
 * where this process may set watchpoints (perf_event_open) and they count stores (some virtual
 * machines accept them and never fire), so that the suite can say when it cannot count. */
#include "../../common/copy.h"
#include "unit.h"

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { GUARD = 16, LONGEST = 300 }; /* a few cache lines: a string copy moves whole lines */

/* A write watchpoint on the byte at addr, disabled; -1 where none may be set. */
static int watch_open(const void *addr)
{
    struct perf_event_attr attr = {
        .type = PERF_TYPE_BREAKPOINT,
        .size = sizeof(attr),
        .bp_type = HW_BREAKPOINT_W,
        .bp_addr = (uintptr_t)addr,
        .bp_len = HW_BREAKPOINT_LEN_1,
        .disabled = 1,
        .exclude_kernel = 1,
        .exclude_hv = 1,
    };
    return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

typedef void copy_fn(void *dst, const void *src, size_t len);

/* What glibc's memcpy does with 4 bytes: the watch must see both stores. */
static void store_twice(void *dst, const void *src, size_t len)
{
    (void)len;
    uint32_t v;
    memcpy(&v, src, 4);
    __atomic_store_n((uint32_t *)dst, v, __ATOMIC_RELAXED);
    __atomic_store_n((uint32_t *)dst, v, __ATOMIC_RELAXED);
}

/* How many stores copy(dst, src, len) makes to the byte at watched; -1 on failure. */
static long long stores_to(copy_fn *copy, const char *watched, char *dst, const char *src,
                           size_t len)
{
    int fd = watch_open(watched);
    if (fd < 0)
        return -1;
    long long hits = -1;
    if (!ioctl(fd, PERF_EVENT_IOC_RESET, 0) && !ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)) {
        copy(dst, src, len);
        ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
        if (read(fd, &hits, sizeof(hits)) != sizeof(hits))
            hits = -1;
    }
    close(fd);
    return hits;
}

/* Each length and destination alignment: the source's bytes, and the guards untouched. */
static void check_contents(copy_fn *copy, const char *name)
{
    static char src[LONGEST + 8], dst[GUARD + LONGEST + 8 + GUARD];
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (char)(i * 7 + 1);
    for (size_t len = 0; len <= LONGEST; len++)
        for (size_t align = 0; align < 8; align++) {
            memset(dst, 0x5a, sizeof(dst));
            copy(dst + GUARD + align, src + (len + align) % 8, len);
            size_t bad = sizeof(dst);
            for (size_t i = 0; i < sizeof(dst) && bad == sizeof(dst); i++) {
                int inside = i >= GUARD + align && i < GUARD + align + len;
                char want = inside ? src[(len + align) % 8 + i - GUARD - align] : 0x5a;
                if (dst[i] != want)
                    bad = i;
            }
            UNIT_CHECK(bad == sizeof(dst), "%s: %zu bytes at alignment %zu: byte %zu wrong", name,
                       len, align, bad);
        }
}

/* Each destination byte of a short block, at each alignment, is stored exactly once. */
static void check_stores(void)
{
    static char src[COPY_ONCE_MAX], dst[COPY_ONCE_MAX + 8] __attribute__((aligned(8)));
    long long twice = stores_to(store_twice, dst + 2, dst, src, 4);
    UNIT_CHECK(twice == 2, "a word stored twice: the watch saw %lld stores", twice);
    for (size_t len = 1; len <= COPY_ONCE_MAX; len++)
        for (size_t align = 0; align < 8; align++)
            for (size_t i = 0; i < len; i++) {
                long long hits = stores_to(copy_once, dst + align + i, dst + align, src, len);
                UNIT_CHECK(hits == 1, "%zu bytes at alignment %zu: byte %zu stored %lld times", len,
                           align, i, hits);
            }
}

/* A block past COPY_LARGE_MIN through copy_bulk, with copy_movsb_min as it is: exact, guards
 * untouched. */
static void check_bulk_long(void)
{
    size_t len = COPY_LARGE_MIN + 77;
    char *src = malloc(len), *dst = malloc(len + 2 * GUARD);
    UNIT_CHECK(src && dst, "out of memory for %zu bytes", len);
    if (!src || !dst)
        return;
    for (size_t i = 0; i < len; i++)
        src[i] = (char)(i * 13 + 5);
    memset(dst, 0x5a, len + 2 * GUARD);
    copy_bulk(dst + GUARD + 3, src, len - 3);
    size_t bad = 0;
    while (bad < len + 2 * GUARD &&
           dst[bad] == (bad >= GUARD + 3 && bad < GUARD + len ? src[bad - GUARD - 3] : 0x5a))
        bad++;
    UNIT_CHECK(bad == len + 2 * GUARD, "%zu bytes: byte %zu wrong", len - 3, bad);
    free(src);
    free(dst);
}

/* copy_way_next over runs of blocks, streaming past two blocks: a block streams once the run it
 * continues holds two, and a block elsewhere, or the same one again, starts a new run. */
static void check_ways(void)
{
    static char buffer[8 * COPY_LARGE_MIN];
    char *b = buffer;
    size_t block = COPY_LARGE_MIN, stream_after = copy_stream_after;
    copy_stream_after = 2 * block;
    struct {
        char *dst;
        size_t len;
        enum copy_way want;
    } steps[] = {
        {b, block, COPY_MEMCPY},
        {b + block, block, COPY_MEMCPY},
        {b + 2 * block, block, COPY_STREAM},
        {b + 3 * block, 2 * block, COPY_STREAM},
        {b, block, COPY_MEMCPY},
        {b, block, COPY_MEMCPY},
        {b + block, block, COPY_MEMCPY},
        {b + 3 * block, block, COPY_MEMCPY},
        {b + 4 * block, block, COPY_MEMCPY},
        {b + 5 * block, block, COPY_STREAM},
    };
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        enum copy_way way = copy_way_next(steps[i].dst, steps[i].len);
        UNIT_CHECK(way == steps[i].want, "step %zu (%zu bytes at offset %td): way %d, not %d", i,
                   steps[i].len, steps[i].dst - b, way, steps[i].want);
    }
    size_t movsb_min = copy_movsb_min;
    copy_movsb_min = COPY_LARGE_MIN;
    UNIT_CHECK(copy_way_next(b, COPY_LARGE_MIN) == COPY_MOVSB, "a long block: not the string copy");
    UNIT_CHECK(copy_way_next(b + 1, COPY_LARGE_MIN - 1) == COPY_MEMCPY,
               "a block one byte short of the string copy's floor: not memcpy");
    copy_movsb_min = movsb_min;
    copy_stream_after = stream_after;
}

/* A run of blocks of uneven lengths through copy_bulk, from a destination off its lines, that
 * streams after its first two blocks: the source's bytes, and the guards untouched. */
static void check_stream_run(void)
{
    enum { RUN = 16 * COPY_LARGE_MIN, OFF = 3 };
    static char src[RUN], dst[GUARD + OFF + RUN + GUARD];
    for (size_t i = 0; i < RUN; i++)
        src[i] = (char)(i * 11 + 3);
    memset(dst, 0x5a, sizeof(dst));
    size_t stream_after = copy_stream_after;
    copy_stream_after = 2 * COPY_LARGE_MIN;
    const size_t lens[] = {COPY_LARGE_MIN + 5, 3 * COPY_LARGE_MIN - 1, COPY_LARGE_MIN + 63,
                           4 * COPY_LARGE_MIN};
    for (size_t at = 0, i = 0; at < RUN; at += lens[i++ % 4])
        copy_bulk(dst + GUARD + OFF + at, src + at,
                  lens[i % 4] < RUN - at ? lens[i % 4] : RUN - at);
    copy_stream_after = stream_after;
    size_t bad = 0;
    while (bad < sizeof(dst) &&
           dst[bad] ==
               (bad >= GUARD + OFF && bad < GUARD + OFF + RUN ? src[bad - GUARD - OFF] : 0x5a))
        bad++;
    UNIT_CHECK(bad == sizeof(dst), "a streamed run of %d bytes: byte %zu wrong", RUN, bad);
}

int main(int argc, char **argv)
{
    static char probe[4] __attribute__((aligned(4)));
    if (argc > 1 && !strcmp(argv[1], "--can-watch")) /* and the watch sees a store */
        return stores_to(store_twice, probe, probe, "abcd", 4) == 2 ? 0 : 1;
    check_contents(copy_once, "copy_once");
    check_contents(copy_bulk, "copy_bulk");
    check_contents(copy_movsb, "copy_movsb");
    check_contents(copy_stream, "copy_stream"); /* SSE2 stores: copy_tune has not run */
    check_ways();
    check_stream_run();
    check_bulk_long(); /* memcpy: copy_tune has not run */
    copy_movsb_min = COPY_LARGE_MIN;
    check_bulk_long(); /* the string copy, wherever the CPU has one */
    copy_tune();
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    size_t want = l2 > 0 ? (size_t)l2 : 1 << 20;
    want = want > COPY_LARGE_MIN ? want : COPY_LARGE_MIN;
    UNIT_CHECK(copy_movsb_min == SIZE_MAX || copy_movsb_min == want,
               "copy_tune: threshold %zu bytes, neither never nor the L2 cache's %zu",
               copy_movsb_min, want);
#if defined(__x86_64__)
    size_t l2_bytes = l2 > 0 ? (size_t)l2 : (size_t)1 << 20;
    UNIT_CHECK(copy_stream_after == 8 * l2_bytes,
               "copy_tune: runs stream after %zu bytes, not eight L2 caches' %zu",
               copy_stream_after, 8 * l2_bytes);
#endif
    check_contents(copy_stream, "copy_stream, tuned"); /* the widest stores the CPU has */
    check_stream_run();
    if (argc > 1 && !strcmp(argv[1], "stores"))
        check_stores();
    return unit_finish("copy");
}
