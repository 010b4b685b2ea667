/* SPDX-License-Identifier: BSD-3-Clause */
/* Strata extensions beyond OpenSHMEM 1.6. The memory-spaces API lives in shmem.h itself, as the
 * spaces proposal specifies. */
#ifndef SHMEMX_H
#define SHMEMX_H

#include <shmem.h>

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* A testing aid: a buffer of the test device kind that belongs to no space, as a program's own
 * cudaMalloc'd buffer would be (its addresses fault on load and store; RMA and collectives take
 * it as a local buffer and copy it through the kind). NULL when no test device stands in on this
 * PE (SHMEM_TEST_DEVICE_PES) or size is 0. */
void *shmemx_test_device_malloc(size_t size);
void shmemx_test_device_free(void *ptr);

/* ---- Memory traits: which memory a space lives in ----
 * A space's configuration says which device type holds it; its traits say which memory of that
 * device: the page size, the NUMA domain, the kind of memory (HBM, far memory, or the best by a
 * measure), which of the PE's devices. Fields are read only where mask has their bit set; the
 * struct grows only by fields appended with new bits, so a program built against an older
 * header keeps working (docs/spaces.md). */
#define SHMEMX_SPACE_TRAIT_PAGE_SIZE (1ull << 0)
#define SHMEMX_SPACE_TRAIT_ALLOC_POLICY (1ull << 1)
#define SHMEMX_SPACE_TRAIT_NUMA_DOMAIN (1ull << 2)
#define SHMEMX_SPACE_TRAIT_MEMORY (1ull << 3)
#define SHMEMX_SPACE_TRAIT_DEVICE_INDEX (1ull << 4)
/* Every trait this header knows: what shmemx_space_get_traits fills when mask asks for all. */
#define SHMEMX_SPACE_TRAIT_ALL                                                                     \
    (SHMEMX_SPACE_TRAIT_PAGE_SIZE | SHMEMX_SPACE_TRAIT_ALLOC_POLICY |                              \
     SHMEMX_SPACE_TRAIT_NUMA_DOMAIN | SHMEMX_SPACE_TRAIT_MEMORY | SHMEMX_SPACE_TRAIT_DEVICE_INDEX)

/* page_size: transparent huge pages (the kernel's choice, never a bound page size). */
#define SHMEMX_SPACE_PAGE_TRANSPARENT ((size_t)-1)

enum {
    SHMEMX_SPACE_POLICY_BIND = 1,      /* every trait holds; PEs where one cannot are no members */
    SHMEMX_SPACE_POLICY_PREFERRED = 2, /* traits where they can hold, else a fall-back */
};

enum {
    SHMEMX_SPACE_NUMA_LOCAL = -1,      /* the NUMA node(s) near the PE's CPUs */
    SHMEMX_SPACE_NUMA_INTERLEAVE = -2, /* pages spread over the nodes (of the memory asked for) */
};

enum {
    SHMEMX_SPACE_MEMORY_DRAM = 1,
    SHMEMX_SPACE_MEMORY_HBM = 2,
    SHMEMX_SPACE_MEMORY_FAR = 3, /* CXL, NVM: memory with no CPU of its own */
    SHMEMX_SPACE_MEMORY_HIGHEST_BANDWIDTH = 4,
    SHMEMX_SPACE_MEMORY_LOWEST_LATENCY = 5,
    SHMEMX_SPACE_MEMORY_HIGHEST_CAPACITY = 6,
};

typedef struct {
    uint64_t mask;    /* which fields below are set: SHMEMX_SPACE_TRAIT_* bits */
    size_t page_size; /* bytes (4096, 2 MiB, 1 GiB ...) or SHMEMX_SPACE_PAGE_TRANSPARENT */
    int alloc_policy; /* SHMEMX_SPACE_POLICY_* (unset: BIND) */
    int numa_domain;  /* an OS NUMA node index, or SHMEMX_SPACE_NUMA_LOCAL, _INTERLEAVE */
    int memory;       /* SHMEMX_SPACE_MEMORY_* */
    int device_index; /* which of the PE's devices of the type, 0 .. n-1 */
} shmemx_space_traits_t;

/* shmem_space_create with traits (traits NULL or mask 0: the same as shmem_space_create). */
int shmemx_space_create_traits(const shmem_space_config_t *config,
                               const shmemx_space_traits_t *traits, shmem_space_t *space,
                               shmem_team_t *team);
/* What this PE's part of the space got: the fields whose bits traits->mask holds on entry
 * (SHMEMX_SPACE_TRAIT_ALL: every one), mask then saying which were filled. */
int shmemx_space_get_traits(shmem_space_t space, shmemx_space_traits_t *traits);
/* shmem_align for a space: collective over the space's team. */
void *shmemx_space_align(shmem_space_t space, size_t alignment, size_t size);

/* ---- Work in a GPU stream's order (docs/gpu.md) ----
 * Each routine takes the arguments of its host-ordered routine and a stream (a CUstream or
 * cudaStream_t for CUDA spaces, a hipStream_t for HIP spaces; NULL: the legacy default stream of
 * the calling thread's context), returns once its work is enqueued, and runs when the stream
 * reaches it, after the stream's earlier work and before its later work. The stream must be of
 * the device and context of the GPU space it touches; a host-memory space takes any stream of the
 * runtime in use. Every routine may be captured into a graph (CUDA, HIP). */
#define STRATA_DECL_STREAM_RMA(T, N, ...)                                                          \
    void shmemx_##N##_put_on_stream(T *dest, const T *source, size_t nelems, int pe,               \
                                    void *stream);                                                 \
    void shmemx_##N##_put_nbi_on_stream(T *dest, const T *source, size_t nelems, int pe,           \
                                        void *stream);                                             \
    void shmemx_##N##_get_on_stream(T *dest, const T *source, size_t nelems, int pe,               \
                                    void *stream);                                                 \
    void shmemx_##N##_get_nbi_on_stream(T *dest, const T *source, size_t nelems, int pe,           \
                                        void *stream);
STRATA_RMA_TYPES(STRATA_DECL_STREAM_RMA, _)
#undef STRATA_DECL_STREAM_RMA
void shmemx_putmem_on_stream(void *dest, const void *source, size_t nelems, int pe, void *stream);
void shmemx_putmem_nbi_on_stream(void *dest, const void *source, size_t nelems, int pe,
                                 void *stream);
void shmemx_getmem_on_stream(void *dest, const void *source, size_t nelems, int pe, void *stream);
void shmemx_getmem_nbi_on_stream(void *dest, const void *source, size_t nelems, int pe,
                                 void *stream);
void shmemx_putmem_signal_on_stream(void *dest, const void *source, size_t nelems,
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                    void *stream);
void shmemx_putmem_signal_nbi_on_stream(void *dest, const void *source, size_t nelems,
                                        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                        void *stream);
void shmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe,
                                void *stream);
void shmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value,
                                        void *stream);
/* The stream's later work sees every earlier on-stream operation complete at its target. */
void shmemx_quiet_on_stream(void *stream);
void shmemx_barrier_all_on_stream(void *stream);
int shmemx_barrier_on_stream(shmem_team_t team, void *stream);
void shmemx_sync_all_on_stream(void *stream);
int shmemx_team_sync_on_stream(shmem_team_t team, void *stream);
int shmemx_broadcastmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems,
                                  int PE_root, void *stream);
int shmemx_fcollectmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems,
                                 void *stream);
int shmemx_alltoallmem_on_stream(shmem_team_t team, void *dest, const void *source, size_t nelems,
                                 void *stream);
#define STRATA_DECL_STREAM_REDUCE(T, N, OP)                                                        \
    int shmemx_##N##_##OP##_reduce_on_stream(shmem_team_t team, T *dest, const T *source,          \
                                             size_t nreduce, void *stream);
#define STRATA_DECL_STREAM_BITWISE(T, N, ...)                                                      \
    STRATA_DECL_STREAM_REDUCE(T, N, and)                                                           \
    STRATA_DECL_STREAM_REDUCE(T, N, or) STRATA_DECL_STREAM_REDUCE(T, N, xor)
#define STRATA_DECL_STREAM_MINMAX(T, N, ...)                                                       \
    STRATA_DECL_STREAM_REDUCE(T, N, max) STRATA_DECL_STREAM_REDUCE(T, N, min)
#define STRATA_DECL_STREAM_SUM(T, N, ...)                                                          \
    STRATA_DECL_STREAM_REDUCE(T, N, sum) STRATA_DECL_STREAM_REDUCE(T, N, prod)
STRATA_REDUCE_BITWISE_TYPES(STRATA_DECL_STREAM_BITWISE, _)
STRATA_REDUCE_MINMAX_TYPES(STRATA_DECL_STREAM_MINMAX, _)
STRATA_REDUCE_SUM_TYPES(STRATA_DECL_STREAM_SUM, _)
#undef STRATA_DECL_STREAM_REDUCE
#undef STRATA_DECL_STREAM_BITWISE
#undef STRATA_DECL_STREAM_MINMAX
#undef STRATA_DECL_STREAM_SUM

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif
