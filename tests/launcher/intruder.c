/* SPDX-License-Identifier: BSD-3-Clause */
/* A process of another user that poses as a rank of a running job, for the launcher's security
 * test:  intruder UID GID
 * Its environment holds the job's PMIx variables (server address, namespace, rank), as if it
 * had learned them. It claims to be UID:GID: PMIx's native security module over TCP takes the
 * ids a client writes into its handshake, and the client library reads them with geteuid and
 * getegid, which the definitions below replace (for the PMIx library too, as an LD_PRELOAD shim
 * would). If the server takes the connection, it aborts the job with status 99 and exits 1;
 * refused, it prints "refused: <PMIx status>" and exits 0. */
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static uid_t claimed_uid;
static gid_t claimed_gid;

uid_t getuid(void)
{
    return claimed_uid;
}

uid_t geteuid(void)
{
    return claimed_uid;
}

gid_t getgid(void)
{
    return claimed_gid;
}

gid_t getegid(void)
{
    return claimed_gid;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: intruder UID GID\n");
        return 2;
    }
    claimed_uid = (uid_t)atoi(argv[1]);
    claimed_gid = (gid_t)atoi(argv[2]);
    /* A server that closes the connection must not kill us with SIGPIPE mid-handshake. */
    signal(SIGPIPE, SIG_IGN);
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        printf("refused: %s\n", PMIx_Error_string(rc));
        return 0;
    }
    printf("connected as %s:%u, aborting the job\n", me.nspace, me.rank);
    fflush(stdout);
    PMIx_Abort(99, "intruder", NULL, 0);
    return 1;
}
