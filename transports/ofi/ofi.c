/* SPDX-License-Identifier: BSD-3-Clause */
/* The libfabric network: one reliable datagram endpoint (FI_EP_RDM) per transport worker, on
 * one domain and address vector. Peers are reached at their first worker's endpoint, whose
 * address each PE publishes: a context's endpoint sends from its own, and answers to its active
 * messages come to its PE's first endpoint, which every wait progresses anyway. Memory is
 * registered in the mode the provider asks for (virtual or offset addresses, keys chosen by
 * the provider or by this module, registrations bound to the endpoint), and each operation's
 * completion is a completion-queue entry: blocking operations wait for their own, non-blocking
 * ones are counted and a flush waits for the count. Puts complete once delivered
 * (FI_DELIVERY_COMPLETE) where the provider offers it, so that a flush makes them visible. */
#include "../../common/log.h"
#include "../network.h"

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OFI_MAX_REGIONS 64
#define OFI_ADDR_MAX 256
#define OFI_RECV_BUFFERS 16
#define OFI_CQ_BATCH 16
/* Blocking puts up to this long return at once, their data copied (longer ones wait). */
#define OFI_PUT_COPY_MAX 4096
/* The data a message carries eagerly, with room for headers: ofi_rxm, under which the TCP and
 * verbs providers run, sends up to 16 KiB so and the rest by rendezvous. */
#define OFI_EAGER_MAX 8192
#define OFI_API_VERSION FI_VERSION(1, 15)

/* An active message on the wire: this header, the transport layer's header, its data. */
struct ofi_am_header {
    uint32_t id;
    int32_t from;
    uint32_t header_len;
    uint32_t reserved;
};
#define OFI_RECV_BYTES (sizeof(struct ofi_am_header) + NETWORK_AM_HEADER_MAX + NETWORK_AM_DATA_MAX)

/* What a completion-queue entry's context points to: what to do with it. */
enum ofi_op_kind {
    OFI_OP_COUNTED,     /* a non-blocking operation: counted off the worker's outstanding */
    OFI_OP_COUNTED_OWN, /* the same, with a context of its own (freed) */
    OFI_OP_WAITED,      /* a blocking one: its waiter reads done */
    OFI_OP_RECV,        /* a receive buffer */
    OFI_OP_REPLY,       /* an answer sent from a handler: its buffer is freed */
};

struct ofi_op {
    struct fi_context2 context; /* first: some providers use it (FI_CONTEXT2) */
    enum ofi_op_kind kind;
    int done, failed;
    char *buffer;        /* OFI_OP_RECV, OFI_OP_REPLY: the message */
    struct ofi_op *next; /* OFI_OP_REPLY: in the deferred list; OFI_OP_RECV: in unposted */
    struct ofi_am_header am_header; /* OFI_OP_REPLY: sent before buffer */
    char *gathered; /* a message's parts in one buffer, where the provider takes fewer */
    int pe;
    size_t header_len, len;
};

struct ofi_remote_region {
    uint64_t addr; /* what a put names the region's start by: its address, or 0 (offsets) */
    uint64_t key;
    int known;
};

struct network_worker {
    struct transport_worker *owner;
    struct network *net;
    struct fid_ep *ep;
    struct fid_cq *cq;
    int wait_fd; /* the queue's descriptor, or -1 where it has none */
    /* Non-blocking operations issued whose completions have not come (counted ops). */
    uint64_t outstanding;
    int failed;            /* one of them failed since the last flush */
    struct ofi_op counted; /* the context of every counted operation */
    /* Only the first worker receives: peers' messages and answers all come there. */
    struct ofi_op *receives;
    struct ofi_op *unposted; /* receive buffers waiting for room (under progress_lock) */
    /* Answers a handler could not send at once (the provider said again), in order. */
    pthread_mutex_t deferred_lock;
    struct ofi_op *deferred, **deferred_tail;
    /* One thread at a time runs the completion queue, and so the handlers. */
    pthread_mutex_t progress_lock;
    struct network_worker *next;
};

struct network {
    struct network_config config;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    int virt_addr, prov_key, mr_endpoint;
    uint64_t put_flags; /* FI_DELIVERY_COMPLETE where offered */
    /* Parts a message may have (tx_attr->iov_limit; STRATA_TEST_OFI_IOV_LIMIT lowers it, a
     * testing aid for providers that take one, as some do). */
    size_t iov_limit;
    int atomics; /* every atomic of 4 and 8 bytes is valid */
    struct fid_mr *regions[OFI_MAX_REGIONS];
    uint64_t registrations; /* made so far: the keys this module chooses */
    pthread_mutex_t connect_lock;
    fi_addr_t *addrs;                   /* per PE: FI_ADDR_NOTAVAIL until first use */
    struct ofi_remote_region **remotes; /* per PE: OFI_MAX_REGIONS, made with the address */
    struct network_worker *workers;     /* the first made first */
    pthread_mutex_t workers_lock;
};

struct network_source {
    struct network_worker *nw;
    int from;
};

/* libfabric's few real functions (the rest are inline calls through its objects), loaded when
 * this network is first wanted. Linked, Debian's libfabric brings its PSM providers' libraries
 * into every program, and they install signal handlers that end a PE with status 1 on a SIGBUS,
 * where Strata explains the SIGBUS and the launcher reports the signal. */
#define OFI_FUNCTIONS(X)                                                                           \
    X(fi_getinfo, int,                                                                             \
      (uint32_t, const char *, const char *, uint64_t, const struct fi_info *, struct fi_info **)) \
    X(fi_freeinfo, void, (struct fi_info *))                                                       \
    X(fi_dupinfo, struct fi_info *, (const struct fi_info *))                                      \
    X(fi_fabric, int, (struct fi_fabric_attr *, struct fid_fabric **, void *))                     \
    X(fi_strerror, const char *, (int))                                                            \
    X(fi_version, uint32_t, (void))
#define OFI_FUNCTION_FIELD(NAME, RET, ARGS) RET(*NAME) ARGS;
static struct {
    OFI_FUNCTIONS(OFI_FUNCTION_FIELD)
} ofi_lib;
#undef OFI_FUNCTION_FIELD

/* Loads libfabric; the signal handlers its providers' libraries install as they load are taken
 * back. Providers read their settings from the environment as they start, and unless the user
 * sets them: ofi_rxm's shared receive queue would hold 4096 bounce buffers of 16 KiB, 64 MiB of
 * every PE's memory, so 256 of them; and the tcp provider would copy what it read ahead from the
 * socket into place with memcpy, which stores a short put's bytes twice (a flag its target has
 * seen and reset comes back), so it reads puts' data straight into place instead. */
static void ofi_library_open(void)
{
    setenv("FI_OFI_RXM_MSG_RX_SIZE", "256", 0);
    setenv("FI_TCP_PREFETCH_RBUF_SIZE", "0", 0);
    struct sigaction before[NSIG];
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, NULL, &before[sig]);
    void *lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            sigaction(sig, &before[sig], NULL);
    if (!lib)
        return;
#define OFI_FUNCTION_LOAD(NAME, RET, ARGS) *(void **)&ofi_lib.NAME = dlsym(lib, #NAME);
    OFI_FUNCTIONS(OFI_FUNCTION_LOAD)
#undef OFI_FUNCTION_LOAD
#define OFI_FUNCTION_FOUND(NAME, RET, ARGS) &&ofi_lib.NAME
    if (!(1 OFI_FUNCTIONS(OFI_FUNCTION_FOUND)))
        memset(&ofi_lib, 0, sizeof(ofi_lib));
#undef OFI_FUNCTION_FOUND
}

/* Loads libfabric once. Returns 0, or -1 where it cannot be loaded. */
static int ofi_library_load(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, ofi_library_open);
    return ofi_lib.fi_version ? 0 : -1;
}

static int ofi_fail(const char *what, int rc)
{
    log_error("transport", "libfabric %s failed: %s", what, ofi_lib.fi_strerror(rc < 0 ? -rc : rc));
    return -1;
}

/* ---- Completions ---- */

/* Posts a receive buffer; one the provider has no room for yet waits in the worker's list for
 * the next progress (reading the queue meanwhile would take completions nobody counts). */
static void ofi_recv_post(struct network_worker *nw, struct ofi_op *op)
{
    op->kind = OFI_OP_RECV;
    ssize_t rc = fi_recv(nw->ep, op->buffer, OFI_RECV_BYTES, NULL, FI_ADDR_UNSPEC, op);
    if (rc == -FI_EAGAIN) {
        op->next = nw->unposted;
        nw->unposted = op;
    } else if (rc) {
        ofi_fail("fi_recv", (int)rc);
    }
}

/* Under progress_lock: posts the receive buffers that waited. */
static void ofi_recv_post_waiting(struct network_worker *nw)
{
    struct ofi_op *waiting = nw->unposted;
    nw->unposted = NULL;
    while (waiting) {
        struct ofi_op *op = waiting;
        waiting = op->next;
        ofi_recv_post(nw, op);
    }
}

static void ofi_dispatch(struct network_worker *nw, struct ofi_op *op, size_t len)
{
    struct ofi_am_header h;
    if (len < sizeof(h))
        return;
    memcpy(&h, op->buffer, sizeof(h));
    size_t header_len = h.header_len;
    if (h.id >= NETWORK_AM_IDS || !nw->net->config.handlers[h.id] ||
        header_len > NETWORK_AM_HEADER_MAX || sizeof(h) + header_len > len) {
        log_error("transport", "an active message (id %u) from PE %d was dropped", h.id, h.from);
        return;
    }
    _Alignas(16) char header[NETWORK_AM_HEADER_MAX];
    memcpy(header, op->buffer + sizeof(h), header_len);
    struct network_source source = {nw, h.from};
    char *data = op->buffer + sizeof(h) + header_len;
    nw->net->config.handlers[h.id](nw->owner, header, header_len, data,
                                   len - sizeof(h) - header_len, &source);
}

static void ofi_complete(struct network_worker *nw, struct ofi_op *op, size_t len, int failed)
{
    switch (op->kind) {
    case OFI_OP_COUNTED:
    case OFI_OP_COUNTED_OWN:
        if (failed)
            __atomic_store_n(&nw->failed, 1, __ATOMIC_RELAXED);
        if (op->kind == OFI_OP_COUNTED_OWN)
            free(op);
        __atomic_sub_fetch(&nw->outstanding, 1, __ATOMIC_RELEASE);
        break;
    case OFI_OP_WAITED:
        op->failed = failed;
        __atomic_store_n(&op->done, 1, __ATOMIC_RELEASE);
        break;
    case OFI_OP_RECV:
        if (!failed)
            ofi_dispatch(nw, op, len);
        ofi_recv_post(nw, op);
        break;
    case OFI_OP_REPLY:
        free(op->gathered);
        free(op->buffer);
        free(op);
        break;
    }
}

/* Reads the queue's error entry. */
static void ofi_complete_error(struct network_worker *nw)
{
    struct fi_cq_err_entry err = {0};
    if (fi_cq_readerr(nw->cq, &err, 0) <= 0)
        return;
    log_error("transport", "a libfabric operation failed: %s",
              fi_cq_strerror(nw->cq, err.prov_errno, err.err_data, NULL, 0));
    if (err.op_context)
        ofi_complete(nw, err.op_context, 0, 1);
}

static int ofi_reply_post(struct network_worker *nw, struct ofi_op *op);

/* Sends the answers that waited, in order, until the provider says again. */
static void ofi_deferred_send(struct network_worker *nw)
{
    pthread_mutex_lock(&nw->deferred_lock);
    while (nw->deferred && !ofi_reply_post(nw, nw->deferred)) {
        nw->deferred = nw->deferred->next;
        if (!nw->deferred)
            nw->deferred_tail = &nw->deferred;
    }
    pthread_mutex_unlock(&nw->deferred_lock);
}

static unsigned ofi_progress(struct network_worker *nw)
{
    if (pthread_mutex_trylock(&nw->progress_lock))
        return 0; /* another thread is at it: what it finds is what this one would */
    if (__atomic_load_n(&nw->deferred, __ATOMIC_RELAXED))
        ofi_deferred_send(nw);
    if (nw->unposted)
        ofi_recv_post_waiting(nw);
    unsigned events = 0;
    for (;;) {
        struct fi_cq_msg_entry entries[OFI_CQ_BATCH];
        ssize_t n = fi_cq_read(nw->cq, entries, OFI_CQ_BATCH);
        if (n == -FI_EAVAIL) {
            ofi_complete_error(nw);
            events++;
            continue;
        }
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            ofi_complete(nw, entries[i].op_context, entries[i].len, 0);
        events += (unsigned)n;
        /* A short read emptied the queue: reading it again would cost another pass of the
         * provider's progress (a poll of its sockets over tcp) for nothing. */
        if (n < OFI_CQ_BATCH)
            break;
    }
    pthread_mutex_unlock(&nw->progress_lock);
    return events;
}

/* Posts an operation (call, an expression giving the provider's answer), progressing nw while the
 * provider says again. Sets rc to 0 or the provider's error. */
#define OFI_POST(nw, rc, call)                                                                     \
    do {                                                                                           \
        struct transport_idle idle_ = {0};                                                         \
        while (((rc) = (int)(call)) == -FI_EAGAIN)                                                 \
            transport_wait_step((nw)->owner, &idle_);                                              \
    } while (0)

/* Waits for a blocking operation's completion. */
static int ofi_wait(struct network_worker *nw, struct ofi_op *op, const char *what)
{
    TRANSPORT_WAIT_WHILE(nw->owner, !__atomic_load_n(&op->done, __ATOMIC_ACQUIRE));
    if (op->failed) {
        log_error("transport", "libfabric %s did not complete", what);
        return -1;
    }
    return 0;
}

/* Waits until every counted operation of nw has completed. */
static int ofi_flush(struct network_worker *nw, int pe)
{
    (void)pe;
    TRANSPORT_WAIT_WHILE(nw->owner, __atomic_load_n(&nw->outstanding, __ATOMIC_ACQUIRE));
    if (__atomic_exchange_n(&nw->failed, 0, __ATOMIC_ACQ_REL)) {
        log_error("transport", "a non-blocking libfabric operation failed");
        return -1;
    }
    return 0;
}

static int ofi_flush_all(struct network_worker *nw)
{
    return ofi_flush(nw, -1);
}

/* The provider offers no fence on a reliable datagram endpoint (tcp;ofi_rxm has none): ordering
 * puts and atomics after those before is completing those before. */
static int ofi_fence(struct network_worker *nw)
{
    return ofi_flush(nw, -1);
}

/* ---- Peers, regions and keys ---- */

/* pe's address in the address vector, inserted on first use. */
static fi_addr_t ofi_peer(struct network_worker *nw, int pe)
{
    struct network *net = nw->net;
    fi_addr_t addr = __atomic_load_n(&net->addrs[pe], __ATOMIC_ACQUIRE);
    if (addr != FI_ADDR_NOTAVAIL)
        return addr;
    pthread_mutex_lock(&net->connect_lock);
    addr = net->addrs[pe];
    char name[OFI_ADDR_MAX];
    size_t len = sizeof(name);
    if (addr == FI_ADDR_NOTAVAIL) {
        if (!net->remotes[pe])
            net->remotes[pe] = calloc(OFI_MAX_REGIONS, sizeof(*net->remotes[pe]));
        if (!net->remotes[pe] || net->config.exchange.fetch(pe, "ofi.addr", name, &len))
            log_error("transport", "no libfabric address published by PE %d", pe);
        else if (fi_av_insert(net->av, name, 1, &addr, 0, NULL) != 1)
            log_error("transport", "cannot insert PE %d's address", pe);
        else
            __atomic_store_n(&net->addrs[pe], addr, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&net->connect_lock);
    return addr;
}

static int ofi_by_message(struct network_worker *nw, int pe)
{
    return ofi_peer(nw, pe) == FI_ADDR_NOTAVAIL ? -1 : 0;
}

/* pe's region id as this PE names it, its key fetched on first use. */
static const struct ofi_remote_region *ofi_remote(struct network_worker *nw, int pe, int id)
{
    struct network *net = nw->net;
    if (id < 0 || id >= OFI_MAX_REGIONS || ofi_peer(nw, pe) == FI_ADDR_NOTAVAIL)
        return NULL;
    struct ofi_remote_region *remote = &net->remotes[pe][id];
    if (__atomic_load_n(&remote->known, __ATOMIC_ACQUIRE))
        return remote;
    uint64_t key[2];
    size_t len = sizeof(key);
    if (transport_region_key(nw->owner, pe, id, key, &len) || len != sizeof(key)) {
        log_error("transport", "no key for region %d from PE %d", id, pe);
        return NULL;
    }
    pthread_mutex_lock(&net->connect_lock);
    remote->addr = key[0];
    remote->key = key[1];
    __atomic_store_n(&remote->known, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&net->connect_lock);
    return remote;
}

/* A region's key as peers need it: the address a put names its start by, then the key. */
static int ofi_region_register(struct network *net, int id, void *base, size_t len, void *key,
                               size_t *key_len)
{
    if (id < 0 || id >= OFI_MAX_REGIONS || net->regions[id] || !net->workers ||
        *key_len < 2 * sizeof(uint64_t))
        return -1;
    /* Keys this module chooses: unique among the registrations alive. */
    uint64_t requested = (++net->registrations << 8) | (uint64_t)id;
    int rc = fi_mr_reg(net->domain, base, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, requested, 0,
                       &net->regions[id], NULL);
    if (rc)
        return ofi_fail("fi_mr_reg", rc);
    if (net->mr_endpoint && ((rc = fi_mr_bind(net->regions[id], &net->workers->ep->fid, 0)) ||
                             (rc = fi_mr_enable(net->regions[id])))) {
        fi_close(&net->regions[id]->fid);
        net->regions[id] = NULL;
        return ofi_fail("fi_mr_bind", rc);
    }
    uint64_t packed[2] = {net->virt_addr ? (uint64_t)(uintptr_t)base : 0,
                          fi_mr_key(net->regions[id])};
    if (packed[1] == FI_KEY_NOTAVAIL) {
        log_error("transport", "the provider's key of region %d is longer than 8 bytes", id);
        return -1;
    }
    memcpy(key, packed, sizeof(packed));
    *key_len = sizeof(packed);
    return 0;
}

static void ofi_region_deregister(struct network *net, int id)
{
    if (id < 0 || id >= OFI_MAX_REGIONS)
        return;
    pthread_mutex_lock(&net->connect_lock);
    for (int pe = 0; pe < net->config.n_pes; pe++)
        if (net->remotes && net->remotes[pe])
            net->remotes[pe][id].known = 0;
    pthread_mutex_unlock(&net->connect_lock);
    if (net->regions[id])
        fi_close(&net->regions[id]->fid);
    net->regions[id] = NULL;
}

/* ---- RMA and atomics ---- */

/* The context of a non-blocking operation about to be posted, counted outstanding: the
 * worker's own, shared by all of them, unless the provider uses contexts' memory (FI_CONTEXT) or
 * the operation needs a copy of copy_len bytes of its source (a blocking put or atomic that
 * returns at once: not every provider completes an injected operation), which then get one of
 * their own, with the copy at op->buffer. NULL without memory. */
static struct ofi_op *ofi_counted_begin(struct network_worker *nw, const void *source,
                                        size_t copy_len)
{
    struct ofi_op *op = &nw->counted;
    if (copy_len || (nw->net->info->mode & (FI_CONTEXT | FI_CONTEXT2))) {
        if (!(op = calloc(1, sizeof(*op) + copy_len)))
            return NULL;
        op->kind = OFI_OP_COUNTED_OWN;
        op->buffer = (char *)(op + 1);
        if (copy_len)
            memcpy(op->buffer, source, copy_len);
    }
    __atomic_add_fetch(&nw->outstanding, 1, __ATOMIC_RELAXED);
    return op;
}

/* Takes back an operation's count that could not be posted. */
static void ofi_counted_cancel(struct network_worker *nw, struct ofi_op *op)
{
    __atomic_sub_fetch(&nw->outstanding, 1, __ATOMIC_RELAXED);
    if (op->kind == OFI_OP_COUNTED_OWN)
        free(op);
}

static int ofi_rma(struct network_worker *nw, int pe, int id, size_t offset, void *buf, size_t len,
                   enum network_rma rma_op)
{
    int nbi = NETWORK_RMA_IS_NBI(rma_op), put = NETWORK_RMA_IS_PUT(rma_op);
    const struct ofi_remote_region *remote = ofi_remote(nw, pe, id);
    if (!remote)
        return -1;
    struct ofi_op waited = {.kind = OFI_OP_WAITED};
    /* A short blocking put goes from a copy: it returns at once, and a flush waits for it. */
    int copied = put && !nbi && len <= OFI_PUT_COPY_MAX, counted = nbi || copied;
    struct ofi_op *op = counted ? ofi_counted_begin(nw, buf, copied ? len : 0) : &waited;
    if (!op)
        return -1;
    struct iovec iov = {copied ? op->buffer : buf, len};
    struct fi_rma_iov rma = {remote->addr + offset, len, remote->key};
    struct fi_msg_rma msg = {
        .msg_iov = &iov,
        .iov_count = 1,
        .addr = nw->net->addrs[pe],
        .rma_iov = &rma,
        .rma_iov_count = 1,
        .context = op,
    };
    uint64_t flags = FI_COMPLETION | (put ? nw->net->put_flags : 0);
    int rc;
    OFI_POST(nw, rc, put ? fi_writemsg(nw->ep, &msg, flags) : fi_readmsg(nw->ep, &msg, flags));
    if (rc) {
        if (counted)
            ofi_counted_cancel(nw, op);
        return ofi_fail(put ? "fi_writemsg" : "fi_readmsg", rc);
    }
    return counted ? 0 : ofi_wait(nw, op, put ? "a put" : "a get");
}

static const enum fi_op ofi_amo_op[] = {
    [TRANSPORT_AMO_ADD] = FI_SUM,
    [TRANSPORT_AMO_AND] = FI_BAND,
    [TRANSPORT_AMO_OR] = FI_BOR,
    [TRANSPORT_AMO_XOR] = FI_BXOR,
    [TRANSPORT_AMO_SWAP] = FI_ATOMIC_WRITE,
    [TRANSPORT_AMO_CSWAP] = FI_CSWAP,
};

/* A non-fetching operation goes from a copy of its operand and is counted; a fetching one (and a
 * swap or a compare-and-swap, which fetch anyway) waits for its answer. */
static int ofi_atomic(struct network_worker *nw, enum transport_amo op, int pe, int id,
                      size_t offset, uint64_t value, uint64_t compare, void *fetch, size_t size)
{
    const struct ofi_remote_region *remote = ofi_remote(nw, pe, id);
    if (!remote)
        return -1;
    enum fi_datatype type = size == 4 ? FI_UINT32 : FI_UINT64;
    uint64_t operand = value, comparand = compare, result = 0; /* little-endian: low bytes */
    struct fi_ioc ioc = {&operand, 1}, compare_ioc = {&comparand, 1}, result_ioc = {&result, 1};
    struct fi_rma_ioc rma = {remote->addr + offset, 1, remote->key};
    int fetching = fetch || op == TRANSPORT_AMO_SWAP || op == TRANSPORT_AMO_CSWAP;
    struct ofi_op waited = {.kind = OFI_OP_WAITED};
    struct fi_msg_atomic msg = {
        .msg_iov = &ioc,
        .iov_count = 1,
        .addr = nw->net->addrs[pe],
        .rma_iov = &rma,
        .rma_iov_count = 1,
        .datatype = type,
        .op = ofi_amo_op[op],
        .context = &waited,
    };
    int rc;
    if (!fetching) {
        struct ofi_op *op = ofi_counted_begin(nw, &operand, sizeof(operand));
        if (!op)
            return -1;
        ioc.addr = op->buffer;
        msg.context = op;
        OFI_POST(nw, rc, fi_atomicmsg(nw->ep, &msg, FI_COMPLETION | nw->net->put_flags));
        if (rc)
            ofi_counted_cancel(nw, msg.context);
        return rc ? ofi_fail("fi_atomicmsg", rc) : 0;
    }
    if (op == TRANSPORT_AMO_CSWAP)
        OFI_POST(nw, rc,
                 fi_compare_atomicmsg(nw->ep, &msg, &compare_ioc, NULL, 1, &result_ioc, NULL, 1,
                                      FI_COMPLETION));
    else
        OFI_POST(nw, rc, fi_fetch_atomicmsg(nw->ep, &msg, &result_ioc, NULL, 1, FI_COMPLETION));
    if (rc)
        return ofi_fail("fi_fetch_atomicmsg", rc);
    if (ofi_wait(nw, &waited, "an atomic"))
        return -1;
    if (fetch)
        memcpy(fetch, &result, size);
    return 0;
}

/* ---- Active messages ---- */

/* Sends the parts of a message as one, from nw to pe, with op as its context. Where the
 * provider takes fewer parts than count, they go from one buffer, op->gathered (made once, freed
 * by op's owner after the completion). */
static ssize_t ofi_send_parts(struct network_worker *nw, fi_addr_t to, struct iovec *iov,
                              size_t count, struct ofi_op *op)
{
    struct iovec whole;
    if (count > nw->net->iov_limit) {
        size_t len = 0;
        for (size_t i = 0; i < count; i++)
            len += iov[i].iov_len;
        if (!op->gathered) {
            if (!(op->gathered = malloc(len ? len : 1)))
                return -FI_ENOMEM;
            for (size_t i = 0, at = 0; i < count; at += iov[i++].iov_len)
                memcpy(op->gathered + at, iov[i].iov_base, iov[i].iov_len);
        }
        whole = (struct iovec){op->gathered, len};
        iov = &whole;
        count = 1;
    }
    struct fi_msg msg = {.msg_iov = iov, .iov_count = count, .addr = to, .context = op};
    return fi_sendmsg(nw->ep, &msg, FI_COMPLETION);
}

static int ofi_am_send(struct network_worker *nw, int pe, unsigned id, const void *header,
                       size_t header_len, const void *data, size_t len, int reply)
{
    (void)reply; /* answers always go to the sender's first endpoint */
    fi_addr_t to = ofi_peer(nw, pe);
    if (to == FI_ADDR_NOTAVAIL || header_len > NETWORK_AM_HEADER_MAX || len > NETWORK_AM_DATA_MAX)
        return -1;
    struct ofi_am_header h = {id, nw->net->config.my_pe, (uint32_t)header_len, 0};
    struct iovec iov[3] = {{&h, sizeof(h)}, {(void *)header, header_len}, {(void *)data, len}};
    struct ofi_op waited = {.kind = OFI_OP_WAITED};
    int rc;
    OFI_POST(nw, rc, ofi_send_parts(nw, to, iov, len ? 3 : 2, &waited));
    rc = rc ? ofi_fail("fi_sendmsg", rc) : ofi_wait(nw, &waited, "an active message");
    free(waited.gathered);
    return rc;
}

/* 0 once posted, or -1 where the provider says again (an error is reported and the answer
 * dropped: its requester learns nothing more from a retry). */
static int ofi_reply_post(struct network_worker *nw, struct ofi_op *op)
{
    struct iovec iov[2] = {{&op->am_header, sizeof(op->am_header)},
                           {op->buffer, op->header_len + op->len}};
    ssize_t rc = ofi_send_parts(nw, nw->net->addrs[op->pe], iov, 2, op);
    if (rc == -FI_EAGAIN)
        return -1;
    if (rc) {
        ofi_fail("fi_sendmsg (an answer)", (int)rc);
        free(op->gathered);
        free(op->buffer);
        free(op);
    }
    return 0;
}

/* A handler may not wait: an answer the provider cannot take now waits in the worker's list
 * for its next progress. */
static void ofi_am_reply(const struct network_source *source, unsigned id, char *buffer,
                         size_t header_len, size_t len)
{
    struct network_worker *nw = source->nw;
    struct ofi_op *op = calloc(1, sizeof(*op));
    if (!op || ofi_peer(nw, source->from) == FI_ADDR_NOTAVAIL) {
        log_error("transport", "cannot answer PE %d", source->from);
        free(op);
        free(buffer);
        return;
    }
    *op = (struct ofi_op){.kind = OFI_OP_REPLY,
                          .buffer = buffer,
                          .am_header = {id, nw->net->config.my_pe, (uint32_t)header_len, 0},
                          .pe = source->from,
                          .header_len = header_len,
                          .len = len};
    pthread_mutex_lock(&nw->deferred_lock);
    if (nw->deferred || ofi_reply_post(nw, op)) {
        *nw->deferred_tail = op;
        nw->deferred_tail = &op->next;
    }
    pthread_mutex_unlock(&nw->deferred_lock);
}

/* ---- Workers ---- */

static int ofi_event_fd(struct network_worker *nw)
{
    return nw->wait_fd;
}

static int ofi_arm(struct network_worker *nw)
{
    struct fid *fids[1] = {&nw->cq->fid};
    int rc = fi_trywait(nw->net->fabric, fids, 1);
    return rc == FI_SUCCESS ? 0 : rc == -FI_EAGAIN ? 1 : -1;
}

static void ofi_worker_free(struct network_worker *nw)
{
    if (nw->ep)
        fi_close(&nw->ep->fid);
    if (nw->cq)
        fi_close(&nw->cq->fid);
    if (nw->receives)
        for (int i = 0; i < OFI_RECV_BUFFERS; i++)
            free(nw->receives[i].buffer);
    free(nw->receives);
    while (nw->deferred) {
        struct ofi_op *op = nw->deferred;
        nw->deferred = op->next;
        free(op->buffer);
        free(op);
    }
    pthread_mutex_destroy(&nw->deferred_lock);
    pthread_mutex_destroy(&nw->progress_lock);
    free(nw);
}

/* A queue with a descriptor to sleep on where waits will sleep and the provider has one, else
 * without: util-based providers (tcp;ofi_rxm) signal a queue's descriptor with a write and a read
 * per completion, a syscall pair on every operation. */
static int ofi_cq_open(struct network *net, struct network_worker *nw)
{
    struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD};
    nw->wait_fd = -1;
    if (net->config.events && !fi_cq_open(net->domain, &attr, &nw->cq, NULL)) {
        if (fi_control(&nw->cq->fid, FI_GETWAIT, &nw->wait_fd))
            nw->wait_fd = -1;
        return 0;
    }
    attr.wait_obj = FI_WAIT_NONE;
    int rc = fi_cq_open(net->domain, &attr, &nw->cq, NULL);
    return rc ? ofi_fail("fi_cq_open", rc) : 0;
}

static int ofi_publish_address(struct network_worker *nw)
{
    char name[OFI_ADDR_MAX];
    size_t len = sizeof(name);
    int rc = fi_getname(&nw->ep->fid, name, &len);
    if (rc)
        return ofi_fail("fi_getname", rc);
    return nw->net->config.exchange.publish("ofi.addr", name, len);
}

static int ofi_receives_post(struct network_worker *nw)
{
    nw->receives = calloc(OFI_RECV_BUFFERS, sizeof(*nw->receives));
    if (!nw->receives)
        return -1;
    for (int i = 0; i < OFI_RECV_BUFFERS; i++) {
        if (!(nw->receives[i].buffer = malloc(OFI_RECV_BYTES)))
            return -1;
        ofi_recv_post(nw, &nw->receives[i]);
    }
    return 0;
}

/* Whether every atomic operation of 4 and 8 bytes is valid on ep: the transport layer then
 * sends none by message. */
static int ofi_atomics_valid(struct fid_ep *ep)
{
    enum fi_datatype types[] = {FI_UINT32, FI_UINT64};
    for (size_t t = 0; t < 2; t++)
        for (size_t op = 0; op < sizeof(ofi_amo_op) / sizeof(ofi_amo_op[0]); op++) {
            size_t count;
            int ok = op == TRANSPORT_AMO_CSWAP
                         ? !fi_compare_atomicvalid(ep, types[t], ofi_amo_op[op], &count)
                         : !fi_atomicvalid(ep, types[t], ofi_amo_op[op], &count) &&
                               !fi_fetch_atomicvalid(ep, types[t], ofi_amo_op[op], &count);
            if (!ok)
                return 0;
        }
    return 1;
}

static int ofi_worker_create(struct network *net, struct transport_worker *owner,
                             struct network_worker **out)
{
    struct network_worker *nw = calloc(1, sizeof(*nw));
    if (!nw)
        return -1;
    nw->owner = owner;
    nw->net = net;
    nw->counted.kind = OFI_OP_COUNTED;
    nw->deferred_tail = &nw->deferred;
    pthread_mutex_init(&nw->deferred_lock, NULL);
    pthread_mutex_init(&nw->progress_lock, NULL);
    int first = !net->workers, rc;
    if ((rc = ofi_cq_open(net, nw)) || (rc = fi_endpoint(net->domain, net->info, &nw->ep, NULL)) ||
        (rc = fi_ep_bind(nw->ep, &net->av->fid, 0)) ||
        (rc = fi_ep_bind(nw->ep, &nw->cq->fid, FI_TRANSMIT | FI_RECV)) ||
        (rc = fi_enable(nw->ep))) {
        ofi_fail("making an endpoint", rc);
        ofi_worker_free(nw);
        return -1;
    }
    if (first && (ofi_receives_post(nw) || ofi_publish_address(nw))) {
        ofi_worker_free(nw);
        return -1;
    }
    if (first)
        net->atomics = ofi_atomics_valid(nw->ep);
    pthread_mutex_lock(&net->workers_lock);
    struct network_worker **tail = &net->workers;
    while (*tail)
        tail = &(*tail)->next;
    *tail = nw;
    pthread_mutex_unlock(&net->workers_lock);
    *out = nw;
    return 0;
}

static void ofi_region_deregister(struct network *net, int id);

/* Registrations bound to the first endpoint (FI_MR_ENDPOINT) go before it. */
static void ofi_worker_destroy(struct network_worker *nw)
{
    struct network *net = nw->net;
    ofi_flush(nw, -1);
    for (int id = 0; net->mr_endpoint && nw == net->workers && id < OFI_MAX_REGIONS; id++)
        ofi_region_deregister(net, id);
    pthread_mutex_lock(&net->workers_lock);
    for (struct network_worker **at = &net->workers; *at; at = &(*at)->next)
        if (*at == nw) {
            *at = nw->next;
            break;
        }
    pthread_mutex_unlock(&net->workers_lock);
    ofi_worker_free(nw);
}

/* ---- The network ---- */

/* What this module asks of a provider: a reliable datagram endpoint with messages, RMA and
 * atomics, messages kept in order (a flush message must come after what it confirms), and
 * memory registered in any of the modes this module handles. */
static struct fi_info *ofi_hints(void)
{
    struct fi_info *hints = ofi_lib.fi_dupinfo(NULL);
    if (!hints)
        return NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA | FI_ATOMIC;
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->domain_attr->mr_mode =
        FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_SAFE;
    return hints;
}

/* Why a provider that offers RMA and atomics still cannot carry a job (NULL: it can). */
static const char *ofi_unusable(const char *provider)
{
    if (!strcmp(provider, "udp;ofi_rxd"))
        return "not usable: crashes inside libfabric 1.17 on a context's fetching atomic";
    return NULL;
}

/* The providers libfabric offers here for this module, or NULL; provider: one of that name
 * only (NULL or "": any). delivery: asks for puts that complete once delivered. */
static struct fi_info *ofi_providers(const char *provider, int delivery)
{
    if (ofi_library_load())
        return NULL;
    struct fi_info *hints = ofi_hints(), *info = NULL;
    if (!hints)
        return NULL;
    if (provider && *provider)
        hints->fabric_attr->prov_name = strdup(provider);
    if (delivery)
        hints->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
    if (ofi_lib.fi_getinfo(OFI_API_VERSION, NULL, NULL, 0, hints, &info))
        info = NULL;
    ofi_lib.fi_freeinfo(hints);
    return info;
}

static void ofi_fini(struct network *net);

static int ofi_open(struct network *net)
{
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    int rc;
    if ((rc = ofi_lib.fi_fabric(net->info->fabric_attr, &net->fabric, NULL)) ||
        (rc = fi_domain(net->fabric, net->info, &net->domain, NULL)) ||
        (rc = fi_av_open(net->domain, &av_attr, &net->av, NULL)))
        return ofi_fail("opening the fabric", rc);
    uint64_t mr_mode = net->info->domain_attr->mr_mode;
    net->virt_addr = !!(mr_mode & FI_MR_VIRT_ADDR);
    net->prov_key = !!(mr_mode & FI_MR_PROV_KEY);
    net->mr_endpoint = !!(mr_mode & FI_MR_ENDPOINT);
    net->iov_limit = net->info->tx_attr->iov_limit;
    const char *test_limit = getenv("STRATA_TEST_OFI_IOV_LIMIT");
    int limit = test_limit ? atoi(test_limit) : 0;
    if (limit > 0 && (size_t)limit < net->iov_limit)
        net->iov_limit = (size_t)limit;
    return 0;
}

static int ofi_init(const struct network_config *config, struct network **out)
{
    struct network *net = calloc(1, sizeof(*net));
    if (!net)
        return -1;
    net->config = *config;
    pthread_mutex_init(&net->connect_lock, NULL);
    pthread_mutex_init(&net->workers_lock, NULL);
    net->addrs = malloc((size_t)config->n_pes * sizeof(*net->addrs));
    net->remotes = calloc((size_t)config->n_pes, sizeof(*net->remotes));
    if (!net->addrs || !net->remotes) {
        ofi_fini(net);
        return -1;
    }
    for (int pe = 0; pe < config->n_pes; pe++)
        net->addrs[pe] = FI_ADDR_NOTAVAIL;
    /* Puts complete once visible at the target, where the provider can say so. */
    if ((net->info = ofi_providers(config->provider, 1)))
        net->put_flags = FI_DELIVERY_COMPLETE;
    else
        net->info = ofi_providers(config->provider, 0);
    if (!net->info) {
        log_error("transport", "no libfabric provider%s%s offers RMA and atomics here",
                  config->provider && *config->provider ? " named " : "",
                  config->provider ? config->provider : "");
        ofi_fini(net);
        return -1;
    }
    const char *unusable = ofi_unusable(net->info->fabric_attr->prov_name);
    if (unusable) {
        log_error("transport", "libfabric provider %s: %s", net->info->fabric_attr->prov_name,
                  unusable);
        ofi_fini(net);
        return -1;
    }
    if (ofi_open(net)) {
        ofi_fini(net);
        return -1;
    }
    LOG(LOG_INIT, "transport", "libfabric: provider %s, domain %s, mr_mode 0x%llx%s",
        net->info->fabric_attr->prov_name, net->info->domain_attr->name,
        (unsigned long long)net->info->domain_attr->mr_mode,
        net->put_flags ? ", delivery complete" : "");
    *out = net;
    return 0;
}

static void ofi_fini(struct network *net)
{
    for (int id = 0; id < OFI_MAX_REGIONS; id++)
        ofi_region_deregister(net, id);
    if (net->av)
        fi_close(&net->av->fid);
    if (net->domain)
        fi_close(&net->domain->fid);
    if (net->fabric)
        fi_close(&net->fabric->fid);
    if (net->info)
        ofi_lib.fi_freeinfo(net->info);
    if (net->remotes)
        for (int pe = 0; pe < net->config.n_pes; pe++)
            free(net->remotes[pe]);
    free(net->remotes);
    free(net->addrs);
    pthread_mutex_destroy(&net->connect_lock);
    pthread_mutex_destroy(&net->workers_lock);
    free(net);
}

/* Whether the provider (a name as "tcp;ofi_rxm": a core provider under utility ones) has a
 * utility provider perform its atomics: those do them at the target with the CPU's atomic
 * instructions. */
static int ofi_cpu_atomics(const char *provider)
{
    static const char *const emulating[] = {"ofi_rxm", "ofi_rxd", "shm"};
    for (const char *name = provider; *name;) {
        size_t len = strcspn(name, ";");
        for (size_t i = 0; i < sizeof(emulating) / sizeof(emulating[0]); i++)
            if (strlen(emulating[i]) == len && !strncmp(name, emulating[i], len))
                return 1;
        name += len + (name[len] == ';');
    }
    return 0;
}

static void ofi_query(struct network *net, struct network_attr *attr)
{
    attr->tcp = 0; /* every peer is reached by the provider's RMA: no message needs the lane */
    attr->tcp_devices = NULL;
    attr->atomics = net->atomics;
    attr->fence_completes = 1; /* see ofi_fence */
    attr->cpu_atomics = ofi_cpu_atomics(net->info->fabric_attr->prov_name);
    attr->eager_max = OFI_EAGER_MAX;
}

/* The provider of a network that UCX cannot drive whose device this node has (in sysfs, so that
 * nodes without one never load libfabric): Slingshot's cxi (its own device class), or by the
 * driver of an RDMA device, EFA's efa, Omni-Path's opx (hfi1) and Intel Ethernet's psm3 (irdma).
 * NULL: none. STRATA_TEST_SYSFS: a directory read instead of /sys (a testing aid). */
static const char *ofi_node_provider(void)
{
    static const struct {
        const char *driver, *provider;
    } rdma[] = {{"efa", "efa"}, {"hfi1", "opx"}, {"irdma", "psm3"}};
    const char *sysfs = getenv("STRATA_TEST_SYSFS");
    char path[PATH_MAX], target[PATH_MAX];
    sysfs = sysfs && *sysfs ? sysfs : "/sys";
    snprintf(path, sizeof(path), "%s/class/cxi", sysfs);
    if (!access(path, F_OK))
        return "cxi";
    snprintf(path, sizeof(path), "%s/class/infiniband", sysfs);
    DIR *dir = opendir(path);
    const char *provider = NULL;
    for (struct dirent *entry; dir && !provider && (entry = readdir(dir));) {
        snprintf(path, sizeof(path), "%s/class/infiniband/%s/device/driver", sysfs, entry->d_name);
        ssize_t len = readlink(path, target, sizeof(target) - 1);
        if (len <= 0)
            continue;
        target[len] = 0;
        const char *driver = strrchr(target, '/') ? strrchr(target, '/') + 1 : target;
        for (size_t i = 0; i < sizeof(rdma) / sizeof(rdma[0]) && !provider; i++)
            if (!strcmp(driver, rdma[i].driver))
                provider = rdma[i].provider;
    }
    if (dir)
        closedir(dir);
    return provider;
}

/* A device of such a network, and libfabric's provider for it. */
static int ofi_preferred(void)
{
    static int preferred = -1;
    if (preferred >= 0)
        return preferred;
    const char *provider = ofi_node_provider();
    struct fi_info *info = provider ? ofi_providers(provider, 0) : NULL;
    preferred = info != NULL;
    if (info)
        ofi_lib.fi_freeinfo(info);
    else if (provider)
        LOG(LOG_INIT, "transport", "a device for libfabric's %s here, but no such provider",
            provider);
    return preferred;
}

static void ofi_describe(FILE *out)
{
    if (ofi_library_load()) {
        fprintf(out, "    libfabric.so.1 cannot be loaded\n");
        return;
    }
    fprintf(out, "    libfabric %u.%u\n", FI_MAJOR(ofi_lib.fi_version()),
            FI_MINOR(ofi_lib.fi_version()));
    struct fi_info *list = ofi_providers(NULL, 0);
    for (struct fi_info *info = list; info; info = info->next) {
        int seen = 0; /* a provider offers a domain once per address format and mode */
        for (struct fi_info *before = list; before != info && !seen; before = before->next)
            seen = !strcmp(before->fabric_attr->prov_name, info->fabric_attr->prov_name) &&
                   !strcmp(before->domain_attr->name, info->domain_attr->name);
        const char *unusable = ofi_unusable(info->fabric_attr->prov_name);
        if (!seen)
            fprintf(out, "    provider %s, domain %s%s%s%s%s\n", info->fabric_attr->prov_name,
                    info->domain_attr->name, info->caps & FI_HMEM ? ", GPU memory" : "",
                    unusable ? " (" : "", unusable ? unusable : "", unusable ? ")" : "");
    }
    if (!list)
        fprintf(out, "    no provider with RMA and atomics\n");
    else
        ofi_lib.fi_freeinfo(list);
}

static int ofi_reaches_memory(struct network *net, enum transport_mem_type type)
{
    (void)net;
    return type == TRANSPORT_MEM_HOST;
}

const struct network_ops network_ofi_ops = {
    .name = "ofi",
    .preferred = ofi_preferred,
    .describe = ofi_describe,
    .init = ofi_init,
    .fini = ofi_fini,
    .query = ofi_query,
    .reaches_memory = ofi_reaches_memory,
    .worker_create = ofi_worker_create,
    .worker_destroy = ofi_worker_destroy,
    .region_register = ofi_region_register,
    .region_deregister = ofi_region_deregister,
    .by_message = ofi_by_message,
    .rma = ofi_rma,
    .atomic = ofi_atomic,
    .fence = ofi_fence,
    .flush = ofi_flush,
    .flush_all = ofi_flush_all,
    .am_send = ofi_am_send,
    .am_reply = ofi_am_reply,
    .progress = ofi_progress,
    .event_fd = ofi_event_fd,
    .arm = ofi_arm,
};
