/* SPDX-License-Identifier: BSD-3-Clause */
/* Route tables (spaces/route_table.h), computed without a launcher: for a host kind, the test
 * device kind and a fake device kind whose node peers attach it by IPC handles, with members on
 * this node and on another, node mapping on and off, and with and without a transport that reaches
 * the kind's memory, and a node peer attached on first use. PE 1 computes; PEs 0 and 1 share its
 * node, 2 and 3 are elsewhere; PE 3 is not a member. */
#include "route_table.h"
#include "unit.h"

#include <string.h>

enum { N_PES = 4, ME = 1 };

static const struct kind_ops fake_ipc = {
    .name = "fake IPC", .caps = KIND_CAP_PEER_ATTACH | KIND_CAP_TRANSPORT | KIND_CAP_ASYNC_COPY};

static char copies[N_PES][64]; /* this PE's memory and what it attached */

struct expected {
    enum route_kind kind[N_PES];
    int cpu_atomics; /* every member's route carries CPU atomics */
};

/* Computes the table of a region whose copies are attached as node mapping and the kind allow,
 * and checks every PE's route. */
static void check(const char *what, const struct kind_ops *kind, int node_direct, int transport,
                  int transport_cpu_atomics, struct expected want)
{
    const unsigned char member[N_PES] = {1, 1, 1, 0};
    unsigned char node_peer[N_PES] = {node_direct, 0, 0, 0};
    char *attached[N_PES] = {NULL};
    attached[ME] = copies[ME];
    if (node_direct && kind_can(kind, KIND_CAP_PEER_ATTACH))
        attached[0] = copies[0];
    struct route_inputs in = {ME, N_PES, node_peer, kind, transport, transport_cpu_atomics};
    struct route_table table = {
        .copies = attached, .member = member, .here = ROUTE_NONE, .elsewhere = ROUTE_NONE};
    for (int pe = 0; pe < N_PES; pe++)
        UNIT_CHECK(route_of(&table, pe).kind == ROUTE_NONE, "%s: PE %d routed before computed",
                   what, pe);
    UNIT_CHECK(route_table_compute(&in, &table) == 0, "%s: computed", what);
    for (int pe = 0; pe < N_PES; pe++) {
        struct route r = route_of(&table, pe);
        UNIT_CHECK(r.kind == want.kind[pe], "%s: PE %d route %d, expected %d", what, pe, r.kind,
                   want.kind[pe]);
        int here = r.kind == ROUTE_LOAD_STORE || r.kind == ROUTE_KIND_COPY;
        UNIT_CHECK(r.load_store == (r.kind == ROUTE_LOAD_STORE ? copies[pe] : NULL),
                   "%s: PE %d load/store pointer", what, pe);
        UNIT_CHECK(r.attached == (r.kind == ROUTE_KIND_COPY ? copies[pe] : NULL),
                   "%s: PE %d attached pointer", what, pe);
        UNIT_CHECK(here || (!r.load_store && !r.attached), "%s: PE %d pointers", what, pe);
        UNIT_CHECK(r.cpu_atomics == (want.cpu_atomics ? r.load_store : NULL),
                   "%s: PE %d CPU atomics %s", what, pe, want.cpu_atomics ? "expected" : "not");
    }
}

/* A node peer attached on first use: nothing is attached while the table is computed, the first
 * route to it attaches it once, and PEs elsewhere are routed as before. */
static int attach_calls;

static char *attach_counted(void *owner, int pe)
{
    attach_calls++;
    return ((char(*)[64])owner)[pe];
}

static void check_on_use(void)
{
    const unsigned char member[N_PES] = {1, 1, 1, 0};
    unsigned char node_peer[N_PES] = {1, 0, 0, 0}, on_use[N_PES] = {1, 0, 0, 0};
    char *attached[N_PES] = {NULL, copies[ME], NULL, NULL};
    struct route_inputs in = {ME, N_PES, node_peer, &kind_host, 1, 0};
    struct route_table table = {attached, member, ROUTE_NONE,     ROUTE_NONE,
                                0,        on_use, attach_counted, copies};
    UNIT_CHECK(route_table_compute(&in, &table) == 0, "on first use: computed");
    UNIT_CHECK(attach_calls == 0 && !attached[0], "on first use: nothing attached yet");
    struct route r = route_of(&table, 2);
    UNIT_CHECK(r.kind == ROUTE_TRANSPORT && attach_calls == 0, "on first use: PE elsewhere");
    for (int i = 0; i < 2; i++) {
        r = route_of(&table, 0);
        UNIT_CHECK(r.kind == ROUTE_LOAD_STORE && r.load_store == copies[0],
                   "on first use: route %d to the node peer", i);
        UNIT_CHECK(attach_calls == 1 && attached[0] == copies[0], "on first use: attached once");
    }
    /* A PE on another node may not wait to be attached either. */
    unsigned char elsewhere[N_PES] = {1, 0, 1, 0};
    char *again[N_PES] = {NULL, copies[ME], NULL, NULL};
    struct route_table wrong = {again, member,    ROUTE_NONE,     ROUTE_NONE,
                                0,     elsewhere, attach_counted, copies};
    UNIT_CHECK(route_table_compute(&in, &wrong) == -1, "on first use: a PE on another node");
}

/* A table whose copies contradict what reaches each PE is refused, not routed through. */
static void check_refused(const char *what, const unsigned char *member, char *const *attached)
{
    unsigned char node_peer[N_PES] = {1, 0, 0, 0};
    char *copies_given[N_PES];
    memcpy(copies_given, attached, sizeof(copies_given));
    struct route_inputs in = {
        .my_pe = ME, .n_pes = N_PES, .node_peer = node_peer, .kind = &kind_host};
    struct route_table table = {
        .copies = copies_given, .member = member, .here = ROUTE_NONE, .elsewhere = ROUTE_NONE};
    UNIT_CHECK(route_table_compute(&in, &table) == -1, "%s", what);
}

int main(void)
{
    const enum route_kind N = ROUTE_NONE, L = ROUTE_LOAD_STORE, K = ROUTE_KIND_COPY,
                          T = ROUTE_TRANSPORT, O = ROUTE_OWNER;
    /* Host memory: node peers by load/store, others through the transport; CPU atomics only
     * while no member needs the transport. */
    check("host, node mapping, transport", &kind_host, 1, 1, 0, (struct expected){{L, L, T, N}, 0});
    check("host, no node mapping", &kind_host, 0, 1, 0, (struct expected){{T, L, T, N}, 0});
    /* Unless the transport's atomics are the target CPU's too: then every member's are, and node
     * peers' stay CPU instructions; not through an owner, nor on a kind that copies. */
    check("host, transport with CPU atomics", &kind_host, 1, 1, 1,
          (struct expected){{L, L, T, N}, 1});
    check("host, CPU atomics, no node mapping", &kind_host, 0, 1, 1,
          (struct expected){{T, L, T, N}, 1});
    check("host, CPU atomics, transport does not reach it", &kind_host, 1, 0, 1,
          (struct expected){{L, L, O, N}, 0});
    check("IPC kind, transport with CPU atomics", &fake_ipc, 1, 1, 1,
          (struct expected){{K, K, T, N}, 0});
    /* A job whose members all share the node: no transport needed, CPU atomics everywhere. */
    {
        const unsigned char all_here[N_PES] = {1, 1, 0, 0};
        unsigned char node_peer[N_PES] = {1, 0, 0, 0};
        char *attached[N_PES] = {copies[0], copies[1], NULL, NULL};
        struct route_inputs in = {
            .my_pe = ME, .n_pes = N_PES, .node_peer = node_peer, .kind = &kind_host};
        struct route_table table = {
            .copies = attached, .member = all_here, .here = ROUTE_NONE, .elsewhere = ROUTE_NONE};
        UNIT_CHECK(route_table_compute(&in, &table) == 0, "host on one node");
        UNIT_CHECK(route_of(&table, 0).cpu_atomics == copies[0] &&
                       route_of(&table, 1).cpu_atomics == copies[1],
                   "host on one node: CPU atomics");
        UNIT_CHECK(route_of(&table, 2).kind == ROUTE_NONE && !route_of(&table, 2).cpu_atomics,
                   "non-member");
    }
    /* The test device: no attach, no transport registration: the owner performs everything
     * but this PE's own, which its kind copies. */
    check("test device, transport", &kind_testdev, 1, 0, 0, (struct expected){{O, K, O, N}, 0});
    check("test device, no node mapping", &kind_testdev, 0, 0, 0,
          (struct expected){{O, K, O, N}, 0});
    /* IPC-capable device memory: a node peer attached for the kind's copy engine; off the node
     * the transport when it reaches the memory type, else the owner. */
    check("IPC kind, transport reaches it", &fake_ipc, 1, 1, 0, (struct expected){{K, K, T, N}, 0});
    check("IPC kind, transport does not", &fake_ipc, 1, 0, 0, (struct expected){{K, K, O, N}, 0});
    check("IPC kind, no node mapping", &fake_ipc, 0, 1, 0, (struct expected){{T, K, T, N}, 0});
    check_on_use();
    /* A route that needs an attachment it does not have is an error, not a wild pointer; so is
     * a copy of a PE that is reached otherwise, or of a PE outside the space. */
    const unsigned char member[N_PES] = {1, 1, 1, 0};
    check_refused("a node peer left unattached", member,
                  (char *const[N_PES]){NULL, copies[1], NULL, NULL});
    check_refused("this PE's own copy missing", member,
                  (char *const[N_PES]){copies[0], NULL, NULL, NULL});
    check_refused("a copy of a PE on another node", member,
                  (char *const[N_PES]){copies[0], copies[1], copies[2], NULL});
    check_refused("a copy of a PE outside the space", member,
                  (char *const[N_PES]){copies[0], copies[1], NULL, copies[3]});
    return unit_finish("test_routes");
}
