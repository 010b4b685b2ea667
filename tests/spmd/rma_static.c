/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 3.2: global and static variables are symmetric data objects. RMA on initialised
 * and zero-initialised (bss) globals, function-static arrays and a large static array, from and
 * to the heap. Initial values must survive shmem_init. */
#include "check.h"

#include <sched.h>
#include <string.h>

#define BIG (1 << 20)

long initialised[8] = {11, 12, 13, 14, 15, 16, 17, 18};
int zeroed[100];
static double file_static[4] = {0.5, 1.5, 2.5, 3.5};
static unsigned char big[BIG];
static uint64_t sig;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    static short function_static[16];
    static int function_static_init[4] = {5, 6, 7, 8};

    for (int i = 0; i < 8; i++)
        CHECK(initialised[i] == 11 + i, "initialised[%d] lost its value at init", i);
    CHECK(file_static[2] == 2.5, "file_static lost its value");
    for (int i = 0; i < 4; i++)
        CHECK(function_static_init[i] == 5 + i, "function static [%d] lost its value", i);
    for (int i = 0; i < 100; i++)
        CHECK(zeroed[i] == 0, "bss not zero at [%d]", i);
    shmem_barrier_all();

    /* put / get */
    long mine[8];
    for (int i = 0; i < 8; i++)
        mine[i] = 100 * me + i;
    shmem_long_put(initialised, mine, 8, right);
    shmem_barrier_all();
    for (int i = 0; i < 8; i++)
        CHECK(initialised[i] == 100 * left + i, "long_put to a global [%d]", i);
    long got[8];
    shmem_long_get(got, initialised, 8, right);
    for (int i = 0; i < 8; i++)
        CHECK(got[i] == 100 * me + i, "long_get from a global [%d]", i);

    /* p / g on bss and function-static */
    shmem_int_p(&zeroed[me], me + 1, right);
    shmem_short_p(&function_static[me % 16], (short)(me + 5), right);
    shmem_barrier_all();
    CHECK(zeroed[left] == left + 1, "int_p to bss");
    CHECK(function_static[left % 16] == left + 5, "short_p to a function static");
    CHECK(shmem_double_g(&file_static[1], right) == 1.5, "double_g from a file static");
    for (int i = 0; i < 4; i++)
        CHECK_EQ(shmem_int_g(&function_static_init[i], right), 5 + i);
    CHECK(shmem_short_g(&function_static[left % 16], me) == left + 5, "short_g from self");

    /* iput into a global */
    int stride_src[10];
    for (int i = 0; i < 10; i++)
        stride_src[i] = 1000 + me * 10 + i;
    shmem_barrier_all();
    shmem_int_iput(&zeroed[20], stride_src, 2, 1, 10, right);
    shmem_barrier_all();
    for (int i = 0; i < 10; i++) {
        CHECK(zeroed[20 + 2 * i] == 1000 + left * 10 + i, "int_iput to bss [%d]", i);
        CHECK(zeroed[21 + 2 * i] == 0, "int_iput touched a gap [%d]", i);
    }
    /* iget back from the right neighbour's bss: it holds this PE's values */
    int strided_back[12];
    for (int i = 0; i < 12; i++)
        strided_back[i] = -1;
    shmem_int_iget(strided_back, &zeroed[20], 1, 2, 10, right);
    for (int i = 0; i < 10; i++)
        CHECK(strided_back[i] == 1000 + me * 10 + i, "int_iget from bss [%d]: %d", i,
              strided_back[i]);
    CHECK(strided_back[10] == -1 && strided_back[11] == -1, "int_iget wrote past nelems");

    /* a large static array, and heap <-> static */
    unsigned char *heap = shmem_malloc(BIG);
    for (int i = 0; i < BIG; i++)
        heap[i] = (unsigned char)(i * 3 + me);
    shmem_barrier_all();
    shmem_putmem(big, heap, BIG, right);
    shmem_barrier_all();
    size_t bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += big[i] != (unsigned char)(i * 3 + left);
    CHECK(bad == 0, "putmem of 1 MiB heap -> static: %zu wrong", bad);
    shmem_barrier_all();
    shmem_getmem(heap, big, BIG, right);
    bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += heap[i] != (unsigned char)(i * 3 + me);
    CHECK(bad == 0, "getmem of 1 MiB static -> heap: %zu wrong", bad);
    /* static source, heap destination: each PE forwards what it received */
    shmem_barrier_all();
    shmem_putmem(heap, big, BIG, right);
    shmem_barrier_all();
    int left2 = (me + 2 * n - 2) % n;
    bad = 0;
    for (int i = 0; i < BIG; i++)
        bad += heap[i] != (unsigned char)(i * 3 + left2);
    CHECK(bad == 0, "putmem of 1 MiB static -> heap: %zu wrong", bad);

    /* put-with-signal into static data */
    shmem_barrier_all();
    shmem_long_put_signal(initialised, mine, 4, &sig, 9, SHMEM_SIGNAL_SET, right);
    while (shmem_signal_fetch(&sig) != 9)
        sched_yield(); /* oversubscribed: let the sender run */
    for (int i = 0; i < 4; i++)
        CHECK(initialised[i] == 100 * left + i, "put_signal to a global [%d]", i);
    shmem_barrier_all();
    shmem_free(heap);
    return check_finish();
}
