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

/* ---- Library constants (1.6 section 6) ---- */
#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 6
#define SHMEM_MAX_NAME_LEN 64
#define SHMEM_VENDOR_STRING "Strata 0.1.0"
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
typedef struct strata_ctx *shmem_ctx_t;
extern shmem_ctx_t SHMEM_CTX_DEFAULT;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

/* ---- Type tables (1.6 tables "Standard RMA Types and Names") ----
 * X(TYPE, TYPENAME, __VA_ARGS__). STRATA_RMA_TYPES lists every row; STRATA_GENERIC_RMA_TYPES lists
 * the rows whose TYPE is distinct in C (the fixed-width and size types are typedefs of these),
 * which is what a _Generic association list may hold. */
#define STRATA_GENERIC_RMA_TYPES(X, ...)                                                           \
    X(float, float, __VA_ARGS__)                                                                   \
    X(double, double, __VA_ARGS__)                                                                 \
    X(long double, longdouble, __VA_ARGS__)                                                        \
    X(char, char, __VA_ARGS__)                                                                     \
    X(signed char, schar, __VA_ARGS__)                                                             \
    X(short, short, __VA_ARGS__)                                                                   \
    X(int, int, __VA_ARGS__)                                                                       \
    X(long, long, __VA_ARGS__)                                                                     \
    X(long long, longlong, __VA_ARGS__)                                                            \
    X(unsigned char, uchar, __VA_ARGS__)                                                           \
    X(unsigned short, ushort, __VA_ARGS__)                                                         \
    X(unsigned int, uint, __VA_ARGS__)                                                             \
    X(unsigned long, ulong, __VA_ARGS__)                                                           \
    X(unsigned long long, ulonglong, __VA_ARGS__)

#define STRATA_RMA_TYPES(X, ...)                                                                   \
    STRATA_GENERIC_RMA_TYPES(X, __VA_ARGS__)                                                       \
    X(int8_t, int8, __VA_ARGS__)                                                                   \
    X(int16_t, int16, __VA_ARGS__)                                                                 \
    X(int32_t, int32, __VA_ARGS__)                                                                 \
    X(int64_t, int64, __VA_ARGS__)                                                                 \
    X(uint8_t, uint8, __VA_ARGS__)                                                                 \
    X(uint16_t, uint16, __VA_ARGS__)                                                               \
    X(uint32_t, uint32, __VA_ARGS__)                                                               \
    X(uint64_t, uint64, __VA_ARGS__)                                                               \
    X(size_t, size, __VA_ARGS__)                                                                   \
    X(ptrdiff_t, ptrdiff, __VA_ARGS__)

/* X(BITS, BYTES, __VA_ARGS__): the sized RMA variants shmem_put8 ... shmem_put128. */
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
STRATA_RMA_TYPES(STRATA_DECL_TYPED_RMA)

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

/* ---- Memory ordering and synchronization (1.6 sections 9.9, 9.11) ---- */
void shmem_fence(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_quiet(void);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_pe_quiet(const int *target_pes, size_t npes);
void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes);
void shmem_barrier_all(void);
void shmem_sync_all(void);

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

#endif /* C11 */

#endif /* SHMEM_H */
