/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport layer over one network (argv[1]: "ucx" or "ofi"; argv[2]: libfabric's provider),
 * in one process that is the only PE of its job and reaches itself through the network as it
 * would a peer: region keys through the exchange, puts and gets of every completion kind, short
 * and long, atomics of both sizes (the network's own, and with argv[3] "by-message" performed
 * by the target's callbacks), put-with-signal, active-message puts, gets and atomics, the layer
 * above's messages, a context's worker, and the progress thread (polling: a PE alone on its node
 * has a CPU, so the networks may make no event descriptor). Every value is checked. */
#include "../../common/wait.h"
#include "../../transports/network.h"
#include "../../transports/transport.h"
#include "unit.h"

#include <string.h>

enum { REGION = 0, REGION_LEN = 1 << 20, LONG_LEN = 256 * 1024, MAX_ENTRIES = 16 };

/* The exchange of a one-PE job: what was published, kept here. */
static struct {
    char key[64];
    char data[TRANSPORT_KEY_MAX + 256];
    size_t len;
} entries[MAX_ENTRIES];
static int n_entries;

static int exchange_publish(const char *key, const void *data, size_t len)
{
    if (n_entries == MAX_ENTRIES || len > sizeof(entries[0].data))
        return -1;
    snprintf(entries[n_entries].key, sizeof(entries[0].key), "%s", key);
    memcpy(entries[n_entries].data, data, len);
    entries[n_entries++].len = len;
    return 0;
}

static int exchange_fetch(int pe, const char *key, void *data, size_t *len)
{
    for (int i = n_entries - 1; pe == 0 && i >= 0; i--)
        if (!strcmp(entries[i].key, key) && entries[i].len <= *len) {
            memcpy(data, entries[i].data, entries[i].len);
            *len = entries[i].len;
            return 0;
        }
    return -1;
}

static _Alignas(4096) unsigned char region[REGION_LEN];
static struct transport *job;

/* The target's side of active-message operations: the region is host memory. */
static int target_write(int id, size_t offset, const void *src, size_t len)
{
    if (id != REGION || offset + len > REGION_LEN)
        return -1;
    memcpy(region + offset, src, len);
    return 0;
}

static int target_read(int id, size_t offset, void *dst, size_t len)
{
    if (id != REGION || offset + len > REGION_LEN)
        return -1;
    memcpy(dst, region + offset, len);
    return 0;
}

/* An atomic's result, as the target's side performs it. */
static uint64_t amo_result(enum transport_amo op, uint64_t old, uint64_t value, uint64_t compare)
{
    const uint64_t results[] = {old + value, old & value, old | value,
                                old ^ value, value,       old == compare ? value : old};
    return results[op];
}

static int target_atomic(int id, size_t offset, enum transport_amo op, uint64_t value,
                         uint64_t compare, size_t size, uint64_t *old)
{
    if (id != REGION || offset + size > REGION_LEN)
        return -1;
    uint64_t word = 0;
    memcpy(&word, region + offset, size);
    *old = word;
    word = amo_result(op, word, value, compare);
    memcpy(region + offset, &word, size);
    return 0;
}

static void *target_host_place(int id, size_t offset, size_t len)
{
    return id == REGION && offset + len <= REGION_LEN ? region + offset : NULL;
}

static const struct transport_target_ops target_ops = {target_write, target_read, target_atomic,
                                                       target_host_place};

static struct {
    int count, from;
    char header[16], data[64];
    size_t len;
} received;

static void on_message(int from, const void *header, size_t header_len, const void *data,
                       size_t len)
{
    received.from = from;
    memcpy(received.header, header, header_len < 16 ? header_len : 16);
    memcpy(received.data, data, len < 64 ? len : 64);
    received.len = len;
    __atomic_add_fetch(&received.count, 1, __ATOMIC_RELEASE);
}

static void fill(unsigned char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(seed + i * 7 + (i >> 9));
}

/* Puts and gets of each kind, short and long, on worker w at base offset. */
static void check_rma(struct transport_worker *w, size_t base, unsigned seed)
{
    static unsigned char src[LONG_LEN], dst[LONG_LEN];
    const size_t lengths[] = {8, 4096, LONG_LEN};
    for (size_t k = 0; k < 3; k++) {
        size_t len = lengths[k];
        for (int nbi = 0; nbi < 2; nbi++) {
            fill(src, len, seed + (unsigned)(k * 2 + nbi));
            UNIT_CHECK(transport_put(w, 0, REGION, base, src, len, nbi) == 0, "put %zu", len);
            UNIT_CHECK(transport_flush(w, 0) == 0, "flush");
            UNIT_CHECK(!memcmp(region + base, src, len), "put of %zu bytes (nbi %d) in place", len,
                       nbi);
            fill(region + base, len, seed + 100 + (unsigned)k);
            memset(dst, 0, len);
            UNIT_CHECK(transport_get(w, 0, REGION, base, dst, len, nbi) == 0, "get %zu", len);
            if (nbi)
                UNIT_CHECK(transport_flush(w, 0) == 0, "flush");
            UNIT_CHECK(!memcmp(dst, region + base, len), "get of %zu bytes (nbi %d)", len, nbi);
        }
    }
    uint64_t word = 0x1122334455667788ull;
    UNIT_CHECK(transport_put_notify(w, 0, REGION, base, &word, 8) == 0, "put_notify");
    /* This PE is its target: its default worker, which peers reach, takes the put in. */
    for (int i = 0; i < 1000000 && memcmp(region + base, &word, 8); i++) {
        transport_progress(w);
        transport_progress(transport_default_worker(job));
    }
    UNIT_CHECK(!memcmp(region + base, &word, 8), "a notifying put arrives");
}

/* A stream of blocking puts with no flush between them (over a message lane most go one-way
 * while the first one's acknowledgement is on its way), then one flush: each in place, and of two
 * puts to the same bytes the later one's. */
static void check_put_stream(struct transport_worker *w, size_t base, unsigned seed)
{
    enum { PUTS = 200, STREAM = 64 * 1024 };
    static unsigned char src[STREAM], want[STREAM];
    const size_t lengths[] = {8, 300, 1000};
    fill(src, STREAM, seed);
    size_t at = 0;
    for (int i = 0; i < PUTS && at + lengths[i % 3] <= STREAM; i++) {
        size_t len = lengths[i % 3];
        UNIT_CHECK(transport_put(w, 0, REGION, base + at, src + at, len, 0) == 0, "put %d", i);
        at += len;
    }
    memcpy(want, src, at);
    unsigned char again[8];
    fill(again, sizeof(again), seed + 1);
    UNIT_CHECK(transport_put(w, 0, REGION, base, again, sizeof(again), 0) == 0, "the second put");
    memcpy(want, again, sizeof(again));
    UNIT_CHECK(transport_flush(w, 0) == 0, "flush");
    UNIT_CHECK(!memcmp(region + base, want, at), "a stream of %zu bytes of blocking puts in place",
               at);
}

/* Every atomic of both sizes on worker w, on START with VALUE: the results worked out by hand
 * (the 4-byte ones are the low halves), compare-and-swap comparing equal. */
#define START 0x0f0f0f0f12345678ull
#define VALUE 0x00ff00ff0000ffffull
static const uint64_t amo_expected[] = {
    [TRANSPORT_AMO_ADD] = 0x100e100e12355677ull,
    [TRANSPORT_AMO_AND] = 0x000f000f00005678ull,
    [TRANSPORT_AMO_OR] = 0x0fff0fff1234ffffull,
    [TRANSPORT_AMO_XOR] = 0x0ff00ff01234a987ull,
    [TRANSPORT_AMO_SWAP] = VALUE,
    [TRANSPORT_AMO_CSWAP] = VALUE,
};

static void check_atomics(struct transport_worker *w, size_t offset)
{
    for (size_t size = 4; size <= 8; size += 4) {
        uint64_t mask = size == 8 ? ~0ull : 0xffffffffull, start = START & mask;
        for (int op = TRANSPORT_AMO_ADD; op <= TRANSPORT_AMO_CSWAP; op++) {
            uint64_t compare = op == TRANSPORT_AMO_CSWAP ? start : 0, old = 0, now = 0;
            memcpy(region + offset, &start, size);
            UNIT_CHECK(
                transport_atomic(w, op, 0, REGION, offset, VALUE & mask, compare, &old, size) == 0,
                "fetching atomic %d", op);
            memcpy(&now, region + offset, size);
            UNIT_CHECK(old == start, "atomic %d of %zu bytes fetched %#llx", op, size,
                       (unsigned long long)old);
            UNIT_CHECK(now == (amo_expected[op] & mask), "atomic %d of %zu bytes left %#llx", op,
                       size, (unsigned long long)now);
            if (op == TRANSPORT_AMO_CSWAP)
                continue; /* no non-fetching form */
            memcpy(region + offset, &start, size);
            UNIT_CHECK(transport_atomic(w, op, 0, REGION, offset, VALUE & mask, 0, NULL, size) == 0,
                       "atomic %d", op);
            UNIT_CHECK(transport_flush(w, 0) == 0, "flush");
            now = 0;
            memcpy(&now, region + offset, size);
            UNIT_CHECK(now == (amo_expected[op] & mask),
                       "non-fetching atomic %d of %zu bytes left %#llx", op, size,
                       (unsigned long long)now);
        }
    }
}

/* Put-with-signal: its data in place once its signal is, after a put issued before it, and
 * ordered by a fence before a put that follows (which the signal's messages could otherwise
 * overtake where they go by message beside the network's puts). */
static void check_signal(struct transport_worker *w)
{
    uint64_t data[4] = {1, 2, 3, 4}, before[4] = {5, 6, 7, 8}, after[4] = {9, 10, 11, 12};
    uint64_t *signal = (uint64_t *)(region + 8192);
    memset(region + 4096, 0, 64);
    __atomic_store_n(signal, 0, __ATOMIC_RELEASE);
    UNIT_CHECK(transport_put(w, 0, REGION, 4096 + sizeof(data), before, sizeof(before), 1) == 0,
               "a put before the put-with-signal");
    UNIT_CHECK(transport_put_signal(w, 0, REGION, 4096, data, sizeof(data), REGION, 8192,
                                    TRANSPORT_AMO_ADD, 5, 1) == 0,
               "put_signal");
    long long deadline = wait_now_ns() + 2000000000LL;
    while (__atomic_load_n(signal, __ATOMIC_ACQUIRE) != 5 && wait_now_ns() < deadline)
        transport_progress(transport_default_worker(job));
    UNIT_CHECK(__atomic_load_n(signal, __ATOMIC_ACQUIRE) == 5 &&
                   !memcmp(region + 4096, data, sizeof(data)) &&
                   !memcmp(region + 4096 + sizeof(data), before, sizeof(before)),
               "put-with-signal: its data and the put before it in place once the signal is");
    UNIT_CHECK(transport_put_signal(w, 0, REGION, 4096, data, sizeof(data), REGION, 8192,
                                    TRANSPORT_AMO_SWAP, 7, 0) == 0 &&
                   transport_fence(w) == 0 &&
                   transport_put(w, 0, REGION, 4096, after, sizeof(after), 0) == 0 &&
                   transport_flush(w, 0) == 0,
               "put_signal, fence, put, flush");
    UNIT_CHECK(!memcmp(region + 4096, after, sizeof(after)) &&
                   __atomic_load_n(signal, __ATOMIC_ACQUIRE) == 7,
               "a put after a fence lands after the put-with-signal before it");
}

/* What the target's callbacks perform, as for memory only its owner touches. */
static void check_owner_route(struct transport_worker *w)
{
    unsigned char src[5000], dst[5000];
    fill(src, sizeof(src), 9);
    UNIT_CHECK(transport_am_put(w, 0, REGION, 65536, src, sizeof(src)) == 0, "am_put");
    UNIT_CHECK(transport_fence(w) == 0 && transport_flush(w, 0) == 0, "fence and flush");
    UNIT_CHECK(!memcmp(region + 65536, src, sizeof(src)), "an active-message put in place");
    UNIT_CHECK(transport_am_get(w, 0, REGION, 65536, dst, sizeof(dst)) == 0 &&
                   !memcmp(dst, src, sizeof(src)),
               "an active-message get");
    uint64_t start = 40, old = 0, now;
    memcpy(region + 70000, &start, 8);
    UNIT_CHECK(transport_am_atomic(w, TRANSPORT_AMO_ADD, 0, REGION, 70000, 2, 0, 8, &old) == 0,
               "am_atomic");
    memcpy(&now, region + 70000, 8);
    UNIT_CHECK(old == 40 && now == 42, "an active-message fetch-add: %llu, then %llu",
               (unsigned long long)old, (unsigned long long)now);
}

static void check_message(struct transport_worker *w)
{
    const char header[8] = "header", data[] = "the layer above's message";
    int before = received.count;
    UNIT_CHECK(transport_message(w, 0, 2, header, sizeof(header), data, sizeof(data)) == 0,
               "message");
    for (int i = 0; i < 1000000 && __atomic_load_n(&received.count, __ATOMIC_ACQUIRE) == before;
         i++)
        transport_progress(transport_default_worker(job));
    UNIT_CHECK(received.count == before + 1 && received.from == 0 &&
                   !memcmp(received.header, header, sizeof(header)) &&
                   received.len == sizeof(data) && !memcmp(received.data, data, sizeof(data)),
               "a message arrives once, whole, from PE 0");
}

/* A PE spinning on blocking calls that need no wait (a test_lock on a lock whose queue it holds)
 * still takes in what peers sent it: such calls progress the workers now and then. Here the
 * message is this PE's own, which only the worker's progress delivers. */
static void check_served_while_spinning(struct transport_worker *w)
{
    const char header[8] = "spin", data[] = "sent before the spin";
    int before = received.count;
    UNIT_CHECK(transport_message(w, 0, 2, header, sizeof(header), data, sizeof(data)) == 0,
               "message before the spin");
    long long deadline = wait_now_ns() + 2000000000LL;
    while (__atomic_load_n(&received.count, __ATOMIC_ACQUIRE) == before && wait_now_ns() < deadline)
        transport_progress_called(w);
    UNIT_CHECK(received.count == before + 1,
               "the message arrives while the PE only makes calls that need no wait");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_transport ucx|ofi [PROVIDER] [by-message]\n");
        return 2;
    }
    struct transport_config config = {
        .my_pe = 0,
        .n_pes = 1,
        .thread_safe = 1,
        .network = argv[1],
        .provider = argc > 2 ? argv[2] : "",
        .atomics_by_message = argc > 3 && !strcmp(argv[3], "by-message"),
        .exchange = {exchange_publish, exchange_fetch},
    };
    /* A PE alone on its node, as the library sets the wait policy up before the transport: where
     * the node has a CPU for it, networks may make no event descriptors (progress then polls). */
    wait_policy_init(1);
    if (transport_init(&config, &job)) {
        fprintf(stderr, "test_transport: no %s network here\n", argv[1]);
        return 1;
    }
    struct transport *t = job;
    UNIT_CHECK(!strcmp(transport_network_name(t), argv[1]), "the network asked for: %s",
               transport_network_name(t));
    transport_set_target_ops(t, &target_ops);
    transport_set_message_handler(t, 2, on_message);
    UNIT_CHECK(transport_region_register(t, REGION, 1, region, REGION_LEN, NULL) == 0,
               "register the region");
    struct transport_worker *w = transport_default_worker(t), *ctx;
    check_rma(w, 0, 1);
    check_put_stream(w, 0, 7);
    check_atomics(w, 8);
    check_signal(w);
    check_owner_route(w);
    check_message(w);
    check_served_while_spinning(w);
    UNIT_CHECK(transport_worker_create(t, &ctx) == 0, "a context's worker");
    check_rma(ctx, 512 * 1024, 50);
    check_atomics(ctx, 16);
    check_message(ctx);
    /* With the progress thread serving, everything still completes and arrives. */
    UNIT_CHECK(transport_progress_thread_start(t, 100) == 0, "the progress thread");
    check_rma(ctx, 512 * 1024, 80);
    check_put_stream(ctx, 512 * 1024, 90);
    check_atomics(w, 24);
    check_message(w);
    UNIT_CHECK(transport_flush_all(ctx) == 0 && transport_flush_all(w) == 0, "flush_all");
    transport_worker_release(ctx);
    transport_region_deregister(t, REGION);
    transport_fini(t);
    char name[64];
    snprintf(name, sizeof(name), "test_transport %s%s", argv[1],
             config.atomics_by_message ? " (atomics by message)" : "");
    return unit_finish(name);
}
