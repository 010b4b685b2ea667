/* The wait policy (bottom layer, see log.h): every loop that waits for a peer spins a little,
 * which catches a peer that answers within a few hundred nanoseconds, then hands the core over,
 * because with more PEs than cores the peer it waits for may need this one. */
#ifndef STRATA_COMMON_WAIT_H
#define STRATA_COMMON_WAIT_H

#include <sched.h>

#define WAIT_SPINS_BEFORE_YIELD 64

/* One idle step of a wait loop; spins counts them (start it at 0). */
static inline void wait_idle(unsigned *spins)
{
    if (++*spins < WAIT_SPINS_BEFORE_YIELD) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ volatile("yield");
#endif
        return;
    }
    sched_yield();
}

#endif
