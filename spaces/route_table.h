/* SPDX-License-Identifier: BSD-3-Clause */
/* Routes: how this PE reaches each member's copy of a region, decided once when the region's
 * peers are known (space creation, start-up) from the kind's capabilities, the transport's reach
 * and locality, and read by every operation. A new kind or transport adds cases here, not tests
 * in the operations.
 *
 *   load/store  the copy is mapped here and the CPU may use it (host memory of node peers)
 *   kind copy   the copy is attached here, but only the kind's copy engine may touch it (this
 *               PE's device memory; a node peer's device heap opened by an IPC handle)
 *   transport   the transport reaches it, with the key the region was registered with
 *   owner       the owner performs the operation through its kind, on an active message
 *   none        the PE is not a member of the region's space */
#ifndef STRATA_ROUTE_TABLE_H
#define STRATA_ROUTE_TABLE_H

#include "kinds/kind.h"

#include <stddef.h>

enum route_kind { ROUTE_NONE, ROUTE_LOAD_STORE, ROUTE_KIND_COPY, ROUTE_TRANSPORT, ROUTE_OWNER };

/* One member's route, as the operations read it (route_of). The pointers are set only where they
 * may be used, so that the fast paths test one word: load_store for plain loads and stores,
 * cpu_atomics where atomics on the space are CPU instructions too (one mechanism per space and
 * target: see route_table_compute). */
struct route {
    char *load_store;
    char *cpu_atomics;
    char *attached; /* kind copy: the copy as the kind's copy engine reaches it */
    enum route_kind kind;
};

/* A region's routes to every PE of the job. Every PE whose copy is attached here is reached the
 * same way, and so is every other member, so the table keeps one pointer per PE (a quarter of a
 * whole route, in a table that every region has and that grows with the job) and the rest once.
 * A node peer's copy may wait to be attached until this PE first reaches it (on_use): a PE then
 * maps only the peers it talks to, not every PE of its node. */
struct route_table {
    char **copies;               /* per world PE: its copy attached here (this PE's own), or NULL */
    const unsigned char *member; /* per world PE: the members of the region's space */
    enum route_kind here;        /* PEs with a copy: ROUTE_LOAD_STORE or ROUTE_KIND_COPY */
    enum route_kind elsewhere;   /* other members: ROUTE_TRANSPORT or ROUTE_OWNER */
    int cpu_atomics;             /* atomics on the region are CPU instructions on the copies */
    unsigned char *on_use;       /* per world PE: its copy is attached on first use (or NULL) */
    /* Attaches pe's copy for on_use (NULL on failure, said in the log; errno ESRCH where pe's
     * process has ended). */
    char *(*attach)(void *owner, int pe);
    void *owner;
};

/* The route to pe of an on_use PE: attaches its copy, or ends the job if it cannot. */
struct route route_attach_on_use(const struct route_table *table, int pe);

/* The route to pe. ROUTE_NONE for every PE until the table is computed. */
static inline struct route route_of(const struct route_table *table, int pe)
{
    char *copy = __atomic_load_n(&table->copies[pe], __ATOMIC_ACQUIRE);
    if (__builtin_expect(copy != NULL, 1)) {
        int load_store = __builtin_expect(table->here == ROUTE_LOAD_STORE, 1);
        return (struct route){load_store ? copy : NULL, table->cpu_atomics ? copy : NULL,
                              load_store ? NULL : copy, table->here};
    }
    if (table->on_use && table->on_use[pe])
        return route_attach_on_use(table, pe);
    return (struct route){NULL, NULL, NULL, table->member[pe] ? table->elsewhere : ROUTE_NONE};
}

/* What decides the routes of one region, as this PE sees the job. */
struct route_inputs {
    int my_pe, n_pes;
    /* per world PE: on this node and attachable (node mapping on) */
    const unsigned char *node_peer;
    const struct kind_ops *kind;
    int transport_reaches;     /* the transport registered this region's memory type */
    int transport_cpu_atomics; /* its atomics are CPU instructions at the target */
};

/* Decides how table's PEs are reached, from in and the table's copies, on_use PEs and members:
 * its own copy and node peers' where the kind lets them attach it (now, or on first use), the
 * transport or the owner for the other members. Atomics on a space are CPU instructions only when
 * every member reaches every other by load/store, or the transport's atomics are CPU instructions
 * at their target too: were one of them to use a NIC's atomics, CPU instructions would not be
 * atomic with respect to it. Returns 0, or -1 when a member cannot be reached at all (no transport
 * and no attachment) or has a copy it must not be reached by. */
int route_table_compute(const struct route_inputs *in, struct route_table *table);

#endif
