/* SPDX-License-Identifier: BSD-3-Clause */
/* The heap is reserved up front and committed as it is touched: with SHMEM_SYMMETRIC_SIZE=4G a
 * PE's resident set stays small, even after a 1 GiB allocation of which one page is used. */
#include "check.h"

#include <string.h>

/* What a PE may hold resident without its heap: the library, its transport and their buffers.
 * A sanitizer build adds its shadow memory and quarantine to the same few pages. */
#ifdef __SANITIZE_ADDRESS__
#define RESIDENT_LIMIT_KIB (128 * 1024)
#else
#define RESIDENT_LIMIT_KIB (64 * 1024)
#endif

static long resident_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long after_init = resident_kib();
    CHECK(after_init > 0 && after_init < RESIDENT_LIMIT_KIB,
          "RSS after init with a 4 GiB heap: %ld KiB", after_init);
    size_t size = (size_t)1 << 30;
    char *block = shmem_malloc(size);
    CHECK(block != NULL, "1 GiB allocation from a 4 GiB heap");
    if (block) {
        block[0] = 1;
        shmem_char_p(&block[size - 1], (char)(me + 1), (me + 1) % n);
        shmem_barrier_all();
        CHECK(block[size - 1] == (char)((me + n - 1) % n + 1), "last byte written by a peer");
        long after_use = resident_kib();
        CHECK(after_use < RESIDENT_LIMIT_KIB, "RSS after touching 1 GiB at two pages: %ld KiB",
              after_use);
    }
    shmem_free(block);
    return check_finish();
}
