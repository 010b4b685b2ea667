/* Small writes into GPU memory, applied together: one driver call per write costs about as much
 * as the whole copy of a few bytes (5-8 us on the PCIe GPUs measured), so a put_nbi loop would run
 * at one write per copy latency. Instead each write's bytes are copied at once into a batch in
 * pinned host memory the GPU maps, and the batch goes on the stream as one operation when it is
 * full or when anything else is issued there (a quiet, a read, a large copy): a single write as a
 * copy from pinned memory, several as one scatter kernel. Two batches alternate, so one fills
 * while the other is applied. */
#include "cuda_internal.h"

#include <pthread.h>
#include <string.h>

#define CUDA_BATCH_ENTRIES 1024
#define CUDA_BATCH_DATA ((size_t)64 << 10)

struct cuda_batch {
    struct cuda_batch_entry entry[CUDA_BATCH_ENTRIES];
    char data[CUDA_BATCH_DATA];
    unsigned count;
    size_t used;
    int in_flight; /* issued on the stream, maybe not done: not to be refilled yet */
};

static struct cuda_batch *cuda_batches[2]; /* mapped pinned host memory, made on first use */
static int cuda_batch_current;
static pthread_mutex_t cuda_batch_lock = PTHREAD_MUTEX_INITIALIZER;

/* Issues the current batch and moves to the other (under cuda_batch_lock). An issued batch keeps
 * its entries until it is known done. */
static void cuda_batch_issue(void)
{
    struct cuda_batch *b = cuda_batches[cuda_batch_current];
    if (!b || !b->count || b->in_flight)
        return;
    if (b->count == 1)
        cuda_check(cuda.cuMemcpyAsync(b->entry[0].dst, cuda_address(b->data), b->entry[0].len,
                                      cuda_stream),
                   "cuMemcpyAsync (batch)");
    else
        cuda_scatter(b->entry, b->data, b->count);
    b->in_flight = 1;
    cuda_batch_current ^= 1;
}

/* After a stream sync: issued batches are done and empty again (under cuda_batch_lock). */
static void cuda_batch_done(void)
{
    for (int i = 0; i < 2 && cuda_batches[i]; i++)
        if (cuda_batches[i]->in_flight) {
            cuda_batches[i]->count = 0;
            cuda_batches[i]->used = 0;
            cuda_batches[i]->in_flight = 0;
        }
}

/* The batch to fill, no longer read by the GPU (under cuda_batch_lock). */
static struct cuda_batch *cuda_batch_ready(void)
{
    if (!cuda_batches[0]) {
        void *pinned;
        cuda_check(
            cuda.cuMemHostAlloc(&pinned, 2 * sizeof(struct cuda_batch), CU_MEMHOSTALLOC_DEVICEMAP),
            "cuMemHostAlloc (write batches)");
        cuda_batches[0] = pinned;
        cuda_batches[1] = cuda_batches[0] + 1;
    }
    struct cuda_batch *b = cuda_batches[cuda_batch_current];
    if (b->in_flight) {
        cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
        cuda_batch_done();
    }
    return b;
}

void cuda_batch_write(void *dst, const void *src, size_t len)
{
    pthread_mutex_lock(&cuda_batch_lock);
    struct cuda_batch *b = cuda_batch_ready();
    if (b->count == CUDA_BATCH_ENTRIES || b->used + len > CUDA_BATCH_DATA) {
        cuda_batch_issue();
        b = cuda_batch_ready();
    }
    b->entry[b->count++] = (struct cuda_batch_entry){cuda_address(dst), b->used, len};
    memcpy(b->data + b->used, src, len);
    b->used += (len + 7) & ~(size_t)7; /* entries stay word-aligned for the kernel */
    pthread_mutex_unlock(&cuda_batch_lock);
}

void cuda_batch_flush(void)
{
    pthread_mutex_lock(&cuda_batch_lock);
    cuda_batch_issue();
    pthread_mutex_unlock(&cuda_batch_lock);
}

/* Under the lock throughout: a batch another thread issued after the synchronization began is
 * not taken for done. */
void cuda_batch_sync(void)
{
    pthread_mutex_lock(&cuda_batch_lock);
    cuda_batch_issue();
    cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
    cuda_batch_done();
    pthread_mutex_unlock(&cuda_batch_lock);
}
