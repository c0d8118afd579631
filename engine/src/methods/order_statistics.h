/*
 * order_statistics.h: the order statistics' CPU selection
 * (order_statistics_cpu.c), also used by LTS for its h-th squared residual,
 * and their calls into the CUDA module (order_statistics_cuda.c).
 */
#ifndef STATGPU_METHODS_ORDER_STATISTICS_H
#define STATGPU_METHODS_ORDER_STATISTICS_H

#include "core/context.h"

#include <stdbool.h>
#include <stdint.h>

/* IEEE total-order keys: a < b as doubles (with -0.0 < +0.0) iff key(a) < key(b). */
static inline uint64_t sg_key_from_double(double value)
{
    uint64_t bits;
    __builtin_memcpy(&bits, &value, sizeof bits);
    return (bits & 0x8000000000000000ull) ? ~bits : (bits | 0x8000000000000000ull);
}

static inline double sg_double_from_key(uint64_t key)
{
    uint64_t bits = (key & 0x8000000000000000ull) ? (key & ~0x8000000000000000ull) : ~key;
    double value;
    __builtin_memcpy(&value, &bits, sizeof value);
    return value;
}

/* qsort's comparison of two total-order keys (uint64_t). */
int sg_compare_keys(const void *a, const void *b);

/* True when any element of the host array is NaN. */
bool sg_cpu_has_nan(const void *data, statgpu_dtype dtype, size_t data_count, int thread_count);

/* results[j] = the ranks[j]-th smallest (1-based) of a host array, ranks
 * ascending, distinct and within [1, data_count]. The CPU has window select
 * (AUTO for one to four ranks from 2^16 values, CUTTING_PLANE from 2^12),
 * radix select (RADIX), introselect on a copy (AUTO otherwise) and a full
 * sort (SORT). Returns STATGPU_OK, STATGPU_ERROR_OUT_OF_MEMORY, or
 * STATGPU_ERROR_NAN_IN_DATA where window select ran and met a NaN (the
 * others do not look: sg_cpu_select_ranks_nan_checked below does). */
statgpu_status sg_cpu_select_ranks(const void *data, statgpu_dtype dtype, size_t data_count,
                                   const size_t *ranks, size_t rank_count, statgpu_select_method method,
                                   double *results, int thread_count);

/* As sg_cpu_select_ranks for float64 data the caller gives up: the data
 * become their keys in place and are selected there (no copy of them is
 * made; a radix select still copies the shrinking candidates, at most half
 * the data). The data's contents are unspecified afterwards. */
statgpu_status sg_cpu_select_ranks_in_place(double *data, size_t data_count, const size_t *ranks, size_t rank_count,
                                            statgpu_select_method method, double *results, int thread_count);

/* sg_cpu_select_ranks (scratch: sg_cpu_select_ranks_in_place for float64)
 * on data that may hold NaN: STATGPU_ERROR_NAN_IN_DATA where they do, looked
 * for in the selection's own pass where the selection reads the data once
 * (window select), by a pass of its own before otherwise. */
statgpu_status sg_cpu_select_ranks_nan_checked(const void *data, statgpu_dtype dtype, size_t data_count, bool scratch,
                                               const size_t *ranks, size_t rank_count, statgpu_select_method method,
                                               double *results, int thread_count);

/* Order statistics on the context's device (methods/order_statistics_cuda.c;
 * sg_cuda_ensure() must have succeeded): ranks ascending and distinct. */
statgpu_cuda_status sg_cuda_select(statgpu_context *context, const statgpu_vector *data,
                                   const size_t *ranks, size_t rank_count, double *results,
                                   char *message, size_t message_bytes);

#endif
