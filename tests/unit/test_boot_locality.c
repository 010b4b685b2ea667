/* SPDX-License-Identifier: BSD-3-Clause */
/* The process manager's list of a node's PEs: parsed in any order into ascending ranks, and
 * refused, saying why, where it names a rank outside the job or twice, has another length than
 * the node's PE count, or leaves out the PE that reads it. */
#include "../../src/bootstrap/boot_locality.h"
#include "unit.h"

#include <string.h>

#define SIZE 8 /* the job's PEs */

/* The list text as rank reads it on a node of count PEs: accepted with these ascending peers
 * (expected_why NULL), or refused with this reason. */
static void check(const char *text, int rank, int count, const int *expected,
                  const char *expected_why)
{
    int peers[SIZE + 1];
    char why[128] = "";
    memset(peers, 0xff, sizeof(peers));
    int rc = boot_local_peers_parse(text, rank, SIZE, peers, count, why, sizeof(why));
    if (!expected_why) {
        UNIT_CHECK(rc == 0, "'%s' for rank %d: refused (%s)", text, rank, why);
        for (int i = 0; rc == 0 && i < count; i++)
            UNIT_CHECK(peers[i] == expected[i], "'%s': peer %d is %d, expected %d", text, i,
                       peers[i], expected[i]);
        UNIT_CHECK(peers[count] == -1, "'%s': wrote past its %d peers", text, count);
        return;
    }
    UNIT_CHECK(rc == -1, "'%s' for rank %d: accepted", text, rank);
    UNIT_CHECK(!strcmp(why, expected_why), "'%s': why '%s', expected '%s'", text, why,
               expected_why);
    UNIT_CHECK(peers[count] == -1, "'%s': wrote past its %d peers", text, count);
}

int main(void)
{
    check("0,1,2,3", 2, 4, (const int[]){0, 1, 2, 3}, NULL);
    check("6,4,2", 4, 3, (const int[]){2, 4, 6}, NULL);
    check("7", 7, 1, (const int[]){7}, NULL);

    /* Two daemons of one engine on one host, each taking the host's name: the PEs of the first
     * are handed the second's peers. */
    check("2,3", 0, 2, NULL, "leave out this PE (rank 0)");
    check("0,1,8", 0, 3, NULL, "name '8', not one of the job's ranks 0 to 7");
    check("0,-1", 0, 2, NULL, "name '-1', not one of the job's ranks 0 to 7");
    check("0,1x", 0, 2, NULL, "name '1x', not one of the job's ranks 0 to 7");
    check("0,,1", 0, 3, NULL, "name '', not one of the job's ranks 0 to 7");
    check("", 0, 1, NULL, "name '', not one of the job's ranks 0 to 7");
    check("0,99999999999999999999", 0, 2, NULL,
          "name '99999999999999999999', not one of the job's ranks 0 to 7");
    check("0,1,2", 0, 2, NULL, "name 3 ranks where the node has 2");
    check("0,1", 0, 3, NULL, "name 2 ranks where the node has 3");
    check("0,3,3", 0, 3, NULL, "name rank 3 twice");
    return unit_finish("test_boot_locality");
}
