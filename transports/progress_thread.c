/* SPDX-License-Identifier: BSD-3-Clause */
/* The progress thread. Over TCP, and for memory the network cannot register, puts, gets and
 * atomics are performed by the target's progress engine, so a PE busy computing would stall every
 * peer that reaches it. This thread serves them, and stays out of the way otherwise:
 * - while the PE's own threads keep progressing the worker (in their waits, tests and polls), or
 *   keep calling collectives across nodes (which wait for what the thread would otherwise take
 *   in), it does not touch the worker, nor even wake: each of those pushes the thread's next
 *   look back (progress_thread_postpone). Two threads progressing one worker only
 *   fight for its lock, and on a core shared by several PEs or by another job every wake-up of
 *   this thread is taken from one of them;
 * - a look that comes due (as a batch thread, progress_thread_schedule) finds the PE computing, or
 *   off its core, or in a wait that pushes nothing back (one that progresses no transport, or
 *   another): it looks again after a pause that grows while such a wait lasts, and serves once a
 *   look finds no wait under way nor begun since the one before;
 * - while the PE computes, it progresses the default worker until nothing is left, arms the
 *   worker's event descriptor and sleeps on it, so a request from a peer is served when it
 *   arrives, not at the next poll, until the PE waits again.
 * The PE's own waits sleep on the same event descriptors between spins when other threads want
 * the machine's cores (transport_wait_idle). */
#define _GNU_SOURCE /* SCHED_BATCH, ppoll */
#include "transport_internal.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_WAIT_BEGUN                                                                        \
    (UINT64_C(1) << 32) /* one wait ever begun, in transport_progress.waits */
#define PROGRESS_WAITS_UNDER_WAY(waits) ((uint32_t)(waits))
#define PROGRESS_PAUSE_GROWTH_MAX 16 /* the longest pause, in intervals */
/* How often calls that needed no wait progress the workers themselves. */
#define PROGRESS_CALLED_EVERY_NS 100000
#define PROGRESS_PUSH_COST_SHARE                                                                   \
    256 /* pushing the look back takes at most 1/256 of a PE's time                                \
         */

/* Sets the thread's next look (timer_fd: p's, as loaded) pause_ns after now_ns (wait_now_ns). */
static void progress_thread_arm(struct transport_progress *p, int timer_fd, long long now_ns,
                                long long pause_ns)
{
    struct itimerspec when = {
        .it_value = {.tv_sec = pause_ns / 1000000000, .tv_nsec = pause_ns % 1000000000}};
    __atomic_store_n(&p->look_due_ns, now_ns + pause_ns, __ATOMIC_RELAXED);
    timerfd_settime(timer_fd, 0, &when, NULL);
}

/* Once the thread's next look is due within the longest pause, pushes it further, so that a PE
 * whose threads keep progressing the worker never wakes it: every look on a core the PE shares
 * takes time from it. Moving a timer that is the next to expire on its CPU reprograms that CPU's
 * timer, which is not cheap everywhere, so the pushes are spaced PROGRESS_PUSH_COST_SHARE times
 * the last one's cost apart (between a quarter and four times the longest pause: a PE that begins
 * to compute is served only after the look). */
void progress_thread_postpone(struct transport_progress *p)
{
    int timer_fd = __atomic_load_n(&p->timer_fd, __ATOMIC_RELAXED);
    if (timer_fd < 0)
        return;
    long long now_ns = wait_now_ns();
    long long longest_ns = (long long)p->interval_us * PROGRESS_PAUSE_GROWTH_MAX * 1000;
    if (__atomic_load_n(&p->look_due_ns, __ATOMIC_RELAXED) - now_ns > longest_ns)
        return;
    long long spacing_ns = __atomic_load_n(&p->push_spacing_ns, __ATOMIC_RELAXED);
    progress_thread_arm(p, timer_fd, now_ns, longest_ns + spacing_ns);
    spacing_ns = (wait_now_ns() - now_ns) * PROGRESS_PUSH_COST_SHARE;
    spacing_ns = spacing_ns < longest_ns / 4   ? longest_ns / 4
                 : spacing_ns > longest_ns * 4 ? longest_ns * 4
                                               : spacing_ns;
    __atomic_store_n(&p->push_spacing_ns, spacing_ns, __ATOMIC_RELAXED);
}

void transport_wait_enter(struct transport *t)
{
    __atomic_add_fetch(&t->progress.waits, PROGRESS_WAIT_BEGUN + 1, __ATOMIC_ACQ_REL);
}

void transport_wait_leave(struct transport *t)
{
    __atomic_sub_fetch(&t->progress.waits, 1, __ATOMIC_ACQ_REL);
}

/* A serving thread may take the answer of a PE's operation before the PE looks for it: the PE
 * then begins no wait, and the thread, woken by each message, would go on serving beside it. */
static void progress_thread_keep_away(struct transport *t)
{
    __atomic_add_fetch(&t->progress.waits, PROGRESS_WAIT_BEGUN, __ATOMIC_RELAXED);
}

/* Calls that need no wait keep the thread away as waits do, but progress nothing: a PE spinning
 * on them (test_lock on a lock whose queue it holds) would serve no peer, nor let its thread do
 * so, and the peer it waits for could be waiting for it. So such calls progress the workers
 * peers' requests reach, once every interval. A look comes at least an interval after the one
 * before, so counting such calls twice an interval is enough to keep the thread away, and spares
 * an atomic on a word all the PE's threads share per operation. */
void transport_progress_called(struct transport_worker *w)
{
    struct transport_progress *p = &w->t->progress;
    long long now_ns = wait_now_ns();
    if (now_ns < __atomic_load_n(&p->called_due_ns, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&p->called_due_ns, now_ns + (long long)p->interval_us * 1000 / 2,
                     __ATOMIC_RELAXED);
    if (__atomic_load_n(&p->running, __ATOMIC_RELAXED))
        progress_thread_keep_away(w->t);
    if (now_ns < __atomic_load_n(&p->called_progress_due_ns, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&p->called_progress_due_ns, now_ns + PROGRESS_CALLED_EVERY_NS,
                     __ATOMIC_RELAXED);
    transport_progress_with_default(w);
}

void transport_collective_begun(struct transport *t)
{
    progress_thread_keep_away(t);
    progress_thread_postpone(&t->progress);
}

/* A PE that waits may be waiting for what its batched puts carry (a peer polling the data
 * before it answers): they go before the wait goes on, and so do those its batch sessions
 * gathered on other contexts' workers. */
unsigned transport_progress(struct transport_worker *w)
{
    if (__atomic_load_n(&w->batch.n, __ATOMIC_ACQUIRE))
        am_batch_send(w, 1);
    if (__atomic_load_n(&w->t->batch_hints, __ATOMIC_ACQUIRE))
        am_batch_send_sessions(w->t);
    progress_thread_postpone(&w->t->progress);
    return w->t->ops->progress(w->net);
}

static int progress_thread_stopping(const struct transport_progress *p)
{
    return __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE);
}

/* Reads what fd (an eventfd or a timer descriptor) holds, so that it stops waking the thread. */
static void progress_thread_drain(int fd)
{
    uint64_t count;
    ssize_t got = read(fd, &count, sizeof(count)); /* EAGAIN: nothing, or the timer pushed back */
    (void)got;
}

/* Sleeps until the next look is due; 0 once the thread is stopped. */
static int progress_thread_await_look(struct transport_progress *p)
{
    struct pollfd fds[2] = {{.fd = p->timer_fd, .events = POLLIN},
                            {.fd = p->wake_fd, .events = POLLIN}};
    while (poll(fds, 2, -1) < 0 && errno == EINTR)
        ;
    progress_thread_drain(p->timer_fd);
    progress_thread_drain(p->wake_fd); /* work added as the thread stopped serving */
    return !progress_thread_stopping(p);
}

void progress_thread_work_added(struct transport *t)
{
    struct transport_progress *p = &t->progress;
    /* Either this sees the thread wanting a wake, or the thread, which says so before it lists
     * the workers and looks at their batches, sees this work. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&p->wake_wanted, __ATOMIC_RELAXED))
        return;
    uint64_t one = 1;
    if (write(p->wake_fd, &one, sizeof(one)) < 0)
        log_error("transport", "cannot wake the progress thread for new work");
}

int progress_workers_sleep(struct transport_worker *const *workers, int n, int extra_fd,
                           short extra_events, const struct timespec *timeout)
{
    struct pollfd fds[n + 1];
    int n_fds = 0;
    for (int i = 0; i < n; i++) {
        const struct network_ops *ops = workers[i]->t->ops;
        int fd = ops->event_fd(workers[i]->net);
        int armed = fd < 0 ? -1 : ops->arm(workers[i]->net);
        if (armed)
            return armed > 0 ? 0 : -1; /* something arrived meanwhile, or no sleep */
        fds[n_fds++] = (struct pollfd){.fd = fd, .events = POLLIN};
    }
    if (extra_fd >= 0)
        fds[n_fds++] = (struct pollfd){.fd = extra_fd, .events = extra_events};
    while (ppoll(fds, (nfds_t)n_fds, timeout, NULL) < 0 && errno == EINTR)
        ;
    return 0;
}

/* Events the transport does not signal (none are known) cost a waiter this much, not a hang; a
 * peer that answers through mapped memory is seen this late at most. */
#define PROGRESS_WAIT_SLEEP_NS 200000

#define PROGRESS_SPIN_MIN_NS 10000
#define PROGRESS_SPIN_MAX_NS                                                                       \
    5000000 /* the longest a caller asks for: a copy's wait, 25 x 200 us                           \
             */

/* This thread's spin before a sleep, when shorter than the caller's (0: not shortened). */
static __thread long long progress_thread_spin_ns;

static __thread int progress_thread_write_fd = -1;

void progress_wait_also_writable(int fd)
{
    progress_thread_write_fd = fd;
}

void transport_wait_idle(struct transport_worker *w, struct transport_idle *idle, unsigned events,
                         long long spin_ns)
{
    if (events) {
        idle->since_ns = 0;
        return;
    }
    long long now = wait_now_ns();
    if (!idle->since_ns)
        idle->since_ns = now;
    if (progress_thread_spin_ns && progress_thread_spin_ns < spin_ns)
        spin_ns = progress_thread_spin_ns;
    if (now - idle->since_ns < spin_ns) {
        idle->spun = 1;
        wait_pause();
        return;
    }
    idle->since_ns = 0;
    struct transport_worker *workers[2] = {w->t->workers, w};
    const struct timespec timeout = {0, PROGRESS_WAIT_SLEEP_NS};
    if (!wait_cores_contended()) {
        sched_yield();
        return;
    }
    /* Where no other thread wants this core a yield hands it to nobody: spin on. Not where the
     * machine has more PEs than CPUs: the PE waited for may be runnable on this very core while
     * this thread waits little for it (a PE that sleeps often is woken at once), and a spin would
     * keep it off for a time slice. */
    if (!wait_machine_oversubscribed() && !wait_core_shared(now))
        return;
    if (progress_workers_sleep(workers, w == workers[0] ? 1 : 2, progress_thread_write_fd, POLLOUT,
                               &timeout)) {
        sched_yield();
        return;
    }
    idle->slept = 1;
    progress_thread_spin_ns =
        spin_ns / 2 > PROGRESS_SPIN_MIN_NS ? spin_ns / 2 : PROGRESS_SPIN_MIN_NS;
}

void transport_wait_finish(struct transport_idle *idle)
{
    if (idle->spun && !idle->slept && progress_thread_spin_ns)
        progress_thread_spin_ns =
            progress_thread_spin_ns < PROGRESS_SPIN_MAX_NS ? progress_thread_spin_ns * 2 : 0;
}

/* Whether none of the PE's threads has begun a wait since waits was seen. */
static int progress_thread_unwaited(struct transport_progress *p, uint64_t seen)
{
    return __atomic_load_n(&p->waits, __ATOMIC_ACQUIRE) == seen;
}

/* The workers the thread serves. */
struct progress_served {
    struct transport_worker **workers;
    int n, capacity;
    /* How long it sleeps while batches are left: an interval, doubled (up to the longest pause)
     * at each look that finds one still growing, so that a PE which keeps issuing short puts
     * between bits of computing, a batch always under way, does not wake it every interval. */
    unsigned batch_pause_us;
};

/* Doubles the room for workers in served (8 at first). Returns 0 or -1. */
static int progress_served_grow(struct progress_served *served)
{
    int capacity = served->capacity ? 2 * served->capacity : 8;
    void *grown = realloc(served->workers, (size_t)capacity * sizeof(*served->workers));
    if (!grown)
        return -1;
    served->workers = grown;
    served->capacity = capacity;
    return 0;
}

/* Lists the default worker, which peers' requests reach, and every context's worker with
 * operations a quiet has yet to complete: they can wait there after their call has returned (a
 * new connection's wire-up, a full socket), and while the PE computes nothing else moves them. */
static void progress_thread_gather(struct transport *t, struct progress_served *served)
{
    served->n = 0;
    pthread_mutex_lock(&t->workers_lock);
    for (struct transport_worker *w = t->workers; w; w = w->next) {
        if (w != t->workers && !transport_flush_needed(w))
            continue;
        if (served->n == served->capacity && progress_served_grow(served))
            break; /* the default worker is listed (room for it was made first): others later */
        served->workers[served->n++] = w;
    }
    pthread_mutex_unlock(&t->workers_lock);
}

/* Sends the batches of short puts and atomics that took no record since the thread's last look
 * at them: their PE has gone on to compute, and a batch that waited for its next call had held a
 * put_nbi back all that time, from a peer that polls for it (section 4.1 of the specification).
 * A batch still growing is left to grow, and the next look comes later. Returns whether batches
 * are left. */
static int progress_thread_send_idle_batches(const struct transport_progress *p,
                                             struct progress_served *served)
{
    int left = 0, growing = 0;
    for (int i = 0; i < served->n; i++) {
        struct transport_worker *w = served->workers[i];
        if (!__atomic_load_n(&w->batch.n, __ATOMIC_RELAXED))
            continue;
        unsigned long issued = __atomic_load_n(&w->counts.issued, __ATOMIC_ACQUIRE);
        if (issued == w->batch_seen_issued)
            am_batch_send(w, 1); /* tried: the PE's own send, under way, needs no help */
        else
            growing = 1;
        w->batch_seen_issued = issued;
        left |= __atomic_load_n(&w->batch.n, __ATOMIC_RELAXED) != 0;
    }
    if (!growing)
        served->batch_pause_us = p->interval_us;
    else if (served->batch_pause_us < p->interval_us * PROGRESS_PAUSE_GROWTH_MAX)
        served->batch_pause_us *= 2;
    return left;
}

/* Sleeps on the served workers and the wake descriptor, for a while where batches are left (to
 * send them once idle; work added meanwhile waits for that). Returns what progress_workers_sleep
 * does. */
static int progress_thread_sleep(struct transport_progress *p, struct progress_served *served)
{
    int batches_left = progress_thread_send_idle_batches(p, served);
    if (batches_left)
        __atomic_store_n(&p->wake_wanted, 0, __ATOMIC_RELAXED);
    const struct timespec pause = {.tv_sec = served->batch_pause_us / 1000000,
                                   .tv_nsec = (long)(served->batch_pause_us % 1000000) * 1000};
    int rc = progress_workers_sleep(served->workers, served->n, p->wake_fd, POLLIN,
                                    batches_left ? &pause : NULL);
    progress_thread_drain(p->wake_fd);
    return rc;
}

/* Serves the workers until one of the PE's threads begins a wait (waits differs from seen), the
 * thread is stopped, or a worker cannot be slept on. The PE's first operation on a worker since
 * its flush wakes it, as a batch's first record does, so a serving thread asleep never misses a
 * context's first atomic issued after it listed the workers.
 * Returns 1 where it found nothing to do and could not sleep: it only polls, and may look less
 * often. */
static int progress_thread_serve(struct transport *t, uint64_t seen, struct progress_served *served)
{
    struct transport_progress *p = &t->progress;
    int idle_poll = 0;
    for (;;) {
        __atomic_store_n(&p->wake_wanted, 1, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_SEQ_CST); /* see progress_thread_work_added */
        progress_thread_gather(t, served);
        /* The PE's own wait takes over at once: while peers keep sending, serving until nothing
         * is left had kept this thread on the worker beside it, fighting for its lock. */
        unsigned events = 1, handled = 0;
        while (events && progress_thread_unwaited(p, seen)) {
            events = 0;
            for (int i = 0; i < served->n; i++)
                events += t->ops->progress(served->workers[i]->net);
            handled += events;
        }
        if (t->served_hook)
            t->served_hook();
        if (!progress_thread_unwaited(p, seen) || progress_thread_stopping(p))
            break;
        if (progress_thread_sleep(p, served)) {
            idle_poll = !handled;
            break;
        }
    }
    __atomic_store_n(&p->wake_wanted, 0, __ATOMIC_RELAXED);
    return idle_poll;
}

/* While the thread only looks, it is a batch thread: the kernel then lets none of its wake-ups
 * preempt the PE spinning on its core. While it serves a computing PE it is a normal thread again,
 * so that a peer's request wakes it at once. A system that forbids the switch leaves it as it was.
 */
static void progress_thread_schedule(int policy)
{
    struct sched_param param = {0};
    pthread_setschedparam(pthread_self(), policy, &param);
}

static void *progress_thread_loop(void *arg)
{
    struct transport *t = arg;
    struct transport_progress *p = &t->progress;
    struct progress_served served = {.batch_pause_us = p->interval_us};
    if (progress_served_grow(&served)) {
        log_error("transport", "out of memory: no progress thread serves this PE");
        return NULL;
    }
    unsigned pause_us = p->interval_us;
    uint64_t seen = __atomic_load_n(&p->waits, __ATOMIC_ACQUIRE);
    progress_thread_schedule(SCHED_BATCH);
    progress_thread_arm(p, p->timer_fd, wait_now_ns(), pause_us * 1000LL);
    while (progress_thread_await_look(p)) {
        uint64_t waits = __atomic_load_n(&p->waits, __ATOMIC_ACQUIRE);
        if (waits != seen || PROGRESS_WAITS_UNDER_WAY(waits)) {
            /* Off its core, in a wait that pushes nothing back, or between two calls: the PE
             * waited since the last look, or still does. */
            if (pause_us < p->interval_us * PROGRESS_PAUSE_GROWTH_MAX)
                pause_us *= 2;
        } else {
            progress_thread_schedule(SCHED_OTHER);
            /* Polling a computing PE's workers that cannot be slept on, it looks less often
             * while they stay quiet, as while the PE waits. */
            if (!progress_thread_serve(t, seen, &served))
                pause_us = p->interval_us;
            else if (pause_us < p->interval_us * PROGRESS_PAUSE_GROWTH_MAX)
                pause_us *= 2;
            progress_thread_schedule(SCHED_BATCH);
            waits = __atomic_load_n(&p->waits, __ATOMIC_ACQUIRE);
        }
        seen = waits;
        progress_thread_arm(p, p->timer_fd, wait_now_ns(), pause_us * 1000LL);
    }
    free(served.workers);
    return NULL;
}

static void progress_thread_close_fds(struct transport_progress *p)
{
    int timer_fd = __atomic_exchange_n(&p->timer_fd, -1, __ATOMIC_RELAXED);
    if (timer_fd >= 0)
        close(timer_fd);
    if (p->wake_fd >= 0)
        close(p->wake_fd);
    p->wake_fd = -1;
}

int transport_progress_thread_start(struct transport *t, unsigned interval_us)
{
    struct transport_progress *p = &t->progress;
    if (p->running)
        return 0;
    if (!t->config.thread_safe) {
        log_error("transport", "a progress thread needs a thread-safe transport");
        return -1;
    }
    p->interval_us = interval_us ? interval_us : 1;
    p->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    int timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    __atomic_store_n(&p->timer_fd, timer_fd, __ATOMIC_RELAXED);
    if (p->wake_fd < 0 || timer_fd < 0 ||
        pthread_create(&p->thread, NULL, progress_thread_loop, t)) {
        progress_thread_close_fds(p);
        return -1;
    }
    pthread_setname_np(p->thread, "shmem-progress"); /* top -H, ps -L; named before it runs */
    p->running = 1;
    return 0;
}

void progress_thread_stop(struct transport *t)
{
    struct transport_progress *p = &t->progress;
    if (!p->running)
        return;
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    uint64_t one = 1;
    if (write(p->wake_fd, &one, sizeof(one)) < 0)
        log_error("transport", "cannot wake the progress thread to stop it");
    pthread_join(p->thread, NULL);
    progress_thread_close_fds(p);
    p->running = 0;
}
