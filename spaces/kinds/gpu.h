/* SPDX-License-Identifier: BSD-3-Clause */
/* What the GPU kinds (CUDA, HIP) share: gpu.c (set-up, heaps, IPC, pinned host memory, copies)
 * and gpu_batch.c (small writes applied together), driven by a table of the runtime's calls that
 * cuda.c and hip.c supply. The kind's work goes on a stream of the runtime per queue (kind.h), so
 * per context, in the order issued there.
 *
 * A process uses one GPU runtime: the first whose kind is set up. (A node with both vendors' GPUs
 * would need two instances of this state; none has been met.) */
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

/* A runtime's calls in the core's terms. Calls returning int return the runtime's error code, 0
 * on success (CUDA_SUCCESS, hipSuccess). */
struct gpu_runtime {
    const char *name;            /* "CUDA", "HIP": in messages */
    const struct kind_ops *kind; /* the kind these calls are */
    /* Loads the runtime (path: a testing knob's stand-in, or NULL for the system's), and sets up
     * device ordinal. Returns 0, or -1 with the reason in why. */
    int (*open)(const char *path, int ordinal, char *why, size_t whylen);
    /* Makes the library's context (HIP: device) current on the calling thread and returns what
     * was current there, which leave makes current again: the program's threads keep their own
     * context and device across every call of the library. End the process when they cannot. */
    uintptr_t (*enter)(void);
    void (*leave)(uintptr_t previous);
    /* size bytes of device memory, at wish (NULL: anywhere) and aligned to align where the
     * runtime can place it. */
    int (*alloc)(void **ptr, size_t size, size_t align, void *wish);
    int (*free)(void *ptr);
    int (*copy_async)(void *dst, const void *src, size_t len, void *stream);
    int (*fill_async)(void *dst, int byte, size_t len, void *stream);
    int (*stream_create)(void **stream); /* one the program's default stream never waits for */
    int (*stream_sync)(void *stream);
    /* Whether the program reset the device (or destroyed the library's context) since set-up,
     * stream being one the library made: its memory, streams and registrations are then gone.
     * Callable with nothing entered. */
    int (*lost)(void *stream);
    int (*ipc_get)(void *handle, void *block); /* GPU_IPC_HANDLE bytes naming an allocation */
    int (*ipc_open)(void **block, const void *handle);
    int (*ipc_close)(void *block);
    int (*host_register)(void *ptr, size_t len);
    int (*host_unregister)(void *ptr);
    int (*host_alloc_mapped)(void **ptr, size_t len); /* pinned, and mapped for the GPU */
    /* The registration (or pinned allocation) of host memory that holds ptr, whoever made it;
     * an error when ptr is pageable. */
    int (*host_range)(const void *ptr, uintptr_t *start, size_t *len);
    enum gpu_memory (*memory)(const void *ptr);
    /* The devices of the node as this process numbers them: how many, the PCI bus id of one
     * ("0000:3b:00.0"), the one of a bus id (-1: not visible here), and what the PE's device may
     * do with another's memory (enum gpu_peer; its own: everything). */
    int (*device_count)(void);
    int (*device_busid)(int ordinal, char *busid, int len);
    int (*device_by_busid)(const char *busid);
    unsigned (*peer)(int ordinal);
    /* Optional: issues count writes (entries and data in mapped host memory) as one kernel on
     * stream; without it (or with gpu_copy_engines_only) each write of a batch is a copy of its
     * own. */
    void (*scatter)(const struct gpu_batch_entry *entries, const char *data, unsigned count,
                    void *stream);
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
    .device_by_busid = P##_device_by_busid, .peer = P##_peer

/* ---- The set-up runtime (gpu.c) ---- */
extern const struct gpu_runtime *gpu_rt;
/* The stream of queue (0 .. KIND_QUEUES - 1), made on first use; queue 0's is made at set-up and
 * also carries the library's kernels (atomics, reductions). */
void *gpu_stream(int queue);

/* Sets the kind of rt up as setup says, once; returns 0, or -1 with the reason in why (the runtime
 * does not load, the device cannot be used, another runtime is in use). */
int gpu_use(const struct gpu_runtime *rt, const struct kind_gpu_setup *setup, char *why,
            size_t whylen);
/* Small writes are copies on the copy engines, never the scatter kernel (the setup's wish). */
extern int gpu_copy_engines_only;
/* Ends the process with a message naming what failed, unless rc is success (0). */
void gpu_check(int rc, const char *what);
/* Whether the program reset the device under the library (gpu_runtime.lost), from then on. */
int gpu_device_lost(void);
/* What the PE's device may do with the memory of device ordinal (enum gpu_peer), as found at
 * set-up. */
unsigned gpu_peer_of(int ordinal);

/* Enters the runtime (gpu_runtime.enter) for the rest of the enclosing block and leaves it on
 * every way out of the block, early returns included. */
#define GPU_ENTERED                                                                                \
    uintptr_t gpu_entered_ __attribute__((cleanup(gpu_leave_scope), unused)) = gpu_rt->enter()
void gpu_leave_scope(const uintptr_t *previous);

/* The kind operations every GPU kind shares, to be spread into its kind_ops. */
int gpu_create(const char *prefix, size_t size, struct kind_mem *mem);
void gpu_destroy(struct kind_mem *mem);
int gpu_export(const struct kind_mem *mem, void *handle, size_t *len);
void *gpu_attach(const void *handle, size_t len, size_t size);
void gpu_detach(void *addr, size_t size);
void gpu_copy_to_host(void *dst, const void *src, size_t len);
void gpu_copy_from_host(void *dst, const void *src, size_t len, int queue);
void gpu_copy(void *dst, const void *src, size_t len, int queue);
void gpu_fill(void *dst, int byte, size_t len, int queue);
int gpu_owns(const void *ptr);
void gpu_sync(int queue);
void gpu_host_unmapping(void *base, size_t len);
int gpu_reaches(const void *handle, size_t len);
unsigned gpu_node_limits(void);
#define GPU_KIND_CAPS (KIND_CAP_PEER_ATTACH | KIND_CAP_TRANSPORT | KIND_CAP_ASYNC_COPY)
#define GPU_KIND_OPS                                                                               \
    .create = gpu_create, .destroy = gpu_destroy, .export = gpu_export, .attach = gpu_attach,      \
    .detach = gpu_detach, .copy_to_host = gpu_copy_to_host, .copy_from_host = gpu_copy_from_host,  \
    .copy = gpu_copy, .fill = gpu_fill, .owns = gpu_owns, .sync = gpu_sync,                        \
    .host_unmapping = gpu_host_unmapping, .reaches = gpu_reaches, .node_limits = gpu_node_limits

/* ---- Batched small writes (gpu_batch.c): each queue's own, applied on its stream ---- */
#define GPU_BATCH_SMALL 512 /* bytes: larger writes are copies of their own */
/* Queues a write of len (at most GPU_BATCH_SMALL) bytes of src to dst; src is copied now. */
void gpu_batch_write(int queue, void *dst, const void *src, size_t len);
/* Queues a copy of len (at most GPU_BATCH_SMALL) bytes of GPU memory at src to dst; src is read
 * when the batch runs. */
void gpu_batch_copy(int queue, void *dst, const void *src, size_t len);
/* Issues queue's batched writes on its stream. Called before any other work is issued there, so
 * the stream applies every write in the order the library made it. */
void gpu_batch_flush(int queue);
/* Issues queue's batched writes and waits for everything on its stream. */
void gpu_batch_sync(int queue);

#endif
