/* SPDX-License-Identifier: BSD-3-Clause */
/* Work in a stream's order (shmemx_*_on_stream) on a GPU space, each PE on a stream of its own
 * that the legacy default stream does not wait for, the host never synchronizing it between the
 * steps:
 * - a pipeline: the program's kernel fills a buffer, a put with signal takes it to the right
 *   neighbour, whose stream waits for the signal and then copies what came into its history, many
 *   rounds; every value checked at the end;
 * - every on-stream routine once, values checked on every PE: puts and gets (mem, typed, nbi
 *   with quiet), put-with-signal set and add, signal set and add, waits for each comparison,
 *   quiet ordering a put before a signal, barriers and syncs, broadcast, fcollect, alltoall and
 *   reductions;
 * - a barrier on a stream holding back the stream's later work until every PE arrived;
 * - the same on a host-memory space (the stream orders it all the same);
 * - a halo exchange captured into a graph and launched 100 times: each launch passes every PE's
 *   value to its right neighbour, so PE p ends with the value of PE p - 100 (mod n).
 * With "error WHAT" it makes one mistake instead, which the library must report, naming the
 * routine and the value, and end the job: a destroyed stream, a stream of another context (CUDA)
 * or device (HIP) than the space's, a bad sig_op, a root outside the team, a private buffer under
 * SHMEM_DEBUG=1, a stream with no GPU space on the PE.
 * The runtime's calls go through gpu_runtime.h (the doubles, with STRATA_GPU_DOUBLE_ASYNC=1 for
 * streams that run on their own, or a GPU). */
#include "check.h"
#include "gpu_runtime.h"

#include <shmemx.h>
#include <unistd.h>

enum { ROUNDS = 40, WORDS = 64, REPLAYS = 100 };

static int me, npes;

static void *stream_new(void *anchor)
{
    void *stream = NULL;
    gpu_runtime_on(anchor);
    CHECK(gpu_stream_create(&stream) == 0, "a stream of the program's");
    return stream;
}

static void sync_stream(void *stream)
{
    CHECK(gpu_stream_sync(stream) == 0, "stream synchronize");
}

/* The words of device memory at dev, read by the runtime's own copy. */
static void read_words(void *host, const void *dev, size_t bytes)
{
    CHECK(gpu_runtime_read(host, dev, bytes) == 0, "a read of device memory");
}

/* Rounds of kernel -> put with signal -> the neighbour's wait -> its kernel, host-free. */
static void pipeline(shmem_space_t space, void *stream)
{
    uint32_t *out = shmem_space_malloc(space, WORDS * sizeof(uint32_t));
    uint32_t *in = shmem_space_malloc(space, ROUNDS * WORDS * sizeof(uint32_t));
    uint32_t *history = shmem_space_malloc(space, ROUNDS * WORDS * sizeof(uint32_t));
    uint64_t *sig = shmem_space_malloc(space, sizeof(uint64_t));
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    gpu_runtime_fill(sig, 0, sizeof(*sig));
    shmem_barrier_all();
    for (int r = 0; r < ROUNDS; r++) {
        CHECK(gpu_stream_set32(out, (uint32_t)(r * 1000 + me), WORDS, stream) == 0, "kernel");
        shmemx_putmem_signal_on_stream(in + r * WORDS, out, WORDS * sizeof(uint32_t), sig,
                                       (uint64_t)r + 1, SHMEM_SIGNAL_SET, right, stream);
        shmemx_signal_wait_until_on_stream(sig, SHMEM_CMP_GE, (uint64_t)r + 1, stream);
        CHECK(gpu_stream_copy(history + r * WORDS, in + r * WORDS, WORDS * sizeof(uint32_t),
                              stream) == 0,
              "kernel after the wait");
    }
    sync_stream(stream);
    static uint32_t seen[ROUNDS * WORDS];
    read_words(seen, history, sizeof(seen));
    int wrong = 0;
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < WORDS; i++)
            wrong += seen[r * WORDS + i] != (uint32_t)(r * 1000 + left);
    CHECK(wrong == 0, "pipeline: %d of %d words wrong (round 0 word 0: %u)", wrong, ROUNDS * WORDS,
          seen[0]);
    shmem_barrier_all();
    shmem_space_free(space, sig);
    shmem_space_free(space, history);
    shmem_space_free(space, in);
    shmem_space_free(space, out);
}

/* Reads a long of the space's memory wherever it is. */
static long read_long(shmem_space_t space, const long *at)
{
    long value;
    if (space == SHMEM_SPACE_DEFAULT)
        return *at;
    read_words(&value, at, sizeof(value));
    return value;
}

static void fill_longs(shmem_space_t space, long *at, const long *values, size_t n, void *stream)
{
    if (space == SHMEM_SPACE_DEFAULT) {
        memcpy(at, values, n * sizeof(long));
        return;
    }
    CHECK(gpu_stream_copy(at, values, n * sizeof(long), stream) == 0, "copy in");
    sync_stream(stream);
}

struct buffers {
    long *src, *dst, *coll, *all;
    uint64_t *sig, *flag;
};

/* Each routine once; space is a GPU space or the default (host) one. */
static void every_routine(shmem_space_t space, void *stream, const char *what)
{
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    struct buffers b = {
        shmem_space_malloc(space, 8 * sizeof(long)),
        shmem_space_malloc(space, 8 * sizeof(long)),
        shmem_space_malloc(space, 8 * sizeof(long)),
        shmem_space_malloc(space, 8 * (size_t)npes * sizeof(long)),
        shmem_space_malloc(space, sizeof(uint64_t)),
        shmem_space_malloc(space, sizeof(uint64_t)),
    };
    static long host[64];
    for (int i = 0; i < 8; i++)
        host[i] = me * 100 + i;
    fill_longs(space, b.src, host, 8, stream);
    fill_longs(space, b.dst, (long[8]){0}, 8, stream);
    fill_longs(space, (long *)b.sig, (long[1]){0}, 1, stream);
    fill_longs(space, (long *)b.flag, (long[1]){0}, 1, stream);
    shmem_barrier_all();

    /* put, then a signal after a quiet: the right neighbour sees the data once it sees 1 */
    shmemx_putmem_nbi_on_stream(b.dst, b.src, 4 * sizeof(long), right, stream);
    shmemx_long_put_on_stream(b.dst + 4, b.src + 4, 2, right, stream);
    shmemx_long_put_nbi_on_stream(b.dst + 6, b.src + 6, 2, right, stream);
    shmemx_quiet_on_stream(stream);
    shmemx_signal_op_on_stream(b.flag, 1, SHMEM_SIGNAL_SET, right, stream);
    shmemx_signal_wait_until_on_stream(b.flag, SHMEM_CMP_EQ, 1, stream);
    shmemx_getmem_on_stream(b.coll, b.dst, 2 * sizeof(long), me, stream);
    shmemx_long_get_nbi_on_stream(b.coll + 2, b.dst + 2, 2, me, stream);
    shmemx_getmem_nbi_on_stream(b.coll + 4, b.dst + 4, 2 * sizeof(long), me, stream);
    shmemx_long_get_on_stream(b.coll + 6, b.dst + 6, 2, me, stream);
    shmemx_quiet_on_stream(stream);
    sync_stream(stream);
    for (int i = 0; i < 8; i++) {
        CHECK_EQ(read_long(space, b.dst + i), left * 100 + i);
        CHECK_EQ(read_long(space, b.coll + i), left * 100 + i);
    }
    shmem_barrier_all();

    /* signals: set, add, put-with-signal add (nbi), and waits of every comparison */
    shmemx_barrier_all_on_stream(stream);
    shmemx_signal_op_on_stream(b.sig, 5, SHMEM_SIGNAL_SET, right, stream);
    shmemx_signal_wait_until_on_stream(b.sig, SHMEM_CMP_EQ, 5, stream);
    shmemx_signal_wait_until_on_stream(b.sig, SHMEM_CMP_NE, 4, stream);
    shmemx_sync_all_on_stream(stream);
    shmemx_signal_op_on_stream(b.sig, 3, SHMEM_SIGNAL_ADD, right, stream);
    shmemx_signal_wait_until_on_stream(b.sig, SHMEM_CMP_GT, 7, stream);
    shmemx_signal_wait_until_on_stream(b.sig, SHMEM_CMP_GE, 8, stream);
    shmemx_putmem_signal_nbi_on_stream(b.dst, b.src, sizeof(long), b.sig, 2, SHMEM_SIGNAL_ADD,
                                       right, stream);
    shmemx_signal_wait_until_on_stream(b.sig, SHMEM_CMP_LE, 10, stream);
    shmemx_signal_wait_until_on_stream(b.sig, SHMEM_CMP_GE, 10, stream);
    shmemx_team_sync_on_stream(SHMEM_TEAM_WORLD, stream);
    shmemx_putmem_signal_on_stream(b.dst + 1, b.src + 1, sizeof(long), b.sig, 1, SHMEM_SIGNAL_SET,
                                   right, stream);
    shmemx_signal_wait_until_on_stream(b.sig, SHMEM_CMP_LT, 2, stream);
    shmemx_barrier_on_stream(SHMEM_TEAM_WORLD, stream);
    sync_stream(stream);
    CHECK_EQ(read_long(space, (long *)b.sig), 1);
    CHECK_EQ(read_long(space, b.dst), left * 100);
    CHECK_EQ(read_long(space, b.dst + 1), left * 100 + 1);
    shmem_barrier_all(); /* the broadcast's root may write dst once it is in */

    /* collectives: broadcast from the last PE, fcollect, alltoall, reductions */
    CHECK_EQ(shmemx_broadcastmem_on_stream(SHMEM_TEAM_WORLD, b.dst, b.src, 8 * sizeof(long),
                                           npes - 1, stream),
             0);
    CHECK_EQ(shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, b.all, b.src, 2 * sizeof(long), stream),
             0);
    sync_stream(stream);
    for (int i = 0; i < 8; i++)
        CHECK_EQ(read_long(space, b.dst + i), (npes - 1) * 100 + i);
    for (int p = 0; p < npes; p++)
        for (int i = 0; i < 2; i++)
            CHECK_EQ(read_long(space, b.all + 2 * p + i), p * 100 + i);
    shmem_barrier_all();
    CHECK_EQ(shmemx_alltoallmem_on_stream(SHMEM_TEAM_WORLD, b.all, b.src, sizeof(long), stream), 0);
    sync_stream(stream);
    for (int p = 0; p < npes; p++)
        CHECK_EQ(read_long(space, b.all + p), p * 100 + me);
    shmem_barrier_all();
    CHECK_EQ(shmemx_long_sum_reduce_on_stream(SHMEM_TEAM_WORLD, b.coll, b.src, 8, stream), 0);
    CHECK_EQ(shmemx_long_max_reduce_on_stream(SHMEM_TEAM_WORLD, b.dst, b.src, 8, stream), 0);
    sync_stream(stream);
    for (int i = 0; i < 8; i++) {
        CHECK_EQ(read_long(space, b.coll + i), 100L * npes * (npes - 1) / 2 + (long)npes * i);
        CHECK_EQ(read_long(space, b.dst + i), (npes - 1) * 100 + i);
    }
    shmem_barrier_all();
    CHECK_EQ(shmemx_long_min_reduce_on_stream(SHMEM_TEAM_WORLD, b.coll, b.src, 8, stream), 0);
    CHECK_EQ(shmemx_ulong_or_reduce_on_stream(SHMEM_TEAM_WORLD, (unsigned long *)b.dst,
                                              (const unsigned long *)b.src, 1, stream),
             0);
    CHECK_EQ(shmemx_long_prod_reduce_on_stream(SHMEM_TEAM_WORLD, b.dst + 1, b.src + 1, 1, stream),
             0);
    sync_stream(stream);
    long or = 0, prod = 1;
    for (int p = 0; p < npes; p++) {
        or |= p * 100;
        prod *= p * 100 + 1;
    }
    for (int i = 0; i < 8; i++)
        CHECK_EQ(read_long(space, b.coll + i), i);
    CHECK_EQ(read_long(space, b.dst), or);
    CHECK_EQ(read_long(space, b.dst + 1), prod);
    if (check_failures)
        fprintf(stderr, "PE %d: the failures above are of %s\n", me, what);
    shmem_barrier_all();
    shmem_space_free(space, b.flag);
    shmem_space_free(space, b.sig);
    shmem_space_free(space, b.all);
    shmem_space_free(space, b.coll);
    shmem_space_free(space, b.dst);
    shmem_space_free(space, b.src);
}

/* PE 0's barrier on its stream holds back the write after it while the others have not come. */
static void barrier_holds(shmem_space_t space, void *stream)
{
    uint32_t *marker = shmem_space_malloc(space, sizeof(uint32_t));
    gpu_runtime_fill(marker, 0, sizeof(*marker));
    shmem_barrier_all();
    if (me == 0) {
        shmemx_barrier_all_on_stream(stream);
        CHECK(gpu_stream_set32(marker, 1, 1, stream) == 0, "kernel after the barrier");
        usleep(100000);
        uint32_t seen;
        read_words(&seen, marker, sizeof(seen));
        CHECK(npes == 1 || seen == 0, "the stream went past its barrier before PE 1 came (%u)",
              seen);
        sync_stream(stream);
        read_words(&seen, marker, sizeof(seen));
        CHECK_EQ(seen, 1);
    } else {
        usleep(400000);
        shmemx_barrier_all_on_stream(stream);
        sync_stream(stream);
    }
    shmem_barrier_all();
    shmem_space_free(space, marker);
}

/* A halo exchange captured once and launched REPLAYS times. */
static void captured_halo(shmem_space_t space, void *stream)
{
    long *value = shmem_space_malloc(space, sizeof(long));
    long *halo = shmem_space_malloc(space, sizeof(long));
    uint64_t *sig = shmem_space_malloc(space, sizeof(uint64_t));
    long start = me * 10 + 7;
    int right = (me + 1) % npes;
    fill_longs(space, value, &start, 1, stream);
    fill_longs(space, (long *)sig, (long[1]){0}, 1, stream);
    shmem_barrier_all();
    void *graph = NULL, *exec = NULL;
    CHECK(gpu_stream_capture_begin(stream) == 0, "capture begin");
    shmemx_putmem_signal_on_stream(halo, value, sizeof(long), sig, 1, SHMEM_SIGNAL_SET, right,
                                   stream);
    shmemx_signal_wait_until_on_stream(sig, SHMEM_CMP_EQ, 1, stream);
    shmemx_signal_op_on_stream(sig, 0, SHMEM_SIGNAL_SET, me, stream);
    CHECK(gpu_stream_copy(value, halo, sizeof(long), stream) == 0, "kernel: take the halo");
    shmemx_barrier_all_on_stream(stream);
    CHECK(gpu_stream_capture_end(stream, &graph) == 0 && graph, "capture end");
    CHECK(gpu_graph_instantiate(&exec, graph) == 0 && exec, "graph instantiate");
    for (int i = 0; i < REPLAYS && exec; i++)
        CHECK(gpu_graph_launch(exec, stream) == 0, "graph launch %d", i);
    sync_stream(stream);
    int from = ((me - REPLAYS) % npes + npes) % npes;
    CHECK_EQ(read_long(space, value), from * 10 + 7);
    shmem_barrier_all();
    shmem_space_free(space, sig);
    shmem_space_free(space, halo);
    shmem_space_free(space, value);
}

/* One mistake (see the top); returns only where the library missed it. */
static void mistake(const char *what, shmem_space_t space, void *anchor, void *stream)
{
    long *sym = shmem_space_malloc(space, 8 * sizeof(long));
    long *private_buffer = malloc(8 * sizeof(long));
    if (!strcmp(what, "destroyed")) {
        gpu_stream_destroy(stream);
        shmemx_putmem_on_stream(sym, anchor, 8, 0, stream);
    } else if (!strcmp(what, "context")) {
        void *other = NULL;
        gpu_runtime_choose(gpu_runtime_is_hip() ? 1 : 0, 1);
        gpu_stream_create(&other);
        shmemx_putmem_on_stream(sym, anchor, 8, 0, other);
    } else if (!strcmp(what, "sig_op")) {
        shmemx_signal_op_on_stream((uint64_t *)sym, 1, 7, 0, stream);
    } else if (!strcmp(what, "root")) {
        shmemx_broadcastmem_on_stream(SHMEM_TEAM_WORLD, sym, sym + 4, 8, npes + 3, stream);
    } else if (!strcmp(what, "private")) {
        shmemx_fcollectmem_on_stream(SHMEM_TEAM_WORLD, private_buffer, sym, 8, stream);
    }
    gpu_stream_sync(stream);
}

int main(int argc, char **argv)
{
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, NULL);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    const char *error = argc > 2 && !strcmp(argv[1], "error") ? argv[2] : NULL;
    if (error && !strcmp(error, "noruntime")) {
        shmemx_quiet_on_stream(NULL);
        shmem_finalize();
        return 0;
    }
    shmem_space_config_t config = {gpu_runtime_type(), (size_t)8 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    shmem_team_t team;
    CHECK(shmem_space_create(&config, &space, &team) == 0, "a GPU space");
    void *anchor = shmem_space_malloc(space, 64);
    void *stream = stream_new(anchor);
    if (error) {
        mistake(error, space, anchor, stream);
        shmem_finalize();
        return 0;
    }
    pipeline(space, stream);
    every_routine(space, stream, "the GPU space");
    every_routine(SHMEM_SPACE_DEFAULT, stream, "the host space");
    barrier_holds(space, stream);
    captured_halo(space, stream);
    CHECK(gpu_stream_destroy(stream) == 0, "stream destroy");
    shmem_space_free(space, anchor);
    shmem_team_destroy(team);
    shmem_space_destroy(space);
    shmem_finalize();
    return check_finish();
}
