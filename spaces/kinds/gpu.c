/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU kinds' shared part: heaps in the memory of the PE's GPU, through the calls of its
 * runtime (gpu.h), on the device the program's kernels use too.
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

const struct gpu_runtime *gpu_rt;
static void *gpu_streams[KIND_QUEUES];

void gpu_check(int rc, const char *what)
{
    if (rc != 0)
        log_fatal("spaces", "%s %s failed (error %d)%s", gpu_rt->name, what, rc,
                  gpu_device_lost() ? ": the program reset the device (or destroyed the context) "
                                      "under a live GPU space"
                                    : "");
}

int gpu_device_lost(void)
{
    static int lost;
    const struct gpu_runtime *rt = __atomic_load_n(&gpu_rt, __ATOMIC_ACQUIRE);
    if (rt && !__atomic_load_n(&lost, __ATOMIC_RELAXED) && rt->lost(gpu_streams[0]))
        __atomic_store_n(&lost, 1, __ATOMIC_RELAXED);
    return __atomic_load_n(&lost, __ATOMIC_RELAXED);
}

void gpu_leave_scope(const uintptr_t *previous)
{
    gpu_rt->leave(*previous);
}

static pthread_mutex_t gpu_setup_lock = PTHREAD_MUTEX_INITIALIZER;

/* Queue 0's stream is made at set-up, where a failure can still be reported; another queue's on
 * its first work, which a failure there ends like any other runtime call's. */
void *gpu_stream(int queue)
{
    void *stream = __atomic_load_n(&gpu_streams[queue], __ATOMIC_ACQUIRE);
    if (stream)
        return stream;
    pthread_mutex_lock(&gpu_setup_lock);
    if (!gpu_streams[queue]) {
        gpu_check(gpu_rt->stream_create(&stream), "stream create");
        __atomic_store_n(&gpu_streams[queue], stream, __ATOMIC_RELEASE);
    }
    stream = gpu_streams[queue];
    pthread_mutex_unlock(&gpu_setup_lock);
    return stream;
}

/* Lands every write issued on queue (queued small ones too), or on every stream made. */
void gpu_sync(int queue)
{
    GPU_ENTERED;
    if (queue != KIND_QUEUE_ALL) {
        gpu_batch_sync(queue);
        return;
    }
    for (int q = 0; q < KIND_QUEUES; q++)
        if (__atomic_load_n(&gpu_streams[q], __ATOMIC_ACQUIRE))
            gpu_batch_sync(q);
}

static int gpu_n_pes; /* the job's, to find node peers' host mappings */
int gpu_copy_engines_only;

/* The node's devices as this process sees them at set-up: the PE's own bus id, and what its
 * device may do with each other's memory. */
#define GPU_MAX_DEVICES 64
static char gpu_busid[32];
static unsigned gpu_peers[GPU_MAX_DEVICES];
static int gpu_devices;
static unsigned gpu_limits; /* enum kind_node_limit, from gpu_peers */

unsigned gpu_peer_of(int ordinal)
{
    return ordinal >= 0 && ordinal < gpu_devices ? gpu_peers[ordinal] : 0;
}

/* Learns the node's devices (under the set-up lock, with the runtime entered). */
static void gpu_learn_devices(const struct gpu_runtime *rt, int ordinal)
{
    int n = rt->device_count();
    gpu_devices = n < GPU_MAX_DEVICES ? n : GPU_MAX_DEVICES;
    for (int d = 0; d < gpu_devices; d++)
        gpu_peers[d] = d == ordinal ? GPU_PEER_ACCESS | GPU_PEER_ATOMICS : rt->peer(d);
    if (rt->device_busid(ordinal, gpu_busid, sizeof(gpu_busid)))
        gpu_busid[0] = 0;
    gpu_limits = 0;
    for (int d = 0; d < gpu_devices; d++) {
        if (!(gpu_peers[d] & GPU_PEER_ACCESS))
            gpu_limits |= KIND_NODE_UNREACHABLE;
        else if (!(gpu_peers[d] & GPU_PEER_ATOMICS) && rt->kind->atomic)
            gpu_limits |= KIND_NODE_OWNER_ATOMICS;
    }
}

unsigned gpu_node_limits(void)
{
    return gpu_limits;
}

int gpu_use(const struct gpu_runtime *rt, const struct kind_gpu_setup *setup, char *why,
            size_t whylen)
{
    int ordinal = setup->ordinal;
    pthread_mutex_lock(&gpu_setup_lock);
    int rc = 0;
    void *stream;
    if (gpu_rt && gpu_rt != rt) {
        snprintf(why, whylen, "the %s kind is in use: a process uses one GPU runtime",
                 gpu_rt->name);
        rc = -1;
    } else if (!gpu_rt) {
        rc = rt->open(setup->runtime_path, ordinal, why, whylen);
        if (!rc) {
            uintptr_t previous = rt->enter();
            if (rt->stream_create(&stream)) {
                snprintf(why, whylen, "%s device %d has no stream for the library", rt->name,
                         ordinal);
                rc = -1;
            }
            gpu_learn_devices(rt, ordinal);
            rt->leave(previous);
        }
        if (!rc) {
            gpu_streams[0] = stream;
            gpu_n_pes = setup->n_pes;
            gpu_copy_engines_only = setup->copy_engines_only;
            __atomic_store_n(&gpu_rt, rt, __ATOMIC_RELEASE);
            kind_private_use(rt->kind);
            kind_watch_host(rt->kind);
        }
    }
    pthread_mutex_unlock(&gpu_setup_lock);
    return rc;
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
int gpu_create(const char *prefix, size_t size, struct kind_mem *mem)
{
    (void)prefix;
    size_t align = mem->align, len = size ? size : 1;
    void *block;
    GPU_ENTERED;
    if (gpu_rt->alloc(&block, len, align, mem->wish))
        return -1;
    if ((uintptr_t)block % align) {
        gpu_check(gpu_rt->free(block), "free");
        if (gpu_rt->alloc(&block, len + align, align, NULL))
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
void gpu_destroy(struct kind_mem *mem)
{
    if (!gpu_device_lost()) {
        GPU_ENTERED;
        gpu_sync(KIND_QUEUE_ALL); /* nothing of the library may still be writing into it */
        gpu_check(gpu_rt->free(mem->storage), "free");
    }
    mem->base = mem->storage = NULL;
}

int gpu_export(const struct kind_mem *mem, void *handle, size_t *len)
{
    struct gpu_handle h = {.offset = (uint64_t)((char *)mem->base - (char *)mem->storage)};
    memcpy(h.busid, gpu_busid, sizeof(h.busid));
    GPU_ENTERED;
    if (*len < sizeof(h) || gpu_rt->ipc_get(h.ipc, mem->storage))
        return -1;
    memcpy(handle, &h, sizeof(h));
    *len = sizeof(h);
    return 0;
}

/* A node peer's heap on this PE's device, or on one its device has peer access to; the owner's
 * device is known here by its bus id, as processes may number devices differently. */
int gpu_reaches(const void *handle, size_t len)
{
    struct gpu_handle h;
    if (len != sizeof(h))
        return 0;
    memcpy(&h, handle, sizeof(h));
    h.busid[sizeof(h.busid) - 1] = 0;
    if (!strcmp(h.busid, gpu_busid))
        return 1;
    GPU_ENTERED;
    return (gpu_peer_of(gpu_rt->device_by_busid(h.busid)) & GPU_PEER_ACCESS) != 0;
}

/* Node peers' heaps attached here, to close the allocation an attached heap lies in. */
#define GPU_ATTACHED_MAX 256
static struct gpu_attached {
    char *heap;
    void *block;
} gpu_attached[GPU_ATTACHED_MAX];
static pthread_mutex_t gpu_attached_lock = PTHREAD_MUTEX_INITIALIZER;

void *gpu_attach(const void *handle, size_t len, size_t size)
{
    (void)size;
    struct gpu_handle h;
    void *block;
    if (len != sizeof(h))
        return NULL;
    memcpy(&h, handle, sizeof(h));
    GPU_ENTERED;
    if (gpu_rt->ipc_open(&block, h.ipc))
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
                  gpu_rt->name);
        gpu_rt->ipc_close(block);
        return NULL;
    }
    return heap;
}

void gpu_detach(void *addr, size_t size)
{
    (void)size;
    GPU_ENTERED;
    void *block = NULL;
    pthread_mutex_lock(&gpu_attached_lock);
    for (int i = 0; i < GPU_ATTACHED_MAX && !block; i++)
        if (gpu_attached[i].heap == addr) {
            block = gpu_attached[i].block;
            gpu_attached[i] = (struct gpu_attached){NULL, NULL};
        }
    pthread_mutex_unlock(&gpu_attached_lock);
    if (!block || gpu_device_lost()) /* a device reset closed it */
        return;
    gpu_sync(KIND_QUEUE_ALL); /* nothing of the library may still be writing into it */
    gpu_check(gpu_rt->ipc_close(block), "IPC handle close");
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
static void gpu_pin_range(uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < gpu_pinned_count; i++)
        if (gpu_pinned[i].base == lo)
            return;
    int rc = gpu_pinned_count == GPU_PINNED_MAX ? -1 : gpu_rt->host_register((void *)lo, hi - lo);
    LOG(LOG_MEM, "spaces", "registering host memory [%p, %p) with %s: %s (%d)", (void *)lo,
        (void *)hi, gpu_rt->name, rc ? "failed, it stays pageable" : "done", rc);
    if (rc)
        return;
    gpu_pinned[gpu_pinned_count++] = (struct gpu_pinned){lo, hi - lo};
}

static void gpu_pin_host(const void *ptr, size_t len)
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
        gpu_pin_range(g > first ? g : first, g + GPU_PIN_GRANULE < end ? g + GPU_PIN_GRANULE : end);
    pthread_mutex_unlock(&gpu_pin_lock);
}

void gpu_host_unmapping(void *base, size_t len)
{
    uintptr_t lo = (uintptr_t)base;
    GPU_ENTERED;
    pthread_mutex_lock(&gpu_pin_lock);
    for (int i = 0; i < gpu_pinned_count;) {
        if (gpu_pinned[i].base - lo < len) {
            if (!gpu_device_lost()) {     /* a device reset unregistered it */
                gpu_sync(KIND_QUEUE_ALL); /* no copy may still read or write it */
                gpu_check(gpu_rt->host_unregister((void *)gpu_pinned[i].base), "host unregister");
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
static void gpu_copy_async(void *dst, const void *src, size_t len, int queue)
{
    gpu_batch_flush(queue);
    gpu_check(gpu_rt->copy_async(dst, src, len, gpu_stream(queue)), "copy");
}

/* A copy between host memory at host (its source or its destination) and the GPU, in pieces that
 * each stay within one registration of the host side, or within the pageable memory between two:
 * the runtime answers an invalid value for a copy that runs out of the registration it starts in.
 * gpu_pin_host registers a granule at a time (whatever the size of the copy that made it do so),
 * and the program may have registered memory of its own anywhere, the heaps included. Returns
 * whether a piece's host side is pinned (its DMA reads or writes it later). */
static int gpu_copy_host_async(void *dst, const void *src, size_t len, const void *host, int queue)
{
    uintptr_t at = (uintptr_t)host;
    int pinned = 0;
    for (size_t done = 0, piece; done < len; done += piece) {
        uintptr_t start;
        size_t range;
        piece = GPU_PIN_GRANULE - ((at + done) & (GPU_PIN_GRANULE - 1));
        if (gpu_rt->host_range((void *)(at + done), &start, &range) == 0) {
            size_t left = range - (at + done - start);
            piece = left < piece ? left : piece;
            pinned = 1;
        }
        piece = piece < len - done ? piece : len - done;
        gpu_copy_async((char *)dst + done, (const char *)src + done, piece, queue);
    }
    return pinned;
}

/* On queue 0: a read sees the writes that landed before it (kind.h), whatever their queue. */
void gpu_copy_to_host(void *dst, const void *src, size_t len)
{
    GPU_ENTERED;
    gpu_pin_host(dst, len);
    gpu_copy_host_async(dst, src, len, dst, 0);
    gpu_check(gpu_rt->stream_sync(gpu_stream(0)), "stream synchronize");
}

/* A small write joins the batch (its bytes copied now); a large one is a copy of its own. */
void gpu_copy_from_host(void *dst, const void *src, size_t len, int queue)
{
    GPU_ENTERED;
    if (len <= GPU_BATCH_SMALL) {
        gpu_batch_write(queue, dst, src, len);
        return;
    }
    gpu_pin_host(src, len);
    if (gpu_copy_host_async(dst, src, len, src, queue)) /* read later by DMA: reusable on return */
        gpu_check(gpu_rt->stream_sync(gpu_stream(queue)), "stream synchronize");
}

/* Device to device (this GPU's memory, a node peer's attached heap): the source is read in
 * stream order, before anything written on queue after the copy was issued. A small copy joins
 * the batch, which keeps that order: the batch is issued before any other work on the stream. */
void gpu_copy(void *dst, const void *src, size_t len, int queue)
{
    GPU_ENTERED;
    if (len <= GPU_BATCH_SMALL)
        gpu_batch_copy(queue, dst, src, len);
    else
        gpu_copy_async(dst, src, len, queue);
}

void gpu_fill(void *dst, int byte, size_t len, int queue)
{
    GPU_ENTERED;
    gpu_batch_flush(queue);
    gpu_check(gpu_rt->fill_async(dst, byte, len, gpu_stream(queue)), "memset");
}

int gpu_owns(const void *ptr)
{
    GPU_ENTERED;
    return gpu_rt->memory(ptr) == GPU_MEMORY_DEVICE;
}
