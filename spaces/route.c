/* Route tables (route.h). */
#include "route.h"

static enum route_kind route_choose(const struct route_inputs *in, int pe)
{
    if (!in->member[pe])
        return ROUTE_NONE;
    int here = pe == in->my_pe || (in->node_peer[pe] && kind_can(in->kind, KIND_CAP_PEER_ATTACH));
    if (here)
        return kind_can(in->kind, KIND_CAP_LOAD_STORE) ? ROUTE_LOAD_STORE : ROUTE_KIND_COPY;
    if (in->transport_reaches)
        return ROUTE_TRANSPORT;
    return ROUTE_OWNER;
}

int route_table_compute(const struct route_inputs *in, struct route *routes)
{
    int all_load_store = 1;
    for (int pe = 0; pe < in->n_pes; pe++) {
        enum route_kind kind = route_choose(in, pe);
        char *copy = in->attached[pe];
        if ((kind == ROUTE_LOAD_STORE || kind == ROUTE_KIND_COPY) && !copy)
            return -1;
        routes[pe] = (struct route){
            .load_store = kind == ROUTE_LOAD_STORE ? copy : NULL,
            .attached = kind == ROUTE_KIND_COPY ? copy : NULL,
            .kind = kind,
        };
        all_load_store &= kind == ROUTE_LOAD_STORE || kind == ROUTE_NONE;
    }
    for (int pe = 0; all_load_store && pe < in->n_pes; pe++)
        routes[pe].cpu_atomics = routes[pe].load_store;
    return 0;
}
