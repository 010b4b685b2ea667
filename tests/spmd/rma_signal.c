/* 1.6 section 9.8: put-with-signal delivers the data before the signal; signal_add accumulates
 * exactly; signal_set replaces; signal_fetch reads. Sized, mem, context and nbi forms. */
#include "check.h"

#include <string.h>

#define N 100

static uint64_t sig;
static uint64_t counter;

/* Spins on a local signal word: a local read needs no progress from this PE. */
static void wait_signal_at_least(uint64_t value)
{
    while (shmem_signal_fetch(&sig) < value)
        ;
}

#define TEST_TYPE(T, NAME, ...)                                                                    \
    static void test_##NAME(int me, int n)                                                         \
    {                                                                                              \
        T *dest = shmem_calloc(N, sizeof(T)), *src = malloc(N * sizeof(T));                        \
        int right = (me + 1) % n, left = (me + n - 1) % n;                                         \
        for (int i = 0; i < N; i++)                                                                \
            src[i] = (T)(me + i % 50 + 1);                                                         \
        sig = 0;                                                                                   \
        shmem_barrier_all();                                                                       \
        shmem_##NAME##_put_signal(dest, src, N, &sig, 1, SHMEM_SIGNAL_SET, right);                 \
        wait_signal_at_least(1);                                                                   \
        for (int i = 0; i < N; i++)                                                                \
            CHECK(dest[i] == (T)(left + i % 50 + 1), #NAME "_put_signal data [%d]", i);            \
        shmem_barrier_all();                                                                       \
        shmem_ctx_##NAME##_put_signal_nbi(SHMEM_CTX_DEFAULT, dest, src, N / 2, &sig, 2,            \
                                          SHMEM_SIGNAL_ADD, left);                                 \
        shmem_quiet();                                                                             \
        wait_signal_at_least(3);                                                                   \
        CHECK(shmem_signal_fetch(&sig) == 3, #NAME ": set 1 then add 2 gives 3");                  \
        for (int i = 0; i < N / 2; i++)                                                            \
            CHECK(dest[i] == (T)(right + i % 50 + 1), #NAME "_put_signal_nbi data [%d]", i);       \
        shmem_barrier_all();                                                                       \
        free(src);                                                                                 \
        shmem_free(dest);                                                                          \
    }
STRATA_RMA_TYPES(TEST_TYPE)

static void test_untyped(int me, int n)
{
    enum { BYTES = 1 << 16 };
    unsigned char *dest = shmem_calloc(1, BYTES), *src = malloc(BYTES);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < BYTES; i++)
        src[i] = (unsigned char)(me + i);
    sig = 0;
    shmem_barrier_all();
    shmem_putmem_signal(dest, src, BYTES, &sig, 5, SHMEM_SIGNAL_SET, right);
    wait_signal_at_least(5);
    size_t bad = 0;
    for (int i = 0; i < BYTES; i++)
        bad += dest[i] != (unsigned char)(left + i);
    CHECK(bad == 0, "putmem_signal: %zu wrong bytes of %d", bad, BYTES);
    shmem_barrier_all();
    shmem_put64_signal_nbi(dest, src, 8, &sig, 1, SHMEM_SIGNAL_ADD, right);
    shmem_ctx_put32_signal(SHMEM_CTX_DEFAULT, dest + 64, src + 64, 4, &sig, 1, SHMEM_SIGNAL_ADD,
                           right);
    shmem_quiet();
    wait_signal_at_least(7);
    bad = 0;
    for (int i = 0; i < 80; i++)
        bad += dest[i] != (unsigned char)(left + i);
    CHECK(bad == 0, "put64_signal_nbi/put32_signal: %zu wrong bytes", bad);
    shmem_barrier_all();
    free(src);
    shmem_free(dest);
}

/* Every PE adds its (rank+1) 10 times to PE 0's counter: n(n+1)/2 * 10 exactly. */
static void test_signal_add_set(int me, int n)
{
    counter = 0;
    shmem_barrier_all();
    for (int k = 0; k < 10; k++) {
        if (k % 2)
            shmem_signal_add(&counter, (uint64_t)me + 1, 0);
        else
            shmem_ctx_signal_add(SHMEM_CTX_DEFAULT, &counter, (uint64_t)me + 1, 0);
    }
    shmem_barrier_all();
    if (me == 0)
        CHECK_EQ(shmem_signal_fetch(&counter), (uint64_t)n * (n + 1) / 2 * 10);
    shmem_barrier_all();
    shmem_signal_set(&counter, 1000 + (uint64_t)me, (me + 1) % n);
    shmem_barrier_all();
    CHECK_EQ(shmem_signal_fetch(&counter), 1000 + (me + n - 1) % n);
    shmem_barrier_all();
    shmem_ctx_signal_set(SHMEM_CTX_DEFAULT, &counter, 7, me);
    shmem_quiet();
    CHECK_EQ(shmem_signal_fetch(&counter), 7);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
#define RUN_TYPE(T, NAME, ...) test_##NAME(me, n);
    STRATA_RMA_TYPES(RUN_TYPE)
    test_untyped(me, n);
    test_signal_add_set(me, n);
    return check_finish();
}
