/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies that store each byte once (copy.h). */
#include "copy.h"

#include <stdint.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

size_t copy_movsb_min = SIZE_MAX;
size_t copy_stream_after = SIZE_MAX;

/* This thread's last run of contiguous destination bytes: where it ends, and how long it is. */
static __thread char *copy_run_end __attribute__((tls_model("initial-exec")));
static __thread size_t copy_run_bytes __attribute__((tls_model("initial-exec")));

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

enum copy_way copy_way_next(void *dst, size_t len)
{
    char *to = dst;
    size_t before = to == copy_run_end ? copy_run_bytes : 0;
    copy_run_bytes = before + len;
    copy_run_end = to + len;
    if (before >= copy_stream_after)
        return COPY_STREAM;
    return len >= copy_movsb_min ? COPY_MOVSB : COPY_MEMCPY;
}

void copy_large(void *dst, const void *src, size_t len)
{
    switch (copy_way_next(dst, len)) {
    case COPY_STREAM:
        copy_stream(dst, src, len);
        break;
    case COPY_MOVSB:
        copy_movsb(dst, src, len);
        break;
    case COPY_MEMCPY:
        memcpy(dst, src, len);
        break;
    }
}

#if defined(__x86_64__)
void copy_movsb(void *dst, const void *src, size_t len)
{
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(len) : : "memory");
}

enum { COPY_LINE = 64 };

/* The lines of dst that len covers whole, with non-temporal stores of vector type, loaded
 * unaligned; the bytes before and after them with memcpy. */
#define COPY_STREAM_DEFINE(name, isa, vector, load, store)                                         \
    __attribute__((target(isa))) static void name(void *dst, const void *src, size_t len)          \
    {                                                                                              \
        char *to = dst;                                                                            \
        const char *from = src;                                                                    \
        size_t head = -(uintptr_t)to % COPY_LINE, body = (len - head) / COPY_LINE * COPY_LINE;     \
        memcpy(to, from, head);                                                                    \
        for (size_t at = head; at < head + body; at += COPY_LINE)                                  \
            for (size_t v = 0; v < COPY_LINE; v += sizeof(vector))                                 \
                store((vector *)(void *)(to + at + v), load((const void *)(from + at + v)));       \
        memcpy(to + head + body, from + head + body, len - head - body);                           \
        _mm_sfence();                                                                              \
    }

COPY_STREAM_DEFINE(copy_stream_sse2, "sse2", __m128i, _mm_loadu_si128, _mm_stream_si128)
COPY_STREAM_DEFINE(copy_stream_avx512, "avx512f", __m512i, _mm512_loadu_si512, _mm512_stream_si512)

static void (*copy_stream_with)(void *, const void *, size_t) = copy_stream_sse2;

void copy_stream(void *dst, const void *src, size_t len)
{
    if (len < COPY_LINE) /* no whole line, maybe not even a head */
        memcpy(dst, src, len);
    else
        copy_stream_with(dst, src, len);
}

enum { CPUID7_EBX_ERMS = 1u << 9 };

/* By the core's L2 cache: runs of eight times its size stream, which on current server CPUs is
 * about a core's share of the last-level cache (a run of less may still be there when it is
 * copied again, and writing it around the caches would then lose), and, on an AMD CPU with fast
 * string copies (ERMS), blocks past it take the string copy, where the C library stops using it. */
void copy_tune(void)
{
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    size_t l2_bytes = l2 > 0 ? (size_t)l2 : (size_t)1 << 20; /* unknown: the commonest size */
    copy_stream_after = 8 * l2_bytes;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
        copy_stream_with = copy_stream_avx512;
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx) || ebx != signature_AMD_ebx ||
        !__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(ebx & CPUID7_EBX_ERMS))
        return;
    copy_movsb_min = l2_bytes > COPY_LARGE_MIN ? l2_bytes : COPY_LARGE_MIN;
}
#else
void copy_movsb(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

void copy_stream(void *dst, const void *src, size_t len)
{
    memcpy(dst, src, len);
}

void copy_tune(void)
{
}
#endif
