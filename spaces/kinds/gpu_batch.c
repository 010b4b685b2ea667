/* Small writes into GPU memory, applied together: one runtime call per write costs about as much
 * as the whole copy of a few bytes (5-8 us on the PCIe GPUs measured), so a put_nbi loop would run
 * at one write per copy latency. Instead each write's bytes are copied at once into a batch in
 * pinned host memory the GPU maps, and the batch goes on the stream as one operation when it is
 * full or when anything else is issued there (a quiet, a read, a large copy): a single write as a
 * copy from pinned memory, several as one scatter kernel where the runtime has one (else as
 * copies from pinned memory, issued together). Two batches alternate, so one fills while the other
 * is applied. Each queue (kind.h) has its own pair, applied on its own stream, made on its first
 * small write. */
#include "gpu.h"

#include <pthread.h>
#include <stdint.h>
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

/* A queue's batches: mapped pinned host memory, made on first use. */
struct gpu_batch_pair {
    struct gpu_batch *batch[2];
    int current;
    pthread_mutex_t lock;
};

static struct gpu_batch_pair gpu_batch_pairs[KIND_QUEUES] = {
    [0 ... KIND_QUEUES - 1] = {.lock = PTHREAD_MUTEX_INITIALIZER}};

/* Issues the current batch on queue's stream and moves to the other (under the pair's lock). An
 * issued batch keeps its entries until it is known done. */
static void gpu_batch_issue(struct gpu_batch_pair *pair, int queue)
{
    struct gpu_batch *b = pair->batch[pair->current];
    if (!b || !b->count || b->in_flight)
        return;
    void *stream = gpu_stream(queue);
    if (b->count > 1 && gpu_rt->scatter) {
        gpu_rt->scatter(b->entry, b->data, b->count, stream);
    } else {
        for (unsigned i = 0; i < b->count; i++)
            gpu_check(gpu_rt->copy_async((void *)(uintptr_t)b->entry[i].dst,
                                         (void *)((uintptr_t)b->data + b->entry[i].offset),
                                         b->entry[i].len, stream),
                      "copy (batch)");
    }
    b->in_flight = 1;
    pair->current ^= 1;
}

/* After a sync of the pair's stream: issued batches are done and empty again (under its lock). */
static void gpu_batch_done(struct gpu_batch_pair *pair)
{
    for (int i = 0; i < 2 && pair->batch[i]; i++)
        if (pair->batch[i]->in_flight) {
            pair->batch[i]->count = 0;
            pair->batch[i]->used = 0;
            pair->batch[i]->in_flight = 0;
        }
}

/* The batch to fill, no longer read by the GPU (under the pair's lock). The queue's stream is
 * made with its batches: a sync of every stream made (gpu_sync) then finds writes batched and
 * not yet issued. */
static struct gpu_batch *gpu_batch_ready(struct gpu_batch_pair *pair, int queue)
{
    if (!pair->batch[0]) {
        void *pinned;
        gpu_stream(queue);
        gpu_check(gpu_rt->host_alloc_mapped(&pinned, 2 * sizeof(struct gpu_batch)),
                  "pinned host allocation (write batches)");
        pair->batch[0] = pinned;
        pair->batch[1] = pair->batch[0] + 1;
    }
    struct gpu_batch *b = pair->batch[pair->current];
    if (b->in_flight) {
        gpu_check(gpu_rt->stream_sync(gpu_stream(queue)), "stream synchronize");
        gpu_batch_done(pair);
    }
    return b;
}

/* Adds an entry for len bytes to dst: from host memory at host, copied into the batch's data now,
 * or (host NULL) from GPU memory at device, read when the batch runs. An entry's source is the
 * batch's data plus its offset, so a device source is an offset that wraps around to it. */
static void gpu_batch_add(int queue, void *dst, const void *host, const void *device, size_t len)
{
    struct gpu_batch_pair *pair = &gpu_batch_pairs[queue];
    pthread_mutex_lock(&pair->lock);
    struct gpu_batch *b = gpu_batch_ready(pair, queue);
    size_t data = host ? len : 0;
    if (b->count == GPU_BATCH_ENTRIES || b->used + data > GPU_BATCH_DATA) {
        gpu_batch_issue(pair, queue);
        b = gpu_batch_ready(pair, queue);
    }
    uint64_t offset = host ? b->used : (uint64_t)(uintptr_t)device - (uint64_t)(uintptr_t)b->data;
    b->entry[b->count++] = (struct gpu_batch_entry){(uintptr_t)dst, offset, len};
    if (host)
        memcpy(b->data + b->used, host, len);
    b->used += (data + 7) & ~(size_t)7; /* entries stay word-aligned for the kernel */
    pthread_mutex_unlock(&pair->lock);
}

void gpu_batch_write(int queue, void *dst, const void *src, size_t len)
{
    gpu_batch_add(queue, dst, src, NULL, len);
}

void gpu_batch_copy(int queue, void *dst, const void *src, size_t len)
{
    gpu_batch_add(queue, dst, NULL, src, len);
}

void gpu_batch_flush(int queue)
{
    struct gpu_batch_pair *pair = &gpu_batch_pairs[queue];
    pthread_mutex_lock(&pair->lock);
    gpu_batch_issue(pair, queue);
    pthread_mutex_unlock(&pair->lock);
}

/* Under the lock throughout: a batch another thread issued after the synchronization began is
 * not taken for done. */
void gpu_batch_sync(int queue)
{
    struct gpu_batch_pair *pair = &gpu_batch_pairs[queue];
    pthread_mutex_lock(&pair->lock);
    gpu_batch_issue(pair, queue);
    gpu_check(gpu_rt->stream_sync(gpu_stream(queue)), "stream synchronize");
    gpu_batch_done(pair);
    pthread_mutex_unlock(&pair->lock);
}
