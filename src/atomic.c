/* SPDX-License-Identifier: BSD-3-Clause */
/* Atomic memory operations (1.6 section 9.7): every operation of the standard, extended and
 * bitwise AMO tables, their context, non-blocking and deprecated forms, generated from the tables
 * in shmem.h. Values travel as raw bits of the type's width, so float and double share the integer
 * paths for fetch, set and swap. */
#include "amo.h"

#include <string.h>

#define STRINGIFY(x) STRINGIFY_(x)
#define STRINGIFY_(x) #x

static inline uint64_t amo_bits(const void *value, size_t size)
{
    uint64_t bits = 0;
    memcpy(&bits, value, size);
    return bits;
}

#define BITS(T, v) amo_bits(&(T){v}, sizeof(T))
#define FROM_BITS(T, bits)                                                                         \
    ({                                                                                             \
        uint64_t b_ = (bits);                                                                      \
        T r_;                                                                                      \
        memcpy(&r_, &b_, sizeof(T));                                                               \
        r_;                                                                                        \
    })

/* The transport operation behind each routine: fetch is an add of zero, set a swap whose old
 * value is dropped, inc an add of one. */
#define AMO_CODE_fetch TRANSPORT_AMO_ADD
#define AMO_CODE_fetch_nbi TRANSPORT_AMO_ADD
#define AMO_CODE_set TRANSPORT_AMO_SWAP
#define AMO_CODE_swap TRANSPORT_AMO_SWAP
#define AMO_CODE_swap_nbi TRANSPORT_AMO_SWAP
#define AMO_CODE_compare_swap TRANSPORT_AMO_CSWAP
#define AMO_CODE_compare_swap_nbi TRANSPORT_AMO_CSWAP
#define AMO_CODE_fetch_inc TRANSPORT_AMO_ADD
#define AMO_CODE_fetch_inc_nbi TRANSPORT_AMO_ADD
#define AMO_CODE_inc TRANSPORT_AMO_ADD
#define AMO_CODE_fetch_add TRANSPORT_AMO_ADD
#define AMO_CODE_fetch_add_nbi TRANSPORT_AMO_ADD
#define AMO_CODE_add TRANSPORT_AMO_ADD
#define AMO_CODE_fetch_and TRANSPORT_AMO_AND
#define AMO_CODE_fetch_and_nbi TRANSPORT_AMO_AND
#define AMO_CODE_and TRANSPORT_AMO_AND
#define AMO_CODE_fetch_or TRANSPORT_AMO_OR
#define AMO_CODE_fetch_or_nbi TRANSPORT_AMO_OR
#define AMO_CODE_or TRANSPORT_AMO_OR
#define AMO_CODE_fetch_xor TRANSPORT_AMO_XOR
#define AMO_CODE_fetch_xor_nbi TRANSPORT_AMO_XOR
#define AMO_CODE_xor TRANSPORT_AMO_XOR

#define AMO(ctx, FN, OP, T, dest, value, cond, fetch)                                              \
    amo_op(ctx, STRINGIFY(FN), AMO_CODE_##OP, (void *)(dest), sizeof(T), value, cond, fetch, pe)

/* Both forms of a routine around one BODY that names its context ctx. The plain form does not
 * call the context form: an exported routine may be interposed, so that call would go through the
 * PLT and never be inlined, and the default context's mapped case is the one that must be short. */
#define UNPAREN(...) __VA_ARGS__
// clang-format off
#define AMO_FORMS(RET, FN, CTX_FN, PARAMS, ...)                                                    \
    RET CTX_FN(shmem_ctx_t ctx, UNPAREN PARAMS)                                                    \
    {                                                                                              \
        __VA_ARGS__                                                                                \
    }                                                                                              \
    RET FN(UNPAREN PARAMS)                                                                         \
    {                                                                                              \
        shmem_ctx_t ctx = AMO_PLAIN;                                                               \
        __VA_ARGS__                                                                                \
    }
// clang-format on

/* One generator per routine shape (shmem.h STRATA_AMO_SHAPE_*). The non-blocking fetching forms
 * complete at once, which the spec allows: their result is in place before the next quiet. */
#define AMO_IMPL_fetch(T, FN, CTX_FN, OP)                                                          \
    AMO_FORMS(T, FN, CTX_FN, (const T *source, int pe),                                            \
              return FROM_BITS(T, AMO(ctx, FN, OP, T, source, 0, 0, 1));)
#define AMO_IMPL_set(T, FN, CTX_FN, OP)                                                            \
    AMO_FORMS(void, FN, CTX_FN, (T * dest, T value, int pe),                                       \
              AMO(ctx, FN, OP, T, dest, BITS(T, value), 0, 0);)
#define AMO_IMPL_cswap(T, FN, CTX_FN, OP)                                                          \
    AMO_FORMS(T, FN, CTX_FN, (T * dest, T cond, T value, int pe),                                  \
              return FROM_BITS(T, AMO(ctx, FN, OP, T, dest, BITS(T, value), BITS(T, cond), 1));)
#define AMO_IMPL_fop(T, FN, CTX_FN, OP)                                                            \
    AMO_FORMS(T, FN, CTX_FN, (T * dest, T value, int pe),                                          \
              return FROM_BITS(T, AMO(ctx, FN, OP, T, dest, BITS(T, value), 0, 1));)
#define AMO_IMPL_finc(T, FN, CTX_FN, OP)                                                           \
    AMO_FORMS(T, FN, CTX_FN, (T * dest, int pe),                                                   \
              return FROM_BITS(T, AMO(ctx, FN, OP, T, dest, 1, 0, 1));)
#define AMO_IMPL_inc(T, FN, CTX_FN, OP)                                                            \
    AMO_FORMS(void, FN, CTX_FN, (T * dest, int pe), AMO(ctx, FN, OP, T, dest, 1, 0, 0);)
#define AMO_IMPL_fetch_nbi(T, FN, CTX_FN, OP)                                                      \
    AMO_FORMS(void, FN, CTX_FN, (T * fetch, const T *source, int pe),                              \
              *fetch = FROM_BITS(T, AMO(ctx, FN, OP, T, source, 0, 0, 1));)
#define AMO_IMPL_cswap_nbi(T, FN, CTX_FN, OP)                                                      \
    AMO_FORMS(void, FN, CTX_FN, (T * fetch, T * dest, T cond, T value, int pe),                    \
              *fetch = FROM_BITS(T, AMO(ctx, FN, OP, T, dest, BITS(T, value), BITS(T, cond), 1));)
#define AMO_IMPL_fop_nbi(T, FN, CTX_FN, OP)                                                        \
    AMO_FORMS(void, FN, CTX_FN, (T * fetch, T * dest, T value, int pe),                            \
              *fetch = FROM_BITS(T, AMO(ctx, FN, OP, T, dest, BITS(T, value), 0, 1));)
#define AMO_IMPL_finc_nbi(T, FN, CTX_FN, OP)                                                       \
    AMO_FORMS(void, FN, CTX_FN, (T * fetch, T * dest, int pe),                                     \
              *fetch = FROM_BITS(T, AMO(ctx, FN, OP, T, dest, 1, 0, 1));)

#define DEFINE_AMO(T, N, OP, SHAPE)                                                                \
    AMO_IMPL_##SHAPE(T, shmem_##N##_atomic_##OP, shmem_ctx_##N##_atomic_##OP, OP)
#define DEFINE_AMO_EXT(T, N, ...) STRATA_AMO_EXT_OPS(DEFINE_AMO, T, N)
#define DEFINE_AMO_STD(T, N, ...) STRATA_AMO_STD_OPS(DEFINE_AMO, T, N)
#define DEFINE_AMO_BIT(T, N, ...) STRATA_AMO_BIT_OPS(DEFINE_AMO, T, N)
STRATA_AMO_EXT_TYPES(DEFINE_AMO_EXT)
STRATA_AMO_STD_TYPES(DEFINE_AMO_STD)
STRATA_AMO_BIT_TYPES(DEFINE_AMO_BIT)

/* Deprecated names: each forwards to its 1.6 routine. */
#define DEFINE_AMO_DEPRECATED(T, N, ...)                                                           \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe)                                          \
    {                                                                                              \
        return shmem_##N##_atomic_compare_swap(dest, cond, value, pe);                             \
    }                                                                                              \
    T shmem_##N##_finc(T *dest, int pe)                                                            \
    {                                                                                              \
        return shmem_##N##_atomic_fetch_inc(dest, pe);                                             \
    }                                                                                              \
    void shmem_##N##_inc(T *dest, int pe)                                                          \
    {                                                                                              \
        shmem_##N##_atomic_inc(dest, pe);                                                          \
    }                                                                                              \
    T shmem_##N##_fadd(T *dest, T value, int pe)                                                   \
    {                                                                                              \
        return shmem_##N##_atomic_fetch_add(dest, value, pe);                                      \
    }                                                                                              \
    void shmem_##N##_add(T *dest, T value, int pe)                                                 \
    {                                                                                              \
        shmem_##N##_atomic_add(dest, value, pe);                                                   \
    }
#define DEFINE_AMO_DEPRECATED_EXT(T, N, ...)                                                       \
    T shmem_##N##_swap(T *dest, T value, int pe)                                                   \
    {                                                                                              \
        return shmem_##N##_atomic_swap(dest, value, pe);                                           \
    }                                                                                              \
    T shmem_##N##_fetch(const T *source, int pe)                                                   \
    {                                                                                              \
        return shmem_##N##_atomic_fetch(source, pe);                                               \
    }                                                                                              \
    void shmem_##N##_set(T *dest, T value, int pe)                                                 \
    {                                                                                              \
        shmem_##N##_atomic_set(dest, value, pe);                                                   \
    }
STRATA_AMO_DEPRECATED_TYPES(DEFINE_AMO_DEPRECATED)
STRATA_AMO_DEPRECATED_EXT_TYPES(DEFINE_AMO_DEPRECATED_EXT)
