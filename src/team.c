/* SPDX-License-Identifier: BSD-3-Clause */
/* Teams (1.6 section 9.4). Creating a team agrees on a free slot with one small collective on the
 * parent team (an OR-allreduce of every member's used-slot mask); everything else about the new
 * team follows from the split arguments, the same on every PE. */
#include "team.h"

#include "amo.h"
#include "mailbox.h"
#include "route_target.h"

#include <stdlib.h>
#include <string.h>

static struct strata_team team_world, team_shared;
shmem_team_t SHMEM_TEAM_WORLD = &team_world;
shmem_team_t SHMEM_TEAM_SHARED = &team_shared;

static uint64_t *team_area, *team_gather;
static uint64_t team_slots_used; /* bit s: this PE is in a live team on slot s */

/* The teams whose words a slot holds: its own team, and that team's parts. */
enum team_block { TEAM_BLOCK_OWN, TEAM_BLOCK_LEADERS_PART, TEAM_BLOCK_NODE_PART };

/* Every slot's own and leaders blocks come first, then the node parts' headers. */
static uint64_t *block_words(int slot, enum team_block block)
{
    if (block == TEAM_BLOCK_NODE_PART)
        return team_area + (size_t)2 * TEAM_SLOTS * TEAM_BLOCK_WORDS +
               (size_t)slot * TEAM_HEADER_WORDS;
    return team_area + ((size_t)block * TEAM_SLOTS + (size_t)slot) * TEAM_BLOCK_WORDS;
}

/* Each block of each slot has a mailbox of its own (mailbox.h). */
static uint32_t block_mailbox(int slot, enum team_block block)
{
    return (uint32_t)block * TEAM_SLOTS + (uint32_t)slot;
}

static uint64_t *block_gather(int slot, enum team_block block)
{
    if (block == TEAM_BLOCK_NODE_PART)
        return NULL;
    return team_gather + ((size_t)block * TEAM_SLOTS + (size_t)slot) * TEAM_GATHER_WORDS;
}

/* Counter k of a member has one writer, the member 2^k behind it: a plain put of the epoch does
 * what an atomic add would, without the locked instruction. */
static void dissemination_notify(uint64_t *counters, uint64_t epoch, int round, int rank, int size,
                                 const int *members)
{
    rma_notify("shmem_sync", &counters[round], epoch, members[(rank + (1 << round)) % size]);
}

static void dissemination_wait(uint64_t *counters, uint64_t epoch, int round)
{
    PROGRESS_WAIT_WHILE(__atomic_load_n(&counters[round], __ATOMIC_ACQUIRE) < epoch);
}

/* In round k this PE sets counter k of the member 2^k ahead to the sync's number and waits until
 * its own counter k reaches it. */
static void team_sync_flat(struct strata_team *team)
{
    uint64_t epoch = ++team->sync_epoch;
    for (int round = 0; (1 << round) < team->size; round++) {
        dissemination_notify(team->words, epoch, round, team->my_rank, team->size, team->members);
        dissemination_wait(team->words, epoch, round);
    }
}

/* Every wait of the flat barrier crosses the network when members are spread over nodes; here
 * only the leaders' rounds do (log2 of the nodes instead of log2 of the members), and a node's own
 * rounds and its release are stores into mapped memory. The parts count their rounds on their own
 * blocks; a team that goes by node never disseminates over its own counters, so the first of them
 * is its release word. */
static void team_sync_by_node(struct strata_team *team)
{
    uint64_t epoch = ++team->sync_epoch, *release = &team->words[0];
    struct strata_team *node = team->node_part;
    team_sync_flat(node);
    if (node->my_rank != 0) {
        PROGRESS_WAIT_WHILE(__atomic_load_n(release, __ATOMIC_ACQUIRE) < epoch);
        return;
    }
    team_sync_flat(team->leaders_part);
    for (int i = 1; i < node->size; i++)
        rma_notify("shmem_sync", release, epoch, node->members[i]);
}

static void team_sync(struct strata_team *team)
{
    if (team->node_part)
        team_sync_by_node(team);
    else
        team_sync_flat(team);
}

void team_sync_world(void)
{
    team_sync(&team_world);
}

static void team_lag_announce(struct strata_team *team)
{
    team->lag_told = team->lag_epoch;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    dissemination_notify(team->words + TEAM_LAG_FIRST, team->lag_epoch, 0, team->my_rank,
                         team->size, team->members);
}

void team_lag_begin(struct strata_team *team, enum team_lag_announce announce)
{
    if (team->size < 2)
        return;
    ++team->lag_epoch;
    team->lag_pending = 1;
    team->lag_unannounced = announce == TEAM_LAG_DEFERRED;
    if (announce == TEAM_LAG_NOW)
        team_lag_announce(team);
    else if (announce == TEAM_LAG_BY_DATA)
        team->lag_told = team->lag_epoch;
}

/* The partner's own notification of a later call may have landed first: the count only rises. */
void team_lag_entered(struct strata_team *team)
{
    uint64_t *counter = team->words + TEAM_LAG_FIRST;
    uint64_t seen = __atomic_load_n(counter, __ATOMIC_ACQUIRE);
    while (seen < team->lag_epoch &&
           !__atomic_compare_exchange_n(counter, &seen, team->lag_epoch, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
        ;
}

void team_lag_partner_entered(struct strata_team *team, uint64_t behind)
{
    if (team->lag_epoch > behind)
        dissemination_wait(team->words + TEAM_LAG_FIRST, team->lag_epoch - behind, 0);
}

void team_lag_end(struct strata_team *team)
{
    if (!team->lag_pending)
        return;
    team->lag_pending = 0;
    if (team->lag_unannounced) {
        team->lag_unannounced = 0;
        team_lag_announce(team);
    }
    uint64_t *counters = team->words + TEAM_LAG_FIRST;
    dissemination_wait(counters, team->lag_epoch, 0);
    for (int round = 1; (1 << round) < team->size; round++) {
        dissemination_notify(counters, team->lag_epoch, round, team->my_rank, team->size,
                             team->members);
        dissemination_wait(counters, team->lag_epoch, round);
    }
}

static int team_set_members(struct strata_team *team, int slot, enum team_block block,
                            const int *members, int size)
{
    team->members = malloc((size_t)size * sizeof(int));
    if (!team->members)
        return -1;
    memcpy(team->members, members, (size_t)size * sizeof(int));
    team->slot = slot;
    team->mailbox = block_mailbox(slot, block);
    team->words = block_words(slot, block);
    team->gather = block_gather(slot, block);
    team->size = size;
    team->my_rank = -1;
    for (int i = 0; i < size; i++)
        if (members[i] == rt.my_pe)
            team->my_rank = i;
    team->config.num_contexts = 0;
    team->shareable_contexts = NULL;
    pthread_mutex_init(&team->contexts_lock, NULL);
    team->sync_epoch = team->agree_epoch = team->lag_epoch = team->lag_told = 0;
    team->lag_pending = team->lag_unannounced = team->partner_mails = 0;
    memset(team->placement, 0, sizeof(team->placement));
    team->placement_next = 0;
    team->node_part = team->leaders_part = NULL;
    team->nodes = 1;
    team_slots_used |= 1ull << slot;
    return 0;
}

/* Frees what team_set_members and team_parts_create allocated (not the team itself). */
static void team_release(struct strata_team *team)
{
    struct strata_team *parts[] = {team->node_part, team->leaders_part};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        if (parts[i]) {
            team_release(parts[i]);
            free(parts[i]);
        }
    team->node_part = team->leaders_part = NULL;
    free(team->members);
    team->members = NULL;
    pthread_mutex_destroy(&team->contexts_lock);
}

/* A part of team on its slot's block. Returns 0 or -1. */
static int team_part_create(struct strata_team **part, const struct strata_team *team,
                            enum team_block block, const int *members, int size)
{
    *part = calloc(1, sizeof(**part));
    if (*part && !team_set_members(*part, team->slot, block, members, size))
        return 0;
    free(*part);
    *part = NULL;
    return -1;
}

/* The parts of a team whose members span several nodes, some node holding more than one of them
 * (else they would buy nothing). Every member draws the same nodes and leaders from the same
 * member list: each node's leader is its member of the lowest team rank, and the leaders come
 * in team order. Returns 0 or -1. */
static int team_parts_create(struct strata_team *team, const char *routine)
{
    char *seen = calloc((size_t)rt.n_nodes, 1);
    int *mine = malloc((size_t)team->size * sizeof(int));
    int *leaders = malloc((size_t)team->size * sizeof(int));
    int n_mine = 0, rc = -1;
    if (seen && mine && leaders) {
        team->nodes = 0;
        for (int r = 0; r < team->size; r++) {
            int pe = team->members[r], node = rt.node_of[pe];
            if (!seen[node]) {
                seen[node] = 1;
                leaders[team->nodes++] = pe;
            }
            if (node == rt.my_node)
                mine[n_mine++] = pe;
        }
        int by_node = team->nodes > 1 && team->nodes < team->size;
        rc = by_node &&
             (team_part_create(&team->node_part, team, TEAM_BLOCK_NODE_PART, mine, n_mine) ||
              (mine[0] == rt.my_pe &&
               team_part_create(&team->leaders_part, team, TEAM_BLOCK_LEADERS_PART, leaders,
                                team->nodes)));
        if (by_node && !rc)
            LOG(LOG_TEAM, routine,
                "%d-PE team on slot %d goes by node: %d nodes, %d of its PEs here", team->size,
                team->slot, team->nodes, n_mine);
        else if (!rc)
            LOG(LOG_TEAM, routine, "%d-PE team on slot %d is flat: %d node%s", team->size,
                team->slot, team->nodes, team->nodes == 1 ? "" : "s, one PE on each");
    }
    free(seen);
    free(mine);
    free(leaders);
    return rc ? -1 : 0;
}

int team_leader_rank(const struct strata_team *leaders, int node)
{
    int rank = 0;
    while (rt.node_of[leaders->members[rank]] != node)
        rank++;
    return rank;
}

uint64_t *team_gather_words(const struct strata_team *team)
{
    return team->gather;
}

_Static_assert(KNOB_COLLECT_ROUND_MAX == TEAM_GATHER_WORDS, "a round fills the gather words");

int team_gather_round(void)
{
    return (int)rt.knobs.TEST_COLLECT_ROUND; /* 1 to KNOB_COLLECT_ROUND_MAX, checked at init */
}

uint64_t *team_coll_words(const struct strata_team *team)
{
    return team->words + TEAM_BLOCK_WORDS - TEAM_COLL_WORDS;
}

uint64_t *team_active_set_gather(void)
{
    return team_gather + (size_t)TEAM_SLOTS * 2 * TEAM_GATHER_WORDS;
}

int team_init(uint64_t *area, uint64_t *gather)
{
    team_area = area;
    team_gather = gather;
    team_slots_used = 0;
    if (mailbox_init(TEAM_MAILBOXES))
        return -1;
    int *all = malloc((size_t)rt.n_pes * sizeof(int));
    if (!all)
        return -1;
    for (int i = 0; i < rt.n_pes; i++)
        all[i] = i;
    strata_default_ctx.team = &team_world;
    strata_default_ctx.team_size = rt.n_pes;
    int rc = team_set_members(&team_world, TEAM_SLOT_WORLD, TEAM_BLOCK_OWN, all, rt.n_pes) ||
             team_set_members(&team_shared, TEAM_SLOT_SHARED, TEAM_BLOCK_OWN, rt.boot.local_peers,
                              rt.boot.local_size);
    free(all);
    return rc ? -1 : 0;
}

int team_init_nodes(void)
{
    return team_parts_create(&team_world, "shmem_init");
}

void team_fini(void)
{
    team_release(&team_world);
    team_release(&team_shared);
    mailbox_fini();
}

/* OR of value over every member of team. Round k sends the running OR to the member 2^k ahead
 * with put-with-signal; idempotence of OR makes the overlapping contributions harmless. The
 * scratch alternates between two halves by epoch parity: a member cannot be two agreements ahead
 * of another, since finishing one needs everyone's contribution to it. */
uint64_t team_agree_or(struct strata_team *team, uint64_t value)
{
    uint64_t epoch = ++team->agree_epoch, acc = value;
    uint64_t *scratch = team->words + TEAM_ROUNDS + (epoch & 1) * TEAM_ROUNDS * 2;
    for (int round = 0, dist = 1; dist < team->size; round++, dist <<= 1) {
        uint64_t *cell = &scratch[round * 2];
        int partner = team->members[(team->my_rank + dist) % team->size];
        shmem_uint64_put_signal(&cell[0], &acc, 1, &cell[1], epoch, SHMEM_SIGNAL_SET, partner);
        shmem_uint64_wait_until(&cell[1], SHMEM_CMP_GE, epoch);
        acc |= __atomic_load_n(&cell[0], __ATOMIC_ACQUIRE);
    }
    return acc;
}

int shmem_team_sync(shmem_team_t team)
{
    runtime_require_init("shmem_team_sync");
    if (team == SHMEM_TEAM_INVALID || team->my_rank < 0)
        return -1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    team_sync(team);
    return 0;
}

/* Agrees on `count` free slots over parent (the lowest free ones, the same on every PE), clears
 * this PE's words of each (its parts' too: they are made later), and synchronizes parent
 * so no member touches them before every member has cleared them. Returns the number found (count,
 * or fewer when slots ran out). */
static int team_claim_slots(struct strata_team *parent, int count, int *slots)
{
    uint64_t used = team_agree_or(parent, team_slots_used);
    int found = 0;
    for (int s = 0; s < TEAM_SLOTS && found < count; s++)
        if (!(used >> s & 1))
            slots[found++] = s;
    if (found == count)
        for (int i = 0; i < count; i++)
            for (int block = TEAM_BLOCK_OWN; block <= TEAM_BLOCK_NODE_PART; block++) {
                memset(block_words(slots[i], block), 0, TEAM_HEADER_WORDS * sizeof(uint64_t));
                mailbox_empty(block_mailbox(slots[i], block));
            }
    shmem_team_sync(parent);
    if (found < count && rt.debug)
        log_error("shmem_team_split", "no free team slot: %d teams are live on this PE's side",
                  TEAM_SLOTS);
    return found;
}

/* The team of the given world ranks on slot, if this PE is one of them; it belongs to space. */
static shmem_team_t team_create_world_ranks(int slot, const int *members, int size,
                                            struct space *space)
{
    int mine = 0;
    for (int i = 0; i < size; i++)
        mine |= members[i] == rt.my_pe;
    struct strata_team *team = mine ? calloc(1, sizeof(*team)) : NULL;
    if (!team || team_set_members(team, slot, TEAM_BLOCK_OWN, members, size)) {
        free(team);
        return SHMEM_TEAM_INVALID;
    }
    if (team_parts_create(team, "shmem_team_split")) {
        team_release(team);
        free(team);
        return SHMEM_TEAM_INVALID;
    }
    team->space = space;
    if (space)
        space->live_teams++;
    return team;
}

static shmem_team_t team_create(struct strata_team *parent, int slot, const int *parent_ranks,
                                int size, const shmem_team_config_t *config, long config_mask)
{
    int *members = malloc((size_t)size * sizeof(int));
    if (!members)
        return SHMEM_TEAM_INVALID;
    for (int i = 0; i < size; i++)
        members[i] = parent->members[parent_ranks[i]];
    shmem_team_t team = team_create_world_ranks(slot, members, size, parent->space);
    free(members);
    if (team != SHMEM_TEAM_INVALID && config && (config_mask & SHMEM_TEAM_NUM_CONTEXTS))
        team->config.num_contexts = config->num_contexts;
    return team;
}

int team_create_members(struct strata_team *parent, const int *world_ranks, int size,
                        struct space *space, shmem_team_t *out)
{
    int slot;
    *out = SHMEM_TEAM_INVALID;
    if (team_claim_slots(parent, 1, &slot) != 1)
        return -1;
    *out = team_create_world_ranks(slot, world_ranks, size, space);
    return 0;
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team)
{
    runtime_require_init("shmem_team_split_strided");
    *new_team = SHMEM_TEAM_INVALID;
    if (parent_team == SHMEM_TEAM_INVALID || parent_team->my_rank < 0)
        return -1;
    int n = parent_team->size;
    long last = start + (long)stride * (size - 1);
    if (size < 1 || start < 0 || start >= n || last < 0 || last >= n ||
        (stride == 0 && size != 1)) {
        if (rt.debug)
            log_error("shmem_team_split_strided",
                      "invalid triplet (start %d, stride %d, size %d) for a parent of %d PEs",
                      start, stride, size, n);
        return -1; /* the same verdict on every PE: the arguments are the same */
    }
    int slot;
    if (team_claim_slots(parent_team, 1, &slot) != 1)
        return -1;
    int *ranks = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++)
        ranks[i] = start + stride * i;
    *new_team = team_create(parent_team, slot, ranks, size, config, config_mask);
    free(ranks);
    return 0;
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team)
{
    runtime_require_init("shmem_team_split_2d");
    *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
    if (parent_team == SHMEM_TEAM_INVALID || parent_team->my_rank < 0 || xrange < 1)
        return -1;
    int n = parent_team->size, me = parent_team->my_rank;
    if (xrange > n)
        xrange = n;
    /* All rows share one slot and all columns another: rows (columns) are disjoint. */
    int slots[2];
    if (team_claim_slots(parent_team, 2, slots) != 2)
        return -1;
    int *ranks = malloc((size_t)n * sizeof(int)), count = 0;
    int row = me / xrange, col = me % xrange;
    for (int r = row * xrange; r < n && r < (row + 1) * xrange; r++)
        ranks[count++] = r;
    *xaxis_team = team_create(parent_team, slots[0], ranks, count, xaxis_config, xaxis_mask);
    count = 0;
    for (int r = col; r < n; r += xrange)
        ranks[count++] = r;
    *yaxis_team = team_create(parent_team, slots[1], ranks, count, yaxis_config, yaxis_mask);
    free(ranks);
    return 0;
}

void shmem_team_destroy(shmem_team_t team)
{
    runtime_require_init("shmem_team_destroy");
    if (team == SHMEM_TEAM_INVALID || team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED)
        return;
    ctx_destroy_shareable(team);
    team_lag_end(team); /* its notifications, and its leaders', have all arrived */
    if (team->leaders_part)
        team_lag_end(team->leaders_part);
    shmem_team_sync(team); /* no member still uses the slot when it is released */
    team_slots_used &= ~(1ull << team->slot);
    if (team->space) {
        team->space->live_teams--;
        if (team->space->team == team) /* shmem_space_get_team hands out no dead team */
            team->space->team = SHMEM_TEAM_INVALID;
    }
    team_release(team);
    free(team);
}

int shmem_team_my_pe(shmem_team_t team)
{
    runtime_require_init("shmem_team_my_pe");
    return team == SHMEM_TEAM_INVALID ? -1 : team->my_rank;
}

int shmem_team_n_pes(shmem_team_t team)
{
    runtime_require_init("shmem_team_n_pes");
    return team == SHMEM_TEAM_INVALID ? -1 : team->size;
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    runtime_require_init("shmem_team_get_config");
    if (team == SHMEM_TEAM_INVALID || !config)
        return -1;
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS)
        config->num_contexts = team->config.num_contexts;
    return 0;
}

int team_rank_of(const struct strata_team *team, int world_pe)
{
    for (int i = 0; i < team->size; i++)
        if (team->members[i] == world_pe)
            return i;
    return -1;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    runtime_require_init("shmem_team_translate_pe");
    if (src_team == SHMEM_TEAM_INVALID || dest_team == SHMEM_TEAM_INVALID || src_pe < 0 ||
        src_pe >= src_team->size)
        return -1;
    return team_rank_of(dest_team, src_team->members[src_pe]);
}

void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe)
{
    runtime_require_init("shmem_team_ptr");
    if (team == SHMEM_TEAM_INVALID || pe < 0 || pe >= team->size)
        return NULL;
    return shmem_ptr(dest, team->members[pe]);
}

int shmem_team_is_valid(shmem_team_t team)
{
    return team != SHMEM_TEAM_INVALID;
}
