/* SPDX-License-Identifier: BSD-3-Clause */
/* Point-to-point synchronization (1.6 section 9.10): wait_until, test and their _all/_any/_some
 * and _vector forms for every type of the point-to-point table, and signal_wait_until.
 *
 * Waiting reads local memory that peers update, through direct stores or the transport; every
 * wait loop progresses the transport and yields the CPU after a short spin (progress.c). One core
 * per form: the scalar form passes its comparison value with a stride of 0, the vector form with
 * a stride of 1. */
#include "../transports/transport.h"
#include "runtime.h"
#include "staged.h"

#include <stdint.h>

static void p2p_check_cmp(const char *routine, int cmp)
{
    runtime_require_init(routine);
    if (unlikely(cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE))
        log_fatal(routine, "comparison %d is not one of SHMEM_CMP_EQ, NE, GT, GE, LT, LE", cmp);
}

#define P2P_HOLDS(cmp, a, b)                                                                       \
    ((cmp) == SHMEM_CMP_EQ   ? (a) == (b)                                                          \
     : (cmp) == SHMEM_CMP_NE ? (a) != (b)                                                          \
     : (cmp) == SHMEM_CMP_GT ? (a) > (b)                                                           \
     : (cmp) == SHMEM_CMP_GE ? (a) >= (b)                                                          \
     : (cmp) == SHMEM_CMP_LT ? (a) < (b)                                                           \
                             : (a) <= (b))

/* Where this thread's next _any search starts. */
static __thread size_t p2p_any_next __attribute__((tls_model("initial-exec")));

/* A test makes progress once, so that a PE polling with shmem_test sees transport updates. */
static inline void p2p_poll(void)
{
    if (rt.worker) {
        transport_progress(rt.worker);
        ctx_progress_outstanding();
    }
}

/* An ivar in device memory is read through its kind, never loaded. */
static void p2p_read_device(const void *ivar, void *seen, size_t size)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    staged_read_local(ivar, seen, size);
}

#define DEFINE_P2P(T, N, ...)                                                                      \
    /* Whether the value read, left in *seen, holds against value. */                              \
    static inline int N##_seen_holds(T *ivar, int cmp, T value, T *seen)                           \
    {                                                                                              \
        if (unlikely(space_device_regions))                                                        \
            p2p_read_device(ivar, seen, sizeof(T));                                                \
        else                                                                                       \
            *seen = __atomic_load_n(ivar, __ATOMIC_ACQUIRE);                                       \
        return P2P_HOLDS(cmp, *seen, value);                                                       \
    }                                                                                              \
    static inline int N##_holds(T *ivar, int cmp, T value)                                         \
    {                                                                                              \
        T seen;                                                                                    \
        return N##_seen_holds(ivar, cmp, value, &seen);                                            \
    }                                                                                              \
    /* Returns how many included elements hold; stores the indices when asked. *included counts    \
     * the elements not excluded by status. */                                                     \
    static size_t N##_scan(T *ivars, size_t nelems, const int *status, int cmp, const T *values,   \
                           size_t stride, size_t *indices, size_t *included)                       \
    {                                                                                              \
        size_t hits = 0;                                                                           \
        *included = 0;                                                                             \
        for (size_t i = 0; i < nelems; i++) {                                                      \
            if (status && status[i])                                                               \
                continue;                                                                          \
            ++*included;                                                                           \
            if (!N##_holds(&ivars[i], cmp, values[i * stride]))                                    \
                continue;                                                                          \
            if (indices)                                                                           \
                indices[hits] = i;                                                                 \
            hits++;                                                                                \
        }                                                                                          \
        return hits;                                                                               \
    }                                                                                              \
    static int N##_all(T *ivars, size_t nelems, const int *status, int cmp, const T *values,       \
                       size_t stride)                                                              \
    {                                                                                              \
        size_t included,                                                                           \
            hits = N##_scan(ivars, nelems, status, cmp, values, stride, NULL, &included);          \
        return hits == included; /* 1.6: an empty set holds */                                     \
    }                                                                                              \
    /* The first element that holds, searching from where the last search of this thread found     \
     * one: every element that keeps holding is returned by some call of a series (1.6). */        \
    static size_t N##_any(T *ivars, size_t nelems, const int *status, int cmp, const T *values,    \
                          size_t stride, size_t *empty)                                            \
    {                                                                                              \
        size_t included = 0, i = nelems ? p2p_any_next % nelems : 0;                               \
        for (size_t k = 0; k < nelems; k++, i = i + 1 == nelems ? 0 : i + 1) {                     \
            if (status && status[i])                                                               \
                continue;                                                                          \
            included++;                                                                            \
            if (N##_holds(&ivars[i], cmp, values[i * stride])) {                                   \
                p2p_any_next = i + 1;                                                              \
                *empty = 0;                                                                        \
                return i;                                                                          \
            }                                                                                      \
        }                                                                                          \
        *empty = !included;                                                                        \
        return SIZE_MAX;                                                                           \
    }                                                                                              \
    static void N##_wait_all(const char *routine, T *ivars, size_t nelems, const int *status,      \
                             int cmp, const T *values, size_t stride)                              \
    {                                                                                              \
        p2p_check_cmp(routine, cmp);                                                               \
        PROGRESS_WAIT_WHILE(!N##_all(ivars, nelems, status, cmp, values, stride));                 \
    }                                                                                              \
    static size_t N##_wait_any(const char *routine, T *ivars, size_t nelems, const int *status,    \
                               int cmp, const T *values, size_t stride)                            \
    {                                                                                              \
        p2p_check_cmp(routine, cmp);                                                               \
        size_t empty, index;                                                                       \
        PROGRESS_WAIT_WHILE(                                                                       \
            (index = N##_any(ivars, nelems, status, cmp, values, stride, &empty)) == SIZE_MAX &&   \
            !empty);                                                                               \
        return index;                                                                              \
    }                                                                                              \
    static size_t N##_wait_some(const char *routine, T *ivars, size_t nelems, size_t *indices,     \
                                const int *status, int cmp, const T *values, size_t stride)        \
    {                                                                                              \
        p2p_check_cmp(routine, cmp);                                                               \
        size_t hits, included;                                                                     \
        PROGRESS_WAIT_WHILE(                                                                       \
            !(hits = N##_scan(ivars, nelems, status, cmp, values, stride, indices, &included)) &&  \
            included);                                                                             \
        return hits;                                                                               \
    }                                                                                              \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                                     \
    {                                                                                              \
        N##_wait_all("shmem_" #N "_wait_until", ivar, 1, NULL, cmp, &cmp_value, 0);                \
    }                                                                                              \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,           \
                                    T cmp_value)                                                   \
    {                                                                                              \
        N##_wait_all("shmem_" #N "_wait_until_all", ivars, nelems, status, cmp, &cmp_value, 0);    \
    }                                                                                              \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,    \
                                           const T *cmp_values)                                    \
    {                                                                                              \
        N##_wait_all("shmem_" #N "_wait_until_all_vector", ivars, nelems, status, cmp, cmp_values, \
                     1);                                                                           \
    }                                                                                              \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,         \
                                      T cmp_value)                                                 \
    {                                                                                              \
        return N##_wait_any("shmem_" #N "_wait_until_any", ivars, nelems, status, cmp, &cmp_value, \
                            0);                                                                    \
    }                                                                                              \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,  \
                                             const T *cmp_values)                                  \
    {                                                                                              \
        return N##_wait_any("shmem_" #N "_wait_until_any_vector", ivars, nelems, status, cmp,      \
                            cmp_values, 1);                                                        \
    }                                                                                              \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,                   \
                                       const int *status, int cmp, T cmp_value)                    \
    {                                                                                              \
        return N##_wait_some("shmem_" #N "_wait_until_some", ivars, nelems, indices, status, cmp,  \
                             &cmp_value, 0);                                                       \
    }                                                                                              \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,            \
                                              const int *status, int cmp, const T *cmp_values)     \
    {                                                                                              \
        return N##_wait_some("shmem_" #N "_wait_until_some_vector", ivars, nelems, indices,        \
                             status, cmp, cmp_values, 1);                                          \
    }                                                                                              \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value)                                            \
    {                                                                                              \
        p2p_check_cmp("shmem_" #N "_test", cmp);                                                   \
        p2p_poll();                                                                                \
        return N##_holds(ivar, cmp, cmp_value);                                                    \
    }                                                                                              \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)     \
    {                                                                                              \
        p2p_check_cmp("shmem_" #N "_test_all", cmp);                                               \
        p2p_poll();                                                                                \
        return N##_all(ivars, nelems, status, cmp, &cmp_value, 0);                                 \
    }                                                                                              \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,           \
                                    const T *cmp_values)                                           \
    {                                                                                              \
        p2p_check_cmp("shmem_" #N "_test_all_vector", cmp);                                        \
        p2p_poll();                                                                                \
        return N##_all(ivars, nelems, status, cmp, cmp_values, 1);                                 \
    }                                                                                              \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)  \
    {                                                                                              \
        size_t empty;                                                                              \
        p2p_check_cmp("shmem_" #N "_test_any", cmp);                                               \
        p2p_poll();                                                                                \
        return N##_any(ivars, nelems, status, cmp, &cmp_value, 0, &empty);                         \
    }                                                                                              \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,        \
                                       const T *cmp_values)                                        \
    {                                                                                              \
        size_t empty;                                                                              \
        p2p_check_cmp("shmem_" #N "_test_any_vector", cmp);                                        \
        p2p_poll();                                                                                \
        return N##_any(ivars, nelems, status, cmp, cmp_values, 1, &empty);                         \
    }                                                                                              \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,      \
                                 int cmp, T cmp_value)                                             \
    {                                                                                              \
        size_t included;                                                                           \
        p2p_check_cmp("shmem_" #N "_test_some", cmp);                                              \
        p2p_poll();                                                                                \
        return N##_scan(ivars, nelems, status, cmp, &cmp_value, 0, indices, &included);            \
    }                                                                                              \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,                  \
                                        const int *status, int cmp, const T *cmp_values)           \
    {                                                                                              \
        size_t included;                                                                           \
        p2p_check_cmp("shmem_" #N "_test_some_vector", cmp);                                       \
        p2p_poll();                                                                                \
        return N##_scan(ivars, nelems, status, cmp, cmp_values, 1, indices, &included);            \
    }
STRATA_P2P_TYPES(DEFINE_P2P)

/* Returns the value that satisfied the comparison: a second read could see a later update that
 * does not. */
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    p2p_check_cmp("shmem_signal_wait_until", cmp);
    uint64_t seen;
    PROGRESS_WAIT_WHILE(!uint64_seen_holds(sig_addr, cmp, cmp_value, &seen));
    return seen;
}

/* Deprecated forms: wait while the variable still equals the value. */
void shmem_short_wait(short *ivar, short cmp_value)
{
    shmem_short_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

void shmem_int_wait(int *ivar, int cmp_value)
{
    shmem_int_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

void shmem_long_wait(long *ivar, long cmp_value)
{
    shmem_long_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

void shmem_longlong_wait(long long *ivar, long long cmp_value)
{
    shmem_longlong_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

void shmem_wait(long *ivar, long cmp_value)
{
    shmem_long_wait_until(ivar, SHMEM_CMP_NE, cmp_value);
}

/* The name is also a C11 generic macro in shmem.h: the parentheses define the function. */
void(shmem_wait_until)(long *ivar, int cmp, long cmp_value)
{
    shmem_long_wait_until(ivar, cmp, cmp_value);
}
