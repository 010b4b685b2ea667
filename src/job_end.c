/* SPDX-License-Identifier: BSD-3-Clause */
/* shmem_global_exit(0): every PE ends the job with status 0 itself.
 * A process manager's abort cannot carry status 0: Slurm cancels the step on PMIx_Abort(0) and
 * srun reports the PEs it killed (status 137), where the spec returns the status to the
 * environment. So the calling PE asks every other PE to leave, through the transport where there
 * is one (an active message, which wakes a PE's progress thread while it computes) and otherwise
 * through its node peers' mapped words. Each PE, at its next wait on a peer or as soon as its
 * progress thread serves the request, answers every PE that asked, leaves the process manager
 * as after shmem_finalize and exits with the status; the caller exits likewise once every PE has
 * answered. A PE that does not answer in time (one computing without a progress thread) leaves
 * the caller to the process manager's abort, as other statuses always do: a non-zero status is
 * the failure an abort reports.
 *
 * Several PEs may call it at once. A PE that asked never acts on another's request: that
 * request is its answer, since the other asks every PE once and leaves only once answered too.
 * And nobody waits for a reply from a PE that may have left (a fetch's reply from a caller that
 * had all its answers would never come): answers are one-way messages or stores, and a PE
 * leaves once its last one is sent. An answering PE stays until no new request has come
 * for a while, to answer callers a little later than the first. */
#include "../transports/transport.h"
#include "runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* How long the caller waits for every PE's answer before it aborts instead: a PE in a wait or
 * served by its progress thread answers within milliseconds, even on a loaded node. */
#define JOB_END_WAIT_NS (3 * 1000000000LL)
/* How long an answering PE stays after the last request it answered, for the requests of PEs
 * that call shmem_global_exit a little later than the first: it cannot answer once it has left,
 * and their callers would abort. */
#define JOB_END_QUIET_NS (100 * 1000000LL)

/* This PE's words in the library space, which node peers reach without a transport: a node
 * peer's request (0: none; otherwise the requester's world rank + 1 in the low half, the status
 * in the high half), how many node peers answered this PE's own request, and that request itself
 * (encoded the same way), which a node peer reads to answer it. */
struct job_end_words {
    uint64_t request;
    uint64_t answers;
    uint64_t requesting;
};

/* Set from init to finalize, under the lock, which a PE takes to act or to ask: it never acts on
 * a request once finalize has begun to take the spaces down, and it either acts or asks. */
static struct job_end_words *job_end_words;
static pthread_mutex_t job_end_lock = PTHREAD_MUTEX_INITIALIZER;
static int job_end_asking;
/* What came by message, noted by the transport's handlers, which touch nothing else (they may
 * run until the transport stops, after finalize): the last request (encoded like the words),
 * which PEs asked (one byte per world PE, for the life of the process: JOB_END_ASKED, then
 * JOB_END_ANSWERED once this PE answered; node peers' requests are marked answered there too),
 * and how many PEs answered this PE's own request. */
enum { JOB_END_ASKED = 1, JOB_END_ANSWERED };
static uint64_t job_end_noted;
static unsigned char *job_end_askers;
static uint64_t job_end_answers_by_message;

size_t job_end_bytes(void)
{
    return sizeof(struct job_end_words);
}

static void job_end_words_set(struct job_end_words *words)
{
    pthread_mutex_lock(&job_end_lock);
    job_end_words = words;
    pthread_mutex_unlock(&job_end_lock);
}

/* The askers' bytes, made once (the transport's handlers may need them before init is over). */
static int job_end_askers_make(int n_pes)
{
    return job_end_askers || (job_end_askers = calloc((size_t)n_pes, 1)) ? 0 : -1;
}

int job_end_init(void *words)
{
    if (job_end_askers_make(rt.n_pes))
        return -1;
    job_end_words_set(words);
    return 0;
}

void job_end_fini(void)
{
    job_end_words_set(NULL);
}

static uint64_t job_end_encode(int from, int status)
{
    return (uint64_t)(uint32_t)status << 32 | (uint32_t)(from + 1);
}

/* A message: a request to end the job with status, or (answer) a PE leaving as asked. */
struct job_end_message {
    int32_t status, answer;
};

/* Runs inside the transport's handler: notes what came, for job_end_serve to act on. */
static void job_end_on_message(int from, const void *header, size_t header_len, const void *data,
                               size_t len)
{
    struct job_end_message m;
    (void)data;
    (void)len;
    if (header_len != sizeof(m) || from < 0 || from >= rt.n_pes)
        return;
    memcpy(&m, header, sizeof(m));
    if (!m.answer)
        __atomic_store_n(&job_end_askers[from], JOB_END_ASKED, __ATOMIC_RELEASE);
    __atomic_add_fetch(&job_end_answers_by_message, 1, __ATOMIC_RELEASE);
    if (!m.answer)
        __atomic_store_n(&job_end_noted, job_end_encode(from, m.status), __ATOMIC_RELEASE);
}

static void job_end_serve(void);

int job_end_attach(struct transport *t, int n_pes)
{
    if (job_end_askers_make(n_pes))
        return -1;
    transport_set_message_handler(t, RUNTIME_MESSAGE_JOB_END, job_end_on_message);
    transport_set_served_hook(t, job_end_serve);
    return 0;
}

static int job_end_send(int pe, int status, int answer)
{
    struct job_end_message m = {status, answer};
    return transport_message(rt.worker, pe, RUNTIME_MESSAGE_JOB_END, &m, sizeof(m), NULL, 0);
}

/* Flushes stdout unless another thread of this PE holds it (the progress thread may act while
 * the program prints): this PE is about to exit without returning to it. */
static void job_end_flush_output(void)
{
    if (ftrylockfile(stdout) == 0) {
        fflush(stdout);
        funlockfile(stdout);
    }
}

/* Leaves as after shmem_finalize, so that no process manager takes the end for a death. */
static void job_end_leave(int status)
{
    job_end_flush_output();
    boot_finalize();
    _exit(status);
}

static long long job_end_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* Answers each PE that asked this one and has no answer yet: by message those that asked by
 * message (where there is a transport, every PE asks that way), in their mapped words the node
 * peers that are asking. Returns how many it answered. */
static int job_end_answer_new(void)
{
    int answered = 0;
    for (int pe = 0; pe < rt.n_pes; pe++) {
        unsigned char asked = JOB_END_ASKED;
        if (pe == rt.my_pe)
            continue;
        if (rt.transport) {
            if (__atomic_compare_exchange_n(&job_end_askers[pe], &asked, JOB_END_ANSWERED, 0,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                job_end_send(pe, 0, 1);
                answered++;
            }
            continue;
        }
        struct job_end_words *peer = shmem_ptr(job_end_words, pe);
        if (peer && job_end_askers[pe] != JOB_END_ANSWERED &&
            __atomic_load_n(&peer->requesting, __ATOMIC_ACQUIRE)) {
            __atomic_add_fetch(&peer->answers, 1, __ATOMIC_RELEASE);
            job_end_askers[pe] = JOB_END_ANSWERED;
            answered++;
        }
    }
    return answered;
}

/* Answers the PEs that asked, and those that ask until JOB_END_QUIET_NS passes without a new
 * request (or every other PE has asked, or the callers' wait is over). */
static void job_end_answer_until_quiet(void)
{
    long long now = job_end_now_ns(), quiet_since = now, end = now + JOB_END_WAIT_NS;
    int answered = 0;
    unsigned spins = 0;
    while (answered < rt.n_pes - 1 && now - quiet_since < JOB_END_QUIET_NS && now < end) {
        if (rt.transport)
            transport_progress(rt.worker);
        int more = job_end_answer_new();
        now = job_end_now_ns();
        if (more)
            quiet_since = now;
        answered += more;
        wait_idle(&spins);
    }
}

/* Answers and leaves with request's status; returns only once finalize has begun, or where this
 * PE asked too (the requests it gets are then its answers). The lock is never released on the
 * way out. */
static void job_end_act(uint64_t request)
{
    pthread_mutex_lock(&job_end_lock);
    if (!job_end_words || job_end_asking) {
        pthread_mutex_unlock(&job_end_lock);
        return;
    }
    /* The other PEs' ends from now on are this request's doing, not deaths to report. */
    boot_leaving();
    job_end_answer_until_quiet();
    job_end_leave((int)(request >> 32));
}

static void job_end_serve(void)
{
    uint64_t request = __atomic_load_n(&job_end_noted, __ATOMIC_ACQUIRE);
    if (unlikely(request))
        job_end_act(request);
}

void job_end_poll(void)
{
    uint64_t request = __atomic_load_n(&job_end_noted, __ATOMIC_ACQUIRE);
    if (!request && job_end_words)
        request = __atomic_load_n(&job_end_words->request, __ATOMIC_ACQUIRE);
    if (unlikely(request))
        job_end_act(request);
}

/* Asks pe to leave: by message where there is a transport, else through its mapped words (no
 * transport: every PE is mapped). Returns 0 or -1. */
static int job_end_ask(int pe, int status)
{
    if (rt.transport)
        return job_end_send(pe, status, 0);
    struct job_end_words *peer = shmem_ptr(job_end_words, pe);
    if (!peer)
        return -1;
    __atomic_add_fetch(&peer->answers, 1, __ATOMIC_RELEASE); /* in case pe is asking too */
    __atomic_store_n(&peer->request, job_end_encode(rt.my_pe, status), __ATOMIC_RELEASE);
    return 0;
}

/* The PEs that answered this PE's request, or asked themselves. */
static uint64_t job_end_answers(void)
{
    return __atomic_load_n(&job_end_words->answers, __ATOMIC_ACQUIRE) +
           __atomic_load_n(&job_end_answers_by_message, __ATOMIC_ACQUIRE);
}

void job_end_all(int status)
{
    pthread_mutex_lock(&job_end_lock);
    int can_ask = job_end_words && rt.init_count > 0;
    if (can_ask) {
        job_end_asking = 1; /* from now on this PE's waits leave others' requests be */
        __atomic_store_n(&job_end_words->requesting, job_end_encode(rt.my_pe, status),
                         __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&job_end_lock);
    if (!can_ask)
        return;
    boot_leaving();
    uint64_t asked = 0;
    for (int pe = 0; pe < rt.n_pes; pe++)
        if (pe != rt.my_pe && job_end_ask(pe, status) == 0)
            asked++;
    if (asked != (uint64_t)rt.n_pes - 1)
        return;
    long long deadline = job_end_now_ns() + JOB_END_WAIT_NS;
    PROGRESS_WAIT_WHILE(job_end_answers() < asked && job_end_now_ns() < deadline);
    if (job_end_answers() >= asked)
        job_end_leave(status);
}
