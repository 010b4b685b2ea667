/* A test double of the CUDA driver: the subset of the driver API the CUDA kind uses, over host
 * memory, so that the kind's own code (IPC between PEs, copies, streams, pointer queries, atomics)
 * runs in every test run without a GPU. The library loads it instead of libcuda.so.1 when
 * SHMEM_TEST_CUDA_DRIVER names it.
 *
 * As strict as a real device where the kind could go wrong:
 * - Device addresses are reserved without access rights: a host load or store through one faults.
 *   The bytes live in a memory file (memfd) that an IPC handle names by process and descriptor,
 *   so another process of the user opens the same bytes through /proc; like device memory, it
 *   goes away with the process.
 * - Work on a stream runs only when the stream is synchronized (or, for a blocking stream, when a
 *   synchronous call runs on the legacy default stream). A copy from pageable host memory takes
 *   its source at issue, as the driver stages it; pinned and device sources are read when the copy
 *   runs, as DMA reads them.
 * - The atomic kernels strata_amo32/strata_amo64 run as host atomics on the shared bytes, so they
 *   are atomic between processes like the GPU's; the reduction kernels strata_reduce_<op>_<type>
 *   and the batch scatter strata_scatter run as host loops, reading their inputs when they run.
 *
 * STRATA_CUDA_DOUBLE_DEVICES sets how many devices it reports (default 1). */
#define _GNU_SOURCE /* memfd_create */
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define DOUBLE_MEMORY ((size_t)4 << 30)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- Device memory: allocations of this process and allocations opened by IPC ---- */
struct block {
    uintptr_t base; /* device addresses, without access */
    size_t size;
    char *storage; /* the bytes */
    int fd;        /* an allocation's memory file, -1 for an opened one */
    int allocated; /* by cuMemAlloc here (else opened) */
    struct block *next;
};
static struct block *blocks;

/* Host memory the driver would read by DMA: registered or allocated pinned. */
struct pinned {
    uintptr_t base;
    size_t size;
    int allocated;
    struct pinned *next;
};
static struct pinned *pinned;

static struct block *block_of(uintptr_t p)
{
    for (struct block *b = blocks; b; b = b->next)
        if (p - b->base < b->size)
            return b;
    return NULL;
}

static struct pinned *pinned_of(uintptr_t p)
{
    for (struct pinned *h = pinned; h; h = h->next)
        if (p - h->base < h->size)
            return h;
    return NULL;
}

/* Where the bytes at address p really are (host memory: p itself); NULL when len overruns. */
static char *bytes_at(uintptr_t p, size_t len)
{
    pthread_mutex_lock(&lock);
    struct block *b = block_of(p);
    char *at = b ? (p - b->base + len <= b->size ? b->storage + (p - b->base) : NULL) : (char *)p;
    pthread_mutex_unlock(&lock);
    return at;
}

/* size bytes of addresses without access, aligned as a real driver aligns large allocations. */
static uintptr_t reserve(size_t size)
{
    size_t align = (size_t)2 << 20;
    char *r =
        mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (r == MAP_FAILED)
        return 0;
    uintptr_t base = ((uintptr_t)r + align - 1) & ~(uintptr_t)(align - 1);
    if (base > (uintptr_t)r)
        munmap(r, base - (uintptr_t)r);
    munmap((char *)base + size, (uintptr_t)r + align - base);
    return base;
}

/* Maps size bytes of fd as a new block; the block keeps fd when it is an allocation (node peers
 * open it through /proc while it lives), else closes it. */
static CUresult block_add(int fd, size_t size, int allocated, CUdeviceptr *dptr)
{
    struct block *b = calloc(1, sizeof(*b));
    char *storage = b ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    uintptr_t base = storage != MAP_FAILED ? reserve(size) : 0;
    if (!base) {
        if (storage != MAP_FAILED)
            munmap(storage, size);
        free(b);
        close(fd);
        return allocated ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_HANDLE;
    }
    if (!allocated) {
        close(fd);
        fd = -1;
    }
    *b = (struct block){base, size, storage, fd, allocated, NULL};
    pthread_mutex_lock(&lock);
    b->next = blocks;
    blocks = b;
    pthread_mutex_unlock(&lock);
    *dptr = base;
    return CUDA_SUCCESS;
}

static CUresult block_remove(CUdeviceptr dptr, int allocated)
{
    pthread_mutex_lock(&lock);
    struct block **at = &blocks;
    while (*at && ((*at)->base != dptr || (*at)->allocated != allocated))
        at = &(*at)->next;
    struct block *b = *at;
    if (b)
        *at = b->next;
    pthread_mutex_unlock(&lock);
    if (!b)
        return CUDA_ERROR_INVALID_VALUE;
    munmap(b->storage, b->size);
    munmap((void *)b->base, b->size);
    if (b->fd >= 0)
        close(b->fd);
    free(b);
    return CUDA_SUCCESS;
}

/* ---- Streams ---- */
/* A kernel of the library (see Modules below). */
enum kernel_kind { KERNEL_AMO, KERNEL_REDUCE, KERNEL_SCATTER };
struct CUfunc_st {
    const char *name;
    enum kernel_kind kind;
    int bits;     /* the word or element size */
    char op;      /* reductions: '+', '<' (min), '>' (max) */
    int floating; /* reductions: float or double elements */
};
enum op_kind { OP_COPY, OP_SET, OP_KERNEL, OP_REDUCE, OP_SCATTER };
struct op {
    enum op_kind kind;
    uintptr_t dst, src;
    size_t len;
    int byte;
    int bits;     /* OP_KERNEL: 32 or 64 */
    unsigned amo; /* OP_KERNEL: the operation */
    uint64_t value, compare;
    const struct CUfunc_st *function; /* OP_REDUCE */
    struct op *next;
    char staged[]; /* OP_COPY from pageable memory: the source as it was at issue */
};
struct CUstream_st {
    unsigned flags;
    struct op *head, **tail;
    struct CUstream_st *next;
};
static struct CUstream_st *streams;
static pthread_mutex_t run_lock = PTHREAD_MUTEX_INITIALIZER; /* one stream runs at a time */

static uint64_t amo_apply(unsigned amo, uint64_t old, uint64_t value, uint64_t compare)
{
    switch (amo) {
    case 0:
        return old + value;
    case 1:
        return old & value;
    case 2:
        return old | value;
    case 3:
        return old ^ value;
    case 4:
        return value;
    default:
        return old == compare ? value : old;
    }
}

/* The kernel: a compare-swap loop on the shared bytes is atomic between processes. */
static void run_kernel(const struct op *op)
{
    uint64_t old;
    if (op->bits == 32) {
        _Atomic uint32_t *w = (_Atomic uint32_t *)bytes_at(op->dst, 4);
        uint32_t seen = atomic_load(w);
        while (!atomic_compare_exchange_weak(
            w, &seen, (uint32_t)amo_apply(op->amo, seen, op->value, op->compare)))
            ;
        old = seen;
        memcpy(bytes_at(op->src, 4), &seen, 4);
    } else {
        _Atomic uint64_t *w = (_Atomic uint64_t *)bytes_at(op->dst, 8);
        uint64_t seen = atomic_load(w);
        while (!atomic_compare_exchange_weak(w, &seen,
                                             amo_apply(op->amo, seen, op->value, op->compare)))
            ;
        old = seen;
        memcpy(bytes_at(op->src, 8), &old, 8);
    }
}

#define REDUCE_LOOP(T)                                                                             \
    do {                                                                                           \
        T *a = (T *)bytes_at(op->dst, op->len * sizeof(T));                                        \
        const T *b = (const T *)bytes_at(op->src, op->len * sizeof(T));                            \
        for (size_t i = 0; i < op->len; i++)                                                       \
            a[i] = f->op == '+'   ? a[i] + b[i]                                                    \
                   : f->op == '<' ? (b[i] < a[i] ? b[i] : a[i])                                    \
                                  : (b[i] > a[i] ? b[i] : a[i]);                                   \
    } while (0)

/* The reduction kernel, element by element as the GPU's threads would. */
static void run_reduce(const struct op *op)
{
    const struct CUfunc_st *f = op->function;
    if (f->floating && f->bits == 32)
        REDUCE_LOOP(float);
    else if (f->floating)
        REDUCE_LOOP(double);
    else if (f->bits == 32)
        REDUCE_LOOP(int32_t);
    else
        REDUCE_LOOP(int64_t);
}

/* The batch scatter: entries of (dst, offset, len) in host memory, read when it runs. The
 * kernel copies by 8-byte words when dst and len are multiples of 8, and the GPU faults on a
 * misaligned word: so does this. */
static void run_scatter(const struct op *op)
{
    const uint64_t *entry = (const uint64_t *)op->src;
    for (size_t i = 0; i < op->len; i++, entry += 3) {
        const char *from = (const char *)op->dst + entry[1];
        if (((entry[0] | entry[2]) & 7) == 0 && ((uintptr_t)from & 7)) {
            fprintf(stderr, "cuda double: strata_scatter reads a misaligned word at %p\n",
                    (const void *)from);
            abort();
        }
        memcpy(bytes_at(entry[0], entry[2]), from, entry[2]);
    }
}

static void run_op(const struct op *op)
{
    switch (op->kind) {
    case OP_COPY:
        memmove(bytes_at(op->dst, op->len),
                op->src ? bytes_at(op->src, op->len) : (const char *)op->staged, op->len);
        break;
    case OP_SET:
        memset(bytes_at(op->dst, op->len), op->byte, op->len);
        break;
    case OP_KERNEL:
        run_kernel(op);
        break;
    case OP_REDUCE:
        run_reduce(op);
        break;
    case OP_SCATTER:
        run_scatter(op);
        break;
    }
}

static void stream_run(struct CUstream_st *s)
{
    pthread_mutex_lock(&run_lock);
    pthread_mutex_lock(&lock);
    struct op *op = s->head;
    s->head = NULL;
    s->tail = &s->head;
    pthread_mutex_unlock(&lock);
    while (op) {
        struct op *next = op->next;
        run_op(op);
        free(op);
        op = next;
    }
    pthread_mutex_unlock(&run_lock);
}

/* What the legacy default stream waits for: every blocking stream's work. */
static void blocking_streams_run(void)
{
    for (struct CUstream_st *s = streams; s; s = s->next)
        if (!(s->flags & CU_STREAM_NON_BLOCKING))
            stream_run(s);
}

static CUresult enqueue(CUstream s, struct op *op)
{
    if (!s) { /* the legacy default stream: synchronous here */
        blocking_streams_run();
        run_op(op);
        free(op);
        return CUDA_SUCCESS;
    }
    pthread_mutex_lock(&lock);
    *s->tail = op;
    s->tail = &op->next;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

/* ---- The API ---- */
static __thread CUcontext current;
static int primary_context; /* its address is the one context */

EXPORT CUresult cuInit(unsigned int flags)
{
    return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
    const char *n = getenv("STRATA_CUDA_DOUBLE_DEVICES");
    *count = n ? atoi(n) : 1;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    int count;
    cuDeviceGetCount(&count);
    if (ordinal < 0 || ordinal >= count)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetPCIBusId(char *busid, int len, CUdevice device)
{
    snprintf(busid, (size_t)len, "0000:%02x:00.0", 0xc0 + (int)device);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice device)
{
    (void)device;
    *bytes = DOUBLE_MEMORY;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device)
{
    (void)device;
    *context = (CUcontext)&primary_context;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext context)
{
    current = context;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *context)
{
    *context = current;
    return CUDA_SUCCESS;
}

/* Every call below needs a current context, as the driver's do. */
#define NEED_CONTEXT()                                                                             \
    do {                                                                                           \
        if (!current)                                                                              \
            return CUDA_ERROR_INVALID_CONTEXT;                                                     \
    } while (0)

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t size)
{
    NEED_CONTEXT();
    if (!size)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = memfd_create("cuda-double", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size)) {
        if (fd >= 0)
            close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return block_add(fd, size, 1, dptr);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr)
{
    NEED_CONTEXT();
    return block_remove(dptr, 1);
}

EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *handle, CUdeviceptr dptr)
{
    NEED_CONTEXT();
    pthread_mutex_lock(&lock);
    struct block *b = block_of(dptr);
    int ok = b && b->base == dptr && b->allocated;
    if (ok) {
        memset(handle, 0, sizeof(*handle));
        snprintf(handle->reserved, sizeof(handle->reserved), "%d %d %zu", (int)getpid(), b->fd,
                 b->size);
    }
    pthread_mutex_unlock(&lock);
    return ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *dptr, CUipcMemHandle handle, unsigned int flags)
{
    int pid, fd;
    size_t size;
    char path[64];
    (void)flags;
    NEED_CONTEXT();
    handle.reserved[sizeof(handle.reserved) - 1] = '\0';
    if (sscanf(handle.reserved, "%d %d %zu", &pid, &fd, &size) != 3)
        return CUDA_ERROR_INVALID_HANDLE;
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
    int opened = open(path, O_RDWR | O_CLOEXEC);
    if (opened < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    return block_add(opened, size, 0, dptr);
}

EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    NEED_CONTEXT();
    return block_remove(dptr, 0);
}

EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute, CUdeviceptr ptr)
{
    if (attribute != CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
        return CUDA_ERROR_NOT_SUPPORTED;
    pthread_mutex_lock(&lock);
    unsigned type = block_of(ptr) ? CU_MEMORYTYPE_DEVICE : pinned_of(ptr) ? CU_MEMORYTYPE_HOST : 0;
    pthread_mutex_unlock(&lock);
    if (!type)
        return CUDA_ERROR_INVALID_VALUE; /* what the driver answers for pageable memory */
    *(unsigned *)data = type;
    return CUDA_SUCCESS;
}

static CUresult pinned_add(void *p, size_t size, int allocated)
{
    struct pinned *h = malloc(sizeof(*h));
    if (!h)
        return CUDA_ERROR_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    *h = (struct pinned){(uintptr_t)p, size, allocated, pinned};
    pinned = h;
    pthread_mutex_unlock(&lock);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
    (void)flags;
    NEED_CONTEXT();
    pthread_mutex_lock(&lock);
    int overlaps = pinned_of((uintptr_t)p) || pinned_of((uintptr_t)p + size - 1);
    pthread_mutex_unlock(&lock);
    if (overlaps)
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    return pinned_add(p, size, 0);
}

EXPORT CUresult cuMemHostUnregister(void *p)
{
    NEED_CONTEXT();
    pthread_mutex_lock(&lock);
    struct pinned **at = &pinned;
    while (*at && ((*at)->base != (uintptr_t)p || (*at)->allocated))
        at = &(*at)->next;
    struct pinned *h = *at;
    if (h)
        *at = h->next;
    pthread_mutex_unlock(&lock);
    free(h);
    return h ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}

/* Not the driver's: how many bytes are registered (cuMemHostRegister), for tests. */
EXPORT size_t cuda_double_registered_bytes(void)
{
    size_t bytes = 0;
    pthread_mutex_lock(&lock);
    for (struct pinned *h = pinned; h; h = h->next)
        bytes += h->allocated ? 0 : h->size;
    pthread_mutex_unlock(&lock);
    return bytes;
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t size, unsigned int flags)
{
    (void)flags;
    NEED_CONTEXT();
    *p = calloc(1, size);
    return *p ? pinned_add(*p, size, 1) : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuStreamCreate(CUstream *stream, unsigned int flags)
{
    NEED_CONTEXT();
    struct CUstream_st *s = calloc(1, sizeof(*s));
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->flags = flags;
    s->tail = &s->head;
    pthread_mutex_lock(&lock);
    s->next = streams;
    streams = s;
    pthread_mutex_unlock(&lock);
    *stream = s;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize(CUstream stream)
{
    NEED_CONTEXT();
    if (stream)
        stream_run(stream);
    else
        blocking_streams_run();
    return CUDA_SUCCESS;
}

/* A copy: a pageable source is taken now, anything else when the copy runs. */
static CUresult copy(CUdeviceptr dst, CUdeviceptr src, size_t len, CUstream stream)
{
    NEED_CONTEXT();
    if (!bytes_at(dst, len) || !bytes_at(src, len))
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&lock);
    int pageable = !block_of(src) && !pinned_of(src);
    pthread_mutex_unlock(&lock);
    struct op *op = malloc(sizeof(*op) + (pageable ? len : 0));
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *op = (struct op){.kind = OP_COPY, .dst = dst, .src = pageable ? 0 : src, .len = len};
    if (pageable)
        memcpy(op->staged, (const void *)src, len);
    return enqueue(stream, op);
}

EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t len)
{
    return copy(dst, src, len, NULL);
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t len, CUstream stream)
{
    return copy(dst, src, len, stream);
}

EXPORT CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char byte, size_t len, CUstream stream)
{
    NEED_CONTEXT();
    struct op *op = malloc(sizeof(*op));
    if (!op || !bytes_at(dst, len)) {
        free(op);
        return op ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
    }
    *op = (struct op){.kind = OP_SET, .dst = dst, .len = len, .byte = byte};
    return enqueue(stream, op);
}

/* ---- Modules: the library's kernels, by name ---- */
static struct CUfunc_st kernels[] = {{"strata_amo32", KERNEL_AMO, 32, 0, 0},
                                     {"strata_amo64", KERNEL_AMO, 64, 0, 0},
                                     {"strata_scatter", KERNEL_SCATTER, 0, 0, 0},
#define REDUCE_KERNELS(OP, NAME)                                                                   \
    {"strata_reduce_" NAME "_int", KERNEL_REDUCE, 32, OP, 0},                                      \
        {"strata_reduce_" NAME "_long", KERNEL_REDUCE, 64, OP, 0},                                 \
        {"strata_reduce_" NAME "_float", KERNEL_REDUCE, 32, OP, 1},                                \
        {"strata_reduce_" NAME "_double", KERNEL_REDUCE, 64, OP, 1},
                                     REDUCE_KERNELS('+', "sum") REDUCE_KERNELS('<', "min")
                                         REDUCE_KERNELS('>', "max")};
static int module;

EXPORT CUresult cuModuleLoadData(CUmodule *out, const void *image)
{
    NEED_CONTEXT();
    if (!strstr(image, ".version") || !strstr(image, ".entry strata_"))
        return CUDA_ERROR_INVALID_PTX;
    *out = (CUmodule)&module;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *out, CUmodule mod, const char *name)
{
    if (mod != (CUmodule)&module)
        return CUDA_ERROR_INVALID_HANDLE;
    for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
        if (!strcmp(kernels[i].name, name)) {
            *out = &kernels[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

/* Atomics: (word, op, value, compare, old), one thread. */
static CUresult launch_amo(CUfunction f, unsigned threads, CUstream stream, void **params)
{
    if (threads != 1)
        return CUDA_ERROR_INVALID_VALUE;
    struct op *op = malloc(sizeof(*op));
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *op = (struct op){.kind = OP_KERNEL, .bits = f->bits};
    memcpy(&op->dst, params[0], 8);
    memcpy(&op->amo, params[1], 4);
    memcpy(&op->value, params[2], (size_t)f->bits / 8);
    memcpy(&op->compare, params[3], (size_t)f->bits / 8);
    memcpy(&op->src, params[4], 8); /* where the old value goes */
    if (!bytes_at(op->dst, (size_t)f->bits / 8) || op->amo > 5) {
        free(op);
        return CUDA_ERROR_INVALID_VALUE;
    }
    return enqueue(stream, op);
}

/* Reductions: (acc, in, n), a thread per element. */
static CUresult launch_reduce(CUfunction f, unsigned threads, CUstream stream, void **params)
{
    struct op *op = malloc(sizeof(*op));
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *op = (struct op){.kind = OP_REDUCE, .bits = f->bits, .function = f};
    memcpy(&op->dst, params[0], 8);
    memcpy(&op->src, params[1], 8);
    memcpy(&op->len, params[2], 8);
    size_t bytes = op->len * (size_t)f->bits / 8;
    if (op->len > threads || !bytes_at(op->dst, bytes) || !bytes_at(op->src, bytes)) {
        free(op);
        return CUDA_ERROR_INVALID_VALUE;
    }
    return enqueue(stream, op);
}

/* The batch scatter: (entries, data, count), threads sharing the entries. */
static CUresult launch_scatter(CUstream stream, void **params)
{
    struct op *op = malloc(sizeof(*op));
    uint32_t count;
    if (!op)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *op = (struct op){.kind = OP_SCATTER};
    memcpy(&op->src, params[0], 8); /* the entries */
    memcpy(&op->dst, params[1], 8); /* their data */
    memcpy(&count, params[2], 4);
    op->len = count;
    pthread_mutex_lock(&lock);
    int mapped = pinned_of(op->src) && pinned_of(op->dst);
    pthread_mutex_unlock(&lock);
    if (!mapped) { /* the GPU reaches host memory only when it is pinned and mapped */
        free(op);
        return CUDA_ERROR_INVALID_VALUE;
    }
    return enqueue(stream, op);
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz,
                               unsigned int shared, CUstream stream, void **params, void **extra)
{
    NEED_CONTEXT();
    if (gy * gz * by * bz != 1 || shared || extra || !params || bx > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    switch (f->kind) {
    case KERNEL_AMO:
        return launch_amo(f, gx * bx, stream, params);
    case KERNEL_REDUCE:
        return launch_reduce(f, gx * bx, stream, params);
    default:
        return launch_scatter(stream, params);
    }
}
