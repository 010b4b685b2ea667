/* SPDX-License-Identifier: BSD-3-Clause */
/* A token travels around a ring of PEs through put-with-signal: each PE waits for its signal,
 * adds its number to the token and passes it on. PE 0 checks the sum at the end. */
#include <shmem.h>
#include <stdio.h>

static long token;       /* a global: symmetric like the heap */
static uint64_t arrived; /* signal word */

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *history = shmem_calloc((size_t)n, sizeof(long)); /* on the symmetric heap */

    if (me == 0) {
        long start = 0;
        shmem_long_put_signal(&token, &start, 1, &arrived, 1, SHMEM_SIGNAL_SET, 1 % n);
    }
    shmem_signal_wait_until(&arrived, SHMEM_CMP_NE, 0); /* wait for the token */
    long value = token + me;
    shmem_long_p(&history[me], value, 0); /* record the running sum on PE 0 */
    if (me != 0)
        shmem_long_put_signal(&token, &value, 1, &arrived, 1, SHMEM_SIGNAL_SET, (me + 1) % n);

    shmem_barrier_all();
    if (me == 0) {
        long expected = (long)n * (n - 1) / 2;
        printf("ring of %d PEs: token sum %ld (expected %ld) %s\n", n, history[0], expected,
               history[0] == expected ? "OK" : "WRONG");
    }
    shmem_free(history);
    shmem_finalize();
    return 0;
}
