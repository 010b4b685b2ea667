/* The wait policy (bottom layer, see log.h): every loop that waits for a peer spins a little,
 * which catches a peer that answers within a few microseconds, then hands the core over,
 * because with more PEs than cores the peer it waits for may need this one. */
#ifndef STRATA_COMMON_WAIT_H
#define STRATA_COMMON_WAIT_H

#include <stddef.h>
#include <time.h>

/* Spins of a wait before it naps (wait_policy_init). */
extern unsigned wait_spins_before_nap;

/* One spin: tells the core this is a wait loop. */
static inline void wait_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* Hands the core over for about the least time a sleep takes (the timer slack, 50 us by default).
 * Not sched_yield: on Linux's EEVDF scheduler (6.6 on) a yield made while another task is
 * runnable sets the yielder a whole time slice back (its deadline, in later kernels its virtual
 * runtime), so a wait that yields a few thousand times a second runs up seconds of it and its
 * thread is then passed over for hundreds of milliseconds, whatever it does next. Four PEs on this
 * 2-core machine, each putting to another and spinning on the flag that follows, saw flags arrive
 * up to 1.7 s late (more than 10 s with other jobs' processes on the cores): the scheduler kept a
 * runnable PE, or the progress thread that would have served its peer, off the core while the PEs
 * beside it ran. A sleeper is placed afresh when it wakes. */
static inline void wait_nap(void)
{
    struct timespec nap = {.tv_sec = 0, .tv_nsec = 1000};
    nanosleep(&nap, NULL);
}

/* One idle step of a wait loop: limit spins, then one nap, then limit spins again; spins
 * counts them (start it at 0). A long wait (a PE that serves others' gets from inside a barrier)
 * thus keeps its share of a core that another job's process also wants: handing the core over at
 * every step after the first limit gave that process the core again and again (two nodes whose
 * cores run another job, alternated: 8-byte get 42-49 -> 35-39 us, put + quiet 40-42 -> 31-35
 * us). On an oversubscribed machine limit is a few dozen spins, so such a wait still naps almost
 * every step, for the PEs that share its core. */
static inline void wait_idle_for(unsigned *spins, unsigned limit)
{
    if (++*spins < limit) {
        wait_pause();
    } else {
        *spins = 0;
        wait_nap();
    }
}

static inline void wait_idle(unsigned *spins)
{
    wait_idle_for(spins, wait_spins_before_nap);
}

/* Spins before napping for a wait on a peer that first copies about bytes: as long as that
 * copy may take on a core of its own, and never less than wait_spins_before_nap. A nap while
 * another job's busy process wants the core loses a time slice, longer than a megabyte's copy; on
 * an oversubscribed machine the copier may need this very core, so the short spin stays. */
unsigned wait_spins_for_copy(size_t bytes);

/* Sets how long waits spin, once the count of PEs on this machine is known (the process
 * manager's node, until the start-up exchange tells whether other nodes share the machine's
 * cores). More PEs on the machine than CPUs this process may run on: a few dozen spins, since
 * the PE waited for may need this very core. Otherwise about WAIT_SPIN_NS (200 us): a peer
 * running on another core answers within that, while a nap that lets another job's process
 * onto the core costs a whole time slice (milliseconds). */
void wait_policy_init(int pes_on_machine);

#endif
