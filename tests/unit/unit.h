/* SPDX-License-Identifier: BSD-3-Clause */
/* Minimal assertions for unit tests that run without a launcher. */
#ifndef STRATA_TESTS_UNIT_H
#define STRATA_TESTS_UNIT_H

#include <stdio.h>

static int unit_passed, unit_failed;

#define UNIT_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        if (cond) {                                                                                \
            unit_passed++;                                                                         \
        } else {                                                                                   \
            unit_failed++;                                                                         \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static inline int unit_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
    return unit_failed ? 1 : 0;
}

#endif
