#include "../transports/transport.h"
#include "runtime.h"

#include <sched.h>

/* Spinning a little catches a peer that answers within a few hundred nanoseconds; after that the
 * CPU is handed over, because with more PEs than cores the peer we wait for may need this core. */
#define PROGRESS_SPINS_BEFORE_YIELD 64

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

void progress_wait_step(unsigned *spins)
{
    if (rt.worker)
        transport_progress(rt.worker);
    if (++*spins < PROGRESS_SPINS_BEFORE_YIELD) {
        cpu_relax();
        return;
    }
    sched_yield();
}
