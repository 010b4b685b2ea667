/* SPDX-License-Identifier: BSD-3-Clause */
/* Library setup, exit and query routines (1.6 section 9.1). */
#include "../common/copy.h"
#include "../transports/transport.h"
#include "mailbox.h"
#include "runtime.h"
#include "space_traits.h"
#include "staged.h"
#include "stream.h"
#include "team.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct runtime rt;
struct strata_ctx strata_default_ctx = {.worker = CTX_WORKER_UNINITIALIZED};
shmem_ctx_t SHMEM_CTX_DEFAULT = &strata_default_ctx;

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
    if (rt.knobs.PROGRESS_THREAD == KNOB_AUTO)
        return rt.transport != NULL;
    return rt.knobs.PROGRESS_THREAD;
}

/* ---- Start-up failures ----
 * A PE that fails a step of start-up keeps the reason and goes on to the start-up exchange,
 * skipping the steps that depend on the failed one. The exchange tells every PE every PE's
 * outcome, so all of them stop together, each failed PE naming its reason, instead of some
 * waiting in a later exchange for PEs that gave up. What runs after the exchange can only fail
 * on one PE at a time: it ends the job at once (the launcher stops the others). */
static char init_error[320];

static int init_ok(void)
{
    return init_error[0] == '\0';
}

/* Records the first failure of this PE. */
static void init_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void init_fail(const char *fmt, ...)
{
    if (!init_ok())
        return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(init_error, sizeof(init_error), fmt, args);
    va_end(args);
}

/* A failure after the exchange. */
static void init_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void init_fatal(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_verror("shmem_init", fmt, args);
    va_end(args);
    boot_abort(1, "Strata: shmem_init failed");
}

int runtime_transport_start(void)
{
    struct transport_config config = {
        .my_pe = rt.my_pe,
        .n_pes = rt.n_pes,
        .thread_safe = rt.thread_level == SHMEM_THREAD_MULTIPLE || rt.knobs.PROGRESS_THREAD != 0,
        .bulk_lane = rt.knobs.BULK_LANE && rt.boot.local_size < rt.n_pes, /* PEs on other nodes */
        .atomics_by_message = rt.knobs.TEST_ATOMICS_BY_MESSAGE,
        .network = rt.knobs.TRANSPORT,
        .provider = rt.knobs.OFI_PROVIDER,
        .exchange = {init_publish, init_fetch},
    };
    if (transport_init(&config, &rt.transport))
        return -1;
    if (job_end_attach(rt.transport, rt.n_pes))
        return -1;
    transport_set_target_ops(rt.transport, &staged_target_ops);
    transport_set_message_handler(rt.transport, RUNTIME_MESSAGE_MAIL, mailbox_on_message);
    rt.job.transport = rt.transport;
    rt.worker = transport_default_worker(rt.transport);
    strata_default_ctx.worker = rt.worker;
    return ctx_workers_attach();
}

int runtime_transport_start_late(void)
{
    /* The library space's key goes out with the address: spaces made from now on keep their
     * keys there (space_api.c). */
    if (runtime_transport_start() || space_register_late(&rt.job, rt.library_space))
        return -1;
    return boot_fence() ? -1 : 0;
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
        init_fail("cannot initialize the transport (SHMEM_TRANSPORT=%s)", rt.knobs.TRANSPORT);
}

/* The library's own symmetric words, carved from the library space's heap: the team slots, the
 * gather area and the space records (and room to align each). */
static size_t init_library_bytes(void)
{
    return team_area_bytes() + team_gather_bytes(rt.n_pes) + space_records_bytes(rt.n_pes) +
           job_end_bytes() + 4 * 64;
}

static void init_library_state(void)
{
    struct space *library = rt.library_space;
    size_t team_offset, gather_offset, gather_bytes = team_gather_bytes(rt.n_pes), records_offset,
                                       job_end_offset;
    if (heap_alloc(library->allocator, team_area_bytes(), 0, &team_offset) ||
        heap_alloc(library->allocator, gather_bytes, 0, &gather_offset) ||
        heap_alloc(library->allocator, space_records_bytes(rt.n_pes), 0, &records_offset) ||
        heap_alloc(library->allocator, job_end_bytes(), 0, &job_end_offset)) {
        init_fail("the library's space has no room for its own %zu bytes", init_library_bytes());
        return;
    }
    space_records_init(library->heap.base + records_offset);
    if (job_end_init(library->heap.base + job_end_offset)) {
        init_fail("out of memory for the record of who ends the job");
        return;
    }
    if (team_init((uint64_t *)(library->heap.base + team_offset),
                  (uint64_t *)(library->heap.base + gather_offset))) {
        init_fail("out of memory for the predefined teams");
        return;
    }
    rt.default_space->team = rt.default_space->members_team = SHMEM_TEAM_WORLD;
    library->team = library->members_team = SHMEM_TEAM_WORLD;
}

/* Whether a host default heap of SHMEM_SYMMETRIC_SIZE fits where host heaps live; says what is
 * available when it does not. Heaps are committed as they are touched, so this is the most a
 * PE can ever use, not what it uses. */
static int init_host_heap_fits(void)
{
    char where[160];
    size_t capacity = space_reach_host_capacity(where, sizeof(where));
    if (rt.knobs.SYMMETRIC_SIZE <= capacity)
        return 1;
    init_fail("SHMEM_SYMMETRIC_SIZE asks for a symmetric heap of %zu bytes per PE, more than this "
              "node has for it: %s",
              rt.knobs.SYMMETRIC_SIZE, where);
    return 0;
}

/* The attach handles of a PE's start-up regions (the library's heap, the static data, the default
 * heap), published for its node peers only. They read them all once start-up agreed, to attach
 * its memory when they first reach it without asking the process manager again: a round trip
 * through its thread per peer and region. */
#define INIT_REGIONS 3
struct init_handles {
    struct init_handle {
        int32_t id; /* of the region; -1 for none */
        uint32_t len;
        char bytes[KIND_HANDLE_MAX];
    } region[INIT_REGIONS];
};
static struct init_handles *init_node_handles; /* per node peer, in rt.boot.local_peers' order */

static int init_handles_publish(void)
{
    struct init_handles mine;
    struct space *spaces[2] = {rt.library_space, rt.default_space};
    int used = 0;
    for (int s = 0; s < 2; s++) {
        struct region *regions[2];
        int n = space_regions(spaces[s], regions);
        for (int i = 0; i < n && used < INIT_REGIONS; i++, used++) {
            struct init_handle *h = &mine.region[used];
            h->id = regions[i]->id;
            h->len = (uint32_t)regions[i]->handle_len;
            memcpy(h->bytes, regions[i]->handle, regions[i]->handle_len);
        }
    }
    for (; used < INIT_REGIONS; used++)
        mine.region[used].id = -1;
    return boot_put_node("strata.handles", &mine, sizeof(mine));
}

static void init_handles_fetch(void)
{
    int n = rt.boot.local_size;
    init_node_handles = calloc((size_t)n, sizeof(*init_node_handles));
    unsigned char *got = calloc((size_t)n, 1);
    if (!init_node_handles || !got)
        init_fatal("out of memory for the handles of %d node peers", n);
    if (n > 1 && boot_get_many("strata.handles", rt.boot.local_peers, n, init_node_handles,
                               sizeof(*init_node_handles), got))
        init_fatal("the process manager did not give the handles of this node's PEs' memory");
    free(got);
}

static int init_compare_pe(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

static int init_handle_of(void *arg, int pe, int id, void *handle, size_t *len)
{
    (void)arg;
    const int *peer =
        bsearch(&pe, rt.boot.local_peers, (size_t)rt.boot.local_size, sizeof(int), init_compare_pe);
    if (!peer || !init_node_handles)
        return -1;
    const struct init_handles *theirs = &init_node_handles[peer - rt.boot.local_peers];
    for (int i = 0; i < INIT_REGIONS; i++) {
        const struct init_handle *h = &theirs->region[i];
        if (h->id == id && h->len <= *len) {
            memcpy(handle, h->bytes, h->len);
            *len = h->len;
            return 0;
        }
    }
    return -1;
}

/* The memory traits of the default heap (SHMEM_SYMMETRIC_HEAP_*), as this PE can hold them.
 * Returns 0, or -1 after saying why not. */
static int init_default_traits(const struct kind_ops *kind, int type, struct space_traits *out)
{
    shmemx_space_traits_t traits;
    space_traits_of_knobs(&rt.knobs, &traits);
    shmem_space_config_t config = {(shmem_device_type_t)type, rt.knobs.SYMMETRIC_SIZE,
                                   SHMEM_SPACE_FLAG_DEFAULT};
    char why[400] = "";
    if (space_traits_check("shmem_init", &config, &traits) == SPACE_BAD_CONFIG) {
        init_fail("the default heap's memory traits (SHMEM_SYMMETRIC_HEAP_*) are invalid");
        return -1;
    }
    if (space_traits_resolve(&config, &traits, kind, 0, out, why, sizeof(why)) != SPACE_REACHABLE) {
        init_fail("the default heap's memory traits (SHMEM_SYMMETRIC_HEAP_*, policy bind) cannot "
                  "hold on this PE: %s",
                  why);
        return -1;
    }
    if (rt.knobs.SYMMETRIC_HEAP_USE_HUGE_PAGES == KNOB_AUTO && type == SHMEM_DEVICE_CPU)
        space_traits_try_huge(rt.knobs.SYMMETRIC_HEAP_PAGE_SIZE, out);
    return 0;
}

/* The default space (host memory, or device memory when SHMEM_DEFAULT_SPACE names a device),
 * and beside it the library's host space for its own words and the program's static data, so
 * that SHMEM_SYMMETRIC_SIZE is the program's alone. Returns whether this PE can reach a device
 * default space (every PE must: the start-up exchange compares the answers). */
static int init_default_space(void)
{
    const struct kind_ops *kind = &kind_host;
    int type = SHMEM_DEVICE_CPU, reachable = 1;
    if (strcmp(rt.knobs.DEFAULT_SPACE, "cpu"))
        reachable = space_reach_default(rt.knobs.DEFAULT_SPACE, rt.knobs.SYMMETRIC_SIZE, &kind,
                                        &type) == SPACE_REACHABLE;
    else if (!init_host_heap_fits())
        return 1;
    if (space_default_create(&rt.job, init_library_bytes(), REGION_ID_LIBRARY, &rt.library_space)) {
        init_fail("cannot create the library's %zu bytes of symmetric memory",
                  init_library_bytes());
        return reachable;
    }
    rt.default_space = rt.library_space; /* until the default heap exists */
    unsigned char *all = malloc((size_t)rt.n_pes);
    if (!all) {
        init_fail("out of memory");
        return reachable;
    }
    memset(all, 1, (size_t)rt.n_pes);
    struct space_traits traits;
    if (init_default_traits(kind, type, &traits)) {
        free(all);
        return reachable;
    }
    struct space_params params = {kind, traits.size, REGION_ID_DEFAULT_HEAP, 0,
                                  all,  type,        &traits.placement};
    int rc = reachable ? space_create(&rt.job, &params, &rt.default_space) : 0;
    free(all);
    if (rc && traits.placement.page_size &&
        traits.placement.page_size != PLACEMENT_PAGE_TRANSPARENT) {
        char advice[200];
        space_traits_huge_advice(traits.placement.page_size, advice, sizeof(advice));
        init_fail("cannot create the default symmetric heap of %zu bytes in %zu KiB pages "
                  "(SHMEM_SYMMETRIC_HEAP_USE_HUGE_PAGES): %s",
                  traits.size, traits.placement.page_size >> 10, advice);
    }
    if (rc) {
        init_fail("cannot create the default symmetric heap of %zu bytes (SHMEM_SYMMETRIC_SIZE)",
                  rt.knobs.SYMMETRIC_SIZE);
        rt.default_space = rt.library_space;
        return reachable;
    }
    rt.default_space->device_type = type;
    rt.default_space->alloc_policy = traits.alloc_policy;
    rt.default_space->caps =
        SHMEM_SPACE_CAP_RMA | SHMEM_SPACE_CAP_COLLECTIVES | SHMEM_SPACE_CAP_ATOMICS |
        SHMEM_SPACE_CAP_WORLD_ACCESS |
        (kind_can(kind, KIND_CAP_LOAD_STORE) ? SHMEM_SPACE_CAP_DIRECT_ACCESS : 0);
    space_api_init();
    if (init_handles_publish())
        init_fail("cannot publish the handles of this PE's memory");
    if (reachable)
        init_library_state();
    return reachable;
}

/* Heaps are committed as they are touched, so PEs whose heaps fit one by one may not fit
 * together: the first PE of the node says so once, and a PE that hits the limit gets a SIGBUS
 * that fault.c explains. */
static void init_warn_node_room(void)
{
    char where[160];
    size_t capacity = space_reach_host_capacity(where, sizeof(where));
    size_t all = rt.knobs.SYMMETRIC_SIZE * (size_t)rt.boot.local_size;
    if (rt.boot.local_rank != 0 || rt.default_space->device_type != SHMEM_DEVICE_CPU ||
        all / (size_t)rt.boot.local_size != rt.knobs.SYMMETRIC_SIZE || all <= capacity)
        return;
    log_error("shmem_init",
              "warning: the %d PEs of this node may fill %zu bytes of symmetric heap "
              "(SHMEM_SYMMETRIC_SIZE=%zu each), more than %s; a PE that touches more than its "
              "share ends the job (SIGBUS)",
              rt.boot.local_size, all, rt.knobs.SYMMETRIC_SIZE, where);
}

/* What each PE says in the start-up exchange. */
struct init_outcome {
    int32_t ok;                  /* every step of start-up succeeded */
    int32_t reachable;           /* this PE reaches the default space's device type */
    int32_t leader;              /* its node's lowest world rank */
    uint64_t machine;            /* init_machine_id */
    int32_t cpu_first, cpu_last; /* wait_cpu_range */
    uint64_t heap_base;          /* of the default space, for SHMEM_SPACE_CAP_IDENT_ADDR */
};

/* Which kernel this PE runs under: the process manager's nodes may share one machine (containers,
 * or several daemons of a test cluster), and then its cores too. A hash of the boot id; 0 when
 * unknown, which never counts as shared. */
static uint64_t init_machine_id(void)
{
    char id[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(id, sizeof(id), f))
            id[0] = 0;
        fclose(f);
    }
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *c = id; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return id[0] ? h : 0;
}

/* Ends a start-up that every PE agreed has failed. Every PE takes this path at the same point,
 * so one more fence lets all of them print their reasons before the first abort ends the job. */
static void init_stop(int cause)
{
    boot_fence();
    boot_abort(1, cause ? "Strata: shmem_init failed"
                        : BOOT_ABORT_AFTER_LOST_PEER "Strata: shmem_init failed on another PE");
}

/* The start-up exchange, and the verdict every PE draws from it: all PEs go on, or all stop,
 * each failed PE naming its reason. */
static void init_agree(int reachable)
{
    struct init_outcome mine = {.ok = init_ok(),
                                .reachable = reachable,
                                .leader = rt.boot.local_peers[0],
                                .machine = init_machine_id()},
                        theirs;
    wait_cpu_range(&mine.cpu_first, &mine.cpu_last);
    if (rt.default_space)
        mine.heap_base = (uint64_t)(uintptr_t)rt.default_space->heap.base;
    if (boot_put("strata.init", &mine, sizeof(mine)) || boot_fence())
        init_fatal("the process manager's start-up exchange failed%s%s", init_ok() ? "" : "; ",
                   init_error);
    int failed = 0, first_failed = -1, first_healthy = -1, unreachable = -1, on_machine = 0,
        on_my_cpus = 0;
    rt.n_nodes = 0;
    rt.node_of = malloc((size_t)rt.n_pes * sizeof(int));
    struct init_outcome *all = malloc((size_t)rt.n_pes * sizeof(*all));
    unsigned char *got = calloc((size_t)rt.n_pes, 1);
    if (!rt.node_of || !all || !got)
        log_fatal("shmem_init", "cannot allocate the start-up outcomes of %d PEs", rt.n_pes);
    boot_get_many("strata.init", NULL, rt.n_pes, all, sizeof(*all), got); /* got: which came */
    int same_base = 1;
    for (int pe = 0; pe < rt.n_pes; pe++) {
        theirs = pe == rt.my_pe ? mine : got[pe] ? all[pe] : (struct init_outcome){.leader = -1};
        same_base &= theirs.heap_base == mine.heap_base;
        int same_machine = mine.machine && theirs.machine == mine.machine;
        on_machine += same_machine;
        on_my_cpus +=
            same_machine && theirs.cpu_first <= mine.cpu_last && mine.cpu_first <= theirs.cpu_last;
        /* A PE comes after its leader, whose node is known by then; -1 for a PE that said
         * nothing (start-up then stops). */
        if (theirs.leader == pe) { /* a new node */
            if (pe == rt.boot.local_peers[0])
                rt.my_node = rt.n_nodes;
            rt.n_nodes++;
        }
        rt.node_of[pe] = theirs.leader == pe                        ? rt.n_nodes - 1
                         : theirs.leader >= 0 && theirs.leader < pe ? rt.node_of[theirs.leader]
                                                                    : -1;
        failed += !theirs.ok;
        if (!theirs.ok && first_failed < 0)
            first_failed = pe;
        if (theirs.ok && first_healthy < 0)
            first_healthy = pe;
        if (theirs.ok && !theirs.reachable && unreachable < 0)
            unreachable = pe;
    }
    free(all);
    free(got);
    if (same_base && rt.default_space)
        rt.default_space->caps |= SHMEM_SPACE_CAP_IDENT_ADDR;
    /* Until now the node's PE count stood for the machine's (and for its CPUs'). Without a
     * machine id, the node's PEs count as this PE's sharers, as before the exchange. */
    rt.pes_on_machine = on_machine > rt.boot.local_size ? on_machine : rt.boot.local_size;
    rt.pes_on_my_cpus = mine.machine ? on_my_cpus : rt.boot.local_size;
    wait_policy_init(rt.pes_on_my_cpus);
    if (!init_ok()) {
        log_error("shmem_init", "%s", init_error);
        init_stop(1);
    }
    if (failed) {
        /* One healthy PE says why it stops too; the failed PEs' aborts are the cause. */
        if (rt.my_pe == first_healthy)
            log_error("shmem_init", "%d PE(s) could not start (PE %d first; see its message)",
                      failed, first_failed);
        init_stop(0);
    }
    if (unreachable >= 0) {
        log_error("shmem_init",
                  "SHMEM_DEFAULT_SPACE=%s: PE %d cannot reach that device type (or it is smaller "
                  "than SHMEM_SYMMETRIC_SIZE=%zu); the default space must be reachable by every PE",
                  rt.knobs.DEFAULT_SPACE, unreachable, rt.knobs.SYMMETRIC_SIZE);
        init_stop(rt.my_pe == unreachable);
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
        .cuda_driver = rt.knobs.TEST_CUDA_DRIVER,
        .hip_runtime = rt.knobs.TEST_HIP_RUNTIME,
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
        char err[256];
        if (discovery_probe_gpus(&rt.devices, err, sizeof(err)))
            printf("  %s\n", err);
        discovery_print(&rt.devices, stdout);
    }
    fflush(stdout);
}

/* This PE's part of start-up, up to the exchange; the first failure skips the rest. */
static int init_local(int requested)
{
    char err[256];
    if (knobs_read(&rt.knobs, err, sizeof(err))) {
        init_fail("%s", err);
        return 1;
    }
    copy_tune();
    rt.debug = rt.knobs.DEBUG;
    log_mask = knobs_log_mask(rt.knobs.LOG);
    rt.checked = rt.debug || (log_mask & LOG_RMA);
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
    if (init_ok())
        init_transport();
    int reachable = init_ok() ? init_default_space() : 1;
    if (init_ok())
        space_reach_program_gpus();
    return reachable;
}

void runtime_report_uninit(const char *routine)
{
    log_fatal(routine, "called before shmem_init (or after the last shmem_finalize)");
}

/* ---- Leaving without shmem_finalize ----
 * A PE that ends (exit, or a return from main) between shmem_init and shmem_finalize leaves its
 * peers waiting for it in their next collective. oshrun sees such an exit itself and names it;
 * other process managers may not (srun across nodes lets the others wait for ever), so there
 * the PE ends the job on its way out, with its exit status (1 for 0: the job failed). */
static pid_t init_pid; /* a child forked by the program that exits is not the PE */

static void init_on_exit(int status, void *arg)
{
    (void)arg;
    if (rt.init_count <= 0 || getpid() != init_pid)
        return;
    log_error("exit", "exited with status %d without calling shmem_finalize; ending the job",
              status);
    boot_abort(status ? status : 1, "Strata: a PE exited without calling shmem_finalize");
}

static void init_watch_exit(void)
{
    static int registered;
    init_pid = getpid();
    if (registered || rt.boot.singleton || boot_exit_mark_init(rt.boot.rank))
        return;
    registered = 1;
    on_exit(init_on_exit, NULL);
}

static void runtime_start(int requested)
{
    log_fatal_handler_set(boot_abort, boot_abort_after_lost_peer);
    strata_default_ctx.worker = NULL; /* the transport's, if one starts */
    if (boot_init(&rt.boot))
        log_fatal("shmem_init",
                  "start-up with the process manager failed (the line above says why)");
    rt.my_pe = rt.boot.rank;
    rt.n_pes = rt.boot.size;
    log_identity_set(rt.my_pe);
    wait_policy_init(rt.boot.local_size);
    init_agree(init_local(requested));
    if (team_init_nodes())
        init_fatal("out of memory for the teams of the nodes");
    fault_handlers_install();
    init_warn_node_room();
    init_handles_fetch();
    if (space_attach_peers(&rt.job, rt.library_space, init_handle_of, NULL) ||
        space_attach_peers(&rt.job, rt.default_space, init_handle_of, NULL)) {
        if (errno == ESRCH) /* a node peer ended: its end is the cause */
            log_fatal_lost_peer("shmem_init", "a PE of this node ended during start-up");
        init_fatal("cannot map the symmetric memory of the PEs on this node");
    }
    rt.job.keys_in_records = 1;
    if (runtime_progress_start())
        init_fatal("cannot start the progress thread");
    rt.init_count = 1;
    init_watch_exit();
    shmem_barrier_all();
    LOG(LOG_INIT, "shmem_init",
        "%d PEs, %d on this node, %d nodes, %d PEs on this machine, %d on this PE's CPUs (waits "
        "spin %u times), heap %zu bytes at %p, static data %s, transport %s",
        rt.n_pes, rt.boot.local_size, rt.n_nodes, rt.pes_on_machine, rt.pes_on_my_cpus,
        wait_spins_before_yield, rt.default_space->heap.size, (void *)rt.default_space->heap.base,
        "mapped", rt.transport ? transport_network_name(rt.transport) : "none (all PEs mapped)");
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

static void finalize_progress(void *worker)
{
    if (worker)
        transport_progress(worker);
    job_end_poll(); /* a peer's shmem_global_exit(0) may meet this PE in its last exchange */
}

void shmem_finalize(void)
{
    if (rt.init_count <= 0)
        return;
    if (rt.init_count == 1)
        stream_fini(); /* the agent's collectives would run beside finalize's */
    shmem_barrier_all();
    if (--rt.init_count > 0)
        return;
    /* Every PE's operations have completed at their targets before anyone tears down, so no PE
     * waits on a peer that has already gone. A peer's flush may need this PE's transport to
     * progress (software-emulated operations, over TCP): the fence keeps progressing it. A peer
     * leaves only once this PE is in the fence, so its end from then on is no death. */
    boot_leaving();
    if (rt.transport) {
        transport_flush_all(rt.worker);
        transport_wait_enter(rt.transport);
    }
    /* Node peers' device memory is let go before the fence, after which its owners free it. */
    space_api_detach_devices();
    boot_fence_progressing(finalize_progress, rt.worker); /* NULL without a transport */
    if (rt.transport)
        transport_wait_leave(rt.transport);
    job_end_fini();
    team_fini();
    free(rt.node_of);
    rt.node_of = NULL;
    free(init_node_handles);
    init_node_handles = NULL;
    space_api_fini();
    space_destroy(&rt.job, rt.default_space);
    space_destroy(&rt.job, rt.library_space);
    rt.default_space = rt.library_space = NULL;
    transport_fini(rt.transport);
    rt.transport = NULL;
    rt.worker = NULL;
    strata_default_ctx.worker = CTX_WORKER_UNINITIALIZED;
    boot_finalize();
    free(rt.boot.local_peers);
    rt.boot.local_peers = NULL;
    rt.n_pes = 0; /* no PE argument is valid any more: RMA says it is called after finalize */
    log_identity_set(-1);
}

void shmem_global_exit(int status)
{
    fflush(stdout);
    if (status == 0)
        job_end_all(status);
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

/* Profiling control (1.6, the profiling interface): the library has no profiling of its own,
 * so the call is the no-op the interface requires; a tool that has levels defines
 * shmem_pcontrol itself, as it does the routines it intercepts. */
void shmem_pcontrol(int level, ...)
{
    (void)level;
}

/* OpenSHMEM 1.0 programs start with start_pes and end by returning from main: the library
 * finalizes them at exit. Calls after the first are no-ops (1.6, shmem_init's notes), so a
 * program that also called shmem_init keeps its own finalize. */
static void start_pes_finalize(void)
{
    shmem_finalize();
}

void start_pes(int npes)
{
    (void)npes;
    if (rt.init_count > 0)
        return;
    shmem_init();
    atexit(start_pes_finalize);
}

int _my_pe(void)
{
    return shmem_my_pe();
}

int _num_pes(void)
{
    return shmem_n_pes();
}
