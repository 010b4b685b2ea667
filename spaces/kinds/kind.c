/* What every kind shares: aligned reservations with a guard, and the kinds whose memory the
 * program may allocate itself (kind.h). */
#include "kind.h"

#include <stdint.h>
#include <sys/mman.h>

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

/* ---- Private buffers ----
 * Few kinds, registered once and never removed: a fixed array read without a lock. */
#define KIND_PRIVATE_MAX 4
static const struct kind_ops *kind_private[KIND_PRIVATE_MAX];
int kind_private_kinds;

void kind_private_use(const struct kind_ops *kind)
{
    for (int i = 0; i < __atomic_load_n(&kind_private_kinds, __ATOMIC_ACQUIRE); i++)
        if (kind_private[i] == kind)
            return;
    if (kind_private_kinds < KIND_PRIVATE_MAX) {
        kind_private[kind_private_kinds] = kind;
        __atomic_store_n(&kind_private_kinds, kind_private_kinds + 1, __ATOMIC_RELEASE);
    }
}

const struct kind_ops *kind_private_owner(const void *ptr)
{
    int n = __atomic_load_n(&kind_private_kinds, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (kind_private[i]->owns(ptr))
            return kind_private[i];
    return NULL;
}
