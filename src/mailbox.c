/* Mailboxes (mailbox.h). Mail is delivered inside the transport's message handler, on whichever
 * thread progresses the worker (a PE's own or its progress thread), while the PE's collective
 * takes it: each box is a list under a lock, with a count that a waiter reads without it. */
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

struct mailbox {
    pthread_mutex_t lock;
    struct mail *oldest, *newest;
    uint64_t count; /* mail in the box: read without the lock */
};

static struct mailbox *mailboxes;
static uint32_t mailbox_count;

void mailbox_deliver(uint32_t box, uint64_t tag, const void *data, size_t len)
{
    struct mail *mail = box < mailbox_count ? malloc(sizeof(*mail) + len) : NULL;
    if (!mail) {
        log_error("transport", "mail for box %u (%zu bytes) dropped: %s", box, len,
                  box < mailbox_count ? "out of memory" : "no such box");
        return;
    }
    mail->next = NULL;
    mail->tag = tag;
    mail->len = len;
    memcpy(mail->data, data, len);
    struct mailbox *b = &mailboxes[box];
    pthread_mutex_lock(&b->lock);
    if (b->newest)
        b->newest->next = mail;
    else
        b->oldest = mail;
    b->newest = mail;
    __atomic_add_fetch(&b->count, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&b->lock);
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

int mailbox_take(uint32_t box, uint64_t tag, void *dest, size_t len)
{
    struct mailbox *b = &mailboxes[box];
    if (!__atomic_load_n(&b->count, __ATOMIC_ACQUIRE))
        return 0;
    pthread_mutex_lock(&b->lock);
    struct mail *mail = b->oldest;
    if (mail && mail->tag == tag) {
        b->oldest = mail->next;
        if (!b->oldest)
            b->newest = NULL;
        __atomic_sub_fetch(&b->count, 1, __ATOMIC_RELEASE);
    } else {
        mail = NULL;
    }
    pthread_mutex_unlock(&b->lock);
    if (!mail)
        return 0;
    memcpy(dest, mail->data, mail->len < len ? mail->len : len);
    free(mail);
    return 1;
}

void mailbox_empty(uint32_t box)
{
    struct mailbox *b = &mailboxes[box];
    pthread_mutex_lock(&b->lock);
    struct mail *mail = b->oldest;
    b->oldest = b->newest = NULL;
    __atomic_store_n(&b->count, 0, __ATOMIC_RELEASE);
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
