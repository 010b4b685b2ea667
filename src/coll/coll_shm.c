/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives when every member is mapped: data is copied straight into the members' mapped
 * buffers, and a member's progress is the step number it publishes in its own collective words,
 * which the others poll. Nothing goes through the transport. */
#include "../../common/copy.h"
#include "coll.h"

#include <string.h>

static void shm_wait_all(struct coll_group *g, uint64_t step, size_t bytes)
{
    for (int r = 0; r < g->size; r++)
        if (r != g->my_rank)
            coll_wait_step(g, r, step, bytes);
}

/* The root copies into every dest and publishes: one hop, and the root returns at once (its
 * source is copied). Members publish what they received, and a root that writes a different
 * dest than the previous call first waits until every member has received that call: no root
 * runs more than one call ahead, so a program that alternates two dest buffers (and two pSync
 * arrays) without a barrier, as OpenSHMEM programs have long done, never has a buffer
 * overwritten while it still reads it. Rewriting the same dest needs no wait: a program that
 * does so must already have made sure every member is done with it. */
void coll_shm_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                        int root, int root_receives)
{
    uint64_t step = coll_step(g), previous_dest = g->area->last_dest;
    g->area->last_dest = (uint64_t)(uintptr_t)dest;
    if (g->my_rank != root) {
        coll_wait_step(g, root, step, bytes * (size_t)(g->size - 1));
        coll_publish(g, step);
        return;
    }
    if (previous_dest != (uint64_t)(uintptr_t)dest)
        shm_wait_all(g, step - 1, 0);
    for (int k = 1; k < g->size; k++)
        copy_bulk(coll_peer(g, dest, (root + k) % g->size), source, bytes);
    if (root_receives && dest != source)
        copy_bulk(dest, source, bytes);
    coll_publish(g, step);
}

/* Every member copies its block into every dest, then publishes; a member is done when all have.
 * collect first publishes its block size: the size word is rewritten only by a later collect,
 * which its owner cannot reach before every member has published this one's second step, that is
 * read the sizes. */
void coll_shm_collect(struct coll_group *g, void *dest, const void *source, size_t bytes, int fixed)
{
    size_t offset = (size_t)g->my_rank * bytes;
    uint64_t step;
    if (!fixed) {
        g->area->size = bytes;
        coll_publish(g, step = coll_step(g));
        shm_wait_all(g, step, 0);
        offset = 0;
        for (int r = 0; r < g->my_rank; r++)
            offset += ((const struct coll_area *)coll_peer(g, g->area, r))->size;
    }
    step = coll_step(g);
    for (int k = 0; k < g->size; k++)
        copy_bulk((char *)coll_peer(g, dest, (g->my_rank + k) % g->size) + offset, source, bytes);
    coll_publish(g, step);
    shm_wait_all(g, step, bytes * (size_t)g->size);
}

void coll_shm_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                        ptrdiff_t sst, size_t nelems, size_t elem)
{
    uint64_t step = coll_step(g);
    for (int k = 0; k < g->size; k++)
        coll_put_block(g, dest, source, dst, sst, nelems, elem, (g->my_rank + k) % g->size,
                       COLL_CH_NONE);
    coll_publish(g, step);
    shm_wait_all(g, step, nelems * elem * (size_t)g->size);
}

/* Up to this many bytes a reduction copies its source into the member's buffer and is one step;
 * above, members read each other's sources in place (two steps, no copy in). */
#define COLL_SHM_COPY_MAX 1024
_Static_assert(COLL_SHM_COPY_MAX <= COLL_BUF_BYTES, "a short vector fits a member's buffer");

/* Short vectors: each member copies its source into its own buffer and publishes; everyone then
 * combines the buffers in rank order (so every member gets the same bits, floating point
 * included). A buffer is rewritten two buffer steps (dstep) later, which its owner cannot reach
 * before every member has taken part in the one in between, that is finished reading this one
 * (every buffer step waits for all members: scans too, not only for the ranks they combine). */
static void shm_reduce_copied(struct coll_group *g, void *dest, const void *source, size_t count,
                              size_t elem, int scan, coll_combine_fn combine)
{
    int last = scan == 0 ? g->size - 1 : g->my_rank - (scan < 0);
    size_t bytes = count * elem;
    char *mine = g->area->buf[++g->area->dstep & 1];
    memcpy(mine, source, bytes);
    uint64_t step = coll_step(g);
    coll_publish(g, step);
    if (last < 0)
        memset(dest, 0, bytes); /* exscan on rank 0 */
    for (int r = 0; r < g->size; r++) {
        if (r != g->my_rank)
            coll_wait_step(g, r, step, bytes);
        if (r == 0 && last >= 0)
            memcpy(dest, coll_peer(g, mine, r), bytes);
        else if (r <= last)
            combine(dest, coll_peer(g, mine, r), count);
    }
}

/* Long vectors: once every member has published that its source is ready, member s reduces
 * segment s of all sources in rank order and writes the result (for scans, each rank's prefix)
 * into segment s of every dest; a second step says every segment is written and no source is
 * read any more. Only member s reads or writes segment s, and it reads a member's source segment
 * before writing that member's dest segment, so dest == source is safe. */
static void shm_reduce_direct(struct coll_group *g, void *dest, const void *source, size_t count,
                              size_t elem, int scan, coll_combine_fn combine)
{
    int n = g->size, me = g->my_rank;
    size_t seg, off = coll_segment_of(0, count, n, me, &seg) * elem, bytes = seg * elem;
    char *acc = coll_scratch_get(2 * bytes + 1), *in = acc + bytes;
    uint64_t step = coll_step(g);
    coll_publish(g, step);
    for (int r = 0; r < n; r++) {
        if (r != me)
            coll_wait_step(g, r, step, count * elem);
        char *to = (char *)coll_peer(g, dest, r) + off;
        const char *from = (const char *)coll_peer(g, source, r) + off;
        if (scan < 0) { /* rank r's prefix excludes it: save its source before dest changes */
            from = memcpy(in, from, bytes);
            if (r == 0)
                memset(to, 0, bytes);
            else
                memcpy(to, acc, bytes);
        }
        if (r == 0)
            memcpy(acc, from, bytes);
        else
            combine(acc, from, seg);
        if (scan > 0)
            memcpy(to, acc, bytes);
    }
    for (int r = 0; r < n && scan == 0; r++)
        memcpy((char *)coll_peer(g, dest, r) + off, acc, bytes);
    coll_publish(g, step = coll_step(g));
    shm_wait_all(g, step, count * elem);
}

void coll_shm_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                     size_t elem, int scan, coll_combine_fn combine)
{
    if (count * elem <= COLL_SHM_COPY_MAX)
        shm_reduce_copied(g, dest, source, count, elem, scan, combine);
    else
        shm_reduce_direct(g, dest, source, count, elem, scan, combine);
}

/* Members publish that their source is ready and stay in the call until the leader has handed
 * out the result, so their sources stay in place while they are read, and the leader's dest is
 * written only once the leader has entered the call (it is done with the previous call's dest).
 * Up to COLL_NODE_LEADER_COPY_MAX of sources the leader combines them alone; above, member s
 * combines segment s of every source in rank order and writes it into the leader's dest, as
 * shm_reduce_direct does (only member s reads or writes segment s: dest may be source), and the
 * leader waits for every segment. */
void coll_shm_reduce_to_leader(struct coll_group *g, void *dest, const void *source, size_t count,
                               size_t elem, coll_combine_fn combine)
{
    int n = g->size, me = g->my_rank;
    uint64_t step = coll_step(g);
    coll_publish(g, step);
    if (count * elem * (size_t)n <= COLL_NODE_LEADER_COPY_MAX) {
        if (me != 0)
            return;
        if (dest != source)
            memcpy(dest, source, count * elem);
        for (int r = 1; r < n; r++) {
            coll_wait_step(g, r, step, 0);
            combine(dest, coll_peer(g, source, r), count);
        }
        return;
    }
    size_t seg, off = coll_segment_of(0, count, n, me, &seg) * elem, bytes = seg * elem;
    char *acc = coll_scratch_get(bytes + 1);
    for (int r = 0; r < n; r++) {
        if (r != me)
            coll_wait_step(g, r, step, count * elem);
        const char *from = (const char *)coll_peer(g, source, r) + off;
        if (r == 0)
            memcpy(acc, from, bytes);
        else
            combine(acc, from, seg);
    }
    memcpy((char *)coll_peer(g, dest, 0) + off, acc, bytes);
    coll_publish(g, step = coll_step(g));
    if (me == 0)
        shm_wait_all(g, step, count * elem);
}
