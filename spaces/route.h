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
#ifndef STRATA_ROUTE_H
#define STRATA_ROUTE_H

#include "kinds/kind.h"

#include <stddef.h>

enum route_kind { ROUTE_NONE, ROUTE_LOAD_STORE, ROUTE_KIND_COPY, ROUTE_TRANSPORT, ROUTE_OWNER };

/* One member's route. The pointers are set only where they may be used, so that the fast paths
 * test one word: load_store for plain loads and stores, cpu_atomics where atomics on the space are
 * CPU instructions too (one mechanism per space and target: see route_table_compute). */
struct route {
    char *load_store;
    char *cpu_atomics;
    char *attached; /* kind copy: the copy as the kind's copy engine reaches it */
    enum route_kind kind;
};

/* What decides the routes of one region, as this PE sees the job. */
struct route_inputs {
    int my_pe, n_pes;
    const unsigned char *member; /* per world PE */
    const unsigned char
        *node_peer;        /* per world PE: on this node and attachable (node mapping on) */
    char *const *attached; /* per world PE: the copy attached here (or this PE's base) */
    const struct kind_ops *kind;
    int transport_reaches; /* the transport registered this region's memory type */
};

/* Fills routes (n_pes entries). Atomics on a space are CPU instructions only when every member
 * reaches every other by load/store: were one of them to use the transport (a NIC, or a target's
 * progress engine), CPU instructions would not be atomic with respect to it. Returns 0, or -1
 * when a member cannot be reached at all (no transport and no attachment). */
int route_table_compute(const struct route_inputs *in, struct route *routes);

#endif
