/* SPDX-License-Identifier: BSD-3-Clause */
/* Spaces and regions: where every symmetric object lives.
 *
 * A region is one range of symmetric memory: the same size on every member PE, and the same id,
 * which names it to the transport. A space owns a heap region and its allocator; the default
 * space's library companion also owns the program's static data. Each region carries a route to
 * every member (route_table.h). The registry maps an address to its region. */
#ifndef STRATA_SPACE_H
#define STRATA_SPACE_H

#include "../transports/transport.h"
#include "heap.h"
#include "kinds/kind.h"
#include "placement.h"
#include "route_table.h"

#include <stddef.h>
#include <stdint.h>

struct transport;

enum { REGION_ID_DEFAULT_HEAP = 0, REGION_ID_STATIC_DATA = 1, REGION_ID_LIBRARY = 2 };

/* Writes member pe's attach handle of region id (at most *len bytes; *len: its length); 0 or -1. */
typedef int (*space_handle_fn)(void *arg, int pe, int id, void *handle, size_t *len);

struct region {
    char *base; /* this PE's copy */
    size_t size;
    int id;
    unsigned generation;
    struct space *space;
    const struct kind_ops *kind;
    struct kind_mem mem;
    struct route_table routes; /* computed once the members are known (space_attach_peers) */
    /* Where node peers' handles come from, for copies attached on first use. */
    space_handle_fn handle_of;
    void *handle_arg;
    /* How node peers attach it (the kind's export), and its transport key once it was
     * registered after start-up (len 0 otherwise): both go into the space's record, where peers
     * read them. */
    size_t handle_len;
    char handle[KIND_HANDLE_MAX];
    struct transport_key key;
    int registered; /* with the transport */
};

/* How many regions of this PE are memory the CPU may not load or store (device memory): while
 * there are none, no local buffer needs a second look. */
extern int space_device_regions;

/* The route to pe's copy of region. */
static inline struct route region_route(const struct region *region, int pe)
{
    return route_of(&region->routes, pe);
}

struct space {
    struct region heap;
    struct heap *allocator;
    int device_type;          /* the shmem_device_type_t it was created for */
    uint64_t caps;            /* SHMEM_SPACE_CAP_* bits that hold for it */
    unsigned char *member;    /* per world PE: nonzero for the members of its team */
    struct strata_team *team; /* the space-associated team, the user's to destroy */
    /* The library's own team over the same members: allocation and destruction synchronize on
     * it, since the user destroys the space team before the space. */
    struct strata_team *members_team;
    int live_teams;             /* teams of this space alive on this PE, its own team included */
    struct placement placement; /* where its host memory was asked to be (memory traits) */
    int alloc_policy;           /* SHMEMX_SPACE_POLICY_* its traits named */
    int device_index;           /* which of this PE's devices of the type holds it */
};

/* What a space needs to know about the job. */
struct space_job {
    int my_pe;
    int n_pes;
    const int *local_peers; /* world ranks on this node, ascending */
    int local_size;
    const char *job_id;
    struct transport *transport; /* NULL while every PE is mapped */
    int node_direct;             /* attach node peers' memory */
    /* After start-up: a new region keeps its transport key for the space's record instead of
     * publishing it to the process manager. */
    int keys_in_records;
};

/* A space as every member creates it: the same on every member. */
struct space_params {
    const struct kind_ops *kind;
    size_t size;
    int id;                      /* region id of its heap, agreed by all PEs */
    unsigned generation;         /* distinguishes reuses of an id in the transport's keys */
    const unsigned char *member; /* per world PE */
    int device_type;
    const struct placement *placement; /* host memory: where it goes (NULL: anywhere) */
};

/* Creates this PE's part of a space: its memory, allocator, transport registration and registry
 * entry. Peers are not yet mapped. Returns 0 or -1. */
int space_create(const struct space_job *job, const struct space_params *params,
                 struct space **out);
/* The default space, or the host space beside a device default space: a host heap of
 * heap_size bytes (region heap_id) and the program's static data. */
int space_default_create(const struct space_job *job, size_t heap_size, int heap_id,
                         struct space **out);
/* Registers the heap of a space made before the job's transport started, publishing its key
 * through the exchange as at start-up. Returns 0 or -1. */
int space_register_late(const struct space_job *job, struct space *space);
/* After every member created its part: attaches node peers' copies of each region of the space
 * where the kind and the job allow it, with the handles handle_of gives (now, or on first use
 * where the kind allows it, handle_of then called when that comes), and computes every region's
 * routes. Returns 0, or -1 (errno ESRCH where a node peer's process has ended). */
int space_attach_peers(const struct space_job *job, struct space *space, space_handle_fn handle_of,
                       void *arg);
/* The regions of a space: its heap, and the static data of the space that holds it. Returns how
 * many (at most 2). */
int space_regions(struct space *space, struct region **regions);
/* Detaches the node peers' copies of a space of device memory (the kind's IPC mappings), so that
 * each owner may free its part once every member has done so: an importer must let go of a
 * peer's memory first. Host memory stays mapped until space_destroy. */
void space_detach_devices(const struct space_job *job, struct space *space);
void space_destroy(const struct space_job *job, struct space *space);

/* The largest alignment an allocation in the space can be promised: the same on every member. */
static inline size_t space_align_limit(const struct space *space)
{
    return space->heap.mem.align;
}

/* The region with this id on this PE, or NULL. */
struct region *registry_find_id(int id);

/* ---- Registry: address -> region (registry.c) ---- */
int registry_add(struct region *region);
/* Returns 0, or -1 when the region was not registered. */
int registry_remove(struct region *region);
struct region *registry_lookup_slow(const void *addr);
/* Even while the registry is stable; every change moves it on by two. */
extern unsigned long registry_version;
/* Where addr lies in no region: between the end of one region and the start of the next. */
struct registry_gap {
    uintptr_t lo, size;
};
/* This thread's last two hits (most recent first: a program that alternates between its heap
 * and its globals keeps both) and its last gap between regions, all valid while registry_version
 * has not moved from version. One thread-local block, so that a put's lookup of its target and
 * the check of its local buffer share one address and one comparison of the version. */
struct registry_cache {
    struct registry_hit {
        uintptr_t base;
        size_t size;
        struct region *region;
    } hit[2];
    struct registry_gap gap;
    unsigned long version;
};
extern __thread struct registry_cache registry_cached __attribute__((tls_model("initial-exec")));

/* The region holding addr, or NULL for memory that is not symmetric. On the path of every
 * operation: inlined even where the compiler would rather call it, since a call is a visible
 * share of the cheapest operations (a fetch-add between node peers). */
__attribute__((always_inline)) static inline struct region *region_lookup(const void *addr)
{
    const struct registry_cache *cached = &registry_cached;
    uintptr_t a = (uintptr_t)addr;
    if (__builtin_expect(cached->version == __atomic_load_n(&registry_version, __ATOMIC_ACQUIRE),
                         1)) {
        if (__builtin_expect(a - cached->hit[0].base < cached->hit[0].size, 1))
            return cached->hit[0].region;
        if (a - cached->hit[1].base < cached->hit[1].size)
            return cached->hit[1].region;
    }
    return registry_lookup_slow(addr);
}

/* Whether addr lies in no region, asked of private buffers on every put and get while device
 * memory exists here: this thread's last gap between regions answers without a search. */
int registry_in_gap_slow(const void *addr);

/* 1 when this thread's last gap holds addr, 0 when it does not or the registry moved since;
 * right after a region_lookup by this thread (which leaves the cache of the version it saw)
 * registry_in_cached_gap_range asks the range alone. Both call nothing, so a fast path may
 * inline them without keeping registers across a call. */
__attribute__((always_inline)) static inline int registry_in_cached_gap_range(const void *addr)
{
    const struct registry_cache *cached = &registry_cached;
    return (uintptr_t)addr - cached->gap.lo < cached->gap.size;
}

__attribute__((always_inline)) static inline int registry_in_cached_gap(const void *addr)
{
    return registry_in_cached_gap_range(addr) &&
           registry_cached.version == __atomic_load_n(&registry_version, __ATOMIC_ACQUIRE);
}

__attribute__((always_inline)) static inline int registry_in_gap(const void *addr)
{
    if (__builtin_expect(registry_in_cached_gap(addr), 1))
        return 1;
    return registry_in_gap_slow(addr);
}

/* The region whose copy of some PE (*pe) is mapped at addr in this process, this PE's own
 * included; NULL for memory that is no region's. Takes no lock: meant for a fault handler. */
struct region *registry_lookup_mapped(const void *addr, int n_pes, int *pe);

/* ---- Static data (data + bss of the program) ---- */
/* Moves the program's writable data onto a shared-memory file at the same addresses, so node
 * peers can attach it like a host heap (its name starts with prefix). Returns 0 or -1. */
int static_data_create(const char *prefix, struct region *region);
void static_data_destroy(struct region *region);

#endif
