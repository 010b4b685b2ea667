/* SPDX-License-Identifier: BSD-3-Clause */
/* Pointer-to-region lookup: every address inside a region maps to it, every address outside
 * none (and lies in a gap), whatever the insertion order, after removals, through both entries of
 * the per-thread cache, and while another thread adds and removes regions (space creation and
 * destruction beside RMA under SHMEM_THREAD_MULTIPLE). */
#include "space.h"
#include "unit.h"

#include <pthread.h>
#include <stdlib.h>

#define N_REGIONS 9

/* Regions that stay registered, looked up by reader threads while the writer inserts and
 * removes a region below all of them (every insertion shifts them in the sorted array). */
#define STABLE 6
#define CHURN_CYCLES 200000
/* slot 0 is the churned region's: the lowest address, so its insertion shifts all the others */
static char memory_slots[STABLE + 1][4096];
#define churn_memory memory_slots[0]
#define stable_memory (memory_slots + 1)
static struct region stable[STABLE], churn;
static int churn_done;
static long misses[2];

static void *reader(void *arg)
{
    long *missed = arg;
    for (unsigned i = 0; !__atomic_load_n(&churn_done, __ATOMIC_ACQUIRE); i++) {
        /* cycle through more regions than the cache holds, so that lookups search the array */
        int k = (int)(i % STABLE);
        *missed += region_lookup(stable_memory[k] + 100 + i % 1000) != &stable[k];
        struct region *r = region_lookup(churn_memory + 200);
        *missed += r != NULL && r != &churn;
        *missed += !registry_in_gap(stable_memory[k] + 50 + i % 50);
        *missed += registry_in_gap(stable_memory[k] + 150);
    }
    return NULL;
}

static void check_concurrent_changes(void)
{
    for (int k = 0; k < STABLE; k++) {
        stable[k].base = stable_memory[k] + 100;
        stable[k].size = 1000;
        UNIT_CHECK(registry_add(&stable[k]) == 0, "add stable region %d", k);
    }
    churn.base = churn_memory + 100;
    churn.size = 1000;
    pthread_t readers[2];
    for (int t = 0; t < 2; t++)
        pthread_create(&readers[t], NULL, reader, &misses[t]);
    for (int cycle = 0; cycle < CHURN_CYCLES; cycle++) {
        registry_add(&churn);
        registry_remove(&churn);
    }
    __atomic_store_n(&churn_done, 1, __ATOMIC_RELEASE);
    for (int t = 0; t < 2; t++)
        pthread_join(readers[t], NULL);
    UNIT_CHECK(misses[0] + misses[1] == 0,
               "%ld lookups of registered regions or gaps failed while another thread added and "
               "removed a region",
               misses[0] + misses[1]);
    UNIT_CHECK(region_lookup(churn_memory + 200) == NULL, "the removed region is not found");
    for (int k = 0; k < STABLE; k++)
        registry_remove(&stable[k]);
}

int main(void)
{
    check_concurrent_changes();
    static char memory[N_REGIONS][4096];
    struct region regions[N_REGIONS] = {0};
    /* Insert in a scrambled order; regions use the middle 1000 bytes of each 4 KiB slot so there
     * are gaps on both sides. */
    int order[N_REGIONS] = {4, 0, 8, 2, 6, 1, 7, 3, 5};
    for (int i = 0; i < N_REGIONS; i++) {
        struct region *r = &regions[order[i]];
        r->base = memory[order[i]] + 1000;
        r->size = 1000;
        UNIT_CHECK(registry_add(r) == 0, "add region %d", order[i]);
    }
    for (int i = 0; i < N_REGIONS; i++) {
        UNIT_CHECK(region_lookup(memory[i] + 1000) == &regions[i], "first byte of %d", i);
        UNIT_CHECK(region_lookup(memory[i] + 1999) == &regions[i], "last byte of %d", i);
        UNIT_CHECK(region_lookup(memory[i] + 1500) == &regions[i], "middle of %d", i);
        UNIT_CHECK(region_lookup(memory[i] + 999) == NULL, "byte before %d", i);
        UNIT_CHECK(region_lookup(memory[i] + 2000) == NULL, "byte after %d", i);
        UNIT_CHECK(registry_in_gap(memory[i] + 999), "byte before %d is in a gap", i);
        UNIT_CHECK(registry_in_gap(memory[i] + 2000), "byte after %d is in a gap", i);
        UNIT_CHECK(!registry_in_gap(memory[i] + 1000), "first byte of %d is in no gap", i);
        UNIT_CHECK(!registry_in_gap(memory[i] + 1999), "last byte of %d is in no gap", i);
    }
    UNIT_CHECK(region_lookup(NULL) == NULL, "NULL is in no region");
    /* The cache must not answer for a removed region. */
    UNIT_CHECK(region_lookup(memory[3] + 1500) == &regions[3], "cached");
    registry_remove(&regions[3]);
    UNIT_CHECK(region_lookup(memory[3] + 1500) == NULL, "removed region no longer found");
    UNIT_CHECK(region_lookup(memory[4] + 1500) == &regions[4], "neighbour still found");
    /* Alternating between two regions, both answer (from the cache's two entries); neither
     * answers once removed, from whichever entry it sat in. */
    for (int round = 0; round < 3; round++) {
        UNIT_CHECK(region_lookup(memory[5] + 1100) == &regions[5], "alternating, 5");
        UNIT_CHECK(region_lookup(memory[6] + 1100) == &regions[6], "alternating, 6");
    }
    registry_remove(&regions[5]);
    UNIT_CHECK(region_lookup(memory[6] + 1100) == &regions[6], "6 after 5 was removed");
    UNIT_CHECK(region_lookup(memory[5] + 1100) == NULL, "removed 5, the older cache entry");
    registry_add(&regions[5]);
    /* A gap that a new region fills is a gap no more. */
    UNIT_CHECK(registry_in_gap(memory[3] + 1500), "the removed region's range is a gap");
    registry_add(&regions[3]);
    UNIT_CHECK(!registry_in_gap(memory[3] + 1500), "the region added in the gap fills it");
    UNIT_CHECK(region_lookup(memory[3] + 1500) == &regions[3], "the re-added region");
    registry_remove(&regions[3]);
    registry_remove(&regions[0]);
    registry_remove(&regions[8]);
    for (int i = 1; i < 8; i++)
        if (i != 3)
            UNIT_CHECK(region_lookup(memory[i] + 1234) == &regions[i], "after removals %d", i);
    return unit_finish("test_registry");
}
