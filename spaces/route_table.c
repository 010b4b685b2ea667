/* SPDX-License-Identifier: BSD-3-Clause */
/* Route tables (route_table.h). */
#include "route_table.h"

/* Whether this PE reaches pe's copy itself: its own, or a node peer's that the kind attaches. */
static int route_here(const struct route_inputs *in, int pe)
{
    return pe == in->my_pe || (in->node_peer[pe] && kind_can(in->kind, KIND_CAP_PEER_ATTACH));
}

int route_table_compute(const struct route_inputs *in, struct route_table *table)
{
    int all_here = 1;
    for (int pe = 0; pe < in->n_pes; pe++) {
        int here = table->member[pe] && route_here(in, pe);
        if (here != (table->copies[pe] != NULL))
            return -1;
        all_here &= here || !table->member[pe];
    }
    table->here = kind_can(in->kind, KIND_CAP_LOAD_STORE) ? ROUTE_LOAD_STORE : ROUTE_KIND_COPY;
    table->elsewhere = in->transport_reaches ? ROUTE_TRANSPORT : ROUTE_OWNER;
    int transport_cpu = in->transport_reaches && in->transport_cpu_atomics;
    table->cpu_atomics = (all_here || transport_cpu) && table->here == ROUTE_LOAD_STORE;
    return 0;
}
