/* SPDX-License-Identifier: BSD-3-Clause */
/* Mailboxes: what peers mailed to this PE (rma_mail), kept per box in the order it came
 * until a collective expects it. A box belongs to one team block (strata_team.mailbox): the eager
 * broadcasts of a team of two whose partner is reached by message go this way, so their root
 * need not wait for the receiver to free a slot (coll_eager_broadcast). */
#ifndef STRATA_MAILBOX_H
#define STRATA_MAILBOX_H

#include <stddef.h>
#include <stdint.h>

/* Makes count empty boxes. Returns 0 or -1. */
int mailbox_init(uint32_t count);
/* What mail carries before its data (a RUNTIME_MESSAGE_MAIL message's header). */
struct mailbox_mail {
    uint64_t tag;
    uint32_t box;
};
/* Copies data to where the mail tagged tag is expected, or keeps a copy in box. */
void mailbox_deliver(uint32_t box, uint64_t tag, const void *data, size_t len);
/* The transport's handler of mail (transport_set_message_handler): mailbox_deliver by its
 * header. */
void mailbox_on_message(int from, const void *header, size_t header_len, const void *data,
                        size_t len);
/* Frees every box and what is left in them. */
void mailbox_fini(void);
/* Up to len bytes of the mail tagged tag go to dest: at once if it is the oldest mail in box,
 * else as it comes. Until it has come, or until mailbox_unexpect, dest belongs to the box. */
void mailbox_expect(uint32_t box, uint64_t tag, void *dest, size_t len);
/* 1 once the expected mail is in dest. Lock-free, so a wait may poll it. */
int mailbox_arrived(uint32_t box);
/* Ends the expectation: what was expected came otherwise. */
void mailbox_unexpect(uint32_t box);
/* Drops whatever box holds (a team block being claimed for a new team). */
void mailbox_empty(uint32_t box);

#endif
