/* SPDX-License-Identifier: BSD-3-Clause */
/* A kind per GPU device a PE uses: the kind operations (kind.h) take no device, so each slot of
 * gpu_devices has a table of its own whose functions call the gpu_* operations (gpu.h) with that
 * slot's device. The tables and their functions are generated from one list of the operations.
 * A slot's table is filled in when gpu_use sets its device up, with the optional operations its
 * runtime has. */
#include "gpu.h"

/* X(SLOT, RETURN, TYPE, NAME, PARAMETERS, ARGUMENTS): every operation, with RETURN "return"
 * where it returns a value. */
#define GPU_KIND_OPERATIONS(X, S)                                                                  \
    X(S, return, int, create, (const char *prefix, size_t size, struct kind_mem *mem),             \
      (prefix, size, mem))                                                                         \
    X(S, , void, destroy, (struct kind_mem * mem), (mem))                                          \
    X(S, return, int, export, (const struct kind_mem *mem, void *handle, size_t *len),             \
      (mem, handle, len))                                                                          \
    X(S, return, void *, attach, (const void *handle, size_t len, size_t size),                    \
      (handle, len, size))                                                                         \
    X(S, , void, detach, (void *addr, size_t size), (addr, size))                                  \
    X(S, return, int, reaches, (const void *handle, size_t len), (handle, len))                    \
    X(S, return, unsigned, node_limits, (void), ())                                                \
    X(S, , void, copy_to_host, (void *dst, const void *src, size_t len), (dst, src, len))          \
    X(S, , void, copy_from_host, (void *dst, const void *src, size_t len, int queue),              \
      (dst, src, len, queue))                                                                      \
    X(S, , void, fill, (void *dst, int byte, size_t len, int queue), (dst, byte, len, queue))      \
    X(S, , void, copy, (void *dst, const void *src, size_t len, int queue),                        \
      (dst, src, len, queue))                                                                      \
    X(S, return, int, owns, (const void *ptr), (ptr))                                              \
    X(S, , void, sync, (int queue), (queue))                                                       \
    X(S, return, uint64_t, atomic,                                                                 \
      (void *word, enum transport_amo op, uint64_t value, uint64_t compare, size_t size),          \
      (word, op, value, compare, size))                                                            \
    X(S, return, int, atomic_reaches, (const void *word), (word))                                  \
    X(S, , void, reduce, (void *acc, const void *in, size_t count, enum kind_reduction what),      \
      (acc, in, count, what))                                                                      \
    X(S, return, void *, scratch, (size_t bytes), (bytes))                                         \
    X(S, return, int, device_of, (const void *ptr), (ptr))                                         \
    X(S, , void, host_unmapping, (void *base, size_t len), (base, len))

/* The slots, as many as GPU_DEVICES_MAX. */
#define GPU_SLOTS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define GPU_SLOT_COUNT(S) +1
_Static_assert(0 GPU_SLOTS(GPU_SLOT_COUNT) == GPU_DEVICES_MAX, "a table per slot");

#define GPU_WITH(...) , ##__VA_ARGS__
#define GPU_OPERATION(S, RETURN, TYPE, NAME, PARAMETERS, ARGUMENTS)                                \
    static TYPE gpu_##NAME##_##S PARAMETERS                                                        \
    {                                                                                              \
        RETURN gpu_##NAME(&gpu_devices[S] GPU_WITH ARGUMENTS);                                     \
    }
#define GPU_SLOT_OPERATIONS(S) GPU_KIND_OPERATIONS(GPU_OPERATION, S)
GPU_SLOTS(GPU_SLOT_OPERATIONS)

#define GPU_FIELD(S, RETURN, TYPE, NAME, PARAMETERS, ARGUMENTS) .NAME = gpu_##NAME##_##S,
#define GPU_SLOT_TABLE(S) {GPU_KIND_OPERATIONS(GPU_FIELD, S)},
static const struct kind_ops gpu_slot_operations[GPU_DEVICES_MAX] = {GPU_SLOTS(GPU_SLOT_TABLE)};

static struct kind_ops gpu_slot_kinds[GPU_DEVICES_MAX];

const struct kind_ops *gpu_slot_ops(int slot)
{
    const struct gpu_runtime *rt = gpu_devices[slot].rt;
    struct kind_ops *kind = &gpu_slot_kinds[slot];
    *kind = gpu_slot_operations[slot];
    kind->name = rt->kind_name;
    kind->caps = KIND_CAP_PEER_ATTACH | KIND_CAP_TRANSPORT | KIND_CAP_ASYNC_COPY;
    kind->mem_type = rt->mem_type;
    if (!rt->atomic) {
        kind->atomic = NULL;
        kind->atomic_reaches = NULL;
    }
    if (!rt->reduce) {
        kind->reduce = NULL;
        kind->scratch = NULL;
        kind->device_of = NULL;
    }
    return kind;
}
