/* The wait policy (common/wait.h): a node with more PEs than this process's CPUs spins a few
 * dozen times before yielding; otherwise for about 20 us, which is more spins than that on any
 * CPU (a pause takes well under 300 ns). */
#define _GNU_SOURCE
#include "../../common/wait.h"
#include "unit.h"

int main(void)
{
    cpu_set_t cpus;
    UNIT_CHECK(sched_getaffinity(0, sizeof(cpus), &cpus) == 0, "sched_getaffinity failed");
    int n_cpus = CPU_COUNT(&cpus);

    wait_policy_init(n_cpus + 1);
    UNIT_CHECK(wait_spins_before_yield == 64, "oversubscribed: %u spins, expected 64",
               wait_spins_before_yield);

    wait_policy_init(n_cpus);
    UNIT_CHECK(wait_spins_before_yield > 64, "one PE per CPU: %u spins, expected more than 64",
               wait_spins_before_yield);

    wait_policy_init(n_cpus + 1);
    UNIT_CHECK(wait_spins_before_yield == 64, "oversubscribed again: %u spins, expected 64",
               wait_spins_before_yield);
    return unit_finish("test_wait");
}
