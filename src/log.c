/* Error reports carry the PE, the routine, the bad value and a hint. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "runtime.h"

static void log_vprint(const char *routine, const char *fmt, va_list args)
{
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    fprintf(stderr, "Strata: PE %d (%s, pid %d): %s: ", rt.my_pe, host, (int)getpid(), routine);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
}

void log_error(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_vprint(routine, fmt, args);
    va_end(args);
}

void log_fatal(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_vprint(routine, fmt, args);
    va_end(args);
    boot_abort(1, "Strata: fatal error");
}

void runtime_require_init(const char *routine)
{
    if (unlikely(rt.init_count <= 0))
        log_fatal(routine, "called before shmem_init (or after the last shmem_finalize)");
}
