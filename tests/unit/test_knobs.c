/* Size parsing and knob reading (1.6 section 8: SHMEM_SYMMETRIC_SIZE accepts k/K/m/M/g/G/t/T). */
#include "../../src/knobs.h"
#include "unit.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_size(const char *text, int ok, size_t expected)
{
    size_t value = 0;
    int rc = knobs_parse_size(text, &value);
    UNIT_CHECK((rc == 0) == ok, "'%s': expected %s, rc %d", text, ok ? "accepted" : "rejected", rc);
    if (ok)
        UNIT_CHECK(value == expected, "'%s': expected %zu, got %zu", text, expected, value);
}

int main(void)
{
    check_size("0", 1, 0);
    check_size("4096", 1, 4096);
    check_size("1k", 1, 1024);
    check_size("1K", 1, 1024);
    check_size("512m", 1, 512UL << 20);
    check_size("512M", 1, 512UL << 20);
    check_size("4G", 1, 4UL << 30);
    check_size("4g", 1, 4UL << 30);
    check_size("2T", 1, 2UL << 40);
    check_size("2t", 1, 2UL << 40);
    check_size("12Q", 0, 0);
    check_size("", 0, 0);
    check_size("M", 0, 0);
    check_size("-1", 0, 0);
    check_size("1.5G", 0, 0);
    check_size("10MB", 0, 0);
    check_size(" 10", 0, 0);
    check_size("99999999999999999999", 0, 0);
    check_size("16777216T", 0, 0); /* 2^64: overflows */

    struct knobs knobs;
    char err[256];
    unsetenv("SHMEM_SYMMETRIC_SIZE");
    unsetenv("SMA_SYMMETRIC_SIZE");
    UNIT_CHECK(knobs_read(&knobs, err, sizeof(err)) == 0, "defaults must parse: %s", err);
    UNIT_CHECK(knobs.SYMMETRIC_SIZE == 512UL << 20, "default heap %zu", knobs.SYMMETRIC_SIZE);

    setenv("SMA_SYMMETRIC_SIZE", "1M", 1);
    UNIT_CHECK(knobs_read(&knobs, err, sizeof(err)) == 0 && knobs.SYMMETRIC_SIZE == 1UL << 20,
               "SMA_ prefix read: %zu", knobs.SYMMETRIC_SIZE);
    setenv("SHMEM_SYMMETRIC_SIZE", "2M", 1);
    UNIT_CHECK(knobs_read(&knobs, err, sizeof(err)) == 0 && knobs.SYMMETRIC_SIZE == 2UL << 20,
               "SHMEM_ wins over SMA_: %zu", knobs.SYMMETRIC_SIZE);

    setenv("SHMEM_SYMMETRIC_SIZE", "12Q", 1);
    UNIT_CHECK(knobs_read(&knobs, err, sizeof(err)) == -1, "12Q must be rejected");
    UNIT_CHECK(strstr(err, "SHMEM_SYMMETRIC_SIZE") && strstr(err, "12Q") && strstr(err, "k/K"),
               "message names the variable, value and forms: %s", err);

    setenv("SHMEM_SYMMETRIC_SIZE", "1M", 1);
    setenv("SHMEM_DEBUG", "maybe", 1);
    UNIT_CHECK(knobs_read(&knobs, err, sizeof(err)) == -1 && strstr(err, "SHMEM_DEBUG"),
               "bad boolean rejected: %s", err);
    setenv("SHMEM_DEBUG", "yes", 1);
    UNIT_CHECK(knobs_read(&knobs, err, sizeof(err)) == 0 && knobs.DEBUG == 1, "yes is true");
    return unit_finish("test_knobs");
}
