/* SPDX-License-Identifier: BSD-3-Clause */
/* Mailboxes (src/mailbox.h): mail is expected oldest first and only by its own tag, comes to a
 * box or straight to where it is expected, boxes are apart, emptying drops what is left, and
 * mail delivered by one thread while another expects it arrives whole and in order. */
#include "../../src/mailbox.h"
#include "unit.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define STREAM 20000

/* Delivers text, its terminating zero too. */
static void deliver_text(uint32_t box, uint64_t tag, const char *text)
{
    mailbox_deliver(box, tag, text, strlen(text) + 1);
}

/* Expects the mail tagged tag in box into got (size bytes, zeroed first); 1 if it has arrived. */
static int expect_now(uint32_t box, uint64_t tag, char *got, size_t size)
{
    memset(got, 0, size);
    mailbox_expect(box, tag, got, size);
    return mailbox_arrived(box);
}

/* Mails of 1-3 words. */
static void *deliver_stream(void *arg)
{
    (void)arg;
    for (uint64_t tag = 1; tag <= STREAM; tag++) {
        uint64_t words[3] = {tag, ~tag, tag * 3};
        mailbox_deliver(2, tag, words, (tag % 3 + 1) * sizeof(uint64_t));
    }
    return NULL;
}

static void check_queued(void)
{
    char got[8];
    UNIT_CHECK(!expect_now(0, 1, got, sizeof(got)), "an empty box gave mail");
    mailbox_unexpect(0);

    deliver_text(0, 1, "one");
    deliver_text(0, 2, "two");
    deliver_text(1, 2, "other");
    UNIT_CHECK(!expect_now(0, 2, got, sizeof(got)), "mail 2 arrived before the older mail 1");
    mailbox_unexpect(0);
    UNIT_CHECK(expect_now(0, 1, got, sizeof(got)) && !strcmp(got, "one"),
               "mail 1: got '%s', expected 'one'", got);
    UNIT_CHECK(!expect_now(0, 1, got, sizeof(got)), "mail 1 arrived twice");
    mailbox_unexpect(0);
    UNIT_CHECK(expect_now(0, 2, got, 2) && !memcmp(got, "tw\0", 3),
               "mail 2 into 2 bytes: got '%s', expected 'tw'", got);
    UNIT_CHECK(expect_now(1, 2, got, sizeof(got)) && !strcmp(got, "other"),
               "box 1 lost its mail to box 0's: got '%s'", got);
}

static void check_expected(void)
{
    char got[8];
    UNIT_CHECK(!expect_now(0, 5, got, sizeof(got)), "mail 5 arrived before it was sent");
    deliver_text(0, 4, "four"); /* not the expected mail: kept in the box */
    UNIT_CHECK(!mailbox_arrived(0) && !strcmp(got, ""), "mail 4 written where 5 is expected: '%s'",
               got);
    deliver_text(0, 5, "five");
    UNIT_CHECK(mailbox_arrived(0) && !strcmp(got, "five"), "mail 5: got '%s', expected 'five'",
               got);
    UNIT_CHECK(expect_now(0, 4, got, sizeof(got)) && !strcmp(got, "four"),
               "mail 4, kept while 5 was expected: got '%s'", got);

    memset(got, 0, sizeof(got));
    UNIT_CHECK(!expect_now(0, 7, got, 3), "mail 7 arrived before it was sent");
    deliver_text(0, 7, "seven");
    UNIT_CHECK(mailbox_arrived(0) && !memcmp(got, "sev\0", 4),
               "mail 7 into 3 bytes: got '%s', expected 'sev'", got);

    UNIT_CHECK(!expect_now(0, 8, got, sizeof(got)), "mail 8 arrived before it was sent");
    mailbox_unexpect(0);
    deliver_text(0, 8, "eight");
    UNIT_CHECK(!strcmp(got, ""), "mail 8 written to a buffer no longer expecting it: '%s'", got);
    UNIT_CHECK(expect_now(0, 8, got, sizeof(got)) && !strcmp(got, "eight"),
               "mail 8, kept once unexpected: got '%s'", got);
}

static void check_dropped(void)
{
    char got[8];
    deliver_text(1, 7, "x");
    deliver_text(1, 8, "y");
    mailbox_empty(1);
    UNIT_CHECK(!expect_now(1, 7, got, sizeof(got)), "mail left after mailbox_empty");
    mailbox_empty(1);
    deliver_text(1, 7, "z");
    UNIT_CHECK(!mailbox_arrived(1) && !strcmp(got, ""),
               "mail written where mailbox_empty ended the expectation: '%s'", got);
    mailbox_empty(1);
    deliver_text(3, 1, "nowhere"); /* no such box: dropped with an error */
    UNIT_CHECK(!expect_now(0, 1, got, sizeof(got)) && !expect_now(2, 1, got, sizeof(got)),
               "mail for a box that does not exist landed in another");
    mailbox_unexpect(0);
    mailbox_unexpect(2);
}

static void check_stream(void)
{
    pthread_t sender;
    UNIT_CHECK(pthread_create(&sender, NULL, deliver_stream, NULL) == 0, "pthread_create failed");
    long wrong = 0;
    for (uint64_t tag = 1; tag <= STREAM; tag++) {
        uint64_t words[3] = {0, 0, 0};
        mailbox_expect(2, tag, words, sizeof(words));
        while (!mailbox_arrived(2))
            ;
        size_t n = tag % 3 + 1;
        wrong += words[0] != tag || (n > 1 && words[1] != ~tag) || (n > 2 && words[2] != tag * 3) ||
                 (n < 3 && words[2] != 0);
    }
    pthread_join(sender, NULL);
    UNIT_CHECK(wrong == 0, "%ld of %d streamed mails wrong", wrong, STREAM);
    char got[8];
    UNIT_CHECK(!expect_now(2, STREAM + 1, got, sizeof(got)), "mail beyond the stream");
}

int main(void)
{
    UNIT_CHECK(mailbox_init(3) == 0, "mailbox_init(3) failed");
    check_queued();
    check_expected();
    check_dropped();
    check_stream();
    mailbox_fini();
    return unit_finish("test_mailbox");
}
