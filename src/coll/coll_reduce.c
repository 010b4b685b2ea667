/* SPDX-License-Identifier: BSD-3-Clause */
/* Reductions for any placement. Teams of up to 16 members, above 2 KiB: a direct reduce-scatter
 * through each segment owner's buffers, then the results to every member. Other vectors whose
 * per-member segment is large: each member reduces its segment straight from every source. Teams
 * otherwise, and teams of two up to 32 KiB: recursive doubling for short vectors and
 * Rabenseifner's reduce-scatter + allgather for longer ones, chunk by chunk through the team's
 * buffers, with the usual fold for a non-power-of-two size. Active sets otherwise: pSync
 * mailboxes for short vectors, else every member reads every source between two syncs, as scans
 * do off shared memory. */
#include "coll.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Above this many bytes a team reduction goes by Rabenseifner, whose traffic per member stays
 * about twice the vector instead of growing with log2 of the team size. */
#define COLL_RD_MAX_BYTES 2048

int coll_pair_exchange_pays(const struct coll_group *g, size_t bytes)
{
    return g->team && g->size == 2 && bytes <= COLL_BUF_BYTES / 2;
}

/* Private scratch reused across calls: a fresh malloc of a large buffer costs a page fault per
 * page on every call, where a reused one is written at memory speed. Per thread, since
 * different teams' collectives may run concurrently, and freed when the thread exits. Kept between
 * calls up to COLL_SCRATCH_KEEP_BYTES only, so that a program that reduced one large vector does
 * not hold half or all of its size for the rest of its run: larger scratch is allocated afresh for
 * each call, as Open MPI's reductions allocate theirs in every call. */
#define COLL_SCRATCH_KEEP_BYTES ((size_t)64 << 20)
static __thread char *coll_scratch;
static __thread size_t coll_scratch_size;
static pthread_key_t coll_scratch_key;
static pthread_once_t coll_scratch_key_once = PTHREAD_ONCE_INIT;

/* At the thread's exit. Called in the exiting thread, so a collective that a later destructor
 * runs finds no scratch and makes its own (and this runs again). */
static void coll_scratch_release(void *scratch)
{
    free(scratch);
    coll_scratch = NULL;
    coll_scratch_size = 0;
}

static void coll_scratch_key_create(void)
{
    if (pthread_key_create(&coll_scratch_key, coll_scratch_release))
        log_fatal("shmem_reduce", "cannot create a thread key for private scratch");
}

static void coll_scratch_set(char *scratch, size_t size)
{
    free(coll_scratch);
    coll_scratch = scratch;
    coll_scratch_size = size;
    pthread_once(&coll_scratch_key_once, coll_scratch_key_create);
    pthread_setspecific(coll_scratch_key, scratch);
}

char *coll_scratch_get(size_t bytes)
{
    if (bytes > coll_scratch_size) {
        coll_scratch_set(NULL, 0);
        char *scratch = malloc(bytes);
        if (!scratch)
            log_fatal("shmem_reduce", "cannot allocate %zu bytes of private memory", bytes);
        coll_scratch_set(scratch, bytes);
    }
    return coll_scratch;
}

void coll_scratch_trim(void)
{
    if (coll_scratch_size > COLL_SCRATCH_KEEP_BYTES)
        coll_scratch_set(NULL, 0);
}

/* ---- Teams: recursive doubling and Rabenseifner ----
 * The power-of-two core: p is the largest power of two <= n and the first 2(n - p) ranks pair up;
 * the even one of a pair hands its chunk to the odd one (core rank rank / 2) and gets the result
 * back, the others have core rank rank - (n - p). In round j a core member trades with core rank
 * ^ 2^j on channel COLL_CH_PAIR + j, a single sender. Each chunk takes the buffer of its own
 * parity: a member writes a partner's buffer two chunks later only after that partner has traded
 * with it in the chunk between, so after it finished reading this one. */
struct coll_core {
    int p, log_p, rank; /* rank: core rank, -1 for a member that hands its chunk over */
    int fold;           /* the fold partner's team rank, or -1 */
};

static struct coll_core coll_core(const struct coll_group *g)
{
    struct coll_core c = {1, 0, 0, -1};
    while (c.p * 2 <= g->size)
        c.p *= 2, c.log_p++;
    int extra = g->size - c.p, me = g->my_rank;
    if (me < 2 * extra) {
        c.rank = me % 2 ? me / 2 : -1;
        c.fold = me % 2 ? me - 1 : me + 1;
    } else {
        c.rank = me - extra;
    }
    return c;
}

static int core_member(const struct coll_group *g, const struct coll_core *c, int core_rank)
{
    int extra = g->size - c->p;
    return core_rank < extra ? 2 * core_rank + 1 : core_rank + extra;
}

/* One chunk's recursive doubling: round j's partial arrives in region j + 1 (region 0 is the
 * fold's), since a later round's partner may send before this PE has used an earlier one. */
static void reduce_doubling(struct coll_group *g, const struct coll_core *c, char *acc, char *buf,
                            size_t region, size_t count, coll_combine_fn combine)
{
    size_t bytes = region;
    for (int j = 0; j < c->log_p; j++) {
        char *in = buf + (size_t)(j + 1) * region;
        coll_put_signal(g, in, acc, bytes, COLL_CH_PAIR + j, core_member(g, c, c->rank ^ (1 << j)));
        coll_wait(g, COLL_CH_PAIR + j, 1);
        combine(acc, in, count);
    }
}

/* One chunk's Rabenseifner: recursive halving leaves core rank r with segment r of p reduced,
 * then recursive doubling puts every segment straight into the partners' dest. Each halving
 * round's half arrives in its own region after the fold's, sized for the larger half (segments
 * differ by one element at most) so that both partners place it alike. */
static void reduce_rabenseifner(struct coll_group *g, const struct coll_core *c, char *acc,
                                char *buf, size_t count, size_t elem, coll_combine_fn combine)
{
#define SEG(i) ((size_t)(i)*count / (size_t)c->p)
    int lo = 0, hi = c->p;
    size_t region = count * elem; /* after the fold's region */
    for (int j = c->log_p - 1; j >= 0; j--) {
        int mid = (lo + hi) / 2, upper = c->rank >> j & 1;
        int give_lo = upper ? lo : mid, give_hi = upper ? mid : hi;
        lo = upper ? mid : lo, hi = upper ? hi : mid;
        char *in = buf + region;
        coll_put_signal(g, in, acc + SEG(give_lo) * elem, (SEG(give_hi) - SEG(give_lo)) * elem,
                        COLL_CH_PAIR + j, core_member(g, c, c->rank ^ (1 << j)));
        coll_wait(g, COLL_CH_PAIR + j, 1);
        combine(acc + SEG(lo) * elem, in, SEG(hi) - SEG(lo));
        region += ((count >> (c->log_p - j)) + 1) * elem;
    }
    for (int j = 0; j < c->log_p; j++) {
        coll_put_signal(g, acc + SEG(lo) * elem, acc + SEG(lo) * elem, (SEG(hi) - SEG(lo)) * elem,
                        COLL_CH_PAIR + j, core_member(g, c, c->rank ^ (1 << j)));
        coll_wait(g, COLL_CH_PAIR + j, 1);
        int width = hi - lo;
        if (c->rank >> j & 1)
            lo -= width;
        else
            hi += width;
    }
#undef SEG
}

/* Elements per chunk: doubling needs the fold's region and one per round, Rabenseifner the
 * fold's and the halves (each under half of the chunk, plus a rounding element). */
static size_t chunk_count(const struct coll_core *c, size_t elem, int rabenseifner)
{
    size_t per = COLL_BUF_BYTES / elem;
    return rabenseifner ? (per - (size_t)c->log_p) / 2 : per / (size_t)(c->log_p + 1);
}

void coll_allreduce(struct coll_group *g, void *dest, const void *source, size_t count, size_t elem,
                    coll_combine_fn combine)
{
    struct coll_core c = coll_core(g);
    int rabenseifner =
        count * elem > COLL_RD_MAX_BYTES && !coll_pair_exchange_pays(g, count * elem);
    size_t per_chunk = chunk_count(&c, elem, rabenseifner);
    if (dest != source)
        memcpy(dest, source, count * elem);
    for (size_t done = 0; done < count; done += per_chunk) {
        size_t n = count - done < per_chunk ? count - done : per_chunk, bytes = n * elem;
        char *buf = g->area->buf[++g->area->dstep & 1], *acc = (char *)dest + done * elem;
        if (c.rank < 0) { /* hand the chunk over, get the result back in dest */
            coll_put_signal(g, buf, acc, bytes, COLL_CH_FOLD, c.fold);
            coll_wait(g, COLL_CH_FOLD, 1);
            continue;
        }
        if (c.fold >= 0) {
            coll_wait(g, COLL_CH_FOLD, 1);
            combine(acc, buf, n);
        }
        if (rabenseifner)
            reduce_rabenseifner(g, &c, acc, buf, n, elem, combine);
        else
            reduce_doubling(g, &c, acc, buf, bytes, n, combine);
        if (c.fold >= 0)
            coll_put_signal(g, acc, acc, bytes, COLL_CH_FOLD, c.fold);
    }
}

/* ---- Teams: direct reduction ----
 * Block by block (each fits the scratch), member r owns segment r of the block: every other
 * member puts its source segment r into r's buffer of the block's parity with a signal, r
 * combines them in rank order and puts the result into segment r of every dest with a signal.
 * Two messages deep whatever the size of the team, no sync and no get. Blocks count on across
 * calls in dstep, with the other algorithms' buffer steps, and a member writes the buffers of
 * step s only once every member has finished reading those of step s - 2: for block b >= 2 it
 * has every result of block b - 2 (each sent after its owner read it); for block 1 it has owned
 * block 0, whose pieces every member sent after it finished the previous call; for block 0 the
 * previous call's last step told it so (a reduction's result takes every member's part in it, a
 * direct block's results their owners' reading). The channels go by block parity and obey the
 * same rule. So a member sends block b's pieces right after owning block b - 1, while b - 1's
 * results are still on their way. A member's source segment travels before any result of its
 * block may land in its dest, so dest may be source.
 * A team of two puts each piece into the owner's dest instead, in the owner's own segment, which
 * nothing else writes there; the owner then combines its source into it. The pieces are then not
 * bound to the scratch's size: see COLL_DIRECT_INTO_DEST_BYTES. In place, each member first
 * copies its own segments aside, where it then reads its source. The pieces wait for the
 * partner's entry (a lagged sync, as broadcasts use), which it announces after that copy: the
 * spec wants every dest ready before any member calls, but a member that reads its result and
 * calls again at once, as the scratch always allowed, must not find a piece of the next call in
 * it. */
struct direct_block {
    size_t first, count; /* the block's elements */
    uint64_t step;       /* its dstep */
};

/* One call's buffers and where its pieces go. */
struct direct_plan {
    char *dest;
    const char *source;
    size_t elem;
    size_t slot;   /* bytes of the place of one member's piece of a block */
    size_t per;    /* elements per block */
    int into_dest; /* pieces go into the owner's dest, not its scratch */
    /* In place into dest: this member's own segments, copied before its entry told the partner
     * that its dest may be written, block b's at b * slot. */
    const char *own;
};

/* Bytes of a buffer's slot for one member's piece: a multiple of 16, so that every piece is
 * aligned for its type. */
static size_t direct_slot_bytes(int n)
{
    return COLL_BUF_BYTES / (size_t)(n - 1) / 16 * 16;
}

/* Elements per block: a segment, at most ceil(count / n) elements, fills a slot. */
static size_t direct_block_count(int n, size_t slot, size_t elem)
{
    return slot / elem * (size_t)n;
}

int coll_direct_pays(const struct coll_group *g, size_t bytes, size_t elem)
{
    return g->team && g->size > 1 && g->size <= COLL_DIRECT_MAX_MEMBERS &&
           bytes > COLL_RD_MAX_BYTES &&
           direct_block_count(g->size, direct_slot_bytes(g->size), elem) > 0;
}

static struct direct_plan direct_plan(const struct coll_group *g, void *dest, const void *source,
                                      size_t bytes, size_t elem)
{
    int into_dest = g->size == 2 && bytes >= COLL_DIRECT_INTO_DEST_BYTES;
    size_t slot = into_dest ? COLL_DIRECT_PIECE_BYTES : direct_slot_bytes(g->size);
    return (struct direct_plan){
        dest, source, elem, slot, direct_block_count(g->size, slot, elem), into_dest, NULL};
}

static void direct_send_pieces(struct coll_group *g, const struct direct_plan *p,
                               const struct direct_block *b)
{
    int n = g->size, me = g->my_rank;
    for (int k = 1; k < n; k++) {
        int owner = (me + k) % n; /* my piece takes slot n - 1 - k of the owner's buffer */
        size_t count, lo = coll_segment_of(b->first, b->count, n, owner, &count);
        char *place = p->into_dest ? p->dest + lo * p->elem
                                   : g->area->buf[b->step & 1] + (size_t)(n - 1 - k) * p->slot;
        coll_put_signal(g, place, p->source + lo * p->elem, count * p->elem,
                        COLL_CH_PIECES + (int)(b->step & 1), owner);
    }
}

/* Combines the pieces of this member's segment, from the buffer of the block's parity, into acc
 * in rank order. */
static void direct_combine_slots(struct coll_group *g, const struct direct_plan *p, char *acc,
                                 size_t lo, size_t count, int parity, coll_combine_fn combine)
{
    int n = g->size, me = g->my_rank;
    const char *buf = g->area->buf[parity];
    for (int r = 0; r < n; r++) { /* rank r's piece is in slot (me - r - 1) mod n */
        const char *in =
            r == me ? p->source + lo * p->elem : buf + (size_t)((me - r - 1 + n) % n) * p->slot;
        if (r == 0 && in != acc)
            memcpy(acc, in, count * p->elem);
        else if (r > 0)
            combine(acc, in, count);
    }
}

static void direct_own(struct coll_group *g, const struct direct_plan *p,
                       const struct direct_block *b, coll_combine_fn combine)
{
    int n = g->size, me = g->my_rank, parity = (int)(b->step & 1);
    size_t count, lo = coll_segment_of(b->first, b->count, n, me, &count), bytes = count * p->elem;
    char *mine = p->dest + lo * p->elem;
    const char *source = p->source;
    /* The segment is combined in its place in dest, one copy fewer than through the scratch,
     * unless dest is source and this member's own piece, read after rank 0's, is that place. */
    char *acc =
        (char *)p->dest == source && me != 0 && !p->into_dest ? coll_scratch_get(bytes + 1) : mine;
    coll_wait(g, COLL_CH_PIECES + parity, (uint64_t)(n - 1));
    /* Into dest: the partner's piece is there, so rank 0 combines its operands the other way
     * round. Every operator commutes; only max and min of -0.0 and 0.0, or of a NaN, may then
     * keep the other operand, as members of recursive doubling may. */
    if (p->into_dest)
        combine(acc, p->own ? p->own + b->first / p->per * p->slot : source + lo * p->elem, count);
    else
        direct_combine_slots(g, p, acc, lo, count, parity, combine);
    if (acc != mine)
        memcpy(mine, acc, bytes);
    for (int k = 1; k < n; k++)
        coll_put_signal(g, mine, acc, bytes, COLL_CH_RESULTS + parity, (me + k) % n);
}

/* The elements of block i of a count-element vector. */
static size_t direct_block_elems(const struct direct_plan *p, size_t count, size_t i)
{
    return count - i * p->per < p->per ? count - i * p->per : p->per;
}

/* In place into dest: copies this member's segment of every block aside, since the partner's
 * pieces will land there. */
static const char *direct_copy_own(const struct coll_group *g, const struct direct_plan *p,
                                   size_t count, size_t blocks)
{
    char *own = coll_scratch_get(blocks * p->slot + 1);
    for (size_t i = 0; i < blocks; i++) {
        size_t seg, lo = coll_segment_of(i * p->per, direct_block_elems(p, count, i), g->size,
                                         g->my_rank, &seg);
        memcpy(own + i * p->slot, p->source + lo * p->elem, seg * p->elem);
    }
    return own;
}

void coll_direct_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                        size_t elem, coll_combine_fn combine)
{
    struct direct_plan p = direct_plan(g, dest, source, count * elem, elem);
    size_t per = p.per, blocks = (count + per - 1) / per;
    if (p.into_dest) {
        if (dest == source)
            p.own = direct_copy_own(g, &p, count, blocks);
        team_lag_begin(g->team, TEAM_LAG_NOW);
        team_lag_partner_entered(g->team, 0);
    }
    uint64_t first_step = g->area->dstep + 1;
    struct direct_block b = {0, 0, 0}, prev = b;
    for (size_t i = 0; i <= blocks; i++) {
        if (i >= 2) /* every result of block i - 2 */
            coll_wait(g, COLL_CH_RESULTS + (int)((first_step + i) & 1), (uint64_t)(g->size - 1));
        if (i >= 1)
            direct_own(g, &p, &prev, combine);
        if (i < blocks) {
            b = (struct direct_block){i * per, direct_block_elems(&p, count, i), ++g->area->dstep};
            direct_send_pieces(g, &p, &b);
        }
        prev = b;
    }
    if (blocks)
        coll_wait(g, COLL_CH_RESULTS + (int)((first_step + blocks - 1) & 1),
                  (uint64_t)(g->size - 1));
}

/* ---- Large vectors, teams and active sets alike ----
 * Member r reduces segment r of the vector: it reads every member's segment r of source straight
 * from that member, combines them in rank order, and writes the result into segment r of every
 * member's dest. On every member, segment r is read and then written by r alone (its own segment
 * by itself), so dest may be source and no scratch of a peer is needed. Traffic per member is
 * about twice the vector, as with Rabenseifner's, in two waves of transfers that all overlap
 * instead of a signal per round and per 2 KiB chunk; two syncs bound it: every source is ready,
 * then every segment has been read and written. */
int coll_segments_pay(const struct coll_group *g, size_t bytes)
{
    return g->size > 1 && bytes / (size_t)g->size >= COLL_SEGMENT_MIN_BYTES;
}

void coll_segment_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                         size_t elem, coll_combine_fn combine)
{
    int n = g->size, me = g->my_rank;
    size_t seg, first = coll_segment_of(0, count, n, me, &seg), bytes = seg * elem;
    size_t offset = first * elem;
    /* slot r of the scratch receives rank r's segment; slot 0 accumulates */
    char *slots = coll_scratch_get((size_t)n * bytes + 1);
    coll_sync(g);
    for (int r = 0; r < n; r++)
        if (r != me)
            shmem_getmem_nbi(slots + (size_t)r * bytes, (const char *)source + offset, bytes,
                             g->members[r]);
    memcpy(slots + (size_t)me * bytes, (const char *)source + offset, bytes);
    shmem_quiet();
    char *acc = slots;
    for (int r = 1; r < n; r++)
        combine(acc, slots + (size_t)r * bytes, seg);
    memcpy((char *)dest + offset, acc, bytes);
    if (g->team) {
        /* Each result segment with a signal: a member that has all n - 1 has had every source
         * segment of its own read too (each was read before its result was sent), so the call
         * ends without a quiet and a sync; the channel of the call's parity as alltoall's. */
        int ch = COLL_CH_EXCHANGE + (int)(g->area->exchanges++ & 1);
        for (int r = 0; r < n; r++)
            if (r != me)
                coll_put_signal(g, (char *)dest + offset, acc, bytes, ch, r);
        coll_wait(g, ch, (uint64_t)(n - 1));
        return;
    }
    for (int r = 0; r < n; r++)
        if (r != me)
            shmem_putmem_nbi((char *)dest + offset, acc, bytes, g->members[r]);
    shmem_quiet();
    coll_sync(g);
}

/* ---- Active sets ---- */

/* Reads the sources of ranks 0..last into acc: a mapped member's in place, the others' fetched
 * into the scratch behind acc. */
static void gather_combine(struct coll_group *g, const void *source, size_t count, size_t elem,
                           int last, coll_combine_fn combine, char *acc, char *in)
{
    size_t bytes = count * elem;
    for (int r = 0; r <= last; r++) {
        const void *peer = shmem_ptr(source, g->members[r]);
        if (!peer) {
            shmem_getmem(r == 0 ? acc : in, source, bytes, g->members[r]);
            peer = r == 0 ? acc : in;
        }
        if (r == 0 && peer != acc)
            memcpy(acc, peer, bytes);
        else if (r > 0)
            combine(acc, peer, count);
    }
}

/* The first sync says every source is ready, the second that every member has read them, which
 * also makes dest == source safe. */
void coll_gather_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                        size_t elem, int scan, coll_combine_fn combine)
{
    int last = scan == 0 ? g->size - 1 : g->my_rank - (scan < 0);
    size_t bytes = count * elem;
    char *acc = coll_scratch_get(2 * bytes + 1);
    coll_sync(g);
    if (last >= 0)
        gather_combine(g, source, count, elem, last, combine, acc, acc + bytes);
    else
        memset(acc, 0, bytes); /* exscan on rank 0 */
    coll_sync(g);
    memcpy(dest, acc, bytes);
}

/* pSync words after the channels, 16-byte aligned in pSync, serve as mailboxes: box i of a member
 * receives from the member i + 1 ahead of it. */
#define COLL_MAIL_FIRST ((COLL_CHANNELS + 1) & ~1)
#define COLL_MAIL_WORDS (SHMEM_REDUCE_SYNC_SIZE - COLL_MAIL_FIRST)

/* Short vectors: every member puts its source into its box on every other member, and each
 * combines what arrived in rank order; one hop, and the boxes go back to SHMEM_SYNC_VALUE once
 * read. */
void coll_set_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                     size_t elem, coll_combine_fn combine)
{
    int n = g->size, me = g->my_rank;
    size_t bytes = count * elem, words = (bytes + 15) / 16 * 2;
    if ((size_t)(n - 1) * words > COLL_MAIL_WORDS) {
        coll_gather_reduce(g, dest, source, count, elem, 0, combine);
        return;
    }
    uint64_t *mail = g->flags + COLL_MAIL_FIRST;
    for (int k = 1; k < n; k++)
        coll_put_signal(g, mail + (size_t)(n - 1 - k) * words, source, bytes, COLL_CH_ALL,
                        (me + k) % n);
    coll_wait(g, COLL_CH_ALL, (uint64_t)(n - 1));
    char *acc = coll_scratch_get(2 * bytes + 1), *in = acc + bytes;
    for (int r = 0; r < n; r++) {
        /* copied out first: pSync need not be aligned for the type */
        memcpy(r == 0 ? acc : in, r == me ? source : mail + (size_t)((r - me - 1 + n) % n) * words,
               bytes);
        if (r > 0)
            combine(acc, in, count);
    }
    for (size_t i = 0; i < (size_t)(n - 1) * words; i++)
        mail[i] = SHMEM_SYNC_VALUE;
    memcpy(dest, acc, bytes);
}
