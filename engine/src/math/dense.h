/*
 * dense.h: dense linear algebra shared by the methods, on column-major
 * double matrices: Householder QR that drops dependent columns as R's
 * lm.fit does, least squares on a subset of rows in independent chunks (the
 * same bits at any thread count), and a Cholesky solve of normal equations.
 *
 * Written here, not taken from LAPACK, because at the sizes the methods use
 * they are faster than the LAPACK statgpu.oxt could carry (bench/bench_dense.sh,
 * 2-core machine, microseconds, median): the QR of a 2048-row chunk of width
 * 3 / 6 / 11 / 21 takes 8.1 / 30 / 100 / 357 here, 11.0 / 35.5 / 107 / 364 with
 * reference LAPACK and BLAS linked statically (60 KB, plus libgfortran); the
 * normal equations of p = 2 / 5 / 10 / 20 take 0.05 / 0.11 / 0.26 / 0.87 here,
 * 0.13 / 0.31 / 0.67 / 1.87 with dposv, which also cannot drop a dependent
 * column. OpenBLAS's dgeqrf is faster for wide chunks (6.9 / 17 / 42 / 120) but
 * a static OpenBLAS adds 26 MB to the engine, and the chunk QRs of a fit run in
 * parallel already; dposv there is still slower (0.15 / 0.25 / 0.45 / 0.99).
 * Where a method needs factorisations of larger matrices (a Gaussian
 * mixture's covariances), the case for LAPACK is to be measured again.
 */
#ifndef STATGPU_MATH_DENSE_H
#define STATGPU_MATH_DENSE_H

#include <stdbool.h>
#include <stddef.h>

/* Householder QR with dependent columns dropped, in place on a (rows x
 * cols+1, leading dimension lda): the last column is the right-hand side. A
 * column whose remaining norm is at most tolerance times norms[j] (its norm
 * in the original problem; computed here when NULL) depends on the kept ones
 * before it: its coefficient is 0, as R's lm.fit gives NA. Writes coef (cols)
 * and kept (cols) and returns the number of kept columns. */
size_t sg_qr_solve(double *a, size_t rows, size_t cols, size_t lda, double tolerance, const double *norms,
                   double *coef, bool *kept);

/* Reduces a (rows x width, leading dimension lda) to its R factor in place
 * by Householder reflections: the upper triangle of the first width rows. */
void sg_qr_reduce(double *a, size_t rows, size_t width, size_t lda);

/* The R factor (width x width, upper triangle, zeros below) of the matrix
 * whose column v holds (columns[v][row] - shift[v]) * scale[v] over the
 * listed rows (NULL: rows 0 .. row_count-1); a NULL column is a column of
 * ones, NULL shift or scale mean 0 and 1. The rows are cut into fixed
 * chunks, each reduced by Householder QR on its own (in parallel), and the
 * factors folded in chunk order: the same bits at any thread count. False
 * when out of memory. */
bool sg_qr_factor_columns(const double *const *columns, const double *shift, const double *scale, size_t width,
                          const size_t *rows, size_t row_count, int thread_count, double *r /* out */);

/* The inverse (size x size, leading dimension size, zeros below the
 * diagonal) of the upper triangle of r (leading dimension ldr), whose
 * diagonal has no zero. */
void sg_upper_inverse(const double *r, size_t ldr, size_t size, double *inverse /* out */);

/* Least squares of y on the p columns of x (n rows, leading dimension n) over
 * the given rows (NULL: rows 0 .. row_count-1), with sg_qr_solve's rule for
 * dependent columns at tolerance. The rows are cut into fixed chunks, each
 * reduced to its R factor on its own (in parallel), and the factors folded in
 * chunk order: the same bits at any thread count. Writes coef (p), kept (p)
 * and, when rss is not NULL, the residual sum of squares. Returns the rank,
 * or (size_t)-1 when out of memory. */
size_t sg_least_squares_rows(const double *x, const double *y, size_t n, size_t p, const size_t *rows,
                             size_t row_count, double tolerance, int thread_count, double *coef, bool *kept,
                             double *rss);

/* Solves gram coef = xty (p x p, symmetric) by Cholesky, dropping a column
 * whose pivot falls to pivot_tolerance of its diagonal: the least-squares
 * solution on the independent columns. work holds p*p. Returns false when a
 * coefficient is not finite or exceeds max_coefficient in magnitude. */
bool sg_solve_normal_equations(const double *gram, const double *xty, size_t p, double pivot_tolerance,
                               double max_coefficient, double *work, double *coef);

#endif
