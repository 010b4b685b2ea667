/* Copies that store each byte once (copy.h). */
#include "copy.h"

/* 16 bytes, 8, 4, 2 and 1 as len needs them: every piece starts at an offset that is a multiple
 * of its size, so an element aligned like the block is one piece. */
void copy_once_short(void *dst, const void *src, size_t len)
{
    char *to = dst;
    const char *from = src;
    if (len & 16) {
        COPY_PIECE(copy_u128, to, from);
        to += 16, from += 16;
    }
    if (len & 8) {
        COPY_PIECE(copy_u64, to, from);
        to += 8, from += 8;
    }
    if (len & 4) {
        COPY_PIECE(copy_u32, to, from);
        to += 4, from += 4;
    }
    if (len & 2) {
        COPY_PIECE(copy_u16, to, from);
        to += 2, from += 2;
    }
    if (len & 1)
        *(volatile char *)to = *from;
}
