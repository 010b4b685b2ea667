/* Collectives on teams (1.6 section 9.9): broadcast, collect, fcollect, alltoall(s), reductions
 * and scans for every type of their tables, and the untyped mem forms.
 *
 * Every collective opens with a team sync (the sources are ready, the destinations free) and
 * moves data with one-sided puts or gets between members, which on the node are plain copies
 * into mapped memory. Reductions and scans read every member's source and combine locally, so
 * they need no symmetric scratch and allow dest == source. These are the general algorithms,
 * correct for any team size; the placement-specific ones (shared-memory flags, trees,
 * recursive doubling) belong in front of them. */
#include <stdlib.h>
#include <string.h>

#include "team.h"

static int coll_begin(const char *routine, shmem_team_t team)
{
    runtime_require_init(routine);
    if (team == SHMEM_TEAM_INVALID || team->my_rank < 0) {
        if (rt.debug)
            log_error(routine, "called on %s", team == SHMEM_TEAM_INVALID
                                                   ? "SHMEM_TEAM_INVALID"
                                                   : "a team this PE is not a member of");
        return -1;
    }
    shmem_team_sync(team);
    return 0;
}

static void coll_end(shmem_team_t team)
{
    shmem_quiet();
    shmem_team_sync(team);
}

int shmem_sync(shmem_team_t team)
{
    return shmem_team_sync(team);
}

static int coll_broadcast(const char *routine, shmem_team_t team, void *dest, const void *source,
                          size_t bytes, int root)
{
    if (coll_begin(routine, team))
        return -1;
    if (root < 0 || root >= team->size)
        log_fatal(routine, "PE_root %d is not a rank of the team (0..%d)", root, team->size - 1);
    if (team->my_rank == root)
        for (int r = 0; r < team->size; r++)
            if (r != root || dest != source)
                shmem_putmem(dest, source, bytes, team->members[r]);
    coll_end(team);
    return 0;
}

/* fcollect: rank r's block lands at r * bytes everywhere. */
static int coll_fcollect(const char *routine, shmem_team_t team, void *dest, const void *source,
                         size_t bytes)
{
    if (coll_begin(routine, team))
        return -1;
    for (int r = 0; r < team->size; r++)
        shmem_putmem((char *)dest + (size_t)team->my_rank * bytes, source, bytes,
                     team->members[r]);
    coll_end(team);
    return 0;
}

/* collect: blocks of different sizes, concatenated in rank order; every member first publishes
 * its size in the team's gather words. */
static int coll_collect(const char *routine, shmem_team_t team, void *dest, const void *source,
                        size_t bytes)
{
    if (coll_begin(routine, team))
        return -1;
    uint64_t *sizes = team_gather_words(team), mine = bytes;
    for (int r = 0; r < team->size; r++)
        shmem_putmem(&sizes[team->my_rank], &mine, sizeof(mine), team->members[r]);
    shmem_quiet();
    shmem_team_sync(team);
    size_t offset = 0;
    for (int r = 0; r < team->my_rank; r++)
        offset += sizes[r];
    for (int r = 0; r < team->size; r++)
        shmem_putmem((char *)dest + offset, source, bytes, team->members[r]);
    coll_end(team);
    return 0;
}

/* alltoalls with elements of elem bytes: element k of the block for rank r sits at
 * source[(r * nelems + k) * sst] and lands at dest[(me * nelems + k) * dst] on r. alltoall is
 * the contiguous case. */
static int coll_alltoalls(const char *routine, shmem_team_t team, void *dest, const void *source,
                          ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem)
{
    if (coll_begin(routine, team))
        return -1;
    ptrdiff_t me = team->my_rank, n = (ptrdiff_t)nelems, e = (ptrdiff_t)elem;
    for (int r = 0; r < team->size; r++) {
        if (dst == 1 && sst == 1)
            shmem_putmem((char *)dest + me * n * e, (const char *)source + r * n * e,
                         nelems * elem, team->members[r]);
        else
            for (ptrdiff_t k = 0; k < n; k++)
                shmem_putmem((char *)dest + (me * n + k) * dst * e,
                             (const char *)source + ((ptrdiff_t)r * n + k) * sst * e, elem,
                             team->members[r]);
    }
    coll_end(team);
    return 0;
}

/* Reads the sources of ranks [first, last] into one local buffer each in turn and combines them
 * with combine(acc, in, count); the first one initializes acc. Returns the buffer, or NULL for
 * an empty range. */
typedef void (*coll_combine_fn)(void *acc, const void *in, size_t count);

static void *coll_gather_combine(shmem_team_t team, const void *source, size_t count, size_t elem,
                                 int first, int last, coll_combine_fn combine)
{
    size_t bytes = count * elem;
    char *acc = malloc(bytes ? bytes : 1), *in = malloc(bytes ? bytes : 1);
    if (!acc || !in)
        log_fatal("shmem_reduce", "cannot allocate %zu bytes of private memory", bytes);
    for (int r = first; r <= last; r++) {
        shmem_getmem(r == first ? acc : in, source, bytes, team->members[r]);
        if (r != first)
            combine(acc, in, count);
    }
    free(in);
    return acc;
}

/* Reduction (first..last = the whole team) and scans (a prefix of it). The second sync keeps
 * every source intact until all members have read it, which also makes dest == source safe. */
static int coll_reduce(const char *routine, shmem_team_t team, void *dest, const void *source,
                       size_t count, size_t elem, int scan, coll_combine_fn combine)
{
    if (coll_begin(routine, team))
        return -1;
    int last = scan == 0 ? team->size - 1 : team->my_rank - (scan < 0);
    void *result = last >= 0 ? coll_gather_combine(team, source, count, elem, 0, last, combine)
                             : calloc(count ? count : 1, elem); /* exscan on rank 0: zero */
    shmem_team_sync(team);
    memcpy(dest, result, count * elem);
    free(result);
    return 0;
}

/* ---- Generated API ---- */
#define DEFINE_TEAM_COLLECTIVES(T, N, ...)                                                         \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,          \
                              int PE_root)                                                         \
    {                                                                                              \
        return coll_broadcast("shmem_" #N "_broadcast", team, dest, source, nelems * sizeof(T),    \
                              PE_root);                                                            \
    }                                                                                              \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems)            \
    {                                                                                              \
        return coll_collect("shmem_" #N "_collect", team, dest, source, nelems * sizeof(T));       \
    }                                                                                              \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems)           \
    {                                                                                              \
        return coll_fcollect("shmem_" #N "_fcollect", team, dest, source, nelems * sizeof(T));     \
    }                                                                                              \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems)           \
    {                                                                                              \
        return coll_alltoalls("shmem_" #N "_alltoall", team, dest, source, 1, 1, nelems,           \
                              sizeof(T));                                                          \
    }                                                                                              \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,          \
                              ptrdiff_t sst, size_t nelems)                                        \
    {                                                                                              \
        return coll_alltoalls("shmem_" #N "_alltoalls", team, dest, source, dst, sst, nelems,      \
                              sizeof(T));                                                          \
    }
STRATA_RMA_TYPES(DEFINE_TEAM_COLLECTIVES)

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root)
{
    return coll_broadcast("shmem_broadcastmem", team, dest, source, nelems, PE_root);
}

int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return coll_collect("shmem_collectmem", team, dest, source, nelems);
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return coll_fcollect("shmem_fcollectmem", team, dest, source, nelems);
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return coll_alltoalls("shmem_alltoallmem", team, dest, source, 1, 1, nelems, 1);
}

int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems)
{
    return coll_alltoalls("shmem_alltoallsmem", team, dest, source, dst, sst, nelems, 1);
}

#define COMBINE_and(a, b) ((a) & (b))
#define COMBINE_or(a, b) ((a) | (b))
#define COMBINE_xor(a, b) ((a) ^ (b))
#define COMBINE_max(a, b) ((a) > (b) ? (a) : (b))
#define COMBINE_min(a, b) ((a) < (b) ? (a) : (b))
#define COMBINE_sum(a, b) ((a) + (b))
#define COMBINE_prod(a, b) ((a) * (b))

#define DEFINE_REDUCE(T, N, OP)                                                                    \
    static void combine_##N##_##OP(void *acc, const void *in, size_t count)                        \
    {                                                                                              \
        T *a = acc;                                                                                \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < count; i++)                                                         \
            a[i] = COMBINE_##OP(a[i], b[i]);                                                       \
    }                                                                                              \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce)     \
    {                                                                                              \
        return coll_reduce("shmem_" #N "_" #OP "_reduce", team, dest, source, nreduce, sizeof(T),  \
                           0, combine_##N##_##OP);                                                 \
    }
#define DEFINE_REDUCE_BITWISE(T, N, ...)                                                           \
    DEFINE_REDUCE(T, N, and) DEFINE_REDUCE(T, N, or) DEFINE_REDUCE(T, N, xor)
#define DEFINE_REDUCE_MINMAX(T, N, ...) DEFINE_REDUCE(T, N, max) DEFINE_REDUCE(T, N, min)
#define DEFINE_REDUCE_SUM(T, N, ...)                                                               \
    DEFINE_REDUCE(T, N, sum) DEFINE_REDUCE(T, N, prod)                                             \
    int shmem_##N##_sum_inscan(shmem_team_t team, T *dest, const T *source, size_t nelems)         \
    {                                                                                              \
        return coll_reduce("shmem_" #N "_sum_inscan", team, dest, source, nelems, sizeof(T), 1,    \
                           combine_##N##_sum);                                                     \
    }                                                                                              \
    int shmem_##N##_sum_exscan(shmem_team_t team, T *dest, const T *source, size_t nelems)         \
    {                                                                                              \
        return coll_reduce("shmem_" #N "_sum_exscan", team, dest, source, nelems, sizeof(T), -1,   \
                           combine_##N##_sum);                                                     \
    }
STRATA_REDUCE_BITWISE_TYPES(DEFINE_REDUCE_BITWISE)
STRATA_REDUCE_MINMAX_TYPES(DEFINE_REDUCE_MINMAX)
STRATA_REDUCE_SUM_TYPES(DEFINE_REDUCE_SUM)
