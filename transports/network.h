/* SPDX-License-Identifier: BSD-3-Clause */
/* What a network does, and nothing more: the ops table each network module (transports/ucx,
 * transports/ofi) fills and the transport layer (transport.h) drives. It reaches and connects
 * peers, registers memory and hands out keys, moves bytes (put, get, atomics, fence, flush) and
 * carries active messages to handlers registered by id. Everything else the layer above needs
 * between PEs (batches of short operations, the owner route of memory only its owner can touch,
 * flushes by message, the progress thread and how waits spin or sleep) is written once, in the
 * transport layer, over these. */
#ifndef STRATA_NETWORK_H
#define STRATA_NETWORK_H

#include "transport.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct network;        /* one network's state in this process */
struct network_worker; /* a network's share of a transport worker */
struct network_source; /* where an active message came from: what a reply needs */

/* The active messages the transport layer sends; ids below NETWORK_AM_IDS. */
#define NETWORK_AM_IDS 16
/* An active message's header is at most this long; a network hands it to the handler aligned. */
#define NETWORK_AM_HEADER_MAX 128
/* And its data: the transport layer cuts what is longer into pieces. */
#define NETWORK_AM_DATA_MAX ((size_t)256 * 1024)

/* Runs inside the network's progress on worker w (the transport worker it serves), with the
 * message's header and data (data NULL with len > 0: the payload could not be had). It may not
 * wait: it answers with network_ops.am_reply. */
typedef void (*network_am_handler)(struct transport_worker *w, const void *header,
                                   size_t header_len, void *data, size_t len,
                                   const struct network_source *source);

struct network_config {
    int my_pe;
    int n_pes;
    int thread_safe;
    /* Whether the PE's waits will sleep on the workers' event descriptors (its PEs outnumber its
     * CPUs). Where not, a network may make none, sparing what a descriptor costs it per
     * completion: the progress thread then looks at its interval instead of sleeping. */
    int events;
    const char *provider; /* the provider to use (libfabric's name), NULL or "": any */
    struct transport_exchange exchange;
    network_am_handler handlers[NETWORK_AM_IDS]; /* NULL: no such message */
};

/* What the transport layer may ask of a network once it is made. */
struct network_attr {
    /* Peers may be reached over TCP: the transport's bulk lane is worth opening. */
    int tcp;
    /* The interfaces the network was told to use (a list as "eth0,ib0:1"), NULL: any. */
    const char *tcp_devices;
    /* Every atomic operation of 4 and 8 bytes is the network's own; otherwise the transport
     * layer has their targets perform them all (transport_am_atomic), since one word's atomics
     * are atomic with each other only where one agent does them all. */
    int atomics;
    /* The network's fence completes every operation before it (a round trip): it cannot order
     * an atomic after a put otherwise. */
    int fence_completes;
    /* Its atomics are performed by the target's CPU, with the CPU's atomic instructions (a
     * provider that emulates them), so that a handler's update of a word is atomic with them. */
    int cpu_atomics;
    /* Messages with up to this many bytes of data go eagerly: larger ones take the network's
     * rendezvous, a round trip more. */
    size_t eager_max;
};

/* A put or a get, and how it completes. A blocking put returns when its source may be reused
 * and completes at the target at a flush; PUT_NBI does not wait for its source either; a
 * PUT_NOTIFY arrives whenever it does, no flush waiting for it (a word its target watches). A
 * blocking get returns with its destination filled, GET_NBI's is filled at a flush. */
enum network_rma {
    NETWORK_GET,
    NETWORK_GET_NBI,
    NETWORK_PUT,
    NETWORK_PUT_NBI,
    NETWORK_PUT_NOTIFY,
};
#define NETWORK_RMA_IS_PUT(op) ((op) >= NETWORK_PUT)
#define NETWORK_RMA_IS_NBI(op) ((op) == NETWORK_GET_NBI || (op) == NETWORK_PUT_NBI)

struct network_ops {
    const char *name;
    /* Whether this node's fabric is one that SHMEM_TRANSPORT=auto should use this network for
     * (NULL: never). */
    int (*preferred)(void);
    /* Prints what the network sees here (providers, devices) for oshinfo, a line each. */
    void (*describe)(FILE *out);
    /* Makes the network and publishes how peers reach this PE. Returns 0 or -1 (message
     * printed). */
    int (*init)(const struct network_config *config, struct network **out);
    void (*fini)(struct network *net);
    void (*query)(struct network *net, struct network_attr *attr);
    int (*reaches_memory)(struct network *net, enum transport_mem_type type);

    /* A worker for transport worker owner; the first one made is the one peers connect to. */
    int (*worker_create)(struct network *net, struct transport_worker *owner,
                         struct network_worker **out);
    void (*worker_destroy)(struct network_worker *nw);

    /* Registers [base, base+len) as region id and packs what a peer needs to reach it into key
     * (*len: its room in, NETWORK_KEY_MAX at most; its length out). Peers' keys come from
     * transport_region_key. */
    int (*region_register)(struct network *net, int id, void *base, size_t len, void *key,
                           size_t *len_out);
    /* Forgets region id: this PE's registration and every peer's key. */
    void (*region_deregister)(struct network *net, int id);

    /* Connects nw to pe (once) and says whether the network reaches it only by message (every
     * operation performed by the target's progress, in the order sent, on one lane): 1, 0, or
     * -1 where pe cannot be reached. */
    int (*by_message)(struct network_worker *nw, int pe);

    /* A put from buf or a get into buf of len bytes at (pe, id, offset), as op says. */
    int (*rma)(struct network_worker *nw, int pe, int id, size_t offset, void *buf, size_t len,
               enum network_rma op);
    /* As transport_atomic. A non-fetching one completes at flush. */
    int (*atomic)(struct network_worker *nw, enum transport_amo op, int pe, int id, size_t offset,
                  uint64_t value, uint64_t compare, void *fetch, size_t size);
    /* Orders nw's puts and atomics issued before against those after. */
    int (*fence)(struct network_worker *nw);
    /* Completes nw's operations (to pe, or every peer when pe < 0), leaving out peers reached by
     * message, whose messages the transport layer confirms itself. */
    int (*flush)(struct network_worker *nw, int pe);
    /* Completes everything, the network's own bookkeeping and peers reached by message
     * included, before the worker goes. */
    int (*flush_all)(struct network_worker *nw);

    /* Sends active message id to pe: it arrives after everything nw sent to pe before by
     * message. Returns when header and data may be reused. reply: the handler answers. */
    int (*am_send)(struct network_worker *nw, int pe, unsigned id, const void *header,
                   size_t header_len, const void *data, size_t len, int reply);
    /* From inside a handler, never waiting: answers source with message id, whose header_len
     * bytes of header and len bytes of data lie one after the other in buffer (malloc'd; the
     * network frees it). */
    void (*am_reply)(const struct network_source *source, unsigned id, char *buffer,
                     size_t header_len, size_t len);

    /* Progresses nw: handlers run, operations complete. Returns how many events it handled. */
    unsigned (*progress)(struct network_worker *nw);
    /* A descriptor that becomes readable when nw has events once armed (-1: none, as where
     * config.events is 0 and it costs), and arms it:
     * 0, or 1 where events came meanwhile (progress instead of sleeping), or -1. */
    int (*event_fd)(struct network_worker *nw);
    int (*arm)(struct network_worker *nw);
};

/* The networks built in, in the order SHMEM_TRANSPORT=auto tries them; NULL-terminated. */
extern const struct network_ops *const network_builtin[];
extern const struct network_ops network_ucx_ops;
extern const struct network_ops network_ofi_ops;

/* ---- What the transport layer gives networks ---- */
/* A key as long as a network's packed key may be. */
#define NETWORK_KEY_MAX 4096
/* Fetches the key pe's network packed for its region id (key: *len bytes of room in, the key's
 * length out), where the transport layer keeps it: the exchange for a region made at start-up,
 * the peer's memory for a later one (read through w's network). Returns 0 or -1. */
int transport_region_key(struct transport_worker *w, int pe, int id, void *key, size_t *len);
/* One step of a wait on w: progresses it (and the worker peers' requests reach), then spins,
 * yields or sleeps as transport_wait_idle says. */
void transport_wait_step(struct transport_worker *w, struct transport_idle *idle);
/* Counts a call on w that issued an operation, or a blocking one that found its operation done,
 * so that a progress thread serving the workers leaves them to the PE, which then progresses them
 * itself now and then. */
void transport_progress_called(struct transport_worker *w);
struct transport *transport_of(const struct transport_worker *w);
/* Loops while cond holds, stepping transport_wait_step on w; counts as a wait for the progress
 * thread. */
#define TRANSPORT_WAIT_WHILE(w, cond)                                                              \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            transport_progress_called(w);                                                          \
            break;                                                                                 \
        }                                                                                          \
        struct transport_idle idle_ = {0};                                                         \
        transport_wait_enter(transport_of(w));                                                     \
        while (cond)                                                                               \
            transport_wait_step((w), &idle_);                                                      \
        transport_wait_finish(&idle_);                                                             \
        transport_wait_leave(transport_of(w));                                                     \
    } while (0)
/* Whether a list as networks' variables take it ("tcp,sm:aux", "eth0,mlx5_0:1": names separated
 * by commas, each with an optional ":qualifier") names name. */
int transport_list_names(const char *list, const char *name);

#endif
