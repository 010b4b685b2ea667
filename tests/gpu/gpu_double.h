/* SPDX-License-Identifier: BSD-3-Clause */
/* The core of the GPU runtimes' test doubles (tests/cuda/cuda_double.c, tests/hip/hip_double.c):
 * a device over host memory, so that the GPU kinds' own code (IPC between PEs, copies, streams,
 * pointer queries, the library's kernels) runs in every test run without a GPU. Each double is a
 * thin layer that gives these calls its runtime's names, types and error codes.
 *
 * As strict as a real device where the kinds could go wrong:
 * - Device addresses are reserved without access rights: a host load or store through one faults.
 *   The bytes live in a memory file (memfd) that an IPC handle names by process and descriptor,
 *   so another process of the user opens the same bytes through /proc; like device memory, it
 *   goes away with the process.
 * - Work on a stream runs only when the stream is synchronized (or, for a blocking stream, when a
 *   synchronous call runs on the legacy default stream). A copy from pageable host memory takes
 *   its source at issue, as the runtimes stage it; pinned and device sources are read when the
 *   copy runs, as DMA reads them.
 * - With STRATA_GPU_DOUBLE_ASYNC=1 each stream runs its work on a thread of its own, in order, as
 *   it comes, as a GPU runs it while the host goes on; stream memory operations (a write of a
 *   word, a wait for one) and capture into graphs replayed later work as on the runtimes, and a
 *   capture refuses what theirs refuse (synchronizing the stream, a copy from pageable memory,
 *   and in global mode allocations from threads that did not relax their mode).
 * - The library's kernels: the atomics strata_amo32/strata_amo64 run as host atomics on the shared
 *   bytes, so they are atomic between processes like the GPU's; the reductions
 *   strata_reduce_<op>_<type> and the batch scatter strata_scatter run as host loops, reading their
 *   inputs when they run. */
#ifndef STRATA_GPU_DOUBLE_H
#define STRATA_GPU_DOUBLE_H

#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))
#define DOUBLE_MEMORY ((size_t)4 << 30) /* each device's */
#define DOUBLE_IPC_HANDLE 64

/* What a call failed with; each double maps these to its runtime's codes. */
enum double_status {
    DOUBLE_OK,
    DOUBLE_INVALID_VALUE,
    DOUBLE_OUT_OF_MEMORY,
    DOUBLE_INVALID_HANDLE,
    DOUBLE_ALREADY_REGISTERED,
    DOUBLE_NOT_REGISTERED,
    DOUBLE_NOT_FOUND,
    DOUBLE_PEER_UNSUPPORTED,
    DOUBLE_CAPTURE_UNSUPPORTED, /* not allowed while a stream captures */
    DOUBLE_CAPTURE_INVALIDATED, /* the capture broke on something it does not allow */
};

/* ---- Several devices (gpu_double.c says how they reach each other) ---- */
int double_peer_access(int from, int to);
int double_peer_atomics(int from, int to);
/* The device whose work the calling thread issues from now on (its runtime's current one). */
void double_use_device(int device);

/* The devices reported: the environment variable's count (a double's own), default 1. */
int double_device_count(const char *variable);

/* ---- Device memory ---- */
enum double_status double_alloc(uintptr_t *dptr, size_t size, int device);
enum double_status double_free(uintptr_t dptr);
/* handle: DOUBLE_IPC_HANDLE bytes naming the allocation at dptr. */
enum double_status double_ipc_get(uintptr_t dptr, char *handle);
/* Opens the allocation a handle names for device (DOUBLE_PEER_UNSUPPORTED where it is another
 * device's and device has no peer access to it). */
enum double_status double_ipc_open(const char *handle, int device, uintptr_t *dptr);
enum double_status double_ipc_close(uintptr_t dptr);

/* ---- Virtual memory management: physical allocations mapped into reserved addresses ---- */
/* A physical allocation of size bytes of device: a memory file, or -1. */
int double_vmm_create(size_t size, int device);
/* Closes fd, a memory file of double_vmm_create or one imported from another process. */
int double_vmm_release(int fd);
/* The device of a memory file double_vmm_create made (in this process or another), or -1. */
int double_vmm_device(int fd);
/* size bytes of addresses without access, at wish where they are free and size is 32 MiB or
 * more, as the driver places them (wish 0: anywhere, aligned to align where it is more than the
 * 2 MiB the double aligns to anyway). */
enum double_status double_vmm_reserve(uintptr_t *dptr, size_t size, uintptr_t wish, size_t align);
void double_vmm_free_range(uintptr_t dptr, size_t size);
/* Maps size bytes of the allocation fd names at dptr (reserved); fd stays the caller's. */
enum double_status double_vmm_map(uintptr_t dptr, size_t size, int fd);
enum double_status double_vmm_unmap(uintptr_t dptr);
/* Whether p lies in a mapping of double_vmm_map. */
int double_vmm_mapped(uintptr_t p);

/* ---- Host memory the runtime reads by DMA ---- */
enum double_memory { DOUBLE_PAGEABLE, DOUBLE_PINNED, DOUBLE_DEVICE };
enum double_memory double_memory_of(uintptr_t p);
/* The device of the allocation (of this process, or opened by IPC) that holds p; -1 if none. */
int double_device_of(uintptr_t p);
/* The allocation or registration that holds p: DOUBLE_NOT_FOUND where p is pageable. */
enum double_status double_range_of(uintptr_t p, uintptr_t *start, size_t *size);
/* Refused (DOUBLE_ALREADY_REGISTERED) where any byte is registered already, as by the runtimes. */
enum double_status double_host_register(void *p, size_t size);
enum double_status double_host_unregister(void *p);
enum double_status double_host_alloc(void **p, size_t size);
/* How many bytes are registered (not allocated pinned): tests ask through each double. */
size_t double_registered_bytes(void);
/* How many bytes of device memory this process holds (allocations and physical allocations of
 * its own, not those it opened or imported): what the runtime's free memory falls by. */
size_t double_held_bytes(void);

/* ---- Streams: NULL is the legacy default stream, synchronous here ---- */
struct double_stream;
/* A stream of owner (the runtime's context or device, whose calls alone may use it); greatest:
 * made at the device's greatest priority. */
struct double_stream *double_stream_create(int blocking, const void *owner, int greatest);
const void *double_stream_owner(const struct double_stream *s);
/* Whether the stream still works: a device reset ends its owner's streams. */
int double_stream_alive(const struct double_stream *s);
/* A device reset (cudaDeviceReset, hipDeviceReset): owner's streams stop working, the memory of
 * device this process allocated, opened or mapped is gone, and so are its host registrations. */
void double_reset(int device, const void *owner);
/* How many streams were created, and how many of them below the greatest priority: tests ask
 * through each double. */
int double_streams_created(void);
/* How many batch scatters were launched. */
int double_scatters_launched(void);
int double_streams_below_greatest(void);
/* DOUBLE_CAPTURE_UNSUPPORTED (and the capture broken) where s is capturing. */
enum double_status double_stream_sync(struct double_stream *s);
/* Runs what was issued to s, then s is dead: its handle is refused from then on. */
void double_stream_destroy(struct double_stream *s);
/* Sets count 32-bit words at dst to value (cuMemsetD32Async, hipMemsetD32Async). */
enum double_status double_set32(uintptr_t dst, uint32_t value, size_t count,
                                struct double_stream *s);

/* ---- Stream memory operations: words of device memory or of pinned host memory ---- */
enum double_wait {
    DOUBLE_WAIT_GEQ, /* (int)(*word - value) >= 0, as the CUDA driver compares */
    DOUBLE_WAIT_EQ,
    DOUBLE_WAIT_AND, /* (*word & value) != 0 */
    DOUBLE_WAIT_NOR, /* ~(*word | value) != 0 */
    /* the library's wait kernel (strata_wait): SHMEM_CMP_EQ .. SHMEM_CMP_LE, unsigned */
    DOUBLE_WAIT_KERNEL_EQ,
    DOUBLE_WAIT_KERNEL_NE,
    DOUBLE_WAIT_KERNEL_GT,
    DOUBLE_WAIT_KERNEL_GE,
    DOUBLE_WAIT_KERNEL_LT,
    DOUBLE_WAIT_KERNEL_LE,
};
enum double_status double_write_value(uintptr_t word, uint64_t value, int bits,
                                      struct double_stream *s);
enum double_status double_wait_value(uintptr_t word, uint64_t value, int bits, enum double_wait how,
                                     struct double_stream *s);

/* ---- Capture (global: the runtimes' global mode, which forbids unsafe calls of every thread
 * that did not relax its own mode) ---- */
struct double_graph;
enum double_status double_capture_begin(struct double_stream *s, int global);
/* The graph captured, or DOUBLE_CAPTURE_INVALIDATED where the capture broke. */
enum double_status double_capture_end(struct double_stream *s, struct double_graph **graph);
int double_capturing(const struct double_stream *s);
/* Whether an unsafe call (an allocation, a registration, a synchronous copy) of this thread is
 * refused now; and the thread's mode set relaxed or not, returning what it was. */
int double_capture_forbids(void);
int double_capture_relax(int relaxed);
/* An executable graph (a copy, launched any number of times), its launch and its end. */
struct double_graph *double_graph_copy(const struct double_graph *g);
enum double_status double_graph_launch(const struct double_graph *g, struct double_stream *s);
void double_graph_destroy(struct double_graph *g);
enum double_status double_copy(uintptr_t dst, uintptr_t src, size_t len, struct double_stream *s);
enum double_status double_set(uintptr_t dst, int byte, size_t len, struct double_stream *s);

/* ---- The library's kernels, by name ---- */
struct double_kernel;
const struct double_kernel *double_kernel_named(const char *name);
/* Whether a module image holds the library's kernels (their PTX). */
int double_module_valid(const char *image);
/* Launches f with threads threads on s; params as the runtime's kernel parameters. */
enum double_status double_launch(const struct double_kernel *f, unsigned threads,
                                 struct double_stream *s, void **params);

#endif
