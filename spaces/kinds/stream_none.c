/* SPDX-License-Identifier: BSD-3-Clause */
/* Streams in a build without a GPU runtime (stream.h): there is no stream to order work on. */
#include "stream.h"

#include <stdio.h>

int kind_stream_open(void *stream, struct kind_stream *s, char *why, size_t whylen)
{
    (void)stream;
    (void)s;
    snprintf(why, whylen, "this build of the library has no GPU runtime (CUDA or HIP)");
    return -1;
}

const char *kind_stream_runtime(void)
{
    return "GPU";
}

int kind_stream_device(const struct kind_ops *kind, const struct kind_stream *s, int *matches,
                       char *device, size_t len)
{
    (void)kind, (void)s, (void)device, (void)len;
    *matches = 0;
    return 0;
}

int kind_stream_reaches(const void *ptr)
{
    (void)ptr;
    return 0;
}

int kind_stream_copy(const struct kind_stream *s, void *dst, const void *src, size_t len)
{
    (void)s, (void)dst, (void)src, (void)len;
    return -1;
}

int kind_stream_write(const struct kind_stream *s, volatile uint64_t *word, uint64_t value)
{
    (void)s, (void)word, (void)value;
    return -1;
}

int kind_stream_wait_value(const struct kind_stream *s, const volatile uint64_t *word,
                           uint64_t value, int equal)
{
    (void)s, (void)word, (void)value, (void)equal;
    return -1;
}

int kind_stream_wait_kernel(const struct kind_stream *s, const struct kind_ops *kind,
                            const uint64_t *word, int cmp, uint64_t value)
{
    (void)s, (void)kind, (void)word, (void)cmp, (void)value;
    return KIND_STREAM_NO_KERNEL;
}

int kind_stream_can_atomic(const struct kind_ops *kind, const void *word)
{
    (void)kind, (void)word;
    return 0;
}

int kind_stream_atomic(const struct kind_stream *s, const struct kind_ops *kind, uint64_t *word,
                       enum transport_amo op, uint64_t value)
{
    (void)s, (void)kind, (void)word, (void)op, (void)value;
    return KIND_STREAM_NO_KERNEL;
}

volatile uint64_t *kind_stream_words(size_t *lines)
{
    *lines = 0;
    return NULL;
}

void kind_stream_relax(void)
{
}
