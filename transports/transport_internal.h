/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport layer's shared state: transport.c (workers, routing to the network), am.c
 * (protocols over active messages), progress_thread.c (the progress thread and how waits spin or
 * sleep) and bulk_lane.c. */
#ifndef STRATA_TRANSPORT_INTERNAL_H
#define STRATA_TRANSPORT_INTERNAL_H

#include "../common/log.h"
#include "../common/wait.h"
#include "network.h"
#include "transport.h"

#include <pthread.h>
#include <time.h>

#define TRANSPORT_FLUSH_BATCH 64 /* flush messages in flight at once */

/* How this worker reaches a peer, known once it has connected. */
enum transport_reach { TRANSPORT_REACH_UNKNOWN, TRANSPORT_REACH_DIRECT, TRANSPORT_REACH_MESSAGE };

/* 32 bytes per PE of the job. */
struct transport_peer {
    /* REACH_MESSAGE: the network performs every operation to this peer at its progress engine,
     * in the order sent, on one lane, so this PE sends its own one-way messages there instead. */
    int reach;
    /* Operations sent there by message, and how many of them a flush has confirmed done. */
    uint32_t posted, confirmed;
    /* Short one-way puts and atomics gathered for it (the worker's batch, under its lock):
     * batch_len bytes of records in batch (AM_BATCH_BYTES, allocated with the first record;
     * batch_len is read without the lock to skip it when 0), at batch_slot of the batch's list. */
    uint32_t batch_len, batch_slot;
    char *batch;
};

struct transport_worker {
    struct transport_worker_counts counts; /* first: transport.h reads it inline */
    struct transport *t;
    struct network_worker *net;
    struct transport_peer *peers;
    int *connected;               /* the PEs reached from here, in the order they were */
    size_t n_connected;           /* grows under connect_lock; read without it */
    pthread_mutex_t connect_lock; /* a peer is connected once, by one thread */
    struct transport_worker *next;
    /* Active-message puts sent and not yet acknowledged by their targets: to memory only its
     * owner can touch (a fence waits for them), and to peers reached by message (only a flush
     * does: their lane keeps them in order). */
    uint64_t am_unacked, puts_unacked;
    /* Operations sent by message to any peer, and how many a flush of every peer has confirmed:
     * equal, such a flush has nothing to ask (no walk over the connected peers). */
    uint32_t posted_all, confirmed_all;
    /* Chunks of non-blocking gets from peers reached by message not yet answered (a flush
     * waits for them), and whether a target failed one since the last flush. */
    uint64_t gets_unanswered;
    int gets_failed;
    /* Short non-blocking puts to peers reached by message, gathered into one message per peer
     * (am_batch_put), and in a batch session (batch_hint) short blocking puts and non-fetching
     * atomics too: a peer's leaves when anything else goes to it, when full, at a fence or a
     * flush, when the PE waits, and at the session's end. */
    int batch_hint;
    pthread_t hint_thread; /* the thread that turned batch_hint on */
    struct transport_batch {
        pthread_mutex_t lock;
        int *pes; /* the peers whose batch holds records (room for every PE, made with the first) */
        size_t n; /* of them; read without the lock to skip the list when 0 */
    } batch;
    int idle; /* its context was destroyed: kept, with its connections, for the next one */
    /* The progress thread's: counts.issued when it last found the batch holding records. */
    unsigned long batch_seen_issued;
};

/* The progress thread (progress_thread.c): serves what peers send this PE while none of its own
 * threads is in a wait, which would serve it anyway. */
struct transport_progress {
    pthread_t thread;
    int running;
    int stop; /* set by transport_fini, with wake_fd written */
    /* An eventfd beside the workers' event descriptors, written to stop the thread, or to wake
     * it when work appears that it may not have listed (progress_thread_work_added): set from
     * before it lists the workers it serves until it sleeps for a while only (wake_wanted). */
    int wake_fd;
    int wake_wanted;
    unsigned interval_us; /* how often it looks again while the PE's threads wait */
    /* Waits of this PE's threads, which progress the worker themselves: the low half counts
     * those under way, the high half those ever begun, collectives and blocking calls that
     * needed no wait included (so a look tells whether any began since the last look). */
    uint64_t waits;
    int timer_fd;                     /* the thread's next look, pushed back by the PE's waits */
    long long look_due_ns;            /* when it is set to come (wait_now_ns) */
    long long push_spacing_ns;        /* how far a wait pushes it back beyond the longest pause */
    long long called_due_ns;          /* when a call that needed no wait is counted next */
    long long called_progress_due_ns; /* when such a call progresses next */
};

struct bulk_lane;

#define TRANSPORT_MAX_REGIONS 64
/* A region's keys as peers find them: named by generation in the exchange, or, where keys_home,
 * in each PE's region home_id at home_offset (transport_region_keys_at). */
struct transport_region {
    unsigned generation;
    int keys_home;
    int home_id;
    size_t home_offset;
};

struct transport {
    struct transport_config config;
    const struct network_ops *ops;
    struct network *net;
    struct bulk_lane *bulk; /* the bulk lane (bulk_lane.c), or NULL where it is off */
    const struct transport_target_ops *target_ops;
    transport_message_handler message_handlers[TRANSPORT_MESSAGE_KINDS];
    void (*served_hook)(void);
    struct transport_worker *workers; /* the default worker first */
    pthread_mutex_t workers_lock;
    unsigned batch_hints;    /* workers whose batch_hint is on */
    int atomics;             /* the network's own (network_attr) */
    int network_cpu_atomics; /* network_attr's cpu_atomics */
    /* Puts-with-signal of up to signal_message_max bytes go as one message (transport_init) */
    int signals_by_message;
    size_t signal_message_max;
    struct transport_region regions[TRANSPORT_MAX_REGIONS];
    struct transport_progress progress;
};

/* ---- The progress thread and waits (progress_thread.c) ---- */
/* Work a progress thread that serves the workers may not have listed: a worker's first
 * operation since its last flush, or its batch's first record. Wakes the thread where it wants
 * that. */
void progress_thread_work_added(struct transport *t);
/* Called by the PE's threads at every step that progresses the workers, with events or not:
 * keeps the progress thread from waking while they do (steps that serve peers' requests are most
 * of them, so calling it only from idle steps would let the thread wake). */
void progress_thread_postpone(struct transport_progress *p);
/* Progresses w and the default worker, which peers' requests reach. Returns their events. */
unsigned transport_progress_with_default(struct transport_worker *w);
/* Stops the progress thread, if it runs (before the workers go). */
void progress_thread_stop(struct transport *t);
/* Arms the n workers and sleeps until one of them or extra_fd (-1: none) has an event
 * (extra_events, for poll), or timeout passes (NULL: no limit). Returns 0 once it has slept or
 * found an event pending (progress them next), or -1 when a worker cannot be slept on. */
int progress_workers_sleep(struct transport_worker *const *workers, int n, int extra_fd,
                           short extra_events, const struct timespec *timeout);
/* A socket that this thread's waits also wait to write to (-1: none): a wait that sleeps wakes
 * once it can. */
void progress_wait_also_writable(int fd);

/* Counts an operation that only a flush completes, once it is issued. The first since the last
 * flush may wait on w (a new connection's wire-up, a full socket) for a progress thread that
 * serves only the workers it listed. */
static inline void transport_count_issued(struct transport_worker *w)
{
    unsigned long before = __atomic_fetch_add(&w->counts.issued, 1, __ATOMIC_SEQ_CST);
    if (before == __atomic_load_n(&w->counts.flushed, __ATOMIC_RELAXED))
        progress_thread_work_added(w->t);
}
/* Whether this worker reaches pe only by message, connecting to it first: 1, 0, or -1. */
int transport_peer_by_message(struct transport_worker *w, int pe);

/* ---- Protocols over active messages (am.c) ----
 * For memory only its owner can touch: requests performed by the target's callbacks
 * (transport_target_ops), answered. To peers reached by message: one-way puts and atomics,
 * without an answer, in the order sent (one lane), and a flush that asks the target to answer
 * once everything sent before is done. */
/* The handlers of every active message of am.c, by id (config.handlers of the network). */
void am_handlers(network_am_handler handlers[NETWORK_AM_IDS]);
/* Writes len bytes of src at (id, offset) of pe (none when len is 0), then performs op with
 * value on the size-byte word at (sig_id, sig_offset) (none when op is AM_POST_NO_OP).
 * Returns when src may be reused. awaited: a flush waits for it (every message but a barrier's
 * notification and a collective's data and counts, whose arrival is what their target waits for
 * before it goes on; finalize's barrier and fence then see them arrive before anyone leaves). */
#define AM_POST_NO_OP (-1)
int am_post(struct transport_worker *w, int pe, int id, size_t offset, const void *src, size_t len,
            int sig_id, size_t sig_offset, int op, uint64_t value, size_t size, int awaited);
/* A put to a peer reached by message, which the target acknowledges: a put and a quiet take one
 * message each way. Returns when src may be reused. */
int am_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src, size_t len);
/* A non-blocking put of at most AM_BATCH_PUT_MAX bytes to a peer reached by message: added to
 * w's batch; a flush waits for it. Returns 0 or -1. */
#define AM_BATCH_PUT_MAX 256
int am_batch_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                 size_t len);
/* A non-fetching atomic (op a transport_amo, on a size-byte word) to a peer reached by message,
 * added to w's batch; a flush waits for it. Returns 0 or -1. */
int am_batch_atomic(struct transport_worker *w, int pe, int id, size_t offset, int op,
                    uint64_t value, size_t size);
/* Sends every batch of w that holds records. try: unless another thread is at it (a wait's step,
 * which may come from inside a send of this thread). Returns 0 or -1. */
int am_batch_send(struct transport_worker *w, int try);
/* Sends w's batch for pe if it holds records: what goes to pe after it by another way must not
 * overtake it. Returns 0 or -1. */
int am_batch_before(struct transport_worker *w, int pe);
/* Sends the batches of the workers in a batch session that this thread may use (a thread-safe
 * one, or one whose session it started), unless another thread is at it: a thread that waits
 * may be waiting for what they gathered. */
void am_batch_send_sessions(struct transport *t);
/* Gets of at least this many bytes from a peer reached by message go as this PE's own requests
 * (transport_am_get) rather than the network's emulated get. */
#define AM_GET_MIN 4096
/* A non-blocking get of len bytes (at least AM_GET_MIN) from a peer reached by message: dest is
 * filled by the time a flush of w returns. Returns 0 or -1. */
int am_get_nbi(struct transport_worker *w, int pe, int id, size_t offset, void *dest, size_t len);
/* Waits until every active-message put of w to memory only its owner can touch has been
 * performed by its target. */
int am_wait_acks(struct transport_worker *w);
/* Waits until every am_put of w has been acknowledged and every am_get_nbi answered. */
int am_wait_answers(struct transport_worker *w);
/* Counts an operation to a peer reached by message that a flush must confirm. */
static inline void am_posted(struct transport_worker *w, int pe)
{
    __atomic_add_fetch(&w->peers[pe].posted, 1, __ATOMIC_RELEASE);
    __atomic_add_fetch(&w->posted_all, 1, __ATOMIC_RELEASE);
    transport_count_issued(w);
}
/* Waits until every operation of w to pe (every peer when pe < 0) reached by message and issued
 * before the call has been performed by its target. Returns 0 or -1. */
int am_flush(struct transport_worker *w, int pe);

/* ---- The bulk lane (bulk_lane.c) ----
 * A one-way message of at least BULK_LANE_MIN bytes that no flush waits for (a collective's
 * data) to a peer reached by message over TCP: its header goes through the network (in order
 * with everything else), its data on a TCP connection of this PE's own to the peer, which the
 * target's handler of the header reads straight into place, where the network's messages land
 * in its receive segment and are copied from there. It costs the sender a send and the target a
 * receive more a message, and saves the target a copy, which pays where the target has no time
 * to spare: for messages of 256 KiB and more. */
#define BULK_LANE_MIN ((size_t)256 * 1024)
/* Opens this PE's listening socket and publishes how peers reach it (where config.bulk_lane is
 * on and the network carries TCP; otherwise it publishes that it cannot be reached). Returns 0,
 * or -1 when the exchange fails. */
int bulk_lane_init(struct transport *t, const struct network_attr *attr);
void bulk_lane_fini(struct transport *t);
/* Begins a message of len bytes of src to pe on the lane, writing what the socket takes of its
 * first part (the rest follows the header, in bulk_lane_finish): 0 (the lane is pe's alone until
 * bulk_lane_finish), or 1 where it cannot be used (w is a context's worker, pe has no lane or
 * cannot be reached: send through the network instead). */
int bulk_lane_begin(struct transport_worker *w, int pe, const void *src, size_t len);
/* Once the message's header went through the network (announced; 0: it could not, and the lane
 * closes, since the peer would take what went of the data for another message's): writes the
 * rest, progressing w meanwhile. Returns 0, or -1. */
int bulk_lane_finish(struct transport_worker *w, int pe, int announced);
/* Inside the handler of a header from pe: reads its len bytes into dest (NULL: reads them
 * away), writing this PE's own messages meanwhile. Ends the job if the data cannot be read. */
void bulk_lane_receive(struct transport *t, int pe, void *dest, size_t len);

#endif
