/* SPDX-License-Identifier: BSD-3-Clause */
/* Where locks' queue tails live (src/lock_home.h): every PE computes the same home for a lock, a
 * home is a PE of the job, and the locks of an array, or one lock in each element of an array of
 * structs, spread over the PEs about evenly instead of all living on one. */
#include "../../src/lock_home.h"
#include "unit.h"

/* Homes of `count` locks, `stride` longs apart from offset `first` of region 5, on n_pes PEs:
 * each PE must be home to between half and one and a half times its share, count / n_pes. */
static void check_spread(int n_pes, size_t first, int stride, int count)
{
    int homes[1000] = {0};
    for (int i = 0; i < count; i++) {
        size_t offset = first + (size_t)i * (size_t)stride * sizeof(long);
        int home = lock_home_pe(5, offset, n_pes);
        UNIT_CHECK(home >= 0 && home < n_pes, "lock at offset %zu on %d PEs: home %d", offset,
                   n_pes, home);
        if (home < 0 || home >= n_pes)
            return;
        homes[home]++;
    }
    for (int pe = 0; pe < n_pes; pe++) {
        int share = homes[pe], fair = count / n_pes, slack = fair / 2;
        UNIT_CHECK(share >= fair - slack && share <= fair + slack,
                   "%d locks %d longs apart on %d PEs: PE %d is home to %d, expected %d +- %d",
                   count, stride, n_pes, pe, share, fair, slack);
    }
}

int main(void)
{
    /* The home is a function of the lock's place alone: a PE that computes it again, or with
     * another byte of the same word, gets the same PE. */
    UNIT_CHECK(lock_home_pe(1, 4096, 7) == lock_home_pe(1, 4096, 7), "home not deterministic");
    UNIT_CHECK(lock_home_pe(1, 4096, 7) == lock_home_pe(1, 4100, 7),
               "two bytes of one long: homes %d and %d", lock_home_pe(1, 4096, 7),
               lock_home_pe(1, 4100, 7));
    UNIT_CHECK(lock_home_pe(1, 4096, 1) == 0, "one PE: home %d", lock_home_pe(1, 4096, 1));

    for (int stride = 1; stride <= 16; stride *= 2) {
        check_spread(2, 0, stride, 16);
        check_spread(4, 8192, stride, 64);
        check_spread(8, 64, stride, 64);
        check_spread(3, 0, stride, 30);
    }
    check_spread(64, 0, 1, 64 * 16);
    check_spread(1000, 4096, 4, 1000 * 16);

    /* The same offset in two regions (the heap and the static data) need not share a home. */
    int differ = 0;
    for (int i = 0; i < 16; i++)
        differ += lock_home_pe(0, (size_t)i * 8, 16) != lock_home_pe(1, (size_t)i * 8, 16);
    UNIT_CHECK(differ > 0, "16 offsets in regions 0 and 1 all share their homes");
    return unit_finish("test_lock_home");
}
