/* SPDX-License-Identifier: BSD-3-Clause */
/* A fault in symmetric memory gets one line that says what happened before the process dies. A
 * SIGBUS there means the node had no room left to commit a page of a heap: host heaps live in
 * /dev/shm, shared by every PE of the node, and are committed as they are touched, so a job whose
 * heaps fit one by one can still run out together. The handler then restores the one it
 * replaced and returns: the access faults again and that one runs (UCX's backtrace, a
 * sanitizer's report, or the default action), so nothing installed before is lost. */
#include "runtime.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct sigaction fault_previous;

static void fault_on_sigbus(int sig, siginfo_t *info, void *context)
{
    (void)context;
    int pe = -1;
    struct region *region = registry_lookup_mapped(info->si_addr, rt.n_pes, &pe);
    if (region) {
        char line[512];
        int len = snprintf(
            line, sizeof(line),
            "Strata: PE %d: SIGBUS at %p in PE %d's symmetric memory (region %d of %zu bytes): "
            "the node had no room left to commit the page. Host heaps live in /dev/shm, shared "
            "by the %d PEs of this node (SHMEM_SYMMETRIC_SIZE=%zu each): make it smaller, run "
            "fewer PEs per node, or give /dev/shm more room.\n",
            rt.my_pe, info->si_addr, pe, region->id, region->size, rt.boot.local_size,
            rt.knobs.SYMMETRIC_SIZE);
        if (len >= (int)sizeof(line))
            len = (int)sizeof(line) - 1; /* what snprintf kept */
        /* A line that cannot be written changes nothing: the process dies either way. */
        ssize_t written = len > 0 ? write(STDERR_FILENO, line, (size_t)len) : 0;
        (void)written;
    }
    sigaction(sig, &fault_previous, NULL);
}

void fault_handlers_install(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_sigaction = fault_on_sigbus;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, &fault_previous);
}
