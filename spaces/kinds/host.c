/* SPDX-License-Identifier: BSD-3-Clause */
/* Host memory shared through POSIX shared-memory files: node peers attach a PE's heap by the
 * file's name and load/store into it directly. Files are sparse, so a large heap costs address
 * space, not memory, until it is touched. Names carry a random token: nobody can guess a job's
 * next name and take it first. */
#include "../../common/log.h"
#include "kind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
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
    char token[HOST_TOKEN_LEN + 1];
    mem->fd = -1;
    if (host_token_new(token) ||
        snprintf(mem->name, sizeof(mem->name), "%s.%s", prefix, token) >= (int)sizeof(mem->name))
        return -1;
    mem->fd = shm_open(mem->name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (mem->fd < 0) {
        log_error("spaces", "shm_open(%s): %s", mem->name, strerror(errno));
        return -1;
    }
    if (ftruncate(mem->fd, (off_t)size)) {
        log_error("spaces", "cannot size shared memory %s to %zu bytes: %s", mem->name, size,
                  strerror(errno));
        close(mem->fd);
        shm_unlink(mem->name);
        mem->fd = -1;
        return -1;
    }
    return 0;
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

static int host_create(const char *prefix, size_t size, struct kind_mem *mem)
{
    if (kind_host_file_create(prefix, size, mem))
        return -1;
    mem->base = host_map_aligned(mem->fd, size);
    if (mem->base == MAP_FAILED) {
        log_error("spaces", "cannot map %zu bytes of shared memory: %s", size, strerror(errno));
        close(mem->fd);
        shm_unlink(mem->name);
        mem->base = NULL;
        mem->fd = -1;
        return -1;
    }
    mem->size = size;
    return 0;
}

/* The handle is the token: peers know the job's prefix. */
static int host_export(const struct kind_mem *mem, void *handle, size_t *len)
{
    const char *token = strrchr(mem->name, '.');
    if (!token || strlen(token + 1) + 1 > *len)
        return -1;
    *len = strlen(token + 1) + 1;
    memcpy(handle, token + 1, *len);
    return 0;
}

static void *host_attach(const char *prefix, const void *handle, size_t len, size_t size)
{
    char name[sizeof(((struct kind_mem *)0)->name)];
    if (!len || ((const char *)handle)[len - 1] ||
        snprintf(name, sizeof(name), "%s.%s", prefix, (const char *)handle) >= (int)sizeof(name))
        return NULL;
    size_t map_len = size ? size : 1;
    int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0)
        return NULL;
    char *reserved = kind_reserve_aligned(map_len);
    void *addr = reserved ? mmap(reserved, map_len, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_NORESERVE | MAP_FIXED, fd, 0)
                          : MAP_FAILED;
    close(fd);
    if (addr == MAP_FAILED && reserved)
        kind_release(reserved, map_len);
    return addr == MAP_FAILED ? NULL : addr;
}

static void host_detach(void *addr, size_t size)
{
    kind_release(addr, size ? size : 1);
}

static void host_unexport(struct kind_mem *mem)
{
    if (mem->fd < 0)
        return;
    shm_unlink(mem->name);
    close(mem->fd);
    mem->fd = -1;
}

static void host_destroy(struct kind_mem *mem)
{
    host_unexport(mem);
    if (mem->base)
        kind_release(mem->base, mem->size ? mem->size : 1);
    mem->base = NULL;
}

const struct kind_ops kind_host = {
    .name = "host",
    .caps = KIND_CAP_LOAD_STORE | KIND_CAP_PEER_ATTACH | KIND_CAP_TRANSPORT,
    .mem_type = TRANSPORT_MEM_HOST,
    .create = host_create,
    .destroy = host_destroy,
    .export = host_export,
    .attach = host_attach,
    .detach = host_detach,
    .unexport = host_unexport,
};
