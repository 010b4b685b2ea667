/* SPDX-License-Identifier: BSD-3-Clause */
/* A PE maps a node peer's heap when it first reaches it, not at start-up: after shmem_init it
 * holds its own heap and one node peer's (the one start-up checks it can open), and once it has
 * put to every PE, every node peer's. The puts through the copies mapped on first use land. The
 * heaps are told apart in /proc/self/maps by their size, which no other shared mapping has. */
#include "check.h"

#include <stdint.h>

#define HEAP_SIZE ((uintptr_t)96 << 20) /* the suite runs it with SHMEM_SYMMETRIC_SIZE=96M */

/* How many node peers' heaps are mapped here: shared mappings of the heap's size, other than
 * this PE's own (which holds mine). */
static int peer_heaps_mapped(const void *mine)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    int count = 0;
    while (maps && fgets(line, sizeof(line), maps)) {
        uintptr_t start, end;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3)
            continue;
        int own = (uintptr_t)mine - start < end - start;
        count += end - start == HEAP_SIZE && perms[3] == 's' && !own;
    }
    if (maps)
        fclose(maps);
    return count;
}

int main(void)
{
    shmem_init();
    const char *size = getenv("SHMEM_SYMMETRIC_SIZE");
    CHECK(size && !strcmp(size, "96M"), "run with SHMEM_SYMMETRIC_SIZE=96M, not %s",
          size ? size : "unset");
    int me = shmem_my_pe(), n = shmem_n_pes();
    int node_peers = shmem_team_n_pes(SHMEM_TEAM_SHARED) - 1;
    int *from = shmem_calloc((size_t)n, sizeof(int));
    CHECK(from != NULL, "heap allocation");
    if (!from)
        return check_finish();
    CHECK_EQ(peer_heaps_mapped(from), node_peers > 0 ? 1 : 0);
    shmem_barrier_all();
    for (int pe = 0; pe < n; pe++)
        shmem_int_p(&from[me], me + 1, pe);
    shmem_barrier_all();
    CHECK_EQ(peer_heaps_mapped(from), node_peers);
    for (int pe = 0; pe < n; pe++)
        CHECK(from[pe] == pe + 1, "word from PE %d: %d", pe, from[pe]);
    shmem_free(from);
    return check_finish();
}
