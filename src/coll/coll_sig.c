/* SPDX-License-Identifier: BSD-3-Clause */
/* Signals of the collectives (coll.h): channel counters for any placement, and published step
 * numbers for the shared-memory algorithms. */
#include "../amo.h"
#include "../route_target.h"
#include "coll.h"

/* A member waits for every signal sent to it in a call before it leaves the call, so no quiet
 * needs to wait for them (rma_put_signal_watched): a barrier after a collective between two nodes
 * then costs no flush round trip. */
void coll_signal(struct coll_group *g, int ch, int rank)
{
    rma_put_signal_watched(g->routine, NULL, NULL, 0, &g->flags[ch], 1, SHMEM_SIGNAL_ADD,
                           g->members[rank]);
}

void coll_put_signal(struct coll_group *g, void *dest, const void *src, size_t bytes, int ch,
                     int rank)
{
    rma_put_signal_watched(g->routine, dest, src, bytes, &g->flags[ch], 1, SHMEM_SIGNAL_ADD,
                           g->members[rank]);
}

/* Counts only grow (until an active set's coll_end), so a later call's early signal can only make
 * the count run ahead of what this call waits for, never hide one of this call's. */
void coll_wait(struct coll_group *g, int ch, uint64_t count)
{
    uint64_t want = g->expect[ch] += count;
    PROGRESS_WAIT_WHILE(__atomic_load_n(&g->flags[ch], __ATOMIC_ACQUIRE) < want);
}

void coll_sync(struct coll_group *g)
{
    if (g->team) {
        shmem_team_sync(g->team);
        return;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int round = 0, dist = 1; dist < g->size; round++, dist <<= 1) {
        coll_signal(g, COLL_CH_PAIR + round, (g->my_rank + dist) % g->size);
        coll_wait(g, COLL_CH_PAIR + round, 1);
    }
}

/* Fetching, so done on return: a one-way add to this PE's own count through a network (which
 * loops it back) may land after the next call began to wait, which would then count this call's
 * signals as its own. */
void coll_end(struct coll_group *g)
{
    if (g->team)
        return;
    for (int ch = 0; ch < COLL_CHANNELS; ch++)
        if (g->set_expect[ch])
            amo_op(SHMEM_CTX_DEFAULT, g->routine, TRANSPORT_AMO_ADD, &g->flags[ch],
                   sizeof(uint64_t), -g->set_expect[ch], 0, 1, rt.my_pe);
}

uint64_t coll_step(struct coll_group *g)
{
    return ++g->area->step;
}

/* The full fence orders the data copies (memcpy may use non-temporal stores) before the step. */
void coll_publish(struct coll_group *g, uint64_t step)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&g->area->pub, step, __ATOMIC_RELEASE);
}

/* A member publishes its steps in order, so pub >= step means this one's data is there. */
void coll_wait_step(struct coll_group *g, int rank, uint64_t step, size_t bytes)
{
    const struct coll_area *peer = coll_peer(g, g->area, rank);
    PROGRESS_WAIT_WHILE_SPINNING(__atomic_load_n(&peer->pub, __ATOMIC_ACQUIRE) < step,
                                 wait_spins_for_copy(bytes));
}

void *coll_peer(const struct coll_group *g, const void *addr, int rank)
{
    return rank == g->my_rank ? (void *)addr : shmem_ptr(addr, g->members[rank]);
}
