/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading a device runtime, never from the current directory. The loader searches
 * LD_LIBRARY_PATH for a bare soname, and an empty or relative entry there names a directory
 * relative to wherever the program was started: a library planted in it would run inside every
 * PE. When the path has such an entry the runtime is looked for by full path instead, in the
 * path's absolute entries, then in the directories the system's loader is configured with. */
#include "device_runtime.h"

#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether every entry of a colon-separated search path is absolute. */
static int path_is_absolute(const char *path)
{
    for (const char *entry = path;; entry++) {
        if (*entry != '/')
            return 0;
        entry += strcspn(entry, ":");
        if (!*entry)
            return 1;
    }
}

static void *open_in(const char *dir, size_t dir_len, const char *soname)
{
    char full[PATH_MAX];
    if (dir_len == 0 || *dir != '/' ||
        snprintf(full, sizeof(full), "%.*s/%s", (int)dir_len, dir, soname) >= (int)sizeof(full))
        return NULL;
    return dlopen(full, RTLD_NOW | RTLD_LOCAL);
}

/* The absolute entries of a colon-separated list. */
static void *open_in_list(const char *list, const char *soname)
{
    for (const char *entry = list;; entry++) {
        size_t len = strcspn(entry, ":");
        void *lib = open_in(entry, len, soname);
        if (lib || !entry[len])
            return lib;
        entry += len;
    }
}

/* The directories of one loader configuration file (one per line; include lines are Debian's
 * way of pointing at ld.so.conf.d, read below anyway). */
static void *open_in_conf(const char *file, const char *soname)
{
    FILE *f = fopen(file, "r");
    char line[PATH_MAX];
    void *lib = NULL;
    while (f && !lib && fgets(line, sizeof(line), f))
        lib = open_in(line, strcspn(line, " \t\r\n#"), soname);
    if (f)
        fclose(f);
    return lib;
}

static void *open_in_system_dirs(const char *soname)
{
    void *lib = open_in_conf("/etc/ld.so.conf", soname);
    glob_t confs;
    if (!lib && glob("/etc/ld.so.conf.d/*.conf", 0, NULL, &confs) == 0) {
        for (size_t i = 0; i < confs.gl_pathc && !lib; i++)
            lib = open_in_conf(confs.gl_pathv[i], soname);
        globfree(&confs);
    }
    return lib ? lib : open_in_list("/lib64:/usr/lib64:/lib:/usr/lib", soname);
}

int device_runtime_in_process(const char *file)
{
    void *lib = dlopen(file, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (lib)
        dlclose(lib);
    return lib != NULL;
}

void *device_runtime_library_open(const char *soname)
{
    const char *path = getenv("LD_LIBRARY_PATH");
    if (!path || !*path || path_is_absolute(path))
        return dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    void *lib = open_in_list(path, soname);
    return lib ? lib : open_in_system_dirs(soname);
}

int device_runtime_bind(void *lib, const char *file, const struct device_runtime_symbol *symbols,
                        size_t count, const char *runtime, char *why, size_t whylen)
{
    if (!lib) {
        snprintf(why, whylen, "%s not loadable", file);
        return -1;
    }
    for (size_t i = 0; i < count; i++)
        if (!(*symbols[i].slot = dlsym(lib, symbols[i].name))) {
            snprintf(why, whylen, "%s lacks %s", runtime, symbols[i].name);
            return -1;
        }
    return 0;
}
