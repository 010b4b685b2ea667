/* SPDX-License-Identifier: BSD-3-Clause */
/* Space life cycle: create this PE's memory and register it, attach node peers and compute the
 * routes, destroy. */
#include "space.h"

#include "../common/log.h"
#include "../transports/transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every block of a heap starts on a cache line, so that neighbouring allocations never share a
 * line between PEs writing them. */
#define SPACE_MIN_ALIGN 64

/* "/<job id>": what a kind puts in front of the names it makes, unique to the job. */
static void space_name_prefix(const struct space_job *job, char *prefix, size_t len)
{
    snprintf(prefix, len, "/%s", job->job_id);
}

int space_device_regions;

/* Registers region with the job's transport when it registers and reaches the region's memory:
 * its key written to *key, or published through the exchange (key NULL). Returns 0 or -1. */
static int region_register(const struct space_job *job, struct region *region,
                           struct transport_key *key)
{
    region->registered = job->transport && region->size &&
                         kind_can(region->kind, KIND_CAP_TRANSPORT) &&
                         transport_reaches_memory(job->transport, region->kind->mem_type);
    return region->registered
               ? transport_region_register(job->transport, region->id, region->generation,
                                           region->base, region->size, key)
               : 0;
}

/* This PE's part of a region beside its memory: the handle node peers attach with, the
 * transport registration when the transport can reach the kind's memory, the registry. */
static int region_init(const struct space_job *job, struct region *region)
{
    const struct kind_ops *kind = region->kind;
    region->routes.copies = calloc((size_t)job->n_pes, sizeof(char *));
    if (!region->routes.copies)
        return -1;
    region->routes.member = region->space->member;
    region->handle_len = sizeof(region->handle);
    if (kind_can(kind, KIND_CAP_PEER_ATTACH) &&
        kind->export(&region->mem, region->handle, &region->handle_len))
        return -1;
    region->key.len = 0;
    if (region_register(job, region, job->keys_in_records ? &region->key : NULL))
        return -1;
    if (registry_add(region))
        return -1;
    if (!kind_can(kind, KIND_CAP_LOAD_STORE))
        __atomic_add_fetch(&space_device_regions, 1, __ATOMIC_RELAXED);
    return 0;
}

static int space_heap_create(const struct space_job *job, const struct space_params *params,
                             struct space *space)
{
    struct region *heap = &space->heap;
    char prefix[300];
    space_name_prefix(job, prefix, sizeof(prefix));
    heap->id = params->id;
    heap->generation = params->generation;
    heap->space = space;
    heap->kind = params->kind;
    heap->mem.fd = -1;
    heap->mem.wish = kind_ident_address(params->id, params->size);
    heap->mem.placement = params->placement ? &space->placement : NULL;
    /* The default heap, and heaps the CPU maps (whose reservations are that aligned anyway),
     * promise more than the allocator's minimum (shmem_align, shmemx_space_align): device
     * kinds would have to over-allocate for it. */
    heap->mem.align =
        params->id == REGION_ID_DEFAULT_HEAP || kind_can(params->kind, KIND_CAP_LOAD_STORE)
            ? kind_base_alignment(params->size)
            : SPACE_MIN_ALIGN;
    if (heap->kind->create(prefix, params->size, &heap->mem))
        return -1;
    heap->base = heap->mem.base;
    heap->size = params->size;
    space->allocator = heap_create(params->size, SPACE_MIN_ALIGN);
    return space->allocator ? 0 : -1;
}

int space_create(const struct space_job *job, const struct space_params *params, struct space **out)
{
    struct space *space = calloc(1, sizeof(*space));
    if (!space)
        return -1;
    space->member = malloc((size_t)job->n_pes);
    if (!space->member)
        goto fail;
    memcpy(space->member, params->member, (size_t)job->n_pes);
    space->device_type = params->device_type;
    if (params->placement)
        space->placement = *params->placement;
    if (space_heap_create(job, params, space) || region_init(job, &space->heap))
        goto fail;
    *out = space;
    return 0;
fail:
    space_destroy(job, space);
    return -1;
}

static struct region static_region;

int space_default_create(const struct space_job *job, size_t heap_size, int heap_id,
                         struct space **out)
{
    unsigned char *all = malloc((size_t)job->n_pes);
    if (!all)
        return -1;
    memset(all, 1, (size_t)job->n_pes);
    struct space_params params = {&kind_host, heap_size, heap_id, 0, all, 0, NULL};
    int rc = space_create(job, &params, out);
    free(all);
    if (rc)
        return -1;
    char prefix[300];
    space_name_prefix(job, prefix, sizeof(prefix));
    static_region.id = REGION_ID_STATIC_DATA;
    static_region.space = *out;
    static_region.kind = &kind_host;
    if (static_data_create(prefix, &static_region) || region_init(job, &static_region)) {
        space_destroy(job, *out);
        return -1;
    }
    return 0;
}

int space_regions(struct space *space, struct region **regions)
{
    regions[0] = &space->heap;
    if (static_region.space != space || !static_region.size)
        return 1;
    regions[1] = &static_region;
    return 2;
}

/* Node peers whose memory this PE attaches: members on this node, unless node mapping is off. */
static void space_node_peers(const struct space_job *job, const struct space *space,
                             unsigned char *node_peer)
{
    memset(node_peer, 0, (size_t)job->n_pes);
    for (int i = 0; job->node_direct && i < job->local_size; i++) {
        int pe = job->local_peers[i];
        node_peer[pe] = pe != job->my_pe && space->member[pe];
    }
}

/* pe's copy of region, by the handle its source gives (NULL on failure, said in the log). A
 * handle is checked first against what this PE reaches: *unreached, and NULL, where it does not
 * (unreached NULL: the kind reaches every handle). */
static char *region_attach_peer(struct region *region, int pe, int *unreached)
{
    char handle[KIND_HANDLE_MAX];
    size_t len = sizeof(handle);
    if (region->handle_of(region->handle_arg, pe, region->id, handle, &len)) {
        log_error("spaces", "no handle of region %d from PE %d", region->id, pe);
        return NULL;
    }
    if (unreached && region->kind->reaches && !region->kind->reaches(handle, len)) {
        LOG(LOG_INIT, "spaces",
            "region %d of node peer PE %d is on a device this PE's does not reach: through "
            "the transport",
            region->id, pe);
        *unreached = 1;
        return NULL;
    }
    char *copy = region->kind->attach(handle, len, region->size);
    int why = errno;
    if (!copy)
        log_error("spaces", "cannot attach region %d of PE %d", region->id, pe);
    errno = why;
    return copy;
}

static char *region_attach_on_use(void *owner, int pe)
{
    return region_attach_peer(owner, pe, NULL);
}

/* Attaches the node peers' copies of region into its route table (this PE's own base too); what
 * was attached stays there, for region_destroy to detach, whatever happens. Where the kind
 * allows it, only the first node peer after this PE is attached now (so that a node whose PEs
 * cannot open each other's memory fails here, saying why) and the others on first use. A node
 * peer whose memory the kind may not attach here is no longer counted in node_peer: it is
 * reached as PEs of other nodes are. */
static int region_attach(const struct space_job *job, struct region *region,
                         unsigned char *node_peer, space_handle_fn handle_of, void *arg)
{
    struct route_table *routes = &region->routes;
    routes->copies[job->my_pe] = region->base;
    if (!region->size || !kind_can(region->kind, KIND_CAP_PEER_ATTACH))
        return 0;
    region->handle_of = handle_of;
    region->handle_arg = arg;
    if (kind_can(region->kind, KIND_CAP_ATTACH_ON_USE)) {
        routes->on_use = calloc((size_t)job->n_pes, 1);
        if (!routes->on_use)
            return -1;
        routes->attach = region_attach_on_use;
        routes->owner = region;
    }
    int attach_now = 1;
    for (int i = 1; i < job->n_pes; i++) {
        int pe = (job->my_pe + i) % job->n_pes, unreached = 0;
        if (!node_peer[pe])
            continue;
        if (routes->on_use && !attach_now) {
            routes->on_use[pe] = 1;
            continue;
        }
        routes->copies[pe] = region_attach_peer(region, pe, &unreached);
        if (unreached)
            node_peer[pe] = 0;
        else if (!routes->copies[pe])
            return -1;
        attach_now = !routes->on_use;
    }
    return 0;
}

/* node_peer: the space's node peers, of which the region's kind may attach fewer. */
static int region_attach_peers(const struct space_job *job, struct region *region,
                               const unsigned char *node_peer, space_handle_fn handle_of, void *arg)
{
    unsigned char *attachable = malloc((size_t)job->n_pes);
    if (!attachable)
        return -1;
    memcpy(attachable, node_peer, (size_t)job->n_pes);
    int rc = region_attach(job, region, attachable, handle_of, arg);
    struct route_inputs in = {
        .my_pe = job->my_pe,
        .n_pes = job->n_pes,
        .node_peer = attachable,
        .kind = region->kind,
        .transport_reaches = region->registered,
        .transport_cpu_atomics = job->transport && transport_cpu_atomics(job->transport),
    };
    if (!rc && route_table_compute(&in, &region->routes)) {
        log_error("spaces", "region %d has a member this PE cannot reach", region->id);
        rc = -1;
    }
    free(attachable);
    return rc;
}

int space_register_late(const struct space_job *job, struct space *space)
{
    return space->heap.registered ? 0 : region_register(job, &space->heap, NULL);
}

int space_attach_peers(const struct space_job *job, struct space *space, space_handle_fn handle_of,
                       void *arg)
{
    unsigned char *node_peer = malloc((size_t)job->n_pes);
    struct region *regions[2];
    int n = space_regions(space, regions), rc = node_peer ? 0 : -1;
    if (node_peer)
        space_node_peers(job, space, node_peer);
    for (int i = 0; i < n && !rc; i++)
        rc = region_attach_peers(job, regions[i], node_peer, handle_of, arg);
    free(node_peer);
    return rc;
}

void space_detach_devices(const struct space_job *job, struct space *space)
{
    struct region *regions[2];
    int n = space_regions(space, regions);
    for (int i = 0; i < n; i++) {
        char **copies = regions[i]->routes.copies;
        for (int pe = 0;
             copies && !kind_can(regions[i]->kind, KIND_CAP_LOAD_STORE) && pe < job->n_pes; pe++)
            if (pe != job->my_pe && copies[pe]) {
                regions[i]->kind->detach(copies[pe], regions[i]->size);
                copies[pe] = NULL;
            }
    }
}

static void region_destroy(const struct space_job *job, struct region *region)
{
    char **copies = region->routes.copies;
    if (!copies)
        return;
    if (registry_remove(region) == 0 && !kind_can(region->kind, KIND_CAP_LOAD_STORE))
        __atomic_sub_fetch(&space_device_regions, 1, __ATOMIC_RELAXED);
    if (region->registered)
        transport_region_deregister(job->transport, region->id);
    /* Every mapping of a host region, this PE's and node peers', goes below. */
    for (int pe = 0; kind_can(region->kind, KIND_CAP_LOAD_STORE) && pe < job->n_pes; pe++)
        if (copies[pe])
            kind_host_unmapping(copies[pe], region->size);
    for (int pe = 0; pe < job->n_pes; pe++)
        if (pe != job->my_pe && copies[pe])
            region->kind->detach(copies[pe], region->size);
    free(copies);
    free(region->routes.on_use);
    region->routes = (struct route_table){0};
}

void space_destroy(const struct space_job *job, struct space *space)
{
    if (static_region.space == space) {
        region_destroy(job, &static_region);
        static_data_destroy(&static_region);
        memset(&static_region, 0, sizeof(static_region));
    }
    region_destroy(job, &space->heap);
    if (space->heap.mem.base)
        space->heap.kind->destroy(&space->heap.mem);
    if (space->allocator)
        heap_destroy(space->allocator);
    free(space->member);
    free(space);
}
