/* SPDX-License-Identifier: BSD-3-Clause */
/* Collectives, internal: the group a collective runs over, its signals and scratch, and the
 * algorithms, by placement:
 *   coll_shm.c    every member mapped: copies into mapped buffers, published step counters
 *   coll_tree.c   any placement: binomial broadcast (eager on a team of two), doubling and ring
 *                 collect, pairwise alltoall
 *   coll_reduce.c any placement: direct reduce-scatter through the owners' scratch (teams up to
 *                 16 members), segments read from every source (large vectors), recursive
 *                 doubling / Rabenseifner (teams), pSync mailboxes and gathered sources (active
 *                 sets, scans)
 *   coll_node.c   teams that go by node: collects and alltoalls through each node's leader
 *   coll_sig.c    the signals those use
 * No collective synchronizes on entry: 1.6 makes the caller guarantee that every member's dest
 * is ready before any member calls (and, for active sets, that pSync is not in use), so data may
 * land before its owner arrives; what a collective waits for is its data and, where a buffer of
 * this PE is read by others, their reading. Nor does one wait for its own transfers to complete
 * at their targets (a quiet costs a network round trip): a receiver waits for the signal that
 * follows its data, and transfers without a signal are followed by a quiet and a sync. */
#ifndef STRATA_COLL_H
#define STRATA_COLL_H

#include "../team.h"

#include <stddef.h>
#include <stdint.h>

typedef void (*coll_combine_fn)(void *acc, const void *in, size_t count);

/* Signal channels: counters that others add to and this PE waits on. A channel has a single
 * sender per call pattern that matters (see each), so counts from different calls never mix:
 *   COLL_CH_BCAST + j  binomial broadcast and doubling collect, from the member 2^j behind
 *   COLL_CH_PAIR + j   recursive doubling/halving (teams) and the active-set sync, round j
 *   COLL_CH_RING       ring collect, from the member behind
 *   COLL_CH_FOLD       the non-power-of-two fold partner of a reduction
 *   COLL_CH_ALL        everyone (active sets only: pSync is never shared by two live calls)
 *   COLL_CH_EXCHANGE + p  everyone, in a team's alltoall of call parity p (see
 *                      coll_pairwise_alltoalls)
 *   COLL_CH_PIECES + p, COLL_CH_RESULTS + p  everyone, in a team's direct reduction, block
 *                      parity p (see coll_direct_reduce) */
enum {
    COLL_CH_BCAST = 0,
    COLL_CH_PAIR = 32,
    COLL_CH_RING = 64,
    COLL_CH_FOLD,
    COLL_CH_ALL,
    COLL_CH_EXCHANGE,
    COLL_CH_PIECES = COLL_CH_EXCHANGE + 2,
    COLL_CH_RESULTS = COLL_CH_PIECES + 2,
    COLL_CHANNELS = COLL_CH_RESULTS + 2
};

/* Bytes of each of the two scratch buffers of a team (reduction chunks and pieces), and the
 * slots of eager broadcasts (coll_eager_broadcast), large and small: all of the slot's scratch. */
#define COLL_BUF_BYTES 65536
#define COLL_EAGER_SLOTS 16
#define COLL_EAGER_BYTES 4096
#define COLL_EAGER_SMALL_SLOTS 128
#define COLL_EAGER_SMALL_BYTES 256

/* A team's collective words (team_coll_words), zeroed when the slot is claimed but for the
 * scratch (buf, eager, eager_small: written before read). Everything but pub, size, pull, the
 * channel counters, the eager call words and the scratch is private to this PE; the step counters
 * advance identically on every member, since members make the same calls in the same order. */
struct coll_area {
    uint64_t pub;  /* last step this PE published (shared-memory algorithms) */
    uint64_t size; /* collect: this PE's block size, valid once its step is published */
    uint64_t pull; /* by node, on a leader: bytes its node copies from its dest, or 0 */
    uint64_t pad0[5];
    uint64_t flags[COLL_CHANNELS]; /* added to by senders */
    uint64_t expect[COLL_CHANNELS];
    uint64_t step;      /* steps so far */
    uint64_t dstep;     /* steps that used the buffers: buf[dstep & 1] is this one's */
    uint64_t last_dest; /* dest of the last broadcast on this team, as this PE passed it */
    uint64_t exchanges; /* alltoalls off the shared-memory path so far */
    uint64_t eager_call[COLL_EAGER_SLOTS]; /* set by the root: the call whose data is in the slot */
    uint64_t eager_small_call[COLL_EAGER_SMALL_SLOTS]; /* the same for the small slots */
    uint64_t pad1[2];
    char buf[2][COLL_BUF_BYTES];
    char eager[COLL_EAGER_SLOTS][COLL_EAGER_BYTES];
    char eager_small[COLL_EAGER_SMALL_SLOTS][COLL_EAGER_SMALL_BYTES];
};

/* The PEs a collective runs over: a team, or the active set of a legacy routine, whose signals
 * live in the caller's pSync. */
struct coll_group {
    int size, my_rank;
    const int *members; /* world rank of each rank */
    struct strata_team *team;
    struct coll_area *area; /* teams */
    uint64_t *flags;        /* area->flags or pSync */
    uint64_t *expect;       /* area->expect or set_expect */
    uint64_t *gather;       /* collect's sizes: entry per rank (teams) or per world rank (sets) */
    int gather_by_world;
    const char *routine;
    uint64_t set_expect[COLL_CHANNELS];
};

/* SHMEM_DEBUG: a team collective's buffers share one space, this PE is a member of it, and the
 * team lies inside the space's team; reports and ends the job otherwise (a mismatch would hang). */
void coll_space_check(const char *routine, const struct strata_team *team, const void *dest,
                      const void *source);

/* ---- Device buffers (coll_device.c) ----
 * Buffers in a space the library may not load or store: every byte moves through RMA, which
 * stages device memory through host buffers, and reductions combine in host scratch, or on the
 * device where the kind reduces the type itself and every source is attached here (one node).
 * Simple algorithms for any group; each opens with a sync (sources ready, destinations free) and
 * closes with one. */
/* The reduction a kind may run itself that combine performs (KIND_REDUCE_NONE: none). */
enum kind_reduction coll_kind_reduction(coll_combine_fn combine);
/* Whether a collective with these buffers must take the device path. */
int coll_device_buffers(const void *dest, const void *source);
void coll_device_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                           int root, int root_receives);
void coll_device_collect(struct coll_group *g, void *dest, const void *source, size_t bytes,
                         int fixed);
void coll_device_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                           ptrdiff_t sst, size_t nelems, size_t elem);
/* scan: 0 reduce, 1 inclusive, -1 exclusive prefix. */
void coll_device_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                        size_t elem, int scan, coll_combine_fn combine);

/* ---- Signals (coll_sig.c) ---- */
/* Adds 1 to channel ch of rank. */
void coll_signal(struct coll_group *g, int ch, int rank);
/* Puts bytes to dest on rank, then adds 1 to its channel ch (delivered after the data). */
void coll_put_signal(struct coll_group *g, void *dest, const void *src, size_t bytes, int ch,
                     int rank);
/* Waits for count more signals on this PE's channel ch. */
void coll_wait(struct coll_group *g, int ch, uint64_t count);
/* Dissemination barrier over the group (a team's own sync for teams). */
void coll_sync(struct coll_group *g);
/* Active sets: gives back the counts consumed from pSync, which is then SHMEM_SYNC_VALUE again
 * once every sender's signals have arrived (they all have: each was waited for). */
void coll_end(struct coll_group *g);
/* Shared-memory steps: the next step number, publishing it, and waiting for rank's, which copies
 * about bytes before it publishes (the wait spins that long before it yields). */
uint64_t coll_step(struct coll_group *g);
void coll_publish(struct coll_group *g, uint64_t step);
void coll_wait_step(struct coll_group *g, int rank, uint64_t step, size_t bytes);
/* rank's copy of a symmetric address (every member is mapped on the shared-memory path). */
void *coll_peer(const struct coll_group *g, const void *addr, int rank);

/* Segment r of n of the count elements from first (lengths differ by one at most): its first
 * element, and its length in *len. */
static inline size_t coll_segment_of(size_t first, size_t count, int n, int r, size_t *len)
{
    size_t lo = first + (size_t)r * count / (size_t)n;
    *len = first + ((size_t)r + 1) * count / (size_t)n - lo;
    return lo;
}

/* ---- Every member mapped (coll_shm.c) ---- */
void coll_shm_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                        int root, int root_receives);
/* fixed: fcollect (every block bytes long); else collect. */
void coll_shm_collect(struct coll_group *g, void *dest, const void *source, size_t bytes,
                      int fixed);
void coll_shm_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                        ptrdiff_t sst, size_t nelems, size_t elem);
/* scan: 0 reduce, 1 inclusive, -1 exclusive prefix. */
void coll_shm_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                     size_t elem, int scan, coll_combine_fn combine);
/* The first half of a reduction by node (coll.c): every member's source combined into the dest of
 * the node's leader (rank 0), the members leaving theirs untouched until the leader hands out the
 * result (coll_node_hand_out). */
void coll_shm_reduce_to_leader(struct coll_group *g, void *dest, const void *source, size_t count,
                               size_t elem, coll_combine_fn combine);

/* ---- Any placement (coll_tree.c) ---- */
void coll_tree_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                         int root, int root_receives);
/* Teams of two, up to COLL_EAGER_BYTES: the root puts the data into a slot of the other member's
 * scratch, which copies it into its dest, so the root may run calls ahead. */
int coll_eager_pays(const struct coll_group *g, size_t bytes);
void coll_eager_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                          int root, int root_receives);
/* Collect by signalled puts: the doubling collect while dest holds at most
 * COLL_DOUBLING_COLLECT_MAX bytes, the ring above. */
#define COLL_DOUBLING_COLLECT_MAX ((size_t)64 * 1024)
void coll_signal_collect(struct coll_group *g, void *dest, const void *source, size_t bytes,
                         int fixed);
/* Puts rank's block of an alltoalls (elements of elem bytes, strides dst and sst) to it; unless
 * ch is COLL_CH_NONE, its last piece carries a signal on channel ch (coll_put_signal). */
#define COLL_CH_NONE (-1)
void coll_put_block(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                    ptrdiff_t sst, size_t nelems, size_t elem, int rank, int ch);
void coll_pairwise_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                             ptrdiff_t sst, size_t nelems, size_t elem);
/* Begins an exchange, in which each member puts a part to every member (a pairwise alltoall, the
 * leaders' step of collectives by node, collect's sizes), and returns its channel: on a team the
 * channel of the call's parity, so no member is two calls ahead of another (see
 * coll_pairwise_alltoalls); on an active set its pSync's, which no other live call uses.
 * The last put of each part goes by coll_put_signal on it (a put-with-signal lands after the
 * puts to the same member before it), and each member then waits for a signal per sender. */
int coll_exchange_begin(struct coll_group *g);
/* A member's block offsets in collect's dest: fixed-size blocks, or sizes exchanged through the
 * gather words on the exchange channel (every member has entered the call once it returns).
 * Returns n + 1 offsets (malloc'd). */
size_t *coll_block_offsets(struct coll_group *g, size_t bytes, int fixed);

/* ---- Teams that go by node (coll_node.c; broadcasts and reductions by node: coll.c) ---- */
/* What a node's leader copies alone in a collective by node, its node's sources of a reduction
 * or its copies of the result into its node's dests: a few MiB cost less than the messages they
 * save. Above, the node's PEs share the work. */
#define COLL_NODE_LEADER_COPY_MAX ((size_t)4 << 20)
/* The group of a team, or of a part of one, that this PE is a member of. */
void coll_team_group(struct coll_group *g, const char *routine, shmem_team_t team);
/* The last step of a collective by node, on a node's leader: it copies its dest's first total
 * bytes into every member's while those copies stay within COLL_NODE_LEADER_COPY_MAX; above, the
 * members copy them from the leader's dest all at once, and the leader waits until they have,
 * since its dest is the program's once it returns. */
void coll_node_hand_out(struct coll_group *node, void *dest, size_t total);
/* Its counterpart on the other members of the node (and that of coll_shm_broadcast's, whose rule
 * for alternated dests it keeps); bytes: about what the leader copies before it hands out. */
void coll_node_receive(struct coll_group *node, void *dest, size_t bytes);
/* fixed: fcollect. dest and source mapped on every node. */
void coll_node_collect(struct coll_group *g, void *dest, const void *source, size_t bytes,
                       int fixed);
/* Whether an alltoalls by node pays: every leader gets its node's blocks from the other nodes in
 * one scratch buffer (blocks small enough that messages cost more than bytes). The same on every
 * member. */
int coll_node_alltoalls_pay(const struct coll_group *g, size_t nelems, size_t elem);
void coll_node_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                         ptrdiff_t sst, size_t nelems, size_t elem);

/* ---- Reductions (coll_reduce.c) ---- */
/* Teams off the shared-memory path: recursive doubling, or Rabenseifner for large vectors. */
/* On a team of two, recursive doubling is a single exchange of the vector: one message deep,
 * against two for the direct reduction and for Rabenseifner's. Those halve the combining, which
 * weighs more than a message's latency only once the vector outgrows one doubling chunk (half a
 * scratch buffer): up to that, a team of two takes coll_allreduce whatever else would pay. */
int coll_pair_exchange_pays(const struct coll_group *g, size_t bytes);
void coll_allreduce(struct coll_group *g, void *dest, const void *source, size_t count, size_t elem,
                    coll_combine_fn combine);
/* Active sets: through pSync mailboxes when the vector fits, else as coll_gather_reduce. */
void coll_set_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                     size_t elem, coll_combine_fn combine);
/* Any group: reads the sources of ranks 0..last between two syncs (scans off shared memory). */
void coll_gather_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                        size_t elem, int scan, coll_combine_fn combine);
/* Large vectors: each member reduces its segment from every member's source and writes it into
 * every member's dest (any placement, teams and active sets). Worth it once a segment holds
 * COLL_SEGMENT_MIN_BYTES. */
#define COLL_SEGMENT_MIN_BYTES 2048
int coll_segments_pay(const struct coll_group *g, size_t bytes);
void coll_segment_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                         size_t elem, coll_combine_fn combine);
/* Teams: reduce-scatter to each segment's owner through its buffers, then every result to every
 * member, block by block (see coll_reduce.c). Each member sends size - 1 messages per block and
 * round, so beyond COLL_DIRECT_MAX_MEMBERS the logarithmic algorithms win. */
#define COLL_DIRECT_MAX_MEMBERS 16
/* From this many bytes a team of two puts its pieces straight into the partner's dest,
 * COLL_DIRECT_PIECE_BYTES at a time (over TCP: the bulk lane's messages), after a message that
 * says it entered the call; below it, that message costs more than the copies through the
 * scratch it saves. Smaller pieces cost more messages, and larger ones leave less to overlap. */
#define COLL_DIRECT_INTO_DEST_BYTES ((size_t)256 * 1024)
#define COLL_DIRECT_PIECE_BYTES ((size_t)256 * 1024)
int coll_direct_pays(const struct coll_group *g, size_t bytes, size_t elem);
void coll_direct_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                        size_t elem, coll_combine_fn combine);
/* Private scratch reused across calls, until coll_scratch_trim frees it if large. */
char *coll_scratch_get(size_t bytes);
/* Ends a collective's use of the scratch. */
void coll_scratch_trim(void);

#endif
