/* SPDX-License-Identifier: BSD-3-Clause */
/* Work on a stream of the program's, for the on-stream routines (src/stream.c): copies, writes
 * of and waits for words, and kernels, in the stream's order, through the GPU runtime the PE's
 * GPU kinds use (gpu_stream.c; without one, stream_none.c refuses every stream). */
#ifndef STRATA_KIND_STREAM_H
#define STRATA_KIND_STREAM_H

#include "kind.h"

#include <stddef.h>
#include <stdint.h>

/* A program's stream, as the runtime knows it. */
struct kind_stream {
    void *stream;    /* NULL: the legacy default stream of the calling thread's context */
    uintptr_t owner; /* what its work runs in: the CUDA context, the HIP device + 1 */
    int capturing;   /* being captured into a graph: its work runs when the graph is launched */
};

/* Resolves stream; 0, or -1 with the reason in why (no GPU runtime is in use, the stream is not
 * a live one of the runtime). */
int kind_stream_open(void *stream, struct kind_stream *s, char *why, size_t whylen);
/* The runtime's name ("CUDA"), for messages; "GPU" where none is in use. */
const char *kind_stream_runtime(void);
/* Whether kind is the kind of a GPU device of the runtime: then 1, with whether s runs in that
 * device's context (*matches) and the device named in device ("CUDA device 1"). 0 for other
 * kinds (host memory, the test device), which a stream may order all the same. */
int kind_stream_device(const struct kind_ops *kind, const struct kind_stream *s, int *matches,
                       char *device, size_t len);
/* Whether a copy on a stream reads or writes ptr when the stream runs it (device memory, pinned
 * host memory), not when the copy is issued (pageable memory, which the runtime stages). */
int kind_stream_reaches(const void *ptr);

/* Work on s, after its earlier work; each returns the runtime's error code (0: success). */
int kind_stream_copy(const struct kind_stream *s, void *dst, const void *src, size_t len);
int kind_stream_write(const struct kind_stream *s, volatile uint64_t *word, uint64_t value);
/* Holds s back until *word == value (equal) or >= value, as the runtime compares. */
int kind_stream_wait_value(const struct kind_stream *s, const volatile uint64_t *word,
                           uint64_t value, int equal);
/* Holds s back until *word cmp value (SHMEM_CMP_*) by a kernel of kind's device, whose memory
 * word is; KIND_STREAM_NO_KERNEL where the runtime has none. */
#define KIND_STREAM_NO_KERNEL (-1)
int kind_stream_wait_kernel(const struct kind_stream *s, const struct kind_ops *kind,
                            const uint64_t *word, int cmp, uint64_t value);
/* Whether kind_stream_atomic can update word, of kind's memory or an attached peer's. */
int kind_stream_can_atomic(const struct kind_ops *kind, const void *word);
/* An atomic op on the 8-byte word (of kind's memory or an attached peer's) by a kernel on s;
 * only where kind_stream_can_atomic says so. */
int kind_stream_atomic(const struct kind_stream *s, const struct kind_ops *kind, uint64_t *word,
                       enum transport_amo op, uint64_t value);

/* Host memory mapped for the GPU, made when the runtime was set up, where streams and the library
 * hand work over: lines of 64 bytes (their count in *lines), zeroed; NULL without a runtime. */
#define KIND_STREAM_LINE_WORDS 8
volatile uint64_t *kind_stream_words(size_t *lines);
/* The calling thread (the library's agent) may make the runtime's unsafe calls while a program
 * thread captures a stream. */
void kind_stream_relax(void);

#endif
