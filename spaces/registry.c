/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry: every region, sorted by local base address. There are a handful of regions, so a
 * binary search over a small array behind a two-entry cache beats any hash.
 *
 * Lookups run on every RMA and atomic, from any thread, while another thread may create or
 * destroy a space. They take no lock: the array is a sequence lock's data (a writer makes the
 * version odd while it shifts entries, a reader retries when the version moved under it), its
 * entries hold copies of each region's range so that a reader never follows a pointer to a
 * region being removed, and each thread caches its own last two hits, tagged with the version it
 * was found under. */
#include "space.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

#define REGISTRY_MAX 128

struct registry_entry {
    uintptr_t base;
    size_t size;
    struct region *region;
};

static struct registry_entry registry[REGISTRY_MAX];
static int registry_count;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
unsigned long registry_version;
__thread struct registry_cache registry_cached;

static void entry_store(int at, const struct registry_entry *e)
{
    __atomic_store_n(&registry[at].base, e->base, __ATOMIC_RELAXED);
    __atomic_store_n(&registry[at].size, e->size, __ATOMIC_RELAXED);
    __atomic_store_n(&registry[at].region, e->region, __ATOMIC_RELAXED);
}

static struct registry_entry entry_load(int at)
{
    return (struct registry_entry){__atomic_load_n(&registry[at].base, __ATOMIC_RELAXED),
                                   __atomic_load_n(&registry[at].size, __ATOMIC_RELAXED),
                                   __atomic_load_n(&registry[at].region, __ATOMIC_RELAXED)};
}

/* A writer's change, between an odd and the next even version (registry_lock held). */
static void registry_change_begin(void)
{
    __atomic_store_n(&registry_version, registry_version + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void registry_change_end(void)
{
    __atomic_store_n(&registry_version, registry_version + 1, __ATOMIC_RELEASE);
}

int registry_add(struct region *region)
{
    pthread_mutex_lock(&registry_lock);
    int rc = -1;
    if (registry_count < REGISTRY_MAX) {
        registry_change_begin();
        int at = registry_count;
        while (at > 0 && registry[at - 1].base > (uintptr_t)region->base) {
            entry_store(at, &registry[at - 1]);
            at--;
        }
        entry_store(at, &(struct registry_entry){(uintptr_t)region->base, region->size, region});
        __atomic_store_n(&registry_count, registry_count + 1, __ATOMIC_RELAXED);
        registry_change_end();
        rc = 0;
    }
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

int registry_remove(struct region *region)
{
    pthread_mutex_lock(&registry_lock);
    int rc = -1;
    for (int i = 0; i < registry_count && rc; i++) {
        if (registry[i].region != region)
            continue;
        registry_change_begin();
        for (int j = i; j + 1 < registry_count; j++)
            entry_store(j, &registry[j + 1]);
        __atomic_store_n(&registry_count, registry_count - 1, __ATOMIC_RELAXED);
        registry_change_end();
        rc = 0;
    }
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

/* What the array says of an address: the entry holding it, or (found.region NULL) the gap
 * between entries that does, under the registry version it was read at. */
struct registry_answer {
    struct registry_entry found;
    struct registry_gap gap;
    unsigned long version;
};

/* A binary search of the array as the reader sees it (entries may move under it: the caller
 * checks the version). */
static struct registry_answer registry_search(uintptr_t a)
{
    int count = __atomic_load_n(&registry_count, __ATOMIC_RELAXED), lo = 0, hi = count - 1;
    while (lo <= hi) { /* lo ends as the first entry above a */
        int mid = (lo + hi) / 2;
        struct registry_entry e = entry_load(mid);
        if (a < e.base)
            hi = mid - 1;
        else if (a - e.base >= e.size)
            lo = mid + 1;
        else
            return (struct registry_answer){.found = e};
    }
    uintptr_t below = 0, above = UINTPTR_MAX;
    if (lo > 0) {
        struct registry_entry e = entry_load(lo - 1);
        below = e.base + e.size;
    }
    if (lo < count)
        above = entry_load(lo).base;
    return (struct registry_answer){.gap = {below, above - below}};
}

/* A search whose answer held for one version of the registry (a sequence lock's read). */
static struct registry_answer registry_read(uintptr_t a)
{
    for (;;) {
        unsigned long version = __atomic_load_n(&registry_version, __ATOMIC_ACQUIRE);
        if (version & 1) {
            sched_yield(); /* a writer is shifting entries: a few stores */
            continue;
        }
        struct registry_answer answer = registry_search(a);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&registry_version, __ATOMIC_RELAXED) != version)
            continue;
        answer.version = version;
        return answer;
    }
}

/* This thread's cache, emptied first where it holds answers of another version than version:
 * its entries share one version, so none may outlive the registry it was read from. */
static struct registry_cache *registry_cache_at(unsigned long version)
{
    struct registry_cache *cached = &registry_cached;
    if (cached->version != version)
        *cached = (struct registry_cache){.version = version};
    return cached;
}

struct region *registry_lookup_slow(const void *addr)
{
    struct registry_answer answer = registry_read((uintptr_t)addr);
    struct registry_entry found = answer.found;
    if (found.region) {
        /* The previous hit moves to the second slot: a loop over two regions (a heap and a
         * static array, a host and a device buffer) stays on the fast path. */
        struct registry_cache *cached = registry_cache_at(answer.version);
        cached->hit[1] = cached->hit[0];
        cached->hit[0] = (struct registry_hit){found.base, found.size, found.region};
    }
    return found.region;
}

int registry_in_gap_slow(const void *addr)
{
    struct registry_answer answer = registry_read((uintptr_t)addr);
    if (answer.found.region)
        return 0;
    registry_cache_at(answer.version)->gap = answer.gap;
    return 1;
}

struct region *registry_lookup_mapped(const void *addr, int n_pes, int *pe)
{
    uintptr_t a = (uintptr_t)addr;
    int count = __atomic_load_n(&registry_count, __ATOMIC_RELAXED);
    for (int i = 0; i < count && i < REGISTRY_MAX; i++) {
        struct region *region = entry_load(i).region;
        char **copies = region ? region->routes.copies : NULL;
        for (int p = 0; copies && p < n_pes; p++) {
            uintptr_t base = (uintptr_t)copies[p];
            if (base && a - base < region->size) {
                *pe = p;
                return region;
            }
        }
    }
    return NULL;
}

struct region *registry_find_id(int id)
{
    pthread_mutex_lock(&registry_lock);
    struct region *found = NULL;
    for (int i = 0; i < registry_count && !found; i++)
        if (registry[i].region->id == id)
            found = registry[i].region;
    pthread_mutex_unlock(&registry_lock);
    return found;
}
