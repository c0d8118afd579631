/*
 * matrix.c: matrix and vector arguments as host doubles (see matrix.h).
 */
#include "core/matrix.h"

#include "internal.h"
#include "core/pool.h"
#include "core/threads.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t sg_element_bytes(statgpu_dtype dtype)
{
    return dtype == STATGPU_DTYPE_FLOAT32 ? sizeof(float) : sizeof(double);
}

/* The elements a column-major rows x cols array with leading dimension ld
 * spans: ld * (cols - 1) + rows; SIZE_MAX on overflow. */
static size_t sg_span(size_t rows, size_t cols, size_t ld)
{
    if (cols > 1 && ld > (SIZE_MAX - rows) / (cols - 1))
        return SIZE_MAX;
    return ld * (cols - 1) + rows;
}

statgpu_status sg_matrix_host_doubles(statgpu_context *context, const statgpu_matrix *matrix, const char *what,
                                      sg_host_doubles *out)
{
    memset(out, 0, sizeof *out);
    if (matrix == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
    if (matrix->dtype != STATGPU_DTYPE_FLOAT64 && matrix->dtype != STATGPU_DTYPE_FLOAT32)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%s: unknown element type %d", what,
                       (int)matrix->dtype);
    if (matrix->memory != STATGPU_MEMORY_HOST && matrix->memory != STATGPU_MEMORY_HOST_SCRATCH
        && matrix->memory != STATGPU_MEMORY_CUDA_DEVICE)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%s: unknown memory kind %d", what,
                       (int)matrix->memory);
    if (matrix->rows == 0)
        return sg_fail(context, STATGPU_ERROR_EMPTY_INPUT, "%s has no rows", what);
    if (matrix->cols == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%s has no columns", what);
    if (matrix->ld < matrix->rows)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "%s: the leading dimension %zu is less than the %zu rows", what, matrix->ld, matrix->rows);
    if (matrix->data == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%s: data is NULL", what);
    size_t span = sg_span(matrix->rows, matrix->cols, matrix->ld);
    size_t item = sg_element_bytes(matrix->dtype);
    if (span == SIZE_MAX || span > SIZE_MAX / sizeof(double) || matrix->rows > SIZE_MAX / sizeof(double) / matrix->cols)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%s is larger than memory can address", what);

    bool on_device = matrix->memory == STATGPU_MEMORY_CUDA_DEVICE;
    if (!on_device && matrix->dtype == STATGPU_DTYPE_FLOAT64) {
        out->data = matrix->data;
        out->ld = matrix->ld;
        return STATGPU_OK;
    }

    /* A copy: device data come to the host as they are, then float32 values
     * are widened, packed with leading dimension rows. */
    const void *source = matrix->data;
    void *staged = NULL;
    if (on_device) {
        char message[256] = "";
        if (context->params.backend == STATGPU_BACKEND_CPU)
            return sg_fail(context, STATGPU_ERROR_BACKEND, "%s in device memory need CUDA: the context asks for "
                           "the CPU backend", what);
        if (!sg_dispatch_cuda_ready(context, message, sizeof message))
            return sg_fail(context, STATGPU_ERROR_BACKEND, "%s in device memory need CUDA: %s", what, message);
        staged = malloc(span * item);
        if (staged == NULL)
            return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate a host copy of %s", what);
        const statgpu_cuda_module_i *module = sg_cuda_module(NULL);
        if (module->copy_to_host(context->cuda_state, matrix->data, span * item, staged, message, sizeof message)
            != STATGPU_CUDA_OK) {
            free(staged);
            return sg_fail(context, STATGPU_ERROR_BACKEND, "could not read %s from the device: %s", what, message);
        }
        source = staged;
    }
    double *packed = malloc(matrix->rows * matrix->cols * sizeof *packed);
    if (packed == NULL) {
        free(staged);
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate a copy of %s", what);
    }
    for (size_t j = 0; j < matrix->cols; ++j)
        for (size_t i = 0; i < matrix->rows; ++i) {
            size_t at = i + matrix->ld * j;
            packed[i + matrix->rows * j] = matrix->dtype == STATGPU_DTYPE_FLOAT32 ? (double)((const float *)source)[at]
                                                                                  : ((const double *)source)[at];
        }
    free(staged);
    out->data = out->owned = packed;
    out->ld = matrix->rows;
    return STATGPU_OK;
}

statgpu_status sg_vector_host_doubles(statgpu_context *context, const statgpu_vector *vector, const char *what,
                                      sg_host_doubles *out)
{
    if (vector == NULL) {
        memset(out, 0, sizeof *out);
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%s is NULL", what);
    }
    statgpu_matrix column = { vector->data, vector->count, 1, vector->count, vector->dtype, vector->memory };
    return sg_matrix_host_doubles(context, &column, what, out);
}

/* ------------------------------------------------------------ finiteness */

/* Rows per block of the scan: 65,536 doubles, 512 KB of a column. */
#define SG_FINITE_BLOCK_ROWS ((size_t)1 << 16)

typedef struct sg_finite_scan {
    const double         *data;
    size_t                rows, ld, row_blocks;
    atomic_bool           bad;
    bool                  measure;        /* also the largest magnitude */
    _Atomic uint_least64_t largest_bits;  /* of a value >= 0: its bits order as it does */
} sg_finite_scan;

static void sg_finite_block(void *context, size_t task, int slot)
{
    (void)slot;
    sg_finite_scan *scan = context;
    const size_t column = task / scan->row_blocks, begin = task % scan->row_blocks * SG_FINITE_BLOCK_ROWS;
    const size_t end = begin + SG_FINITE_BLOCK_ROWS < scan->rows ? begin + SG_FINITE_BLOCK_ROWS : scan->rows;
    const double *values = scan->data + scan->ld * column;
    double sum = 0.0;  /* x * 0 is 0 for every finite x and NaN for the rest: a loop without branches */
    for (size_t i = begin; i < end; ++i)
        sum += values[i] * 0.0;
    if (sum != 0.0)
        atomic_store_explicit(&scan->bad, true, memory_order_relaxed);
    if (!scan->measure || sum != 0.0)
        return;
    double largest = 0.0;
    for (size_t i = begin; i < end; ++i)
        largest = fabs(values[i]) > largest ? fabs(values[i]) : largest;
    uint_least64_t bits, seen = atomic_load_explicit(&scan->largest_bits, memory_order_relaxed);
    memcpy(&bits, &largest, sizeof bits);
    while (bits > seen && !atomic_compare_exchange_weak_explicit(&scan->largest_bits, &seen, bits,
                                                                 memory_order_relaxed, memory_order_relaxed)) {
    }
}

bool sg_columns_finite_largest(const double *data, size_t rows, size_t columns, size_t ld, int thread_count,
                               double *largest)
{
    if (largest != NULL)
        *largest = 0.0;
    if (rows == 0 || columns == 0)
        return true;
    sg_finite_scan scan = { data, rows, ld, (rows + SG_FINITE_BLOCK_ROWS - 1) / SG_FINITE_BLOCK_ROWS, false,
                            largest != NULL, 0 };
    const size_t tasks = columns * scan.row_blocks;
    sg_parallel_for(sg_threads_for(thread_count > 0 ? thread_count : 1, tasks, (double)rows * (double)columns),
                    tasks, sg_finite_block, &scan);
    if (largest != NULL) {
        const uint_least64_t bits = atomic_load_explicit(&scan.largest_bits, memory_order_relaxed);
        memcpy(largest, &bits, sizeof *largest);
    }
    return !atomic_load_explicit(&scan.bad, memory_order_relaxed);
}

bool sg_columns_finite(const double *data, size_t rows, size_t columns, size_t ld, int thread_count)
{
    return sg_columns_finite_largest(data, rows, columns, ld, thread_count, NULL);
}
