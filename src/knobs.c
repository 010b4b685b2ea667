/* SPDX-License-Identifier: BSD-3-Clause */
#include "knobs.h"

#include "../common/log.h"

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

/* ---- One parser per knob type: 0 and the value, or -1 for text outside the type's forms ---- */

/* A whole number from min to max, digits only. */
static int knob_parse_whole(const char *text, size_t min, size_t max, size_t *value)
{
    char *end;
    errno = 0;
    unsigned long long number = strtoull(text, &end, 10);
    if (!isdigit((unsigned char)*text) || *end || errno || number < min || number > max)
        return -1;
    *value = (size_t)number;
    return 0;
}

static int knob_parse_micros(const char *text, size_t *value)
{
    return knob_parse_whole(text, 0, 1000000, value);
}

static int knob_parse_round(const char *text, size_t *value)
{
    return knob_parse_whole(text, 1, KNOB_COLLECT_ROUND_MAX, value);
}

static int knob_parse_bytes(const char *text, size_t *value)
{
    return knobs_parse_size(text, value) || *value == 0 ? -1 : 0;
}

static int knob_parse_bool(const char *text, int *value)
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

static int knob_parse_switch(const char *text, int *value)
{
    if (!strcasecmp(text, "auto"))
        return *value = KNOB_AUTO, 0;
    return knob_parse_bool(text, value);
}

/* Calls accept(item, len) on each comma-separated item of text; an empty text has none, an empty
 * item is malformed. Returns 0 when every item is accepted. */
static int knob_each_item(const char *text, int (*accept)(const char *item, size_t len))
{
    if (!*text)
        return 0;
    for (const char *item = text;; item++) {
        size_t len = strcspn(item, ",");
        if (!len || !accept(item, len))
            return -1;
        item += len;
        if (!*item)
            return 0;
    }
}

static int knob_is_number(const char *item, size_t len)
{
    size_t digits = 0;
    while (digits < len && isdigit((unsigned char)item[digits]))
        digits++;
    return digits && digits == len && digits < 8;
}

static const char *const knob_log_names[] = {
#define KNOB_LOG_NAME(ID, NAME) NAME,
    STRATA_LOG_CATEGORIES(KNOB_LOG_NAME)
#undef KNOB_LOG_NAME
};
#define KNOB_LOG_COUNT (sizeof(knob_log_names) / sizeof(knob_log_names[0]))

/* Bit mask of one SHMEM_LOG item, 0 when it names no category. */
static unsigned knob_log_bits(const char *item, size_t len)
{
    if (len == 3 && !strncmp(item, "all", 3))
        return (1u << KNOB_LOG_COUNT) - 1;
    for (size_t i = 0; i < KNOB_LOG_COUNT; i++)
        if (strlen(knob_log_names[i]) == len && !strncmp(item, knob_log_names[i], len))
            return 1u << i;
    return 0;
}

static int knob_log_item(const char *item, size_t len)
{
    return knob_log_bits(item, len) != 0;
}

unsigned knobs_log_mask(const char *text)
{
    unsigned mask = 0;
    for (const char *item = text; *item;) {
        size_t len = strcspn(item, ",");
        mask |= knob_log_bits(item, len);
        item += len + (item[len] == ',');
    }
    return mask;
}

static int knob_parse_logcats(const char *text, const char **value)
{
    *value = text;
    return knob_each_item(text, knob_log_item);
}

/* 0 where text is one of the names (a NULL-terminated list), with *value the text. */
static int knob_one_of(const char *text, const char *const *names, const char **value)
{
    *value = text;
    for (; *names; names++)
        if (!strcmp(text, *names))
            return 0;
    return -1;
}

static int knob_parse_devtype(const char *text, const char **value)
{
    static const char *const types[] = {"cpu", "gpu", "cuda", "hip", NULL};
    return knob_one_of(text, types, value);
}

static int knob_parse_network(const char *text, const char **value)
{
    static const char *const names[] = {"auto", "ucx", "ofi", NULL};
    return knob_one_of(text, names, value);
}

static int knob_parse_policy(const char *text, const char **value)
{
    static const char *const names[] = {"bind", "preferred", NULL};
    return knob_one_of(text, names, value);
}

static int knob_parse_memory(const char *text, const char **value)
{
    static const char *const names[] = {"",          "dram",    "hbm",      "far",
                                        "bandwidth", "latency", "capacity", NULL};
    return knob_one_of(text, names, value);
}

static int knob_parse_numa(const char *text, const char **value)
{
    static const char *const names[] = {"", "local", "interleave", NULL};
    return knob_one_of(text, names, value) == 0 || knob_is_number(text, strlen(text)) ? 0 : -1;
}

/* A page size: a power of two of at least 4 KiB, or "transparent". */
static int knob_parse_pagesize(const char *text, const char **value)
{
    size_t size;
    *value = text;
    if (!strcmp(text, "transparent"))
        return 0;
    return knobs_parse_size(text, &size) || size < 4096 || (size & (size - 1)) ? -1 : 0;
}

static int knob_parse_name(const char *text, const char **value)
{
    *value = text;
    return 0;
}

/* "-", or device numbers joined by '+' (discovery refuses one named twice). */
static int knob_devmap_item(const char *item, size_t len)
{
    if (len == 1 && *item == '-')
        return 1;
    for (const char *plus; (plus = memchr(item, '+', len)); item = plus + 1) {
        if (!knob_is_number(item, (size_t)(plus - item)))
            return 0;
        len -= (size_t)(plus - item) + 1;
    }
    return knob_is_number(item, len);
}

static int knob_parse_devmap(const char *text, const char **value)
{
    *value = text;
    return knob_each_item(text, knob_devmap_item);
}

/* "N" or "N-M" with N <= M; the upper bound (the job's size) is checked at init. */
static int knob_pelist_item(const char *item, size_t len)
{
    const char *dash = memchr(item, '-', len);
    if (!dash)
        return knob_is_number(item, len);
    size_t first = (size_t)(dash - item), last = len - first - 1;
    return knob_is_number(item, first) && knob_is_number(dash + 1, last) &&
           atoi(item) <= atoi(dash + 1);
}

static int knob_parse_pelist(const char *text, const char **value)
{
    *value = text;
    return knob_each_item(text, knob_pelist_item);
}

/* Absolute, so that what is loaded never depends on the directory a PE started in. */
static int knob_parse_path(const char *text, const char **value)
{
    *value = text;
    return !*text || *text == '/' ? 0 : -1;
}

/* ---- Reading, printing ---- */

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

#define KNOB_FORMS(TYPE, CTYPE, FORMS) static const char knob_forms_##TYPE[] = FORMS;
STRATA_KNOB_TYPES(KNOB_FORMS)
#undef KNOB_FORMS

int knobs_read(struct knobs *knobs, char *err, size_t errlen)
{
    const char *source;
#define KNOB_READ(NAME, TYPE, DEFAULT, HELP)                                                       \
    {                                                                                              \
        const char *text = knob_lookup(#NAME, &source);                                            \
        if (knob_parse_##TYPE(DEFAULT, &knobs->NAME))                                              \
            abort(); /* a default that does not parse is a bug in this table */                    \
        if (text && knob_parse_##TYPE(text, &knobs->NAME)) {                                       \
            snprintf(err, errlen, "invalid value '%s' for %s%s: expected %s", text, source, #NAME, \
                     knob_forms_##TYPE);                                                           \
            return -1;                                                                             \
        }                                                                                          \
    }
    STRATA_KNOBS(KNOB_READ)
#undef KNOB_READ
    return 0;
}

static void knob_print_size(FILE *out, size_t value)
{
    fprintf(out, "%zu", value);
}

static void knob_print_int(FILE *out, int value)
{
    if (value == KNOB_AUTO)
        fprintf(out, "auto");
    else
        fprintf(out, "%d", value);
}

static void knob_print_string(FILE *out, const char *value)
{
    fprintf(out, "'%s'", value);
}

#define knob_print_value(out, value)                                                               \
    _Generic((value), size_t: knob_print_size, int: knob_print_int, const char *: knob_print_string)( \
        out, value)

void knobs_print(const struct knobs *knobs, FILE *out)
{
#define KNOB_PRINT(NAME, TYPE, DEFAULT, HELP)                                                      \
    fprintf(out, "  SHMEM_%-22s = ", #NAME);                                                       \
    knob_print_value(out, knobs->NAME);                                                            \
    fprintf(out, "  (default %s) %s\n", *DEFAULT ? DEFAULT : "empty", HELP);
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
