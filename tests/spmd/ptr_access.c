/* 1.6 sections 9.1.7-9.1.8 and 9.2.1: shmem_ptr gives load/store access to PEs on this node
 * (all of them here, unless SHMEM_NODE_DIRECT=0 makes them go through the transport);
 * addr_accessible and pe_accessible. */
#include "check.h"

#include <string.h>

static int global_array[8];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    const char *direct = getenv("SHMEM_NODE_DIRECT");
    int mapped = !direct || strcmp(direct, "0");
    long *heap = shmem_malloc(8 * sizeof(long));
    int stack_var = 0;
    long *private_mem = malloc(sizeof(long));

    for (int pe = 0; pe < n; pe++) {
        int expect = pe == me || mapped;
        long *p = shmem_ptr(heap, pe);
        int *g = shmem_ptr(global_array, pe);
        CHECK((p != NULL) == expect, "shmem_ptr(heap, %d) %s", pe, p ? "mapped" : "NULL");
        CHECK((g != NULL) == expect, "shmem_ptr(global, %d) %s", pe, g ? "mapped" : "NULL");
        if (p)
            p[me] = 1000 + me;
        if (g)
            g[me] = 2000 + me;
        CHECK(shmem_addr_accessible(heap, pe) == 1, "heap accessible on PE %d", pe);
        CHECK(shmem_addr_accessible(&global_array[3], pe) == 1, "global accessible on %d", pe);
        CHECK(shmem_addr_accessible(&stack_var, pe) == 0, "stack reported accessible");
        CHECK(shmem_addr_accessible(private_mem, pe) == 0, "malloc reported accessible");
        CHECK(shmem_ptr(&stack_var, pe) == NULL, "shmem_ptr of a stack address");
        CHECK(shmem_pe_accessible(pe) == 1, "PE %d accessible", pe);
    }
    CHECK(shmem_ptr(heap, me) == heap, "shmem_ptr to self is the address itself");
    CHECK(shmem_pe_accessible(-1) == 0 && shmem_pe_accessible(n) == 0, "PEs out of range");
    CHECK(shmem_addr_accessible(heap, n) == 0, "addr_accessible on PE n");
    CHECK(shmem_ptr(heap, n) == NULL, "shmem_ptr on PE n");
    shmem_barrier_all();
    for (int pe = 0; pe < n; pe++) {
        if (pe != me && !mapped)
            continue;
        CHECK(heap[pe] == 1000 + pe, "store through shmem_ptr by PE %d: %ld", pe, heap[pe]);
        CHECK(global_array[pe] == 2000 + pe, "store to global by PE %d", pe);
    }
    shmem_barrier_all();
    /* loads through the pointer read the owner's data, at the same offset within the object */
    for (int pe = 0; pe < n; pe++) {
        long *p = shmem_ptr(&heap[pe], pe);
        int *g = shmem_ptr(&global_array[pe], pe);
        if (p)
            CHECK(*(volatile long *)p == 1000 + pe, "load through shmem_ptr from PE %d", pe);
        if (g)
            CHECK(*(volatile int *)g == 2000 + pe, "load of a global through shmem_ptr, PE %d", pe);
    }
    shmem_barrier_all();
    free(private_mem);
    shmem_free(heap);
    return check_finish();
}
