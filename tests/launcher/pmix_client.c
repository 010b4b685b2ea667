/* A bare PMIx client (no Strata library) for oshrun's tests: it checks the job data oshrun
 * registers and the put/commit/fence/get exchange, then misbehaves on demand.
 *   pmix_client MODE [R [C]] [marker...]
 *   ok        every rank checks, prints "rank R of N ok" and exits 0
 *   segv R    rank R raises SIGSEGV after the fence; the others sleep 30 s
 *   exit R C  rank R exits with status C after the fence; the others sleep
 *   abort R C rank R calls PMIx_Abort(C); the others sleep
 *   sleep     every rank sleeps 30 s
 *   shm R     rank R creates /dev/shm/<nspace>.<R>.test, then raises SIGSEGV
 * Arguments after the mode's own are ignored: tests add a unique marker to find strays. Rank 0
 * prints "nspace <name>" so a test can look for the job's shared-memory files. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pmix_proc_t me;

static void fail(const char *what, pmix_status_t rc)
{
    fprintf(stderr, "pmix_client rank %u: %s: %s\n", me.rank, what, PMIx_Error_string(rc));
    exit(1);
}

/* Fetches a value of the expected type; a wrong type is as bad as a missing key. */
static pmix_value_t *get(const pmix_proc_t *proc, const char *key, pmix_data_type_t type)
{
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Get(proc, key, NULL, 0, &val);
    if (rc != PMIX_SUCCESS)
        fail(key, rc);
    if (val->type != type) {
        fprintf(stderr, "pmix_client rank %u: %s has type %s, expected %s\n", me.rank, key,
                PMIx_Data_type_string(val->type), PMIx_Data_type_string(type));
        exit(1);
    }
    return val;
}

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "pmix_client rank %u: wrong %s\n", me.rank, what);
        exit(1);
    }
}

/* Job data as the library reads it; returns the job size. */
static uint32_t check_job_data(void)
{
    pmix_proc_t job;
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t *v = get(&job, PMIX_JOB_SIZE, PMIX_UINT32);
    uint32_t size = v->data.uint32;
    PMIX_VALUE_RELEASE(v);
    v = get(&job, PMIX_LOCAL_SIZE, PMIX_UINT32);
    expect(v->data.uint32 == size, "local size");
    PMIX_VALUE_RELEASE(v);
    v = get(&me, PMIX_LOCAL_RANK, PMIX_UINT16);
    expect(v->data.uint16 == me.rank, "local rank");
    PMIX_VALUE_RELEASE(v);
    v = get(&job, PMIX_LOCAL_PEERS, PMIX_STRING);
    char peers[16384] = "";
    for (uint32_t r = 0; r < size && strlen(peers) < sizeof(peers) - 16; r++)
        sprintf(peers + strlen(peers), "%s%u", r ? "," : "", r);
    expect(!strcmp(v->data.string, peers), "local peers");
    PMIX_VALUE_RELEASE(v);
    return size;
}

/* Every rank publishes a value; after a collecting fence each reads every other's. */
static void check_exchange(uint32_t size)
{
    pmix_value_t val;
    PMIX_VALUE_LOAD(&val, &(uint32_t){1000 + me.rank}, PMIX_UINT32);
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, "test.hello", &val);
    PMIX_VALUE_DESTRUCT(&val);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Put", rc);
    if ((rc = PMIx_Commit()) != PMIX_SUCCESS)
        fail("PMIx_Commit", rc);
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_COLLECT_DATA, &(bool){true}, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &info, 1);
    PMIX_INFO_DESTRUCT(&info);
    if (rc != PMIX_SUCCESS)
        fail("PMIx_Fence", rc);
    for (uint32_t r = 0; r < size; r++) {
        pmix_proc_t peer;
        PMIX_LOAD_PROCID(&peer, me.nspace, r);
        pmix_value_t *v = get(&peer, "test.hello", PMIX_UINT32);
        expect(v->data.uint32 == 1000 + r, "test.hello of a peer");
        PMIX_VALUE_RELEASE(v);
    }
}

/* Short steps, so that a PE killed by a signal goes at once. */
static void sleep_long(void)
{
    for (int i = 0; i < 300; i++)
        usleep(100000);
}

static void leave_shm_file(void)
{
    char name[512];
    snprintf(name, sizeof(name), "/dev/shm/%s.%u.test", me.nspace, me.rank);
    int fd = open(name, O_CREAT | O_WRONLY, 0600);
    if (fd < 0) {
        perror(name);
        exit(1);
    }
    close(fd);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    unsigned target = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
    int code = argc > 3 ? atoi(argv[3]) : 0;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmix_client: PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    if (me.rank == 0)
        printf("nspace %s\n", me.nspace);
    uint32_t size = check_job_data();
    check_exchange(size);
    if (!strcmp(mode, "ok")) {
        printf("rank %u of %u ok\n", me.rank, size);
        fflush(stdout);
        PMIx_Finalize(NULL, 0);
        return 0;
    }
    fflush(stdout);
    if (me.rank == target && strcmp(mode, "sleep")) {
        if (!strcmp(mode, "segv")) {
            raise(SIGSEGV);
        } else if (!strcmp(mode, "exit")) {
            _exit(code);
        } else if (!strcmp(mode, "abort")) {
            /* The launcher ends the job, this PE included: staying alive after the call checks
             * that the status comes from the abort, not from an exit. */
            PMIx_Abort(code, "pmix_client abort test", NULL, 0);
        } else if (!strcmp(mode, "shm")) {
            leave_shm_file();
            raise(SIGSEGV);
        } else {
            fprintf(stderr, "pmix_client: unknown mode '%s'\n", mode);
            return 2;
        }
    }
    sleep_long();
    PMIx_Finalize(NULL, 0);
    return 0;
}
