/* SPDX-License-Identifier: BSD-3-Clause */
/* Device discovery (discovery.h). */
#include "discovery.h"

#include "runtimes/device_runtime.h"

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

int discovery_map_entry(const char *map, int local_rank)
{
    if (!map || !*map)
        return -2;
    int entries = 1;
    for (const char *c = map; *c; c++)
        entries += *c == ',';
    int want = local_rank % entries, value = -3;
    const char *c = map;
    for (int i = 0; i < entries; i++) {
        char *end;
        int entry;
        if (*c == '-') {
            entry = -1;
            end = (char *)c + 1;
        } else {
            long v = strtol(c, &end, 10);
            if (end == c || v < 0 || v > 1 << 20)
                return -3;
            entry = (int)v;
        }
        if (*end && *end != ',')
            return -3;
        if (i == want)
            value = entry;
        c = *end ? end + 1 : end;
    }
    return value;
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

/* Devices whose locality intersects the PE's binding are the candidates; an unbound PE (or one
 * near none of them) takes them all. Local ranks spread round-robin over the candidates. */
static int discovery_pick_in(hwloc_topology_t topo, const char *const *busids, int n,
                             hwloc_const_cpuset_t mine, int local_rank)
{
    if (n == 0)
        return -1;
    int candidates[DISCOVERY_MAX_DEVICES], count = 0;
    hwloc_const_cpuset_t all = hwloc_topology_get_complete_cpuset(topo);
    int bound = mine && !hwloc_bitmap_isincluded(all, mine);
    for (int i = 0; bound && i < n && count < DISCOVERY_MAX_DEVICES; i++) {
        hwloc_const_cpuset_t near = discovery_device_cpuset(topo, busids[i]);
        if (near && hwloc_bitmap_intersects(near, mine))
            candidates[count++] = i;
    }
    if (count == 0)
        return local_rank % n;
    return candidates[local_rank % count];
}

int discovery_pick(const char *xml_or_null, const char *const *busids, int n,
                   const char *cpuset_string, int local_rank)
{
    hwloc_topology_t topo;
    if (discovery_topology_load(&topo, xml_or_null, 1))
        return n ? local_rank % n : -1;
    hwloc_bitmap_t mine = NULL;
    if (cpuset_string) {
        mine = hwloc_bitmap_alloc();
        hwloc_bitmap_sscanf(mine, cpuset_string);
    }
    int pick = discovery_pick_in(topo, busids, n, mine, local_rank);
    hwloc_bitmap_free(mine);
    hwloc_topology_destroy(topo);
    return pick;
}

/* Chooses this PE's device of a GPU family: the program's (program_device, an ordinal, or -1),
 * else SHMEM_DEVICE_MAP's entry, else by locality. */
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
    for (int i = 0; i < n; i++)
        if (d->devices[index[i]].ordinal == program_device) {
            d->chosen[family] = &d->devices[index[i]];
            d->program_chose[family] = 1;
            return 0;
        }
    int entry = discovery_map_entry(job->device_map, job->local_rank);
    if (entry == -3 || entry >= n) {
        snprintf(err, errlen,
                 "SHMEM_DEVICE_MAP=%s: expected a comma list of device numbers (0..%d) or '-', "
                 "one per local rank",
                 job->device_map, n - 1);
        return -1;
    }
    if (entry == -1) {
        snprintf(d->absent[family], sizeof(d->absent[family]),
                 "none for this PE (SHMEM_DEVICE_MAP)");
        return 0;
    }
    if (entry >= 0) {
        d->chosen[family] = &d->devices[index[entry]];
        return 0;
    }
    hwloc_bitmap_t mine = hwloc_bitmap_alloc();
    int bound = mine && hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) == 0;
    int pick = discovery_pick_in(topo, busids, n, bound ? mine : NULL, job->local_rank);
    hwloc_bitmap_free(mine);
    d->chosen[family] = &d->devices[index[pick]];
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
        d->chosen[DEVICE_FAMILY_TEST] = dev;
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
        d->chosen[DEVICE_FAMILY_TEST] = &d->devices[n];
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
        const struct device *mine = d->chosen[f];
        if (!count) {
            fprintf(out, "  %s: none (%s)\n", discovery_family_name(f), d->absent[f]);
            continue;
        }
        fprintf(out, "  %s: %d device(s)", discovery_family_name(f), count);
        if (mine)
            fprintf(out, "; this PE uses #%d%s%s, %.1f GiB%s", mine->ordinal,
                    *mine->busid ? " " : "", mine->busid, (double)mine->memory / (1 << 30),
                    d->program_chose[f] ? " (the program's device)" : "");
        fprintf(out, "\n");
    }
}
