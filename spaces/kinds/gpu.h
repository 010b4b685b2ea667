/* SPDX-License-Identifier: BSD-3-Clause */
/* What the GPU kinds (CUDA, HIP) share: gpu.c (set-up, heaps, IPC, pinned host memory, copies),
 * gpu_batch.c (small writes applied together) and gpu_slots.c (a kind per device), driven by a
 * table of the runtime's calls that cuda.c and hip.c supply. The kind's work goes on a stream of
 * the runtime per queue (kind.h), so per context, in the order issued there.
 *
 * A PE may use several devices of its runtime (a space per device): each is a struct gpu_device
 * with its own streams, batches, peers and runtime state, and its own kind, whose operations are
 * the gpu_* functions below bound to it. A process uses one GPU runtime: the first whose kind is
 * set up. */
#ifndef STRATA_GPU_H
#define STRATA_GPU_H

#include "kind.h"

#include <stdint.h>

/* What a pointer is to the runtime. */
enum gpu_memory {
    GPU_MEMORY_PAGEABLE, /* host memory the runtime stages through its own buffers */
    GPU_MEMORY_PINNED,   /* host memory it reads by DMA, after a copy returns */
    GPU_MEMORY_DEVICE,   /* memory of a GPU */
};

/* What a device may do with another's memory (gpu_runtime.peer). */
enum gpu_peer {
    GPU_PEER_ACCESS = 1,  /* copies and kernels reach it (peer access) */
    GPU_PEER_ATOMICS = 2, /* and its kernels' atomics on it are atomic (native peer atomics) */
};

/* The bytes of an IPC handle (CUipcMemHandle, hipIpcMemHandle_t). */
#define GPU_IPC_HANDLE 64

/* One write of a batch: len bytes at offset in its data to dst. */
struct gpu_batch_entry {
    uint64_t dst, offset, len;
};

struct gpu_device;

/* A runtime's calls in the core's terms. Calls returning int return the runtime's error code, 0
 * on success (CUDA_SUCCESS, hipSuccess). Those given a device act for it (its context); the
 * others work in whatever context is entered. */
struct gpu_runtime {
    const char *name;                 /* "CUDA", "HIP": in messages */
    const char *kind_name;            /* its kinds' name ("cuda") */
    enum transport_mem_type mem_type; /* what the transport must reach in its memory */
    /* Loads the runtime (path: a testing knob's stand-in, or NULL for the system's), and sets up
     * device ordinal for dev, keeping what the runtime needs of it in dev->state. Returns 0, or
     * -1 with the reason in why. */
    int (*open)(struct gpu_device *dev, const char *path, int ordinal, char *why, size_t whylen);
    /* Makes dev's context (HIP: device) current on the calling thread and returns what was
     * current there, which leave makes current again: the program's threads keep their own
     * context and device across every call of the library. End the process when they cannot. */
    uintptr_t (*enter)(struct gpu_device *dev);
    void (*leave)(struct gpu_device *dev, uintptr_t previous);
    /* size bytes of dev's memory, at wish (NULL: anywhere) and aligned to align where the
     * runtime can place it. */
    int (*alloc)(struct gpu_device *dev, void **ptr, size_t size, size_t align, void *wish);
    int (*free)(void *ptr);
    int (*copy_async)(void *dst, const void *src, size_t len, void *stream);
    int (*fill_async)(void *dst, int byte, size_t len, void *stream);
    /* One the program's default stream never waits for. */
    int (*stream_create)(struct gpu_device *dev, void **stream);
    int (*stream_sync)(void *stream);
    /* Whether the program reset dev (or destroyed the library's context) since set-up, stream
     * being one the library made: its memory, streams and registrations are then gone.
     * Callable with nothing entered. */
    int (*lost)(struct gpu_device *dev, void *stream);
    int (*ipc_get)(void *handle, void *block); /* GPU_IPC_HANDLE bytes naming an allocation */
    int (*ipc_open)(struct gpu_device *dev, void **block, const void *handle);
    int (*ipc_close)(void *block);
    int (*host_register)(void *ptr, size_t len);
    int (*host_unregister)(void *ptr);
    int (*host_alloc_mapped)(void **ptr, size_t len); /* pinned, and mapped for the GPU */
    /* The registration (or pinned allocation) of host memory that holds ptr, whoever made it;
     * an error when ptr is pageable. */
    int (*host_range)(const void *ptr, uintptr_t *start, size_t *len);
    enum gpu_memory (*memory)(const void *ptr);
    /* The devices of the node as this process numbers them: how many, the PCI bus id of one
     * ("0000:3b:00.0"), the one of a bus id (-1: not visible here), and what dev may do with
     * another's memory (enum gpu_peer; its own: everything). */
    int (*device_count)(void);
    int (*device_busid)(int ordinal, char *busid, int len);
    int (*device_by_busid)(const char *busid);
    unsigned (*peer)(struct gpu_device *dev, int ordinal);
    /* ---- A stream of the program's (gpu_stream.c) ----
     * What owns work on dev, and on stream (a destroyed stream is an error): the CUDA context, the
     * HIP device + 1. swap_current makes an owner current on the thread, returning what was. */
    uintptr_t (*owner)(struct gpu_device *dev);
    int (*stream_owner)(void *stream, uintptr_t *owner);
    uintptr_t (*swap_current)(uintptr_t owner);
    /* Stream memory operations on a 64-bit word of device or mapped pinned memory: a write after
     * the stream's earlier work, and a wait for *word == value (equal) or >= value. */
    int (*write_value)(void *stream, void *word, uint64_t value);
    int (*wait_value)(void *stream, const void *word, uint64_t value, int equal);
    int (*capturing)(void *stream, int *capturing);
    /* The calling thread's unsafe calls (allocations, synchronous copies) are allowed while
     * another thread captures a stream. */
    void (*capture_relax)(void);
    /* Optional: issues count writes (entries and data in mapped host memory) as one kernel on
     * stream, of dev; without it (or with gpu_copy_engines_only) each write of a batch is a copy
     * of its own. */
    void (*scatter)(struct gpu_device *dev, const struct gpu_batch_entry *entries, const char *data,
                    unsigned count, void *stream);
    /* Optional: the kind operations of the same names (kind.h) run by kernels on dev, and the
     * device of the memory at ptr (with reduce). */
    uint64_t (*atomic)(struct gpu_device *dev, void *word, enum transport_amo op, uint64_t value,
                       uint64_t compare, size_t size);
    void (*reduce)(struct gpu_device *dev, void *acc, const void *in, size_t count,
                   enum kind_reduction what);
    void *(*scratch)(struct gpu_device *dev, size_t bytes);
    int (*device_of)(struct gpu_device *dev, const void *ptr);
    /* Optional: readies dev's kernels when a heap is made on it, so that none is loaded (nor
     * memory allocated) by a call that a program captures into a graph. */
    void (*prepare)(struct gpu_device *dev);
    /* Optional, kernels on a stream of the program's: a wait until *word cmp value (SHMEM_CMP_*),
     * and an atomic on an 8-byte word whose old value nobody reads. */
    int (*wait_kernel)(struct gpu_device *dev, void *stream, const void *word, int cmp,
                       uint64_t value);
    int (*atomic_async)(struct gpu_device *dev, void *stream, void *word, enum transport_amo op,
                        uint64_t value);
};

/* The calls every runtime supplies, as <prefix>_<call> functions of its kind's file. */
#define GPU_RUNTIME_CALLS(P)                                                                       \
    .open = P##_open, .enter = P##_enter, .leave = P##_leave, .alloc = P##_alloc,                  \
    .free = P##_free, .copy_async = P##_copy_async, .fill_async = P##_fill_async,                  \
    .stream_create = P##_stream_create, .stream_sync = P##_stream_sync, .lost = P##_lost,          \
    .ipc_get = P##_ipc_get, .ipc_open = P##_ipc_open, .ipc_close = P##_ipc_close,                  \
    .host_register = P##_host_register, .host_unregister = P##_host_unregister,                    \
    .host_alloc_mapped = P##_host_alloc_mapped, .host_range = P##_host_range,                      \
    .memory = P##_memory, .device_count = P##_device_count, .device_busid = P##_device_busid,      \
    .device_by_busid = P##_device_by_busid, .peer = P##_peer, .owner = P##_owner,                  \
    .stream_owner = P##_stream_owner, .swap_current = P##_swap_current,                            \
    .write_value = P##_write_value, .wait_value = P##_wait_value, .capturing = P##_capturing,      \
    .capture_relax = P##_capture_relax

/* ---- The devices a PE uses (gpu.c) ---- */
#define GPU_DEVICES_MAX 8  /* at once, per PE */
#define GPU_MAX_DEVICES 64 /* of a node */
struct gpu_batch_pair;
struct gpu_device {
    const struct gpu_runtime *rt;
    int slot;    /* its index in gpu_devices (and its kind's in gpu_slots.c) */
    int ordinal; /* the runtime's number of the device, in this process */
    const struct kind_ops *kind;
    void *state;                     /* the runtime's own (its context) */
    void *streams[KIND_QUEUES];      /* made on first use, queue 0's at set-up */
    struct gpu_batch_pair *batch;    /* a pair per queue (gpu_batch.c) */
    char busid[32];                  /* the device's PCI bus id */
    int node_devices;                /* of the node, as this process sees them at set-up */
    unsigned peers[GPU_MAX_DEVICES]; /* what the device may do with each one's memory */
    unsigned limits;                 /* enum kind_node_limit, from peers */
    int lost;                        /* gpu_device_lost, once found */
};
extern struct gpu_device gpu_devices[GPU_DEVICES_MAX];

/* The stream of queue (0 .. KIND_QUEUES - 1) on dev, made on first use; queue 0's is made at
 * set-up and also carries the library's kernels (atomics, reductions). */
void *gpu_stream(struct gpu_device *dev, int queue);

/* Sets the device setup names up with runtime rt, once per device; returns its kind, or NULL
 * with the reason in why (the runtime does not load, the device cannot be used, another runtime
 * is in use, the PE uses GPU_DEVICES_MAX devices already). */
const struct kind_ops *gpu_use(const struct gpu_runtime *rt, const struct kind_gpu_setup *setup,
                               char *why, size_t whylen);
/* The kind operations of the device in slot, for gpu_use to bind (gpu_slots.c). */
const struct kind_ops *gpu_slot_ops(int slot);
/* Small writes are copies on the copy engines, never the scatter kernel (the setup's wish). */
extern int gpu_copy_engines_only;
/* Ends the process with a message naming what failed, unless rc is success (0). */
void gpu_check(struct gpu_device *dev, int rc, const char *what);
/* Whether the program reset dev under the library (gpu_runtime.lost), from then on. */
int gpu_device_lost(struct gpu_device *dev);
/* What dev may do with the memory of device ordinal (enum gpu_peer), as found at set-up. */
unsigned gpu_peer_of(const struct gpu_device *dev, int ordinal);

/* Enters dev's context (gpu_runtime.enter) for the rest of the enclosing block and leaves it on
 * every way out of the block, early returns included. */
struct gpu_entered {
    struct gpu_device *dev;
    uintptr_t previous;
};
#define GPU_ENTERED(DEV)                                                                           \
    struct gpu_entered gpu_entered_                                                                \
        __attribute__((cleanup(gpu_leave_scope), unused)) = {(DEV), (DEV)->rt->enter(DEV)}
void gpu_leave_scope(const struct gpu_entered *entered);

/* The kind operations (kind.h) of every GPU device, for dev: gpu_slots.c binds them. */
int gpu_create(struct gpu_device *dev, const char *prefix, size_t size, struct kind_mem *mem);
void gpu_destroy(struct gpu_device *dev, struct kind_mem *mem);
int gpu_export(struct gpu_device *dev, const struct kind_mem *mem, void *handle, size_t *len);
void *gpu_attach(struct gpu_device *dev, const void *handle, size_t len, size_t size);
void gpu_detach(struct gpu_device *dev, void *addr, size_t size);
int gpu_reaches(struct gpu_device *dev, const void *handle, size_t len);
unsigned gpu_node_limits(struct gpu_device *dev);
void gpu_copy_to_host(struct gpu_device *dev, void *dst, const void *src, size_t len);
void gpu_copy_from_host(struct gpu_device *dev, void *dst, const void *src, size_t len, int queue);
void gpu_fill(struct gpu_device *dev, void *dst, int byte, size_t len, int queue);
void gpu_copy(struct gpu_device *dev, void *dst, const void *src, size_t len, int queue);
int gpu_owns(struct gpu_device *dev, const void *ptr);
void gpu_sync(struct gpu_device *dev, int queue);
uint64_t gpu_atomic(struct gpu_device *dev, void *word, enum transport_amo op, uint64_t value,
                    uint64_t compare, size_t size);
int gpu_atomic_reaches(struct gpu_device *dev, const void *word);
void gpu_reduce(struct gpu_device *dev, void *acc, const void *in, size_t count,
                enum kind_reduction what);
void *gpu_scratch(struct gpu_device *dev, size_t bytes);
int gpu_device_of(struct gpu_device *dev, const void *ptr);
void gpu_host_unmapping(struct gpu_device *dev, void *base, size_t len);

/* ---- A stream of the program's (gpu_stream.c; the interface is stream.h) ---- */
/* Sets up what on-stream work needs of the runtime, with its first device (dev, entered): the
 * host words the handoff to the library's agent goes through. Returns 0 or -1. */
int gpu_stream_setup(struct gpu_device *dev);
/* The process's GPU runtime, once a device is set up (else NULL). */
const struct gpu_runtime *gpu_runtime_in_use(void);

/* ---- Batched small writes (gpu_batch.c): each queue's own, applied on its stream ---- */
#define GPU_BATCH_SMALL 512 /* bytes: larger writes are copies of their own */
/* dev's pairs of batches, one per queue (NULL when out of memory). */
struct gpu_batch_pair *gpu_batch_pairs_new(void);
/* Queues a write of len (at most GPU_BATCH_SMALL) bytes of src to dst; src is copied now. */
void gpu_batch_write(struct gpu_device *dev, int queue, void *dst, const void *src, size_t len);
/* Queues a copy of len (at most GPU_BATCH_SMALL) bytes of GPU memory at src to dst; src is read
 * when the batch runs. */
void gpu_batch_copy(struct gpu_device *dev, int queue, void *dst, const void *src, size_t len);
/* Issues queue's batched writes on its stream. Called before any other work is issued there, so
 * the stream applies every write in the order the library made it. */
void gpu_batch_flush(struct gpu_device *dev, int queue);
/* Issues queue's batched writes and waits for everything on its stream. */
void gpu_batch_sync(struct gpu_device *dev, int queue);

#endif
