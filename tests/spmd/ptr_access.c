/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 sections 9.1.7-9.1.8 and 9.2.1: shmem_ptr gives load/store access to the PEs of this node
 * (STRATA_TEST_NODES says which; only to itself when SHMEM_NODE_DIRECT=0 makes node peers go
 * through the transport) and NULL for the others, which RMA still reaches; shmem_team_ptr on
 * SHMEM_TEAM_SHARED maps every member; addr_accessible and pe_accessible. */
#include "check.h"

static int global_array[8];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *heap = shmem_malloc(8 * sizeof(long));
    int stack_var = 0;
    long *private_mem = malloc(sizeof(long));

    /* Each PE leaves its mark in slot me of every PE: by a store where mapped, by RMA elsewhere. */
    for (int pe = 0; pe < n; pe++) {
        int expect = pe == me || (check_node_direct() && check_same_node(pe));
        long *p = shmem_ptr(heap, pe);
        int *g = shmem_ptr(global_array, pe);
        CHECK((p != NULL) == expect, "shmem_ptr(heap, %d) %s", pe, p ? "mapped" : "NULL");
        CHECK((g != NULL) == expect, "shmem_ptr(global, %d) %s", pe, g ? "mapped" : "NULL");
        if (p)
            p[me] = 1000 + me;
        else
            shmem_long_p(&heap[me], 1000 + me, pe);
        if (g)
            g[me] = 2000 + me;
        else
            shmem_int_p(&global_array[me], 2000 + me, pe);
        CHECK(shmem_addr_accessible(heap, pe) == 1, "heap accessible on PE %d", pe);
        CHECK(shmem_addr_accessible(&global_array[3], pe) == 1, "global accessible on %d", pe);
        CHECK(shmem_addr_accessible(&stack_var, pe) == 0, "stack reported accessible");
        CHECK(shmem_addr_accessible(private_mem, pe) == 0, "malloc reported accessible");
        CHECK(shmem_ptr(&stack_var, pe) == NULL, "shmem_ptr of a stack address");
        CHECK(shmem_pe_accessible(pe) == 1, "PE %d accessible", pe);
    }
    if (check_node_direct())
        for (int r = 0; r < shmem_team_n_pes(SHMEM_TEAM_SHARED); r++)
            CHECK(shmem_team_ptr(SHMEM_TEAM_SHARED, heap, r) ==
                          shmem_ptr(heap, shmem_team_translate_pe(SHMEM_TEAM_SHARED, r,
                                                                  SHMEM_TEAM_WORLD)) &&
                      shmem_team_ptr(SHMEM_TEAM_SHARED, heap, r) != NULL,
                  "team_ptr of shared rank %d", r);
    CHECK(shmem_ptr(heap, me) == heap, "shmem_ptr to self is the address itself");
    CHECK(shmem_pe_accessible(-1) == 0 && shmem_pe_accessible(n) == 0, "PEs out of range");
    CHECK(shmem_addr_accessible(heap, n) == 0, "addr_accessible on PE n");
    CHECK(shmem_ptr(heap, n) == NULL, "shmem_ptr on PE n");
    shmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        CHECK(heap[pe] == 1000 + pe, "mark of PE %d on the heap: %ld", pe, heap[pe]);
        CHECK(global_array[pe] == 2000 + pe, "mark of PE %d in a global: %d", pe, global_array[pe]);
    }
    shmem_barrier_all();
    /* Loads through the pointer read the owner's data, at the same offset within the object;
     * gets read it from the PEs that are not mapped. */
    for (int pe = 0; pe < n; pe++) {
        long *p = shmem_ptr(&heap[pe], pe);
        int *g = shmem_ptr(&global_array[pe], pe);
        long seen = p ? *(volatile long *)p : shmem_long_g(&heap[pe], pe);
        int seen_global = g ? *(volatile int *)g : shmem_int_g(&global_array[pe], pe);
        CHECK(seen == 1000 + pe, "PE %d's own mark read %s: %ld", pe,
              p ? "through shmem_ptr" : "by get", seen);
        CHECK(seen_global == 2000 + pe, "PE %d's own global mark read %s: %d", pe,
              g ? "through shmem_ptr" : "by get", seen_global);
    }
    shmem_barrier_all();
    free(private_mem);
    shmem_free(heap);
    return check_finish();
}
