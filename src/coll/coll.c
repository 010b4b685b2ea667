/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives on teams and active sets (1.6 section 9.9): broadcast, collect, fcollect,
 * alltoall(s), reductions and scans for every type of their tables, the untyped mem forms and the
 * legacy active-set forms. This file builds the group a call runs over and picks the algorithm
 * (coll.h lists them): device buffers go through coll_device.c; a team that goes by node (team.h:
 * its node and leaders parts) runs its broadcasts and reductions here, through its parts, and its
 * collects and small alltoalls in coll_node.c; a team whose members are all mapped takes the
 * shared-memory algorithms; any other team, and every active set, the ones that signal through
 * channel counters (trees, rings, pairwise exchange, recursive doubling). */
#include "coll.h"

#include "../stream.h"

#include <shmemx.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(struct coll_area) == TEAM_COLL_WORDS * sizeof(uint64_t) &&
                   offsetof(struct coll_area, buf) + TEAM_SCRATCH_BYTES == sizeof(struct coll_area),
               "a team slot's collective words are struct coll_area, its buffers the scratch");
_Static_assert(COLL_CHANNELS < SHMEM_SYNC_SIZE, "pSync holds an active set's channels");

/* SHMEM_DEBUG: buffers a collective writes (and, for reductions, reads) on other PEs must be
 * symmetric; a private buffer would otherwise be silently skipped or corrupt a peer. */
static void coll_check_symmetric(const struct coll_group *g, const void *buffer, const char *what)
{
    if (unlikely(rt.debug) && !region_lookup(buffer))
        log_fatal(g->routine, "%s %p is not symmetric (team rank %d of %d)", what, buffer,
                  g->my_rank, g->size);
}

static void coll_check_root(const struct coll_group *g, int root)
{
    if (root < 0 || root >= g->size)
        log_fatal(g->routine, "PE_root %d is not a rank of the team (0..%d)", root, g->size - 1);
}

/* Whether every other member's copy of the region holding addr is loadable and storable here:
 * read from the routes once per team and region, then kept in the team (a region's id and
 * generation tell a new region at a reused address from the old one). */
static int coll_region_mapped(const struct coll_group *g, const void *addr)
{
    struct region *region = region_lookup(addr);
    if (!region)
        return 0;
    struct strata_team *team = g->team;
    size_t slots = team ? sizeof(team->placement) / sizeof(team->placement[0]) : 0;
    for (size_t i = 0; i < slots; i++)
        if (team->placement[i].region == region &&
            team->placement[i].generation == region->generation)
            return team->placement[i].mapped;
    int mapped = 1;
    for (int r = 0; r < g->size && mapped; r++)
        mapped = r == g->my_rank || region_route(region, g->members[r]).load_store != NULL;
    if (team)
        team->placement[team->placement_next++ % slots] =
            (struct coll_placement){region, region->generation, mapped};
    return mapped;
}

/* Whether every other member maps the team's words and the buffers a and b (either may be NULL):
 * buffers of different spaces may be placed differently. */
static int coll_all_mapped(const struct coll_group *g, const void *a, const void *b)
{
    return coll_region_mapped(g, g->area) && (!a || coll_region_mapped(g, a)) &&
           (!b || coll_region_mapped(g, b));
}

void coll_team_group(struct coll_group *g, const char *routine, shmem_team_t team)
{
    g->size = team->size;
    g->my_rank = team->my_rank;
    g->members = team->members;
    g->team = team;
    g->area = (struct coll_area *)team_coll_words(team);
    g->flags = g->area->flags;
    g->expect = g->area->expect;
    g->gather = team_gather_words(team);
    g->gather_by_world = 0;
    g->routine = routine;
}

/* Whether a member of g is on another node. A team's count of nodes is known for the world and
 * its splits; any other team counts as one node's (its collectives then tell nothing). */
static int coll_spans_nodes(const struct coll_group *g)
{
    if (g->team)
        return g->team->nodes > 1;
    for (int r = 0; r < g->size; r++)
        if (rt.node_of[g->members[r]] != rt.my_node)
            return 1;
    return 0;
}

/* A collective across nodes tells the progress thread that this PE is in the library and will
 * take its peers' messages itself (transport_collective_begun): it cannot end before it has,
 * unless the thread took them in. A receiver that finds each call's data already delivered never
 * waits, and the thread, woken by every message meanwhile, would take its time from the calls.
 * A collective within a node tells nothing: one that finds its peers done before it never waits,
 * and so never progresses the transport for the thread. */
static void coll_begun(const struct coll_group *g)
{
    if (rt.transport && coll_spans_nodes(g))
        transport_collective_begun(rt.transport);
}

/* Builds the group of a team collective; -1 when this PE cannot take part (invalid team, or not
 * a member). No synchronization: see coll.h. */
static int coll_team_begin(const char *routine, shmem_team_t team, const void *dest,
                           const void *source, struct coll_group *g)
{
    runtime_require_init(routine);
    if (team == SHMEM_TEAM_INVALID || team->my_rank < 0) {
        if (rt.debug)
            log_error(routine, "called on %s",
                      team == SHMEM_TEAM_INVALID ? "SHMEM_TEAM_INVALID"
                                                 : "a team this PE is not a member of");
        return -1;
    }
    coll_team_group(g, routine, team);
    coll_begun(g);
    if (unlikely(rt.debug))
        coll_space_check(routine, team, dest, source);
    return 0;
}

/* Runs CALL (which uses g_) over team's group; a team collective's return value. */
#define TEAM_COLLECTIVE(routine, team, dest, source, CALL)                                         \
    ({                                                                                             \
        struct coll_group g_;                                                                      \
        coll_team_begin(routine, team, dest, source, &g_) ? -1 : (CALL, 0);                        \
    })

/* Whether every node maps addr between its PEs: the memory of the default and the library's
 * spaces, which every PE attaches at start-up, where node peers are reached directly. What decides
 * must be the same on every node, so not the routes of this node's peers. */
static int coll_node_mapped(const void *addr)
{
    const struct region *region = region_lookup(addr);
    return rt.job.node_direct && region &&
           (region->space == rt.default_space || region->space == rt.library_space);
}

/* Whether a team collective whose dest is dest may go by node: the team has parts (it spans
 * nodes with more members than nodes), and every node maps dest between its PEs. */
static int coll_by_node(const struct coll_group *g, const void *dest)
{
    return g->team && g->team->node_part && coll_node_mapped(dest);
}

static void coll_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                           int root, int root_receives);

/* A broadcast by node: the root copies the data into its node's dests through their mapped
 * memory, its node's leader (the root itself, or a PE that has just received) broadcasts it to
 * the other nodes' leaders, and each of them copies it into its node's dests. One copy of the
 * data crosses to each node instead of one per PE over there, and the root returns once it has
 * written its node's dests and sent to the leaders (eagerly between two nodes), where the flat
 * tree keeps every root within one call of every PE. The shared-memory steps keep their rule
 * for alternated dests, which also keeps a root from rewriting the dest its node's leader still
 * forwards: that leader has received the call in between. */
static void coll_node_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                                int root, int root_receives)
{
    struct strata_team *team = g->team;
    struct coll_group node, leaders;
    int root_pe = g->members[root], root_node = rt.node_of[root_pe];
    const void *from = dest;
    coll_team_group(&node, g->routine, team->node_part);
    if (root_node == rt.my_node) {
        int node_root = team_rank_of(team->node_part, root_pe);
        coll_shm_broadcast(&node, dest, source, bytes, node_root, root_receives);
        if (node_root == 0) /* the root leads its node: its dest is done, or not to be written */
            from = source;
    }
    if (team->leaders_part) {
        coll_team_group(&leaders, g->routine, team->leaders_part);
        coll_broadcast(&leaders, dest, from, bytes, team_leader_rank(team->leaders_part, root_node),
                       0);
    }
    if (root_node != rt.my_node)
        coll_shm_broadcast(&node, dest, dest, bytes, 0, 1);
}

/* Algorithm choice, for teams and active sets alike (an active set has no collective words, so
 * it never takes the shared-memory path). */
static void coll_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                           int root, int root_receives)
{
    coll_check_symmetric(g, dest, "dest");
    coll_check_root(g, root);
    int device = coll_device_buffers(dest, source);
    int by_node = !device && coll_by_node(g, dest);
    int mapped = !device && !by_node && g->area && coll_all_mapped(g, dest, NULL);
    if (!device && !by_node && !mapped && coll_eager_pays(g, bytes)) {
        coll_eager_broadcast(g, dest, source, bytes, root, root_receives);
        return;
    }
    if (g->team)
        team_lag_end(g->team); /* see coll_tree_broadcast */
    if (device)
        coll_device_broadcast(g, dest, source, bytes, root, root_receives);
    else if (by_node)
        coll_node_broadcast(g, dest, source, bytes, root, root_receives);
    else if (mapped)
        coll_shm_broadcast(g, dest, source, bytes, root, root_receives);
    else
        coll_tree_broadcast(g, dest, source, bytes, root, root_receives);
}

/* fixed: fcollect. */
static void coll_collect(struct coll_group *g, void *dest, const void *source, size_t bytes,
                         int fixed)
{
    coll_check_symmetric(g, dest, "dest");
    if (coll_device_buffers(dest, source))
        coll_device_collect(g, dest, source, bytes, fixed);
    else if (coll_by_node(g, dest) && coll_node_mapped(source))
        coll_node_collect(g, dest, source, bytes, fixed);
    else if (g->area && coll_all_mapped(g, dest, NULL))
        coll_shm_collect(g, dest, source, bytes, fixed);
    else
        coll_signal_collect(g, dest, source, bytes, fixed);
}

static void coll_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                           ptrdiff_t sst, size_t nelems, size_t elem)
{
    coll_check_symmetric(g, dest, "dest");
    if (coll_device_buffers(dest, source))
        coll_device_alltoalls(g, dest, source, dst, sst, nelems, elem);
    else if (coll_by_node(g, dest) && coll_node_mapped(source) &&
             coll_node_alltoalls_pay(g, nelems, elem))
        coll_node_alltoalls(g, dest, source, dst, sst, nelems, elem);
    else if (g->area && coll_all_mapped(g, dest, NULL))
        coll_shm_alltoalls(g, dest, source, dst, sst, nelems, elem);
    else
        coll_pairwise_alltoalls(g, dest, source, dst, sst, nelems, elem);
}

/* scan: 0 reduce, 1 inclusive, -1 exclusive prefix. */
static void coll_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                        size_t elem, int scan, coll_combine_fn combine);

/* A reduction by node: each node's sources are combined into its leader's dest through their
 * mapped memory (by the leader, or segment by segment by all of the node's PEs for large ones),
 * the leaders reduce across the nodes (in place), and each leader hands the result out to its
 * node. Only the leaders' step crosses the network, where a reduction over all PEs has every PE
 * send across. */
static void coll_node_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                             size_t elem, coll_combine_fn combine)
{
    struct coll_group node, leaders;
    coll_team_group(&node, g->routine, g->team->node_part);
    coll_shm_reduce_to_leader(&node, dest, source, count, elem, combine);
    if (node.my_rank != 0) {
        coll_node_receive(&node, dest, count * elem * (size_t)g->size);
        return;
    }
    coll_team_group(&leaders, g->routine, g->team->leaders_part);
    coll_reduce(&leaders, dest, dest, count, elem, 0, combine);
    coll_node_hand_out(&node, dest, count * elem);
}

static void coll_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                        size_t elem, int scan, coll_combine_fn combine)
{
    coll_check_symmetric(g, source, "source");
    if (coll_device_buffers(dest, source))
        coll_device_reduce(g, dest, source, count, elem, scan, combine);
    else if (!scan && coll_by_node(g, dest) && coll_node_mapped(source))
        coll_node_reduce(g, dest, source, count, elem, combine);
    else if (g->area && coll_all_mapped(g, dest, source))
        coll_shm_reduce(g, dest, source, count, elem, scan, combine);
    else if (scan)
        coll_gather_reduce(g, dest, source, count, elem, scan, combine);
    else if (coll_pair_exchange_pays(g, count * elem))
        coll_allreduce(g, dest, source, count, elem, combine);
    else if (coll_direct_pays(g, count * elem, elem))
        coll_direct_reduce(g, dest, source, count, elem, combine);
    else if (coll_segments_pay(g, count * elem))
        coll_segment_reduce(g, dest, source, count, elem, combine);
    else if (g->team)
        coll_allreduce(g, dest, source, count, elem, combine);
    else
        coll_set_reduce(g, dest, source, count, elem, combine);
    coll_scratch_trim();
}

/* ---- Generated API ---- */
#define DEFINE_TEAM_COLLECTIVES(T, N, ...)                                                         \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,          \
                              int PE_root)                                                         \
    {                                                                                              \
        return TEAM_COLLECTIVE("shmem_" #N "_broadcast", team, dest, source,                       \
                               coll_broadcast(&g_, dest, source, nelems * sizeof(T), PE_root, 1)); \
    }                                                                                              \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems)            \
    {                                                                                              \
        return TEAM_COLLECTIVE("shmem_" #N "_collect", team, dest, source,                         \
                               coll_collect(&g_, dest, source, nelems * sizeof(T), 0));            \
    }                                                                                              \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems)           \
    {                                                                                              \
        return TEAM_COLLECTIVE("shmem_" #N "_fcollect", team, dest, source,                        \
                               coll_collect(&g_, dest, source, nelems * sizeof(T), 1));            \
    }                                                                                              \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems)           \
    {                                                                                              \
        return TEAM_COLLECTIVE("shmem_" #N "_alltoall", team, dest, source,                        \
                               coll_alltoalls(&g_, dest, source, 1, 1, nelems, sizeof(T)));        \
    }                                                                                              \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,          \
                              ptrdiff_t sst, size_t nelems)                                        \
    {                                                                                              \
        return TEAM_COLLECTIVE("shmem_" #N "_alltoalls", team, dest, source,                       \
                               coll_alltoalls(&g_, dest, source, dst, sst, nelems, sizeof(T)));    \
    }
STRATA_RMA_TYPES(DEFINE_TEAM_COLLECTIVES)

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root)
{
    return TEAM_COLLECTIVE("shmem_broadcastmem", team, dest, source,
                           coll_broadcast(&g_, dest, source, nelems, PE_root, 1));
}

int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return TEAM_COLLECTIVE("shmem_collectmem", team, dest, source,
                           coll_collect(&g_, dest, source, nelems, 0));
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return TEAM_COLLECTIVE("shmem_fcollectmem", team, dest, source,
                           coll_collect(&g_, dest, source, nelems, 1));
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return TEAM_COLLECTIVE("shmem_alltoallmem", team, dest, source,
                           coll_alltoalls(&g_, dest, source, 1, 1, nelems, 1));
}

int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems)
{
    return TEAM_COLLECTIVE("shmem_alltoallsmem", team, dest, source,
                           coll_alltoalls(&g_, dest, source, dst, sst, nelems, 1));
}

/* ---- On a stream (shmemx.h): the library's agent runs these in the stream's order ---- */
static int coll_stream_broadcast(const struct stream_collective *c)
{
    return TEAM_COLLECTIVE(c->routine, c->team, c->dest, c->source,
                           coll_broadcast(&g_, c->dest, c->source, c->count * c->elem, c->root, 1));
}

static int coll_stream_fcollect(const struct stream_collective *c)
{
    return TEAM_COLLECTIVE(c->routine, c->team, c->dest, c->source,
                           coll_collect(&g_, c->dest, c->source, c->count * c->elem, 1));
}

static int coll_stream_alltoall(const struct stream_collective *c)
{
    return TEAM_COLLECTIVE(c->routine, c->team, c->dest, c->source,
                           coll_alltoalls(&g_, c->dest, c->source, 1, 1, c->count, c->elem));
}

static int coll_stream_reduce(const struct stream_collective *c)
{
    return TEAM_COLLECTIVE(c->routine, c->team, c->dest, c->source,
                           coll_reduce(&g_, c->dest, c->source, c->count, c->elem, 0, c->combine));
}

int shmemx_broadcastmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems,
                                  int PE_root, void *stream)
{
    return stream_collective(stream,
                             &(struct stream_collective){.routine = "shmemx_broadcastmem_on_stream",
                                                         .team = team,
                                                         .dest = dest,
                                                         .source = source,
                                                         .count = nelems,
                                                         .elem = 1,
                                                         .root = PE_root,
                                                         .run = coll_stream_broadcast});
}

int shmemx_fcollectmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems,
                                 void *stream)
{
    return stream_collective(stream,
                             &(struct stream_collective){.routine = "shmemx_fcollectmem_on_stream",
                                                         .team = team,
                                                         .dest = dest,
                                                         .source = source,
                                                         .count = nelems,
                                                         .elem = 1,
                                                         .run = coll_stream_fcollect});
}

int shmemx_alltoallmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems,
                                 void *stream)
{
    return stream_collective(stream,
                             &(struct stream_collective){.routine = "shmemx_alltoallmem_on_stream",
                                                         .team = team,
                                                         .dest = dest,
                                                         .source = source,
                                                         .count = nelems,
                                                         .elem = 1,
                                                         .run = coll_stream_alltoall});
}

#define COMBINE_and(a, b) ((a) & (b))
#define COMBINE_or(a, b) ((a) | (b))
#define COMBINE_xor(a, b) ((a) ^ (b))
#define COMBINE_max(a, b) ((a) > (b) ? (a) : (b))
#define COMBINE_min(a, b) ((a) < (b) ? (a) : (b))
#define COMBINE_sum(a, b) ((a) + (b))
#define COMBINE_prod(a, b) ((a) * (b))

#define DEFINE_COMBINE(T, N, OP)                                                                   \
    static void combine_##N##_##OP(void *acc, const void *in, size_t count)                        \
    {                                                                                              \
        T *a = acc;                                                                                \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < count; i++)                                                         \
            a[i] = COMBINE_##OP(a[i], b[i]);                                                       \
    }
#define DEFINE_REDUCE(T, N, OP)                                                                    \
    DEFINE_COMBINE(T, N, OP)                                                                       \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce)     \
    {                                                                                              \
        return TEAM_COLLECTIVE(                                                                    \
            "shmem_" #N "_" #OP "_reduce", team, dest, source,                                     \
            coll_reduce(&g_, dest, source, nreduce, sizeof(T), 0, combine_##N##_##OP));            \
    }                                                                                              \
    int shmemx_##N##_##OP##_reduce_on_stream(shmem_team_t team, T *dest, const T *source,          \
                                             size_t nreduce, void *stream)                         \
    {                                                                                              \
        return stream_collective(stream, &(struct stream_collective){                              \
                                             .routine = "shmemx_" #N "_" #OP "_reduce_on_stream",  \
                                             .team = team,                                         \
                                             .dest = dest,                                         \
                                             .source = source,                                     \
                                             .count = nreduce,                                     \
                                             .elem = sizeof(T),                                    \
                                             .combine = combine_##N##_##OP,                        \
                                             .run = coll_stream_reduce});                          \
    }
#define DEFINE_REDUCE_BITWISE(T, N, ...)                                                           \
    DEFINE_REDUCE(T, N, and) DEFINE_REDUCE(T, N, or) DEFINE_REDUCE(T, N, xor)
#define DEFINE_REDUCE_MINMAX(T, N, ...) DEFINE_REDUCE(T, N, max) DEFINE_REDUCE(T, N, min)
#define DEFINE_REDUCE_SUM(T, N, ...)                                                               \
    DEFINE_REDUCE(T, N, sum)                                                                       \
    DEFINE_REDUCE(T, N, prod)                                                                      \
    int shmem_##N##_sum_inscan(shmem_team_t team, T *dest, const T *source, size_t nelems)         \
    {                                                                                              \
        return TEAM_COLLECTIVE(                                                                    \
            "shmem_" #N "_sum_inscan", team, dest, source,                                         \
            coll_reduce(&g_, dest, source, nelems, sizeof(T), 1, combine_##N##_sum));              \
    }                                                                                              \
    int shmem_##N##_sum_exscan(shmem_team_t team, T *dest, const T *source, size_t nelems)         \
    {                                                                                              \
        return TEAM_COLLECTIVE(                                                                    \
            "shmem_" #N "_sum_exscan", team, dest, source,                                         \
            coll_reduce(&g_, dest, source, nelems, sizeof(T), -1, combine_##N##_sum));             \
    }
STRATA_REDUCE_BITWISE_TYPES(DEFINE_REDUCE_BITWISE)
STRATA_REDUCE_MINMAX_TYPES(DEFINE_REDUCE_MINMAX)
STRATA_REDUCE_SUM_TYPES(DEFINE_REDUCE_SUM)

enum kind_reduction coll_kind_reduction(coll_combine_fn combine)
{
#define COLL_KIND_REDUCTION(NAME, OP, TYPE)                                                        \
    if (combine == combine_##TYPE##_##OP)                                                          \
        return KIND_REDUCE_##NAME;
    KIND_REDUCTIONS(COLL_KIND_REDUCTION)
#undef COLL_KIND_REDUCTION
    return KIND_REDUCE_NONE;
}

/* ---- Legacy active-set forms (deprecated, still in 1.6) ----
 * The active set is PE_start + i * 2^logPE_stride for i < PE_size. The whole world is
 * SHMEM_TEAM_WORLD (same members, same order, and the calls on it are ordered alike on every PE),
 * so it runs as that team. Other sets signal through counters in pSync, which the caller
 * guarantees no other live call uses; each routine gives back what it consumed (coll_end), so
 * pSync is SHMEM_SYNC_VALUE again when it returns. pWrk is not needed: reductions combine in
 * private memory. */
#define ACTIVE_SET_INLINE 64 /* members held in the set itself, beyond that malloc'd */

struct active_set {
    struct coll_group g;
    int *members;
    int inline_members[ACTIVE_SET_INLINE];
};

/* Returns 0, or -1 when this PE is outside the set: the spec leaves that undefined, and like
 * other implementations the call then does nothing (reported under SHMEM_DEBUG). */
static int active_set_begin(struct active_set *set, const char *routine, int start, int log_stride,
                            int size, long *psync)
{
    runtime_require_init(routine);
    long last = start + ((long)(size - 1) << log_stride);
    if (size < 1 || start < 0 || log_stride < 0 || log_stride > 30 || last >= rt.n_pes)
        log_fatal(routine,
                  "invalid active set (PE_start %d, logPE_stride %d, PE_size %d) for %d PEs", start,
                  log_stride, size, rt.n_pes);
    set->members = set->inline_members;
    if (size == rt.n_pes) { /* then start is 0 and the stride 1 (or size 1) */
        coll_team_group(&set->g, routine, SHMEM_TEAM_WORLD);
        return 0;
    }
    if (size > ACTIVE_SET_INLINE && !(set->members = malloc((size_t)size * sizeof(int))))
        log_fatal(routine, "cannot allocate an active set of %d PEs", size);
    int me = -1;
    for (int i = 0; i < size; i++) {
        set->members[i] = start + (i << log_stride);
        if (set->members[i] == rt.my_pe)
            me = i;
    }
    if (me < 0) {
        if (rt.debug)
            log_error(routine,
                      "PE %d is not in the active set (PE_start %d, logPE_stride %d, PE_size %d): "
                      "nothing done",
                      rt.my_pe, start, log_stride, size);
        if (set->members != set->inline_members)
            free(set->members);
        return -1;
    }
    set->g = (struct coll_group){.size = size,
                                 .my_rank = me,
                                 .members = set->members,
                                 .flags = (uint64_t *)psync,
                                 .gather = team_active_set_gather(),
                                 .gather_by_world = 1,
                                 .routine = routine};
    set->g.expect = set->g.set_expect;
    return 0;
}

static void active_set_end(struct active_set *set)
{
    coll_end(&set->g);
    if (set->members != set->inline_members)
        free(set->members);
}

#define ACTIVE_SET(routine, CALL)                                                                  \
    do {                                                                                           \
        struct active_set set_;                                                                    \
        if (active_set_begin(&set_, routine, PE_start, logPE_stride, PE_size, pSync) == 0) {       \
            struct coll_group *g_ = &set_.g;                                                       \
            coll_begun(g_);                                                                        \
            CALL;                                                                                  \
            active_set_end(&set_);                                                                 \
        }                                                                                          \
    } while (0)

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    order_quiet_all();
    ACTIVE_SET("shmem_barrier", coll_sync(g_));
}

/* The name is also a C11 generic macro in shmem.h: the parentheses define the function. */
void(shmem_sync)(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    ACTIVE_SET("shmem_sync", coll_sync(g_));
}

#define DEFINE_ACTIVE_SET_SIZED(BITS, BYTES)                                                       \
    void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root,         \
                               int PE_start, int logPE_stride, int PE_size, long *pSync)           \
    {                                                                                              \
        ACTIVE_SET("shmem_broadcast" #BITS,                                                        \
                   coll_broadcast(g_, dest, source, nelems *BYTES, PE_root, 0));                   \
    }                                                                                              \
    void shmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start,          \
                             int logPE_stride, int PE_size, long *pSync)                           \
    {                                                                                              \
        ACTIVE_SET("shmem_collect" #BITS, coll_collect(g_, dest, source, nelems *BYTES, 0));       \
    }                                                                                              \
    void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start,         \
                              int logPE_stride, int PE_size, long *pSync)                          \
    {                                                                                              \
        ACTIVE_SET("shmem_fcollect" #BITS, coll_collect(g_, dest, source, nelems *BYTES, 1));      \
    }                                                                                              \
    void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start,         \
                              int logPE_stride, int PE_size, long *pSync)                          \
    {                                                                                              \
        ACTIVE_SET("shmem_alltoall" #BITS, coll_alltoalls(g_, dest, source, 1, 1, nelems, BYTES)); \
    }                                                                                              \
    void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,       \
                               size_t nelems, int PE_start, int logPE_stride, int PE_size,         \
                               long *pSync)                                                        \
    {                                                                                              \
        ACTIVE_SET("shmem_alltoalls" #BITS,                                                        \
                   coll_alltoalls(g_, dest, source, dst, sst, nelems, BYTES));                     \
    }
DEFINE_ACTIVE_SET_SIZED(32, 4)
DEFINE_ACTIVE_SET_SIZED(64, 8)

static void set_reduce(struct coll_group *g, void *dest, const void *source, int nreduce,
                       size_t elem, coll_combine_fn combine)
{
    coll_reduce(g, dest, source, nreduce > 0 ? (size_t)nreduce : 0, elem, 0, combine);
}

#define DEFINE_TO_ALL(T, N, OP)                                                                    \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,            \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync)            \
    {                                                                                              \
        (void)pWrk;                                                                                \
        ACTIVE_SET("shmem_" #N "_" #OP "_to_all",                                                  \
                   set_reduce(g_, dest, source, nreduce, sizeof(T), combine_##N##_##OP));          \
    }
/* The team tables have no signed bitwise rows; the legacy ones do. */
#define DEFINE_TO_ALL_BITWISE(T, N, ...)                                                           \
    DEFINE_COMBINE(T, N, and)                                                                      \
    DEFINE_COMBINE(T, N, or)                                                                       \
    DEFINE_COMBINE(T, N, xor)                                                                      \
    DEFINE_TO_ALL(T, N, and) DEFINE_TO_ALL(T, N, or) DEFINE_TO_ALL(T, N, xor)
#define DEFINE_TO_ALL_MINMAX(T, N, ...) DEFINE_TO_ALL(T, N, max) DEFINE_TO_ALL(T, N, min)
#define DEFINE_TO_ALL_SUM(T, N, ...) DEFINE_TO_ALL(T, N, sum) DEFINE_TO_ALL(T, N, prod)
STRATA_TO_ALL_BITWISE_TYPES(DEFINE_TO_ALL_BITWISE)
STRATA_TO_ALL_MINMAX_TYPES(DEFINE_TO_ALL_MINMAX)
STRATA_TO_ALL_SUM_TYPES(DEFINE_TO_ALL_SUM)
