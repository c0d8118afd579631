/*
 * matrix.h: statgpu_vector and statgpu_matrix arguments as host doubles, for
 * the methods whose CPU and CUDA paths read host doubles.
 */
#ifndef STATGPU_CORE_MATRIX_H
#define STATGPU_CORE_MATRIX_H

#include "statgpu.h"

#include <stdbool.h>
#include <stddef.h>

/* A matrix or vector as host doubles: data points at the caller's own
 * numbers when they are host float64, else at owned (a widened or copied
 * version, to free). */
typedef struct sg_host_doubles {
    const double *data;
    size_t        ld;     /* leading dimension of data */
    double       *owned;  /* NULL, or what data points at */
} sg_host_doubles;

/* Checks matrix (what names it in messages: "data", "x") and gives its
 * values as host doubles. On failure the context's last error says why:
 * STATGPU_ERROR_INVALID_ARGUMENT for a NULL or inconsistent description,
 * STATGPU_ERROR_EMPTY_INPUT for no rows, STATGPU_ERROR_BACKEND for device data
 * where CUDA cannot run, STATGPU_ERROR_OUT_OF_MEMORY. */
statgpu_status sg_matrix_host_doubles(statgpu_context *context, const statgpu_matrix *matrix, const char *what,
                                      sg_host_doubles *out);

/* The same for a vector (one column). */
statgpu_status sg_vector_host_doubles(statgpu_context *context, const statgpu_vector *vector, const char *what,
                                      sg_host_doubles *out);

/* True when every value of the rows x columns block (column-major, leading
 * dimension ld) is finite: blocks of rows of each column on up to
 * thread_count of the engine's threads. A caller that needs the first bad
 * value looks for it after a false, on the rare failing call. */
bool sg_columns_finite(const double *data, size_t rows, size_t columns, size_t ld, int thread_count);

/* The same, and in the same pass, where largest is not NULL and the values
 * are finite, their largest magnitude into *largest (0 otherwise). */
bool sg_columns_finite_largest(const double *data, size_t rows, size_t columns, size_t ld, int thread_count,
                               double *largest);

#endif
