/* Spaces and regions: where every symmetric object lives.
 *
 * A region is one range of symmetric memory: the same size on every member PE, and the same id,
 * which names it to the transport. A space owns a heap region and its allocator; the default
 * space also owns the program's static data. The registry maps an address to its region. */
#ifndef STRATA_SPACE_H
#define STRATA_SPACE_H

#include "heap.h"
#include "kinds/kind.h"

#include <stddef.h>
#include <stdint.h>

struct transport;

enum { REGION_ID_DEFAULT_HEAP = 0, REGION_ID_STATIC_DATA = 1 };

struct region {
    char *base; /* this PE's copy */
    size_t size;
    int id;
    struct space *space;
    /* Per world PE: where that PE's copy is mapped in this process, or NULL when it is reached
     * through the transport. peer_base[my_pe] == base. */
    char **peer_base;
    const struct kind_ops *kind;
    struct kind_mem mem;
    char name[300]; /* the name node peers open */
};

struct space {
    struct region heap;
    struct heap *allocator;
    /* Atomics coherence (one mechanism per space): when any member reaches this space's memory
     * through the transport, every member, including the owner itself, must use transport
     * atomics, because CPU atomics are not atomic with respect to a NIC or a target-side
     * emulation. Decided once at creation. */
    int transport_atomics;
};

/* What a space needs to know about the job. */
struct space_job {
    int my_pe;
    int n_pes;
    const int *local_peers; /* world ranks on this node, ascending */
    int local_size;
    const char *job_id;
    struct transport *transport; /* NULL when every PE is mapped */
    int node_direct;             /* map node peers' memory */
};

/* Creates the default space: a heap of heap_size bytes and the program's static data, both
 * registered with the transport (if any) and in the registry. Peers are not yet mapped. */
int space_default_create(const struct space_job *job, size_t heap_size, struct space **out);
/* After every PE created its space: maps node peers' copies of each region of the space. */
int space_map_peers(const struct space_job *job, struct space *space);
/* After every PE mapped: removes the names, so a crashed job leaves no file behind. */
void space_unlink(struct space *space);
void space_destroy(const struct space_job *job, struct space *space);

/* ---- Registry: address -> region ---- */
int registry_add(struct region *region);
void registry_remove(struct region *region);
struct region *registry_lookup_slow(const void *addr);
extern struct region *registry_cache;

/* The region holding addr, or NULL for memory that is not symmetric. */
static inline struct region *region_lookup(const void *addr)
{
    struct region *cached = __atomic_load_n(&registry_cache, __ATOMIC_RELAXED);
    if (__builtin_expect(cached && (uintptr_t)addr - (uintptr_t)cached->base < cached->size, 1))
        return cached;
    return registry_lookup_slow(addr);
}

/* ---- Static data (data + bss of the program) ---- */
/* Moves the program's writable data onto a shared-memory file at the same addresses, so node
 * peers can map it like a heap. Returns 0 or -1. */
int static_data_create(const struct space_job *job, struct region *region);
void static_data_destroy(struct region *region);

#endif
