/* Strata extensions beyond OpenSHMEM 1.6. The memory-spaces API lives in shmem.h itself, as the
 * spaces proposal specifies; this header exists so that portable programs can include it. */
#ifndef SHMEMX_H
#define SHMEMX_H

#include <shmem.h>

#endif
