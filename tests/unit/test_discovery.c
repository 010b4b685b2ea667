/* SPDX-License-Identifier: BSD-3-Clause */
/* Device discovery without devices: the locality choice on a hand-written two-socket topology
 * with a GPU per socket (two cores each, an NVIDIA GPU of PCI class 0302 behind each host
 * bridge), the SHMEM_DEVICE_MAP and SHMEM_TEST_DEVICE_PES parsers, and a full
 * discovery on this machine, where CUDA and HIP report no device without failing.
 * Usage: test_discovery TOPOLOGY_XML */
#include "../../spaces/discovery.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

/* The pick of a PE bound to cpuset (NULL: unbound), local rank rank, of n devices; order gets
 * the order of all of them. */
static int pick(const char *xml, const char *const *gpus, int n, const char *cpuset, int rank,
                int *order)
{
    int scratch[4];
    return discovery_pick(xml, gpus, n, cpuset, rank, order ? order : scratch);
}

static void check_locality(const char *xml)
{
    const char *gpus[2] = {"0000:3b:00.0", "0000:af:00.0"};
    /* bound to one core or to a whole socket: that socket's GPU */
    UNIT_CHECK(pick(xml, gpus, 2, "0x1", 0, NULL) == 0, "core 0 -> GPU 0");
    UNIT_CHECK(pick(xml, gpus, 2, "0x2", 1, NULL) == 0, "core 1 -> GPU 0, any rank");
    UNIT_CHECK(pick(xml, gpus, 2, "0x4", 0, NULL) == 1, "core 2 -> GPU 1");
    UNIT_CHECK(pick(xml, gpus, 2, "0xc", 3, NULL) == 1, "socket 1 -> GPU 1");
    /* unbound, or bound across both sockets: round-robin by local rank */
    for (int rank = 0; rank < 4; rank++) {
        UNIT_CHECK(pick(xml, gpus, 2, NULL, rank, NULL) == rank % 2, "unbound rank %d", rank);
        UNIT_CHECK(pick(xml, gpus, 2, "0xf", rank, NULL) == rank % 2, "whole machine %d", rank);
    }
    /* a PE spanning core 1 and core 2 is near both: round-robin between them */
    UNIT_CHECK(pick(xml, gpus, 2, "0x6", 1, NULL) == 1, "straddling rank 1");
    /* a device hwloc does not know counts as near nobody */
    const char *unknown[2] = {"0000:3b:00.0", "0000:01:00.0"};
    UNIT_CHECK(pick(xml, unknown, 2, "0x4", 0, NULL) == 0, "unknown device");
    UNIT_CHECK(pick(xml, gpus, 0, "0x1", 0, NULL) == -1, "no device");
    /* The order of all: the pick, then the near ones, then the others, by number. With the GPUs
     * of socket 0 at 0 and 2 and those of socket 1 at 1 and 3, core 2 (socket 1) as local rank 1
     * picks 3, then 1, then 0 and 2. */
    const char *four[4] = {"0000:3b:00.0", "0000:af:00.0", "0000:3b:00.0", "0000:af:00.0"};
    int order[4] = {-1, -1, -1, -1};
    UNIT_CHECK(pick(xml, four, 4, "0x4", 1, order) == 3 && order[0] == 3 && order[1] == 1 &&
                   order[2] == 0 && order[3] == 2,
               "order of 4 from core 2, rank 1: %d %d %d %d", order[0], order[1], order[2],
               order[3]);
    UNIT_CHECK(pick(xml, four, 4, NULL, 2, order) == 2 && order[0] == 2 && order[1] == 0 &&
                   order[2] == 1 && order[3] == 3,
               "unbound rank 2: its pick, then the rest by number: %d %d %d %d", order[0], order[1],
               order[2], order[3]);
}

/* The devices of local rank's entry of map, as a string ("1+3", "-"), or the error code. */
static const char *map_entry(const char *map, int rank)
{
    static char text[64];
    int devices[8], n = discovery_map_entry(map, rank, devices, 8);
    if (n < 0) {
        snprintf(text, sizeof(text), "%d", n);
        return text;
    }
    text[0] = n ? 0 : '-';
    text[1] = 0;
    for (int i = 0; i < n; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s%d", i ? "+" : "",
                 devices[i]);
    return text;
}

static void check_device_map(void)
{
    static const struct {
        const char *map;
        int rank;
        const char *devices;
    } cases[] = {
        {"", 0, "-2"},     {NULL, 0, "-2"},         {"1,0", 0, "1"},     {"1,0", 1, "0"},
        {"1,0", 2, "1"},   {"0,-", 1, "-"},         {"3", 5, "3"},       {"1+3,0", 0, "1+3"},
        {"1+3,0", 1, "0"}, {"0,2+1+3", 1, "2+1+3"}, {"-,1+0", 1, "1+0"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        UNIT_CHECK(!strcmp(map_entry(cases[i].map, cases[i].rank), cases[i].devices),
                   "map '%s', rank %d: %s, not %s", cases[i].map ? cases[i].map : "(null)",
                   cases[i].rank, map_entry(cases[i].map, cases[i].rank), cases[i].devices);
    const char *bad[] = {"a",  "1,,0", "1;0",  "-1",  "0,",  "1x",
                         "1+", "+1",   "1++2", "1+1", "-+1", "1+-"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        UNIT_CHECK(!strcmp(map_entry(bad[i], 0), "-3") || !strcmp(map_entry(bad[i], 1), "-3"),
                   "malformed map '%s'", bad[i]);
    int devices[2];
    UNIT_CHECK(discovery_map_entry("0+1+2", 0, devices, 2) == -3, "more devices than max");
}

static void check_pe_list(void)
{
    UNIT_CHECK(discovery_pe_listed("", 0, 4) == 0, "empty list");
    UNIT_CHECK(discovery_pe_listed("0,2", 2, 4) == 1, "2 in 0,2");
    UNIT_CHECK(discovery_pe_listed("0,2", 1, 4) == 0, "1 not in 0,2");
    UNIT_CHECK(discovery_pe_listed("1-3", 3, 4) == 1, "3 in 1-3");
    UNIT_CHECK(discovery_pe_listed("1-3", 0, 4) == 0, "0 not in 1-3");
    UNIT_CHECK(discovery_pe_listed("0,2-3", 3, 4) == 1, "mixed list");
    const char *bad[] = {"x", "0,4", "3-1", "1-", "0,,1", "0,", "-2", "1 2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        UNIT_CHECK(discovery_pe_listed(bad[i], 0, 4) == -1, "malformed list '%s'", bad[i]);
}

static void check_this_machine(void)
{
    struct discovery d;
    char err[256] = "";
    struct discovery_job job = {2, 4, 0, 4, "", "0,2", (size_t)1 << 20, NULL, NULL};
    UNIT_CHECK(discovery_run(&job, &d, err, sizeof(err)) == 0, "discovery: %s", err);
    UNIT_CHECK(d.host_memory > 0, "host memory");
    UNIT_CHECK(d.n_chosen[DEVICE_FAMILY_TEST] == 1 &&
                   d.chosen[DEVICE_FAMILY_TEST][0]->memory == 1 << 20,
               "PE 2 has the test device");
    job.my_pe = 1;
    UNIT_CHECK(discovery_run(&job, &d, err, sizeof(err)) == 0 && !d.chosen[DEVICE_FAMILY_TEST][0],
               "PE 1 has none");
    job.test_device_pes = "0,9";
    UNIT_CHECK(discovery_run(&job, &d, err, sizeof(err)) == -1 &&
                   strstr(err, "SHMEM_TEST_DEVICE_PES=0,9"),
               "a PE out of range is named: %s", err);
    /* without CUDA or HIP here, their families are empty and say why */
    job.test_device_pes = "";
    UNIT_CHECK(discovery_run(&job, &d, err, sizeof(err)) == 0, "discovery: %s", err);
    if (!d.chosen[DEVICE_FAMILY_CUDA][0])
        UNIT_CHECK(d.absent[DEVICE_FAMILY_CUDA][0], "CUDA absent with a reason");
    if (!d.chosen[DEVICE_FAMILY_HIP][0])
        UNIT_CHECK(d.absent[DEVICE_FAMILY_HIP][0], "HIP absent with a reason");
}

/* A GPU runtime's test double as the runtime: its devices found, local ranks spread over them,
 * each PE's others after its own, SHMEM_DEVICE_MAP obeyed (several devices per entry too), and a
 * runtime path that does not load named. */
static void check_double(enum device_family family, const char *path)
{
    struct discovery d;
    char err[256] = "";
    const char *devices =
        family == DEVICE_FAMILY_CUDA ? "STRATA_CUDA_DOUBLE_DEVICES" : "STRATA_HIP_DOUBLE_DEVICES";
    const char *name = discovery_family_name(family);
    setenv(devices, "2", 1);
    struct discovery_job job = {3, 4, 3, 4, "", "", (size_t)1 << 20, NULL, NULL};
    const char **runtime = family == DEVICE_FAMILY_CUDA ? &job.cuda_driver : &job.hip_runtime;
    *runtime = path;
    UNIT_CHECK(discovery_run(&job, &d, err, sizeof(err)) == 0 &&
                   discovery_probe_gpus(&d, err, sizeof(err)) == 0,
               "%s discovery: %s", name, err);
    const struct device *gpu = d.chosen[family][0];
    UNIT_CHECK(gpu && gpu->ordinal == 1 && gpu->memory == (size_t)4 << 30 &&
                   !strcmp(gpu->busid, "0000:c1:00.0"),
               "%s: local rank 3 of 4 takes device 1 of 2: %d %s", name, gpu ? gpu->ordinal : -1,
               gpu ? gpu->busid : "-");
    UNIT_CHECK(d.n_chosen[family] == 2 && d.chosen[family][1]->ordinal == 0,
               "%s: device 0 is its second (device_index 1)", name);
    job.device_map = "1,1,1,0";
    UNIT_CHECK(discovery_run(&job, &d, err, sizeof(err)) == 0 &&
                   discovery_probe_gpus(&d, err, sizeof(err)) == 0 && d.n_chosen[family] == 1 &&
                   d.chosen[family][0]->ordinal == 0,
               "%s: SHMEM_DEVICE_MAP gives local rank 3 device 0, and only it", name);
    job.device_map = "0,1,0,1+0";
    UNIT_CHECK(discovery_run(&job, &d, err, sizeof(err)) == 0 &&
                   discovery_probe_gpus(&d, err, sizeof(err)) == 0 && d.n_chosen[family] == 2 &&
                   d.chosen[family][0]->ordinal == 1 && d.chosen[family][1]->ordinal == 0,
               "%s: SHMEM_DEVICE_MAP gives local rank 3 devices 1 then 0", name);
    job.device_map = "0,1,0,1+2";
    UNIT_CHECK(discovery_run(&job, &d, err, sizeof(err)) == 0 &&
                   discovery_probe_gpus(&d, err, sizeof(err)) == -1 &&
                   strstr(err, "SHMEM_DEVICE_MAP=0,1,0,1+2") && strstr(err, "(0..1)"),
               "%s: a map naming device 2 of 2 is refused: %s", name, err);
    job.device_map = "";
    *runtime = "/nonexistent/libgpu-double.so";
    UNIT_CHECK(discovery_run(&job, &d, err, sizeof(err)) == 0 &&
                   discovery_probe_gpus(&d, err, sizeof(err)) == 0 && !d.chosen[family][0] &&
                   strstr(d.absent[family], "/nonexistent/libgpu-double.so"),
               "%s: a runtime that does not load is named: %s", name, d.absent[family]);
    unsetenv(devices);
}

int main(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (strncmp(argv[i], "cuda=", 5) && strncmp(argv[i], "hip=", 4))
            argc = 0;
    if (argc < 2) {
        fprintf(stderr,
                "usage: test_discovery TOPOLOGY_XML [cuda=DRIVER_DOUBLE] [hip=RUNTIME_DOUBLE]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++)
        check_double(argv[i][0] == 'h' ? DEVICE_FAMILY_HIP : DEVICE_FAMILY_CUDA,
                     strchr(argv[i], '=') + 1);
    /* The topology is read by hwloc's own XML parser, which every hwloc has (its libxml2 one is
     * a plugin that may be absent, and reads more than the other: an XML comment, say). */
    setenv("HWLOC_LIBXML_IMPORT", "0", 1);
    check_locality(argv[1]);
    unsetenv("HWLOC_LIBXML_IMPORT");
    check_device_map();
    check_pe_list();
    check_this_machine();
    return unit_finish("test_discovery");
}
