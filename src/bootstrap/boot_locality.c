/* SPDX-License-Identifier: BSD-3-Clause */
/* PMIX_LOCAL_PEERS, parsed and checked (boot_locality.h). */
#include "boot_locality.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* One rank of the list, or -1 where the word is not one of the job's ranks. */
static int parse_rank(const char *word, size_t len, int size)
{
    char *end;
    errno = 0;
    long value = strtol(word, &end, 10);
    if (!len || word[0] == '-' || word[0] == '+' || end != word + len || errno || value >= size)
        return -1;
    return (int)value;
}

int boot_local_peers_parse(const char *text, int rank, int size, int *peers, int count, char *why,
                           size_t why_len)
{
    int found = 0;
    for (const char *word = text;; word++) {
        size_t len = strcspn(word, ",");
        int peer = parse_rank(word, len, size);
        if (peer < 0) {
            snprintf(why, why_len, "name '%.*s', not one of the job's ranks 0 to %d", (int)len,
                     word, size - 1);
            return -1;
        }
        if (found < count)
            peers[found] = peer;
        found++;
        word += len;
        if (!*word)
            break;
    }
    if (found != count) {
        snprintf(why, why_len, "name %d ranks where the node has %d", found, count);
        return -1;
    }
    qsort(peers, (size_t)count, sizeof(int), compare_int);
    int self = 0;
    for (int i = 0; i < count; i++) {
        if (i && peers[i] == peers[i - 1]) {
            snprintf(why, why_len, "name rank %d twice", peers[i]);
            return -1;
        }
        self |= peers[i] == rank;
    }
    if (!self) {
        snprintf(why, why_len, "leave out this PE (rank %d)", rank);
        return -1;
    }
    return 0;
}
