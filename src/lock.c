/* SPDX-License-Identifier: BSD-3-Clause */
/* Distributed locks (1.6 section 9.12): an MCS queue lock, so that waiters queue in arrival order
 * and each spins on its own memory (no thundering herd).
 *
 * The symmetric long is split into two 32-bit words:
 *   word 0 on the lock's home PE (lock_home.h)  the queue's tail: the last PE in line, plus one
 *                                               (0: the lock is free);
 *   word 1 on each PE                           that PE's queue node: bit 31 set while it waits
 *                                               for the lock, the low bits the PE behind it,
 *                                               plus one (0: none yet).
 * A waiter appends itself by swapping the tail, links itself behind its predecessor, and spins
 * on its own node until the predecessor clears the waiting bit. All remote updates are atomics
 * routed by the space's coherence rule, so the lock works across nodes as well. */
#include "amo.h"
#include "lock_home.h"
#include "route_target.h"

#define LOCK_WAITING 0x80000000u
#define LOCK_NEXT_MASK 0x7fffffffu

struct lock_words {
    uint32_t *tail; /* meaningful on the home PE */
    uint32_t *node;
    int home;
};

static struct lock_words lock_words(const char *routine, long *lock)
{
    struct region *region = region_lookup(lock);
    if (unlikely(!region))
        rma_report_bad_address(routine, lock, rt.my_pe);
    uint32_t *words = (uint32_t *)lock;
    int home = lock_home_pe(region->id, (size_t)((char *)lock - region->base), rt.n_pes);
    return (struct lock_words){&words[0], &words[1], home};
}

static uint32_t lock_op(const char *routine, enum transport_amo op, uint32_t *word, uint32_t value,
                        uint32_t compare, int fetch, int pe)
{
    return (uint32_t)amo_op(SHMEM_CTX_DEFAULT, routine, op, word, sizeof(uint32_t), value, compare,
                            fetch, pe);
}

/* Spins on this PE's own node until the bits under mask are set (want_set) or clear. */
static uint32_t lock_wait_for(uint32_t *node, uint32_t mask, int want_set)
{
    uint32_t seen;
    PROGRESS_WAIT_WHILE(((seen = __atomic_load_n(node, __ATOMIC_ACQUIRE)) & mask ? 1 : 0) !=
                        want_set);
    return seen;
}

void shmem_set_lock(long *lock)
{
    runtime_require_init("shmem_set_lock");
    struct lock_words w = lock_words("shmem_set_lock", lock);
    uint32_t me = (uint32_t)rt.my_pe + 1;
    /* Nobody can see this node until the swap below publishes it. */
    __atomic_store_n(w.node, LOCK_WAITING, __ATOMIC_RELEASE);
    uint32_t pred = lock_op("shmem_set_lock", TRANSPORT_AMO_SWAP, w.tail, me, 0, 1, w.home);
    if (pred == 0)
        return;
    lock_op("shmem_set_lock", TRANSPORT_AMO_OR, w.node, me, 0, 0, (int)pred - 1);
    lock_wait_for(w.node, LOCK_WAITING, 0);
}

int shmem_test_lock(long *lock)
{
    runtime_require_init("shmem_test_lock");
    struct lock_words w = lock_words("shmem_test_lock", lock);
    uint32_t me = (uint32_t)rt.my_pe + 1;
    __atomic_store_n(w.node, 0, __ATOMIC_RELEASE);
    uint32_t old = lock_op("shmem_test_lock", TRANSPORT_AMO_CSWAP, w.tail, me, 0, 1, w.home);
    return old == 0 ? 0 : 1;
}

void shmem_clear_lock(long *lock)
{
    runtime_require_init("shmem_clear_lock");
    struct lock_words w = lock_words("shmem_clear_lock", lock);
    uint32_t me = (uint32_t)rt.my_pe + 1;
    /* Stores made while holding the lock complete before the next holder enters (kinds' writes
     * of every context too). */
    order_quiet_all();
    uint32_t next = __atomic_load_n(w.node, __ATOMIC_ACQUIRE) & LOCK_NEXT_MASK;
    if (!next) {
        if (lock_op("shmem_clear_lock", TRANSPORT_AMO_CSWAP, w.tail, 0, me, 1, w.home) == me)
            return; /* nobody waiting */
        /* A successor swapped the tail but has not linked itself yet. */
        next = lock_wait_for(w.node, LOCK_NEXT_MASK, 1) & LOCK_NEXT_MASK;
    }
    lock_op("shmem_clear_lock", TRANSPORT_AMO_AND, w.node, ~LOCK_WAITING, 0, 0, (int)next - 1);
}
