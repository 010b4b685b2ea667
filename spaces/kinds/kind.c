/* SPDX-License-Identifier: BSD-3-Clause */
/* What every kind shares: aligned reservations with a guard, the kinds whose memory the program
 * may allocate itself, the kinds that watch host mappings, and the landing of asynchronous writes
 * (kind.h). */
#include "kind.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

/* 64 slots of 1 TiB from 17 TiB: on x86-64 Linux (47-bit user addresses) a program and its data
 * load from 85 TiB and mappings grow down from near 128 TiB, so this range is free in every
 * process that maps less than about 40 TiB; it starts above AddressSanitizer's shadow memory,
 * which ends just past 16 TiB. Where a process already uses a slot the kind places
 * the heap elsewhere, and the space is not IDENT_ADDR. */
void *kind_ident_address(int id, size_t size)
{
    if (sizeof(uintptr_t) < 8 || size > KIND_IDENT_SLOT || id < 0 || id >= 64)
        return NULL;
    return (void *)(KIND_IDENT_BASE + (uintptr_t)id * KIND_IDENT_SLOT);
}

size_t kind_base_alignment(size_t size)
{
    size_t align = 4096;
    while (align < size && align < KIND_MAX_BASE_ALIGN)
        align <<= 1;
    return align;
}

/* len bytes at align, then the guard: the rest of an oversized reservation is returned. */
static void *kind_reserve(size_t len, size_t align)
{
    size_t span = len + KIND_GUARD_BYTES;
    char *reserved =
        mmap(NULL, span + align - 1, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED)
        return NULL;
    char *aligned = (char *)(((uintptr_t)reserved + align - 1) & ~(uintptr_t)(align - 1));
    if (aligned > reserved)
        munmap(reserved, (size_t)(aligned - reserved));
    size_t tail = (size_t)(reserved + span + align - 1 - (aligned + span));
    if (tail)
        munmap(aligned + span, tail);
    return aligned;
}

void *kind_reserve_aligned(size_t len)
{
    return kind_reserve(len, kind_base_alignment(len));
}

void kind_release(void *base, size_t len)
{
    munmap(base, len + KIND_GUARD_BYTES);
}

/* ---- Sets of kinds ----
 * Few kinds, added once and never removed: a fixed array that readers walk without a lock up to
 * a count published after the entry. */
#define KIND_SET_MAX 16 /* the test device and the GPUs a PE uses (gpu.h), with room */
struct kind_set {
    const struct kind_ops *kinds[KIND_SET_MAX];
    int *count;
};
static pthread_mutex_t kind_set_lock = PTHREAD_MUTEX_INITIALIZER;

static int kind_set_has(const struct kind_set *set, int n, const struct kind_ops *kind)
{
    for (int i = 0; i < n; i++)
        if (set->kinds[i] == kind)
            return 1;
    return 0;
}

static void kind_set_add(struct kind_set *set, const struct kind_ops *kind)
{
    if (kind_set_has(set, __atomic_load_n(set->count, __ATOMIC_ACQUIRE), kind))
        return;
    pthread_mutex_lock(&kind_set_lock);
    int n = *set->count;
    if (!kind_set_has(set, n, kind) && n < KIND_SET_MAX) {
        set->kinds[n] = kind;
        __atomic_store_n(set->count, n + 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&kind_set_lock);
}

/* ---- Private buffers ---- */
int kind_private_kinds;
static struct kind_set kind_private = {.count = &kind_private_kinds};

void kind_private_use(const struct kind_ops *kind)
{
    kind_set_add(&kind_private, kind);
}

const struct kind_ops *kind_private_owner(const void *ptr)
{
    int n = __atomic_load_n(&kind_private_kinds, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (kind_private.kinds[i]->owns(ptr))
            return kind_private.kinds[i];
    return NULL;
}

/* ---- Host mappings ---- */
static int kind_watcher_count;
static struct kind_set kind_watchers = {.count = &kind_watcher_count};

void kind_watch_host(const struct kind_ops *kind)
{
    kind_set_add(&kind_watchers, kind);
}

void kind_host_unmapping(void *base, size_t len)
{
    int n = __atomic_load_n(&kind_watcher_count, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        kind_watchers.kinds[i]->host_unmapping(base, len);
}

/* ---- Asynchronous writes ---- */
_Static_assert(KIND_QUEUES <= 8 * sizeof(unsigned), "a bit of kind_unlanded per queue");
unsigned kind_unlanded;
static int kind_async_count;
static struct kind_set kind_async = {.count = &kind_async_count};

void kind_wrote_async(const struct kind_ops *kind, int queue)
{
    kind_set_add(&kind_async, kind);
    __atomic_fetch_or(&kind_unlanded, 1u << queue, __ATOMIC_RELEASE);
}

static void kind_sync_all_kinds(int queue)
{
    int n = __atomic_load_n(&kind_async_count, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        kind_async.kinds[i]->sync(queue);
}

/* Both clear first: a write issued meanwhile sets its bit again, so none is ever forgotten. */
void kind_land_all(void)
{
    __atomic_store_n(&kind_unlanded, 0, __ATOMIC_SEQ_CST);
    kind_sync_all_kinds(KIND_QUEUE_ALL);
}

void kind_land_queue(int queue)
{
    unsigned bit = 1u << queue;
    if (__atomic_fetch_and(&kind_unlanded, ~bit, __ATOMIC_SEQ_CST) & bit)
        kind_sync_all_kinds(queue);
}
