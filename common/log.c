/* SPDX-License-Identifier: BSD-3-Clause */
/* Messages (log.h). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

unsigned log_mask;
static int log_pe = -1;
static log_fatal_fn log_fatal_handler, log_lost_peer_handler;

void log_identity_set(int pe)
{
    log_pe = pe;
}

void log_fatal_handler_set(log_fatal_fn handler, log_fatal_fn after_lost_peer)
{
    log_fatal_handler = handler;
    log_lost_peer_handler = after_lost_peer;
}

/* Every line carries the PE, host, pid and time, so lines from all PEs of a job can be told
 * apart; it is written with one write(2), so lines of several PEs never interleave. The
 * program's buffered output goes first, unless flush_stdout is 0. */
static void log_line(const char *tag, const char *routine, int flush_stdout, const char *fmt,
                     va_list args)
{
    char host[64] = "", line[2048], pe[16] = "?"; /* unknown before shmem_init */
    if (log_pe >= 0)
        snprintf(pe, sizeof(pe), "%d", log_pe);
    gethostname(host, sizeof(host) - 1);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int len = snprintf(line, sizeof(line), "Strata%s: PE %s (%s, pid %d, %ld.%06ld): %s: ", tag, pe,
                       host, (int)getpid(), (long)now.tv_sec, now.tv_nsec / 1000, routine);
    if (len < (int)sizeof(line) - 1)
        len += vsnprintf(line + len, sizeof(line) - (size_t)len - 1, fmt, args);
    if (len > (int)sizeof(line) - 2)
        len = (int)sizeof(line) - 2;
    line[len++] = '\n';
    if (flush_stdout)
        fflush(stdout);
    if (write(STDERR_FILENO, line, (size_t)len) < 0)
        return; /* nowhere left to report to */
}

void log_event(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_line(" log", routine, 1, fmt, args);
    va_end(args);
}

void log_verror(const char *routine, const char *fmt, va_list args)
{
    log_line("", routine, 1, fmt, args);
}

void log_error(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_verror(routine, fmt, args);
    va_end(args);
}

void log_error_nowait(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_line("", routine, 0, fmt, args);
    va_end(args);
}

/* Reports, then ends the job through handler: the caller's va_list is never ended, since
 * nothing returns. */
static void log_fatal_end(log_fatal_fn handler, const char *routine, const char *fmt, va_list args)
    __attribute__((noreturn));
static void log_fatal_end(log_fatal_fn handler, const char *routine, const char *fmt, va_list args)
{
    log_verror(routine, fmt, args);
    if (handler)
        handler(1, "Strata: fatal error");
    exit(1);
}

void log_fatal(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_fatal_end(log_fatal_handler, routine, fmt, args);
}

void log_fatal_lost_peer(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_fatal_end(log_lost_peer_handler, routine, fmt, args);
}
