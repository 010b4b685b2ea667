/* Space life cycle: create this PE's memory, register it, map node peers, unlink, destroy. */
#include "space.h"

#include "../common/log.h"
#include "../transports/transport.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

/* Every block of a heap starts on a cache line, so that neighbouring allocations never share a
 * line between PEs writing them. */
#define SPACE_MIN_ALIGN 64

static void region_name(const struct space_job *job, const char *token, char *name, size_t len)
{
    snprintf(name, len, "/%s.%s", job->job_id, token);
}

int space_region_token_new(char *token)
{
    unsigned char random[SPACE_TOKEN_LEN / 2];
    if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random)) {
        log_error("spaces", "no random bytes for a region's name: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof(random); i++)
        snprintf(token + 2 * i, 3, "%02x", random[i]);
    return 0;
}

int space_region_name_new(const struct space_job *job, struct region *region)
{
    if (space_region_token_new(region->token))
        return -1;
    region_name(job, region->token, region->name, sizeof(region->name));
    return 0;
}

static int region_init_peers(const struct space_job *job, struct region *region)
{
    region->peer_base = calloc((size_t)job->n_pes, sizeof(char *));
    if (!region->peer_base)
        return -1;
    /* Device memory is not this process's to load or store either. */
    if (kind_direct(region->kind))
        region->peer_base[job->my_pe] = region->base;
    region->key_len = sizeof(region->key);
    if (job->transport && region->size && kind_direct(region->kind) &&
        transport_region_register(job->transport, region->id, region->generation, region->base,
                                  region->size, job->keys_in_records ? region->key : NULL,
                                  &region->key_len))
        return -1;
    if (!job->keys_in_records || !job->transport || !kind_direct(region->kind))
        region->key_len = 0;
    return registry_add(region);
}

static int space_heap_create(const struct space_job *job, const struct space_params *params,
                             struct space *space)
{
    struct region *heap = &space->heap;
    heap->id = params->id;
    heap->generation = params->generation;
    heap->space = space;
    heap->kind = params->kind;
    if (space_region_name_new(job, heap) ||
        heap->kind->create(heap->name, params->size, &heap->mem))
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
    space->transport_atomics = job->transport != NULL || !kind_direct(params->kind);
    if (space_heap_create(job, params, space) || region_init_peers(job, &space->heap))
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
    struct space_params params = {&kind_host, heap_size, heap_id, 0, all, 0};
    int rc = space_create(job, &params, out);
    free(all);
    if (rc)
        return -1;
    static_region.id = REGION_ID_STATIC_DATA;
    static_region.space = *out;
    static_region.kind = &kind_host;
    if (static_data_create(job, &static_region) || region_init_peers(job, &static_region)) {
        space_destroy(job, *out);
        return -1;
    }
    return 0;
}

/* Maps every node peer's copy of region that the kind lets peers map, unless the job reaches
 * peers through the transport. */
static int region_map_peers(const struct space_job *job, const struct space *space,
                            struct region *region, space_token_fn token_of, void *arg)
{
    if (!job->node_direct || !region->size || !region->kind->map_peer)
        return 0;
    for (int i = 0; i < job->local_size; i++) {
        int pe = job->local_peers[i];
        if (pe == job->my_pe || !space->member[pe])
            continue;
        char token[SPACE_TOKEN_LEN + 1], name[sizeof(region->name)];
        if (token_of(arg, pe, region->id, token)) {
            log_error("spaces", "no name of region %d from PE %d", region->id, pe);
            return -1;
        }
        region_name(job, token, name, sizeof(name));
        region->peer_base[pe] = region->kind->map_peer(name, region->size);
        if (!region->peer_base[pe]) {
            log_error("spaces", "cannot map region %d of PE %d (%s)", region->id, pe, name);
            return -1;
        }
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

int space_map_peers(const struct space_job *job, struct space *space, space_token_fn token_of,
                    void *arg)
{
    struct region *regions[2];
    int n = space_regions(space, regions);
    for (int i = 0; i < n; i++)
        if (region_map_peers(job, space, regions[i], token_of, arg))
            return -1;
    return 0;
}

void space_unlink(struct space *space)
{
    space->heap.kind->unlink(space->heap.name, &space->heap.mem);
    if (static_region.space == space && static_region.size)
        static_region.kind->unlink(static_region.name, &static_region.mem);
}

static void region_destroy(const struct space_job *job, struct region *region)
{
    if (!region->peer_base)
        return;
    registry_remove(region);
    if (job->transport && kind_direct(region->kind))
        transport_region_deregister(job->transport, region->id);
    for (int pe = 0; pe < job->n_pes; pe++)
        if (pe != job->my_pe && region->peer_base[pe])
            region->kind->unmap_peer(region->peer_base[pe], region->size);
    free(region->peer_base);
    region->peer_base = NULL;
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
