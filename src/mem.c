/* SPDX-License-Identifier: BSD-3-Clause */
/* Symmetric memory management on the default space (1.6 section 9.3). Allocation is collective:
 * every PE runs the same deterministic allocator on the same calls, so offsets agree without
 * communication, and an out-of-memory result is the same on every PE. */
#include "runtime.h"
#include "team.h"

#include <pthread.h>
#include <shmemx.h>
#include <string.h>

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;

static void *mem_alloc(const char *routine, struct space *space, size_t size, size_t align)
{
    runtime_require_init(routine);
    size_t offset;
    pthread_mutex_lock(&mem_lock);
    int rc = heap_alloc(space->allocator, size, align, &offset);
    pthread_mutex_unlock(&mem_lock);
    if (rc == 0) {
        LOG(LOG_MEM, routine, "%zu bytes (align %zu) at heap offset %zu", size, align, offset);
        return space->heap.base + offset;
    }
    if (rt.debug) {
        struct heap_stats stats;
        heap_stats(space->allocator, &stats);
        log_error(routine,
                  "out of symmetric memory: %zu bytes requested, %zu of %zu bytes free (largest "
                  "free block %zu)%s",
                  size, stats.free, space->heap.size, stats.largest_free,
                  space == rt.default_space ? "; set SHMEM_SYMMETRIC_SIZE larger" : "");
    }
    return NULL;
}

/* Returns the offset of a block start in space's heap, or reports and returns -1. */
static int mem_block_offset(const char *routine, struct space *space, const void *ptr,
                            size_t *offset)
{
    char *p = (char *)ptr;
    if (p >= space->heap.base && p < space->heap.base + space->heap.size) {
        *offset = (size_t)(p - space->heap.base);
        if (heap_block_size(space->allocator, *offset))
            return 0;
    }
    log_error(routine, "pointer %p was not returned by %s (or was already freed)", ptr,
              space == rt.default_space ? "shmem_malloc" : "shmem_space_malloc on this space");
    return -1;
}

static void mem_free(const char *routine, struct space *space, void *ptr)
{
    size_t offset;
    if (mem_block_offset(routine, space, ptr, &offset))
        return;
    LOG(LOG_MEM, routine, "block at heap offset %zu", offset);
    pthread_mutex_lock(&mem_lock);
    heap_free(space->allocator, offset);
    pthread_mutex_unlock(&mem_lock);
}

/* Zeroes a fresh block, through the kind where the library may not store into it. */
static void mem_zero(struct space *space, void *p, size_t size)
{
    const struct kind_ops *kind = space->heap.kind;
    if (kind_can(kind, KIND_CAP_LOAD_STORE)) {
        memset(p, 0, size);
    } else {
        kind->fill(p, 0, size, 0);
        kind_land(kind, 0); /* zero before any peer may write it */
    }
}

void *shmem_malloc(size_t size)
{
    if (!size)
        return NULL;
    void *p = mem_alloc("shmem_malloc", rt.default_space, size, 0);
    order_barrier_all();
    return p;
}

void *shmem_malloc_with_hints(size_t size, long hints)
{
    /* Every hint is a performance request (1.6 table "Memory usage hints"); all memory of the
     * default space already supports remote atomics and signals. */
    (void)hints;
    return shmem_malloc(size);
}

void *shmem_calloc(size_t count, size_t size)
{
    if (!count || !size)
        return NULL;
    void *p = NULL;
    if (count <= SIZE_MAX / size) {
        p = mem_alloc("shmem_calloc", rt.default_space, count * size, 0);
        if (p) /* before the barrier: peers may write right after it */
            mem_zero(rt.default_space, p, count * size);
    }
    order_barrier_all();
    return p;
}

/* An aligned block of space's heap, or NULL (reported under SHMEM_DEBUG) for an alignment the
 * heap cannot promise. */
static void *mem_align(const char *routine, struct space *space, size_t alignment, size_t size)
{
    size_t limit = space_align_limit(space);
    if (alignment && !(alignment & (alignment - 1)) && alignment <= limit)
        return mem_alloc(routine, space, size, alignment);
    if (rt.debug)
        log_error(routine, "alignment %zu is not a power of two of at most %zu bytes", alignment,
                  limit);
    return NULL;
}

void *shmem_align(size_t alignment, size_t size)
{
    if (!size)
        return NULL;
    runtime_require_init("shmem_align");
    void *p = mem_align("shmem_align", rt.default_space, alignment, size);
    order_barrier_all();
    return p;
}

void shmem_free(void *ptr)
{
    if (!ptr)
        return;
    runtime_require_init("shmem_free");
    /* The barrier comes first: no PE may still be using the block when it is reused. */
    order_barrier_all();
    mem_free("shmem_free", rt.default_space, ptr);
}

void *shmem_realloc(void *ptr, size_t size)
{
    if (!ptr)
        return shmem_malloc(size);
    if (!size) {
        shmem_free(ptr);
        return NULL;
    }
    runtime_require_init("shmem_realloc");
    order_barrier_all();
    size_t offset;
    if (mem_block_offset("shmem_realloc", rt.default_space, ptr, &offset))
        return NULL;
    struct space *space = rt.default_space;
    pthread_mutex_lock(&mem_lock);
    size_t old_size = heap_block_size(space->allocator, offset);
    void *result = ptr;
    if (heap_resize(space->allocator, offset, size)) {
        size_t new_offset;
        if (heap_alloc(space->allocator, size, 0, &new_offset) == 0) {
            result = space->heap.base + new_offset;
            size_t keep = old_size < size ? old_size : size;
            if (kind_can(space->heap.kind, KIND_CAP_LOAD_STORE))
                memcpy(result, ptr, keep);
            else /* device memory: staged through the kind by a get from this PE */
                shmem_getmem(result, ptr, keep, rt.my_pe);
            heap_free(space->allocator, offset);
        } else {
            result = NULL; /* the old block is unchanged */
        }
    }
    pthread_mutex_unlock(&mem_lock);
    order_barrier_all();
    return result;
}

/* Deprecated names the spec still lists. */
void *shmalloc(size_t size)
{
    return shmem_malloc(size);
}

void *shmemalign(size_t alignment, size_t size)
{
    return shmem_align(alignment, size);
}

void *shrealloc(void *ptr, size_t size)
{
    return shmem_realloc(ptr, size);
}

void shfree(void *ptr)
{
    shmem_free(ptr);
}

/* ---- Allocation in a space (the memory spaces proposal): collective on the space's team,
 * which they synchronize, as shmem_malloc does the world ---- */
/* The space behind a handle, or NULL for SHMEM_SPACE_INVALID and for PEs outside its team
 * (which keep no space of it). */
static struct space *mem_space(const char *routine, shmem_space_t handle)
{
    runtime_require_init(routine);
    return space_of_handle(routine, handle);
}

void *shmem_space_malloc(shmem_space_t handle, size_t size)
{
    struct space *space = mem_space("shmem_space_malloc", handle);
    if (!space || !size)
        return NULL;
    void *p = mem_alloc("shmem_space_malloc", space, size, 0);
    shmem_team_sync(space->members_team);
    return p;
}

void *shmemx_space_align(shmem_space_t handle, size_t alignment, size_t size)
{
    struct space *space = mem_space("shmemx_space_align", handle);
    if (!space || !size)
        return NULL;
    void *p = mem_align("shmemx_space_align", space, alignment, size);
    shmem_team_sync(space->members_team);
    return p;
}

void *shmem_space_calloc(shmem_space_t handle, size_t count, size_t size)
{
    struct space *space = mem_space("shmem_space_calloc", handle);
    if (!space || !count || !size)
        return NULL;
    void *p = NULL;
    if (count <= SIZE_MAX / size && (p = mem_alloc("shmem_space_calloc", space, count * size, 0)))
        mem_zero(space, p, count * size);
    shmem_team_sync(space->members_team);
    return p;
}

void shmem_space_free(shmem_space_t handle, void *ptr)
{
    struct space *space = mem_space("shmem_space_free", handle);
    if (!space || !ptr)
        return;
    order_quiet_all(); /* this PE's writes into the block are done before anyone reuses it */
    shmem_team_sync(space->members_team);
    mem_free("shmem_space_free", space, ptr);
}
