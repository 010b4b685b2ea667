/* SPDX-License-Identifier: BSD-3-Clause */
/* SHMEM_DEFAULT_SPACE=gpu (or cuda, or hip) with a device on every PE: shmem_malloc returns device
 * memory. The default space says so in its caps and device type, RMA, atomics, collectives,
 * calloc and realloc work on it without a load or store by the library, and static data stays
 * host memory. shmem_ptr gives no pointer to the test device's memory, and a device pointer to a
 * CUDA or HIP heap (for the program's kernels). */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static long global_counter;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    shmem_space_cap_t caps = 0;
    shmem_device_type_t type = SHMEM_DEVICE_CPU;
    CHECK(shmem_space_get_caps(SHMEM_SPACE_DEFAULT, &caps) == 0, "caps");
    CHECK(!(caps & SHMEM_SPACE_CAP_DIRECT_ACCESS) && (caps & SHMEM_SPACE_CAP_WORLD_ACCESS),
          "a world-accessible device default space: caps 0x%llx", (unsigned long long)caps);
    if (getenv("STRATA_TEST_IDENT_ADDR")) /* the kind places heaps where asked */
        CHECK(caps & SHMEM_SPACE_CAP_IDENT_ADDR, "IDENT_ADDR expected: caps 0x%llx",
              (unsigned long long)caps);
    const char *asked = getenv("SHMEM_DEFAULT_SPACE");
    shmem_device_type_t expected = asked && !strcmp(asked, "cuda")  ? SHMEM_DEVICE_CUDA
                                   : asked && !strcmp(asked, "hip") ? SHMEM_DEVICE_HIP
                                                                    : SHMEM_DEVICE_GPU;
    CHECK(shmem_space_get_device_type(SHMEM_SPACE_DEFAULT, &type) == 0 && type == expected,
          "device type %d", (int)type);

    long *heap = shmem_calloc(64, sizeof(long));
    shmem_space_t space;
    CHECK(shmem_get_space(heap, &space) == 0 && space == SHMEM_SPACE_DEFAULT, "heap's space");
    CHECK(shmem_get_space(&global_counter, &space) == 0 && space == SHMEM_SPACE_DEFAULT,
          "static data's space");
    const char *test_device = getenv("SHMEM_TEST_DEVICE_PES");
    if (test_device && *test_device)
        CHECK(shmem_ptr(heap, me) == NULL, "no pointer to test device memory");
    else
        CHECK(shmem_ptr(heap, me) == heap && !!shmem_ptr(heap, right) == check_same_node(right),
              "device pointers to this PE's and a node peer's GPU heap, none to another node's");
    long values[64];
    shmem_long_get(values, heap, 64, me);
    CHECK(values[0] == 0 && values[63] == 0, "calloc zeroed the device heap");
    shmem_barrier_all(); /* every PE has looked before anyone writes */

    for (int i = 0; i < 64; i++)
        values[i] = me * 1000 + i;
    shmem_long_put(heap, values, 64, right);
    shmem_barrier_all();
    CHECK_EQ(shmem_long_g(&heap[63], me), left * 1000 + 63);

    /* realloc keeps the contents */
    heap = shmem_realloc(heap, 4096 * sizeof(long));
    CHECK(heap != NULL, "realloc");
    CHECK_EQ(shmem_long_g(&heap[10], me), left * 1000 + 10);

    /* atomics on the device heap and on a host global */
    for (int i = 0; i < 100; i++) {
        shmem_long_atomic_add(&heap[0], 1, 0);
        shmem_long_atomic_inc(&global_counter, 0);
    }
    shmem_barrier_all();
    if (me == 0) {
        CHECK_EQ(shmem_long_atomic_fetch(&heap[0], 0), left * 1000 + 100L * n);
        CHECK_EQ(global_counter, 100L * n);
    }

    /* a reduction over device buffers of the default space */
    long *src = shmem_malloc(8 * sizeof(long)), *dst = shmem_malloc(8 * sizeof(long));
    for (int i = 0; i < 8; i++)
        values[i] = me + i;
    shmem_long_put(src, values, 8, me);
    shmem_quiet();
    shmem_long_max_reduce(SHMEM_TEAM_WORLD, dst, src, 8);
    shmem_long_get(values, dst, 8, me);
    CHECK(values[0] == n - 1 && values[7] == n + 6, "max reduction %ld %ld", values[0], values[7]);
    shmem_free(dst);
    shmem_free(src);
    shmem_free(heap);
    return check_finish();
}
