/* Host memory shared through POSIX shared-memory files: node peers map a PE's heap and load/store
 * into it directly. Files are sparse, so a large heap costs address space, not memory, until it
 * is touched. */
#include "../../common/log.h"
#include "kind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int kind_host_file_create(const char *name, size_t size, int *fd)
{
    *fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (*fd < 0) {
        log_error("spaces", "shm_open(%s): %s", name, strerror(errno));
        return -1;
    }
    if (ftruncate(*fd, (off_t)size)) {
        log_error("spaces", "cannot size shared memory %s to %zu bytes: %s", name, size,
                  strerror(errno));
        close(*fd);
        shm_unlink(name);
        return -1;
    }
    return 0;
}

size_t kind_base_alignment(size_t size)
{
    size_t align = 4096;
    while (align < size && align < KIND_MAX_BASE_ALIGN)
        align <<= 1;
    return align;
}

/* len bytes at align, then the guard: the rest of an oversized reservation is returned. */
static void *host_reserve(size_t len, size_t align)
{
    size_t span = len + KIND_GUARD_BYTES;
    char *reserved =
        mmap(NULL, span + align - 1, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (reserved == MAP_FAILED)
        return NULL;
    char *aligned = (char *)(((uintptr_t)reserved + align - 1) & ~(uintptr_t)(align - 1));
    if (aligned > reserved)
        munmap(reserved, (size_t)(aligned - reserved));
    size_t tail = (size_t)(reserved + span + align - 1 - (aligned + span));
    if (tail)
        munmap(aligned + span, tail);
    return aligned;
}

void *kind_reserve_aligned(size_t len)
{
    return host_reserve(len, kind_base_alignment(len));
}

void kind_release(void *base, size_t len)
{
    munmap(base, len + KIND_GUARD_BYTES);
}

/* Maps the file over an aligned reservation: the allocator aligns offsets, so the base must be
 * at least as aligned as any request it can satisfy. */
static void *host_map_aligned(int fd, size_t size)
{
    size_t len = size ? size : 1;
    char *aligned = kind_reserve_aligned(len);
    if (!aligned)
        return MAP_FAILED;
    void *mapped =
        mmap(aligned, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0);
    if (mapped == MAP_FAILED)
        kind_release(aligned, len);
    return mapped;
}

static int host_create(const char *name, size_t size, struct kind_mem *mem)
{
    if (kind_host_file_create(name, size, &mem->fd))
        return -1;
    mem->base = host_map_aligned(mem->fd, size);
    if (mem->base == MAP_FAILED) {
        log_error("spaces", "cannot map %zu bytes of shared memory: %s", size, strerror(errno));
        close(mem->fd);
        shm_unlink(name);
        return -1;
    }
    mem->size = size;
    return 0;
}

static void *host_map_peer(const char *name, size_t size)
{
    size_t len = size ? size : 1;
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return NULL;
    char *reserved = host_reserve(len, 1);
    void *addr = reserved ? mmap(reserved, len, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0)
                          : MAP_FAILED;
    close(fd);
    if (addr == MAP_FAILED && reserved)
        kind_release(reserved, len);
    return addr == MAP_FAILED ? NULL : addr;
}

static void host_unmap_peer(void *addr, size_t size)
{
    kind_release(addr, size ? size : 1);
}

static void host_unlink(const char *name, struct kind_mem *mem)
{
    shm_unlink(name);
    if (mem->fd >= 0)
        close(mem->fd);
    mem->fd = -1;
}

static void host_destroy(struct kind_mem *mem)
{
    if (mem->base)
        kind_release(mem->base, mem->size ? mem->size : 1);
    if (mem->fd >= 0)
        close(mem->fd);
    mem->base = NULL;
    mem->fd = -1;
}

const struct kind_ops kind_host = {
    .name = "host",
    .create = host_create,
    .map_peer = host_map_peer,
    .unmap_peer = host_unmap_peer,
    .unlink = host_unlink,
    .destroy = host_destroy,
};
