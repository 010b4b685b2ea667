/* SPDX-License-Identifier: BSD-3-Clause */
/* Waiting for peers: progress the transport, then the common wait policy (common/wait.h). */
#include "../transports/transport.h"
#include "runtime.h"

void progress_wait_step(struct progress_wait *wait)
{
    unsigned events = 0;
    if (rt.worker) {
        if (!wait->told) {
            wait->told = rt.transport;
            transport_wait_enter(wait->told);
        }
        events = transport_progress(rt.worker) + ctx_progress_outstanding();
    }
    job_end_poll();
    /* With more PEs than cores the PE waited for may share this core and answer through mapped
     * memory, which wakes no sleeper: a yield hands it the core at once. */
    if (wait->told && !wait_machine_oversubscribed()) {
        transport_wait_idle(rt.worker, &wait->idle, events,
                            wait_spin_ns * wait->spin_limit / wait_spins_before_yield);
        return;
    }
    if (!wait->spun) {
        wait->spun = 1;
        wait->spin_limit = wait_spin_limit(wait->spin_limit);
    }
    wait_idle_for(&wait->spins, wait->spin_limit, &wait->last_yield_ns);
}

void progress_wait_end(struct progress_wait *wait)
{
    if (wait->told) {
        transport_wait_finish(&wait->idle);
        transport_wait_leave(wait->told);
    }
    if (wait->spun)
        wait_spin_adapt(wait->last_yield_ns);
}
