/* SPDX-License-Identifier: BSD-3-Clause */
/* Broadcast, collect and alltoall for any placement: every transfer is a put (a copy when the
 * target is mapped) and every wait is on this PE's own channel counters, so nothing polls remote
 * memory. */
#include "../../common/copy.h"
#include "../mailbox.h"
#include "../route_target.h"
#include "coll.h"

#include <stdlib.h>
#include <string.h>

/* Broadcast chunk: large messages flow down the tree in pieces, so a member forwards the first
 * while the next is still arriving. A team of two forwards nothing: there the data goes in one
 * put, which the transport cuts as it sees fit (fewer, larger messages over TCP). */
#define COLL_PIPE_BYTES (64 * 1024)

static int ceil_log2(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

/* Binomial tree rooted at root: the member at relative rank rel receives from rel - 2^j (j its
 * lowest set bit), always the member 2^j behind it whoever the root, so channel j has one
 * sender; it forwards to rel + 2^k for k < j, the largest subtree first. Interior members
 * forward from their dest, which the legacy broadcast leaves alone on the root only.
 * No member may run two calls ahead of another: programs alternate two dest buffers (and two
 * pSyncs) without a barrier, so the root of call N + 2 must not write a buffer that a member may
 * still read after call N. An active set ends each call with a sync. A team spares the root that
 * round trip: every member begins a lagged sync as it enters a call (so it is done with the
 * previous call's dest), and ends it as it enters the next one (coll_broadcast), before anything
 * is written. On a team of two the root's data tells the other member that the root has entered
 * the call, so the root sends no notification of its own: one message per call. */
void coll_tree_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                         int root, int root_receives)
{
    int n = g->size, rel = (g->my_rank - root + n) % n;
    int top = rel ? __builtin_ctz((unsigned)rel) : ceil_log2(n);
    const char *from = rel ? dest : source;
    int data_announces = g->team && n == 2 && bytes;
    size_t piece = n == 2 ? bytes : COLL_PIPE_BYTES;
    if (g->team)
        team_lag_begin(g->team, data_announces && !rel ? TEAM_LAG_BY_DATA : TEAM_LAG_NOW);
    for (size_t off = 0; off < bytes; off += piece) {
        size_t len = bytes - off < piece ? bytes - off : piece;
        if (rel)
            coll_wait(g, COLL_CH_BCAST + top, 1);
        if (rel && data_announces && !off)
            team_lag_entered(g->team);
        for (int k = top - 1; k >= 0; k--)
            if (rel + (1 << k) < n)
                coll_put_signal(g, (char *)dest + off, from + off, len, COLL_CH_BCAST + k,
                                (g->my_rank + (1 << k)) % n);
    }
    if (!rel && root_receives && dest != source)
        copy_bulk(dest, source, bytes);
    if (!g->team)
        coll_sync(g);
}

/* A team of two's broadcast of data that fits a slot, without the tree's lag: the root never
 * writes the other member's dest, only a slot, and the receiver copies it out in its own call.
 * Data up to COLL_EAGER_SMALL_BYTES takes the small slot of the call's number (lag_epoch) modulo
 * COLL_EAGER_SMALL_SLOTS, larger data the large slot modulo COLL_EAGER_SLOTS: the two kinds of
 * slot are apart, so each slot is reused only by calls of its own kind, at least its kind's
 * slot count of calls later. So the root waits only until the receiver has entered the call that
 * many calls minus one before this one (it then has copied out the slot's previous data), and
 * runs up to that many calls ahead. Each slot's word says which call's data it holds, so the
 * slots' data cannot mix whatever the order of arrival.
 * Both members keep the lag counters as the tree broadcast does, so the two kinds of call may
 * follow each other: the root's data stands for its entry, and the receiver announces its entry
 * only once half its slot kind's count of calls have gone by since its partner last learned of
 * one (deferring the others to a later team_lag_end; a fixed rule by call number would leave a
 * mixed stream's windows unannounced). Once it has entered a call, its partner knows of its entry
 * into a call fewer than half that kind's slot count before, so the root's wait ends; and the
 * root takes one message every 64 small calls (every 8 large ones) instead of one per call,
 * which over TCP costs it as much as its own send.
 * A root that mails its data runs up to COLL_MAIL_WINDOW calls ahead instead, always, since it
 * mails a partner that its transport reaches by message; once the receiver has had mail, it
 * announces half a window apart, sparing the send that the large slots' pace takes every 8
 * calls. */
static int eager_small(size_t bytes)
{
    return bytes <= COLL_EAGER_SMALL_BYTES;
}

/* Eager calls a root may run ahead of a partner it mails its data to. Over TCP, with each PE's
 * core shared by another process, the root's wait for a slot to be freed limits a stream of
 * broadcasts: the receiver is off its core for milliseconds at a time, and the root stalls
 * within a slot count of calls. Mail waits in the receiver's memory instead, up to this many
 * calls of up to COLL_EAGER_BYTES (4 MiB in all). */
#define COLL_MAIL_WINDOW 1024

int coll_eager_pays(const struct coll_group *g, size_t bytes)
{
    return g->team && g->size == 2 && bytes > 0 && bytes <= COLL_EAGER_BYTES;
}

void coll_eager_broadcast(struct coll_group *g, void *dest, const void *source, size_t bytes,
                          int root, int root_receives)
{
    struct strata_team *team = g->team;
    struct coll_area *area = g->area;
    int is_root = g->my_rank == root, small = eager_small(bytes);
    uint64_t call = team->lag_epoch + 1, slots = small ? COLL_EAGER_SMALL_SLOTS : COLL_EAGER_SLOTS;
    uint64_t root_ahead = team->partner_mails ? COLL_MAIL_WINDOW : slots;
    team_lag_begin(team, is_root                                   ? TEAM_LAG_BY_DATA
                         : call - team->lag_told >= root_ahead / 2 ? TEAM_LAG_NOW
                                                                   : TEAM_LAG_DEFERRED);
    int slot = (int)(call % slots);
    uint64_t *call_word = small ? &area->eager_small_call[slot] : &area->eager_call[slot];
    char *data = small ? area->eager_small[slot] : area->eager[slot];
    if (is_root) {
        int partner = g->members[1 - root];
        int by_mail = rma_reaches_by_message(partner);
        team_lag_partner_entered(team, by_mail ? COLL_MAIL_WINDOW - 1 : slots - 1);
        if (by_mail)
            rma_mail(g->routine, partner, team->mailbox, call, source, bytes);
        else
            rma_put_signal_watched(g->routine, data, source, bytes, call_word, call,
                                   SHMEM_SIGNAL_SET, partner);
        if (root_receives && dest != source)
            copy_bulk(dest, source, bytes);
        return;
    }
    /* The data comes in a slot or by mail, whichever the root chose: the receiver announces its
     * entries at the slots' pace either way, so a root that waits for slots never waits long. */
    int mailed = 0;
    mailbox_expect(team->mailbox, call, dest, bytes);
    PROGRESS_WAIT_WHILE(__atomic_load_n(call_word, __ATOMIC_ACQUIRE) < call &&
                        !(mailed = mailbox_arrived(team->mailbox)));
    if (!mailed) {
        mailbox_unexpect(team->mailbox);
        copy_bulk(dest, data, bytes);
    }
    team->partner_mails |= mailed;
    team_lag_entered(team);
}

/* Writes the sizes of ranks [first, last) into off[first + 1 .. last], each added to the one
 * before: every member in the round puts its size into every member's gather word with a signal
 * on channel ch, and every member waits for the round's signals, one latency and no round trip.
 * A size word is rewritten only by a later round, which begins after a sync that follows
 * everyone's reading, or by a later collect, which its writer cannot finish before this PE has
 * forwarded (so read the sizes) in this one. */
static void collect_size_round(struct coll_group *g, size_t bytes, int first, int last, int ch,
                               size_t *off)
{
    if (g->my_rank >= first && g->my_rank < last) {
        uint64_t mine = bytes;
        uint64_t *word = &g->gather[g->gather_by_world ? rt.my_pe : g->my_rank - first];
        for (int r = 0; r < g->size; r++)
            coll_put_signal(g, word, &mine, sizeof(mine), ch, r);
    }
    coll_wait(g, ch, (uint64_t)(last - first));
    for (int r = first; r < last; r++)
        off[r + 1] = off[r] + g->gather[g->gather_by_world ? g->members[r] : r - first];
}

size_t *coll_block_offsets(struct coll_group *g, size_t bytes, int fixed)
{
    size_t *off = malloc(((size_t)g->size + 1) * sizeof(size_t));
    if (!off)
        log_fatal(g->routine, "cannot allocate %d block offsets", g->size + 1);
    off[0] = 0;
    if (fixed) {
        for (int r = 0; r < g->size; r++)
            off[r + 1] = off[r] + bytes;
        return off;
    }
    /* Active sets' words are indexed by world rank: one round holds every member. */
    int round = g->gather_by_world ? g->size : team_gather_round();
    int ch = coll_exchange_begin(g);
    for (int first = 0; first < g->size; first += round) {
        if (first)
            coll_sync(g); /* everyone has read the round before */
        int last = g->size - first < round ? g->size : first + round;
        collect_size_round(g, bytes, first, last, ch, off);
    }
    return off;
}

/* Ring: in step k each member passes the block it got in step k - 1 (its own first) to the next
 * member, straight into the block's place in dest; n - 1 steps, each block crossing each link
 * once. */
static void ring_collect(struct coll_group *g, void *dest, const size_t *off)
{
    int n = g->size, me = g->my_rank;
    for (int k = 0; k < n - 1; k++) {
        int blk = (me - k + n) % n;
        coll_put_signal(g, (char *)dest + off[blk], (char *)dest + off[blk],
                        off[blk + 1] - off[blk], COLL_CH_RING, (me + 1) % n);
        coll_wait(g, COLL_CH_RING, 1);
    }
}

/* How many blocks a member passes on in round j of the doubling collect: it holds the 2^j
 * blocks that end with its own, and the member 2^j ahead lacks n - 2^j. */
static int doubling_blocks(int n, int j)
{
    return (1 << j) < n - (1 << j) ? 1 << j : n - (1 << j);
}

/* The blocks last - count + 1 .. last (modulo n) of dest: one range, or two where they wrap
 * past rank 0. Returns the number of ranges. */
static int doubling_ranges(int n, int last, int count, const size_t *off, size_t lo[2],
                           size_t hi[2])
{
    int first = last - count + 1;
    if (first >= 0) {
        lo[0] = off[first], hi[0] = off[last + 1];
        return 1;
    }
    lo[0] = off[first + n], hi[0] = off[n];
    lo[1] = off[0], hi[1] = off[last + 1];
    return 2;
}

/* Doubling (dissemination) collect: in round j each member puts the blocks it holds that the
 * member 2^j ahead lacks into their places in that member's dest: ceil(log2 n) rounds where the
 * ring takes n - 1, for short vectors, where rounds cost more than bytes. A round's blocks come
 * from the member 2^j behind, the sender of broadcast channel j: the channel is shared, since
 * one sender's signals arrive in the order it sent them. */
static void doubling_collect(struct coll_group *g, void *dest, const size_t *off)
{
    int n = g->size, me = g->my_rank;
    size_t lo[2], hi[2];
    for (int j = 0; (1 << j) < n; j++) {
        int count = doubling_blocks(n, j), to = (me + (1 << j)) % n;
        int ranges = doubling_ranges(n, me, count, off, lo, hi);
        for (int r = 0; r < ranges; r++)
            coll_put_signal(g, (char *)dest + lo[r], (char *)dest + lo[r], hi[r] - lo[r],
                            COLL_CH_BCAST + j, to);
        int from = (me - (1 << j) + n) % n;
        coll_wait(g, COLL_CH_BCAST + j, (uint64_t)doubling_ranges(n, from, count, off, lo, hi));
    }
}

void coll_signal_collect(struct coll_group *g, void *dest, const void *source, size_t bytes,
                         int fixed)
{
    size_t *off = coll_block_offsets(g, bytes, fixed);
    copy_bulk((char *)dest + off[g->my_rank], source, bytes);
    if (off[g->size] <= COLL_DOUBLING_COLLECT_MAX)
        doubling_collect(g, dest, off);
    else
        ring_collect(g, dest, off);
    free(off);
}

void coll_put_block(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                    ptrdiff_t sst, size_t nelems, size_t elem, int rank, int ch)
{
    ptrdiff_t n = (ptrdiff_t)nelems, e = (ptrdiff_t)elem, me = g->my_rank;
    char *to = (char *)dest + me * n * dst * e;
    const char *from = (const char *)source + (ptrdiff_t)rank * n * sst * e;
    int whole = dst == 1 && sst == 1; /* one piece, else one per element */
    ptrdiff_t pieces = whole ? 1 : n;
    size_t bytes = whole ? nelems * elem : elem;
    for (ptrdiff_t k = 0; k < pieces; k++) {
        if (ch != COLL_CH_NONE && k == pieces - 1)
            coll_put_signal(g, to + k * dst * e, from + k * sst * e, bytes, ch, rank);
        else
            shmem_putmem(to + k * dst * e, from + k * sst * e, bytes, g->members[rank]);
    }
    if (ch != COLL_CH_NONE && pieces == 0)
        coll_signal(g, ch, rank);
}

int coll_exchange_begin(struct coll_group *g)
{
    return COLL_CH_EXCHANGE + (g->team ? (int)(g->area->exchanges++ & 1) : 0);
}

/* Pairwise: in step k each member sends to the member k ahead, so every step is a permutation and
 * no member is the target of all at once. Each block carries a signal (on the last of its pieces,
 * which lands after the others: no fence, a round trip between nodes) and each member waits for
 * the signals of its own. On a team, a member finishes call N only once every member has sent it
 * N's block, that is finished call N - 1 (and so read N - 1's dest), so no member is two calls
 * ahead of another, and calls of one parity never overlap on a member: the channel of the call's
 * parity counts only that call's signals. An active set's counter is its pSync's, which no other
 * live call uses (the caller's guarantee), given back at the end (coll_end). */
void coll_pairwise_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                             ptrdiff_t sst, size_t nelems, size_t elem)
{
    int ch = coll_exchange_begin(g);
    for (int k = 0; k < g->size; k++)
        coll_put_block(g, dest, source, dst, sst, nelems, elem, (g->my_rank + k) % g->size,
                       k ? ch : COLL_CH_NONE);
    coll_wait(g, ch, (uint64_t)(g->size - 1));
}
