/* Pointer-to-region lookup: every address inside a region maps to it, every address outside
 * none, whatever the insertion order and after removals. */
#include "space.h"
#include "unit.h"

#include <stdlib.h>

#define N_REGIONS 9

int main(void)
{
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
    }
    UNIT_CHECK(region_lookup(NULL) == NULL, "NULL is in no region");
    /* The cache must not answer for a removed region. */
    UNIT_CHECK(region_lookup(memory[3] + 1500) == &regions[3], "cached");
    registry_remove(&regions[3]);
    UNIT_CHECK(region_lookup(memory[3] + 1500) == NULL, "removed region no longer found");
    UNIT_CHECK(region_lookup(memory[4] + 1500) == &regions[4], "neighbour still found");
    registry_remove(&regions[0]);
    registry_remove(&regions[8]);
    for (int i = 1; i < 8; i++)
        if (i != 3)
            UNIT_CHECK(region_lookup(memory[i] + 1234) == &regions[i], "after removals %d", i);
    return unit_finish("test_registry");
}
