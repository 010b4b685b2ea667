/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA kind's kernels, written in PTX and compiled by the driver when first used (no CUDA
 * compiler at build time; the JIT runs once per device): atomics on a word (one thread, atomic with
 * respect to node peers' atomics through their IPC mappings and to the program's kernels),
 * element-wise reductions, and the scatter that applies a batch of small writes. */
#include "cuda_internal.h"

#include <pthread.h>

/* ---- PTX: atomics ---- */

/* strata_amo32/strata_amo64(word, op, value, compare, old): one thread applies op (enum
 * transport_amo) to the word and writes its previous value to old (mapped host memory). */
#define CUDA_AMO_KERNEL(BITS, TYPE)                                                                \
    ".visible .entry strata_amo" #BITS "(.param .u64 word, .param .u32 op, .param ." TYPE          \
    " value, .param ." TYPE " compare, .param .u64 old)\n"                                         \
    "{\n"                                                                                          \
    "  .reg .u64 %a, %o;\n"                                                                        \
    "  .reg .u32 %op;\n"                                                                           \
    "  .reg ." TYPE " %v, %c, %r;\n"                                                               \
    "  .reg .pred %p;\n"                                                                           \
    "  ld.param.u64 %a, [word];\n"                                                                 \
    "  ld.param.u32 %op, [op];\n"                                                                  \
    "  ld.param." TYPE " %v, [value];\n"                                                           \
    "  ld.param." TYPE " %c, [compare];\n"                                                         \
    "  ld.param.u64 %o, [old];\n"                                                                  \
    "  setp.eq.u32 %p, %op, 0;\n"                                                                  \
    "  @%p atom.sys.add.u" #BITS " %r, [%a], %v;\n"                                                \
    "  setp.eq.u32 %p, %op, 1;\n"                                                                  \
    "  @%p atom.sys.and.b" #BITS " %r, [%a], %v;\n"                                                \
    "  setp.eq.u32 %p, %op, 2;\n"                                                                  \
    "  @%p atom.sys.or.b" #BITS " %r, [%a], %v;\n"                                                 \
    "  setp.eq.u32 %p, %op, 3;\n"                                                                  \
    "  @%p atom.sys.xor.b" #BITS " %r, [%a], %v;\n"                                                \
    "  setp.eq.u32 %p, %op, 4;\n"                                                                  \
    "  @%p atom.sys.exch.b" #BITS " %r, [%a], %v;\n"                                               \
    "  setp.eq.u32 %p, %op, 5;\n"                                                                  \
    "  @%p atom.sys.cas.b" #BITS " %r, [%a], %c, %v;\n"                                            \
    "  st.volatile.u" #BITS " [%o], %r;\n"                                                         \
    "  ret;\n"                                                                                     \
    "}\n"

_Static_assert(TRANSPORT_AMO_ADD == 0 && TRANSPORT_AMO_AND == 1 && TRANSPORT_AMO_OR == 2 &&
                   TRANSPORT_AMO_XOR == 3 && TRANSPORT_AMO_SWAP == 4 && TRANSPORT_AMO_CSWAP == 5,
               "the PTX kernels number the operations as enum transport_amo does");

/* ---- PTX: reductions ---- */

/* strata_reduce_<op>_<type>(acc, in, n): thread i < n sets acc[i] = op(acc[i], in[i]). */
#define CUDA_REDUCE_KERNEL(NAME, INSTRUCTION, TYPE, SHIFT)                                         \
    ".visible .entry strata_reduce_" NAME "(.param .u64 acc, .param .u64 in, .param .u64 n)\n"     \
    "{\n"                                                                                          \
    "  .reg .u64 %a, %b, %n, %i, %t;\n"                                                            \
    "  .reg .u32 %x, %y, %z;\n"                                                                    \
    "  .reg ." TYPE " %v, %w;\n"                                                                   \
    "  .reg .pred %p;\n"                                                                           \
    "  ld.param.u64 %a, [acc];\n"                                                                  \
    "  ld.param.u64 %b, [in];\n"                                                                   \
    "  ld.param.u64 %n, [n];\n"                                                                    \
    "  mov.u32 %x, %ctaid.x;\n"                                                                    \
    "  mov.u32 %y, %ntid.x;\n"                                                                     \
    "  mov.u32 %z, %tid.x;\n"                                                                      \
    "  cvt.u64.u32 %t, %z;\n"                                                                      \
    "  mad.wide.u32 %i, %x, %y, %t;\n"                                                             \
    "  setp.ge.u64 %p, %i, %n;\n"                                                                  \
    "  @%p ret;\n"                                                                                 \
    "  shl.b64 %i, %i, " #SHIFT ";\n"                                                              \
    "  add.u64 %a, %a, %i;\n"                                                                      \
    "  add.u64 %b, %b, %i;\n"                                                                      \
    "  ld." TYPE " %v, [%a];\n"                                                                    \
    "  ld." TYPE " %w, [%b];\n"                                                                    \
    "  " INSTRUCTION "." TYPE " %v, %v, %w;\n"                                                     \
    "  st." TYPE " [%a], %v;\n"                                                                    \
    "  ret;\n"                                                                                     \
    "}\n"

/* PTX of each reduction of kind.h: kernel name, instruction, PTX type, log2 of the size. */
#define CUDA_REDUCE_PTX_sum "add"
#define CUDA_REDUCE_PTX_min "min"
#define CUDA_REDUCE_PTX_max "max"
#define CUDA_REDUCE_TYPE_int "s32", 2
#define CUDA_REDUCE_TYPE_long "s64", 3
#define CUDA_REDUCE_TYPE_float "f32", 2
#define CUDA_REDUCE_TYPE_double "f64", 3
#define CUDA_REDUCE_EXPAND(...) CUDA_REDUCE_KERNEL(__VA_ARGS__)
#define CUDA_REDUCE_SOURCE(NAME, OP, TYPE)                                                         \
    CUDA_REDUCE_EXPAND(#OP "_" #TYPE, CUDA_REDUCE_PTX_##OP, CUDA_REDUCE_TYPE_##TYPE)
#define CUDA_REDUCE_NAME(NAME, OP, TYPE) [KIND_REDUCE_##NAME] = "strata_reduce_" #OP "_" #TYPE,

static const char *const cuda_reduce_names[KIND_REDUCTIONS_COUNT] = {
    KIND_REDUCTIONS(CUDA_REDUCE_NAME)};

/* ---- PTX: the batch scatter ---- */

/* strata_scatter(entries, data, count): entry i (struct gpu_batch_entry: dst, offset, len)
 * copies len bytes at data + offset (wrapping: GPU memory elsewhere) to dst, by words when dst,
 * source and len allow, else by bytes; the threads of the grid share the entries. */
#define CUDA_SCATTER_COPY(LABEL, SIZE, TYPE, REG)                                                  \
    LABEL ":\n"                                                                                    \
          "  setp.ge.u64 %q, %j, %len;\n"                                                          \
          "  @%q bra NEXT;\n"                                                                      \
          "  add.u64 %s, %src, %j;\n"                                                              \
          "  add.u64 %d, %dst, %j;\n"                                                              \
          "  ld." TYPE " " REG ", [%s];\n"                                                         \
          "  st." TYPE " [%d], " REG ";\n"                                                         \
          "  add.u64 %j, %j, " #SIZE ";\n"                                                         \
          "  bra " LABEL ";\n"

#define CUDA_SCATTER_PTX                                                                           \
    ".visible .entry strata_scatter(.param .u64 entries, .param .u64 data, .param .u32 count)\n"   \
    "{\n"                                                                                          \
    "  .reg .u64 %e, %data, %dst, %off, %len, %src, %j, %s, %d, %word, %misaligned;\n"             \
    "  .reg .u32 %n, %i, %step, %x, %y;\n"                                                         \
    "  .reg .u16 %byte;\n"                                                                         \
    "  .reg .pred %p, %q;\n"                                                                       \
    "  ld.param.u32 %n, [count];\n"                                                                \
    "  ld.param.u64 %data, [data];\n"                                                              \
    "  mov.u32 %x, %ctaid.x;\n"                                                                    \
    "  mov.u32 %y, %ntid.x;\n"                                                                     \
    "  mov.u32 %i, %tid.x;\n"                                                                      \
    "  mad.lo.u32 %i, %x, %y, %i;\n"                                                               \
    "  mov.u32 %step, %nctaid.x;\n"                                                                \
    "  mul.lo.u32 %step, %step, %y;\n"                                                             \
    "LOOP:\n"                                                                                      \
    "  setp.ge.u32 %p, %i, %n;\n"                                                                  \
    "  @%p bra DONE;\n"                                                                            \
    "  ld.param.u64 %e, [entries];\n"                                                              \
    "  mul.wide.u32 %j, %i, 24;\n"                                                                 \
    "  add.u64 %e, %e, %j;\n"                                                                      \
    "  ld.u64 %dst, [%e];\n"                                                                       \
    "  ld.u64 %off, [%e+8];\n"                                                                     \
    "  ld.u64 %len, [%e+16];\n"                                                                    \
    "  add.u64 %src, %data, %off;\n"                                                               \
    "  mov.u64 %j, 0;\n"                                                                           \
    "  or.b64 %misaligned, %dst, %len;\n"                                                          \
    "  or.b64 %misaligned, %misaligned, %src;\n"                                                   \
    "  and.b64 %misaligned, %misaligned, 7;\n"                                                     \
    "  setp.ne.u64 %q, %misaligned, 0;\n"                                                          \
    "  @%q bra BYTES;\n" CUDA_SCATTER_COPY("WORDS", 8, "u64", "%word")                             \
        CUDA_SCATTER_COPY("BYTES", 1, "u8", "%byte") "NEXT:\n"                                     \
                                                     "  add.u32 %i, %i, %step;\n"                  \
                                                     "  bra LOOP;\n"                               \
                                                     "DONE:\n"                                     \
                                                     "  ret;\n"                                    \
                                                     "}\n"

/* ---- PTX: a wait on a stream ---- */

/* strata_wait(word, cmp, value): one thread reads the word until it compares to value as cmp
 * (SHMEM_CMP_EQ .. SHMEM_CMP_LE, unsigned) says. */
#define CUDA_WAIT_TEST(CMP, SETP)                                                                  \
    "  setp.eq.u32 %q, %c, " #CMP ";\n"                                                            \
    "  setp." SETP ".u64 %p, %w, %v;\n"                                                            \
    "  and.pred %r, %q, %p;\n"                                                                     \
    "  @%r bra DONE;\n"
#define CUDA_WAIT_PTX                                                                              \
    ".visible .entry strata_wait(.param .u64 word, .param .u32 cmp, .param .u64 value)\n"          \
    "{\n"                                                                                          \
    "  .reg .u64 %a, %v, %w;\n"                                                                    \
    "  .reg .u32 %c;\n"                                                                            \
    "  .reg .pred %p, %q, %r;\n"                                                                   \
    "  ld.param.u64 %a, [word];\n"                                                                 \
    "  ld.param.u32 %c, [cmp];\n"                                                                  \
    "  ld.param.u64 %v, [value];\n"                                                                \
    "LOOP:\n"                                                                                      \
    "  ld.volatile.u64 %w, [%a];\n" CUDA_WAIT_TEST(1, "eq") CUDA_WAIT_TEST(2, "ne")                \
        CUDA_WAIT_TEST(3, "gt") CUDA_WAIT_TEST(4, "ge") CUDA_WAIT_TEST(5, "lt")                    \
            CUDA_WAIT_TEST(6, "le") "  bra LOOP;\n"                                                \
                                    "DONE:\n"                                                      \
                                    "  ret;\n"                                                     \
                                    "}\n"

/* ---- Loading ---- */

static const char cuda_ptx[] =
    ".version 6.0\n"
    ".target sm_60\n"
    ".address_size 64\n" CUDA_AMO_KERNEL(32, "b32") CUDA_AMO_KERNEL(64, "b64")
        KIND_REDUCTIONS(CUDA_REDUCE_SOURCE) CUDA_SCATTER_PTX CUDA_WAIT_PTX;

static pthread_mutex_t cuda_kernels_lock = PTHREAD_MUTEX_INITIALIZER;

static CUfunction cuda_kernel(CUmodule module, const char *name)
{
    CUfunction f;
    cuda_check(cuda.cuModuleGetFunction(&f, module, name), "cuModuleGetFunction");
    return f;
}

/* Loads the kernels into dev's context, entered, on its first use. */
static struct cuda_kernels *cuda_kernels_load(struct gpu_device *dev)
{
    struct cuda_kernels *k = &cuda_of(dev)->kernels;
    if (__atomic_load_n(&k->loaded, __ATOMIC_ACQUIRE))
        return k;
    pthread_mutex_lock(&cuda_kernels_lock);
    if (!k->loaded) {
        CUmodule module;
        void *old;
        cuda_check(cuda.cuModuleLoadData(&module, cuda_ptx), "cuModuleLoadData");
        k->amo[0] = cuda_kernel(module, "strata_amo32");
        k->amo[1] = cuda_kernel(module, "strata_amo64");
        for (int r = KIND_REDUCE_NONE + 1; r < KIND_REDUCTIONS_COUNT; r++)
            k->reduce[r] = cuda_kernel(module, cuda_reduce_names[r]);
        k->scatter = cuda_kernel(module, "strata_scatter");
        k->wait = cuda_kernel(module, "strata_wait");
        cuda_check(cuda.cuMemHostAlloc(&old, 2 * sizeof(uint64_t), CU_MEMHOSTALLOC_DEVICEMAP),
                   "cuMemHostAlloc");
        k->amo_old = old;
        k->amo_sink = (uint64_t *)old + 1;
        __atomic_store_n(&k->loaded, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&cuda_kernels_lock);
    return k;
}

/* ---- Launches ---- */

/* One atomic at a time per process: each device's atomics share its result word. */
static pthread_mutex_t cuda_amo_lock = PTHREAD_MUTEX_INITIALIZER;

uint64_t cuda_atomic(struct gpu_device *dev, void *word, enum transport_amo op, uint64_t value,
                     uint64_t compare, size_t size)
{
    pthread_mutex_lock(&cuda_amo_lock);
    GPU_ENTERED(dev);
    struct cuda_kernels *k = cuda_kernels_load(dev);
    gpu_batch_flush(dev, 0);
    CUdeviceptr address = cuda_address(word), old = cuda_address((const void *)k->amo_old);
    unsigned code = (unsigned)op;
    uint32_t value32 = (uint32_t)value, compare32 = (uint32_t)compare;
    void *args[] = {&address, &code, size == 4 ? (void *)&value32 : (void *)&value,
                    size == 4 ? (void *)&compare32 : (void *)&compare, &old};
    CUstream stream = gpu_stream(dev, 0);
    *k->amo_old = 0;
    cuda_check(cuda.cuLaunchKernel(k->amo[size == 8], 1, 1, 1, 1, 1, 1, 0, stream, args, NULL),
               "cuLaunchKernel (atomic)");
    cuda_check(cuda.cuStreamSynchronize(stream), "cuStreamSynchronize");
    uint64_t result = size == 4 ? (uint32_t)*k->amo_old : *k->amo_old;
    pthread_mutex_unlock(&cuda_amo_lock);
    return result;
}

#define CUDA_REDUCE_BLOCK 256

void cuda_reduce(struct gpu_device *dev, void *acc, const void *in, size_t count,
                 enum kind_reduction what)
{
    GPU_ENTERED(dev);
    struct cuda_kernels *k = cuda_kernels_load(dev);
    gpu_batch_flush(dev, 0);
    CUdeviceptr a = cuda_address(acc), b = cuda_address(in);
    uint64_t n = count;
    void *args[] = {&a, &b, &n};
    if (count)
        cuda_check(
            cuda.cuLaunchKernel(k->reduce[what],
                                (unsigned)((count + CUDA_REDUCE_BLOCK - 1) / CUDA_REDUCE_BLOCK), 1,
                                1, CUDA_REDUCE_BLOCK, 1, 1, 0, gpu_stream(dev, 0), args, NULL),
            "cuLaunchKernel (reduction)");
}

/* A buffer per thread and device, grown as needed and kept: collectives call this on every
 * reduction. */
void *cuda_scratch(struct gpu_device *dev, size_t bytes)
{
    static __thread struct {
        CUdeviceptr buffer;
        size_t size;
    } scratch[GPU_DEVICES_MAX];
    CUdeviceptr *buffer = &scratch[dev->slot].buffer;
    size_t *size = &scratch[dev->slot].size;
    if (bytes > *size) {
        GPU_ENTERED(dev);
        gpu_batch_sync(dev, 0); /* the old buffer may still be read (reductions are queue 0's) */
        if (*buffer)
            cuda_check(cuda.cuMemFree(*buffer), "cuMemFree");
        *buffer = 0;
        *size = 0;
        cuda_check(cuda.cuMemAlloc(buffer, bytes), "cuMemAlloc (reduction scratch)");
        *size = bytes;
    }
    return (void *)(uintptr_t)*buffer;
}

#define CUDA_SCATTER_BLOCK 128

/* Called with dev entered (a batch is issued from within a kind operation). */
void cuda_scatter(struct gpu_device *dev, const struct gpu_batch_entry *entries, const char *data,
                  unsigned count, void *stream)
{
    struct cuda_kernels *k = cuda_kernels_load(dev);
    CUdeviceptr e = cuda_address(entries), d = cuda_address(data);
    void *args[] = {&e, &d, &count};
    unsigned blocks = (count + CUDA_SCATTER_BLOCK - 1) / CUDA_SCATTER_BLOCK;
    cuda_check(cuda.cuLaunchKernel(k->scatter, blocks, 1, 1, CUDA_SCATTER_BLOCK, 1, 1, 0,
                                   (CUstream)stream, args, NULL),
               "cuLaunchKernel (batch)");
}

/* ---- On a stream of the program's, in its context: launches only, nothing waited for ---- */

void cuda_kernels_prepare(struct gpu_device *dev)
{
    cuda_kernels_load(dev);
}

int cuda_wait_kernel(struct gpu_device *dev, void *stream, const void *word, int cmp,
                     uint64_t value)
{
    struct cuda_kernels *k = cuda_kernels_load(dev);
    CUdeviceptr address = cuda_address(word);
    unsigned code = (unsigned)cmp;
    void *args[] = {&address, &code, &value};
    return cuda.cuLaunchKernel(k->wait, 1, 1, 1, 1, 1, 1, 0, (CUstream)stream, args, NULL);
}

int cuda_atomic_async(struct gpu_device *dev, void *stream, void *word, enum transport_amo op,
                      uint64_t value)
{
    struct cuda_kernels *k = cuda_kernels_load(dev);
    CUdeviceptr address = cuda_address(word), old = cuda_address(k->amo_sink);
    unsigned code = (unsigned)op;
    uint64_t compare = 0;
    void *args[] = {&address, &code, &value, &compare, &old};
    return cuda.cuLaunchKernel(k->amo[1], 1, 1, 1, 1, 1, 1, 0, (CUstream)stream, args, NULL);
}
