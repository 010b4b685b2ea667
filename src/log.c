/* Error reports carry the PE, the routine, the bad value and a hint. */
#include "runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

unsigned log_mask;

/* Every line carries the PE, host, pid and time, so lines from all PEs of a job can be told
 * apart; it is written with one write(2), so lines of several PEs never interleave. */
static void log_line(const char *tag, const char *routine, const char *fmt, va_list args)
{
    char host[64] = "", line[2048], pe[16] = "?"; /* unknown before shmem_init */
    if (rt.n_pes > 0)
        snprintf(pe, sizeof(pe), "%d", rt.my_pe);
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
    fflush(stdout);
    if (write(STDERR_FILENO, line, (size_t)len) < 0)
        return; /* nowhere left to report to */
}

void log_event(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_line(" log", routine, fmt, args);
    va_end(args);
}

void log_verror(const char *routine, const char *fmt, va_list args)
{
    log_line("", routine, fmt, args);
}

void log_error(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_verror(routine, fmt, args);
    va_end(args);
}

void log_fatal(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_verror(routine, fmt, args);
    va_end(args);
    boot_abort(1, "Strata: fatal error");
}

void runtime_report_uninit(const char *routine)
{
    log_fatal(routine, "called before shmem_init (or after the last shmem_finalize)");
}
