/* shmem_global_exit(0): every PE ends the job with status 0 itself.
 * A process manager's abort cannot carry status 0: Slurm cancels the step on PMIx_Abort(0) and
 * srun reports the PEs it killed (status 137), where the spec returns the status to the
 * environment. So the calling PE asks every other PE to leave, through the transport where there
 * is one (an active message, which wakes a PE's progress thread while it computes) and otherwise
 * through its node peers' mapped words. Each PE, at its next wait on a peer or as soon as its
 * progress thread serves the request, acknowledges it, leaves the process manager as after
 * shmem_finalize and exits with the status; the caller exits likewise once every PE has
 * acknowledged. A PE that does not answer in time (one computing without a progress thread)
 * leaves the caller to the process manager's abort, as other statuses always do: a non-zero
 * status is the failure an abort reports. */
#include "../transports/transport.h"
#include "runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* How long the caller waits for every PE's acknowledgement before it aborts instead: a PE in a
 * wait or served by its progress thread answers within milliseconds, even on a loaded node. */
#define JOB_END_WAIT_NS (3 * 1000000000LL)

/* This PE's words in the library space: the request a node peer made of it without a transport
 * (0: none; otherwise the requester's world rank + 1 in the low half, the status in the high
 * half), and how many PEs have acknowledged its own request. */
struct job_end_words {
    uint64_t request;
    uint64_t acks;
};

/* Set from init to finalize, under the lock, which the progress thread takes to act: it never
 * acts on a request once finalize has begun to take the spaces down. Only the PE's own threads
 * read the words themselves. */
static struct job_end_words *job_end_words;
static pthread_mutex_t job_end_lock = PTHREAD_MUTEX_INITIALIZER;
/* A request that came by message (encoded like the word), noted by the transport's handler. */
static uint64_t job_end_noted;

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

void job_end_init(void *words)
{
    job_end_words_set(words);
}

void job_end_fini(void)
{
    job_end_words_set(NULL);
}

static uint64_t job_end_encode(int from, int status)
{
    return (uint64_t)(uint32_t)status << 32 | (uint32_t)(from + 1);
}

void job_end_request(int from, int status)
{
    __atomic_store_n(&job_end_noted, job_end_encode(from, status), __ATOMIC_RELEASE);
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

/* Acknowledges request and leaves; returns only once finalize has begun (the requester, without
 * this PE's answer, aborts). The lock is never released on the way out. */
static void job_end_act(uint64_t request)
{
    pthread_mutex_lock(&job_end_lock);
    if (!job_end_words) {
        pthread_mutex_unlock(&job_end_lock);
        return;
    }
    /* The other PEs' ends from now on are this request's doing, not deaths to report. */
    boot_leaving();
    int from = (int)(uint32_t)request - 1;
    /* Fetching: it has reached the requester when it returns. */
    shmem_uint64_atomic_fetch_inc(&job_end_words->acks, from);
    job_end_leave((int)(request >> 32));
}

void job_end_serve(void)
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

static long long job_end_now_ns(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* Asks pe to leave: by message where there is a transport, else through its mapped word (no
 * transport: every PE is mapped). Returns 0 or -1. */
static int job_end_ask(int pe, int status)
{
    if (rt.transport)
        return transport_job_end(rt.worker, pe, status);
    struct job_end_words *peer = shmem_ptr(job_end_words, pe);
    if (!peer)
        return -1;
    __atomic_store_n(&peer->request, job_end_encode(rt.my_pe, status), __ATOMIC_RELEASE);
    return 0;
}

void job_end_all(int status)
{
    if (!job_end_words || rt.init_count <= 0)
        return;
    boot_leaving();
    uint64_t asked = 0;
    for (int pe = 0; pe < rt.n_pes; pe++)
        if (pe != rt.my_pe && job_end_ask(pe, status) == 0)
            asked++;
    if (asked != (uint64_t)rt.n_pes - 1)
        return;
    long long deadline = job_end_now_ns() + JOB_END_WAIT_NS;
    /* A peer that asked at the same time is answered here too (progress_wait_step polls). */
    PROGRESS_WAIT_WHILE(__atomic_load_n(&job_end_words->acks, __ATOMIC_ACQUIRE) < asked &&
                        job_end_now_ns() < deadline);
    if (__atomic_load_n(&job_end_words->acks, __ATOMIC_ACQUIRE) == asked)
        job_end_leave(status);
}
