/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives on device memory (coll.h). */
#include "../route_target.h"
#include "coll.h"

#include <stdlib.h>
#include <string.h>

int coll_device_buffers(const void *dest, const void *source)
{
    return route_local_kind(dest) || (source && route_local_kind(source));
}

static void coll_device_end(struct coll_group *g)
{
    shmem_quiet();
    coll_sync(g);
}

/* The legacy broadcast (root_receives 0) leaves the root's dest alone. */
void coll_device_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                           int root, int root_receives)
{
    coll_sync(g);
    if (g->my_rank == root)
        for (int r = 0; r < g->size; r++)
            if (r != root || (root_receives && dest != source))
                shmem_putmem(dest, source, bytes, g->members[r]);
    coll_device_end(g);
}

/* fixed: fcollect (every block bytes long); else collect, whose block sizes are first
 * exchanged through the group's gather words (host memory). */
void coll_device_collect(struct coll_group *g, void *dest, const void *source, size_t bytes,
                         int fixed)
{
    coll_sync(g);
    size_t *offsets = coll_block_offsets(g, bytes, fixed);
    for (int r = 0; r < g->size; r++)
        shmem_putmem((char *)dest + offsets[g->my_rank], source, bytes, g->members[r]);
    free(offsets);
    coll_device_end(g);
}

void coll_device_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                           ptrdiff_t sst, size_t nelems, size_t elem)
{
    coll_sync(g);
    for (int r = 0; r < g->size; r++)
        coll_put_block(g, dest, source, dst, sst, nelems, elem, r, COLL_CH_NONE);
    coll_device_end(g);
}

/* ptr's counterparts of ranks 0..last as this PE's kind copy reaches them, in at; 0 when one is
 * not reached so. */
static int coll_device_attached(const struct coll_group *g, const void *ptr, int last, char **at)
{
    const struct region *region = region_lookup(ptr);
    size_t offset = (size_t)((const char *)ptr - region->base);
    for (int r = 0; r <= last; r++) {
        struct route route = region_route(region, g->members[r]);
        if (route.kind != ROUTE_KIND_COPY)
            return 0;
        at[r] = route.attached + offset;
    }
    return 1;
}

/* The kind of dest and source, with the sources of ranks 0..last as this PE's kind copy reaches
 * them, when both are memory of one kind that reduces what itself: NULL otherwise. */
static const struct kind_ops *coll_device_kind_sources(struct coll_group *g, const void *dest,
                                                       const void *source, int last,
                                                       enum kind_reduction what, char **sources)
{
    struct region *from = region_lookup(source), *to = region_lookup(dest);
    if (what == KIND_REDUCE_NONE || !from || !to || from->kind != to->kind || !from->kind->reduce ||
        region_route(to, rt.my_pe).kind != ROUTE_KIND_COPY ||
        !coll_device_attached(g, source, last, sources))
        return NULL;
    return from->kind;
}

/* The last rank whose source this member's result combines: every rank's for a reduction (scan
 * 0), up to its own for an inclusive scan (1), up to the one before for an exclusive scan (-1). */
static int coll_last_source(const struct coll_group *g, int scan)
{
    return scan == 0 ? g->size - 1 : g->my_rank - (scan < 0);
}

/* acc = the combination of sources 0..last (zeros when there are none), on queue 0. */
static void coll_device_combine(const struct kind_ops *kind, char *acc, char **sources, int last,
                                size_t count, size_t bytes, enum kind_reduction what)
{
    if (last < 0)
        kind->fill(acc, 0, bytes, 0);
    for (int r = 0; r <= last; r++) {
        if (r == 0)
            kind->copy(acc, sources[r], bytes, 0);
        else
            kind->reduce(acc, sources[r], count, what);
    }
}

/* Whether two members hold their sources on one device. Processes sharing a device take turns
 * in its time slices, so every member combining every source costs a turn each. Every member asks
 * about the same sources, so all choose alike. */
static int coll_device_shared(const struct kind_ops *kind, char **sources, int n, int *devices)
{
    if (!kind->device_of)
        return 0;
    int shared = 0;
    for (int r = 0; r < n && !shared; r++) {
        devices[r] = kind->device_of(sources[r]);
        for (int q = 0; q < r && !shared; q++)
            shared = devices[q] == devices[r] && devices[r] >= 0;
    }
    return shared;
}

/* Rank 0 combines every source and writes the result into every member's dest (dests as its
 * kind copy reaches them), so one process alone drives the device, as in a broadcast. */
static void coll_device_reduce_by_one(struct coll_group *g, const struct kind_ops *kind,
                                      char **dests, char **sources, size_t count, size_t bytes,
                                      enum kind_reduction what)
{
    coll_sync(g);
    if (g->my_rank == 0) {
        char *acc = kind->scratch(bytes ? bytes : 1);
        coll_device_combine(kind, acc, sources, g->size - 1, count, bytes, what);
        for (int r = 0; r < g->size; r++) /* after every source is read: one stream */
            kind->copy(dests[r], acc, bytes, 0);
        kind_wrote(kind, 0);
    }
    coll_device_end(g); /* rank 0's quiet lands every dest before any member goes on */
}

/* On the device, with the same synchronizations as through the host, on queue 0 with the kind's
 * reductions: each member combines every source it needs into the kind's scratch, or, for a
 * reduction (not a scan) among members that share a device, rank 0 combines for all. Returns 0
 * when the kind cannot. */
static int coll_device_reduce_on_kind(struct coll_group *g, void *dest, const void *source,
                                      size_t count, size_t elem, int scan, enum kind_reduction what)
{
    int last = coll_last_source(g, scan);
    size_t n = (size_t)g->size, need = 2 * n * sizeof(char *) + n * sizeof(int);
    char **sources = malloc(need), **dests = sources + n;
    if (!sources) /* every member must choose alike: no member may fall back alone */
        log_fatal(g->routine, "cannot allocate %zu bytes of private memory", need);
    const struct kind_ops *kind = coll_device_kind_sources(g, dest, source, last, what, sources);
    if (!kind) {
        free(sources);
        return 0;
    }
    size_t bytes = count * elem;
    if (scan == 0 && coll_device_shared(kind, sources, g->size, (int *)(dests + n)) &&
        coll_device_attached(g, dest, g->size - 1, dests)) {
        coll_device_reduce_by_one(g, kind, dests, sources, count, bytes, what);
        free(sources);
        return 1;
    }
    char *acc = kind->scratch(bytes ? bytes : 1);
    coll_sync(g);
    coll_device_combine(kind, acc, sources, last, count, bytes, what);
    kind_land(kind, 0); /* every source read before any member changes its own */
    coll_sync(g);
    kind->copy(dest, acc, bytes, 0);
    kind_wrote(kind, 0);
    free(sources);
    coll_device_end(g);
    return 1;
}

void coll_device_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                        size_t elem, int scan, coll_combine_fn combine)
{
    if (coll_device_reduce_on_kind(g, dest, source, count, elem, scan,
                                   coll_kind_reduction(combine)))
        return;
    int last = coll_last_source(g, scan);
    size_t bytes = count * elem;
    char *acc = calloc(1, 2 * bytes + 1), *in = acc + bytes;
    if (!acc)
        log_fatal(g->routine, "cannot allocate %zu bytes of private memory", 2 * bytes);
    coll_sync(g);
    for (int r = 0; r <= last; r++) {
        shmem_getmem(r == 0 ? acc : in, source, bytes, g->members[r]);
        if (r > 0)
            combine(acc, in, count);
    }
    /* Every member has read every source it needs before any dest (maybe a source) changes. */
    coll_sync(g);
    shmem_putmem(dest, acc, bytes, rt.my_pe);
    free(acc);
    coll_device_end(g);
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
