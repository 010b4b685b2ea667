/* The wait policy's calibration (wait.h). */
#define _GNU_SOURCE
#include "wait.h"

#include <time.h>

#define WAIT_SPINS_OVERSUBSCRIBED 64
#define WAIT_SPIN_NS 20000
#define WAIT_CALIBRATION_SPINS 4096
#define WAIT_SPINS_MAX 1000000 /* against a clock that misreads the calibration */

unsigned wait_spins_before_yield = WAIT_SPINS_OVERSUBSCRIBED;

static long long wait_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Spins per WAIT_SPIN_NS on this CPU (a pause takes from a few to over a hundred cycles). */
static unsigned wait_spins_per_budget(void)
{
    long long start = wait_now_ns();
    for (int i = 0; i < WAIT_CALIBRATION_SPINS; i++)
        wait_pause();
    long long took = wait_now_ns() - start;
    if (took <= 0)
        return WAIT_CALIBRATION_SPINS;
    long long per_budget = (long long)WAIT_CALIBRATION_SPINS * WAIT_SPIN_NS / took;
    return per_budget < WAIT_SPINS_OVERSUBSCRIBED ? WAIT_SPINS_OVERSUBSCRIBED
           : per_budget > WAIT_SPINS_MAX          ? WAIT_SPINS_MAX
                                                  : (unsigned)per_budget;
}

void wait_policy_init(int pes_on_machine)
{
    cpu_set_t cpus;
    int n_cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    if (pes_on_machine > n_cpus) {
        wait_spins_before_yield = WAIT_SPINS_OVERSUBSCRIBED;
        return;
    }
    wait_spins_before_yield = wait_spins_per_budget();
}
