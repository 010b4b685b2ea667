/* SPDX-License-Identifier: BSD-3-Clause */
/* A program owns its names: globals and functions named like the library's internals (rt,
 * log_error, heap_alloc, boot_fence ...) must neither replace them nor be replaced by them.
 * The library exports the OpenSHMEM API and nothing else. */
#include "check.h"

#include <string.h>

/* Names the library uses inside; a program may define them for itself. */
int rt[64];
int strata_default_ctx = 7;
int log_mask = 3;
int heap_alloc(void *heap, size_t size, size_t align, size_t *offset)
{
    (void)heap, (void)size, (void)align, (void)offset;
    return -1; /* a heap that never has room: shmem_malloc would fail if it called this */
}
void log_error(const char *routine, const char *fmt, ...)
{
    (void)routine, (void)fmt;
    abort();
}
int boot_fence(void)
{
    return -1;
}
int transport_flush(void *w, int pe)
{
    (void)w, (void)pe;
    return -1;
}

int main(void)
{
    memset(rt, 0x5a, sizeof(rt));
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *heap = shmem_malloc(4 * sizeof(long));
    CHECK(heap != NULL, "shmem_malloc with a program global named rt");
    shmem_long_p(&heap[0], me, (me + 1) % n);
    shmem_barrier_all();
    CHECK_EQ(heap[0], (me + n - 1) % n);
    shmem_free(heap);
    CHECK(rt[0] == 0x5a5a5a5a && rt[63] == 0x5a5a5a5a, "the program's rt untouched: %x", rt[0]);
    CHECK_EQ(strata_default_ctx, 7);
    CHECK_EQ(log_mask, 3);
    return check_finish();
}
