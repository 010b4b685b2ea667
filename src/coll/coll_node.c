/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives that move blocks on a team that goes by node (team.h: its node and leaders parts):
 * collects and alltoalls. A node's members meet through their mapped memory and only one leader
 * per node crosses the network, once per run of blocks or per node, where the flat algorithms
 * have every member send across. Broadcasts and reductions by node, which run the leaders' part
 * of their call through the dispatch of coll.c, are there. */
#include "../../common/copy.h"
#include "coll.h"

#include <stdlib.h>
#include <string.h>

/* ---- Collects ----
 * Each node's leader gathers its node's blocks into its dest through their mapped memory (the
 * members stay in the call meanwhile), the leaders learn every block's size (collect) and put
 * their node's blocks into every other leader's dest, and each leader hands the whole dest out to
 * its node. Only the leaders' steps cross the network, once per run of blocks and leader, where
 * the flat collects have every member send across in every round. The node part lists its
 * members in team order, so the k-th member of the team on this node is node rank k. */

/* The first team rank after r that is on this node (team->size if none). */
static int coll_node_next_rank(const struct strata_team *team, int r)
{
    while (++r < team->size && rt.node_of[team->members[r]] != rt.my_node)
        ;
    return r;
}

/* The end of the run of consecutive team ranks on this node that begins at first. */
static int coll_node_run_end(const struct strata_team *team, int first)
{
    int end = first;
    while (end < team->size && rt.node_of[team->members[end]] == rt.my_node)
        end++;
    return end;
}

_Static_assert(sizeof(size_t) == sizeof(uint64_t), "block sizes travel as gather words");

/* The block offsets of a collect by node, on a leader: it reads each member's block size once
 * the member has published it (step), puts its node's sizes of a round of team ranks into every
 * leader's gather words, a run at a time, and after a sync of the leaders adds up the round's.
 * A gather word is rewritten only in the next round, after a sync that follows every leader's
 * reading, or by a later collect, which no leader reaches before every leader has signalled this
 * one's blocks (coll_node_exchange), that is read the sizes. */
static void coll_node_sizes(struct coll_group *node, struct coll_group *leaders,
                            const struct strata_team *team, uint64_t step, size_t *off)
{
    for (int k = 0, r = coll_node_next_rank(team, -1); k < node->size;
         k++, r = coll_node_next_rank(team, r)) {
        if (k)
            coll_wait_step(node, k, step, 0);
        off[r + 1] = ((const struct coll_area *)coll_peer(node, node->area, k))->size;
    }
    int n = team->size, round = team_gather_round();
    for (int first = 0; first < n; first += round) {
        int last = n - first < round ? n : first + round;
        if (first)
            coll_sync(leaders);
        for (int r = coll_node_next_rank(team, first - 1); r < last;) {
            int end = coll_node_run_end(team, r);
            end = end < last ? end : last;
            for (int k = 0; k < leaders->size; k++)
                shmem_putmem(&leaders->gather[r - first], &off[r + 1],
                             (size_t)(end - r) * sizeof(uint64_t), leaders->members[k]);
            r = coll_node_next_rank(team, end - 1);
        }
        shmem_quiet();
        coll_sync(leaders);
        for (int r = first; r < last; r++)
            off[r + 1] = off[r] + leaders->gather[r - first];
    }
}

/* The leader's copies of its node's sources into its dest, each once its member has published
 * that it is ready (step). */
static void coll_node_gather(struct coll_group *node, const struct strata_team *team, void *dest,
                             const void *source, const size_t *off, uint64_t step)
{
    for (int k = 0, r = coll_node_next_rank(team, -1); k < node->size;
         k++, r = coll_node_next_rank(team, r)) {
        if (k)
            coll_wait_step(node, k, step, 0);
        copy_bulk((char *)dest + off[r], coll_peer(node, source, k), off[r + 1] - off[r]);
    }
}

/* The leaders' step of a collect: each puts its node's blocks into every other leader's dest, a
 * run of consecutive team ranks at a time (one run per node when PEs are placed in blocks), the
 * last non-empty run to each leader with the exchange's signal (coll_exchange_begin). */
static void coll_node_exchange(struct coll_group *leaders, const struct strata_team *team,
                               void *dest, const size_t *off)
{
    int ch = coll_exchange_begin(leaders);
    for (int k = 1; k < leaders->size; k++) {
        int rank = (leaders->my_rank + k) % leaders->size;
        char *held = NULL; /* the latest run, put once it is known not to be the last */
        size_t held_bytes = 0;
        for (int first = coll_node_next_rank(team, -1); first < team->size;) {
            int end = coll_node_run_end(team, first);
            if (off[end] > off[first]) {
                if (held_bytes)
                    shmem_putmem(held, held, held_bytes, leaders->members[rank]);
                held = (char *)dest + off[first];
                held_bytes = off[end] - off[first];
            }
            first = coll_node_next_rank(team, end - 1);
        }
        coll_put_signal(leaders, held, held, held_bytes, ch, rank);
    }
    coll_wait(leaders, ch, (uint64_t)(leaders->size - 1));
}

/* The leader's last step where its node's dests are written (pull 0) or are to be copied from its
 * dest (pull bytes), the counterpart of coll_node_receive: the step it publishes. */
static uint64_t coll_node_release(struct coll_group *node, void *dest, size_t pull)
{
    node->area->pull = pull;
    uint64_t step = coll_step(node);
    node->area->last_dest = (uint64_t)(uintptr_t)dest;
    coll_publish(node, step);
    return step;
}

void coll_node_hand_out(struct coll_group *node, void *dest, size_t total)
{
    if (total * (size_t)(node->size - 1) <= COLL_NODE_LEADER_COPY_MAX) {
        node->area->pull = 0;
        coll_shm_broadcast(node, dest, dest, total, 0, 1);
        return;
    }
    uint64_t step = coll_node_release(node, dest, total);
    for (int k = 1; k < node->size; k++)
        coll_wait_step(node, k, step, total);
}

/* The leader's pull is read after its step, and rewritten only in its next collective by node
 * once this member has entered that one. */
void coll_node_receive(struct coll_group *node, void *dest, size_t bytes)
{
    uint64_t step = coll_step(node);
    node->area->last_dest = (uint64_t)(uintptr_t)dest;
    coll_wait_step(node, 0, step, bytes);
    size_t pull = ((const struct coll_area *)coll_peer(node, node->area, 0))->pull;
    if (pull)
        copy_bulk(dest, coll_peer(node, dest, 0), pull);
    coll_publish(node, step);
}

void coll_node_collect(struct coll_group *g, void *dest, const void *source, size_t bytes,
                       int fixed)
{
    struct strata_team *team = g->team;
    struct coll_group node, leaders;
    coll_team_group(&node, g->routine, team->node_part);
    node.area->size = bytes;
    uint64_t step = coll_step(&node);
    coll_publish(&node, step);
    if (node.my_rank != 0) {
        coll_node_receive(&node, dest, bytes * (size_t)g->size);
        return;
    }
    coll_team_group(&leaders, g->routine, team->leaders_part);
    size_t *off = coll_block_offsets(g, fixed ? bytes : 0, 1); /* collect: zeros, sizes below */
    if (!fixed)
        coll_node_sizes(&node, &leaders, team, step, off);
    coll_node_gather(&node, team, dest, source, off, step);
    coll_node_exchange(&leaders, team, dest, off);
    coll_node_hand_out(&node, dest, off[team->size]);
    free(off);
}

/* ---- Alltoalls ----
 * Each member copies its blocks for its node's members straight into their dests. Each node's
 * leader packs its node's blocks for every other node into one message to that node's leader, in
 * the scratch buffer of the leaders part's next buffer step, and unpacks the messages it gets
 * into its node's dests: one message per pair of nodes, where the pairwise alltoall sends one per
 * pair of members on different nodes. A leader's buffer of step s is written only once every
 * leader has entered step s - 1, and so read that of s - 2 (the rule of the leaders' reductions,
 * coll_reduce.c, whose steps these share): the exchange waits for every leader's signal. */

/* A team's ranks grouped by node, nodes in the order of their leaders and ranks in team order:
 * those of the node of leader rank z are order[first[z]] to order[first[z + 1] - 1]. */
struct node_order {
    int *first, *order;
};

static void node_order_build(struct node_order *o, const struct coll_group *leaders,
                             const struct strata_team *team)
{
    int *leader_of_node = malloc((size_t)rt.n_nodes * sizeof(int));
    o->first = calloc((size_t)leaders->size + 1, sizeof(int));
    o->order = malloc((size_t)team->size * sizeof(int));
    if (!leader_of_node || !o->first || !o->order)
        log_fatal(leaders->routine, "cannot allocate the order of %d PEs by node", team->size);
    for (int z = 0; z < leaders->size; z++)
        leader_of_node[rt.node_of[leaders->members[z]]] = z;
    for (int r = 0; r < team->size; r++)
        o->first[leader_of_node[rt.node_of[team->members[r]]] + 1]++;
    for (int z = 0; z < leaders->size; z++)
        o->first[z + 1] += o->first[z];
    for (int r = 0; r < team->size; r++) /* first[z] counts up to first[z + 1] */
        o->order[o->first[leader_of_node[rt.node_of[team->members[r]]]]++] = r;
    for (int z = leaders->size; z > 0; z--)
        o->first[z] = o->first[z - 1];
    o->first[0] = 0;
    free(leader_of_node);
}

static int node_order_count(const struct node_order *o, int z)
{
    return o->first[z + 1] - o->first[z];
}

/* Where leader x's message lies in leader z's buffer: the other nodes' messages in leader order,
 * each its node's blocks for z's node, sender by sender and, for each, receiver by receiver. */
static size_t node_order_message_at(const struct node_order *o, int x, int z, size_t block)
{
    int before = o->first[x] - (z < x ? node_order_count(o, z) : 0);
    return (size_t)before * (size_t)node_order_count(o, z) * block;
}

/* Copies nelems elements of elem bytes, from_step and to_step bytes apart. */
static void copy_elements(char *to, ptrdiff_t to_step, const char *from, ptrdiff_t from_step,
                          size_t nelems, size_t elem)
{
    if (to_step == (ptrdiff_t)elem && from_step == (ptrdiff_t)elem) {
        copy_bulk(to, from, nelems * elem);
        return;
    }
    for (size_t k = 0; k < nelems; k++)
        memcpy(to + (ptrdiff_t)k * to_step, from + (ptrdiff_t)k * from_step, elem);
}

int coll_node_alltoalls_pay(const struct coll_group *g, size_t nelems, size_t elem)
{
    size_t n = (size_t)g->size; /* a node's members times the others' is at most n^2 / 4 */
    return (n / 2) * ((n + 1) / 2) * nelems * elem <= COLL_BUF_BYTES;
}

/* The shape of an alltoalls call: a block is nelems elements of elem bytes, strided dst in dest
 * and sst in source. */
struct alltoalls_shape {
    size_t nelems, elem;
    ptrdiff_t dst, sst;
};

/* The leader's packing of its message to leader z (node_order_message_at) into out. */
static void alltoalls_pack(struct coll_group *node, const struct node_order *o, int x, int z,
                           const char *source, const struct alltoalls_shape *s, char *out)
{
    size_t block = s->nelems * s->elem;
    ptrdiff_t e = (ptrdiff_t)s->elem, span = (ptrdiff_t)s->nelems * s->sst * e;
    for (int i = 0; i < node_order_count(o, x); i++) {
        const char *from = coll_peer(node, source, i);
        for (int j = o->first[z]; j < o->first[z + 1]; j++, out += block)
            copy_elements(out, e, from + o->order[j] * span, s->sst * e, s->nelems, s->elem);
    }
}

/* The leader's unpacking of the message from leader z's node into its node's dests. */
static void alltoalls_unpack(struct coll_group *node, const struct node_order *o, int x, int z,
                             const char *in, char *dest, const struct alltoalls_shape *s)
{
    size_t block = s->nelems * s->elem;
    ptrdiff_t e = (ptrdiff_t)s->elem, span = (ptrdiff_t)s->nelems * s->dst * e;
    for (int i = o->first[z]; i < o->first[z + 1]; i++)
        for (int k = 0; k < node_order_count(o, x); k++, in += block)
            copy_elements((char *)coll_peer(node, dest, k) + o->order[i] * span, s->dst * e, in, e,
                          s->nelems, s->elem);
}

/* The leaders' step of an alltoalls by node (on leader rank x of the leaders part). */
static void alltoalls_across(struct coll_group *node, struct coll_group *leaders,
                             const struct strata_team *team, void *dest, const void *source,
                             const struct alltoalls_shape *s)
{
    struct node_order o;
    node_order_build(&o, leaders, team);
    int x = leaders->my_rank;
    size_t block = s->nelems * s->elem;
    char *buf = leaders->area->buf[++leaders->area->dstep & 1];
    char *out = coll_scratch_get(COLL_BUF_BYTES);
    int ch = coll_exchange_begin(leaders);
    for (int k = 1; k < leaders->size; k++) {
        int z = (x + k) % leaders->size;
        alltoalls_pack(node, &o, x, z, source, s, out);
        coll_put_signal(leaders, buf + node_order_message_at(&o, x, z, block), out,
                        (size_t)node_order_count(&o, x) * (size_t)node_order_count(&o, z) * block,
                        ch, z);
    }
    coll_wait(leaders, ch, (uint64_t)(leaders->size - 1));
    for (int k = 1; k < leaders->size; k++) {
        int z = (x + k) % leaders->size;
        alltoalls_unpack(node, &o, x, z, buf + node_order_message_at(&o, z, x, block), dest, s);
    }
    free(o.first);
    free(o.order);
}

void coll_node_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                         ptrdiff_t sst, size_t nelems, size_t elem)
{
    struct strata_team *team = g->team;
    struct coll_group node, leaders;
    coll_team_group(&node, g->routine, team->node_part);
    for (int r = coll_node_next_rank(team, -1); r < team->size; r = coll_node_next_rank(team, r))
        coll_put_block(g, dest, source, dst, sst, nelems, elem, r, COLL_CH_NONE);
    uint64_t step = coll_step(&node);
    coll_publish(&node, step);
    if (node.my_rank != 0) {
        coll_node_receive(&node, dest, nelems * elem * (size_t)g->size);
        return;
    }
    for (int k = 1; k < node.size; k++)
        coll_wait_step(&node, k, step, 0);
    coll_team_group(&leaders, g->routine, team->leaders_part);
    struct alltoalls_shape s = {nelems, elem, dst, sst};
    alltoalls_across(&node, &leaders, team, dest, source, &s);
    coll_node_release(&node, dest, 0);
}
