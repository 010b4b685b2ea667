/* The wait policy (common/wait.h): a machine with more PEs than this process's CPUs spins a few
 * dozen times before napping; otherwise for about 200 us, which is more spins than that on any
 * CPU (a pause takes well under 3 us), and a wait on a peer's copy as long as the copy may take
 * (200 KB per 200 us), up to 25 times the usual. A long wait naps once per spin limit, not at
 * every step once the limit has passed, and never calls sched_yield (see wait_nap). */
#define _GNU_SOURCE
#include "../../common/wait.h"
#include "unit.h"

#include <sched.h>

/* Counts the naps and yields of the wait loops under test (these definitions win over the C
 * library's). */
static int naps, yields;
int nanosleep(const struct timespec *duration, struct timespec *left)
{
    (void)duration, (void)left;
    naps++;
    return 0;
}

int sched_yield(void)
{
    yields++;
    return 0;
}

int main(void)
{
    cpu_set_t cpus;
    UNIT_CHECK(sched_getaffinity(0, sizeof(cpus), &cpus) == 0, "sched_getaffinity failed");
    int n_cpus = CPU_COUNT(&cpus);

    wait_policy_init(n_cpus + 1);
    UNIT_CHECK(wait_spins_before_nap == 64, "oversubscribed: %u spins, expected 64",
               wait_spins_before_nap);

    wait_policy_init(n_cpus);
    UNIT_CHECK(wait_spins_before_nap > 64, "one PE per CPU: %u spins, expected more than 64",
               wait_spins_before_nap);

    unsigned base = wait_spins_before_nap;
    UNIT_CHECK(wait_spins_for_copy(0) == base && wait_spins_for_copy(399999) == base,
               "short copies: %u and %u spins, expected %u", wait_spins_for_copy(0),
               wait_spins_for_copy(399999), base);
    UNIT_CHECK(wait_spins_for_copy(4 << 20) == base * ((4 << 20) / 200000),
               "4 MiB copy: %u spins, expected %u", wait_spins_for_copy(4 << 20),
               base * ((4 << 20) / 200000));
    UNIT_CHECK(wait_spins_for_copy((size_t)1 << 40) == base * 25,
               "a terabyte's copy: %u spins, expected the cap %u",
               wait_spins_for_copy((size_t)1 << 40), base * 25);

    unsigned spins = 0;
    for (unsigned step = 0; step < 3 * base; step++)
        wait_idle(&spins);
    UNIT_CHECK(naps == 3, "%u steps of a %u-spin wait: %d naps, expected 3", 3 * base, base, naps);

    wait_policy_init(n_cpus + 1);
    UNIT_CHECK(wait_spins_before_nap == 64, "oversubscribed again: %u spins, expected 64",
               wait_spins_before_nap);
    UNIT_CHECK(wait_spins_for_copy(1 << 20) == 64,
               "oversubscribed, 1 MiB copy: %u spins, expected 64", wait_spins_for_copy(1 << 20));
    naps = 0;
    for (unsigned step = 0; step < 640; step++)
        wait_idle(&spins);
    UNIT_CHECK(naps == 10, "640 steps of a 64-spin wait: %d naps, expected 10", naps);
    UNIT_CHECK(yields == 0, "the waits called sched_yield %d times, expected never", yields);
    return unit_finish("test_wait");
}
