/* SPDX-License-Identifier: BSD-3-Clause */
/* A process of another user that poses as a rank of a running job, for the launcher's security
 * test:  intruder UID GID
 * Its environment holds the job's PMIx variables (server address, namespace, rank), as if it
 * had learned them. It claims to be UID:GID: PMIx's native security module over TCP takes the
 * ids a client writes into its handshake, and the client library reads them with geteuid and
 * getegid, which the definitions below replace (for the PMIx library too, as an LD_PRELOAD shim
 * would). If the server takes the connection, it aborts the job with status 99 and exits 1;
 * refused, it prints "refused: <PMIx status>" and exits 0.
 *   intruder UID GID flood N
 * opens N plain connections to the server's TCP port, one after the other, each held until the
 * server closes it (refused), and prints "flood: N refused". */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pmix.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

extern char **environ;

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

/* The server's IPv4 address from a PMIX_SERVER_URI* variable ("...;tcp4://127.0.0.1:PORT"). */
static int server_address(struct sockaddr_in *address)
{
    for (char **env = environ; *env; env++) {
        const char *uri = strncmp(*env, "PMIX_SERVER_URI", 15) ? NULL : strstr(*env, "tcp4://");
        char host[64];
        unsigned port;
        if (uri && sscanf(uri + 7, "%63[^:]:%u", host, &port) == 2) {
            *address = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port)};
            return inet_pton(AF_INET, host, &address->sin_addr) == 1 ? 0 : -1;
        }
    }
    return -1;
}

static int flood(int n)
{
    struct sockaddr_in address;
    if (server_address(&address)) {
        printf("flood: no server address in the environment\n");
        return 1;
    }
    int refused = 0;
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        char byte;
        if (fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof(address)) == 0 &&
            read(fd, &byte, 1) <= 0)
            refused++;
        if (fd >= 0)
            close(fd);
    }
    printf("flood: %d refused\n", refused);
    return refused == n ? 0 : 1;
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
    if (argc >= 5 && !strcmp(argv[3], "flood"))
        return flood(atoi(argv[4]));
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
