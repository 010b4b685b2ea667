/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared-memory names cannot be guessed: another user who creates the files a job will need
 * before it does (knowing its namespace, or a singleton's pid) must not stop it. The names the
 * library used to build from (job, PE, region) are taken here first, by the program itself;
 * start-up and space creation must not care. Run under oshrun, and as a singleton, where a parent
 * takes the names of its child's start-up before the child starts. */
#include "check.h"

#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define TAKEN_IDS 16

/* Creates the old-style names "/<job>.<pe>.r<id>" of every PE for region ids 0..15. */
static void take_names(const char *job, int n_pes, int create)
{
    for (int pe = 0; pe < n_pes; pe++)
        for (int id = 0; id < TAKEN_IDS; id++) {
            char path[300];
            snprintf(path, sizeof(path), "/dev/shm/%s.%d.r%d", job, pe, id);
            if (create)
                close(open(path, O_CREAT | O_WRONLY, 0600));
            else
                unlink(path);
        }
}

static void use_spaces(void)
{
    int me = shmem_my_pe(), n = shmem_n_pes();
    for (int i = 0; i < 3; i++) {
        shmem_space_config_t config = {SHMEM_DEVICE_CPU, 1 << 16, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space;
        shmem_team_t team;
        CHECK(shmem_space_create(&config, &space, &team) == 0, "space %d beside taken names", i);
        if (space == SHMEM_SPACE_INVALID)
            return;
        long *word = shmem_space_malloc(space, sizeof(long));
        shmem_long_p(word, me, (me + 1) % n);
        shmem_quiet(); /* a team's sync completes stores, not puts */
        shmem_team_sync(team);
        CHECK_EQ(*word, (me + n - 1) % n);
        shmem_space_free(space, word);
        shmem_team_destroy(team);
        shmem_space_destroy(space);
    }
}

/* A singleton's names came from its pid: the parent takes its child's before the child starts
 * the library. */
static int singleton_child_survives(const char *self)
{
    int go[2];
    if (pipe(go))
        return 0;
    pid_t child = fork();
    if (child == 0) {
        char byte;
        close(go[1]);
        if (read(go[0], &byte, 1) != 1)
            _exit(2);
        execl(self, self, "child", (char *)NULL);
        _exit(127);
    }
    char job[64];
    snprintf(job, sizeof(job), "strata-single-%d", (int)child);
    take_names(job, 1, 1);
    close(go[0]);
    if (write(go[1], "x", 1) != 1)
        return 0;
    close(go[1]);
    int status = 0;
    waitpid(child, &status, 0);
    take_names(job, 1, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int main(int argc, char **argv)
{
    const char *job = getenv("PMIX_NAMESPACE");
    if (!job && argc < 2) {
        int ok = singleton_child_survives(argv[0]);
        if (!ok)
            fprintf(stderr, "a singleton whose old-style names were taken failed\n");
        return ok ? 0 : 1;
    }
    shmem_init();
    if (job && shmem_my_pe() == 0)
        take_names(job, shmem_n_pes(), 1);
    shmem_barrier_all();
    use_spaces();
    shmem_barrier_all();
    if (job && shmem_my_pe() == 0)
        take_names(job, shmem_n_pes(), 0);
    return check_finish();
}
