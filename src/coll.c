/* Collectives on teams (1.6 section 9.9): broadcast, collect, fcollect, alltoall(s), reductions
 * and scans for every type of their tables, and the untyped mem forms.
 *
 * Every collective opens with a team sync (the sources are ready, the destinations free) and
 * moves data with one-sided puts or gets between members, which on the node are plain copies
 * into mapped memory. Reductions and scans read every member's source and combine locally, so
 * they need no symmetric scratch and allow dest == source. These are the general algorithms,
 * correct for any team size; the placement-specific ones (shared-memory flags, trees,
 * recursive doubling) belong in front of them. */
#include "amo.h"
#include "team.h"

#include <stdlib.h>
#include <string.h>

/* The PEs a collective runs over: a team, or the active set of a legacy routine, which
 * synchronizes through the caller's pSync. */
struct coll_group {
    int size, my_rank;
    const int *members;       /* world rank of each rank */
    struct strata_team *team; /* NULL for an active set */
    long *psync;
    uint64_t *gather; /* collect's sizes: entry per rank (teams) or per world rank (sets) */
    int gather_by_world;
    const char *routine;
};

/* SHMEM_DEBUG: buffers a collective writes (and, for reductions, reads) on other PEs must be
 * symmetric; a private buffer would otherwise be silently skipped or corrupt a peer. */
static void coll_check_symmetric(const struct coll_group *g, const void *buffer, const char *what)
{
    if (unlikely(rt.debug) && !region_lookup(buffer))
        log_fatal(g->routine, "%s %p is not symmetric (team rank %d of %d)", what, buffer,
                  g->my_rank, g->size);
}

/* An active set's sync: a dissemination over pSync used as counting semaphores (each signal is
 * consumed by the waiter), so pSync is back to SHMEM_SYNC_VALUE once every PE has returned. */
static void active_set_sync(struct coll_group *g)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int round = 0, dist = 1; dist < g->size; round++, dist <<= 1) {
        int partner = g->members[(g->my_rank + dist) % g->size];
        amo_op(SHMEM_CTX_DEFAULT, "shmem_barrier", TRANSPORT_AMO_ADD, &g->psync[round],
               sizeof(long), 1, 0, 0, partner);
        unsigned spins = 0;
        while (__atomic_load_n(&g->psync[round], __ATOMIC_ACQUIRE) < 1)
            progress_wait_step(&spins);
        amo_op(SHMEM_CTX_DEFAULT, "shmem_barrier", TRANSPORT_AMO_ADD, &g->psync[round],
               sizeof(long), (uint64_t)-1, 0, 0, rt.my_pe);
    }
}

static void coll_sync(struct coll_group *g)
{
    if (g->team)
        shmem_team_sync(g->team);
    else
        active_set_sync(g);
}

static void coll_end(struct coll_group *g)
{
    shmem_quiet();
    coll_sync(g);
}

/* Builds the group of a team collective and opens it with a sync; -1 when this PE cannot take
 * part (invalid team, or not a member). */
static int coll_team_begin(const char *routine, shmem_team_t team, struct coll_group *g)
{
    runtime_require_init(routine);
    if (team == SHMEM_TEAM_INVALID || team->my_rank < 0) {
        if (rt.debug)
            log_error(routine, "called on %s",
                      team == SHMEM_TEAM_INVALID ? "SHMEM_TEAM_INVALID"
                                                 : "a team this PE is not a member of");
        return -1;
    }
    *g = (struct coll_group){
        team->size, team->my_rank, team->members, team, NULL, team_gather_words(team), 0, routine};
    coll_sync(g);
    return 0;
}

/* Runs CALL (which uses g_) over team's group; a team collective's return value. */
#define TEAM_COLLECTIVE(routine, team, CALL)                                                       \
    ({                                                                                             \
        struct coll_group g_;                                                                      \
        coll_team_begin(routine, team, &g_) ? -1 : (CALL, 0);                                      \
    })

static void coll_broadcast(const char *routine, struct coll_group *g, void *dest,
                           const void *source, size_t bytes, int root, int root_receives)
{
    coll_check_symmetric(g, dest, "dest");
    if (root < 0 || root >= g->size)
        log_fatal(routine, "PE_root %d is not a rank of the team (0..%d)", root, g->size - 1);
    if (g->my_rank == root)
        for (int r = 0; r < g->size; r++)
            if (r != root || (root_receives && dest != source))
                shmem_putmem(dest, source, bytes, g->members[r]);
    coll_end(g);
}

/* fcollect: rank r's block lands at r * bytes everywhere. */
static void coll_fcollect(struct coll_group *g, void *dest, const void *source, size_t bytes)
{
    coll_check_symmetric(g, dest, "dest");
    for (int r = 0; r < g->size; r++)
        shmem_putmem((char *)dest + (size_t)g->my_rank * bytes, source, bytes, g->members[r]);
    coll_end(g);
}

/* collect: blocks of different sizes, concatenated in rank order; every member first publishes
 * its size in the team's gather words. */
static void coll_collect(struct coll_group *g, void *dest, const void *source, size_t bytes)
{
    coll_check_symmetric(g, dest, "dest");
    uint64_t *sizes = g->gather, mine = bytes;
    int me = g->gather_by_world ? rt.my_pe : g->my_rank;
    for (int r = 0; r < g->size; r++)
        shmem_putmem(&sizes[me], &mine, sizeof(mine), g->members[r]);
    shmem_quiet();
    coll_sync(g);
    size_t offset = 0;
    for (int r = 0; r < g->my_rank; r++)
        offset += sizes[g->gather_by_world ? g->members[r] : r];
    for (int r = 0; r < g->size; r++)
        shmem_putmem((char *)dest + offset, source, bytes, g->members[r]);
    coll_end(g);
}

/* alltoalls with elements of elem bytes: element k of the block for rank r sits at
 * source[(r * nelems + k) * sst] and lands at dest[(me * nelems + k) * dst] on r. alltoall is
 * the contiguous case. */
static void coll_alltoalls(struct coll_group *g, void *dest, const void *source, ptrdiff_t dst,
                           ptrdiff_t sst, size_t nelems, size_t elem)
{
    coll_check_symmetric(g, dest, "dest");
    ptrdiff_t me = g->my_rank, n = (ptrdiff_t)nelems, e = (ptrdiff_t)elem;
    for (int r = 0; r < g->size; r++) {
        if (dst == 1 && sst == 1)
            shmem_putmem((char *)dest + me * n * e, (const char *)source + r * n * e, nelems * elem,
                         g->members[r]);
        else
            for (ptrdiff_t k = 0; k < n; k++)
                shmem_putmem((char *)dest + (me * n + k) * dst * e,
                             (const char *)source + ((ptrdiff_t)r * n + k) * sst * e, elem,
                             g->members[r]);
    }
    coll_end(g);
}

typedef void (*coll_combine_fn)(void *acc, const void *in, size_t count);

/* Private scratch reused across calls: a fresh malloc of a large buffer costs a page fault per
 * page on every call. Per thread, since different teams' collectives may run concurrently. */
static __thread char *coll_scratch;
static __thread size_t coll_scratch_size;

static char *coll_scratch_get(size_t bytes)
{
    if (bytes > coll_scratch_size) {
        free(coll_scratch);
        coll_scratch = malloc(bytes);
        coll_scratch_size = coll_scratch ? bytes : 0;
        if (!coll_scratch)
            log_fatal("shmem_reduce", "cannot allocate %zu bytes of private memory", bytes);
    }
    return coll_scratch;
}

/* Combines the sources of ranks [first, last] into acc with combine(acc, in, count), reading a
 * mapped member's source in place and fetching the others into the scratch behind acc. */
static void coll_gather_combine(struct coll_group *g, const void *source, size_t count, size_t elem,
                                int first, int last, coll_combine_fn combine, char *acc, char *in)
{
    size_t bytes = count * elem;
    for (int r = first; r <= last; r++) {
        const void *peer = shmem_ptr(source, g->members[r]);
        if (r == first) {
            if (peer)
                memcpy(acc, peer, bytes);
            else
                shmem_getmem(acc, source, bytes, g->members[r]);
            continue;
        }
        if (!peer) {
            shmem_getmem(in, source, bytes, g->members[r]);
            peer = in;
        }
        combine(acc, peer, count);
    }
}

/* Reduction (first..last = the whole team) and scans (a prefix of it). The second sync keeps
 * every source intact until all members have read it, which also makes dest == source safe. */
static void coll_reduce(struct coll_group *g, void *dest, const void *source, size_t count,
                        size_t elem, int scan, coll_combine_fn combine)
{
    coll_check_symmetric(g, source, "source");
    int last = scan == 0 ? g->size - 1 : g->my_rank - (scan < 0);
    size_t bytes = count * elem;
    char *acc = coll_scratch_get(2 * bytes + 1), *in = acc + bytes;
    if (last >= 0)
        coll_gather_combine(g, source, count, elem, 0, last, combine, acc, in);
    else
        memset(acc, 0, bytes); /* exscan on rank 0: zero */
    coll_sync(g);
    memcpy(dest, acc, bytes);
}

/* ---- Generated API ---- */
#define DEFINE_TEAM_COLLECTIVES(T, N, ...)                                                         \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,          \
                              int PE_root)                                                         \
    {                                                                                              \
        return TEAM_COLLECTIVE("shmem_" #N "_broadcast", team,                                     \
                               coll_broadcast("shmem_" #N "_broadcast", &g_, dest, source,         \
                                              nelems * sizeof(T), PE_root, 1));                    \
    }                                                                                              \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems)            \
    {                                                                                              \
        return TEAM_COLLECTIVE("shmem_" #N "_collect", team,                                       \
                               coll_collect(&g_, dest, source, nelems * sizeof(T)));               \
    }                                                                                              \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems)           \
    {                                                                                              \
        return TEAM_COLLECTIVE("shmem_" #N "_fcollect", team,                                      \
                               coll_fcollect(&g_, dest, source, nelems * sizeof(T)));              \
    }                                                                                              \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems)           \
    {                                                                                              \
        return TEAM_COLLECTIVE("shmem_" #N "_alltoall", team,                                      \
                               coll_alltoalls(&g_, dest, source, 1, 1, nelems, sizeof(T)));        \
    }                                                                                              \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,          \
                              ptrdiff_t sst, size_t nelems)                                        \
    {                                                                                              \
        return TEAM_COLLECTIVE("shmem_" #N "_alltoalls", team,                                     \
                               coll_alltoalls(&g_, dest, source, dst, sst, nelems, sizeof(T)));    \
    }
STRATA_RMA_TYPES(DEFINE_TEAM_COLLECTIVES)

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root)
{
    return TEAM_COLLECTIVE(
        "shmem_broadcastmem", team,
        coll_broadcast("shmem_broadcastmem", &g_, dest, source, nelems, PE_root, 1));
}

int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return TEAM_COLLECTIVE("shmem_collectmem", team, coll_collect(&g_, dest, source, nelems));
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return TEAM_COLLECTIVE("shmem_fcollectmem", team, coll_fcollect(&g_, dest, source, nelems));
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return TEAM_COLLECTIVE("shmem_alltoallmem", team,
                           coll_alltoalls(&g_, dest, source, 1, 1, nelems, 1));
}

int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems)
{
    return TEAM_COLLECTIVE("shmem_alltoallsmem", team,
                           coll_alltoalls(&g_, dest, source, dst, sst, nelems, 1));
}

#define COMBINE_and(a, b) ((a) & (b))
#define COMBINE_or(a, b) ((a) | (b))
#define COMBINE_xor(a, b) ((a) ^ (b))
#define COMBINE_max(a, b) ((a) > (b) ? (a) : (b))
#define COMBINE_min(a, b) ((a) < (b) ? (a) : (b))
#define COMBINE_sum(a, b) ((a) + (b))
#define COMBINE_prod(a, b) ((a) * (b))

#define DEFINE_COMBINE(T, N, OP)                                                                   \
    static void combine_##N##_##OP(void *acc, const void *in, size_t count)                        \
    {                                                                                              \
        T *a = acc;                                                                                \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < count; i++)                                                         \
            a[i] = COMBINE_##OP(a[i], b[i]);                                                       \
    }
#define DEFINE_REDUCE(T, N, OP)                                                                    \
    DEFINE_COMBINE(T, N, OP)                                                                       \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce)     \
    {                                                                                              \
        return TEAM_COLLECTIVE(                                                                    \
            "shmem_" #N "_" #OP "_reduce", team,                                                   \
            coll_reduce(&g_, dest, source, nreduce, sizeof(T), 0, combine_##N##_##OP));            \
    }
#define DEFINE_REDUCE_BITWISE(T, N, ...)                                                           \
    DEFINE_REDUCE(T, N, and) DEFINE_REDUCE(T, N, or) DEFINE_REDUCE(T, N, xor)
#define DEFINE_REDUCE_MINMAX(T, N, ...) DEFINE_REDUCE(T, N, max) DEFINE_REDUCE(T, N, min)
#define DEFINE_REDUCE_SUM(T, N, ...)                                                               \
    DEFINE_REDUCE(T, N, sum)                                                                       \
    DEFINE_REDUCE(T, N, prod)                                                                      \
    int shmem_##N##_sum_inscan(shmem_team_t team, T *dest, const T *source, size_t nelems)         \
    {                                                                                              \
        return TEAM_COLLECTIVE(                                                                    \
            "shmem_" #N "_sum_inscan", team,                                                       \
            coll_reduce(&g_, dest, source, nelems, sizeof(T), 1, combine_##N##_sum));              \
    }                                                                                              \
    int shmem_##N##_sum_exscan(shmem_team_t team, T *dest, const T *source, size_t nelems)         \
    {                                                                                              \
        return TEAM_COLLECTIVE(                                                                    \
            "shmem_" #N "_sum_exscan", team,                                                       \
            coll_reduce(&g_, dest, source, nelems, sizeof(T), -1, combine_##N##_sum));             \
    }
STRATA_REDUCE_BITWISE_TYPES(DEFINE_REDUCE_BITWISE)
STRATA_REDUCE_MINMAX_TYPES(DEFINE_REDUCE_MINMAX)
STRATA_REDUCE_SUM_TYPES(DEFINE_REDUCE_SUM)

/* ---- Legacy active-set forms (deprecated, still in 1.6) ----
 * The active set is PE_start + i * 2^logPE_stride for i < PE_size; pSync carries its syncs and is
 * back to SHMEM_SYNC_VALUE when the routine returns everywhere. pWrk is not needed: reductions
 * combine in private memory. */
struct active_set {
    struct coll_group g;
    int members[];
};

static struct active_set *active_set_begin(const char *routine, int start, int log_stride, int size,
                                           long *psync)
{
    runtime_require_init(routine);
    long last = start + ((long)(size - 1) << log_stride);
    if (size < 1 || start < 0 || log_stride < 0 || log_stride > 30 || last >= rt.n_pes)
        log_fatal(routine,
                  "invalid active set (PE_start %d, logPE_stride %d, PE_size %d) for %d PEs", start,
                  log_stride, size, rt.n_pes);
    struct active_set *set = malloc(sizeof(*set) + (size_t)size * sizeof(int));
    if (!set)
        log_fatal(routine, "cannot allocate an active set of %d PEs", size);
    int me = -1;
    for (int i = 0; i < size; i++) {
        set->members[i] = start + (i << log_stride);
        if (set->members[i] == rt.my_pe)
            me = i;
    }
    if (me < 0)
        log_fatal(routine,
                  "PE %d is not in the active set (PE_start %d, logPE_stride %d, "
                  "PE_size %d)",
                  rt.my_pe, start, log_stride, size);
    set->g = (struct coll_group){size, me,     set->members, NULL, psync, team_active_set_gather(),
                                 1,    routine};
    coll_sync(&set->g);
    return set;
}

#define ACTIVE_SET(routine, CALL)                                                                  \
    do {                                                                                           \
        struct active_set *set_ =                                                                  \
            active_set_begin(routine, PE_start, logPE_stride, PE_size, pSync);                     \
        struct coll_group *g_ = &set_->g;                                                          \
        CALL;                                                                                      \
        free(set_);                                                                                \
    } while (0)

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    shmem_quiet();
    ACTIVE_SET("shmem_barrier", (void)g_);
}

/* The name is also a C11 generic macro in shmem.h: the parentheses define the function. */
void(shmem_sync)(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    ACTIVE_SET("shmem_sync", (void)g_);
}

#define DEFINE_ACTIVE_SET_SIZED(BITS, BYTES)                                                       \
    void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root,         \
                               int PE_start, int logPE_stride, int PE_size, long *pSync)           \
    {                                                                                              \
        /* the legacy broadcast leaves dest on the root alone */                                   \
        ACTIVE_SET("shmem_broadcast" #BITS, coll_broadcast("shmem_broadcast" #BITS, g_, dest,      \
                                                           source, nelems *BYTES, PE_root, 0));    \
    }                                                                                              \
    void shmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start,          \
                             int logPE_stride, int PE_size, long *pSync)                           \
    {                                                                                              \
        ACTIVE_SET("shmem_collect" #BITS, coll_collect(g_, dest, source, nelems *BYTES));          \
    }                                                                                              \
    void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start,         \
                              int logPE_stride, int PE_size, long *pSync)                          \
    {                                                                                              \
        ACTIVE_SET("shmem_fcollect" #BITS, coll_fcollect(g_, dest, source, nelems *BYTES));        \
    }                                                                                              \
    void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start,         \
                              int logPE_stride, int PE_size, long *pSync)                          \
    {                                                                                              \
        ACTIVE_SET("shmem_alltoall" #BITS, coll_alltoalls(g_, dest, source, 1, 1, nelems, BYTES)); \
    }                                                                                              \
    void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,       \
                               size_t nelems, int PE_start, int logPE_stride, int PE_size,         \
                               long *pSync)                                                        \
    {                                                                                              \
        ACTIVE_SET("shmem_alltoalls" #BITS,                                                        \
                   coll_alltoalls(g_, dest, source, dst, sst, nelems, BYTES));                     \
    }
DEFINE_ACTIVE_SET_SIZED(32, 4)
DEFINE_ACTIVE_SET_SIZED(64, 8)

#define DEFINE_TO_ALL(T, N, OP)                                                                    \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,            \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync)            \
    {                                                                                              \
        (void)pWrk;                                                                                \
        ACTIVE_SET("shmem_" #N "_" #OP "_to_all", coll_reduce(g_, dest, source, (size_t)nreduce,   \
                                                              sizeof(T), 0, combine_##N##_##OP));  \
    }
/* The team tables have no signed bitwise rows; the legacy ones do. */
#define DEFINE_TO_ALL_BITWISE(T, N, ...)                                                           \
    DEFINE_COMBINE(T, N, and)                                                                      \
    DEFINE_COMBINE(T, N, or)                                                                       \
    DEFINE_COMBINE(T, N, xor)                                                                      \
    DEFINE_TO_ALL(T, N, and) DEFINE_TO_ALL(T, N, or) DEFINE_TO_ALL(T, N, xor)
#define DEFINE_TO_ALL_MINMAX(T, N, ...) DEFINE_TO_ALL(T, N, max) DEFINE_TO_ALL(T, N, min)
#define DEFINE_TO_ALL_SUM(T, N, ...) DEFINE_TO_ALL(T, N, sum) DEFINE_TO_ALL(T, N, prod)
STRATA_TO_ALL_BITWISE_TYPES(DEFINE_TO_ALL_BITWISE)
STRATA_TO_ALL_MINMAX_TYPES(DEFINE_TO_ALL_MINMAX)
STRATA_TO_ALL_SUM_TYPES(DEFINE_TO_ALL_SUM)
