/* SPDX-License-Identifier: BSD-3-Clause */
/* The transport layer: workers (one per communication context; the default worker serves
 * SHMEM_CTX_DEFAULT and is the one peers connect to) over a network's ops table, and the route
 * of each operation: the network's own put, get and atomics, or, to a peer the network reaches
 * only by message anyway, this layer's one-way messages (am.c), which spare the target an
 * answer per operation. */
#include "transport_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct transport *transport_of(const struct transport_worker *w)
{
    return w->t;
}

int transport_list_names(const char *list, const char *name)
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

/* The default worker is gone while the transport is torn down. */
unsigned transport_progress_with_default(struct transport_worker *w)
{
    const struct network_ops *ops = w->t->ops;
    unsigned events = ops->progress(w->net);
    struct transport_worker *served = w->t->workers;
    if (served && served != w)
        events += ops->progress(served->net);
    return events;
}

void transport_wait_step(struct transport_worker *w, struct transport_idle *idle)
{
    progress_thread_postpone(&w->t->progress);
    transport_wait_idle(w, idle, transport_progress_with_default(w), wait_spin_ns);
}

/* A worker a destroyed context left, or NULL. */
static struct transport_worker *transport_worker_reuse(struct transport *t)
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

static void transport_worker_free(struct transport_worker *w)
{
    pthread_mutex_destroy(&w->connect_lock);
    pthread_mutex_destroy(&w->batch.lock);
    free(w->batch.pes);
    for (size_t i = 0; i < w->n_connected; i++)
        free(w->peers[w->connected[i]].batch); /* only a connected peer has one */
    free(w->connected);
    free(w->peers);
    free(w);
}

/* A private context's worker is thread-safe too where the transport is: its operations can wait
 * there after their call has returned (a new connection's wire-up, a full socket), and while its
 * PE computes only the progress thread can move them on (1.6 section 4.1). */
int transport_worker_create(struct transport *t, struct transport_worker **out)
{
    if ((*out = transport_worker_reuse(t)))
        return 0;
    struct transport_worker *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    w->t = t;
    pthread_mutex_init(&w->connect_lock, NULL);
    pthread_mutex_init(&w->batch.lock, NULL);
    w->peers = calloc((size_t)t->config.n_pes, sizeof(*w->peers));
    w->connected = calloc((size_t)t->config.n_pes, sizeof(*w->connected));
    if (!w->peers || !w->connected || t->ops->worker_create(t->net, w, &w->net)) {
        transport_worker_free(w);
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

/* A context's worker outlives the context, kept for the next one: destroying it would close its
 * connections under peers that still hold the other ends (over TCP a peer then sees its
 * endpoint fail, which UCX without peer-failure handling does not survive), and a context
 * made again starts with its peers connected. */
void transport_worker_release(struct transport_worker *w)
{
    if (!w)
        return;
    transport_batch_hint(w, 0); /* a session its context left started ends with it */
    transport_flush(w, -1);
    pthread_mutex_lock(&w->t->workers_lock);
    w->idle = 1;
    pthread_mutex_unlock(&w->t->workers_lock);
}

static void transport_worker_destroy(struct transport_worker *w)
{
    struct transport *t = w->t;
    pthread_mutex_lock(&t->workers_lock);
    for (struct transport_worker **at = &t->workers; *at; at = &(*at)->next)
        if (*at == w) {
            *at = w->next;
            break;
        }
    pthread_mutex_unlock(&t->workers_lock);
    t->ops->worker_destroy(w->net);
    transport_worker_free(w);
}

const struct network_ops *const network_builtin[] = {
#ifdef STRATA_HAVE_OFI
    &network_ofi_ops,
#endif
    &network_ucx_ops,
    NULL,
};

/* The network SHMEM_TRANSPORT names, or for "auto" the first built in that prefers this node's
 * fabric, else UCX. NULL: none of that name is built in. */
static const struct network_ops *transport_network_choose(const char *name)
{
    int automatic = !name || !*name || !strcmp(name, "auto");
    for (const struct network_ops *const *ops = network_builtin; *ops; ops++)
        if (automatic ? (*ops)->preferred && (*ops)->preferred() : !strcmp((*ops)->name, name))
            return *ops;
    return automatic ? &network_ucx_ops : NULL;
}

const char *transport_network_name(const struct transport *t)
{
    return t->ops->name;
}

void transport_describe(FILE *out)
{
    for (const struct network_ops *const *ops = network_builtin; *ops; ops++) {
        fprintf(out, "  %s%s\n", (*ops)->name,
                (*ops)->preferred && (*ops)->preferred() ? " (auto chooses it here)" : "");
        (*ops)->describe(out);
    }
}

int transport_init(const struct transport_config *config, struct transport **out)
{
    const struct network_ops *ops = transport_network_choose(config->network);
    if (!ops) {
        log_error("transport", "SHMEM_TRANSPORT=%s: no such network built in (oshinfo lists them)",
                  config->network);
        return -1;
    }
    struct transport *t = calloc(1, sizeof(*t));
    if (!t)
        return -1;
    t->config = *config;
    t->ops = ops;
    t->progress.wake_fd = -1;
    t->progress.timer_fd = -1;
    pthread_mutex_init(&t->workers_lock, NULL);
    struct network_config net_config = {
        .my_pe = config->my_pe,
        .n_pes = config->n_pes,
        .thread_safe = config->thread_safe,
        .events = wait_machine_oversubscribed(),
        .provider = config->provider,
        .exchange = config->exchange,
    };
    am_handlers(net_config.handlers);
    struct network_attr attr = {0};
    struct transport_worker *main_worker;
    if (t->ops->init(&net_config, &t->net) || transport_worker_create(t, &main_worker))
        goto fail;
    t->ops->query(t->net, &attr);
    t->atomics = attr.atomics && !config->atomics_by_message;
    t->network_cpu_atomics = attr.cpu_atomics;
    /* Where a fence is a round trip, a put-with-signal goes as one message, whose target performs
     * the put and then the signal, if its handler's update of the signal word is atomic with
     * every other: the network's atomics are the CPU's too, or they go by message as well. Only
     * up to the network's eager size: beyond, its rendezvous costs more than the fence. */
    t->signals_by_message = attr.fence_completes && (!t->atomics || attr.cpu_atomics);
    t->signal_message_max = attr.eager_max;
    LOG(LOG_INIT, "transport", "network %s, atomics %s, put-with-signal %s", ops->name,
        t->atomics ? "the network's" : "by message",
        t->signals_by_message ? "by message" : "the network's put, fence and atomic");
    if (bulk_lane_init(t, &attr))
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
    progress_thread_stop(t);
    while (t->workers)
        transport_worker_destroy(t->workers);
    bulk_lane_fini(t);
    if (t->net)
        t->ops->fini(t->net);
    pthread_mutex_destroy(&t->workers_lock);
    free(t);
}

int transport_reaches_memory(struct transport *t, enum transport_mem_type type)
{
    return t->ops->reaches_memory(t->net, type);
}

/* The exchange's name of region id's key in its current use. */
static void transport_region_name(const struct transport *t, int id, char *name, size_t len)
{
    snprintf(name, len, "transport.key.%d.%u", id, t->regions[id].generation);
}

int transport_cpu_atomics(struct transport *t)
{
    return !t->atomics || t->network_cpu_atomics;
}

int transport_region_register(struct transport *t, int id, unsigned generation, void *base,
                              size_t len, struct transport_key *key)
{
    if (id < 0 || id >= TRANSPORT_MAX_REGIONS)
        return -1;
    t->regions[id] = (struct transport_region){.generation = generation};
    char packed[NETWORK_KEY_MAX], name[48];
    size_t packed_len = key ? sizeof(key->bytes) : sizeof(packed);
    if (t->ops->region_register(t->net, id, base, len, key ? key->bytes : packed, &packed_len)) {
        if (key)
            key->len = 0;
        return -1;
    }
    if (key) {
        key->len = packed_len;
        return 0;
    }
    transport_region_name(t, id, name, sizeof(name));
    return t->config.exchange.publish(name, packed, packed_len);
}

void transport_region_keys_at(struct transport *t, int id, int home_id, size_t offset)
{
    if (id < 0 || id >= TRANSPORT_MAX_REGIONS)
        return;
    struct transport_region *region = &t->regions[id];
    region->keys_home = 1;
    region->home_id = home_id;
    region->home_offset = offset;
}

void transport_region_deregister(struct transport *t, int id)
{
    if (id >= 0 && id < TRANSPORT_MAX_REGIONS)
        t->regions[id].keys_home = 0;
    t->ops->region_deregister(t->net, id);
}

int transport_region_key(struct transport_worker *w, int pe, int id, void *key, size_t *len)
{
    struct transport *t = w->t;
    if (id < 0 || id >= TRANSPORT_MAX_REGIONS)
        return -1;
    const struct transport_region *region = &t->regions[id];
    if (!region->keys_home) {
        char name[48];
        transport_region_name(t, id, name, sizeof(name));
        return t->config.exchange.fetch(pe, name, key, len);
    }
    struct transport_key stored;
    if (t->ops->rma(w->net, pe, region->home_id, region->home_offset, &stored, sizeof(stored),
                    NETWORK_GET) ||
        !stored.len || stored.len > sizeof(stored.bytes) || stored.len > *len)
        return -1;
    memcpy(key, stored.bytes, stored.len);
    *len = stored.len;
    return 0;
}

/* Asks the network once per peer and worker, under connect_lock, since several threads may
 * reach a new peer at once; later calls read the answer. */
int transport_peer_by_message(struct transport_worker *w, int pe)
{
    struct transport_peer *peer = &w->peers[pe];
    int reach = __atomic_load_n(&peer->reach, __ATOMIC_ACQUIRE);
    if (reach != TRANSPORT_REACH_UNKNOWN)
        return reach == TRANSPORT_REACH_MESSAGE;
    pthread_mutex_lock(&w->connect_lock);
    int by_message = 0;
    if (peer->reach == TRANSPORT_REACH_UNKNOWN) {
        by_message = w->t->ops->by_message(w->net, pe);
        if (by_message >= 0) {
            w->connected[w->n_connected] = pe;
            __atomic_store_n(&w->n_connected, w->n_connected + 1, __ATOMIC_RELEASE);
            __atomic_store_n(&peer->reach,
                             by_message ? TRANSPORT_REACH_MESSAGE : TRANSPORT_REACH_DIRECT,
                             __ATOMIC_RELEASE);
        }
    } else {
        by_message = peer->reach == TRANSPORT_REACH_MESSAGE;
    }
    pthread_mutex_unlock(&w->connect_lock);
    return by_message;
}

int transport_by_message(struct transport_worker *w, int pe)
{
    return transport_peer_by_message(w, pe) > 0;
}

/* Each operation, waited for or not, counts as a call for the progress thread
 * (transport_progress_called): a PE streaming one-way puts, sent in line, would otherwise have
 * the thread serve its workers beside it, contending for them.
 *
 * A blocking put is usually followed by what waits on it: acknowledged, a quiet takes one
 * message each way. Non-blocking puts come in streams: one-way, and one flush message at the
 * quiet, so the target does not answer each; short ones share their messages. */
int transport_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                  size_t len, int nbi)
{
    transport_progress_called(w);
    int by_message = transport_peer_by_message(w, pe);
    if (by_message < 0)
        return -1;
    /* A blocking put is acknowledged, so that a put and a quiet take one message each way, unless
     * an acknowledgement is still on its way: a stream of puts then goes one-way, a send each,
     * and the quiet that ends it asks for one flush instead of taking an answer per put. */
    if (by_message)
        return (nbi || __atomic_load_n(&w->batch_hint, __ATOMIC_RELAXED)) && len <= AM_BATCH_PUT_MAX
                   ? am_batch_put(w, pe, id, offset, src, len)
               : !nbi && !__atomic_load_n(&w->puts_unacked, __ATOMIC_ACQUIRE)
                   ? am_put(w, pe, id, offset, src, len)
                   : am_post(w, pe, id, offset, src, len, 0, 0, AM_POST_NO_OP, 0, 0, 1);
    if (am_batch_before(w, pe) || w->t->ops->rma(w->net, pe, id, offset, (void *)src, len,
                                                 nbi ? NETWORK_PUT_NBI : NETWORK_PUT))
        return -1;
    transport_count_issued(w);
    return 0;
}

int transport_put_notify(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                         size_t len)
{
    transport_progress_called(w);
    int by_message = transport_peer_by_message(w, pe);
    if (by_message < 0)
        return -1;
    if (len == sizeof(uint64_t) && by_message) {
        uint64_t value;
        memcpy(&value, src, sizeof(value));
        return am_post(w, pe, 0, 0, NULL, 0, id, offset, TRANSPORT_AMO_SWAP, value, sizeof(value),
                       0);
    }
    if (am_batch_before(w, pe))
        return -1;
    return w->t->ops->rma(w->net, pe, id, offset, (void *)src, len, NETWORK_PUT_NOTIFY);
}

/* The network's emulated get over a message lane answers in its transmit segments (UCX: 8 KiB),
 * a send each at the target; this PE's own answers each carry up to a chunk. */
int transport_get(struct transport_worker *w, int pe, int id, size_t offset, void *dest, size_t len,
                  int nbi)
{
    transport_progress_called(w);
    int by_message = transport_peer_by_message(w, pe);
    if (by_message < 0 || am_batch_before(w, pe))
        return -1;
    if (by_message && len >= AM_GET_MIN)
        return nbi ? am_get_nbi(w, pe, id, offset, dest, len)
                   : transport_am_get(w, pe, id, offset, dest, len);
    if (w->t->ops->rma(w->net, pe, id, offset, dest, len, nbi ? NETWORK_GET_NBI : NETWORK_GET))
        return -1;
    if (nbi)
        transport_count_issued(w);
    return 0;
}

int transport_atomic(struct transport_worker *w, enum transport_amo op, int pe, int id,
                     size_t offset, uint64_t value, uint64_t compare, void *fetch, size_t size)
{
    transport_progress_called(w);
    int by_message = transport_peer_by_message(w, pe);
    if ((size != 4 && size != 8) || by_message < 0)
        return -1;
    int one_way = !fetch && op != TRANSPORT_AMO_CSWAP && op != TRANSPORT_AMO_SWAP;
    if (!w->t->atomics && !by_message) {
        uint64_t old;
        if (am_batch_before(w, pe) ||
            transport_am_atomic(w, op, pe, id, offset, value, compare, size, &old))
            return -1;
        if (fetch)
            memcpy(fetch, &old, size);
        return 0;
    }
    if (!fetch && op != TRANSPORT_AMO_CSWAP && by_message)
        return __atomic_load_n(&w->batch_hint, __ATOMIC_RELAXED)
                   ? am_batch_atomic(w, pe, id, offset, op, value, size)
                   : am_post(w, pe, 0, 0, NULL, 0, id, offset, op, value, size, 1);
    if (am_batch_before(w, pe) ||
        w->t->ops->atomic(w->net, op, pe, id, offset, value, compare, fetch, size))
        return -1;
    if (one_way)
        transport_count_issued(w); /* done at the target only once flushed */
    return 0;
}

int transport_put_signal(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                         size_t len, int sig_id, size_t sig_offset, enum transport_amo sig_op,
                         uint64_t signal, int watched)
{
    transport_progress_called(w);
    int by_message = transport_peer_by_message(w, pe);
    if (by_message < 0)
        return -1;
    if (by_message || (w->t->signals_by_message && len <= w->t->signal_message_max)) {
        /* What the network carries to pe lands before the message's signal. */
        if (!by_message && w->t->ops->fence(w->net))
            return -1;
        return am_post(w, pe, id, offset, src, len, sig_id, sig_offset, sig_op, signal,
                       sizeof(uint64_t), !watched);
    }
    if (len && (transport_put(w, pe, id, offset, src, len, 0) || transport_fence(w)))
        return -1;
    return transport_atomic(w, sig_op, pe, sig_id, sig_offset, signal, 0, NULL, sizeof(uint64_t));
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
    if (!on && am_batch_send(w, 0))
        log_error("transport", "the batch of a session's end could not be sent");
}

void am_batch_send_sessions(struct transport *t)
{
    if (pthread_mutex_trylock(&t->workers_lock))
        return; /* another thread, or this one inside a send: the next step tries again */
    for (struct transport_worker *w = t->workers; w; w = w->next)
        if (__atomic_load_n(&w->batch_hint, __ATOMIC_RELAXED) &&
            (t->config.thread_safe || pthread_equal(w->hint_thread, pthread_self())))
            am_batch_send(w, 1);
    pthread_mutex_unlock(&t->workers_lock);
}

int transport_fence(struct transport_worker *w)
{
    if (!transport_flush_needed(w))
        return 0; /* nothing since the last flush to order */
    /* Messages to peers the network also reaches are ordered with its operations only once
     * their targets have performed them. */
    if (am_batch_send(w, 0) || am_wait_acks(w) || (w->t->signals_by_message && am_flush(w, -1)))
        return -1;
    return w->t->ops->fence(w->net);
}

/* Everything, the network's own bookkeeping included: UCX reports a worker destroyed with
 * operations it has not seen answered. */
int transport_flush_all(struct transport_worker *w)
{
    return am_wait_acks(w) || am_wait_answers(w) || am_flush(w, -1) || w->t->ops->flush_all(w->net)
               ? -1
               : 0;
}

int transport_flush(struct transport_worker *w, int pe)
{
    /* What was issued before this point is what this flush completes. */
    unsigned long issued = __atomic_load_n(&w->counts.issued, __ATOMIC_ACQUIRE);
    if (issued == __atomic_load_n(&w->counts.flushed, __ATOMIC_ACQUIRE))
        return 0;
    if (am_wait_acks(w) || am_wait_answers(w) || am_flush(w, pe) || w->t->ops->flush(w->net, pe))
        return -1;
    if (pe >= 0)
        return 0;
    /* Another thread's flush may store a smaller count after this one: that only costs a flush
     * more, never one less. */
    __atomic_store_n(&w->counts.flushed, issued, __ATOMIC_RELEASE);
    return 0;
}
