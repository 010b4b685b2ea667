/* SPDX-License-Identifier: BSD-3-Clause */
/* A stand-in for a GPU runtime library: loading it leaves a mark (the file that
 * STRATA_TEST_RUNTIME_MARK names), so a test can tell whether the library loaded it. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void fake_runtime_loaded(void)
{
    const char *mark = getenv("STRATA_TEST_RUNTIME_MARK");
    if (mark)
        close(open(mark, O_CREAT | O_WRONLY, 0600));
}
