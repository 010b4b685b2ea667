/* Every SHMEM_* environment variable, declared once. The table generates the struct field, the
 * parser call and the printout of oshinfo and SHMEM_INFO, so documentation cannot drift. */
#ifndef STRATA_KNOBS_H
#define STRATA_KNOBS_H

#include <stddef.h>
#include <stdio.h>

/* X(NAME, type, default, help). type is one of: size, bool, string. */
#define STRATA_KNOBS(X)                                                                            \
    X(SYMMETRIC_SIZE, size, "512M",                                                                \
      "Size of the default symmetric heap per PE (suffixes k/K, m/M, g/G, t/T)")                   \
    X(DEBUG, bool, "0", "Check what the spec calls undefined and report it")                       \
    X(VERSION, bool, "0", "Print the library version at start-up")                                 \
    X(INFO, bool, "0", "Print every knob and its value at start-up")                               \
    X(NODE_DIRECT, bool, "1",                                                                      \
      "Reach PEs on the same node by load/store into their mapped memory (0: through UCX)")        \
    X(PROGRESS_THREAD, string, "auto",                                                             \
      "Transport progress thread: 1, 0, or auto (on when UCX carries any traffic)")                \
    X(PROGRESS_INTERVAL_US, size, "100",                                                           \
      "How often the progress thread polls the transport when idle, in microseconds")              \
    X(LOG, string, "", "Comma-separated log categories: init, mem, rma, or all")                   \
    X(DEFAULT_SPACE, string, "cpu",                                                                \
      "Device type of the default space: cpu, gpu, cuda or hip; every PE must reach it")           \
    X(DEVICE_MAP, string, "",                                                                      \
      "GPU of each local rank, overriding locality: device numbers or - (none), e.g. 1,0")         \
    X(TEST_DEVICE_PES, string, "",                                                                 \
      "Testing aid: PEs (e.g. 0,2 or 1-3) on which a test device kind stands in for a GPU")        \
    X(TEST_DEVICE_SIZE, size, "1G", "Memory of the test device kind per PE")

enum knob_type { KNOB_SIZE, KNOB_BOOL, KNOB_STRING };

struct knobs {
#define KNOB_FIELD_size size_t
#define KNOB_FIELD_bool int
#define KNOB_FIELD_string const char *
#define KNOB_DECLARE_FIELD(NAME, TYPE, DEFAULT, HELP) KNOB_FIELD_##TYPE NAME;
    STRATA_KNOBS(KNOB_DECLARE_FIELD)
#undef KNOB_DECLARE_FIELD
};

/* Reads every knob from the environment (SHMEM_ first, then the deprecated SMA_ prefix).
 * Returns 0, or -1 after writing a message naming the variable and the accepted forms to err. */
int knobs_read(struct knobs *knobs, char *err, size_t errlen);

/* Parses a size with an optional k/K/m/M/g/G/t/T suffix (powers of 1024). Returns 0 or -1. */
int knobs_parse_size(const char *text, size_t *value);

/* Prints one line per knob: name, value, default, meaning. */
void knobs_print(const struct knobs *knobs, FILE *out);
/* Prints the README's knob table (Markdown), so the documentation comes from this table too. */
void knobs_print_markdown(FILE *out);

#endif
