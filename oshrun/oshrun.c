/* SPDX-License-Identifier: BSD-3-Clause */
/* oshrun: launches an OpenSHMEM job.
 *
 * On one node oshrun is itself the PMIx server: it registers the job, forks the PEs, serves their
 * fences, takes connections only from its own user's processes, and tears the job down when one
 * PE fails. Jobs that span nodes are handed to a PMIx engine that is already installed
 * (srun --mpi=pmix, prterun, mpirun). */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pmix.h>
#include <pmix_server.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The abort message prefix by which a PE says its abort is a consequence of a lost peer. */
#include "../src/bootstrap/boot.h"
#include "oshrun.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "(unknown version)"
#endif

#define OSHRUN_MAX_PES 4096
#define OSHRUN_KILL_GRACE_MS 1000
#define OSHRUN_TICK_MS 50
/* How long an abort that follows a lost peer waits for the failure that caused it. */
#define OSHRUN_LOST_PEER_GRACE_MS 500
/* How long the janitor waits for the PEs of a killed oshrun to die before cleaning anyway. */
#define OSHRUN_JANITOR_WAIT_MS 2000

enum abort_kind { ABORT_NONE, ABORT_PRIMARY, ABORT_AFTER_LOST_PEER };

struct pe {
    pid_t pid;
    pid_t pgid; /* the group killed with it; oshrun's own when PE 0 reads the terminal */
    int done;   /* reaped */
    /* Written by the PMIx progress thread, read by the main thread. */
    atomic_int connected;
    atomic_int finalized;
    atomic_int abort_status;
    atomic_int abort_kind; /* stored after abort_status */
};

struct job {
    int np;
    char **argv; /* program and its arguments */
    char program[PATH_MAX];
    char nspace[PMIX_MAX_NSLEN + 1];
    char tmpdir[PATH_MAX];
    char hostname[256];
    struct pe *pes;
    int running;
    int status;  /* the job's exit status */
    int failed;  /* a failure has been reported */
    int holding; /* an abort after a lost peer waits for its cause, since held_since */
    struct timespec held_since;
    pid_t janitor;       /* 0 once reaped */
    int janitor_fd;      /* write end of the janitor's pipe */
    int exit_marks;      /* a byte per PE, set as it finalizes (boot.h), or -1 */
    struct rlimit files; /* the descriptor limit oshrun was given, which its PEs get back */
    int bind_core;       /* --bind-to core: PE i runs on the i-th CPU oshrun may use only */
    cpu_set_t cpus;      /* the CPUs oshrun may use, as it started */
};

static struct job job = {.janitor_fd = -1, .exit_marks = -1};
/* The first abort of each kind, in the order they came: written by the PMIx progress thread
 * after the PE's abort fields, read by the main thread. */
static atomic_int first_primary_abort = -1, first_lost_peer_abort = -1;

/* ---- Command line ---- */

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: oshrun [-np N] [--host H1,H2 | --hostfile F] [--bind-to core|none] [--dry-run]\n"
        "              program [args...]\n"
        "  -np, -n, --np N   number of PEs (default 1)\n"
        "  --bind-to WHAT    core: each PE on a CPU of its own, in turn (PEs beyond the\n"
        "                    CPUs share them); none (default): where the kernel puts them\n"
        "  --host, -H LIST   hosts for a multi-node job (handed to srun/prterun/mpirun)\n"
        "  --hostfile FILE   host file for a multi-node job\n"
        "  --dry-run         print the command that would run the job, run nothing\n"
        "  -h, --help        this text;  --version  the version\n"
        "Environment: SHMEM_LAUNCHER=srun|prterun|mpirun hands the job to that engine,\n"
        "SHMEM_LAUNCHER=oshrun keeps it on this node; SHMEM_OSHRUN_TIMEOUT=S ends a job\n"
        "on this node after S seconds (status 124).\n");
}

void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "oshrun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (oshrun --help for usage)\n");
    exit(2);
}

void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "oshrun: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

int parse_count(const char *text, long max)
{
    char *end;
    errno = 0;
    long n = strtol(text, &end, 10);
    return errno || *end || end == text || n < 1 || n > max ? -1 : (int)n;
}

static int parse_np(const char *text)
{
    int n = parse_count(text, OSHRUN_MAX_PES);
    if (n < 0)
        die_usage("invalid number of PEs '%s': expected 1..4096", text);
    return n;
}

static int is_executable_file(const char *path)
{
    struct stat st;
    return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

int search_path(const char *name, char *out)
{
    const char *path = getenv("PATH");
    char dirs[8192];
    snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/local/bin:/usr/bin:/bin");
    for (char *save, *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        snprintf(out, PATH_MAX, "%s/%s", *dir ? dir : ".", name);
        if (is_executable_file(out))
            return 1;
    }
    return 0;
}

/* Checked before anything starts, so a typo costs no PMIx server and no half-started job. */
static void resolve_program(const char *name, char *out)
{
    if (!strchr(name, '/')) {
        if (!search_path(name, out))
            die("program '%s' not found in PATH", name);
        return;
    }
    snprintf(out, PATH_MAX, "%s", name);
    struct stat st;
    if (stat(out, &st))
        die("program '%s' does not exist", out);
    if (!is_executable_file(out))
        die("program '%s' is not an executable file", out);
}

/* Takes the value of option argv[*i], or stops with a usage error. */
static const char *option_value(int argc, char **argv, int *i, const char *what)
{
    if (*i + 1 >= argc)
        die_usage(what, argv[*i]);
    return argv[++*i];
}

static void parse_args(int argc, char **argv, struct handoff_job *opts)
{
    job.np = 1;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-np") || !strcmp(a, "-n") || !strcmp(a, "--np")) {
            job.np = parse_np(option_value(argc, argv, &i, "%s needs a number"));
        } else if (!strcmp(a, "--host") || !strcmp(a, "-H")) {
            opts->hosts = option_value(argc, argv, &i, "%s needs a host list");
        } else if (!strcmp(a, "--hostfile")) {
            opts->hostfile = option_value(argc, argv, &i, "%s needs a file");
        } else if (!strcmp(a, "--bind-to")) {
            opts->bind_to = option_value(argc, argv, &i, "%s needs core or none");
            if (strcmp(opts->bind_to, "core") && strcmp(opts->bind_to, "none"))
                die_usage("invalid --bind-to '%s': expected core or none", opts->bind_to);
            job.bind_core = !strcmp(opts->bind_to, "core");
        } else if (!strcmp(a, "--dry-run")) {
            opts->dry_run = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--version")) {
            printf("oshrun (Strata) %s\n", PACKAGE_VERSION);
            exit(0);
        } else if (!strcmp(a, "--")) {
            i++;
            break;
        } else {
            die_usage("unknown option '%s'", a);
        }
    }
    if (i >= argc)
        die_usage("%s", "no program given");
    job.argv = &argv[i];
    resolve_program(argv[i], job.program);
    opts->np = job.np;
    opts->argv = job.argv;
    opts->hostname = job.hostname;
}

/* ---- PMIx server upcalls (called on the PMIx progress thread) ---- */

static struct pe *pe_of(const pmix_proc_t *proc)
{
    return proc->rank < (pmix_rank_t)job.np ? &job.pes[proc->rank] : NULL;
}

/* A PE that connected must finalize before it exits: one that does not leaves the others
 * waiting for it. The answer is immediate (in 4.2 there is no callback to call here). */
static pmix_status_t on_connected(const pmix_proc_t *proc, void *server_object, pmix_info_t info[],
                                  size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)server_object, (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    struct pe *pe = pe_of(proc);
    if (pe) {
        atomic_store(&pe->finalized, 0); /* a shmem_init after a shmem_finalize */
        atomic_store(&pe->connected, 1);
    }
    return PMIX_OPERATION_SUCCEEDED;
}

/* PMIx_Finalize waits for the reply to this, but only for a while (exit_marks_create). Testing
 * aid: SHMEM_TEST_OSHRUN_SLOW_FINALIZE=1 answers late, as a loaded node's server may. */
static pmix_status_t on_finalized(const pmix_proc_t *proc, void *server_object,
                                  pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)server_object, (void)cbfunc, (void)cbdata;
    const char *slow = getenv("SHMEM_TEST_OSHRUN_SLOW_FINALIZE");
    if (slow && !strcmp(slow, "1"))
        sleep(3);
    struct pe *pe = pe_of(proc);
    if (pe)
        atomic_store(&pe->finalized, 1);
    return PMIX_OPERATION_SUCCEEDED;
}

/* A PE called PMIx_Abort (shmem_global_exit, or a fatal error). The main thread waits in
 * sigtimedwait, so a signal is how it learns; it is sent before the PE gets its reply. An abort
 * whose message says a peer was lost is a consequence: the lost PE's own failure is the one to
 * report, and it may reach oshrun later. */
static pmix_status_t on_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)server_object, (void)procs, (void)nprocs, (void)cbfunc, (void)cbdata;
    struct pe *pe = pe_of(proc);
    if (pe && atomic_load(&pe->abort_kind) == ABORT_NONE) {
        static const char prefix[] = BOOT_ABORT_AFTER_LOST_PEER;
        int after_lost_peer = msg && !strncmp(msg, prefix, sizeof(prefix) - 1);
        atomic_store(&pe->abort_status, status);
        atomic_store(&pe->abort_kind, after_lost_peer ? ABORT_AFTER_LOST_PEER : ABORT_PRIMARY);
        /* Upcalls run one at a time on the progress thread: the first of each kind stays. */
        atomic_int *first = after_lost_peer ? &first_lost_peer_abort : &first_primary_abort;
        if (atomic_load(first) < 0)
            atomic_store(first, (int)proc->rank);
    }
    kill(getpid(), SIGUSR1);
    return PMIX_OPERATION_SUCCEEDED;
}

static void release_fence_data(void *data)
{
    free(data);
}

/* Every PE is local, so the server library has already gathered all contributions: the blob
 * it hands over (ours to free) is the complete result. */
static pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata)
{
    (void)procs, (void)nprocs, (void)info, (void)ninfo;
    if (!cbfunc) {
        free(data);
        return PMIX_OPERATION_SUCCEEDED;
    }
    cbfunc(PMIX_SUCCESS, data, ndata, cbdata, release_fence_data, data);
    return PMIX_SUCCESS;
}

/* The server library answers requests for local PEs itself (waiting for their commit if
 * needed); it asks the host only for PEs on other nodes, and there are none. */
static pmix_status_t on_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    (void)proc, (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

static pmix_server_module_t server_module = {
    .client_connected2 = on_connected,
    .client_finalized = on_finalized,
    .abort = on_abort,
    .fence_nb = on_fence,
    .direct_modex = on_direct_modex,
};

/* ---- Who may connect ----
 *
 * PMIx 4.2's server listens on 127.0.0.1 and believes the uid that a client writes into its
 * handshake (psec "native" over TCP), so any local user could connect as a rank of the job and
 * abort it, break its fences or take a PE's place; neither the handshake nor the host's upcalls
 * carry anything a client cannot forge. The kernel, though, records who created each socket.
 * oshrun defines accept(), so the server's listener thread calls this one instead of the C
 * library's, and a connection whose other end is not a socket of this job's user is closed
 * before PMIx reads a byte of it. */

/* The uid the kernel recorded for the socket at the other end of a local TCP connection, found
 * by its exact address pair through sock_diag. 0 on success. */
static int peer_socket_uid(const struct sockaddr_storage *here,
                           const struct sockaddr_storage *there, uid_t *uid)
{
    struct {
        struct nlmsghdr header;
        struct inet_diag_req_v2 request;
    } query = {
        .header = {.nlmsg_len = sizeof(query),
                   .nlmsg_type = SOCK_DIAG_BY_FAMILY,
                   .nlmsg_flags = NLM_F_REQUEST},
        .request = {.sdiag_family = (__u8)there->ss_family,
                    .sdiag_protocol = IPPROTO_TCP,
                    .idiag_states = 1u << TCP_ESTABLISHED,
                    .id.idiag_cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE}},
    };
    /* That socket's own view: its source is our peer, its destination is us. */
    struct inet_diag_sockid *id = &query.request.id;
    if (there->ss_family == AF_INET) {
        const struct sockaddr_in *src = (const void *)there, *dst = (const void *)here;
        id->idiag_sport = src->sin_port;
        id->idiag_dport = dst->sin_port;
        memcpy(id->idiag_src, &src->sin_addr, sizeof(src->sin_addr));
        memcpy(id->idiag_dst, &dst->sin_addr, sizeof(dst->sin_addr));
    } else {
        const struct sockaddr_in6 *src = (const void *)there, *dst = (const void *)here;
        id->idiag_sport = src->sin6_port;
        id->idiag_dport = dst->sin6_port;
        memcpy(id->idiag_src, &src->sin6_addr, sizeof(src->sin6_addr));
        memcpy(id->idiag_dst, &dst->sin6_addr, sizeof(dst->sin6_addr));
    }
    int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (nl < 0)
        return -1;
    union {
        struct nlmsghdr header;
        char bytes[1024];
    } reply;
    ssize_t got = -1;
    if (send(nl, &query, sizeof(query), 0) == (ssize_t)sizeof(query))
        got = recv(nl, &reply, sizeof(reply), 0);
    close(nl);
    if (got < (ssize_t)NLMSG_LENGTH(sizeof(struct inet_diag_msg)) ||
        reply.header.nlmsg_type != SOCK_DIAG_BY_FAMILY)
        return -1;
    const struct inet_diag_msg *found = NLMSG_DATA(&reply.header);
    /* A socket its process has closed (inode 0) has no owner left to vouch for what it sent. */
    if (found->idiag_state != TCP_ESTABLISHED || !found->idiag_inode)
        return -1;
    *uid = found->idiag_uid;
    return 0;
}

/* Refused connections: the first REFUSALS_NAMED are named on stderr, the rest counted and the
 * count said at most every REFUSALS_REPORT_S seconds and once at the end. Another local user who
 * floods the port must neither fill the job's log nor stall the listener on a slow pipe. */
#define REFUSALS_NAMED 3
#define REFUSALS_REPORT_S 5
static struct {
    pthread_mutex_t lock;
    unsigned long count, unreported;
    time_t last_report;
} refusals = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0};

static time_t monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec;
}

/* Says how many refusals went unnamed since the last report; the caller holds the lock. */
static void refusals_report_locked(void)
{
    if (refusals.unreported)
        fprintf(stderr, "oshrun: refused %lu more connections to the PMIx server (%lu in all)\n",
                refusals.unreported, refusals.count);
    refusals.unreported = 0;
    refusals.last_report = monotonic_seconds();
}

static void refusal(const char *why)
{
    pthread_mutex_lock(&refusals.lock);
    if (++refusals.count <= REFUSALS_NAMED) {
        fprintf(stderr, "oshrun: refused a connection to the PMIx server%s%s\n", why,
                refusals.count == REFUSALS_NAMED ? " (further ones are counted)" : "");
        refusals.last_report = monotonic_seconds();
    } else if (++refusals.unreported,
               monotonic_seconds() - refusals.last_report >= REFUSALS_REPORT_S) {
        refusals_report_locked();
    }
    pthread_mutex_unlock(&refusals.lock);
}

static void refusals_report_rest(void)
{
    pthread_mutex_lock(&refusals.lock);
    refusals_report_locked();
    pthread_mutex_unlock(&refusals.lock);
}

/* Whether the process at the other end of fd runs as our user; says why not on stderr. */
static int connection_is_ours(int fd)
{
    struct sockaddr_storage here, there;
    socklen_t here_len = sizeof(here), there_len = sizeof(there);
    uid_t uid;
    if (getsockname(fd, (struct sockaddr *)&here, &here_len) ||
        getpeername(fd, (struct sockaddr *)&there, &there_len) ||
        (there.ss_family != AF_INET && there.ss_family != AF_INET6) ||
        peer_socket_uid(&here, &there, &uid)) {
        refusal(": its owner cannot be verified");
        return 0;
    }
    if (uid != geteuid()) {
        char why[32];
        snprintf(why, sizeof(why), " from user %u", (unsigned)uid);
        refusal(why);
        return 0;
    }
    return 1;
}

/* Replaces the C library's accept for the PMIx listener thread (the server's only caller). A
 * refused connection reads as one the client gave up (ECONNABORTED): PMIx 4.2's listener then
 * goes on listening. */
int accept(int listener, struct sockaddr *addr, socklen_t *addr_len)
{
    int fd = accept4(listener, addr, addr_len, SOCK_CLOEXEC);
    if (fd < 0 || connection_is_ours(fd))
        return fd;
    close(fd);
    errno = ECONNABORTED;
    return -1;
}

/* ---- Job registration ---- */

struct completion {
    atomic_int done;
    pmix_status_t status;
};

static void on_registered(pmix_status_t status, void *cbdata)
{
    struct completion *c = cbdata;
    c->status = status;
    atomic_store(&c->done, 1);
}

/* The register calls may answer at once or later from the progress thread. */
static pmix_status_t wait_completion(pmix_status_t rc, struct completion *c)
{
    if (rc == PMIX_OPERATION_SUCCEEDED)
        return PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS)
        return rc;
    while (!atomic_load(&c->done))
        usleep(100);
    return c->status;
}

static void load_uint32(pmix_info_t *info, const char *key, uint32_t value)
{
    PMIX_INFO_LOAD(info, key, &value, PMIX_UINT32);
}

/* Per-rank data: on one node rank, local rank and node rank are the same number. */
static void load_proc_data(pmix_info_t *info, int rank)
{
    pmix_data_array_t *array;
    PMIX_DATA_ARRAY_CREATE(array, 5, PMIX_INFO);
    pmix_info_t *items = array->array;
    pmix_rank_t r = (pmix_rank_t)rank;
    uint16_t local = (uint16_t)rank;
    PMIX_INFO_LOAD(&items[0], PMIX_RANK, &r, PMIX_PROC_RANK);
    PMIX_INFO_LOAD(&items[1], PMIX_LOCAL_RANK, &local, PMIX_UINT16);
    PMIX_INFO_LOAD(&items[2], PMIX_NODE_RANK, &local, PMIX_UINT16);
    load_uint32(&items[3], PMIX_NODEID, 0);
    PMIX_INFO_LOAD(&items[4], PMIX_HOSTNAME, job.hostname, PMIX_STRING);
    PMIX_INFO_LOAD(info, PMIX_PROC_DATA, array, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(array);
}

/* "0,1,...,np-1": PMIx 4.2 stores a range like "0-3" literally, and clients misread it. */
static char *peer_list(void)
{
    char *peers = malloc((size_t)job.np * 6 + 1);
    size_t len = 0;
    peers[0] = '\0';
    for (int r = 0; r < job.np; r++)
        len += (size_t)sprintf(peers + len, "%s%d", r ? "," : "", r);
    return peers;
}

static int register_job(void)
{
    char *peers = peer_list(), *node_map = NULL, *proc_map = NULL;
    int ok = PMIx_generate_regex(job.hostname, &node_map) == PMIX_SUCCESS &&
             PMIx_generate_ppn(peers, &proc_map) == PMIX_SUCCESS;
    size_t ninfo = 11 + (size_t)job.np, n = 0;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, ninfo);
    if (ok) {
        load_uint32(&info[n++], PMIX_UNIV_SIZE, (uint32_t)job.np);
        load_uint32(&info[n++], PMIX_JOB_SIZE, (uint32_t)job.np);
        load_uint32(&info[n++], PMIX_MAX_PROCS, (uint32_t)job.np);
        load_uint32(&info[n++], PMIX_LOCAL_SIZE, (uint32_t)job.np);
        load_uint32(&info[n++], PMIX_NODE_SIZE, (uint32_t)job.np);
        load_uint32(&info[n++], PMIX_NUM_NODES, 1);
        PMIX_INFO_LOAD(&info[n++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
        PMIX_INFO_LOAD(&info[n++], PMIX_NODE_MAP, node_map, PMIX_REGEX);
        PMIX_INFO_LOAD(&info[n++], PMIX_PROC_MAP, proc_map, PMIX_REGEX);
        PMIX_INFO_LOAD(&info[n++], PMIX_JOBID, job.nspace, PMIX_STRING);
        PMIX_INFO_LOAD(&info[n++], PMIX_HOSTNAME, job.hostname, PMIX_STRING);
        for (int r = 0; r < job.np; r++)
            load_proc_data(&info[n++], r);
        struct completion c = {0};
        ok = wait_completion(
                 PMIx_server_register_nspace(job.nspace, job.np, info, n, on_registered, &c), &c) ==
             PMIX_SUCCESS;
    }
    PMIX_INFO_FREE(info, ninfo);
    free(peers);
    free(node_map);
    free(proc_map);
    return ok ? 0 : -1;
}

/* Removes a directory tree (the PMIx server's rendezvous files). */
static void remove_tree(const char *path)
{
    DIR *dir = opendir(path);
    if (!dir) {
        unlink(path);
        return;
    }
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            char child[PATH_MAX];
            snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
            remove_tree(child);
        }
    }
    closedir(dir);
    rmdir(path);
}

/* Our own directory for the PMIx server: its files never collide with another job's, and one
 * remove_tree at exit takes them all. */
static int make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base)
        base = "/tmp";
    snprintf(job.tmpdir, sizeof(job.tmpdir), "%s/oshrun.XXXXXX", base);
    if (!mkdtemp(job.tmpdir)) {
        fprintf(stderr, "oshrun: cannot create a directory under %s: %s\n", base, strerror(errno));
        job.tmpdir[0] = '\0';
        return -1;
    }
    return 0;
}

/* hwloc's accelerator components, kept out of the PMIx server's topology: the OpenCL one loads
 * each vendor's ICD (NVIDIA's loads libcuda.so.1), which a launcher has no use for. The PEs'
 * environment does not get the setting: the program's own hwloc may want them. */
#define SERVER_HWLOC_COMPONENTS "-opencl,-cuda,-nvml,-rsmi,-levelzero,-gl"

static int server_start(void)
{
    /* The hash store starts faster than the shared-memory store and is all one node needs. */
    setenv("PMIX_MCA_gds", "hash", 0);
    int components_given = getenv("HWLOC_COMPONENTS") != NULL;
    if (!components_given)
        setenv("HWLOC_COMPONENTS", SERVER_HWLOC_COMPONENTS, 1);
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, job.tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, job.tmpdir, PMIX_STRING);
    pmix_status_t rc = PMIx_server_init(&server_module, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (!components_given)
        unsetenv("HWLOC_COMPONENTS");
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "oshrun: PMIx server start failed: %s\n", PMIx_Error_string(rc));
        return -1;
    }
    if (register_job()) {
        fprintf(stderr, "oshrun: PMIx job registration failed\n");
        return 1;
    }
    return 0;
}

/* ---- PEs ---- */

/* Descriptors oshrun holds besides a PMIx connection per PE. */
#define OSHRUN_OWN_FILES 64

/* The PMIx server holds a connection per PE: the common soft limit of 1024 descriptors would
 * stop a job of 1024 PEs. oshrun takes the hard limit for itself, and refuses a job beyond it
 * rather than fail its PEs' connections one by one. */
static void files_limit_raise(void)
{
    if (getrlimit(RLIMIT_NOFILE, &job.files))
        return;
    struct rlimit raised = {job.files.rlim_max, job.files.rlim_max};
    if (raised.rlim_cur > job.files.rlim_cur && setrlimit(RLIMIT_NOFILE, &raised))
        raised = job.files;
    if (raised.rlim_cur != RLIM_INFINITY && raised.rlim_cur < (rlim_t)job.np + OSHRUN_OWN_FILES) {
        char need[128];
        snprintf(need, sizeof(need), "%d PEs need %d open files here, and the limit is %llu",
                 job.np, job.np + OSHRUN_OWN_FILES, (unsigned long long)raised.rlim_cur);
        die("%s: raise it (ulimit -n) or run fewer PEs", need);
    }
}

/* Tells the janitor (see below) that rank runs as pid; 0: reaped, nothing to wait for. */
static void janitor_tell(int rank, pid_t pid)
{
    int record[2] = {rank, (int)pid};
    if (job.janitor_fd >= 0 && write(job.janitor_fd, record, sizeof(record)) < 0) {
        close(job.janitor_fd); /* the janitor is gone: nobody to tell */
        job.janitor_fd = -1;
    }
}

/* Ours (SHMEM_LAUNCHER=oshrun included) plus what PMIx adds (server address, namespace, rank). */
static char **child_environment(int rank)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    /* setup_fork may reallocate the array: it must be malloc'd, as must each string. */
    char **env = calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        env[i] = strdup(environ[i]);
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, job.nspace, (pmix_rank_t)rank);
    if (PMIx_server_setup_fork(&proc, &env) != PMIX_SUCCESS)
        return NULL;
    return env;
}

static void free_environment(char **env)
{
    for (char **e = env; *e; e++)
        free(*e);
    free(env);
}

/* A PE reading the terminal must be in the terminal's foreground group, or the kernel stops it
 * (SIGTTIN): then PE 0 stays in oshrun's group. Every other PE gets a group of its own, so that
 * killing the group also kills whatever the PE started. */
static int pe0_keeps_our_group(void)
{
    return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

/* The CPU of PE rank under --bind-to core: the CPUs oshrun may use, taken in turn. */
static void bind_pe(int rank)
{
    int count = CPU_COUNT(&job.cpus), seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &job.cpus) || seen++ != rank % count)
            continue;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(0, sizeof(one), &one))
            fprintf(stderr, "oshrun: PE %d: cannot bind to CPU %d: %s\n", rank, cpu,
                    strerror(errno));
        return;
    }
}

static void exec_pe(int rank, char **env, int own_group, const sigset_t *original_mask,
                    pid_t launcher)
{
    if (own_group)
        setpgid(0, 0);
    /* The PE dies with oshrun, however oshrun ends (even by SIGKILL): no orphans. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher)
        _exit(1);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, original_mask, NULL);
    setrlimit(RLIMIT_NOFILE, &job.files);
    if (job.bind_core)
        bind_pe(rank);
    if (rank != 0) {
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0 && devnull != STDIN_FILENO) {
            dup2(devnull, STDIN_FILENO);
            close(devnull);
        }
    }
    execve(job.program, job.argv, env);
    fprintf(stderr, "oshrun: cannot run %s: %s\n", job.program, strerror(errno));
    _exit(127);
}

static int start_pe(int rank, const sigset_t *original_mask)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, job.nspace, (pmix_rank_t)rank);
    struct completion c = {0};
    if (wait_completion(
            PMIx_server_register_client(&proc, getuid(), getgid(), NULL, on_registered, &c), &c))
        return -1;
    char **env = child_environment(rank);
    if (!env)
        return -1;
    int own_group = rank != 0 || !pe0_keeps_our_group();
    pid_t launcher = getpid();
    pid_t pid = fork();
    if (pid == 0)
        exec_pe(rank, env, own_group, original_mask, launcher);
    free_environment(env);
    if (pid < 0)
        return -1;
    /* Also here: whichever of parent and child runs first, the group exists before any kill. */
    if (own_group)
        setpgid(pid, pid);
    job.pes[rank].pid = pid;
    job.pes[rank].pgid = own_group ? pid : 0;
    job.running++;
    janitor_tell(rank, pid);
    return 0;
}

static void signal_pe(const struct pe *pe, int sig)
{
    if (pe->pgid > 0)
        kill(-pe->pgid, sig);
    else if (!pe->done)
        kill(pe->pid, sig);
}

/* The groups of reaped PEs are signalled too: a dead PE's children may live on in them. */
static void signal_all(int sig)
{
    for (int r = 0; r < job.np; r++)
        if (job.pes[r].pid > 0)
            signal_pe(&job.pes[r], sig);
}

/* The first failure decides the job's status and is the one reported. */
static void fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(int status, const char *fmt, ...)
{
    if (job.failed)
        return;
    job.failed = 1;
    job.status = status;
    char message[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(message, sizeof(message), fmt, args);
    va_end(args);
    /* One write: the PEs share stderr, and their lines must not land inside ours. */
    fprintf(stderr, "oshrun: %s\n", message);
    signal_all(SIGTERM);
}

static int rank_of(pid_t pid)
{
    for (int r = 0; r < job.np; r++)
        if (job.pes[r].pid == pid)
            return r;
    return -1;
}

static void report_abort(int rank, const char *why)
{
    int status = atomic_load(&job.pes[rank].abort_status);
    /* An exit status keeps the low 8 bits: a non-zero abort must not become a success. */
    int code = status & 0xff;
    if (status && !code)
        code = 1;
    fail(code, "PE %d aborted the job with status %d%s", rank, status, why);
}

/* A primary abort fails the job at once. An abort after a lost peer is held for a while: the
 * failure that caused it (the lost PE's death or exit) often reaches oshrun later, and that is
 * the one to report. */
static void take_aborts(void)
{
    int rank = atomic_load(&first_primary_abort);
    if (rank >= 0) {
        report_abort(rank, "");
    } else if (!job.holding && atomic_load(&first_lost_peer_abort) >= 0) {
        job.holding = 1;
        clock_gettime(CLOCK_MONOTONIC, &job.held_since);
    }
}

static void report_held_abort(void)
{
    report_abort(atomic_load(&first_lost_peer_abort), " after losing a peer");
}

/* The PEs' library leaves it to oshrun to name a PE that exits without shmem_finalize, and marks
 * in this file, inherited by every PE, that it finalized before it leaves PMIx: oshrun may reap
 * a PE's exit before its PMIx server has seen the PE's finalize (a client stops waiting for the
 * server's answer after a while), but never before the PE wrote its mark. Without the file the
 * server's word is all there is. Made before any thread, since it goes into the environment. */
static void exit_marks_create(void)
{
    char fd_text[16];
    job.exit_marks = memfd_create(BOOT_EXIT_MARK_NAME, 0);
    if (job.exit_marks >= 0 && ftruncate(job.exit_marks, job.np)) {
        close(job.exit_marks);
        job.exit_marks = -1;
    }
    if (job.exit_marks < 0)
        return;
    snprintf(fd_text, sizeof(fd_text), "%d", job.exit_marks);
    setenv(BOOT_EXIT_MARK_FD_ENV, fd_text, 1);
}

static int exit_marked(int rank)
{
    char mark = 0;
    return job.exit_marks >= 0 && pread(job.exit_marks, &mark, 1, rank) == 1 && mark == 1;
}

/* A death by signal or a non-zero exit fails the job, whether or not the PE had finalized; so
 * does an exit with 0 without finalizing by a PE that connected (a program that never used
 * PMIx, like /bin/true, is fine). An exit with the status of the PE's own abort is that abort's
 * doing, accounted for already. */
static void judge_exit(int rank, int wstatus)
{
    struct pe *pe = &job.pes[rank];
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        fail(128 + sig, "PE %d killed by SIG%s", rank, sigabbrev_np(sig));
        return;
    }
    int code = WEXITSTATUS(wstatus);
    if (atomic_load(&pe->abort_kind) != ABORT_NONE &&
        code == (atomic_load(&pe->abort_status) & 0xff))
        return;
    if (code)
        fail(code, "PE %d exited with status %d", rank, code);
    else if (atomic_load(&pe->connected) && !atomic_load(&pe->finalized) && !exit_marked(rank))
        fail(1, "PE %d exited without calling shmem_finalize (status 0)", rank);
}

static void reap(void)
{
    /* An abort is recorded before its PE gets the reply that lets it exit. */
    take_aborts();
    int wstatus;
    pid_t pid;
    while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
        if (pid == job.janitor) {
            job.janitor = 0;
            continue;
        }
        int rank = rank_of(pid);
        if (rank < 0)
            continue;
        job.pes[rank].done = 1;
        job.running--;
        janitor_tell(rank, 0);
        judge_exit(rank, wstatus);
    }
}

static void handle_signal(int sig, long limit)
{
    if (sig == SIGCHLD)
        reap();
    else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
        fail(128 + sig, "terminated by SIG%s", sigabbrev_np(sig));
    else if (sig == SIGUSR1)
        take_aborts();
    else if (sig == SIGALRM)
        fail(124, "timeout after %ld s", limit);
}

static long elapsed_ms(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000 + (now.tv_nsec - since->tv_nsec) / 1000000;
}

/* Waits for every PE; after a failure the survivors get a grace period, then SIGKILL. */
static void supervise(const sigset_t *waited, long limit)
{
    struct timespec failed_at = {0, 0};
    int killed = 0;
    while (job.running > 0) {
        struct timespec tick = {0, OSHRUN_TICK_MS * 1000000L};
        int sig = sigtimedwait(waited, NULL, &tick);
        if (sig > 0)
            handle_signal(sig, limit);
        reap(); /* one pending SIGCHLD stands for any number of exits */
        if (job.holding && elapsed_ms(&job.held_since) > OSHRUN_LOST_PEER_GRACE_MS)
            report_held_abort();
        if (!job.failed || job.running == 0 || killed)
            continue;
        if (!failed_at.tv_sec)
            clock_gettime(CLOCK_MONOTONIC, &failed_at);
        else if (elapsed_ms(&failed_at) > OSHRUN_KILL_GRACE_MS)
            signal_all(SIGKILL), killed = 1;
    }
    /* Every PE ended while an abort was held, and none of them failed on its own. */
    if (job.holding)
        report_held_abort();
}

/* ---- Cleanup ---- */

/* The library's shared-memory files ("/<nspace>.<token>") have a name only for the moment between
 * their creation and their unlinking: one whose PE died in that moment is removed here. */
static void remove_job_shm(void)
{
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return;
    size_t len = strlen(job.nspace);
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (!strncmp(e->d_name, job.nspace, len) && e->d_name[len] == '.') {
            char path[PATH_MAX];
            snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
            unlink(path);
        }
    }
    closedir(dir);
}

/* ---- The janitor ----
 *
 * The PEs die with oshrun however it ends (PR_SET_PDEATHSIG), but a SIGKILLed oshrun removes
 * nothing, and its PEs, killed too, cannot either. So a small process forked before the PMIx
 * server starts reads the PEs' pids from a pipe that only oshrun writes to. End of file means
 * oshrun has ended: the janitor waits for the PEs to die, removes the job's directory and
 * shared memory, and exits. A normal exit cleans up by itself and kills the janitor. */

/* Gone, or a zombie: either way it creates nothing any more. */
static int process_gone(pid_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 1;
    /* "pid (name) state ...": the name may hold anything, the last ')' ends it. */
    const char *state = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
    fclose(f);
    return !state || state[1] != ' ' || state[2] == 'Z' || state[2] == 'X';
}

/* A PE being killed can still finish a file it was creating: wait for the PEs' end. */
static void janitor_wait_for_pes(const pid_t *pids)
{
    for (int waited = 0; waited < OSHRUN_JANITOR_WAIT_MS; waited += 5) {
        int alive = 0;
        for (int r = 0; r < job.np; r++)
            alive += pids[r] > 0 && !process_gone(pids[r]);
        if (!alive)
            return;
        usleep(5000);
    }
}

static void janitor_run(int fd, pid_t *pids) __attribute__((noreturn));
static void janitor_run(int fd, pid_t *pids)
{
    /* A group of its own, so a kill of oshrun's whole group (timeout, a shell) leaves it to do
     * its work; and no copy of the caller's terminal or output pipes, which would keep a reader
     * of oshrun's output waiting. */
    setpgid(0, 0);
    int devnull = open("/dev/null", O_RDWR);
    for (int std = 0; devnull >= 0 && std < 3; std++)
        dup2(devnull, std);
    int record[2];
    while (read(fd, record, sizeof(record)) == (ssize_t)sizeof(record))
        if (record[0] >= 0 && record[0] < job.np)
            pids[record[0]] = record[1];
    janitor_wait_for_pes(pids);
    remove_job_shm();
    remove_tree(job.tmpdir);
    _exit(0);
}

/* Without a janitor (no memory, no process) only a SIGKILL of oshrun leaves things behind. */
static void janitor_start(void)
{
    int fds[2];
    pid_t *pids = calloc((size_t)job.np, sizeof(pid_t));
    if (!pids || pipe2(fds, O_CLOEXEC)) {
        free(pids);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[1]);
        janitor_run(fds[0], pids);
    }
    free(pids);
    close(fds[0]);
    if (pid < 0) {
        close(fds[1]);
        return;
    }
    job.janitor = pid;
    job.janitor_fd = fds[1];
}

static void janitor_stop(void)
{
    if (job.janitor > 0) {
        kill(job.janitor, SIGKILL);
        waitpid(job.janitor, NULL, 0);
        job.janitor = 0;
    }
    if (job.janitor_fd >= 0)
        close(job.janitor_fd);
    job.janitor_fd = -1;
}

static void cleanup(int server_started)
{
    refusals_report_rest();
    /* Grandchildren that ignored SIGTERM must not outlive a failed job. */
    if (job.failed)
        signal_all(SIGKILL);
    /* PMIx 4.2's server finalize may hang after a PE aborted. A failed job is about to exit
     * anyway, so it skips it: everything the server created lies in our temporary directory,
     * removed below. */
    if (server_started && !job.failed)
        PMIx_server_finalize();
    remove_job_shm();
    if (job.tmpdir[0])
        remove_tree(job.tmpdir);
    janitor_stop();
}

static long timeout_knob(void)
{
    const char *text = getenv("SHMEM_OSHRUN_TIMEOUT");
    char *end;
    long limit = text ? strtol(text, &end, 10) : 0;
    if (text && (*end || end == text || limit < 0))
        die("SHMEM_OSHRUN_TIMEOUT='%s' is not a number of seconds", text);
    return limit;
}

/* Unique among jobs: pid and start time, so a stale file of an earlier job whose pid was
 * reused never matches this job's names. */
static void name_job(void)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned long stamp = (unsigned long)(now.tv_sec * 1000000 + now.tv_nsec / 1000);
    snprintf(job.nspace, sizeof(job.nspace), "strata-%d-%lx", (int)getpid(), stamp & 0xffffffffUL);
}

int main(int argc, char **argv)
{
    struct handoff_job opts = {0};
    gethostname(job.hostname, sizeof(job.hostname) - 1);
    /* A closed output pipe (oshrun ... | head) must not kill the launcher. */
    signal(SIGPIPE, SIG_IGN);
    parse_args(argc, argv, &opts);
    handoff(&opts);
    if (job.bind_core && sched_getaffinity(0, sizeof(job.cpus), &job.cpus))
        die("--bind-to core: cannot read the CPUs oshrun may use: %s", strerror(errno));
    files_limit_raise();
    exit_marks_create();
    long limit = timeout_knob();
    name_job();
    job.pes = calloc((size_t)job.np, sizeof(*job.pes));

    /* Signals are taken synchronously by the main thread; blocking them before the PMIx server
     * starts its threads keeps them from being delivered there. */
    static const int taken[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGALRM};
    sigset_t waited, original;
    sigemptyset(&waited);
    for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
        sigaddset(&waited, taken[i]);
    sigprocmask(SIG_BLOCK, &waited, &original);

    if (make_tmpdir())
        return 1;
    /* Forked before the PMIx server starts its threads: a fork of a threaded process could
     * inherit a lock that one of them held. */
    janitor_start();
    if (server_start()) {
        cleanup(0);
        return 1;
    }
    if (limit > 0)
        alarm((unsigned)limit);
    for (int r = 0; r < job.np && !job.failed; r++) {
        if (start_pe(r, &original))
            fail(1, "cannot start PE %d", r);
        /* A Ctrl-C during a long start must not wait for every PE to be forked. */
        struct timespec now = {0, 0};
        int sig = sigtimedwait(&waited, NULL, &now);
        if (sig > 0)
            handle_signal(sig, limit);
    }
    supervise(&waited, limit);
    /* From here a SIGTERM must end oshrun even if cleanup blocks; a late abort notice or alarm
     * must not. */
    signal(SIGUSR1, SIG_IGN);
    signal(SIGALRM, SIG_IGN);
    sigprocmask(SIG_SETMASK, &original, NULL);
    cleanup(1);
    return job.status;
}
