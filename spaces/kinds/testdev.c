/* The test device kind: memory that behaves like a GPU's without one. The addresses handed out
 * are a reserved range with no access rights, so any load or store through them faults exactly
 * as a host access to device memory would; the bytes live in a private host mapping that only
 * the copy functions reach. It cannot be mapped by node peers: every remote access is staged
 * through the target's progress engine, the path real device memory takes. */
#include "../../common/log.h"
#include "kind.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static int testdev_create(const char *name, size_t size, struct kind_mem *mem)
{
    (void)name;
    size_t len = size ? size : 1;
    mem->fd = -1;
    mem->base = kind_reserve_aligned(len);
    mem->storage =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!mem->base || mem->storage == MAP_FAILED) {
        log_error("spaces", "cannot reserve %zu bytes of test device memory: %s", size,
                  strerror(errno));
        if (mem->base)
            kind_release(mem->base, len);
        if (mem->storage != MAP_FAILED)
            munmap(mem->storage, len);
        mem->base = mem->storage = NULL;
        return -1;
    }
    mem->size = size;
    return 0;
}

static void testdev_unlink(const char *name, struct kind_mem *mem)
{
    (void)name;
    (void)mem;
}

static void testdev_destroy(struct kind_mem *mem)
{
    size_t len = mem->size ? mem->size : 1;
    if (mem->base)
        kind_release(mem->base, len);
    if (mem->storage)
        munmap(mem->storage, len);
    mem->base = mem->storage = NULL;
}

static void testdev_copy_in(struct kind_mem *mem, size_t offset, const void *src, size_t len)
{
    memcpy((char *)mem->storage + offset, src, len);
}

static void testdev_copy_out(struct kind_mem *mem, size_t offset, void *dst, size_t len)
{
    memcpy(dst, (const char *)mem->storage + offset, len);
}

static void testdev_fill(struct kind_mem *mem, size_t offset, int byte, size_t len)
{
    memset((char *)mem->storage + offset, byte, len);
}

const struct kind_ops kind_testdev = {
    .name = "test device",
    .create = testdev_create,
    .map_peer = NULL,
    .unmap_peer = NULL,
    .unlink = testdev_unlink,
    .destroy = testdev_destroy,
    .copy_in = testdev_copy_in,
    .copy_out = testdev_copy_out,
    .fill = testdev_fill,
};
