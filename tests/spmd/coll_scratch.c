/* SPDX-License-Identifier: BSD-3-Clause */
/* Reductions leave no large private memory behind (src/coll/coll_reduce.c): a thread that reduced
 * and exited has given its scratch back, and a reduction whose scratch is above the 64 MiB the
 * library keeps between calls frees it on return. In place, a reduction on one node combines
 * through scratch as large as the vector, and through the transport on a team of two through
 * half of it; each PE checks its results and what its allocator holds after them. */
#include "check.h"

#include <malloc.h>
#include <pthread.h>

#define SMALL_COUNT ((size_t)1 << 20)  /* 8 MiB: its scratch is kept until the thread ends */
#define LARGE_COUNT ((size_t)10 << 20) /* 80 MiB: on one node its scratch goes at once */
#define KEPT_MAX ((long)64 << 20)
#define SLACK ((long)2 << 20)

static long *vec;
static int me, n;

/* Bytes the allocator holds for the program: its heap and its mappings. */
static long in_use(void)
{
    struct mallinfo2 info = mallinfo2();
    return (long)(info.uordblks + info.hblkhd);
}

/* A sum reduction of count longs in place; 1 if every element came out right. */
static int reduce_in_place(size_t count, long call)
{
    for (size_t i = 0; i < count; i++)
        vec[i] = (long)i + me + call;
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, vec, vec, count);
    long wrong = 0;
    for (size_t i = 0; i < count; i++)
        wrong += vec[i] != n * ((long)i + call) + (long)n * (n - 1) / 2;
    return wrong == 0;
}

static void *reduce_and_exit(void *ok)
{
    *(int *)ok = reduce_in_place(SMALL_COUNT, 1);
    return NULL;
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK_EQ(provided, SHMEM_THREAD_MULTIPLE);
    me = shmem_my_pe();
    n = shmem_n_pes();
    vec = shmem_malloc(LARGE_COUNT * sizeof(long));
    CHECK(reduce_in_place(SMALL_COUNT, 0), "a warm-up reduction came out wrong");
    long before = in_use();

    pthread_t thread;
    int ok = 0;
    CHECK(pthread_create(&thread, NULL, reduce_and_exit, &ok) == 0, "pthread_create failed");
    pthread_join(thread, NULL);
    CHECK(ok, "the thread's reduction came out wrong");
    long grown = in_use() - before;
    CHECK(grown < SLACK, "a thread that reduced %zu longs and exited left %ld bytes behind",
          SMALL_COUNT, grown);

    for (long call = 0; call < 3; call++)
        CHECK(reduce_in_place(LARGE_COUNT, call), "reduction %ld of %zu came out wrong", call,
              LARGE_COUNT);
    grown = in_use() - before;
    CHECK(grown < KEPT_MAX + SLACK, "reductions of %zu longs left %ld bytes behind", LARGE_COUNT,
          grown);
    shmem_free(vec);
    shmem_finalize();
    return check_finish();
}
