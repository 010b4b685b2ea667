/* SPDX-License-Identifier: BSD-3-Clause */
/* The library's state, shared by the src/ files. One instance per process. */
#ifndef STRATA_RUNTIME_H
#define STRATA_RUNTIME_H

#include "../common/log.h"
#include "../common/wait.h"
#include "../spaces/discovery.h"
#include "../spaces/space.h"
#include "bootstrap/boot.h"
#include "knobs.h"

#include <shmem.h>
#include <stdarg.h>
#include <stdint.h>

struct strata_team;

/* A communication context: its own transport worker, its own queue of kinds' asynchronous writes,
 * and the team whose numbering its PE arguments use. */
struct strata_ctx {
    struct transport_worker *worker; /* NULL when every PE is mapped */
    int queue;                       /* of kinds' writes (kind.h); the default context's is 0 */
    struct strata_team *team;
    const int *members; /* team rank -> world rank; NULL for the world team */
    int team_size;
    long options;
    /* The worker's issued count (transport_issued) after the last atomic that went through the
     * transport to a PE whose copy this PE also stores to directly (a space with members
     * elsewhere has one atomics mechanism), 0 before any: a fence completes it unless a flush
     * did, since the transport orders it only against its own operations. */
    unsigned long atomic_beside_stores;
    struct strata_ctx *next_shareable; /* the team's other shareable contexts */
    struct strata_ctx *next_created;   /* every context of this PE (ctx.c) */
};

struct runtime {
    int init_count; /* shmem_init calls not yet matched by shmem_finalize */
    int my_pe;
    int n_pes;
    int thread_level;
    int debug;
    struct knobs knobs;
    struct boot_info boot;
    struct space_job job;
    struct transport *transport;
    struct transport_worker *worker; /* the default context's; progressed by every wait */
    struct space *default_space;
    /* Host memory for the library's own words and the program's static data, beside the default
     * space (whose heap is the program's alone). */
    struct space *library_space;
    /* The nodes of the job, from the start-up exchange, numbered in the order of their lowest
     * world ranks: each PE's node and this PE's; and the PEs on this machine (more than the
     * node's where nodes share one). */
    int n_nodes, my_node, pes_on_machine;
    int pes_on_my_cpus; /* PEs of this machine whose CPUs overlap this PE's (wait_policy_init) */
    int *node_of;
    /* SHMEM_DEBUG or SHMEM_LOG=rma: every RMA and atomic takes the general path, which checks
     * and logs. */
    int checked;
    struct discovery devices; /* what this PE can reach (spaces/discovery.h) */
};

extern struct runtime rt;
extern struct strata_ctx strata_default_ctx;
/* The default context's worker before shmem_init and after the last shmem_finalize: not NULL,
 * so that shmem_quiet, which returns at once for a NULL worker (no transport), reaches its report
 * of a call out of turn without costing an initialized PE anything. */
#define CTX_WORKER_UNINITIALIZED ((struct transport_worker *)&strata_default_ctx)

/* ---- Errors (common/log.h), and calls out of turn (init.c) ---- */
/* Reports a call made before shmem_init (or after the last shmem_finalize) and ends the job. */
void runtime_report_uninit(const char *routine) __attribute__((noreturn, cold));
/* Checks that the library is initialized: one compare where all is well. */
static inline void runtime_require_init(const char *routine)
{
    if (unlikely(rt.init_count <= 0))
        runtime_report_uninit(routine);
}

/* ---- Faults in symmetric memory (fault.c) ---- */
/* Explains a SIGBUS in symmetric memory (the node ran out of room for heaps), then lets the
 * handler installed before run. */
void fault_handlers_install(void);

/* ---- Progress and waiting (progress.c) ---- */
/* A wait loop's state: its spins and what its last yield returned (common/wait.h) or, while it
 * progresses the transport, since when it spins (transport_wait_idle), and whether the transport
 * knows this thread waits (so the progress thread leaves the transport to it). */
struct progress_wait {
    unsigned spins, spin_limit;
    int spun; /* whether it spun (spin_limit then adapted: wait_spin_limit) */
    long long last_yield_ns;
    struct transport *told;
    struct transport_idle idle;
};
/* One step of a wait loop: progresses the transport, and yields the CPU after a short spin so
 * that oversubscribed PEs let each other run. */
void progress_wait_step(struct progress_wait *wait);
/* Ends a wait loop (tells the transport, if it was told it began). */
void progress_wait_end(struct progress_wait *wait);
/* Waits while cond holds (evaluated before every step), progressing the transport. */
#define PROGRESS_WAIT_WHILE(cond) PROGRESS_WAIT_WHILE_SPINNING(cond, wait_spins_before_yield)
/* The same, spinning spin_limit times before each yield (wait_spins_for_copy). */
#define PROGRESS_WAIT_WHILE_SPINNING(cond, spin_limit)                                             \
    do {                                                                                           \
        struct progress_wait wait_ = {0, spin_limit, 0, 0, NULL, {0, 0, 0}};                       \
        while (cond)                                                                               \
            progress_wait_step(&wait_);                                                            \
        progress_wait_end(&wait_);                                                                 \
    } while (0)

/* Starts the transport after init (world collective: a space needs it); its address is
 * published for the next exchange. Returns 0 or -1. */
int runtime_transport_start(void);
/* The same once start-up is over (a world collective, from a space's creation): peers learn
 * the new address in one more process-manager fence, once per job. */
int runtime_transport_start_late(void);
/* Starts the progress thread if the transport is up and SHMEM_PROGRESS_THREAD wants it (once). */
int runtime_progress_start(void);
/* Gives each context made before the transport started a worker of its own (ctx.c). Returns 0
 * or -1. */
int ctx_workers_attach(void);
/* Progresses the workers of this PE's contexts that hold operations a quiet has yet to complete,
 * at one call in CTX_DRIVE_EVERY of the thread (wait steps and tests call it beside the default
 * worker's progress). Returns how many events they handled. */
unsigned ctx_progress_outstanding(void);

/* ---- The kinds of the library's own messages (transport_message) ---- */
enum runtime_message {
    RUNTIME_MESSAGE_JOB_END, /* job_end.c */
    RUNTIME_MESSAGE_MAIL,    /* mailbox.c, sent by rma_mail */
};

/* ---- The end of the job with status 0 (job_end.c) ---- */
/* Bytes of the library space it needs, and their place there. */
size_t job_end_bytes(void);
/* Returns 0, or -1 when out of memory. */
int job_end_init(void *words);
/* Before finalize takes the spaces down: requests are no longer acted on. */
void job_end_fini(void);
/* Takes the requests and answers that come by message (RUNTIME_MESSAGE_JOB_END), and acts on them
 * on the transport's progress thread. Returns 0, or -1 when out of memory. */
int job_end_attach(struct transport *t, int n_pes);
/* Acts on a request, where this PE's own threads wait on peers: answers every PE that asked and
 * ends this process with the status. One or two loads when there is none. */
void job_end_poll(void);
/* Asks every other PE to end with status and ends this process once all have answered (or
 * asked too); returns when that cannot be done (the caller then aborts). */
void job_end_all(int status);

/* ---- Space creation records (space_api.c) ----
 * Bytes of the library space the exchanges of space creation need, and their place there. */
size_t space_records_bytes(int n_pes);
void space_records_init(void *area);

/* ---- Space handles (space_api.c) ---- */
/* Registers the default space and sets SHMEM_SPACE_DEFAULT. */
void space_api_init(void);
/* At finalize, before the job's last fence: lets go of node peers' device memory in every live
 * space (space_detach_devices). */
void space_api_detach_devices(void);
/* At finalize, after the fence: destroys the spaces the program left alive (not the default
 * one) and forgets them. */
void space_api_fini(void);
/* The live space a handle names, or NULL (SHMEM_SPACE_INVALID, a destroyed space). */
struct space *space_from_handle(shmem_space_t handle);
/* The same for a handle given to routine, reporting a stale one under SHMEM_DEBUG. */
struct space *space_of_handle(const char *routine, shmem_space_t handle);

/* ---- Ordering (order.c) ---- */
/* Quiet on ctx: its own queue of kinds' writes lands. */
void order_quiet(struct strata_ctx *ctx);
/* Quiet on the default context that also lands every context's kinds' writes: for the library's
 * own callers whose peers then read whatever this PE wrote (collectives, freeing, destroying). */
void order_quiet_all(void);
void order_barrier_all(void);

#endif
