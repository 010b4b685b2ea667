/* SPDX-License-Identifier: BSD-3-Clause */
/* Teams: a member list of world ranks (space teams are arbitrary sets, so no stride is assumed),
 * and a slot: symmetric words in the library's space that hold the team's synchronization
 * counters, agreement scratch and collective words. A PE is in at most one live team per slot.
 * A slot also holds the words of the two parts through which a team that spans nodes goes by
 * node (team_parts_create); parts of teams on one slot are as disjoint as their teams. */
#ifndef STRATA_TEAM_H
#define STRATA_TEAM_H

#include "runtime.h"

#include <pthread.h>
#include <stdint.h>

#define TEAM_SLOTS 64
#define TEAM_ROUNDS 32 /* dissemination rounds: enough for 2^32 members */
/* Per team: one counter per round for syncs, then [parity][round] = {value, signal} for the
 * agreement allreduce, then one counter per round for lagged syncs, then the collectives' signal
 * words and scratch (coll.h: struct coll_area). All of it is zeroed when a team claims the slot
 * but the scratch at its end, which every collective writes before it reads: left alone, its
 * pages are not touched until a team's collectives need them. */
#define TEAM_SCRATCH_BYTES (2 * 65536 + 16 * 4096 + 128 * 256)
#define TEAM_COLL_WORDS (304 + TEAM_SCRATCH_BYTES / 8)
#define TEAM_LAG_FIRST (TEAM_ROUNDS + 2 * TEAM_ROUNDS * 2)
#define TEAM_BLOCK_WORDS (TEAM_LAG_FIRST + TEAM_ROUNDS + TEAM_COLL_WORDS)
/* The same without the scratch: a node part's, which runs only syncs and the shared-memory steps
 * of collectives by node (coll_shm_broadcast, coll_shm_reduce_to_leader, the node steps of
 * coll_node.c), none of which uses it. */
#define TEAM_HEADER_WORDS (TEAM_BLOCK_WORDS - TEAM_SCRATCH_BYTES / 8)
/* A mailbox for each block of each slot: the team's own, its leaders part's, its node part's. */
#define TEAM_MAILBOXES (3 * TEAM_SLOTS)
#define TEAM_SLOT_WORLD 0
#define TEAM_SLOT_SHARED 1
/* Gather words per team with a scratch: a team collect exchanges its members' sizes in rounds of
 * this many members (coll_block_offsets), so the area does not grow with the job. */
#define TEAM_GATHER_WORDS 1024

/* Bytes of the teams' words: per slot, its team's and its leaders part's TEAM_BLOCK_WORDS and its
 * node part's TEAM_HEADER_WORDS. */
static inline size_t team_area_bytes(void)
{
    return (size_t)TEAM_SLOTS * (2 * TEAM_BLOCK_WORDS + TEAM_HEADER_WORDS) * sizeof(uint64_t);
}

/* Bytes of the gather area: TEAM_GATHER_WORDS per slot for its team and for its leaders part, and
 * one word per world PE for the active sets, whose words are indexed by world rank. */
static inline size_t team_gather_bytes(int n_pes)
{
    return ((size_t)TEAM_SLOTS * 2 * TEAM_GATHER_WORDS + (size_t)n_pes) * sizeof(uint64_t);
}

struct strata_team {
    int slot;         /* its bit in the masks of used slots */
    uint32_t mailbox; /* its block's mailbox (mailbox.h), one of TEAM_MAILBOXES */
    uint64_t *words;  /* its words in its slot: TEAM_BLOCK_WORDS, a node part's TEAM_HEADER_WORDS */
    uint64_t *gather; /* its TEAM_GATHER_WORDS; none for a node part */
    int size;
    int my_rank;
    int *members; /* world rank of each team rank */
    shmem_team_config_t config;
    uint64_t sync_epoch;
    uint64_t agree_epoch;
    uint64_t lag_epoch;  /* lagged syncs begun */
    uint64_t lag_told;   /* the latest of them the partner knows this PE entered (teams of two) */
    int lag_pending;     /* one was begun and not ended */
    int lag_unannounced; /* the last one began with TEAM_LAG_DEFERRED */
    int partner_mails;   /* the partner's eager broadcasts come by mail (coll_eager_broadcast) */
    /* The space whose team this team is or descends from (NULL: the default space); that space
     * cannot be destroyed while such a team lives. */
    struct space *space;
    /* Where collectives on this team may copy into mapped buffers (coll.c): per region its
     * buffers lie in, whether every member's copy is loadable here, read from the routes once. */
    struct coll_placement {
        const struct region *region;
        unsigned generation;
        int mapped;
    } placement[4];
    unsigned placement_next;
    /* Contexts made from this team without SHMEM_CTX_PRIVATE: team destroy destroys them. */
    struct strata_ctx *shareable_contexts;
    pthread_mutex_t contexts_lock;
    /* Where the team's members span several nodes and some node holds more than one of them
     * (team_parts_create): its members on this PE's node in team order, the first of whom leads
     * them, and those leaders (NULL on the other members). Its barrier, broadcasts, fcollects and
     * reductions then cross the network between leaders only. Both NULL otherwise. */
    struct strata_team *node_part, *leaders_part;
    int nodes; /* the nodes its members are on */
};

/* Creates SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED over the slots in area (team_area_bytes of the
 * library's space, zeroed) and gather (team_gather_bytes, for
 * collectives that exchange a value per member). Returns 0 or -1. */
int team_init(uint64_t *area, uint64_t *gather);
/* The rank of world PE world_pe in team, or -1 when it is not a member. */
int team_rank_of(const struct strata_team *team, int world_pe);
/* A team's TEAM_GATHER_WORDS gather words: in a round from rank first, entry r is written by
 * team rank first + r. */
uint64_t *team_gather_words(const struct strata_team *team);
/* Members per round of that exchange (TEAM_GATHER_WORDS, or fewer for tests). */
int team_gather_round(void);
/* Gather words for active sets, indexed by world rank. */
uint64_t *team_active_set_gather(void);
/* The collectives' TEAM_COLL_WORDS words of a team's slot. */
uint64_t *team_coll_words(const struct strata_team *team);
void team_fini(void);
/* After the start-up exchange (rt.node_of): the world team's parts, where it goes by node.
 * Returns 0 or -1. */
int team_init_nodes(void);
/* The rank in a leaders part of the leader of node. */
int team_leader_rank(const struct strata_team *leaders, int node);

/* Destroys the team's shareable contexts (ctx.c). */
void ctx_destroy_shareable(struct strata_team *team);

/* OR of value over every member of team (a small collective on it). */
uint64_t team_agree_or(struct strata_team *team, uint64_t value);
/* Creates, collectively over parent, the team of the given world ranks (ascending) belonging to
 * space; PEs outside it get SHMEM_TEAM_INVALID. Returns 0, or -1 on every PE when no team slot
 * is free. */
int team_create_members(struct strata_team *parent, const int *world_ranks, int size,
                        struct space *space, shmem_team_t *out);

/* The barrier of all PEs (shmem_sync_all, and shmem_team_sync on the world team). */
void team_sync_world(void);

/* A sync split in two, so that a collective need not end with one: team_lag_begin sends this
 * PE's first-round notification (it says: this PE has entered a later call), team_lag_end, in a
 * later call, waits for the first round and does the others. After team_lag_end every member has
 * begun the sync, that is entered the call that began it. Every member makes the same calls. */
enum team_lag_announce {
    TEAM_LAG_NOW,
    /* On a team of two, where this PE's next message to its partner in the same call says it has
     * entered the call anyway (a broadcast's data): the partner then calls team_lag_entered once
     * that message has arrived, in the notification's stead. */
    TEAM_LAG_BY_DATA,
    /* On a team of two: no message unless a later call's team_lag_end needs it (a partner that
     * waits with team_lag_partner_entered learns of a later call instead). */
    TEAM_LAG_DEFERRED,
};
void team_lag_begin(struct strata_team *team, enum team_lag_announce announce);
void team_lag_end(struct strata_team *team);
void team_lag_entered(struct strata_team *team);
/* On a team of two, instead of team_lag_end: waits until the partner has entered the call
 * `behind` calls before the one this PE has just begun. */
void team_lag_partner_entered(struct strata_team *team, uint64_t behind);

#endif
