/* SPDX-License-Identifier: BSD-3-Clause */
/* Which PEs share this PE's node, as the process manager lists them: parsed and checked apart
 * from the PMIx plumbing in boot_pmix.c, so that every malformed list can be tested without a
 * process manager. */
#ifndef STRATA_BOOT_LOCALITY_H
#define STRATA_BOOT_LOCALITY_H

#include <stddef.h>

/* Parses a PMIX_LOCAL_PEERS list ("0,1,2,3") of rank's node in a job of size ranks into count
 * peers, ascending. The list must name count distinct ranks of the job, rank among them: every
 * other PE indexes its tables by these. Returns 0, or -1 with what is wrong written into why. */
int boot_local_peers_parse(const char *text, int rank, int size, int *peers, int count, char *why,
                           size_t why_len);

#endif
