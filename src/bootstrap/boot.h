/* SPDX-License-Identifier: BSD-3-Clause */
/* The bootstrap: the library's only contact with the process manager. Everything above it sees
 * rank, size, the node's peers, and a key-value exchange; PMIx stays inside boot_pmix.c. */
#ifndef STRATA_BOOT_H
#define STRATA_BOOT_H

#include <stddef.h>

#define BOOT_ABORT_AFTER_LOST_PEER "after a lost peer: "
/* oshrun hands its PEs a file of one byte per rank (a memfd of this name, its descriptor in this
 * variable) in which each marks that it finalized (boot_exit_mark.c). */
#define BOOT_EXIT_MARK_NAME "strata-finalized"
#define BOOT_EXIT_MARK_FD_ENV "STRATA_OSHRUN_FINALIZED_FD"

struct boot_info {
    int rank;
    int size;
    int local_rank;
    int local_size;
    int *local_peers; /* world ranks on this node, ascending, local_size entries */
    int singleton;    /* no process manager: one PE */
    char job_id[256]; /* unique per job; names the job's shared-memory files */
};

/* Connects to the process manager, or falls back to a singleton. Returns 0 or -1. */
int boot_init(struct boot_info *info);
/* Publishes a value under key for the other ranks (visible after boot_fence). */
int boot_put(const char *key, const void *data, size_t len);
/* The same for the ranks of this node only: what only they read stays out of the exchange that
 * every node receives. */
int boot_put_node(const char *key, const void *data, size_t len);
/* Exchanges everything put so far among all ranks; also a barrier. */
int boot_fence(void);
/* A barrier of all ranks (no data) that calls progress(arg) while it waits: a peer may need this
 * PE's transport to progress before it can reach the barrier. Returns 0 or -1. */
int boot_fence_progressing(void (*progress)(void *), void *arg);
/* Fetches what rank published under key. *len in: buffer size; out: bytes stored. */
int boot_get(int rank, const char *key, void *data, size_t *len);
/* Fetches what each of n ranks (ranks[i], or i where ranks is NULL) published under key, exactly
 * len bytes each, into data (len bytes per rank, in the list's order); got[i] says whether it
 * came. Returns 0, or -1 when any did not. */
int boot_get_many(const char *key, const int *ranks, int n, void *data, size_t len,
                  unsigned char *got);
/* This PE has reached the job's last exchange (shmem_finalize): from now on its peers may end
 * normally at any time, and the process manager's reports of their ends are no longer deaths. */
void boot_leaving(void);
/* Asks the process manager to end the job with status. Does not return. After a failed fence or
 * get (a peer is gone) the message starts with BOOT_ABORT_AFTER_LOST_PEER: the abort is then a
 * consequence, and a launcher that knows the prefix reports the failure that caused it. */
void boot_abort(int status, const char *message) __attribute__((noreturn));
/* boot_abort for a failure that a peer's end caused, found outside the process manager (its
 * memory gone): the message starts with BOOT_ABORT_AFTER_LOST_PEER. */
void boot_abort_after_lost_peer(int status, const char *message) __attribute__((noreturn));
void boot_finalize(void);
/* Under oshrun: takes over the file in which this PE marks that it finalized. Returns whether
 * there is one, that is whether oshrun watches this PE's exit (it then names a PE that exits
 * without finalizing). */
int boot_exit_mark_init(int rank);
/* Marks that this PE finalized, before it leaves the process manager. */
void boot_exit_mark_finalized(void);

#endif
