/*
 * lts.h: least trimmed squares' C-step primitive on the CPU (lts_cpu.c);
 * lts.c drives it, and the CUDA module's lts table evaluates the same.
 */
#ifndef STATGPU_METHODS_LTS_H
#define STATGPU_METHODS_LTS_H

#include "statgpu.h"

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

#endif
