/* SPDX-License-Identifier: BSD-3-Clause */
/* Random sequences of every kind of put, atomic and signal, of a byte to 1.25 MiB, into heap and
 * static memory, checked against a replay of the same sequence (1.6 sections 9.5-9.9):
 * - each round, every PE sends one sequence to one PE (itself included), on the default context,
 *   a private one, or a private one in a batch session;
 * - operations that overlap one before them since the last fence or quiet get a fence first, so
 *   the result is defined; the others are left unordered;
 * - a sequence ends with a fence and a flag (a store, an atomic, a put-with-signal or a signal):
 *   its target waits for the flag and then checks every byte the sequence could have written,
 *   before any quiet or barrier, so a fence that did not order one way of moving data before
 *   another (stores, the transport's acknowledged, one-way or batched puts, its own or UCX's
 *   atomics, chunked transfers) shows as wrong bytes;
 * - the sender checks what its fetching atomics return, and reads ranges back after quiets;
 * - some stores are the program's own, through shmem_ptr, where the target is mapped.
 * Where every PE has a device (SHMEM_TEST_DEVICE_PES, STRATA_TEST_GPU_PES), a window in a device
 * space too, read back with gets. With THREADS, as many threads of each PE do the same at once
 * (SHMEM_THREAD_MULTIPLE), each on contexts and windows of its own.
 * Usage: rma_mix [ROUNDS [SEED [THREADS]]]. */
#include "check.h"

#include <pthread.h>
#include <stdint.h>

#define MAX_LANES 64 /* PEs times threads: a lane is one thread's sequences */
#define HEAP_WIN ((size_t)1536 * 1024)
#define STATIC_WIN ((size_t)64 * 1024)
#define HOT_BYTES 4096 /* where most short operations and every atomic go: they meet */
#define MAX_OPS 24
#define POOL_BYTES ((size_t)4 << 20) /* a sequence's payloads, none reused before its end */
#define MAX_DIRTY (2 * MAX_OPS)

#define DEVICE_WIN ((size_t)512 * 1024)

/* Where a sequence writes at its target: the window of its lane in the default heap (a quarter of
 * HEAP_WIN with several threads), in static memory, in a device space (where the test device or
 * a GPU is on every PE), and its signal word. */
enum window { WIN_HEAP, WIN_STATIC, WIN_DEVICE, WIN_SIGNAL, N_WINDOWS };
static size_t window_bytes[N_WINDOWS] = {HEAP_WIN, STATIC_WIN, 0, sizeof(uint64_t)};

static int n_threads = 1;
static char *heap_windows;   /* a window per lane: lane l's at l */
static char *device_windows; /* a window per lane, never loaded or stored here */
static char static_windows[MAX_LANES][STATIC_WIN];
static uint64_t signals[MAX_LANES]; /* the put-with-signal word of each lane */
static uint64_t flags[MAX_LANES];   /* the end of a lane's sequence: the round's number */
static uint64_t acks[MAX_LANES];    /* from a thread's target: its window was checked */

/* What one source's windows at one target hold. */
struct image {
    unsigned char *bytes[N_WINDOWS];
};

struct range {
    enum window window;
    size_t lo, hi;
};

/* One sequence, played by its source (issue: operations go out) or replayed by its target. */
struct play {
    uint64_t rng;
    int issue, source, target, round;
    int lane; /* of the source: source * n_threads + its thread */
    shmem_ctx_t ctx;
    int ctx_kind; /* of the sequence's context, in context_names */
    struct image *image;
    struct range dirty[MAX_DIRTY]; /* written since the last fence or quiet */
    int n_dirty;
    unsigned char *pool;
    size_t pool_used;
    char trace[4 * MAX_OPS + 8][96]; /* what was done, printed when a check fails */
    int n_trace;
};

static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rng_below(struct play *p, size_t bound)
{
    return (size_t)(rng_next(&p->rng) % bound);
}

static void *target_address(const struct play *p, enum window window, size_t offset)
{
    switch (window) {
    case WIN_HEAP:
        return heap_windows + (size_t)p->lane * window_bytes[WIN_HEAP] + offset;
    case WIN_STATIC:
        return static_windows[p->lane] + offset;
    case WIN_DEVICE:
        return device_windows + (size_t)p->lane * DEVICE_WIN + offset;
    default:
        return (char *)&signals[p->lane] + offset;
    }
}

static void trace(struct play *p, const char *what, enum window window, size_t lo, size_t len)
{
    if (p->n_trace < (int)(sizeof(p->trace) / sizeof(p->trace[0])))
        snprintf(p->trace[p->n_trace++], sizeof(p->trace[0]), "%s window %d [%zu, %zu)", what,
                 (int)window, lo, lo + len);
}

static const char *const context_names[3] = {"the default context", "a private context",
                                             "a private context in a batch session"};

static void trace_print(const struct play *p)
{
    if (check_failures > 3)
        return;
    fprintf(stderr, "PE %d: round %d, sequence of PE %d (lane %d) to PE %d on %s:\n", shmem_my_pe(),
            p->round, p->source, p->lane, p->target, context_names[p->ctx_kind]);
    for (int i = 0; i < p->n_trace; i++)
        fprintf(stderr, "  %s\n", p->trace[i]);
}

static void fence(struct play *p)
{
    if (p->issue)
        shmem_ctx_fence(p->ctx);
    p->n_dirty = 0;
    trace(p, "fence", WIN_HEAP, 0, 0);
}

static void quiet(struct play *p)
{
    if (p->issue)
        shmem_ctx_quiet(p->ctx);
    p->n_dirty = 0;
    trace(p, "quiet", WIN_HEAP, 0, 0);
}

static int overlaps_dirty(const struct play *p, struct range r)
{
    for (int i = 0; i < p->n_dirty; i++)
        if (p->dirty[i].window == r.window && r.lo < p->dirty[i].hi && p->dirty[i].lo < r.hi)
            return 1;
    return 0;
}

/* Orders an operation that writes the n ranges (a put-with-signal's data and signal) after any
 * operation they overlap since the last fence. */
static void order_before(struct play *p, const struct range *ranges, int n)
{
    int overlap = p->n_dirty + n > MAX_DIRTY;
    for (int i = 0; i < n; i++)
        overlap |= overlaps_dirty(p, ranges[i]);
    if (overlap)
        fence(p);
    for (int i = 0; i < n; i++)
        p->dirty[p->n_dirty++] = ranges[i];
}

static void order_before_one(struct play *p, enum window window, size_t lo, size_t len)
{
    struct range r = {window, lo, lo + len};
    order_before(p, &r, 1);
}

/* The window of an operation: mostly the heap's. */
static enum window random_window(struct play *p)
{
    size_t pick = rng_below(p, 6);
    return pick < 4 ? WIN_HEAP : pick == 4 || !window_bytes[WIN_DEVICE] ? WIN_STATIC : WIN_DEVICE;
}

/* A size from every class the transports treat apart: stores of a word, batched short puts,
 * acknowledged messages, chunked and pipelined transfers. */
static size_t random_size(struct play *p, size_t most)
{
    static const size_t class_top[] = {8, 256, 4096, 65536, 300 * 1024, 1280 * 1024};
    static const int class_weight[] = {30, 30, 15, 15, 7, 3};
    size_t pick = rng_below(p, 100), c = 0, bottom = 1;
    while (pick >= (size_t)class_weight[c]) {
        pick -= (size_t)class_weight[c];
        bottom = class_top[c++] + 1;
    }
    size_t size = bottom + rng_below(p, class_top[c] - bottom + 1);
    return size < most ? size : most;
}

/* A range of len bytes aligned to align in window: most short ones in its first HOT_BYTES. */
static size_t random_offset(struct play *p, enum window window, size_t len, size_t align)
{
    size_t span = window_bytes[window];
    if (len <= 256 && rng_below(p, 4))
        span = HOT_BYTES;
    size_t slots = (span - len) / align + 1;
    return rng_below(p, slots) * align;
}

/* Payload bytes that the replay makes alike: from the pool, not reused before the sequence's end
 * (non-blocking puts read them until the quiet). */
static unsigned char *payload(struct play *p, size_t len)
{
    if (p->pool_used + len > POOL_BYTES)
        return NULL;
    unsigned char *bytes = p->pool + p->pool_used;
    p->pool_used += (len + 7) & ~(size_t)7;
    uint64_t seed = rng_next(&p->rng);
    for (size_t i = 0; i < len; i += 8) {
        uint64_t word = rng_next(&seed);
        memcpy(bytes + i, &word, len - i < 8 ? len - i : 8);
    }
    return bytes;
}

static void put(struct play *p)
{
    enum window window = random_window(p);
    int kind = (int)rng_below(p, 5); /* putmem, putmem_nbi, long_put, long_put_nbi, long_iput */
    size_t align = kind >= 2 ? sizeof(long) : 1;
    /* Strided puts go element by element through some transports: at most 4 KiB of them. */
    size_t len = random_size(p, kind == 4 ? 4096 : window_bytes[window]);
    len = (len + align - 1) / align * align;
    ptrdiff_t stride = kind == 4 ? 2 + (ptrdiff_t)rng_below(p, 3) : 1;
    size_t nelems = len / align,
           span = kind == 4 ? ((nelems - 1) * (size_t)stride + 1) * align : len;
    size_t offset = random_offset(p, window, span, align);
    unsigned char *src = payload(p, len);
    if (!src)
        return;
    order_before_one(p, window, offset, span);
    static const char *const names[] = {"putmem", "putmem_nbi", "long_put", "long_put_nbi",
                                        "long_iput"};
    trace(p, names[kind], window, offset, span);
    void *dest = target_address(p, window, offset);
    if (p->issue) {
        switch (kind) {
        case 0:
            shmem_ctx_putmem(p->ctx, dest, src, len, p->target);
            break;
        case 1:
            shmem_ctx_putmem_nbi(p->ctx, dest, src, len, p->target);
            break;
        case 2:
            shmem_ctx_long_put(p->ctx, dest, (long *)src, nelems, p->target);
            break;
        case 3:
            shmem_ctx_long_put_nbi(p->ctx, dest, (long *)src, nelems, p->target);
            break;
        default:
            shmem_ctx_long_iput(p->ctx, dest, (long *)src, stride, 1, nelems, p->target);
        }
    }
    unsigned char *image = p->image->bytes[window] + offset;
    if (stride == 1)
        memcpy(image, src, len);
    else
        for (size_t i = 0; i < nelems; i++)
            memcpy(image + i * (size_t)stride * align, src + i * align, align);
}

static void store(struct play *p)
{
    enum window window = random_window(p);
    static const size_t sizes[] = {1, 2, 4, 8};
    size_t size = sizes[rng_below(p, 4)];
    size_t offset = random_offset(p, window, size, size);
    uint64_t value = rng_next(&p->rng);
    /* A third of them by the program's own store through shmem_ptr, where the target's host
     * memory is mapped here (fence orders memory stores too). */
    int by_pointer = window != WIN_DEVICE && !rng_below(p, 3);
    order_before_one(p, window, offset, size);
    void *dest = target_address(p, window, offset);
    void *mapped = by_pointer && p->issue ? shmem_ptr(dest, p->target) : NULL;
    trace(p, mapped ? "store through shmem_ptr" : "p", window, offset, size);
    if (mapped) {
        memcpy(mapped, &value, size);
    } else if (p->issue) {
        switch (size) {
        case 1:
            shmem_ctx_char_p(p->ctx, dest, (char)value, p->target);
            break;
        case 2:
            shmem_ctx_short_p(p->ctx, dest, (short)value, p->target);
            break;
        case 4:
            shmem_ctx_int_p(p->ctx, dest, (int)value, p->target);
            break;
        default:
            shmem_ctx_long_p(p->ctx, dest, (long)value, p->target);
        }
    }
    memcpy(p->image->bytes[window] + offset, &value, size); /* little-endian: the low bytes */
}

enum amo {
    AMO_ADD,
    AMO_INC,
    AMO_SET,
    AMO_XOR,
    AMO_AND,
    AMO_OR,
    AMO_FETCH_ADD,
    AMO_FETCH_INC,
    AMO_FETCH,
    AMO_SWAP,
    AMO_CSWAP,
    AMO_FETCH_XOR,
    N_AMOS
};
static const char *const amo_names[N_AMOS] = {"add",   "inc",  "set",          "xor",
                                              "and",   "or",   "fetch_add",    "fetch_inc",
                                              "fetch", "swap", "compare_swap", "fetch_xor"};

/* The new value of a word holding old after op with operand value (compare: for AMO_CSWAP). */
static uint64_t amo_result(enum amo op, uint64_t old, uint64_t value, uint64_t compare)
{
    switch (op) {
    case AMO_ADD:
    case AMO_FETCH_ADD:
        return old + value;
    case AMO_INC:
    case AMO_FETCH_INC:
        return old + 1;
    case AMO_SET:
    case AMO_SWAP:
        return value;
    case AMO_XOR:
    case AMO_FETCH_XOR:
        return old ^ value;
    case AMO_AND:
        return old & value;
    case AMO_OR:
        return old | value;
    case AMO_CSWAP:
        return old == compare ? value : old;
    default:
        return old;
    }
}

#define AMO_ISSUE(T, N, ctx, op, dest, value, compare, pe, fetched)                                \
    do {                                                                                           \
        T *d_ = (T *)(dest), v_ = (T)(value), c_ = (T)(compare);                                   \
        switch (op) {                                                                              \
        case AMO_ADD:                                                                              \
            shmem_ctx_##N##_atomic_add(ctx, d_, v_, pe);                                           \
            break;                                                                                 \
        case AMO_INC:                                                                              \
            shmem_ctx_##N##_atomic_inc(ctx, d_, pe);                                               \
            break;                                                                                 \
        case AMO_SET:                                                                              \
            shmem_ctx_##N##_atomic_set(ctx, d_, v_, pe);                                           \
            break;                                                                                 \
        case AMO_XOR:                                                                              \
            shmem_ctx_##N##_atomic_xor(ctx, d_, v_, pe);                                           \
            break;                                                                                 \
        case AMO_AND:                                                                              \
            shmem_ctx_##N##_atomic_and(ctx, d_, v_, pe);                                           \
            break;                                                                                 \
        case AMO_OR:                                                                               \
            shmem_ctx_##N##_atomic_or(ctx, d_, v_, pe);                                            \
            break;                                                                                 \
        case AMO_FETCH_ADD:                                                                        \
            fetched = shmem_ctx_##N##_atomic_fetch_add(ctx, d_, v_, pe);                           \
            break;                                                                                 \
        case AMO_FETCH_INC:                                                                        \
            fetched = shmem_ctx_##N##_atomic_fetch_inc(ctx, d_, pe);                               \
            break;                                                                                 \
        case AMO_FETCH:                                                                            \
            fetched = shmem_ctx_##N##_atomic_fetch(ctx, d_, pe);                                   \
            break;                                                                                 \
        case AMO_SWAP:                                                                             \
            fetched = shmem_ctx_##N##_atomic_swap(ctx, d_, v_, pe);                                \
            break;                                                                                 \
        case AMO_CSWAP:                                                                            \
            fetched = shmem_ctx_##N##_atomic_compare_swap(ctx, d_, c_, v_, pe);                    \
            break;                                                                                 \
        default:                                                                                   \
            fetched = shmem_ctx_##N##_atomic_fetch_xor(ctx, d_, v_, pe);                           \
        }                                                                                          \
    } while (0)

static void atomic(struct play *p)
{
    enum window window = random_window(p);
    size_t size = rng_below(p, 2) ? sizeof(uint64_t) : sizeof(uint32_t);
    enum amo op = (enum amo)rng_below(p, N_AMOS);
    size_t offset = random_offset(p, window, size, size);
    uint64_t value = rng_next(&p->rng), mask = size == 8 ? ~0ull : 0xffffffffull;
    unsigned char *word = p->image->bytes[window] + offset;
    uint64_t old = 0;
    memcpy(&old, word, size);
    /* Half the compare-and-swaps expect what the word holds (the replay knows it too). */
    uint64_t compare = rng_below(p, 2) ? old : rng_next(&p->rng) & mask;
    order_before_one(p, window, offset, size);
    trace(p, amo_names[op], window, offset, size);
    if (p->issue) {
        uint64_t fetched = old;
        void *dest = target_address(p, window, offset);
        if (size == 8)
            AMO_ISSUE(uint64_t, uint64, p->ctx, op, dest, value, compare, p->target, fetched);
        else
            AMO_ISSUE(uint32_t, uint32, p->ctx, op, dest, value, compare, p->target, fetched);
        if (op >= AMO_FETCH_ADD && fetched != old) {
            CHECK(0, "%s of %zu bytes fetched %#llx, the word held %#llx", amo_names[op], size,
                  (unsigned long long)fetched, (unsigned long long)old);
            trace_print(p);
        }
    }
    uint64_t result = amo_result(op, old, value & mask, compare) & mask;
    memcpy(word, &result, size);
}

/* A put-with-signal on sig_addr, which is the sequence's signal word where image_signal is
 * its image (else the flag, written once after a fence). */
static void put_signal(struct play *p, uint64_t *sig_addr, uint64_t signal, int sig_op,
                       uint64_t *image_signal)
{
    enum window window = random_window(p);
    size_t len = random_size(p, window_bytes[window]);
    size_t offset = random_offset(p, window, len, 1);
    int nbi = (int)rng_below(p, 2);
    unsigned char *src = payload(p, len);
    if (!src)
        return;
    struct range written[2] = {{window, offset, offset + len}, {WIN_SIGNAL, 0, sizeof(uint64_t)}};
    order_before(p, written, image_signal ? 2 : 1);
    trace(p, nbi ? "putmem_signal_nbi" : "putmem_signal", window, offset, len);
    void *dest = target_address(p, window, offset);
    if (p->issue && nbi)
        shmem_ctx_putmem_signal_nbi(p->ctx, dest, src, len, sig_addr, signal, sig_op, p->target);
    else if (p->issue)
        shmem_ctx_putmem_signal(p->ctx, dest, src, len, sig_addr, signal, sig_op, p->target);
    memcpy(p->image->bytes[window] + offset, src, len);
    if (image_signal)
        *image_signal = sig_op == SHMEM_SIGNAL_SET ? signal : *image_signal + signal;
}

/* A put-with-signal or a signal on the sequence's own signal word. */
static void signal_op(struct play *p)
{
    uint64_t *image_signal = (uint64_t *)p->image->bytes[WIN_SIGNAL];
    uint64_t value = rng_next(&p->rng);
    int sig_op = rng_below(p, 2) ? SHMEM_SIGNAL_SET : SHMEM_SIGNAL_ADD;
    uint64_t *sig_addr = target_address(p, WIN_SIGNAL, 0);
    if (rng_below(p, 3)) {
        put_signal(p, sig_addr, value, sig_op, image_signal);
        return;
    }
    order_before_one(p, WIN_SIGNAL, 0, sizeof(uint64_t));
    trace(p, sig_op == SHMEM_SIGNAL_SET ? "signal_set" : "signal_add", WIN_SIGNAL, 0, 8);
    if (p->issue && sig_op == SHMEM_SIGNAL_SET)
        shmem_ctx_signal_set(p->ctx, sig_addr, value, p->target);
    else if (p->issue)
        shmem_ctx_signal_add(p->ctx, sig_addr, value, p->target);
    *image_signal = sig_op == SHMEM_SIGNAL_SET ? value : *image_signal + value;
}

/* A quiet, then a range read back (blocking, non-blocking or one word) and compared. */
static void get(struct play *p)
{
    enum window window = random_window(p);
    int kind = (int)rng_below(p, 3); /* getmem, getmem_nbi, long_g */
    size_t len = kind == 2 ? sizeof(long) : random_size(p, window_bytes[window]);
    size_t offset = random_offset(p, window, len, kind == 2 ? sizeof(long) : 1);
    unsigned char *dest = payload(p, len);
    if (!dest)
        return;
    quiet(p);
    trace(p, kind == 0 ? "getmem" : kind == 1 ? "getmem_nbi" : "long_g", window, offset, len);
    if (!p->issue)
        return;
    const void *src = target_address(p, window, offset);
    if (kind == 0) {
        shmem_ctx_getmem(p->ctx, dest, src, len, p->target);
    } else if (kind == 1) {
        shmem_ctx_getmem_nbi(p->ctx, dest, src, len, p->target);
        shmem_ctx_quiet(p->ctx);
    } else {
        long value = shmem_ctx_long_g(p->ctx, src, p->target);
        memcpy(dest, &value, sizeof(value));
    }
    const unsigned char *expected = p->image->bytes[window] + offset;
    if (memcmp(dest, expected, len)) {
        size_t i = 0;
        while (dest[i] == expected[i])
            i++;
        CHECK(0, "read back byte %zu of window %d as %#x, expected %#x", offset + i, (int)window,
              dest[i], expected[i]);
        trace_print(p);
    }
}

/* The sequence's end: a fence, then the flag by one of the ways a program sets one. */
static void flag(struct play *p, uint64_t last_flag)
{
    uint64_t *dest = &flags[p->lane];
    uint64_t value = (uint64_t)p->round;
    int way = (int)rng_below(p, 5);
    fence(p);
    static const char *const names[] = {"flag by p", "flag by atomic_set", "flag by atomic_add",
                                        "flag by put_signal", "flag by signal_set"};
    if (way == 3) {
        put_signal(p, dest, value, SHMEM_SIGNAL_SET, NULL);
        return;
    }
    trace(p, names[way], WIN_HEAP, 0, 0);
    if (!p->issue)
        return;
    switch (way) {
    case 0:
        shmem_ctx_uint64_p(p->ctx, dest, value, p->target);
        break;
    case 1:
        shmem_ctx_uint64_atomic_set(p->ctx, dest, value, p->target);
        break;
    case 2:
        shmem_ctx_uint64_atomic_add(p->ctx, dest, value - last_flag, p->target);
        break;
    default:
        shmem_ctx_signal_set(p->ctx, dest, value, p->target);
    }
}

static uint64_t sequence_seed(uint64_t seed, int round, int lane)
{
    uint64_t state = seed ^ ((uint64_t)round << 20) ^ (uint64_t)lane;
    return rng_next(&state);
}

/* Plays (issue) or replays source's sequence of round to target on image; ctxs: the default
 * context, a private one, a private one in a batch session. */
static void sequence(struct play *p, uint64_t seed, const shmem_ctx_t ctxs[3], uint64_t last_flag)
{
    p->rng = sequence_seed(seed, p->round, p->lane);
    p->n_dirty = p->n_trace = 0;
    p->pool_used = 0;
    int which = (int)rng_below(p, 3);
    p->ctx = ctxs[which];
    p->ctx_kind = which;
    if (p->issue && which == 2)
        shmem_ctx_session_start(p->ctx, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    int n_ops = 1 + (int)rng_below(p, MAX_OPS);
    for (int i = 0; i < n_ops; i++) {
        size_t pick = rng_below(p, 100);
        if (pick < 30)
            put(p);
        else if (pick < 45)
            store(p);
        else if (pick < 70)
            atomic(p);
        else if (pick < 80)
            signal_op(p);
        else if (pick < 88)
            get(p);
        else if (pick < 94)
            fence(p);
        else
            quiet(p);
    }
    flag(p, last_flag);
}

/* Compares what source's windows at this PE hold with the replay. */
static void windows_check(struct play *p, unsigned char *device_copy)
{
    for (int w = 0; w < N_WINDOWS; w++) {
        const unsigned char *seen = target_address(p, (enum window)w, 0);
        if (w == WIN_DEVICE && !window_bytes[w])
            continue;
        if (w == WIN_DEVICE) {
            shmem_getmem(device_copy, seen, DEVICE_WIN, shmem_my_pe());
            seen = device_copy;
        }
        const unsigned char *expected = p->image->bytes[w];
        if (!memcmp(seen, expected, window_bytes[w]))
            continue;
        size_t i = 0, wrong = 0;
        while (seen[i] == expected[i])
            i++;
        for (size_t j = i; j < window_bytes[w]; j++)
            wrong += seen[j] != expected[j];
        CHECK(0, "after the flag, window %d byte %zu holds %#x, expected %#x (%zu bytes wrong)", w,
              i, seen[i], expected[i], wrong);
        trace_print(p);
    }
}

static struct image image_alloc(void)
{
    struct image image;
    for (int w = 0; w < N_WINDOWS; w++) {
        image.bytes[w] = calloc(1, window_bytes[w] + 1);
        if (!image.bytes[w]) {
            fprintf(stderr, "rma_mix: out of memory\n");
            shmem_global_exit(2);
        }
    }
    return image;
}

/* A device space with a window for every PE, where SHMEM_TEST_DEVICE_PES or STRATA_TEST_GPU_PES
 * says every PE has a device (the space's team is then the world, and the create is the same
 * collective on every PE). */
static shmem_space_t device_space_create(int lanes)
{
    shmem_space_t space = SHMEM_SPACE_INVALID;
    const char *test_device = getenv("SHMEM_TEST_DEVICE_PES"), *gpu = getenv("STRATA_TEST_GPU_PES");
    if (!(test_device && *test_device) && !(gpu && *gpu))
        return space;
    shmem_space_config_t config = {SHMEM_DEVICE_GPU, (size_t)lanes * DEVICE_WIN + 65536, 0};
    shmem_team_t team;
    shmem_space_cap_t caps = 0;
    CHECK(shmem_space_create(&config, &space, &team) == 0, "a device space on every PE");
    if (space != SHMEM_SPACE_INVALID)
        shmem_space_get_caps(space, &caps);
    CHECK((caps & SHMEM_SPACE_CAP_ATOMICS) && (caps & SHMEM_SPACE_CAP_WORLD_ACCESS),
          "device space caps %#llx", (unsigned long long)caps);
    if (space != SHMEM_SPACE_INVALID)
        device_windows = shmem_space_calloc(space, (size_t)lanes, DEVICE_WIN);
    CHECK(space == SHMEM_SPACE_INVALID || device_windows, "device windows");
    if (device_windows)
        window_bytes[WIN_DEVICE] = DEVICE_WIN;
    return space;
}

struct mix_thread {
    int thread, rounds;
    uint64_t seed;
};

/* One thread's rounds: each plays a sequence to the thread of the same number of one PE (itself
 * included) and checks the one it gets, then tells its source, which waits for that before its
 * next round writes there again. */
static void *mix_thread(void *arg)
{
    const struct mix_thread *m = arg;
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_ctx_t ctxs[3] = {SHMEM_CTX_DEFAULT, SHMEM_CTX_DEFAULT, SHMEM_CTX_DEFAULT};
    for (int i = 1; i < 3; i++)
        CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctxs[i]) == 0, "shmem_ctx_create %d", i);
    /* sent[t]: this thread's windows at t; received[s]: those of source s's thread here. */
    struct image *sent = calloc((size_t)n, sizeof(*sent));
    struct image *received = calloc((size_t)n, sizeof(*received));
    uint64_t *last_sent = calloc((size_t)n, sizeof(*last_sent));
    /* Payloads of the sequence this thread plays, and of the one it replays. */
    unsigned char *pool = malloc(POOL_BYTES), *replay_pool = malloc(POOL_BYTES);
    if (!sent || !received || !last_sent || !pool || !replay_pool) {
        fprintf(stderr, "rma_mix: out of memory\n");
        shmem_global_exit(2);
    }
    for (int pe = 0; pe < n; pe++) {
        sent[pe] = image_alloc();
        received[pe] = image_alloc();
    }
    int my_lane = me * n_threads + m->thread;
    struct play play = {.pool = pool, .issue = 1, .source = me, .lane = my_lane};
    for (int round = 1; round <= m->rounds; round++) {
        uint64_t shift_state = m->seed ^ (uint64_t)round ^ ((uint64_t)m->thread << 40);
        int shift = (int)(rng_next(&shift_state) % (uint64_t)n);
        int target = (me + shift) % n, source = (me + n - shift) % n;
        int stop_after_wait = round % 2;
        play.target = target, play.round = round;
        play.image = &sent[target];
        sequence(&play, m->seed, ctxs, last_sent[target]);
        last_sent[target] = (uint64_t)round;
        int in_session = play.ctx == ctxs[2] && ctxs[2] != SHMEM_CTX_DEFAULT;
        if (in_session && !stop_after_wait)
            shmem_ctx_session_stop(play.ctx);
        int source_lane = source * n_threads + m->thread;
        shmem_uint64_wait_until(&flags[source_lane], SHMEM_CMP_EQ, (uint64_t)round);
        if (in_session && stop_after_wait)
            shmem_ctx_session_stop(play.ctx);
        struct play replay = {.pool = replay_pool, .source = source, .target = me, .round = round};
        replay.lane = source_lane;
        replay.image = &received[source];
        sequence(&replay, m->seed, ctxs, 0);
        windows_check(&replay, replay_pool);
        /* The payloads are reused once every context's operations are complete. */
        for (int i = 1; i < 3; i++)
            shmem_ctx_quiet(ctxs[i]);
        shmem_uint64_atomic_set(&acks[source_lane], (uint64_t)round, source);
        shmem_uint64_wait_until(&acks[my_lane], SHMEM_CMP_EQ, (uint64_t)round);
    }
    for (int i = 1; i < 3; i++)
        if (ctxs[i] != SHMEM_CTX_DEFAULT)
            shmem_ctx_destroy(ctxs[i]);
    for (int pe = 0; pe < n; pe++)
        for (int w = 0; w < N_WINDOWS; w++)
            free(sent[pe].bytes[w]), free(received[pe].bytes[w]);
    free(sent), free(received), free(last_sent);
    free(pool);
    free(replay_pool);
    return NULL;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 300;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed;
    n_threads = argc > 3 ? atoi(argv[3]) : 1;
    int provided = SHMEM_THREAD_SINGLE;
    if (n_threads > 1)
        shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    else
        shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(n_threads == 1 || provided == SHMEM_THREAD_MULTIPLE, "threads: provided %d", provided);
    if (n_threads < 1 || n * n_threads > MAX_LANES) {
        if (me == 0)
            fprintf(stderr, "rma_mix: at most %d PEs times threads\n", MAX_LANES);
        shmem_finalize();
        return 1;
    }
    int lanes = n * n_threads;
    if (n_threads > 1)
        window_bytes[WIN_HEAP] = HEAP_WIN / 4;
    heap_windows = shmem_calloc((size_t)lanes, window_bytes[WIN_HEAP]);
    CHECK(heap_windows != NULL, "shmem_calloc of %d windows of %zu bytes", lanes,
          window_bytes[WIN_HEAP]);
    shmem_space_t device = device_space_create(lanes);
    struct mix_thread args[MAX_LANES];
    pthread_t threads[MAX_LANES];
    for (int t = 0; t < n_threads && heap_windows; t++) {
        args[t] = (struct mix_thread){t, rounds, seed};
        if (n_threads == 1)
            mix_thread(&args[t]);
        else
            CHECK(pthread_create(&threads[t], NULL, mix_thread, &args[t]) == 0, "thread %d", t);
    }
    for (int t = 0; t < n_threads && n_threads > 1 && heap_windows; t++)
        pthread_join(threads[t], NULL);
    shmem_barrier_all();
    shmem_free(heap_windows);
    if (device != SHMEM_SPACE_INVALID) {
        shmem_space_free(device, device_windows);
        shmem_space_destroy(device);
    }
    return check_finish();
}
