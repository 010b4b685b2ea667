/* A PE that misbehaves on demand, for the launcher's failure tests:
 *   behave ok | segv R | exit R C | abort R C | sleep | shm R
 * R is the PE that misbehaves; the others sleep (and must be killed by oshrun). */
#include <fcntl.h>
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sleeps in short steps so a killed PE goes away at once. */
static void sleep_long(void)
{
    for (int i = 0; i < 300; i++)
        usleep(100000);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    int rank = argc > 2 ? atoi(argv[2]) : 0, code = argc > 3 ? atoi(argv[3]) : 0;
    shmem_init();
    int me = shmem_my_pe();
    if (!strcmp(mode, "ok")) {
        printf("PE %d of %d ok\n", me, shmem_n_pes());
        shmem_finalize();
        return 0;
    }
    if (me == rank) {
        if (!strcmp(mode, "segv"))
            raise(SIGSEGV);
        if (!strcmp(mode, "exit"))
            exit(code);
        if (!strcmp(mode, "abort"))
            shmem_global_exit(code);
        if (!strcmp(mode, "shm")) {
            /* A file named like the library's own, as a PE that died mid-start-up would leave. */
            char name[256];
            snprintf(name, sizeof(name), "/dev/shm/%s.%d.leftover", getenv("PMIX_NAMESPACE"), me);
            close(open(name, O_CREAT | O_WRONLY, 0600));
            raise(SIGSEGV);
        }
    }
    sleep_long();
    shmem_finalize();
    return 0;
}
