/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU kinds' shared part: heaps in the memory of a GPU of the PE, through the calls of its
 * runtime (gpu.h), on the device the program's kernels use too; one struct gpu_device per device
 * the PE uses, each with its own kind.
 *
 * - Node peers attach each other's heaps with IPC handles; copies between any two memories the
 *   GPU reaches (its heap, a peer's attached heap, host memory, the program's own device buffers)
 *   are runtime copies on the library's streams, which the program's default stream never waits
 *   for: one per queue (kind.h), so a context's quiet waits for its own writes alone.
 * - Host mappings of the library (heaps, static data, node peers' heaps) are registered with the
 *   runtime where a large copy touches them, so such copies run at pinned speed.
 * - Writes are asynchronous (KIND_CAP_ASYNC_COPY): sync waits for the stream. A host source is
 *   reusable when a write returns: the runtime stages pageable memory before returning, and a
 *   pinned source (which it reads later) is waited for.
 * - Small writes from host memory are queued and applied together (gpu_batch.c).
 *
 * The handle node peers attach with is the IPC handle of the allocation and the heap's offset in
 * it: a heap is aligned inside a larger allocation when the runtime cannot place memory and its
 * own alignment falls short of what the heap must have. */
#include "gpu.h"

#include "../../common/log.h"
#include "../space.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct gpu_device gpu_devices[GPU_DEVICES_MAX];
static const struct gpu_runtime *gpu_runtime_used; /* the process's one runtime */
static int gpu_devices_used;                       /* slots set up, published after each */

void gpu_check(struct gpu_device *dev, int rc, const char *what)
{
    if (rc != 0)
        log_fatal("spaces", "%s %s failed (error %d) on device %d%s", dev->rt->name, what, rc,
                  dev->ordinal,
                  gpu_device_lost(dev) ? ": the program reset the device (or destroyed the "
                                         "context) under a live GPU space"
                                       : "");
}

int gpu_device_lost(struct gpu_device *dev)
{
    if (!__atomic_load_n(&dev->lost, __ATOMIC_RELAXED) && dev->rt->lost(dev, dev->streams[0]))
        __atomic_store_n(&dev->lost, 1, __ATOMIC_RELAXED);
    return __atomic_load_n(&dev->lost, __ATOMIC_RELAXED);
}

const struct gpu_runtime *gpu_runtime_in_use(void)
{
    return __atomic_load_n(&gpu_devices_used, __ATOMIC_ACQUIRE) ? gpu_runtime_used : NULL;
}

void gpu_leave_scope(const struct gpu_entered *entered)
{
    entered->dev->rt->leave(entered->dev, entered->previous);
}

static pthread_mutex_t gpu_setup_lock = PTHREAD_MUTEX_INITIALIZER;

/* Queue 0's stream is made at set-up, where a failure can still be reported; another queue's on
 * its first work, which a failure there ends like any other runtime call's. */
void *gpu_stream(struct gpu_device *dev, int queue)
{
    void *stream = __atomic_load_n(&dev->streams[queue], __ATOMIC_ACQUIRE);
    if (stream)
        return stream;
    pthread_mutex_lock(&gpu_setup_lock);
    if (!dev->streams[queue]) {
        gpu_check(dev, dev->rt->stream_create(dev, &stream), "stream create");
        __atomic_store_n(&dev->streams[queue], stream, __ATOMIC_RELEASE);
    }
    stream = dev->streams[queue];
    pthread_mutex_unlock(&gpu_setup_lock);
    return stream;
}

/* Lands every write issued on queue (queued small ones too), or on every stream made. */
void gpu_sync(struct gpu_device *dev, int queue)
{
    GPU_ENTERED(dev);
    if (queue != KIND_QUEUE_ALL) {
        gpu_batch_sync(dev, queue);
        return;
    }
    for (int q = 0; q < KIND_QUEUES; q++)
        if (__atomic_load_n(&dev->streams[q], __ATOMIC_ACQUIRE))
            gpu_batch_sync(dev, q);
}

/* Lands every write of every device the PE uses, before host memory they may touch goes. */
static void gpu_sync_devices(void)
{
    int n = __atomic_load_n(&gpu_devices_used, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (!gpu_device_lost(&gpu_devices[i]))
            gpu_sync(&gpu_devices[i], KIND_QUEUE_ALL);
}

static int gpu_n_pes; /* the job's, to find node peers' host mappings */
int gpu_copy_engines_only;

unsigned gpu_peer_of(const struct gpu_device *dev, int ordinal)
{
    return ordinal >= 0 && ordinal < dev->node_devices ? dev->peers[ordinal] : 0;
}

/* Learns the node's devices as dev sees them (under the set-up lock, with dev entered). */
static void gpu_learn_devices(struct gpu_device *dev)
{
    const struct gpu_runtime *rt = dev->rt;
    int n = rt->device_count();
    dev->node_devices = n < GPU_MAX_DEVICES ? n : GPU_MAX_DEVICES;
    for (int d = 0; d < dev->node_devices; d++)
        dev->peers[d] = d == dev->ordinal ? GPU_PEER_ACCESS | GPU_PEER_ATOMICS : rt->peer(dev, d);
    if (rt->device_busid(dev->ordinal, dev->busid, sizeof(dev->busid)))
        dev->busid[0] = 0;
    dev->limits = 0;
    for (int d = 0; d < dev->node_devices; d++) {
        if (!(dev->peers[d] & GPU_PEER_ACCESS))
            dev->limits |= KIND_NODE_UNREACHABLE;
        else if (!(dev->peers[d] & GPU_PEER_ATOMICS) && rt->atomic)
            dev->limits |= KIND_NODE_OWNER_ATOMICS;
    }
}

unsigned gpu_node_limits(struct gpu_device *dev)
{
    return dev->limits;
}

/* Opens ordinal in dev (a free slot) with its stream of queue 0 and its batches (under the
 * set-up lock). */
static int gpu_open(struct gpu_device *dev, const struct gpu_runtime *rt, int ordinal,
                    const char *path, char *why, size_t whylen)
{
    *dev = (struct gpu_device){.rt = rt, .slot = (int)(dev - gpu_devices), .ordinal = ordinal};
    if (rt->open(dev, path, ordinal, why, whylen))
        return -1;
    uintptr_t previous = rt->enter(dev);
    int rc = rt->stream_create(dev, &dev->streams[0]);
    if (rc)
        snprintf(why, whylen, "%s device %d has no stream for the library", rt->name, ordinal);
    else
        gpu_learn_devices(dev);
    rt->leave(dev, previous);
    dev->batch = rc ? NULL : gpu_batch_pairs_new();
    if (!rc && !dev->batch) {
        snprintf(why, whylen, "out of memory for the write batches of %s device %d", rt->name,
                 ordinal);
        rc = -1;
    }
    dev->kind = gpu_slot_ops(dev->slot);
    return rc ? -1 : 0;
}

/* Sets up a device not yet used, in the next slot (under the set-up lock). */
static const struct kind_ops *gpu_add(const struct gpu_runtime *rt,
                                      const struct kind_gpu_setup *setup, char *why, size_t whylen)
{
    int n = gpu_devices_used;
    if (gpu_runtime_used && gpu_runtime_used != rt) {
        snprintf(why, whylen, "the %s kind is in use: a process uses one GPU runtime",
                 gpu_runtime_used->name);
        return NULL;
    }
    if (n == GPU_DEVICES_MAX) {
        snprintf(why, whylen, "%s device %d: a PE uses at most %d devices", rt->name,
                 setup->ordinal, GPU_DEVICES_MAX);
        return NULL;
    }
    if (gpu_open(&gpu_devices[n], rt, setup->ordinal, setup->runtime_path, why, whylen))
        return NULL;
    if (n == 0) {
        uintptr_t previous = rt->enter(&gpu_devices[0]);
        int failed = gpu_stream_setup(&gpu_devices[0]);
        rt->leave(&gpu_devices[0], previous);
        if (failed) {
            snprintf(why, whylen, "%s device %d has no mapped host memory for stream work",
                     rt->name, setup->ordinal);
            return NULL;
        }
    }
    gpu_n_pes = setup->n_pes;
    gpu_copy_engines_only = setup->copy_engines_only;
    gpu_runtime_used = rt;
    __atomic_store_n(&gpu_devices_used, n + 1, __ATOMIC_RELEASE);
    /* Owning the program's device buffers and pinning host memory are the runtime's, whatever
     * the device: the first device's kind answers for all. */
    if (n == 0) {
        kind_private_use(gpu_devices[0].kind);
        kind_watch_host(gpu_devices[0].kind);
    }
    return gpu_devices[n].kind;
}

const struct kind_ops *gpu_use(const struct gpu_runtime *rt, const struct kind_gpu_setup *setup,
                               char *why, size_t whylen)
{
    const struct kind_ops *kind = NULL;
    pthread_mutex_lock(&gpu_setup_lock);
    for (int i = 0; i < gpu_devices_used && !kind; i++)
        if (gpu_devices[i].rt == rt && gpu_devices[i].ordinal == setup->ordinal)
            kind = gpu_devices[i].kind;
    if (!kind)
        kind = gpu_add(rt, setup, why, whylen);
    pthread_mutex_unlock(&gpu_setup_lock);
    return kind;
}

/* ---- Heaps ---- */

struct gpu_handle {
    char ipc[GPU_IPC_HANDLE];
    uint64_t offset; /* of the heap in the allocation */
    char busid[32];  /* of the owner's device */
};
_Static_assert(sizeof(struct gpu_handle) <= KIND_HANDLE_MAX, "a GPU handle fits in a record");

/* A heap aligned to mem->align: the runtime's allocation when it already is (it places memory,
 * or its own alignment suffices, as for every heap but a default one), else one large enough to
 * hold an aligned heap. */
int gpu_create(struct gpu_device *dev, const char *prefix, size_t size, struct kind_mem *mem)
{
    (void)prefix;
    size_t align = mem->align, len = size ? size : 1;
    void *block;
    GPU_ENTERED(dev);
    if (dev->rt->prepare)
        dev->rt->prepare(dev);
    if (dev->rt->alloc(dev, &block, len, align, mem->wish))
        return -1;
    if ((uintptr_t)block % align) {
        gpu_check(dev, dev->rt->free(block), "free");
        if (dev->rt->alloc(dev, &block, len + align, align, NULL))
            return -1;
    }
    uintptr_t base = ((uintptr_t)block + align - 1) & ~(uintptr_t)(align - 1);
    mem->base = (void *)base;
    mem->storage = block;
    mem->size = size;
    mem->fd = -1;
    return 0;
}

/* After a device reset the memory is gone already. */
void gpu_destroy(struct gpu_device *dev, struct kind_mem *mem)
{
    if (!gpu_device_lost(dev)) {
        GPU_ENTERED(dev);
        gpu_sync(dev, KIND_QUEUE_ALL); /* nothing of the library may still be writing into it */
        gpu_check(dev, dev->rt->free(mem->storage), "free");
    }
    mem->base = mem->storage = NULL;
}

int gpu_export(struct gpu_device *dev, const struct kind_mem *mem, void *handle, size_t *len)
{
    struct gpu_handle h = {.offset = (uint64_t)((char *)mem->base - (char *)mem->storage)};
    memcpy(h.busid, dev->busid, sizeof(h.busid));
    GPU_ENTERED(dev);
    if (*len < sizeof(h) || dev->rt->ipc_get(h.ipc, mem->storage))
        return -1;
    memcpy(handle, &h, sizeof(h));
    *len = sizeof(h);
    return 0;
}

/* A node peer's heap on dev, or on a device dev has peer access to; the owner's device is known
 * here by its bus id, as processes may number devices differently. */
int gpu_reaches(struct gpu_device *dev, const void *handle, size_t len)
{
    struct gpu_handle h;
    if (len != sizeof(h))
        return 0;
    memcpy(&h, handle, sizeof(h));
    h.busid[sizeof(h.busid) - 1] = 0;
    if (!strcmp(h.busid, dev->busid))
        return 1;
    GPU_ENTERED(dev);
    return (gpu_peer_of(dev, dev->rt->device_by_busid(h.busid)) & GPU_PEER_ACCESS) != 0;
}

/* Node peers' heaps attached here, to close the allocation an attached heap lies in. */
#define GPU_ATTACHED_MAX 256
static struct gpu_attached {
    char *heap;
    void *block;
} gpu_attached[GPU_ATTACHED_MAX];
static pthread_mutex_t gpu_attached_lock = PTHREAD_MUTEX_INITIALIZER;

void *gpu_attach(struct gpu_device *dev, const void *handle, size_t len, size_t size)
{
    (void)size;
    struct gpu_handle h;
    void *block;
    if (len != sizeof(h))
        return NULL;
    memcpy(&h, handle, sizeof(h));
    GPU_ENTERED(dev);
    if (dev->rt->ipc_open(dev, &block, h.ipc))
        return NULL;
    char *heap = (char *)block + h.offset;
    pthread_mutex_lock(&gpu_attached_lock);
    int slot = 0;
    while (slot < GPU_ATTACHED_MAX && gpu_attached[slot].heap)
        slot++;
    if (slot < GPU_ATTACHED_MAX)
        gpu_attached[slot] = (struct gpu_attached){heap, block};
    pthread_mutex_unlock(&gpu_attached_lock);
    if (slot == GPU_ATTACHED_MAX) {
        log_error("spaces", "more than %d node peers' %s heaps attached", GPU_ATTACHED_MAX,
                  dev->rt->name);
        dev->rt->ipc_close(block);
        return NULL;
    }
    return heap;
}

void gpu_detach(struct gpu_device *dev, void *addr, size_t size)
{
    (void)size;
    GPU_ENTERED(dev);
    void *block = NULL;
    pthread_mutex_lock(&gpu_attached_lock);
    for (int i = 0; i < GPU_ATTACHED_MAX && !block; i++)
        if (gpu_attached[i].heap == addr) {
            block = gpu_attached[i].block;
            gpu_attached[i] = (struct gpu_attached){NULL, NULL};
        }
    pthread_mutex_unlock(&gpu_attached_lock);
    if (!block || gpu_device_lost(dev)) /* a device reset closed it */
        return;
    gpu_sync(dev, KIND_QUEUE_ALL); /* nothing of the library may still be writing into it */
    gpu_check(dev, dev->rt->ipc_close(block), "IPC handle close");
}

/* ---- Pinned host memory ----
 * The runtime copies pageable host memory through its own staging buffers, at a fraction of the
 * speed of memory registered with it. A large copy registers the library's host mapping it
 * touches (not the program's own buffers), a granule at a time, so a heap reserved large costs
 * pinned memory only where copies go; host_unmapping unregisters before the mapping goes. */
#define GPU_PIN_MIN ((size_t)64 << 10) /* below this a copy costs the same either way */
#define GPU_PIN_GRANULE ((uintptr_t)32 << 20)
#define GPU_PINNED_MAX 4096
static struct gpu_pinned {
    uintptr_t base;
    size_t len;
} gpu_pinned[GPU_PINNED_MAX];
static int gpu_pinned_count;
static pthread_mutex_t gpu_pin_lock = PTHREAD_MUTEX_INITIALIZER;

/* Registers [lo, hi) unless it is already (under gpu_pin_lock). A failure leaves it pageable:
 * copies still work (the program may have registered it itself). */
static void gpu_pin_range(struct gpu_device *dev, uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < gpu_pinned_count; i++)
        if (gpu_pinned[i].base == lo)
            return;
    int rc = gpu_pinned_count == GPU_PINNED_MAX ? -1 : dev->rt->host_register((void *)lo, hi - lo);
    LOG(LOG_MEM, "spaces", "registering host memory [%p, %p) with %s: %s (%d)", (void *)lo,
        (void *)hi, dev->rt->name, rc ? "failed, it stays pageable" : "done", rc);
    if (rc)
        return;
    gpu_pinned[gpu_pinned_count++] = (struct gpu_pinned){lo, hi - lo};
}

static void gpu_pin_host(struct gpu_device *dev, const void *ptr, size_t len)
{
    int pe;
    if (len < GPU_PIN_MIN)
        return;
    struct region *region = registry_lookup_mapped(ptr, gpu_n_pes, &pe);
    char *copy = region ? region_route(region, pe).load_store : NULL;
    if (!copy)
        return;
    uintptr_t first = (uintptr_t)copy, end = first + region->size;
    uintptr_t lo = (uintptr_t)ptr, hi = lo + len < end ? lo + len : end;
    pthread_mutex_lock(&gpu_pin_lock);
    for (uintptr_t g = lo & ~(GPU_PIN_GRANULE - 1); g < hi; g += GPU_PIN_GRANULE)
        gpu_pin_range(dev, g > first ? g : first,
                      g + GPU_PIN_GRANULE < end ? g + GPU_PIN_GRANULE : end);
    pthread_mutex_unlock(&gpu_pin_lock);
}

void gpu_host_unmapping(struct gpu_device *dev, void *base, size_t len)
{
    uintptr_t lo = (uintptr_t)base;
    GPU_ENTERED(dev);
    pthread_mutex_lock(&gpu_pin_lock);
    for (int i = 0; i < gpu_pinned_count;) {
        if (gpu_pinned[i].base - lo < len) {
            if (!gpu_device_lost(dev)) { /* a device reset unregistered it */
                gpu_sync_devices();      /* no copy may still read or write it */
                gpu_check(dev, dev->rt->host_unregister((void *)gpu_pinned[i].base),
                          "host unregister");
            }
            gpu_pinned[i] = gpu_pinned[--gpu_pinned_count];
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&gpu_pin_lock);
}

/* ---- Copies ---- */

/* A copy on queue's stream, after every write issued there before it (queued small ones
 * included), so a read sees them. */
static void gpu_copy_async(struct gpu_device *dev, void *dst, const void *src, size_t len,
                           int queue)
{
    gpu_batch_flush(dev, queue);
    gpu_check(dev, dev->rt->copy_async(dst, src, len, gpu_stream(dev, queue)), "copy");
}

/* A copy between host memory at host (its source or its destination) and the GPU, in pieces that
 * each stay within one registration of the host side, or within the pageable memory between two:
 * the runtime answers an invalid value for a copy that runs out of the registration it starts in.
 * gpu_pin_host registers a granule at a time (whatever the size of the copy that made it do so),
 * and the program may have registered memory of its own anywhere, the heaps included. Returns
 * whether a piece's host side is pinned (its DMA reads or writes it later). */
static int gpu_copy_host_async(struct gpu_device *dev, void *dst, const void *src, size_t len,
                               const void *host, int queue)
{
    uintptr_t at = (uintptr_t)host;
    int pinned = 0;
    for (size_t done = 0, piece; done < len; done += piece) {
        uintptr_t start;
        size_t range;
        piece = GPU_PIN_GRANULE - ((at + done) & (GPU_PIN_GRANULE - 1));
        if (dev->rt->host_range((void *)(at + done), &start, &range) == 0) {
            size_t left = range - (at + done - start);
            piece = left < piece ? left : piece;
            pinned = 1;
        }
        piece = piece < len - done ? piece : len - done;
        gpu_copy_async(dev, (char *)dst + done, (const char *)src + done, piece, queue);
    }
    return pinned;
}

/* On queue 0: a read sees the writes that landed before it (kind.h), whatever their queue. */
void gpu_copy_to_host(struct gpu_device *dev, void *dst, const void *src, size_t len)
{
    GPU_ENTERED(dev);
    gpu_pin_host(dev, dst, len);
    gpu_copy_host_async(dev, dst, src, len, dst, 0);
    gpu_check(dev, dev->rt->stream_sync(gpu_stream(dev, 0)), "stream synchronize");
}

/* A small write joins the batch (its bytes copied now); a large one is a copy of its own. */
void gpu_copy_from_host(struct gpu_device *dev, void *dst, const void *src, size_t len, int queue)
{
    GPU_ENTERED(dev);
    if (len <= GPU_BATCH_SMALL) {
        gpu_batch_write(dev, queue, dst, src, len);
        return;
    }
    gpu_pin_host(dev, src, len);
    /* A pinned source is read later by DMA: waited for, so it is reusable on return. */
    if (gpu_copy_host_async(dev, dst, src, len, src, queue))
        gpu_check(dev, dev->rt->stream_sync(gpu_stream(dev, queue)), "stream synchronize");
}

/* Device to device (this GPU's memory, a node peer's attached heap): the source is read in
 * stream order, before anything written on queue after the copy was issued. A small copy joins
 * the batch, which keeps that order: the batch is issued before any other work on the stream. */
void gpu_copy(struct gpu_device *dev, void *dst, const void *src, size_t len, int queue)
{
    GPU_ENTERED(dev);
    if (len <= GPU_BATCH_SMALL)
        gpu_batch_copy(dev, queue, dst, src, len);
    else
        gpu_copy_async(dev, dst, src, len, queue);
}

void gpu_fill(struct gpu_device *dev, void *dst, int byte, size_t len, int queue)
{
    GPU_ENTERED(dev);
    gpu_batch_flush(dev, queue);
    gpu_check(dev, dev->rt->fill_async(dst, byte, len, gpu_stream(dev, queue)), "memset");
}

/* Memory of any device of the runtime: a copy reaches the program's buffer on another device
 * through the unified address space. */
int gpu_owns(struct gpu_device *dev, const void *ptr)
{
    GPU_ENTERED(dev);
    return dev->rt->memory(ptr) == GPU_MEMORY_DEVICE;
}

/* ---- Kernels, where the runtime has them ---- */

uint64_t gpu_atomic(struct gpu_device *dev, void *word, enum transport_amo op, uint64_t value,
                    uint64_t compare, size_t size)
{
    return dev->rt->atomic(dev, word, op, value, compare, size);
}

/* A word on dev, or on a device with native atomics between them; where every device of the
 * node has them with dev, any word, without asking where it lies. */
int gpu_atomic_reaches(struct gpu_device *dev, const void *word)
{
    if (!(dev->limits & KIND_NODE_OWNER_ATOMICS))
        return 1;
    int device = dev->rt->device_of(dev, word);
    return device < 0 || (gpu_peer_of(dev, device) & GPU_PEER_ATOMICS);
}

void gpu_reduce(struct gpu_device *dev, void *acc, const void *in, size_t count,
                enum kind_reduction what)
{
    dev->rt->reduce(dev, acc, in, count, what);
}

void *gpu_scratch(struct gpu_device *dev, size_t bytes)
{
    return dev->rt->scratch(dev, bytes);
}

int gpu_device_of(struct gpu_device *dev, const void *ptr)
{
    return dev->rt->device_of(dev, ptr);
}
