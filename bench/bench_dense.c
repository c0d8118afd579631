/*
 * bench_dense.c: the engine's dense linear algebra (engine/src/math/dense.c)
 * against LAPACK at the sizes LTS uses: the Householder QR of one 2048-row
 * chunk of the least squares, and the normal equations of a C-step (p x p).
 * Built and run by bench/bench_dense.sh, once against reference LAPACK and
 * BLAS linked statically (what statgpu could ship in statgpu.oxt: 60 KB, plus
 * libgfortran) and once against OpenBLAS where installed. Figures in
 * bench/NOTES.md.
 */
#define _GNU_SOURCE
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "math/dense.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median_of(double *v, int n) { qsort(v, n, sizeof *v, cmp); return v[n / 2]; }
int main(void)
{
    const int widths[] = { 3, 6, 11, 21 };
    printf("QR of one 2048-row chunk (width = p + 1), median of 201, microseconds\n");
    printf("%6s %12s %12s\n", "width", "statgpu", "dgeqrf");
    for (int w = 0; w < 4; ++w) {
        int width = widths[w], rows = 2048;
        double *a = malloc(rows * width * sizeof *a), *b = malloc(rows * width * sizeof *b), tau[64];
        srand(1);
        for (int i = 0; i < rows * width; ++i) a[i] = rand() / (double)RAND_MAX - 0.5;
        double t1[201], t2[201];
        for (int r = 0; r < 201; ++r) {
            memcpy(b, a, rows * width * sizeof *a);
            double s = now(); sg_qr_reduce(b, rows, width, rows); t1[r] = now() - s;
            memcpy(b, a, rows * width * sizeof *a);
            s = now(); LAPACKE_dgeqrf(LAPACK_COL_MAJOR, rows, width, b, rows, tau); t2[r] = now() - s;
        }
        printf("%6d %12.1f %12.1f\n", width, 1e6 * median_of(t1, 201), 1e6 * median_of(t2, 201));
        free(a); free(b);
    }
    printf("Normal equations p x p (Cholesky and two solves), median of 2001, microseconds\n");
    printf("%6s %12s %12s\n", "p", "statgpu", "dposv");
    for (int w = 0; w < 4; ++w) {
        int p = widths[w] - 1 > 0 ? widths[w] - 1 : 1;
        double *x = malloc(100 * p * sizeof *x), *g = calloc(p * p, sizeof *g), *g2 = malloc(p * p * sizeof *g), xty[64], c1[64], c2[64], work[64 * 64];
        for (int i = 0; i < 100 * p; ++i) x[i] = rand() / (double)RAND_MAX - 0.5;
        for (int i = 0; i < p; ++i) for (int j = 0; j < p; ++j) for (int r = 0; r < 100; ++r) g[i + p * j] += x[r + 100 * i] * x[r + 100 * j];
        for (int i = 0; i < p; ++i) xty[i] = i + 1;
        double t1[2001], t2[2001];
        for (int r = 0; r < 2001; ++r) {
            double s = now(); sg_solve_normal_equations(g, xty, p, 1e-12, 1e50, work, c1); t1[r] = now() - s;
            memcpy(g2, g, p * p * sizeof *g); memcpy(c2, xty, p * sizeof *c2);
            s = now(); LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', p, 1, g2, p, c2, p); t2[r] = now() - s;
        }
        double worst = 0; for (int i = 0; i < p; ++i) worst = fmax(worst, fabs(c1[i] - c2[i]) / fabs(c2[i]));
        printf("%6d %12.2f %12.2f   (largest relative difference %.1e)\n", p, 1e6 * median_of(t1, 2001), 1e6 * median_of(t2, 2001), worst);
        free(x); free(g); free(g2);
    }
    return 0;
}
