/* SPDX-License-Identifier: BSD-3-Clause */
/* 1.6 section 9.1: init_thread, query_thread, query_initialized, repeated init/finalize
 * (the last finalize releases), version and name, pcontrol, pe_accessible. */
#include "check.h"

#include <string.h>

int main(void)
{
    int initialized = -1, provided = -1, queried = -1;
    shmem_query_initialized(&initialized);
    CHECK(initialized == 0, "initialized before init: %d", initialized);
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided) == 0, "init_thread returned 0");
    CHECK(provided >= SHMEM_THREAD_SINGLE && provided <= SHMEM_THREAD_MULTIPLE, "provided %d",
          provided);
    shmem_query_thread(&queried);
    CHECK(queried == provided, "query_thread %d, init_thread gave %d", queried, provided);
    shmem_query_initialized(&initialized);
    CHECK(initialized == 1, "initialized after init: %d", initialized);

    int major = 0, minor = 0;
    shmem_info_get_version(&major, &minor);
    CHECK(major == 1 && minor == 6, "version %d.%d", major, minor);
    CHECK(major == SHMEM_MAJOR_VERSION && minor == SHMEM_MINOR_VERSION, "version constants");
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_name(name);
    CHECK(!strcmp(name, SHMEM_VENDOR_STRING), "name '%s'", name);
    CHECK(strlen(SHMEM_VENDOR_STRING) < SHMEM_MAX_NAME_LEN, "vendor string fits");
    CHECK(strlen(name) < SHMEM_MAX_NAME_LEN, "name fits SHMEM_MAX_NAME_LEN");
    shmem_pcontrol(0);
    shmem_pcontrol(1, "ignored");
    shmem_pcontrol(2);

    /* section 9.1.7: every PE of the job is reachable, nothing outside [0, n) is */
    int n_all = shmem_n_pes();
    for (int pe = 0; pe < n_all; pe++)
        CHECK(shmem_pe_accessible(pe) == 1, "shmem_pe_accessible(%d) of %d PEs", pe, n_all);
    CHECK(shmem_pe_accessible(-1) == 0, "shmem_pe_accessible(-1)");
    CHECK(shmem_pe_accessible(n_all) == 0, "shmem_pe_accessible(%d) with %d PEs", n_all, n_all);

    /* A nested init/finalize pair keeps the library up; RMA still works after it. */
    shmem_init();
    shmem_finalize();
    shmem_query_initialized(&initialized);
    CHECK(initialized == 1, "still initialized after an inner finalize");
    static int word;
    int n = shmem_n_pes(), me = shmem_my_pe();
    shmem_int_p(&word, me + 1, (me + 1) % n);
    shmem_barrier_all();
    CHECK(word == (me + n - 1) % n + 1, "RMA after an inner finalize");

    int failures = check_failures;
    shmem_finalize();
    shmem_query_initialized(&initialized);
    if (initialized != 0) {
        fprintf(stderr, "PE %d: initialized after the last finalize: %d\n", me, initialized);
        failures++;
    }
    return failures ? 1 : 0;
}
