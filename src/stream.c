/* SPDX-License-Identifier: BSD-3-Clause */
/* Work in a GPU stream's order (shmemx.h, docs/gpu.md): each on-stream routine returns once its
 * work is enqueued on the program's stream, and the stream runs it after the work before it.
 *
 * Two ways, chosen per call, before anything is enqueued:
 * - On the stream itself: an RMA or signal whose target heap is attached here (a node peer's, or
 *   this PE's own) and in the stream's device and context, with a local buffer the copy reads or
 *   writes when the stream runs it (device or pinned memory): runtime copies, stream writes of
 *   the signal word, a kernel for a signal add and for the waits the runtime cannot compare.
 * - Through the library's agent, for everything else (the transport or the owner reaches the
 *   target, host-memory spaces, pageable buffers, barriers and collectives): the call claims a
 *   slot, whose two words in mapped host memory the stream and the agent hand the work over
 *   with. The stream writes go = 1 and waits for done == 1; the agent sees go, clears it, runs
 *   the host-ordered routine and sets done = 1; the stream then writes done = 0. Every value is
 *   fixed at enqueue, so a captured graph replays the handoff as often as it is launched: the
 *   slot of a captured call stays its own for good.
 * No host thread waits for a stream. */
#include "stream.h"

#include "../common/wait.h"
#include "../spaces/kinds/stream.h"
#include "coll/coll.h"
#include "route_target.h"
#include "team.h"

#include <pthread.h>
#include <shmemx.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- The work the agent runs ---- */
enum stream_work {
    STREAM_PUT,
    STREAM_GET,
    STREAM_PUT_SIGNAL,
    STREAM_SIGNAL_OP,
    STREAM_SIGNAL_WAIT,
    STREAM_QUIET,
    STREAM_BARRIER, /* quiet, then the team's sync */
    STREAM_SYNC,
    STREAM_COLLECTIVE,
};

struct stream_op {
    enum stream_work work;
    int nbi;
    void *dest;
    const void *source;
    size_t len;
    int pe;
    uint64_t *sig_addr;
    uint64_t signal;
    int sig_op, cmp;
    shmem_team_t team;
    struct stream_collective collective;
};

static int stream_compare(uint64_t now, int cmp, uint64_t value)
{
    switch (cmp) {
    case SHMEM_CMP_EQ:
        return now == value;
    case SHMEM_CMP_NE:
        return now != value;
    case SHMEM_CMP_GT:
        return now > value;
    case SHMEM_CMP_GE:
        return now >= value;
    case SHMEM_CMP_LT:
        return now < value;
    default:
        return now <= value;
    }
}

/* Runs op; 0 when it must be tried again (a wait whose condition does not hold yet). */
static int stream_run(const struct stream_op *op)
{
    switch (op->work) {
    case STREAM_PUT:
        (op->nbi ? shmem_putmem_nbi : shmem_putmem)(op->dest, op->source, op->len, op->pe);
        return 1;
    case STREAM_GET:
        (op->nbi ? shmem_getmem_nbi : shmem_getmem)(op->dest, op->source, op->len, op->pe);
        return 1;
    case STREAM_PUT_SIGNAL:
        (op->nbi ? shmem_putmem_signal_nbi : shmem_putmem_signal)(
            op->dest, op->source, op->len, op->sig_addr, op->signal, op->sig_op, op->pe);
        return 1;
    case STREAM_SIGNAL_OP:
        (op->sig_op == SHMEM_SIGNAL_SET ? shmem_signal_set : shmem_signal_add)(op->sig_addr,
                                                                               op->signal, op->pe);
        return 1;
    case STREAM_SIGNAL_WAIT:
        return stream_compare(shmem_signal_fetch(op->sig_addr), op->cmp, op->signal);
    case STREAM_QUIET:
        shmem_quiet();
        return 1;
    case STREAM_BARRIER:
        shmem_quiet();
        shmem_team_sync(op->team);
        return 1;
    case STREAM_SYNC:
        shmem_team_sync(op->team);
        return 1;
    case STREAM_COLLECTIVE:
        op->collective.run(&op->collective);
        return 1;
    }
    return 1;
}

/* ---- Slots: a call's work and the words its stream hands it over with ---- */
enum stream_slot_state {
    SLOT_FREE,
    SLOT_ENQUEUED,  /* waits for the stream's go */
    SLOT_WAITING,   /* a wait the agent tests again */
    SLOT_PERFORMED, /* done = 1: waits for the stream to write done = 0 */
};
#define STREAM_SLOTS 1024
static struct stream_slot {
    struct stream_op op;
    enum stream_slot_state state;
    int captured; /* part of a graph: enqueued again for its next launch, never freed */
} stream_slots[STREAM_SLOTS];
static volatile uint64_t *stream_words; /* a line per slot: go, done */
static size_t stream_lines;
static int stream_in_use;   /* slots not free */
static int stream_next;     /* where the search for a free slot starts */
static int stream_used_rma; /* some RMA went through the agent: quiet on a stream asks it too */
static pthread_mutex_t stream_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stream_wake = PTHREAD_COND_INITIALIZER;  /* the agent: a slot was taken */
static pthread_cond_t stream_freed = PTHREAD_COND_INITIALIZER; /* callers: a slot is free */
static pthread_t stream_agent_thread;
static int stream_agent_running, stream_agent_stop;

static volatile uint64_t *stream_go(int slot)
{
    return stream_words + (size_t)slot * KIND_STREAM_LINE_WORDS;
}

static volatile uint64_t *stream_done(int slot)
{
    return stream_go(slot) + 1;
}

/* One pass over the slots: runs what the streams handed over, frees what they are done with.
 * Returns whether anything moved. */
static int stream_agent_pass(void)
{
    int moved = 0;
    for (int i = 0; i < STREAM_SLOTS; i++) {
        struct stream_slot *slot = &stream_slots[i];
        enum stream_slot_state state = __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE);
        if (state == SLOT_ENQUEUED && __atomic_load_n(stream_go(i), __ATOMIC_ACQUIRE) == 1) {
            __atomic_store_n(stream_go(i), 0, __ATOMIC_RELAXED);
            state = SLOT_WAITING;
        }
        if (state == SLOT_WAITING) {
            moved = 1;
            if (!stream_run(&slot->op)) {
                __atomic_store_n(&slot->state, SLOT_WAITING, __ATOMIC_RELEASE);
                continue;
            }
            __atomic_store_n(&slot->state, SLOT_PERFORMED, __ATOMIC_RELEASE);
            __atomic_store_n(stream_done(i), 1, __ATOMIC_RELEASE);
        } else if (state == SLOT_PERFORMED &&
                   __atomic_load_n(stream_done(i), __ATOMIC_ACQUIRE) == 0) {
            moved = 1;
            pthread_mutex_lock(&stream_lock);
            slot->state = slot->captured ? SLOT_ENQUEUED : SLOT_FREE;
            if (!slot->captured) {
                stream_in_use--;
                pthread_cond_broadcast(&stream_freed);
            }
            pthread_mutex_unlock(&stream_lock);
        }
    }
    return moved;
}

/* The agent: passes while slots are in use, yielding the core between idle ones, then sleeping
 * a little once the streams have kept it idle for a while (their kernels run long). */
static void *stream_agent(void *arg)
{
    (void)arg;
    kind_stream_relax();
    unsigned spins = 0, idle = 0;
    pthread_mutex_lock(&stream_lock);
    while (!stream_agent_stop) {
        if (!stream_in_use) {
            pthread_cond_wait(&stream_wake, &stream_lock);
            continue;
        }
        pthread_mutex_unlock(&stream_lock);
        if (stream_agent_pass()) {
            idle = 0;
        } else if (++idle < 4096) {
            wait_idle(&spins);
        } else {
            nanosleep(&(struct timespec){0, 20000}, NULL);
        }
        pthread_mutex_lock(&stream_lock);
    }
    pthread_mutex_unlock(&stream_lock);
    return NULL;
}

void stream_fini(void)
{
    pthread_mutex_lock(&stream_lock);
    int running = stream_agent_running;
    stream_agent_stop = 1;
    pthread_cond_broadcast(&stream_wake);
    pthread_mutex_unlock(&stream_lock);
    if (running)
        pthread_join(stream_agent_thread, NULL);
    pthread_mutex_lock(&stream_lock);
    memset(stream_slots, 0, sizeof(stream_slots));
    stream_in_use = stream_agent_running = stream_agent_stop = stream_used_rma = 0;
    pthread_mutex_unlock(&stream_lock);
}

/* The agent runs host-ordered routines beside the program's threads: a transport without thread
 * safety (a single-threaded job without the progress thread) cannot take its calls. */
static void stream_require_agent(const char *routine)
{
    if (rt.transport && rt.thread_level != SHMEM_THREAD_MULTIPLE && !rt.knobs.PROGRESS_THREAD)
        log_fatal(routine, "this work goes through the library's agent thread, which needs "
                           "shmem_init_thread(SHMEM_THREAD_MULTIPLE) or SHMEM_PROGRESS_THREAD on");
}

/* A free slot for op, taken (under the lock). A capture takes one for good, so it cannot wait for
 * one: it reports running out. */
static int stream_claim(const char *routine, const struct kind_stream *s,
                        const struct stream_op *op)
{
    pthread_mutex_lock(&stream_lock);
    if (!stream_words)
        stream_words = kind_stream_words(&stream_lines);
    if (!stream_agent_running) {
        if (pthread_create(&stream_agent_thread, NULL, stream_agent, NULL))
            log_fatal(routine, "cannot start the library's agent thread");
        stream_agent_running = 1;
    }
    while (stream_in_use == STREAM_SLOTS) {
        if (s->capturing)
            log_fatal(routine,
                      "more than %d on-stream calls are captured or in flight: this one cannot be "
                      "captured",
                      STREAM_SLOTS);
        pthread_cond_wait(&stream_freed, &stream_lock);
    }
    int slot = stream_next;
    while (stream_slots[slot].state != SLOT_FREE)
        slot = (slot + 1) % STREAM_SLOTS;
    stream_next = (slot + 1) % STREAM_SLOTS;
    stream_slots[slot].op = *op;
    stream_slots[slot].captured = s->capturing;
    __atomic_store_n(&stream_slots[slot].state, SLOT_ENQUEUED, __ATOMIC_RELEASE);
    stream_in_use++;
    pthread_cond_broadcast(&stream_wake);
    pthread_mutex_unlock(&stream_lock);
    return slot;
}

static void stream_check_rc(const char *routine, const struct kind_stream *s, int rc,
                            const char *what)
{
    if (rc)
        log_fatal(routine, "%s refused %s on stream %p%s (error %d)", kind_stream_runtime(), what,
                  s->stream, s->capturing ? ", which is capturing" : "", rc);
}

/* Hands op to the agent in s's order. */
static void stream_to_agent(const char *routine, const struct kind_stream *s,
                            const struct stream_op *op)
{
    stream_require_agent(routine);
    if (op->work <= STREAM_SIGNAL_OP)
        __atomic_store_n(&stream_used_rma, 1, __ATOMIC_RELAXED);
    int slot = stream_claim(routine, s, op);
    stream_check_rc(routine, s, kind_stream_write(s, stream_go(slot), 1), "a stream write");
    stream_check_rc(routine, s, kind_stream_wait_value(s, stream_done(slot), 1, 1),
                    "a stream wait");
    stream_check_rc(routine, s, kind_stream_write(s, stream_done(slot), 0), "a stream write");
}

/* ---- Checks, before anything is enqueued ---- */

static struct kind_stream stream_open(const char *routine, void *stream)
{
    struct kind_stream s;
    char why[256];
    runtime_require_init(routine);
    if (kind_stream_open(stream, &s, why, sizeof(why)))
        log_fatal(routine, "%s", why);
    return s;
}

/* Whether the symmetric buffer at addr (whose region is region) is in the stream's device and
 * context: 1 for a GPU space of the stream's, 0 for a space of no GPU (host memory), which a
 * stream orders all the same; a GPU space of another device or context is an error. */
static int stream_same_device(const char *routine, const struct kind_stream *s,
                              const struct region *region, const void *addr)
{
    char device[64];
    int matches;
    if (!kind_stream_device(region->kind, s, &matches, device, sizeof(device)))
        return 0;
    if (!matches)
        log_fatal(routine,
                  "stream %p is not of %s, whose context holds %p: pass a stream of the space's "
                  "device and context",
                  s->stream, device, addr);
    return 1;
}

static int stream_space_check(const char *routine, const struct kind_stream *s, const void *addr)
{
    const struct region *region = region_lookup(addr);
    return region ? stream_same_device(routine, s, region, addr) : 0;
}

/* Where the stream may write or read the target bytes itself: a heap attached here, in the
 * stream's context; NULL otherwise. */
static char *stream_target(const char *routine, const struct kind_stream *s, const void *addr,
                           size_t len, int pe)
{
    struct route_target target = route_resolve(SHMEM_CTX_DEFAULT, routine, addr, len, pe);
    int direct = stream_same_device(routine, s, target.region, addr);
    return direct && target.kind == ROUTE_KIND_COPY ? target.pointer : NULL;
}

/* ---- RMA and signals ---- */

static void stream_rma(const char *routine, enum stream_work work, void *dest, const void *source,
                       size_t len, int pe, int nbi, void *stream)
{
    struct kind_stream s = stream_open(routine, stream);
    const void *remote = work == STREAM_PUT ? dest : source;
    const void *local = work == STREAM_PUT ? source : dest;
    char *target = stream_target(routine, &s, remote, len, pe);
    stream_space_check(routine, &s, local);
    if (!len)
        return;
    if (target && kind_stream_reaches(local)) {
        stream_check_rc(routine, &s,
                        work == STREAM_PUT ? kind_stream_copy(&s, target, source, len)
                                           : kind_stream_copy(&s, dest, target, len),
                        "a copy");
        return;
    }
    struct stream_op op = {
        .work = work, .nbi = nbi, .dest = dest, .source = source, .len = len, .pe = pe};
    stream_to_agent(routine, &s, &op);
}

#define STREAM_RMA_FORMS(X)                                                                        \
    X(putmem, STREAM_PUT, 0)                                                                       \
    X(putmem_nbi, STREAM_PUT, 1) X(getmem, STREAM_GET, 0) X(getmem_nbi, STREAM_GET, 1)
#define STREAM_DEFINE_RMA(NAME, WORK, NBI)                                                         \
    void shmemx_##NAME##_on_stream(void *dest, const void *source, size_t nelems, int pe,          \
                                   void *stream)                                                   \
    {                                                                                              \
        stream_rma("shmemx_" #NAME "_on_stream", WORK, dest, source, nelems, pe, NBI, stream);     \
    }
STREAM_RMA_FORMS(STREAM_DEFINE_RMA)

#define STREAM_DEFINE_TYPED_RMA(T, N, ...)                                                         \
    void shmemx_##N##_put_on_stream(T *dest, const T *source, size_t nelems, int pe, void *stream) \
    {                                                                                              \
        stream_rma("shmemx_" #N "_put_on_stream", STREAM_PUT, dest, source, nelems * sizeof(T),    \
                   pe, 0, stream);                                                                 \
    }                                                                                              \
    void shmemx_##N##_put_nbi_on_stream(T *dest, const T *source, size_t nelems, int pe,           \
                                        void *stream)                                              \
    {                                                                                              \
        stream_rma("shmemx_" #N "_put_nbi_on_stream", STREAM_PUT, dest, source,                    \
                   nelems * sizeof(T), pe, 1, stream);                                             \
    }                                                                                              \
    void shmemx_##N##_get_on_stream(T *dest, const T *source, size_t nelems, int pe, void *stream) \
    {                                                                                              \
        stream_rma("shmemx_" #N "_get_on_stream", STREAM_GET, dest, source, nelems * sizeof(T),    \
                   pe, 0, stream);                                                                 \
    }                                                                                              \
    void shmemx_##N##_get_nbi_on_stream(T *dest, const T *source, size_t nelems, int pe,           \
                                        void *stream)                                              \
    {                                                                                              \
        stream_rma("shmemx_" #N "_get_nbi_on_stream", STREAM_GET, dest, source,                    \
                   nelems * sizeof(T), pe, 1, stream);                                             \
    }
STRATA_RMA_TYPES(STREAM_DEFINE_TYPED_RMA)

static void stream_check_sig_op(const char *routine, int sig_op)
{
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD)
        log_fatal(routine, "sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD", sig_op);
}

/* Whether the stream itself can update the signal word at sig (attached here, NULL: no): a set
 * is a stream write, an add a kernel's atomic where the runtime has one. */
static int stream_signal_direct(const struct region *region, uint64_t *sig, int sig_op)
{
    return sig && (sig_op == SHMEM_SIGNAL_SET || kind_stream_can_atomic(region->kind, sig));
}

static void stream_signal_update(const char *routine, const struct kind_stream *s,
                                 const struct region *region, uint64_t *sig, uint64_t signal,
                                 int sig_op)
{
    stream_check_rc(routine, s,
                    sig_op == SHMEM_SIGNAL_SET
                        ? kind_stream_write(s, sig, signal)
                        : kind_stream_atomic(s, region->kind, sig, TRANSPORT_AMO_ADD, signal),
                    sig_op == SHMEM_SIGNAL_SET ? "a stream write" : "a kernel (signal add)");
}

static void stream_put_signal(const char *routine, void *dest, const void *source, size_t len,
                              uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, int nbi,
                              void *stream)
{
    struct kind_stream s = stream_open(routine, stream);
    stream_check_sig_op(routine, sig_op);
    char *target = len ? stream_target(routine, &s, dest, len, pe) : NULL;
    uint64_t *sig = (uint64_t *)stream_target(routine, &s, sig_addr, sizeof(*sig_addr), pe);
    const struct region *sig_region = region_lookup(sig_addr);
    stream_space_check(routine, &s, source);
    if ((!len || (target && kind_stream_reaches(source))) &&
        stream_signal_direct(sig_region, sig, sig_op)) {
        if (len)
            stream_check_rc(routine, &s, kind_stream_copy(&s, target, source, len), "a copy");
        stream_signal_update(routine, &s, sig_region, sig, signal, sig_op);
        return;
    }
    struct stream_op op = {.work = len ? STREAM_PUT_SIGNAL : STREAM_SIGNAL_OP,
                           .nbi = nbi,
                           .dest = dest,
                           .source = source,
                           .len = len,
                           .pe = pe,
                           .sig_addr = sig_addr,
                           .signal = signal,
                           .sig_op = sig_op};
    stream_to_agent(routine, &s, &op);
}

void shmemx_putmem_signal_on_stream(void *dest, const void *source, size_t nelems,
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                    void *stream)
{
    stream_put_signal("shmemx_putmem_signal_on_stream", dest, source, nelems, sig_addr, signal,
                      sig_op, pe, 0, stream);
}

void shmemx_putmem_signal_nbi_on_stream(void *dest, const void *source, size_t nelems,
                                        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                        void *stream)
{
    stream_put_signal("shmemx_putmem_signal_nbi_on_stream", dest, source, nelems, sig_addr, signal,
                      sig_op, pe, 1, stream);
}

void shmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                void *stream)
{
    stream_put_signal("shmemx_signal_op_on_stream", NULL, NULL, 0, sig_addr, signal, sig_op, pe, 0,
                      stream);
}

/* The stream waits by itself where it can: a stream wait for ==, >= and > (as >= value + 1), a
 * kernel for the rest; else the agent tests the word until it holds. */
static int stream_wait_direct(const struct kind_stream *s, const struct region *region,
                              const uint64_t *sig, int cmp, uint64_t value)
{
    if (cmp == SHMEM_CMP_EQ || cmp == SHMEM_CMP_GE)
        return kind_stream_wait_value(s, sig, value, cmp == SHMEM_CMP_EQ);
    if (cmp == SHMEM_CMP_GT && value != UINT64_MAX)
        return kind_stream_wait_value(s, sig, value + 1, 0);
    return kind_stream_wait_kernel(s, region->kind, sig, cmp, value);
}

void shmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value,
                                        void *stream)
{
    const char *routine = "shmemx_signal_wait_until_on_stream";
    struct kind_stream s = stream_open(routine, stream);
    if (cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE)
        log_fatal(routine, "cmp %d is not a SHMEM_CMP_ constant", cmp);
    uint64_t *sig = (uint64_t *)stream_target(routine, &s, sig_addr, sizeof(*sig_addr), rt.my_pe);
    if (sig) {
        int rc = stream_wait_direct(&s, region_lookup(sig_addr), sig, cmp, cmp_value);
        if (rc != KIND_STREAM_NO_KERNEL) {
            stream_check_rc(routine, &s, rc, "a stream wait");
            return;
        }
    }
    struct stream_op op = {
        .work = STREAM_SIGNAL_WAIT, .sig_addr = sig_addr, .cmp = cmp, .signal = cmp_value};
    stream_to_agent(routine, &s, &op);
}

/* The stream's own copies and writes are complete before its later work starts: only what the
 * agent issued is left to complete. */
void shmemx_quiet_on_stream(void *stream)
{
    const char *routine = "shmemx_quiet_on_stream";
    struct kind_stream s = stream_open(routine, stream);
    if (!__atomic_load_n(&stream_used_rma, __ATOMIC_RELAXED))
        return;
    struct stream_op op = {.work = STREAM_QUIET};
    stream_to_agent(routine, &s, &op);
}

/* ---- Synchronization and collectives: the agent runs them ---- */

/* Checks what a team collective's caller can check alone; -1 for an invalid team, or one this PE
 * is not in (as the host-ordered routine returns). */
static int stream_team_check(const char *routine, shmem_team_t team)
{
    if (team == SHMEM_TEAM_INVALID || team->my_rank < 0) {
        log_error(routine, "called on %s",
                  team == SHMEM_TEAM_INVALID ? "SHMEM_TEAM_INVALID"
                                             : "a team this PE is not a member of");
        return -1;
    }
    return 0;
}

static int stream_team_work(const char *routine, enum stream_work work, shmem_team_t team,
                            void *stream)
{
    struct kind_stream s = stream_open(routine, stream);
    if (stream_team_check(routine, team))
        return -1;
    struct stream_op op = {.work = work, .team = team};
    stream_to_agent(routine, &s, &op);
    return 0;
}

void shmemx_barrier_all_on_stream(void *stream)
{
    stream_team_work("shmemx_barrier_all_on_stream", STREAM_BARRIER, SHMEM_TEAM_WORLD, stream);
}

int shmemx_barrier_on_stream(shmem_team_t team, void *stream)
{
    return stream_team_work("shmemx_barrier_on_stream", STREAM_BARRIER, team, stream);
}

void shmemx_sync_all_on_stream(void *stream)
{
    stream_team_work("shmemx_sync_all_on_stream", STREAM_SYNC, SHMEM_TEAM_WORLD, stream);
}

int shmemx_team_sync_on_stream(shmem_team_t team, void *stream)
{
    return stream_team_work("shmemx_team_sync_on_stream", STREAM_SYNC, team, stream);
}

int stream_collective(void *stream, const struct stream_collective *c)
{
    struct kind_stream s = stream_open(c->routine, stream);
    if (stream_team_check(c->routine, c->team))
        return -1;
    if (c->root < 0 || c->root >= c->team->size)
        log_fatal(c->routine, "PE_root %d is not a rank of the team (0..%d)", c->root,
                  c->team->size - 1);
    if (rt.debug && (!region_lookup(c->dest) || !region_lookup(c->source)))
        log_fatal(c->routine, "dest %p and source %p must both be symmetric", c->dest, c->source);
    if (rt.debug)
        coll_space_check(c->routine, c->team, c->dest, c->source);
    stream_space_check(c->routine, &s, c->dest);
    stream_space_check(c->routine, &s, c->source);
    struct stream_op op = {.work = STREAM_COLLECTIVE, .collective = *c};
    stream_to_agent(c->routine, &s, &op);
    return 0;
}
