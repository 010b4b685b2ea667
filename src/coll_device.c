/* Team collectives on device memory (coll_device.h). */
#include "coll_device.h"

#include "staged.h"

#include <stdlib.h>
#include <string.h>

int coll_device_buffers(const void *dest, const void *source)
{
    return unlikely(rt.device_memory) && (staged_is_device(dest) || staged_is_device(source));
}

static int coll_world(const struct strata_team *team, int rank)
{
    return team->members[rank];
}

static void coll_device_end(struct strata_team *team)
{
    shmem_quiet();
    shmem_team_sync(team);
}

void coll_device_broadcast(struct strata_team *team, void *dest, const void *source, size_t bytes,
                           int root)
{
    shmem_team_sync(team);
    if (team->my_rank == root)
        for (int r = 0; r < team->size; r++)
            if (r != root || dest != source)
                shmem_putmem(dest, source, bytes, coll_world(team, r));
    coll_device_end(team);
}

/* fixed: fcollect (every block bytes long); else collect, whose block sizes are first
 * exchanged through the team's gather words (host memory). */
void coll_device_collect(struct strata_team *team, void *dest, const void *source, size_t bytes,
                         int fixed)
{
    shmem_team_sync(team);
    size_t offset = (size_t)team->my_rank * bytes;
    if (!fixed) {
        uint64_t *sizes = team_gather_words(team), mine = bytes;
        for (int r = 0; r < team->size; r++)
            shmem_putmem(&sizes[team->my_rank], &mine, sizeof(mine), coll_world(team, r));
        coll_device_end(team);
        offset = 0;
        for (int r = 0; r < team->my_rank; r++)
            offset += sizes[r];
    }
    for (int r = 0; r < team->size; r++)
        shmem_putmem((char *)dest + offset, source, bytes, coll_world(team, r));
    coll_device_end(team);
}

void coll_device_alltoalls(struct strata_team *team, void *dest, const void *source, ptrdiff_t dst,
                           ptrdiff_t sst, size_t nelems, size_t elem)
{
    shmem_team_sync(team);
    ptrdiff_t me = team->my_rank, n = (ptrdiff_t)nelems, e = (ptrdiff_t)elem;
    for (int r = 0; r < team->size; r++) {
        int pe = coll_world(team, r);
        if (dst == 1 && sst == 1)
            shmem_putmem((char *)dest + me * n * e, (const char *)source + r * n * e, nelems * elem,
                         pe);
        else
            for (ptrdiff_t k = 0; k < n; k++)
                shmem_putmem((char *)dest + (me * n + k) * dst * e,
                             (const char *)source + ((ptrdiff_t)r * n + k) * sst * e, elem, pe);
    }
    coll_device_end(team);
}

void coll_device_reduce(struct strata_team *team, void *dest, const void *source, size_t count,
                        size_t elem, int scan, coll_combine_fn combine)
{
    size_t bytes = count * elem;
    char *acc = calloc(1, 2 * bytes + 1), *in = acc + bytes;
    if (!acc)
        log_fatal("shmem_reduce", "cannot allocate %zu bytes of private memory", 2 * bytes);
    shmem_team_sync(team);
    int last = scan == 0 ? team->size - 1 : team->my_rank - (scan < 0);
    for (int r = 0; r <= last; r++) {
        shmem_getmem(r == 0 ? acc : in, source, bytes, coll_world(team, r));
        if (r > 0)
            combine(acc, in, count);
    }
    /* Every member has read every source it needs before any dest (maybe a source) changes. */
    shmem_team_sync(team);
    shmem_putmem(dest, acc, bytes, rt.my_pe);
    free(acc);
    coll_device_end(team);
}

void coll_space_check(const char *routine, const struct strata_team *team, const void *dest,
                      const void *source)
{
    struct region *d = region_lookup(dest), *s = source ? region_lookup(source) : d;
    if (!d || !s)
        return; /* the symmetric-buffer check reports these */
    if (d->space != s->space)
        log_fatal(routine, "mixed-space collective: dest %p and source %p are in different spaces",
                  dest, source);
    const struct space *space = d->space;
    if (!space->member[rt.my_pe])
        log_fatal(routine, "PE %d is not a member of the space that holds %p", rt.my_pe, dest);
    for (int r = 0; r < team->size; r++)
        if (!space->member[team->members[r]])
            log_fatal(routine, "team rank %d (PE %d) is not a member of the space that holds %p", r,
                      team->members[r], dest);
}
