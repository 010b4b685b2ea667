/* SPDX-License-Identifier: BSD-3-Clause */
/* The wait policy (common/wait.h): a machine with more PEs than this process's CPUs spins a few
 * dozen times before yielding; otherwise for about 200 us, which is more spins than that on any
 * CPU (a pause takes well under 3 us), and a wait on a peer's copy as long as the copy may take
 * (200 KB per 200 us), up to 25 times the usual. A long wait yields once per spin limit, not at
 * every step once the limit has passed. A wait for the transport spins 200 us by the clock (20 us
 * oversubscribed) before it may sleep, and sleeps only while the machine's runnable tasks
 * outnumber its CPUs and the thread's own core is wanted. Waits that end just after handing the
 * core to another waiter spin less, and leave the core. A wait for another thread of the
 * process sleeps until that thread wakes it, yielding once at most. */
#define _GNU_SOURCE
#include "../../common/wait.h"
#include "unit.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

/* Counts the yields of the wait loops under test (this definition wins over the C library's). */
static int yields;
int sched_yield(void)
{
    yields++;
    return 0;
}

/* Records the affinity masks a wait sets, and sets none: a move off the core is a call that leaves
 * out the current CPU, then one that gives the mask back. */
static int affinity_calls;
static cpu_set_t affinity_set[2];
int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask)
{
    (void)pid;
    if (affinity_calls < 2)
        memcpy(&affinity_set[affinity_calls], mask,
               size < sizeof(cpu_set_t) ? size : sizeof(cpu_set_t));
    affinity_calls++;
    return 0;
}

/* Hand-offs (yields that gave the core away for 5 us) shorten the spins and, after eight waits in
 * a row, move the thread off its core once per 100 ms, unless the machine is oversubscribed or
 * the thread may run on one CPU only. A time slice of another job (4 ms), or a yield the kernel
 * answered at once, is no hand-off. */
static void check_hand_offs(const cpu_set_t *cpus)
{
    int n_cpus = CPU_COUNT(cpus);
    wait_policy_init(n_cpus);
    unsigned base = wait_spins_before_yield;
    UNIT_CHECK(wait_spin_limit(base) == base, "no hand-off yet: %u spins, expected %u",
               wait_spin_limit(base), base);
    wait_spin_adapt(5000);
    UNIT_CHECK(wait_spin_limit(base) == base / 2, "one hand-off: %u spins, expected %u",
               wait_spin_limit(base), base / 2);
    wait_spin_adapt(4000000);
    UNIT_CHECK(wait_spin_limit(base) == base, "a time slice after it: %u spins, expected %u",
               wait_spin_limit(base), base);
    UNIT_CHECK(affinity_calls == 0, "%d affinity calls before eight hand-offs", affinity_calls);

    for (int i = 0; i < 7; i++)
        wait_spin_adapt(5000);
    wait_spin_adapt(0);
    UNIT_CHECK(affinity_calls == 0, "seven hand-offs, then a wait without one: %d affinity calls",
               affinity_calls);
    for (int i = 0; i < 7; i++)
        wait_spin_adapt(5000);
    /* halved 7 times, doubled once, halved 7 more times */
    UNIT_CHECK(wait_spin_limit(base) == (base >> 13 >= 64 ? base >> 13 : 64),
               "thirteen halvings net: %u spins", wait_spin_limit(base));
    long long moved_ns = wait_now_ns();
    wait_spin_adapt(5000);
    int cpu = sched_getcpu();
    if (n_cpus >= 2 && cpu >= 0) {
        UNIT_CHECK(affinity_calls == 2, "eight hand-offs on %d CPUs: %d affinity calls, expected 2",
                   n_cpus, affinity_calls);
        cpu_set_t expect = *cpus;
        CPU_CLR(cpu, &expect);
        UNIT_CHECK(CPU_EQUAL(&affinity_set[0], &expect) && CPU_EQUAL(&affinity_set[1], cpus),
                   "the move did not leave out CPU %d, then give the mask back", cpu);
    } else {
        UNIT_CHECK(affinity_calls == 0, "a thread on one CPU moved (%d affinity calls)",
                   affinity_calls);
    }
    int moves = affinity_calls;
    for (int i = 0; i < 16; i++)
        wait_spin_adapt(5000);
    /* A test descheduled for 100 ms in between may move once more, rightly. */
    int late = wait_now_ns() - moved_ns >= 100000000LL;
    UNIT_CHECK(affinity_calls == moves || (late && affinity_calls == moves + 2),
               "a second move within 100 ms (%d affinity calls)", affinity_calls);
    for (int i = 0; i < 16; i++)
        wait_spin_adapt(0);
    UNIT_CHECK(wait_spin_limit(base) == base,
               "after waits without hand-offs: %u spins, expected %u", wait_spin_limit(base), base);

    wait_policy_init(n_cpus + 1);
    UNIT_CHECK(wait_spin_limit(64) == 64 && wait_spin_limit(16) == 16,
               "oversubscribed: the limits asked for are kept");
    for (int i = 0; i < 16; i++)
        wait_spin_adapt(5000);
    UNIT_CHECK(affinity_calls == moves, "an oversubscribed machine's thread moved");
    UNIT_CHECK(wait_yield() == 0, "an oversubscribed machine's yield was measured");
}

/* A thread's core counts as shared once a window of 10 ms or more closes with more than a tenth
 * of it spent runnable but waiting for a CPU; until one has closed it does not, and where the
 * kernel does not tell the run delay it does (a wait then sleeps as before). */
static void check_core_shared(void)
{
    UNIT_CHECK(wait_schedstat_run_delay("244216 22307 1\n") == 22307,
               "schedstat \"244216 22307 1\": run delay %lld, expected 22307",
               wait_schedstat_run_delay("244216 22307 1\n"));
    UNIT_CHECK(wait_schedstat_run_delay("") == -1 && wait_schedstat_run_delay("12") == -1 &&
                   wait_schedstat_run_delay("12 x 3") == -1,
               "unreadable schedstat text gave a run delay");

    const long long ms = 1000000;
    struct wait_share_window window = {0, 0, 0};
    UNIT_CHECK(wait_share_window_close(&window, 100 * ms, 5 * ms) == 0,
               "the first reading called the core shared");
    UNIT_CHECK(wait_share_window_close(&window, 110 * ms, 8 * ms) == 1,
               "3 ms of run delay in 10 ms read as a core of its own");
    UNIT_CHECK(wait_share_window_close(&window, 120 * ms, 8 * ms + 900000) == 0,
               "0.9 ms of run delay in 10 ms read as a shared core");
    UNIT_CHECK(wait_share_window_close(&window, 130 * ms, -1) == 1,
               "an unknown run delay read as a core of its own");
    UNIT_CHECK(wait_share_window_close(&window, 140 * ms, 9 * ms) == 1 &&
                   wait_share_window_close(&window, 150 * ms, 9 * ms) == 0,
               "after an unknown reading: not the same window's verdict, then none shared");

    /* The kernel tells every thread its run delay: the first call opens a window, and calls
     * within it read nothing new. */
    long long now = wait_now_ns();
    if (wait_core_shared(now) == 0)
        UNIT_CHECK(wait_core_shared(now + WAIT_SHARE_WINDOW_NS - 1) == 0,
                   "a verdict within the first window");
    else
        UNIT_CHECK(0, "this thread's run delay could not be read (/proc/thread-self/schedstat)");
}

/* Lowers the word three times, sleeping before each, so the waiter must sleep too. */
static void *lower_word(void *word)
{
    for (int i = 0; i < 3; i++) {
        nanosleep(&(struct timespec){0, 30000000}, NULL);
        wait_word_decrement(word);
    }
    return NULL;
}

static void test_word_zero(void)
{
    int word = 3;
    pthread_t thread;
    yields = 0;
    UNIT_CHECK(pthread_create(&thread, NULL, lower_word, &word) == 0, "pthread_create failed");
    wait_word_zero(&word);
    UNIT_CHECK(__atomic_load_n(&word, __ATOMIC_ACQUIRE) == 0,
               "the wait returned with the word at %d", word);
    UNIT_CHECK(yields <= 1,
               "a 90 ms wait for another thread yielded %d times, expected one at most", yields);
    pthread_join(thread, NULL);

    word = 0;
    wait_word_zero(&word);
    word = 1;
    wait_word_decrement(&word);
    UNIT_CHECK(word == 0, "a decrement without a waiter left %d", word);
}

int main(void)
{
    cpu_set_t cpus;
    UNIT_CHECK(sched_getaffinity(0, sizeof(cpus), &cpus) == 0, "sched_getaffinity failed");
    int n_cpus = CPU_COUNT(&cpus);

    wait_policy_init(n_cpus + 1);
    UNIT_CHECK(wait_spins_before_yield == 64, "oversubscribed: %u spins, expected 64",
               wait_spins_before_yield);
    UNIT_CHECK(wait_spin_ns == 20000,
               "oversubscribed: a %lld ns spin for the transport, "
               "expected 20000",
               wait_spin_ns);

    wait_policy_init(n_cpus);
    UNIT_CHECK(wait_spins_before_yield > 64, "one PE per CPU: %u spins, expected more than 64",
               wait_spins_before_yield);

    UNIT_CHECK(wait_spin_ns == 200000,
               "one PE per CPU: a %lld ns spin for the transport, "
               "expected 200000",
               wait_spin_ns);

    UNIT_CHECK(wait_loadavg_contended("2.51 2.91 2.63 3/92 11852\n", 2) == 1,
               "3 runnable on 2 CPUs read as uncontended");
    UNIT_CHECK(wait_loadavg_contended("2.51 2.91 2.63 2/92 11852\n", 2) == 0,
               "2 runnable on 2 CPUs read as contended");
    UNIT_CHECK(wait_loadavg_contended("0.00 0.01 0.05 17/1203 4\n", 64) == 0,
               "17 runnable on 64 CPUs read as contended");
    UNIT_CHECK(wait_loadavg_contended("0.00 0.01 0.05 65/1203 4\n", 64) == 1,
               "65 runnable on 64 CPUs read as uncontended");
    UNIT_CHECK(wait_loadavg_contended("", 2) == 1 && wait_loadavg_contended("1 2 3", 2) == 1 &&
                   wait_loadavg_contended("1 2 3 x/9 1", 2) == 1 &&
                   wait_loadavg_contended("1 2 3 4", 8) == 1,
               "unreadable text read as uncontended");

    unsigned base = wait_spins_before_yield;
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
    UNIT_CHECK(yields == 3, "%u steps of a %u-spin wait: %d yields, expected 3", 3 * base, base,
               yields);

    wait_policy_init(n_cpus + 1);
    UNIT_CHECK(wait_spins_before_yield == 64, "oversubscribed again: %u spins, expected 64",
               wait_spins_before_yield);
    UNIT_CHECK(wait_spins_for_copy(1 << 20) == 64,
               "oversubscribed, 1 MiB copy: %u spins, expected 64", wait_spins_for_copy(1 << 20));
    yields = 0;
    for (unsigned step = 0; step < 640; step++)
        wait_idle(&spins);
    UNIT_CHECK(yields == 10, "640 steps of a 64-spin wait: %d yields, expected 10", yields);
    test_word_zero();

    int first = -1, last = -1;
    wait_cpu_range(&first, &last);
    UNIT_CHECK(first >= 0 && first <= last && CPU_ISSET(first, &cpus) && CPU_ISSET(last, &cpus),
               "CPU range %d-%d: not the ends of this process's mask", first, last);
    int outside = -1;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &cpus) && (cpu < first || cpu > last))
            outside = cpu;
    UNIT_CHECK(outside < 0, "CPU %d of the mask lies outside the range %d-%d", outside, first,
               last);

    check_hand_offs(&cpus);
    check_core_shared();
    return unit_finish("test_wait");
}
