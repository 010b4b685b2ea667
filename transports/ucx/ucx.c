/* SPDX-License-Identifier: BSD-3-Clause */
/* The UCX network: one context per process and one worker per transport worker (the first made
 * is the one peers connect to). Endpoints and remote keys belong to a worker and are made on
 * first use from what peers published through the exchange callbacks. */
#include "../../common/log.h"
#include "../network.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

#define UCX_MAX_REGIONS 64
#define UCX_ADDRESS_MAX 4096
#define UCX_FLUSH_BATCH 64 /* endpoint flushes in flight at once */

struct ucx_remote_region {
    uint64_t base;   /* the region's address in the peer's process */
    ucp_rkey_h rkey; /* NULL until first use */
};

struct ucx_peer {
    ucp_ep_h ep;                       /* NULL until first use */
    struct ucx_remote_region *regions; /* UCX_MAX_REGIONS of them, made with the endpoint */
    int by_message;                    /* see ucx_ep_by_message */
};

/* What UCX hands each active-message handler: the worker and the message's id. */
struct ucx_am_arg {
    struct network_worker *nw;
    unsigned id;
};

struct network_worker {
    struct transport_worker *owner;
    struct network *net;
    ucp_worker_h worker;
    int event_fd; /* the worker's event descriptor, or -1 where it has none */
    struct ucx_peer *peers;
    int *connected;               /* the PEs with an endpoint here, in the order they were made */
    size_t n_connected;           /* grows under connect_lock; read without it */
    pthread_mutex_t connect_lock; /* endpoints and keys are made once, by one thread (recursive) */
    /* Non-blocking puts and gets still in flight, kept until a flush completes them. UCX 1.13
     * does not count them in a worker flush once their requests are released: a put waiting in
     * an endpoint's pending queue (a full shared-memory FIFO) then reads its source after the
     * flush has returned, and a flush does not wait for get replies over the shared-memory
     * transports. */
    ucs_status_ptr_t *pending;
    size_t n_pending, pending_capacity;
    pthread_mutex_t pending_lock;
    struct ucx_am_arg am_args[NETWORK_AM_IDS];
    struct network_worker *next;
};

struct network {
    struct network_config config;
    int tcp; /* UCX_TLS leaves TCP in */
    ucp_context_h context;
    ucp_mem_h regions[UCX_MAX_REGIONS];
    struct network_worker *workers; /* the first made first */
    pthread_mutex_t workers_lock;
};

struct network_source {
    ucp_ep_h reply_ep;
};

static int ucx_fail(const char *what, ucs_status_t status)
{
    log_error("transport", "UCX %s failed: %s", what, ucs_status_string(status));
    return -1;
}

/* Waits for a request returned by a _nbx call, progressing the worker meanwhile. */
static int ucx_wait(struct network_worker *nw, ucs_status_ptr_t request, const char *what)
{
    if (request == NULL)
        return 0;
    if (UCS_PTR_IS_ERR(request))
        return ucx_fail(what, UCS_PTR_STATUS(request));
    ucs_status_t status;
    TRANSPORT_WAIT_WHILE(nw->owner, (status = ucp_request_check_status(request)) == UCS_INPROGRESS);
    ucp_request_free(request);
    return status == UCS_OK ? 0 : ucx_fail(what, status);
}

/* Sets UCX's key to value unless the user's environment sets it (env: its variable's name). */
static void ucx_config_default(ucp_config_t *config, const char *env, const char *key,
                               const char *value)
{
    if (!getenv(env))
        ucp_config_modify(config, key, value);
}

static int ucx_publish_address(struct network_worker *nw)
{
    ucp_address_t *address;
    size_t len;
    ucs_status_t status = ucp_worker_get_address(nw->worker, &address, &len);
    if (status != UCS_OK)
        return ucx_fail("ucp_worker_get_address", status);
    int rc = nw->net->config.exchange.publish("ucx.addr", address, len);
    ucp_worker_release_address(nw->worker, address);
    return rc;
}

/* Hands a message to the transport layer's handler with its header aligned; a payload that
 * would have to be pulled (rendezvous, which am_send's eager flag rules out) as missing. */
static ucs_status_t ucx_am_dispatch(void *arg, const void *header, size_t header_len, void *data,
                                    size_t len, const ucp_am_recv_param_t *param)
{
    const struct ucx_am_arg *am = arg;
    _Alignas(16) char aligned[NETWORK_AM_HEADER_MAX];
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        log_error("transport", "unexpected rendezvous active message");
        data = NULL;
    }
    if (header_len > sizeof(aligned)) {
        log_error("transport", "an active message's header of %zu bytes was dropped", header_len);
        return UCS_OK;
    }
    memcpy(aligned, header, header_len);
    struct network_source source = {param->reply_ep};
    am->nw->net->config.handlers[am->id](am->nw->owner, aligned, header_len, data, len, &source);
    return UCS_OK;
}

static int ucx_am_handlers_set(struct network_worker *nw)
{
    for (unsigned id = 0; id < NETWORK_AM_IDS; id++) {
        if (!nw->net->config.handlers[id])
            continue;
        nw->am_args[id] = (struct ucx_am_arg){nw, id};
        ucp_am_handler_param_t param = {
            .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                          UCP_AM_HANDLER_PARAM_FIELD_ARG,
            .id = id,
            .cb = ucx_am_dispatch,
            .arg = &nw->am_args[id],
        };
        ucs_status_t status = ucp_worker_set_am_recv_handler(nw->worker, &param);
        if (status != UCS_OK)
            return ucx_fail("ucp_worker_set_am_recv_handler", status);
    }
    return 0;
}

static void ucx_worker_free(struct network_worker *nw)
{
    pthread_mutex_destroy(&nw->connect_lock);
    pthread_mutex_destroy(&nw->pending_lock);
    free(nw->pending);
    for (size_t i = 0; i < nw->n_connected; i++)
        free(nw->peers[nw->connected[i]].regions);
    free(nw->connected);
    free(nw->peers);
    free(nw);
}

/* A worker is thread-safe where the transport is: a private context's operations can wait there
 * after their call has returned, for the progress thread to move them on, whatever its lock costs.
 * The first worker's address is the one published. */
static int ucx_worker_create(struct network *net, struct transport_worker *owner,
                             struct network_worker **out)
{
    struct network_worker *nw = calloc(1, sizeof(*nw));
    if (!nw)
        return -1;
    nw->owner = owner;
    nw->net = net;
    pthread_mutexattr_t recursive;
    pthread_mutexattr_init(&recursive);
    pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&nw->connect_lock, &recursive);
    pthread_mutexattr_destroy(&recursive);
    pthread_mutex_init(&nw->pending_lock, NULL);
    nw->peers = calloc((size_t)net->config.n_pes, sizeof(*nw->peers));
    nw->connected = calloc((size_t)net->config.n_pes, sizeof(*nw->connected));
    ucp_worker_params_t params = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = net->config.thread_safe ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SINGLE,
    };
    ucs_status_t status = nw->peers && nw->connected
                              ? ucp_worker_create(net->context, &params, &nw->worker)
                              : UCS_ERR_NO_MEMORY;
    if (status != UCS_OK) {
        ucx_fail("ucp_worker_create", status);
        ucx_worker_free(nw);
        return -1;
    }
    if (ucp_worker_get_efd(nw->worker, &nw->event_fd) != UCS_OK)
        nw->event_fd = -1;
    if (ucx_am_handlers_set(nw) || (!net->workers && ucx_publish_address(nw))) {
        ucp_worker_destroy(nw->worker);
        ucx_worker_free(nw);
        return -1;
    }
    pthread_mutex_lock(&net->workers_lock);
    struct network_worker **tail = &net->workers;
    while (*tail)
        tail = &(*tail)->next;
    *tail = nw;
    pthread_mutex_unlock(&net->workers_lock);
    *out = nw;
    return 0;
}

/* Only the PEs with an endpoint here have regions. */
static void ucx_release_keys(struct network_worker *nw, int id)
{
    size_t n = __atomic_load_n(&nw->n_connected, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < n; i++) {
        struct ucx_remote_region *remote = &nw->peers[nw->connected[i]].regions[id];
        if (remote->rkey)
            ucp_rkey_destroy(remote->rkey);
        remote->rkey = NULL;
    }
}

static int ucx_pending_wait(struct network_worker *nw);

/* Endpoints are not closed one by one: a graceful close waits for peers that may already have
 * left, and a forced close needs peer-failure handling, which rules out some shared-memory
 * transports. Destroying the worker releases them. */
static void ucx_worker_destroy(struct network_worker *nw)
{
    struct network *net = nw->net;
    pthread_mutex_lock(&net->workers_lock);
    for (struct network_worker **at = &net->workers; *at; at = &(*at)->next)
        if (*at == nw) {
            *at = nw->next;
            break;
        }
    pthread_mutex_unlock(&net->workers_lock);
    for (int id = 0; id < UCX_MAX_REGIONS; id++)
        ucx_release_keys(nw, id);
    ucx_pending_wait(nw);
    ucp_worker_destroy(nw->worker);
    ucx_worker_free(nw);
}

/* Whether UCX_TLS leaves UCX's TCP transport in: unset, "all", a list naming "tcp", or a list of
 * exclusions ("^...") that does not. UCX warns on every PE about settings of a transport it was
 * told not to load. */
static int ucx_tls_has_tcp(void)
{
    const char *tls = getenv("UCX_TLS");
    if (!tls || !*tls)
        return 1;
    int excluding = *tls == '^';
    int named = transport_list_names(tls + excluding, "tcp") ||
                transport_list_names(tls + excluding, "all");
    return excluding ? !named : named;
}

/* UCX 1.13's TCP put protocol crashes a PE (its receive buffer released twice while an
 * acknowledgement is handled) when two PEs connect to each other at the same moment with puts under
 * way, as a collective's first round does. Puts over TCP then go as active
 * messages. The key is the TCP table's own name: UCX
 * applies it to the transport's configuration ("TCP_PUT_ENABLE" is rejected as unknown).
 * A receive segment that holds a whole chunk of the transport layer's (its active messages' and
 * their headers): UCX then hands the chunk over where it read it, instead of gathering 64 KiB
 * segments into a buffer of its own first. Only pages that a message fills are touched. */
static void ucx_config_tcp(ucp_config_t *config)
{
    ucx_config_default(config, "UCX_TCP_PUT_ENABLE", "PUT_ENABLE", "n");
    ucx_config_default(config, "UCX_TCP_RX_SEG_SIZE", "RX_SEG_SIZE", "512K");
}

static void ucx_fini(struct network *net);

static int ucx_init(const struct network_config *config, struct network **out)
{
    struct network *net = calloc(1, sizeof(*net));
    if (!net)
        return -1;
    net->config = *config;
    pthread_mutex_init(&net->workers_lock, NULL);
    ucp_config_t *ucp_config;
    ucs_status_t status = ucp_config_read(NULL, NULL, &ucp_config);
    if (status != UCS_OK) {
        ucx_fail("ucp_config_read", status);
        ucx_fini(net);
        return -1;
    }
    /* A thread-safe worker is locked by every call; UCX's default lock spins, and a thread that
     * spins against a preempted holder (the progress thread, on a core shared by several PEs)
     * burns its whole time slice. A mutex puts it to sleep instead. */
    ucx_config_default(ucp_config, "UCX_USE_MT_MUTEX", "USE_MT_MUTEX", "y");
    net->tcp = ucx_tls_has_tcp();
    if (net->tcp)
        ucx_config_tcp(ucp_config);
    /* WAKEUP: the progress thread sleeps on the worker's event descriptor. It narrows the choice
     * of transports only for tag matching, which is not used. */
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM |
                    UCP_FEATURE_WAKEUP,
        .mt_workers_shared = 1, /* contexts' workers share registrations */
    };
    status = ucp_init(&params, ucp_config, &net->context);
    ucp_config_release(ucp_config);
    if (status != UCS_OK) {
        ucx_fail("ucp_init", status);
        ucx_fini(net);
        return -1;
    }
    *out = net;
    return 0;
}

static void ucx_region_deregister(struct network *net, int id);

static void ucx_fini(struct network *net)
{
    for (int id = 0; id < UCX_MAX_REGIONS; id++)
        ucx_region_deregister(net, id);
    if (net->context)
        ucp_cleanup(net->context);
    pthread_mutex_destroy(&net->workers_lock);
    free(net);
}

static void ucx_query(struct network *net, struct network_attr *attr)
{
    attr->tcp = net->tcp;
    attr->tcp_devices = getenv("UCX_NET_DEVICES");
    attr->atomics = 1; /* UCX emulates what the lanes cannot do, with the target's CPU atomics */
}

static void ucx_describe(FILE *out)
{
    const char *tls = getenv("UCX_TLS"), *devices = getenv("UCX_NET_DEVICES");
    fprintf(out, "    UCX %s, transports %s, devices %s\n", ucp_get_version_string(),
            tls && *tls ? tls : "all", devices && *devices ? devices : "all");
}

static int ucx_reaches_memory(struct network *net, enum transport_mem_type type)
{
    static const ucs_memory_type_t ucx_type[] = {
        [TRANSPORT_MEM_HOST] = UCS_MEMORY_TYPE_HOST,
        [TRANSPORT_MEM_CUDA] = UCS_MEMORY_TYPE_CUDA,
        [TRANSPORT_MEM_ROCM] = UCS_MEMORY_TYPE_ROCM,
    };
    ucp_context_attr_t attr = {.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES};
    if (ucp_context_query(net->context, &attr) != UCS_OK)
        return type == TRANSPORT_MEM_HOST;
    return (attr.memory_types >> ucx_type[type]) & 1;
}

/* A region's key as peers need it: its base address in this process, then the packed rkey. */
static int ucx_region_blob(struct network *net, int id, void *base, char *blob, size_t *len)
{
    void *packed;
    size_t packed_len;
    ucs_status_t status = ucp_rkey_pack(net->context, net->regions[id], &packed, &packed_len);
    if (status != UCS_OK)
        return ucx_fail("ucp_rkey_pack", status);
    uint64_t base_addr = (uint64_t)(uintptr_t)base;
    int rc = -1;
    if (packed_len + sizeof(base_addr) <= *len) {
        memcpy(blob, &base_addr, sizeof(base_addr));
        memcpy(blob + sizeof(base_addr), packed, packed_len);
        *len = sizeof(base_addr) + packed_len;
        rc = 0;
    } else {
        log_error("transport", "UCX's remote key of region %d takes %zu bytes, more than %zu", id,
                  packed_len + sizeof(base_addr), *len);
    }
    ucp_rkey_buffer_release(packed);
    return rc;
}

static int ucx_region_register(struct network *net, int id, void *base, size_t len, void *key,
                               size_t *key_len)
{
    if (id < 0 || id >= UCX_MAX_REGIONS || net->regions[id])
        return -1;
    ucp_mem_map_params_t params = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
        .address = base,
        .length = len,
    };
    ucs_status_t status = ucp_mem_map(net->context, &params, &net->regions[id]);
    if (status != UCS_OK)
        return ucx_fail("ucp_mem_map", status);
    return ucx_region_blob(net, id, base, key, key_len);
}

static void ucx_region_deregister(struct network *net, int id)
{
    if (id < 0 || id >= UCX_MAX_REGIONS)
        return;
    pthread_mutex_lock(&net->workers_lock);
    for (struct network_worker *nw = net->workers; nw; nw = nw->next)
        ucx_release_keys(nw, id);
    pthread_mutex_unlock(&net->workers_lock);
    if (net->regions[id])
        ucp_mem_unmap(net->context, net->regions[id]);
    net->regions[id] = NULL;
}

/* Whether UCX carries every operation on ep as active messages over a single lane: no lane does
 * RDMA or atomics (TCP, whose put protocol transport_init turns off), so the target's progress
 * engine performs each put and atomic anyway, and whatever is sent on the lane arrives in the
 * order sent. UCX 1.13 has no query for it; its description of the endpoint names each lane's
 * uses ("am", "rma_bw#0", "amo#0"). */
static int ucx_ep_by_message(ucp_ep_h ep)
{
    char *text = NULL;
    size_t len = 0;
    FILE *stream = open_memstream(&text, &len);
    if (!stream)
        return 0;
    ucp_ep_print_info(ep, stream);
    fclose(stream);
    int lanes = 0, offloaded = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        const char *uses = strstr(line, "lane[") ? strstr(line, "->") : NULL;
        if (!uses)
            continue;
        lanes++;
        offloaded |= strstr(uses, " rma") || strstr(uses, " amo");
    }
    free(text);
    return lanes == 1 && !offloaded;
}

static ucp_ep_h ucx_endpoint(struct network_worker *nw, int pe)
{
    struct ucx_peer *peer = &nw->peers[pe];
    if (peer->ep)
        return peer->ep;
    char address[UCX_ADDRESS_MAX];
    size_t len = sizeof(address);
    if (nw->net->config.exchange.fetch(pe, "ucx.addr", address, &len)) {
        log_error("transport", "no UCX address published by PE %d", pe);
        return NULL;
    }
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
        .address = (ucp_address_t *)address,
    };
    if (!peer->regions && !(peer->regions = calloc(UCX_MAX_REGIONS, sizeof(*peer->regions)))) {
        log_error("transport", "out of memory connecting to PE %d", pe);
        return NULL;
    }
    ucp_ep_h ep;
    ucs_status_t status = ucp_ep_create(nw->worker, &params, &ep);
    if (status != UCS_OK) {
        ucx_fail("ucp_ep_create", status);
        return NULL;
    }
    peer->by_message = ucx_ep_by_message(ep);
    __atomic_store_n(&peer->ep, ep, __ATOMIC_RELEASE);
    nw->connected[nw->n_connected] = pe;
    __atomic_store_n(&nw->n_connected, nw->n_connected + 1, __ATOMIC_RELEASE);
    return ep;
}

/* The endpoint to pe on nw, made on first use (under connect_lock). */
static ucp_ep_h ucx_endpoint_get(struct network_worker *nw, int pe)
{
    ucp_ep_h ep = __atomic_load_n(&nw->peers[pe].ep, __ATOMIC_ACQUIRE);
    if (ep)
        return ep;
    pthread_mutex_lock(&nw->connect_lock);
    ep = ucx_endpoint(nw, pe);
    pthread_mutex_unlock(&nw->connect_lock);
    return ep;
}

static int ucx_by_message(struct network_worker *nw, int pe)
{
    return ucx_endpoint_get(nw, pe) ? nw->peers[pe].by_message : -1;
}

/* Makes the endpoint to pe and unpacks the key of region id there, once. A later region's key is
 * read from the peer's memory, through this worker: connect_lock is recursive for that. Returns
 * 0 or -1. */
static int ucx_connect(struct network_worker *nw, int pe, int id)
{
    ucp_ep_h ep = ucx_endpoint(nw, pe);
    if (!ep)
        return -1;
    struct ucx_remote_region *remote = &nw->peers[pe].regions[id];
    if (remote->rkey)
        return 0;
    char blob[NETWORK_KEY_MAX];
    size_t len = sizeof(blob);
    if (transport_region_key(nw->owner, pe, id, blob, &len) || len <= sizeof(uint64_t)) {
        log_error("transport", "no key for region %d from PE %d", id, pe);
        return -1;
    }
    memcpy(&remote->base, blob, sizeof(uint64_t));
    ucp_rkey_h rkey;
    ucs_status_t status = ucp_ep_rkey_unpack(ep, blob + sizeof(uint64_t), &rkey);
    if (status != UCS_OK)
        return ucx_fail("ucp_ep_rkey_unpack", status);
    __atomic_store_n(&remote->rkey, rkey, __ATOMIC_RELEASE);
    return 0;
}

/* Resolves (pe, id, offset) to an endpoint, remote address and key. The first use connects under
 * a lock, since several threads may reach a new peer at once; later uses read what was
 * published. */
static int ucx_target(struct network_worker *nw, int pe, int id, size_t offset, ucp_ep_h *ep,
                      uint64_t *addr, ucp_rkey_h *rkey)
{
    if (id < 0 || id >= UCX_MAX_REGIONS)
        return -1;
    /* The endpoint is published after the regions, so a peer with one has the other. */
    struct ucx_peer *peer = &nw->peers[pe];
    *ep = __atomic_load_n(&peer->ep, __ATOMIC_ACQUIRE);
    *rkey = *ep ? __atomic_load_n(&peer->regions[id].rkey, __ATOMIC_ACQUIRE) : NULL;
    if (!*rkey) {
        pthread_mutex_lock(&nw->connect_lock);
        int rc = ucx_connect(nw, pe, id);
        pthread_mutex_unlock(&nw->connect_lock);
        if (rc)
            return -1;
        *ep = peer->ep;
        *rkey = peer->regions[id].rkey;
    }
    *addr = peer->regions[id].base + offset;
    return 0;
}

/* Releases the requests that completed successfully (called with pending_lock held), so that a
 * program issuing many operations between quiets keeps only the unfinished ones. */
static void ucx_pending_prune(struct network_worker *nw)
{
    size_t kept = 0;
    for (size_t i = 0; i < nw->n_pending; i++) {
        if (ucp_request_check_status(nw->pending[i]) == UCS_OK)
            ucp_request_free(nw->pending[i]);
        else
            nw->pending[kept++] = nw->pending[i];
    }
    nw->n_pending = kept;
}

/* Keeps an operation's request until a flush. */
static int ucx_pending_add(struct network_worker *nw, ucs_status_ptr_t request, const char *what)
{
    pthread_mutex_lock(&nw->pending_lock);
    if (nw->n_pending == nw->pending_capacity)
        ucx_pending_prune(nw);
    if (nw->n_pending == nw->pending_capacity) {
        size_t capacity = nw->pending_capacity ? 2 * nw->pending_capacity : 64;
        ucs_status_ptr_t *grown = realloc(nw->pending, capacity * sizeof(*grown));
        if (!grown) {
            pthread_mutex_unlock(&nw->pending_lock);
            return ucx_wait(nw, request, what); /* complete it now instead */
        }
        nw->pending = grown;
        nw->pending_capacity = capacity;
    }
    nw->pending[nw->n_pending++] = request;
    pthread_mutex_unlock(&nw->pending_lock);
    return 0;
}

static int ucx_pending_wait(struct network_worker *nw)
{
    int rc = 0;
    pthread_mutex_lock(&nw->pending_lock);
    for (size_t i = 0; i < nw->n_pending; i++)
        rc |= ucx_wait(nw, nw->pending[i], "a non-blocking put or get");
    nw->n_pending = 0;
    pthread_mutex_unlock(&nw->pending_lock);
    return rc;
}

/* A non-blocking one's request is kept until a flush. */
static int ucx_rma(struct network_worker *nw, int pe, int id, size_t offset, void *buf, size_t len,
                   enum network_rma op)
{
    int nbi = NETWORK_RMA_IS_NBI(op), put = NETWORK_RMA_IS_PUT(op);
    ucp_ep_h ep;
    uint64_t addr;
    ucp_rkey_h rkey;
    if (ucx_target(nw, pe, id, offset, &ep, &addr, &rkey))
        return -1;
    ucp_request_param_t param = {0};
    ucs_status_ptr_t request = put ? ucp_put_nbx(ep, buf, len, addr, rkey, &param)
                                   : ucp_get_nbx(ep, buf, len, addr, rkey, &param);
    const char *what = put ? "ucp_put_nbx" : "ucp_get_nbx";
    if (nbi && UCS_PTR_IS_PTR(request))
        return ucx_pending_add(nw, request, what);
    return ucx_wait(nw, request, what);
}

static const ucp_atomic_op_t ucx_amo_opcode[] = {
    [TRANSPORT_AMO_ADD] = UCP_ATOMIC_OP_ADD,   [TRANSPORT_AMO_AND] = UCP_ATOMIC_OP_AND,
    [TRANSPORT_AMO_OR] = UCP_ATOMIC_OP_OR,     [TRANSPORT_AMO_XOR] = UCP_ATOMIC_OP_XOR,
    [TRANSPORT_AMO_SWAP] = UCP_ATOMIC_OP_SWAP, [TRANSPORT_AMO_CSWAP] = UCP_ATOMIC_OP_CSWAP,
};

/* Non-fetching operations are one-way, done at their targets once a flush's endpoint flushes
 * return (UCX 1.13's worker flush may return before emulated non-fetching adds land under
 * contention). Fetching AND/OR/XOR store the wrong value on posix/sysv memory, so they are
 * only issued fetching when the caller fetches. */
static int ucx_atomic(struct network_worker *nw, enum transport_amo op, int pe, int id,
                      size_t offset, uint64_t value, uint64_t compare, void *fetch, size_t size)
{
    ucp_ep_h ep;
    uint64_t addr;
    ucp_rkey_h rkey;
    if (ucx_target(nw, pe, id, offset, &ep, &addr, &rkey))
        return -1;
    /* Operands in the width of the operation (little-endian: the low half of a uint64_t). */
    uint64_t operand = op == TRANSPORT_AMO_CSWAP ? compare : value;
    uint64_t reply = value;
    uint32_t operand32 = (uint32_t)operand, reply32 = (uint32_t)reply;
    int fetching = fetch || op == TRANSPORT_AMO_SWAP || op == TRANSPORT_AMO_CSWAP;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
        .datatype = ucp_dt_make_contig(size),
    };
    if (fetching) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        param.reply_buffer = size == 4 ? (void *)&reply32 : (void *)&reply;
    }
    const void *buffer = size == 4 ? (const void *)&operand32 : (const void *)&operand;
    int rc = ucx_wait(nw, ucp_atomic_op_nbx(ep, ucx_amo_opcode[op], buffer, 1, addr, rkey, &param),
                      "ucp_atomic_op_nbx");
    if (size == 4)
        reply = reply32;
    if (fetch)
        memcpy(fetch, &reply, size);
    return rc;
}

static int ucx_fence(struct network_worker *nw)
{
    ucs_status_t status = ucp_worker_fence(nw->worker);
    return status == UCS_OK ? 0 : ucx_fail("ucp_worker_fence", status);
}

/* Flushes the endpoints this worker made, a batch at a time, not the worker: a worker flush
 * also flushes the endpoints UCX made for peers that connected to this worker, and one of them
 * may wait for a peer's context worker that nobody progresses any more (its context destroyed),
 * so a quiet would wait for ever. What this PE issued only ever goes through its own.
 * Peers reached by message are left out unless every_peer: the transport layer confirms what
 * was sent there, and UCX's flush would cost a message each way. */
static int ucx_flush_endpoints(struct network_worker *nw, int every_peer)
{
    size_t n = __atomic_load_n(&nw->n_connected, __ATOMIC_ACQUIRE);
    ucp_request_param_t param = {0};
    int rc = 0;
    for (size_t first = 0; first < n; first += UCX_FLUSH_BATCH) {
        ucs_status_ptr_t requests[UCX_FLUSH_BATCH];
        size_t batch = n - first < UCX_FLUSH_BATCH ? n - first : UCX_FLUSH_BATCH;
        for (size_t i = 0; i < batch; i++) {
            const struct ucx_peer *peer = &nw->peers[nw->connected[first + i]];
            requests[i] =
                every_peer || !peer->by_message ? ucp_ep_flush_nbx(peer->ep, &param) : NULL;
        }
        for (size_t i = 0; i < batch; i++)
            rc |= ucx_wait(nw, requests[i], "ucp_ep_flush_nbx");
    }
    return rc;
}

static int ucx_flush(struct network_worker *nw, int pe)
{
    if (ucx_pending_wait(nw))
        return -1;
    if (pe < 0)
        return ucx_flush_endpoints(nw, 0);
    const struct ucx_peer *peer = &nw->peers[pe];
    ucp_ep_h ep = __atomic_load_n(&peer->ep, __ATOMIC_ACQUIRE);
    if (!ep || peer->by_message)
        return 0; /* nothing was ever sent there, or the transport layer confirms it */
    ucp_request_param_t param = {0};
    return ucx_wait(nw, ucp_ep_flush_nbx(ep, &param), "ucp_ep_flush_nbx");
}

static int ucx_flush_all(struct network_worker *nw)
{
    return ucx_pending_wait(nw) || ucx_flush_endpoints(nw, 1) ? -1 : 0;
}

/* Forced eager: a handler always holds its whole payload and never has to pull a rendezvous. */
static int ucx_am_send(struct network_worker *nw, int pe, unsigned id, const void *header,
                       size_t header_len, const void *data, size_t len, int reply)
{
    ucp_ep_h ep = ucx_endpoint_get(nw, pe);
    if (!ep)
        return -1;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
        .flags = UCP_AM_SEND_FLAG_EAGER | (reply ? UCP_AM_SEND_FLAG_REPLY : 0),
    };
    return ucx_wait(nw, ucp_am_send_nbx(ep, id, header, header_len, data, len, &param),
                    "ucp_am_send_nbx");
}

static void ucx_am_reply_done(void *request, ucs_status_t status, void *buffer)
{
    (void)status;
    free(buffer);
    ucp_request_free(request);
}

/* A handler may not wait: the send's completion frees the buffer. */
static void ucx_am_reply(const struct network_source *source, unsigned id, char *buffer,
                         size_t header_len, size_t len)
{
    ucp_request_param_t param = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .flags = UCP_AM_SEND_FLAG_EAGER,
        .cb.send = ucx_am_reply_done,
        .user_data = buffer,
    };
    ucs_status_ptr_t request =
        ucp_am_send_nbx(source->reply_ep, id, buffer, header_len, buffer + header_len, len, &param);
    if (UCS_PTR_IS_ERR(request))
        ucx_fail("ucp_am_send_nbx (reply)", UCS_PTR_STATUS(request));
    if (!UCS_PTR_IS_PTR(request))
        free(buffer);
}

static unsigned ucx_progress(struct network_worker *nw)
{
    return ucp_worker_progress(nw->worker);
}

static int ucx_event_fd(struct network_worker *nw)
{
    return nw->event_fd;
}

static int ucx_arm(struct network_worker *nw)
{
    ucs_status_t status = ucp_worker_arm(nw->worker);
    return status == UCS_OK ? 0 : status == UCS_ERR_BUSY ? 1 : -1;
}

const struct network_ops network_ucx_ops = {
    .name = "ucx",
    .describe = ucx_describe,
    .init = ucx_init,
    .fini = ucx_fini,
    .query = ucx_query,
    .reaches_memory = ucx_reaches_memory,
    .worker_create = ucx_worker_create,
    .worker_destroy = ucx_worker_destroy,
    .region_register = ucx_region_register,
    .region_deregister = ucx_region_deregister,
    .by_message = ucx_by_message,
    .rma = ucx_rma,
    .atomic = ucx_atomic,
    .fence = ucx_fence,
    .flush = ucx_flush,
    .flush_all = ucx_flush_all,
    .am_send = ucx_am_send,
    .am_reply = ucx_am_reply,
    .progress = ucx_progress,
    .event_fd = ucx_event_fd,
    .arm = ucx_arm,
};
