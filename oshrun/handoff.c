/* SPDX-License-Identifier: BSD-3-Clause */
/* Jobs that leave this node go to an engine that can start PEs there: srun --mpi=pmix under
 * Slurm, PRRTE's prterun, or Open MPI's mpirun. oshrun translates the job into the engine's own
 * terms and replaces itself by it, so the engine's exit status is the job's. */
#define _GNU_SOURCE
#include "oshrun.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum engine { ENGINE_NONE, ENGINE_SRUN, ENGINE_PRTERUN, ENGINE_MPIRUN, ENGINE_COUNT };

static const struct {
    const char *name;             /* its program, and its SHMEM_LAUNCHER value */
    const char *package;          /* what to install to have it */
    const char *root_env;         /* prefix of the variables that let it run as root */
    const char *oversubscribe[2]; /* its options for more PEs than slots */
} engines[ENGINE_COUNT] = {
    [ENGINE_SRUN] = {"srun", "slurm-client (srun)", NULL, {NULL, NULL}},
    [ENGINE_PRTERUN] = {"prterun", "PRRTE (prterun)", "PRTE", {"--map-by", ":OVERSUBSCRIBE"}},
    [ENGINE_MPIRUN] = {"mpirun", "openmpi-bin (mpirun)", "OMPI", {"--oversubscribe", NULL}},
};

static void *checked(void *p)
{
    if (!p)
        die("%s", "out of memory");
    return p;
}

/* ---- Hosts ---- */

struct host {
    char *name;
    int slots; /* 0: not given */
};

struct hosts {
    struct host *v;
    int n;
};

/* Adds a host once (a name given twice keeps the first slot count given); returns its index. */
static int hosts_add(struct hosts *hosts, const char *name, size_t len, int slots)
{
    for (int i = 0; i < hosts->n; i++) {
        if (strlen(hosts->v[i].name) == len && !strncmp(hosts->v[i].name, name, len)) {
            if (!hosts->v[i].slots)
                hosts->v[i].slots = slots;
            return i;
        }
    }
    hosts->v = checked(realloc(hosts->v, (size_t)(hosts->n + 1) * sizeof(*hosts->v)));
    hosts->v[hosts->n] = (struct host){checked(strndup(name, len)), slots};
    return hosts->n++;
}

static int parse_slots(const char *text, const char *entry)
{
    int slots = parse_count(text, INT_MAX);
    if (slots < 0)
        die_usage("invalid slot count in host '%s'", entry);
    return slots;
}

/* "name" or "name:slots". */
static int hosts_add_entry(struct hosts *hosts, const char *entry)
{
    size_t len = strcspn(entry, ":");
    if (!len)
        die_usage("empty host name in '%s'", entry);
    return hosts_add(hosts, entry, len, entry[len] ? parse_slots(entry + len + 1, entry) : 0);
}

/* --host: entries separated by commas. */
static void hosts_read_list(struct hosts *hosts, const char *list)
{
    char *copy = checked(strdup(list));
    for (char *save, *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save))
        hosts_add_entry(hosts, e);
    free(copy);
}

/* Host file lines are "host [slots=N]" or "host:N" (other words, such as max_slots=, are the
 * engine's business and ignored); '#' starts a comment. */
static void hosts_read_file(struct hosts *hosts, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        die("cannot read host file '%s'", path);
    char line[1024];
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "#\r\n")] = '\0';
        char *save, *host = strtok_r(line, " \t", &save);
        if (!host)
            continue;
        int i = hosts_add_entry(hosts, host);
        for (char *word; (word = strtok_r(NULL, " \t", &save));)
            if (!strncmp(word, "slots=", 6))
                hosts->v[i].slots = parse_slots(word + 6, host);
    }
    fclose(f);
}

static int hosts_all_local(const struct hosts *hosts, const char *hostname)
{
    for (int i = 0; i < hosts->n; i++) {
        const char *h = hosts->v[i].name;
        if (strcmp(h, "localhost") && strcmp(h, "127.0.0.1") && strcmp(h, hostname))
            return 0;
    }
    return 1;
}

/* A host without a slot count takes its share of the PEs, rounded up. */
static int host_slots(const struct hosts *hosts, int i, int np)
{
    return hosts->v[i].slots ? hosts->v[i].slots : (np + hosts->n - 1) / hosts->n;
}

/* "a,b" or, with slots, "a:2,b:2" (malloc'd). */
static char *hosts_join(const struct hosts *hosts, int with_slots, int np)
{
    size_t len = 1;
    for (int i = 0; i < hosts->n; i++)
        len += strlen(hosts->v[i].name) + 13;
    char *text = checked(malloc(len)), *at = text;
    *at = '\0';
    for (int i = 0; i < hosts->n; i++) {
        at += sprintf(at, "%s%s", i ? "," : "", hosts->v[i].name);
        if (with_slots)
            at += sprintf(at, ":%d", host_slots(hosts, i, np));
    }
    return text;
}

static void hosts_free(struct hosts *hosts)
{
    for (int i = 0; i < hosts->n; i++)
        free(hosts->v[i].name);
    free(hosts->v);
}

/* ---- Slurm ---- */

static long env_long(const char *name)
{
    const char *text = getenv(name);
    return text ? strtol(text, NULL, 10) : 0;
}

static long slurm_nodes(void)
{
    long nodes = env_long("SLURM_JOB_NUM_NODES");
    return nodes ? nodes : env_long("SLURM_NNODES");
}

/* How many tasks the allocation was made for: SLURM_NTASKS, else its CPUs ("2(x3),1": two on
 * each of three nodes, one on a fourth); 0 when unknown. */
static long slurm_task_room(void)
{
    long tasks = env_long("SLURM_NTASKS");
    const char *cpus = getenv("SLURM_JOB_CPUS_PER_NODE");
    if (tasks > 0 || !cpus)
        return tasks;
    long total = 0;
    for (const char *at = cpus; *at; at++) {
        char *end;
        long per_node = strtol(at, &end, 10), nodes = 1;
        if (!strncmp(end, "(x", 2))
            nodes = strtol(end + 2, &end, 10), end += *end == ')';
        total += per_node * nodes;
        at = end;
        if (*at != ',')
            break;
    }
    return total;
}

/* ---- The engine ---- */

/* SHMEM_LAUNCHER: an engine's name chooses it; "oshrun" keeps the job here. */
static enum engine engine_forced(int *stay)
{
    const char *name = getenv("SHMEM_LAUNCHER");
    *stay = name && !strcmp(name, "oshrun");
    if (!name || !*name || *stay)
        return ENGINE_NONE;
    for (int e = ENGINE_NONE + 1; e < ENGINE_COUNT; e++)
        if (!strcmp(name, engines[e].name))
            return (enum engine)e;
    die("SHMEM_LAUNCHER='%s' is not one of srun, prterun, mpirun, oshrun", name);
}

/* srun knows the nodes of its own allocation, so it goes first inside one; outside, srun asks
 * Slurm for an allocation, the last resort. */
static enum engine engine_find(enum engine forced, char *path)
{
    if (forced != ENGINE_NONE) {
        if (!search_path(engines[forced].name, path)) {
            fprintf(stderr, "oshrun: SHMEM_LAUNCHER=%s, but %s is not in PATH: install %s\n",
                    engines[forced].name, engines[forced].name, engines[forced].package);
            exit(1);
        }
        return forced;
    }
    static const enum engine order[] = {ENGINE_PRTERUN, ENGINE_MPIRUN, ENGINE_SRUN};
    if (getenv("SLURM_JOB_ID") && search_path(engines[ENGINE_SRUN].name, path))
        return ENGINE_SRUN;
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (search_path(engines[order[i]].name, path))
            return order[i];
    die("%s", "a job on other nodes needs an engine, and none is in PATH: install slurm-client "
              "(srun) or openmpi-bin (mpirun)");
}

/* ---- Its command line ---- */

struct words {
    char **v; /* NULL-terminated */
    int n;
};

static void words_add(struct words *words, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void words_add(struct words *words, const char *fmt, ...)
{
    words->v = checked(realloc(words->v, (size_t)(words->n + 2) * sizeof(char *)));
    va_list args;
    va_start(args, fmt);
    if (vasprintf(&words->v[words->n], fmt, args) < 0)
        die("%s", "out of memory");
    va_end(args);
    words->v[++words->n] = NULL;
}

/* A PE that fails ends the step at once (srun lets the others run on otherwise), and srun then
 * exits with its status. srun does not count slots: it needs --overcommit for more PEs than the
 * allocation has tasks. */
static void words_srun(struct words *args, const struct handoff_job *job, const struct hosts *hosts)
{
    words_add(args, "--mpi=pmix");
    words_add(args, "--kill-on-bad-exit=1");
    words_add(args, "--export=ALL");
    words_add(args, "-n");
    words_add(args, "%d", job->np);
    if (hosts->n) {
        char *list = hosts_join(hosts, 0, job->np);
        words_add(args, "--nodelist=%s", list);
        free(list);
    }
    long room = getenv("SLURM_JOB_ID") ? slurm_task_room() : 0;
    if (room > 0 && job->np > room)
        words_add(args, "--overcommit");
    if (job->bind_to)
        words_add(args, "--cpu-bind=%s", strcmp(job->bind_to, "core") ? "none" : "cores");
}

/* Open MPI and PRRTE give a host named in --host one slot: each gets its share of the PEs, and
 * oversubscription is allowed where the slots given are fewer than the PEs (oshrun runs any
 * number of PEs on one node too). The PEs' environment does not reach other nodes by itself. */
static void words_open(struct words *args, enum engine engine, const struct handoff_job *job,
                       const struct hosts *hosts)
{
    extern char **environ;
    words_add(args, "-n");
    words_add(args, "%d", job->np);
    if (hosts->n) {
        char *list = hosts_join(hosts, 1, job->np);
        words_add(args, "--host");
        words_add(args, "%s", list);
        free(list);
        int slots = 0;
        for (int i = 0; i < hosts->n; i++)
            slots += host_slots(hosts, i, job->np);
        for (int i = 0; slots < job->np && i < 2 && engines[engine].oversubscribe[i]; i++)
            words_add(args, "%s", engines[engine].oversubscribe[i]);
    }
    if (job->bind_to) {
        words_add(args, "--bind-to");
        words_add(args, "%s", job->bind_to);
    }
    for (char **e = environ; *e; e++) {
        if (!strncmp(*e, "SHMEM_", 6) || !strncmp(*e, "UCX_", 4) || !strncmp(*e, "FI_", 3)) {
            words_add(args, "-x");
            words_add(args, "%.*s", (int)strcspn(*e, "="), *e);
        }
    }
}

/* Open MPI and PRRTE refuse to run as root unless told twice. */
static void words_environment(struct words *env, enum engine engine)
{
    const char *prefix = engines[engine].root_env;
    if (geteuid() == 0 && prefix) {
        words_add(env, "%s_ALLOW_RUN_AS_ROOT=1", prefix);
        words_add(env, "%s_ALLOW_RUN_AS_ROOT_CONFIRM=1", prefix);
    }
}

/* Quoted for a POSIX shell where needed. */
static void print_word(const char *word, const char *separator)
{
    static const char plain[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                "0123456789_@%+=:,./-";
    fputs(separator, stdout);
    if (*word && strspn(word, plain) == strlen(word)) {
        fputs(word, stdout);
        return;
    }
    putchar('\'');
    for (const char *c = word; *c; c++) {
        if (*c == '\'')
            fputs("'\\''", stdout); /* close, an escaped quote, reopen */
        else
            putchar(*c);
    }
    putchar('\'');
}

/* One line a shell runs as is: the variables oshrun adds, the engine's path, its arguments. */
static void print_command(const struct words *env, const char *path, const struct words *args)
{
    for (int i = 0; i < env->n; i++)
        print_word(env->v[i], i ? " " : "");
    print_word(path, env->n ? " " : "");
    for (int i = 1; i < args->n; i++)
        print_word(args->v[i], " ");
    putchar('\n');
}

/* What oshrun itself would run, as a line a shell reads as a comment. */
static void print_local_job(const struct handoff_job *job)
{
    printf("# %d PE%s on this node under oshrun's own PMIx server:", job->np,
           job->np > 1 ? "s" : "");
    for (char **a = job->argv; *a; a++)
        print_word(*a, " ");
    putchar('\n');
}

static void run_engine(const struct words *env, const char *path, const struct words *args)
{
    for (int i = 0; i < env->n; i++)
        putenv(env->v[i]);
    /* oshrun ignores SIGPIPE for itself; an ignored signal would stay ignored in the engine. */
    signal(SIGPIPE, SIG_DFL);
    execv(path, args->v);
    fprintf(stderr, "oshrun: cannot run %s: %s\n", path, strerror(errno));
    exit(1);
}

void handoff(const struct handoff_job *job)
{
    int stay;
    enum engine forced = engine_forced(&stay);
    struct hosts hosts = {NULL, 0};
    if (job->hostfile)
        hosts_read_file(&hosts, job->hostfile);
    if (job->hosts)
        hosts_read_list(&hosts, job->hosts);
    /* Hosts given decide; without them, the Slurm allocation oshrun runs in does. */
    int leaves =
        job->hosts || job->hostfile ? !hosts_all_local(&hosts, job->hostname) : slurm_nodes() > 1;
    if (stay || (!leaves && forced == ENGINE_NONE)) {
        hosts_free(&hosts);
        if (job->dry_run) {
            print_local_job(job);
            exit(0);
        }
        return;
    }
    char path[PATH_MAX];
    enum engine engine = engine_find(forced, path);
    struct words env = {NULL, 0}, args = {NULL, 0};
    words_add(&args, "%s", engines[engine].name);
    if (engine == ENGINE_SRUN)
        words_srun(&args, job, &hosts);
    else
        words_open(&args, engine, job, &hosts);
    for (char **a = job->argv; *a; a++)
        words_add(&args, "%s", *a);
    words_environment(&env, engine);
    hosts_free(&hosts);
    if (job->dry_run) {
        print_command(&env, path, &args);
        exit(0);
    }
    run_engine(&env, path, &args);
}
