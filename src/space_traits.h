/* SPDX-License-Identifier: BSD-3-Clause */
/* Memory traits (shmemx.h): which memory of a device type a space lives in. A PE checks the
 * traits as every PE does (an invalid one is invalid everywhere), finds whether it can hold
 * them, and turns them into the placement of its heap (spaces/placement.h); creation then goes
 * on as shmem_space_create's, this PE a member where the traits hold. */
#ifndef STRATA_SPACE_TRAITS_H
#define STRATA_SPACE_TRAITS_H

#include "space_reach.h"

#include <shmemx.h>

struct numa_memory;

/* What a PE makes of the traits of a space. */
struct space_traits {
    size_t size; /* the space's size: whole pages of the page size asked for */
    struct placement placement;
    int alloc_policy; /* SHMEMX_SPACE_POLICY_* */
    int device_index; /* which of the PE's devices of the type */
};

/* Checks traits (NULL: none) against config, whatever this PE reaches: SPACE_BAD_CONFIG, after
 * reporting the bad value, or SPACE_REACHABLE. */
enum space_verdict space_traits_check(const char *routine, const shmem_space_config_t *config,
                                      const shmemx_space_traits_t *traits);
/* Whether this PE, which reaches config's device with kind, can hold the (checked) traits:
 * SPACE_REACHABLE with *out filled, or SPACE_NO_DEVICE with the reason in why. count_free: the
 * node's free huge pages must hold every PE's heap (only where no PE takes pages before every PE
 * has counted; elsewhere a shortage shows when the memory is made). */
enum space_verdict space_traits_resolve(const shmem_space_config_t *config,
                                        const shmemx_space_traits_t *traits,
                                        const struct kind_ops *kind, int count_free,
                                        struct space_traits *out, char *why, size_t whylen);
/* The device_index traits (NULL: none) ask for, 0 when they name none; and whether they fall
 * back where they cannot hold (SHMEMX_SPACE_POLICY_PREFERRED). */
int space_traits_device_index(const shmemx_space_traits_t *traits);
int space_traits_preferred(const shmemx_space_traits_t *traits);
/* SHMEM_SYMMETRIC_HEAP_USE_HUGE_PAGES=auto for a heap resolved without a page size: huge pages
 * of page_knob's size where this node has enough free now for this PE's heap, else transparent
 * ones where shared memory may have them, each falling back to base pages where the heap cannot
 * have them when it is made (so PEs of a node may differ). A heap that is not a whole number of
 * huge pages does not try them: its size stays the program's. */
void space_traits_try_huge(const char *page_knob, struct space_traits *out);
/* How many huge pages of page bytes this node has free now, and how to reserve more. */
void space_traits_huge_advice(size_t page, char *text, size_t len);
/* The default heap's traits, as the SHMEM_SYMMETRIC_HEAP_* knobs give them. */
void space_traits_of_knobs(const struct knobs *knobs, shmemx_space_traits_t *traits);
/* The node's memory as this PE sees it, read on first use (SHMEM_TEST_TOPOLOGY: a saved
 * machine's); NULL, with the reason in err, where it cannot be read. */
const struct numa_memory *space_traits_memory(char *err, size_t errlen);

#endif
