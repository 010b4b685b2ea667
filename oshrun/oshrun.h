/* SPDX-License-Identifier: BSD-3-Clause */
/* What the launcher's files share: its error exits, the PATH search, and the hand-off of jobs
 * that leave this node to an engine (handoff.c). */
#ifndef STRATA_OSHRUN_H
#define STRATA_OSHRUN_H

/* "oshrun: <fmt with arg>" on stderr, then exit 2 (a usage error) or 1. */
void die_usage(const char *fmt, const char *arg) __attribute__((noreturn));
/* A whole decimal number in 1..max, or -1. */
int parse_count(const char *text, long max);
void die(const char *fmt, const char *arg) __attribute__((noreturn));
/* Searches PATH like execvp; 1 and the path in out (PATH_MAX bytes) when found. */
int search_path(const char *name, char *out);

struct handoff_job {
    int np;
    char **argv;          /* the program and its arguments, NULL-terminated */
    const char *hosts;    /* --host, or NULL */
    const char *hostfile; /* --hostfile, or NULL */
    const char *hostname; /* this host */
    const char *bind_to;  /* --bind-to core or none, or NULL: the engine's default */
    int dry_run;          /* print the engine's command line instead of running it */
};

/* When the job leaves this node (other hosts, a multi-node Slurm allocation) or SHMEM_LAUNCHER
 * names an engine, replaces oshrun by that engine with the job translated to its options, so
 * its exit status is the job's. Returns when the job runs on this node under oshrun's own PMIx
 * server. Under dry_run it prints the engine's command line (or a comment saying the job stays
 * here) and exits 0. */
void handoff(const struct handoff_job *job);

#endif
