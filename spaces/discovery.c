/* SPDX-License-Identifier: BSD-3-Clause */
/* Device discovery (discovery.h). */
#include "discovery.h"

#include "runtimes/device_runtime.h"

#include <ctype.h>
#include <hwloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *discovery_family_name(enum device_family family)
{
    static const char *const names[DEVICE_FAMILIES] = {"cuda", "hip", "test"};
    return family < DEVICE_FAMILIES ? names[family] : "?";
}

int discovery_pe_listed(const char *list, int pe, int n_pes)
{
    int listed = 0;
    for (const char *c = list; *c;) {
        char *end;
        long first = strtol(c, &end, 10), last = first;
        if (end == c)
            return -1;
        if (*end == '-') {
            const char *from = end + 1;
            last = strtol(from, &end, 10);
            if (end == from)
                return -1;
        }
        if (first < 0 || last < first || last >= n_pes || (*end && *end != ','))
            return -1;
        listed |= pe >= first && pe <= last;
        c = *end ? end + 1 : end;
        if (*end && !*c)
            return -1; /* a trailing comma */
    }
    return listed;
}

/* One entry's devices ("-", or numbers joined by '+') into devices; returns how many (0 for
 * "-"), or -3 when malformed, with *end after the entry. */
static int discovery_map_devices(const char *c, const char **end, int *devices, int max)
{
    if (*c == '-') {
        *end = c + 1;
        return 0;
    }
    int n = 0;
    for (;;) {
        char *after;
        long v = strtol(c, &after, 10);
        if (!isdigit((unsigned char)*c) || v > 1 << 20 || n == max)
            return -3;
        for (int i = 0; i < n; i++)
            if (devices[i] == v)
                return -3; /* a device twice */
        devices[n++] = (int)v;
        if (*after != '+') {
            *end = after;
            return n;
        }
        c = after + 1;
    }
}

int discovery_map_entry(const char *map, int local_rank, int *devices, int max)
{
    if (!map || !*map)
        return -2;
    int entries = 1;
    for (const char *c = map; *c; c++)
        entries += *c == ',';
    int want = local_rank % entries, count = -3, scratch[DISCOVERY_MAX_DEVICES];
    const char *c = map;
    for (int i = 0; i < entries; i++) {
        const char *end;
        int n = discovery_map_devices(c, &end, i == want ? devices : scratch,
                                      i == want ? max : DISCOVERY_MAX_DEVICES);
        if (n < 0 || (*end && *end != ','))
            return -3;
        if (i == want)
            count = n;
        c = *end ? end + 1 : end;
    }
    return count;
}

/* The cpuset of the closest non-I/O object of a PCI device, or NULL when hwloc does not see it. */
static hwloc_const_cpuset_t discovery_device_cpuset(hwloc_topology_t topo, const char *busid)
{
    hwloc_obj_t pci = busid[0] ? hwloc_get_pcidev_by_busidstring(topo, busid) : NULL;
    hwloc_obj_t near = pci ? hwloc_get_non_io_ancestor_obj(topo, pci) : NULL;
    return near ? near->cpuset : NULL;
}

int discovery_topology_load(hwloc_topology_t *topo, const char *xml, int with_io)
{
    if (hwloc_topology_init(topo))
        return -1;
    if (with_io)
        hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    /* hwloc's accelerator components would initialize OpenCL, CUDA, ROCm or Level Zero in the
     * process: the OpenCL one loads every vendor's ICD, and NVIDIA's loads libcuda.so.1 through
     * the loader's search (current directory included). Strata loads one GPU runtime, its own
     * way, and finds GPUs as PCI devices and through that runtime. */
    static const char *const accelerator_components[] = {"opencl", "cuda",      "nvml",
                                                         "rsmi",   "levelzero", "gl"};
    for (size_t i = 0; i < sizeof(accelerator_components) / sizeof(*accelerator_components); i++)
        hwloc_topology_set_components(*topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                      accelerator_components[i]);
    if ((xml && hwloc_topology_set_xml(*topo, xml)) || hwloc_topology_load(*topo)) {
        hwloc_topology_destroy(*topo);
        return -1;
    }
    return 0;
}

/* Whether the PE, bound to mine (NULL: unbound), is near device busid: the device's locality
 * intersects its binding, which is less than the whole machine. */
static int discovery_near(hwloc_topology_t topo, const char *busid, hwloc_const_cpuset_t mine)
{
    hwloc_const_cpuset_t all = hwloc_topology_get_complete_cpuset(topo);
    hwloc_const_cpuset_t at =
        mine && !hwloc_bitmap_isincluded(all, mine) ? discovery_device_cpuset(topo, busid) : NULL;
    return at && hwloc_bitmap_intersects(at, mine);
}

/* The PE's devices in order: first, then those near it, then the others, each in the runtime's
 * order. Returns n. */
static int discovery_order(hwloc_topology_t topo, const char *const *busids, int n,
                           hwloc_const_cpuset_t mine, int first, int *order)
{
    int count = 0;
    order[count++] = first;
    for (int near = 1; near >= 0; near--)
        for (int i = 0; i < n; i++)
            if (i != first && discovery_near(topo, busids[i], mine) == near)
                order[count++] = i;
    return count;
}

/* The devices near the PE are the candidates for its first; an unbound PE (or one near none of
 * them) takes them all. Local ranks spread round-robin over the candidates. */
static int discovery_pick_in(hwloc_topology_t topo, const char *const *busids, int n,
                             hwloc_const_cpuset_t mine, int local_rank)
{
    int candidates[DISCOVERY_MAX_DEVICES], count = 0;
    for (int i = 0; i < n && count < DISCOVERY_MAX_DEVICES; i++)
        if (discovery_near(topo, busids[i], mine))
            candidates[count++] = i;
    return count ? candidates[local_rank % count] : local_rank % n;
}

int discovery_pick(const char *xml_or_null, const char *const *busids, int n,
                   const char *cpuset_string, int local_rank, int *order)
{
    hwloc_topology_t topo;
    if (discovery_topology_load(&topo, xml_or_null, 1))
        return -1;
    hwloc_bitmap_t mine = NULL;
    if (cpuset_string) {
        mine = hwloc_bitmap_alloc();
        hwloc_bitmap_sscanf(mine, cpuset_string);
    }
    int pick = n ? discovery_pick_in(topo, busids, n, mine, local_rank) : -1;
    if (n)
        discovery_order(topo, busids, n, mine, pick, order);
    hwloc_bitmap_free(mine);
    hwloc_topology_destroy(topo);
    return pick;
}

/* Chooses this PE's devices of a GPU family: the program's device (program_device, an ordinal, or
 * -1) first and then the others by locality; else SHMEM_DEVICE_MAP's entry; else the one picked
 * by locality first and then the others. */
static int discovery_choose_gpu(const struct discovery_job *job, struct discovery *d,
                                hwloc_topology_t topo, enum device_family family,
                                int program_device, char *err, size_t errlen)
{
    const char *busids[DISCOVERY_MAX_DEVICES];
    int index[DISCOVERY_MAX_DEVICES], n = 0;
    for (int i = 0; i < d->n_devices; i++)
        if (d->devices[i].family == family) {
            busids[n] = d->devices[i].busid;
            index[n++] = i;
        }
    if (n == 0)
        return 0;
    int order[DISCOVERY_MAX_DEVICES], count = -2, first = -1;
    for (int i = 0; i < n; i++)
        if (d->devices[index[i]].ordinal == program_device)
            first = i;
    if (first < 0)
        count = discovery_map_entry(job->device_map, job->local_rank, order, n);
    for (int i = 0; i < count; i++)
        if (order[i] >= n)
            count = -3;
    if (count == -3) {
        snprintf(err, errlen,
                 "SHMEM_DEVICE_MAP=%s: expected a comma list, one entry per local rank, of device "
                 "numbers (0..%d) joined by '+', or '-'",
                 job->device_map, n - 1);
        return -1;
    }
    if (count == 0) {
        snprintf(d->absent[family], sizeof(d->absent[family]),
                 "none for this PE (SHMEM_DEVICE_MAP)");
        return 0;
    }
    d->program_chose[family] = first >= 0;
    if (count < 0) {
        hwloc_bitmap_t mine = hwloc_bitmap_alloc();
        hwloc_const_cpuset_t bound =
            mine && hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0 ? mine : NULL;
        if (first < 0)
            first = discovery_pick_in(topo, busids, n, bound, job->local_rank);
        count = discovery_order(topo, busids, n, bound, first, order);
        hwloc_bitmap_free(mine);
    }
    d->n_chosen[family] = count;
    for (int i = 0; i < count; i++)
        d->chosen[family][i] = &d->devices[index[order[i]]];
    return 0;
}

static int discovery_test_device(const struct discovery_job *job, struct discovery *d, char *err,
                                 size_t errlen)
{
    const char *list = job->test_device_pes ? job->test_device_pes : "";
    int listed = discovery_pe_listed(list, job->my_pe, job->n_pes);
    if (listed < 0) {
        snprintf(err, errlen,
                 "SHMEM_TEST_DEVICE_PES=%s: expected PE numbers and ranges below %d, such as "
                 "0,2 or 1-3",
                 list, job->n_pes);
        return -1;
    }
    if (!listed) {
        snprintf(d->absent[DEVICE_FAMILY_TEST], sizeof(d->absent[0]), "%s",
                 *list ? "not for this PE (SHMEM_TEST_DEVICE_PES)" : "SHMEM_TEST_DEVICE_PES unset");
        return 0;
    }
    if (d->n_devices < DISCOVERY_MAX_DEVICES) {
        struct device *dev = &d->devices[d->n_devices++];
        *dev = (struct device){DEVICE_FAMILY_TEST, 0, job->test_device_size, ""};
        d->chosen[DEVICE_FAMILY_TEST][0] = dev;
        d->n_chosen[DEVICE_FAMILY_TEST] = 1;
    }
    return 0;
}

int discovery_run(const struct discovery_job *job, struct discovery *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof(*d));
    d->job = *job;
    /* The kernel's count, not hwloc's: in some VMs hwloc's NUMA memory is a fraction of it. */
    d->host_memory = (size_t)sysconf(_SC_PHYS_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
    for (int f = 0; f < DEVICE_FAMILIES; f++)
        if (f != DEVICE_FAMILY_TEST)
            snprintf(d->absent[f], sizeof(d->absent[f]), "not asked yet");
    return discovery_test_device(job, d, err, errlen);
}

enum device_family discovery_program_runtime(const struct discovery *d)
{
    return device_runtime_cuda_in_process(d->job.cuda_driver)  ? DEVICE_FAMILY_CUDA
           : device_runtime_hip_in_process(d->job.hip_runtime) ? DEVICE_FAMILY_HIP
                                                               : DEVICE_FAMILIES;
}

int discovery_probe_gpus(struct discovery *d, char *err, size_t errlen)
{
    if (d->gpus_probed)
        return 0;
    d->gpus_probed = 1;
    /* The runtimes' devices go in front of the test device, which keeps its place in chosen. */
    struct device test = d->devices[0];
    int had_test = d->n_devices > 0;
    int program_cuda = -1, program_hip = -1;
    int n = device_runtime_cuda_probe(d->job.cuda_driver, d->devices, DISCOVERY_MAX_DEVICES - 1,
                                      &program_cuda, d->absent[DEVICE_FAMILY_CUDA],
                                      sizeof(d->absent[0]));
    n += device_runtime_hip_probe(d->job.hip_runtime, d->devices + n, DISCOVERY_MAX_DEVICES - 1 - n,
                                  &program_hip, d->absent[DEVICE_FAMILY_HIP], sizeof(d->absent[0]));
    if (had_test) {
        d->devices[n] = test;
        d->chosen[DEVICE_FAMILY_TEST][0] = &d->devices[n];
    }
    d->n_devices = n + had_test;
    /* The topology, with its PCI scan (most of a start-up's cost), only matters for placing
     * GPUs: it is loaded when a runtime reported some. */
    if (!n)
        return 0;
    hwloc_topology_t topo;
    if (discovery_topology_load(&topo, NULL, 1)) {
        snprintf(err, errlen, "hwloc cannot load the node's topology");
        return -1;
    }
    int rc =
        discovery_choose_gpu(&d->job, d, topo, DEVICE_FAMILY_CUDA, program_cuda, err, errlen) ||
        discovery_choose_gpu(&d->job, d, topo, DEVICE_FAMILY_HIP, program_hip, err, errlen);
    hwloc_topology_destroy(topo);
    return rc ? -1 : 0;
}

void discovery_print(const struct discovery *d, FILE *out)
{
    fprintf(out, "  cpu: host memory, %.1f GiB\n", (double)d->host_memory / (1 << 30));
    for (int f = 0; f < DEVICE_FAMILIES; f++) {
        int count = 0;
        for (int i = 0; i < d->n_devices; i++)
            count += d->devices[i].family == (enum device_family)f;
        const struct device *mine = d->chosen[f][0];
        if (!count) {
            fprintf(out, "  %s: none (%s)\n", discovery_family_name(f), d->absent[f]);
            continue;
        }
        fprintf(out, "  %s: %d device(s)", discovery_family_name(f), count);
        if (mine)
            fprintf(out, "; this PE uses #%d%s%s, %.1f GiB%s", mine->ordinal,
                    *mine->busid ? " " : "", mine->busid, (double)mine->memory / (1 << 30),
                    d->program_chose[f] ? " (the program's device)" : "");
        for (int i = 1; i < d->n_chosen[f]; i++) /* its device_index order */
            fprintf(out, "%s#%d", i == 1 ? ", then " : ", ", d->chosen[f][i]->ordinal);
        fprintf(out, "\n");
    }
}
