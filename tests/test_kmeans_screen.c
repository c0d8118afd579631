/*
 * test_kmeans_screen.c: k-means' product-form screen
 * (engine/src/methods/kmeans_screen.c, compiled in) against the exact
 * difference form, and whole k-means fits on data made to break it against
 * the brute-force Lloyd of test_kmeans_lloyd.h, bit for bit.
 *
 * The screen's promise: a row it calls certain has, by the exact form
 * sum_v (x_v - c_v)^2 computed in that order, a unique nearest centroid, and
 * it is the one the screen chose. Checked with every kernel this processor
 * runs on rows equidistant to two centroids to the last bit, one ulp off
 * such ties, integer grids full of ties, duplicate centroids, data at 1e8
 * with a small spread (where ||x||^2 - 2 x.c + ||c||^2 cancels), a centroid
 * far from the rest, and magnitudes whose squares overflow. Through the
 * public API the same data must give the brute force's labels, centroids,
 * cluster sizes, within sums of squares and inertia to the bit, at any
 * thread count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "methods/kmeans_screen.h"
#include "statgpu.h"
#include "test_kmeans_lloyd.h"
#include "test_support.h"

/* ------------------------------------------------------- the exact form */

/* Row i's nearest centroid by the difference form (the lower index on a
 * tie); *tied says whether another centroid is exactly as near. */
static int32_t exact_nearest(const double *data, size_t ld, size_t d, const double *centroids, size_t k, size_t i,
                             bool *tied)
{
    double best = INFINITY;
    int32_t label = 0;
    *tied = false;
    for (size_t j = 0; j < k; ++j) {
        double distance = 0.0;
        for (size_t v = 0; v < d; ++v) {
            double difference = data[i + ld * v] - centroids[j + k * v];
            distance += difference * difference;
        }
        if (distance < best) {
            best = distance;
            label = (int32_t)j;
            *tied = false;
        } else if (distance == best) {
            *tied = true;
        }
    }
    return label;
}

/* Screens rows 0 .. n-1 (leading dimension ld) tile by tile with every
 * kernel this processor runs and checks the promise; a row with an exact
 * tie must never be certain. Returns the smallest share of certain rows. */
static double check_screen(const double *data, size_t n, size_t ld, size_t d, const double *centroids, size_t k,
                           const char *what)
{
    sg_kmeans_screen screen;
    assert_true(sg_kmeans_screen_create(&screen, k, d));
    sg_kmeans_screen_prepare(&screen, centroids);
    double *scratch = aligned_alloc(32, sg_kmeans_screen_scratch_count(d) * sizeof *scratch);
    int32_t *exact = malloc(n * sizeof *exact);
    bool *tied = malloc(n * sizeof *tied);
    for (size_t i = 0; i < n; ++i)
        exact[i] = exact_nearest(data, ld, d, centroids, k, i, &tied[i]);
    double share = 1.0;
    for (int kernel = SG_SCREEN_SCALAR; kernel <= (int)sg_kmeans_screen_best_kernel(); ++kernel) {
        screen.kernel = (sg_screen_kernel)kernel;
        size_t certain_count = 0;
        for (size_t tile = 0; tile < n; tile += SG_SCREEN_TILE_ROWS) {
            size_t rows = n - tile < SG_SCREEN_TILE_ROWS ? n - tile : SG_SCREEN_TILE_ROWS;
            int32_t nearest[SG_SCREEN_TILE_ROWS];
            bool certain[SG_SCREEN_TILE_ROWS];
            sg_kmeans_screen_rows(&screen, data + tile, ld, rows, scratch, nearest, certain);
            for (size_t r = 0; r < rows; ++r) {
                size_t i = tile + r;
                if (nearest[r] < 0 || (size_t)nearest[r] >= k)
                    fail_msg("%s, kernel %d: row %zu screened to centroid %d of %zu", what, kernel, i, nearest[r], k);
                if (!certain[r])
                    continue;
                ++certain_count;
                if (tied[i])
                    fail_msg("%s, kernel %d: row %zu is certain of centroid %d, but the exact form ties", what,
                             kernel, i, nearest[r]);
                if (nearest[r] != exact[i])
                    fail_msg("%s, kernel %d: row %zu is certain of centroid %d, the exact form says %d", what,
                             kernel, i, nearest[r], exact[i]);
            }
        }
        double kernel_share = (double)certain_count / (double)n;
        share = kernel_share < share ? kernel_share : share;
    }
    free(exact), free(tied), free(scratch);
    sg_kmeans_screen_destroy(&screen);
    return share;
}

/* n x d normal rows around offset (spread apart), leading dimension ld. */
static double *make_rows(size_t n, size_t d, size_t ld, double offset, double spread, test_rng *rng)
{
    double *data = malloc(ld * d * sizeof *data);
    for (size_t v = 0; v < d; ++v)
        for (size_t i = 0; i < ld; ++i)
            data[i + ld * v] = offset + spread * test_rng_normal(rng);
    return data;
}

/* k distinct rows (k <= n) as centroids (k x d, leading dimension k). */
static double *centroids_from_rows(const double *data, size_t n, size_t ld, size_t d, size_t k, test_rng *rng)
{
    double *centroids = malloc(k * d * sizeof *centroids);
    size_t *rows = malloc(k * sizeof *rows);
    for (size_t j = 0; j < k; ++j) {
        size_t row;
        bool fresh;
        do {
            row = test_rng_next(rng) % n;
            fresh = true;
            for (size_t other = 0; other < j; ++other)
                fresh = fresh && rows[other] != row;
        } while (!fresh);
        rows[j] = row;
        for (size_t v = 0; v < d; ++v)
            centroids[j + k * v] = data[row + ld * v];
    }
    free(rows);
    return centroids;
}

/* Rows as make_rows (ld = n) and k distinct of them as centroids. */
static double *make_problem(size_t n, size_t d, size_t k, double offset, double spread, test_rng *rng,
                            double **centroids)
{
    double *data = make_rows(n, d, n, offset, spread, rng);
    *centroids = centroids_from_rows(data, n, n, d, k, rng);
    return data;
}

/* ------------------------------------------------------------ the screen */

static void test_screen_on_ordinary_data(void **state)
{
    (void)state;
    test_rng rng = { 11 };
    const size_t dims[] = { 1, 2, 3, 5, 8, 16, 17, 40 };
    const size_t ks[] = { 1, 2, 3, 4, 5, 7, 16, 63, 64, 65 };
    for (size_t a = 0; a < sizeof dims / sizeof *dims; ++a)
        for (size_t b = 0; b < sizeof ks / sizeof *ks; ++b) {
            size_t d = dims[a], k = ks[b], n = 500 + test_rng_next(&rng) % 300, ld = n + 3;
            double *data = make_rows(n, d, ld, 0.0, 1.0, &rng);
            double *centroids = centroids_from_rows(data, n, ld, d, k, &rng);
            char what[64];
            snprintf(what, sizeof what, "d=%zu k=%zu", d, k);
            double share = check_screen(data, n, ld, d, centroids, k, what);
            if (share < 0.9)  /* distinct random centroids leave few rows in doubt */
                fail_msg("%s: only %.3f of the rows certain", what, share);
            free(data), free(centroids);
        }
}

/* Rows halfway between two centroids, exactly (dyadic values: every
 * difference and square is exact) and one ulp to either side. */
static void test_screen_on_last_bit_ties(void **state)
{
    (void)state;
    const size_t d = 3, k = 5, n = 600;
    double centroids[5 * 3];
    double *data = malloc(n * d * sizeof *data);
    test_rng rng = { 5 };
    for (int round = 0; round < 20; ++round) {
        for (size_t j = 0; j < k; ++j)
            for (size_t v = 0; v < d; ++v)
                centroids[j + k * v] = (double)(int)(test_rng_next(&rng) % 64) * 0.25 + 1.0;
        for (size_t i = 0; i < n; ++i) {
            size_t a = test_rng_next(&rng) % k, b = test_rng_next(&rng) % k;
            for (size_t v = 0; v < d; ++v) {
                double middle = 0.5 * (centroids[a + k * v] + centroids[b + k * v]);
                switch (i % 3) {
                case 0: data[i + n * v] = middle; break;
                case 1: data[i + n * v] = nextafter(middle, INFINITY); break;
                default: data[i + n * v] = nextafter(middle, -INFINITY); break;
                }
            }
        }
        check_screen(data, n, n, d, centroids, k, "last-bit ties");
    }
    free(data);
}

/* Integers 0..4 against centroids on the half-integer grid: ties everywhere. */
/* n x d integers 0..4 and k x d centroids on the half-integer grid 0..4. */
static double *make_integer_grid(size_t n, size_t d, size_t k, test_rng *rng, double **centroids)
{
    double *data = malloc(n * d * sizeof *data);
    *centroids = malloc(k * d * sizeof **centroids);
    for (size_t i = 0; i < n * d; ++i)
        data[i] = (double)(test_rng_next(rng) % 5);
    for (size_t c = 0; c < k * d; ++c)
        (*centroids)[c] = 0.5 * (double)(test_rng_next(rng) % 9);
    return data;
}

static void test_screen_on_integer_grid(void **state)
{
    (void)state;
    test_rng rng = { 6 };
    for (size_t d = 1; d <= 6; ++d) {
        size_t n = 1000, k = 9;
        double *centroids, *data = make_integer_grid(n, d, k, &rng, &centroids);
        check_screen(data, n, n, d, centroids, k, "integer grid");
        free(data), free(centroids);
    }
}

/* Centroid `from` copied over centroid `to`. */
static void copy_centroid(double *centroids, size_t k, size_t d, size_t from, size_t to)
{
    for (size_t v = 0; v < d; ++v)
        centroids[to + k * v] = centroids[from + k * v];
}

static void test_screen_on_duplicate_centroids(void **state)
{
    (void)state;
    test_rng rng = { 7 };
    size_t n = 700, d = 4, k = 8;
    double *centroids, *data = make_problem(n, d, k, 0.0, 1.0, &rng, &centroids);
    copy_centroid(centroids, k, d, 3, 6);
    check_screen(data, n, n, d, centroids, k, "duplicate centroids");
    for (size_t j = 1; j < k; ++j)  /* all the same: every row ties */
        copy_centroid(centroids, k, d, 0, j);
    assert_true(check_screen(data, n, n, d, centroids, k, "identical centroids") == 0.0);
    free(data), free(centroids);
}

/* Data at 1e8 with a spread of 1 (and of 1e-6, a few dozen ulps): the
 * product form on unshifted data cancels every digit of the distances;
 * shifted by the centroids' mean most rows are decided. */
static void test_screen_on_large_offsets(void **state)
{
    (void)state;
    test_rng rng = { 8 };
    const double spreads[] = { 1.0, 1e-3, 1e-6 };
    for (size_t s = 0; s < 3; ++s) {
        size_t n = 900, d = 6, k = 12;
        double *centroids, *data = make_problem(n, d, k, 1e8, spreads[s], &rng, &centroids);
        double share = check_screen(data, n, n, d, centroids, k, "offset 1e8");
        if (s < 2 && share < 0.9)
            fail_msg("offset 1e8, spread %g: only %.3f of the rows certain", spreads[s], share);
        free(data), free(centroids);
    }
}

/* A centroid far from the rest widens every row's bound; magnitudes near
 * 1e160 square beyond the largest double: no row may be certain there. */
static void test_screen_on_far_centroids_and_overflow(void **state)
{
    (void)state;
    test_rng rng = { 9 };
    size_t n = 400, d = 3, k = 6;
    double *centroids, *data = make_problem(n, d, k, 0.0, 1.0, &rng, &centroids);
    for (size_t v = 0; v < d; ++v)
        centroids[5 + k * v] = 1e12;
    check_screen(data, n, n, d, centroids, k, "a far centroid");
    for (size_t i = 0; i < n * d; ++i)
        data[i] *= 1e160;
    for (size_t c = 0; c < k * d; ++c)
        centroids[c] = c % k == 5 ? 1e160 : centroids[c] * 1e160;
    assert_true(check_screen(data, n, n, d, centroids, k, "magnitudes near 1e160") == 0.0);
    free(data), free(centroids);
}

/* ------------------------------------------------ whole fits, bit for bit */

static statgpu_kmeans_result *fit_given(int thread_count, const double *data, size_t n, size_t d, size_t k,
                                        const double *initial, size_t max_iterations)
{
    statgpu_context *context = NULL;
    TEST_CONTEXT_WITH_THREADS(STATGPU_BACKEND_CPU, thread_count, context);
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.init = STATGPU_KMEANS_INIT_GIVEN;
    params.initial_centroids = initial;
    params.max_iterations = max_iterations;
    params.tolerance = 0.0;
    statgpu_kmeans_result *result = NULL;
    statgpu_status status = statgpu_kmeans(context, data, n, d, n, k, &params, &result);
    if (status != STATGPU_OK)
        fail_msg("statgpu_kmeans: %s (%s)", statgpu_status_string(status), statgpu_context_last_error(context));
    statgpu_context_destroy(context);
    return result;
}

/* Labels equal to the brute force's; where all rows are one block of the
 * engine's sums (n <= 1024), centroids, sizes, within sums of squares and
 * inertia equal to the bit too. */
static void assert_fit_is_exact(const statgpu_kmeans_result *result, const double *data, const double *initial,
                                size_t max_iterations, const char *what)
{
    size_t n = result->n_obs, d = result->n_vars, k = result->k;
    reference_fit expected = reference_lloyd(data, n, d, k, initial, max_iterations, 0.0);
    for (size_t i = 0; i < n; ++i)
        if (result->labels[i] != expected.labels[i])
            fail_msg("%s: observation %zu has label %d, the exact form %d", what, i, result->labels[i],
                     expected.labels[i]);
    assert_int_equal(result->iterations, expected.iterations);
    assert_int_equal(result->reseed_count, expected.reseeds);
    if (n <= 1024) {
        assert_memory_equal(result->centroids, expected.centroids, k * d * sizeof(double));
        assert_true(test_same_bits(result->inertia, expected.inertia));
        double *within = calloc(k, sizeof *within);
        for (size_t i = 0; i < n; ++i)
            within[expected.labels[i]] += row_distance(data, n, d, i, expected.centroids, k,
                                                       (size_t)expected.labels[i]);
        assert_memory_equal(result->within_ss, within, k * sizeof *within);
        free(within);
    }
    for (size_t j = 0; j < k; ++j)
        assert_int_equal(result->cluster_sizes[j], expected.sizes[j]);
    reference_free(&expected);
}

/* Every fit at 1, 2 and 3 threads: the same bits, and exact. */
static void check_fits(const double *data, size_t n, size_t d, size_t k, const double *initial,
                       size_t max_iterations, const char *what)
{
    statgpu_kmeans_result *first = fit_given(1, data, n, d, k, initial, max_iterations);
    assert_fit_is_exact(first, data, initial, max_iterations, what);
    for (int threads = 2; threads <= 3; ++threads) {
        statgpu_kmeans_result *other = fit_given(threads, data, n, d, k, initial, max_iterations);
        assert_memory_equal(other->labels, first->labels, n * sizeof *first->labels);
        assert_memory_equal(other->centroids, first->centroids, k * d * sizeof(double));
        assert_memory_equal(other->within_ss, first->within_ss, k * sizeof(double));
        assert_true(test_same_bits(other->inertia, first->inertia));
        statgpu_kmeans_result_destroy(other);
    }
    statgpu_kmeans_result_destroy(first);
}

static void test_fits_on_ties_and_offsets(void **state)
{
    (void)state;
    test_rng rng = { 12 };
    for (int round = 0; round < 4; ++round) {
        size_t n = round % 2 ? 5000 : 1000, d = 2 + (size_t)round, k = 7;
        /* An integer grid, from centroids on the half-integer grid with a duplicate. */
        double *initial, *data = make_integer_grid(n, d, k, &rng, &initial);
        copy_centroid(initial, k, d, 1, 4);
        check_fits(data, n, d, k, initial, 20, "integer grid");
        free(data);
        /* 1e8 plus blobs of spread 1. */
        data = make_rows(n, d, n, 1e8, 1.0, &rng);
        for (size_t i = 0; i < n; ++i)
            data[i] += (double)(i % 3) * 4.0;
        free(initial);
        initial = centroids_from_rows(data, n, n, d, k, &rng);
        check_fits(data, n, d, k, initial, 30, "offset 1e8");
        free(data), free(initial);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_screen_on_ordinary_data),
        cmocka_unit_test(test_screen_on_last_bit_ties),
        cmocka_unit_test(test_screen_on_integer_grid),
        cmocka_unit_test(test_screen_on_duplicate_centroids),
        cmocka_unit_test(test_screen_on_large_offsets),
        cmocka_unit_test(test_screen_on_far_centroids_and_overflow),
        cmocka_unit_test(test_fits_on_ties_and_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
