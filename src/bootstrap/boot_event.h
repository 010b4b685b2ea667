/* SPDX-License-Identifier: BSD-3-Clause */
/* What an event of the process manager means for this PE: the judgement, kept apart from the
 * PMIx plumbing in boot_pmix.c so that every case can be tested without a process manager. */
#ifndef STRATA_BOOT_EVENT_H
#define STRATA_BOOT_EVENT_H

#include <stddef.h>

/* An event as the process manager delivered it. */
struct boot_event {
    int code;          /* the PMIx status it carries */
    int affected;      /* the PE of this job it concerns; -1: none, or another job's process */
    int has_exit_code; /* the event carried the process's exit code */
    int exit_code;
};

enum boot_event_verdict {
    BOOT_EVENT_IGNORE,       /* nothing this PE must act on */
    BOOT_EVENT_PEER_DIED,    /* event.affected ended before the job did */
    BOOT_EVENT_MANAGER_LOST, /* this PE's connection to the process manager is gone */
};

/* The verdict on an event seen by PE self; leaving: self has reached the job's last exchange,
 * so its peers may end normally at any time. For a dead peer, how it ended goes into how. */
enum boot_event_verdict boot_event_judge(const struct boot_event *event, int self, int leaving,
                                         char *how, size_t how_len);

/* Writes the codes boot_event_judge knows (at most max) into codes, for the handler's
 * registration; returns how many. */
#define BOOT_EVENT_MAX_CODES 16
size_t boot_event_codes(int *codes, size_t max);

#endif
