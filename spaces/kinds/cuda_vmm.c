/* SPDX-License-Identifier: BSD-3-Clause */
/* Heaps of the driver's virtual memory management API (cuda_internal.h). With it a heap is a
 * physical allocation mapped into addresses the library reserves, so it can sit at the address
 * every member wishes for its space (IDENT_ADDR); node peers attach it through a file descriptor
 * they take from the owner with pidfd_getfd, since the legacy IPC handles do not name such memory.
 * Where the device, the kernel or the Yama security module rules that out, heaps come from
 * cuMemAlloc and legacy IPC handles (cuda.c). */
#define _GNU_SOURCE
#include "../../common/log.h"
#include "cuda_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What an attach handle of a VMM heap holds: no legacy IPC handle starts with the marker. */
struct cuda_vmm_handle {
    char marker[8];
    int32_t pid; /* the owner */
    int32_t fd;  /* the allocation's descriptor in the owner, open while the heap lives */
    uint64_t size;
};
_Static_assert(sizeof(struct cuda_vmm_handle) <= GPU_IPC_HANDLE, "a VMM handle fits an IPC one");
static const char cuda_vmm_marker[8] = "STRAVMM";

/* A mapping of this process: its own heap, or a node peer's attached. */
struct cuda_vmm_block {
    CUdeviceptr base;
    size_t size;     /* mapped: a multiple of the granularity */
    size_t reserved; /* addresses reserved from base, size or more */
    CUmemGenericAllocationHandle allocation;
    int fd;     /* an own heap's exported descriptor, or -1 */
    int device; /* the ordinal, in this process, of the device that holds it */
    struct cuda_vmm_block *next;
};
static struct cuda_vmm_block *cuda_vmm_blocks;
static pthread_mutex_t cuda_vmm_lock = PTHREAD_MUTEX_INITIALIZER;

/* The owner's descriptor fd, taken into this process, or -1. */
static int cuda_vmm_take_fd(pid_t owner, int fd)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int pidfd = (int)syscall(SYS_pidfd_open, owner, 0);
    int taken = pidfd < 0 ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    if (pidfd >= 0)
        close(pidfd);
    return taken;
#else
    (void)owner;
    (void)fd;
    return -1;
#endif
}

/* Whether node peers may take each other's descriptors: pidfd_getfd needs the right to trace
 * the owner, which Yama's ptrace scope 1 and above withholds from sibling processes, and a
 * container's system-call filter may refuse it outright (tried here on this process's own). */
static int cuda_vmm_peers_share_fds(void)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int scope = 0;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = -1;
        fclose(f);
    }
    int own = scope == 0 ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1;
    int taken = own < 0 ? -1 : cuda_vmm_take_fd(getpid(), own);
    if (own >= 0)
        close(own);
    if (taken >= 0)
        close(taken);
    return taken >= 0;
#else
    return 0;
#endif
}

void cuda_vmm_setup(struct cuda_vmm *vmm, CUdevice device)
{
    int supported = 0, fds = 0, rdma = 0;
    /* GPUDirect RDMA capable where the device can be: a network adapter then registers the heap
     * (UCX built with CUDA), as it does cuMemAlloc's memory without being asked. */
    if (cuda.cuDeviceGetAttribute(&rdma,
                                  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED,
                                  device) != CUDA_SUCCESS)
        rdma = 0;
    vmm->prop = (CUmemAllocationProp){
        .type = CU_MEM_ALLOCATION_TYPE_PINNED,
        .requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
        .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = device},
        .allocFlags = {.gpuDirectRDMACapable = rdma != 0},
    };
    vmm->on =
        cuda.cuDeviceGetAttribute(&supported,
                                  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                                  device) == CUDA_SUCCESS &&
        supported &&
        cuda.cuDeviceGetAttribute(&fds,
                                  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                                  device) == CUDA_SUCCESS &&
        fds &&
        cuda.cuMemGetAllocationGranularity(&vmm->granularity, &vmm->prop,
                                           CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS &&
        vmm->granularity && cuda_vmm_peers_share_fds();
}

static void cuda_vmm_add(struct cuda_vmm_block *block)
{
    pthread_mutex_lock(&cuda_vmm_lock);
    block->next = cuda_vmm_blocks;
    cuda_vmm_blocks = block;
    pthread_mutex_unlock(&cuda_vmm_lock);
}

/* The block that starts at base (take: and removes it), or that holds ptr; NULL if none. */
static struct cuda_vmm_block *cuda_vmm_find(CUdeviceptr ptr, int take)
{
    pthread_mutex_lock(&cuda_vmm_lock);
    struct cuda_vmm_block **at = &cuda_vmm_blocks;
    while (*at && (take ? (*at)->base != ptr : ptr - (*at)->base >= (*at)->size))
        at = &(*at)->next;
    struct cuda_vmm_block *block = *at;
    if (block && take)
        *at = block->next;
    pthread_mutex_unlock(&cuda_vmm_lock);
    return block;
}

/* Maps allocation (size bytes; fd: its exported descriptor, or -1) for the device of vmm at
 * addresses reserved at wish where they are free, else aligned to align (0: the granularity),
 * readable and writable by that device; on failure the allocation is
 * released and fd closed. A wish reserves its whole slot (addresses only), since the driver may
 * place a smaller reservation elsewhere though the address wished for is free. Where the slot
 * cannot be reserved, the heap goes anywhere. */
static CUresult cuda_vmm_map(const struct cuda_vmm *vmm, CUmemGenericAllocationHandle allocation,
                             size_t size, int fd, CUdeviceptr wish, size_t align, void **ptr)
{
    size_t reserved = wish ? KIND_IDENT_SLOT : size;
    CUmemAllocationProp prop;
    CUmemAccessDesc access = {.location = vmm->prop.location,
                              .flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
    CUdeviceptr base = 0;
    int mapped = 0;
    struct cuda_vmm_block *block = malloc(sizeof(*block));
    CUresult rc = block ? cuda.cuMemGetAllocationPropertiesFromHandle(&prop, allocation)
                        : CUDA_ERROR_OUT_OF_MEMORY;
    if (rc == CUDA_SUCCESS && wish &&
        cuda.cuMemAddressReserve(&base, reserved, 0, wish, 0) != CUDA_SUCCESS) {
        base = 0;
        reserved = size;
    }
    if (rc == CUDA_SUCCESS && !base)
        rc = cuda.cuMemAddressReserve(&base, reserved, align > vmm->granularity ? align : 0, 0, 0);
    if (rc == CUDA_SUCCESS)
        mapped = (rc = cuda.cuMemMap(base, size, 0, allocation, 0)) == CUDA_SUCCESS;
    if (rc == CUDA_SUCCESS)
        rc = cuda.cuMemSetAccess(base, size, &access, 1);
    if (rc == CUDA_SUCCESS) {
        *block =
            (struct cuda_vmm_block){base, size, reserved, allocation, fd, prop.location.id, NULL};
        cuda_vmm_add(block);
        *ptr = (void *)(uintptr_t)base;
        return CUDA_SUCCESS;
    }
    if (mapped)
        cuda.cuMemUnmap(base, size);
    if (base)
        cuda.cuMemAddressFree(base, reserved);
    cuda.cuMemRelease(allocation);
    if (fd >= 0)
        close(fd);
    free(block);
    return rc;
}

CUresult cuda_vmm_alloc(const struct cuda_vmm *vmm, void **ptr, size_t size, size_t align,
                        void *wish)
{
    size_t granules = (size + vmm->granularity - 1) / vmm->granularity;
    CUmemGenericAllocationHandle allocation;
    int fd = -1;
    CUresult rc = cuda.cuMemCreate(&allocation, granules * vmm->granularity, &vmm->prop, 0);
    if (rc != CUDA_SUCCESS)
        return rc;
    rc = cuda.cuMemExportToShareableHandle(&fd, allocation,
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
    if (rc != CUDA_SUCCESS) {
        cuda.cuMemRelease(allocation);
        return rc;
    }
    return cuda_vmm_map(vmm, allocation, granules * vmm->granularity, fd,
                        (CUdeviceptr)(uintptr_t)wish, align, ptr);
}

CUresult cuda_vmm_release(void *ptr)
{
    struct cuda_vmm_block *block = cuda_vmm_find(cuda_address(ptr), 1);
    if (!block)
        return CUDA_ERROR_NOT_FOUND;
    CUresult rc = cuda.cuMemUnmap(block->base, block->size);
    cuda.cuMemAddressFree(block->base, block->reserved);
    cuda.cuMemRelease(block->allocation);
    if (block->fd >= 0)
        close(block->fd);
    free(block);
    return rc;
}

CUresult cuda_vmm_export(void *handle, const void *ptr)
{
    const struct cuda_vmm_block *block = cuda_vmm_find(cuda_address(ptr), 0);
    if (!block || block->base != cuda_address(ptr) || block->fd < 0)
        return CUDA_ERROR_NOT_FOUND;
    struct cuda_vmm_handle h = {.pid = getpid(), .fd = block->fd, .size = block->size};
    memcpy(h.marker, cuda_vmm_marker, sizeof(h.marker));
    memset(handle, 0, GPU_IPC_HANDLE);
    memcpy(handle, &h, sizeof(h));
    return CUDA_SUCCESS;
}

CUresult cuda_vmm_attach(const struct cuda_vmm *vmm, void **ptr, const void *handle)
{
    struct cuda_vmm_handle h;
    memcpy(&h, handle, sizeof(h));
    if (memcmp(h.marker, cuda_vmm_marker, sizeof(h.marker)))
        return CUDA_ERROR_NOT_FOUND;
    int fd = cuda_vmm_take_fd(h.pid, h.fd);
    if (fd < 0) {
        log_error("spaces", "cannot take the GPU heap of node peer process %d: %s", (int)h.pid,
                  strerror(errno));
        return CUDA_ERROR_INVALID_HANDLE;
    }
    CUmemGenericAllocationHandle allocation;
    CUresult rc = cuda.cuMemImportFromShareableHandle(&allocation, (void *)(uintptr_t)fd,
                                                      CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    close(fd); /* the imported allocation holds the memory */
    return rc == CUDA_SUCCESS ? cuda_vmm_map(vmm, allocation, h.size, -1, 0, 0, ptr) : rc;
}

int cuda_vmm_device_of(const void *ptr)
{
    const struct cuda_vmm_block *block = cuda_vmm_find(cuda_address(ptr), 0);
    return block ? block->device : -1;
}
