/*
 * test_kmeans_lloyd.h: the brute-force Lloyd that the k-means tests check
 * statgpu against, written from the definitions in statgpu.h: scikit-learn's
 * stopping rule and the documented re-seeding of empty clusters, on
 * column-major data (leading dimension n). It also records the smallest
 * relative gap between an observation's two nearest centroids at any
 * iteration, where rounding could pick either. Include after <cmocka.h>.
 */
#ifndef STATGPU_TEST_KMEANS_LLOYD_H
#define STATGPU_TEST_KMEANS_LLOYD_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct reference_fit {
    double *centroids;  /* k x d column-major, leading dimension k */
    int    *labels;
    size_t *sizes;
    double  inertia;
    size_t  iterations;
    int     converged;
    size_t  reseeds;
    double  min_gap;    /* smallest relative gap between a row's two nearest centroids, any iteration */
} reference_fit;

static inline double row_distance(const double *data, size_t n, size_t d, size_t i, const double *centres, size_t k,
                           size_t j)
{
    double sum = 0.0;
    for (size_t v = 0; v < d; ++v) {
        double difference = data[i + n * v] - centres[j + k * v];
        sum += difference * difference;
    }
    return sum;
}

/* Labels by the nearest centroid; the gap of each row's two nearest lowers *gap. */
static inline void reference_assign(const double *data, size_t n, size_t d, const double *centres, size_t k, int *labels,
                             double *gap)
{
    for (size_t i = 0; i < n; ++i) {
        double best = INFINITY, second = INFINITY;
        for (size_t j = 0; j < k; ++j) {
            double distance = row_distance(data, n, d, i, centres, k, j);
            if (distance < best) {
                second = best;
                best = distance;
                labels[i] = (int)j;
            } else if (distance < second) {
                second = distance;
            }
        }
        if (k > 1) {
            double relative = second > 0.0 ? (second - best) / second : 0.0;
            if (relative < *gap)
                *gap = relative;
        }
    }
}

static inline reference_fit reference_lloyd(const double *data, size_t n, size_t d, size_t k, const double *initial,
                                     size_t max_iterations, double tolerance)
{
    double variance_sum = 0.0;
    for (size_t v = 0; v < d; ++v) {
        double mean = 0.0, squares = 0.0;
        for (size_t i = 0; i < n; ++i)
            mean += data[i + n * v];
        mean /= (double)n;
        for (size_t i = 0; i < n; ++i)
            squares += (data[i + n * v] - mean) * (data[i + n * v] - mean);
        variance_sum += squares / (double)n;
    }
    double absolute_tolerance = tolerance * variance_sum / (double)d;

    reference_fit out = { malloc(k * d * sizeof(double)), malloc(n * sizeof(int)), calloc(k, sizeof(size_t)),
                          0.0, 0, 0, 0, INFINITY };
    double *centres = out.centroids, *fresh = malloc(k * d * sizeof *fresh), *sums = malloc(k * d * sizeof *sums);
    memcpy(centres, initial, k * d * sizeof *centres);
    int *labels = out.labels, *previous = malloc(n * sizeof *previous);
    double *distance = malloc(n * sizeof *distance);
    for (size_t i = 0; i < n; ++i)
        previous[i] = -1;
    int settled = 0;
    while (out.iterations < max_iterations) {
        reference_assign(data, n, d, centres, k, labels, &out.min_gap);
        ++out.iterations;
        size_t *sizes = out.sizes;
        memset(sizes, 0, k * sizeof *sizes);
        for (size_t i = 0; i < n; ++i)
            sizes[labels[i]]++;
        for (size_t i = 0; i < n; ++i)
            distance[i] = row_distance(data, n, d, i, centres, k, (size_t)labels[i]);
        for (size_t empty = 0; empty < k; ++empty) {
            if (sizes[empty] > 0)
                continue;
            size_t far = n;
            for (size_t i = 0; i < n; ++i)
                if (sizes[labels[i]] >= 2 && distance[i] > 0.0 && (far == n || distance[i] > distance[far]))
                    far = i;
            assert_true(far < n);
            sizes[labels[far]]--;
            labels[far] = (int)empty;
            sizes[empty] = 1;
            distance[far] = -1.0;
            out.reseeds++;
        }
        memset(sums, 0, k * d * sizeof *sums);
        for (size_t i = 0; i < n; ++i)
            for (size_t v = 0; v < d; ++v)
                sums[labels[i] + k * v] += data[i + n * v];
        double shift = 0.0;
        for (size_t j = 0; j < k; ++j)
            for (size_t v = 0; v < d; ++v) {
                fresh[j + k * v] = sums[j + k * v] / (double)sizes[j];
                double move = fresh[j + k * v] - centres[j + k * v];
                shift += move * move;
            }
        memcpy(centres, fresh, k * d * sizeof *fresh);
        if (memcmp(labels, previous, n * sizeof *labels) == 0) {
            settled = 1;
            out.converged = 1;
            break;
        }
        if (shift <= absolute_tolerance) {
            out.converged = 1;
            break;
        }
        memcpy(previous, labels, n * sizeof *labels);
    }
    if (!settled)
        reference_assign(data, n, d, centres, k, labels, &out.min_gap);
    memset(out.sizes, 0, k * sizeof *out.sizes);
    for (size_t i = 0; i < n; ++i) {
        out.sizes[labels[i]]++;
        out.inertia += row_distance(data, n, d, i, centres, k, (size_t)labels[i]);
    }
    free(fresh), free(sums), free(previous), free(distance);
    return out;
}

static inline void reference_free(reference_fit *fit_)
{
    free(fit_->centroids), free(fit_->labels), free(fit_->sizes);
}

#endif
