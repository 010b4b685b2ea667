/* The UCX transport: one context per process and one worker per communication context (the
 * default worker serves SHMEM_CTX_DEFAULT and is the one peers connect to). Endpoints and remote
 * keys belong to a worker and are made on first use from what peers published through the
 * exchange callbacks. */
#include "ucx_internal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int ucx_fail(const char *what, ucs_status_t status)
{
    log_error("transport", "UCX %s failed: %s", what, ucs_status_string(status));
    return -1;
}

void ucx_wait_step(struct transport_worker *w, struct transport_idle *idle)
{
    ucx_progress_postpone(&w->t->progress);
    unsigned events = ucp_worker_progress(w->worker);
    struct transport_worker *served = w->t->workers;
    if (served != w)
        events += ucp_worker_progress(served->worker);
    transport_wait_idle(w, idle, events, wait_spin_ns);
}

int ucx_wait(struct transport_worker *w, ucs_status_ptr_t request, const char *what)
{
    if (request == NULL)
        return 0;
    if (UCS_PTR_IS_ERR(request))
        return ucx_fail(what, UCS_PTR_STATUS(request));
    ucs_status_t status;
    UCX_WAIT_WHILE(w, (status = ucp_request_check_status(request)) == UCS_INPROGRESS);
    ucp_request_free(request);
    return status == UCS_OK ? 0 : ucx_fail(what, status);
}

static int ucx_pending_wait(struct transport_worker *w);

/* Sets UCX's key to value unless the user's environment sets it (env: its variable's name). */
static void ucx_config_default(ucp_config_t *config, const char *env, const char *key,
                               const char *value)
{
    if (!getenv(env))
        ucp_config_modify(config, key, value);
}

static int ucx_publish_address(struct transport_worker *w)
{
    ucp_address_t *address;
    size_t len;
    ucs_status_t status = ucp_worker_get_address(w->worker, &address, &len);
    if (status != UCS_OK)
        return ucx_fail("ucp_worker_get_address", status);
    int rc = w->t->config.exchange.publish("ucx.addr", address, len);
    ucp_worker_release_address(w->worker, address);
    return rc;
}

/* A worker a destroyed context left, or NULL. */
static struct transport_worker *ucx_worker_reuse(struct transport *t)
{
    pthread_mutex_lock(&t->workers_lock);
    struct transport_worker *w = t->workers;
    while (w && !w->idle)
        w = w->next;
    if (w)
        w->idle = 0;
    pthread_mutex_unlock(&t->workers_lock);
    return w;
}

/* A private context's worker is thread-safe too where the transport is: its operations can wait
 * there after their call has returned (a new connection's wire-up, a full socket), and while its
 * PE computes only the progress thread can move them on (1.6 section 4.1). Its lock cost a
 * private context's 8-byte put_nbi through UCX's shared memory 5-10% of its rate. */
int transport_worker_create(struct transport *t, struct transport_worker **out)
{
    if ((*out = ucx_worker_reuse(t)))
        return 0;
    struct transport_worker *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->t = t;
    pthread_mutex_init(&w->connect_lock, NULL);
    pthread_mutex_init(&w->pending_lock, NULL);
    pthread_mutex_init(&w->batch.lock, NULL);
    w->peers = calloc((size_t)t->config.n_pes, sizeof(*w->peers));
    w->connected = calloc((size_t)t->config.n_pes, sizeof(*w->connected));
    ucp_worker_params_t params = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = t->config.thread_safe ? UCS_THREAD_MODE_MULTI : UCS_THREAD_MODE_SINGLE,
    };
    ucs_status_t status = w->peers && w->connected
                              ? ucp_worker_create(t->context, &params, &w->worker)
                              : UCS_ERR_NO_MEMORY;
    if (status == UCS_OK && ucp_worker_get_efd(w->worker, &w->event_fd) != UCS_OK)
        w->event_fd = -1;
    if (status != UCS_OK || ucx_am_worker_init(w)) {
        if (status != UCS_OK)
            ucx_fail("ucp_worker_create", status);
        else
            ucp_worker_destroy(w->worker);
        free(w->connected);
        free(w->peers);
        free(w);
        return -1;
    }
    pthread_mutex_lock(&t->workers_lock);
    struct transport_worker **tail = &t->workers;
    while (*tail)
        tail = &(*tail)->next;
    *tail = w;
    pthread_mutex_unlock(&t->workers_lock);
    *out = w;
    return 0;
}

struct transport_worker *transport_default_worker(struct transport *t)
{
    return t->workers;
}

/* Only the PEs with an endpoint here have regions. */
static void ucx_release_keys(struct transport_worker *w, int id)
{
    size_t n = __atomic_load_n(&w->n_connected, __ATOMIC_ACQUIRE);
    for (size_t i = 0; i < n; i++) {
        struct ucx_remote_region *remote = &w->peers[w->connected[i]].regions[id];
        if (remote->rkey)
            ucp_rkey_destroy(remote->rkey);
        remote->rkey = NULL;
    }
}

/* A context's worker outlives the context, kept for the next one: destroying it would close its
 * connections under peers that still hold the other ends (over TCP a peer then sees its
 * endpoint fail, which UCX without peer-failure handling does not survive), and a context
 * made again starts with its endpoints made. */
void transport_worker_release(struct transport_worker *w)
{
    if (!w)
        return;
    transport_batch_hint(w, 0); /* a session its context left started ends with it */
    ucx_pending_wait(w);
    ucx_am_wait_acks(w);
    ucx_am_wait_answers(w);
    ucx_am_flush(w, -1);
    pthread_mutex_lock(&w->t->workers_lock);
    w->idle = 1;
    pthread_mutex_unlock(&w->t->workers_lock);
}

/* Endpoints are not closed one by one: a graceful close waits for peers that may already have
 * left, and a forced close needs peer-failure handling, which rules out some shared-memory
 * transports. Destroying the worker releases them. */
static void ucx_worker_destroy(struct transport_worker *w)
{
    struct transport *t = w->t;
    pthread_mutex_lock(&t->workers_lock);
    for (struct transport_worker **at = &t->workers; *at; at = &(*at)->next)
        if (*at == w) {
            *at = w->next;
            break;
        }
    pthread_mutex_unlock(&t->workers_lock);
    for (int id = 0; id < UCX_MAX_REGIONS; id++)
        ucx_release_keys(w, id);
    ucx_pending_wait(w);
    ucp_worker_destroy(w->worker);
    pthread_mutex_destroy(&w->connect_lock);
    pthread_mutex_destroy(&w->pending_lock);
    pthread_mutex_destroy(&w->batch.lock);
    free(w->batch.pes);
    free(w->pending);
    for (size_t i = 0; i < w->n_connected; i++) {
        free(w->peers[w->connected[i]].regions);
        free(w->peers[w->connected[i]].batch); /* only a connected peer has one */
    }
    free(w->connected);
    free(w->peers);
    free(w);
}

int ucx_list_names(const char *list, const char *name)
{
    size_t name_len = strlen(name);
    for (const char *item = list; *item;) {
        size_t len = strcspn(item, ",:");
        if (len == name_len && !strncmp(item, name, len))
            return 1;
        item += len;
        item += strcspn(item, ","); /* past a ":qualifier" */
        item += *item == ',';
    }
    return 0;
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
    int named = ucx_list_names(tls + excluding, "tcp") || ucx_list_names(tls + excluding, "all");
    return excluding ? !named : named;
}

int transport_init(const struct transport_config *config, struct transport **out)
{
    struct transport *t = calloc(1, sizeof(*t));
    if (!t)
        return -1;
    t->config = *config;
    t->progress.wake_fd = -1;
    t->progress.timer_fd = -1;
    pthread_mutex_init(&t->workers_lock, NULL);
    ucp_config_t *ucp_config;
    ucs_status_t status = ucp_config_read(NULL, NULL, &ucp_config);
    if (status != UCS_OK)
        goto fail;
    /* A thread-safe worker is locked by every call; UCX's default lock spins, and a thread that
     * spins against a preempted holder (the progress thread, on a core shared by several PEs)
     * burns its whole time slice. A mutex puts it to sleep instead. */
    ucx_config_default(ucp_config, "UCX_USE_MT_MUTEX", "USE_MT_MUTEX", "y");
    /* UCX 1.13's TCP put protocol crashes a PE (its receive buffer released twice while an
     * acknowledgement is handled) when two PEs connect to each other at the same moment with
     * puts under way, as a collective's first round does: 3 of 100 jobs of 4 PEs over two
     * nodes, 0 of 300 without it. Puts over TCP then go as active messages. The key is the TCP
     * table's own name: UCX applies it to the transport's configuration ("TCP_PUT_ENABLE" is
     * rejected as unknown). */
    int tcp = ucx_tls_has_tcp();
    t->config.bulk_lane &= tcp; /* only TCP peers are reached by message */
    if (tcp)
        ucx_config_default(ucp_config, "UCX_TCP_PUT_ENABLE", "PUT_ENABLE", "n");
    /* A receive segment that holds a whole chunk of ours (AM_CHUNK and its headers): UCX then
     * hands the chunk over where it read it, instead of gathering 64 KiB segments into a buffer
     * of its own first. Between two nodes, alternated: 1 MiB put 363-397 -> 190-224 us, 1 MiB
     * alltoall 660-770 -> 360-400 us, broadcast 450-750 -> 400-410 us. Only pages that a message
     * fills are touched. */
    if (tcp)
        ucx_config_default(ucp_config, "UCX_TCP_RX_SEG_SIZE", "RX_SEG_SIZE", "512K");
    /* WAKEUP: the progress thread sleeps on the worker's event descriptor. It narrows the choice
     * of transports only for tag matching, which is not used. */
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features = UCP_FEATURE_RMA | UCP_FEATURE_AMO32 | UCP_FEATURE_AMO64 | UCP_FEATURE_AM |
                    UCP_FEATURE_WAKEUP,
        .mt_workers_shared = 1, /* contexts' workers share registrations */
    };
    status = ucp_init(&params, ucp_config, &t->context);
    ucp_config_release(ucp_config);
    if (status != UCS_OK) {
        ucx_fail("ucp_init", status);
        goto fail;
    }
    struct transport_worker *main_worker;
    if (transport_worker_create(t, &main_worker) || ucx_publish_address(main_worker) ||
        ucx_bulk_init(t))
        goto fail;
    *out = t;
    return 0;
fail:
    transport_fini(t);
    return -1;
}

void transport_fini(struct transport *t)
{
    if (!t)
        return;
    ucx_progress_stop(t);
    for (int id = 0; id < UCX_MAX_REGIONS; id++)
        transport_region_deregister(t, id);
    while (t->workers)
        ucx_worker_destroy(t->workers);
    ucx_bulk_fini(t);
    if (t->context)
        ucp_cleanup(t->context);
    pthread_mutex_destroy(&t->workers_lock);
    free(t);
}

int transport_reaches_memory(struct transport *t, enum transport_mem_type type)
{
    static const ucs_memory_type_t ucx_type[] = {
        [TRANSPORT_MEM_HOST] = UCS_MEMORY_TYPE_HOST,
        [TRANSPORT_MEM_CUDA] = UCS_MEMORY_TYPE_CUDA,
        [TRANSPORT_MEM_ROCM] = UCS_MEMORY_TYPE_ROCM,
    };
    ucp_context_attr_t attr = {.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES};
    if (ucp_context_query(t->context, &attr) != UCS_OK)
        return type == TRANSPORT_MEM_HOST;
    return (attr.memory_types >> ucx_type[type]) & 1;
}

/* The exchange key of a region id's current use. */
static void ucx_region_key(const struct transport *t, int id, char *key, size_t len)
{
    snprintf(key, len, "ucx.rkey.%d.%u", id, t->region_generation[id]);
}

/* A region's key as peers need it: its base address in this process, then the packed rkey. */
static int ucx_region_blob(struct transport *t, int id, void *base, char *blob, size_t *len)
{
    void *packed;
    size_t packed_len;
    ucs_status_t status = ucp_rkey_pack(t->context, t->regions[id], &packed, &packed_len);
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

int transport_region_register(struct transport *t, int id, unsigned generation, void *base,
                              size_t len, struct transport_key *key)
{
    if (id < 0 || id >= UCX_MAX_REGIONS || t->regions[id])
        return -1;
    t->region_generation[id] = generation;
    ucp_mem_map_params_t params = {
        .field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH,
        .address = base,
        .length = len,
    };
    ucs_status_t status = ucp_mem_map(t->context, &params, &t->regions[id]);
    if (status != UCS_OK)
        return ucx_fail("ucp_mem_map", status);
    if (key) {
        size_t key_len = sizeof(key->bytes);
        int rc = ucx_region_blob(t, id, base, key->bytes, &key_len);
        key->len = rc ? 0 : key_len;
        return rc;
    }
    char blob[UCX_BLOB_MAX], name[48];
    size_t blob_len = sizeof(blob);
    ucx_region_key(t, id, name, sizeof(name));
    if (ucx_region_blob(t, id, base, blob, &blob_len))
        return -1;
    return t->config.exchange.publish(name, blob, blob_len);
}

void transport_region_keys_at(struct transport *t, int id, int home_id, size_t offset)
{
    if (id >= 0 && id < UCX_MAX_REGIONS)
        t->key_homes[id] = (struct ucx_key_home){.set = 1, .id = home_id, .offset = offset};
}

void transport_region_deregister(struct transport *t, int id)
{
    if (id < 0 || id >= UCX_MAX_REGIONS)
        return;
    pthread_mutex_lock(&t->workers_lock);
    for (struct transport_worker *w = t->workers; w; w = w->next)
        ucx_release_keys(w, id);
    pthread_mutex_unlock(&t->workers_lock);
    t->key_homes[id].set = 0;
    if (t->regions[id])
        ucp_mem_unmap(t->context, t->regions[id]);
    t->regions[id] = NULL;
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

static ucp_ep_h ucx_endpoint(struct transport_worker *w, int pe)
{
    struct ucx_peer *peer = &w->peers[pe];
    if (peer->ep)
        return peer->ep;
    char address[UCX_BLOB_MAX];
    size_t len = sizeof(address);
    if (w->t->config.exchange.fetch(pe, "ucx.addr", address, &len)) {
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
    ucs_status_t status = ucp_ep_create(w->worker, &params, &ep);
    if (status != UCS_OK) {
        ucx_fail("ucp_ep_create", status);
        return NULL;
    }
    peer->by_message = ucx_ep_by_message(ep);
    __atomic_store_n(&peer->ep, ep, __ATOMIC_RELEASE);
    w->connected[w->n_connected] = pe;
    __atomic_store_n(&w->n_connected, w->n_connected + 1, __ATOMIC_RELEASE);
    return ep;
}

static int ucx_connect(struct transport_worker *w, int pe, int id);

/* Reads pe's key of region id where transport_region_keys_at says it lies, into blob (*len:
 * its room in, its length out). Returns 0 or -1. */
static int ucx_key_read(struct transport_worker *w, int pe, int id, char *blob, size_t *len)
{
    const struct ucx_key_home *home = &w->t->key_homes[id];
    if (ucx_connect(w, pe, home->id))
        return -1;
    const struct ucx_remote_region *remote = &w->peers[pe].regions[home->id];
    struct transport_key key;
    ucp_request_param_t param = {0};
    if (ucx_wait(w,
                 ucp_get_nbx(w->peers[pe].ep, &key, sizeof(key), remote->base + home->offset,
                             remote->rkey, &param),
                 "ucp_get_nbx"))
        return -1;
    if (key.len <= sizeof(uint64_t) || key.len > *len || key.len > sizeof(key.bytes))
        return -1;
    memcpy(blob, key.bytes, key.len);
    *len = key.len;
    return 0;
}

/* Makes the endpoint to pe and unpacks the key of region id there, once: a start-up region's
 * key comes from the exchange, a later one's from the peer's memory. Returns 0 or -1. */
static int ucx_connect(struct transport_worker *w, int pe, int id)
{
    ucp_ep_h ep = ucx_endpoint(w, pe);
    if (!ep)
        return -1;
    struct ucx_remote_region *remote = &w->peers[pe].regions[id];
    if (remote->rkey)
        return 0;
    char blob[UCX_BLOB_MAX], key[48];
    size_t len = sizeof(blob);
    int rc;
    if (w->t->key_homes[id].set) {
        rc = ucx_key_read(w, pe, id, blob, &len);
    } else {
        ucx_region_key(w->t, id, key, sizeof(key));
        rc = w->t->config.exchange.fetch(pe, key, blob, &len) || len <= sizeof(uint64_t);
    }
    if (rc) {
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

ucp_ep_h ucx_endpoint_get(struct transport_worker *w, int pe)
{
    ucp_ep_h ep = __atomic_load_n(&w->peers[pe].ep, __ATOMIC_ACQUIRE);
    if (ep)
        return ep;
    pthread_mutex_lock(&w->connect_lock);
    ep = ucx_endpoint(w, pe);
    pthread_mutex_unlock(&w->connect_lock);
    return ep;
}

/* Resolves (pe, id, offset) to an endpoint, remote address and key. The first use connects under
 * a lock, since several threads may reach a new peer at once; later uses read what was
 * published. */
static int ucx_target(struct transport_worker *w, int pe, int id, size_t offset, ucp_ep_h *ep,
                      uint64_t *addr, ucp_rkey_h *rkey)
{
    if (id < 0 || id >= UCX_MAX_REGIONS)
        return -1;
    /* The endpoint is published after the regions, so a peer with one has the other. */
    struct ucx_peer *peer = &w->peers[pe];
    *ep = __atomic_load_n(&peer->ep, __ATOMIC_ACQUIRE);
    *rkey = *ep ? __atomic_load_n(&peer->regions[id].rkey, __ATOMIC_ACQUIRE) : NULL;
    if (!*rkey) {
        pthread_mutex_lock(&w->connect_lock);
        int rc = ucx_connect(w, pe, id);
        pthread_mutex_unlock(&w->connect_lock);
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
static void ucx_pending_prune(struct transport_worker *w)
{
    size_t kept = 0;
    for (size_t i = 0; i < w->n_pending; i++) {
        if (ucp_request_check_status(w->pending[i]) == UCS_OK)
            ucp_request_free(w->pending[i]);
        else
            w->pending[kept++] = w->pending[i];
    }
    w->n_pending = kept;
}

/* Keeps an operation's request until transport_flush. */
static int ucx_pending_add(struct transport_worker *w, ucs_status_ptr_t request, const char *what)
{
    pthread_mutex_lock(&w->pending_lock);
    if (w->n_pending == w->pending_capacity)
        ucx_pending_prune(w);
    if (w->n_pending == w->pending_capacity) {
        size_t capacity = w->pending_capacity ? 2 * w->pending_capacity : 64;
        ucs_status_ptr_t *grown = realloc(w->pending, capacity * sizeof(*grown));
        if (!grown) {
            pthread_mutex_unlock(&w->pending_lock);
            return ucx_wait(w, request, what); /* complete it now instead */
        }
        w->pending = grown;
        w->pending_capacity = capacity;
    }
    w->pending[w->n_pending++] = request;
    pthread_mutex_unlock(&w->pending_lock);
    return 0;
}

static int ucx_pending_wait(struct transport_worker *w)
{
    int rc = 0;
    pthread_mutex_lock(&w->pending_lock);
    for (size_t i = 0; i < w->n_pending; i++)
        rc |= ucx_wait(w, w->pending[i], "a non-blocking put or get");
    w->n_pending = 0;
    pthread_mutex_unlock(&w->pending_lock);
    return rc;
}

enum ucx_rma_op {
    UCX_GET,
    UCX_PUT,
    UCX_PUT_NOTIFY, /* a put its target watches for: no flush waits for it */
};

/* A put (from buf) or a get (into buf); nbi keeps the request until transport_flush. */
static int ucx_rma(struct transport_worker *w, int pe, int id, size_t offset, void *buf, size_t len,
                   int nbi, enum ucx_rma_op op)
{
    ucp_ep_h ep;
    uint64_t addr;
    ucp_rkey_h rkey;
    if (ucx_target(w, pe, id, offset, &ep, &addr, &rkey))
        return -1;
    /* A blocking put is usually followed by what waits on it: acknowledged, a quiet takes one
     * message each way. Non-blocking puts come in streams: one-way, and one flush message at
     * the quiet, so the target does not answer each; short ones share their messages. */
    if (op == UCX_PUT && w->peers[pe].by_message)
        return (nbi || __atomic_load_n(&w->batch_hint, __ATOMIC_RELAXED)) &&
                       len <= UCX_BATCH_PUT_MAX
                   ? ucx_am_batch_put(w, pe, id, offset, buf, len)
               : !nbi ? ucx_am_put(w, pe, id, offset, buf, len)
                      : ucx_am_post(w, pe, id, offset, buf, len, 0, 0, UCX_POST_NO_OP, 0, 0, 1);
    if (ucx_am_batch_before(w, pe))
        return -1;
    /* UCX's emulated get answers in transmit segments (8 KiB), a send each at the target; this
     * PE's own answers each carry up to a chunk. */
    if (op == UCX_GET && w->peers[pe].by_message && len >= UCX_AM_GET_MIN)
        return nbi ? ucx_am_get_nbi(w, pe, id, offset, buf, len)
                   : transport_am_get(w, pe, id, offset, buf, len);
    ucp_request_param_t param = {0};
    int put = op != UCX_GET;
    ucs_status_ptr_t request = put ? ucp_put_nbx(ep, buf, len, addr, rkey, &param)
                                   : ucp_get_nbx(ep, buf, len, addr, rkey, &param);
    const char *what = put ? "ucp_put_nbx" : "ucp_get_nbx";
    /* Counted once a flush can find it: another thread's flush that reads the count waits for it
     * too, or a quiet here that finds the count flushed returns before a get has landed (seen
     * with threads sharing the default context over TCP, spmd/rma_mix). */
    if (nbi && UCS_PTR_IS_PTR(request)) {
        int rc = ucx_pending_add(w, request, what);
        ucx_issued(w);
        return rc;
    }
    if (op == UCX_PUT || nbi)
        ucx_issued(w);
    return ucx_wait(w, request, what);
}

int transport_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                  size_t len, int nbi)
{
    return ucx_rma(w, pe, id, offset, (void *)src, len, nbi, UCX_PUT);
}

void transport_batch_hint(struct transport_worker *w, int on)
{
    if (on && !w->batch_hint) {
        w->hint_thread = pthread_self();
        __atomic_add_fetch(&w->t->batch_hints, 1, __ATOMIC_RELEASE);
    } else if (!on && w->batch_hint) {
        __atomic_sub_fetch(&w->t->batch_hints, 1, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&w->batch_hint, on, __ATOMIC_RELAXED);
    if (!on && ucx_am_batch_send(w, 0))
        log_error("transport", "the batch of a session's end could not be sent");
}

void ucx_batch_send_sessions(struct transport *t)
{
    if (pthread_mutex_trylock(&t->workers_lock))
        return; /* another thread, or this one inside a send: the next step tries again */
    for (struct transport_worker *w = t->workers; w; w = w->next)
        if (__atomic_load_n(&w->batch_hint, __ATOMIC_RELAXED) &&
            (t->config.thread_safe || pthread_equal(w->hint_thread, pthread_self())))
            ucx_am_batch_send(w, 1);
    pthread_mutex_unlock(&t->workers_lock);
}

/* The endpoint to pe made, whether pe is reached by message (ucx_ep_by_message). */
int transport_by_message(struct transport_worker *w, int pe)
{
    return ucx_endpoint_get(w, pe) && w->peers[pe].by_message;
}

int transport_put_notify(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                         size_t len)
{
    if (len == sizeof(uint64_t) && transport_by_message(w, pe)) {
        uint64_t value;
        memcpy(&value, src, sizeof(value));
        return ucx_am_post(w, pe, 0, 0, NULL, 0, id, offset, TRANSPORT_AMO_SWAP, value,
                           sizeof(value), 0);
    }
    return ucx_rma(w, pe, id, offset, (void *)src, len, 0, UCX_PUT_NOTIFY);
}

int transport_get(struct transport_worker *w, int pe, int id, size_t offset, void *dest, size_t len,
                  int nbi)
{
    return ucx_rma(w, pe, id, offset, dest, len, nbi, UCX_GET);
}

static const ucp_atomic_op_t ucx_amo_opcode[] = {
    [TRANSPORT_AMO_ADD] = UCP_ATOMIC_OP_ADD,   [TRANSPORT_AMO_AND] = UCP_ATOMIC_OP_AND,
    [TRANSPORT_AMO_OR] = UCP_ATOMIC_OP_OR,     [TRANSPORT_AMO_XOR] = UCP_ATOMIC_OP_XOR,
    [TRANSPORT_AMO_SWAP] = UCP_ATOMIC_OP_SWAP, [TRANSPORT_AMO_CSWAP] = UCP_ATOMIC_OP_CSWAP,
};

int transport_atomic(struct transport_worker *w, enum transport_amo op, int pe, int id,
                     size_t offset, uint64_t value, uint64_t compare, void *fetch, size_t size)
{
    ucp_ep_h ep;
    uint64_t addr;
    ucp_rkey_h rkey;
    if ((size != 4 && size != 8) || ucx_target(w, pe, id, offset, &ep, &addr, &rkey))
        return -1;
    /* Operands in the width of the operation (little-endian: the low half of a uint64_t). */
    uint64_t operand = op == TRANSPORT_AMO_CSWAP ? compare : value;
    uint64_t reply = value;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE,
        .datatype = ucp_dt_make_contig(size),
    };
    /* Non-fetching operations are one-way, done at their targets once quiet's endpoint flushes
     * return (UCX 1.13's worker flush was seen to return before emulated non-fetching adds
     * landed under contention). Fetching AND/OR/XOR store the wrong value on posix/sysv memory,
     * so they are only issued fetching when the caller fetches. */
    int fetching = fetch || op == TRANSPORT_AMO_SWAP || op == TRANSPORT_AMO_CSWAP;
    if (!fetch && op != TRANSPORT_AMO_CSWAP && transport_by_message(w, pe))
        return __atomic_load_n(&w->batch_hint, __ATOMIC_RELAXED)
                   ? ucx_am_batch_atomic(w, pe, id, offset, op, value, size)
                   : ucx_am_post(w, pe, 0, 0, NULL, 0, id, offset, op, value, size, 1);
    if (ucx_am_batch_before(w, pe))
        return -1;
    if (fetching) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        param.reply_buffer = &reply;
    }
    int rc;
    if (size == 4) {
        uint32_t operand32 = (uint32_t)operand, reply32 = (uint32_t)reply;
        param.reply_buffer = fetching ? (void *)&reply32 : NULL;
        rc = ucx_wait(w,
                      ucp_atomic_op_nbx(ep, ucx_amo_opcode[op], &operand32, 1, addr, rkey, &param),
                      "ucp_atomic_op_nbx");
        reply = reply32;
    } else {
        rc = ucx_wait(w, ucp_atomic_op_nbx(ep, ucx_amo_opcode[op], &operand, 1, addr, rkey, &param),
                      "ucp_atomic_op_nbx");
    }
    if (!fetching)
        ucx_issued(w); /* done at the target only once flushed */
    if (fetch)
        memcpy(fetch, &reply, size);
    return rc;
}

int transport_put_signal(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                         size_t len, int sig_id, size_t sig_offset, enum transport_amo sig_op,
                         uint64_t signal, int watched)
{
    if (transport_by_message(w, pe))
        return ucx_am_post(w, pe, id, offset, src, len, sig_id, sig_offset, sig_op, signal,
                           sizeof(uint64_t), !watched);
    if (len && (transport_put(w, pe, id, offset, src, len, 0) || transport_fence(w)))
        return -1;
    return transport_atomic(w, sig_op, pe, sig_id, sig_offset, signal, 0, NULL, sizeof(uint64_t));
}

int transport_fence(struct transport_worker *w)
{
    if (!transport_flush_needed(w))
        return 0; /* nothing since the last flush to order */
    if (ucx_am_batch_send(w, 0) || ucx_am_wait_acks(w))
        return -1;
    ucs_status_t status = ucp_worker_fence(w->worker);
    return status == UCS_OK ? 0 : ucx_fail("ucp_worker_fence", status);
}

/* Flushes the endpoints this worker made, a batch at a time, not the worker: a worker flush
 * also flushes the endpoints UCX made for peers that connected to this worker, and one of them
 * may wait for a peer's context worker that nobody progresses any more (its context destroyed),
 * so a quiet would wait for ever. What this PE issued only ever goes through its own.
 * Peers reached by message are left out unless every_peer: acknowledgements and ucx_am_flush
 * confirm what was sent there, and UCX's flush would cost a message each way. */
static int ucx_flush_endpoints(struct transport_worker *w, int every_peer)
{
    size_t n = __atomic_load_n(&w->n_connected, __ATOMIC_ACQUIRE);
    ucp_request_param_t param = {0};
    int rc = 0;
    for (size_t first = 0; first < n; first += UCX_FLUSH_BATCH) {
        ucs_status_ptr_t requests[UCX_FLUSH_BATCH];
        size_t batch = n - first < UCX_FLUSH_BATCH ? n - first : UCX_FLUSH_BATCH;
        for (size_t i = 0; i < batch; i++) {
            const struct ucx_peer *peer = &w->peers[w->connected[first + i]];
            requests[i] =
                every_peer || !peer->by_message ? ucp_ep_flush_nbx(peer->ep, &param) : NULL;
        }
        for (size_t i = 0; i < batch; i++)
            rc |= ucx_wait(w, requests[i], "ucp_ep_flush_nbx");
    }
    return rc;
}

/* Everything, UCX's own bookkeeping included: a worker destroyed with operations it has not
 * seen answered makes UCX complain. */
int transport_flush_all(struct transport_worker *w)
{
    return ucx_pending_wait(w) || ucx_am_wait_acks(w) || ucx_am_wait_answers(w) ||
                   ucx_am_flush(w, -1) || ucx_flush_endpoints(w, 1)
               ? -1
               : 0;
}

int transport_flush(struct transport_worker *w, int pe)
{
    /* What was issued before this point is what this flush completes. */
    unsigned long issued = __atomic_load_n(&w->counts.issued, __ATOMIC_ACQUIRE);
    if (issued == __atomic_load_n(&w->counts.flushed, __ATOMIC_ACQUIRE))
        return 0;
    if (ucx_pending_wait(w) || ucx_am_wait_acks(w) || ucx_am_wait_answers(w) || ucx_am_flush(w, pe))
        return -1;
    if (pe >= 0) {
        const struct ucx_peer *peer = &w->peers[pe];
        if (!peer->ep || peer->by_message)
            return 0; /* nothing was ever sent there, or the flush message confirmed it */
        ucp_request_param_t param = {0};
        return ucx_wait(w, ucp_ep_flush_nbx(peer->ep, &param), "ucp_ep_flush_nbx");
    }
    if (ucx_flush_endpoints(w, 0))
        return -1;
    /* Another thread's flush may store a smaller count after this one: that only costs a flush
     * more, never one less. */
    __atomic_store_n(&w->counts.flushed, issued, __ATOMIC_RELEASE);
    return 0;
}
