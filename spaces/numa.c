/* SPDX-License-Identifier: BSD-3-Clause */
/* The node's memory (numa.h). */
#define _GNU_SOURCE /* strcasestr */
#include "numa.h"

#include "discovery.h"

#include <dirent.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

const char *numa_kind_name(enum numa_kind kind)
{
    static const char *const names[NUMA_KINDS] = {"DRAM", "HBM", "far"};
    return kind < NUMA_KINDS ? names[kind] : "?";
}

/* hwloc names high-bandwidth memory HBM or MCDRAM (Xeon Phi), and memory without CPUs of its own
 * NVM, SPM (specific-purpose memory) or a CXL name; plain nodes have DRAM or no subtype. */
static enum numa_kind numa_kind_of(const char *subtype)
{
    if (!subtype)
        return NUMA_KIND_DRAM;
    if (!strcasecmp(subtype, "HBM") || !strcasecmp(subtype, "MCDRAM"))
        return NUMA_KIND_HBM;
    if (!strcasecmp(subtype, "NVM") || !strcasecmp(subtype, "SPM") || strcasestr(subtype, "CXL"))
        return NUMA_KIND_FAR;
    return NUMA_KIND_DRAM;
}

/* ---- This machine's huge pages (sysfs) ---- */

static uint64_t numa_read_number(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long value = 0;
    if (f) {
        if (fscanf(f, "%llu", &value) != 1)
            value = 0;
        fclose(f);
    }
    return value;
}

uint64_t numa_free_pages_now(const char *sysfs, size_t page)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/kernel/mm/hugepages/hugepages-%zukB/free_hugepages", sysfs,
             page >> 10);
    return numa_read_number(path);
}

static int numa_size_compare(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The kernel's huge page sizes: one directory hugepages-<kB>kB each. */
static void numa_sysfs_page_sizes(const char *sysfs, struct numa_memory *m)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/kernel/mm/hugepages", sysfs);
    DIR *dir = opendir(path);
    for (struct dirent *e; dir && (e = readdir(dir)) && m->n_page_sizes < NUMA_PAGE_SIZES;) {
        unsigned long kb;
        if (sscanf(e->d_name, "hugepages-%lukB", &kb) == 1)
            m->page_sizes[m->n_page_sizes++] = (size_t)kb << 10;
    }
    if (dir)
        closedir(dir);
    qsort(m->page_sizes, (size_t)m->n_page_sizes, sizeof(size_t), numa_size_compare);
}

static void numa_sysfs_free_pages(const char *sysfs, struct numa_memory *m, struct numa_node *node)
{
    for (int i = 0; i < m->n_page_sizes; i++) {
        char path[512];
        snprintf(path, sizeof(path),
                 "%s/devices/system/node/node%d/hugepages/hugepages-%zukB/"
                 "free_hugepages",
                 sysfs, node->os_index, m->page_sizes[i] >> 10);
        node->free_pages[i] = numa_read_number(path);
    }
}

/* Shared memory gets transparent huge pages on madvise where shmem_enabled allows it:
 * "always", "within_size" and "advise" do, "never" and "deny" do not. */
int numa_thp_shared_now(const char *sysfs)
{
    char path[512], text[128] = "";
    snprintf(path, sizeof(path), "%s/kernel/mm/transparent_hugepage/shmem_enabled", sysfs);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    text[n] = 0;
    const char *open = strchr(text, '['), *close = open ? strchr(open, ']') : NULL;
    if (!close)
        return 0;
    static const char *const honoured[] = {"always", "within_size", "advise", "force"};
    for (size_t i = 0; i < sizeof(honoured) / sizeof(*honoured); i++)
        if ((size_t)(close - open - 1) == strlen(honoured[i]) &&
            !strncmp(open + 1, honoured[i], strlen(honoured[i])))
            return 1;
    return 0;
}

/* ---- A saved topology's huge pages (hwloc's page types) ---- */

/* The huge page sizes that any node of a saved topology records. */
static void numa_xml_page_sizes(hwloc_topology_t topo, struct numa_memory *m)
{
    for (hwloc_obj_t obj = NULL; (obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, obj));)
        for (unsigned t = 0; t < obj->attr->numanode.page_types_len; t++) {
            size_t size = obj->attr->numanode.page_types[t].size;
            if (size > m->base_page && numa_page_size_index(m, size) < 0 &&
                m->n_page_sizes < NUMA_PAGE_SIZES)
                m->page_sizes[m->n_page_sizes++] = size;
        }
    qsort(m->page_sizes, (size_t)m->n_page_sizes, sizeof(size_t), numa_size_compare);
}

/* A saved topology records each node's huge pages by size: they stand in for the free ones. */
static void numa_xml_pages(const struct numa_memory *m, hwloc_obj_t obj, struct numa_node *node)
{
    for (unsigned t = 0; t < obj->attr->numanode.page_types_len; t++) {
        int i = numa_page_size_index(m, obj->attr->numanode.page_types[t].size);
        if (i >= 0)
            node->free_pages[i] = obj->attr->numanode.page_types[t].count;
    }
}

/* ---- Measures and locality ---- */

/* A memory attribute of node seen from the PE's CPUs: the value of the initiator that holds
 * them, else of one that shares some of them. 0 where the firmware gave none. */
static uint64_t numa_measure(hwloc_topology_t topo, hwloc_memattr_id_t id, hwloc_obj_t node,
                             hwloc_const_cpuset_t mine)
{
    struct hwloc_location where = {.type = HWLOC_LOCATION_TYPE_CPUSET};
    where.location.cpuset = (hwloc_cpuset_t)mine; /* read only: hwloc's struct is not const */
    hwloc_uint64_t value = 0;
    if (hwloc_memattr_get_value(topo, id, node, &where, 0, &value) == 0)
        return value;
    struct hwloc_location initiators[16];
    hwloc_uint64_t values[16];
    unsigned n = 16;
    if (hwloc_memattr_get_initiators(topo, id, node, 0, &n, initiators, values))
        return 0;
    for (unsigned i = 0; i < n && i < 16; i++)
        if (initiators[i].type == HWLOC_LOCATION_TYPE_CPUSET &&
            hwloc_bitmap_intersects(initiators[i].location.cpuset, mine))
            return values[i];
    return 0;
}

/* The nodes near the PE's CPUs: those whose locality holds them (an unbound PE: every node). */
static void numa_mark_local(hwloc_topology_t topo, hwloc_const_cpuset_t mine, struct numa_memory *m)
{
    int bound = !hwloc_bitmap_isincluded(hwloc_topology_get_complete_cpuset(topo), mine);
    struct hwloc_location where = {.type = HWLOC_LOCATION_TYPE_CPUSET};
    where.location.cpuset = (hwloc_cpuset_t)mine;
    hwloc_obj_t near[NUMA_MAX_NODES];
    unsigned n = NUMA_MAX_NODES;
    unsigned long flags =
        HWLOC_LOCAL_NUMANODE_FLAG_LARGER_LOCALITY | (bound ? 0 : HWLOC_LOCAL_NUMANODE_FLAG_ALL);
    if (hwloc_get_local_numanode_objs(topo, &where, &n, near, flags))
        n = 0;
    for (unsigned i = 0; i < n && i < NUMA_MAX_NODES; i++)
        for (int j = 0; j < m->n_nodes; j++)
            m->nodes[j].local |= m->nodes[j].os_index == (int)near[i]->os_index;
}

/* The PE's CPUs: its binding on this machine; on a saved one, the PU that spreads local ranks
 * evenly over the machine. */
static hwloc_bitmap_t numa_cpus(hwloc_topology_t topo, const struct numa_source *source)
{
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    if (!mine)
        return NULL;
    if (!source->xml) {
        if (hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS))
            hwloc_bitmap_copy(mine, hwloc_topology_get_complete_cpuset(topo));
        return mine;
    }
    int pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    int size = source->local_size > 0 ? source->local_size : 1;
    hwloc_obj_t pu = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PU,
                                           (unsigned)((long)source->local_rank * pus / size));
    hwloc_bitmap_copy(mine, pu ? pu->cpuset : hwloc_topology_get_complete_cpuset(topo));
    return mine;
}

static void numa_add_node(hwloc_topology_t topo, hwloc_obj_t obj, hwloc_const_cpuset_t mine,
                          const struct numa_source *source, struct numa_memory *m)
{
    if (obj->os_index >= NUMA_MAX_NODES || m->n_nodes >= NUMA_MAX_NODES)
        return;
    struct numa_node *node = &m->nodes[m->n_nodes++];
    memset(node, 0, sizeof(*node));
    node->os_index = (int)obj->os_index;
    node->kind = numa_kind_of(obj->subtype);
    snprintf(node->subtype, sizeof(node->subtype), "%s", obj->subtype ? obj->subtype : "");
    node->capacity = obj->attr->numanode.local_memory;
    node->bandwidth = numa_measure(topo, HWLOC_MEMATTR_ID_BANDWIDTH, obj, mine);
    node->latency = numa_measure(topo, HWLOC_MEMATTR_ID_LATENCY, obj, mine);
    if (source->xml)
        numa_xml_pages(m, obj, node);
    else
        numa_sysfs_free_pages(source->sysfs, m, node);
}

int numa_discover(const struct numa_source *source, struct numa_memory *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof(*m));
    m->base_page = (size_t)sysconf(_SC_PAGESIZE);
    m->real = !source->xml;
    hwloc_topology_t topo;
    if (discovery_topology_load(&topo, source->xml, 0)) {
        snprintf(err, errlen, "hwloc cannot load %s", source->xml ? source->xml : "this node");
        return -1;
    }
    if (m->real) {
        numa_sysfs_page_sizes(source->sysfs, m);
        m->thp_shared = numa_thp_shared_now(source->sysfs);
    } else {
        numa_xml_page_sizes(topo, m);
        m->thp_shared = 1;
    }
    hwloc_bitmap_t mine = numa_cpus(topo, source);
    for (hwloc_obj_t obj = NULL;
         mine && (obj = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, obj));)
        numa_add_node(topo, obj, mine, source, m);
    if (mine)
        numa_mark_local(topo, mine, m);
    hwloc_bitmap_free(mine);
    hwloc_topology_destroy(topo);
    if (!m->n_nodes) {
        snprintf(err, errlen, "hwloc found no NUMA node");
        return -1;
    }
    return 0;
}

const struct numa_node *numa_node_of(const struct numa_memory *m, int os_index)
{
    for (int i = 0; i < m->n_nodes; i++)
        if (m->nodes[i].os_index == os_index)
            return &m->nodes[i];
    return NULL;
}

int numa_page_size_index(const struct numa_memory *m, size_t size)
{
    for (int i = 0; i < m->n_page_sizes; i++)
        if (m->page_sizes[i] == size)
            return i;
    return -1;
}

uint64_t numa_free_pages(const struct numa_memory *m, int i, uint64_t nodes)
{
    uint64_t free = 0;
    for (int n = 0; n < m->n_nodes; n++)
        if (!nodes || (nodes >> m->nodes[n].os_index & 1))
            free += m->nodes[n].free_pages[i];
    return free;
}

/* ---- Choosing nodes ---- */

enum numa_measure_kind { NUMA_BANDWIDTH, NUMA_LATENCY, NUMA_CAPACITY };

/* How good node is by measure (larger is better); 0 where unknown. */
static uint64_t numa_score(const struct numa_node *node, enum numa_measure_kind measure)
{
    switch (measure) {
    case NUMA_BANDWIDTH:
        return node->bandwidth;
    case NUMA_LATENCY:
        return node->latency ? UINT64_MAX - node->latency : 0;
    default:
        return node->capacity;
    }
}

/* Without the firmware's figures: high-bandwidth memory is the fastest, DRAM the nearest. */
static int numa_typical_best(const struct numa_node *node, enum numa_measure_kind measure)
{
    return measure == NUMA_BANDWIDTH ? node->kind == NUMA_KIND_HBM : node->kind == NUMA_KIND_DRAM;
}

/* The best of the candidate nodes by measure: every node with the best known value; where no
 * candidate has one, the typical best kind, else all candidates. */
static uint64_t numa_best(const struct numa_memory *m, uint64_t candidates,
                          enum numa_measure_kind measure)
{
    uint64_t best = 0, best_score = 0, typical = 0;
    for (int i = 0; i < m->n_nodes; i++) {
        const struct numa_node *node = &m->nodes[i];
        uint64_t bit = 1ull << node->os_index, score = numa_score(node, measure);
        if (!(candidates & bit))
            continue;
        if (numa_typical_best(node, measure))
            typical |= bit;
        if (score > best_score) {
            best_score = score;
            best = bit;
        } else if (score && score == best_score) {
            best |= bit;
        }
    }
    return best ? best : typical ? typical : candidates;
}

/* The nodes of a kind (-1: any), near the PE only where local_only. */
static uint64_t numa_select(const struct numa_memory *m, int kind, int local_only)
{
    uint64_t set = 0;
    for (int i = 0; i < m->n_nodes; i++)
        if ((kind < 0 || m->nodes[i].kind == (enum numa_kind)kind) &&
            (!local_only || m->nodes[i].local))
            set |= 1ull << m->nodes[i].os_index;
    return set;
}

/* SHMEMX_SPACE_MEMORY_* values (shmemx.h) as this file names them. */
enum {
    NUMA_ASK_DRAM = 1,
    NUMA_ASK_HBM,
    NUMA_ASK_FAR,
    NUMA_ASK_BANDWIDTH,
    NUMA_ASK_LATENCY,
    NUMA_ASK_CAPACITY
};
enum { NUMA_ASK_LOCAL = -1, NUMA_ASK_INTERLEAVE = -2 };

int numa_choose(const struct numa_memory *m, const struct numa_request *request, uint64_t *nodes,
                int *interleave, char *why, size_t whylen)
{
    int memory = request->has_memory ? request->memory : 0;
    int domain = request->has_domain ? request->domain : NUMA_ASK_LOCAL;
    int kind = memory >= NUMA_ASK_DRAM && memory <= NUMA_ASK_FAR ? memory - NUMA_ASK_DRAM : -1;
    *interleave = domain == NUMA_ASK_INTERLEAVE;
    uint64_t set;
    if (domain >= 0)
        set = numa_select(m, kind, 0) & (domain < 64 ? 1ull << domain : 0);
    else if (domain == NUMA_ASK_INTERLEAVE)
        set = numa_select(m, kind, 0);
    else if (!request->has_memory) /* near the CPUs: their own DRAM, as the kernel's local */
        set = numa_select(m, NUMA_KIND_DRAM, 1) ?: numa_select(m, -1, 1);
    else if (request->has_domain || memory >= NUMA_ASK_BANDWIDTH)
        set = numa_select(m, kind, 1);
    else /* a kind of memory, however far: the nearest of it */
        set = numa_select(m, kind, 1) ?: numa_select(m, kind, 0);
    if (set && memory >= NUMA_ASK_BANDWIDTH && domain != NUMA_ASK_INTERLEAVE)
        set = numa_best(m, set, (enum numa_measure_kind)(memory - NUMA_ASK_BANDWIDTH));
    *nodes = set;
    if (set)
        return 0;
    snprintf(why, whylen, "no NUMA node%s holds %s memory%s", domain >= 0 ? " of that index" : "",
             kind >= 0 ? numa_kind_name((enum numa_kind)kind) : "such",
             domain == NUMA_ASK_LOCAL && request->has_domain ? " near this PE's CPUs" : "");
    return -1;
}

/* ---- oshinfo ---- */

/* The measures this node wins among all nodes, seen from this PE's CPUs: only by the figures
 * known, not by the guess numa_best falls back on. */
static void numa_print_wins(const struct numa_memory *m, const struct numa_node *node, FILE *out)
{
    static const char *const names[] = {"highest bandwidth", "lowest latency", "largest capacity"};
    uint64_t all = numa_select(m, -1, 0), bit = 1ull << node->os_index;
    const char *sep = "; best for: ";
    for (int measure = NUMA_BANDWIDTH; measure <= NUMA_CAPACITY; measure++) {
        uint64_t best = numa_best(m, all, (enum numa_measure_kind)measure);
        if ((best & bit) && best != all && numa_score(node, (enum numa_measure_kind)measure)) {
            fprintf(out, "%s%s", sep, names[measure]);
            sep = ", ";
        }
    }
}

void numa_print(const struct numa_memory *m, FILE *out)
{
    for (int i = 0; i < m->n_nodes; i++) {
        const struct numa_node *node = &m->nodes[i];
        fprintf(out, "  numa %d: %s%s%s%s, %.1f GiB%s", node->os_index, numa_kind_name(node->kind),
                *node->subtype ? " (" : "", node->subtype, *node->subtype ? ")" : "",
                (double)node->capacity / (1 << 30), node->local ? ", near this PE" : "");
        if (node->bandwidth)
            fprintf(out, ", %llu MiB/s", (unsigned long long)node->bandwidth);
        if (node->latency)
            fprintf(out, ", %llu ns", (unsigned long long)node->latency);
        for (int p = 0; p < m->n_page_sizes; p++)
            fprintf(out, ", %llu free %zu KiB pages", (unsigned long long)node->free_pages[p],
                    m->page_sizes[p] >> 10);
        numa_print_wins(m, node, out);
        fprintf(out, "\n");
    }
    fprintf(out, "  transparent huge pages for shared memory: %s\n",
            m->thp_shared ? "on madvise" : "off (shmem_enabled)");
}
