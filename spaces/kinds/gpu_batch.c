/* SPDX-License-Identifier: BSD-3-Clause */
/* Small writes into GPU memory, applied together: one runtime call per write costs about as much as
 * the whole copy of a few bytes, so a put_nbi loop would run at one write per copy latency. Instead
 * each write's bytes are copied at once into a batch in pinned host memory the GPU maps, and the
 * batch goes on the stream as one operation when it is full or when anything else is issued there
 * (a quiet, a read, a large copy): a single write as a copy from pinned memory, several as one
 * scatter kernel where the runtime has one (else as copies from pinned memory, issued together).
 * Two batches alternate, so one fills while the other is applied. Each queue (kind.h) of each
 * device has its own pair, applied on its own stream, made on its first small write.
 *
 * A GPU applies a batch's entries in parallel, in no set order: an entry that writes bytes an
 * earlier entry of the batch writes or reads, or reads bytes it writes, goes into the next batch,
 * which the stream applies after this one. A table of the bytes each batch touches, by 64-byte
 * chunk, finds such an entry at a cost independent of the batch's length. */
#include "../../common/log.h"
#include "gpu.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GPU_BATCH_ENTRIES 1024
#define GPU_BATCH_DATA ((size_t)64 << 10)

struct gpu_batch {
    struct gpu_batch_entry entry[GPU_BATCH_ENTRIES];
    char data[GPU_BATCH_DATA];
    unsigned count;
    size_t used;
    int in_flight; /* issued on the stream, maybe not done: not to be refilled yet */
};

/* The bytes of GPU memory a batch writes and reads, by 64-byte chunk of addresses: an open
 * addressing table, emptied by starting a new generation when the batch is done. */
#define GPU_BATCH_CHUNKS 2048
#define GPU_BATCH_CHUNKS_TAKEN (GPU_BATCH_CHUNKS / 2 - 32) /* then the batch counts as full */
struct gpu_batch_chunk {
    uint64_t chunk;         /* address / 64 */
    uint64_t written, read; /* a bit per byte */
    unsigned generation;    /* the slot is taken in its table's generation */
};
struct gpu_batch_chunks {
    struct gpu_batch_chunk slot[GPU_BATCH_CHUNKS];
    unsigned generation, taken;
};

/* A queue's batches: mapped pinned host memory, made on first use, each with its table of the
 * bytes it touches. */
struct gpu_batch_pair {
    struct gpu_batch *batch[2];
    struct gpu_batch_chunks *touched[2];
    int current;
    pthread_mutex_t lock;
};

struct gpu_batch_pair *gpu_batch_pairs_new(void)
{
    struct gpu_batch_pair *pairs = calloc(KIND_QUEUES, sizeof(*pairs));
    for (int q = 0; pairs && q < KIND_QUEUES; q++)
        pthread_mutex_init(&pairs[q].lock, NULL);
    return pairs;
}

/* Issues the current batch on queue's stream and moves to the other (under the pair's lock). An
 * issued batch keeps its entries until it is known done. */
static void gpu_batch_issue(struct gpu_device *dev, int queue)
{
    struct gpu_batch_pair *pair = &dev->batch[queue];
    struct gpu_batch *b = pair->batch[pair->current];
    if (!b || !b->count || b->in_flight)
        return;
    void *stream = gpu_stream(dev, queue);
    if (b->count > 1 && dev->rt->scatter && !gpu_copy_engines_only) {
        dev->rt->scatter(dev, b->entry, b->data, b->count, stream);
    } else {
        for (unsigned i = 0; i < b->count; i++)
            gpu_check(dev,
                      dev->rt->copy_async((void *)(uintptr_t)b->entry[i].dst,
                                          (void *)((uintptr_t)b->data + b->entry[i].offset),
                                          b->entry[i].len, stream),
                      "copy (batch)");
    }
    b->in_flight = 1;
    pair->current ^= 1;
}

/* The slot of chunk in t: the one it has, or the free one where it goes. */
static struct gpu_batch_chunk *gpu_batch_chunk_slot(struct gpu_batch_chunks *t, uint64_t chunk)
{
    _Static_assert(GPU_BATCH_CHUNKS == 1 << 11, "the hash gives 11 bits");
    unsigned i = (unsigned)((chunk * 0x9e3779b97f4a7c15ull) >> 53); /* Fibonacci hashing */
    while (t->slot[i].generation == t->generation && t->slot[i].chunk != chunk)
        i = (i + 1) % GPU_BATCH_CHUNKS;
    return &t->slot[i];
}

/* The first piece of [at, end) within one chunk: its chunk and the mask of its bytes there.
 * Returns its length. */
static size_t gpu_batch_piece(uintptr_t at, uintptr_t end, uint64_t *chunk, uint64_t *mask)
{
    unsigned bit = (unsigned)(at % 64);
    size_t n = end - at < 64 - bit ? end - at : 64 - bit;
    *chunk = at / 64;
    *mask = (n == 64 ? ~0ull : (1ull << n) - 1) << bit;
    return n;
}

/* Whether the batch writes any byte of [at, at + len) (or reads: reads it). */
static int gpu_batch_touches(struct gpu_batch_chunks *t, uintptr_t at, size_t len, int reads)
{
    uint64_t chunk, mask;
    for (uintptr_t p = at, end = at + len; p < end;) {
        p += gpu_batch_piece(p, end, &chunk, &mask);
        const struct gpu_batch_chunk *slot = gpu_batch_chunk_slot(t, chunk);
        if (slot->generation == t->generation &&
            ((slot->written | (reads ? slot->read : 0)) & mask))
            return 1;
    }
    return 0;
}

/* Records that the batch writes (or reads) [at, at + len). */
static void gpu_batch_record(struct gpu_batch_chunks *t, uintptr_t at, size_t len, int write)
{
    uint64_t chunk, mask;
    for (uintptr_t p = at, end = at + len; p < end;) {
        p += gpu_batch_piece(p, end, &chunk, &mask);
        struct gpu_batch_chunk *slot = gpu_batch_chunk_slot(t, chunk);
        if (slot->generation != t->generation) {
            *slot = (struct gpu_batch_chunk){chunk, 0, 0, t->generation};
            t->taken++;
        }
        *(write ? &slot->written : &slot->read) |= mask;
    }
}

/* Whether an entry writing len bytes at dst (reading them at device, or 0 from host memory) must
 * wait for the batch to be applied, or the batch's table is full. */
static int gpu_batch_conflicts(struct gpu_batch_chunks *t, uintptr_t dst, uintptr_t device,
                               size_t len)
{
    return t->taken > GPU_BATCH_CHUNKS_TAKEN || gpu_batch_touches(t, dst, len, 1) ||
           (device && gpu_batch_touches(t, device, len, 0));
}

/* After a sync of the pair's stream: issued batches are done and empty again (under its lock). */
static void gpu_batch_done(struct gpu_batch_pair *pair)
{
    for (int i = 0; i < 2 && pair->batch[i]; i++) {
        struct gpu_batch *b = pair->batch[i];
        struct gpu_batch_chunks *t = pair->touched[i];
        if (!b->in_flight)
            continue;
        b->count = 0;
        b->used = 0;
        b->in_flight = 0;
        t->taken = 0;
        if (++t->generation == 0) { /* a slot of generation 0 would look taken */
            memset(t->slot, 0, sizeof(t->slot));
            t->generation = 1;
        }
    }
}

/* The batch to fill, no longer read by the GPU (under the pair's lock). The queue's stream is
 * made with its batches: a sync of every stream made (gpu_sync) then finds writes batched and
 * not yet issued. */
static struct gpu_batch *gpu_batch_ready(struct gpu_device *dev, int queue)
{
    struct gpu_batch_pair *pair = &dev->batch[queue];
    if (!pair->batch[0]) {
        void *pinned;
        gpu_stream(dev, queue);
        gpu_check(dev, dev->rt->host_alloc_mapped(&pinned, 2 * sizeof(struct gpu_batch)),
                  "pinned host allocation (write batches)");
        for (int i = 0; i < 2; i++) {
            pair->touched[i] = calloc(1, sizeof(*pair->touched[i]));
            if (!pair->touched[i])
                log_fatal("spaces", "out of memory for the tables of write batches");
            pair->touched[i]->generation = 1;
        }
        pair->batch[0] = pinned;
        pair->batch[1] = pair->batch[0] + 1;
    }
    struct gpu_batch *b = pair->batch[pair->current];
    if (b->in_flight) {
        gpu_check(dev, dev->rt->stream_sync(gpu_stream(dev, queue)), "stream synchronize");
        gpu_batch_done(pair);
    }
    return b;
}

/* Adds an entry for len bytes to dst: from host memory at host, copied into the batch's data now,
 * or (host NULL) from GPU memory at device, read when the batch runs. An entry's source is the
 * batch's data plus its offset, so a device source is an offset that wraps around to it. */
static void gpu_batch_add(struct gpu_device *dev, int queue, void *dst, const void *host,
                          const void *device, size_t len)
{
    struct gpu_batch_pair *pair = &dev->batch[queue];
    pthread_mutex_lock(&pair->lock);
    struct gpu_batch *b = gpu_batch_ready(dev, queue);
    size_t data = host ? len : 0;
    uintptr_t source = host ? 0 : (uintptr_t)device;
    if (b->count == GPU_BATCH_ENTRIES || b->used + data > GPU_BATCH_DATA ||
        gpu_batch_conflicts(pair->touched[pair->current], (uintptr_t)dst, source, len)) {
        gpu_batch_issue(dev, queue);
        b = gpu_batch_ready(dev, queue);
    }
    gpu_batch_record(pair->touched[pair->current], (uintptr_t)dst, len, 1);
    if (source)
        gpu_batch_record(pair->touched[pair->current], source, len, 0);
    uint64_t offset = host ? b->used : (uint64_t)(uintptr_t)device - (uint64_t)(uintptr_t)b->data;
    b->entry[b->count++] = (struct gpu_batch_entry){(uintptr_t)dst, offset, len};
    if (host)
        memcpy(b->data + b->used, host, len);
    b->used += (data + 7) & ~(size_t)7; /* entries stay word-aligned for the kernel */
    pthread_mutex_unlock(&pair->lock);
}

void gpu_batch_write(struct gpu_device *dev, int queue, void *dst, const void *src, size_t len)
{
    gpu_batch_add(dev, queue, dst, src, NULL, len);
}

void gpu_batch_copy(struct gpu_device *dev, int queue, void *dst, const void *src, size_t len)
{
    gpu_batch_add(dev, queue, dst, NULL, src, len);
}

void gpu_batch_flush(struct gpu_device *dev, int queue)
{
    struct gpu_batch_pair *pair = &dev->batch[queue];
    pthread_mutex_lock(&pair->lock);
    gpu_batch_issue(dev, queue);
    pthread_mutex_unlock(&pair->lock);
}

/* Under the lock throughout: a batch another thread issued after the synchronization began is
 * not taken for done. */
void gpu_batch_sync(struct gpu_device *dev, int queue)
{
    struct gpu_batch_pair *pair = &dev->batch[queue];
    pthread_mutex_lock(&pair->lock);
    gpu_batch_issue(dev, queue);
    int rc = dev->rt->stream_sync(gpu_stream(dev, queue));
    if (rc && !gpu_device_lost(dev)) /* after a device reset nothing is left to land */
        gpu_check(dev, rc, "stream synchronize");
    gpu_batch_done(pair);
    pthread_mutex_unlock(&pair->lock);
}
