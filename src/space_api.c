/* Memory spaces (the OpenSHMEM dynamic memory spaces proposal): creation, destruction and the
 * queries. Creating a space is a world collective that agrees, with two exchanges, on who can
 * reach the device, which region id names the space, and whether every member made its memory
 * (and how node peers and the transport reach it); every PE reaches the same verdict. */
#include "space_reach.h"
#include "team.h"

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

void space_api_fini(void)
{
    memset(space_by_id, 0, sizeof(space_by_id));
}

/* The space of a handle a routine was given; a handle of no live space is reported under
 * SHMEM_DEBUG (the proposal leaves it undefined) and yields NULL, like SHMEM_SPACE_INVALID. */
struct space *space_of_handle(const char *routine, shmem_space_t handle)
{
    struct space *space = space_from_handle(handle);
    if (!space && handle != SHMEM_SPACE_INVALID && rt.debug)
        log_error(routine, "space handle %p names no live space (destroyed already?)", handle);
    return space;
}

static unsigned space_creations; /* world collective: the same count on every PE */
static uint64_t space_ids_used =
    1ull << REGION_ID_DEFAULT_HEAP | 1ull << REGION_ID_STATIC_DATA | 1ull << REGION_ID_LIBRARY;

/* What each PE says in the first exchange. */
struct space_offer {
    int32_t verdict;       /* enum space_verdict */
    int32_t load_store;    /* the kind it would use may be loaded and stored */
    int32_t attachable;    /* node peers attach that kind's memory */
    int32_t owner_atomics; /* only the owner updates that kind's words: it has no atomics */
    uint64_t ids_used;
};

/* What each member says in the second: whether it made its memory, where, the handle by which
 * node peers attach it and the key that reaches it through the transport. */
struct space_made {
    int32_t ok;
    uint32_t key_len;
    uint64_t base;
    uint32_t handle_len;
    char handle[KIND_HANDLE_MAX];
    char key[TRANSPORT_KEY_MAX];
};

/* ---- The creation's two exchanges ----
 * They run over the library's own world collective (an fcollect) into records in the library
 * space: a process manager's fence per creation kept every creation's records in its store, so
 * creating spaces grew slower and the PE bigger with each one. There is one array per exchange
 * and per creation parity: a PE is at most one creation ahead of another (an exchange completes
 * only with everyone's record), so the array it writes into is never one a slower PE still
 * reads. */
static struct {
    struct space_offer *offer[2], *offers[2]; /* this PE's record, everyone's (n_pes) */
    struct space_made *made[2], *mades[2];
} space_records;

size_t space_records_bytes(int n_pes)
{
    return 2 * (size_t)(n_pes + 1) * (sizeof(struct space_offer) + sizeof(struct space_made));
}

void space_records_init(void *area)
{
    char *at = area;
    for (int parity = 0; parity < 2; parity++) {
        space_records.offer[parity] = (struct space_offer *)at;
        space_records.offers[parity] = space_records.offer[parity] + 1;
        at += (size_t)(rt.n_pes + 1) * sizeof(struct space_offer);
        space_records.made[parity] = (struct space_made *)at;
        space_records.mades[parity] = space_records.made[parity] + 1;
        at += (size_t)(rt.n_pes + 1) * sizeof(struct space_made);
    }
}

/* Everyone's record, mine included: mine is already in its symmetric slot. */
static void *space_exchange(void *all, const void *mine, size_t len)
{
    shmem_fcollectmem(SHMEM_TEAM_WORLD, all, mine, len);
    return all;
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

static int space_plan_make(const shmem_space_config_t *config, const struct space_offer *offers,
                           struct space_plan *plan)
{
    uint64_t used = 0;
    int bad = 0;
    plan->all_load_store = plan->all_attachable = 1;
    for (int pe = 0; pe < rt.n_pes; pe++) {
        used |= offers[pe].ids_used;
        bad |= offers[pe].verdict == SPACE_BAD_CONFIG || offers[pe].verdict == SPACE_TOO_BIG;
        if (offers[pe].verdict == SPACE_REACHABLE) {
            plan->member[pe] = 1;
            plan->members[plan->size++] = pe;
            plan->all_load_store &= offers[pe].load_store;
            plan->all_attachable &= offers[pe].attachable;
            plan->owner_atomics |= offers[pe].owner_atomics;
        }
    }
    plan->id = -1;
    for (int id = 0; id <= SPACE_MAX_ID && plan->id < 0; id++)
        if (!(used >> id & 1))
            plan->id = id;
    if (bad || plan->size == 0 || plan->id < 0) {
        if (rt.debug && rt.my_pe == 0 && config)
            log_error("shmem_space_create", "no space for device type %d, %zu bytes: %s",
                      (int)config->device_type, config->size,
                      bad               ? "invalid configuration or a device too small"
                      : plan->size == 0 ? "no PE can reach the device type"
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

static uint64_t space_caps(const struct space_plan *plan, const struct space_made *made)
{
    shmem_space_cap_t caps =
        SHMEM_SPACE_CAP_RMA | SHMEM_SPACE_CAP_COLLECTIVES | SHMEM_SPACE_CAP_ATOMICS;
    if (plan->all_load_store)
        caps |= SHMEM_SPACE_CAP_DIRECT_ACCESS;
    if (plan->size == rt.n_pes)
        caps |= SHMEM_SPACE_CAP_WORLD_ACCESS;
    int same = 1;
    for (int i = 1; i < plan->size; i++)
        same &= made[plan->members[i]].base == made[plan->members[0]].base;
    if (same)
        caps |= SHMEM_SPACE_CAP_IDENT_ADDR;
    return caps;
}

/* Hands the members' transport keys of the new region to the transport. */
static void space_peer_keys(const struct space *space, const struct space_plan *plan,
                            const struct space_made *made)
{
    for (int i = 0; i < plan->size; i++) {
        int pe = plan->members[i];
        if (made[pe].key_len && /* this PE's own too: transport atomics reach it that way */
            transport_region_peer_key(rt.transport, space->heap.id, pe, made[pe].key,
                                      made[pe].key_len))
            log_fatal("shmem_space_create", "a bad transport key from PE %d", pe);
    }
}

/* Members make their memory; then all agree whether every member did. Returns 0 (with *out
 * this PE's part, NULL outside the team) or -1 on every PE. */
static int space_build(const shmem_space_config_t *config, const struct space_plan *plan,
                       const struct kind_ops *kind, struct space **out)
{
    struct space *space = NULL;
    struct space_made *mine = space_records.made[space_creations & 1];
    memset(mine, 0, sizeof(*mine));
    if (plan->member[rt.my_pe]) {
        struct space_params params = {
            kind, config->size, plan->id, space_creations, plan->member, (int)config->device_type};
        if (space_create(&rt.job, &params, &space) == 0) {
            struct region *heap = &space->heap;
            mine->ok = 1;
            mine->base = (uint64_t)(uintptr_t)heap->base;
            mine->handle_len = (uint32_t)heap->handle_len;
            memcpy(mine->handle, heap->handle, heap->handle_len);
            mine->key_len = (uint32_t)heap->key_len;
            memcpy(mine->key, heap->key, heap->key_len);
        }
    }
    struct space_made *made =
        space_exchange(space_records.mades[space_creations & 1], mine, sizeof(*mine));
    int all_made = 1;
    for (int i = 0; i < plan->size; i++)
        all_made &= made[plan->members[i]].ok;
    if (all_made && space) {
        space->caps = space_caps(plan, made);
        space_peer_keys(space, plan, made);
    }
    if (!all_made) {
        if (space)
            space_destroy(&rt.job, space);
        if (rt.my_pe == 0)
            log_error("shmem_space_create", "a member could not create %zu bytes of device type %d",
                      config->size, (int)config->device_type);
        return -1;
    }
    *out = space;
    return 0;
}

/* The space's team and the library's own team over the same members (world collective). Every
 * member's memory exists: node peers' is mapped first, and the team agreement synchronizes the
 * world, after which the names can go. Returns 0, or -1 on every PE when team slots ran out. */
static int space_made_handle(void *arg, int pe, int id, void *handle, size_t *len)
{
    const struct space_made *made = arg;
    (void)id;
    if (made[pe].handle_len > *len)
        return -1;
    *len = made[pe].handle_len;
    memcpy(handle, made[pe].handle, *len);
    return 0;
}

static int space_attach_teams(struct space *space, const struct space_plan *plan)
{
    struct space_made *made = space_records.mades[space_creations & 1];
    if (space && space_attach_peers(&rt.job, space, space_made_handle, made))
        log_fatal("shmem_space_create", "cannot map the space of the PEs on this node");
    shmem_team_t team, members_team;
    if (team_create_members(SHMEM_TEAM_WORLD, plan->members, plan->size, space, &team))
        return -1;
    if (team_create_members(SHMEM_TEAM_WORLD, plan->members, plan->size, NULL, &members_team)) {
        shmem_team_destroy(team);
        return -1;
    }
    if (space) {
        space_unexport(space);
        space->team = team;
        space->members_team = members_team;
    }
    return 0;
}

int shmem_space_create(const shmem_space_config_t *config, shmem_space_t *space_out,
                       shmem_team_t *team_out)
{
    runtime_require_init("shmem_space_create");
    *space_out = SHMEM_SPACE_INVALID;
    *team_out = SHMEM_TEAM_INVALID;
    space_creations++;
    const struct kind_ops *kind = NULL;
    struct space_offer *offer = space_records.offer[space_creations & 1];
    offer->verdict = space_reach("shmem_space_create", config, &kind);
    offer->load_store = kind ? kind_can(kind, KIND_CAP_LOAD_STORE) : 1;
    offer->attachable = kind ? kind_can(kind, KIND_CAP_PEER_ATTACH) : 1;
    offer->owner_atomics = kind && !kind_can(kind, KIND_CAP_LOAD_STORE) && !kind->atomic;
    offer->ids_used = space_ids_used;
    struct space_offer *offers =
        space_exchange(space_records.offers[space_creations & 1], offer, sizeof(*offer));
    struct space_plan plan = {.members = malloc((size_t)rt.n_pes * sizeof(int)),
                              .id = -1,
                              .member = calloc((size_t)rt.n_pes, 1)};
    if (!plan.members || !plan.member)
        log_fatal("shmem_space_create", "out of memory for a plan of %d PEs", rt.n_pes);
    int rc = space_plan_make(config, offers, &plan);
    if (rc == 0 && !rt.transport && space_needs_transport(&plan) && runtime_transport_start_late())
        log_fatal("shmem_space_create", "cannot start the UCX transport");
    struct space *space = NULL;
    if (rc == 0)
        rc = space_build(config, &plan, kind, &space);
    if (rc == 0 && space_attach_teams(space, &plan)) {
        if (space)
            space_destroy(&rt.job, space);
        if (rt.debug && rt.my_pe == 0)
            log_error("shmem_space_create", "no team slot is free for the space's team");
        rc = -1;
    }
    if (rc == 0 && space) {
        space_ids_used |= 1ull << plan.id;
        space_by_id[plan.id] = space;
        if (!kind_can(space->heap.kind, KIND_CAP_LOAD_STORE) && runtime_progress_start())
            log_fatal("shmem_space_create", "cannot start the progress thread");
        *space_out = space_handle(space);
        *team_out = space->team;
    }
    LOG(LOG_MEM, "shmem_space_create", "device type %d, %zu bytes, %d members, region %d: %s",
        (int)config->device_type, config->size, plan.size, plan.id, rc ? "failed" : "made");
    free(plan.members);
    free(plan.member);
    return rc;
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
    shmem_team_destroy(space->members_team); /* synchronizes: nobody uses the memory any more */
    int id = space->heap.id;
    space_by_id[id] = NULL;
    space_destroy(&rt.job, space);
    space_ids_used &= ~(1ull << id);
    return 0;
}

int shmem_space_get_team(shmem_space_t handle, shmem_team_t *team)
{
    struct space *space = space_of_handle("shmem_space_get_team", handle);
    if (!space)
        return -1;
    if (space == rt.default_space)
        *team = SHMEM_TEAM_WORLD;
    else
        *team = space->member[rt.my_pe] ? space->team : SHMEM_TEAM_INVALID;
    return 0;
}

int shmem_space_get_device_type(shmem_space_t handle, shmem_device_type_t *type)
{
    struct space *space = space_of_handle("shmem_space_get_device_type", handle);
    if (!space)
        return -1;
    *type = (shmem_device_type_t)space->device_type;
    return 0;
}

/* Whether every PE's default heap sits at the same address: asked once, on first query, from
 * what each PE published at init. */
static void space_default_check_addresses(struct space *space)
{
    static int checked;
    if (checked)
        return;
    checked = 1;
    uint64_t first = 0;
    for (int pe = 0; pe < rt.n_pes; pe++) {
        uint64_t base = (uint64_t)(uintptr_t)space->heap.base;
        size_t len = sizeof(base);
        if (pe != rt.my_pe && boot_get(pe, "strata.heap.base", &base, &len))
            return;
        if (pe == 0)
            first = base;
        else if (base != first)
            return;
    }
    space->caps |= SHMEM_SPACE_CAP_IDENT_ADDR;
}

int shmem_space_get_caps(shmem_space_t handle, shmem_space_cap_t *caps)
{
    struct space *space = space_of_handle("shmem_space_get_caps", handle);
    if (!space)
        return -1;
    if (space == rt.default_space)
        space_default_check_addresses(space);
    *caps = space->caps;
    return 0;
}

int shmem_get_space(void *ptr, shmem_space_t *space)
{
    if (!ptr)
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
    if (team == SHMEM_TEAM_INVALID)
        return -1;
    *space = space_handle(team->space ? team->space : rt.default_space);
    return 0;
}
