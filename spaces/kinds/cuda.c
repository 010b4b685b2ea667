/* The CUDA kind: heaps in the memory of the PE's GPU, on the device's primary context (so the
 * program's kernels and the library share it), through the driver API (cuda_driver.h).
 *
 * - Node peers attach each other's heaps with CUDA IPC handles; copies between any two memories
 *   the GPU reaches (its heap, a peer's attached heap, host memory, the program's own device
 *   buffers) are driver copies on the library's stream, which the program's default stream never
 *   waits for.
 * - Host mappings of the library (heaps, static data, node peers' heaps) are registered with the
 *   driver where a large copy touches them, so such copies run at pinned speed.
 * - Writes are asynchronous (KIND_CAP_ASYNC_COPY): sync waits for the stream. A host source is
 *   reusable when a write returns: the driver stages pageable memory before returning, and a
 *   pinned source (which it reads later) is waited for.
 * - Small writes from host memory are queued and applied together (cuda_batch.c); atomics and
 *   reductions are PTX kernels (cuda_kernels.c).
 *
 * The handle node peers attach with is the IPC handle of the allocation and the heap's offset in
 * it: a heap is aligned inside a larger allocation when the driver's own alignment falls short of
 * kind_base_alignment. */
#include "../../common/log.h"
#include "../space.h"
#include "cuda_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static CUcontext cuda_context; /* the device's primary context */
CUstream cuda_stream;

void cuda_check(CUresult rc, const char *what)
{
    if (rc != CUDA_SUCCESS)
        log_fatal("spaces", "CUDA %s failed (error %d)", what, (int)rc);
}

/* Makes the primary context current on the calling thread: the library runs on the program's
 * threads, each with its own current context. */
void cuda_enter(void)
{
    CUcontext current = NULL;
    if (cuda.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != cuda_context)
        cuda_check(cuda.cuCtxSetCurrent(cuda_context), "cuCtxSetCurrent");
}

/* Lands every write issued: queued small ones too. */
static void cuda_sync(void)
{
    cuda_enter();
    cuda_batch_sync();
}

static pthread_mutex_t cuda_setup_lock = PTHREAD_MUTEX_INITIALIZER;

static int cuda_n_pes; /* the job's, to find node peers' host mappings */

int kind_cuda_use(const char *driver_path, int ordinal, int n_pes, char *why, size_t whylen)
{
    pthread_mutex_lock(&cuda_setup_lock);
    int rc = 0;
    if (!cuda_context) {
        CUdevice device;
        CUcontext context;
        CUstream stream;
        rc = cuda_driver_load(driver_path, why, whylen);
        if (!rc && (cuda.cuDeviceGet(&device, ordinal) != CUDA_SUCCESS ||
                    cuda.cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS ||
                    cuda.cuCtxSetCurrent(context) != CUDA_SUCCESS ||
                    cuda.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)) {
            snprintf(why, whylen, "CUDA device %d cannot be set up", ordinal);
            rc = -1;
        }
        if (!rc) {
            cuda_stream = stream;
            cuda_n_pes = n_pes;
            __atomic_store_n(&cuda_context, context, __ATOMIC_RELEASE);
            kind_private_use(&kind_cuda);
            kind_watch_host(&kind_cuda);
        }
    }
    pthread_mutex_unlock(&cuda_setup_lock);
    return rc;
}

/* ---- Heaps ---- */

struct cuda_handle {
    CUipcMemHandle ipc;
    uint64_t offset; /* of the heap in the allocation */
};
_Static_assert(sizeof(struct cuda_handle) <= KIND_HANDLE_MAX, "a CUDA handle fits in a record");

/* A heap aligned to kind_base_alignment: the driver's allocation when it already is, else one
 * large enough to hold an aligned heap. */
static int cuda_create(const char *prefix, size_t size, struct kind_mem *mem)
{
    (void)prefix;
    size_t align = kind_base_alignment(size), len = size ? size : 1;
    CUdeviceptr block;
    cuda_enter();
    if (cuda.cuMemAlloc(&block, len) != CUDA_SUCCESS)
        return -1;
    if (block % align) {
        cuda_check(cuda.cuMemFree(block), "cuMemFree");
        if (cuda.cuMemAlloc(&block, len + align) != CUDA_SUCCESS)
            return -1;
    }
    CUdeviceptr base = (block + align - 1) & ~(CUdeviceptr)(align - 1);
    mem->base = (void *)(uintptr_t)base;
    mem->storage = (void *)(uintptr_t)block;
    mem->size = size;
    mem->fd = -1;
    return 0;
}

static void cuda_destroy(struct kind_mem *mem)
{
    cuda_sync(); /* nothing of the library may still be writing into it */
    cuda_check(cuda.cuMemFree((CUdeviceptr)(uintptr_t)mem->storage), "cuMemFree");
    mem->base = mem->storage = NULL;
}

static int cuda_export(const struct kind_mem *mem, void *handle, size_t *len)
{
    struct cuda_handle h = {.offset = (uint64_t)((char *)mem->base - (char *)mem->storage)};
    cuda_enter();
    if (*len < sizeof(h) ||
        cuda.cuIpcGetMemHandle(&h.ipc, (CUdeviceptr)(uintptr_t)mem->storage) != CUDA_SUCCESS)
        return -1;
    memcpy(handle, &h, sizeof(h));
    *len = sizeof(h);
    return 0;
}

/* Node peers' heaps attached here, to close the allocation an attached heap lies in. */
#define CUDA_ATTACHED_MAX 256
static struct cuda_attached {
    char *heap;
    CUdeviceptr block;
} cuda_attached[CUDA_ATTACHED_MAX];
static pthread_mutex_t cuda_attached_lock = PTHREAD_MUTEX_INITIALIZER;

static void *cuda_attach(const char *prefix, const void *handle, size_t len, size_t size)
{
    (void)prefix;
    (void)size;
    struct cuda_handle h;
    CUdeviceptr block;
    if (len != sizeof(h))
        return NULL;
    memcpy(&h, handle, sizeof(h));
    cuda_enter();
    if (cuda.cuIpcOpenMemHandle(&block, h.ipc, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) != CUDA_SUCCESS)
        return NULL;
    char *heap = (char *)(uintptr_t)block + h.offset;
    pthread_mutex_lock(&cuda_attached_lock);
    int slot = 0;
    while (slot < CUDA_ATTACHED_MAX && cuda_attached[slot].heap)
        slot++;
    if (slot < CUDA_ATTACHED_MAX)
        cuda_attached[slot] = (struct cuda_attached){heap, block};
    pthread_mutex_unlock(&cuda_attached_lock);
    if (slot == CUDA_ATTACHED_MAX) {
        log_error("spaces", "more than %d node peers' CUDA heaps attached", CUDA_ATTACHED_MAX);
        cuda.cuIpcCloseMemHandle(block);
        return NULL;
    }
    return heap;
}

static void cuda_detach(void *addr, size_t size)
{
    (void)size;
    CUdeviceptr block = 0;
    pthread_mutex_lock(&cuda_attached_lock);
    for (int i = 0; i < CUDA_ATTACHED_MAX && !block; i++)
        if (cuda_attached[i].heap == addr) {
            block = cuda_attached[i].block;
            cuda_attached[i] = (struct cuda_attached){NULL, 0};
        }
    pthread_mutex_unlock(&cuda_attached_lock);
    cuda_sync(); /* nothing of the library may still be writing into it */
    if (block)
        cuda_check(cuda.cuIpcCloseMemHandle(block), "cuIpcCloseMemHandle");
}

/* An IPC handle names no file: nothing to withdraw. */
static void cuda_unexport(struct kind_mem *mem)
{
    (void)mem;
}

/* ---- Pinned host memory ----
 * The driver copies pageable host memory through its own staging buffers, at a fraction of the
 * speed of memory registered with it. A large copy registers the library's host mapping it
 * touches (not the program's own buffers), a granule at a time, so a heap reserved large costs
 * pinned memory only where copies go; host_unmapping unregisters before the mapping goes. */
#define CUDA_PIN_MIN ((size_t)64 << 10) /* below this a copy costs the same either way */
#define CUDA_PIN_GRANULE ((uintptr_t)32 << 20)
#define CUDA_PINNED_MAX 4096
static struct cuda_pinned {
    uintptr_t base;
    size_t len;
} cuda_pinned[CUDA_PINNED_MAX];
static int cuda_pinned_count;
static pthread_mutex_t cuda_pin_lock = PTHREAD_MUTEX_INITIALIZER;

/* Registers [lo, hi) unless it is already (under cuda_pin_lock). A failure leaves it pageable:
 * copies still work (the program may have registered it itself). */
static void cuda_pin_range(uintptr_t lo, uintptr_t hi)
{
    for (int i = 0; i < cuda_pinned_count; i++)
        if (cuda_pinned[i].base == lo)
            return;
    if (cuda_pinned_count == CUDA_PINNED_MAX ||
        cuda.cuMemHostRegister((void *)lo, hi - lo, CU_MEMHOSTREGISTER_PORTABLE) != CUDA_SUCCESS)
        return;
    cuda_pinned[cuda_pinned_count++] = (struct cuda_pinned){lo, hi - lo};
}

static void cuda_pin_host(const void *ptr, size_t len)
{
    int pe;
    if (len < CUDA_PIN_MIN)
        return;
    struct region *region = registry_lookup_mapped(ptr, cuda_n_pes, &pe);
    if (!region || !kind_can(region->kind, KIND_CAP_LOAD_STORE) || !region->routes[pe].load_store)
        return;
    uintptr_t first = (uintptr_t)region->routes[pe].load_store, end = first + region->size;
    uintptr_t lo = (uintptr_t)ptr, hi = lo + len < end ? lo + len : end;
    pthread_mutex_lock(&cuda_pin_lock);
    for (uintptr_t g = lo & ~(CUDA_PIN_GRANULE - 1); g < hi; g += CUDA_PIN_GRANULE)
        cuda_pin_range(g > first ? g : first,
                       g + CUDA_PIN_GRANULE < end ? g + CUDA_PIN_GRANULE : end);
    pthread_mutex_unlock(&cuda_pin_lock);
}

static void cuda_host_unmapping(void *base, size_t len)
{
    uintptr_t lo = (uintptr_t)base;
    pthread_mutex_lock(&cuda_pin_lock);
    for (int i = 0; i < cuda_pinned_count;) {
        if (cuda_pinned[i].base - lo < len) {
            cuda_sync(); /* no copy may still read or write it */
            cuda_check(cuda.cuMemHostUnregister((void *)cuda_pinned[i].base),
                       "cuMemHostUnregister");
            cuda_pinned[i] = cuda_pinned[--cuda_pinned_count];
        } else {
            i++;
        }
    }
    pthread_mutex_unlock(&cuda_pin_lock);
}

/* ---- Copies ---- */

/* Whether ptr is host memory the driver reads by DMA after a copy returns (pinned). */
static int cuda_pinned_host(const void *ptr)
{
    unsigned type = 0;
    return cuda.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, cuda_address(ptr)) ==
               CUDA_SUCCESS &&
           type == CU_MEMORYTYPE_HOST;
}

/* After the writes issued before it, so a read sees them. */
/* A copy on the stream, after every write issued before it (queued small ones included). */
static void cuda_copy_async(void *dst, const void *src, size_t len)
{
    cuda_batch_flush();
    cuda_check(cuda.cuMemcpyAsync(cuda_address(dst), cuda_address(src), len, cuda_stream),
               "cuMemcpyAsync");
}

static void cuda_copy_to_host(void *dst, const void *src, size_t len)
{
    cuda_enter();
    cuda_pin_host(dst, len);
    cuda_copy_async(dst, src, len);
    cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
}

/* A small write joins the batch (its bytes copied now); a large one is a copy of its own. */
static void cuda_copy_from_host(void *dst, const void *src, size_t len)
{
    cuda_enter();
    if (len <= CUDA_BATCH_SMALL) {
        cuda_batch_write(dst, src, len);
        return;
    }
    cuda_pin_host(src, len);
    cuda_copy_async(dst, src, len);
    if (cuda_pinned_host(src)) /* read later by DMA: the caller may reuse it on return */
        cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
}

/* Device to device (this GPU's memory, a node peer's attached heap): the source is read in
 * stream order, before anything written after the copy was issued. */
static void cuda_copy(void *dst, const void *src, size_t len)
{
    cuda_enter();
    cuda_copy_async(dst, src, len);
}

static void cuda_fill(void *dst, int byte, size_t len)
{
    cuda_enter();
    cuda_batch_flush();
    cuda_check(cuda.cuMemsetD8Async(cuda_address(dst), (unsigned char)byte, len, cuda_stream),
               "cuMemsetD8Async");
}

static int cuda_owns(const void *ptr)
{
    unsigned type = 0;
    cuda_enter();
    return cuda.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, cuda_address(ptr)) ==
               CUDA_SUCCESS &&
           type == CU_MEMORYTYPE_DEVICE;
}

const struct kind_ops kind_cuda = {
    .name = "cuda",
    .caps = KIND_CAP_PEER_ATTACH | KIND_CAP_TRANSPORT | KIND_CAP_ASYNC_COPY,
    .mem_type = TRANSPORT_MEM_CUDA,
    .create = cuda_create,
    .destroy = cuda_destroy,
    .export = cuda_export,
    .attach = cuda_attach,
    .detach = cuda_detach,
    .unexport = cuda_unexport,
    .copy_to_host = cuda_copy_to_host,
    .copy_from_host = cuda_copy_from_host,
    .copy = cuda_copy,
    .fill = cuda_fill,
    .owns = cuda_owns,
    .sync = cuda_sync,
    .atomic = cuda_atomic,
    .reduce = cuda_reduce,
    .scratch = cuda_scratch,
    .host_unmapping = cuda_host_unmapping,
};
