/* oshrun: launches an OpenSHMEM job.
 *
 * On one node oshrun is itself the PMIx server: it registers the job, forks the PEs, serves their
 * fences, and tears the job down when one PE fails. Jobs that span nodes are handed to a PMIx
 * engine that is already installed (srun --mpi=pmix, prterun, mpirun). */
#define _GNU_SOURCE
#include <config.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pmix.h>
#include <pmix_server.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define OSHRUN_KILL_GRACE_MS 1000

struct pe {
    pid_t pid;
    int done; /* reaped */
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
    int status; /* the job's exit status */
    int failed; /* a failure has been reported */
};

static struct job job;
static volatile sig_atomic_t abort_status = -1, abort_rank = -1;

/* ---- Command line ---- */

static void usage(FILE *out)
{
    fprintf(out, "usage: oshrun [-np N] [--host H1,H2 | --hostfile F] program [args...]\n"
                 "  -np, -n, --np N   number of PEs (default 1)\n"
                 "  --host, -H LIST   hosts for a multi-node job (handed to srun/prterun/mpirun)\n"
                 "  --hostfile FILE   host file for a multi-node job\n"
                 "  -h, --help        this text;  --version  the version\n"
                 "Environment: SHMEM_OSHRUN_TIMEOUT=S ends the job after S seconds (status "
                 "124).\n");
}

static void die_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "oshrun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (oshrun --help for usage)\n");
    exit(2);
}

static int parse_np(const char *text)
{
    char *end;
    errno = 0;
    long n = strtol(text, &end, 10);
    if (errno || *end || end == text || n < 1 || n > 4096)
        die_usage("invalid number of PEs '%s': expected 1..4096", text);
    return (int)n;
}

/* Finds the program like execvp would; an error names what is wrong. */
static void resolve_program(const char *name, char *out)
{
    if (strchr(name, '/')) {
        snprintf(out, PATH_MAX, "%s", name);
    } else {
        const char *path = getenv("PATH");
        char dirs[8192];
        snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/bin:/bin");
        out[0] = '\0';
        for (char *save, *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
            char candidate[PATH_MAX];
            snprintf(candidate, sizeof(candidate), "%s/%s", *dir ? dir : ".", name);
            if (access(candidate, X_OK) == 0) {
                snprintf(out, PATH_MAX, "%s", candidate);
                break;
            }
        }
        if (!out[0]) {
            fprintf(stderr, "oshrun: program '%s' not found in PATH\n", name);
            exit(1);
        }
    }
    struct stat st;
    if (stat(out, &st)) {
        fprintf(stderr, "oshrun: program '%s' does not exist\n", out);
        exit(1);
    }
    if (!S_ISREG(st.st_mode) || access(out, X_OK)) {
        fprintf(stderr, "oshrun: program '%s' is not an executable file\n", out);
        exit(1);
    }
}

struct options {
    const char *hosts;
    const char *hostfile;
};

static void parse_args(int argc, char **argv, struct options *opts)
{
    job.np = 1;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        int has_value = i + 1 < argc;
        if (!strcmp(a, "-np") || !strcmp(a, "-n") || !strcmp(a, "--np") || !strcmp(a, "-N")) {
            if (!has_value)
                die_usage("%s needs a number", a);
            job.np = parse_np(argv[++i]);
        } else if (!strcmp(a, "--host") || !strcmp(a, "-H")) {
            if (!has_value)
                die_usage("%s needs a host list", a);
            opts->hosts = argv[++i];
        } else if (!strcmp(a, "--hostfile")) {
            if (!has_value)
                die_usage("%s needs a file", a);
            opts->hostfile = argv[++i];
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
}

/* ---- Multi-node hand-off ---- */

static int host_is_local(const char *host)
{
    return !strcmp(host, "localhost") || !strcmp(host, "127.0.0.1") || !strcmp(host, job.hostname);
}

static int needs_other_nodes(const struct options *opts)
{
    if (opts->hostfile)
        return 1;
    if (opts->hosts) {
        char list[4096];
        snprintf(list, sizeof(list), "%s", opts->hosts);
        for (char *save, *h = strtok_r(list, ",", &save); h; h = strtok_r(NULL, ",", &save)) {
            char *colon = strchr(h, ':'); /* host:slots */
            if (colon)
                *colon = '\0';
            if (!host_is_local(h))
                return 1;
        }
    }
    const char *nodes = getenv("SLURM_NNODES");
    return getenv("SLURM_JOB_ID") && nodes && atoi(nodes) > 1;
}

static int in_path(const char *name)
{
    char resolved[PATH_MAX];
    const char *path = getenv("PATH");
    char dirs[8192];
    snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/bin:/bin");
    for (char *save, *dir = strtok_r(dirs, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
        snprintf(resolved, sizeof(resolved), "%s/%s", dir, name);
        if (access(resolved, X_OK) == 0)
            return 1;
    }
    return 0;
}

static void hand_off(const struct options *opts)
{
    char np[16];
    snprintf(np, sizeof(np), "%d", job.np);
    char *args[64];
    int n = 0;
    if (getenv("SLURM_JOB_ID") && in_path("srun")) {
        args[n++] = "srun";
        args[n++] = "--mpi=pmix";
    } else if (in_path("prterun")) {
        args[n++] = "prterun";
    } else if (in_path("mpirun")) {
        args[n++] = "mpirun";
    } else {
        fprintf(stderr, "oshrun: a multi-node job needs srun (Slurm), prterun or mpirun in PATH\n");
        exit(1);
    }
    args[n++] = "-n";
    args[n++] = np;
    if (opts->hosts && strcmp(args[0], "srun")) {
        args[n++] = "--host";
        args[n++] = (char *)opts->hosts;
    }
    if (opts->hostfile && strcmp(args[0], "srun")) {
        args[n++] = "--hostfile";
        args[n++] = (char *)opts->hostfile;
    }
    for (char **a = job.argv; *a && n < 63; a++)
        args[n++] = *a;
    args[n] = NULL;
    execvp(args[0], args);
    fprintf(stderr, "oshrun: cannot run %s: %s\n", args[0], strerror(errno));
    exit(1);
}

/* ---- PMIx server ---- */

static pmix_status_t on_client_finalized(const pmix_proc_t *proc, void *server_object,
                                         pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)proc, (void)server_object, (void)cbfunc, (void)cbdata;
    return PMIX_OPERATION_SUCCEEDED;
}

/* A PE called PMIx_Abort (shmem_global_exit, or a fatal error): the main thread is told by a
 * signal, because it waits in sigtimedwait. */
static pmix_status_t on_abort(const pmix_proc_t *proc, void *server_object, int status,
                              const char msg[], pmix_proc_t procs[], size_t nprocs,
                              pmix_op_cbfunc_t cbfunc, void *cbdata)
{
    (void)server_object, (void)msg, (void)procs, (void)nprocs, (void)cbfunc, (void)cbdata;
    if (abort_rank < 0) {
        abort_status = status;
        abort_rank = (sig_atomic_t)proc->rank;
    }
    kill(getpid(), SIGUSR1);
    return PMIX_OPERATION_SUCCEEDED;
}

/* Every PE is local, so the server library has already collected all contributions. */
static pmix_status_t on_fence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[],
                              size_t ninfo, char *data, size_t ndata, pmix_modex_cbfunc_t cbfunc,
                              void *cbdata)
{
    (void)procs, (void)nprocs, (void)info, (void)ninfo;
    if (cbfunc)
        cbfunc(PMIX_SUCCESS, data, ndata, cbdata, NULL, NULL);
    return PMIX_SUCCESS;
}

static pmix_status_t on_direct_modex(const pmix_proc_t *proc, const pmix_info_t info[],
                                     size_t ninfo, pmix_modex_cbfunc_t cbfunc, void *cbdata)
{
    (void)proc, (void)info, (void)ninfo, (void)cbfunc, (void)cbdata;
    return PMIX_ERR_NOT_SUPPORTED;
}

static pmix_server_module_t server_module = {
    .client_finalized = on_client_finalized,
    .abort = on_abort,
    .fence_nb = on_fence,
    .direct_modex = on_direct_modex,
};

static volatile int registration_done;

static void on_registered(pmix_status_t status, void *cbdata)
{
    *(pmix_status_t *)cbdata = status;
    __atomic_store_n(&registration_done, 1, __ATOMIC_RELEASE);
}

static pmix_status_t wait_registration(pmix_status_t rc, pmix_status_t *result)
{
    if (rc == PMIX_OPERATION_SUCCEEDED)
        return PMIX_SUCCESS;
    if (rc != PMIX_SUCCESS)
        return rc;
    while (!__atomic_load_n(&registration_done, __ATOMIC_ACQUIRE))
        usleep(100);
    return *result;
}

static void info_load_uint32(pmix_info_t *info, const char *key, uint32_t value)
{
    PMIX_INFO_LOAD(info, key, &value, PMIX_UINT32);
}

/* Per-rank data: rank, local rank and node rank (all the same on one node), node id. */
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
    info_load_uint32(&items[3], PMIX_NODEID, 0);
    PMIX_INFO_LOAD(&items[4], PMIX_HOSTNAME, job.hostname, PMIX_STRING);
    PMIX_INFO_LOAD(info, PMIX_PROC_DATA, array, PMIX_DATA_ARRAY);
    PMIX_DATA_ARRAY_FREE(array);
}

static int register_job(void)
{
    char *peers = malloc((size_t)job.np * 6 + 1), *node_map = NULL, *proc_map = NULL;
    peers[0] = '\0';
    for (int r = 0; r < job.np; r++)
        sprintf(peers + strlen(peers), "%s%d", r ? "," : "", r);
    if (PMIx_generate_regex(job.hostname, &node_map) != PMIX_SUCCESS ||
        PMIx_generate_ppn(peers, &proc_map) != PMIX_SUCCESS)
        return -1;
    size_t ninfo = 10 + (size_t)job.np, n = 0;
    pmix_info_t *info;
    PMIX_INFO_CREATE(info, ninfo);
    info_load_uint32(&info[n++], PMIX_UNIV_SIZE, (uint32_t)job.np);
    info_load_uint32(&info[n++], PMIX_JOB_SIZE, (uint32_t)job.np);
    info_load_uint32(&info[n++], PMIX_MAX_PROCS, (uint32_t)job.np);
    info_load_uint32(&info[n++], PMIX_LOCAL_SIZE, (uint32_t)job.np);
    info_load_uint32(&info[n++], PMIX_NODE_SIZE, (uint32_t)job.np);
    info_load_uint32(&info[n++], PMIX_NUM_NODES, 1);
    PMIX_INFO_LOAD(&info[n++], PMIX_LOCAL_PEERS, peers, PMIX_STRING);
    PMIX_INFO_LOAD(&info[n++], PMIX_NODE_MAP, node_map, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[n++], PMIX_PROC_MAP, proc_map, PMIX_REGEX);
    PMIX_INFO_LOAD(&info[n++], PMIX_JOBID, job.nspace, PMIX_STRING);
    for (int r = 0; r < job.np; r++)
        load_proc_data(&info[n++], r);
    pmix_status_t result = PMIX_SUCCESS;
    registration_done = 0;
    pmix_status_t rc = wait_registration(
        PMIx_server_register_nspace(job.nspace, job.np, info, n, on_registered, &result), &result);
    PMIX_INFO_FREE(info, ninfo);
    free(peers);
    free(node_map);
    free(proc_map);
    return rc == PMIX_SUCCESS ? 0 : -1;
}

static int server_start(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(job.tmpdir, sizeof(job.tmpdir), "%s/oshrun.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(job.tmpdir)) {
        fprintf(stderr, "oshrun: cannot create a directory under %s: %s\n",
                base && *base ? base : "/tmp", strerror(errno));
        job.tmpdir[0] = '\0';
        return -1;
    }
    /* The hash store starts faster than the shared-memory store and is all one node needs. */
    setenv("PMIX_MCA_gds", "hash", 0);
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, job.tmpdir, PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, job.tmpdir, PMIX_STRING);
    pmix_status_t rc = PMIx_server_init(&server_module, info, 2);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "oshrun: PMIx server start failed: %s\n", PMIx_Error_string(rc));
        return -1;
    }
    return register_job();
}

/* ---- PEs ---- */

static char **child_environment(int rank)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    /* setup_fork may reallocate the array: it must be malloc'd, as must each string. */
    char **env = calloc(n + 2, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        env[i] = strdup(environ[i]);
    env[n] = strdup("SHMEM_LAUNCHER=oshrun");
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, job.nspace, (pmix_rank_t)rank);
    if (PMIx_server_setup_fork(&proc, &env) != PMIX_SUCCESS)
        return NULL;
    return env;
}

static int start_pe(int rank, const sigset_t *original_mask)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, job.nspace, (pmix_rank_t)rank);
    pmix_status_t result = PMIX_SUCCESS;
    registration_done = 0;
    if (wait_registration(
            PMIx_server_register_client(&proc, getuid(), getgid(), NULL, on_registered, &result),
            &result) != PMIX_SUCCESS)
        return -1;
    char **env = child_environment(rank);
    if (!env)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* Its own process group, so that killing the PE also kills what it started. */
        setpgid(0, 0);
        sigprocmask(SIG_SETMASK, original_mask, NULL);
        if (rank != 0) {
            int devnull = open("/dev/null", O_RDONLY);
            dup2(devnull, STDIN_FILENO);
        }
        execve(job.program, job.argv, env);
        fprintf(stderr, "oshrun: cannot run %s: %s\n", job.program, strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    job.pes[rank].pid = pid;
    job.running++;
    for (char **e = env; *e; e++)
        free(*e);
    free(env);
    return 0;
}

static int rank_of(pid_t pid)
{
    for (int r = 0; r < job.np; r++)
        if (job.pes[r].pid == pid)
            return r;
    return -1;
}

static void signal_all(int sig)
{
    for (int r = 0; r < job.np; r++)
        if (job.pes[r].pid > 0 && !job.pes[r].done)
            kill(-job.pes[r].pid, sig);
}

/* The first failure decides the job's status and is the one reported. */
static void fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(int status, const char *fmt, ...)
{
    if (job.failed)
        return;
    job.failed = 1;
    job.status = status;
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "oshrun: ");
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    signal_all(SIGTERM);
}

static void reap(void)
{
    int wstatus;
    pid_t pid;
    while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
        int rank = rank_of(pid);
        if (rank < 0)
            continue;
        job.pes[rank].done = 1;
        job.running--;
        if (WIFSIGNALED(wstatus)) {
            int sig = WTERMSIG(wstatus);
            fail(128 + sig, "PE %d killed by SIG%s", rank, sigabbrev_np(sig));
        } else if (WEXITSTATUS(wstatus) != 0) {
            fail(WEXITSTATUS(wstatus), "PE %d exited with status %d", rank, WEXITSTATUS(wstatus));
        }
    }
}

/* Waits for every PE; after a failure, the survivors get a grace period before SIGKILL. */
static void supervise(const sigset_t *waited)
{
    const char *limit_text = getenv("SHMEM_OSHRUN_TIMEOUT");
    long limit = limit_text ? atol(limit_text) : 0;
    if (limit > 0)
        alarm((unsigned)limit);
    struct timespec killed_at = {0, 0};
    while (job.running > 0) {
        struct timespec tick = {0, 50 * 1000 * 1000};
        int sig = sigtimedwait(waited, NULL, &tick);
        if (sig == SIGCHLD) {
            reap();
        } else if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
            fail(128 + sig, "terminated by SIG%s", sigabbrev_np(sig));
        } else if (sig == SIGUSR1) {
            fail(abort_status, "PE %d aborted the job with status %d", (int)abort_rank,
                 (int)abort_status);
        } else if (sig == SIGALRM) {
            fail(124, "timeout after %ld s", limit);
        }
        reap(); /* a SIGCHLD may have been merged with another signal */
        if (job.failed && job.running > 0) {
            struct timespec now;
            clock_gettime(CLOCK_MONOTONIC, &now);
            if (!killed_at.tv_sec)
                killed_at = now;
            long elapsed_ms = (now.tv_sec - killed_at.tv_sec) * 1000 +
                              (now.tv_nsec - killed_at.tv_nsec) / 1000000;
            if (elapsed_ms > OSHRUN_KILL_GRACE_MS)
                signal_all(SIGKILL);
        }
    }
}

/* ---- Cleanup ---- */

static void remove_tree(const char *path)
{
    DIR *dir = opendir(path);
    if (dir) {
        struct dirent *e;
        while ((e = readdir(dir))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char child[PATH_MAX];
            snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
            remove_tree(child);
        }
        closedir(dir);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* The library names its shared memory "/<nspace>.<rank>.<region>": whatever a dead PE could not
 * unlink is removed here. */
static void remove_job_shm(void)
{
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return;
    size_t len = strlen(job.nspace);
    struct dirent *e;
    while ((e = readdir(dir)))
        if (!strncmp(e->d_name, job.nspace, len) && e->d_name[len] == '.') {
            char path[PATH_MAX];
            snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
            unlink(path);
        }
    closedir(dir);
}

static void cleanup(int server_started)
{
    /* After a PE aborted, PMIx 4.2's server can deadlock in its own finalize (a lock held by
     * the abort path): the process is about to exit, so a failed job skips it. Everything the
     * server created lies in our temporary directory, removed below. */
    if (server_started && !job.failed)
        PMIx_server_finalize();
    remove_job_shm();
    if (job.tmpdir[0])
        remove_tree(job.tmpdir);
}

int main(int argc, char **argv)
{
    struct options opts = {0};
    gethostname(job.hostname, sizeof(job.hostname) - 1);
    parse_args(argc, argv, &opts);
    if (needs_other_nodes(&opts))
        hand_off(&opts);
    /* pid and start time: a stale file of an earlier job with a reused pid never matches. */
    struct timespec start_time;
    clock_gettime(CLOCK_REALTIME, &start_time);
    snprintf(job.nspace, sizeof(job.nspace), "strata-%d-%lx", (int)getpid(),
             (unsigned long)(start_time.tv_sec * 1000000 + start_time.tv_nsec / 1000) &
                 0xffffffffUL);
    job.pes = calloc((size_t)job.np, sizeof(*job.pes));

    /* Signals are taken synchronously by the main thread; blocking them before the PMIx server
     * starts its threads keeps them from being delivered there. */
    static const int taken[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGALRM};
    sigset_t waited, original;
    sigemptyset(&waited);
    for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
        sigaddset(&waited, taken[i]);
    sigprocmask(SIG_BLOCK, &waited, &original);

    int started = server_start() == 0;
    if (!started) {
        fprintf(stderr, "oshrun: cannot start the PMIx server\n");
        cleanup(0);
        return 1;
    }
    for (int r = 0; r < job.np && !job.failed; r++)
        if (start_pe(r, &original))
            fail(1, "cannot start PE %d", r);
    supervise(&waited);
    /* From here a SIGTERM must end oshrun even if cleanup blocks; a late abort notice or alarm
     * must not. */
    signal(SIGUSR1, SIG_IGN);
    signal(SIGALRM, SIG_IGN);
    sigprocmask(SIG_SETMASK, &original, NULL);
    cleanup(1);
    return job.status;
}
