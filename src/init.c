/* Library setup, exit and query routines (1.6 section 9.1). */
#include "../transports/transport.h"
#include "runtime.h"
#include "space_reach.h"
#include "staged.h"
#include "team.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct runtime rt;
struct strata_ctx strata_default_ctx;
shmem_ctx_t SHMEM_CTX_DEFAULT = &strata_default_ctx;

/* Internal symmetric words: the first allocation of the default heap, so the same offset on
 * every PE. */
#define SYNC_WORDS 64

static int init_publish(const char *key, const void *data, size_t len)
{
    return boot_put(key, data, len);
}

static int init_fetch(int pe, const char *key, void *data, size_t *len)
{
    return boot_get(pe, key, data, len);
}

/* A progress thread is needed when the transport carries traffic whose target side needs
 * progress (gets and atomics emulated over tcp or on memory UCX did not allocate). */
static int init_wants_progress_thread(void)
{
    const char *mode = rt.knobs.PROGRESS_THREAD;
    if (!strcmp(mode, "1") || !strcmp(mode, "on") || !strcmp(mode, "yes"))
        return 1;
    if (!strcmp(mode, "0") || !strcmp(mode, "off") || !strcmp(mode, "no"))
        return 0;
    return rt.transport != NULL;
}

/* Aborts init on every PE: each PE prints its own message, the fence lets all of them print
 * before the launcher tears the job down. */
static void init_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void init_fail(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_verror("shmem_init", fmt, args);
    va_end(args);
    boot_fence();
    boot_abort(1, "Strata: shmem_init failed");
}

int runtime_transport_start(void)
{
    struct transport_config config = {
        .my_pe = rt.my_pe,
        .n_pes = rt.n_pes,
        .thread_safe =
            rt.thread_level == SHMEM_THREAD_MULTIPLE || strcmp(rt.knobs.PROGRESS_THREAD, "0"),
        .exchange = {init_publish, init_fetch},
    };
    if (transport_init(&config, &rt.transport))
        return -1;
    transport_set_target_ops(rt.transport, &staged_target_ops);
    rt.job.transport = rt.transport;
    rt.worker = transport_default_worker(rt.transport);
    strata_default_ctx.worker = rt.worker;
    return ctx_workers_attach();
}

int runtime_progress_start(void)
{
    if (!rt.transport || !init_wants_progress_thread())
        return 0;
    return transport_progress_thread_start(rt.transport, (unsigned)rt.knobs.PROGRESS_INTERVAL_US);
}

static void init_transport(void)
{
    struct space_job *job = &rt.job;
    int all_mapped = job->node_direct && job->local_size == job->n_pes;
    /* A device default space of several PEs is reached through active messages. */
    int device_default = strcmp(rt.knobs.DEFAULT_SPACE, "cpu") != 0 && job->n_pes > 1;
    if ((!all_mapped || device_default) && runtime_transport_start())
        init_fail("cannot initialize the UCX transport");
}

/* The library's own symmetric words, carved from the library space's heap: barrier counters,
 * team slots and the gather area (one word per PE per slot). */
static size_t init_library_bytes(void)
{
    return SYNC_WORDS * sizeof(uint64_t) + TEAM_SLOTS * TEAM_SLOT_WORDS * sizeof(uint64_t) +
           TEAM_SLOTS * (size_t)rt.n_pes * sizeof(uint64_t) + 3 * 64;
}

static void init_library_state(void)
{
    struct space *library = rt.library_space;
    size_t sync_bytes = SYNC_WORDS * sizeof(uint64_t), sync_offset, team_offset, gather_offset;
    size_t team_bytes = TEAM_SLOTS * TEAM_SLOT_WORDS * sizeof(uint64_t);
    size_t gather_bytes = TEAM_SLOTS * (size_t)rt.n_pes * sizeof(uint64_t);
    if (heap_alloc(library->allocator, sync_bytes, 0, &sync_offset) ||
        heap_alloc(library->allocator, team_bytes, 0, &team_offset) ||
        heap_alloc(library->allocator, gather_bytes, 0, &gather_offset))
        init_fail("the library's space has no room for its own %zu bytes", init_library_bytes());
    rt.sync_words = (uint64_t *)(library->heap.base + sync_offset);
    if (team_init((uint64_t *)(library->heap.base + team_offset),
                  (uint64_t *)(library->heap.base + gather_offset)))
        init_fail("out of memory for the predefined teams");
    rt.default_space->team = rt.default_space->members_team = SHMEM_TEAM_WORLD;
    library->team = library->members_team = SHMEM_TEAM_WORLD;
}

/* The default space (host memory, or device memory when SHMEM_DEFAULT_SPACE names a device),
 * and beside it the library's host space for its own words and the program's static data, so
 * that SHMEM_SYMMETRIC_SIZE is the program's alone. Every PE must reach a device default space:
 * each says whether it can before the start-up exchange, init_default_space_check reads the
 * verdicts after it. */
static void init_default_space(void)
{
    const struct kind_ops *kind = &kind_host;
    int type = SHMEM_DEVICE_CPU;
    char err[256];
    int32_t reachable = space_reach_default(rt.knobs.DEFAULT_SPACE, rt.knobs.SYMMETRIC_SIZE, &kind,
                                            &type, err, sizeof(err));
    if (reachable < 0)
        init_fail("%s", err);
    if (type != SHMEM_DEVICE_CPU && boot_put("strata.default.reach", &reachable, sizeof(reachable)))
        init_fail("cannot publish the default space's reach");
    if (space_default_create(&rt.job, init_library_bytes(), REGION_ID_LIBRARY, &rt.library_space))
        init_fail("cannot create the library's %zu bytes of symmetric memory",
                  init_library_bytes());
    rt.default_space = rt.library_space; /* until the default heap exists */
    unsigned char *all = malloc((size_t)rt.n_pes);
    if (!all)
        init_fail("out of memory");
    memset(all, 1, (size_t)rt.n_pes);
    struct space_params params = {kind, rt.knobs.SYMMETRIC_SIZE, REGION_ID_DEFAULT_HEAP, 0, all,
                                  type};
    if (reachable && space_create(&rt.job, &params, &rt.default_space))
        init_fail("cannot create the default symmetric heap of %zu bytes (SHMEM_SYMMETRIC_SIZE)",
                  rt.knobs.SYMMETRIC_SIZE);
    free(all);
    rt.device_memory = !kind_direct(rt.default_space->heap.kind);
    rt.default_space->device_type = type;
    rt.default_space->caps = SHMEM_SPACE_CAP_RMA | SHMEM_SPACE_CAP_COLLECTIVES |
                             SHMEM_SPACE_CAP_ATOMICS | SHMEM_SPACE_CAP_WORLD_ACCESS |
                             (rt.device_memory ? 0 : SHMEM_SPACE_CAP_DIRECT_ACCESS);
    space_api_init();
    uint64_t base = (uint64_t)(uintptr_t)rt.default_space->heap.base;
    if (boot_put("strata.heap.base", &base, sizeof(base)))
        init_fail("cannot publish the heap address");
    init_library_state();
}

/* After the start-up exchange: a device default space must be reachable by every PE. */
static void init_default_space_check(void)
{
    if (rt.default_space->device_type == SHMEM_DEVICE_CPU)
        return;
    for (int pe = 0; pe < rt.n_pes; pe++) {
        int32_t reachable = pe == rt.my_pe ? rt.default_space != rt.library_space : 0;
        size_t len = sizeof(reachable);
        if (pe != rt.my_pe && boot_get(pe, "strata.default.reach", &reachable, &len))
            init_fail("no word from PE %d about the default space", pe);
        if (!reachable)
            init_fail("SHMEM_DEFAULT_SPACE=%s: PE %d cannot reach that device type (or it is "
                      "smaller than SHMEM_SYMMETRIC_SIZE=%zu); the default space must be "
                      "reachable by every PE",
                      rt.knobs.DEFAULT_SPACE, pe, rt.knobs.SYMMETRIC_SIZE);
    }
}

static void init_devices(void)
{
    struct discovery_job job = {
        .my_pe = rt.my_pe,
        .n_pes = rt.n_pes,
        .local_rank = rt.boot.local_rank,
        .local_size = rt.boot.local_size,
        .device_map = rt.knobs.DEVICE_MAP,
        .test_device_pes = rt.knobs.TEST_DEVICE_PES,
        .test_device_size = rt.knobs.TEST_DEVICE_SIZE,
    };
    char err[256];
    if (discovery_run(&job, &rt.devices, err, sizeof(err)))
        init_fail("%s", err);
}

static void init_report(void)
{
    if (rt.my_pe != 0)
        return;
    if (rt.knobs.VERSION || rt.knobs.INFO)
        printf("%s (OpenSHMEM %d.%d)\n", SHMEM_VENDOR_STRING, SHMEM_MAJOR_VERSION,
               SHMEM_MINOR_VERSION);
    if (rt.knobs.INFO) {
        knobs_print(&rt.knobs, stdout);
        printf("Devices of PE 0:\n");
        discovery_print(&rt.devices, stdout);
    }
    fflush(stdout);
}

static void init_unlink_names(void)
{
    space_unlink(rt.library_space);
    space_unlink(rt.default_space);
}

static void runtime_start(int requested)
{
    if (boot_init(&rt.boot)) {
        fprintf(stderr, "Strata: shmem_init: cannot connect to the process manager\n");
        exit(1);
    }
    rt.my_pe = rt.boot.rank;
    rt.n_pes = rt.boot.size;
    char err[256];
    if (knobs_read(&rt.knobs, err, sizeof(err)))
        init_fail("%s", err);
    rt.debug = rt.knobs.DEBUG;
    if (log_configure(rt.knobs.LOG, err, sizeof(err)))
        init_fail("%s", err);
    rt.thread_level = requested > SHMEM_THREAD_MULTIPLE ? SHMEM_THREAD_MULTIPLE : requested;
    rt.job = (struct space_job){
        .my_pe = rt.my_pe,
        .n_pes = rt.n_pes,
        .local_peers = rt.boot.local_peers,
        .local_size = rt.boot.local_size,
        .job_id = rt.boot.job_id,
        .node_direct = rt.knobs.NODE_DIRECT,
    };
    init_devices();
    init_transport();
    init_default_space();
    /* With no peer on this node nobody needs the names: drop them before anything can fail. */
    if (rt.job.local_size == 1)
        init_unlink_names();
    /* The one exchange of start-up: transport addresses and keys. */
    if (boot_fence())
        init_fail("the process manager's fence failed");
    init_default_space_check();
    if (space_map_peers(&rt.job, rt.library_space) || space_map_peers(&rt.job, rt.default_space))
        init_fail("cannot map the symmetric memory of the PEs on this node");
    if (runtime_progress_start())
        init_fail("cannot start the progress thread");
    rt.init_count = 1;
    rt.barrier_epoch = 0;
    shmem_barrier_all();
    /* Every PE has mapped every node peer's memory: the names can go. */
    init_unlink_names();
    LOG(LOG_INIT, "shmem_init",
        "%d PEs, %d on this node, heap %zu bytes at %p, static data %s, transport %s", rt.n_pes,
        rt.boot.local_size, rt.default_space->heap.size, (void *)rt.default_space->heap.base,
        "mapped", rt.transport ? "UCX" : "none (all PEs mapped)");
    init_report();
}

int shmem_init_thread(int requested, int *provided)
{
    if (rt.init_count > 0)
        rt.init_count++;
    else
        runtime_start(requested);
    if (provided)
        *provided = rt.thread_level;
    return 0;
}

void shmem_init(void)
{
    shmem_init_thread(SHMEM_THREAD_SINGLE, NULL);
}

void shmem_finalize(void)
{
    if (rt.init_count <= 0)
        return;
    shmem_barrier_all();
    if (--rt.init_count > 0)
        return;
    /* Every PE's operations have completed at their targets before anyone tears down, so no PE
     * waits on a peer that has already gone. */
    if (rt.transport)
        transport_flush(rt.worker, -1);
    boot_fence();
    team_fini();
    space_api_fini();
    space_destroy(&rt.job, rt.default_space);
    space_destroy(&rt.job, rt.library_space);
    rt.default_space = rt.library_space = NULL;
    transport_fini(rt.transport);
    rt.transport = NULL;
    rt.worker = NULL;
    strata_default_ctx.worker = NULL;
    boot_finalize();
    free(rt.boot.local_peers);
    rt.boot.local_peers = NULL;
}

void shmem_global_exit(int status)
{
    fflush(stdout);
    boot_abort(status, "shmem_global_exit");
}

void shmem_query_thread(int *provided)
{
    runtime_require_init("shmem_query_thread");
    *provided = rt.thread_level;
}

void shmem_query_initialized(int *initialized)
{
    *initialized = rt.init_count > 0;
}

int shmem_my_pe(void)
{
    return rt.init_count > 0 ? rt.my_pe : -1;
}

int shmem_n_pes(void)
{
    return rt.init_count > 0 ? rt.n_pes : -1;
}

void shmem_info_get_version(int *major, int *minor)
{
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
{
    snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

/* Profiling control (1.6 section 9.1.11): Strata has no profiling levels of its own, and the
 * spec makes the call a no-op for libraries without a profiling interface. */
void shmem_pcontrol(int level, ...)
{
    (void)level;
}

void start_pes(int npes)
{
    (void)npes;
    shmem_init();
}

int _my_pe(void)
{
    return shmem_my_pe();
}

int _num_pes(void)
{
    return shmem_n_pes();
}
