/* SPDX-License-Identifier: BSD-3-Clause */
/* shmem_finalize right after a burst of non-blocking puts, while PE 0 still computes: a PE that
 * reached finalize first must keep the transport progressing until every peer has flushed (over
 * TCP, UCX completes a put only when its target progresses). Without that, one PE waited in the
 * process manager's fence and the other in its flush, for ever. The data is checked first. */
#include "check.h"

enum { WORDS = 4096, ROUNDS = 50 };
static long in[WORDS], out[WORDS];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), left = (me + n - 1) % n;
    for (int i = 0; i < WORDS; i++)
        out[i] = me * 100000L + i;
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < WORDS; i += 64)
            shmem_long_put_nbi(&in[i], &out[i], 64, (me + 1) % n);
    shmem_barrier_all();
    long wrong = 0;
    for (int i = 0; i < WORDS; i++)
        wrong += in[i] != left * 100000L + i;
    CHECK(wrong == 0, "%ld words from PE %d wrong", wrong, left);
    for (int r = 0; r < 4 * ROUNDS; r++)
        for (int i = 0; i < WORDS; i += 64)
            shmem_long_put_nbi(&in[i], &out[i], 64, (me + 1) % n);
    if (me == 0) { /* busy, not progressing, while the others reach finalize */
        volatile double x = 0;
        for (long i = 0; i < 50000000; i++)
            x += (double)i;
    }
    return check_finish();
}
