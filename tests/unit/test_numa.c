/* SPDX-License-Identifier: BSD-3-Clause */
/* The node's memory and the nodes a space's traits choose, on saved machines (hwloc's exports of
 * real ones, and the suite's two-socket HBM machine) with a PE placed on each of their CPU groups,
 * and this machine's huge pages read from a sysfs tree the test writes.
 * Usage: test_numa TOPOLOGY_DIR OWN_TOPOLOGY_XML SCRATCH_DIR (TOPOLOGY_DIR "": none here) */
#include "../../spaces/numa.h"
#include "unit.h"

#include <shmemx.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *dir;

static int load(const char *name, int rank, int size, struct numa_memory *m)
{
    char path[1024], err[200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct numa_source source = {path, "/sys", rank, size};
    int rc = numa_discover(&source, m, err, sizeof(err));
    UNIT_CHECK(rc == 0, "%s: %s", name, err);
    return rc;
}

/* The nodes chosen for memory (0: unset) and domain (NUMA_UNSET: unset); 0 when none is. */
#define NUMA_UNSET 100
static uint64_t choose(const struct numa_memory *m, int memory, int domain, int *interleave)
{
    struct numa_request request = {memory != 0, memory, domain != NUMA_UNSET, domain};
    uint64_t nodes = 0;
    int spread = 0;
    char why[200];
    if (numa_choose(m, &request, &nodes, &spread, why, sizeof(why)))
        return 0;
    if (interleave)
        *interleave = spread;
    return nodes;
}

#define BIT(n) (1ull << (n))

/* Four clusters, each a DRAM node and an HBM node (hwloc subtypes), bandwidths for each cluster's
 * own CPUs: the cluster of rank r holds DRAM node r and HBM node {7,4,5,6}[r]. */
static void check_heteromem(const char *file, const char *hbm_subtype)
{
    static const int hbm_of[4] = {7, 4, 5, 6};
    for (int rank = 0; rank < 4; rank++) {
        struct numa_memory m;
        if (load(file, rank, 4, &m))
            return;
        int dram = rank, hbm = hbm_of[rank], spread = 0;
        UNIT_CHECK(m.n_nodes == 8, "%s: %d nodes", file, m.n_nodes);
        const struct numa_node *h = numa_node_of(&m, hbm), *d = numa_node_of(&m, dram);
        UNIT_CHECK(h && h->kind == NUMA_KIND_HBM && !strcmp(h->subtype, hbm_subtype) && h->local,
                   "%s rank %d: node %d is near HBM", file, rank, hbm);
        UNIT_CHECK(d && d->kind == NUMA_KIND_DRAM && d->local, "%s: node %d near DRAM", file, dram);
        UNIT_CHECK(!numa_node_of(&m, hbm_of[(rank + 1) % 4])->local, "another cluster's HBM");
        UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_HBM, SHMEMX_SPACE_NUMA_LOCAL, NULL) == BIT(hbm),
                   "%s rank %d: HBM near it", file, rank);
        UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_HBM, NUMA_UNSET, NULL) == BIT(hbm),
                   "HBM, nearest first");
        UNIT_CHECK(choose(&m, 0, SHMEMX_SPACE_NUMA_LOCAL, NULL) == BIT(dram), "local: its DRAM");
        UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_HIGHEST_BANDWIDTH, NUMA_UNSET, NULL) == BIT(hbm),
                   "highest bandwidth: HBM");
        UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_LOWEST_LATENCY, NUMA_UNSET, NULL) == BIT(dram),
                   "lowest latency without figures: DRAM");
        UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_HIGHEST_CAPACITY, NUMA_UNSET, NULL) == BIT(hbm),
                   "largest near it: its 2 GiB of HBM");
        UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_DRAM, SHMEMX_SPACE_NUMA_INTERLEAVE, &spread) ==
                           0xf &&
                       spread,
                   "DRAM interleaved: nodes 0-3");
        UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_HBM, 1, NULL) == 0, "node 1 is no HBM");
        UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_FAR, NUMA_UNSET, NULL) == 0, "no far memory");
    }
    struct numa_memory m;
    if (load(file, 0, 4, &m) == 0)
        UNIT_CHECK(numa_node_of(&m, 7)->bandwidth == 90000 &&
                       numa_node_of(&m, 0)->bandwidth == 22500 &&
                       numa_node_of(&m, 1)->bandwidth == 0,
                   "bandwidths from cluster 0's CPUs");
}

/* Four nodes of two CPUs; one bandwidth figure, for node 1 from every CPU. */
static void check_memattrs(void)
{
    for (int rank = 0; rank < 4; rank++) {
        struct numa_memory m;
        if (load("8intel64-4n2t-memattrs.xml", rank, 4, &m))
            return;
        UNIT_CHECK(numa_node_of(&m, 1)->bandwidth == 20, "node 1's bandwidth from rank %d", rank);
        UNIT_CHECK(choose(&m, 0, SHMEMX_SPACE_NUMA_LOCAL, NULL) == BIT(rank), "rank %d on node %d",
                   rank, rank);
        UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_HIGHEST_BANDWIDTH, NUMA_UNSET, NULL) == BIT(rank),
                   "the best near rank %d is its own node", rank);
    }
}

/* CXL memory exposed as DAX devices is no NUMA node: nothing far to offer. */
static void check_cxl(void)
{
    struct numa_memory m;
    if (load("cxlmem+dax.v2.xml", 0, 1, &m))
        return;
    UNIT_CHECK(m.n_nodes == 1 && m.nodes[0].kind == NUMA_KIND_DRAM, "one DRAM node");
    UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_FAR, NUMA_UNSET, NULL) == 0, "no far node");
    UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_DRAM, NUMA_UNSET, NULL) == BIT(0), "its DRAM");
    int huge = numa_page_size_index(&m, 2 << 20);
    UNIT_CHECK(huge >= 0 && numa_free_pages(&m, huge, 0) == 0, "2 MiB pages, none free");
}

/* Eight nodes of two CPUs in hwloc's order 1,0,2,5,4,3,6,7: eight ranks, one on each. */
static void check_distances(void)
{
    static const int node_of_rank[8] = {1, 0, 2, 5, 4, 3, 6, 7};
    for (int rank = 0; rank < 8; rank++) {
        struct numa_memory m;
        int spread = 0;
        if (load("16amd64-4distances.xml", rank, 8, &m))
            return;
        UNIT_CHECK(choose(&m, 0, SHMEMX_SPACE_NUMA_LOCAL, NULL) == BIT(node_of_rank[rank]),
                   "rank %d near node %d", rank, node_of_rank[rank]);
        UNIT_CHECK(choose(&m, 0, SHMEMX_SPACE_NUMA_INTERLEAVE, &spread) == 0xff && spread,
                   "interleaved over all eight");
        UNIT_CHECK(choose(&m, 0, 5, NULL) == BIT(5), "node 5 by index");
    }
}

static void check_many_nodes(void)
{
    struct numa_memory m;
    if (load("192em64t-24n8c2t.xml", 5, 24, &m))
        return;
    UNIT_CHECK(m.n_nodes == 24 && numa_node_of(&m, 23) && !numa_node_of(&m, 24), "24 nodes");
    UNIT_CHECK(choose(&m, 0, SHMEMX_SPACE_NUMA_INTERLEAVE, NULL) == 0xffffff, "all 24");
    uint64_t local = choose(&m, 0, SHMEMX_SPACE_NUMA_LOCAL, NULL);
    UNIT_CHECK(local && !(local & (local - 1)), "one node near rank 5: 0x%llx",
               (unsigned long long)local);
}

/* Machines with GPUs: memory only, two nodes each, the second socket's for the last rank. */
static void check_gpu_machines(void)
{
    const char *files[] = {"power8gpudistances.xml", "nvidiaDGX2.xml"};
    for (int i = 0; i < 2; i++) {
        struct numa_memory first, last;
        if (load(files[i], 0, 2, &first) || load(files[i], 1, 2, &last))
            return;
        UNIT_CHECK(first.n_nodes == 2, "%s: two nodes", files[i]);
        UNIT_CHECK(choose(&first, 0, SHMEMX_SPACE_NUMA_LOCAL, NULL) == BIT(0) &&
                       choose(&last, 0, SHMEMX_SPACE_NUMA_LOCAL, NULL) == BIT(1),
                   "%s: one socket each", files[i]);
    }
}

/* The suite's own machine: socket 0 has DRAM node 0 (8 free 2 MiB pages) and HBM node 2. */
static void check_own(const char *xml)
{
    struct numa_source source = {xml, "/sys", 3, 4};
    struct numa_memory m;
    char err[200];
    UNIT_CHECK(numa_discover(&source, &m, err, sizeof(err)) == 0, "%s", err);
    int huge = numa_page_size_index(&m, 2 << 20);
    UNIT_CHECK(huge >= 0 && numa_free_pages(&m, huge, BIT(0)) == 8 &&
                   numa_free_pages(&m, huge, BIT(1) | BIT(2)) == 0 &&
                   numa_free_pages(&m, huge, 0) == 8,
               "free 2 MiB pages per node");
    UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_HBM, SHMEMX_SPACE_NUMA_LOCAL, NULL) == 0,
               "rank 3, on socket 1, has no HBM near it");
    UNIT_CHECK(choose(&m, SHMEMX_SPACE_MEMORY_HBM, NUMA_UNSET, NULL) == BIT(2), "HBM, further");
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    UNIT_CHECK(f != NULL, "cannot write %s", path);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void make_dirs(const char *root, const char *path)
{
    char at[1024];
    snprintf(at, sizeof(at), "%s", root);
    mkdir(root, 0755);
    for (const char *c = path; *c;) {
        const char *slash = strchr(c, '/');
        size_t len = slash ? (size_t)(slash - c) : strlen(c);
        snprintf(at + strlen(at), sizeof(at) - strlen(at), "/%.*s", (int)len, c);
        mkdir(at, 0755);
        c += len + (slash != NULL);
    }
}

/* This machine's hwloc view, with huge pages and shmem_enabled from a sysfs tree of the test's. */
static void check_sysfs(const char *scratch)
{
    char root[900], path[1200];
    snprintf(root, sizeof(root), "%s/sysfs", scratch);
    make_dirs(root, "kernel/mm/hugepages/hugepages-2048kB");
    make_dirs(root, "kernel/mm/hugepages/hugepages-1048576kB");
    make_dirs(root, "kernel/mm/transparent_hugepage");
    make_dirs(root, "devices/system/node/node0/hugepages/hugepages-2048kB");
    make_dirs(root, "devices/system/node/node0/hugepages/hugepages-1048576kB");
    snprintf(path, sizeof(path),
             "%s/devices/system/node/node0/hugepages/hugepages-2048kB/"
             "free_hugepages",
             root);
    write_file(path, "5\n");
    snprintf(path, sizeof(path),
             "%s/devices/system/node/node0/hugepages/hugepages-1048576kB/"
             "free_hugepages",
             root);
    write_file(path, "1\n");
    snprintf(path, sizeof(path), "%s/kernel/mm/transparent_hugepage/shmem_enabled", root);
    write_file(path, "always within_size [advise] never deny force\n");
    struct numa_source source = {NULL, root, 0, 1};
    struct numa_memory m;
    char err[200];
    UNIT_CHECK(numa_discover(&source, &m, err, sizeof(err)) == 0, "%s", err);
    UNIT_CHECK(m.real && m.n_page_sizes == 2 && m.page_sizes[0] == 2 << 20 &&
                   m.page_sizes[1] == 1 << 30,
               "2 MiB and 1 GiB pages, ascending");
    UNIT_CHECK(numa_free_pages(&m, 0, 0) == 5 && numa_free_pages(&m, 1, BIT(0)) == 1,
               "free pages of node 0");
    UNIT_CHECK(m.thp_shared, "advise: shared memory takes transparent huge pages");
    write_file(path, "always within_size advise [never] deny force\n");
    UNIT_CHECK(numa_discover(&source, &m, err, sizeof(err)) == 0 && !m.thp_shared,
               "never: it does not");
}

static void check_saved_machines(void)
{
    check_heteromem("64intel64-heteromem.xml", "HBM");
    check_heteromem("64intel64-fakeKNL-SNC4-hybrid.xml", "MCDRAM");
    check_memattrs();
    check_cxl();
    check_distances();
    check_many_nodes();
    check_gpu_machines();
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s TOPOLOGY_DIR OWN_TOPOLOGY_XML SCRATCH_DIR\n", argv[0]);
        return 2;
    }
    dir = argv[1];
    if (!*dir)
        printf("SKIP: test_numa on hwloc's saved machines (no directory of them given)\n");
    else
        check_saved_machines();
    check_own(argv[2]);
    check_sysfs(argv[3]);
    return unit_finish("test_numa");
}
