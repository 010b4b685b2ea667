/* SPDX-License-Identifier: BSD-3-Clause */
/* Symmetric static data. A process cannot map another's data and bss without XPMEM, so at
 * start-up the program's writable segment is copied onto a shared-memory file and the file is
 * mapped over the same addresses. Globals then behave exactly like the heap: node peers map the
 * file for direct load/store and CPU atomics, and the transport registers it like any region. */
#define _GNU_SOURCE
#include "../common/log.h"
#include "space.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct writable_segment {
    uintptr_t start, end; /* page aligned */
};

/* The main program is the first object dl_iterate_phdr reports. Its writable PT_LOAD holds
 * .data and .bss; the part covered by PT_GNU_RELRO becomes read-only after relocation and is
 * left alone. */
static int find_program_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct writable_segment *seg = arg;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t relro_end = 0, start = 0, end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_GNU_RELRO)
            relro_end = hi;
        else if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W) && !start) {
            start = lo;
            end = hi;
        }
    }
    if (relro_end > start && relro_end < end)
        start = relro_end;
    seg->start = (start + page - 1) & ~(page - 1);
    seg->end = (end + page - 1) & ~(page - 1);
    return 1; /* stop after the main program */
}

/* Copies the segment word by word. Not memcpy: under AddressSanitizer the segment holds poisoned
 * red zones between globals, and this copy must read them too. Volatile keeps the compiler from
 * turning the loop back into a memcpy call. */
__attribute__((no_sanitize_address)) static void copy_segment(void *dst, const void *src,
                                                              size_t len)
{
    const volatile uint64_t *from = src;
    uint64_t *to = dst;
    for (size_t i = 0; i < len / sizeof(uint64_t); i++)
        to[i] = from[i];
}

int static_data_create(const char *prefix, struct region *region)
{
    struct writable_segment seg = {0, 0};
    dl_iterate_phdr(find_program_segment, &seg);
    size_t len = seg.end > seg.start ? seg.end - seg.start : 0;
    region->base = (char *)seg.start;
    region->size = len;
    region->mem.fd = -1;
    if (!len)
        return 0;
    if (kind_host_file_create(prefix, len, &region->mem))
        return -1;
    /* Every page is copied, so every page is committed: take the room now, and a full
     * /dev/shm is a message here instead of a SIGBUS in the copy. */
    int room = posix_fallocate(region->mem.fd, 0, (off_t)len);
    if (room) {
        log_error("spaces", "no room in /dev/shm for the program's %zu bytes of static data: %s",
                  len, strerror(room));
        goto fail_file;
    }
    /* Copy through a second mapping of the file, then replace the segment with the file. No other
     * code of the program runs in between: this happens inside shmem_init. */
    void *copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, region->mem.fd, 0);
    if (copy == MAP_FAILED)
        goto fail;
    copy_segment(copy, region->base, len);
    munmap(copy, len);
    void *fixed =
        mmap(region->base, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, region->mem.fd, 0);
    if (fixed != region->base)
        goto fail;
    region->mem.base = region->base;
    region->mem.size = len;
    return 0;
fail:
    log_error("spaces", "cannot move static data onto shared memory: %s", strerror(errno));
fail_file:
    close(region->mem.fd);
    region->mem.fd = -1;
    return -1;
}

/* The file stays mapped at the program's addresses: globals must survive shmem_finalize. */
void static_data_destroy(struct region *region)
{
    if (region->mem.fd >= 0)
        close(region->mem.fd);
    region->mem.fd = -1;
}
