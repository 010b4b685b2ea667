/* SPDX-License-Identifier: BSD-3-Clause */
/* How bytes move between PEs that are not mapped into each other's address space.
 *
 * The layer above names remote memory by (pe, region id, offset): a region is one registered
 * range (a space's heap, the static data) with the same id on every PE. Peer information (worker
 * addresses, packed keys) is published and fetched through the exchange callbacks the caller
 * provides, so the transport never talks to the process manager itself, and fetches lazily:
 * endpoints and keys are made on first use. */
#ifndef STRATA_TRANSPORT_H
#define STRATA_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct transport;
/* A worker carries operations: one per communication context, so completing the operations of
 * one context never waits for another's. */
struct transport_worker;

/* What every worker shows its callers inline (the first member of each transport's worker): how
 * many operations that only a flush completes (puts, non-blocking gets, non-fetching atomics,
 * active-message puts) were issued on it, and how many of those the last completed flush
 * covered. Equal counts: a quiet or a fence has nothing to do, so a PE that has a transport for
 * its device spaces pays nothing for it in a quiet after host traffic. */
struct transport_worker_counts {
    unsigned long issued;
    unsigned long flushed;
};

static inline int transport_flush_needed(const struct transport_worker *w)
{
    const struct transport_worker_counts *counts = (const struct transport_worker_counts *)w;
    return __atomic_load_n(&counts->issued, __ATOMIC_ACQUIRE) !=
           __atomic_load_n(&counts->flushed, __ATOMIC_ACQUIRE);
}

/* How many such operations were issued on w so far: read after issuing one, a count that
 * transport_flushed_through later finds flushed says that one is complete. */
static inline unsigned long transport_issued(const struct transport_worker *w)
{
    return __atomic_load_n(&((const struct transport_worker_counts *)w)->issued, __ATOMIC_ACQUIRE);
}

/* Whether a completed flush covered the first count operations issued on w (any thread's flush:
 * it counts what was issued when it began). */
static inline int transport_flushed_through(const struct transport_worker *w, unsigned long count)
{
    const struct transport_worker_counts *counts = (const struct transport_worker_counts *)w;
    return __atomic_load_n(&counts->flushed, __ATOMIC_ACQUIRE) >= count;
}

struct transport_exchange {
    int (*publish)(const char *key, const void *data, size_t len);
    int (*fetch)(int pe, const char *key, void *data, size_t *len);
};

struct transport_config {
    int my_pe;
    int n_pes;
    int thread_safe; /* calls may come from several threads (progress thread, MULTIPLE) */
    /* A collective's large messages to a peer reached over TCP go on a connection of their own,
     * which the target reads straight into place (SHMEM_BULK_LANE). */
    int bulk_lane;
    /* The network: "ucx", "ofi" or "auto" (SHMEM_TRANSPORT), and libfabric's provider
     * (SHMEM_OFI_PROVIDER, "": any). */
    const char *network;
    const char *provider;
    int atomics_by_message; /* testing aid: as where the network has no atomics */
    struct transport_exchange exchange;
};

enum transport_amo {
    TRANSPORT_AMO_ADD,
    TRANSPORT_AMO_AND,
    TRANSPORT_AMO_OR,
    TRANSPORT_AMO_XOR,
    TRANSPORT_AMO_SWAP,
    TRANSPORT_AMO_CSWAP,
};

/* Creates the transport and its default worker, and publishes that worker's address (the one
 * peers connect to). Returns 0 or -1 (message printed). */
int transport_init(const struct transport_config *config, struct transport **out);
void transport_fini(struct transport *t);
/* The network t runs on ("ucx", "ofi"). */
const char *transport_network_name(const struct transport *t);
/* Prints the networks built in and what each sees here, for oshinfo. */
void transport_describe(FILE *out);
struct transport_worker *transport_default_worker(struct transport *t);
/* Another worker, for a communication context. Where the transport is thread-safe
 * (config.thread_safe), so is every worker: a progress thread, or any of the program's threads
 * in a wait, may drive a private context's worker while it has operations outstanding. */
int transport_worker_create(struct transport *t, struct transport_worker **out);
/* Gives a context's worker back (its operations complete first); the transport keeps it, with
 * its connections, for a later transport_worker_create, until transport_fini. */
void transport_worker_release(struct transport_worker *w);

/* Memory types a transport may register (and reach without staging). */
enum transport_mem_type { TRANSPORT_MEM_HOST, TRANSPORT_MEM_CUDA, TRANSPORT_MEM_ROCM };
/* Whether t registers and reaches memory of that type. */
int transport_reaches_memory(struct transport *t, enum transport_mem_type type);
/* Whether every atomic t performs on host memory is done by its target's CPU with the CPU's
 * atomic instructions (the network's emulated atomics, or the targets' handlers), so that PEs may
 * update a word both through t and by their own CPU atomics. */
int transport_cpu_atomics(struct transport *t);

/* A region's key as peers read it (what a peer needs to reach the region): its length (0: none)
 * and its bytes. */
#define TRANSPORT_KEY_MAX 240
struct transport_key {
    uint64_t len;
    char bytes[TRANSPORT_KEY_MAX];
};

/* Registers [base, base+len) as region id. generation tells a reuse of an id apart from the
 * region that had it before; it is the same on every PE. With key NULL the region's key is
 * published through the exchange, where peers fetch it on first use (start-up); otherwise it is
 * written to *key, for the caller to place where transport_region_keys_at says peers find it.
 * Returns 0 or -1 (message printed). */
int transport_region_register(struct transport *t, int id, unsigned generation, void *base,
                              size_t len, struct transport_key *key);
/* Where each PE's key of region id lies: in that PE's region home_id (whose key the exchange
 * has), at offset, as a struct transport_key. Peers read it there on their first use of the
 * region, so a creation moves no keys and a PE keeps only those of the peers it reaches. */
void transport_region_keys_at(struct transport *t, int id, int home_id, size_t offset);
/* Forgets region id: this PE's registration and every peer's key. */
void transport_region_deregister(struct transport *t, int id);

/* Blocking put: returns when src may be reused. nbi: returns at once; src must stay valid until
 * transport_flush. */
int transport_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                  size_t len, int nbi);
/* A blocking put of a word its target waits to see change (a barrier's counter): no flush
 * waits for it, since its arrival is what the target watches for, so the quiet before the next
 * barrier has nothing to wait for when nothing else was sent. It arrives as long as this PE
 * progresses the transport. */
int transport_put_notify(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                         size_t len);
/* Blocking get returns with dest filled; nbi completes at transport_flush. */
int transport_get(struct transport_worker *w, int pe, int id, size_t offset, void *dest, size_t len,
                  int nbi);
/* Atomic of size 4 or 8 bytes at (pe, id, offset). fetch: NULL for a non-fetching op, else where
 * the old value is stored (the call then blocks until it arrives). compare is used by CSWAP. */
int transport_atomic(struct transport_worker *w, enum transport_amo op, int pe, int id,
                     size_t offset, uint64_t value, uint64_t compare, void *fetch, size_t size);
/* A session's batch hint (OpenSHMEM sessions) on w: while on, short blocking puts and
 * non-fetching atomics to peers reached by message are gathered into one message per peer, as
 * short non-blocking puts always are; it leaves when something else goes to that peer, when
 * full, at a fence, a quiet or a wait, and when the hint is turned off. Completion and ordering
 * are those without it. */
void transport_batch_hint(struct transport_worker *w, int on);
/* A put (none when len is 0), then a non-fetching atomic on an 8-byte word of the same target,
 * performed there after the data is in place (put-with-signal): one message where the transport
 * carries both as messages anyway. Blocking like transport_put; both complete at transport_flush,
 * unless watched: the target waits for the signal itself (a collective's), so where the message
 * needs no answer no flush waits for it, as for transport_put_notify. */
int transport_put_signal(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                         size_t len, int sig_id, size_t sig_offset, enum transport_amo sig_op,
                         uint64_t signal, int watched);
/* Orders the operations issued before against those issued after, per target (active-message
 * puts: waits until the targets have performed them). */
int transport_fence(struct transport_worker *w);
/* Completes every outstanding operation (all targets, or one pe when pe >= 0). */
int transport_flush(struct transport_worker *w, int pe);
/* transport_flush of everything, notifications included (finalize: UCX reports a worker
 * destroyed with operations it has not seen acknowledged). */
int transport_flush_all(struct transport_worker *w);
/* Makes progress on incoming and outstanding work; cheap when there is none. Returns how many
 * events it handled. */
unsigned transport_progress(struct transport_worker *w);
/* A thread of this PE starts (enter) or ends (leave) a wait on peers, during which it progresses
 * the transport itself: the progress thread stays out of its way until every wait has ended. */
void transport_wait_enter(struct transport *t);
void transport_wait_leave(struct transport *t);
/* A thread of this PE begins a collective across nodes, which waits for its peers' messages
 * unless the progress thread has already taken them in: the progress thread stays out of the way as
 * for a wait begun, so that a stream of collectives takes its own messages instead of having that
 * thread woken for each. */
void transport_collective_begun(struct transport *t);
/* Where a wait that progresses the transport stands (zero it to begin): since when it spins,
 * whether it has spun at all and whether it has slept. */
struct transport_idle {
    long long since_ns;
    int spun, slept;
};
/* An idle step of such a wait on w, after a progress call that handled events (0: none; a wait
 * that serves its peers' requests restarts its spin instead of sleeping through the next one):
 * spins, then, where more threads want the machine's cores than it has and this thread's core
 * is one they want (wait_core_shared), sleeps on w's events (and the default worker's) for at
 * most PROGRESS_WAIT_SLEEP_NS; spins on where they want other cores (unless the machine has more
 * PEs than CPUs); otherwise yields. Under load a peer's answer may be a time slice away: spinning
 * through it holds a core that a peer placed on the same core may need, and each yield sets the PE
 * a time slice back behind another job's process. A sleeper gives the core away without that
 * penalty and is woken by the answer itself, ahead of the processes that kept the core. On cores
 * nobody else wants a sleep would only add its wake-up (long for a virtual CPU that halted), and
 * where other threads want only the other cores, a yield hands the core to nobody and a sleep may
 * wake the PE on a busy core, so the PE with a core to itself spins on. The spin lasts at most
 * spin_ns, less for a thread whose recent waits went on after it: each sleep halves the thread's
 * spin (down to PROGRESS_SPIN_MIN_NS), each wait that its spin saw end doubles it. A sleep wakes
 * the PE on the core of the peer whose message woke it, so two PEs that talk come to share a
 * core, where every spin keeps the other off it. */
void transport_wait_idle(struct transport_worker *w, struct transport_idle *idle, unsigned events,
                         long long spin_ns);
/* Ends such a wait: its outcome adjusts the thread's spin. */
void transport_wait_finish(struct transport_idle *idle);
/* ---- Memory only its owner can touch (device memory) ----
 * Operations on such memory travel as active messages and are performed at the target by the
 * callbacks it registered, from its progress engine (the GASNet-EX reference path for memory
 * kinds). Data is carried in host buffers on both sides. */
struct transport_target_ops {
    /* Writes len bytes of host memory src at (id, offset) of this PE; returns 0 or -1. */
    int (*write)(int id, size_t offset, const void *src, size_t len);
    int (*read)(int id, size_t offset, void *dst, size_t len);
    /* Performs op on the size-byte word at (id, offset); returns 0 or -1 and the old value. */
    int (*atomic)(int id, size_t offset, enum transport_amo op, uint64_t value, uint64_t compare,
                  size_t size, uint64_t *old);
    /* Where len bytes at (id, offset) of this PE lie in host memory that the transport may
     * write itself, or NULL (another kind of memory, or outside the region): data read from a
     * connection goes there directly, not through a buffer and write. */
    void *(*host_place)(int id, size_t offset, size_t len);
};
/* Installs the callbacks that serve this PE's side; set once, before any peer may send. */
void transport_set_target_ops(struct transport *t, const struct transport_target_ops *ops);
/* Sends src to (pe, id, offset): returns when src may be reused; the data is in place at the
 * target after transport_fence/flush. */
int transport_am_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                     size_t len);
/* Blocking: returns with dest (host memory) filled. */
int transport_am_get(struct transport_worker *w, int pe, int id, size_t offset, void *dest,
                     size_t len);
/* Blocking atomic performed by the target; *old receives the previous value. */
int transport_am_atomic(struct transport_worker *w, enum transport_amo op, int pe, int id,
                        size_t offset, uint64_t value, uint64_t compare, size_t size,
                        uint64_t *old);

/* ---- Messages of the layer above ----
 * One-way messages that carry the protocols the layer above runs between PEs (the end of the
 * job, mailboxes), each kind to the handler the target installed for it. A handler runs inside
 * the transport's progress, so it only notes or copies what came; served runs on the progress
 * thread, outside any handler, each time it has served the workers, to act on what was noted. */
#define TRANSPORT_MESSAGE_KINDS 4
typedef void (*transport_message_handler)(int from, const void *header, size_t header_len,
                                          const void *data, size_t len);
/* Installs kind's handler (kind below TRANSPORT_MESSAGE_KINDS); set once, before any peer may
 * send. */
void transport_set_message_handler(struct transport *t, unsigned kind,
                                   transport_message_handler handler);
void transport_set_served_hook(struct transport *t, void (*served)(void));
/* Sends header (at most 64 bytes) and len bytes of data (at most 256 KiB) to pe's handler of
 * kind: it arrives after everything this PE sent to pe before on w, and wakes pe's progress
 * thread while pe computes. Returns once both may be reused (0), or -1. */
int transport_message(struct transport_worker *w, int pe, unsigned kind, const void *header,
                      size_t header_len, const void *data, size_t len);

/* Whether pe is reached by message: UCX performs every operation to it at its progress engine,
 * in the order sent (TCP), rather than by RDMA. */
int transport_by_message(struct transport_worker *w, int pe);

/* Starts a thread that serves peers while the PE computes (once): it sleeps on the transport's
 * event descriptor, and while the PE's own threads wait (and so progress), it looks again every
 * interval_us instead. */
int transport_progress_thread_start(struct transport *t, unsigned interval_us);

#endif
