/* SPDX-License-Identifier: BSD-3-Clause */
/* Communication contexts (1.6 section 9.5): each has its own transport worker, so quiet on one
 * completes only its own operations, and a team whose numbering its PE arguments use. */
#include "../transports/transport.h"
#include "route_target.h"
#include "team.h"

#include <stdlib.h>

/* Every context made and not destroyed: when the transport starts after some of them (with the
 * first space that needs it), each gets its own worker, so its fence, quiet and signals cover
 * what it sends. */
static struct strata_ctx *ctx_created;
static pthread_mutex_t ctx_created_lock = PTHREAD_MUTEX_INITIALIZER;

/* Contexts with a transport worker: while there are none, a wait drives the default worker only. */
static unsigned ctx_with_workers;

/* Contexts made so far, the default one included: each takes the next queue of kinds' writes,
 * round the KIND_QUEUES (contexts beyond them share). */
static unsigned ctx_numbered = 1;

int ctx_workers_attach(void)
{
    int rc = 0;
    pthread_mutex_lock(&ctx_created_lock);
    for (struct strata_ctx *ctx = ctx_created; ctx && !rc; ctx = ctx->next_created) {
        struct transport_worker *w;
        if (ctx->worker)
            continue;
        rc = transport_worker_create(rt.transport, &w);
        /* Another thread may be using the context on mapped peers meanwhile. */
        if (!rc) {
            __atomic_store_n(&ctx->worker, w, __ATOMIC_RELEASE);
            __atomic_add_fetch(&ctx_with_workers, 1, __ATOMIC_RELAXED);
        }
    }
    pthread_mutex_unlock(&ctx_created_lock);
    return rc;
}

/* Contexts' workers are driven at one call in this many of a thread: driving them at every wait
 * step slows a ping-pong on a private context through UCX's shared memory. */
#define CTX_DRIVE_EVERY 16
static __thread unsigned ctx_drive_calls __attribute__((tls_model("initial-exec")));

/* An operation can wait on its initiator's worker after the call that issued it has returned: a
 * non-fetching atomic through UCX's shared memory on a context's new endpoint stays there until
 * the context's quiet, so a PE that issued it and then waits for its effect (a peer's answer, or
 * its own word) would wait for ever. Any thread may drive any context's worker: where threads may
 * call at once, every worker is thread-safe (transport_worker_create), a private or serialized
 * context's too, so a wait also moves on what another thread left on a serialized context. */
unsigned ctx_progress_outstanding(void)
{
    if (!__atomic_load_n(&ctx_with_workers, __ATOMIC_RELAXED) ||
        ctx_drive_calls++ % CTX_DRIVE_EVERY || pthread_mutex_trylock(&ctx_created_lock))
        return 0; /* another thread is making or destroying one: the next step looks */
    unsigned events = 0;
    for (struct strata_ctx *ctx = ctx_created; ctx; ctx = ctx->next_created) {
        struct transport_worker *w = __atomic_load_n(&ctx->worker, __ATOMIC_ACQUIRE);
        if (w && transport_flush_needed(w))
            events += transport_progress(w);
    }
    pthread_mutex_unlock(&ctx_created_lock);
    return events;
}

static void ctx_unlist(struct strata_ctx *ctx)
{
    pthread_mutex_lock(&ctx_created_lock);
    if (ctx->worker)
        __atomic_sub_fetch(&ctx_with_workers, 1, __ATOMIC_RELAXED);
    for (struct strata_ctx **at = &ctx_created; *at; at = &(*at)->next_created)
        if (*at == ctx) {
            *at = ctx->next_created;
            break;
        }
    pthread_mutex_unlock(&ctx_created_lock);
}

int ctx_translate_pe(shmem_ctx_t ctx, const char *routine, int pe)
{
    if (unlikely(ctx == SHMEM_CTX_INVALID))
        log_fatal(routine, "called on SHMEM_CTX_INVALID (target PE %d)", pe);
    if (!ctx->members)
        return pe;
    if (unlikely((unsigned)pe >= (unsigned)ctx->team_size))
        log_fatal(routine, "target PE %d is out of range for the context's team of %d PEs", pe,
                  ctx->team_size);
    return ctx->members[pe];
}

static int ctx_create(shmem_team_t team, long options, shmem_ctx_t *out)
{
    *out = SHMEM_CTX_INVALID;
    if (team == SHMEM_TEAM_INVALID || shmem_team_my_pe(team) < 0)
        return -1;
    struct strata_ctx *ctx = calloc(1, sizeof(*ctx));
    if (!ctx)
        return -1;
    ctx->team = team;
    ctx->team_size = team->size;
    ctx->members = team == SHMEM_TEAM_WORLD ? NULL : team->members;
    ctx->options = options;
    ctx->queue = (int)(__atomic_fetch_add(&ctx_numbered, 1, __ATOMIC_RELAXED) % KIND_QUEUES);
    pthread_mutex_lock(&ctx_created_lock);
    int rc = rt.transport ? transport_worker_create(rt.transport, &ctx->worker) : 0;
    if (!rc) {
        ctx->next_created = ctx_created;
        ctx_created = ctx;
        if (ctx->worker)
            __atomic_add_fetch(&ctx_with_workers, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&ctx_created_lock);
    if (rc) {
        free(ctx);
        return -1;
    }
    if (!(options & SHMEM_CTX_PRIVATE)) {
        pthread_mutex_lock(&team->contexts_lock);
        ctx->next_shareable = team->shareable_contexts;
        team->shareable_contexts = ctx;
        pthread_mutex_unlock(&team->contexts_lock);
    }
    *out = ctx;
    return 0;
}

/* Frees a context already unlinked from its team's list. */
static void ctx_free(shmem_ctx_t ctx)
{
    order_quiet(ctx); /* 1.6: destroy performs an implicit quiet */
    ctx_unlist(ctx);
    transport_worker_release(ctx->worker);
    free(ctx);
}

void ctx_destroy_shareable(struct strata_team *team)
{
    pthread_mutex_lock(&team->contexts_lock);
    struct strata_ctx *ctx = team->shareable_contexts;
    team->shareable_contexts = NULL;
    pthread_mutex_unlock(&team->contexts_lock);
    while (ctx) {
        struct strata_ctx *next = ctx->next_shareable;
        ctx_free(ctx);
        ctx = next;
    }
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx)
{
    runtime_require_init("shmem_ctx_create");
    return ctx_create(SHMEM_TEAM_WORLD, options, ctx);
}

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    runtime_require_init("shmem_team_create_ctx");
    return ctx_create(team, options, ctx);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    if (ctx == SHMEM_CTX_INVALID || !team) {
        if (team)
            *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    *team = ctx->team;
    return 0;
}

void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    if (ctx == SHMEM_CTX_INVALID || ctx == SHMEM_CTX_DEFAULT)
        return;
    if (!(ctx->options & SHMEM_CTX_PRIVATE)) {
        struct strata_team *team = ctx->team;
        pthread_mutex_lock(&team->contexts_lock);
        for (struct strata_ctx **at = &team->shareable_contexts; *at; at = &(*at)->next_shareable)
            if (*at == ctx) {
                *at = ctx->next_shareable;
                break;
            }
        pthread_mutex_unlock(&team->contexts_lock);
    }
    ctx_free(ctx);
}

/* Sessions are hints about the calls that follow on a context and change no completion or
 * ordering (1.6 section 9.9). A batch session has the context's transport gather its short
 * blocking puts and non-fetching atomics to peers it reaches by message, one message per peer
 * (transport_batch_hint), as it always gathers short non-blocking ones; peers on the node are
 * loads and stores anyway. Only on a context the program created: SHMEM_CTX_DEFAULT's worker
 * also carries the library's locks and collectives, which 1.6 leaves out of sessions, and a
 * lock's release gathered there would wait for its PE's next call. total_ops is not needed: a
 * batch leaves when full (8000 bytes) or when anything else needs it gone. A context with no
 * transport worker yet (no peer reached through a transport when the session starts) is left as
 * it is. A mask that names config fields with no config to read them from is reported; options
 * and fields that 1.6 does not define, with SHMEM_DEBUG. */
static struct transport_worker *ctx_session_worker(shmem_ctx_t ctx)
{
    if (ctx == SHMEM_CTX_INVALID || ctx == SHMEM_CTX_DEFAULT)
        return NULL;
    return __atomic_load_n(&ctx->worker, __ATOMIC_ACQUIRE);
}

void shmem_ctx_session_start(shmem_ctx_t ctx, long options,
                             const shmem_ctx_session_config_t *config, long config_mask)
{
    runtime_require_init("shmem_ctx_session_start");
    if (ctx == SHMEM_CTX_INVALID)
        return;
    if ((config_mask & SHMEM_CTX_SESSION_TOTAL_OPS) && !config)
        log_error("shmem_ctx_session_start",
                  "config_mask 0x%lx names total_ops but config is NULL; the hint is ignored",
                  config_mask);
    if (rt.debug && (options & ~SHMEM_CTX_SESSION_BATCH))
        log_error("shmem_ctx_session_start", "options 0x%lx: 0x%lx are no session option", options,
                  options & ~SHMEM_CTX_SESSION_BATCH);
    if (rt.debug && (config_mask & ~SHMEM_CTX_SESSION_TOTAL_OPS))
        log_error("shmem_ctx_session_start", "config_mask 0x%lx: 0x%lx name no config field",
                  config_mask, config_mask & ~SHMEM_CTX_SESSION_TOTAL_OPS);
    struct transport_worker *w = ctx_session_worker(ctx);
    if ((options & SHMEM_CTX_SESSION_BATCH) && w)
        transport_batch_hint(w, 1); /* a second start adds options, never removes one */
}

/* Sends what the session gathered. A context with no session started: no effect. */
void shmem_ctx_session_stop(shmem_ctx_t ctx)
{
    runtime_require_init("shmem_ctx_session_stop");
    struct transport_worker *w = ctx_session_worker(ctx);
    if (w)
        transport_batch_hint(w, 0);
}
