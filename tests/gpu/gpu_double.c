/* SPDX-License-Identifier: BSD-3-Clause */
/* The core of the GPU runtimes' test doubles (gpu_double.h). */
#define _GNU_SOURCE /* memfd_create */
#include "gpu_double.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- Device memory: allocations of this process, allocations opened by IPC, and physical
 * allocations mapped into a reserved range (virtual memory management) ---- */
enum block_origin { BLOCK_ALLOCATED, BLOCK_OPENED, BLOCK_MAPPED };
struct block {
    uintptr_t base; /* device addresses, without access */
    size_t size;
    char *storage; /* the bytes */
    int fd;        /* an allocation's memory file, -1 for an opened one */
    enum block_origin origin;
    int device;             /* the device whose memory it is */
    _Atomic int *importers; /* allocated and opened: how many processes have it open */
    int owner;              /* opened: the process that allocated it */
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

/* Device memory held: allocations, and physical allocations by their memory files. */
#define DOUBLE_CREATED_MAX 256
static size_t held;
static struct created {
    int fd;
    size_t size;
} created[DOUBLE_CREATED_MAX];

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

/* ---- Several devices ----
 * Device d reaches device e's memory (copies and kernels) only with peer access, and its kernels'
 * atomics are atomic there only with native peer atomics: STRATA_GPU_DOUBLE_PEERS=0 and
 * STRATA_GPU_DOUBLE_PEER_ATOMICS=0 take them away between every two devices. Work that touches a
 * device it may not reach faults: the process ends, naming the devices. */
static int knob_off(const char *name)
{
    const char *value = getenv(name);
    return value && !strcmp(value, "0");
}

int double_peer_access(int from, int to)
{
    return from == to || !knob_off("STRATA_GPU_DOUBLE_PEERS");
}

int double_peer_atomics(int from, int to)
{
    return from == to ||
           (double_peer_access(from, to) && !knob_off("STRATA_GPU_DOUBLE_PEER_ATOMICS"));
}

static __thread int current_device;      /* the calling thread's, as its runtime layer says */
static __thread int running_device = -1; /* the device whose work runs on this thread now */
static __thread int running_atomic;      /* and whether it is an atomic on a word */

void double_use_device(int device)
{
    current_device = device;
}

static void reach_or_fault(const struct block *b)
{
    if (running_device < 0 || b->device == running_device ||
        (running_atomic ? double_peer_atomics : double_peer_access)(running_device, b->device))
        return;
    fprintf(stderr, "gpu double: device %d %s device %d's memory at %p without %s: a fault\n",
            running_device, running_atomic ? "did an atomic on" : "touched", b->device,
            (void *)b->base, running_atomic ? "native peer atomics" : "peer access");
    abort();
}

/* Where the bytes at address p really are (host memory: p itself); NULL when len overruns its
 * allocation, or the registration its first byte is in, as a real driver answers an invalid
 * value for a copy that runs out of the pinned range it starts in. */
static char *bytes_at(uintptr_t p, size_t len)
{
    pthread_mutex_lock(&lock);
    struct block *b = block_of(p);
    if (b)
        reach_or_fault(b);
    struct pinned *h = b ? NULL : pinned_of(p);
    char *at = b   ? (p - b->base + len <= b->size ? b->storage + (p - b->base) : NULL)
               : h ? (p - h->base + len <= h->size ? (char *)p : NULL)
                   : (char *)p;
    pthread_mutex_unlock(&lock);
    return at;
}

/* size bytes of addresses without access, aligned to align or to 2 MiB, as a real driver aligns
 * large allocations. */
static uintptr_t reserve(size_t size, size_t align)
{
    align = align > ((size_t)2 << 20) ? align : (size_t)2 << 20;
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

/* An allocation's memory file holds, in the page after its bytes, how many other processes have
 * it open, so that the owner's free can tell that it came before a node peer let go: the peer's
 * mapping would then be of freed memory. */
#define DOUBLE_PAGE ((size_t)4096)

static size_t importers_offset(size_t size)
{
    return (size + DOUBLE_PAGE - 1) / DOUBLE_PAGE * DOUBLE_PAGE;
}

static _Atomic int *importers_map(int fd, size_t size)
{
    void *p = mmap(NULL, DOUBLE_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                   (off_t)importers_offset(size));
    return p == MAP_FAILED ? NULL : p;
}

/* Maps size bytes of fd, memory of device, as a new block at base (0: at addresses reserved for
 * it); the block keeps fd when it is an allocation (node peers open it through /proc while it
 * lives), else closes it. */
static enum double_status block_add(int fd, size_t size, enum block_origin origin, int device,
                                    uintptr_t base, uintptr_t *dptr)
{
    struct block *b = calloc(1, sizeof(*b));
    char *storage = b ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    if (storage != MAP_FAILED && !base)
        base = reserve(size, 0);
    if (!base) {
        if (storage != MAP_FAILED)
            munmap(storage, size);
        free(b);
        close(fd);
        return origin == BLOCK_ALLOCATED ? DOUBLE_OUT_OF_MEMORY : DOUBLE_INVALID_HANDLE;
    }
    _Atomic int *importers = origin == BLOCK_MAPPED ? NULL : importers_map(fd, size);
    if (origin == BLOCK_OPENED && importers)
        atomic_fetch_add(importers, 1);
    if (origin != BLOCK_ALLOCATED) {
        close(fd);
        fd = -1;
    }
    *b = (struct block){base, size, storage, fd, origin, device, importers, 0, NULL};
    pthread_mutex_lock(&lock);
    b->next = blocks;
    blocks = b;
    pthread_mutex_unlock(&lock);
    *dptr = base;
    return DOUBLE_OK;
}

/* Removes the block at dptr made so; a mapped block's addresses stay reserved. */
static enum double_status block_remove(uintptr_t dptr, enum block_origin origin)
{
    pthread_mutex_lock(&lock);
    struct block **at = &blocks;
    while (*at && ((*at)->base != dptr || (*at)->origin != origin))
        at = &(*at)->next;
    struct block *b = *at;
    if (b)
        *at = b->next;
    pthread_mutex_unlock(&lock);
    if (!b)
        return DOUBLE_INVALID_VALUE;
    if (b->importers) {
        if (origin == BLOCK_OPENED) {
            /* Of two processes that each close the other's memory and then free their own, the
             * one with the lower id is fast and the other slow: an owner that frees without
             * waiting for its importers is seen, whichever started first. */
            if (b->owner < getpid())
                usleep(20000);
            atomic_fetch_sub(b->importers, 1);
        }
        munmap((void *)b->importers, DOUBLE_PAGE);
    }
    munmap(b->storage, b->size);
    if (origin != BLOCK_MAPPED)
        munmap((void *)b->base, b->size);
    if (b->fd >= 0)
        close(b->fd);
    free(b);
    return DOUBLE_OK;
}

/* ---- Streams ---- */
/* A kernel of the library (see Modules below). */
enum kernel_kind { KERNEL_AMO, KERNEL_REDUCE, KERNEL_SCATTER, KERNEL_WAIT };
struct double_kernel {
    const char *name;
    enum kernel_kind kind;
    int bits;     /* the word or element size */
    char op;      /* reductions: '+', '<' (min), '>' (max) */
    int floating; /* reductions: float or double elements */
};
enum op_kind { OP_COPY, OP_SET, OP_SET32, OP_KERNEL, OP_REDUCE, OP_SCATTER, OP_WRITE, OP_WAIT };
struct op {
    enum op_kind kind;
    uintptr_t dst, src;
    size_t len;
    int byte;
    int bits;     /* OP_KERNEL, OP_WRITE, OP_WAIT: 32 or 64 */
    unsigned amo; /* OP_KERNEL: the operation; OP_WAIT: how it compares (enum double_wait) */
    uint64_t value, compare;
    const struct double_kernel *function; /* OP_REDUCE */
    int device;                           /* whose work it is */
    struct op *next;
    size_t staged_len;
    char staged[]; /* OP_COPY from pageable memory: the source as it was at issue */
};
/* A graph: the work captured from a stream, in its order; an executable graph is a copy. */
struct double_graph {
    struct op *head, **tail;
};
struct double_stream {
    int blocking; /* the legacy default stream waits for it */
    const void *owner;
    int device;
    int dead; /* its owner was reset, or it was destroyed */
    struct op *head, **tail;
    struct double_stream *next;
    /* STRATA_GPU_DOUBLE_ASYNC=1: a thread of its own runs its work as it comes */
    int async, running, stop; /* running: a thread runs its work now */
    pthread_t worker;
    pthread_cond_t changed;
    struct double_graph *capture; /* being captured into (work is recorded, not run) */
    int capture_global;
    int capture_invalid; /* something the capture does not allow happened */
};
static struct double_stream *streams;
static int streams_created, streams_below_greatest, scatters_launched;
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
    const struct double_kernel *f = op->function;
    if (f->floating && f->bits == 32)
        REDUCE_LOOP(float);
    else if (f->floating)
        REDUCE_LOOP(double);
    else if (f->bits == 32)
        REDUCE_LOOP(int32_t);
    else
        REDUCE_LOOP(int64_t);
}

/* The batch scatter: entries of (dst, offset, len) in host memory, read when it runs; an entry's
 * source is the data plus its offset, wrapping around to device memory as on a GPU. A GPU's
 * threads apply the entries in no set order: here the last comes first, so that a batch whose
 * entries overlap comes out wrong. */
static void run_scatter(const struct op *op)
{
    const uint64_t *entries = (const uint64_t *)op->src;
    for (size_t i = op->len; i-- > 0;) {
        const uint64_t *entry = entries + 3 * i;
        memmove(bytes_at(entry[0], entry[2]), bytes_at(op->dst + entry[1], entry[2]), entry[2]);
    }
}

/* Whether a wait's condition holds: GEQ compares as the CUDA driver does, by the sign of the
 * difference; the others by value. The kernel's comparisons (strata_wait) are OpenSHMEM's. */
static int wait_holds(const struct op *op)
{
    uint64_t now = op->bits == 32
                       ? __atomic_load_n((uint32_t *)bytes_at(op->dst, 4), __ATOMIC_ACQUIRE)
                       : __atomic_load_n((uint64_t *)bytes_at(op->dst, 8), __ATOMIC_ACQUIRE);
    uint64_t v = op->value;
    switch (op->amo) {
    case DOUBLE_WAIT_GEQ:
        return op->bits == 32 ? (int32_t)((uint32_t)now - (uint32_t)v) >= 0
                              : (int64_t)(now - v) >= 0;
    case DOUBLE_WAIT_EQ:
        return now == v;
    case DOUBLE_WAIT_AND:
        return (now & v) != 0;
    case DOUBLE_WAIT_NOR:
        return ~(now | v) != 0;
    case DOUBLE_WAIT_KERNEL_EQ:
        return now == v;
    case DOUBLE_WAIT_KERNEL_NE:
        return now != v;
    case DOUBLE_WAIT_KERNEL_GT:
        return now > v;
    case DOUBLE_WAIT_KERNEL_GE:
        return now >= v;
    case DOUBLE_WAIT_KERNEL_LT:
        return now < v;
    default:
        return now <= v;
    }
}

static void run_op(const struct op *op)
{
    running_device = op->device;
    running_atomic = op->kind == OP_KERNEL;
    switch (op->kind) {
    case OP_COPY:
        memmove(bytes_at(op->dst, op->len),
                op->src ? bytes_at(op->src, op->len) : (const char *)op->staged, op->len);
        break;
    case OP_SET:
        memset(bytes_at(op->dst, op->len), op->byte, op->len);
        break;
    case OP_SET32: {
        uint32_t *d = (uint32_t *)bytes_at(op->dst, op->len * 4);
        for (size_t i = 0; i < op->len; i++)
            d[i] = (uint32_t)op->value;
        break;
    }
    case OP_WRITE:
        if (op->bits == 32)
            __atomic_store_n((uint32_t *)bytes_at(op->dst, 4), (uint32_t)op->value,
                             __ATOMIC_RELEASE);
        else
            __atomic_store_n((uint64_t *)bytes_at(op->dst, 8), op->value, __ATOMIC_RELEASE);
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
    case OP_WAIT:
        break;
    }
    running_device = -1;
}

/* A wait holds its stream back, not the others: it polls without the run lock. */
static void run_wait(const struct op *op)
{
    for (unsigned spins = 0;; spins++) {
        pthread_mutex_lock(&run_lock);
        running_device = op->device;
        int holds = wait_holds(op);
        running_device = -1;
        pthread_mutex_unlock(&run_lock);
        if (holds)
            return;
        if (spins < 64)
            sched_yield();
        else
            usleep(50);
    }
}

static void run_one(const struct op *op)
{
    if (op->kind == OP_WAIT) {
        run_wait(op);
        return;
    }
    pthread_mutex_lock(&run_lock);
    run_op(op);
    pthread_mutex_unlock(&run_lock);
}

/* The stream's work so far, on the calling thread (a stream without a thread of its own). One
 * thread runs a stream at a time: another that synchronizes it meanwhile waits for that run to
 * end, then runs what came after, so the stream's work stays in order and a synchronize returns
 * only once all of it has run. */
static void stream_run(struct double_stream *s)
{
    pthread_mutex_lock(&lock);
    while (s->running)
        pthread_cond_wait(&s->changed, &lock);
    struct op *op = s->head;
    s->head = NULL;
    s->tail = &s->head;
    s->running = 1;
    pthread_mutex_unlock(&lock);
    while (op) {
        struct op *next = op->next;
        run_one(op);
        free(op);
        op = next;
    }
    pthread_mutex_lock(&lock);
    s->running = 0;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&lock);
}

/* An asynchronous stream's thread: its work in order, as it comes. */
static void *stream_worker(void *arg)
{
    struct double_stream *s = arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!s->head && !s->stop)
            pthread_cond_wait(&s->changed, &lock);
        if (!s->head)
            break;
        struct op *op = s->head;
        s->head = op->next;
        if (!s->head)
            s->tail = &s->head;
        s->running = 1;
        pthread_mutex_unlock(&lock);
        run_one(op);
        free(op);
        pthread_mutex_lock(&lock);
        s->running = 0;
        pthread_cond_broadcast(&s->changed);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Waits until the stream has run everything issued to it. */
static void stream_drain(struct double_stream *s)
{
    if (!s->async) {
        stream_run(s);
        return;
    }
    pthread_mutex_lock(&lock);
    while (s->head || s->running)
        pthread_cond_wait(&s->changed, &lock);
    pthread_mutex_unlock(&lock);
}

/* What the legacy default stream waits for: every blocking stream's work. */
static void blocking_streams_run(void)
{
    for (struct double_stream *s = streams; s; s = s->next)
        if (s->blocking && !s->capture)
            stream_drain(s);
}

static struct op *op_clone(const struct op *op)
{
    size_t size = sizeof(*op) + op->staged_len;
    struct op *copy = malloc(size);
    if (copy) {
        memcpy(copy, op, size);
        copy->next = NULL;
    }
    return copy;
}

static void graph_append(struct double_graph *g, struct op *op)
{
    op->next = NULL;
    *g->tail = op;
    g->tail = &op->next;
}

static enum double_status enqueue(struct double_stream *s, struct op *op)
{
    op->device = s ? s->device : current_device;
    op->next = NULL;
    if (!s) { /* the legacy default stream: synchronous here */
        blocking_streams_run();
        run_one(op);
        free(op);
        return DOUBLE_OK;
    }
    pthread_mutex_lock(&lock);
    if (s->capture) {
        /* A graph replays its work later: a source taken at issue would be stale there, as the
         * runtimes refuse to capture copies from pageable memory. */
        int refused = op->staged_len != 0;
        if (refused)
            s->capture_invalid = 1;
        else
            graph_append(s->capture, op);
        pthread_mutex_unlock(&lock);
        if (refused)
            free(op);
        return refused ? DOUBLE_CAPTURE_UNSUPPORTED : DOUBLE_OK;
    }
    *s->tail = op;
    s->tail = &op->next;
    if (s->async)
        pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&lock);
    return DOUBLE_OK;
}

/* ---- The calls ---- */

int double_device_count(const char *variable)
{
    const char *n = getenv(variable);
    return n ? atoi(n) : 1;
}

static void hold(ssize_t bytes)
{
    pthread_mutex_lock(&lock);
    held += (size_t)bytes;
    pthread_mutex_unlock(&lock);
}

size_t double_held_bytes(void)
{
    pthread_mutex_lock(&lock);
    size_t bytes = held;
    pthread_mutex_unlock(&lock);
    return bytes;
}

enum double_status double_alloc(uintptr_t *dptr, size_t size, int device)
{
    if (!size)
        return DOUBLE_INVALID_VALUE;
    int fd = memfd_create("gpu-double", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)(importers_offset(size) + DOUBLE_PAGE))) {
        if (fd >= 0)
            close(fd);
        return DOUBLE_OUT_OF_MEMORY;
    }
    enum double_status rc = block_add(fd, size, BLOCK_ALLOCATED, device, 0, dptr);
    if (rc == DOUBLE_OK)
        hold((ssize_t)size);
    return rc;
}

/* Frees an allocation whether or not other processes have it open (a reset frees them all). */
static enum double_status double_free_unchecked(uintptr_t dptr)
{
    pthread_mutex_lock(&lock);
    struct block *b = block_of(dptr);
    size_t size = b && b->base == dptr ? b->size : 0;
    pthread_mutex_unlock(&lock);
    enum double_status rc = block_remove(dptr, BLOCK_ALLOCATED);
    if (rc == DOUBLE_OK)
        hold(-(ssize_t)size);
    return rc;
}

enum double_status double_free(uintptr_t dptr)
{
    pthread_mutex_lock(&lock);
    struct block *b = block_of(dptr);
    int open_elsewhere = b && b->base == dptr && b->importers ? atomic_load(b->importers) : 0;
    pthread_mutex_unlock(&lock);
    if (open_elsewhere) {
        fprintf(stderr, "gpu double: device memory freed while %d other process(es) have it open\n",
                open_elsewhere);
        return DOUBLE_INVALID_VALUE;
    }
    return double_free_unchecked(dptr);
}

enum double_status double_ipc_get(uintptr_t dptr, char *handle)
{
    pthread_mutex_lock(&lock);
    struct block *b = block_of(dptr);
    int ok = b && b->base == dptr && b->origin == BLOCK_ALLOCATED;
    if (ok) {
        memset(handle, 0, DOUBLE_IPC_HANDLE);
        snprintf(handle, DOUBLE_IPC_HANDLE, "%d %d %zu %d", (int)getpid(), b->fd, b->size,
                 b->device);
    }
    pthread_mutex_unlock(&lock);
    return ok ? DOUBLE_OK : DOUBLE_INVALID_VALUE;
}

enum double_status double_ipc_open(const char *handle, int opener, uintptr_t *dptr)
{
    int pid, fd, device;
    size_t size;
    char text[DOUBLE_IPC_HANDLE + 1] = "", path[64];
    memcpy(text, handle, DOUBLE_IPC_HANDLE);
    if (sscanf(text, "%d %d %zu %d", &pid, &fd, &size, &device) != 4)
        return DOUBLE_INVALID_HANDLE;
    if (!double_peer_access(opener, device))
        return DOUBLE_PEER_UNSUPPORTED;
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, fd);
    int opened = open(path, O_RDWR | O_CLOEXEC);
    if (opened < 0)
        return DOUBLE_INVALID_HANDLE;
    enum double_status rc = block_add(opened, size, BLOCK_OPENED, device, 0, dptr);
    pthread_mutex_lock(&lock);
    struct block *b = rc == DOUBLE_OK ? block_of(*dptr) : NULL;
    if (b)
        b->owner = pid;
    pthread_mutex_unlock(&lock);
    return rc;
}

enum double_status double_ipc_close(uintptr_t dptr)
{
    return block_remove(dptr, BLOCK_OPENED);
}

/* ---- Virtual memory management ---- */
/* The memory file's name carries its device, so that a process that takes the file learns it. */
#define DOUBLE_VMM_NAME "gpu-double-vmm-device-"

int double_vmm_create(size_t size, int device)
{
    char name[64];
    snprintf(name, sizeof(name), DOUBLE_VMM_NAME "%d", device);
    int fd = size ? memfd_create(name, MFD_CLOEXEC) : -1;
    if (fd >= 0 && ftruncate(fd, (off_t)size)) {
        close(fd);
        fd = -1;
    }
    pthread_mutex_lock(&lock);
    for (int i = 0; fd >= 0 && i < DOUBLE_CREATED_MAX; i++)
        if (!created[i].size) {
            created[i] = (struct created){fd, size};
            held += size;
            break;
        }
    pthread_mutex_unlock(&lock);
    return fd;
}

int double_vmm_release(int fd)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; i < DOUBLE_CREATED_MAX; i++)
        if (created[i].size && created[i].fd == fd) {
            held -= created[i].size;
            created[i] = (struct created){-1, 0};
        }
    pthread_mutex_unlock(&lock);
    return close(fd);
}

int double_vmm_device(int fd)
{
    char path[64], target[128];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    ssize_t len = readlink(path, target, sizeof(target) - 1);
    if (len < 0)
        return -1;
    target[len] = 0;
    const char *at = strstr(target, DOUBLE_VMM_NAME);
    return at ? atoi(at + strlen(DOUBLE_VMM_NAME)) : -1;
}

/* The driver (580, on an H200) placed reservations of 2, 4 and 16 MiB elsewhere than the free
 * address asked for, and honoured it from 32 MiB. */
#define DOUBLE_VMM_PLACED ((size_t)32 << 20)

enum double_status double_vmm_reserve(uintptr_t *dptr, size_t size, uintptr_t wish, size_t align)
{
    void *at = MAP_FAILED;
    if (wish && size >= DOUBLE_VMM_PLACED)
        at = mmap((void *)wish, size, PROT_NONE,
                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    *dptr = at != MAP_FAILED ? (uintptr_t)at : reserve(size, align);
    return *dptr ? DOUBLE_OK : DOUBLE_OUT_OF_MEMORY;
}

void double_vmm_free_range(uintptr_t dptr, size_t size)
{
    munmap((void *)dptr, size);
}

enum double_status double_vmm_map(uintptr_t dptr, size_t size, int fd)
{
    int copy = dup(fd);
    if (copy < 0)
        return DOUBLE_INVALID_HANDLE;
    uintptr_t at;
    return block_add(copy, size, BLOCK_MAPPED, double_vmm_device(fd), dptr, &at);
}

enum double_status double_vmm_unmap(uintptr_t dptr)
{
    return block_remove(dptr, BLOCK_MAPPED);
}

int double_vmm_mapped(uintptr_t p)
{
    pthread_mutex_lock(&lock);
    struct block *b = block_of(p);
    int mapped = b && b->origin == BLOCK_MAPPED;
    pthread_mutex_unlock(&lock);
    return mapped;
}

int double_device_of(uintptr_t p)
{
    pthread_mutex_lock(&lock);
    struct block *b = block_of(p);
    int device = b ? b->device : -1;
    pthread_mutex_unlock(&lock);
    return device;
}

/* Not a runtime's: the device of the memory at p (-1: none), for tests, whatever the runtime's
 * own pointer queries leave out. */
EXPORT int gpu_double_device_of(const void *p)
{
    return double_device_of((uintptr_t)p);
}

enum double_memory double_memory_of(uintptr_t p)
{
    pthread_mutex_lock(&lock);
    enum double_memory type = block_of(p)    ? DOUBLE_DEVICE
                              : pinned_of(p) ? DOUBLE_PINNED
                                             : DOUBLE_PAGEABLE;
    pthread_mutex_unlock(&lock);
    return type;
}

static enum double_status pinned_add(void *p, size_t size, int allocated)
{
    struct pinned *h = malloc(sizeof(*h));
    if (!h)
        return DOUBLE_OUT_OF_MEMORY;
    pthread_mutex_lock(&lock);
    *h = (struct pinned){(uintptr_t)p, size, allocated, pinned};
    pinned = h;
    pthread_mutex_unlock(&lock);
    return DOUBLE_OK;
}

enum double_status double_range_of(uintptr_t p, uintptr_t *start, size_t *size)
{
    pthread_mutex_lock(&lock);
    struct block *b = block_of(p);
    struct pinned *h = b ? NULL : pinned_of(p);
    if (b || h) {
        *start = b ? b->base : h->base;
        *size = b ? b->size : h->size;
    }
    pthread_mutex_unlock(&lock);
    return b || h ? DOUBLE_OK : DOUBLE_NOT_FOUND;
}

enum double_status double_host_register(void *p, size_t size)
{
    uintptr_t lo = (uintptr_t)p;
    int overlaps = 0;
    pthread_mutex_lock(&lock);
    for (struct pinned *h = pinned; h && !overlaps; h = h->next)
        overlaps = lo < h->base + h->size && h->base < lo + size;
    pthread_mutex_unlock(&lock);
    if (overlaps)
        return DOUBLE_ALREADY_REGISTERED;
    return pinned_add(p, size, 0);
}

enum double_status double_host_unregister(void *p)
{
    pthread_mutex_lock(&lock);
    struct pinned **at = &pinned;
    while (*at && ((*at)->base != (uintptr_t)p || (*at)->allocated))
        at = &(*at)->next;
    struct pinned *h = *at;
    if (h)
        *at = h->next;
    pthread_mutex_unlock(&lock);
    free(h);
    return h ? DOUBLE_OK : DOUBLE_NOT_REGISTERED;
}

size_t double_registered_bytes(void)
{
    size_t bytes = 0;
    pthread_mutex_lock(&lock);
    for (struct pinned *h = pinned; h; h = h->next)
        bytes += h->allocated ? 0 : h->size;
    pthread_mutex_unlock(&lock);
    return bytes;
}

enum double_status double_host_alloc(void **p, size_t size)
{
    *p = calloc(1, size);
    return *p ? pinned_add(*p, size, 1) : DOUBLE_OUT_OF_MEMORY;
}

struct double_stream *double_stream_create(int blocking, const void *owner, int greatest)
{
    struct double_stream *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->blocking = blocking;
    s->owner = owner;
    s->device = current_device;
    s->tail = &s->head;
    pthread_cond_init(&s->changed, NULL);
    const char *async = getenv("STRATA_GPU_DOUBLE_ASYNC");
    s->async = async && !strcmp(async, "1");
    if (s->async && pthread_create(&s->worker, NULL, stream_worker, s)) {
        free(s);
        return NULL;
    }
    pthread_mutex_lock(&lock);
    s->next = streams;
    streams = s;
    streams_created++;
    streams_below_greatest += !greatest;
    pthread_mutex_unlock(&lock);
    return s;
}

const void *double_stream_owner(const struct double_stream *s)
{
    return s->owner;
}

int double_scatters_launched(void)
{
    return __atomic_load_n(&scatters_launched, __ATOMIC_RELAXED);
}

int double_stream_alive(const struct double_stream *s)
{
    pthread_mutex_lock(&lock);
    int alive = !s->dead;
    pthread_mutex_unlock(&lock);
    return alive;
}

void double_reset(int device, const void *owner)
{
    uintptr_t gone[64];
    int n;
    pthread_mutex_lock(&lock);
    for (struct double_stream *s = streams; s; s = s->next)
        s->dead |= s->owner == owner;
    for (struct pinned **at = &pinned; *at;) {
        struct pinned *h = *at;
        if (h->allocated) {
            at = &h->next;
        } else {
            *at = h->next;
            free(h);
        }
    }
    pthread_mutex_unlock(&lock);
    do { /* block_remove takes the lock: gather the device's blocks a few at a time */
        enum block_origin origins[64];
        n = 0;
        pthread_mutex_lock(&lock);
        for (struct block *b = blocks; b && n < 64; b = b->next)
            if (b->device == device) {
                origins[n] = b->origin;
                gone[n++] = b->base;
            }
        pthread_mutex_unlock(&lock);
        for (int i = 0; i < n; i++)
            if (origins[i] == BLOCK_ALLOCATED)
                double_free_unchecked(gone[i]);
            else
                block_remove(gone[i], origins[i]);
    } while (n);
}

int double_streams_below_greatest(void)
{
    pthread_mutex_lock(&lock);
    int n = streams_below_greatest;
    pthread_mutex_unlock(&lock);
    return n;
}

int double_streams_created(void)
{
    pthread_mutex_lock(&lock);
    int n = streams_created;
    pthread_mutex_unlock(&lock);
    return n;
}

enum double_status double_stream_sync(struct double_stream *s)
{
    if (s && s->capture) { /* a capturing stream has nothing to wait for: the capture breaks */
        pthread_mutex_lock(&lock);
        s->capture_invalid = 1;
        pthread_mutex_unlock(&lock);
        return DOUBLE_CAPTURE_UNSUPPORTED;
    }
    if (s)
        stream_drain(s);
    else
        blocking_streams_run();
    return DOUBLE_OK;
}

void double_stream_destroy(struct double_stream *s)
{
    stream_drain(s);
    pthread_mutex_lock(&lock);
    s->dead = 1;
    s->stop = 1;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&lock);
    if (s->async)
        pthread_join(s->worker, NULL);
}

/* ---- Stream memory operations ---- */
static enum double_status value_op(enum op_kind kind, uintptr_t word, uint64_t value, int bits,
                                   unsigned how, struct double_stream *s)
{
    if ((bits != 32 && bits != 64) || word % (unsigned)(bits / 8) ||
        !bytes_at(word, (size_t)bits / 8) || double_memory_of(word) == DOUBLE_PAGEABLE)
        return DOUBLE_INVALID_VALUE;
    struct op *op = malloc(sizeof(*op));
    if (!op)
        return DOUBLE_OUT_OF_MEMORY;
    *op = (struct op){.kind = kind, .dst = word, .bits = bits, .amo = how, .value = value};
    return enqueue(s, op);
}

enum double_status double_write_value(uintptr_t word, uint64_t value, int bits,
                                      struct double_stream *s)
{
    return value_op(OP_WRITE, word, value, bits, 0, s);
}

enum double_status double_wait_value(uintptr_t word, uint64_t value, int bits, enum double_wait how,
                                     struct double_stream *s)
{
    return value_op(OP_WAIT, word, value, bits, how, s);
}

enum double_status double_set32(uintptr_t dst, uint32_t value, size_t count,
                                struct double_stream *s)
{
    struct op *op = malloc(sizeof(*op));
    if (!op || dst % 4 || !bytes_at(dst, count * 4)) {
        free(op);
        return op ? DOUBLE_INVALID_VALUE : DOUBLE_OUT_OF_MEMORY;
    }
    *op = (struct op){.kind = OP_SET32, .dst = dst, .len = count, .value = value};
    return enqueue(s, op);
}

/* ---- Capture: a stream's work recorded into a graph, replayed by launching it ---- */
static int captures_global;         /* streams capturing in global mode */
static __thread int thread_relaxed; /* this thread's capture mode is relaxed */

enum double_status double_capture_begin(struct double_stream *s, int global)
{
    struct double_graph *g = calloc(1, sizeof(*g));
    if (!s || !g) {
        free(g);
        return s ? DOUBLE_OUT_OF_MEMORY : DOUBLE_CAPTURE_UNSUPPORTED; /* not the legacy stream */
    }
    g->tail = &g->head;
    stream_drain(s);
    pthread_mutex_lock(&lock);
    enum double_status rc = s->capture ? DOUBLE_INVALID_VALUE : DOUBLE_OK;
    if (rc == DOUBLE_OK) {
        s->capture = g;
        s->capture_global = global;
        s->capture_invalid = 0;
        captures_global += global;
    }
    pthread_mutex_unlock(&lock);
    if (rc != DOUBLE_OK)
        free(g);
    return rc;
}

static void graph_free(struct double_graph *g)
{
    for (struct op *op = g ? g->head : NULL, *next; op; op = next) {
        next = op->next;
        free(op);
    }
    free(g);
}

enum double_status double_capture_end(struct double_stream *s, struct double_graph **graph)
{
    pthread_mutex_lock(&lock);
    struct double_graph *g = s ? s->capture : NULL;
    int invalid = s && s->capture_invalid;
    if (g) {
        captures_global -= s->capture_global;
        s->capture = NULL;
    }
    pthread_mutex_unlock(&lock);
    *graph = NULL;
    if (!g)
        return DOUBLE_INVALID_VALUE;
    if (invalid) {
        graph_free(g);
        return DOUBLE_CAPTURE_INVALIDATED;
    }
    *graph = g;
    return DOUBLE_OK;
}

int double_capturing(const struct double_stream *s)
{
    pthread_mutex_lock(&lock);
    int capturing = s && s->capture;
    pthread_mutex_unlock(&lock);
    return capturing;
}

int double_capture_forbids(void)
{
    pthread_mutex_lock(&lock);
    int forbids = captures_global && !thread_relaxed;
    pthread_mutex_unlock(&lock);
    return forbids;
}

int double_capture_relax(int relaxed)
{
    int was = thread_relaxed;
    thread_relaxed = relaxed;
    return was;
}

struct double_graph *double_graph_copy(const struct double_graph *g)
{
    struct double_graph *copy = calloc(1, sizeof(*copy));
    if (!copy)
        return NULL;
    copy->tail = &copy->head;
    for (const struct op *op = g->head; op; op = op->next) {
        struct op *o = op_clone(op);
        if (!o) {
            graph_free(copy);
            return NULL;
        }
        graph_append(copy, o);
    }
    return copy;
}

enum double_status double_graph_launch(const struct double_graph *g, struct double_stream *s)
{
    if (s && s->capture)
        return DOUBLE_CAPTURE_UNSUPPORTED;
    for (const struct op *op = g->head; op; op = op->next) {
        struct op *o = op_clone(op);
        if (!o)
            return DOUBLE_OUT_OF_MEMORY;
        enum double_status rc = enqueue(s, o);
        if (rc != DOUBLE_OK)
            return rc;
    }
    return DOUBLE_OK;
}

void double_graph_destroy(struct double_graph *g)
{
    graph_free(g);
}

/* A copy: a pageable source is taken now, anything else when the copy runs. */
enum double_status double_copy(uintptr_t dst, uintptr_t src, size_t len, struct double_stream *s)
{
    if (!bytes_at(dst, len) || !bytes_at(src, len))
        return DOUBLE_INVALID_VALUE;
    int pageable = double_memory_of(src) == DOUBLE_PAGEABLE;
    struct op *op = malloc(sizeof(*op) + (pageable ? len : 0));
    if (!op)
        return DOUBLE_OUT_OF_MEMORY;
    *op = (struct op){.kind = OP_COPY,
                      .dst = dst,
                      .src = pageable ? 0 : src,
                      .len = len,
                      .staged_len = pageable ? len : 0};
    if (pageable)
        memcpy(op->staged, (const void *)src, len);
    return enqueue(s, op);
}

enum double_status double_set(uintptr_t dst, int byte, size_t len, struct double_stream *s)
{
    struct op *op = malloc(sizeof(*op));
    if (!op || !bytes_at(dst, len)) {
        free(op);
        return op ? DOUBLE_INVALID_VALUE : DOUBLE_OUT_OF_MEMORY;
    }
    *op = (struct op){.kind = OP_SET, .dst = dst, .len = len, .byte = byte};
    return enqueue(s, op);
}

/* ---- The library's kernels ---- */
static const struct double_kernel kernels[] = {{"strata_amo32", KERNEL_AMO, 32, 0, 0},
                                               {"strata_amo64", KERNEL_AMO, 64, 0, 0},
                                               {"strata_scatter", KERNEL_SCATTER, 0, 0, 0},
                                               {"strata_wait", KERNEL_WAIT, 64, 0, 0},
#define REDUCE_KERNELS(OP, NAME)                                                                   \
    {"strata_reduce_" NAME "_int", KERNEL_REDUCE, 32, OP, 0},                                      \
        {"strata_reduce_" NAME "_long", KERNEL_REDUCE, 64, OP, 0},                                 \
        {"strata_reduce_" NAME "_float", KERNEL_REDUCE, 32, OP, 1},                                \
        {"strata_reduce_" NAME "_double", KERNEL_REDUCE, 64, OP, 1},
                                               REDUCE_KERNELS('+', "sum") REDUCE_KERNELS('<', "min")
                                                   REDUCE_KERNELS('>', "max")};

const struct double_kernel *double_kernel_named(const char *name)
{
    for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
        if (!strcmp(kernels[i].name, name))
            return &kernels[i];
    return NULL;
}

int double_module_valid(const char *image)
{
    return strstr(image, ".version") && strstr(image, ".entry strata_");
}

/* Atomics: (word, op, value, compare, old), one thread. */
static enum double_status launch_amo(const struct double_kernel *f, unsigned threads,
                                     struct double_stream *s, void **params)
{
    if (threads != 1)
        return DOUBLE_INVALID_VALUE;
    struct op *op = malloc(sizeof(*op));
    if (!op)
        return DOUBLE_OUT_OF_MEMORY;
    *op = (struct op){.kind = OP_KERNEL, .bits = f->bits};
    memcpy(&op->dst, params[0], 8);
    memcpy(&op->amo, params[1], 4);
    memcpy(&op->value, params[2], (size_t)f->bits / 8);
    memcpy(&op->compare, params[3], (size_t)f->bits / 8);
    memcpy(&op->src, params[4], 8); /* where the old value goes */
    if (!bytes_at(op->dst, (size_t)f->bits / 8) || op->amo > 5) {
        free(op);
        return DOUBLE_INVALID_VALUE;
    }
    return enqueue(s, op);
}

/* Reductions: (acc, in, n), a thread per element. */
static enum double_status launch_reduce(const struct double_kernel *f, unsigned threads,
                                        struct double_stream *s, void **params)
{
    struct op *op = malloc(sizeof(*op));
    if (!op)
        return DOUBLE_OUT_OF_MEMORY;
    *op = (struct op){.kind = OP_REDUCE, .bits = f->bits, .function = f};
    memcpy(&op->dst, params[0], 8);
    memcpy(&op->src, params[1], 8);
    memcpy(&op->len, params[2], 8);
    size_t bytes = op->len * (size_t)f->bits / 8;
    if (op->len > threads || !bytes_at(op->dst, bytes) || !bytes_at(op->src, bytes)) {
        free(op);
        return DOUBLE_INVALID_VALUE;
    }
    return enqueue(s, op);
}

/* The batch scatter: (entries, data, count), threads sharing the entries. */
static enum double_status launch_scatter(struct double_stream *s, void **params)
{
    struct op *op = malloc(sizeof(*op));
    uint32_t count;
    if (!op)
        return DOUBLE_OUT_OF_MEMORY;
    *op = (struct op){.kind = OP_SCATTER};
    memcpy(&op->src, params[0], 8); /* the entries */
    memcpy(&op->dst, params[1], 8); /* their data */
    memcpy(&count, params[2], 4);
    op->len = count;
    /* The GPU reaches host memory only when it is pinned and mapped. */
    if (double_memory_of(op->src) != DOUBLE_PINNED || double_memory_of(op->dst) != DOUBLE_PINNED) {
        free(op);
        return DOUBLE_INVALID_VALUE;
    }
    __atomic_add_fetch(&scatters_launched, 1, __ATOMIC_RELAXED);
    return enqueue(s, op);
}

/* The wait: (word, cmp, value), one thread spinning until *word cmp value (SHMEM_CMP_*). */
static enum double_status launch_wait(unsigned threads, struct double_stream *s, void **params)
{
    uint64_t word, value;
    uint32_t cmp;
    memcpy(&word, params[0], 8);
    memcpy(&cmp, params[1], 4);
    memcpy(&value, params[2], 8);
    if (threads != 1 || cmp < 1 || cmp > 6)
        return DOUBLE_INVALID_VALUE;
    return double_wait_value(word, value, 64, (enum double_wait)(DOUBLE_WAIT_KERNEL_EQ + cmp - 1),
                             s);
}

enum double_status double_launch(const struct double_kernel *f, unsigned threads,
                                 struct double_stream *s, void **params)
{
    switch (f->kind) {
    case KERNEL_WAIT:
        return launch_wait(threads, s, params);
    case KERNEL_AMO:
        return launch_amo(f, threads, s, params);
    case KERNEL_REDUCE:
        return launch_reduce(f, threads, s, params);
    default:
        return launch_scatter(s, params);
    }
}
