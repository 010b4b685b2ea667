/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory traits (shmemx.h): spaces on the memory a program asks for. One mode per run:
 *   huge N      2 MiB pages from the kernel's pool, N free on this node before the test
 *   scarce      too few free 2 MiB pages: BIND has no member, PREFERRED falls back to 4 KiB
 *   thp         transparent huge pages (shared memory allowed them on madvise)
 *   numa        bound to node 0, interleaved over node 0, checked with get_mempolicy/move_pages
 *   invalid     every invalid trait fails on every PE
 *   mismatch    under SHMEM_DEBUG=1, PEs that pass different sizes or traits fail on every PE
 *   default P D [H]  the default heap (SHMEM_SYMMETRIC_HEAP_*) reports page size P (0: whichever
 *               the kernel says it has: PREFERRED, or auto, with too few huge pages for all) and
 *               NUMA domain D; with H, exactly H PEs have it in pages larger than the base page
 *   heteromem   on hwloc's export of a machine of 4 clusters, each with DRAM node c and HBM node
 *               {7,4,5,6}[c] (SHMEM_TEST_TOPOLOGY: 64intel64-heteromem.xml), PE pe in cluster
 *               pe * 4 / n_pes
 *   topology    on the saved two-socket machine of SHMEM_TEST_TOPOLOGY (tests/unit/
 *               topo-2socket-hbm.xml: socket 0 has DRAM node 0 with 8 free 2 MiB pages and HBM
 *               node 2, socket 1 DRAM node 1), each PE placed on CPU pe * 4 / n_pes
 * Each space is used: puts between members and to node peers, a fetch-add, an fcollect. */
#define _GNU_SOURCE
#include "check.h"

#include <linux/mempolicy.h>
#include <shmemx.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define HUGE_2M (2 * MIB)

static int me, npes;

static shmemx_space_traits_t traits_of(uint64_t mask, size_t page, int policy, int domain,
                                       int memory)
{
    shmemx_space_traits_t t = {mask, page, policy, domain, memory, 0};
    return t;
}

/* A CPU space of size bytes with traits t: the rc, same on every PE. */
static int create(size_t size, const shmemx_space_traits_t *t, shmem_space_t *space,
                  shmem_team_t *team)
{
    shmem_space_config_t config = {SHMEM_DEVICE_CPU, size, SHMEM_SPACE_FLAG_DEFAULT};
    int rc = shmemx_space_create_traits(&config, t, space, team);
    static long rcs[64], mine;
    mine = rc != 0;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, rcs, &mine, 1);
    CHECK(rcs[0] == 0 || rcs[0] == npes, "the same rc on every PE: %ld of %d failed", rcs[0], npes);
    if (rc) {
        CHECK(*space == SHMEM_SPACE_INVALID && *team == SHMEM_TEAM_INVALID,
              "a failed creation gives INVALID handles");
    }
    return rc;
}

/* The PEs of the space's team, in order: puts to the next, a fetch-add into the first, an
 * fcollect of the world ranks. */
static void exercise(shmem_space_t space, shmem_team_t team, int expected_members)
{
    int n = shmem_team_n_pes(team), rank = shmem_team_my_pe(team);
    CHECK_EQ(n, expected_members);
    long *words = shmem_space_calloc(space, (size_t)n + 2, sizeof(long));
    CHECK(words != NULL, "calloc in the space");
    if (!words)
        return;
    int next = shmem_team_translate_pe(team, (rank + 1) % n, SHMEM_TEAM_WORLD);
    shmem_long_p(&words[0], 1000 + me, next);
    shmem_long_atomic_fetch_add(&words[1], me + 1,
                                shmem_team_translate_pe(team, 0, SHMEM_TEAM_WORLD));
    shmem_team_sync(team);
    shmem_quiet();
    shmem_team_sync(team);
    int prev = shmem_team_translate_pe(team, (rank + n - 1) % n, SHMEM_TEAM_WORLD);
    CHECK_EQ(words[0], 1000 + prev);
    long *mine = shmem_space_malloc(space, sizeof(long));
    *mine = me;
    shmem_team_sync(team);
    CHECK_EQ(shmem_long_fcollect(team, &words[2], mine, 1), 0);
    long sum = 0;
    for (int i = 0; i < n; i++) {
        CHECK_EQ(words[2 + i], shmem_team_translate_pe(team, i, SHMEM_TEAM_WORLD));
        sum += words[2 + i] + 1;
    }
    if (rank == 0)
        CHECK_EQ(words[1], sum);
    shmem_space_free(space, mine);
    shmem_space_free(space, words);
}

static void destroy(shmem_space_t space, shmem_team_t team)
{
    if (team != SHMEM_TEAM_INVALID)
        shmem_team_destroy(team);
    if (space != SHMEM_SPACE_INVALID)
        CHECK_EQ(shmem_space_destroy(space), 0);
    shmem_barrier_all();
}

static shmemx_space_traits_t got_traits(shmem_space_t space)
{
    shmemx_space_traits_t got = {.mask = SHMEMX_SPACE_TRAIT_ALL};
    CHECK_EQ(shmemx_space_get_traits(space, &got), 0);
    return got;
}

/* The smaps field of the mapping that holds addr, in kB (-1: no such mapping). */
static long smaps_field(const void *addr, const char *field)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int inside = 0;
    long value = -1;
    size_t len = strlen(field);
    while (f && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
            if (inside)
                break;
            inside = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
        } else if (inside && !strncmp(line, field, len) && line[len] == ':') {
            value = strtol(line + len + 1, NULL, 10);
        }
    }
    if (f)
        fclose(f);
    return value;
}

static long free_huge_pages(void)
{
    FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
    long n = -1;
    if (f && fscanf(f, "%ld", &n) != 1)
        n = -1;
    if (f)
        fclose(f);
    return n;
}

/* 2 MiB pages, bound: the heap and a node peer's mapping of it are in 2 MiB pages. */
static void check_huge(long free_before)
{
    CHECK_EQ(free_huge_pages(), free_before);
    for (int policy = SHMEMX_SPACE_POLICY_BIND; policy <= SHMEMX_SPACE_POLICY_PREFERRED; policy++) {
        shmemx_space_traits_t t = traits_of(
            SHMEMX_SPACE_TRAIT_PAGE_SIZE | SHMEMX_SPACE_TRAIT_ALLOC_POLICY, HUGE_2M, policy, 0, 0);
        shmem_space_t space;
        shmem_team_t team;
        int rc = create(3 * MIB, &t, &space, &team); /* rounded up to 4 MiB: 2 pages per PE */
        CHECK_EQ(rc, 0);
        if (rc)
            continue;
        shmemx_space_traits_t got = got_traits(space);
        CHECK_EQ(got.page_size, HUGE_2M);
        CHECK_EQ(got.alloc_policy, policy);
        CHECK_EQ(got.numa_domain, 0);
        CHECK_EQ(got.memory, SHMEMX_SPACE_MEMORY_DRAM);
        CHECK_EQ(got.device_index, 0);
        CHECK_EQ(got.mask, SHMEMX_SPACE_TRAIT_ALL);
        char *block = shmemx_space_align(space, HUGE_2M, 3 * MIB);
        CHECK(block && ((uintptr_t)block & (HUGE_2M - 1)) == 0, "2 MiB-aligned block %p", block);
        CHECK_EQ(smaps_field(block, "KernelPageSize"), 2048);
        CHECK_EQ(free_huge_pages(), free_before - 2 * npes);
        int peer = (me + 1) % npes;
        char *mapped = shmem_ptr(block, peer);
        CHECK(mapped != NULL, "node peer %d's heap is mapped", peer);
        if (mapped && peer != me)
            CHECK_EQ(smaps_field(mapped, "KernelPageSize"), 2048);
        shmem_space_free(space, block);
        exercise(space, team, npes);
        destroy(space, team);
        CHECK_EQ(free_huge_pages(), free_before); /* every PE gave its pages back */
    }
}

/* Fewer free pages than the node's PEs need: BIND finds no member, PREFERRED falls back. */
static void check_scarce(void)
{
    shmemx_space_traits_t t = traits_of(SHMEMX_SPACE_TRAIT_PAGE_SIZE, HUGE_2M, 0, 0, 0);
    shmem_space_t space;
    shmem_team_t team;
    long before = free_huge_pages();
    CHECK(create(4 * MIB, &t, &space, &team) != 0, "BIND with too few 2 MiB pages fails");
    CHECK_EQ(free_huge_pages(), before);
    t = traits_of(SHMEMX_SPACE_TRAIT_PAGE_SIZE | SHMEMX_SPACE_TRAIT_ALLOC_POLICY, HUGE_2M,
                  SHMEMX_SPACE_POLICY_PREFERRED, 0, 0);
    CHECK_EQ(create(4 * MIB, &t, &space, &team), 0);
    if (space == SHMEM_SPACE_INVALID)
        return;
    CHECK_EQ(got_traits(space).page_size, sysconf(_SC_PAGESIZE));
    CHECK_EQ(got_traits(space).alloc_policy, SHMEMX_SPACE_POLICY_PREFERRED);
    exercise(space, team, npes);
    destroy(space, team);
    CHECK_EQ(free_huge_pages(), before);
}

static void check_thp(void)
{
    shmemx_space_traits_t t =
        traits_of(SHMEMX_SPACE_TRAIT_PAGE_SIZE, SHMEMX_SPACE_PAGE_TRANSPARENT, 0, 0, 0);
    shmem_space_t space;
    shmem_team_t team;
    int rc = create(8 * MIB, &t, &space, &team);
    CHECK_EQ(rc, 0);
    if (rc)
        return;
    CHECK_EQ(got_traits(space).page_size, SHMEMX_SPACE_PAGE_TRANSPARENT);
    char *block = shmemx_space_align(space, HUGE_2M, 4 * MIB);
    memset(block, 1, 4 * MIB);
    CHECK(smaps_field(block, "ShmemPmdMapped") > 0, "transparent huge pages in the heap: %ld kB",
          smaps_field(block, "ShmemPmdMapped"));
    shmem_space_free(space, block);
    exercise(space, team, npes);
    destroy(space, team);
}

/* The kernel's policy of addr, and the node of each page of [addr, addr+len) once touched. */
static void check_policy(char *addr, size_t len, int mode, unsigned long nodes)
{
    int seen = -1;
    unsigned long mask[16] = {0};
    CHECK_EQ(syscall(SYS_get_mempolicy, &seen, mask, 1024UL, addr, (unsigned long)MPOL_F_ADDR), 0);
    CHECK_EQ(seen, mode);
    CHECK_EQ(mask[0], nodes);
    memset(addr, 2, len);
    enum { PAGES = 16 };
    void *pages[PAGES];
    int status[PAGES];
    size_t step = len / PAGES;
    for (int i = 0; i < PAGES; i++)
        pages[i] = addr + (size_t)i * step;
    CHECK_EQ(syscall(SYS_move_pages, 0, PAGES, pages, NULL, status, 0), 0);
    for (int i = 0; i < PAGES; i++)
        CHECK(status[i] >= 0 && (nodes >> status[i] & 1), "page %d on node %d", i, status[i]);
}

static void check_numa(void)
{
    static const struct {
        int domain, mode;
    } cases[] = {{0, MPOL_BIND},
                 {SHMEMX_SPACE_NUMA_INTERLEAVE, MPOL_INTERLEAVE},
                 {SHMEMX_SPACE_NUMA_LOCAL, MPOL_BIND}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        shmemx_space_traits_t t =
            traits_of(SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, 0, 0, cases[i].domain, 0);
        shmem_space_t space;
        shmem_team_t team;
        int rc = create(4 * MIB, &t, &space, &team);
        CHECK_EQ(rc, 0);
        if (rc)
            continue;
        shmemx_space_traits_t got = got_traits(space);
        CHECK_EQ(got.numa_domain, 0);
        CHECK_EQ(got.memory, SHMEMX_SPACE_MEMORY_DRAM);
        CHECK_EQ(got.page_size, sysconf(_SC_PAGESIZE));
        char *block = shmem_space_malloc(space, 2 * MIB);
        check_policy(block, 2 * MIB, cases[i].mode, 1);
        shmem_space_free(space, block);
        exercise(space, team, npes);
        destroy(space, team);
    }
    /* DRAM is what this node has: bound to it; HBM and far memory it has not. */
    shmemx_space_traits_t t =
        traits_of(SHMEMX_SPACE_TRAIT_MEMORY, 0, 0, 0, SHMEMX_SPACE_MEMORY_DRAM);
    shmem_space_t space;
    shmem_team_t team;
    CHECK_EQ(create(MIB, &t, &space, &team), 0);
    if (space != SHMEM_SPACE_INVALID) {
        CHECK_EQ(got_traits(space).memory, SHMEMX_SPACE_MEMORY_DRAM);
        destroy(space, team);
    }
    t.memory = SHMEMX_SPACE_MEMORY_HBM;
    CHECK(create(MIB, &t, &space, &team) != 0, "no HBM here: no member");
    t.mask |= SHMEMX_SPACE_TRAIT_ALLOC_POLICY;
    t.alloc_policy = SHMEMX_SPACE_POLICY_PREFERRED;
    CHECK_EQ(create(MIB, &t, &space, &team), 0);
    if (space != SHMEM_SPACE_INVALID) {
        shmemx_space_traits_t got = got_traits(space);
        CHECK_EQ(got.memory, SHMEMX_SPACE_MEMORY_DRAM); /* the fall-back, as reported */
        CHECK_EQ(got.numa_domain, 0);
        exercise(space, team, npes);
        destroy(space, team);
    }
}

static void check_invalid(void)
{
    const shmemx_space_traits_t bad[] = {
        traits_of(1ull << 40, 0, 0, 0, 0),
        traits_of(SHMEMX_SPACE_TRAIT_PAGE_SIZE, 3000, 0, 0, 0),
        traits_of(SHMEMX_SPACE_TRAIT_ALLOC_POLICY, 0, 7, 0, 0),
        traits_of(SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, 0, 0, 63, 0),
        traits_of(SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, 0, 0, -3, 0),
        traits_of(SHMEMX_SPACE_TRAIT_MEMORY, 0, 0, 0, 99),
        traits_of(SHMEMX_SPACE_TRAIT_MEMORY | SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, 0, 0, 0,
                  SHMEMX_SPACE_MEMORY_HIGHEST_BANDWIDTH),
        {SHMEMX_SPACE_TRAIT_DEVICE_INDEX, 0, 0, 0, 0, -1},
        /* the host is one device: index 1 is on no PE (BIND) */
        {SHMEMX_SPACE_TRAIT_DEVICE_INDEX, 0, 0, 0, 0, 1},
        /* 1 GiB pages: none reserved (BIND) */
        traits_of(SHMEMX_SPACE_TRAIT_PAGE_SIZE, (size_t)1 << 30, 0, 0, 0),
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        shmem_space_t space = SHMEM_SPACE_DEFAULT;
        shmem_team_t team = SHMEM_TEAM_WORLD;
        CHECK(create(MIB, &bad[i], &space, &team) != 0, "invalid traits %zu rejected", i);
    }
    /* Under PREFERRED, index 1 of the host falls back to index 0, as reported. */
    shmemx_space_traits_t second = {SHMEMX_SPACE_TRAIT_DEVICE_INDEX |
                                        SHMEMX_SPACE_TRAIT_ALLOC_POLICY,
                                    0,
                                    SHMEMX_SPACE_POLICY_PREFERRED,
                                    0,
                                    0,
                                    1};
    shmem_space_t fell_back;
    shmem_team_t everyone;
    if (create(MIB, &second, &fell_back, &everyone) == 0) {
        CHECK_EQ(got_traits(fell_back).device_index, 0);
        destroy(fell_back, everyone);
    } else {
        CHECK(0, "device_index 1 under PREFERRED falls back on the host");
    }
    /* Host-memory traits on a GPU space are invalid everywhere, device or not. */
    shmem_space_config_t gpu = {SHMEM_DEVICE_GPU, MIB, SHMEM_SPACE_FLAG_DEFAULT};
    shmemx_space_traits_t t = traits_of(SHMEMX_SPACE_TRAIT_PAGE_SIZE, HUGE_2M, 0, 0, 0);
    shmem_space_t space;
    shmem_team_t team;
    CHECK(shmemx_space_create_traits(&gpu, &t, &space, &team) != 0, "page_size on a GPU space");
    /* No traits: shmem_space_create's space; the default space reports what it is. */
    CHECK_EQ(create(MIB, NULL, &space, &team), 0);
    destroy(space, team);
    shmemx_space_traits_t got = got_traits(SHMEM_SPACE_DEFAULT);
    CHECK_EQ(got.page_size, sysconf(_SC_PAGESIZE));
    CHECK_EQ(got.alloc_policy, SHMEMX_SPACE_POLICY_BIND);
    got.mask = SHMEMX_SPACE_TRAIT_PAGE_SIZE; /* an older program's mask: only what it knows */
    got.numa_domain = 12345;
    CHECK_EQ(shmemx_space_get_traits(SHMEM_SPACE_DEFAULT, &got), 0);
    CHECK_EQ(got.mask, SHMEMX_SPACE_TRAIT_PAGE_SIZE);
    CHECK_EQ(got.numa_domain, 12345);
    CHECK(shmemx_space_get_traits(SHMEM_SPACE_INVALID, &got) != 0, "get_traits(INVALID)");
    CHECK(shmemx_space_align(SHMEM_SPACE_DEFAULT, 3, 64) == NULL, "alignment 3 refused");
}

/* On one PE nothing can differ: each creation succeeds there. */
static void check_mismatch(void)
{
    shmem_space_t space;
    shmem_team_t team;
    shmemx_space_traits_t t = traits_of(SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, 0, 0,
                                        me == npes - 1 ? SHMEMX_SPACE_NUMA_INTERLEAVE : 0, 0);
    int rc = create(MIB, &t, &space, &team);
    CHECK((rc != 0) == (npes > 1), "traits differ on the last PE: rc %d", rc);
    if (rc == 0)
        destroy(space, team);
    shmem_space_config_t config = {SHMEM_DEVICE_CPU, me ? MIB : 2 * MIB, SHMEM_SPACE_FLAG_DEFAULT};
    rc = shmem_space_create(&config, &space, &team);
    CHECK((rc != 0) == (npes > 1), "sizes differ on PE 0: rc %d", rc);
    if (rc == 0)
        destroy(space, team);
    t.numa_domain = 0; /* the same everywhere: made */
    CHECK_EQ(create(MIB, &t, &space, &team), 0);
    destroy(space, team);
}

/* The saved machine: PE pe sits on CPU pe * 4 / npes, socket 0 for the first half. */
static void check_topology(void)
{
    int socket0 = me * 4 / npes < 2, members0 = 0;
    for (int pe = 0; pe < npes; pe++)
        members0 += pe * 4 / npes < 2;
    struct {
        shmemx_space_traits_t t;
        int members; /* 0: every PE's rc nonzero */
        int domain, memory;
        size_t page;
        int fallback_domain;  /* under PREFERRED, on socket 1 (for cases socket 1 cannot hold) */
        size_t fallback_page; /* there, 0: the base page */
    } cases[] = {
        /* HBM near the PE: socket 0 only, node 2 */
        {traits_of(SHMEMX_SPACE_TRAIT_MEMORY | SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, 0, 0,
                   SHMEMX_SPACE_NUMA_LOCAL, SHMEMX_SPACE_MEMORY_HBM),
         members0, 2, SHMEMX_SPACE_MEMORY_HBM, 0, SHMEMX_SPACE_NUMA_LOCAL, 0},
        /* HBM wherever it is: every PE, node 2 */
        {traits_of(SHMEMX_SPACE_TRAIT_MEMORY, 0, 0, 0, SHMEMX_SPACE_MEMORY_HBM), npes, 2,
         SHMEMX_SPACE_MEMORY_HBM, 0, 0, 0},
        /* the largest near the PE: socket 0's DRAM node 0, socket 1's node 1 */
        {traits_of(SHMEMX_SPACE_TRAIT_MEMORY, 0, 0, 0, SHMEMX_SPACE_MEMORY_HIGHEST_CAPACITY), npes,
         socket0 ? 0 : 1, SHMEMX_SPACE_MEMORY_DRAM, 0, 0, 0},
        /* the fastest near the PE, without the firmware's figures: HBM on socket 0 */
        {traits_of(SHMEMX_SPACE_TRAIT_MEMORY, 0, 0, 0, SHMEMX_SPACE_MEMORY_HIGHEST_BANDWIDTH), npes,
         socket0 ? 2 : 1, socket0 ? SHMEMX_SPACE_MEMORY_HBM : SHMEMX_SPACE_MEMORY_DRAM, 0, 0, 0},
        /* every node, page by page */
        {traits_of(SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, 0, 0, SHMEMX_SPACE_NUMA_INTERLEAVE, 0), npes,
         SHMEMX_SPACE_NUMA_INTERLEAVE, SHMEMX_SPACE_MEMORY_DRAM, 0, 0, 0},
        /* node 1, from either socket */
        {traits_of(SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, 0, 0, 1, 0), npes, 1, SHMEMX_SPACE_MEMORY_DRAM,
         0, 0, 0},
        /* 2 MiB pages near the PE: only node 0 has them (8, 2 per PE of the node); under
         * PREFERRED socket 1 takes node 0's */
        {traits_of(SHMEMX_SPACE_TRAIT_PAGE_SIZE | SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, HUGE_2M, 0,
                   SHMEMX_SPACE_NUMA_LOCAL, 0),
         members0, 0, SHMEMX_SPACE_MEMORY_DRAM, HUGE_2M, 1, HUGE_2M},
        /* far memory: none on this machine */
        {traits_of(SHMEMX_SPACE_TRAIT_MEMORY, 0, 0, 0, SHMEMX_SPACE_MEMORY_FAR), 0, 0, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        shmem_space_t space;
        shmem_team_t team;
        int rc = create(4 * MIB, &cases[i].t, &space, &team);
        CHECK(!rc == !!cases[i].members, "case %zu: rc %d, %d members expected", i, rc,
              cases[i].members);
        if (rc)
            continue;
        if (space != SHMEM_SPACE_INVALID) {
            shmemx_space_traits_t got = got_traits(space);
            CHECK(got.numa_domain == cases[i].domain, "case %zu: numa_domain %d, expected %d", i,
                  got.numa_domain, cases[i].domain);
            CHECK(got.memory == cases[i].memory, "case %zu: memory %d, expected %d", i, got.memory,
                  cases[i].memory);
            CHECK(got.page_size == (cases[i].page ? cases[i].page : (size_t)sysconf(_SC_PAGESIZE)),
                  "case %zu: page size %zu", i, got.page_size);
            exercise(space, team, cases[i].members);
        } else {
            CHECK(cases[i].members < npes, "case %zu: PE %d is no member", i, me);
        }
        destroy(space, team);
        /* Under PREFERRED nobody is left out, and those without the traits fall back. */
        if (cases[i].members == npes || !cases[i].members)
            continue;
        shmemx_space_traits_t t = cases[i].t;
        t.mask |= SHMEMX_SPACE_TRAIT_ALLOC_POLICY;
        t.alloc_policy = SHMEMX_SPACE_POLICY_PREFERRED;
        CHECK_EQ(create(4 * MIB, &t, &space, &team), 0);
        if (space == SHMEM_SPACE_INVALID)
            continue;
        shmemx_space_traits_t got = got_traits(space);
        CHECK_EQ(got.numa_domain, socket0 ? cases[i].domain : cases[i].fallback_domain);
        if (!socket0) /* preferred: huge pages of another node are still huge pages */
            CHECK_EQ(got.page_size, cases[i].fallback_page ? cases[i].fallback_page
                                                           : (size_t)sysconf(_SC_PAGESIZE));
        exercise(space, team, npes);
        destroy(space, team);
    }
}

/* Every PE has HBM near it there: a space of all, each PE's part on its cluster's HBM. */
static void check_heteromem(void)
{
    static const int hbm_of[4] = {7, 4, 5, 6};
    int cluster = me * 4 / npes;
    const struct {
        shmemx_space_traits_t t;
        int domain, memory;
    } cases[] = {
        {traits_of(SHMEMX_SPACE_TRAIT_MEMORY | SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, 0, 0,
                   SHMEMX_SPACE_NUMA_LOCAL, SHMEMX_SPACE_MEMORY_HBM),
         hbm_of[cluster], SHMEMX_SPACE_MEMORY_HBM},
        {traits_of(SHMEMX_SPACE_TRAIT_MEMORY, 0, 0, 0, SHMEMX_SPACE_MEMORY_HIGHEST_BANDWIDTH),
         hbm_of[cluster], SHMEMX_SPACE_MEMORY_HBM},
        {traits_of(SHMEMX_SPACE_TRAIT_MEMORY, 0, 0, 0, SHMEMX_SPACE_MEMORY_LOWEST_LATENCY), cluster,
         SHMEMX_SPACE_MEMORY_DRAM},
        {traits_of(SHMEMX_SPACE_TRAIT_MEMORY | SHMEMX_SPACE_TRAIT_NUMA_DOMAIN, 0, 0,
                   SHMEMX_SPACE_NUMA_INTERLEAVE, SHMEMX_SPACE_MEMORY_HBM),
         SHMEMX_SPACE_NUMA_INTERLEAVE, SHMEMX_SPACE_MEMORY_HBM},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        shmem_space_t space;
        shmem_team_t team;
        int rc = create(4 * MIB, &cases[i].t, &space, &team);
        CHECK(rc == 0, "case %zu created", i);
        if (rc)
            continue;
        shmemx_space_traits_t got = got_traits(space);
        CHECK(got.numa_domain == cases[i].domain, "case %zu: numa_domain %d, expected %d", i,
              got.numa_domain, cases[i].domain);
        CHECK(got.memory == cases[i].memory, "case %zu: memory %d", i, got.memory);
        exercise(space, team, npes);
        destroy(space, team);
    }
}

/* The default heap as the SHMEM_SYMMETRIC_HEAP_* knobs placed it: its traits, its pages, how
 * many PEs have it in huge pages (huge_pes < 0: any number), and puts into a node peer's copy. */
static void check_default(size_t page, int domain, int huge_pes)
{
    static int huge, huge_sum;
    shmemx_space_traits_t got = got_traits(SHMEM_SPACE_DEFAULT);
    long *words = shmem_calloc((size_t)npes, sizeof(long));
    long kernel_page = smaps_field(words, "KernelPageSize") << 10;
    CHECK_EQ(got.page_size, page ? page : (size_t)kernel_page);
    CHECK_EQ(got.numa_domain, domain);
    if (page != SHMEMX_SPACE_PAGE_TRANSPARENT)
        CHECK_EQ(kernel_page, got.page_size);
    huge = got.page_size != (size_t)sysconf(_SC_PAGESIZE);
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, &huge_sum, &huge, 1);
    if (huge_pes >= 0)
        CHECK_EQ(huge_sum, huge_pes);
    for (int pe = 0; pe < npes; pe++)
        shmem_long_p(&words[me], me + 1, pe);
    shmem_barrier_all();
    for (int pe = 0; pe < npes; pe++)
        CHECK_EQ(words[pe], pe + 1);
    shmem_free(words);
}

int main(int argc, char **argv)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "huge") && argc > 2)
        check_huge(atol(argv[2]));
    else if (!strcmp(mode, "scarce"))
        check_scarce();
    else if (!strcmp(mode, "thp"))
        check_thp();
    else if (!strcmp(mode, "numa"))
        check_numa();
    else if (!strcmp(mode, "invalid"))
        check_invalid();
    else if (!strcmp(mode, "mismatch"))
        check_mismatch();
    else if (!strcmp(mode, "default") && argc > 3)
        check_default(strtoull(argv[2], NULL, 0), atoi(argv[3]), argc > 4 ? atoi(argv[4]) : -1);
    else if (!strcmp(mode, "heteromem"))
        check_heteromem();
    else if (!strcmp(mode, "topology"))
        check_topology();
    else
        CHECK(0, "unknown mode '%s'", mode);
    shmem_finalize();
    return check_finish();
}
