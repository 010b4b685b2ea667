/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies that store each byte once (copy.h). */
#include "copy.h"

#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

size_t copy_movsb_min = SIZE_MAX;

/* The piece of type's size, where len holds one: stored, and passed. */
#define COPY_ONCE_STEP(type)                                                                       \
    if (len & sizeof(type)) {                                                                      \
        COPY_PIECE(type, to, from);                                                                \
        to += sizeof(type), from += sizeof(type);                                                  \
    }

/* 16 bytes, 8, 4, 2 and 1 as len needs them: every piece starts at an offset that is a multiple
 * of its size, so an element aligned like the block is one piece. */
void copy_once_short(void *dst, const void *src, size_t len)
{
    char *to = dst;
    const char *from = src;
    COPY_ONCE_STEP(copy_u128)
    COPY_ONCE_STEP(copy_u64)
    COPY_ONCE_STEP(copy_u32)
    COPY_ONCE_STEP(copy_u16)
    COPY_ONCE_STEP(copy_u8)
}

#if defined(__x86_64__)
void copy_movsb(void *dst, const void *src, size_t len)
{
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(len) : : "memory");
}

enum { CPUID7_EBX_ERMS = 1u << 9 };

/* An AMD CPU with fast string copies (ERMS): blocks past its L2 cache, where the C library
 * stops using them. */
void copy_tune(void)
{
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx) || ebx != signature_AMD_ebx ||
        !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(ebx & CPUID7_EBX_ERMS))
        return;
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    size_t l2_bytes = l2 > 0 ? (size_t)l2 : (size_t)1 << 20; /* unknown: the commonest size */
    copy_movsb_min = l2_bytes > COPY_MOVSB_FLOOR ? l2_bytes : COPY_MOVSB_FLOOR;
}
#else
void copy_movsb(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

void copy_tune(void)
{
}
#endif
