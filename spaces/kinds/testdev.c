/* SPDX-License-Identifier: BSD-3-Clause */
/* The test device kind: memory that behaves like a GPU's without one. The addresses handed out
 * are a reserved range with no access rights, so any load or store through them faults exactly
 * as a host access to device memory would; the bytes live in a private host mapping that only
 * the copy functions reach. It cannot be attached by node peers: every remote access is staged
 * through the owner, the path device memory the transport cannot register takes. The program
 * may allocate buffers of it too (shmemx_test_device_malloc), as it would cudaMalloc.
 *
 * Its writes are asynchronous, as strictly as the kind contract allows: each is queued (its
 * source copied at once) and lands only at sync, and reads see landed bytes only. A library path
 * that forgets to land a write before reading it back or reporting it done reads stale bytes in
 * the tests, instead of only on a real device stream. */
#include "../../common/log.h"
#include "kind.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Every allocation of the kind: a heap or a private buffer. */
struct testdev_block {
    char *base; /* its device addresses */
    size_t size;
    char *storage; /* where its bytes are */
    int private_buffer;
};

static struct testdev_block *testdev_blocks;
static size_t testdev_count, testdev_capacity;
static pthread_mutex_t testdev_lock = PTHREAD_MUTEX_INITIALIZER;

/* Writes issued and not landed, oldest first (under testdev_lock). A fill keeps its byte in
 * bytes[0]. */
struct testdev_write {
    struct testdev_write *next;
    char *storage;
    size_t len;
    int fill;
    char bytes[];
};
static struct testdev_write *testdev_queue, **testdev_queue_tail = &testdev_queue;

/* The block holding ptr (under testdev_lock), or NULL. */
static const struct testdev_block *testdev_find(const void *ptr)
{
    for (size_t i = 0; i < testdev_count; i++)
        if ((uintptr_t)ptr - (uintptr_t)testdev_blocks[i].base < testdev_blocks[i].size)
            return &testdev_blocks[i];
    return NULL;
}

/* The host address of device address ptr, which must be the kind's. */
static char *testdev_storage(const void *ptr)
{
    pthread_mutex_lock(&testdev_lock);
    const struct testdev_block *block = testdev_find(ptr);
    char *at = block ? block->storage + ((const char *)ptr - block->base) : NULL;
    pthread_mutex_unlock(&testdev_lock);
    if (!at)
        log_fatal("spaces", "%p is no test device memory", ptr);
    return at;
}

static int testdev_add(struct testdev_block block)
{
    pthread_mutex_lock(&testdev_lock);
    int rc = 0;
    if (testdev_count == testdev_capacity) {
        size_t capacity = testdev_capacity ? 2 * testdev_capacity : 16;
        struct testdev_block *grown = realloc(testdev_blocks, capacity * sizeof(*grown));
        if (grown) {
            testdev_blocks = grown;
            testdev_capacity = capacity;
        } else {
            rc = -1;
        }
    }
    if (!rc)
        testdev_blocks[testdev_count++] = block;
    pthread_mutex_unlock(&testdev_lock);
    return rc;
}

/* Lands (or, into storage being released, drops) the queued writes (under testdev_lock). */
static void testdev_queue_drain(const char *dropped_from, size_t dropped_len)
{
    while (testdev_queue) {
        struct testdev_write *w = testdev_queue;
        testdev_queue = w->next;
        if ((uintptr_t)w->storage - (uintptr_t)dropped_from >= dropped_len) {
            if (w->fill)
                memset(w->storage, w->bytes[0], w->len);
            else
                memcpy(w->storage, w->bytes, w->len);
        }
        free(w);
    }
    testdev_queue_tail = &testdev_queue;
}

/* Forgets the block at base, a private buffer or a heap as private_buffer says, and returns it
 * (a zero block when there is none). Writes still queued land first, except those into the
 * block itself. */
static struct testdev_block testdev_remove(const void *base, int private_buffer)
{
    struct testdev_block found = {0};
    pthread_mutex_lock(&testdev_lock);
    for (size_t i = 0; i < testdev_count; i++)
        if (testdev_blocks[i].base == base && testdev_blocks[i].private_buffer == private_buffer) {
            found = testdev_blocks[i];
            testdev_blocks[i] = testdev_blocks[--testdev_count];
            break;
        }
    testdev_queue_drain(found.storage, found.storage ? found.size : 0);
    pthread_mutex_unlock(&testdev_lock);
    return found;
}

static void testdev_unmap(const struct testdev_block *block)
{
    size_t len = block->size ? block->size : 1;
    if (block->base)
        kind_release(block->base, len);
    if (block->storage)
        munmap(block->storage, len);
}

/* A block of size bytes: faulting addresses, and storage behind them. */
static int testdev_new(size_t size, int private_buffer, struct testdev_block *block)
{
    size_t len = size ? size : 1;
    *block = (struct testdev_block){kind_reserve_aligned(len), size, NULL, private_buffer};
    void *storage =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    block->storage = storage == MAP_FAILED ? NULL : storage;
    if (block->base && block->storage && testdev_add(*block) == 0)
        return 0;
    log_error("spaces", "cannot reserve %zu bytes of test device memory: %s", size,
              strerror(errno));
    testdev_unmap(block);
    return -1;
}

static int testdev_create(const char *prefix, size_t size, struct kind_mem *mem)
{
    (void)prefix;
    struct testdev_block block;
    mem->fd = -1;
    if (testdev_new(size, 0, &block))
        return -1;
    mem->base = block.base;
    mem->storage = block.storage;
    mem->size = size;
    return 0;
}

static void testdev_destroy(struct kind_mem *mem)
{
    struct testdev_block block = testdev_remove(mem->base, 0);
    testdev_unmap(&block);
    mem->base = mem->storage = NULL;
}

static void testdev_copy_to_host(void *dst, const void *src, size_t len)
{
    memcpy(dst, testdev_storage(src), len);
}

/* Queues a write of len bytes at device address dst: src's bytes, or byte repeated. */
static void testdev_queue_write(void *dst, const void *src, int byte, size_t len)
{
    char *storage = testdev_storage(dst);
    struct testdev_write *w = malloc(sizeof(*w) + (src ? len : 1));
    if (!w)
        log_fatal("spaces", "out of memory for a %zu-byte test device write", len);
    *w = (struct testdev_write){NULL, storage, len, !src};
    if (src)
        memcpy(w->bytes, src, len);
    else
        w->bytes[0] = (char)byte;
    pthread_mutex_lock(&testdev_lock);
    *testdev_queue_tail = w;
    testdev_queue_tail = &w->next;
    pthread_mutex_unlock(&testdev_lock);
}

static void testdev_copy_from_host(void *dst, const void *src, size_t len, int queue)
{
    (void)queue;
    testdev_queue_write(dst, src, 0, len);
}

static void testdev_fill(void *dst, int byte, size_t len, int queue)
{
    (void)queue;
    testdev_queue_write(dst, NULL, byte, len);
}

/* One queue for every context's writes: a sync of any lands them all, more than was asked. */
static void testdev_sync(int queue)
{
    (void)queue;
    pthread_mutex_lock(&testdev_lock);
    testdev_queue_drain(NULL, 0);
    pthread_mutex_unlock(&testdev_lock);
}

static int testdev_owns(const void *ptr)
{
    pthread_mutex_lock(&testdev_lock);
    const struct testdev_block *block = testdev_find(ptr);
    int owned = block && block->private_buffer;
    pthread_mutex_unlock(&testdev_lock);
    return owned;
}

void *kind_testdev_private_alloc(size_t size)
{
    struct testdev_block block;
    if (!size || testdev_new(size, 1, &block))
        return NULL;
    kind_private_use(&kind_testdev);
    return block.base;
}

int kind_testdev_private_free(void *ptr)
{
    struct testdev_block block = testdev_remove(ptr, 1);
    testdev_unmap(&block);
    return block.base ? 0 : -1;
}

const struct kind_ops kind_testdev = {
    .name = "test device",
    .caps = KIND_CAP_ASYNC_COPY,
    .mem_type = TRANSPORT_MEM_HOST,
    .create = testdev_create,
    .destroy = testdev_destroy,
    .copy_to_host = testdev_copy_to_host,
    .copy_from_host = testdev_copy_from_host,
    .fill = testdev_fill,
    .owns = testdev_owns,
    .sync = testdev_sync,
};
