/* SPDX-License-Identifier: BSD-3-Clause */
/* Protocols over the network's active messages, performed at the target by its progress engine
 * through the callbacks the layer above installed:
 * - for memory only its owner can touch (device memory that the network cannot register here):
 *   the initiator sends the request with its data in host memory; the target answers: an
 *   acknowledgement for a put (so fence and quiet know it is done), the data for a get, the old
 *   value for an atomic;
 * - one-way puts and atomics to peers that the network reaches by message anyway
 *   (transport_internal.h), and the flush that confirms them;
 * - the messages of the layer above (transport_message).
 * Messages are cut into chunks, so a handler always holds its whole payload. */
#include "transport_internal.h"

#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Over TCP each message costs the sender a system call or two whatever its size: large chunks
 * pay for fewer of them. */
#define AM_CHUNK NETWORK_AM_DATA_MAX

/* Bytes of the chunk of a len-byte transfer that starts at done. */
static size_t am_chunk(size_t len, size_t done)
{
    return len - done < AM_CHUNK ? len - done : AM_CHUNK;
}

enum am_id {
    AM_PUT = 1,
    AM_PUT_ACK,
    AM_GET,
    AM_GET_REPLY,
    AM_ATOMIC,
    AM_ATOMIC_REPLY,
    AM_POST,
    AM_FLUSH,
    AM_FLUSH_REPLY,
    AM_BATCH,
    AM_MESSAGE,
    AM_BULK,
};

/* A batch's payload: records of a header and len bytes of data each: a put's data, or, where op
 * is not AM_POST_NO_OP, the operand of an atomic on the len-byte word at (id, offset). */
struct am_batch_record {
    uint64_t offset;
    int32_t id;
    uint16_t len; /* at most AM_BATCH_PUT_MAX */
    int16_t op;
};

/* Up to one UCX TCP segment (8 KiB by default): one system call sends it. */
#define AM_BATCH_BYTES 8000

/* What an initiator waits on: the reply handler fills it in and sets done last. A non-blocking
 * get's chunk has nobody waiting on it: its handler frees it and counts it off its worker's
 * gets_unanswered. */
struct am_wait {
    void *dest;
    size_t len;
    uint64_t old;
    int status;
    int done;
    struct transport_worker *nbi_worker; /* non-blocking get: the worker that counts it */
};

struct am_request_header {
    uint64_t offset;
    uint64_t value, compare; /* atomics */
    uint64_t len;            /* gets */
    uint64_t token;          /* the initiator's struct am_wait */
    int32_t id, op, size;
};

/* A message of the layer above: its sender, its kind, then its own header. */
#define AM_MESSAGE_HEADER_MAX 64
struct am_message_header {
    int32_t from;
    uint32_t kind, header_len;
    char header[AM_MESSAGE_HEADER_MAX];
};

/* A one-way message: its payload written at (id, offset), then op (unless AM_POST_NO_OP) on the
 * word at (sig_id, sig_offset). */
struct am_post_header {
    uint64_t offset, sig_offset, value;
    int32_t id, sig_id, op, size;
};

/* A one-way message whose len bytes of data follow on the sender's bulk lane. */
struct am_bulk_header {
    struct am_post_header post;
    uint64_t len;
    int32_t from;
};

struct am_reply_header {
    uint64_t token;
    uint64_t old;
    int32_t status;
};

/* Answers a request with header and a copy of len bytes of payload. */
static void am_reply(struct transport_worker *w, const struct network_source *source, unsigned id,
                     const struct am_reply_header *header, const void *payload, size_t len)
{
    char *buffer = malloc(sizeof(*header) + len);
    if (!buffer) {
        log_error("transport", "out of memory answering an active message");
        return;
    }
    memcpy(buffer, header, sizeof(*header));
    if (len)
        memcpy(buffer + sizeof(*header), payload, len);
    w->t->ops->am_reply(source, id, buffer, sizeof(*header), len);
}

static void am_on_put(struct transport_worker *w, const void *header, size_t header_len, void *data,
                      size_t len, const struct network_source *source)
{
    (void)header_len;
    const struct am_request_header *h = header;
    struct am_reply_header reply = {h->token, 0, -1};
    if (data || !len)
        reply.status = w->t->target_ops->write(h->id, h->offset, data, len);
    am_reply(w, source, AM_PUT_ACK, &reply, NULL, 0);
}

static void am_on_get(struct transport_worker *w, const void *header, size_t header_len, void *data,
                      size_t len, const struct network_source *source)
{
    (void)header_len, (void)data, (void)len;
    const struct am_request_header *h = header;
    struct am_reply_header reply = {h->token, 0, -1};
    /* The data is read straight into the answer, behind its header: one copy. */
    char *buffer = malloc(sizeof(reply) + h->len);
    if (!buffer) {
        am_reply(w, source, AM_GET_REPLY, &reply, NULL, 0);
        return;
    }
    reply.status = w->t->target_ops->read(h->id, h->offset, buffer + sizeof(reply), h->len);
    memcpy(buffer, &reply, sizeof(reply));
    w->t->ops->am_reply(source, AM_GET_REPLY, buffer, sizeof(reply), reply.status ? 0 : h->len);
}

static void am_on_atomic(struct transport_worker *w, const void *header, size_t header_len,
                         void *data, size_t len, const struct network_source *source)
{
    (void)header_len, (void)data, (void)len;
    const struct am_request_header *h = header;
    struct am_reply_header reply = {h->token, 0, 0};
    reply.status = w->t->target_ops->atomic(h->id, h->offset, (enum transport_amo)h->op, h->value,
                                            h->compare, (size_t)h->size, &reply.old);
    am_reply(w, source, AM_ATOMIC_REPLY, &reply, NULL, 0);
}

/* Performs a one-way message: its len bytes of data (none where data is NULL: already in
 * place), then its atomic. Nobody waits for an answer: a failure can only be reported here. */
static void am_post_perform(struct transport_worker *w, const struct am_post_header *h,
                            const void *data, size_t len, int ok)
{
    const struct transport_target_ops *ops = w->t->target_ops;
    uint64_t old;
    if (!ok || (data && len && ops->write(h->id, h->offset, data, len)) ||
        (h->op != AM_POST_NO_OP && ops->atomic(h->sig_id, h->sig_offset, (enum transport_amo)h->op,
                                               h->value, 0, (size_t)h->size, &old)))
        log_error("transport", "a peer's one-way put or atomic (region %d) could not be performed",
                  h->id);
}

static void am_on_post(struct transport_worker *w, const void *header, size_t header_len,
                       void *data, size_t len, const struct network_source *source)
{
    (void)header_len, (void)source;
    am_post_perform(w, header, data, len, data || !len);
}

/* The data is read from the sender's lane straight into place where that is host memory, else
 * into a buffer that the target's write takes it from. */
static void am_on_bulk(struct transport_worker *w, const void *header, size_t header_len,
                       void *data, size_t len, const struct network_source *source)
{
    (void)header_len, (void)data, (void)len, (void)source;
    const struct am_bulk_header *h = header;
    void *place = w->t->target_ops->host_place(h->post.id, h->post.offset, h->len);
    void *buffer = place ? NULL : malloc(h->len);
    bulk_lane_receive(w->t, h->from, place ? place : buffer, h->len);
    am_post_perform(w, &h->post, buffer, h->len, place || buffer);
    free(buffer);
}

/* Performs a batch's record, whose data follows it. Returns 0 or -1. */
static int am_batch_perform(struct transport_worker *w, const struct am_batch_record *r,
                            const char *data)
{
    const struct transport_target_ops *ops = w->t->target_ops;
    if (r->op == AM_POST_NO_OP)
        return ops->write(r->id, r->offset, data, r->len);
    uint64_t operand = 0, old; /* in the width of the operation: the low bytes */
    if (r->len > sizeof(operand))
        return -1;
    memcpy(&operand, data, r->len);
    return ops->atomic(r->id, r->offset, (enum transport_amo)r->op, operand, 0, r->len, &old);
}

static void am_on_batch(struct transport_worker *w, const void *header, size_t header_len,
                        void *data, size_t len, const struct network_source *source)
{
    (void)header, (void)header_len, (void)source;
    const char *at = data, *end = at + len;
    int failed = !data && len;
    while (!failed && end - at >= (ptrdiff_t)sizeof(struct am_batch_record)) {
        struct am_batch_record r;
        memcpy(&r, at, sizeof(r)); /* records are packed */
        at += sizeof(r);
        failed = (size_t)(end - at) < r.len || am_batch_perform(w, &r, at);
        at += r.len;
    }
    if (failed || at != end)
        log_error("transport", "a peer's batch of one-way puts and atomics could not be performed");
}

/* Everything the same initiator sent before the flush on this lane has been handled. */
static void am_on_flush(struct transport_worker *w, const void *header, size_t header_len,
                        void *data, size_t len, const struct network_source *source)
{
    (void)header_len, (void)data, (void)len;
    struct am_reply_header reply = {0, 0, 0};
    memcpy(&reply.token, header, sizeof(reply.token));
    am_reply(w, source, AM_FLUSH_REPLY, &reply, NULL, 0);
}

static void am_on_flush_reply(struct transport_worker *w, const void *header, size_t header_len,
                              void *data, size_t len, const struct network_source *source)
{
    (void)w, (void)header_len, (void)data, (void)len, (void)source;
    const struct am_reply_header *h = header;
    __atomic_fetch_sub((uint64_t *)(uintptr_t)h->token, 1, __ATOMIC_RELEASE);
}

static void am_on_put_ack(struct transport_worker *w, const void *header, size_t header_len,
                          void *data, size_t len, const struct network_source *source)
{
    (void)w, (void)header_len, (void)data, (void)len, (void)source;
    const struct am_reply_header *h = header;
    if (h->status)
        log_error("transport", "a target failed to write an active-message put");
    __atomic_fetch_sub((uint64_t *)(uintptr_t)h->token, 1, __ATOMIC_RELEASE); /* its count */
}

static void am_on_reply(struct transport_worker *w, const void *header, size_t header_len,
                        void *data, size_t len, const struct network_source *source)
{
    (void)w, (void)header_len, (void)source;
    const struct am_reply_header *h = header;
    struct am_wait *wait = (struct am_wait *)(uintptr_t)h->token;
    int status = h->status || (!data && len) ? -1 : 0;
    wait->status = status;
    wait->old = h->old;
    if (!status && wait->dest)
        memcpy(wait->dest, data, len < wait->len ? len : wait->len);
    struct transport_worker *nbi_worker = wait->nbi_worker;
    if (nbi_worker) {
        if (status)
            __atomic_store_n(&nbi_worker->gets_failed, 1, __ATOMIC_RELAXED);
        free(wait);
        __atomic_fetch_sub(&nbi_worker->gets_unanswered, 1, __ATOMIC_RELEASE);
        return;
    }
    __atomic_store_n(&wait->done, 1, __ATOMIC_RELEASE);
}

static void am_on_message(struct transport_worker *w, const void *header, size_t header_len,
                          void *data, size_t len, const struct network_source *source)
{
    (void)source;
    struct am_message_header h = {0};
    memcpy(&h, header, header_len < sizeof(h) ? header_len : sizeof(h));
    transport_message_handler handler =
        h.kind < TRANSPORT_MESSAGE_KINDS ? w->t->message_handlers[h.kind] : NULL;
    if ((data || !len) && handler && h.header_len <= AM_MESSAGE_HEADER_MAX)
        handler(h.from, h.header, h.header_len, data, len);
    else
        log_error("transport", "a message of kind %u from PE %d could not be delivered", h.kind,
                  (int)h.from);
}

void am_handlers(network_am_handler handlers[NETWORK_AM_IDS])
{
    handlers[AM_PUT] = am_on_put;
    handlers[AM_PUT_ACK] = am_on_put_ack;
    handlers[AM_GET] = am_on_get;
    handlers[AM_GET_REPLY] = am_on_reply;
    handlers[AM_ATOMIC] = am_on_atomic;
    handlers[AM_ATOMIC_REPLY] = am_on_reply;
    handlers[AM_POST] = am_on_post;
    handlers[AM_FLUSH] = am_on_flush;
    handlers[AM_FLUSH_REPLY] = am_on_flush_reply;
    handlers[AM_BATCH] = am_on_batch;
    handlers[AM_MESSAGE] = am_on_message;
    handlers[AM_BULK] = am_on_bulk;
}

void transport_set_target_ops(struct transport *t, const struct transport_target_ops *ops)
{
    t->target_ops = ops;
}

/* Sends one message and waits until its buffers may be reused. reply: the target answers. */
static int am_send_now(struct transport_worker *w, int pe, enum am_id id, const void *header,
                       size_t header_len, const void *data, size_t len, int reply)
{
    return w->t->ops->am_send(w->net, pe, id, header, header_len, data, len, reply);
}

void transport_set_message_handler(struct transport *t, unsigned kind,
                                   transport_message_handler handler)
{
    t->message_handlers[kind] = handler;
}

void transport_set_served_hook(struct transport *t, void (*served)(void))
{
    t->served_hook = served;
}

/* Under the batch lock: sends the batch at slot i of the list and takes its peer off it. */
static int am_batch_send_locked(struct transport_worker *w, size_t i)
{
    struct transport_batch *b = &w->batch;
    int pe = b->pes[i];
    struct transport_peer *peer = &w->peers[pe];
    int rc = am_send_now(w, pe, AM_BATCH, NULL, 0, peer->batch, peer->batch_len, 0);
    __atomic_store_n(&peer->batch_len, 0, __ATOMIC_RELEASE);
    int last = b->pes[b->n - 1];
    b->pes[i] = last;
    w->peers[last].batch_slot = (uint32_t)i;
    __atomic_store_n(&b->n, b->n - 1, __ATOMIC_RELEASE);
    return rc;
}

int am_batch_send(struct transport_worker *w, int try)
{
    struct transport_batch *b = &w->batch;
    if (!__atomic_load_n(&b->n, __ATOMIC_ACQUIRE))
        return 0;
    if (try ? pthread_mutex_trylock(&b->lock) : pthread_mutex_lock(&b->lock))
        return 0;
    int rc = 0;
    while (b->n)
        rc |= am_batch_send_locked(w, b->n - 1);
    pthread_mutex_unlock(&b->lock);
    return rc;
}

int am_batch_before(struct transport_worker *w, int pe)
{
    struct transport_peer *peer = &w->peers[pe];
    if (!__atomic_load_n(&peer->batch_len, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&w->batch.lock);
    int rc = peer->batch_len ? am_batch_send_locked(w, peer->batch_slot) : 0;
    pthread_mutex_unlock(&w->batch.lock);
    return rc;
}

/* The batch's records go first: the lane keeps this PE's messages to pe in the order it made
 * them. */
static int am_send_message(struct transport_worker *w, int pe, enum am_id id, const void *header,
                           size_t header_len, const void *data, size_t len, int reply)
{
    if (am_batch_before(w, pe))
        return -1;
    return am_send_now(w, pe, id, header, header_len, data, len, reply);
}

/* Adds record r and its r->len bytes of data to w's batch for pe, sending that first if it has
 * no room left. */
static int am_batch_add(struct transport_worker *w, int pe, const struct am_batch_record *r,
                        const void *data)
{
    struct transport_batch *b = &w->batch;
    struct transport_peer *peer = &w->peers[pe];
    int rc = 0;
    pthread_mutex_lock(&b->lock);
    if ((!b->pes && !(b->pes = malloc((size_t)w->t->config.n_pes * sizeof(*b->pes)))) ||
        (!peer->batch && !(peer->batch = malloc(AM_BATCH_BYTES))))
        rc = -1;
    else if (peer->batch_len + sizeof(*r) + r->len > AM_BATCH_BYTES)
        rc = am_batch_send_locked(w, peer->batch_slot);
    if (!rc) {
        int begun = !b->n;
        if (!peer->batch_len) {
            peer->batch_slot = (uint32_t)b->n;
            b->pes[b->n] = pe;
            __atomic_store_n(&b->n, b->n + 1, __ATOMIC_RELEASE);
        }
        memcpy(peer->batch + peer->batch_len, r, sizeof(*r));
        memcpy(peer->batch + peer->batch_len + sizeof(*r), data, r->len);
        __atomic_store_n(&peer->batch_len, peer->batch_len + sizeof(*r) + r->len, __ATOMIC_RELEASE);
        am_posted(w, pe);
        if (begun)
            progress_thread_work_added(w->t);
    }
    pthread_mutex_unlock(&b->lock);
    if (rc)
        log_error("transport", "cannot batch a put or an atomic to PE %d", pe);
    return rc;
}

int am_batch_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                 size_t len)
{
    struct am_batch_record r = {
        .offset = offset, .id = id, .len = (uint16_t)len, .op = AM_POST_NO_OP};
    return am_batch_add(w, pe, &r, src);
}

int am_batch_atomic(struct transport_worker *w, int pe, int id, size_t offset, int op,
                    uint64_t value, size_t size)
{
    struct am_batch_record r = {
        .offset = offset, .id = id, .len = (uint16_t)size, .op = (int16_t)op};
    return am_batch_add(w, pe, &r, &value); /* little-endian: the low bytes are the operand */
}

static int am_send(struct transport_worker *w, int pe, enum am_id id,
                   const struct am_request_header *header, const void *data, size_t len)
{
    return am_send_message(w, pe, id, header, sizeof(*header), data, len, 1);
}

/* Progresses w until the reply lands. The worker may be shared with other threads, which may
 * run the reply handler; done is the only thing read here. */
static int am_wait_reply(struct transport_worker *w, struct am_wait *wait)
{
    TRANSPORT_WAIT_WHILE(w, !__atomic_load_n(&wait->done, __ATOMIC_ACQUIRE));
    return wait->status ? -1 : 0;
}

int am_wait_acks(struct transport_worker *w)
{
    TRANSPORT_WAIT_WHILE(w, __atomic_load_n(&w->am_unacked, __ATOMIC_ACQUIRE));
    return 0;
}

/* A put whose target acknowledges each piece, counted in *unacked until then. */
static int am_put_acknowledged(struct transport_worker *w, int pe, int id, size_t offset,
                               const void *src, size_t len, uint64_t *unacked)
{
    for (size_t done = 0; done < len; done += AM_CHUNK) {
        size_t chunk = am_chunk(len, done);
        struct am_request_header h = {
            .offset = offset + done, .token = (uintptr_t)unacked, .id = id};
        __atomic_fetch_add(unacked, 1, __ATOMIC_RELAXED);
        if (am_send(w, pe, AM_PUT, &h, (const char *)src + done, chunk)) {
            __atomic_fetch_sub(unacked, 1, __ATOMIC_RELAXED);
            return -1;
        }
        transport_count_issued(w);
    }
    return 0;
}

int transport_am_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src,
                     size_t len)
{
    return am_put_acknowledged(w, pe, id, offset, src, len, &w->am_unacked);
}

int am_put(struct transport_worker *w, int pe, int id, size_t offset, const void *src, size_t len)
{
    return am_put_acknowledged(w, pe, id, offset, src, len, &w->puts_unacked);
}

int am_wait_answers(struct transport_worker *w)
{
    TRANSPORT_WAIT_WHILE(w, __atomic_load_n(&w->puts_unacked, __ATOMIC_ACQUIRE) ||
                                __atomic_load_n(&w->gets_unanswered, __ATOMIC_ACQUIRE));
    if (__atomic_exchange_n(&w->gets_failed, 0, __ATOMIC_ACQ_REL)) {
        log_error("transport", "a target could not read the data of a non-blocking get");
        return -1;
    }
    return 0;
}

/* Asks pe for the chunk bytes at (id, offset) on behalf of wait, whose handler puts them at
 * wait->dest. */
static int am_get_request(struct transport_worker *w, int pe, int id, size_t offset,
                          struct am_wait *wait)
{
    struct am_request_header h = {
        .offset = offset, .len = wait->len, .token = (uintptr_t)wait, .id = id};
    return am_send(w, pe, AM_GET, &h, NULL, 0);
}

/* Requests of a get in flight at once: the target answers one while the next is on its way,
 * and the answers in flight stay within UCX's receive segments (2 MiB of 512 KiB). */
#define AM_GET_WINDOW 4

/* The get asks for its data a chunk at a time, up to AM_GET_WINDOW chunks ahead of the answers,
 * and each answer's handler copies it into place. */
int transport_am_get(struct transport_worker *w, int pe, int id, size_t offset, void *dest,
                     size_t len)
{
    struct am_wait waits[AM_GET_WINDOW];
    size_t chunks = (len + AM_CHUNK - 1) / AM_CHUNK, sent = 0, answered = 0;
    int rc = 0;
    for (;;) {
        while (!rc && sent < chunks && sent - answered < AM_GET_WINDOW) {
            size_t at = sent * AM_CHUNK, chunk = am_chunk(len, at);
            struct am_wait *wait = &waits[sent % AM_GET_WINDOW];
            *wait = (struct am_wait){.dest = (char *)dest + at, .len = chunk};
            if (am_get_request(w, pe, id, offset + at, wait))
                rc = -1;
            else
                sent++;
        }
        if (answered == sent)
            return rc; /* done, or failed with nothing in flight (waits live on this stack) */
        if (am_wait_reply(w, &waits[answered % AM_GET_WINDOW]))
            rc = -1;
        answered++;
    }
}

/* Chunks of non-blocking gets in flight per worker: beyond it a get waits for answers first, so
 * that a stream of them cannot make its targets hold unbounded answers (4 MiB). */
#define AM_GET_NBI_MAX 16

int am_get_nbi(struct transport_worker *w, int pe, int id, size_t offset, void *dest, size_t len)
{
    for (size_t at = 0; at < len; at += AM_CHUNK) {
        TRANSPORT_WAIT_WHILE(w, __atomic_load_n(&w->gets_unanswered, __ATOMIC_ACQUIRE) >=
                                    AM_GET_NBI_MAX);
        struct am_wait *wait = malloc(sizeof(*wait));
        if (!wait)
            return -1;
        *wait =
            (struct am_wait){.dest = (char *)dest + at, .len = am_chunk(len, at), .nbi_worker = w};
        __atomic_fetch_add(&w->gets_unanswered, 1, __ATOMIC_RELAXED);
        if (am_get_request(w, pe, id, offset + at, wait)) {
            __atomic_fetch_sub(&w->gets_unanswered, 1, __ATOMIC_RELAXED);
            free(wait);
            return -1;
        }
        transport_count_issued(w);
    }
    return 0;
}

int transport_am_atomic(struct transport_worker *w, enum transport_amo op, int pe, int id,
                        size_t offset, uint64_t value, uint64_t compare, size_t size, uint64_t *old)
{
    struct am_wait wait = {0};
    struct am_request_header h = {
        .offset = offset,
        .value = value,
        .compare = compare,
        .token = (uintptr_t)&wait,
        .id = id,
        .op = (int32_t)op,
        .size = (int32_t)size,
    };
    if (am_send(w, pe, AM_ATOMIC, &h, NULL, 0) || am_wait_reply(w, &wait))
        return -1;
    *old = wait.old;
    return 0;
}

/* A collective's large message on the bulk lane (begun): its header here, its data on the lane,
 * whose first part bulk_lane_begin sent ahead, so that the target finds it there. */
static int am_post_bulk(struct transport_worker *w, int pe, const struct am_post_header *h,
                        size_t len)
{
    struct am_bulk_header bulk = {.post = *h, .len = len, .from = w->t->config.my_pe};
    int rc = am_send_message(w, pe, AM_BULK, &bulk, sizeof(bulk), NULL, 0, 0);
    return bulk_lane_finish(w, pe, !rc);
}

/* A collective's large message on the bulk lane where it can go there; otherwise the data in
 * chunks, the atomic with the last one: in order on the peer's one lane. */
int am_post(struct transport_worker *w, int pe, int id, size_t offset, const void *src, size_t len,
            int sig_id, size_t sig_offset, int op, uint64_t value, size_t size, int awaited)
{
    if (!awaited && len >= BULK_LANE_MIN && !bulk_lane_begin(w, pe, src, len)) {
        struct am_post_header h = {.offset = offset,
                                   .sig_offset = sig_offset,
                                   .value = value,
                                   .id = id,
                                   .sig_id = sig_id,
                                   .op = op,
                                   .size = (int32_t)size};
        return am_post_bulk(w, pe, &h, len);
    }
    size_t done = 0;
    do {
        size_t chunk = am_chunk(len, done);
        int last = done + chunk == len;
        struct am_post_header h = {
            .offset = offset + done,
            .sig_offset = sig_offset,
            .value = value,
            .id = id,
            .sig_id = sig_id,
            .op = last ? op : AM_POST_NO_OP,
            .size = (int32_t)size,
        };
        const char *piece = len ? (const char *)src + done : NULL; /* a bare atomic: no src */
        if (am_send_message(w, pe, AM_POST, &h, sizeof(h), piece, chunk, 0))
            return -1;
        done += chunk;
    } while (done < len);
    if (awaited)
        am_posted(w, pe);
    return 0;
}

/* In order with the batch and the one-way messages to pe: a mailbox keeps what came in the order
 * its sender sent it. */
int transport_message(struct transport_worker *w, int pe, unsigned kind, const void *header,
                      size_t header_len, const void *data, size_t len)
{
    struct am_message_header h = {w->t->config.my_pe, kind, (uint32_t)header_len, {0}};
    transport_progress_called(w);
    if (kind >= TRANSPORT_MESSAGE_KINDS || header_len > AM_MESSAGE_HEADER_MAX ||
        len > NETWORK_AM_DATA_MAX)
        return -1;
    memcpy(h.header, header, header_len);
    return am_send_message(w, pe, AM_MESSAGE, &h,
                           offsetof(struct am_message_header, header) + header_len, data, len, 0);
}

/* Raises a confirmed count to what a flush confirmed (another thread's flush may have confirmed
 * more meanwhile). */
static void am_confirm(uint32_t *confirmed, uint32_t posted)
{
    uint32_t seen = __atomic_load_n(confirmed, __ATOMIC_ACQUIRE);
    while ((int32_t)(posted - seen) > 0 &&
           !__atomic_compare_exchange_n(confirmed, &seen, posted, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
        ;
}

/* Flushes up to TRANSPORT_FLUSH_BATCH peers: one flush message to each with unconfirmed messages,
 * then a wait for all the answers. */
static int am_flush_batch(struct transport_worker *w, const int *pes, size_t n)
{
    uint32_t posted[TRANSPORT_FLUSH_BATCH];
    uint64_t unanswered = 0;
    uint64_t token = (uintptr_t)&unanswered;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct transport_peer *peer = &w->peers[pes[i]];
        posted[i] = __atomic_load_n(&peer->posted, __ATOMIC_ACQUIRE);
        uint32_t confirmed = __atomic_load_n(&peer->confirmed, __ATOMIC_ACQUIRE);
        if (posted[i] == confirmed)
            continue;
        LOG(LOG_RMA, "transport", "a flush asks PE %d to confirm %u messages", pes[i],
            posted[i] - confirmed);
        __atomic_add_fetch(&unanswered, 1, __ATOMIC_RELAXED);
        if (am_send_message(w, pes[i], AM_FLUSH, &token, sizeof(token), NULL, 0, 1)) {
            __atomic_sub_fetch(&unanswered, 1, __ATOMIC_RELAXED);
            posted[i] = __atomic_load_n(&peer->confirmed, __ATOMIC_ACQUIRE);
            rc = -1;
        }
    }
    TRANSPORT_WAIT_WHILE(w, __atomic_load_n(&unanswered, __ATOMIC_ACQUIRE));
    for (size_t i = 0; i < n; i++)
        am_confirm(&w->peers[pes[i]].confirmed, posted[i]);
    return rc;
}

int am_flush(struct transport_worker *w, int pe)
{
    if (am_batch_send(w, 0))
        return -1;
    if (pe >= 0)
        return am_flush_batch(w, &pe, 1);
    uint32_t posted = __atomic_load_n(&w->posted_all, __ATOMIC_ACQUIRE);
    if (posted == __atomic_load_n(&w->confirmed_all, __ATOMIC_ACQUIRE))
        return 0;
    size_t n = __atomic_load_n(&w->n_connected, __ATOMIC_ACQUIRE);
    int rc = 0;
    for (size_t first = 0; first < n; first += TRANSPORT_FLUSH_BATCH)
        rc |= am_flush_batch(w, w->connected + first,
                             n - first < TRANSPORT_FLUSH_BATCH ? n - first : TRANSPORT_FLUSH_BATCH);
    if (!rc)
        am_confirm(&w->confirmed_all, posted);
    return rc;
}
