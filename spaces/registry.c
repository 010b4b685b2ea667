/* The registry: every region, sorted by local base address. There are a handful of regions, so a
 * binary search over a small array behind a one-entry cache beats any hash. */
#include "space.h"

#include <pthread.h>
#include <string.h>

#define REGISTRY_MAX 128

static struct region *registry[REGISTRY_MAX];
static int registry_count;
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
struct region *registry_cache;

int registry_add(struct region *region)
{
    pthread_mutex_lock(&registry_lock);
    int rc = -1;
    if (registry_count < REGISTRY_MAX) {
        int at = registry_count;
        while (at > 0 && registry[at - 1]->base > region->base) {
            registry[at] = registry[at - 1];
            at--;
        }
        registry[at] = region;
        registry_count++;
        rc = 0;
    }
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

void registry_remove(struct region *region)
{
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < registry_count; i++) {
        if (registry[i] != region)
            continue;
        memmove(&registry[i], &registry[i + 1],
                (size_t)(registry_count - i - 1) * sizeof(*registry));
        registry_count--;
        break;
    }
    __atomic_store_n(&registry_cache, NULL, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&registry_lock);
}

struct region *registry_lookup_slow(const void *addr)
{
    uintptr_t a = (uintptr_t)addr;
    int lo = 0, hi = registry_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        struct region *r = registry[mid];
        if (a < (uintptr_t)r->base)
            hi = mid - 1;
        else if (a - (uintptr_t)r->base >= r->size)
            lo = mid + 1;
        else {
            __atomic_store_n(&registry_cache, r, __ATOMIC_RELAXED);
            return r;
        }
    }
    return NULL;
}

struct region *registry_find_id(int id)
{
    pthread_mutex_lock(&registry_lock);
    struct region *found = NULL;
    for (int i = 0; i < registry_count && !found; i++)
        if (registry[i]->id == id)
            found = registry[i];
    pthread_mutex_unlock(&registry_lock);
    return found;
}
