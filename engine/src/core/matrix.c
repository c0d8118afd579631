/*
 * matrix.c: matrix and vector arguments as host doubles (see matrix.h).
 */
#include "core/matrix.h"

#include "internal.h"

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
