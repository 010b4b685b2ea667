/* SPDX-License-Identifier: BSD-3-Clause */
/* Mailboxes (mailbox.h). Mail is delivered inside the transport's message handler, on whichever
 * thread progresses the worker (a PE's own or its progress thread), while the PE's collective
 * waits for it: each box is a list under a lock, and the mail a collective waits for goes
 * straight to its destination, with a flag that the waiter reads without the lock. */
#include "mailbox.h"

#include "../common/log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct mail {
    struct mail *next;
    uint64_t tag;
    size_t len;
    char data[];
};

/* The mail a collective waits for (mailbox_expect). */
struct expected_mail {
    uint64_t tag;
    void *dest;
    size_t len;
    int waiting; /* until the mail came or the collective gave up on it */
    int arrived; /* set when it came: read without the lock */
};

struct mailbox {
    pthread_mutex_t lock;
    struct mail *oldest, *newest;
    struct expected_mail expected;
};

static struct mailbox *mailboxes;
static uint32_t mailbox_count;

/* Under the box's lock: the expected mail came, len bytes at data; copies what fits into dest. */
static void mailbox_fill_expected(struct mailbox *b, const void *data, size_t len)
{
    struct expected_mail *e = &b->expected;
    memcpy(e->dest, data, len < e->len ? len : e->len);
    e->waiting = 0;
    __atomic_store_n(&e->arrived, 1, __ATOMIC_RELEASE);
}

/* Under the box's lock: keeps a copy of the mail at the end of the box (0, or -1). */
static int mailbox_keep(struct mailbox *b, uint64_t tag, const void *data, size_t len)
{
    struct mail *mail = malloc(sizeof(*mail) + len);
    if (!mail)
        return -1;
    *mail = (struct mail){.tag = tag, .len = len};
    memcpy(mail->data, data, len);
    if (b->newest)
        b->newest->next = mail;
    else
        b->oldest = mail;
    b->newest = mail;
    return 0;
}

/* The expected mail skips the box: one copy into the receiver's buffer instead of two through a
 * buffer of the box's own, and no allocation. */
void mailbox_deliver(uint32_t box, uint64_t tag, const void *data, size_t len)
{
    if (box >= mailbox_count) {
        log_error("transport", "mail for box %u (%zu bytes) dropped: no such box", box, len);
        return;
    }
    struct mailbox *b = &mailboxes[box];
    pthread_mutex_lock(&b->lock);
    int kept = 0;
    if (b->expected.waiting && b->expected.tag == tag)
        mailbox_fill_expected(b, data, len);
    else
        kept = mailbox_keep(b, tag, data, len);
    pthread_mutex_unlock(&b->lock);
    if (kept)
        log_error("transport", "mail for box %u (%zu bytes) dropped: out of memory", box, len);
}

void mailbox_on_message(int from, const void *header, size_t header_len, const void *data,
                        size_t len)
{
    struct mailbox_mail mail;
    if (header_len != sizeof(mail)) {
        log_error("transport", "mail from PE %d dropped: a header of %zu bytes", from, header_len);
        return;
    }
    memcpy(&mail, header, sizeof(mail));
    mailbox_deliver(mail.box, mail.tag, data, len);
}

int mailbox_init(uint32_t count)
{
    mailboxes = calloc(count, sizeof(*mailboxes));
    if (!mailboxes)
        return -1;
    for (uint32_t i = 0; i < count; i++)
        pthread_mutex_init(&mailboxes[i].lock, NULL);
    mailbox_count = count;
    return 0;
}

void mailbox_expect(uint32_t box, uint64_t tag, void *dest, size_t len)
{
    struct mailbox *b = &mailboxes[box];
    pthread_mutex_lock(&b->lock);
    b->expected = (struct expected_mail){.tag = tag, .dest = dest, .len = len, .waiting = 1};
    struct mail *mail = b->oldest;
    if (mail && mail->tag == tag) {
        b->oldest = mail->next;
        if (!b->oldest)
            b->newest = NULL;
        mailbox_fill_expected(b, mail->data, mail->len);
    } else {
        mail = NULL;
    }
    pthread_mutex_unlock(&b->lock);
    free(mail);
}

int mailbox_arrived(uint32_t box)
{
    return __atomic_load_n(&mailboxes[box].expected.arrived, __ATOMIC_ACQUIRE);
}

void mailbox_unexpect(uint32_t box)
{
    struct mailbox *b = &mailboxes[box];
    pthread_mutex_lock(&b->lock);
    b->expected = (struct expected_mail){0};
    pthread_mutex_unlock(&b->lock);
}

void mailbox_empty(uint32_t box)
{
    struct mailbox *b = &mailboxes[box];
    pthread_mutex_lock(&b->lock);
    struct mail *mail = b->oldest;
    b->oldest = b->newest = NULL;
    b->expected = (struct expected_mail){0};
    pthread_mutex_unlock(&b->lock);
    while (mail) {
        struct mail *next = mail->next;
        free(mail);
        mail = next;
    }
}

void mailbox_fini(void)
{
    for (uint32_t i = 0; i < mailbox_count; i++) {
        mailbox_empty(i);
        pthread_mutex_destroy(&mailboxes[i].lock);
    }
    free(mailboxes);
    mailboxes = NULL;
    mailbox_count = 0;
}
