/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory spaces (the OpenSHMEM dynamic memory spaces proposal): creation, destruction and the
 * queries. Creating a space is a world collective that agrees, with two reductions, on who can
 * reach the device, which region id names the space, and whether every member made its memory;
 * every PE reaches the same verdict. How node peers and the transport reach a member's memory
 * stays in that member's record, read where needed. */
#include "space_traits.h"
#include "team.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

shmem_space_t SHMEM_SPACE_INVALID = NULL;
shmem_space_t SHMEM_SPACE_DEFAULT = NULL;

#define SPACE_MAX_ID 63 /* region ids 0..63 name regions to the transport */

/* ---- Handles ----
 * A handle names a space by its region id and the creation that made it (the same on every PE),
 * not by its address: a handle used after shmem_space_destroy (a second destroy, an allocation)
 * then finds no space instead of freed memory, even once a later space has reused the id. Handles
 * are odd numbers, never valid pointers. */
static struct space *space_by_id[SPACE_MAX_ID + 1];

static shmem_space_t space_handle(const struct space *space)
{
    uint64_t token = (uint64_t)space->heap.generation << 7 | (uint64_t)space->heap.id << 1 | 1;
    return (shmem_space_t)(uintptr_t)token;
}

struct space *space_from_handle(shmem_space_t handle)
{
    uintptr_t token = (uintptr_t)handle;
    if (!(token & 1))
        return NULL;
    struct space *space = space_by_id[token >> 1 & SPACE_MAX_ID];
    return space && space->heap.generation == token >> 7 ? space : NULL;
}

void space_api_init(void)
{
    space_by_id[rt.default_space->heap.id] = rt.default_space;
    SHMEM_SPACE_DEFAULT = space_handle(rt.default_space);
}

void space_api_detach_devices(void)
{
    for (int id = 0; id <= SPACE_MAX_ID; id++)
        if (space_by_id[id])
            space_detach_devices(&rt.job, space_by_id[id]);
}

void space_api_fini(void)
{
    for (int id = 0; id <= SPACE_MAX_ID; id++)
        if (space_by_id[id] && space_by_id[id] != rt.default_space)
            space_destroy(&rt.job, space_by_id[id]);
    memset(space_by_id, 0, sizeof(space_by_id));
}

/* Per region id, the generation of the last space made there without this PE (0: none). A
 * non-member keeps nothing else of such a space, and takes no part in its destruction, so a
 * handle of it stays "not a member's" until the id is taken again. */
static unsigned space_foreign_generation[SPACE_MAX_ID + 1];

/* Whether handle names a space made without this PE (it may be destroyed since, unknown here). */
static int space_handle_foreign(shmem_space_t handle)
{
    uintptr_t token = (uintptr_t)handle;
    return (token & 1) && space_foreign_generation[token >> 1 & SPACE_MAX_ID] == token >> 7 &&
           token >> 7;
}

/* The space of a handle a routine was given; a handle of no live space, or of a space this PE
 * is not a member of, is reported under SHMEM_DEBUG (the proposal leaves both undefined) and
 * yields NULL, like SHMEM_SPACE_INVALID. */
struct space *space_of_handle(const char *routine, shmem_space_t handle)
{
    struct space *space = space_from_handle(handle);
    if (space || handle == SHMEM_SPACE_INVALID || !rt.debug)
        return space;
    if (space_handle_foreign(handle))
        log_error(routine, "PE %d is not a member of the space of handle %p", rt.my_pe, handle);
    else
        log_error(routine, "space handle %p names no live space (destroyed already?)", handle);
    return NULL;
}

static unsigned space_creations; /* world collective: the same count on every PE */
static uint64_t space_ids_used =
    1ull << REGION_ID_DEFAULT_HEAP | 1ull << REGION_ID_STATIC_DATA | 1ull << REGION_ID_LIBRARY;

/* ---- The creation's two agreements ----
 * Both are world reductions, so what lands on a PE does not grow with the job beyond one bit per
 * PE. The first: an OR of what each PE offers, its membership as one bit of a bitmap. The second:
 * a max over whether a member failed and its base address (and its complement, for the
 * minimum). What a peer needs to reach a member's memory, its attach handle and transport key,
 * stays in that member's record of the space, one per region id in the library space, which
 * node peers read as they map the space and the transport reads on its first use of a peer. The
 * agreements use one pair of buffers per creation parity: a PE is at most one creation ahead of
 * another (an agreement completes only with everyone's part), so the buffers it writes into are
 * never ones a slower PE still reads. */
enum space_offer_bits {
    SPACE_OFFER_BAD = 1,            /* a PE found the configuration invalid, or too big */
    SPACE_OFFER_NO_LOAD_STORE = 2,  /* a member's kind may not be loaded and stored */
    SPACE_OFFER_NOT_ATTACHABLE = 4, /* a member's kind does not attach (every) node peer */
    SPACE_OFFER_OWNER_ATOMICS = 8,  /* a member's kind leaves (some) atomics to their owner */
    SPACE_OFFER_NULL_OUT = 16,      /* a PE passed a null space or team pointer */
};
/* SPACE_OFFER_ARGS and _ARGS_NOT: a hash of the PE's arguments and its complement, so that the
 * OR says whether every PE passed the same (the AND of the hashes, ~OR(~hash), is their OR). */
enum {
    SPACE_OFFER_FLAGS,
    SPACE_OFFER_IDS_USED,
    SPACE_OFFER_ARGS,
    SPACE_OFFER_ARGS_NOT,
    SPACE_OFFER_MEMBERS
};
enum { SPACE_MADE_FAILED, SPACE_MADE_BASE_MAX, SPACE_MADE_BASE_MIN_NOT, SPACE_MADE_WORDS };

/* A member's record of its part of a space: how node peers attach it and the transport key
 * that reaches it. */
struct space_record {
    uint64_t handle_len;
    char handle[KIND_HANDLE_MAX];
    struct transport_key key;
};

static struct {
    size_t offer_words;             /* SPACE_OFFER_MEMBERS + one bit per PE */
    uint64_t *offer[2], *offers[2]; /* this PE's part, the OR of all */
    uint64_t *made[2], *mades[2];   /* SPACE_MADE_WORDS each: this PE's part, the max */
    struct space_record *records;   /* this PE's, per region id */
} space_records;

static size_t space_offer_words(int n_pes)
{
    return SPACE_OFFER_MEMBERS + ((size_t)n_pes + 63) / 64;
}

size_t space_records_bytes(int n_pes)
{
    return 2 * 2 * (space_offer_words(n_pes) + SPACE_MADE_WORDS) * sizeof(uint64_t) +
           (SPACE_MAX_ID + 1) * sizeof(struct space_record);
}

void space_records_init(void *area)
{
    size_t words = space_offer_words(rt.n_pes);
    uint64_t *at = area;
    space_records.offer_words = words;
    for (int parity = 0; parity < 2; parity++) {
        space_records.offer[parity] = at;
        space_records.offers[parity] = at + words;
        space_records.made[parity] = at + 2 * words;
        space_records.mades[parity] = at + 2 * words + SPACE_MADE_WORDS;
        at += 2 * (words + SPACE_MADE_WORDS);
    }
    space_records.records = (struct space_record *)at;
}

/* What a member's kind brings to the agreement (kind NULL: the host, which has everything). */
static uint64_t space_offer_flags(const struct kind_ops *kind)
{
    if (!kind)
        return 0;
    uint64_t flags = 0;
    if (!kind_can(kind, KIND_CAP_LOAD_STORE))
        flags |= SPACE_OFFER_NO_LOAD_STORE | (kind->atomic ? 0 : SPACE_OFFER_OWNER_ATOMICS);
    if (!kind_can(kind, KIND_CAP_PEER_ATTACH))
        flags |= SPACE_OFFER_NOT_ATTACHABLE;
    /* Devices of a node that do not all reach each other: some node peers go by the transport. */
    unsigned limits = kind->node_limits ? kind->node_limits() : 0;
    if (limits & KIND_NODE_UNREACHABLE)
        flags |= SPACE_OFFER_NOT_ATTACHABLE;
    if (limits & KIND_NODE_OWNER_ATOMICS)
        flags |= SPACE_OFFER_OWNER_ATOMICS;
    return flags;
}

/* The decision every PE derives from the same offers. */
struct space_plan {
    int *members; /* world ranks, ascending */
    int size;
    int id;
    int all_load_store; /* every member's kind may be loaded and stored */
    int all_attachable; /* every member's kind attaches node peers */
    int owner_atomics;  /* members' atomics on each other's words go to the owner */
    unsigned char *member;
};

static int space_plan_make(const char *routine, const shmem_space_config_t *config,
                           const uint64_t *offers, struct space_plan *plan)
{
    uint64_t flags = offers[SPACE_OFFER_FLAGS], used = offers[SPACE_OFFER_IDS_USED];
    const uint64_t *members = offers + SPACE_OFFER_MEMBERS;
    int bad = (flags & SPACE_OFFER_BAD) != 0;
    plan->all_load_store = !(flags & SPACE_OFFER_NO_LOAD_STORE);
    plan->all_attachable = !(flags & SPACE_OFFER_NOT_ATTACHABLE);
    plan->owner_atomics = (flags & SPACE_OFFER_OWNER_ATOMICS) != 0;
    for (int pe = 0; pe < rt.n_pes; pe++)
        if (members[pe / 64] >> (pe % 64) & 1) {
            plan->member[pe] = 1;
            plan->members[plan->size++] = pe;
        }
    plan->id = -1;
    for (int id = 0; id <= SPACE_MAX_ID && plan->id < 0; id++)
        if (!(used >> id & 1))
            plan->id = id;
    if (bad || plan->size == 0 || plan->id < 0) {
        if (rt.debug && rt.my_pe == 0 && config)
            log_error(routine, "no space for device type %d, %zu bytes: %s",
                      (int)config->device_type, config->size,
                      flags & SPACE_OFFER_NULL_OUT ? "a PE passed a null space or team pointer"
                      : bad                        ? "invalid configuration or a device too small"
                      : plan->size == 0            ? "no PE can reach the device type"
                                                   : "every region id is in use");
        return -1;
    }
    return 0;
}

/* The transport is needed once a member must reach another member's memory and cannot map it:
 * device memory of another PE, or memory on another node (or with node mapping turned off); or
 * once its atomics on a node peer's words must be asked of their owner. */
static int space_needs_transport(const struct space_plan *plan)
{
    if (plan->size < 2)
        return 0;
    if (!plan->all_attachable || !rt.job.node_direct || plan->owner_atomics)
        return 1;
    for (int i = 0; i < plan->size; i++) {
        int local = 0;
        for (int j = 0; j < rt.job.local_size; j++)
            local |= rt.job.local_peers[j] == plan->members[i];
        if (!local)
            return 1;
    }
    return 0;
}

static uint64_t space_caps(const struct space_plan *plan, const uint64_t *made)
{
    shmem_space_cap_t caps =
        SHMEM_SPACE_CAP_RMA | SHMEM_SPACE_CAP_COLLECTIVES | SHMEM_SPACE_CAP_ATOMICS;
    if (plan->all_load_store)
        caps |= SHMEM_SPACE_CAP_DIRECT_ACCESS;
    if (plan->size == rt.n_pes)
        caps |= SHMEM_SPACE_CAP_WORLD_ACCESS;
    if (made[SPACE_MADE_BASE_MAX] == ~made[SPACE_MADE_BASE_MIN_NOT]) /* one base for all */
        caps |= SHMEM_SPACE_CAP_IDENT_ADDR;
    return caps;
}

/* This PE's record of its part, where peers read it; the transport learns where that is. */
static void space_record_write(const struct space *space)
{
    const struct region *heap = &space->heap;
    struct space_record *record = &space_records.records[heap->id];
    record->handle_len = heap->handle_len;
    memcpy(record->handle, heap->handle, heap->handle_len);
    record->key = heap->key;
    if (rt.transport)
        transport_region_keys_at(rt.transport, heap->id, REGION_ID_LIBRARY,
                                 (size_t)((char *)&record->key - rt.library_space->heap.base));
}

/* Members make their memory; then all agree whether every member did. Returns 0 (with *out
 * this PE's part, NULL outside the team) or -1 on every PE. */
static int space_build(const char *routine, const shmem_space_config_t *config,
                       const struct space_traits *traits, const struct space_plan *plan,
                       const struct kind_ops *kind, struct space **out)
{
    struct space *space = NULL;
    uint64_t *mine = space_records.made[space_creations & 1];
    uint64_t *made = space_records.mades[space_creations & 1];
    memset(mine, 0, SPACE_MADE_WORDS * sizeof(*mine));
    if (plan->member[rt.my_pe]) {
        struct space_params params = {kind,
                                      traits->size,
                                      plan->id,
                                      space_creations,
                                      plan->member,
                                      (int)config->device_type,
                                      &traits->placement};
        mine[SPACE_MADE_FAILED] = 1;
        if (space_create(&rt.job, &params, &space) == 0) {
            uint64_t base = (uint64_t)(uintptr_t)space->heap.base;
            space_record_write(space);
            mine[SPACE_MADE_FAILED] = 0;
            mine[SPACE_MADE_BASE_MAX] = base;
            mine[SPACE_MADE_BASE_MIN_NOT] = ~base;
        }
    }
    shmem_uint64_max_reduce(SHMEM_TEAM_WORLD, made, mine, SPACE_MADE_WORDS);
    if (made[SPACE_MADE_FAILED]) {
        if (space)
            space_destroy(&rt.job, space);
        if (rt.my_pe == 0)
            log_error(routine, "a member could not create %zu bytes of device type %d",
                      config->size, (int)config->device_type);
        return -1;
    }
    if (space) {
        space->caps = space_caps(plan, made);
        space->alloc_policy = traits->alloc_policy;
        space->device_index = traits->device_index;
    }
    *out = space;
    return 0;
}

/* The attach handle of pe's part of the space with region id id, from pe's record. */
static int space_record_handle(void *arg, int pe, int id, void *handle, size_t *len)
{
    struct space_record record;
    (void)arg;
    shmem_getmem(&record, &space_records.records[id], sizeof(record), pe);
    if (record.handle_len > *len)
        return -1;
    *len = record.handle_len;
    memcpy(handle, record.handle, *len);
    return 0;
}

/* The space's team and the library's own team over the same members (world collective). Every
 * member's memory exists: node peers' is attached first (or made ready to be, on first use).
 * Returns 0, or -1 on every PE when team slots ran out. */
static int space_attach_teams(const char *routine, struct space *space,
                              const struct space_plan *plan)
{
    if (space && space_attach_peers(&rt.job, space, space_record_handle, NULL)) {
        if (errno == ESRCH) /* a node peer ended: its end is the cause */
            log_fatal_lost_peer(routine, "a PE of this node ended");
        log_fatal(routine, "cannot map the space of the PEs on this node");
    }
    shmem_team_t team, members_team;
    if (team_create_members(SHMEM_TEAM_WORLD, plan->members, plan->size, space, &team))
        return -1;
    if (team_create_members(SHMEM_TEAM_WORLD, plan->members, plan->size, NULL, &members_team)) {
        shmem_team_destroy(team);
        return -1;
    }
    if (space) {
        space->team = team;
        space->members_team = members_team;
    }
    return 0;
}

/* FNV-1a over the arguments that must be the same on every PE: the configuration, and each trait
 * that is set. */
static uint64_t space_args_hash(const shmem_space_config_t *config,
                                const shmemx_space_traits_t *traits)
{
    uint64_t words[8] = {0}, hash = 14695981039346656037ull;
    if (config) {
        words[0] = (uint64_t)config->device_type;
        words[1] = config->size;
        words[2] = config->flags;
    }
    if (traits) {
        uint64_t mask = traits->mask;
        words[3] = mask;
        words[4] = mask & SHMEMX_SPACE_TRAIT_PAGE_SIZE ? traits->page_size : 0;
        words[5] = mask & SHMEMX_SPACE_TRAIT_ALLOC_POLICY ? (uint64_t)traits->alloc_policy : 0;
        words[6] = mask & SHMEMX_SPACE_TRAIT_NUMA_DOMAIN ? (uint64_t)traits->numa_domain : 0;
        words[7] = (mask & SHMEMX_SPACE_TRAIT_MEMORY ? (uint64_t)traits->memory : 0) << 32 |
                   (mask & SHMEMX_SPACE_TRAIT_DEVICE_INDEX ? (uint32_t)traits->device_index : 0);
    }
    const unsigned char *bytes = (const unsigned char *)words;
    for (size_t i = 0; i < sizeof(words); i++)
        hash = (hash ^ bytes[i]) * 1099511628211ull;
    return hash;
}

/* This PE's offer to the creation: whether it can hold the space (and why not), and flags. */
static void space_offer_make(const char *routine, const shmem_space_config_t *config,
                             const shmemx_space_traits_t *traits, int outs_valid, uint64_t *offer,
                             struct space_traits *resolved, const struct kind_ops **kind, char *why,
                             size_t whylen)
{
    int index = space_traits_device_index(traits);
    enum space_verdict verdict = space_reach(routine, config, index, kind, why, whylen);
    /* PREFERRED falls back to the PE's first device where it has not as many. */
    if (verdict == SPACE_NO_DEVICE && index > 0 && space_traits_preferred(traits)) {
        index = 0;
        verdict = space_reach(routine, config, 0, kind, why, whylen);
    }
    if (space_traits_check(routine, config, traits) == SPACE_BAD_CONFIG) {
        verdict = SPACE_BAD_CONFIG;
        *why = 0; /* reported: whether this PE could hold it is beside the point */
    }
    if (verdict == SPACE_REACHABLE) {
        verdict = space_traits_resolve(config, traits, *kind, 1, resolved, why, whylen);
        resolved->device_index = index;
    }
    if (verdict == SPACE_BAD_CONFIG || verdict == SPACE_TOO_BIG || !outs_valid)
        offer[SPACE_OFFER_FLAGS] |= SPACE_OFFER_BAD;
    if (!outs_valid)
        offer[SPACE_OFFER_FLAGS] |= SPACE_OFFER_NULL_OUT;
    if (verdict == SPACE_REACHABLE) {
        offer[SPACE_OFFER_MEMBERS + rt.my_pe / 64] |= 1ull << (rt.my_pe % 64);
        offer[SPACE_OFFER_FLAGS] |= space_offer_flags(*kind);
    } else if (*why) {
        LOG(LOG_MEM, routine, "PE %d is no member: %s", rt.my_pe, why);
    }
}

static int space_api_create(const char *routine, const shmem_space_config_t *config,
                            const shmemx_space_traits_t *traits, shmem_space_t *space_out,
                            shmem_team_t *team_out)
{
    runtime_require_init(routine);
    /* A null out-pointer (undefined in the proposal) fails the creation on every PE, as an
     * invalid configuration does, instead of crashing this PE midway through the collective. */
    shmem_space_t space_unused;
    shmem_team_t team_unused;
    int outs_valid = space_out && team_out;
    if (!outs_valid)
        log_error(routine, "%s is a null pointer", space_out ? "team" : "space");
    space_out = space_out ? space_out : &space_unused;
    team_out = team_out ? team_out : &team_unused;
    *space_out = SHMEM_SPACE_INVALID;
    *team_out = SHMEM_TEAM_INVALID;
    space_creations++;
    const struct kind_ops *kind = NULL;
    uint64_t *offer = space_records.offer[space_creations & 1];
    uint64_t *offers = space_records.offers[space_creations & 1];
    memset(offer, 0, space_records.offer_words * sizeof(*offer));
    struct space_traits resolved = {0};
    char why[400] = "";
    space_offer_make(routine, config, traits, outs_valid, offer, &resolved, &kind, why,
                     sizeof(why));
    offer[SPACE_OFFER_IDS_USED] = space_ids_used;
    offer[SPACE_OFFER_ARGS] = space_args_hash(config, traits);
    offer[SPACE_OFFER_ARGS_NOT] = ~offer[SPACE_OFFER_ARGS];
    shmem_uint64_or_reduce(SHMEM_TEAM_WORLD, offers, offer, space_records.offer_words);
    /* SHMEM_DEBUG: arguments that differ between PEs (undefined in the proposal) fail it. */
    if (rt.debug && !(offers[SPACE_OFFER_FLAGS] & SPACE_OFFER_BAD) &&
        offers[SPACE_OFFER_ARGS] != ~offers[SPACE_OFFER_ARGS_NOT]) {
        if (rt.my_pe == 0)
            log_error(routine, "the PEs passed different arguments (device type, size, flags or "
                               "traits): the same are required on every PE");
        offers[SPACE_OFFER_FLAGS] |= SPACE_OFFER_BAD;
    }
    struct space_plan plan = {.members = malloc((size_t)rt.n_pes * sizeof(int)),
                              .id = -1,
                              .member = calloc((size_t)rt.n_pes, 1)};
    if (!plan.members || !plan.member)
        log_fatal(routine, "out of memory for a plan of %d PEs", rt.n_pes);
    int rc = space_plan_make(routine, config, offers, &plan);
    if (rc && plan.size == 0 && *why) /* the traits held nowhere: each PE says why not here */
        log_error(routine, "PE %d cannot hold the space: %s", rt.my_pe, why);
    if (rc == 0 && !rt.transport && space_needs_transport(&plan) && runtime_transport_start_late())
        log_fatal(routine, "cannot start the transport (SHMEM_TRANSPORT=%s)", rt.knobs.TRANSPORT);
    struct space *space = NULL;
    if (rc == 0)
        rc = space_build(routine, config, &resolved, &plan, kind, &space);
    if (rc == 0 && space_attach_teams(routine, space, &plan)) {
        if (space)
            space_destroy(&rt.job, space);
        if (rt.debug && rt.my_pe == 0)
            log_error(routine, "no team slot is free for the space's team");
        rc = -1;
    }
    if (rc == 0)
        space_foreign_generation[plan.id] = space ? 0 : space_creations;
    if (rc == 0 && space) {
        space_ids_used |= 1ull << plan.id;
        space_by_id[plan.id] = space;
        if (!kind_can(space->heap.kind, KIND_CAP_LOAD_STORE) && runtime_progress_start())
            log_fatal(routine, "cannot start the progress thread");
        *space_out = space_handle(space);
        *team_out = space->team;
    }
    LOG(LOG_MEM, routine, "device type %d, %zu bytes, %d members, region %d: %s",
        config ? (int)config->device_type : -1, config ? config->size : 0, plan.size, plan.id,
        rc ? "failed" : "made");
    free(plan.members);
    free(plan.member);
    return rc;
}

int shmem_space_create(const shmem_space_config_t *config, shmem_space_t *space_out,
                       shmem_team_t *team_out)
{
    return space_api_create("shmem_space_create", config, NULL, space_out, team_out);
}

int shmemx_space_create_traits(const shmem_space_config_t *config,
                               const shmemx_space_traits_t *traits, shmem_space_t *space_out,
                               shmem_team_t *team_out)
{
    return space_api_create("shmemx_space_create_traits", config, traits, space_out, team_out);
}

int shmem_space_destroy(shmem_space_t handle)
{
    runtime_require_init("shmem_space_destroy");
    if (handle == SHMEM_SPACE_INVALID)
        return 0;
    struct space *space = space_of_handle("shmem_space_destroy", handle);
    if (!space || space == rt.default_space) {
        if (space && rt.debug)
            log_error("shmem_space_destroy", "the default space cannot be destroyed");
        return -1;
    }
    /* Whether a team of the space lives anywhere: every member must give the same answer. */
    if (team_agree_or(space->members_team, (uint64_t)(space->live_teams > 0))) {
        if (rt.debug)
            log_error("shmem_space_destroy",
                      "a team of the space still exists (the space team included): destroy it "
                      "first");
        return -1;
    }
    order_quiet_all(); /* every context's writes into the space land before it goes */
    space_detach_devices(&rt.job, space);
    shmem_team_destroy(space->members_team); /* synchronizes: nobody uses the memory any more */
    int id = space->heap.id;
    space_by_id[id] = NULL;
    space_destroy(&rt.job, space);
    space_ids_used &= ~(1ull << id);
    return 0;
}

/* SHMEM_DEBUG: a query's out-pointer is not null (the proposal leaves it undefined). */
static int space_out_missing(const char *routine, const void *out, const char *name)
{
    if (out)
        return 0;
    if (rt.debug)
        log_error(routine, "%s is a null pointer (PE %d)", name, rt.my_pe);
    return 1;
}

int shmem_space_get_team(shmem_space_t handle, shmem_team_t *team)
{
    runtime_require_init("shmem_space_get_team");
    if (space_out_missing("shmem_space_get_team", team, "team"))
        return -1;
    if (space_handle_foreign(handle)) {
        *team = SHMEM_TEAM_INVALID; /* a live space of which this PE is not a member */
        return 0;
    }
    struct space *space = space_of_handle("shmem_space_get_team", handle);
    if (!space)
        return -1;
    *team = space == rt.default_space ? SHMEM_TEAM_WORLD : space->team;
    return 0;
}

int shmem_space_get_device_type(shmem_space_t handle, shmem_device_type_t *type)
{
    runtime_require_init("shmem_space_get_device_type");
    if (space_out_missing("shmem_space_get_device_type", type, "type"))
        return -1;
    struct space *space = space_of_handle("shmem_space_get_device_type", handle);
    if (!space)
        return -1;
    *type = (shmem_device_type_t)space->device_type;
    return 0;
}

int shmem_space_get_caps(shmem_space_t handle, shmem_space_cap_t *caps)
{
    runtime_require_init("shmem_space_get_caps");
    if (space_out_missing("shmem_space_get_caps", caps, "caps"))
        return -1;
    struct space *space = space_of_handle("shmem_space_get_caps", handle);
    if (!space)
        return -1;
    *caps = space->caps;
    return 0;
}

int shmem_get_space(void *ptr, shmem_space_t *space)
{
    runtime_require_init("shmem_get_space");
    if (!ptr || space_out_missing("shmem_get_space", space, "space"))
        return -1;
    struct region *region = region_lookup(ptr);
    if (!region) {
        if (rt.debug)
            log_error("shmem_get_space", "%p is not symmetric memory", ptr);
        return -1;
    }
    /* The library's host space is not a space of the API: its static data is the default's. */
    *space = space_handle(region->space == rt.library_space ? rt.default_space : region->space);
    return 0;
}

int shmem_team_get_space(shmem_team_t team, shmem_space_t *space)
{
    runtime_require_init("shmem_team_get_space");
    if (team == SHMEM_TEAM_INVALID || space_out_missing("shmem_team_get_space", space, "space"))
        return -1;
    *space = space_handle(team->space ? team->space : rt.default_space);
    return 0;
}
