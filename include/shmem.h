/* SPDX-License-Identifier: BSD-3-Clause */
/* Strata: an OpenSHMEM 1.6 library with dynamic memory spaces.
 *
 * Every typed family is declared once from a type table (X-macros), so the C API, the C11 generic
 * selections and the library's definitions cannot drift apart. */
#ifndef SHMEM_H
#define SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything this header declares is the library's API, and the only thing it exports: the
 * library is built with hidden visibility, so its internals can neither clash with nor be
 * replaced by a program's own names. */
#pragma GCC visibility push(default)

/* ---- Library constants (1.6 section 6) ---- */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 6
#define SHMEM_MAX_NAME_LEN 64
#define SHMEM_VENDOR_STRING "Strata 0.1.0"
/* Strata's release as numbers, for code that must tell implementations apart at compile time
 * (the preprocessor cannot compare strings); configure checks that they name its release. */
#define STRATA_VERSION_MAJOR 0
#define STRATA_VERSION_MINOR 1
#define STRATA_VERSION_PATCH 0
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

#define SHMEM_THREAD_SINGLE 0
#define SHMEM_THREAD_FUNNELED 1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE 3

#define SHMEM_CMP_EQ 1
#define SHMEM_CMP_NE 2
#define SHMEM_CMP_GT 3
#define SHMEM_CMP_GE 4
#define SHMEM_CMP_LT 5
#define SHMEM_CMP_LE 6
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

#define SHMEM_MALLOC_ATOMICS_REMOTE (1L << 0)
#define SHMEM_MALLOC_SIGNAL_REMOTE (1L << 1)

#define SHMEM_CTX_PRIVATE (1L << 0)
#define SHMEM_CTX_SERIALIZED (1L << 1)
#define SHMEM_CTX_NOSTORE (1L << 2)

#define SHMEM_SYNC_VALUE 0L
#define SHMEM_SYNC_SIZE 128
#define SHMEM_BARRIER_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_BCAST_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_COLLECT_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALL_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_ALLTOALLS_SYNC_SIZE SHMEM_SYNC_SIZE
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 16
#define _SHMEM_SYNC_VALUE SHMEM_SYNC_VALUE
#define _SHMEM_BARRIER_SYNC_SIZE SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_BCAST_SYNC_SIZE SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ---- Handles ---- */
typedef struct strata_team *shmem_team_t;
extern shmem_team_t SHMEM_TEAM_WORLD;
extern shmem_team_t SHMEM_TEAM_SHARED;
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
typedef struct {
    int num_contexts;
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS (1L << 0)

typedef struct strata_ctx *shmem_ctx_t;
extern shmem_ctx_t SHMEM_CTX_DEFAULT;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

/* ---- Type tables ----
 * X(TYPE, TYPENAME, ...): the trailing arguments are passed through to X. Each table of the spec
 * (standard RMA, AMO standard/extended/bitwise, point-to-point, team reductions, legacy to_all) is
 * composed from the row groups below, so a row is written once. The *_GENERIC_* tables hold only
 * rows whose TYPE is distinct in C (int64_t, size_t ... are typedefs of the base types), which is
 * what a _Generic association list may hold. */
#define STRATA_ROWS_INT(X, ...)                                                                    \
    X(int, int, __VA_ARGS__)                                                                       \
    X(long, long, __VA_ARGS__)                                                                     \
    X(long long, longlong, __VA_ARGS__)
#define STRATA_ROWS_UINT(X, ...)                                                                   \
    X(unsigned int, uint, __VA_ARGS__)                                                             \
    X(unsigned long, ulong, __VA_ARGS__)                                                           \
    X(unsigned long long, ulonglong, __VA_ARGS__)
#define STRATA_ROWS_CHAR(X, ...)                                                                   \
    X(char, char, __VA_ARGS__)                                                                     \
    X(signed char, schar, __VA_ARGS__)
#define STRATA_ROWS_FLOAT(X, ...)                                                                  \
    X(float, float, __VA_ARGS__)                                                                   \
    X(double, double, __VA_ARGS__)
#define STRATA_ROWS_INT3264(X, ...)                                                                \
    X(int32_t, int32, __VA_ARGS__)                                                                 \
    X(int64_t, int64, __VA_ARGS__)
#define STRATA_ROWS_UINT3264(X, ...)                                                               \
    X(uint32_t, uint32, __VA_ARGS__)                                                               \
    X(uint64_t, uint64, __VA_ARGS__)
#define STRATA_ROWS_INT816(X, ...)                                                                 \
    X(int8_t, int8, __VA_ARGS__)                                                                   \
    X(int16_t, int16, __VA_ARGS__)
#define STRATA_ROWS_UINT816(X, ...)                                                                \
    X(uint8_t, uint8, __VA_ARGS__)                                                                 \
    X(uint16_t, uint16, __VA_ARGS__)
#define STRATA_ROWS_SIZE(X, ...) X(size_t, size, __VA_ARGS__)
#define STRATA_ROWS_PTRDIFF(X, ...) X(ptrdiff_t, ptrdiff, __VA_ARGS__)
#define STRATA_ROWS_SHORT(X, ...) X(short, short, __VA_ARGS__)
#define STRATA_ROWS_USHORT(X, ...) X(unsigned short, ushort, __VA_ARGS__)
#define STRATA_ROWS_UCHAR(X, ...) X(unsigned char, uchar, __VA_ARGS__)
#define STRATA_ROWS_LONGDOUBLE(X, ...) X(long double, longdouble, __VA_ARGS__)
/* The complex types: C99's _Complex, which GNU C++ compilers accept as an extension
 * (__extension__ keeps -pedantic quiet about it); other C++ compilers have no complex reductions.
 */
#if !defined(__cplusplus) || defined(__GNUC__)
#ifdef __GNUC__
__extension__
#endif
    typedef double _Complex shmem_strata_complexd;
#ifdef __GNUC__
__extension__
#endif
    typedef float _Complex shmem_strata_complexf;
#define STRATA_ROWS_COMPLEX(X, ...)                                                                \
    X(shmem_strata_complexd, complexd, __VA_ARGS__)                                                \
    X(shmem_strata_complexf, complexf, __VA_ARGS__)
#else
#define STRATA_ROWS_COMPLEX(X, ...)
#endif

/* Standard RMA types (1.6 table "Standard RMA Types and Names"). */
#define STRATA_GENERIC_RMA_TYPES(X, ...)                                                           \
    STRATA_ROWS_FLOAT(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_LONGDOUBLE(X, __VA_ARGS__)                                                         \
    STRATA_ROWS_CHAR(X, __VA_ARGS__)                                                               \
    STRATA_ROWS_SHORT(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_INT(X, __VA_ARGS__)                                                                \
    STRATA_ROWS_UCHAR(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_USHORT(X, __VA_ARGS__)                                                             \
    STRATA_ROWS_UINT(X, __VA_ARGS__)
#define STRATA_RMA_TYPES(X, ...)                                                                   \
    STRATA_GENERIC_RMA_TYPES(X, __VA_ARGS__)                                                       \
    STRATA_ROWS_INT816(X, __VA_ARGS__)                                                             \
    STRATA_ROWS_INT3264(X, __VA_ARGS__)                                                            \
    STRATA_ROWS_UINT816(X, __VA_ARGS__)                                                            \
    STRATA_ROWS_UINT3264(X, __VA_ARGS__)                                                           \
    STRATA_ROWS_SIZE(X, __VA_ARGS__)                                                               \
    STRATA_ROWS_PTRDIFF(X, __VA_ARGS__)

/* AMO tables (1.6 section 9.7) and the point-to-point table (section 9.10). */
#define STRATA_AMO_STD_GENERIC_TYPES(X, ...)                                                       \
    STRATA_ROWS_INT(X, __VA_ARGS__)                                                                \
    STRATA_ROWS_UINT(X, __VA_ARGS__)
#define STRATA_AMO_STD_TYPES(X, ...)                                                               \
    STRATA_AMO_STD_GENERIC_TYPES(X, __VA_ARGS__)                                                   \
    STRATA_ROWS_INT3264(X, __VA_ARGS__)                                                            \
    STRATA_ROWS_UINT3264(X, __VA_ARGS__)                                                           \
    STRATA_ROWS_SIZE(X, __VA_ARGS__)                                                               \
    STRATA_ROWS_PTRDIFF(X, __VA_ARGS__)
#define STRATA_AMO_EXT_GENERIC_TYPES(X, ...)                                                       \
    STRATA_ROWS_FLOAT(X, __VA_ARGS__)                                                              \
    STRATA_AMO_STD_GENERIC_TYPES(X, __VA_ARGS__)
#define STRATA_AMO_EXT_TYPES(X, ...)                                                               \
    STRATA_ROWS_FLOAT(X, __VA_ARGS__)                                                              \
    STRATA_AMO_STD_TYPES(X, __VA_ARGS__)
#define STRATA_AMO_BIT_GENERIC_TYPES(X, ...)                                                       \
    STRATA_ROWS_UINT(X, __VA_ARGS__)                                                               \
    STRATA_ROWS_INT3264(X, __VA_ARGS__)
#define STRATA_AMO_BIT_TYPES(X, ...)                                                               \
    STRATA_AMO_BIT_GENERIC_TYPES(X, __VA_ARGS__)                                                   \
    STRATA_ROWS_UINT3264(X, __VA_ARGS__)
/* The deprecated AMO names exist for int, long and long long (and float, double for fetch, set
 * and swap). */
#define STRATA_AMO_DEPRECATED_TYPES(X, ...) STRATA_ROWS_INT(X, __VA_ARGS__)
#define STRATA_AMO_DEPRECATED_EXT_TYPES(X, ...)                                                    \
    STRATA_ROWS_FLOAT(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_INT(X, __VA_ARGS__)
#define STRATA_P2P_GENERIC_TYPES(X, ...)                                                           \
    STRATA_ROWS_SHORT(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_INT(X, __VA_ARGS__)                                                                \
    STRATA_ROWS_USHORT(X, __VA_ARGS__)                                                             \
    STRATA_ROWS_UINT(X, __VA_ARGS__)
#define STRATA_P2P_TYPES(X, ...)                                                                   \
    STRATA_P2P_GENERIC_TYPES(X, __VA_ARGS__)                                                       \
    STRATA_ROWS_INT3264(X, __VA_ARGS__)                                                            \
    STRATA_ROWS_UINT3264(X, __VA_ARGS__)                                                           \
    STRATA_ROWS_SIZE(X, __VA_ARGS__)                                                               \
    STRATA_ROWS_PTRDIFF(X, __VA_ARGS__)

/* Team reduction table (section 9.9.9), by the operations each row supports. */
#define STRATA_REDUCE_BITWISE_TYPES(X, ...)                                                        \
    STRATA_ROWS_UCHAR(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_USHORT(X, __VA_ARGS__)                                                             \
    STRATA_ROWS_UINT(X, __VA_ARGS__)                                                               \
    STRATA_ROWS_INT816(X, __VA_ARGS__)                                                             \
    STRATA_ROWS_INT3264(X, __VA_ARGS__)                                                            \
    STRATA_ROWS_UINT816(X, __VA_ARGS__)                                                            \
    STRATA_ROWS_UINT3264(X, __VA_ARGS__)                                                           \
    STRATA_ROWS_SIZE(X, __VA_ARGS__)
#define STRATA_REDUCE_MINMAX_TYPES(X, ...)                                                         \
    STRATA_ROWS_CHAR(X, __VA_ARGS__)                                                               \
    STRATA_ROWS_SHORT(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_INT(X, __VA_ARGS__)                                                                \
    STRATA_ROWS_PTRDIFF(X, __VA_ARGS__)                                                            \
    STRATA_REDUCE_BITWISE_TYPES(X, __VA_ARGS__)                                                    \
    STRATA_ROWS_FLOAT(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_LONGDOUBLE(X, __VA_ARGS__)
#define STRATA_REDUCE_SUM_TYPES(X, ...)                                                            \
    STRATA_REDUCE_MINMAX_TYPES(X, __VA_ARGS__)                                                     \
    STRATA_ROWS_COMPLEX(X, __VA_ARGS__)
#define STRATA_REDUCE_BITWISE_GENERIC_TYPES(X, ...)                                                \
    STRATA_ROWS_UCHAR(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_USHORT(X, __VA_ARGS__)                                                             \
    STRATA_ROWS_UINT(X, __VA_ARGS__)                                                               \
    STRATA_ROWS_INT816(X, __VA_ARGS__)                                                             \
    STRATA_ROWS_INT3264(X, __VA_ARGS__)
#define STRATA_REDUCE_MINMAX_GENERIC_TYPES(X, ...) STRATA_GENERIC_RMA_TYPES(X, __VA_ARGS__)
#define STRATA_REDUCE_SUM_GENERIC_TYPES(X, ...)                                                    \
    STRATA_GENERIC_RMA_TYPES(X, __VA_ARGS__)                                                       \
    STRATA_ROWS_COMPLEX(X, __VA_ARGS__)
/* Legacy active-set reductions (shmem_<type>_<op>_to_all). */
#define STRATA_TO_ALL_BITWISE_TYPES(X, ...)                                                        \
    STRATA_ROWS_SHORT(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_INT(X, __VA_ARGS__)
#define STRATA_TO_ALL_MINMAX_TYPES(X, ...)                                                         \
    STRATA_TO_ALL_BITWISE_TYPES(X, __VA_ARGS__)                                                    \
    STRATA_ROWS_FLOAT(X, __VA_ARGS__)                                                              \
    STRATA_ROWS_LONGDOUBLE(X, __VA_ARGS__)
#define STRATA_TO_ALL_SUM_TYPES(X, ...)                                                            \
    STRATA_TO_ALL_MINMAX_TYPES(X, __VA_ARGS__)                                                     \
    STRATA_ROWS_COMPLEX(X, __VA_ARGS__)

/* X(BITS, BYTES): the sized RMA variants shmem_put8 ... shmem_put128. */
#define STRATA_RMA_SIZES(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)

/* ---- Setup, exit and query (1.6 section 9.1) ---- */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_query_initialized(int *initialized);
void shmem_finalize(void);
int shmem_my_pe(void);
int shmem_n_pes(void);
void shmem_global_exit(int status);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
void shmem_pcontrol(int level, ...);
/* Deprecated names the spec still lists. */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);

/* ---- Teams (1.6 section 9.4) ---- */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);
void *shmem_team_ptr(shmem_team_t team, const void *dest, int pe);
int shmem_team_sync(shmem_team_t team);

/* ---- Memory spaces (Strata: the OpenSHMEM dynamic memory spaces proposal) ----
 * A space is a symmetric heap on one device type, with the team of the PEs that can reach it.
 * The default space (the heap of shmem_malloc) is one of them. */
typedef enum {
    SHMEM_DEVICE_CPU = 0, /* host memory */
    SHMEM_DEVICE_GPU,     /* this PE's GPU, of whatever vendor */
    SHMEM_DEVICE_CUDA,    /* an NVIDIA GPU through CUDA */
    SHMEM_DEVICE_HIP      /* an AMD GPU through HIP */
} shmem_device_type_t;

typedef struct {
    shmem_device_type_t device_type;
    size_t size; /* per PE, in bytes */
    int flags;   /* SHMEM_SPACE_FLAG_* */
} shmem_space_config_t;

typedef void *shmem_space_t;
typedef uint64_t shmem_space_cap_t;

#define SHMEM_SPACE_FLAG_DEFAULT 0x0000

#define SHMEM_SPACE_CAP_RMA UINT64_C(0x0001)           /* RMA to this space is supported */
#define SHMEM_SPACE_CAP_COLLECTIVES UINT64_C(0x0002)   /* collectives on this space */
#define SHMEM_SPACE_CAP_ATOMICS UINT64_C(0x0004)       /* atomics targeting this space */
#define SHMEM_SPACE_CAP_DIRECT_ACCESS UINT64_C(0x0008) /* load/store by member PEs */
#define SHMEM_SPACE_CAP_WORLD_ACCESS UINT64_C(0x0010)  /* every PE is a member */
#define SHMEM_SPACE_CAP_IDENT_ADDR UINT64_C(0x0020)    /* same numeric addresses on members */

extern shmem_space_t SHMEM_SPACE_INVALID;
extern shmem_space_t SHMEM_SPACE_DEFAULT;

int shmem_space_create(const shmem_space_config_t *config, shmem_space_t *space,
                       shmem_team_t *team);
int shmem_space_destroy(shmem_space_t space);
void *shmem_space_malloc(shmem_space_t space, size_t size);
void *shmem_space_calloc(shmem_space_t space, size_t count, size_t size);
void shmem_space_free(shmem_space_t space, void *ptr);
int shmem_space_get_team(shmem_space_t space, shmem_team_t *team);
int shmem_space_get_device_type(shmem_space_t space, shmem_device_type_t *type);
int shmem_space_get_caps(shmem_space_t space, shmem_space_cap_t *caps);
int shmem_get_space(void *ptr, shmem_space_t *space);
int shmem_team_get_space(shmem_team_t team, shmem_space_t *space);
/* Nonzero when team is a valid team handle (the proposal's examples use it). */
int shmem_team_is_valid(shmem_team_t team);

/* ---- Communication contexts (1.6 section 9.5) ---- */
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);
void shmem_ctx_destroy(shmem_ctx_t ctx);

/* ---- Sessions (1.6 section 9.9): hints about the calls that follow on a context ---- */
typedef struct {
    size_t total_ops; /* calls to RMA routines expected in the session; default SIZE_MAX */
} shmem_ctx_session_config_t;
#define SHMEM_CTX_SESSION_TOTAL_OPS (1L << 0) /* config_mask: use config->total_ops */
#define SHMEM_CTX_SESSION_BATCH (1L << 0)     /* option: the calls tolerate added latency */
void shmem_ctx_session_start(shmem_ctx_t ctx, long options,
                             const shmem_ctx_session_config_t *config, long config_mask);
void shmem_ctx_session_stop(shmem_ctx_t ctx);

/* ---- Memory management (1.6 section 9.3) ---- */
void *shmem_malloc(size_t size);
void *shmem_calloc(size_t count, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_malloc_with_hints(size_t size, long hints);
void shmem_free(void *ptr);
void *shmalloc(size_t size);
void *shmemalign(size_t alignment, size_t size);
void *shrealloc(void *ptr, size_t size);
void shfree(void *ptr);

/* ---- RMA (1.6 section 9.5) ----
 * Each STRATA_DECL_* macro declares one routine for one row of a table; the same macros, with a
 * body, define them in the library. */
#define STRATA_RMA_ROUTINES(T, N, SUFFIX)                                                          \
    void shmem_##N##_put##SUFFIX(T *dest, const T *source, size_t nelems, int pe);                 \
    void shmem_ctx_##N##_put##SUFFIX(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,     \
                                     int pe);                                                      \
    void shmem_##N##_get##SUFFIX(T *dest, const T *source, size_t nelems, int pe);                 \
    void shmem_ctx_##N##_get##SUFFIX(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,     \
                                     int pe);

#define STRATA_DECL_TYPED_RMA(T, N, ...)                                                           \
    STRATA_RMA_ROUTINES(T, N, )                                                                    \
    STRATA_RMA_ROUTINES(T, N, _nbi)                                                                \
    void shmem_##N##_p(T *dest, T value, int pe);                                                  \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe);                             \
    T shmem_##N##_g(const T *source, int pe);                                                      \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe);                                 \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,   \
                          int pe);                                                                 \
    void shmem_ctx_##N##_iput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,            \
                              ptrdiff_t sst, size_t nelems, int pe);                               \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,   \
                          int pe);                                                                 \
    void shmem_ctx_##N##_iget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,            \
                              ptrdiff_t sst, size_t nelems, int pe);                               \
    void shmem_##N##_ibput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize,   \
                           size_t nblocks, int pe);                                                \
    void shmem_ctx_##N##_ibput(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,           \
                               ptrdiff_t sst, size_t bsize, size_t nblocks, int pe);               \
    void shmem_##N##_ibget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize,   \
                           size_t nblocks, int pe);                                                \
    void shmem_ctx_##N##_ibget(shmem_ctx_t ctx, T *dest, const T *source, ptrdiff_t dst,           \
                               ptrdiff_t sst, size_t bsize, size_t nblocks, int pe);               \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,       \
                                uint64_t signal, int sig_op, int pe);                              \
    void shmem_ctx_##N##_put_signal(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,      \
                                    uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);      \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,   \
                                    uint64_t signal, int sig_op, int pe);                          \
    void shmem_ctx_##N##_put_signal_nbi(shmem_ctx_t ctx, T *dest, const T *source, size_t nelems,  \
                                        uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
STRATA_RMA_TYPES(STRATA_DECL_TYPED_RMA, _)

/* Sized and untyped variants: shmem_putSIZE / shmem_putmem and friends. NAME is the part after
 * "put" ("8", "mem"). */
#define STRATA_DECL_UNTYPED_RMA(NAME)                                                              \
    void shmem_put##NAME(void *dest, const void *source, size_t nelems, int pe);                   \
    void shmem_ctx_put##NAME(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,       \
                             int pe);                                                              \
    void shmem_get##NAME(void *dest, const void *source, size_t nelems, int pe);                   \
    void shmem_ctx_get##NAME(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems,       \
                             int pe);                                                              \
    void shmem_put##NAME##_nbi(void *dest, const void *source, size_t nelems, int pe);             \
    void shmem_ctx_put##NAME##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                                   int pe);                                                        \
    void shmem_get##NAME##_nbi(void *dest, const void *source, size_t nelems, int pe);             \
    void shmem_ctx_get##NAME##_nbi(shmem_ctx_t ctx, void *dest, const void *source, size_t nelems, \
                                   int pe);                                                        \
    void shmem_put##NAME##_signal(void *dest, const void *source, size_t nelems,                   \
                                  uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);        \
    void shmem_ctx_put##NAME##_signal(shmem_ctx_t ctx, void *dest, const void *source,             \
                                      size_t nelems, uint64_t *sig_addr, uint64_t signal,          \
                                      int sig_op, int pe);                                         \
    void shmem_put##NAME##_signal_nbi(void *dest, const void *source, size_t nelems,               \
                                      uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);    \
    void shmem_ctx_put##NAME##_signal_nbi(shmem_ctx_t ctx, void *dest, const void *source,         \
                                          size_t nelems, uint64_t *sig_addr, uint64_t signal,      \
                                          int sig_op, int pe);
#define STRATA_DECL_SIZED_RMA(BITS, BYTES)                                                         \
    STRATA_DECL_UNTYPED_RMA(BITS)                                                                  \
    void shmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,            \
                          size_t nelems, int pe);                                                  \
    void shmem_ctx_iput##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,      \
                              ptrdiff_t sst, size_t nelems, int pe);                               \
    void shmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,            \
                          size_t nelems, int pe);                                                  \
    void shmem_ctx_iget##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,      \
                              ptrdiff_t sst, size_t nelems, int pe);                               \
    void shmem_ibput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,           \
                           size_t bsize, size_t nblocks, int pe);                                  \
    void shmem_ctx_ibput##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,     \
                               ptrdiff_t sst, size_t bsize, size_t nblocks, int pe);               \
    void shmem_ibget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,           \
                           size_t bsize, size_t nblocks, int pe);                                  \
    void shmem_ctx_ibget##BITS(shmem_ctx_t ctx, void *dest, const void *source, ptrdiff_t dst,     \
                               ptrdiff_t sst, size_t bsize, size_t nblocks, int pe);
STRATA_RMA_SIZES(STRATA_DECL_SIZED_RMA)
STRATA_DECL_UNTYPED_RMA(mem)

/* ---- Signaling (1.6 section 9.8.3-9.8.5) ---- */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);
void shmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_add(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe);
void shmem_ctx_signal_set(shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe);

/* ---- Atomic memory operations (1.6 section 9.7) ----
 * Each routine shape is declared once; the tables say which types have which operation. */
#define STRATA_AMO_SHAPES(T, FN, CTX_FN, SHAPE)                                                    \
    STRATA_AMO_SHAPE_##SHAPE(T, FN) STRATA_AMO_SHAPE_CTX_##SHAPE(T, CTX_FN)
#define STRATA_AMO_SHAPE_fetch(T, FN) T FN(const T *source, int pe);
#define STRATA_AMO_SHAPE_CTX_fetch(T, FN) T FN(shmem_ctx_t ctx, const T *source, int pe);
#define STRATA_AMO_SHAPE_set(T, FN) void FN(T *dest, T value, int pe);
#define STRATA_AMO_SHAPE_CTX_set(T, FN) void FN(shmem_ctx_t ctx, T *dest, T value, int pe);
#define STRATA_AMO_SHAPE_cswap(T, FN) T FN(T *dest, T cond, T value, int pe);
#define STRATA_AMO_SHAPE_CTX_cswap(T, FN) T FN(shmem_ctx_t ctx, T *dest, T cond, T value, int pe);
#define STRATA_AMO_SHAPE_fop(T, FN) T FN(T *dest, T value, int pe);
#define STRATA_AMO_SHAPE_CTX_fop(T, FN) T FN(shmem_ctx_t ctx, T *dest, T value, int pe);
#define STRATA_AMO_SHAPE_finc(T, FN) T FN(T *dest, int pe);
#define STRATA_AMO_SHAPE_CTX_finc(T, FN) T FN(shmem_ctx_t ctx, T *dest, int pe);
#define STRATA_AMO_SHAPE_inc(T, FN) void FN(T *dest, int pe);
#define STRATA_AMO_SHAPE_CTX_inc(T, FN) void FN(shmem_ctx_t ctx, T *dest, int pe);
#define STRATA_AMO_SHAPE_fetch_nbi(T, FN) void FN(T *fetch, const T *source, int pe);
#define STRATA_AMO_SHAPE_CTX_fetch_nbi(T, FN)                                                      \
    void FN(shmem_ctx_t ctx, T *fetch, const T *source, int pe);
#define STRATA_AMO_SHAPE_cswap_nbi(T, FN) void FN(T *fetch, T *dest, T cond, T value, int pe);
#define STRATA_AMO_SHAPE_CTX_cswap_nbi(T, FN)                                                      \
    void FN(shmem_ctx_t ctx, T *fetch, T *dest, T cond, T value, int pe);
#define STRATA_AMO_SHAPE_fop_nbi(T, FN) void FN(T *fetch, T *dest, T value, int pe);
#define STRATA_AMO_SHAPE_CTX_fop_nbi(T, FN)                                                        \
    void FN(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
#define STRATA_AMO_SHAPE_finc_nbi(T, FN) void FN(T *fetch, T *dest, int pe);
#define STRATA_AMO_SHAPE_CTX_finc_nbi(T, FN) void FN(shmem_ctx_t ctx, T *fetch, T *dest, int pe);

/* X(OP, SHAPE) lists per table: the operation's name and its shape. */
#define STRATA_AMO_EXT_OPS(X, T, N)                                                                \
    X(T, N, fetch, fetch)                                                                          \
    X(T, N, set, set) X(T, N, swap, fop) X(T, N, fetch_nbi, fetch_nbi) X(T, N, swap_nbi, fop_nbi)
#define STRATA_AMO_STD_OPS(X, T, N)                                                                \
    X(T, N, compare_swap, cswap)                                                                   \
    X(T, N, fetch_inc, finc)                                                                       \
    X(T, N, inc, inc)                                                                              \
    X(T, N, fetch_add, fop)                                                                        \
    X(T, N, add, set)                                                                              \
    X(T, N, compare_swap_nbi, cswap_nbi)                                                           \
    X(T, N, fetch_inc_nbi, finc_nbi) X(T, N, fetch_add_nbi, fop_nbi)
#define STRATA_AMO_BIT_OPS(X, T, N)                                                                \
    X(T, N, fetch_and, fop)                                                                        \
    X(T, N, and, set)                                                                              \
    X(T, N, fetch_or, fop)                                                                         \
    X(T, N, or, set)                                                                               \
    X(T, N, fetch_xor, fop)                                                                        \
    X(T, N, xor, set)                                                                              \
    X(T, N, fetch_and_nbi, fop_nbi) X(T, N, fetch_or_nbi, fop_nbi) X(T, N, fetch_xor_nbi, fop_nbi)

#define STRATA_DECL_AMO(T, N, OP, SHAPE)                                                           \
    STRATA_AMO_SHAPES(T, shmem_##N##_atomic_##OP, shmem_ctx_##N##_atomic_##OP, SHAPE)
#define STRATA_DECL_AMO_EXT(T, N, ...) STRATA_AMO_EXT_OPS(STRATA_DECL_AMO, T, N)
#define STRATA_DECL_AMO_STD(T, N, ...) STRATA_AMO_STD_OPS(STRATA_DECL_AMO, T, N)
#define STRATA_DECL_AMO_BIT(T, N, ...) STRATA_AMO_BIT_OPS(STRATA_DECL_AMO, T, N)
STRATA_AMO_EXT_TYPES(STRATA_DECL_AMO_EXT, _)
STRATA_AMO_STD_TYPES(STRATA_DECL_AMO_STD, _)
STRATA_AMO_BIT_TYPES(STRATA_DECL_AMO_BIT, _)

/* Deprecated names (1.6 "Deprecated" blocks): shmem_int_fadd and friends. */
#define STRATA_DECL_AMO_DEPRECATED(T, N, ...)                                                      \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe);                                         \
    T shmem_##N##_finc(T *dest, int pe);                                                           \
    void shmem_##N##_inc(T *dest, int pe);                                                         \
    T shmem_##N##_fadd(T *dest, T value, int pe);                                                  \
    void shmem_##N##_add(T *dest, T value, int pe);
#define STRATA_DECL_AMO_DEPRECATED_EXT(T, N, ...)                                                  \
    T shmem_##N##_swap(T *dest, T value, int pe);                                                  \
    T shmem_##N##_fetch(const T *source, int pe);                                                  \
    void shmem_##N##_set(T *dest, T value, int pe);
STRATA_AMO_DEPRECATED_TYPES(STRATA_DECL_AMO_DEPRECATED, _)
STRATA_AMO_DEPRECATED_EXT_TYPES(STRATA_DECL_AMO_DEPRECATED_EXT, _)

/* ---- Point-to-point synchronization (1.6 section 9.10) ---- */
#define STRATA_DECL_P2P(T, N, ...)                                                                 \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                                    \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,           \
                                    T cmp_value);                                                  \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,         \
                                      T cmp_value);                                                \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,                   \
                                       const int *status, int cmp, T cmp_value);                   \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,    \
                                           const T *cmp_values);                                   \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,  \
                                             const T *cmp_values);                                 \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,            \
                                              const int *status, int cmp, const T *cmp_values);    \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value);                                           \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);    \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value); \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,      \
                                 int cmp, T cmp_value);                                            \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,           \
                                    const T *cmp_values);                                          \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,        \
                                       const T *cmp_values);                                       \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,                  \
                                        const int *status, int cmp, const T *cmp_values);
STRATA_P2P_TYPES(STRATA_DECL_P2P, _)
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);
/* Deprecated: wait while *ivar == cmp_value, and the long-typed untyped wait_until. */
void shmem_wait(long *ivar, long cmp_value);
void shmem_short_wait(short *ivar, short cmp_value);
void shmem_int_wait(int *ivar, int cmp_value);
void shmem_long_wait(long *ivar, long cmp_value);
void shmem_longlong_wait(long long *ivar, long long cmp_value);
void shmem_wait_until(long *ivar, int cmp, long cmp_value);

/* ---- Distributed locking (1.6 section 9.12) ---- */
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
int shmem_test_lock(long *lock);

/* ---- Collectives on teams (1.6 section 9.9) ---- */

/* The C binding of shmem_sync is the deprecated active-set form; in C11, shmem_sync(team) is
 * shmem_team_sync (the generic below picks by argument count). */
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);

#define STRATA_DECL_TEAM_COLLECTIVES(T, N, ...)                                                    \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,          \
                              int PE_root);                                                        \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);           \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems);          \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);          \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,          \
                              ptrdiff_t sst, size_t nelems);
STRATA_RMA_TYPES(STRATA_DECL_TEAM_COLLECTIVES, _)
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems);

#define STRATA_DECL_REDUCE(T, N, OP)                                                               \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
#define STRATA_DECL_REDUCE_BITWISE(T, N, ...)                                                      \
    STRATA_DECL_REDUCE(T, N, and) STRATA_DECL_REDUCE(T, N, or) STRATA_DECL_REDUCE(T, N, xor)
#define STRATA_DECL_REDUCE_MINMAX(T, N, ...)                                                       \
    STRATA_DECL_REDUCE(T, N, max) STRATA_DECL_REDUCE(T, N, min)
#define STRATA_DECL_REDUCE_SUM(T, N, ...)                                                          \
    STRATA_DECL_REDUCE(T, N, sum)                                                                  \
    STRATA_DECL_REDUCE(T, N, prod)                                                                 \
    int shmem_##N##_sum_inscan(shmem_team_t team, T *dest, const T *source, size_t nelems);        \
    int shmem_##N##_sum_exscan(shmem_team_t team, T *dest, const T *source, size_t nelems);
STRATA_REDUCE_BITWISE_TYPES(STRATA_DECL_REDUCE_BITWISE, _)
STRATA_REDUCE_MINMAX_TYPES(STRATA_DECL_REDUCE_MINMAX, _)
STRATA_REDUCE_SUM_TYPES(STRATA_DECL_REDUCE_SUM, _)

/* Legacy active-set collectives (deprecated in 1.6, still specified). */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
#define STRATA_DECL_ACTIVE_SET_SIZED(BITS)                                                         \
    void shmem_broadcast##BITS(void *dest, const void *source, size_t nelems, int PE_root,         \
                               int PE_start, int logPE_stride, int PE_size, long *pSync);          \
    void shmem_collect##BITS(void *dest, const void *source, size_t nelems, int PE_start,          \
                             int logPE_stride, int PE_size, long *pSync);                          \
    void shmem_fcollect##BITS(void *dest, const void *source, size_t nelems, int PE_start,         \
                              int logPE_stride, int PE_size, long *pSync);                         \
    void shmem_alltoall##BITS(void *dest, const void *source, size_t nelems, int PE_start,         \
                              int logPE_stride, int PE_size, long *pSync);                         \
    void shmem_alltoalls##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,       \
                               size_t nelems, int PE_start, int logPE_stride, int PE_size,         \
                               long *pSync);
STRATA_DECL_ACTIVE_SET_SIZED(32)
STRATA_DECL_ACTIVE_SET_SIZED(64)
#define STRATA_DECL_TO_ALL(T, N, OP)                                                               \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,            \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define STRATA_DECL_TO_ALL_BITWISE(T, N, ...)                                                      \
    STRATA_DECL_TO_ALL(T, N, and) STRATA_DECL_TO_ALL(T, N, or) STRATA_DECL_TO_ALL(T, N, xor)
#define STRATA_DECL_TO_ALL_MINMAX(T, N, ...)                                                       \
    STRATA_DECL_TO_ALL(T, N, max) STRATA_DECL_TO_ALL(T, N, min)
#define STRATA_DECL_TO_ALL_SUM(T, N, ...)                                                          \
    STRATA_DECL_TO_ALL(T, N, sum) STRATA_DECL_TO_ALL(T, N, prod)
STRATA_TO_ALL_BITWISE_TYPES(STRATA_DECL_TO_ALL_BITWISE, _)
STRATA_TO_ALL_MINMAX_TYPES(STRATA_DECL_TO_ALL_MINMAX, _)
STRATA_TO_ALL_SUM_TYPES(STRATA_DECL_TO_ALL_SUM, _)

/* ---- Memory ordering and synchronization (1.6 sections 9.9, 9.11) ---- */
void shmem_fence(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_quiet(void);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_pe_quiet(const int *target_pes, size_t npes);
void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes);
void shmem_barrier_all(void);
void shmem_sync_all(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

/* ---- C11 generic selections ---- */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)

/* Reached only when a generic routine is called with a type outside its table: the build fails
 * with this message instead of silently converting. */
void strata_generic_type_error(void)
    __attribute__((error("OpenSHMEM generic routine called with an unsupported type")));

#define STRATA_ARG1(a, ...) a
#define STRATA_ARG2(a, b, ...) b

/* Both T* and const T* select a routine; CTX is empty or ctx_. */
#define STRATA_ASSOC(T, N, CTX, OP) T * : shmem_##CTX##N##_##OP, const T * : shmem_##CTX##N##_##OP,
#define STRATA_SELECT(ptr, CTX, OP)                                                                \
    _Generic((ptr), STRATA_GENERIC_RMA_TYPES(STRATA_ASSOC, CTX, OP) default                        \
             : strata_generic_type_error)

/* A generic routine with an optional leading context: dispatch on the first argument being a
 * shmem_ctx_t, then on the type of the pointer argument in position 1 (or 2 after a context). */
#define STRATA_GENERIC(OP, ...)                                                                    \
    _Generic((STRATA_ARG1(__VA_ARGS__, 0)), shmem_ctx_t                                            \
             : STRATA_SELECT(STRATA_ARG2(__VA_ARGS__, 0, 0), ctx_, OP), default                    \
             : STRATA_SELECT(STRATA_ARG1(__VA_ARGS__, 0), , OP))(__VA_ARGS__)

#define shmem_put(...) STRATA_GENERIC(put, __VA_ARGS__)
#define shmem_get(...) STRATA_GENERIC(get, __VA_ARGS__)
#define shmem_put_nbi(...) STRATA_GENERIC(put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...) STRATA_GENERIC(get_nbi, __VA_ARGS__)
#define shmem_p(...) STRATA_GENERIC(p, __VA_ARGS__)
#define shmem_g(...) STRATA_GENERIC(g, __VA_ARGS__)
#define shmem_iput(...) STRATA_GENERIC(iput, __VA_ARGS__)
#define shmem_iget(...) STRATA_GENERIC(iget, __VA_ARGS__)
#define shmem_ibput(...) STRATA_GENERIC(ibput, __VA_ARGS__)
#define shmem_ibget(...) STRATA_GENERIC(ibget, __VA_ARGS__)
#define shmem_put_signal(...) STRATA_GENERIC(put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) STRATA_GENERIC(put_signal_nbi, __VA_ARGS__)

/* Atomics and waits select from their own tables. */
#define STRATA_SELECT_IN(LIST, ptr, CTX, OP)                                                       \
    _Generic((ptr), LIST(STRATA_ASSOC, CTX, OP) default : strata_generic_type_error)
#define STRATA_GENERIC_IN(LIST, OP, ...)                                                           \
    _Generic((STRATA_ARG1(__VA_ARGS__, 0)), shmem_ctx_t                                            \
             : STRATA_SELECT_IN(LIST, STRATA_ARG2(__VA_ARGS__, 0, 0), ctx_, OP), default           \
             : STRATA_SELECT_IN(LIST, STRATA_ARG1(__VA_ARGS__, 0), , OP))(__VA_ARGS__)
#define STRATA_GENERIC_NOCTX(LIST, OP, ...)                                                        \
    STRATA_SELECT_IN(LIST, STRATA_ARG1(__VA_ARGS__, 0), , OP)(__VA_ARGS__)

#define shmem_atomic_fetch(...)                                                                    \
    STRATA_GENERIC_IN(STRATA_AMO_EXT_GENERIC_TYPES, atomic_fetch, __VA_ARGS__)
#define shmem_atomic_set(...)                                                                      \
    STRATA_GENERIC_IN(STRATA_AMO_EXT_GENERIC_TYPES, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...)                                                                     \
    STRATA_GENERIC_IN(STRATA_AMO_EXT_GENERIC_TYPES, atomic_swap, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...)                                                                \
    STRATA_GENERIC_IN(STRATA_AMO_EXT_GENERIC_TYPES, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...)                                                                 \
    STRATA_GENERIC_IN(STRATA_AMO_EXT_GENERIC_TYPES, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap(...)                                                             \
    STRATA_GENERIC_IN(STRATA_AMO_STD_GENERIC_TYPES, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...)                                                                \
    STRATA_GENERIC_IN(STRATA_AMO_STD_GENERIC_TYPES, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...)                                                                      \
    STRATA_GENERIC_IN(STRATA_AMO_STD_GENERIC_TYPES, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...)                                                                \
    STRATA_GENERIC_IN(STRATA_AMO_STD_GENERIC_TYPES, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...)                                                                      \
    STRATA_GENERIC_IN(STRATA_AMO_STD_GENERIC_TYPES, atomic_add, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...)                                                         \
    STRATA_GENERIC_IN(STRATA_AMO_STD_GENERIC_TYPES, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...)                                                            \
    STRATA_GENERIC_IN(STRATA_AMO_STD_GENERIC_TYPES, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...)                                                            \
    STRATA_GENERIC_IN(STRATA_AMO_STD_GENERIC_TYPES, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and(...)                                                                \
    STRATA_GENERIC_IN(STRATA_AMO_BIT_GENERIC_TYPES, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_and(...)                                                                      \
    STRATA_GENERIC_IN(STRATA_AMO_BIT_GENERIC_TYPES, atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_or(...)                                                                 \
    STRATA_GENERIC_IN(STRATA_AMO_BIT_GENERIC_TYPES, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_or(...) STRATA_GENERIC_IN(STRATA_AMO_BIT_GENERIC_TYPES, atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...)                                                                \
    STRATA_GENERIC_IN(STRATA_AMO_BIT_GENERIC_TYPES, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_xor(...)                                                                      \
    STRATA_GENERIC_IN(STRATA_AMO_BIT_GENERIC_TYPES, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...)                                                            \
    STRATA_GENERIC_IN(STRATA_AMO_BIT_GENERIC_TYPES, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...)                                                             \
    STRATA_GENERIC_IN(STRATA_AMO_BIT_GENERIC_TYPES, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...)                                                            \
    STRATA_GENERIC_IN(STRATA_AMO_BIT_GENERIC_TYPES, atomic_fetch_xor_nbi, __VA_ARGS__)
/* Deprecated generic names, served by the 1.6 routines of the same operation. */
#define shmem_cswap(...)                                                                           \
    STRATA_GENERIC_NOCTX(STRATA_AMO_STD_GENERIC_TYPES, atomic_compare_swap, __VA_ARGS__)
#define shmem_finc(...)                                                                            \
    STRATA_GENERIC_NOCTX(STRATA_AMO_STD_GENERIC_TYPES, atomic_fetch_inc, __VA_ARGS__)
#define shmem_inc(...) STRATA_GENERIC_NOCTX(STRATA_AMO_STD_GENERIC_TYPES, atomic_inc, __VA_ARGS__)
#define shmem_fadd(...)                                                                            \
    STRATA_GENERIC_NOCTX(STRATA_AMO_STD_GENERIC_TYPES, atomic_fetch_add, __VA_ARGS__)
#define shmem_add(...) STRATA_GENERIC_NOCTX(STRATA_AMO_STD_GENERIC_TYPES, atomic_add, __VA_ARGS__)
#define shmem_swap(...) STRATA_GENERIC_NOCTX(STRATA_AMO_EXT_GENERIC_TYPES, atomic_swap, __VA_ARGS__)
#define shmem_fetch(...)                                                                           \
    STRATA_GENERIC_NOCTX(STRATA_AMO_EXT_GENERIC_TYPES, atomic_fetch, __VA_ARGS__)
#define shmem_set(...) STRATA_GENERIC_NOCTX(STRATA_AMO_EXT_GENERIC_TYPES, atomic_set, __VA_ARGS__)

#define STRATA_ARG5(a, b, c, d, e, ...) e
#define shmem_sync(...)                                                                            \
    STRATA_ARG5(__VA_ARGS__, (shmem_sync), _, _, shmem_team_sync, _)(__VA_ARGS__)

#define shmem_wait_until(...)                                                                      \
    STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, wait_until, __VA_ARGS__)
#define shmem_wait_until_all(...)                                                                  \
    STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, wait_until_all, __VA_ARGS__)
#define shmem_wait_until_any(...)                                                                  \
    STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, wait_until_any, __VA_ARGS__)
#define shmem_wait_until_some(...)                                                                 \
    STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, wait_until_some, __VA_ARGS__)
#define shmem_wait_until_all_vector(...)                                                           \
    STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, wait_until_all_vector, __VA_ARGS__)
#define shmem_wait_until_any_vector(...)                                                           \
    STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, wait_until_any_vector, __VA_ARGS__)
#define shmem_wait_until_some_vector(...)                                                          \
    STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, wait_until_some_vector, __VA_ARGS__)
#define shmem_test(...) STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, test, __VA_ARGS__)
#define shmem_test_all(...) STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, test_all, __VA_ARGS__)
#define shmem_test_any(...) STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, test_any, __VA_ARGS__)
#define shmem_test_some(...) STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, test_some, __VA_ARGS__)
#define shmem_test_all_vector(...)                                                                 \
    STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, test_all_vector, __VA_ARGS__)
#define shmem_test_any_vector(...)                                                                 \
    STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, test_any_vector, __VA_ARGS__)
#define shmem_test_some_vector(...)                                                                \
    STRATA_GENERIC_NOCTX(STRATA_P2P_GENERIC_TYPES, test_some_vector, __VA_ARGS__)

/* Collectives select on the destination (the argument after the team). */
#define STRATA_GENERIC_TEAM(LIST, OP, ...)                                                         \
    STRATA_SELECT_IN(LIST, STRATA_ARG2(__VA_ARGS__, 0, 0), , OP)(__VA_ARGS__)
#define shmem_broadcast(...) STRATA_GENERIC_TEAM(STRATA_GENERIC_RMA_TYPES, broadcast, __VA_ARGS__)
#define shmem_collect(...) STRATA_GENERIC_TEAM(STRATA_GENERIC_RMA_TYPES, collect, __VA_ARGS__)
#define shmem_fcollect(...) STRATA_GENERIC_TEAM(STRATA_GENERIC_RMA_TYPES, fcollect, __VA_ARGS__)
#define shmem_alltoall(...) STRATA_GENERIC_TEAM(STRATA_GENERIC_RMA_TYPES, alltoall, __VA_ARGS__)
#define shmem_alltoalls(...) STRATA_GENERIC_TEAM(STRATA_GENERIC_RMA_TYPES, alltoalls, __VA_ARGS__)
#define shmem_and_reduce(...)                                                                      \
    STRATA_GENERIC_TEAM(STRATA_REDUCE_BITWISE_GENERIC_TYPES, and_reduce, __VA_ARGS__)
#define shmem_or_reduce(...)                                                                       \
    STRATA_GENERIC_TEAM(STRATA_REDUCE_BITWISE_GENERIC_TYPES, or_reduce, __VA_ARGS__)
#define shmem_xor_reduce(...)                                                                      \
    STRATA_GENERIC_TEAM(STRATA_REDUCE_BITWISE_GENERIC_TYPES, xor_reduce, __VA_ARGS__)
#define shmem_max_reduce(...)                                                                      \
    STRATA_GENERIC_TEAM(STRATA_REDUCE_MINMAX_GENERIC_TYPES, max_reduce, __VA_ARGS__)
#define shmem_min_reduce(...)                                                                      \
    STRATA_GENERIC_TEAM(STRATA_REDUCE_MINMAX_GENERIC_TYPES, min_reduce, __VA_ARGS__)
#define shmem_sum_reduce(...)                                                                      \
    STRATA_GENERIC_TEAM(STRATA_REDUCE_SUM_GENERIC_TYPES, sum_reduce, __VA_ARGS__)
#define shmem_prod_reduce(...)                                                                     \
    STRATA_GENERIC_TEAM(STRATA_REDUCE_SUM_GENERIC_TYPES, prod_reduce, __VA_ARGS__)
#define shmem_sum_inscan(...)                                                                      \
    STRATA_GENERIC_TEAM(STRATA_REDUCE_SUM_GENERIC_TYPES, sum_inscan, __VA_ARGS__)
#define shmem_sum_exscan(...)                                                                      \
    STRATA_GENERIC_TEAM(STRATA_REDUCE_SUM_GENERIC_TYPES, sum_exscan, __VA_ARGS__)

#endif /* C11 */

#endif /* SHMEM_H */
