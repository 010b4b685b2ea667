/* Mailboxes: what peers mailed to this PE (transport_mail), kept per box in the order it came
 * until a collective takes it. A box belongs to one team block (strata_team.mailbox): the eager
 * broadcasts of a team of two whose partner is reached by message go this way, so their root
 * need not wait for the receiver to free a slot (coll_eager_broadcast). */
#ifndef STRATA_MAILBOX_H
#define STRATA_MAILBOX_H

#include <stddef.h>
#include <stdint.h>

/* Makes count empty boxes. Returns 0 or -1. */
int mailbox_init(uint32_t count);
/* The transport's mail handler (transport_set_mail_handler): keeps a copy of data in box. */
void mailbox_deliver(uint32_t box, uint64_t tag, const void *data, size_t len);
/* Frees every box and what is left in them. */
void mailbox_fini(void);
/* If the oldest mail in box is tagged tag, copies up to len bytes of it to dest, drops it and
 * returns 1; otherwise returns 0. Lock-free when the box is empty, so a wait may poll it. */
int mailbox_take(uint32_t box, uint64_t tag, void *dest, size_t len);
/* Drops whatever box holds (a team block being claimed for a new team). */
void mailbox_empty(uint32_t box);

#endif
