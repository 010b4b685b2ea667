/* Waiting for peers: progress the transport, then the common wait policy (common/wait.h). */
#include "../transports/transport.h"
#include "runtime.h"

void progress_wait_step(unsigned *spins)
{
    if (rt.worker)
        transport_progress(rt.worker);
    wait_idle(spins);
}
