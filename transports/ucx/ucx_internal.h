/* The UCX transport's shared state: ucx.c (context, workers, RMA, atomics) and ucx_am.c (active
 * messages for memory only its owner can touch). */
#ifndef STRATA_UCX_INTERNAL_H
#define STRATA_UCX_INTERNAL_H

#include "../../common/log.h"
#include "../../common/wait.h"
#include "../transport.h"

#include <pthread.h>
#include <time.h>
#include <ucp/api/ucp.h>

#define UCX_MAX_REGIONS 64
#define UCX_BLOB_MAX 4096
#define UCX_FLUSH_BATCH 64 /* endpoint flushes in flight at once */

struct ucx_remote_region {
    uint64_t base;   /* the region's address in the peer's process */
    ucp_rkey_h rkey; /* NULL until first use */
};

/* 32 bytes per PE of the job; the regions only for PEs this worker reached. */
struct ucx_peer {
    ucp_ep_h ep;                       /* NULL until first use */
    struct ucx_remote_region *regions; /* UCX_MAX_REGIONS of them, made with the endpoint */
    /* Set with the endpoint: UCX carries everything to this peer as active messages on one lane
     * (see ucx_ep_by_message), so this PE sends its own one-way messages there instead. */
    int by_message;
    /* Operations sent there (when by_message), and how many of them a flush has confirmed done. */
    uint32_t posted, confirmed;
    /* Short one-way puts and atomics gathered for it (the worker's batch, under its lock):
     * batch_len bytes of records in batch (UCX_BATCH_BYTES, allocated with the first record;
     * batch_len is read without the lock to skip it when 0), at batch_slot of the batch's list. */
    uint32_t batch_len, batch_slot;
    char *batch;
};

struct transport_worker {
    struct transport_worker_counts counts; /* first: transport.h reads it inline */
    struct transport *t;
    ucp_worker_h worker;
    int event_fd; /* the worker's event descriptor, or -1 where it has none */
    struct ucx_peer *peers;
    int *connected;               /* the PEs with an endpoint here, in the order they were made */
    size_t n_connected;           /* grows under connect_lock; read without it */
    pthread_mutex_t connect_lock; /* endpoints and keys are made once, by one thread */
    struct transport_worker *next;
    /* Non-blocking puts and gets still in flight, kept until transport_flush completes them.
     * UCX 1.13 does not count them in a worker flush once their requests are released: a
     * put waiting in an endpoint's pending queue (a full shared-memory FIFO) then reads its
     * source after the flush has returned, and a flush does not wait for get replies over the
     * shared-memory transports. */
    ucs_status_ptr_t *pending;
    size_t n_pending, pending_capacity;
    pthread_mutex_t pending_lock;
    /* Active-message puts sent and not yet acknowledged by their targets: to memory only its
     * owner can touch (a fence waits for them), and to peers reached by message (only a flush
     * does: their lane keeps them in order). */
    uint64_t am_unacked, puts_unacked;
    /* Chunks of non-blocking gets from peers reached by message not yet answered (a flush
     * waits for them), and whether a target failed one since the last flush. */
    uint64_t gets_unanswered;
    int gets_failed;
    /* Short non-blocking puts to peers reached by message, gathered into one message per peer
     * (ucx_am_batch_put), and in a batch session (batch_hint) short blocking puts and
     * non-fetching atomics too: a peer's leaves when anything else goes to it, when full, at a
     * fence or a flush, when the PE waits, and at the session's end. */
    int batch_hint;
    pthread_t hint_thread; /* the thread that turned batch_hint on */
    struct ucx_batch {
        pthread_mutex_t lock;
        int *pes; /* the peers whose batch holds records (room for every PE, made with the first) */
        size_t n; /* of them; read without the lock to skip the list when 0 */
    } batch;
    int idle; /* its context was destroyed: kept, with its connections, for the next one */
    /* The progress thread's: counts.issued when it last found the batch holding records. */
    unsigned long batch_seen_issued;
};

/* The progress thread (ucx_progress.c): serves what peers send this PE while none of its own
 * threads is in a wait, which would serve it anyway. */
struct ucx_progress {
    pthread_t thread;
    int running;
    int stop; /* set by transport_fini, with wake_fd written */
    /* An eventfd beside the workers' event descriptors, written to stop the thread, or to wake
     * it when work appears that it may not have listed (ucx_progress_work_added): set from
     * before it lists the workers it serves until it sleeps for a while only (wake_wanted). */
    int wake_fd;
    int wake_wanted;
    unsigned interval_us; /* how often it looks again while the PE's threads wait */
    /* Waits of this PE's threads, which progress the worker themselves: the low half counts
     * those under way, the high half those ever begun, collectives and blocking calls that
     * needed no wait included (so a look tells whether any began since the last look). */
    uint64_t waits;
    int timer_fd;              /* the thread's next look, pushed back by the PE's waits */
    long long look_due_ns;     /* when it is set to come (wait_now_ns) */
    long long push_spacing_ns; /* how far a wait pushes it back beyond the longest pause */
};

/* Where peers' keys of a region made after start-up lie (transport_region_keys_at). */
struct ucx_key_home {
    int set;
    int id;        /* the region holding them, whose own keys the exchange has */
    size_t offset; /* of a struct transport_key there */
};

struct ucx_bulk;

struct transport {
    struct transport_config config;
    struct ucx_bulk *bulk; /* the bulk lane (ucx_bulk.c), or NULL where it is off */
    ucp_context_h context;
    ucp_mem_h regions[UCX_MAX_REGIONS];
    unsigned region_generation[UCX_MAX_REGIONS]; /* names the keys of each id's current use */
    struct ucx_key_home key_homes[UCX_MAX_REGIONS];
    const struct transport_target_ops *target_ops;
    transport_message_handler message_handlers[TRANSPORT_MESSAGE_KINDS];
    void (*served_hook)(void);
    struct transport_worker *workers; /* the default worker first */
    pthread_mutex_t workers_lock;
    unsigned batch_hints; /* workers whose batch_hint is on */
    struct ucx_progress progress;
};

int ucx_fail(const char *what, ucs_status_t status);
/* Whether a list as UCX's variables take it ("tcp,sm:aux", "eth0,mlx5_0:1": names separated by
 * commas, each with an optional ":qualifier") names name. */
int ucx_list_names(const char *list, const char *name);
/* One step of every wait on w: progresses w and, when w is a context's worker, the default
 * worker too, which serves the requests peers send this PE (whoever waits on a peer must keep
 * answering it, or two PEs waiting on each other hang). After wait_spin_ns without an event it
 * may sleep until one comes (transport_wait_idle). */
void ucx_wait_step(struct transport_worker *w, struct transport_idle *idle);
/* Counts a blocking call that found its operation done, so that a progress thread serving the
 * worker leaves it to the PE. */
void ucx_progress_called(struct transport *t);
/* Work a progress thread that serves the workers may not have listed: a worker's first
 * operation since its last flush, or its batch's first record. Wakes the thread where it wants
 * that. */
void ucx_progress_work_added(struct transport *t);
/* Loops while cond holds, stepping ucx_wait_step on w; counts as a wait for the progress thread. */
#define UCX_WAIT_WHILE(w, cond)                                                                    \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            ucx_progress_called((w)->t);                                                           \
            break;                                                                                 \
        }                                                                                          \
        struct transport_idle idle_ = {0};                                                         \
        transport_wait_enter((w)->t);                                                              \
        while (cond)                                                                               \
            ucx_wait_step((w), &idle_);                                                            \
        transport_wait_finish(&idle_);                                                             \
        transport_wait_leave((w)->t);                                                              \
    } while (0)
/* Arms the n workers and sleeps until one of them or extra_fd (-1: none) has an event
 * (extra_events, for poll), or timeout passes (NULL: no limit). Returns 0 once it has slept or
 * found an event pending (progress them next), or -1 when a worker cannot be slept on. */
int ucx_workers_sleep(struct transport_worker *const *workers, int n, int extra_fd,
                      short extra_events, const struct timespec *timeout);
/* A socket that this thread's waits also wait to write to (-1: none): a wait that sleeps wakes
 * once it can. */
void ucx_wait_also_writable(int fd);
/* Called by the PE's threads at every step that progresses the workers: keeps the progress thread
 * from waking while they do. Called only from steps without events (with the clock that
 * transport_wait_idle reads anyway), it had the thread wake 21-28 times in 300 ms of fetch-adds
 * in 5 runs of 17 (spmd/progress_rest): steps that serve peers' requests are most of them. */
void ucx_progress_postpone(struct ucx_progress *p);
/* Stops the progress thread, if it runs (before the workers go). */
void ucx_progress_stop(struct transport *t);
/* Waits for a request returned by a _nbx call, progressing the worker meanwhile. */
int ucx_wait(struct transport_worker *w, ucs_status_ptr_t request, const char *what);
/* Counts an operation that only a flush completes, once it is issued. The first since the last
 * flush may wait on w (a new connection's wire-up, a full socket) for a progress thread that
 * serves only the workers it listed. */
static inline void ucx_issued(struct transport_worker *w)
{
    unsigned long before = __atomic_fetch_add(&w->counts.issued, 1, __ATOMIC_SEQ_CST);
    if (before == __atomic_load_n(&w->counts.flushed, __ATOMIC_RELAXED))
        ucx_progress_work_added(w->t);
}
/* The endpoint to pe on w, made on first use (under w->connect_lock). */
ucp_ep_h ucx_endpoint_get(struct transport_worker *w, int pe);
/* Installs the active-message handlers on a new worker. */
int ucx_am_worker_init(struct transport_worker *w);
/* Waits until every active-message put of w has been performed by its target. */
int ucx_am_wait_acks(struct transport_worker *w);

/* ---- One-way messages, to peers UCX reaches by message anyway (peer.by_message) ----
 * UCX performs a put or an atomic to such a peer in the target's progress engine and answers
 * each with a completion message, which the target pays a send for; a put-with-signal is two
 * such operations. These go as one message each, without an answer, in the order sent (one lane:
 * a byte stream), and a flush asks the target to answer once everything sent before is done. */
/* Writes len bytes of src at (id, offset) of pe (none when len is 0), then performs op with
 * value on the size-byte word at (sig_id, sig_offset) (none when op is UCX_POST_NO_OP).
 * Returns when src may be reused. awaited: a flush waits for it (every message but a barrier's
 * notification and a collective's data and counts, whose arrival is what their target waits for
 * before it goes on; finalize's barrier and fence then see them arrive before anyone leaves). */
#define UCX_POST_NO_OP (-1)
int ucx_am_post(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                size_t len, int sig_id, size_t sig_offset, int op, uint64_t value, size_t size,
                int awaited);
/* A put to a peer reached by message, which the target acknowledges: a put and a quiet take one
 * message each way (UCX's own put and flush take two). Returns when src may be reused. */
int ucx_am_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
               size_t len);
/* A non-blocking put of at most UCX_BATCH_PUT_MAX bytes to a peer reached by message: added to
 * w's batch; a flush waits for it. Returns 0 or -1. */
#define UCX_BATCH_PUT_MAX 256
int ucx_am_batch_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                     size_t len);
/* A non-fetching atomic (op a transport_amo, on a size-byte word) to a peer reached by message,
 * added to w's batch; a flush waits for it. Returns 0 or -1. */
int ucx_am_batch_atomic(struct transport_worker *w, int pe, int id, size_t offset, int op,
                        uint64_t value, size_t size);
/* Sends every batch of w that holds records. try: unless another thread is at it (a wait's step,
 * which may come from inside a send of this thread). Returns 0 or -1. */
int ucx_am_batch_send(struct transport_worker *w, int try);
/* Sends w's batch for pe if it holds records: what goes to pe after it by another way must not
 * overtake it. Returns 0 or -1. */
int ucx_am_batch_before(struct transport_worker *w, int pe);
/* Sends the batches of the workers in a batch session that this thread may use (a thread-safe
 * one, or one whose session it started), unless another thread is at it: a thread that waits
 * may be waiting for what they gathered. */
void ucx_batch_send_sessions(struct transport *t);
/* Gets of at least this many bytes from a peer reached by message go as this PE's own requests
 * (transport_am_get) rather than UCX's emulated get. */
#define UCX_AM_GET_MIN 4096
/* A non-blocking get of len bytes (at least UCX_AM_GET_MIN) from a peer reached by message:
 * dest is filled by the time a flush of w returns. Returns 0 or -1. */
int ucx_am_get_nbi(struct transport_worker *w, int pe, int id, size_t offset, void *dest,
                   size_t len);
/* Waits until every ucx_am_put of w has been acknowledged and every ucx_am_get_nbi answered. */
int ucx_am_wait_answers(struct transport_worker *w);
/* Counts an operation to a peer reached by message that a flush must confirm. */
static inline void ucx_posted(struct transport_worker *w, int pe)
{
    __atomic_add_fetch(&w->peers[pe].posted, 1, __ATOMIC_RELEASE);
    ucx_issued(w);
}
/* Waits until every operation of w to pe (every peer when pe < 0) reached by message and issued
 * before the call has been performed by its target. Returns 0 or -1. */
int ucx_am_flush(struct transport_worker *w, int pe);

/* ---- The bulk lane (ucx_bulk.c) ----
 * A one-way message of at least UCX_BULK_MIN bytes that no flush waits for (a collective's data)
 * to a peer reached by message: its header goes through UCX (AM_BULK, in order with everything
 * else), its data on a TCP connection of this PE's own to the peer, which the target's handler of
 * the header reads straight into place, where UCX's messages land in its receive segment and are
 * copied from there. It costs the sender a send and the target a receive more a message, and
 * saves the target a copy, which pays where the target has no time to spare: between two nodes,
 * alternated within the job (3 jobs each), fcollects of 256 KiB and 1 MiB per PE took 0.81-0.93
 * of the time through UCX, broadcasts of 64 KiB 1.16-1.31 (so the lane starts above that), of
 * 256 KiB 0.99-1.09, of 1 MiB 0.83-0.94, and 1 MiB reductions 0.98-1.12 with their 64 KiB
 * messages on the lane (a team of two's now sends 256 KiB pieces: COLL_DIRECT_PIECE_BYTES). */
#define UCX_BULK_MIN ((size_t)256 * 1024)
/* Opens this PE's listening socket and publishes how peers reach it (where config.bulk_lane
 * and UCX's TCP transport are on; otherwise it publishes that it cannot be reached). Returns 0,
 * or -1 when the exchange fails. */
int ucx_bulk_init(struct transport *t);
void ucx_bulk_fini(struct transport *t);
/* Begins a message of len bytes of src to pe on the lane, writing what the socket takes of its
 * first part (the rest follows the header, in ucx_bulk_finish): 0 (the lane is pe's alone until
 * ucx_bulk_finish), or 1 where it cannot be used (w is a context's worker, pe has no lane or
 * cannot be reached: send through UCX instead). */
int ucx_bulk_begin(struct transport_worker *w, int pe, const void *src, size_t len);
/* Once the message's header went through UCX (announced; 0: it could not, and the lane closes,
 * since the peer would take what went of the data for another message's): writes the rest,
 * progressing w meanwhile. Returns 0, or -1. */
int ucx_bulk_finish(struct transport_worker *w, int pe, int announced);
/* Inside the handler of a header from pe: reads its len bytes into dest (NULL: reads them
 * away), writing this PE's own messages meanwhile. Ends the job if the data cannot be read. */
void ucx_bulk_receive(struct transport *t, int pe, void *dest, size_t len);

#endif
