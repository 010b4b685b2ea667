/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 sections 9.9 and 9.11: barrier_all completes and orders puts; sync_all after quiet; fence
 * orders two puts to one PE; pe_quiet completes puts to the listed PEs. */
#include "check.h"

#include <sched.h>

static long slots[64];
#define DATA 64
static long data[DATA], flag;

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;

    /* 200 rounds: every PE writes its round number to everyone, then barrier. */
    int wrong = 0;
    for (long round = 1; round <= 200; round++) {
        for (int pe = 0; pe < n; pe++)
            shmem_long_p(&slots[me], round * 100 + me, pe);
        shmem_barrier_all();
        for (int p = 0; p < n; p++)
            wrong += slots[p] != round * 100 + p;
        shmem_barrier_all(); /* nobody overwrites before everyone has read */
    }
    CHECK(wrong == 0, "barrier_all: %d stale values over 200 rounds", wrong);

    /* sync_all after an explicit quiet */
    shmem_long_p(&slots[me], -me, right);
    shmem_quiet();
    shmem_sync_all();
    CHECK(slots[left] == -left, "sync_all after quiet: saw %ld", slots[left]);
    shmem_barrier_all();

    /* fence: data before flag, as seen by the target spinning on the flag. A ring, so every PE
     * is both writer and observer (with 1 PE it writes to itself). Odd rounds use the default
     * context's fence, even rounds shmem_ctx_fence on SHMEM_CTX_DEFAULT. */
    int fence_wrong = 0;
    for (long k = 1; k <= 50; k++) {
        long block[DATA];
        for (int i = 0; i < DATA; i++)
            block[i] = k * 1000 + me * 10 + i % 10;
        shmem_long_put(data, block, DATA, right);
        if (k % 2)
            shmem_fence();
        else
            shmem_ctx_fence(SHMEM_CTX_DEFAULT);
        shmem_long_p(&flag, k, right);
        while (*(volatile long *)&flag != k)
            sched_yield(); /* oversubscribed: let the writer run */
        for (int i = 0; i < DATA; i++)
            fence_wrong += ((volatile long *)data)[i] != k * 1000 + left * 10 + i % 10;
        shmem_barrier_all(); /* data is rewritten next round */
    }
    CHECK(fence_wrong == 0, "fence: %d data values not there when the flag was", fence_wrong);

    /* pe_quiet on a list of PEs, then a sync to publish */
    int targets[2] = {right, left};
    shmem_long_p(&slots[32 + me], 7 + me, right);
    shmem_long_p(&slots[48 + me], 9 + me, left);
    shmem_pe_quiet(targets, 2);
    shmem_ctx_pe_quiet(SHMEM_CTX_DEFAULT, targets, 0);
    shmem_sync_all();
    CHECK(slots[32 + left] == 7 + left, "pe_quiet: put to right neighbour");
    CHECK(slots[48 + right] == 9 + right, "pe_quiet: put to left neighbour");
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_barrier_all();
    return check_finish();
}
