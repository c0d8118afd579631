/*
 * bench_kmeans_screen.c: k-means' product-form screen
 * (engine/src/methods/kmeans_screen.c) on one tile of rows, with each of its
 * kernels, against BLAS's dgemm computing the same scores' matrix product
 * (tile rows x n_vars times n_vars x k), the step a BLAS-based assignment
 * (scikit-learn's) starts with. Built and run by bench/bench_kmeans_screen.sh,
 * once against reference BLAS (what statgpu could ship in statgpu.oxt) and
 * once against OpenBLAS where installed. Figures in bench/NOTES.md and in
 * kmeans_screen.c.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "bench_timing.h"
#include "methods/kmeans_screen.h"

void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *b, const int *ldb, const double *beta, double *c,
            const int *ldc);

#define REPEATS 201
#define CALLS 200  /* tiles per timed repeat */

int main(void)
{
    const size_t shapes[][2] = { { 16, 16 }, { 16, 64 }, { 8, 8 }, { 4, 3 } };  /* n_vars, k */
    const char *names[] = { "scalar", "SSE2", "AVX2+FMA" };
    const int rows = (int)SG_SCREEN_TILE_ROWS;
    printf("one tile of %d rows, microseconds, median of %d\n", rows, REPEATS);
    printf("%6s %4s %10s %10s %10s %10s\n", "n_vars", "k", names[0], names[1], names[2], "dgemm");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        size_t d = shapes[s][0], k = shapes[s][1];
        double *data = malloc(rows * d * sizeof *data), *centroids = malloc(k * d * sizeof *centroids);
        double *product = malloc(rows * k * sizeof *product);
        double *scratch = aligned_alloc(32, sg_kmeans_screen_scratch_count(d) * sizeof *scratch);
        int32_t nearest[SG_SCREEN_TILE_ROWS];
        bool certain[SG_SCREEN_TILE_ROWS];
        srand(1);
        for (size_t i = 0; i < rows * d; ++i)
            data[i] = rand() / (double)RAND_MAX - 0.5;
        for (size_t i = 0; i < k * d; ++i)
            centroids[i] = rand() / (double)RAND_MAX - 0.5;
        sg_kmeans_screen screen;
        sg_kmeans_screen_create(&screen, k, d);
        sg_kmeans_screen_prepare(&screen, centroids);
        sg_screen_kernel best = screen.kernel;
        double figures[4], times[REPEATS];
        for (int kernel = 0; kernel < 3; ++kernel) {
            figures[kernel] = -1.0;
            if (kernel > (int)best)
                continue;
            screen.kernel = (sg_screen_kernel)kernel;
            for (int r = 0; r < REPEATS; ++r) {
                double start = bench_now();
                for (int c = 0; c < CALLS; ++c)
                    sg_kmeans_screen_rows(&screen, data, (size_t)rows, (size_t)rows, scratch, nearest, certain);
                times[r] = (bench_now() - start) / CALLS;
            }
            figures[kernel] = 1e6 * bench_median(times, REPEATS);
        }
        int m = rows, n = (int)k, inner = (int)d;
        double alpha = -2.0, beta = 0.0;
        for (int r = 0; r < REPEATS; ++r) {
            double start = bench_now();
            for (int c = 0; c < CALLS; ++c)
                dgemm_("N", "N", &m, &n, &inner, &alpha, data, &m, centroids, &inner, &beta, product, &m);
            times[r] = (bench_now() - start) / CALLS;
        }
        figures[3] = 1e6 * bench_median(times, REPEATS);
        printf("%6zu %4zu", d, k);
        for (int f = 0; f < 4; ++f) {
            if (figures[f] < 0)
                printf(" %10s", "-");  /* a kernel this processor lacks */
            else
                printf(" %10.2f", figures[f]);
        }
        printf("\n");
        sg_kmeans_screen_destroy(&screen);
        free(data), free(centroids), free(product), free(scratch);
    }
    return 0;
}
