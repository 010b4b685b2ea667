/* SPDX-License-Identifier: BSD-3-Clause */
/* Host memory shared through POSIX shared-memory files: node peers map a PE's heap and load/store
 * into it directly. Files are sparse, so a large heap costs address space, not memory, until it
 * is touched. A file is unlinked as soon as it is made, so a job that dies leaves none behind,
 * and its node peers open it through the owner's descriptor in /proc, as only the owner's user
 * may. Its brief name carries a random token: nobody can guess it and take it first. */
#include "../../common/log.h"
#include "../placement.h"
#include "kind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Hex digits of a name's random token (128 bits). */
#define HOST_TOKEN_LEN 32

static int host_token_new(char *token)
{
    unsigned char random[HOST_TOKEN_LEN / 2];
    if (getrandom(random, sizeof(random), 0) != (ssize_t)sizeof(random)) {
        log_error("spaces", "no random bytes for a shared-memory name: %s", strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < sizeof(random); i++)
        snprintf(token + 2 * i, 3, "%02x", random[i]);
    return 0;
}

int kind_host_file_create(const char *prefix, size_t size, struct kind_mem *mem)
{
    char token[HOST_TOKEN_LEN + 1], name[300];
    mem->fd = -1;
    if (host_token_new(token) ||
        snprintf(name, sizeof(name), "%s.%s", prefix, token) >= (int)sizeof(name))
        return -1;
    mem->fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (mem->fd < 0) {
        log_error("spaces", "shm_open(%s): %s", name, strerror(errno));
        return -1;
    }
    shm_unlink(name);
    if (ftruncate(mem->fd, (off_t)size)) {
        log_error("spaces", "cannot size shared memory to %zu bytes: %s", size, strerror(errno));
        close(mem->fd);
        mem->fd = -1;
        return -1;
    }
    return 0;
}

/* Maps the file over an aligned reservation: the allocator aligns offsets, so the base must be
 * at least as aligned as any request it can satisfy. reserve: the kernel sets the file's huge
 * pages aside now, all or none, so that PEs racing for the last free ones do not each take a
 * part and all fail. */
static void *host_map_aligned(int fd, size_t size, int reserve)
{
    size_t len = size ? size : 1;
    char *aligned = kind_reserve_aligned(len);
    if (!aligned)
        return MAP_FAILED;
    void *mapped = mmap(aligned, len, PROT_READ | PROT_WRITE,
                        MAP_SHARED | MAP_FIXED | (reserve ? 0 : MAP_NORESERVE), fd, 0);
    if (mapped == MAP_FAILED) {
        int why = errno;
        kind_release(aligned, len);
        errno = why;
    }
    return mapped;
}

/* Whether p asks for pages of a bound size from the kernel's huge-page pools. */
static int host_huge(const struct placement *p)
{
    return p && !p->simulated && p->page_size && p->page_size != PLACEMENT_PAGE_TRANSPARENT;
}

static int host_map(struct kind_mem *mem, size_t size, const struct placement *p)
{
    mem->base = host_map_aligned(mem->fd, size, host_huge(p));
    if (mem->base == MAP_FAILED) {
        if (!p || !p->fall_back)
            log_error("spaces", "cannot map %zu bytes of shared memory: %s", size, strerror(errno));
        mem->base = NULL;
        return -1;
    }
    mem->size = size;
    return 0;
}

/* Whether p asks for huge pages of any sort: a file of the placement's own. */
static int host_placed_file(const struct placement *p)
{
    return p && !p->simulated && p->page_size;
}

static void host_destroy(struct kind_mem *mem);

/* This PE's heap as p asks (NULL: anywhere, in base pages). */
static int host_create_placed(const char *prefix, size_t size, struct kind_mem *mem,
                              const struct placement *p)
{
    if (host_placed_file(p) ? placement_file_create(p, size, &mem->fd)
                            : kind_host_file_create(prefix, size, mem))
        return -1;
    if (host_map(mem, size, p) || (p && placement_apply(mem->base, size, p))) {
        int why = errno;
        host_destroy(mem);
        errno = why;
        return -1;
    }
    return 0;
}

static int host_create(const char *prefix, size_t size, struct kind_mem *mem)
{
    const struct placement *p = mem->placement;
    if (host_create_placed(prefix, size, mem, p) == 0)
        return 0;
    if (!host_placed_file(p) || !p->fall_back) {
        if (host_huge(p))
            log_error("spaces", "no %zu bytes in %zu KiB pages: %s", size, p->page_size >> 10,
                      strerror(errno));
        return -1;
    }
    struct placement base_pages = *p; /* the pages were a preference: base pages will do */
    base_pages.page_size = 0;
    return host_create_placed(prefix, size, mem, &base_pages);
}

/* What names a PE's file to its node peers: its descriptor there, and the file's identity, which
 * the opener checks, so that a process id reused after its owner ended cannot hand over another
 * file. */
struct host_handle {
    int32_t pid, fd;
    uint64_t dev, ino;
    uint64_t transparent_huge; /* peers advise their mapping too: the faulting mapping decides */
};

static int host_export(const struct kind_mem *mem, void *handle, size_t *len)
{
    struct stat st;
    if (*len < sizeof(struct host_handle) || fstat(mem->fd, &st))
        return -1;
    struct host_handle h = {(int32_t)getpid(), mem->fd, (uint64_t)st.st_dev, (uint64_t)st.st_ino,
                            mem->placement &&
                                mem->placement->page_size == PLACEMENT_PAGE_TRANSPARENT};
    memcpy(handle, &h, sizeof(h));
    *len = sizeof(h);
    return 0;
}

/* Opens the file a handle names, or says why not (errno ESRCH: its owner has ended, or closed
 * it). */
static int host_open(const struct host_handle *h)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)h->pid, (int)h->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno != ENOENT && errno != ESRCH) {
        log_error("spaces",
                  "cannot open %s, a node peer's shared memory: %s (its process must have "
                  "this user, be dumpable and be in this process's pid namespace)",
                  path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || (uint64_t)st.st_dev != h->dev ||
        (uint64_t)st.st_ino != h->ino) {
        log_error("spaces", "no %s: the node peer's process has ended", path);
        if (fd >= 0)
            close(fd);
        errno = ESRCH;
        return -1;
    }
    return fd;
}

static void *host_attach(const void *handle, size_t len, size_t size)
{
    struct host_handle h;
    if (len != sizeof(h))
        return NULL;
    memcpy(&h, handle, sizeof(h));
    int fd = host_open(&h);
    if (fd < 0)
        return NULL;
    void *addr = host_map_aligned(fd, size, 0);
    close(fd);
    if (addr == MAP_FAILED)
        return NULL;
    if (h.transparent_huge)
        madvise(addr, size, MADV_HUGEPAGE); /* a hint: without it the owner's pages still are */
    return addr;
}

static void host_detach(void *addr, size_t size)
{
    kind_release(addr, size ? size : 1);
}

static void host_destroy(struct kind_mem *mem)
{
    if (mem->fd >= 0)
        close(mem->fd);
    mem->fd = -1;
    if (mem->base)
        kind_release(mem->base, mem->size ? mem->size : 1);
    mem->base = NULL;
}

const struct kind_ops kind_host = {
    .name = "host",
    .caps =
        KIND_CAP_LOAD_STORE | KIND_CAP_PEER_ATTACH | KIND_CAP_ATTACH_ON_USE | KIND_CAP_TRANSPORT,
    .mem_type = TRANSPORT_MEM_HOST,
    .create = host_create,
    .destroy = host_destroy,
    .export = host_export,
    .attach = host_attach,
    .detach = host_detach,
};
