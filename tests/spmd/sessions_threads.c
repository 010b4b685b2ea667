/* Batch sessions from several threads at once (SHMEM_THREAD_MULTIPLE): each thread XORs its own
 * pseudo-random stream into a table spread over the PEs on a context of its own, private or
 * shareable, inside a batch session, and ends it with a stop and a quiet; every PE then checks
 * its part of the table against a replay of every thread's stream of every PE. */
#include "check.h"

#include <pthread.h>
#include <stdint.h>

enum { THREADS = 4, UPDATES = 5000, TABLE_WORDS = 256 };

static uint64_t *table;
static int me, n;

static uint64_t seed_of(int pe, int thread)
{
    return 0x9e3779b97f4a7c15ull * (uint64_t)(pe * THREADS + thread + 1);
}

static uint64_t next_value(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state;
}

static int target_of(uint64_t value)
{
    return (int)((value >> 33) % (uint64_t)n);
}

static int word_of(uint64_t value)
{
    return (int)((value >> 17) % TABLE_WORDS);
}

/* Odd threads take a private context, even ones a shareable one. */
static void *xor_stream(void *arg)
{
    int thread = (int)(intptr_t)arg;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(thread & 1 ? SHMEM_CTX_PRIVATE : 0, &ctx)) {
        CHECK(0, "thread %d: no context", thread);
        return NULL;
    }
    shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    uint64_t state = seed_of(me, thread);
    for (int i = 0; i < UPDATES; i++) {
        uint64_t value = next_value(&state);
        shmem_ctx_uint64_atomic_xor(ctx, &table[word_of(value)], value, target_of(value));
    }
    shmem_ctx_session_stop(ctx);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    return NULL;
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    me = shmem_my_pe();
    n = shmem_n_pes();
    CHECK_EQ(provided, SHMEM_THREAD_MULTIPLE);
    table = shmem_calloc(TABLE_WORDS, sizeof(uint64_t));
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK_EQ(pthread_create(&threads[t], NULL, xor_stream, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    shmem_barrier_all();

    uint64_t expected[TABLE_WORDS] = {0};
    for (int pe = 0; pe < n; pe++)
        for (int t = 0; t < THREADS; t++) {
            uint64_t state = seed_of(pe, t);
            for (int i = 0; i < UPDATES; i++) {
                uint64_t value = next_value(&state);
                if (target_of(value) == me)
                    expected[word_of(value)] ^= value;
            }
        }
    int wrong = 0;
    for (int w = 0; w < TABLE_WORDS; w++)
        wrong += table[w] != expected[w];
    CHECK(wrong == 0, "%d of %d table words differ from the replay", wrong, TABLE_WORDS);
    shmem_free(table);
    return check_finish();
}
