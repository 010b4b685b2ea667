/* SPDX-License-Identifier: BSD-3-Clause */
/* The bottom layer (common/), which src/, spaces/ and transports/ all use and which calls none of
 * them: messages, the wait policy (wait.h), and the job's identity as far as messages need it.
 *
 * Messages carry the PE, host, pid and time, the routine (or the component) and the bad value, so
 * that the lines of every PE of a job can be told apart and read together. */
#ifndef STRATA_COMMON_LOG_H
#define STRATA_COMMON_LOG_H

#include <stdarg.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* The categories of SHMEM_LOG, in bit order ("all" names every one). */
#define STRATA_LOG_CATEGORIES(X)                                                                   \
    X(LOG_INIT, "init") X(LOG_MEM, "mem") X(LOG_RMA, "rma") X(LOG_TEAM, "team")
enum log_category_index {
#define LOG_CATEGORY_INDEX(ID, NAME) ID##_INDEX,
    STRATA_LOG_CATEGORIES(LOG_CATEGORY_INDEX)
#undef LOG_CATEGORY_INDEX
};
enum log_category {
#define LOG_CATEGORY_BIT(ID, NAME) ID = 1 << ID##_INDEX,
    STRATA_LOG_CATEGORIES(LOG_CATEGORY_BIT)
#undef LOG_CATEGORY_BIT
};
extern unsigned log_mask;

/* This process's PE in messages once the bootstrap knows it (-1: not yet, shown as "?"). */
void log_identity_set(int pe);
/* What log_fatal does after its message: end the whole job (the bootstrap's abort); and what
 * log_fatal_lost_peer does: the same, saying that the end of a peer caused it, so that the
 * launcher names that end instead. Without them, the process exits with status 1. */
typedef void (*log_fatal_fn)(int status, const char *message) __attribute__((noreturn));
void log_fatal_handler_set(log_fatal_fn handler, log_fatal_fn after_lost_peer);

void log_event(const char *routine, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line per event, when the category is enabled. */
#define LOG(CATEGORY, routine, ...)                                                                \
    do {                                                                                           \
        if (unlikely(log_mask & (CATEGORY)))                                                       \
            log_event(routine, __VA_ARGS__);                                                       \
    } while (0)

/* Reports a misuse or a failure in routine (or component) on this PE. */
void log_verror(const char *routine, const char *fmt, va_list args);
void log_error(const char *routine, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* log_error for a thread that must not wait for the program's stdout (its lock may be held by a
 * thread blocked in a write): the program's buffered output is not flushed first. */
void log_error_nowait(const char *routine, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Reports, then ends the whole job (a state the program cannot continue from). */
void log_fatal(const char *routine, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
/* log_fatal for a failure that a peer's end caused (its process, or its memory, is gone). */
void log_fatal_lost_peer(const char *routine, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

#endif
