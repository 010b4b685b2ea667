/* SPDX-License-Identifier: BSD-3-Clause */
/* Work on a stream of the program's (stream.h) through the GPU runtime in use: every call enters
 * the context (HIP: device) the stream belongs to, issues its work there and leaves the program's
 * own current again, as every call of the library does. Nothing here synchronizes or allocates,
 * so each call may be captured into a graph. */
#include "gpu.h"
#include "stream.h"

#include <stdio.h>
#include <string.h>

/* 1024 lines of handoff words, each a 64-byte line of its own (stream.h). */
#define GPU_STREAM_LINES 1024
static volatile uint64_t *gpu_stream_lines;

int gpu_stream_setup(struct gpu_device *dev)
{
    void *words;
    size_t bytes = GPU_STREAM_LINES * KIND_STREAM_LINE_WORDS * sizeof(uint64_t);
    if (dev->rt->host_alloc_mapped(&words, bytes))
        return -1;
    memset(words, 0, bytes);
    gpu_stream_lines = words;
    return 0;
}

volatile uint64_t *kind_stream_words(size_t *lines)
{
    *lines = gpu_runtime_in_use() ? GPU_STREAM_LINES : 0;
    return *lines ? gpu_stream_lines : NULL;
}

const char *kind_stream_runtime(void)
{
    const struct gpu_runtime *rt = gpu_runtime_in_use();
    return rt ? rt->name : "GPU";
}

int kind_stream_open(void *stream, struct kind_stream *s, char *why, size_t whylen)
{
    const struct gpu_runtime *rt = gpu_runtime_in_use();
    if (!rt) {
        snprintf(why, whylen,
                 "no GPU runtime is in use on this PE (it holds no CUDA or HIP space)");
        return -1;
    }
    *s = (struct kind_stream){.stream = stream};
    int rc = rt->stream_owner(stream, &s->owner);
    if (rc) {
        snprintf(why, whylen,
                 "stream %p is not a live %s stream of this process (destroyed, or no context "
                 "current for the default stream; error %d)",
                 stream, rt->name, rc);
        return -1;
    }
    uintptr_t previous = rt->swap_current(s->owner);
    rc = rt->capturing(stream, &s->capturing);
    rt->swap_current(previous);
    if (rc) {
        snprintf(why, whylen, "%s cannot tell whether stream %p is capturing (error %d)", rt->name,
                 stream, rc);
        return -1;
    }
    return 0;
}

/* The device of a GPU kind, or NULL for any other kind. */
static struct gpu_device *gpu_stream_device_of(const struct kind_ops *kind)
{
    for (int i = 0; kind && i < GPU_DEVICES_MAX; i++)
        if (gpu_devices[i].kind == kind)
            return &gpu_devices[i];
    return NULL;
}

int kind_stream_device(const struct kind_ops *kind, const struct kind_stream *s, int *matches,
                       char *device, size_t len)
{
    struct gpu_device *dev = gpu_stream_device_of(kind);
    *matches = dev && dev->rt->owner(dev) == s->owner;
    if (dev)
        snprintf(device, len, "%s device %d", dev->rt->name, dev->ordinal);
    return dev != NULL;
}

int kind_stream_reaches(const void *ptr)
{
    const struct gpu_runtime *rt = gpu_runtime_in_use();
    return rt && rt->memory(ptr) != GPU_MEMORY_PAGEABLE;
}

/* Runs CALL with the stream's owner current; its result. */
#define GPU_ON_STREAM(rt, s, CALL)                                                                 \
    ({                                                                                             \
        uintptr_t previous_ = (rt)->swap_current((s)->owner);                                      \
        int rc_ = (CALL);                                                                          \
        (rt)->swap_current(previous_);                                                             \
        rc_;                                                                                       \
    })

int kind_stream_copy(const struct kind_stream *s, void *dst, const void *src, size_t len)
{
    const struct gpu_runtime *rt = gpu_runtime_in_use();
    return GPU_ON_STREAM(rt, s, rt->copy_async(dst, src, len, s->stream));
}

int kind_stream_write(const struct kind_stream *s, volatile uint64_t *word, uint64_t value)
{
    const struct gpu_runtime *rt = gpu_runtime_in_use();
    return GPU_ON_STREAM(rt, s, rt->write_value(s->stream, (void *)(uintptr_t)word, value));
}

int kind_stream_wait_value(const struct kind_stream *s, const volatile uint64_t *word,
                           uint64_t value, int equal)
{
    const struct gpu_runtime *rt = gpu_runtime_in_use();
    return GPU_ON_STREAM(rt, s,
                         rt->wait_value(s->stream, (const void *)(uintptr_t)word, value, equal));
}

int kind_stream_wait_kernel(const struct kind_stream *s, const struct kind_ops *kind,
                            const uint64_t *word, int cmp, uint64_t value)
{
    struct gpu_device *dev = gpu_stream_device_of(kind);
    if (!dev || !dev->rt->wait_kernel)
        return KIND_STREAM_NO_KERNEL;
    return GPU_ON_STREAM(dev->rt, s, dev->rt->wait_kernel(dev, s->stream, word, cmp, value));
}

int kind_stream_can_atomic(const struct kind_ops *kind, const void *word)
{
    struct gpu_device *dev = gpu_stream_device_of(kind);
    return dev && dev->rt->atomic_async && gpu_atomic_reaches(dev, word);
}

int kind_stream_atomic(const struct kind_stream *s, const struct kind_ops *kind, uint64_t *word,
                       enum transport_amo op, uint64_t value)
{
    struct gpu_device *dev = gpu_stream_device_of(kind);
    return GPU_ON_STREAM(dev->rt, s, dev->rt->atomic_async(dev, s->stream, word, op, value));
}

void kind_stream_relax(void)
{
    const struct gpu_runtime *rt = gpu_runtime_in_use();
    if (rt)
        rt->capture_relax();
}
