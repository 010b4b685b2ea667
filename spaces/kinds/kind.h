/* SPDX-License-Identifier: BSD-3-Clause */
/* A memory kind: where a space's memory lives, what may touch it and how bytes reach it. Each
 * kind is one const table in its own file; the route of every region and peer
 * (spaces/route_table.h) follows from its capabilities, and nothing outside spaces/ asks which kind
 * a region is. */
#ifndef STRATA_KIND_H
#define STRATA_KIND_H

#include "../../transports/transport.h"

#include <stddef.h>
#include <stdint.h>

/* What a kind's memory allows. */
enum kind_cap {
    KIND_CAP_LOAD_STORE = 1 << 0,  /* the CPU may load and store it, this PE's and attached */
    KIND_CAP_PEER_ATTACH = 1 << 1, /* node peers attach it by the handle export writes */
    KIND_CAP_TRANSPORT = 1 << 2,   /* the transport may register it, as memory of mem_type */
    /* Writes into its memory (copy_from_host, fill) may land after they return, their source
     * reusable at once, as a copy queued on a device stream: sync lands them. Reads see every
     * write of this process that landed before them. */
    KIND_CAP_ASYNC_COPY = 1 << 3,
    /* With KIND_CAP_PEER_ATTACH: a node peer's memory is attached when this PE first reaches it,
     * from whatever thread does, since attaching needs no device context and the handle stays
     * valid while the memory lives. Other kinds attach every node peer when the space is made. */
    KIND_CAP_ATTACH_ON_USE = 1 << 4,
};

/* The queues of asynchronous writes: a context's writes go on queue (its number modulo
 * KIND_QUEUES; the default context is number 0), so its quiet lands them without waiting for
 * other contexts'. Contexts beyond the cap share queues: landing a shared queue lands more than
 * was asked, never less. Queue 0 also carries the library's own work (atomics, reductions, the
 * reads and writes of waits and of peers' messages). */
#define KIND_QUEUES 16
#define KIND_QUEUE_ALL (-1) /* sync: every queue */

/* Element-wise reductions a kind may run on its own memory, acc[i] = op(acc[i], in[i]):
 * X(NAME, op, C type). */
#define KIND_REDUCTIONS(X)                                                                         \
    X(SUM_INT, sum, int)                                                                           \
    X(SUM_LONG, sum, long)                                                                         \
    X(SUM_FLOAT, sum, float)                                                                       \
    X(SUM_DOUBLE, sum, double)                                                                     \
    X(MIN_INT, min, int)                                                                           \
    X(MIN_LONG, min, long)                                                                         \
    X(MIN_FLOAT, min, float)                                                                       \
    X(MIN_DOUBLE, min, double)                                                                     \
    X(MAX_INT, max, int)                                                                           \
    X(MAX_LONG, max, long)                                                                         \
    X(MAX_FLOAT, max, float)                                                                       \
    X(MAX_DOUBLE, max, double)
enum kind_reduction {
    KIND_REDUCE_NONE,
#define KIND_REDUCTION_ENUM(NAME, OP, TYPE) KIND_REDUCE_##NAME,
    KIND_REDUCTIONS(KIND_REDUCTION_ENUM)
#undef KIND_REDUCTION_ENUM
        KIND_REDUCTIONS_COUNT
};

/* The most bytes of a handle node peers attach with (a CUDA or HIP IPC handle is 64, and an
 * offset). */
#define KIND_HANDLE_MAX 112

/* Memory of one kind held by this PE: the local mapping and what is needed to share and
 * release it. */
struct placement;
struct kind_mem {
    void *wish;   /* on create: where the memory should be, if the kind can place it (or NULL) */
    size_t align; /* on create: the alignment its base must have (a power of two) */
    /* on create: where host memory goes and in which pages (placement.h; NULL: anywhere) */
    const struct placement *placement;
    void *base;
    size_t size;
    int fd;        /* host memory: its file, open while it lives (node peers open it here) */
    void *storage; /* kind-private: where device-like memory really lives */
};

struct kind_ops {
    const char *name;
    unsigned caps;                    /* enum kind_cap */
    enum transport_mem_type mem_type; /* KIND_CAP_TRANSPORT: what the transport must reach */
    /* Creates size bytes of this PE's memory, committed lazily where the kind allows; prefix
     * ("/<job id>") starts any name it needs for a moment. Returns 0 or -1. */
    int (*create)(const char *prefix, size_t size, struct kind_mem *mem);
    void (*destroy)(struct kind_mem *mem);
    /* KIND_CAP_PEER_ATTACH: the bytes (at most KIND_HANDLE_MAX) by which node peers attach mem,
     * attaching a peer's memory of size bytes from those bytes (NULL on failure, errno ESRCH
     * where its owner has ended), and undoing it. A handle names no file: nothing is left behind if
     * the job dies. */
    int (*export)(const struct kind_mem *mem, void *handle, size_t *len);
    void *(*attach)(const void *handle, size_t len, size_t size);
    void (*detach)(void *addr, size_t size);
    /* Optional, with attach: whether this PE may attach the memory a handle names (a GPU's, on a
     * device this PE's reaches); without it, always. A node peer it may not attach is reached as
     * PEs of other nodes are, through the transport or its owner. */
    int (*reaches)(const void *handle, size_t len);
    /* Optional: what this PE's memory of the kind cannot do with every node peer's, whatever
     * their devices (enum kind_node_limit), for the space's plan to start the transport. */
    unsigned (*node_limits)(void);
    /* Without KIND_CAP_LOAD_STORE: bytes between host memory and memory of this kind, wherever
     * it is (a heap of this PE, a node peer's attached heap, a private buffer), and fill; writes
     * go on queue (0 .. KIND_QUEUES - 1), in its order. */
    void (*copy_to_host)(void *dst, const void *src, size_t len);
    void (*copy_from_host)(void *dst, const void *src, size_t len, int queue);
    void (*fill)(void *dst, int byte, size_t len, int queue);
    /* Optional: bytes between two memories of this kind (a heap, an attached peer's heap, a
     * private buffer) without passing through the host; a write like copy_from_host. */
    void (*copy)(void *dst, const void *src, size_t len, int queue);
    /* Whether ptr, which is no region's, is memory of this kind (the program's own buffer);
     * NULL for kinds whose memory the program cannot allocate itself. */
    int (*owns)(const void *ptr);
    /* KIND_CAP_ASYNC_COPY: lands every write into this kind's memory this process issued on
     * queue, or on any queue (KIND_QUEUE_ALL). */
    void (*sync)(int queue);
    /* Optional: an atomic on a 4- or 8-byte word of this kind's memory (this PE's or an attached
     * peer's) that is atomic with respect to every other PE's, in stream order after the writes
     * issued on queue 0 before it; returns the previous value. Without it, only the owner updates
     * its words (read, modify, write under a lock), and peers ask it to. */
    uint64_t (*atomic)(void *word, enum transport_amo op, uint64_t value, uint64_t compare,
                       size_t size);
    /* Optional, with atomic: whether atomic may run on an attached peer's word (its device and
     * this PE's have atomics between them); without it, always. Otherwise its owner does it. */
    int (*atomic_reaches)(const void *word);
    /* Optional: acc[i] = op(acc[i], in[i]) for count elements of memory of this kind (acc a
     * scratch buffer of scratch(), in a heap here or attached), a write like copy_from_host on
     * queue 0. */
    void (*reduce)(void *acc, const void *in, size_t count, enum kind_reduction what);
    /* With reduce: this thread's device buffer of at least bytes, until its next call. */
    void *(*scratch)(size_t bytes);
    /* Optional, with reduce: the device that holds the memory of this kind at ptr (a heap here
     * or attached), as this process numbers devices; -1 if unknown. Reductions ask it whether
     * members share a device. */
    int (*device_of)(const void *ptr);
    /* Optional: host memory [base, base+len) (a host region's mapping, this PE's or a node
     * peer's) is about to be unmapped: forget what the kind holds on it (registrations). */
    void (*host_unmapping)(void *base, size_t len);
};

/* What a kind's memory cannot do with every node peer's (kind_ops.node_limits). */
enum kind_node_limit {
    KIND_NODE_UNREACHABLE = 1,   /* some node peer's memory is not to be attached here */
    KIND_NODE_OWNER_ATOMICS = 2, /* some attached peer's words take their owner's atomics */
};

static inline int kind_can(const struct kind_ops *kind, enum kind_cap cap)
{
    return (kind->caps & cap) != 0;
}

extern const struct kind_ops kind_host;
/* A testing aid: memory that behaves like a GPU's (its addresses fault on load/store, every access
 * goes through the copy functions, private buffers included), so device routing and staging are
 * exercised without a GPU. */
extern const struct kind_ops kind_testdev;
/* How a GPU kind is set up. */
struct kind_gpu_setup {
    const char *runtime_path; /* a testing knob's stand-in for the runtime, or NULL */
    int ordinal;              /* the device, as the runtime numbers it in this process */
    int n_pes;                /* the job's */
    int copy_engines_only;    /* small writes as copies, never the scatter kernel */
};
/* The kind of a CUDA GPU of the PE, where the build found cuda.h (STRATA_HAVE_CUDA): sets the
 * device up as setup says (runtime_path NULL: libcuda.so.1), once per device, and returns its
 * kind, or NULL with the reason in why. Each device a PE uses is a kind of its own. */
const struct kind_ops *kind_cuda_use(const struct kind_gpu_setup *setup, char *why, size_t whylen);
/* As kind_cuda_use for an AMD GPU, where the build found the HIP headers (STRATA_HAVE_HIP;
 * runtime_path NULL: libamdhip64, as hip.c looks for it). A process uses one of the two runtimes:
 * the other then refuses to be set up. */
const struct kind_ops *kind_hip_use(const struct kind_gpu_setup *setup, char *why, size_t whylen);
/* The test device's private buffers, as the program allocates them (shmemx.h). Freeing
 * returns -1, and frees nothing, where ptr is not the start of such a buffer. */
void *kind_testdev_private_alloc(size_t size);
int kind_testdev_private_free(void *ptr);

/* The device kind of a pointer that is no region's, or NULL for host memory. Cheap while no kind
 * that can own private buffers is in use (kind_private_use). */
const struct kind_ops *kind_private_owner(const void *ptr);
/* A kind whose memory the program may allocate itself is in use from now on. */
void kind_private_use(const struct kind_ops *kind);
extern int kind_private_kinds;

/* Host mappings of regions: kinds that keep state on host memory (kind_watch_host) hear of each
 * one before it goes. */
void kind_watch_host(const struct kind_ops *kind);
void kind_host_unmapping(void *base, size_t len);

/* Asynchronous writes (KIND_CAP_ASYNC_COPY). A write's result is owed once it was issued: to its
 * context's next quiet or fence (a put), or at once where the library reads it back or tells a
 * peer it is done (an owner's write, a device atomic, a get, calloc's zeroing). */
/* Bit q: some asynchronous write on queue q may not have landed. Hidden, so quiet reads it in one
 * instruction. */
extern unsigned kind_unlanded __attribute__((visibility("hidden")));
void kind_wrote_async(const struct kind_ops *kind, int queue);
/* Called after each write into kind's memory on queue (once issued). */
static inline void kind_wrote(const struct kind_ops *kind, int queue)
{
    if (kind_can(kind, KIND_CAP_ASYNC_COPY))
        kind_wrote_async(kind, queue);
}
/* Lands every asynchronous write issued so far, of every kind and queue. */
void kind_land_all(void);
/* Lands the asynchronous writes issued so far on queue, of every kind. */
void kind_land_queue(int queue);
/* Lands kind's writes on queue now, when it has asynchronous ones. */
static inline void kind_land(const struct kind_ops *kind, int queue)
{
    if (kind_can(kind, KIND_CAP_ASYNC_COPY))
        kind->sync(queue);
}

/* Every space's local base is aligned to kind_base_alignment(size) (the heap size rounded up to
 * a power of two, at most KIND_MAX_BASE_ALIGN), the same on every PE: the largest alignment an
 * allocation can be promised. */
#define KIND_MAX_BASE_ALIGN ((size_t)1 << 30)
size_t kind_base_alignment(size_t size);
/* The address wished for the heap of region id (of size bytes) on every PE, so that the members
 * of a space find their heaps at one address (IDENT_ADDR) where their kind can place memory: a
 * slot of KIND_IDENT_SLOT per id from KIND_IDENT_BASE. NULL when the heap is larger than a slot
 * or addresses are narrower than 64 bits. */
#define KIND_IDENT_BASE ((uintptr_t)17 << 40)
#define KIND_IDENT_SLOT ((size_t)1 << 40)
void *kind_ident_address(int id, size_t size);
/* Reserves len bytes of address space, without access, at that alignment, followed by a guard
 * of KIND_GUARD_BYTES that stays without access (NULL on failure): costs no memory. A transfer
 * that runs past the end of a heap then faults at once instead of overwriting whatever mapping
 * the kernel placed next (often another heap of the job, or the library's own words). */
#define KIND_GUARD_BYTES ((size_t)1 << 20)
void *kind_reserve_aligned(size_t len);
/* Returns a reservation of kind_reserve_aligned (len as given there), guard included. */
void kind_release(void *base, size_t len);

/* Creates and sizes a shared-memory file, for host heaps and the static data segment: mem->fd
 * is its descriptor, and it has no name (node peers open it through this PE's descriptor). */
int kind_host_file_create(const char *prefix, size_t size, struct kind_mem *mem);

#endif
