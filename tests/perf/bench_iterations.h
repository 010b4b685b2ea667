/* SPDX-License-Identifier: BSD-3-Clause */
/* Iteration counts for the latency benchmarks, divided by BENCH_ITERATIONS_DIVISOR when it is
 * set (a positive integer): a round trip between two nodes whose cores run another job's
 * processes takes about 100 us, where the counts made for one node would run each figure for
 * 20 s and the whole program past its run's time limit. Plain C, as the benchmarks build with
 * any implementation. */
#ifndef STRATA_BENCH_ITERATIONS_H
#define STRATA_BENCH_ITERATIONS_H

#include <stdlib.h>

static int bench_iterations(int count)
{
    const char *text = getenv("BENCH_ITERATIONS_DIVISOR");
    int divisor = text ? atoi(text) : 1;
    if (divisor < 1)
        divisor = 1;
    return count / divisor > 0 ? count / divisor : 1;
}

#endif
