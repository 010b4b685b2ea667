/* Error reports carry the PE, the routine, the bad value and a hint. */
#include "runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

unsigned log_mask;

static const struct {
    const char *name;
    unsigned bits;
} log_categories[] = {
    {"init", LOG_INIT}, {"mem", LOG_MEM}, {"rma", LOG_RMA}, {"all", LOG_INIT | LOG_MEM | LOG_RMA}};

int log_configure(const char *spec, char *err, size_t errlen)
{
    char copy[256], *saveptr = NULL;
    snprintf(copy, sizeof(copy), "%s", spec);
    log_mask = 0;
    for (char *tok = strtok_r(copy, ",", &saveptr); tok; tok = strtok_r(NULL, ",", &saveptr)) {
        unsigned bits = 0;
        for (size_t i = 0; i < sizeof(log_categories) / sizeof(log_categories[0]); i++)
            if (!strcmp(tok, log_categories[i].name))
                bits = log_categories[i].bits;
        if (!bits) {
            snprintf(err, errlen,
                     "unknown category '%s' in SHMEM_LOG: expected init, mem, rma "
                     "or all, separated by commas",
                     tok);
            return -1;
        }
        log_mask |= bits;
    }
    return 0;
}

/* Every line carries the PE, host and pid, so lines from all PEs of a job can be told apart. */
static void log_prefix(const char *tag, const char *routine)
{
    char host[64] = "";
    gethostname(host, sizeof(host) - 1);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    fprintf(stderr, "Strata%s: PE %d (%s, pid %d, %ld.%06ld): %s: ", tag, rt.my_pe, host,
            (int)getpid(), (long)now.tv_sec, now.tv_nsec / 1000, routine);
}

static void log_vprint(const char *routine, const char *fmt, va_list args)
{
    log_prefix("", routine);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
}

void log_event(const char *routine, const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    log_prefix(" log", routine);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
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
