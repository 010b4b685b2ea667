/* Team collectives on device memory (buffers in a space the library may not load or store):
 * every byte moves through RMA, which stages device memory through host buffers, and
 * reductions combine in host scratch. Simple algorithms, correct for any team size; each opens
 * with a team sync (sources ready, destinations free) and closes with one. */
#ifndef STRATA_COLL_DEVICE_H
#define STRATA_COLL_DEVICE_H

#include "team.h"

#include <stddef.h>

typedef void (*coll_combine_fn)(void *acc, const void *in, size_t count);

/* SHMEM_DEBUG: a collective's buffers share one space, this PE is a member of it, and the team
 * lies inside the space's team; reports and ends the job otherwise (a mismatch would hang). */
void coll_space_check(const char *routine, const struct strata_team *team, const void *dest,
                      const void *source);

/* Whether a collective with these buffers must take the device path. */
int coll_device_buffers(const void *dest, const void *source);

void coll_device_broadcast(struct strata_team *team, void *dest, const void *source, size_t bytes,
                           int root);
void coll_device_collect(struct strata_team *team, void *dest, const void *source, size_t bytes,
                         int fixed);
void coll_device_alltoalls(struct strata_team *team, void *dest, const void *source, ptrdiff_t dst,
                           ptrdiff_t sst, size_t nelems, size_t elem);
/* scan: 0 reduce, 1 inclusive, -1 exclusive prefix. */
void coll_device_reduce(struct strata_team *team, void *dest, const void *source, size_t count,
                        size_t elem, int scan, coll_combine_fn combine);

#endif
