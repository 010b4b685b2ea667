/* SPDX-License-Identifier: BSD-3-Clause */
/* Every SHMEM_* environment variable, declared once. The table generates the struct field, the
 * parser call, the validation and the printout of oshinfo and SHMEM_INFO, so documentation cannot
 * drift and no knob is accepted without being checked. */
#ifndef STRATA_KNOBS_H
#define STRATA_KNOBS_H

#include <stddef.h>
#include <stdio.h>

/* X(NAME, type, default, help); the types are those of STRATA_KNOB_TYPES. */
#define STRATA_KNOBS(X)                                                                            \
    X(SYMMETRIC_SIZE, bytes, "512M",                                                               \
      "Size of the default symmetric heap per PE (suffixes k/K, m/M, g/G, t/T)")                   \
    X(SYMMETRIC_HEAP_USE_HUGE_PAGES, switch, "auto",                                               \
      "Give the default heap pages of SHMEM_SYMMETRIC_HEAP_PAGE_SIZE: 1 or fail, auto where this " \
      "node has them free (else transparent huge pages where shared memory may have them, else "   \
      "base pages), 0 base pages")                                                                 \
    X(SYMMETRIC_HEAP_PAGE_SIZE, pagesize, "2M",                                                    \
      "Page size of the default heap where SHMEM_SYMMETRIC_HEAP_USE_HUGE_PAGES is 1 or auto: "     \
      "huge pages of that size from the kernel's pool, or transparent huge pages")                 \
    X(SYMMETRIC_HEAP_NUMA, numa, "",                                                               \
      "NUMA placement of the default heap: local, interleave or a node number (empty: the "        \
      "kernel's first touch)")                                                                     \
    X(SYMMETRIC_HEAP_MEMORY, memory, "",                                                           \
      "Memory of the default heap: dram, hbm, far, or the best near the PE by bandwidth, latency " \
      "or capacity (empty: any)")                                                                  \
    X(SYMMETRIC_HEAP_POLICY, policy, "bind",                                                       \
      "Whether the default heap's traits must hold (bind: shmem_init fails where one cannot) or "  \
      "are preferences (preferred)")                                                               \
    X(DEBUG, bool, "0", "Check what the spec calls undefined and report it")                       \
    X(VERSION, bool, "0", "Print the library version at start-up")                                 \
    X(INFO, bool, "0", "Print every knob and its value at start-up")                               \
    X(NODE_DIRECT, bool, "1",                                                                      \
      "Reach PEs on the same node by load/store into their mapped memory (0: through the "         \
      "network)")                                                                                  \
    X(PROGRESS_THREAD, switch, "auto",                                                             \
      "Transport progress thread: 1, 0, or auto (on when the network carries any traffic)")        \
    X(PROGRESS_INTERVAL_US, micros, "100",                                                         \
      "Shortest pause between the progress thread's looks (the longest: 16x), in microseconds")    \
    X(TRANSPORT, network, "auto",                                                                  \
      "Network between nodes: ucx, ofi (libfabric), or auto (libfabric where the node has a "      \
      "fabric UCX cannot drive: cxi, efa, opx or psm3; UCX otherwise)")                            \
    X(OFI_PROVIDER, name, "",                                                                      \
      "libfabric provider to use, e.g. cxi or tcp;ofi_rxm (empty: the first with RMA and "         \
      "atomics)")                                                                                  \
    X(BULK_LANE, bool, "1",                                                                        \
      "Send collectives' large messages to peers reached over TCP on a connection of their own")   \
    X(LOG, logcats, "", "Comma-separated log categories: init, mem, rma, team, or all")            \
    X(DEFAULT_SPACE, devtype, "cpu",                                                               \
      "Device type of the default space: cpu, gpu, cuda or hip; every PE must reach it")           \
    X(DEVICE_MAP, devmap, "",                                                                      \
      "GPUs of each local rank the program has not put on one, overriding locality: device "       \
      "numbers joined by + (device_index 0, 1, ...) or - (none), e.g. 1,0 or 0+1,1+0")             \
    X(GPU_COPY_ENGINES_ONLY, bool, "0",                                                            \
      "Small writes into GPU memory as copies on the copy engines, never a kernel on the SMs")     \
    X(TEST_DEVICE_PES, pelist, "",                                                                 \
      "Testing aid: PEs (e.g. 0,2 or 1-3) on which a test device kind stands in for a GPU")        \
    X(TEST_DEVICE_SIZE, bytes, "1G", "Memory of the test device kind per PE")                      \
    X(TEST_TOPOLOGY, path, "",                                                                     \
      "Testing aid: a saved hwloc topology (XML) whose memory the memory traits choose from, "     \
      "each "                                                                                      \
      "PE placed on a CPU of it by local rank (nothing is bound on this node)")                    \
    X(TEST_CUDA_DRIVER, path, "",                                                                  \
      "Testing aid: a library loaded instead of libcuda.so.1 (the driver's test double)")          \
    X(TEST_HIP_RUNTIME, path, "",                                                                  \
      "Testing aid: a library loaded instead of libamdhip64 (the runtime's test double)")          \
    X(TEST_COLLECT_ROUND, round, "1024",                                                           \
      "Testing aid: members per round of a team collect's size exchange (1 to 1024)")              \
    X(TEST_ATOMICS_BY_MESSAGE, bool, "0",                                                          \
      "Testing aid: atomics between nodes performed by their targets, as where the network has "   \
      "none")

/* X(type, C type of the field, accepted forms): each has a parser knob_parse_<type>. */
#define STRATA_KNOB_TYPES(X)                                                                       \
    X(micros, size_t, "a whole number of microseconds from 0 to 1000000")                          \
    X(round, size_t, "a whole number from 1 to 1024")                                              \
    X(bytes, size_t, "a number above 0 with an optional suffix k/K, m/M, g/G or t/T, e.g. 512M")   \
    X(bool, int, "one of 1/0, yes/no, on/off, true/false")                                         \
    X(switch, int, "auto, or one of 1/0, yes/no, on/off, true/false")                              \
    X(logcats, const char *, "init, mem, rma, team or all, separated by commas")                   \
    X(devtype, const char *, "one of cpu, gpu, cuda, hip")                                         \
    X(network, const char *, "one of auto, ucx, ofi")                                              \
    X(name, const char *, "any text")                                                              \
    X(devmap, const char *,                                                                        \
      "device numbers joined by + or - (no device), one per local rank, separated by commas, "     \
      "e.g. 1,0 or 0+1,1+0")                                                                       \
    X(pelist, const char *, "PE numbers and ranges separated by commas, e.g. 0,2 or 1-3")          \
    X(path, const char *, "an absolute path, e.g. /opt/lib/libcuda-double.so")                     \
    X(policy, const char *, "one of bind, preferred")                                              \
    X(memory, const char *, "empty, or one of dram, hbm, far, bandwidth, latency, capacity")       \
    X(numa, const char *, "empty, local, interleave, or a NUMA node number")                       \
    X(pagesize, const char *, "a power of two of at least 4K (e.g. 2M, 1G), or transparent")

/* The most members a round of a team collect's size exchange has (TEST_COLLECT_ROUND). */
#define KNOB_COLLECT_ROUND_MAX 1024

/* A switch knob's value besides 0 and 1. */
#define KNOB_AUTO (-1)

#define KNOB_TYPE_FIELD(TYPE, CTYPE, FORMS) typedef CTYPE knob_field_##TYPE;
STRATA_KNOB_TYPES(KNOB_TYPE_FIELD)
#undef KNOB_TYPE_FIELD

struct knobs {
#define KNOB_DECLARE_FIELD(NAME, TYPE, DEFAULT, HELP) knob_field_##TYPE NAME;
    STRATA_KNOBS(KNOB_DECLARE_FIELD)
#undef KNOB_DECLARE_FIELD
};

/* Reads every knob from the environment (SHMEM_ first, then the deprecated SMA_ prefix).
 * Returns 0, or -1 after writing to err a message naming the variable and its accepted forms. */
int knobs_read(struct knobs *knobs, char *err, size_t errlen);

/* Parses a size with an optional k/K/m/M/g/G/t/T suffix (powers of 1024). Returns 0 or -1. */
int knobs_parse_size(const char *text, size_t *value);
/* The bits of a valid SHMEM_LOG value (bit i: category i of common/log.h). */
unsigned knobs_log_mask(const char *text);

/* Prints one line per knob: name, value, default, meaning. */
void knobs_print(const struct knobs *knobs, FILE *out);
/* Prints the knob table of docs/knobs.md (Markdown): the documentation comes from here too. */
void knobs_print_markdown(FILE *out);

#endif
