/* SPDX-License-Identifier: BSD-3-Clause */
/* Batch sessions from several threads at once (SHMEM_THREAD_MULTIPLE): each thread XORs its own
 * pseudo-random stream into a table spread over the PEs on a context of its own, private or
 * shareable, inside a batch session, and ends it with a stop and a quiet; every PE then checks
 * its part of the table against a replay of every thread's stream of every PE. */
#include "xor_table.h"

#include <pthread.h>

enum { THREADS = 4, UPDATES = 5000, TABLE_WORDS = 256 };

static uint64_t *table;

/* Odd threads take a private context, even ones a shareable one. */
static void *thread_updates(void *arg)
{
    int thread = (int)(intptr_t)arg;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(thread & 1 ? SHMEM_CTX_PRIVATE : 0, &ctx)) {
        CHECK(0, "thread %d: no context", thread);
        return NULL;
    }
    shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    xor_table_update(ctx, table, TABLE_WORDS, shmem_my_pe() * THREADS + thread, UPDATES);
    shmem_ctx_session_stop(ctx);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    return NULL;
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK_EQ(provided, SHMEM_THREAD_MULTIPLE);
    table = shmem_calloc(TABLE_WORDS, sizeof(uint64_t));
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++)
        CHECK_EQ(pthread_create(&threads[t], NULL, thread_updates, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    shmem_barrier_all();

    xor_table_check(table, TABLE_WORDS, shmem_n_pes() * THREADS, UPDATES);
    shmem_free(table);
    return check_finish();
}
