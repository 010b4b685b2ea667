/* SPDX-License-Identifier: BSD-3-Clause */
/* The mark a PE leaves as it finalizes, for oshrun (boot.h). oshrun learns of a PMIx_Finalize
 * in its PMIx server, but a client gives up waiting for the server's answer after a while, so a
 * PE of a loaded node may exit, and be reaped, before the server has seen its finalize. A byte
 * written into a file oshrun handed down is there before the PE's exit, whatever the server did.
 */
#define _GNU_SOURCE /* F_DUPFD_CLOEXEC */
#include "boot.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int boot_exit_mark_fd = -1;
static int boot_exit_mark_rank;

/* Whether fd is the file oshrun made: a descriptor number alone could name any file the program
 * opened in its place, which a mark would then corrupt. */
static int boot_exit_mark_is_launchers(int fd)
{
    static const char expected[] = "/memfd:" BOOT_EXIT_MARK_NAME " "; /* " (deleted)" follows */
    char link[64], target[PATH_MAX];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t len = readlink(link, target, sizeof(target) - 1);
    if (len < 0)
        return 0;
    target[len] = '\0';
    return !strncmp(target, expected, sizeof(expected) - 1);
}

/* Writes this PE's mark: 1 finalized, 0 not (again, after a shmem_init that follows one). */
static void boot_exit_mark_write(char finalized)
{
    if (boot_exit_mark_fd >= 0 &&
        pwrite(boot_exit_mark_fd, &finalized, 1, (off_t)boot_exit_mark_rank) != 1)
        perror("Strata: cannot tell oshrun whether this PE finalized");
}

int boot_exit_mark_init(int rank)
{
    const char *text = getenv(BOOT_EXIT_MARK_FD_ENV);
    char *end;
    long fd = text ? strtol(text, &end, 10) : -1;
    if (boot_exit_mark_fd < 0 && fd >= 0 && fd <= INT_MAX && !*end &&
        boot_exit_mark_is_launchers((int)fd)) {
        /* A descriptor of its own, kept from the program's children; the inherited one goes. */
        boot_exit_mark_fd = fcntl((int)fd, F_DUPFD_CLOEXEC, 3);
        close((int)fd);
        boot_exit_mark_rank = rank;
    }
    boot_exit_mark_write(0);
    return boot_exit_mark_fd >= 0;
}

void boot_exit_mark_finalized(void)
{
    boot_exit_mark_write(1);
}
