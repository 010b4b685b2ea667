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
 * - Atomics run on the GPU (a PTX kernel per word size, loaded on first use), so they are atomic
 *   with respect to node peers' atomics through their IPC mappings and to the program's kernels.
 *
 * The handle node peers attach with is the IPC handle of the allocation and the heap's offset in
 * it: a heap is aligned inside a larger allocation when the driver's own alignment falls short of
 * kind_base_alignment. */
#include "../../common/log.h"
#include "../space.h"
#include "cuda_driver.h"
#include "kind.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static CUcontext cuda_context; /* the device's primary context */
static CUstream cuda_stream;   /* the library's copies and kernels */

static void cuda_check(CUresult rc, const char *what)
{
    if (rc != CUDA_SUCCESS)
        log_fatal("spaces", "CUDA %s failed (error %d)", what, (int)rc);
}

/* Makes the primary context current on the calling thread: the library runs on the program's
 * threads, each with its own current context. */
static void cuda_enter(void)
{
    CUcontext current = NULL;
    if (cuda.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != cuda_context)
        cuda_check(cuda.cuCtxSetCurrent(cuda_context), "cuCtxSetCurrent");
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
    cuda_enter();
    /* Nothing of the library may still be writing into it. */
    cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
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
    cuda_enter();
    cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
    if (block)
        cuda_check(cuda.cuIpcCloseMemHandle(block), "cuIpcCloseMemHandle");
}

/* An IPC handle names no file: nothing to withdraw. */
static void cuda_unexport(struct kind_mem *mem)
{
    (void)mem;
}

/* ---- Copies ---- */

static CUdeviceptr cuda_address(const void *ptr)
{
    return (CUdeviceptr)(uintptr_t)ptr;
}

static void cuda_sync(void)
{
    cuda_enter();
    cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
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
        cuda_pin_range(g > first ? g : first, g + CUDA_PIN_GRANULE < end ? g + CUDA_PIN_GRANULE : end);
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

/* Whether ptr is host memory the driver reads by DMA after a copy returns (pinned). */
static int cuda_pinned_host(const void *ptr)
{
    unsigned type = 0;
    return cuda.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, cuda_address(ptr)) ==
               CUDA_SUCCESS &&
           type == CU_MEMORYTYPE_HOST;
}

/* After the writes issued before it, so a read sees them. */
static void cuda_copy_to_host(void *dst, const void *src, size_t len)
{
    cuda_enter();
    cuda_pin_host(dst, len);
    cuda_check(cuda.cuMemcpyAsync(cuda_address(dst), cuda_address(src), len, cuda_stream),
               "cuMemcpyAsync");
    cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
}

static void cuda_copy_from_host(void *dst, const void *src, size_t len)
{
    cuda_enter();
    cuda_pin_host(src, len);
    cuda_check(cuda.cuMemcpyAsync(cuda_address(dst), cuda_address(src), len, cuda_stream),
               "cuMemcpyAsync");
    if (cuda_pinned_host(src)) /* read later by DMA: the caller may reuse it on return */
        cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
}

/* Device to device (this GPU's memory, a node peer's attached heap): the source is read in
 * stream order, before anything written after the copy was issued. */
static void cuda_copy(void *dst, const void *src, size_t len)
{
    cuda_enter();
    cuda_check(cuda.cuMemcpyAsync(cuda_address(dst), cuda_address(src), len, cuda_stream),
               "cuMemcpyAsync");
}

static void cuda_fill(void *dst, int byte, size_t len)
{
    cuda_enter();
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

/* ---- Atomics ---- */

/* strata_amo32/strata_amo64(word, op, value, compare, old): one thread applies op (enum
 * transport_amo) to the word and writes its previous value to old (mapped host memory). */
#define CUDA_AMO_KERNEL(BITS, TYPE)                                                                \
    ".visible .entry strata_amo" #BITS "(.param .u64 word, .param .u32 op, .param ." TYPE          \
    " value, .param ." TYPE " compare, .param .u64 old)\n"                                         \
    "{\n"                                                                                          \
    "  .reg .u64 %a, %o;\n"                                                                        \
    "  .reg .u32 %op;\n"                                                                           \
    "  .reg ." TYPE " %v, %c, %r;\n"                                                               \
    "  .reg .pred %p;\n"                                                                           \
    "  ld.param.u64 %a, [word];\n"                                                                 \
    "  ld.param.u32 %op, [op];\n"                                                                  \
    "  ld.param." TYPE " %v, [value];\n"                                                           \
    "  ld.param." TYPE " %c, [compare];\n"                                                         \
    "  ld.param.u64 %o, [old];\n"                                                                  \
    "  setp.eq.u32 %p, %op, 0;\n"                                                                  \
    "  @%p atom.sys.add.u" #BITS " %r, [%a], %v;\n"                                                \
    "  setp.eq.u32 %p, %op, 1;\n"                                                                  \
    "  @%p atom.sys.and.b" #BITS " %r, [%a], %v;\n"                                                \
    "  setp.eq.u32 %p, %op, 2;\n"                                                                  \
    "  @%p atom.sys.or.b" #BITS " %r, [%a], %v;\n"                                                 \
    "  setp.eq.u32 %p, %op, 3;\n"                                                                  \
    "  @%p atom.sys.xor.b" #BITS " %r, [%a], %v;\n"                                                \
    "  setp.eq.u32 %p, %op, 4;\n"                                                                  \
    "  @%p atom.sys.exch.b" #BITS " %r, [%a], %v;\n"                                               \
    "  setp.eq.u32 %p, %op, 5;\n"                                                                  \
    "  @%p atom.sys.cas.b" #BITS " %r, [%a], %c, %v;\n"                                            \
    "  st.volatile.u" #BITS " [%o], %r;\n"                                                         \
    "  ret;\n"                                                                                     \
    "}\n"

static const char cuda_amo_ptx[] =
    ".version 6.0\n"
    ".target sm_60\n"
    ".address_size 64\n" CUDA_AMO_KERNEL(32, "b32") CUDA_AMO_KERNEL(64, "b64");

_Static_assert(TRANSPORT_AMO_ADD == 0 && TRANSPORT_AMO_AND == 1 && TRANSPORT_AMO_OR == 2 &&
                   TRANSPORT_AMO_XOR == 3 && TRANSPORT_AMO_SWAP == 4 && TRANSPORT_AMO_CSWAP == 5,
               "the PTX kernels number the operations as enum transport_amo does");

/* One atomic at a time per process: they share the kernels' result word. */
static pthread_mutex_t cuda_amo_lock = PTHREAD_MUTEX_INITIALIZER;
static CUfunction cuda_amo_kernel[2]; /* 32 and 64 bits, loaded on first use (a JIT compile) */
static volatile uint64_t *cuda_amo_old;

static void cuda_amo_load(void)
{
    CUmodule module;
    void *old;
    cuda_check(cuda.cuModuleLoadData(&module, cuda_amo_ptx), "cuModuleLoadData (atomics)");
    cuda_check(cuda.cuModuleGetFunction(&cuda_amo_kernel[0], module, "strata_amo32"),
               "cuModuleGetFunction");
    cuda_check(cuda.cuModuleGetFunction(&cuda_amo_kernel[1], module, "strata_amo64"),
               "cuModuleGetFunction");
    cuda_check(cuda.cuMemHostAlloc(&old, sizeof(uint64_t), CU_MEMHOSTALLOC_DEVICEMAP),
               "cuMemHostAlloc");
    cuda_amo_old = old;
}

static uint64_t cuda_atomic(void *word, enum transport_amo op, uint64_t value, uint64_t compare,
                            size_t size)
{
    pthread_mutex_lock(&cuda_amo_lock);
    cuda_enter();
    if (!cuda_amo_old)
        cuda_amo_load();
    CUdeviceptr address = cuda_address(word), old = cuda_address((const void *)cuda_amo_old);
    unsigned code = (unsigned)op;
    uint32_t value32 = (uint32_t)value, compare32 = (uint32_t)compare;
    void *args[] = {&address, &code, size == 4 ? (void *)&value32 : (void *)&value,
                    size == 4 ? (void *)&compare32 : (void *)&compare, &old};
    *cuda_amo_old = 0;
    cuda_check(cuda.cuLaunchKernel(cuda_amo_kernel[size == 8], 1, 1, 1, 1, 1, 1, 0, cuda_stream,
                                   args, NULL),
               "cuLaunchKernel (atomic)");
    cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
    uint64_t result = size == 4 ? (uint32_t)*cuda_amo_old : *cuda_amo_old;
    pthread_mutex_unlock(&cuda_amo_lock);
    return result;
}

/* ---- Reductions ---- */

/* strata_reduce_<op>_<type>(acc, in, n): thread i < n sets acc[i] = op(acc[i], in[i]). */
#define CUDA_REDUCE_KERNEL(NAME, INSTRUCTION, TYPE, SHIFT)                                         \
    ".visible .entry strata_reduce_" NAME "(.param .u64 acc, .param .u64 in, .param .u64 n)\n"     \
    "{\n"                                                                                          \
    "  .reg .u64 %a, %b, %n, %i, %t;\n"                                                            \
    "  .reg .u32 %x, %y, %z;\n"                                                                    \
    "  .reg ." TYPE " %v, %w;\n"                                                                   \
    "  .reg .pred %p;\n"                                                                           \
    "  ld.param.u64 %a, [acc];\n"                                                                  \
    "  ld.param.u64 %b, [in];\n"                                                                   \
    "  ld.param.u64 %n, [n];\n"                                                                    \
    "  mov.u32 %x, %ctaid.x;\n"                                                                    \
    "  mov.u32 %y, %ntid.x;\n"                                                                     \
    "  mov.u32 %z, %tid.x;\n"                                                                      \
    "  cvt.u64.u32 %t, %z;\n"                                                                      \
    "  mad.wide.u32 %i, %x, %y, %t;\n"                                                             \
    "  setp.ge.u64 %p, %i, %n;\n"                                                                  \
    "  @%p ret;\n"                                                                                 \
    "  shl.b64 %i, %i, " #SHIFT ";\n"                                                              \
    "  add.u64 %a, %a, %i;\n"                                                                      \
    "  add.u64 %b, %b, %i;\n"                                                                      \
    "  ld." TYPE " %v, [%a];\n"                                                                    \
    "  ld." TYPE " %w, [%b];\n"                                                                    \
    "  " INSTRUCTION "." TYPE " %v, %v, %w;\n"                                                     \
    "  st." TYPE " [%a], %v;\n"                                                                    \
    "  ret;\n"                                                                                     \
    "}\n"

/* PTX of each reduction of kind.h: kernel name, instruction, PTX type, log2 of the size. */
#define CUDA_REDUCE_PTX_sum "add"
#define CUDA_REDUCE_PTX_min "min"
#define CUDA_REDUCE_PTX_max "max"
#define CUDA_REDUCE_TYPE_int "s32", 2
#define CUDA_REDUCE_TYPE_long "s64", 3
#define CUDA_REDUCE_TYPE_float "f32", 2
#define CUDA_REDUCE_TYPE_double "f64", 3
#define CUDA_REDUCE_EXPAND(...) CUDA_REDUCE_KERNEL(__VA_ARGS__)
#define CUDA_REDUCE_SOURCE(NAME, OP, TYPE)                                                         \
    CUDA_REDUCE_EXPAND(#OP "_" #TYPE, CUDA_REDUCE_PTX_##OP, CUDA_REDUCE_TYPE_##TYPE)
#define CUDA_REDUCE_NAME(NAME, OP, TYPE) [KIND_REDUCE_##NAME] = "strata_reduce_" #OP "_" #TYPE,

static const char cuda_reduce_ptx[] = ".version 6.0\n"
                                      ".target sm_60\n"
                                      ".address_size 64\n" KIND_REDUCTIONS(CUDA_REDUCE_SOURCE);
static const char *const cuda_reduce_names[KIND_REDUCTIONS_COUNT] = {
    KIND_REDUCTIONS(CUDA_REDUCE_NAME)};
static pthread_once_t cuda_reduce_once = PTHREAD_ONCE_INIT;
static CUfunction cuda_reduce_kernel[KIND_REDUCTIONS_COUNT];

static void cuda_reduce_load(void)
{
    CUmodule module;
    cuda_check(cuda.cuModuleLoadData(&module, cuda_reduce_ptx), "cuModuleLoadData (reductions)");
    for (int r = KIND_REDUCE_NONE + 1; r < KIND_REDUCTIONS_COUNT; r++)
        cuda_check(cuda.cuModuleGetFunction(&cuda_reduce_kernel[r], module, cuda_reduce_names[r]),
                   "cuModuleGetFunction");
}

#define CUDA_REDUCE_BLOCK 256

static void cuda_reduce(void *acc, const void *in, size_t count, enum kind_reduction what)
{
    cuda_enter();
    pthread_once(&cuda_reduce_once, cuda_reduce_load);
    CUdeviceptr a = cuda_address(acc), b = cuda_address(in);
    uint64_t n = count;
    void *args[] = {&a, &b, &n};
    if (count)
        cuda_check(
            cuda.cuLaunchKernel(cuda_reduce_kernel[what],
                                (unsigned)((count + CUDA_REDUCE_BLOCK - 1) / CUDA_REDUCE_BLOCK), 1,
                                1, CUDA_REDUCE_BLOCK, 1, 1, 0, cuda_stream, args, NULL),
            "cuLaunchKernel (reduction)");
}

/* A buffer per thread, grown as needed and kept: collectives call this on every reduction. */
static void *cuda_scratch(size_t bytes)
{
    static __thread CUdeviceptr buffer;
    static __thread size_t size;
    if (bytes > size) {
        cuda_enter();
        cuda_check(cuda.cuStreamSynchronize(cuda_stream), "cuStreamSynchronize");
        if (buffer)
            cuda_check(cuda.cuMemFree(buffer), "cuMemFree");
        buffer = 0;
        size = 0;
        cuda_check(cuda.cuMemAlloc(&buffer, bytes), "cuMemAlloc (reduction scratch)");
        size = bytes;
    }
    return (void *)(uintptr_t)buffer;
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
