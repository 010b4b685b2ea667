/* SPDX-License-Identifier: BSD-3-Clause */
/* The wait policy's calibration (wait.h). */
#define _GNU_SOURCE
#include "wait.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define WAIT_SPINS_OVERSUBSCRIBED 64
#define WAIT_SPIN_NS 200000
#define WAIT_SPIN_NS_OVERSUBSCRIBED 20000
#define WAIT_CALIBRATION_SPINS 4096
#define WAIT_SPINS_MAX 1000000 /* against a clock that misreads the calibration */

/* Bytes a copy moves in WAIT_SPIN_NS, on the slow side (1 GB/s: a core shared with another job,
 * or memory across sockets). */
#define WAIT_SPIN_COPY_BYTES 200000
#define WAIT_COPY_BUDGETS_MAX 25 /* about 5 ms */

unsigned wait_spins_before_yield = WAIT_SPINS_OVERSUBSCRIBED;
long long wait_spin_ns = WAIT_SPIN_NS_OVERSUBSCRIBED;
static int wait_oversubscribed = 1;
static int wait_loadavg_fd = -1; /* kept open: read once per long wait's spin */
static long wait_machine_cpus = 1;

long long wait_now_ns(void)
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

int wait_machine_oversubscribed(void)
{
    return wait_oversubscribed;
}

int wait_loadavg_contended(const char *loadavg, long cpus)
{
    /* "0.52 0.58 0.59 3/456 12345": the fourth field counts the runnable tasks */
    const char *field = loadavg;
    for (int i = 0; i < 3 && field; i++)
        if ((field = strchr(field, ' ')))
            field++;
    char *end;
    long runnable = field ? strtol(field, &end, 10) : 0;
    return !field || end == field || *end != '/' || runnable > cpus;
}

int wait_cores_contended(void)
{
    char text[128];
    ssize_t len = wait_loadavg_fd >= 0 ? pread(wait_loadavg_fd, text, sizeof(text) - 1, 0) : -1;
    if (len <= 0)
        return 1;
    text[len] = '\0';
    return wait_loadavg_contended(text, wait_machine_cpus);
}

long long wait_schedstat_run_delay(const char *schedstat)
{
    char *end;
    strtoull(schedstat, &end, 10);
    if (end == schedstat || *end != ' ')
        return -1;
    const char *field = end + 1;
    long long delay = (long long)strtoull(field, &end, 10);
    return end == field ? -1 : delay;
}

int wait_share_window_close(struct wait_share_window *window, long long now, long long run_delay_ns)
{
    if (run_delay_ns < 0)
        window->shared = 1;
    else if (window->since_ns && window->run_delay_ns >= 0)
        window->shared = (run_delay_ns - window->run_delay_ns) * 10 > now - window->since_ns;
    window->since_ns = now;
    window->run_delay_ns = run_delay_ns;
    return window->shared;
}

/* Opened for each read, once a window at most: a descriptor kept per thread would outlive the
 * threads that exit. */
static long long wait_thread_run_delay(void)
{
    char text[96];
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    ssize_t len = fd >= 0 ? pread(fd, text, sizeof(text) - 1, 0) : -1;
    if (fd >= 0)
        close(fd);
    if (len <= 0)
        return -1;
    text[len] = '\0';
    return wait_schedstat_run_delay(text);
}

int wait_core_shared(long long now)
{
    static __thread struct wait_share_window window;
    if (window.since_ns && now - window.since_ns < WAIT_SHARE_WINDOW_NS)
        return window.shared;
    return wait_share_window_close(&window, now, wait_thread_run_delay());
}

void wait_cpu_range(int *first, int *last)
{
    cpu_set_t cpus;
    *first = *last = 0;
    if (sched_getaffinity(0, sizeof(cpus), &cpus))
        return;
    int seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &cpus)) {
            if (!seen++)
                *first = cpu;
            *last = cpu;
        }
}

void wait_policy_init(int pes_on_my_cpus)
{
    if (wait_loadavg_fd < 0)
        wait_loadavg_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    wait_machine_cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t cpus;
    int n_cpus = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus) : 1;
    wait_oversubscribed = pes_on_my_cpus > n_cpus;
    wait_spins_before_yield =
        wait_oversubscribed ? WAIT_SPINS_OVERSUBSCRIBED : wait_spins_per_budget();
    wait_spin_ns = wait_oversubscribed ? WAIT_SPIN_NS_OVERSUBSCRIBED : WAIT_SPIN_NS;
}

#define WAIT_SPIN_SHIFT_MAX 16
/* A yield that gave the core away for less than this ran another waiter (who spins WAIT_SPIN_NS
 * at most before it yields back), not another job's time slice (1.5 ms or more by the kernel's
 * defaults on two CPUs and up). */
#define WAIT_HANDOFF_NS 1000000
#define WAIT_HANDOFFS_TO_MOVE 8
#define WAIT_MOVE_INTERVAL_NS 100000000LL /* the kernel's balancing gets time to settle */

/* How many times this thread's spins were halved, its waits in a row that ended after a hand-off
 * (wait_spin_adapt), and when it last left its core. */
static __thread unsigned wait_thread_spin_shift, wait_thread_handoffs;
static __thread long long wait_thread_moved_ns;

unsigned wait_spin_limit(unsigned limit)
{
    unsigned adapted = limit >> wait_thread_spin_shift;
    if (adapted >= WAIT_SPINS_OVERSUBSCRIBED)
        return adapted;
    return limit < WAIT_SPINS_OVERSUBSCRIBED ? limit : WAIT_SPINS_OVERSUBSCRIBED;
}

/* An oversubscribed machine's waits hand over at every yield and never leave their core: it is
 * not measured there. */
long long wait_yield(void)
{
    struct rusage before, after;
    long long start = wait_now_ns();
    if (wait_oversubscribed || getrusage(RUSAGE_THREAD, &before)) {
        sched_yield();
        return 0;
    }
    sched_yield();
    if (getrusage(RUSAGE_THREAD, &after) || after.ru_nivcsw == before.ru_nivcsw)
        return 0;
    return wait_now_ns() - start;
}

/* Takes this thread's CPU out of its affinity mask for a moment: the kernel moves it to another
 * CPU of the mask, and the mask is the program's again at once. */
static void wait_leave_core(void)
{
    cpu_set_t mask, others;
    int cpu = sched_getcpu();
    if (cpu < 0 || sched_getaffinity(0, sizeof(mask), &mask) || !CPU_ISSET(cpu, &mask) ||
        CPU_COUNT(&mask) < 2)
        return;
    others = mask;
    CPU_CLR(cpu, &others);
    if (sched_setaffinity(0, sizeof(others), &others) == 0)
        sched_setaffinity(0, sizeof(mask), &mask);
}

void wait_spin_adapt(long long last_yield_ns)
{
    if (!last_yield_ns || last_yield_ns >= WAIT_HANDOFF_NS) {
        wait_thread_handoffs = 0;
        if (wait_thread_spin_shift)
            wait_thread_spin_shift--;
        return;
    }
    if (wait_thread_spin_shift < WAIT_SPIN_SHIFT_MAX)
        wait_thread_spin_shift++;
    long long now = wait_now_ns();
    if (wait_oversubscribed || ++wait_thread_handoffs < WAIT_HANDOFFS_TO_MOVE ||
        now - wait_thread_moved_ns < WAIT_MOVE_INTERVAL_NS)
        return;
    wait_thread_handoffs = 0;
    wait_thread_moved_ns = now;
    wait_leave_core();
}

unsigned wait_spins_for_copy(size_t bytes)
{
    size_t budgets = bytes / WAIT_SPIN_COPY_BYTES;
    if (wait_oversubscribed || budgets <= 1)
        return wait_spins_before_yield;
    if (budgets > WAIT_COPY_BUDGETS_MAX)
        budgets = WAIT_COPY_BUDGETS_MAX;
    unsigned long long spins = (unsigned long long)wait_spins_before_yield * budgets;
    return spins > UINT32_MAX ? UINT32_MAX : (unsigned)spins;
}

void wait_word_zero(int *word)
{
    unsigned spins = 0;
    for (unsigned i = 0; i < wait_spins_before_yield; i++) {
        if (!__atomic_load_n(word, __ATOMIC_ACQUIRE))
            return;
        wait_idle(&spins);
    }
    int value;
    while ((value = __atomic_load_n(word, __ATOMIC_ACQUIRE)))
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

void wait_word_decrement(int *word)
{
    if (__atomic_sub_fetch(word, 1, __ATOMIC_RELEASE) == 0)
        syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
