/* Assertions for SPMD tests: every PE checks its own values and reports what it expected and saw.
 * A test's main ends with `return check_finish();`, which makes the PE exit non-zero when any check
 * failed, so oshrun's exit status carries the verdict. */
#ifndef STRATA_TESTS_CHECK_H
#define STRATA_TESTS_CHECK_H

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

static int check_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (check_failures++ < 20) {                                                           \
                fprintf(stderr, "PE %d: %s:%d: check failed: %s: ", shmem_my_pe(), __FILE__,       \
                        __LINE__, #cond);                                                          \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* Compare two integers and print both on failure. */
#define CHECK_EQ(seen, expected)                                                                   \
    CHECK((long long)(seen) == (long long)(expected), "expected %lld, saw %lld",                   \
          (long long)(expected), (long long)(seen))

static inline int check_finish(void)
{
    int failed = check_failures;
    shmem_finalize();
    if (failed)
        fprintf(stderr, "%d check(s) failed\n", failed);
    return failed ? 1 : 0;
}

#endif
