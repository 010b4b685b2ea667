/* Mailboxes (src/mailbox.h): mail is taken oldest first and only by its own tag, boxes are apart,
 * emptying drops what is left, and mail delivered by one thread while another takes it arrives
 * whole and in order. */
#include "../../src/mailbox.h"
#include "unit.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define STREAM 20000

static void *deliver_stream(void *arg)
{
    (void)arg;
    for (uint64_t tag = 1; tag <= STREAM; tag++) {
        uint64_t words[3] = {tag, ~tag, tag * 3};
        mailbox_deliver(2, tag, words, (tag % 3 + 1) * sizeof(uint64_t));
    }
    return NULL;
}

int main(void)
{
    UNIT_CHECK(mailbox_init(3) == 0, "mailbox_init(3) failed");
    char got[8] = {0};
    UNIT_CHECK(!mailbox_take(0, 1, got, sizeof(got)), "an empty box gave mail");

    mailbox_deliver(0, 1, "one", 4);
    mailbox_deliver(0, 2, "two", 4);
    mailbox_deliver(1, 2, "other", 6);
    UNIT_CHECK(!mailbox_take(0, 2, got, sizeof(got)), "mail 2 taken before the older mail 1");
    UNIT_CHECK(mailbox_take(0, 1, got, sizeof(got)) && !strcmp(got, "one"),
               "mail 1: took '%s', expected 'one'", got);
    UNIT_CHECK(!mailbox_take(0, 1, got, sizeof(got)), "mail 1 taken twice");
    memset(got, 0, sizeof(got));
    UNIT_CHECK(mailbox_take(0, 2, got, 2) && !memcmp(got, "tw\0", 3),
               "mail 2 into 2 bytes: took '%s', expected 'tw'", got);
    UNIT_CHECK(mailbox_take(1, 2, got, sizeof(got)) && !strcmp(got, "other"),
               "box 1 lost its mail to box 0's takes: took '%s'", got);

    mailbox_deliver(1, 7, "x", 2);
    mailbox_deliver(1, 8, "y", 2);
    mailbox_empty(1);
    UNIT_CHECK(!mailbox_take(1, 7, got, sizeof(got)) && !mailbox_take(1, 8, got, sizeof(got)),
               "mail left after mailbox_empty");
    mailbox_deliver(3, 1, "nowhere", 8); /* no such box: dropped with an error */
    UNIT_CHECK(!mailbox_take(0, 1, got, sizeof(got)) && !mailbox_take(2, 1, got, sizeof(got)),
               "mail for a box that does not exist landed in another");

    pthread_t sender;
    UNIT_CHECK(pthread_create(&sender, NULL, deliver_stream, NULL) == 0, "pthread_create failed");
    long wrong = 0;
    for (uint64_t tag = 1; tag <= STREAM; tag++) {
        uint64_t words[3] = {0, 0, 0};
        while (!mailbox_take(2, tag, words, sizeof(words)))
            ;
        size_t n = tag % 3 + 1;
        wrong += words[0] != tag || (n > 1 && words[1] != ~tag) || (n > 2 && words[2] != tag * 3) ||
                 (n < 3 && words[2] != 0);
    }
    pthread_join(sender, NULL);
    UNIT_CHECK(wrong == 0, "%ld of %d streamed mails wrong", wrong, STREAM);
    UNIT_CHECK(!mailbox_take(2, STREAM + 1, got, sizeof(got)), "mail beyond the stream");
    mailbox_fini();
    return unit_finish("test_mailbox");
}
