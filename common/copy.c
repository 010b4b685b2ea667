/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies that store each byte once (copy.h). */
#include "copy.h"

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
