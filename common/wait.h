/* SPDX-License-Identifier: BSD-3-Clause */
/* The wait policy (bottom layer, see log.h): every loop that waits for a peer spins a little,
 * which catches a peer that answers within a few microseconds, then hands the core over,
 * because with more PEs than cores the peer it waits for may need this one. */
#ifndef STRATA_COMMON_WAIT_H
#define STRATA_COMMON_WAIT_H

#include <sched.h>
#include <stddef.h>

/* Spins of a wait before it yields (wait_policy_init). */
extern unsigned wait_spins_before_yield;
/* How long a wait for a transport event spins before it sleeps until one comes
 * (wait_policy_init): a sleeper gives its core away without the penalty the kernel sets on a
 * yield, and is woken by the event itself. */
extern long long wait_spin_ns;

/* Whether this process's CPUs have more PEs to run than CPUs (wait_policy_init). */
int wait_machine_oversubscribed(void);

/* The monotonic clock, in nanoseconds. */
long long wait_now_ns(void);

/* Whether more threads of this machine want a core than it has (the kernel's count of runnable
 * tasks, /proc/loadavg): only then does a wait that sleeps give its core to anyone. On idle
 * cores a sleep only adds its wake-up (tens of microseconds for a virtual CPU that halted). */
int wait_cores_contended(void);
/* The same, read from loadavg (/proc/loadavg's text) for a machine of cpus CPUs; the count
 * includes the caller. Text it cannot read counts as contended: a sleep then costs a wake-up,
 * a spin through another job's time slice costs the slice. */
int wait_loadavg_contended(const char *loadavg, long cpus);

/* Whether this thread's core is shared with another thread that wants it: over its last window
 * (10 ms or more, up to now, from wait_now_ns), the thread spent more than a tenth of the time
 * runnable but waiting for a CPU (the kernel's run delay). A thread with a core to itself loses
 * nothing by spinning, and a sleep would only cost it a wake-up, which may also bring it onto a
 * busy core. Read at most once a window; false until the first window has closed, true where the
 * kernel does not tell. */
int wait_core_shared(long long now);

/* Its parts: the run delay in the text of /proc/thread-self/schedstat ("on-CPU ns, run delay ns,
 * time slices"; -1 where it has none), and a window that closes at now with run_delay_ns (-1:
 * unknown) and says whether the thread's core was shared; it opens the next window. */
long long wait_schedstat_run_delay(const char *schedstat);
struct wait_share_window {
    long long since_ns, run_delay_ns;
    int shared;
};
#define WAIT_SHARE_WINDOW_NS 10000000LL
int wait_share_window_close(struct wait_share_window *window, long long now,
                            long long run_delay_ns);

/* One spin: tells the core this is a wait loop. */
static inline void wait_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* Yields the core; returns for how long, in nanoseconds, another thread had it (0: the kernel
 * gave it straight back). */
long long wait_yield(void);

/* One idle step of a wait loop: limit spins, then one yield, then limit spins again; spins
 * counts them (start it at 0), and last_yield_ns (unless NULL) what the last yield returned. A long
 * wait (a PE that serves others' gets from inside a barrier) thus keeps its share of a core that
 * another job's process also wants: a yield at every step after the first limit would give that
 * process the core again and again. On an oversubscribed machine limit is a few dozen spins,
 * so such a wait still yields almost every step to the PEs that share its core. */
static inline void wait_idle_for(unsigned *spins, unsigned limit, long long *last_yield_ns)
{
    if (++*spins < limit) {
        wait_pause();
        return;
    }
    *spins = 0;
    long long away = wait_yield();
    if (last_yield_ns)
        *last_yield_ns = away;
}

static inline void wait_idle(unsigned *spins)
{
    wait_idle_for(spins, wait_spins_before_yield, NULL);
}

/* The spins before each yield of a wait that asks for limit, shortened for a thread whose recent
 * waits ended just after a hand-off (wait_spin_adapt): the peer they waited for shares this
 * thread's core and runs only once it yields. Never below a few dozen spins, as on an
 * oversubscribed machine. */
unsigned wait_spin_limit(unsigned limit);
/* Ends a wait that took at least one idle step; last_yield_ns: what its last yield returned (0
 * if it never yielded). A yield that gave the core away for less than a time slice was a
 * hand-off to another waiter on the same core (another job's process keeps it for
 * milliseconds): a wait that ended just after one halves the thread's spins (wait_spin_limit),
 * any other doubles them back towards the limit asked for. After several such waits in a row,
 * where this machine has no more of the job's PEs than CPUs, the thread leaves its core: the
 * kernel balances runnable threads by count, so two PEs on one core beside another job's
 * process on the other core would stay there, taking turns. */
void wait_spin_adapt(long long last_yield_ns);

/* Waits for another thread of this process to set *word to zero (the thread calls
 * wait_word_clear): spins as a wait loop does, then sleeps in the kernel until woken. A thread
 * that yields instead would take turns with every PE of the host, and the thread it waits for
 * (PMIx's) would get one time slice in hundreds. */
void wait_word_zero(int *word);
/* Lowers *word by one and wakes its waiter when it reaches zero; word may be gone once it is
 * zero, so nothing but its address is used after the store. */
void wait_word_decrement(int *word);

/* Spins before yielding for a wait on a peer that first copies about bytes: as long as that
 * copy may take on a core of its own, and never less than wait_spins_before_yield. A yield to
 * another job's busy process loses a time slice, longer than a megabyte's copy; on an
 * oversubscribed machine the copier may need this very core, so the short spin stays. */
unsigned wait_spins_for_copy(size_t bytes);

/* The lowest and highest CPU this process may run on (its affinity mask; 0 and 0 where the
 * kernel does not say). PEs whose ranges do not overlap never share a CPU: a job bound one PE
 * per core (mpirun --bind-to core, Open MPI's default for two processes; srun
 * --cpu-bind=cores) is no more oversubscribed than one spread over the cores by the kernel. */
void wait_cpu_range(int *first, int *last);

/* Sets how long waits spin, once the count of PEs that may run on this process's CPUs is known
 * (itself included: the PEs of the same machine whose CPU ranges overlap its own; the process
 * manager's node, until the start-up exchange tells). More such PEs than CPUs this process may
 * run on: a few dozen spins, since the PE waited for may need this very core. Otherwise about
 * WAIT_SPIN_NS (200 us): a peer running on another core answers within that, while a yield to
 * another job's process that keeps its core costs a whole time slice (milliseconds). */
void wait_policy_init(int pes_on_my_cpus);

#endif
