/* SPDX-License-Identifier: BSD-3-Clause */
/* The bulk lane between nodes (transports/bulk_lane.c), on PEs reached over TCP, each on a
 * node of its own (launched over as many nodes as PEs):
 * - every PE first makes connections to every peer's lane that are not a peer's, as a process
 *   of another user that found the port would: a first message with the magic and a PE number
 *   but not the peer's secret, 32 bytes of garbage, and one that says nothing;
 * - then 1 MiB collectives, which the lane carries, in both directions at once (fcollect), from
 *   each root (broadcast) and as sum reductions, every element checked on every PE, and a stream
 *   of 256 KiB and 8-byte broadcasts in turn (the lane and UCX's messages, whose order the data
 *   shows);
 * - then two threads, each on a team of its own, fcollect 1 MiB at once, many times (two messages
 *   under way to one peer, which the lane carries one after the other);
 * - then the peer has closed the first two connections (read: the end of the stream).
 * With the argument "flood", every PE instead fills each peer's queue of connections to accept
 * (FLOOD connections that say nothing) before the collectives: its own connection to the peer
 * then gets no answer, and its messages must go through the network, as right as on the lane.
 * The port and addresses are read where each PE published them (PMIx, the layout of
 * bulk_lane.c's struct bulk_published); the secret published there is what these connections
 * leave out. */
#include "check.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pmix.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#define WORDS ((size_t)1 << 17) /* 1 MiB of longs */
#define MAX_ADDRS 8
#define STREAM_CALLS 24
#define FLOOD 160 /* more than the lane's queue of 128 */
#define THREADS 2
#define THREAD_CALLS 8

struct published {
    uint16_t port;
    uint16_t n_addrs;
    uint8_t secret[16];
    uint32_t addrs[MAX_ADDRS];
};

/* The connections made to one peer: wrong secret, garbage, silent; or the flood. */
struct intruders {
    int fd[3];
    int flood[FLOOD];
};

static int connect_to(const struct published *p, int wait)
{
    struct sockaddr_in addr = {
        .sin_family = AF_INET, .sin_port = p->port, .sin_addr.s_addr = p->addrs[0]};
    int fd = socket(AF_INET, SOCK_STREAM | (wait ? 0 : SOCK_NONBLOCK), 0);
    int rc = fd >= 0 ? connect(fd, (struct sockaddr *)&addr, sizeof(addr)) : -1;
    CHECK(fd >= 0 && (!rc || (!wait && errno == EINPROGRESS)), "cannot connect to a peer's lane");
    return fd;
}

static void intrude(pmix_proc_t *self, int pe, struct intruders *in, int flood)
{
    pmix_proc_t proc;
    PMIX_LOAD_PROCID(&proc, self->nspace, (pmix_rank_t)pe);
    pmix_value_t *value = NULL;
    struct published p = {0};
    CHECK(PMIx_Get(&proc, "transport.bulk", NULL, 0, &value) == PMIX_SUCCESS && value &&
              value->type == PMIX_BYTE_OBJECT && value->data.bo.size == sizeof(p),
          "PE %d published no lane", pe);
    if (value && value->type == PMIX_BYTE_OBJECT && value->data.bo.size == sizeof(p))
        memcpy(&p, value->data.bo.bytes, sizeof(p));
    if (value)
        PMIX_VALUE_RELEASE(value);
    CHECK(p.n_addrs > 0, "PE %d has no lane over TCP", pe);
    if (!p.n_addrs) {
        in->fd[0] = in->fd[1] = in->fd[2] = -1;
        return;
    }
    unsigned char hello[32] = {0}, garbage[32];
    uint64_t magic = 0x4b4c554241525453ULL;
    int32_t from = shmem_my_pe();
    memcpy(hello, &magic, sizeof(magic));
    memcpy(hello + 8, &from, sizeof(from));
    for (int i = 0; i < 16; i++)
        hello[12 + i] = (unsigned char)(p.secret[i] ^ 0x5a);
    memset(garbage, 0xab, sizeof(garbage));
    if (flood) {
        for (int k = 0; k < FLOOD; k++)
            in->flood[k] = connect_to(&p, 0);
        in->fd[0] = in->fd[1] = in->fd[2] = -1;
        usleep(200000); /* the handshakes the queue takes complete */
        return;
    }
    for (int k = 0; k < 3; k++)
        in->fd[k] = connect_to(&p, 1);
    CHECK(send(in->fd[0], hello, sizeof(hello), 0) == (ssize_t)sizeof(hello), "send");
    CHECK(send(in->fd[1], garbage, sizeof(garbage), 0) == (ssize_t)sizeof(garbage), "send");
}

/* The peer ended the connection: what it sent was read and refused. */
static void check_closed(int fd, int pe, const char *what)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    char byte;
    CHECK(poll(&p, 1, 20000) == 1 && recv(fd, &byte, 1, 0) <= 0, "PE %d kept a connection with %s",
          pe, what);
}

static long value(int pe, size_t i, int call)
{
    return (long)pe * 100003 + (long)(i % 65521) + call;
}

/* This PE's source of the call tagged tag. */
static void fill(long *src, int me, int tag)
{
    for (size_t i = 0; i < WORDS; i++)
        src[i] = value(me, i, tag);
}

/* Elements of an fcollect's dest over n members that are not what they sent for tag. */
static long fcollect_errors(const long *dst, int n, int tag)
{
    long bad = 0;
    for (int pe = 0; pe < n; pe++)
        for (size_t i = 0; i < WORDS; i++)
            bad += dst[(size_t)pe * WORDS + i] != value(pe, i, tag);
    return bad;
}

static void check_fcollect(long *dst, long *src, int me, int n)
{
    fill(src, me, 1);
    shmem_barrier_all();
    shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, WORDS);
    CHECK_EQ(fcollect_errors(dst, n, 1), 0);
}

static void check_broadcasts(long *dst, long *src, int me, int n)
{
    for (int root = 0; root < n; root++) {
        fill(src, me, 2 + root);
        shmem_barrier_all();
        shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, WORDS, root);
        long bad = 0;
        for (size_t i = 0; me != root && i < WORDS; i++)
            bad += dst[i] != value(root, i, 2 + root);
        CHECK_EQ(bad, 0);
    }
}

static void check_reduction(long *dst, long *src, int me, int n)
{
    fill(src, me, 9);
    shmem_barrier_all();
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, dst, src, WORDS);
    long bad = 0;
    for (size_t i = 0; i < WORDS; i++) {
        long sum = 0;
        for (int pe = 0; pe < n; pe++)
            sum += value(pe, i, 9);
        bad += dst[i] != sum;
    }
    CHECK_EQ(bad, 0);
}

/* 256 KiB (the lane) and 8 bytes (UCX) in turn from PE 0, two buffers of each size alternating
 * without a sync between calls: each call's data is what its root sent. */
static void check_stream(long *dst, long *src, int me)
{
    long bad = 0;
    size_t big = WORDS / 4;
    for (int call = 0; call < STREAM_CALLS; call++) {
        size_t count = call % 2 ? 1 : big;
        long *to = dst + (size_t)(call % 4) * big;
        if (me == 0)
            for (size_t i = 0; i < count; i++)
                src[i] = value(0, i, 100 + call);
        shmem_long_broadcast(SHMEM_TEAM_WORLD, to, src, count, 0);
        for (size_t i = 0; me != 0 && i < count; i++)
            bad += to[i] != value(0, i, 100 + call);
    }
    CHECK_EQ(bad, 0);
}

struct fcollector {
    shmem_team_t team;
    long *src, *dst;
    int me, n, id;
    long bad;
};

static void *fcollect_thread(void *arg)
{
    struct fcollector *f = arg;
    for (int call = 0; call < THREAD_CALLS; call++) {
        int tag = 1000 * (f->id + 1) + call;
        fill(f->src, f->me, tag);
        shmem_team_sync(f->team); /* every member is done reading the last call's dest */
        shmem_long_fcollect(f->team, f->dst, f->src, WORDS);
        f->bad += fcollect_errors(f->dst, f->n, tag);
    }
    return NULL;
}

/* Both threads' fcollects at once, each on a team of its own. */
static void check_threads(int me, int n)
{
    struct fcollector f[THREADS];
    pthread_t thread[THREADS];
    for (int k = 0; k < THREADS; k++) {
        f[k] = (struct fcollector){.me = me, .n = n, .id = k};
        CHECK(!shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n, NULL, 0, &f[k].team),
              "team split");
        f[k].src = shmem_malloc(WORDS * sizeof(long));
        f[k].dst = shmem_malloc((size_t)n * WORDS * sizeof(long));
    }
    for (int k = 0; k < THREADS; k++)
        CHECK(!pthread_create(&thread[k], NULL, fcollect_thread, &f[k]), "pthread_create");
    for (int k = 0; k < THREADS; k++) {
        pthread_join(thread[k], NULL);
        CHECK_EQ(f[k].bad, 0);
        shmem_free(f[k].src);
        shmem_free(f[k].dst);
        shmem_team_destroy(f[k].team);
    }
}

int main(int argc, char **argv)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK_EQ(provided, SHMEM_THREAD_MULTIPLE);
    int me = shmem_my_pe(), n = shmem_n_pes(), flood = argc > 1 && !strcmp(argv[1], "flood");
    pmix_proc_t self;
    CHECK(PMIx_Init(&self, NULL, 0) == PMIX_SUCCESS, "PMIx_Init");
    struct intruders *in = calloc((size_t)n, sizeof(*in));
    for (int pe = 0; in && pe < n; pe++)
        if (pe != me)
            intrude(&self, pe, &in[pe], flood);
    shmem_barrier_all(); /* every queue is full before anyone connects */
    long *src = shmem_malloc(WORDS * sizeof(long));
    long *dst = shmem_malloc((size_t)n * WORDS * sizeof(long));
    CHECK(src && dst && in, "out of memory");
    if (src && dst && in) {
        check_fcollect(dst, src, me, n);
        check_broadcasts(dst, src, me, n);
        check_reduction(dst, src, me, n);
        shmem_barrier_all();
        check_stream(dst, src, me);
        shmem_barrier_all();
        check_threads(me, n);
    }
    shmem_barrier_all();
    for (int pe = 0; in && pe < n; pe++) {
        for (int k = 0; flood && pe != me && k < FLOOD; k++)
            close(in[pe].flood[k]);
        if (pe == me || in[pe].fd[0] < 0)
            continue;
        check_closed(in[pe].fd[0], pe, "the wrong secret");
        check_closed(in[pe].fd[1], pe, "garbage");
        for (int k = 0; k < 3; k++)
            close(in[pe].fd[k]);
    }
    free(in);
    shmem_free(src);
    shmem_free(dst);
    PMIx_Finalize(NULL, 0);
    shmem_finalize();
    return check_finish();
}
