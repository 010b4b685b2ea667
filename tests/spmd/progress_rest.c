/* SPDX-License-Identifier: BSD-3-Clause */
/* While a PE's own threads keep progressing the transport (a loop of fetch-adds to a peer, which
 * serves its peers' fetch-adds while it waits for its own), its progress thread has nothing to
 * do, and each of its wake-ups is taken from a core that a PE or another job may want: it must
 * stay asleep. Every PE fetch-adds to the next one for LOOP_MS, counting the times its progress
 * thread (named "shmem-progress") left the CPU (the kernel's count of its voluntary switches),
 * which one look every 1.6 ms would have brought to LOOP_MS / 1.6. The count starts after
 * WARM_UP_MS of fetch-adds: the thread serves the worker while the PE starts up, and once the
 * PE's loop begins it may wait for the worker's lock for a few milliseconds before it sees the PE
 * waiting (24 switches in 4 ms, once in 35 runs), which is not the steady state this checks.
 * A PE that the kernel keeps off its core for longer than the thread's pause (up to 1.6 ms) is
 * served by it, as it should be, and each request then wakes it: on a loaded machine one such
 * stretch brought a window to 32 switches (once in over 60 sanitizer runs). So a PE measures up
 * to WINDOWS windows and passes on the first under the limit; a thread that wakes at every look
 * fails them all. Then each PE checks the values its fetch-adds returned and the total it
 * received. Run with SHMEM_PROGRESS_THREAD=1. */
#include "check.h"

#include <dirent.h>
#include <time.h>

enum { WARM_UP_MS = 100, LOOP_MS = 300, MAX_WAKE_UPS = 20, WINDOWS = 3 };
static long counter, received;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* The voluntary switches of this process's thread named "shmem-progress", or -1 when none is. */
static long progress_thread_switches(void)
{
    DIR *tasks = opendir("/proc/self/task");
    long switches = -1;
    struct dirent *task;
    while (tasks && switches < 0 && (task = readdir(tasks))) {
        char path[64], line[128];
        snprintf(path, sizeof(path), "/proc/self/task/%.20s/comm", task->d_name);
        FILE *f = fopen(path, "r");
        int ours = f && fgets(line, sizeof(line), f) && !strcmp(line, "shmem-progress\n");
        if (f)
            fclose(f);
        if (!ours)
            continue;
        snprintf(path, sizeof(path), "/proc/self/task/%.20s/status", task->d_name);
        f = fopen(path, "r");
        while (f && fgets(line, sizeof(line), f))
            if (sscanf(line, "voluntary_ctxt_switches: %ld", &switches) == 1)
                break;
        if (f)
            fclose(f);
    }
    if (tasks)
        closedir(tasks);
    return switches;
}

/* Fetch-adds to PE next for ms milliseconds, checking the values returned, the first of which is
 * ops; returns ops plus the count done. */
static long fetch_adds_for(int next, int ms, long ops)
{
    for (long long end = now_ms() + ms; now_ms() < end; ops++) {
        long old = shmem_long_atomic_fetch_add(&counter, 1, next);
        CHECK(old == ops, "fetch-add %ld returned %ld", ops, old);
    }
    return ops;
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n;
    shmem_barrier_all();
    long ops = fetch_adds_for(next, WARM_UP_MS, 0);
    long wake_ups[WINDOWS], least = -1;
    for (int w = 0; w < WINDOWS && !(least >= 0 && least < MAX_WAKE_UPS); w++) {
        long before = progress_thread_switches();
        CHECK(before >= 0, "no thread named shmem-progress (SHMEM_PROGRESS_THREAD=1 starts one)");
        ops = fetch_adds_for(next, LOOP_MS, ops);
        wake_ups[w] = progress_thread_switches() - before;
        least = least < 0 || wake_ups[w] < least ? wake_ups[w] : least;
    }
    CHECK(least < MAX_WAKE_UPS,
          "the progress thread woke %ld, %ld and %ld times in %d-ms windows of fetch-adds (%ld in "
          "all)",
          wake_ups[0], wake_ups[1], wake_ups[2], LOOP_MS, ops);
    shmem_long_atomic_set(&received, ops, next);
    shmem_barrier_all();
    CHECK_EQ(counter, received);
    return check_finish();
}
