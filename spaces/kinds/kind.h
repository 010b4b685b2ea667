/* A memory kind: where a space's memory lives and how it is created, shared and copied.
 * Each kind is one const table in its own file; nothing outside spaces/kinds/ tests for a kind. */
#ifndef STRATA_KIND_H
#define STRATA_KIND_H

#include <stddef.h>

/* Memory of one kind held by this PE: the local mapping and what is needed to release it. */
struct kind_mem {
    void *base;
    size_t size;
    int fd; /* backing file while peers may still open it, else -1 */
};

struct kind_ops {
    const char *name;
    /* Creates size bytes of this PE's memory, named so that node peers can map it (name is unique
     * per job, PE and region). Committed lazily where the kind allows. Returns 0 or -1. */
    int (*create)(const char *name, size_t size, struct kind_mem *mem);
    /* Maps a node peer's memory created under name; NULL when the kind cannot be mapped by peers.
     * Returns the local address or NULL. */
    void *(*map_peer)(const char *name, size_t size);
    void (*unmap_peer)(void *addr, size_t size);
    /* Removes the name once every peer has mapped it, so nothing is left if the job dies. */
    void (*unlink)(const char *name, struct kind_mem *mem);
    void (*destroy)(struct kind_mem *mem);
};

extern const struct kind_ops kind_host;

/* Every space's local base is aligned to kind_base_alignment(size) (the heap size rounded up to
 * a power of two, at most KIND_MAX_BASE_ALIGN), the same on every PE: the largest alignment an
 * allocation can be promised. */
#define KIND_MAX_BASE_ALIGN ((size_t)1 << 30)
size_t kind_base_alignment(size_t size);

/* Creates and maps a shared-memory file; also used for the static data segment. */
int kind_host_file_create(const char *name, size_t size, int *fd);

#endif
