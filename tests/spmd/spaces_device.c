/* SPDX-License-Identifier: BSD-3-Clause */
/* A device space on the PEs SHMEM_TEST_DEVICE_PES names (the test device kind stands in for a
 * GPU), or on those STRATA_TEST_GPU_PES names where the PEs have GPUs (real ones, or the CUDA
 * driver's test double): membership and team, truthful caps, RMA between members and from host
 * memory, device to device, put-with-signal and waits on device words, contended atomics performed
 * by their owner, a reduction on device buffers, and ordering on a context made before any device
 * space. Device memory is never loaded or stored here: every value is read back with shmem_get. */
#include "check.h"
#include "gpu_runtime.h"

#include <stdint.h>
#include <string.h>

enum { N = 1000 };

static long busy_flag;  /* host memory: rank 0 waits on it without calling the library */
static long host_in[N]; /* host memory that node peers load and store */
static uint64_t host_signal;

/* Whether world PE pe has a device: listed in SHMEM_TEST_DEVICE_PES, or given one by
 * SHMEM_DEVICE_MAP, or else listed in STRATA_TEST_GPU_PES ("0,2" or ranges "1-3"). */
static int test_device(void)
{
    const char *list = getenv("SHMEM_TEST_DEVICE_PES");
    return list && *list;
}

/* SHMEM_DEVICE_MAP names a device or "-" per local rank: PE pe's local rank is the number of PEs
 * before it on its node, as the launcher placed them. */
static int mapped(const char *map, int pe)
{
    int local_rank = 0;
    for (int q = 0; q < pe; q++)
        local_rank += check_node_of(q) == check_node_of(pe);
    for (; local_rank > 0 && map; local_rank--) {
        map = strchr(map, ',');
        map = map ? map + 1 : NULL;
    }
    return map && *map && *map != '-' && *map != ',';
}

static int listed(int pe)
{
    const char *map = getenv("SHMEM_DEVICE_MAP");
    if (map && *map && !test_device())
        return mapped(map, pe);
    const char *list = getenv("SHMEM_TEST_DEVICE_PES");
    if (!list || !*list)
        list = getenv("STRATA_TEST_GPU_PES");
    while (list && *list) {
        char *end;
        long first = strtol(list, &end, 10), last = first;
        if (*end == '-')
            last = strtol(end + 1, &end, 10);
        if (pe >= first && pe <= last)
            return 1;
        list = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static void check_membership(shmem_space_t space, shmem_team_t team, int expected_size)
{
    int me = shmem_my_pe();
    if (!listed(me)) {
        CHECK(space == SHMEM_SPACE_INVALID && team == SHMEM_TEAM_INVALID,
              "PE %d has no device: invalid handles", me);
        return;
    }
    CHECK(space != SHMEM_SPACE_INVALID && team != SHMEM_TEAM_INVALID, "member handles");
    CHECK_EQ(shmem_team_n_pes(team), expected_size);
    int rank = 0;
    for (int pe = 0; pe < me; pe++)
        rank += listed(pe);
    CHECK_EQ(shmem_team_my_pe(team), rank);
    shmem_device_type_t type;
    CHECK(shmem_space_get_device_type(space, &type) == 0 && type == SHMEM_DEVICE_GPU, "GPU");
    shmem_team_t of_space;
    CHECK(shmem_space_get_team(space, &of_space) == 0 && of_space == team, "space team");
    shmem_space_t of_team;
    CHECK(shmem_team_get_space(team, &of_team) == 0 && of_team == space, "team's space");
}

static void check_caps(shmem_space_t space, shmem_team_t team, int *bases_same)
{
    shmem_space_cap_t caps = 0;
    CHECK(shmem_space_get_caps(space, &caps) == 0, "caps");
    shmem_space_cap_t must =
        SHMEM_SPACE_CAP_RMA | SHMEM_SPACE_CAP_COLLECTIVES | SHMEM_SPACE_CAP_ATOMICS;
    CHECK((caps & must) == must, "RMA, collectives, atomics: 0x%llx", (unsigned long long)caps);
    CHECK(!(caps & SHMEM_SPACE_CAP_DIRECT_ACCESS), "device memory is not load/store");
    CHECK(!!(caps & SHMEM_SPACE_CAP_WORLD_ACCESS) == (shmem_team_n_pes(team) == shmem_n_pes()),
          "WORLD_ACCESS iff every PE is a member");
    *bases_same = !!(caps & SHMEM_SPACE_CAP_IDENT_ADDR);
}

/* The legacy active-set forms on device buffers, when the members form an active set (a start
 * and a power-of-two stride). */
static void check_active_set(shmem_team_t team, long *dev, long *dev2, long *host, int rank,
                             int size)
{
    static long psync[SHMEM_REDUCE_SYNC_SIZE], pwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
    int first = -1, second = -1, n = shmem_n_pes();
    for (int pe = 0; pe < n; pe++)
        if (listed(pe)) {
            if (first < 0)
                first = pe;
            else if (second < 0)
                second = pe;
        }
    int stride = size > 1 ? second - first : 1, log_stride = 0;
    while ((1 << log_stride) < stride)
        log_stride++;
    if ((1 << log_stride) != stride || first + (size - 1) * stride >= n)
        return;
    for (int pe = first, k = 0; k < size; k++, pe += stride)
        if (!listed(pe))
            return;
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    shmem_team_sync(team); /* every member's pSync is initialized */
    for (int i = 0; i < 8; i++)
        host[i] = rank * 10 + i;
    shmem_long_put(dev, host, 8, shmem_my_pe());
    shmem_quiet();
    shmem_long_sum_to_all(dev2, dev, 8, first, log_stride, size, pwrk, psync);
    shmem_long_get(host, dev2, 8, shmem_my_pe());
    CHECK(host[3] == 10L * size * (size - 1) / 2 + 3L * size, "legacy sum on device: %ld", host[3]);
    shmem_broadcast64(dev2, dev, 8, size - 1, first, log_stride, size, psync);
    shmem_long_get(host, dev2, 8, shmem_my_pe());
    if (rank != size - 1)
        CHECK(host[2] == (size - 1) * 10L + 2, "legacy broadcast on device: %ld", host[2]);
}

/* A context made before the first device space (so before the transport started) orders its
 * device puts like any other: after ctx_fence, ctx_pe_quiet or a put-with-signal on it, a flag in
 * host memory (a plain store on the node) must never be seen before the data. */
static void check_early_context(shmem_ctx_t ctx, long *dev, uint64_t *flags, int right, int left)
{
    enum { ROUNDS = 200, WORDS = 64 };
    long data[WORDS], seen[WORDS];
    int me = shmem_my_pe();
    long stale = 0;
    for (long round = 1; round <= ROUNDS; round++) {
        for (int i = 0; i < WORDS; i++)
            data[i] = round * 1000 + i;
        int how = (int)(round % 3);
        if (how == 2) {
            shmem_ctx_long_put_signal(ctx, dev, data, WORDS, &flags[0], (uint64_t)round,
                                      SHMEM_SIGNAL_SET, right);
        } else {
            shmem_ctx_long_put(ctx, dev, data, WORDS, right);
            if (how == 0)
                shmem_ctx_fence(ctx);
            else
                shmem_ctx_pe_quiet(ctx, &right, 1);
            shmem_ctx_uint64_p(ctx, &flags[0], (uint64_t)round, right);
        }
        shmem_uint64_wait_until(&flags[0], SHMEM_CMP_GE, (uint64_t)round);
        shmem_long_get(seen, dev, WORDS, me);
        stale += seen[0] != round * 1000 || seen[WORDS - 1] != round * 1000 + WORDS - 1;
        /* the left neighbour may write again once this round is read */
        shmem_ctx_uint64_p(ctx, &flags[1], (uint64_t)round, left);
        shmem_uint64_wait_until(&flags[1], SHMEM_CMP_GE, (uint64_t)round);
    }
    CHECK(stale == 0,
          "context made before the transport: %ld of %d rounds saw the flag before "
          "the device data",
          stale, ROUNDS);
}

/* Sum, min and max of int, long, float and double on device buffers (which a GPU kind combines
 * on the device), a product (which it leaves to the host), an in-place sum and both scans: every
 * value of every member's result checked. Element i of rank r is (r + 1) * (i % 7 + 1) - 3 * r,
 * so min and max come from different ranks for different elements. */
#define REDUCE_N 1000
#define CHECK_DEVICE_REDUCTIONS(T, NAME, FMT)                                                      \
    static void check_reductions_##NAME(shmem_space_t space, shmem_team_t team, int rank,          \
                                        int size)                                                  \
    {                                                                                              \
        T *src = shmem_space_malloc(space, REDUCE_N * sizeof(T));                                  \
        T *dst = shmem_space_malloc(space, REDUCE_N * sizeof(T));                                  \
        static T host[REDUCE_N], got[REDUCE_N];                                                    \
        for (int i = 0; i < REDUCE_N; i++)                                                         \
            host[i] = (T)((rank + 1) * (i % 7 + 1) - 3 * rank);                                    \
        shmem_putmem(src, host, sizeof(host), shmem_my_pe());                                      \
        shmem_quiet();                                                                             \
        for (int op = 0; op < 6; op++) {                                                           \
            T *out = op == 4 ? src : dst;                                                          \
            if (op == 0)                                                                           \
                shmem_##NAME##_sum_reduce(team, out, src, REDUCE_N);                               \
            else if (op == 1)                                                                      \
                shmem_##NAME##_min_reduce(team, out, src, REDUCE_N);                               \
            else if (op == 2)                                                                      \
                shmem_##NAME##_max_reduce(team, out, src, REDUCE_N);                               \
            else if (op == 3)                                                                      \
                shmem_##NAME##_prod_reduce(team, out, src, REDUCE_N);                              \
            else if (op == 4)                                                                      \
                shmem_##NAME##_sum_reduce(team, out, src, REDUCE_N);                               \
            else                                                                                   \
                shmem_##NAME##_sum_inscan(team, out, src, REDUCE_N);                               \
            shmem_getmem(got, out, sizeof(got), shmem_my_pe());                                    \
            long wrong = 0, first = -1;                                                            \
            for (int i = 0; i < REDUCE_N; i++) {                                                   \
                T want = op == 3 ? (T)1 : (T)0;                                                    \
                int upto = op == 5 ? rank : size - 1;                                              \
                for (int r = 0; r <= upto; r++) {                                                  \
                    T v = (T)((r + 1) * (i % 7 + 1) - 3 * r);                                      \
                    if (op == 1)                                                                   \
                        want = r == 0 || v < want ? v : want;                                      \
                    else if (op == 2)                                                              \
                        want = r == 0 || v > want ? v : want;                                      \
                    else if (op == 3)                                                              \
                        want *= v;                                                                 \
                    else                                                                           \
                        want += v;                                                                 \
                }                                                                                  \
                if (got[i] != want && wrong++ == 0)                                                \
                    first = i;                                                                     \
            }                                                                                      \
            CHECK(wrong == 0, #NAME " reduction %d: %ld wrong, first [%ld] = " FMT, op, wrong,     \
                  first, first >= 0 ? got[first] : (T)0);                                          \
            if (op == 4) { /* src now holds the sum: back to this rank's values */                 \
                shmem_team_sync(team);                                                             \
                shmem_putmem(src, host, sizeof(host), shmem_my_pe());                              \
                shmem_quiet();                                                                     \
                shmem_team_sync(team);                                                             \
            }                                                                                      \
        }                                                                                          \
        shmem_space_free(space, dst);                                                              \
        shmem_space_free(space, src);                                                              \
    }
CHECK_DEVICE_REDUCTIONS(int, int, "%d")
CHECK_DEVICE_REDUCTIONS(long, long, "%ld")
CHECK_DEVICE_REDUCTIONS(float, float, "%g")
CHECK_DEVICE_REDUCTIONS(double, double, "%g")

/* Many small puts to the right neighbour's device memory, then one quiet: 8-byte words (more of
 * them than a GPU kind batches at once) and 3-byte pieces at odd addresses, every one checked on
 * arrival. A GPU kind queues such writes and applies them together. */
static void check_small_puts(shmem_space_t space, shmem_team_t team, int right, int left)
{
    enum { WORDS = 5000, PIECES = 300 };
    long *words = shmem_space_malloc(space, WORDS * sizeof(long));
    char *bytes = shmem_space_malloc(space, 4 * PIECES + 8);
    int me = shmem_my_pe();
    for (long i = 0, p = 0; i < WORDS; i++) { /* the pieces between the words */
        long value = me * 1000000L + i;
        shmem_long_put_nbi(&words[i], &value, 1, right);
        if (i % 16 == 0 && p < PIECES) {
            char piece[3] = {(char)me, (char)p, (char)(p >> 8)};
            shmem_putmem_nbi(bytes + 4 * p + 1, piece, 3, right);
            p++;
        }
    }
    shmem_quiet();
    shmem_team_sync(team);
    long *seen = malloc(WORDS * sizeof(long)), wrong = 0;
    char got[4 * PIECES + 8];
    shmem_getmem(seen, words, WORDS * sizeof(long), me);
    shmem_getmem(got, bytes, sizeof(got), me);
    for (long i = 0; i < WORDS; i++)
        wrong += seen[i] != left * 1000000L + i;
    for (int i = 0; i < PIECES; i++)
        wrong += got[4 * i + 1] != (char)left || got[4 * i + 2] != (char)i ||
                 got[4 * i + 3] != (char)(i >> 8);
    CHECK(wrong == 0, "%ld of %d small puts from PE %d wrong", wrong, WORDS + PIECES, left);
    free(seen);
    shmem_team_sync(team);
    shmem_space_free(space, bytes);
    shmem_space_free(space, words);
}

/* One writer: the team's rank 0 puts into its right neighbour's device memory, quiets and raises
 * a host flag; the neighbour must see the data. With traffic one way, nothing the reader does can
 * land the writer's copies for it: the quiet must. */
static void check_put_quiet_flag(long *dev, uint64_t *flags, int rank, int right, int left)
{
    enum { ROUNDS = 100 };
    long stale = 0;
    for (long round = 1; round <= ROUNDS; round++) {
        if (rank == 0) {
            shmem_long_put(dev + 1, &round, 1, right);
            shmem_quiet();
            shmem_uint64_p(&flags[0], (uint64_t)round, right);
            shmem_uint64_wait_until(&flags[1], SHMEM_CMP_GE, (uint64_t)round);
        } else if (rank == 1) {
            long seen;
            shmem_uint64_wait_until(&flags[0], SHMEM_CMP_GE, (uint64_t)round);
            shmem_long_get(&seen, dev + 1, 1, shmem_my_pe());
            stale += seen != round;
            shmem_uint64_p(&flags[1], (uint64_t)round, left);
        }
    }
    CHECK(stale == 0, "%ld of %d rounds saw the flag before the device data", stale, ROUNDS);
}

int main(void)
{
    shmem_init();
    shmem_ctx_t early_ctx;
    CHECK(shmem_ctx_create(0, &early_ctx) == 0, "context before any device space");
    int me = shmem_my_pe(), n = shmem_n_pes(), members = 0;
    for (int pe = 0; pe < n; pe++)
        members += listed(pe);
    shmem_space_config_t config = {SHMEM_DEVICE_GPU, 1 << 22, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space = (shmem_space_t)&config;
    shmem_team_t team = SHMEM_TEAM_WORLD;
    int rc = shmem_space_create(&config, &space, &team);
    CHECK(members ? rc == 0 : rc != 0, "create returns %d with %d members", rc, members);
    check_membership(space, team, members);

    /* Host-side scratch in the default space: every PE, member or not, has it. */
    uintptr_t *bases = shmem_calloc((size_t)n, sizeof(uintptr_t));
    uint64_t *flags = shmem_calloc(2, sizeof(uint64_t));
    if (space != SHMEM_SPACE_INVALID) {
        int rank = shmem_team_my_pe(team), size = shmem_team_n_pes(team);
        int right = shmem_team_translate_pe(team, (rank + 1) % size, SHMEM_TEAM_WORLD);
        int left = shmem_team_translate_pe(team, (rank + size - 1) % size, SHMEM_TEAM_WORLD);
        int same;
        check_caps(space, team, &same);

        long *dev = shmem_space_calloc(space, N, sizeof(long));
        long *dev2 = shmem_space_malloc(space, N * sizeof(long));
        uint64_t *sig = shmem_space_calloc(space, 1, sizeof(uint64_t));
        long *counter = shmem_space_calloc(space, 1, sizeof(long));
        CHECK(dev && dev2 && sig && counter, "device allocations");
        if (test_device())
            CHECK(shmem_ptr(dev, me) == NULL, "no pointer to test device memory");
        else /* a device pointer, for the program's kernels; node peers' where they are mapped,
              * which a double's devices without peer access are not */
            CHECK(shmem_ptr(dev, me) == dev &&
                      (!check_node_direct() ||
                       !!shmem_ptr(dev, right) ==
                           (check_same_node(right) && !gpu_runtime_devices_apart())),
                  "device pointers to GPU heaps: %p, PE %d: %p", shmem_ptr(dev, me), right,
                  shmem_ptr(dev, right));
        shmem_space_t owner;
        CHECK(shmem_get_space(dev + 10, &owner) == 0 && owner == space, "pointer -> space");

        /* IDENT_ADDR tells the truth about the members' addresses */
        uintptr_t mine = (uintptr_t)dev;
        for (int r = 0; r < size; r++)
            shmem_putmem(&bases[rank], &mine, sizeof(mine),
                         shmem_team_translate_pe(team, r, SHMEM_TEAM_WORLD));
        shmem_quiet();
        shmem_team_sync(team);
        int all_same = 1;
        for (int r = 0; r < size; r++)
            all_same &= bases[r] == mine;
        CHECK(same == all_same, "IDENT_ADDR %d, addresses equal %d", same, all_same);
        if (getenv("STRATA_TEST_IDENT_ADDR")) /* the kind places heaps where asked */
            CHECK(same, "IDENT_ADDR expected: heaps at %#lx here", (unsigned long)mine);

        /* calloc zeroed the device memory */
        long host[N];
        shmem_long_get(host, dev, N, me);
        CHECK(host[0] == 0 && host[N - 1] == 0, "calloc zeroes device memory");
        shmem_team_sync(team); /* every member has looked before anyone writes */

        /* host -> device on the right, then device -> device back to the left */
        for (int i = 0; i < N; i++)
            host[i] = me * 100000L + i;
        shmem_long_put(dev, host, N, right);
        shmem_quiet();
        shmem_team_sync(team);
        shmem_long_get(host, dev, N, me);
        CHECK(host[0] == left * 100000L && host[N - 1] == left * 100000L + N - 1,
              "device received %ld..%ld from PE %d", host[0], host[N - 1], left);
        shmem_long_put(dev2, dev, N, left); /* source in device memory too */
        shmem_quiet();
        shmem_team_sync(team);
        shmem_long_get(host, dev2, N, me);
        CHECK(host[7] == me * 100000L + 7, "device to device: %ld", host[7]);
        CHECK_EQ(shmem_long_g(&dev2[N - 1], right), right * 100000L + N - 1);

        /* device -> host static data on the right (a target the CPU may store to, a source it
         * may not), with a signal; and back from there into device memory */
        shmem_long_put_signal(host_in, dev2, N, &host_signal, 1, SHMEM_SIGNAL_ADD, right);
        shmem_uint64_wait_until(&host_signal, SHMEM_CMP_EQ, 1);
        CHECK(host_in[0] == left * 100000L && host_in[N - 1] == left * 100000L + N - 1,
              "host data from a device source: %ld..%ld", host_in[0], host_in[N - 1]);
        shmem_team_sync(team);
        shmem_long_get(dev2, host_in, N, right);
        shmem_long_get(host, dev2, N, me);
        CHECK(host[0] == me * 100000L && host[N - 1] == me * 100000L + N - 1,
              "device data from host memory: %ld..%ld", host[0], host[N - 1]);
        shmem_team_sync(team);

        /* put-with-signal into device memory, waited for on the device word */
        long payload[4] = {me, me + 1, me + 2, me + 3};
        shmem_long_put_signal(dev, payload, 4, sig, 1, SHMEM_SIGNAL_ADD, right);
        shmem_uint64_wait_until(sig, SHMEM_CMP_EQ, 1);
        CHECK_EQ(shmem_signal_fetch(sig), 1);
        shmem_long_get(host, dev, 4, me);
        CHECK(host[0] == left && host[3] == left + 3, "signalled data %ld %ld", host[0], host[3]);

        /* contended atomics on rank 0's device word, performed by its owner */
        int root = shmem_team_translate_pe(team, 0, SHMEM_TEAM_WORLD);
        for (int i = 0; i < 200; i++)
            shmem_long_atomic_fetch_add(counter, 1, root);
        for (int i = 0; i < 50; i++) {
            long seen = shmem_long_atomic_fetch(counter, root), swapped;
            while ((swapped = shmem_long_atomic_compare_swap(counter, seen, seen + 2, root)) !=
                   seen)
                seen = swapped;
        }
        shmem_long_atomic_add(counter, 0, root);
        shmem_team_sync(team);
        CHECK_EQ(shmem_long_atomic_fetch(counter, root), 300L * size);

        /* A target busy in user code still answers: rank 0 spins on a host flag without calling
         * the library while the others update its device word; its progress thread serves
         * them, and each one counts itself done on the flag. */
        const char *thread_knob = getenv("SHMEM_PROGRESS_THREAD");
        if (size > 1 && !(thread_knob && !strcmp(thread_knob, "0"))) {
            shmem_team_sync(team);
            if (rank == 0) {
                double deadline = check_now_s() + 20;
                while (__atomic_load_n(&busy_flag, __ATOMIC_ACQUIRE) < size - 1 &&
                       check_now_s() < deadline)
                    ;
                CHECK(busy_flag == size - 1, "atomics served while busy: flag %ld", busy_flag);
            } else {
                for (int i = 0; i < 100; i++)
                    shmem_long_atomic_add(counter, 1, root);
                shmem_long_atomic_add(&busy_flag, 1, root);
            }
            shmem_team_sync(team);
            CHECK_EQ(shmem_long_atomic_fetch(counter, root), 300L * size + 100L * (size - 1));
        }

        /* a reduction and a broadcast on device buffers */
        for (int i = 0; i < N; i++)
            host[i] = rank + i;
        shmem_long_put(dev, host, N, me);
        shmem_quiet();
        shmem_long_sum_reduce(team, dev2, dev, N);
        shmem_long_get(host, dev2, N, me);
        long ranks_sum = (long)size * (size - 1) / 2;
        CHECK(host[0] == ranks_sum && host[N - 1] == ranks_sum + (long)(N - 1) * size,
              "device reduction: %ld %ld", host[0], host[N - 1]);
        shmem_long_broadcast(team, dev, dev2, N, size - 1);
        shmem_long_get(host, dev, N, me);
        CHECK_EQ(host[5], ranks_sum + 5L * size);

        check_active_set(team, dev, dev2, host, rank, size);
        check_small_puts(space, team, right, left);
        check_reductions_int(space, team, rank, size);
        check_reductions_long(space, team, rank, size);
        check_reductions_float(space, team, rank, size);
        check_reductions_double(space, team, rank, size);

        shmem_team_sync(team);
        check_early_context(early_ctx, dev, flags, right, left);
        shmem_team_sync(team);
        flags[0] = flags[1] = 0; /* nobody writes them until the next sync */
        shmem_team_sync(team);
        if (size > 1)
            check_put_quiet_flag(dev, flags, rank, right, left);
        shmem_team_sync(team);

        shmem_space_free(space, counter);
        shmem_space_free(space, sig);
        shmem_space_free(space, dev2);
        shmem_space_free(space, dev);
        /* calloc zeroes memory that held data: the block dev had comes back */
        long *again = shmem_space_calloc(space, N, sizeof(long));
        CHECK(again != NULL, "calloc after free");
        if (again) {
            shmem_long_get(host, again, N, me);
            long nonzero = 0;
            for (int i = 0; i < N; i++)
                nonzero += host[i] != 0;
            CHECK(nonzero == 0, "calloc of reused device memory: %ld words not zero", nonzero);
            shmem_space_free(space, again);
        }
        shmem_team_destroy(team);
        CHECK_EQ(shmem_space_destroy(space), 0);
    }
    shmem_free(flags);
    shmem_free(bases);
    shmem_ctx_destroy(early_ctx);
    return check_finish();
}
