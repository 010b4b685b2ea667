/* SPDX-License-Identifier: BSD-3-Clause */
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

/* One variable set to text, every other knob at its default: accepted or rejected, and a
 * rejection names the variable, the value and the accepted forms. */
static void check_knob(const char *var, const char *text, int ok)
{
    struct knobs knobs;
    char err[256] = "";
    setenv(var, text, 1);
    int rc = knobs_read(&knobs, err, sizeof(err));
    unsetenv(var);
    UNIT_CHECK((rc == 0) == ok, "%s='%s': expected %s (%s)", var, text,
               ok ? "accepted" : "rejected", err);
    if (!ok)
        UNIT_CHECK(strstr(err, var) && strstr(err, text) && strstr(err, "expected"),
                   "the message names %s and '%s': %s", var, text, err);
}

int main(void)
{
    check_size("0", 1, 0); /* a size; the heap knobs want more than 0 */
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
    unsetenv("SHMEM_DEBUG");

    /* Every knob is checked against its type's forms; a bad value names the variable. */
    check_knob("SHMEM_SYMMETRIC_SIZE", "0", 0);
    check_knob("SHMEM_SYMMETRIC_SIZE", "1", 1);
    check_knob("SHMEM_TEST_DEVICE_SIZE", "0", 0);
    check_knob("SHMEM_TEST_DEVICE_SIZE", "64M", 1);
    check_knob("SHMEM_PROGRESS_INTERVAL_US", "0", 1);
    check_knob("SHMEM_PROGRESS_INTERVAL_US", "1000000", 1);
    check_knob("SHMEM_PROGRESS_INTERVAL_US", "1000001", 0);
    check_knob("SHMEM_PROGRESS_INTERVAL_US", "1M", 0); /* microseconds take no size suffix */
    check_knob("SHMEM_PROGRESS_INTERVAL_US", "-5", 0);
    check_knob("SHMEM_TEST_COLLECT_ROUND", "1", 1);
    check_knob("SHMEM_TEST_COLLECT_ROUND", "1024", 1);
    check_knob("SHMEM_TEST_COLLECT_ROUND", "2000", 0); /* an error, never clamped */
    check_knob("SHMEM_TEST_COLLECT_ROUND", "0", 0);
    check_knob("SHMEM_TEST_COLLECT_ROUND", "3k", 0);
    for (const char *const *text = (const char *const[]){"1", "y", "YES", "on", "True", "0", "n",
                                                         "no", "OFF", "false", NULL};
         *text; text++)
        check_knob("SHMEM_BULK_LANE", *text, 1);
    check_knob("SHMEM_BULK_LANE", "2", 0);
    check_knob("SHMEM_PROGRESS_THREAD", "garbage", 0);
    check_knob("SHMEM_PROGRESS_THREAD", "", 0);
    check_knob("SHMEM_PROGRESS_THREAD", "auto", 1);
    check_knob("SHMEM_PROGRESS_THREAD", "off", 1);
    check_knob("SHMEM_DEVICE_MAP", "garbage", 0);
    check_knob("SHMEM_DEVICE_MAP", "1,,0", 0);
    check_knob("SHMEM_DEVICE_MAP", "1,0,", 0);
    check_knob("SHMEM_DEVICE_MAP", "1-2", 0);
    check_knob("SHMEM_DEVICE_MAP", "", 1);
    check_knob("SHMEM_DEVICE_MAP", "1,0,-,3", 1);
    check_knob("SHMEM_DEVICE_MAP", "0+1,1+0,2+3+1", 1);
    check_knob("SHMEM_DEVICE_MAP", "0+,1", 0);
    check_knob("SHMEM_DEVICE_MAP", "+0", 0);
    check_knob("SHMEM_DEVICE_MAP", "0++1", 0);
    check_knob("SHMEM_DEVICE_MAP", "-+1", 0);
    check_knob("SHMEM_TEST_DEVICE_PES", "all", 0);
    check_knob("SHMEM_TEST_DEVICE_PES", "3-1", 0);
    check_knob("SHMEM_TEST_DEVICE_PES", "0,,2", 0);
    check_knob("SHMEM_TEST_DEVICE_PES", "-1", 0);
    check_knob("SHMEM_TEST_DEVICE_PES", "0,2,4-7", 1);
    check_knob("SHMEM_DEFAULT_SPACE", "tpu", 0);
    check_knob("SHMEM_DEFAULT_SPACE", "GPU", 0);
    check_knob("SHMEM_DEFAULT_SPACE", "hip", 1);
    check_knob("SHMEM_LOG", "rma,bogus", 0);
    check_knob("SHMEM_LOG", "rma,", 0);
    check_knob("SHMEM_LOG", "mem,rma", 1);

    setenv("SHMEM_PROGRESS_THREAD", "auto", 1);
    setenv("SHMEM_LOG", "rma,init", 1);
    UNIT_CHECK(knobs_read(&knobs, err, sizeof(err)) == 0 && knobs.PROGRESS_THREAD == KNOB_AUTO,
               "auto is its own value");
    UNIT_CHECK(knobs_log_mask(knobs.LOG) == 5, "rma,init: mask %u", knobs_log_mask(knobs.LOG));
    UNIT_CHECK(knobs_log_mask("team,mem") == 10, "team,mem: mask %u", knobs_log_mask("team,mem"));
    UNIT_CHECK(knobs_log_mask("all") == 15, "all: mask %u", knobs_log_mask("all"));
    return unit_finish("test_knobs");
}
