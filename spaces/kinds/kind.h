/* A memory kind: where a space's memory lives and how it is created, shared and copied.
 * Each kind is one const table in its own file; nothing outside spaces/kinds/ tests for a kind. */
#ifndef STRATA_KIND_H
#define STRATA_KIND_H

#include <stddef.h>

/* Memory of one kind held by this PE: the local mapping and what is needed to release it. */
struct kind_mem {
    void *base;
    size_t size;
    int fd;        /* backing file while peers may still open it, else -1 */
    void *storage; /* kind-private: where device-like memory really lives */
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
    /* Device memory that neither the library nor node peers may load or store: every byte moves
     * through these, at an offset from the memory's base. NULL for host-accessible kinds. */
    void (*copy_in)(struct kind_mem *mem, size_t offset, const void *src, size_t len);
    void (*copy_out)(struct kind_mem *mem, size_t offset, void *dst, size_t len);
    void (*fill)(struct kind_mem *mem, size_t offset, int byte, size_t len);
};

/* Whether the library may load and store this kind's memory itself. */
static inline int kind_direct(const struct kind_ops *kind)
{
    return kind->copy_in == NULL;
}

extern const struct kind_ops kind_host;
/* A testing aid: memory that behaves like a GPU's (its addresses fault on load/store, every access
 * goes through the copy functions), so device routing and staging are exercised without a GPU. */
extern const struct kind_ops kind_testdev;

/* Every space's local base is aligned to kind_base_alignment(size) (the heap size rounded up to
 * a power of two, at most KIND_MAX_BASE_ALIGN), the same on every PE: the largest alignment an
 * allocation can be promised. */
#define KIND_MAX_BASE_ALIGN ((size_t)1 << 30)
size_t kind_base_alignment(size_t size);
/* Reserves len bytes of address space, without access, at that alignment, followed by a guard
 * of KIND_GUARD_BYTES that stays without access (NULL on failure): costs no memory. A transfer
 * that runs past the end of a heap then faults at once instead of overwriting whatever mapping
 * the kernel placed next (often another heap of the job, or the library's own words). */
#define KIND_GUARD_BYTES ((size_t)1 << 20)
void *kind_reserve_aligned(size_t len);
/* Returns a reservation of kind_reserve_aligned (len as given there), guard included. */
void kind_release(void *base, size_t len);

/* Creates and maps a shared-memory file; also used for the static data segment. */
int kind_host_file_create(const char *name, size_t size, int *fd);

#endif
