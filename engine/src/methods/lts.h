/*
 * lts.h: least trimmed squares' C-step primitive on the CPU (lts_cpu.c);
 * lts.c drives it, and the CUDA module's lts table evaluates the same.
 */
#ifndef STATGPU_METHODS_LTS_H
#define STATGPU_METHODS_LTS_H

#include "statgpu.h"

#include <stdbool.h>
#include <stdint.h>

/* The standardised problem the C-steps see: x is n x p column-major with
 * leading dimension n (the intercept's column of ones first when there is
 * one), y has n values. */
typedef struct sg_lts_problem {
    const double *x, *y;
    size_t        n, p;
    int           thread_count;
} sg_lts_problem;

/* The C-step primitive, the same on both backends: for each of m coefficient
 * vectors (column j at coef + p*j)
 *   r_i = y_i - sum_v x[i + n*v] coef[v + p*j]  for every row i,
 *   H_j = the h rows of smallest r_i^2: those below the h-th smallest, then
 *         those equal to it in row order until there are h,
 *   kth[j]       = the h-th smallest r_i^2,
 *   objective[j] = sum over H_j of r_i^2,
 *   gram         = X_H^T X_H, p x p, full, at gram + p*p*j,
 *   xty          = X_H^T y_H, p values at xty + p*j.
 * An output pointer that is NULL is not computed. 1 <= h <= n.
 * Returns STATGPU_OK or STATGPU_ERROR_OUT_OF_MEMORY. */
statgpu_status sg_cpu_lts_csteps(const sg_lts_problem *problem, size_t h, const double *coef, size_t m,
                                 double *kth, double *objective, double *gram, double *xty);

/* ------------------------------------------------------------------------
 * The passes over all the rows around the C-steps (lts_cpu.c), which run on
 * the CPU whichever backend runs the C-steps. Each is cut into fixed blocks
 * of rows, or runs one column per thread; a sum adds its blocks in block
 * order: the same bits at any thread count.
 */

/* Why a column cannot be standardised. */
typedef enum sg_lts_column_fault {
    SG_LTS_COLUMN_OK = 0,
    SG_LTS_COLUMN_CONSTANT,  /* a predictor beside an intercept takes one value (`value`) */
    SG_LTS_COLUMN_ZEROS,     /* a predictor without an intercept is all zeros */
    SG_LTS_COLUMN_TOO_FAR    /* row `row`, `value`, lies beyond SG_LTS_MAX_STANDARDISED scales */
} sg_lts_column_fault;

/* One column's standardisation: value = (source - location) / scale. */
typedef struct sg_lts_column {
    double              location, scale;
    statgpu_status      status;  /* STATGPU_OK, or STATGPU_ERROR_OUT_OF_MEMORY */
    sg_lts_column_fault fault;
    size_t              row;
    double              value;
} sg_lts_column;

/* Sampled values in sg_lts_median_window's estimate of where the middle lies. */
#define SG_LTS_MEDIAN_SAMPLE ((size_t)2048)

/* The median (R's: the mean of the middle two for an even n) of v_i =
 * |source_i - centre| where `absolute`, else source_i, in the selection's
 * order (IEEE total order, -0.0 before +0.0), on the calling thread: the
 * same bits as selecting over all n. The values between two order
 * statistics of sample_count of them (evenly spaced rows) are copied to
 * scratch (n doubles, overwritten) in one pass and the middle found among
 * them; where a middle value falls outside that window, the selection runs
 * over all of them. low and high, where not NULL, get the smallest and
 * largest v_i. Returns STATGPU_OK or STATGPU_ERROR_OUT_OF_MEMORY. No v_i
 * may be NaN. */
statgpu_status sg_lts_median_window(const double *source, size_t n, bool absolute, double centre, size_t sample_count,
                                    double *scratch, double *median, double *low, double *high);

/* Standardised values and coefficients beyond these are refused or dropped:
 * squares and sums of products then stay far from overflow. */
#define SG_LTS_MAX_STANDARDISED 1e100
#define SG_LTS_MAX_COEFFICIENT  1e50

/* The standardised copy of the data, one column per thread: predictor v
 * into z + n*(v + intercept) (the intercept's column of ones first), y into
 * zy. With an intercept a column is centred on its median and divided by
 * its median absolute deviation; without one only divided by the median of
 * its absolute values; a zero scale falls back to the mean absolute
 * deviation, then to 1. columns (n_vars + 1: the predictors, then y) gets
 * each column's location, scale and fault; a column with a fault or a
 * status stops there, and its part of z is unspecified. */
void sg_lts_standardise(const double *y, const double *x, size_t n, size_t n_vars, size_t ld, int intercept,
                        int thread_count, double *z /* out, n x (n_vars + intercept) */, double *zy /* out, n */,
                        sg_lts_column *columns /* out, n_vars + 1 */);

/* r_i = y_i - fit_i, fit_i = coef[0] (with an intercept) plus the sum over
 * v < n_vars of x[i + ld*v] coef[v + intercept], added in v order. Writes
 * residuals and squared (r_i^2) where not NULL. */
void sg_lts_residuals(const double *y, const double *x, size_t n, size_t n_vars, size_t ld, int intercept,
                      const double *coef, int thread_count, double *residuals, double *squared);

/* Of squared (n values, none NaN): the h-th smallest (kth), the sum of the
 * h smallest (rows below kth, then rows equal to it in row order until
 * there are h) and, when subset is not NULL, those rows ascending. Returns
 * STATGPU_OK or STATGPU_ERROR_OUT_OF_MEMORY. */
statgpu_status sg_lts_trimmed(const double *squared, size_t n, size_t h, int thread_count, double *kth,
                              double *sum, size_t *subset /* out, h, or NULL */);

/* Flags the rows that fit: weights[i] = |residuals[i] / scale| <= limit, or
 * |residuals[i]| <= limit where scale is 0. Lists the flagged rows ascending
 * in rows when it is not NULL and returns their count. Returns (size_t)-1
 * when out of memory. */
size_t sg_lts_flag_rows(const double *residuals, size_t n, double scale, double limit, int thread_count,
                        int32_t *weights /* out, n */, size_t *rows /* out, up to n, or NULL */);

/* The sum of residuals[i]^2 over the rows whose weight is not 0. */
double sg_lts_weighted_squares(const double *residuals, const int32_t *weights, size_t n, int thread_count);

#endif
