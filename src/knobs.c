#include "knobs.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int knobs_parse_size(const char *text, size_t *value)
{
    if (!text || !isdigit((unsigned char)*text))
        return -1;
    errno = 0;
    char *end;
    unsigned long long number = strtoull(text, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    if (*end) {
        const char *suffixes = "kmgt";
        const char *found = strchr(suffixes, tolower((unsigned char)*end));
        if (!found || end[1] != '\0')
            return -1;
        shift = 10 * (unsigned)(found - suffixes + 1);
    }
    if (number > (SIZE_MAX >> shift))
        return -1;
    *value = (size_t)number << shift;
    return 0;
}

static int parse_bool(const char *text, int *value)
{
    static const char *const truthy[] = {"1", "y", "yes", "on", "true"};
    static const char *const falsy[] = {"0", "n", "no", "off", "false"};
    for (size_t i = 0; i < sizeof(truthy) / sizeof(truthy[0]); i++) {
        if (!strcasecmp(text, truthy[i]))
            return *value = 1, 0;
        if (!strcasecmp(text, falsy[i]))
            return *value = 0, 0;
    }
    return -1;
}

/* SHMEM_NAME wins over the deprecated SMA_NAME (1.6 section 8). */
static const char *knob_lookup(const char *name, const char **source)
{
    char var[64];
    snprintf(var, sizeof(var), "SHMEM_%s", name);
    const char *value = getenv(var);
    *source = "SHMEM_";
    if (!value) {
        snprintf(var, sizeof(var), "SMA_%s", name);
        value = getenv(var);
        *source = "SMA_";
    }
    return value;
}

static const char *const knob_forms[] = {
    [KNOB_SIZE] = "a number with an optional suffix k/K, m/M, g/G or t/T, e.g. 512M",
    [KNOB_BOOL] = "one of 1/0, yes/no, on/off, true/false",
    [KNOB_STRING] = "a string",
};

static int knob_parse(enum knob_type type, const char *text, void *field)
{
    switch (type) {
    case KNOB_SIZE:
        return knobs_parse_size(text, field);
    case KNOB_BOOL:
        return parse_bool(text, field);
    case KNOB_STRING:
        *(const char **)field = text;
        return 0;
    }
    return -1;
}

#define KNOB_TYPE_size KNOB_SIZE
#define KNOB_TYPE_bool KNOB_BOOL
#define KNOB_TYPE_string KNOB_STRING

int knobs_read(struct knobs *knobs, char *err, size_t errlen)
{
    const char *source;
#define KNOB_READ(NAME, TYPE, DEFAULT, HELP)                                                       \
    {                                                                                              \
        const char *text = knob_lookup(#NAME, &source);                                            \
        if (knob_parse(KNOB_TYPE_##TYPE, DEFAULT, &knobs->NAME))                                   \
            abort(); /* a default that does not parse is a bug in this table */                    \
        if (text && knob_parse(KNOB_TYPE_##TYPE, text, &knobs->NAME)) {                            \
            snprintf(err, errlen, "invalid value '%s' for %s%s: expected %s", text, source, #NAME, \
                     knob_forms[KNOB_TYPE_##TYPE]);                                                \
            return -1;                                                                             \
        }                                                                                          \
    }
    STRATA_KNOBS(KNOB_READ)
#undef KNOB_READ
    return 0;
}

static void knob_print_value(FILE *out, enum knob_type type, const void *field)
{
    switch (type) {
    case KNOB_SIZE:
        fprintf(out, "%zu", *(const size_t *)field);
        break;
    case KNOB_BOOL:
        fprintf(out, "%d", *(const int *)field);
        break;
    case KNOB_STRING:
        fprintf(out, "'%s'", *(const char *const *)field);
        break;
    }
}

void knobs_print(const struct knobs *knobs, FILE *out)
{
#define KNOB_PRINT(NAME, TYPE, DEFAULT, HELP)                                                      \
    fprintf(out, "  SHMEM_%-22s = ", #NAME);                                                       \
    knob_print_value(out, KNOB_TYPE_##TYPE, &knobs->NAME);                                         \
    fprintf(out, "  (default %s) %s\n", DEFAULT, HELP);
    STRATA_KNOBS(KNOB_PRINT)
#undef KNOB_PRINT
}

void knobs_print_markdown(FILE *out)
{
    fprintf(out, "| Variable | Default | Meaning |\n|---|---|---|\n");
#define KNOB_MARKDOWN(NAME, TYPE, DEFAULT, HELP)                                                   \
    fprintf(out, "| `SHMEM_%s` | %s%s%s | %s |\n", #NAME, *DEFAULT ? "`" : "",                     \
            *DEFAULT ? DEFAULT : "(empty)", *DEFAULT ? "`" : "", HELP);
    STRATA_KNOBS(KNOB_MARKDOWN)
#undef KNOB_MARKDOWN
}
