/* SPDX-License-Identifier: BSD-3-Clause */
/* Route tables (route_table.h). */
#define _GNU_SOURCE /* PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP */
#include "route_table.h"

#include "../common/log.h"

#include <errno.h>
#include <pthread.h>

/* Held while a copy is attached on first use. Recursive: finding a space's handle may read a
 * node peer's record, whose copy may be attached on first use too. */
static pthread_mutex_t route_attach_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

struct route route_attach_on_use(const struct route_table *table, int pe)
{
    pthread_mutex_lock(&route_attach_lock);
    if (!table->copies[pe]) {
        char *copy = table->attach(table->owner, pe);
        if (!copy && errno == ESRCH)
            log_fatal_lost_peer("spaces", "PE %d of this node has ended: its memory is gone", pe);
        if (!copy)
            log_fatal("spaces", "cannot map the symmetric memory of PE %d on this node", pe);
        __atomic_store_n(&table->copies[pe], copy, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&route_attach_lock);
    return route_of(table, pe);
}

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
        int attached = table->copies[pe] || (table->on_use && table->on_use[pe]);
        if (here != attached)
            return -1;
        all_here &= here || !table->member[pe];
    }
    table->here = kind_can(in->kind, KIND_CAP_LOAD_STORE) ? ROUTE_LOAD_STORE : ROUTE_KIND_COPY;
    table->elsewhere = in->transport_reaches ? ROUTE_TRANSPORT : ROUTE_OWNER;
    int transport_cpu = in->transport_reaches && in->transport_cpu_atomics;
    table->cpu_atomics = (all_here || transport_cpu) && table->here == ROUTE_LOAD_STORE;
    return 0;
}
