/* SPDX-License-Identifier: BSD-3-Clause */
/* A PE that misbehaves on demand, for the launcher's failure tests:
 *   behave ok | segv R | exit R C | abort R C | abort_wait R C | abort_all C | sleep | shm R
 *          | shm_sleep R
 *          | return R | preinit_segv R | space_segv R | lost_segv R | gate FILE | legacy
 *          | notify_death R | notify_end R
 * R is the PE that misbehaves; the others sleep (and must be killed by oshrun), except in
 * space_segv, where they wait in shmem_space_create's exchange for it, lost_segv, where they wait
 * in shmem_finalize's process-manager fence for it, abort, where PE R calls shmem_global_exit(C)
 * only once they have left the library for their sleep, abort_wait, where they wait in a barrier
 * that PE R, calling shmem_global_exit(C), never enters (one that gets past it says so),
 * abort_all, where every PE calls shmem_global_exit(C) at once (one that returns says so), and
 * gate,
 * where every PE waits for FILE to
 * exist, then creates a space, prints "PE i of n ok" and finalizes. notify_death and notify_end
 * deliver to PE R, as an engine would, the event that the next PE was killed by SIGSEGV, or
 * that it ended with status 0 (PE R then goes on, prints "PE i of n ok" and finalizes). PE R
 * says when it misbehaves ("PE R misbehaves at SECONDS", the real-time clock), so that a test can
 * time how long the job takes to end after it. */
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pmix.h>
#include <shmem.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Sleeps in short steps so a killed PE goes away at once. */
static void sleep_long(void)
{
    for (int i = 0; i < 300; i++)
        usleep(100000);
}

/* Shuts down this process's connection to the launcher's PMIx server: the server sees the PE
 * go at once, while the PE itself dies only later, the worst order a real death can take. */
static void drop_launcher_connection(void)
{
    const char *uri = getenv("PMIX_SERVER_URI4");
    const char *port_text = uri ? strrchr(uri, ':') : NULL;
    DIR *dir = opendir("/proc/self/fd");
    if (!port_text || !dir)
        return;
    in_port_t port = htons((in_port_t)atoi(port_text + 1));
    struct dirent *e;
    while ((e = readdir(dir))) {
        struct sockaddr_in peer;
        socklen_t len = sizeof(peer);
        int fd = atoi(e->d_name);
        if (!getpeername(fd, (struct sockaddr *)&peer, &len) && peer.sin_family == AF_INET &&
            peer.sin_port == port)
            shutdown(fd, SHUT_RDWR);
    }
    closedir(dir);
}

/* Delivers to this process alone the event code about PE pe with its exit status, as a process
 * manager reports a PE's end (the library's handler sees it; oshrun's server sends none). */
static void notify_self(pmix_status_t code, int pe, int status)
{
    pmix_proc_t about;
    PMIX_LOAD_PROCID(&about, getenv("PMIX_NAMESPACE"), (pmix_rank_t)pe);
    pmix_info_t info[2];
    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_AFFECTED_PROC, &about, PMIX_PROC);
    PMIX_INFO_LOAD(&info[1], PMIX_EXIT_CODE, &status, PMIX_INT);
    PMIx_Notify_event(code, &about, PMIX_RANGE_PROC_LOCAL, info, 2, NULL, NULL);
}

/* Every PE waits for the file, then goes through a process-manager exchange. */
static void gate(const char *file, int me)
{
    for (int i = 0; i < 300 && access(file, F_OK); i++)
        usleep(20000);
    shmem_space_config_t config = {SHMEM_DEVICE_CPU, 1 << 20, SHMEM_SPACE_FLAG_DEFAULT};
    shmem_space_t space;
    shmem_team_t team;
    if (shmem_space_create(&config, &space, &team) == 0) {
        shmem_team_destroy(team);
        shmem_space_destroy(space);
        printf("PE %d of %d ok\n", me, shmem_n_pes());
    }
}

static void say_when(int me)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    fprintf(stderr, "PE %d misbehaves at %ld.%09ld\n", me, (long)now.tv_sec, now.tv_nsec);
}

/* Misbehaviours after shmem_init; returns only for a mode that is not one of them. */
static void misbehave(const char *mode, int me, int code)
{
    say_when(me);
    if (!strcmp(mode, "segv") || !strcmp(mode, "space_segv"))
        raise(SIGSEGV);
    if (!strcmp(mode, "exit"))
        exit(code);
    if (!strcmp(mode, "abort"))
        shmem_global_exit(code);
    if (!strcmp(mode, "lost_segv")) {
        /* The others' shmem_finalize: its barrier, then its fence, which 50 ms takes them to. */
        shmem_barrier_all();
        usleep(50000);
        drop_launcher_connection();
        usleep(100000);
        raise(SIGSEGV);
    }
    int next = (me + 1) % shmem_n_pes();
    if (!strcmp(mode, "notify_death"))
        notify_self(PMIX_ERR_PROC_ABORTED_BY_SIG, next, SIGSEGV);
    if (!strcmp(mode, "notify_end")) {
        notify_self(PMIX_EVENT_PROC_TERMINATED, next, 0);
        usleep(200000); /* the event is handled on PMIx's thread meanwhile */
    }
    if (!strcmp(mode, "shm") || !strcmp(mode, "shm_sleep")) {
        /* A file named like the library's own, as a PE that died mid-start-up would leave. */
        char name[256];
        snprintf(name, sizeof(name), "/dev/shm/%s.%d.leftover", getenv("PMIX_NAMESPACE"), me);
        close(open(name, O_CREAT | O_WRONLY, 0600));
        if (!strcmp(mode, "shm"))
            raise(SIGSEGV);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    int rank = argc > 2 ? atoi(argv[2]) : 0, code = argc > 3 ? atoi(argv[3]) : 0;
    /* Dies before it ever contacts the launcher: its rank comes from the environment. */
    const char *env_rank = getenv("PMIX_RANK");
    if (!strcmp(mode, "preinit_segv") && env_rank && atoi(env_rank) == rank)
        raise(SIGSEGV);
    if (!strcmp(mode, "legacy")) {
        /* OpenSHMEM 1.0: start_pes, a second one that does nothing, no shmem_finalize */
        start_pes(0);
        start_pes(0);
        printf("PE %d of %d ok\n", _my_pe(), _num_pes());
        return 0;
    }
    shmem_init();
    int me = shmem_my_pe();
    if (!strcmp(mode, "ok")) {
        printf("PE %d of %d ok\n", me, shmem_n_pes());
        shmem_finalize();
        return 0;
    }
    if (!strcmp(mode, "notify_end")) {
        if (me == rank)
            misbehave(mode, me, code);
        printf("PE %d of %d ok\n", me, shmem_n_pes());
        shmem_finalize();
        return 0;
    }
    if (!strcmp(mode, "gate") && argc > 2) {
        gate(argv[2], me);
        shmem_finalize();
        return 0;
    }
    if (!strcmp(mode, "abort_all")) {
        /* The code is argument 2 here: there is no misbehaving PE. */
        shmem_barrier_all();
        shmem_global_exit(rank);
        printf("PE %d got past shmem_global_exit\n", me);
        return 0;
    }
    if (!strcmp(mode, "abort_wait")) {
        /* The others wait in a barrier that PE rank never enters: none may get past it. */
        if (me == rank) {
            usleep(100000);
            misbehave("abort", me, code);
        }
        shmem_barrier_all();
        printf("PE %d got past the barrier\n", me);
        shmem_finalize();
        return 0;
    }
    if (!strcmp(mode, "abort")) {
        /* PE rank ends the job only once every other PE is past the library's last wait (a PE
         * still in shmem_init's barrier polls for the request and would answer it at once). */
        static int computing;
        if (me != rank)
            shmem_int_atomic_inc(&computing, rank);
        else
            shmem_int_wait_until(&computing, SHMEM_CMP_EQ, shmem_n_pes() - 1);
    }
    if (me == rank && !strcmp(mode, "return")) {
        say_when(me);
        return 0; /* without shmem_finalize */
    }
    if (me == rank)
        misbehave(mode, me, code);
    if (!strcmp(mode, "lost_segv")) {
        shmem_finalize(); /* its fence loses the PE that is about to die */
        return 0;
    }
    if (!strcmp(mode, "space_segv")) {
        /* Waits in space creation's exchange for the PE that died. */
        shmem_space_config_t config = {SHMEM_DEVICE_CPU, 1 << 20, SHMEM_SPACE_FLAG_DEFAULT};
        shmem_space_t space;
        shmem_team_t team;
        shmem_space_create(&config, &space, &team);
    }
    sleep_long();
    shmem_finalize();
    return 0;
}
