/* Waiting for peers: progress the transport, then the common wait policy (common/wait.h). */
#include "../transports/transport.h"
#include "runtime.h"

void progress_wait_step(struct progress_wait *wait)
{
    if (rt.worker) {
        if (!wait->told) {
            wait->told = rt.transport;
            transport_wait_enter(wait->told);
        }
        transport_progress(rt.worker);
    }
    job_end_poll();
    wait_idle_for(&wait->spins, wait->spin_limit);
}

void progress_wait_end(struct progress_wait *wait)
{
    if (wait->told)
        transport_wait_leave(wait->told);
}
