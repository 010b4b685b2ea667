/* Collectives when every member is mapped: data is copied straight into the members' mapped
 * buffers, and a member's progress is the step number it publishes in its own collective words,
 * which the others poll. Nothing goes through the transport, and nobody waits for anyone it
 * does not take data from. */
#include "coll.h"

#include <string.h>

static void shm_wait_all(struct coll_group *g, uint64_t step)
{
    for (int r = 0; r < g->size; r++)
        if (r != g->my_rank)
            coll_wait_step(g, r, step);
}

/* The root copies into every dest and publishes: one hop, and the root returns at once (its
 * source is copied). */
void coll_shm_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                        int root, int root_receives)
{
    uint64_t step = coll_step(g);
    if (g->my_rank != root) {
        coll_wait_step(g, root, step);
        return;
    }
    for (int k = 1; k < g->size; k++)
        memcpy(coll_peer(g, dest, (root + k) % g->size), source, bytes);
    if (root_receives && dest != source)
        memcpy(dest, source, bytes);
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
        shm_wait_all(g, step);
        offset = 0;
        for (int r = 0; r < g->my_rank; r++)
            offset += ((const struct coll_area *)coll_peer(g, g->area, r))->size;
    }
    step = coll_step(g);
    for (int k = 0; k < g->size; k++)
        memcpy((char *)coll_peer(g, dest, (g->my_rank + k) % g->size) + offset, source, bytes);
    coll_publish(g, step);
    shm_wait_all(g, step);
}

void coll_shm_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                        ptrdiff_t sst, size_t nelems, size_t elem)
{
    uint64_t step = coll_step(g);
    for (int k = 0; k < g->size; k++)
        coll_put_block(g, dest, source, dst, sst, nelems, elem, (g->my_rank + k) % g->size);
    coll_publish(g, step);
    shm_wait_all(g, step);
}

/* Chunk by chunk, each member copies its source into its own buffer and publishes; everyone then
 * combines the buffers in rank order (so every member gets the same bits, floating point
 * included). A buffer is rewritten two chunks later, which its owner cannot reach before every
 * member has published the chunk in between, that is finished reading this one: scans wait for
 * all members too, not only the ranks they combine. The source is copied before its chunk of
 * dest is written, so dest == source is safe. */
void coll_shm_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                     size_t elem, int scan, coll_combine_fn combine)
{
    int last = scan == 0 ? g->size - 1 : g->my_rank - (scan < 0);
    size_t per_chunk = COLL_BUF_BYTES / elem;
    for (size_t done = 0; done < count; done += per_chunk) {
        size_t n = count - done < per_chunk ? count - done : per_chunk, bytes = n * elem;
        char *mine = g->area->buf[++g->area->dstep & 1], *acc = (char *)dest + done * elem;
        memcpy(mine, (const char *)source + done * elem, bytes);
        uint64_t step = coll_step(g);
        coll_publish(g, step);
        if (last < 0)
            memset(acc, 0, bytes); /* exscan on rank 0 */
        for (int r = 0; r < g->size; r++) {
            if (r != g->my_rank)
                coll_wait_step(g, r, step);
            const void *in = coll_peer(g, mine, r);
            if (r == 0 && last >= 0)
                memcpy(acc, in, bytes);
            else if (r <= last)
                combine(acc, in, n);
        }
    }
}
