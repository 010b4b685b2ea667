/* SPDX-License-Identifier: BSD-3-Clause */
/* The on-stream routines' core (stream.c), for the collectives' generated forms (coll.c) and
 * finalize. */
#ifndef STRATA_STREAM_H
#define STRATA_STREAM_H

#include <shmem.h>
#include <stddef.h>

/* A team collective as the library's agent runs it, by coll.c's core for its routine. */
struct stream_collective {
    const char *routine;
    shmem_team_t team;
    void *dest;
    const void *source;
    size_t count, elem; /* elements and their size (the mem forms: bytes, 1) */
    int root;           /* broadcast */
    void (*combine)(void *acc, const void *in, size_t count); /* reductions */
    int (*run)(const struct stream_collective *c);
};

/* Enqueues c on the program's stream: returns 0 once enqueued, or reports what is wrong and ends
 * the job (an invalid team returns -1, as the host-ordered routine does). */
int stream_collective(void *stream, const struct stream_collective *c);

/* Stops the library's agent (shmem_finalize: the program synchronized its streams). */
void stream_fini(void);

#endif
