/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory traits (space_traits.h): checking them, resolving them into a placement on this PE, and
 * the routines of shmemx.h that report and use them. */
#include "space_traits.h"

#include "../spaces/numa.h"
#include "team.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct numa_memory *space_memory;

const struct numa_memory *space_traits_memory(char *err, size_t errlen)
{
    if (space_memory)
        return space_memory;
    struct numa_memory *m = malloc(sizeof(*m));
    struct numa_source source = {*rt.knobs.TEST_TOPOLOGY ? rt.knobs.TEST_TOPOLOGY : NULL, "/sys",
                                 rt.devices.job.local_rank, rt.devices.job.local_size};
    if (!m || numa_discover(&source, m, err, errlen)) {
        if (!m)
            snprintf(err, errlen, "out of memory");
        free(m);
        return NULL;
    }
    space_memory = m;
    return m;
}

/* ---- The default heap's traits (SHMEM_SYMMETRIC_HEAP_*) ---- */

/* SHMEM_SYMMETRIC_HEAP_PAGE_SIZE (checked by the knob's parser) as a page_size trait. */
static size_t space_traits_page_of_knob(const char *page)
{
    size_t size = SHMEMX_SPACE_PAGE_TRANSPARENT;
    if (strcmp(page, "transparent"))
        knobs_parse_size(page, &size);
    return size;
}

void space_traits_of_knobs(const struct knobs *knobs, shmemx_space_traits_t *traits)
{
    static const char *const memories[] = {"dram",      "hbm",     "far",
                                           "bandwidth", "latency", "capacity"};
    memset(traits, 0, sizeof(*traits));
    traits->mask = SHMEMX_SPACE_TRAIT_ALLOC_POLICY;
    traits->alloc_policy = strcmp(knobs->SYMMETRIC_HEAP_POLICY, "preferred")
                               ? SHMEMX_SPACE_POLICY_BIND
                               : SHMEMX_SPACE_POLICY_PREFERRED;
    if (knobs->SYMMETRIC_HEAP_USE_HUGE_PAGES == 1) {
        traits->mask |= SHMEMX_SPACE_TRAIT_PAGE_SIZE;
        traits->page_size = space_traits_page_of_knob(knobs->SYMMETRIC_HEAP_PAGE_SIZE);
    }
    const char *numa = knobs->SYMMETRIC_HEAP_NUMA;
    if (*numa) {
        traits->mask |= SHMEMX_SPACE_TRAIT_NUMA_DOMAIN;
        traits->numa_domain = !strcmp(numa, "local")        ? SHMEMX_SPACE_NUMA_LOCAL
                              : !strcmp(numa, "interleave") ? SHMEMX_SPACE_NUMA_INTERLEAVE
                                                            : atoi(numa);
    }
    for (int i = 0; i < (int)(sizeof(memories) / sizeof(*memories)); i++)
        if (!strcmp(knobs->SYMMETRIC_HEAP_MEMORY, memories[i])) {
            traits->mask |= SHMEMX_SPACE_TRAIT_MEMORY;
            traits->memory = SHMEMX_SPACE_MEMORY_DRAM + i;
        }
}

/* ---- Checks: what is invalid is invalid on every PE ---- */

#define TRAITS_HOST_ONLY                                                                           \
    (SHMEMX_SPACE_TRAIT_PAGE_SIZE | SHMEMX_SPACE_TRAIT_NUMA_DOMAIN | SHMEMX_SPACE_TRAIT_MEMORY)

static int traits_has(const shmemx_space_traits_t *traits, uint64_t bit)
{
    return traits && (traits->mask & bit);
}

static int traits_page_size_valid(size_t size)
{
    return size == SHMEMX_SPACE_PAGE_TRANSPARENT ||
           (size >= (size_t)sysconf(_SC_PAGESIZE) && !(size & (size - 1)));
}

/* A NUMA domain names a node of this machine, or one of the two special values. */
static int traits_check_domain(const char *routine, int domain)
{
    if (domain == SHMEMX_SPACE_NUMA_LOCAL || domain == SHMEMX_SPACE_NUMA_INTERLEAVE)
        return 0;
    char err[160];
    const struct numa_memory *m = domain >= 0 ? space_traits_memory(err, sizeof(err)) : NULL;
    if (m && numa_node_of(m, domain))
        return 0;
    if (domain >= 0 && !m)
        log_error(routine, "cannot read this node's memory: %s", err);
    else
        log_error(routine, "numa_domain %d is no NUMA node of this machine", domain);
    return -1;
}

enum space_verdict space_traits_check(const char *routine, const shmem_space_config_t *config,
                                      const shmemx_space_traits_t *traits)
{
    if (!traits || !config)
        return SPACE_REACHABLE;
    const shmemx_space_traits_t *t = traits;
    int bad = 0;
    if (t->mask & ~(uint64_t)SHMEMX_SPACE_TRAIT_ALL) {
        log_error(routine, "unknown trait bits 0x%llx in the mask",
                  (unsigned long long)(t->mask & ~(uint64_t)SHMEMX_SPACE_TRAIT_ALL));
        bad = 1;
    }
    if ((t->mask & TRAITS_HOST_ONLY) && config->device_type != SHMEM_DEVICE_CPU) {
        log_error(routine,
                  "page_size, numa_domain and memory apply to CPU spaces only, not to "
                  "device type %d",
                  (int)config->device_type);
        bad = 1;
    }
    if (traits_has(t, SHMEMX_SPACE_TRAIT_PAGE_SIZE) && !traits_page_size_valid(t->page_size)) {
        log_error(routine, "page_size %zu is not a power of two of at least %ld bytes",
                  t->page_size, sysconf(_SC_PAGESIZE));
        bad = 1;
    }
    if (traits_has(t, SHMEMX_SPACE_TRAIT_ALLOC_POLICY) &&
        t->alloc_policy != SHMEMX_SPACE_POLICY_BIND &&
        t->alloc_policy != SHMEMX_SPACE_POLICY_PREFERRED) {
        log_error(routine, "alloc_policy %d is neither BIND (%d) nor PREFERRED (%d)",
                  t->alloc_policy, SHMEMX_SPACE_POLICY_BIND, SHMEMX_SPACE_POLICY_PREFERRED);
        bad = 1;
    }
    if (traits_has(t, SHMEMX_SPACE_TRAIT_MEMORY) &&
        (t->memory < SHMEMX_SPACE_MEMORY_DRAM ||
         t->memory > SHMEMX_SPACE_MEMORY_HIGHEST_CAPACITY)) {
        log_error(routine, "memory %d is no SHMEMX_SPACE_MEMORY_ value", t->memory);
        bad = 1;
    }
    if (traits_has(t, SHMEMX_SPACE_TRAIT_MEMORY) &&
        t->memory >= SHMEMX_SPACE_MEMORY_HIGHEST_BANDWIDTH &&
        traits_has(t, SHMEMX_SPACE_TRAIT_NUMA_DOMAIN) && t->numa_domain >= 0) {
        log_error(routine, "memory %d chooses the NUMA node by a measure: numa_domain %d names one",
                  t->memory, t->numa_domain);
        bad = 1;
    }
    if (traits_has(t, SHMEMX_SPACE_TRAIT_NUMA_DOMAIN) && !bad &&
        traits_check_domain(routine, t->numa_domain))
        bad = 1;
    if (traits_has(t, SHMEMX_SPACE_TRAIT_DEVICE_INDEX) && t->device_index < 0) {
        log_error(routine, "device_index %d is negative", t->device_index);
        bad = 1;
    }
    return bad ? SPACE_BAD_CONFIG : SPACE_REACHABLE;
}

int space_traits_device_index(const shmemx_space_traits_t *traits)
{
    return traits_has(traits, SHMEMX_SPACE_TRAIT_DEVICE_INDEX) ? traits->device_index : 0;
}

int space_traits_preferred(const shmemx_space_traits_t *traits)
{
    return traits_has(traits, SHMEMX_SPACE_TRAIT_ALLOC_POLICY) &&
           traits->alloc_policy == SHMEMX_SPACE_POLICY_PREFERRED;
}

/* ---- Resolution: what this PE can hold ---- */

static enum placement_policy traits_policy(int alloc_policy, int interleave)
{
    if (interleave)
        return PLACEMENT_INTERLEAVE;
    return alloc_policy == SHMEMX_SPACE_POLICY_PREFERRED ? PLACEMENT_PREFERRED : PLACEMENT_BIND;
}

/* The NUMA part: the nodes the traits name, or a fall-back to anywhere. */
static int traits_resolve_nodes(const shmemx_space_traits_t *t, const struct numa_memory *m,
                                struct space_traits *out, char *why, size_t whylen)
{
    struct numa_request request = {traits_has(t, SHMEMX_SPACE_TRAIT_MEMORY), t->memory,
                                   traits_has(t, SHMEMX_SPACE_TRAIT_NUMA_DOMAIN), t->numa_domain};
    if (!request.has_memory && !request.has_domain)
        return 0;
    int interleave;
    if (numa_choose(m, &request, &out->placement.nodes, &interleave, why, whylen))
        return out->alloc_policy == SHMEMX_SPACE_POLICY_PREFERRED ? 0 : -1;
    out->placement.policy = traits_policy(out->alloc_policy, interleave);
    return 0;
}

/* How to reserve more huge pages of page bytes. */
static void traits_reserve_hint(size_t page, char *text, size_t len)
{
    snprintf(text, len,
             "reserve more with: echo N > /sys/kernel/mm/hugepages/hugepages-%zukB/"
             "nr_hugepages",
             page >> 10);
}

/* The page part: huge pages while the kernel has that size and enough free for every PE of
 * this node (each asks for as many); transparent ones where shared memory may have them. */
static int traits_resolve_pages(const shmemx_space_traits_t *t, const struct numa_memory *m,
                                int count_free, struct space_traits *out, char *why, size_t whylen)
{
    size_t page = traits_has(t, SHMEMX_SPACE_TRAIT_PAGE_SIZE) ? t->page_size : 0;
    int preferred = out->alloc_policy == SHMEMX_SPACE_POLICY_PREFERRED;
    if (!page || page == m->base_page)
        return 0;
    if (page == SHMEMX_SPACE_PAGE_TRANSPARENT) {
        if (m->thp_shared) {
            out->placement.page_size = PLACEMENT_PAGE_TRANSPARENT;
            return 0;
        }
        snprintf(why, whylen,
                 "the kernel gives shared memory no transparent huge pages "
                 "(/sys/kernel/mm/transparent_hugepage/shmem_enabled)");
        return preferred ? 0 : -1;
    }
    out->size = (out->size + page - 1) & ~(page - 1); /* the same on every PE */
    int i = numa_page_size_index(m, page);
    if (i < 0) {
        snprintf(why, whylen, "page_size %zu: the kernel has no %zu KiB huge pages", page,
                 page >> 10);
        return preferred ? 0 : -1;
    }
    /* Counted only where every PE counts before any takes pages (a space's creation). */
    uint64_t per_pe = out->size / page, needed = per_pe * (uint64_t)rt.job.local_size;
    uint64_t bound = out->placement.policy == PLACEMENT_BIND ? out->placement.nodes : 0;
    uint64_t free = numa_free_pages(m, i, bound);
    if (count_free && free < needed) {
        char hint[128];
        traits_reserve_hint(page, hint, sizeof(hint));
        snprintf(why, whylen,
                 "page_size %zu: %llu free %zu KiB pages%s, %llu needed (%llu for each of %d "
                 "PEs here); %s",
                 page, (unsigned long long)free, page >> 10, bound ? " on the nodes asked for" : "",
                 (unsigned long long)needed, (unsigned long long)per_pe, rt.job.local_size, hint);
        return preferred ? 0 : -1;
    }
    out->placement.page_size = page;
    out->placement.fall_back = preferred;
    return 0;
}

enum space_verdict space_traits_resolve(const shmem_space_config_t *config,
                                        const shmemx_space_traits_t *traits,
                                        const struct kind_ops *kind, int count_free,
                                        struct space_traits *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof(*out));
    out->size = config->size;
    out->alloc_policy = traits_has(traits, SHMEMX_SPACE_TRAIT_ALLOC_POLICY)
                            ? traits->alloc_policy
                            : SHMEMX_SPACE_POLICY_BIND;
    if (!traits || !(traits->mask & TRAITS_HOST_ONLY) || !kind_can(kind, KIND_CAP_LOAD_STORE))
        return SPACE_REACHABLE;
    char err[160];
    const struct numa_memory *m = space_traits_memory(err, sizeof(err));
    if (!m) {
        snprintf(why, whylen, "cannot read this node's memory: %s", err);
        return SPACE_NO_DEVICE;
    }
    out->placement.simulated = !m->real;
    if (traits_resolve_nodes(traits, m, out, why, whylen) ||
        traits_resolve_pages(traits, m, count_free, out, why, whylen))
        return SPACE_NO_DEVICE;
    return SPACE_REACHABLE;
}

void space_traits_try_huge(const char *page_knob, struct space_traits *out)
{
    size_t page = space_traits_page_of_knob(page_knob);
    if (out->placement.simulated || out->placement.page_size ||
        page == (size_t)sysconf(_SC_PAGESIZE))
        return;
    if (page != SHMEMX_SPACE_PAGE_TRANSPARENT && out->size % page == 0 &&
        numa_free_pages_now("/sys", page) >= out->size / page)
        out->placement.page_size = page;
    else if (numa_thp_shared_now("/sys"))
        out->placement.page_size = PLACEMENT_PAGE_TRANSPARENT;
    else
        return;
    out->placement.fall_back = 1;
}

void space_traits_huge_advice(size_t page, char *text, size_t len)
{
    char hint[128];
    traits_reserve_hint(page, hint, sizeof(hint));
    snprintf(text, len, "%llu free %zu KiB pages on this node now; %s",
             (unsigned long long)numa_free_pages_now("/sys", page), page >> 10, hint);
}

/* ---- What a space got ---- */

/* The NUMA domain the observed placement amounts to: its one node, INTERLEAVE over several,
 * and where the kernel places by first touch, the node itself on a machine of one node, else
 * LOCAL. */
static int traits_domain_of(const struct placement *got, const struct numa_memory *m)
{
    if (got->policy == PLACEMENT_INTERLEAVE && (got->nodes & (got->nodes - 1)))
        return SHMEMX_SPACE_NUMA_INTERLEAVE;
    if (got->policy != PLACEMENT_ANY && got->nodes && !(got->nodes & (got->nodes - 1)))
        return __builtin_ctzll(got->nodes);
    if (m && m->n_nodes == 1)
        return m->nodes[0].os_index;
    return SHMEMX_SPACE_NUMA_LOCAL;
}

/* The kind of memory holding it: its (first) node's, else the nearest node's. */
static int traits_memory_of(const struct placement *got, const struct numa_memory *m)
{
    static const int as_trait[NUMA_KINDS] = {SHMEMX_SPACE_MEMORY_DRAM, SHMEMX_SPACE_MEMORY_HBM,
                                             SHMEMX_SPACE_MEMORY_FAR};
    for (int i = 0; i < m->n_nodes; i++)
        if (got->policy != PLACEMENT_ANY && (got->nodes >> m->nodes[i].os_index & 1))
            return as_trait[m->nodes[i].kind];
    for (int i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].local && m->nodes[i].kind == NUMA_KIND_DRAM)
            return SHMEMX_SPACE_MEMORY_DRAM;
    return as_trait[m->nodes[0].kind];
}

int shmemx_space_get_traits(shmem_space_t handle, shmemx_space_traits_t *traits)
{
    runtime_require_init("shmemx_space_get_traits");
    if (!traits) {
        if (rt.debug)
            log_error("shmemx_space_get_traits", "traits is a null pointer (PE %d)", rt.my_pe);
        return -1;
    }
    struct space *space = space_of_handle("shmemx_space_get_traits", handle);
    if (!space)
        return -1;
    uint64_t want = traits->mask & SHMEMX_SPACE_TRAIT_ALL, filled = 0;
    char err[160];
    const struct numa_memory *m = kind_can(space->heap.kind, KIND_CAP_LOAD_STORE)
                                      ? space_traits_memory(err, sizeof(err))
                                      : NULL;
    struct placement got = {0};
    if (m)
        placement_observe(space->heap.base, &space->placement, &got);
    if (m && (want & SHMEMX_SPACE_TRAIT_PAGE_SIZE)) {
        traits->page_size = got.page_size ? got.page_size : m->base_page;
        filled |= SHMEMX_SPACE_TRAIT_PAGE_SIZE;
    }
    if (want & SHMEMX_SPACE_TRAIT_ALLOC_POLICY) {
        traits->alloc_policy = space->alloc_policy ? space->alloc_policy : SHMEMX_SPACE_POLICY_BIND;
        filled |= SHMEMX_SPACE_TRAIT_ALLOC_POLICY;
    }
    if (m && (want & SHMEMX_SPACE_TRAIT_NUMA_DOMAIN)) {
        traits->numa_domain = traits_domain_of(&got, m);
        filled |= SHMEMX_SPACE_TRAIT_NUMA_DOMAIN;
    }
    if (m && (want & SHMEMX_SPACE_TRAIT_MEMORY)) {
        traits->memory = traits_memory_of(&got, m);
        filled |= SHMEMX_SPACE_TRAIT_MEMORY;
    }
    if (want & SHMEMX_SPACE_TRAIT_DEVICE_INDEX) {
        traits->device_index = space->device_index;
        filled |= SHMEMX_SPACE_TRAIT_DEVICE_INDEX;
    }
    traits->mask = filled;
    return 0;
}
