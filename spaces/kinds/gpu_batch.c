/* Small writes into GPU memory, applied together: one runtime call per write costs about as much
 * as the whole copy of a few bytes (5-8 us on the PCIe GPUs measured), so a put_nbi loop would run
 * at one write per copy latency. Instead each write's bytes are copied at once into a batch in
 * pinned host memory the GPU maps, and the batch goes on the stream as one operation when it is
 * full or when anything else is issued there (a quiet, a read, a large copy): a single write as a
 * copy from pinned memory, several as one scatter kernel where the runtime has one (else as
 * copies from pinned memory, issued together). Two batches alternate, so one fills while the other
 * is applied. */
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

static struct gpu_batch *gpu_batches[2]; /* mapped pinned host memory, made on first use */
static int gpu_batch_current;
static pthread_mutex_t gpu_batch_lock = PTHREAD_MUTEX_INITIALIZER;

/* Issues the current batch and moves to the other (under gpu_batch_lock). An issued batch keeps
 * its entries until it is known done. */
static void gpu_batch_issue(void)
{
    struct gpu_batch *b = gpu_batches[gpu_batch_current];
    if (!b || !b->count || b->in_flight)
        return;
    if (b->count > 1 && gpu_rt->scatter) {
        gpu_rt->scatter(b->entry, b->data, b->count, gpu_stream);
    } else {
        for (unsigned i = 0; i < b->count; i++)
            gpu_check(gpu_rt->copy_async((void *)(uintptr_t)b->entry[i].dst,
                                         b->data + b->entry[i].offset, b->entry[i].len, gpu_stream),
                      "copy (batch)");
    }
    b->in_flight = 1;
    gpu_batch_current ^= 1;
}

/* After a stream sync: issued batches are done and empty again (under gpu_batch_lock). */
static void gpu_batch_done(void)
{
    for (int i = 0; i < 2 && gpu_batches[i]; i++)
        if (gpu_batches[i]->in_flight) {
            gpu_batches[i]->count = 0;
            gpu_batches[i]->used = 0;
            gpu_batches[i]->in_flight = 0;
        }
}

/* The batch to fill, no longer read by the GPU (under gpu_batch_lock). */
static struct gpu_batch *gpu_batch_ready(void)
{
    if (!gpu_batches[0]) {
        void *pinned;
        gpu_check(gpu_rt->host_alloc_mapped(&pinned, 2 * sizeof(struct gpu_batch)),
                  "pinned host allocation (write batches)");
        gpu_batches[0] = pinned;
        gpu_batches[1] = gpu_batches[0] + 1;
    }
    struct gpu_batch *b = gpu_batches[gpu_batch_current];
    if (b->in_flight) {
        gpu_check(gpu_rt->stream_sync(gpu_stream), "stream synchronize");
        gpu_batch_done();
    }
    return b;
}

void gpu_batch_write(void *dst, const void *src, size_t len)
{
    pthread_mutex_lock(&gpu_batch_lock);
    struct gpu_batch *b = gpu_batch_ready();
    if (b->count == GPU_BATCH_ENTRIES || b->used + len > GPU_BATCH_DATA) {
        gpu_batch_issue();
        b = gpu_batch_ready();
    }
    b->entry[b->count++] = (struct gpu_batch_entry){(uintptr_t)dst, b->used, len};
    memcpy(b->data + b->used, src, len);
    b->used += (len + 7) & ~(size_t)7; /* entries stay word-aligned for the kernel */
    pthread_mutex_unlock(&gpu_batch_lock);
}

void gpu_batch_flush(void)
{
    pthread_mutex_lock(&gpu_batch_lock);
    gpu_batch_issue();
    pthread_mutex_unlock(&gpu_batch_lock);
}

/* Under the lock throughout: a batch another thread issued after the synchronization began is
 * not taken for done. */
void gpu_batch_sync(void)
{
    pthread_mutex_lock(&gpu_batch_lock);
    gpu_batch_issue();
    gpu_check(gpu_rt->stream_sync(gpu_stream), "stream synchronize");
    gpu_batch_done();
    pthread_mutex_unlock(&gpu_batch_lock);
}
