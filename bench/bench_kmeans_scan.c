/*
 * bench_kmeans_scan.c: k-means' data check (sg_cpu_kmeans_scan in
 * engine/src/methods/kmeans_cpu.c, compiled in) alone, on n_obs x n_vars
 * doubles of offset + uniform noise of variance 1, at one thread count: the
 * median wall time of the repeats, and the total sum of squares and the mean
 * variance against a long double reference. Built and run by
 * bench/bench_kmeans_scan.sh, which can build an earlier kmeans_cpu.c beside
 * the current one. Figures in bench/NOTES.md (k-means, Host scan).
 *
 *   bench_kmeans_scan N_OBS N_VARS THREADS REPEATS [OFFSET]
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_timing.h"
#include "internal.h"

/* kmeans_cpu.c asks the context whether a long pass was cancelled; the scan
 * never does. */
bool sg_progress_cancelled(statgpu_context *context, double fraction_done)
{
    (void)context;
    (void)fraction_done;
    return false;
}

/* The sum of squared deviations of one column, in long double: the column
 * less its first value (exact where the data sit far from 0, which long
 * double alone would not make up for), around a mean corrected by the mean
 * of the deviations. */
static long double reference_squares(const double *column, size_t n)
{
    long double sum = 0.0L;
    for (size_t i = 0; i < n; ++i)
        sum += (long double)column[i] - column[0];
    long double mean = sum / n, shift = 0.0L, squares = 0.0L;
    for (size_t i = 0; i < n; ++i)
        shift += ((long double)column[i] - column[0]) - mean;
    mean += shift / n;
    shift = 0.0L;
    for (size_t i = 0; i < n; ++i) {
        long double deviation = ((long double)column[i] - column[0]) - mean;
        shift += deviation;
        squares += deviation * deviation;
    }
    return squares - shift * shift / n;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s N_OBS N_VARS THREADS REPEATS [OFFSET]\n", argv[0]);
        return 2;
    }
    size_t n = strtoull(argv[1], NULL, 10), d = strtoull(argv[2], NULL, 10);
    int threads = atoi(argv[3]), repeats = atoi(argv[4]);
    double offset = argc > 5 ? strtod(argv[5], NULL) : 0.0;
    double *data = malloc(n * d * sizeof *data);
    double *times = malloc((size_t)repeats * sizeof *times);
    if (data == NULL || times == NULL || repeats < 1)
        return 1;
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (size_t c = 0; c < n * d; ++c) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        data[c] = offset + (double)(c / n) + ((double)(state >> 11) * 0x1p-53 - 0.5) * sqrt(12.0);
    }

    sg_kmeans_problem problem = { data, n, d, n, 64, threads };
    sg_kmeans_workspace *workspace = sg_cpu_kmeans_workspace_create(&problem);
    if (workspace == NULL)
        return 1;
    sg_kmeans_scan scan;
    for (int r = 0; r < repeats; ++r) {
        double start = bench_now();
        sg_cpu_kmeans_scan(&problem, workspace, &scan);
        times[r] = bench_now() - start;
    }
    double median = bench_median(times, (size_t)repeats);

    long double total = 0.0L, variance_sum = 0.0L;
    for (size_t v = 0; v < d; ++v) {
        long double squares = reference_squares(data + n * v, n);
        total += squares;
        variance_sum += squares / n;
    }
    long double mean_variance = variance_sum / d;
    printf("%zu x %zu, offset %g, %d threads: median %.2f ms (min %.2f, max %.2f) of %d; "
           "total_ss %.17g (%.2g relative), mean_variance %.17g (%.2g relative)\n",
           n, d, offset, threads, 1e3 * median, 1e3 * times[0], 1e3 * times[repeats - 1], repeats,
           scan.total_ss, (double)((scan.total_ss - total) / total), scan.mean_variance,
           (double)((scan.mean_variance - mean_variance) / mean_variance));
    sg_cpu_kmeans_workspace_destroy(workspace);
    free(times);
    free(data);
    return 0;
}
