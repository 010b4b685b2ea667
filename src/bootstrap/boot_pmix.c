/* SPDX-License-Identifier: BSD-3-Clause */
/* Bootstrap over the PMIx client API. Works under oshrun, Slurm (srun --mpi=pmix), PRRTE and
 * Open MPI's mpirun alike; without any of them PMIx_Init fails and the program is a singleton. */
#include "../../common/log.h"
#include "../../common/wait.h"
#include "boot.h"
#include "boot_event.h"
#include "boot_locality.h"

#include <pmix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t boot_self;
static int boot_connected;
/* An exchange failed: the process manager lost a peer, so an abort from here on is a
 * consequence of another PE's failure. */
static int boot_peer_lost;
/* Set by boot_leaving and boot_abort, read by the event handler on PMIx's thread. */
static int boot_is_leaving;

static int boot_get_uint(const char *key, pmix_rank_t rank, unsigned long *out)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, boot_self.nspace, rank);
    pmix_value_t *value = NULL;
    if (PMIx_Get(&proc, key, NULL, 0, &value) != PMIX_SUCCESS || !value)
        return -1;
    int rc = 0;
    switch (value->type) {
    case PMIX_UINT32:
        *out = value->data.uint32;
        break;
    case PMIX_UINT16:
        *out = value->data.uint16;
        break;
    case PMIX_INT:
        *out = (unsigned long)value->data.integer;
        break;
    case PMIX_UINT64:
        *out = value->data.uint64;
        break;
    default:
        rc = -1;
    }
    PMIX_VALUE_RELEASE(value);
    return rc;
}

/* The node's PEs, from PMIX_LOCAL_PEERS, checked: a list that names ranks outside the job or
 * leaves this PE out (two daemons of one engine that both took a host's name for theirs) would
 * send every table indexed by node peers astray. Says what is wrong; returns 0 or -1. */
static int boot_read_local_peers(struct boot_info *info)
{
    pmix_proc_t wildcard;
    PMIX_LOAD_PROCID(&wildcard, boot_self.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *value = NULL;
    if (PMIx_Get(&wildcard, PMIX_LOCAL_PEERS, NULL, 0, &value) != PMIX_SUCCESS || !value ||
        value->type != PMIX_STRING || !value->data.string) {
        fprintf(stderr, "Strata: PE %d: PMIx did not provide the list of local peers\n",
                info->rank);
        if (value)
            PMIX_VALUE_RELEASE(value);
        return -1;
    }
    char why[128];
    int rc = boot_local_peers_parse(value->data.string, info->rank, info->size, info->local_peers,
                                    info->local_size, why, sizeof(why));
    if (rc)
        fprintf(stderr,
                "Strata: PE %d: the process manager's local peers (PMIX_LOCAL_PEERS \"%s\") %s\n",
                info->rank, value->data.string, why);
    PMIX_VALUE_RELEASE(value);
    return rc;
}

static void boot_init_singleton(struct boot_info *info)
{
    info->singleton = 1;
    info->rank = 0;
    info->size = 1;
    info->local_rank = 0;
    info->local_size = 1;
    info->local_peers = malloc(sizeof(int));
    info->local_peers[0] = 0;
    snprintf(info->job_id, sizeof(info->job_id), "strata-single-%d", (int)getpid());
}

/* ---- Deaths reported by the process manager ----
 * An engine that reports a PE's end as a PMIx event (PRRTE does) lets the other PEs leave at once
 * with a line naming it, instead of waiting for it in the next exchange or collective. */

/* The PE of this job that an event concerns: the one it names, else its source; -1 for a
 * process of another job (the server itself, a daemon). */
static int boot_event_affected(const pmix_proc_t *source, const pmix_info_t info[], size_t ninfo)
{
    const pmix_proc_t *proc = source;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC)
            proc = info[i].value.data.proc;
        else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) &&
                 info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray &&
                 info[i].value.data.darray->type == PMIX_PROC &&
                 info[i].value.data.darray->size > 0)
            proc = info[i].value.data.darray->array;
    }
    if (!proc || !PMIX_CHECK_NSPACE(proc->nspace, boot_self.nspace) ||
        proc->rank == PMIX_RANK_WILDCARD || proc->rank > (pmix_rank_t)INT32_MAX)
        return -1;
    return (int)proc->rank;
}

static void boot_event_exit_code(const pmix_info_t info[], size_t ninfo, struct boot_event *event)
{
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT) {
            event->has_exit_code = 1;
            event->exit_code = info[i].value.data.integer;
        }
    }
}

/* Runs on PMIx's progress thread, so it cannot call PMIx_Abort (which waits for that thread)
 * nor wait for the program's stdio: one line with write(2), then _exit. The engine sees this PE
 * fail and ends what is left of the job. */
static void boot_on_event(size_t id, pmix_status_t status, const pmix_proc_t *source,
                          pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    (void)id, (void)results, (void)nresults;
    struct boot_event event = {.code = status,
                               .affected = boot_event_affected(source, info, ninfo)};
    boot_event_exit_code(info, ninfo, &event);
    char how[160];
    int leaving = __atomic_load_n(&boot_is_leaving, __ATOMIC_ACQUIRE);
    switch (boot_event_judge(&event, (int)boot_self.rank, leaving, how, sizeof(how))) {
    case BOOT_EVENT_PEER_DIED:
        log_error_nowait("process manager", "PE %d died (%s); leaving the job", event.affected,
                         how);
        _exit(1);
    case BOOT_EVENT_MANAGER_LOST:
        log_error_nowait("process manager",
                         "lost the connection to the process manager (%s); leaving the job",
                         PMIx_Error_string(status));
        _exit(1);
    case BOOT_EVENT_IGNORE:
        break;
    }
    /* Handlers the program registered itself see the event too. */
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
}

static void boot_events_registered(pmix_status_t status, size_t ref, void *cbdata)
{
    (void)status, (void)ref, (void)cbdata;
}

/* Registered without waiting for the server's answer, which would add a round trip to
 * start-up; PMIx reads the codes later, from its own thread, so they outlive this call. Without
 * the handler (a manager that refuses it) a death is still seen by the engine, which ends the
 * job; the PEs only lose the line that names it. */
static void boot_events_register(void)
{
    static pmix_status_t statuses[BOOT_EVENT_MAX_CODES];
    int codes[BOOT_EVENT_MAX_CODES];
    size_t ncodes = boot_event_codes(codes, BOOT_EVENT_MAX_CODES);
    for (size_t i = 0; i < ncodes; i++)
        statuses[i] = codes[i];
    PMIx_Register_event_handler(statuses, ncodes, NULL, 0, boot_on_event, boot_events_registered,
                                NULL);
}

int boot_init(struct boot_info *info)
{
    memset(info, 0, sizeof(*info));
    __atomic_store_n(&boot_is_leaving, 0, __ATOMIC_RELEASE); /* a shmem_init after a finalize */
    pmix_status_t rc = PMIx_Init(&boot_self, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        /* A process manager started us (it set our namespace) but will not take us: running as
         * a singleton would split the job into unrelated PEs. */
        if (getenv("PMIX_NAMESPACE")) {
            fprintf(stderr, "Strata: PMIx_Init failed under a process manager: %s\n",
                    PMIx_Error_string(rc));
            return -1;
        }
        boot_init_singleton(info);
        return 0;
    }
    boot_connected = 1;
    boot_events_register();
    unsigned long size, local_rank, local_size;
    pmix_rank_t wild = PMIX_RANK_WILDCARD;
    if (boot_get_uint(PMIX_JOB_SIZE, wild, &size) ||
        boot_get_uint(PMIX_LOCAL_SIZE, wild, &local_size) ||
        boot_get_uint(PMIX_LOCAL_RANK, boot_self.rank, &local_rank)) {
        fprintf(stderr, "Strata: PMIx did not provide job size, local size and local rank\n");
        return -1;
    }
    info->rank = (int)boot_self.rank;
    info->size = (int)size;
    info->local_rank = (int)local_rank;
    info->local_size = (int)local_size;
    info->local_peers = calloc(local_size ? local_size : 1, sizeof(int));
    if (!info->local_peers) {
        fprintf(stderr, "Strata: PE %d: out of memory for its %lu local peers\n", info->rank,
                local_size);
        return -1;
    }
    if (boot_read_local_peers(info))
        return -1;
    /* A job id that is a valid shared-memory file name: the namespace with '/' replaced. */
    snprintf(info->job_id, sizeof(info->job_id), "%s", boot_self.nspace);
    for (char *c = info->job_id; *c; c++)
        if (*c == '/')
            *c = '_';
    return 0;
}

static int boot_put_scoped(pmix_scope_t scope, const char *key, const void *data, size_t len)
{
    if (!boot_connected)
        return 0;
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    value.data.bo.bytes = (char *)data;
    value.data.bo.size = len;
    /* PMIx_Put copies the value; the caller keeps data. */
    return PMIx_Put(scope, key, &value) == PMIX_SUCCESS ? 0 : -1;
}

int boot_put(const char *key, const void *data, size_t len)
{
    return boot_put_scoped(PMIX_GLOBAL, key, data, len);
}

int boot_put_node(const char *key, const void *data, size_t len)
{
    return boot_put_scoped(PMIX_LOCAL, key, data, len);
}

/* Every fence collects data: Slurm 22.05 completes a fence without PMIX_COLLECT_DATA at once on
 * a node whose PEs have all arrived, without waiting for the other nodes, so only a collecting
 * fence is a barrier of the whole job under every engine. */
static void boot_fence_info(pmix_info_t *info)
{
    bool collect = true;
    PMIX_INFO_LOAD(info, PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
}

int boot_fence(void)
{
    if (!boot_connected)
        return 0;
    if (PMIx_Commit() != PMIX_SUCCESS)
        return -1;
    pmix_info_t info;
    boot_fence_info(&info);
    pmix_status_t rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        boot_peer_lost = 1;
    return rc == PMIX_SUCCESS ? 0 : -1;
}

struct boot_fence_wait {
    int done;
    pmix_status_t status;
};

static void boot_fence_done(pmix_status_t status, void *cbdata)
{
    struct boot_fence_wait *wait = cbdata;
    wait->status = status;
    __atomic_store_n(&wait->done, 1, __ATOMIC_RELEASE);
}

int boot_fence_progressing(void (*progress)(void *), void *arg)
{
    if (!boot_connected)
        return 0;
    struct boot_fence_wait wait = {0, PMIX_SUCCESS};
    pmix_info_t info;
    boot_fence_info(&info);
    pmix_status_t rc = PMIx_Fence_nb(NULL, 0, &info, 1, boot_fence_done, &wait);
    unsigned spins = 0;
    while (rc == PMIX_SUCCESS && !__atomic_load_n(&wait.done, __ATOMIC_ACQUIRE)) {
        progress(arg);
        wait_idle(&spins);
    }
    if (rc == PMIX_SUCCESS)
        rc = wait.status;
    if (rc != PMIX_SUCCESS)
        boot_peer_lost = 1;
    return rc == PMIX_SUCCESS ? 0 : -1;
}

int boot_get(int rank, const char *key, void *data, size_t *len)
{
    if (!boot_connected)
        return -1;
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, boot_self.nspace, (pmix_rank_t)rank);
    pmix_value_t *value = NULL;
    if (PMIx_Get(&proc, key, NULL, 0, &value) != PMIX_SUCCESS || !value) {
        boot_peer_lost = 1;
        return -1;
    }
    int rc = -1;
    if (value->type == PMIX_BYTE_OBJECT && value->data.bo.size <= *len) {
        memcpy(data, value->data.bo.bytes, value->data.bo.size);
        *len = value->data.bo.size;
        rc = 0;
    }
    PMIX_VALUE_RELEASE(value);
    return rc;
}

/* boot_get_many: the requests in flight at once, and the state they share. */
#define BOOT_GETS_IN_FLIGHT 256

struct boot_get_batch {
    char *data;
    size_t len;
    unsigned char *got;
    int pending;
};

struct boot_get_one {
    struct boot_get_batch *batch;
    int index; /* in the caller's list of ranks */
};

/* On PMIx's thread: the value is PMIx's, copied here. */
static void boot_get_one_done(pmix_status_t status, pmix_value_t *value, void *cbdata)
{
    struct boot_get_one *one = cbdata;
    struct boot_get_batch *batch = one->batch;
    int ok = status == PMIX_SUCCESS && value && value->type == PMIX_BYTE_OBJECT &&
             value->data.bo.size == batch->len;
    if (ok)
        memcpy(batch->data + (size_t)one->index * batch->len, value->data.bo.bytes, batch->len);
    batch->got[one->index] = (unsigned char)ok;
    wait_word_decrement(&batch->pending);
}

/* Requests go to PMIx's thread many at a time: one at a time, each would wait for that thread to
 * run, which on a host with more PEs than cores is a time slice per request. */
int boot_get_many(const char *key, const int *ranks, int n, void *data, size_t len,
                  unsigned char *got)
{
    if (!boot_connected)
        return -1;
    struct boot_get_one one[BOOT_GETS_IN_FLIGHT];
    struct boot_get_batch batch = {data, len, got, 0};
    int failed = 0;
    for (int first = 0; first < n; first += BOOT_GETS_IN_FLIGHT) {
        int count = n - first < BOOT_GETS_IN_FLIGHT ? n - first : BOOT_GETS_IN_FLIGHT;
        __atomic_store_n(&batch.pending, count, __ATOMIC_RELAXED);
        for (int i = 0; i < count; i++) {
            int index = first + i;
            pmix_proc_t proc;
            PMIX_LOAD_PROCID(&proc, boot_self.nspace, (pmix_rank_t)(ranks ? ranks[index] : index));
            one[i] = (struct boot_get_one){&batch, index};
            if (PMIx_Get_nb(&proc, key, NULL, 0, boot_get_one_done, &one[i]) != PMIX_SUCCESS) {
                got[index] = 0;
                __atomic_sub_fetch(&batch.pending, 1, __ATOMIC_RELEASE);
            }
        }
        wait_word_zero(&batch.pending);
        for (int i = 0; i < count; i++)
            failed += !got[first + i];
    }
    if (failed)
        boot_peer_lost = 1;
    return failed ? -1 : 0;
}

void boot_leaving(void)
{
    __atomic_store_n(&boot_is_leaving, 1, __ATOMIC_RELEASE);
}

void boot_abort(int status, const char *message)
{
    /* The peers' ends that follow are this abort's doing, not deaths to report. */
    boot_leaving();
    fflush(stdout);
    fflush(stderr);
    if (boot_connected) {
        char text[512];
        snprintf(text, sizeof(text), "%s%s", boot_peer_lost ? BOOT_ABORT_AFTER_LOST_PEER : "",
                 message);
        PMIx_Abort(status, text, NULL, 0);
    }
    /* PMIx_Abort returns once the launcher has been told; the launcher then kills the job. */
    _exit(status);
}

void boot_abort_after_lost_peer(int status, const char *message)
{
    boot_peer_lost = 1;
    boot_abort(status, message);
}

void boot_finalize(void)
{
    boot_exit_mark_finalized();
    if (boot_connected)
        PMIx_Finalize(NULL, 0);
    boot_connected = 0;
}
