/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 sections 9.1.1-9.1.5: every PE has a distinct number in [0, n) and the same n. */
#include "check.h"

static int seen[1024];
static int sizes[1024];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(n >= 1 && n <= 1024, "n_pes %d", n);
    CHECK(me >= 0 && me < n, "my_pe %d of %d", me, n);
    CHECK(_my_pe() == me && _num_pes() == n, "deprecated _my_pe/_num_pes agree");
    shmem_int_p(&seen[me], 1, 0);
    shmem_int_p(&sizes[me], n, 0);
    shmem_barrier_all();
    if (me == 0)
        for (int p = 0; p < n; p++) {
            CHECK(seen[p] == 1, "PE %d never reported", p);
            CHECK(sizes[p] == n, "PE %d sees %d PEs, PE 0 sees %d", p, sizes[p], n);
        }
    return check_finish();
}
