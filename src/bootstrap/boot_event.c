/* SPDX-License-Identifier: BSD-3-Clause */
/* The judgement of process-manager events (boot_event.h). */
#include "boot_event.h"

#include <pmix_common.h>
#include <stdio.h>

enum boot_event_kind {
    BOOT_EVENT_DEATH, /* the process ended before the job did, whatever its status */
    BOOT_EVENT_END,   /* the process ended: a death only with a non-zero status */
    BOOT_EVENT_LOST,  /* a connection to the process manager broke */
};

/* The codes that PMIx 4.2 defines for the end of a process, as PRRTE and the PMIx standard use
 * them. Managers that report exits without PMIx_Finalize say so with PMIX_ERR_PROC_TERM_WO_SYNC,
 * so a "terminated" event with status 0 is a PE that finalized and left. The client library
 * itself reports the loss of its server with the connection codes. */
static const char boot_event_lost[] = "lost its connection to the process manager";
static const struct {
    int code;
    enum boot_event_kind kind;
    const char *how;
} boot_event_table[] = {
    {PMIX_ERR_PROC_ABORTED, BOOT_EVENT_DEATH, "aborted"}, /* the name before PMIx 4 */
    {PMIX_ERR_PROC_REQUESTED_ABORT, BOOT_EVENT_DEATH, "aborted"},
    {PMIX_ERR_PROC_ABORTED_BY_SIG, BOOT_EVENT_DEATH, "killed by a signal"},
    {PMIX_ERR_PROC_KILLED_BY_CMD, BOOT_EVENT_DEATH, "killed by the launcher"},
    {PMIX_ERR_PROC_FAILED_TO_START, BOOT_EVENT_DEATH, "failed to start"},
    {PMIX_ERR_PROC_TERM_WO_SYNC, BOOT_EVENT_DEATH, "exited without calling shmem_finalize"},
    {PMIX_ERR_EXIT_NONZERO_TERM, BOOT_EVENT_DEATH, "exited"},
    {PMIX_PROC_TERMINATED, BOOT_EVENT_END, "exited"},
    {PMIX_EVENT_PROC_TERMINATED, BOOT_EVENT_END, "exited"},
    {PMIX_ERR_LOST_CONNECTION, BOOT_EVENT_LOST, boot_event_lost},
    {PMIX_ERR_LOST_CONNECTION_TO_SERVER, BOOT_EVENT_LOST, boot_event_lost},
    {PMIX_ERR_UNREACH, BOOT_EVENT_LOST, boot_event_lost},
};
#define BOOT_EVENT_NCODES (sizeof(boot_event_table) / sizeof(boot_event_table[0]))

size_t boot_event_codes(int *codes, size_t max)
{
    size_t n = 0;
    for (; n < BOOT_EVENT_NCODES && n < max; n++)
        codes[n] = boot_event_table[n].code;
    return n;
}

enum boot_event_verdict boot_event_judge(const struct boot_event *event, int self, int leaving,
                                         char *how, size_t how_len)
{
    size_t i = 0;
    while (i < BOOT_EVENT_NCODES && boot_event_table[i].code != event->code)
        i++;
    /* Once this PE is in the job's last exchange (or ends the job itself), its peers end when
     * they like and a broken connection changes nothing: the exchange reports its own failure. */
    if (i == BOOT_EVENT_NCODES || leaving || event->affected == self)
        return BOOT_EVENT_IGNORE;
    enum boot_event_kind kind = boot_event_table[i].kind;
    /* The client library reports the loss of its own server with no PE of the job named. */
    if (kind == BOOT_EVENT_LOST && event->affected < 0)
        return BOOT_EVENT_MANAGER_LOST;
    if (event->affected < 0)
        return BOOT_EVENT_IGNORE;
    if (kind == BOOT_EVENT_END && (!event->has_exit_code || event->exit_code == 0))
        return BOOT_EVENT_IGNORE;
    if (event->has_exit_code)
        snprintf(how, how_len, "%s, status %d", boot_event_table[i].how, event->exit_code);
    else
        snprintf(how, how_len, "%s", boot_event_table[i].how);
    return BOOT_EVENT_PEER_DIED;
}
