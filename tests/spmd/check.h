/* SPDX-License-Identifier: BSD-3-Clause */
/* Assertions for SPMD tests: every PE checks its own values and reports what it expected and saw.
 * A test's main ends with `return check_finish();`, which makes the PE exit non-zero when any check
 * failed, so oshrun's exit status carries the verdict. */
#ifndef STRATA_TESTS_CHECK_H
#define STRATA_TESTS_CHECK_H

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* Seconds on the monotonic clock, for the tests' deadlines. */
static inline double check_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The node of world PE pe as the test launcher placed the PEs: STRATA_TEST_NODES lists one node
 * number per PE in world order ("0,0,1,1"); absent, every PE is on one node. The library learns
 * locality from the process manager; the tests check it against this independent record. */
static inline int check_node_of(int pe)
{
    const char *list = getenv("STRATA_TEST_NODES");
    if (!list || !*list)
        return 0;
    for (int i = 0; *list; i++) {
        char *end;
        long node = strtol(list, &end, 10);
        if (end == list)
            break;
        if (i == pe)
            return (int)node;
        list = *end == ',' ? end + 1 : end;
    }
    CHECK(0, "STRATA_TEST_NODES=%s names no node for PE %d", getenv("STRATA_TEST_NODES"), pe);
    return -1;
}

/* Whether world PE pe runs on this PE's node. */
static inline int check_same_node(int pe)
{
    return check_node_of(pe) == check_node_of(shmem_my_pe());
}

/* Whether node peers reach each other by load/store (SHMEM_NODE_DIRECT is not 0). */
static inline int check_node_direct(void)
{
    const char *knob = getenv("SHMEM_NODE_DIRECT");
    return !knob || strcmp(knob, "0");
}

/* Byte i of PE pe's test data: a hash of i, so that a block landing in another block's place
 * shows whatever the blocks' sizes (a transport may cut a transfer into pieces of a power of
 * two, which a pattern repeating every 256 bytes would hide). */
static inline unsigned char check_pattern_byte(size_t i, int pe)
{
    return (unsigned char)(((i + 1) * 2654435761u) >> 13) ^ (unsigned char)(pe * 31);
}

static inline int check_finish(void)
{
    int failed = check_failures;
    shmem_finalize();
    if (failed)
        fprintf(stderr, "%d check(s) failed\n", failed);
    return failed ? 1 : 0;
}

#endif
