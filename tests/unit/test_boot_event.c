/* SPDX-License-Identifier: BSD-3-Clause */
/* The judgement of the process manager's events: which end of a peer is a death that must end
 * this PE, which is a normal departure, and when none of them matters any more. */
#include "../../src/bootstrap/boot_event.h"
#include "unit.h"

#include <pmix_common.h>
#include <string.h>

#define SELF 0
#define PEER 1
#define NO_CODE -1 /* the event carries no exit code */

/* The verdict on code about affected (with exit code, or NO_CODE) seen by PE SELF, and, for a
 * death, that the text says how. */
static void check(int code, int affected, int exit_code, int leaving,
                  enum boot_event_verdict expected, const char *how_expected)
{
    struct boot_event event = {code, affected, exit_code != NO_CODE, exit_code};
    char how[160] = "";
    enum boot_event_verdict got = boot_event_judge(&event, SELF, leaving, how, sizeof(how));
    UNIT_CHECK(got == expected, "code %d about %d (exit %d, leaving %d): verdict %d, expected %d",
               code, affected, exit_code, leaving, got, expected);
    if (how_expected)
        UNIT_CHECK(!strcmp(how, how_expected), "code %d: how '%s', expected '%s'", code, how,
                   how_expected);
}

int main(void)
{
    /* Deaths, with and without a status. */
    check(PMIX_ERR_PROC_ABORTED_BY_SIG, PEER, 11, 0, BOOT_EVENT_PEER_DIED,
          "killed by a signal, status 11");
    check(PMIX_ERR_PROC_REQUESTED_ABORT, PEER, 7, 0, BOOT_EVENT_PEER_DIED, "aborted, status 7");
    check(PMIX_ERR_PROC_ABORTED, PEER, NO_CODE, 0, BOOT_EVENT_PEER_DIED, "aborted");
    check(PMIX_ERR_PROC_TERM_WO_SYNC, PEER, 0, 0, BOOT_EVENT_PEER_DIED,
          "exited without calling shmem_finalize, status 0");
    check(PMIX_ERR_EXIT_NONZERO_TERM, PEER, 3, 0, BOOT_EVENT_PEER_DIED, "exited, status 3");
    check(PMIX_ERR_PROC_KILLED_BY_CMD, PEER, NO_CODE, 0, BOOT_EVENT_PEER_DIED,
          "killed by the launcher");
    check(PMIX_ERR_PROC_FAILED_TO_START, PEER, NO_CODE, 0, BOOT_EVENT_PEER_DIED, "failed to start");
    /* A normal end is a death only with a non-zero status. */
    check(PMIX_EVENT_PROC_TERMINATED, PEER, 0, 0, BOOT_EVENT_IGNORE, NULL);
    check(PMIX_EVENT_PROC_TERMINATED, PEER, NO_CODE, 0, BOOT_EVENT_IGNORE, NULL);
    check(PMIX_PROC_TERMINATED, PEER, 0, 0, BOOT_EVENT_IGNORE, NULL);
    check(PMIX_EVENT_PROC_TERMINATED, PEER, 2, 0, BOOT_EVENT_PEER_DIED, "exited, status 2");
    check(PMIX_PROC_TERMINATED, PEER, 139, 0, BOOT_EVENT_PEER_DIED, "exited, status 139");
    /* Once this PE is in its last exchange, nothing is a death. */
    check(PMIX_ERR_PROC_ABORTED_BY_SIG, PEER, 11, 1, BOOT_EVENT_IGNORE, NULL);
    check(PMIX_EVENT_PROC_TERMINATED, PEER, 1, 1, BOOT_EVENT_IGNORE, NULL);
    check(PMIX_ERR_LOST_CONNECTION, -1, NO_CODE, 1, BOOT_EVENT_IGNORE, NULL);
    /* Events about this PE itself, or about no PE of the job, name nobody. */
    check(PMIX_ERR_PROC_ABORTED_BY_SIG, SELF, 11, 0, BOOT_EVENT_IGNORE, NULL);
    check(PMIX_ERR_PROC_ABORTED_BY_SIG, -1, 11, 0, BOOT_EVENT_IGNORE, NULL);
    /* The loss of this PE's server, and a peer's lost connection. */
    check(PMIX_ERR_LOST_CONNECTION, -1, NO_CODE, 0, BOOT_EVENT_MANAGER_LOST, NULL);
    check(PMIX_ERR_LOST_CONNECTION_TO_SERVER, -1, NO_CODE, 0, BOOT_EVENT_MANAGER_LOST, NULL);
    check(PMIX_ERR_UNREACH, -1, NO_CODE, 0, BOOT_EVENT_MANAGER_LOST, NULL);
    check(PMIX_ERR_LOST_CONNECTION, PEER, NO_CODE, 0, BOOT_EVENT_PEER_DIED,
          "lost its connection to the process manager");
    /* Codes it does not know. */
    check(PMIX_SUCCESS, PEER, 0, 0, BOOT_EVENT_IGNORE, NULL);
    check(PMIX_READY_FOR_DEBUG, PEER, NO_CODE, 0, BOOT_EVENT_IGNORE, NULL);

    /* Every code it judges is registered, and only those. */
    int codes[BOOT_EVENT_MAX_CODES];
    size_t n = boot_event_codes(codes, BOOT_EVENT_MAX_CODES);
    UNIT_CHECK(n == 12 && n < BOOT_EVENT_MAX_CODES, "%zu codes registered", n);
    for (size_t i = 0; i < n; i++) {
        struct boot_event event = {codes[i], PEER, 1, 1};
        char how[160];
        UNIT_CHECK(boot_event_judge(&event, SELF, 0, how, sizeof(how)) != BOOT_EVENT_IGNORE,
                   "registered code %d means something", codes[i]);
    }
    return unit_finish("test_boot_event");
}
