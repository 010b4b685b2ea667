/* SPDX-License-Identifier: BSD-3-Clause */
/* The atomics coherence rule and the UCX 1.13 workaround, checked without a launcher: amo_op runs
 * against a recording transport. When a route allows no CPU atomics (the space's atomics are the
 * transport's), every atomic must reach the transport, even to a copy mapped here, and a fetching
 * AND/OR/XOR must never be handed to it as such (UCX stores op(old, old) for those over shared
 * memory): it must arrive as fetch + compare-swap, and still give the right old value and leave the
 * right result. */
#include "../../src/amo.h"
#include "../../src/staged.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

struct runtime rt;
struct strata_ctx strata_default_ctx;
shmem_ctx_t SHMEM_CTX_DEFAULT = &strata_default_ctx;

static uint64_t remote_word; /* the target's word, as the fake transport sees it */
static int calls, bitwise_fetches;

int transport_atomic(struct transport_worker *t, enum transport_amo op, int pe, int id,
                     size_t offset, uint64_t value, uint64_t compare, void *fetch, size_t size)
{
    (void)t, (void)pe, (void)id, (void)offset, (void)size;
    calls++;
    uint64_t old = remote_word;
    switch (op) {
    case TRANSPORT_AMO_ADD:
        remote_word += value;
        break;
    case TRANSPORT_AMO_AND:
    case TRANSPORT_AMO_OR:
    case TRANSPORT_AMO_XOR:
        if (fetch)
            bitwise_fetches++;
        remote_word = op == TRANSPORT_AMO_AND  ? old & value
                      : op == TRANSPORT_AMO_OR ? old | value
                                               : old ^ value;
        break;
    case TRANSPORT_AMO_SWAP:
        remote_word = value;
        break;
    case TRANSPORT_AMO_CSWAP:
        if (old == compare)
            remote_word = value;
        break;
    }
    if (fetch)
        memcpy(fetch, &old, 8);
    return 0;
}

/* What amo.c needs from the rest of the library. */
void log_fatal(const char *routine, const char *fmt, ...)
{
    fprintf(stderr, "unexpected fatal error in %s: %s\n", routine, fmt);
    exit(2);
}
void log_fatal_lost_peer(const char *routine, const char *fmt, ...)
{
    fprintf(stderr, "unexpected fatal error in %s: %s\n", routine, fmt);
    exit(2);
}
void rma_report_bad_pe(const char *routine, int pe)
{
    log_fatal(routine, "bad pe");
    (void)pe;
}
void rma_report_bad_address(const char *routine, const void *addr, int pe)
{
    (void)addr, (void)pe;
    log_fatal(routine, "bad address");
}
void rma_report_overrun(const char *routine, const void *addr, size_t len, int pe)
{
    (void)addr, (void)len, (void)pe;
    log_fatal(routine, "overrun");
}
void rma_report_not_member(const char *routine, const void *addr, int pe)
{
    (void)addr, (void)pe;
    log_fatal(routine, "not a member");
}

void rma_report_no_transport(const char *routine, int pe)
{
    (void)pe;
    log_fatal(routine, "no transport");
}
int ctx_translate_pe(shmem_ctx_t ctx, const char *routine, int pe)
{
    (void)ctx;
    log_fatal(routine, "a test context needs no translation");
    return pe;
}
void rma_report_transport(const char *routine, int pe)
{
    (void)pe;
    log_fatal(routine, "transport");
}

/* Host memory: atomics on it never take the device path. */
uint64_t staged_atomic(const char *routine, enum transport_amo op,
                       const struct route_target *target, size_t size, uint64_t value,
                       uint64_t compare, int pe)
{
    (void)op, (void)target, (void)size, (void)value, (void)compare, (void)pe;
    log_fatal(routine, "device path taken for host memory");
}

int main(void)
{
    static const struct kind_ops host_like = {.name = "host", .caps = KIND_CAP_LOAD_STORE};
    static uint64_t local[8], peer_copy[8];
    unsigned char members[2] = {1, 1};
    struct space space = {.member = members};
    /* PE 1's copy is mapped here, but the space's atomics are the transport's */
    char *copies[2] = {(char *)local, (char *)peer_copy};
    struct region region = {.base = (char *)local,
                            .size = sizeof(local),
                            .space = &space,
                            .routes = {copies, members, ROUTE_LOAD_STORE, ROUTE_TRANSPORT, 0},
                            .kind = &host_like};
    registry_add(&region);
    rt.n_pes = 2;
    strata_default_ctx.worker = (struct transport_worker *)&region; /* any non-NULL handle */

    const enum transport_amo ops[] = {TRANSPORT_AMO_AND, TRANSPORT_AMO_OR, TRANSPORT_AMO_XOR};
    for (int i = 0; i < 3; i++) {
        remote_word = 0xF0F0;
        calls = bitwise_fetches = 0;
        uint64_t old = amo_op(SHMEM_CTX_DEFAULT, "test", ops[i], &local[1], 8, 0x0FF0, 0, 1, 1);
        uint64_t expect = i == 0 ? 0x00F0 : i == 1 ? 0xFFF0 : 0xFF00;
        UNIT_CHECK(old == 0xF0F0, "fetching op %d returned %llx", i, (unsigned long long)old);
        UNIT_CHECK(remote_word == expect, "fetching op %d left %llx", i,
                   (unsigned long long)remote_word);
        UNIT_CHECK(bitwise_fetches == 0, "fetching op %d reached the transport as itself", i);
        UNIT_CHECK(calls >= 2, "fetching op %d did not go through the transport", i);
        UNIT_CHECK(peer_copy[1] == 0, "op %d used CPU atomics on a transport-atomics space", i);
    }
    /* Non-fetching bitwise ops and fetch-add go to the transport as they are, 32-bit too. */
    remote_word = 1;
    calls = 0;
    amo_op(SHMEM_CTX_DEFAULT, "test", TRANSPORT_AMO_OR, &local[2], 4, 6, 0, 0, 1);
    UNIT_CHECK(remote_word == 7 && calls == 1, "non-fetching or: %llu after %d calls",
               (unsigned long long)remote_word, calls);
    UNIT_CHECK(amo_op(SHMEM_CTX_DEFAULT, "test", TRANSPORT_AMO_ADD, &local[3], 8, 5, 0, 1, 1) == 7,
               "fetch-add returns the old value");

    /* A route with CPU atomics uses them on the mapped copy, no transport call. */
    region.routes.cpu_atomics = 1;
    calls = 0;
    peer_copy[4] = 0xF0;
    uint64_t old =
        amo_op(SHMEM_CTX_DEFAULT, "test", TRANSPORT_AMO_XOR, &local[4], 8, 0xFF, 0, 1, 1);
    UNIT_CHECK(old == 0xF0 && peer_copy[4] == 0x0F && calls == 0, "CPU path: old %llx new %llx",
               (unsigned long long)old, (unsigned long long)peer_copy[4]);
    return unit_finish("test_amo_routing");
}
