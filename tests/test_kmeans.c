/*
 * test_kmeans.c: k-means against a brute-force Lloyd (test_kmeans_lloyd.h) from the
 * definitions (same labels, centroids, iterations), the invariants (inertia is
 * the recomputed sum of squared distances, it never rises from one iteration
 * to the next), reproducibility (same seed, any thread count: same bits),
 * empty clusters, k-means++ and k-means|| on data with exactly k distinct
 * rows, progress and cancellation, and every bad input's status. The data
 * scan (sg_cpu_kmeans_scan, compiled in) is tested directly: its total sum of
 * squares and mean variance against long double on data far from 0, and the
 * first non-finite value it reports.
 *
 * With STATGPU_TEST_BACKEND=cuda the context asks for CUDA: every call must
 * then run on the GPU where CUDA is usable, and elsewhere on the CPU with the
 * backend report's note saying why. (tests/test_kmeans_cuda.c compares the
 * two backends.)
 */
#include <float.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "statgpu.h"
#include "test_support.h"
#include "test_kmeans_lloyd.h"

static statgpu_context *g_context;
static statgpu_backend  g_backend;

#define CPU_NOTE "ran on the CPU"

/* Every successful call ran on the backend asked for: a context that asked
 * for CUDA ran on the GPU where CUDA is usable, else on the CPU and was told
 * why; any other context ran on the CPU (these problems are below AUTO's GPU
 * threshold). */
static void assert_ran_as_asked(statgpu_context *context)
{
    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
    statgpu_backend expected = report.requested == STATGPU_BACKEND_CUDA && report.cuda_available
                                   ? STATGPU_BACKEND_CUDA : STATGPU_BACKEND_CPU;
    if (report.last_used != expected)
        fail_msg("k-means ran on %s, not %s: %s", statgpu_backend_name(report.last_used),
                 statgpu_backend_name(expected), report.note);
    if (report.requested == STATGPU_BACKEND_CUDA && expected == STATGPU_BACKEND_CPU
        && strstr(report.note, CPU_NOTE) == NULL)
        fail_msg("CUDA was asked for, and the note does not say k-means ran on the CPU: \"%s\"", report.note);
}

static statgpu_context *make_context(int thread_count, uint64_t seed)
{
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = g_backend;
    params.thread_count = thread_count;
    params.seed = seed;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    return context;
}

static statgpu_kmeans_result *fit(statgpu_context *context, const double *data, size_t n, size_t d, size_t ld,
                                  size_t k, const statgpu_kmeans_params *params)
{
    statgpu_kmeans_result *result = NULL;
    statgpu_status status = statgpu_kmeans(context, data, n, d, ld, k, params, &result);
    if (status != STATGPU_OK)
        fail_msg("statgpu_kmeans n=%zu d=%zu k=%zu: %s (%s)", n, d, k, statgpu_status_string(status),
                 statgpu_context_last_error(context));
    assert_non_null(result);
    assert_ran_as_asked(context);
    return result;
}

static int within_relative(double a, double b, double tolerance)
{
    return fabs(a - b) <= tolerance * fabs(b) || a == b;
}

/* Gaussian blobs of standard deviation 1, column-major with leading dimension
 * ld, around centres drawn uniformly within +-2 separation in every variable. */
static double *make_blobs(size_t n, size_t d, size_t ld, size_t blobs, double separation, uint64_t seed)
{
    double *data = malloc(ld * d * sizeof *data);
    test_rng rng = { seed };
    double *centres = malloc(blobs * d * sizeof *centres);
    for (size_t b = 0; b < blobs * d; ++b)
        centres[b] = separation * (test_rng_uniform(&rng) * 4.0 - 2.0);
    for (size_t i = 0; i < ld; ++i) {
        size_t blob = test_rng_next(&rng) % blobs;
        for (size_t v = 0; v < d; ++v)
            data[i + ld * v] = i < n ? centres[blob * d + v] + test_rng_normal(&rng) : NAN;  /* padding: never read */
    }
    free(centres);
    return data;
}

/* ----------------------------------------------- brute-force Lloyd */

/* The brute force of test_kmeans_lloyd.h on data with leading dimension ld
 * (copied to ld = n); its centroids are k x d column-major, ld k. */
static reference_fit reference_lloyd_ld(const double *data, size_t n, size_t d, size_t ld, size_t k,
                                        const double *initial /* k x d column-major, ld k */,
                                        size_t max_iterations, double tolerance)
{
    double *x = malloc(n * d * sizeof *x);
    for (size_t i = 0; i < n; ++i)
        for (size_t v = 0; v < d; ++v)
            x[i + n * v] = data[i + ld * v];
    reference_fit out = reference_lloyd(x, n, d, k, initial, max_iterations, tolerance);
    free(x);
    return out;
}

/* Compares a result with the brute force, to the tolerance of the brief:
 * same labels and iterations, centroids within 1e-12 relative. */
static void assert_matches_reference(const statgpu_kmeans_result *result, const reference_fit *expected,
                                     const char *what)
{
    size_t k = result->k, d = result->n_vars;
    for (size_t i = 0; i < result->n_obs; ++i)
        if (result->labels[i] != expected->labels[i])
            fail_msg("%s: observation %zu has label %d, the brute force %d", what, i, result->labels[i],
                     expected->labels[i]);
    for (size_t j = 0; j < k; ++j) {
        if (result->cluster_sizes[j] != expected->sizes[j])
            fail_msg("%s: cluster %zu has %zu observations, the brute force %zu", what, j,
                     result->cluster_sizes[j], expected->sizes[j]);
        for (size_t v = 0; v < d; ++v)
            if (!within_relative(result->centroids[j + k * v], expected->centroids[j + k * v], 1e-12))
                fail_msg("%s: centroid %zu variable %zu is %.17g, the brute force %.17g", what, j, v,
                         result->centroids[j + k * v], expected->centroids[j + k * v]);
    }
    if (result->iterations != expected->iterations || result->converged != expected->converged)
        fail_msg("%s: %zu iterations (converged %d), the brute force %zu (converged %d)", what, result->iterations,
                 result->converged, expected->iterations, expected->converged);
    if (result->reseed_count != expected->reseeds)
        fail_msg("%s: %zu re-seeds, the brute force %zu", what, result->reseed_count, expected->reseeds);
    if (!within_relative(result->inertia, expected->inertia, 1e-12))
        fail_msg("%s: inertia %.17g, the brute force %.17g", what, result->inertia, expected->inertia);
}

/* k distinct random rows of data as column-major initial centroids. */
static double *pick_rows(const double *data, size_t n, size_t d, size_t ld, size_t k, test_rng *rng)
{
    double *centres = malloc(k * d * sizeof *centres);
    size_t *rows = malloc(k * sizeof *rows);
    for (size_t j = 0; j < k; ++j) {
        int fresh;
        do {
            rows[j] = test_rng_next(rng) % n;
            fresh = 1;
            for (size_t other = 0; other < j; ++other)
                fresh = fresh && rows[other] != rows[j];
        } while (!fresh);
        for (size_t v = 0; v < d; ++v)
            centres[j + k * v] = data[rows[j] + ld * v];
    }
    free(rows);
    return centres;
}

static void test_matches_brute_force_lloyd(void **state)
{
    (void)state;
    test_rng rng = { 2024 };
    size_t cases = 0, with_reseeds = 0;
    for (int trial = 0; trial < 60; ++trial) {
        size_t d = 1 + test_rng_next(&rng) % 5;
        size_t k = 1 + test_rng_next(&rng) % 7;
        size_t n = trial % 10 == 9 ? 3000 + test_rng_next(&rng) % 3000 : k + test_rng_next(&rng) % 600;
        size_t ld = n + test_rng_next(&rng) % 3;
        double separation = trial % 3 == 0 ? 0.5 : 3.0;  /* overlapping blobs converge slowly */
        double *data = make_blobs(n, d, ld, 1 + test_rng_next(&rng) % 6, separation, 77 + (uint64_t)trial);
        double *initial = pick_rows(data, n, d, ld, k, &rng);
        /* Every fourth case starts all centres from one corner: clusters empty. */
        if (trial % 4 == 1)
            for (size_t j = 1; j < k; ++j)
                for (size_t v = 0; v < d; ++v)
                    initial[j + k * v] = 100.0 + (double)j;
        statgpu_kmeans_params params;
        statgpu_kmeans_params_init(&params);
        params.init = STATGPU_KMEANS_INIT_GIVEN;
        params.initial_centroids = initial;
        if (trial % 3 == 2)
            params.restart_count = 0;  /* not used with given centroids: no error */
        params.tolerance = trial % 2 ? 1e-4 : 0.0;
        params.max_iterations = trial % 5 == 4 ? 3 : 300;
        reference_fit expected = reference_lloyd_ld(data, n, d, ld, k, initial, params.max_iterations,
                                                    params.tolerance);
        statgpu_kmeans_result *result = fit(g_context, data, n, d, ld, k, &params);
        char what[128];
        snprintf(what, sizeof what, "case %d (n=%zu d=%zu k=%zu tol=%g max_it=%zu)", trial, n, d, k,
                 params.tolerance, params.max_iterations);
        assert_matches_reference(result, &expected, what);
        assert_int_equal(result->restart_count, 1);
        assert_int_equal(result->init, STATGPU_KMEANS_INIT_GIVEN);
        ++cases;
        with_reseeds += expected.reseeds > 0;
        statgpu_kmeans_result_destroy(result);
        reference_free(&expected);
        free(initial);
        free(data);
    }
    print_message("%zu cases equal to the brute force, %zu of them with re-seeded empty clusters\n", cases,
                  with_reseeds);
    assert_true(with_reseeds >= 5);
}

/* ------------------------------------------------------------ invariants */

static void assert_consistent(const statgpu_kmeans_result *result, const double *data, size_t ld)
{
    size_t n = result->n_obs, d = result->n_vars, k = result->k;
    double inertia = 0.0;
    double *within = calloc(k, sizeof *within);
    size_t *sizes = calloc(k, sizeof *sizes);
    for (size_t i = 0; i < n; ++i) {
        int32_t label = result->labels[i];
        assert_true(label >= 0 && (size_t)label < k);
        double best = INFINITY;
        for (size_t j = 0; j < k; ++j) {
            double distance = 0.0;
            for (size_t v = 0; v < d; ++v) {
                double difference = data[i + ld * v] - result->centroids[j + k * v];
                distance += difference * difference;
            }
            if (distance < best)
                best = distance;
            if ((int32_t)j == label) {
                inertia += distance;
                within[j] += distance;
            }
        }
        double own = 0.0;
        for (size_t v = 0; v < d; ++v) {
            double difference = data[i + ld * v] - result->centroids[label + k * v];
            own += difference * difference;
        }
        if (own != best)
            fail_msg("observation %zu is labelled %d at squared distance %.17g; the nearest is at %.17g", i, label,
                     own, best);
        sizes[label]++;
    }
    if (!within_relative(result->inertia, inertia, 1e-12))
        fail_msg("inertia %.17g, recomputed %.17g", result->inertia, inertia);
    double within_sum = 0.0;
    for (size_t j = 0; j < k; ++j) {
        assert_int_equal(result->cluster_sizes[j], sizes[j]);
        assert_true(within_relative(result->within_ss[j], within[j], 1e-12));
        within_sum += result->within_ss[j];
        for (size_t v = 0; v < d; ++v)
            assert_true(isfinite(result->centroids[j + k * v]));
    }
    assert_true(within_relative(within_sum, result->inertia, 1e-12));
    assert_true(result->total_ss >= result->inertia * (1 - 1e-12));
    free(within);
    free(sizes);
}

static void test_inertia_is_the_sum_of_squared_distances(void **state)
{
    (void)state;
    const size_t shapes[][3] = { { 500, 2, 3 }, { 1000, 4, 8 }, { 4321, 3, 5 }, { 20000, 6, 12 }, { 150, 1, 10 } };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; ++s) {
        size_t n = shapes[s][0], d = shapes[s][1], k = shapes[s][2];
        double *data = make_blobs(n, d, n + 1, k, 2.0, 5 + s);
        statgpu_kmeans_result *result = fit(g_context, data, n, d, n + 1, k, NULL);
        assert_consistent(result, data, n + 1);
        assert_int_equal(result->init, STATGPU_KMEANS_INIT_PLUS_PLUS);
        assert_int_equal(result->restart_count, 10);
        assert_true(result->best_restart < 10);
        assert_true(result->converged == 1);
        statgpu_kmeans_result_destroy(result);
        free(data);
    }
}

/* Lloyd never raises the inertia: the run stopped after m iterations is at
 * least as good as the one stopped after m-1 (from the same start). */
static void test_inertia_never_increases(void **state)
{
    (void)state;
    size_t n = 3000, d = 2, k = 9;
    double *data = make_blobs(n, d, n, 12, 0.7, 31);
    for (int init = STATGPU_KMEANS_INIT_PLUS_PLUS; init <= STATGPU_KMEANS_INIT_PARALLEL; ++init) {
        double previous = INFINITY;
        size_t decreases = 0, needed = 0;
        for (size_t m = 1; m <= 60; ++m) {
            statgpu_kmeans_params params;
            statgpu_kmeans_params_init(&params);
            params.restart_count = 1;
            params.tolerance = 0.0;
            params.max_iterations = m;
            params.init = (statgpu_kmeans_init)init;
            statgpu_kmeans_result *result = fit(g_context, data, n, d, n, k, &params);
            if (result->inertia > previous * (1.0 + 1e-14))
                fail_msg("init %d: inertia %.17g after %zu iterations, %.17g after %zu", init, result->inertia, m,
                         previous, m - 1);
            decreases += result->inertia < previous;
            previous = result->inertia;
            needed = result->iterations;
            int done = result->converged;
            statgpu_kmeans_result_destroy(result);
            if (done)
                break;
        }
        print_message("init %d: inertia fell %zu times in %zu iterations, never rose\n", init, decreases, needed);
        assert_true(needed >= 5);
    }
    free(data);
}

/* ----------------------------------------------------- reproducibility */

static void assert_same_bits(const statgpu_kmeans_result *a, const statgpu_kmeans_result *b)
{
    assert_int_equal(a->k, b->k);
    assert_memory_equal(a->centroids, b->centroids, a->k * a->n_vars * sizeof *a->centroids);
    assert_memory_equal(a->labels, b->labels, a->n_obs * sizeof *a->labels);
    assert_memory_equal(a->cluster_sizes, b->cluster_sizes, a->k * sizeof *a->cluster_sizes);
    assert_memory_equal(a->within_ss, b->within_ss, a->k * sizeof *a->within_ss);
    assert_true(test_same_bits(a->inertia, b->inertia));
    assert_true(test_same_bits(a->total_ss, b->total_ss));
    assert_int_equal(a->iterations, b->iterations);
    assert_int_equal(a->best_restart, b->best_restart);
}

static void test_same_seed_same_bits(void **state)
{
    (void)state;
    size_t n = 5000, d = 3, k = 6;
    double *data = make_blobs(n, d, n, 9, 0.8, 8);
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.seed = 42;
    statgpu_kmeans_result *first = fit(g_context, data, n, d, n, k, &params);
    statgpu_kmeans_result *again = fit(g_context, data, n, d, n, k, &params);
    assert_same_bits(first, again);
    /* Another seed, in the call or in the context, draws other starts. */
    params.seed = 43;
    params.restart_count = 1;
    statgpu_kmeans_result *one = fit(g_context, data, n, d, n, k, &params);
    statgpu_context *other_context = make_context(0, 12345);
    statgpu_kmeans_result *other = fit(other_context, data, n, d, n, k, &params);
    assert_true(memcmp(one->centroids, other->centroids, k * d * sizeof(double)) != 0);
    statgpu_kmeans_result_destroy(first);
    statgpu_kmeans_result_destroy(again);
    statgpu_kmeans_result_destroy(one);
    statgpu_kmeans_result_destroy(other);
    statgpu_context_destroy(other_context);
    free(data);
}

static void test_thread_counts_give_same_bits(void **state)
{
    (void)state;
    const struct { size_t n, d, k; statgpu_kmeans_init init; } cases[] = {
        { 50000, 3, 7, STATGPU_KMEANS_INIT_PLUS_PLUS },
        { 200003, 4, 10, STATGPU_KMEANS_INIT_AUTO },  /* k-means|| */
        { 3000, 2, 5, STATGPU_KMEANS_INIT_PARALLEL },
    };
    const int thread_counts[] = { 1, 2, 3, 4, 7, 16 };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        double *data = make_blobs(cases[c].n, cases[c].d, cases[c].n, cases[c].k + 2, 1.0, 100 + c);
        statgpu_kmeans_params params;
        statgpu_kmeans_params_init(&params);
        params.init = cases[c].init;
        params.restart_count = 2;
        statgpu_kmeans_result *expected = NULL;
        for (size_t t = 0; t < sizeof thread_counts / sizeof *thread_counts; ++t) {
            statgpu_context *context = make_context(thread_counts[t], 7);
            statgpu_kmeans_result *result = fit(context, data, cases[c].n, cases[c].d, cases[c].n, cases[c].k,
                                                &params);
            if (expected == NULL)
                expected = result;
            else {
                assert_same_bits(result, expected);
                statgpu_kmeans_result_destroy(result);
            }
            statgpu_context_destroy(context);
        }
        if (cases[c].init == STATGPU_KMEANS_INIT_AUTO)
            assert_int_equal(expected->init, STATGPU_KMEANS_INIT_PARALLEL);
        assert_consistent(expected, data, cases[c].n);
        statgpu_kmeans_result_destroy(expected);
        free(data);
    }
}

/* ------------------------------------------------------- empty clusters */

/* 0 1 2 3 4 20 from centres 2, 20, -100: the third cluster is empty after
 * the first assignment and takes the row farthest from its centroid, 0 (rows
 * 0 and 4 tie at distance 4; the lower row wins). Then Lloyd goes on:
 * {1 2 3 4} {20} {0} -> {2 3 4} {20} {0 1}, settled at the third iteration. */
static void test_empty_cluster_is_reseeded(void **state)
{
    (void)state;
    const double data[] = { 0, 1, 2, 3, 4, 20 };
    const double initial[] = { 2, 20, -100 };
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.init = STATGPU_KMEANS_INIT_GIVEN;
    params.initial_centroids = initial;
    params.tolerance = 0.0;
    statgpu_kmeans_result *result = fit(g_context, data, 6, 1, 6, 3, &params);
    const double centroids[] = { 3, 20, 0.5 };
    const int32_t labels[] = { 2, 2, 0, 0, 0, 1 };
    const size_t sizes[] = { 3, 1, 2 };
    assert_memory_equal(result->centroids, centroids, sizeof centroids);
    assert_memory_equal(result->labels, labels, sizeof labels);
    assert_memory_equal(result->cluster_sizes, sizes, sizeof sizes);
    assert_int_equal(result->iterations, 3);
    assert_int_equal(result->converged, 1);
    assert_int_equal(result->reseed_count, 1);
    assert_true(result->inertia == 2.5);  /* 1 + 0 + 1 + 0 + 0.25 + 0.25 */
    statgpu_kmeans_result_destroy(result);

    /* Two empty clusters at once take the two farthest rows. */
    const double spread[] = { 0, 10, 11, 12, 13, 30 };
    const double corner[] = { 12, -50, -60 };
    params.initial_centroids = corner;
    result = fit(g_context, spread, 6, 1, 6, 3, &params);
    assert_int_equal(result->reseed_count, 2);
    assert_consistent(result, spread, 6);
    for (size_t j = 0; j < 3; ++j)
        assert_true(result->cluster_sizes[j] > 0);
    statgpu_kmeans_result_destroy(result);
}

/* ---------------------------------------------------- initialisations */

/* On data with exactly k distinct rows (repeated, some far more often than
 * others), every initialisation must pick k distinct rows: then one Lloyd
 * iteration already puts each distinct row in its own cluster, with no
 * re-seeding and zero inertia. */
static void test_initialisations_pick_distinct_rows(void **state)
{
    (void)state;
    for (size_t k = 2; k <= 8; ++k) {
        size_t n = 0, ld = 4000;
        double *data = malloc(ld * 2 * sizeof *data);
        for (size_t value = 0; value < k; ++value) {
            size_t copies = value == 0 ? 2000 : value == 1 ? 1 : 3 * value;
            for (size_t c = 0; c < copies; ++c, ++n) {
                data[n] = (double)value * 1.5;
                data[n + ld] = value % 2 ? -1.0 : 2.0 * (double)value;
            }
        }
        for (int init = STATGPU_KMEANS_INIT_PLUS_PLUS; init <= STATGPU_KMEANS_INIT_PARALLEL; ++init)
            for (uint64_t seed = 0; seed < 20; ++seed) {
                statgpu_kmeans_params params;
                statgpu_kmeans_params_init(&params);
                params.init = (statgpu_kmeans_init)init;
                params.restart_count = 1;
                params.max_iterations = 1;
                params.seed = seed;
                statgpu_kmeans_result *result = fit(g_context, data, n, 2, ld, k, &params);
                if (result->inertia != 0.0 || result->reseed_count != 0)
                    fail_msg("k=%zu init %d seed %zu: inertia %g, %zu re-seeds", k, init, (size_t)seed,
                             result->inertia, result->reseed_count);
                for (size_t j = 0; j < k; ++j) {
                    double value = result->centroids[j] / 1.5;
                    assert_true(value == floor(value) && value >= 0 && value < (double)k);
                    for (size_t other = 0; other < j; ++other)
                        assert_true(result->centroids[other] != result->centroids[j]);
                }
                statgpu_kmeans_result_destroy(result);
            }
        free(data);
    }
}

/* R's kmeans stops with "more cluster centers than distinct data points";
 * statgpu answers STATGPU_ERROR_INVALID_ARGUMENT, from every initialisation. */
static void test_fewer_distinct_rows_than_k(void **state)
{
    (void)state;
    double constant[50];
    for (size_t i = 0; i < 50; ++i)
        constant[i] = 3.25;
    statgpu_kmeans_result *result = (statgpu_kmeans_result *)&result;  /* must be reset to NULL */
    for (int init = STATGPU_KMEANS_INIT_AUTO; init <= STATGPU_KMEANS_INIT_PARALLEL; ++init) {
        statgpu_kmeans_params params;
        statgpu_kmeans_params_init(&params);
        params.init = (statgpu_kmeans_init)init;
        assert_int_equal(statgpu_kmeans(g_context, constant, 50, 1, 50, 2, &params, &result),
                         STATGPU_ERROR_INVALID_ARGUMENT);
        assert_null(result);
        assert_non_null(strstr(statgpu_context_last_error(g_context), "distinct"));
    }
    /* One cluster of constant data is fine. */
    result = fit(g_context, constant, 50, 1, 50, 1, NULL);
    assert_true(result->centroids[0] == 3.25 && result->inertia == 0.0 && result->cluster_sizes[0] == 50);
    assert_true(result->total_ss == 0.0 && result->converged == 1);
    statgpu_kmeans_result_destroy(result);

    /* Three distinct rows, four clusters. */
    const double three[] = { 0, 0, 1, 1, 5, 5, 5 };
    assert_int_equal(statgpu_kmeans(g_context, three, 7, 1, 7, 4, NULL, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    /* Given centres find it when a cluster cannot be re-seeded. */
    const double two[] = { 0, 0, 1, 1 };
    const double initial[] = { 0, 1, 5, 7 };
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.init = STATGPU_KMEANS_INIT_GIVEN;
    params.initial_centroids = initial;
    assert_int_equal(statgpu_kmeans(g_context, two, 4, 1, 4, 4, &params, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(result);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "distinct"));
}

/* statgpu_kmeans_matrix: a host float64 matrix with a leading dimension
 * gives the bits of statgpu_kmeans on the same numbers; a float32 matrix the
 * bits of statgpu_kmeans on its values widened; every bad description is
 * refused with what is wrong. (Device matrices: test_device_vectors.c.) */
static void test_matrix_arguments(void **state)
{
    (void)state;
    size_t n = 3000, d = 3, ld = 3005, k = 4;
    double *data = make_blobs(n, d, ld, 4, 3.0, 23);
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.seed = 5;
    statgpu_kmeans_result *expected = fit(g_context, data, n, d, ld, k, &params);
    statgpu_matrix matrix = { data, n, d, ld, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
    statgpu_kmeans_result *result = NULL;
    assert_int_equal(statgpu_kmeans_matrix(g_context, &matrix, k, &params, &result), STATGPU_OK);
    assert_same_bits(result, expected);
    statgpu_kmeans_result_destroy(result);
    statgpu_kmeans_result_destroy(expected);

    float *narrow = malloc(ld * d * sizeof *narrow);
    double *widened = malloc(n * d * sizeof *widened);
    for (size_t v = 0; v < d; ++v)
        for (size_t i = 0; i < n; ++i) {
            narrow[i + ld * v] = (float)data[i + ld * v];
            widened[i + n * v] = (double)narrow[i + ld * v];
        }
    expected = fit(g_context, widened, n, d, n, k, &params);
    statgpu_matrix floats = { narrow, n, d, ld, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_HOST };
    assert_int_equal(statgpu_kmeans_matrix(g_context, &floats, k, &params, &result), STATGPU_OK);
    assert_same_bits(result, expected);
    statgpu_kmeans_result_destroy(result);
    statgpu_kmeans_result_destroy(expected);

    statgpu_matrix bad = matrix;
    bad.ld = n - 1;
    result = (statgpu_kmeans_result *)1;
    assert_int_equal(statgpu_kmeans_matrix(g_context, &bad, k, &params, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(result);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "leading dimension"));
    assert_int_equal(statgpu_kmeans_matrix(g_context, NULL, k, &params, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    bad = matrix;
    bad.dtype = (statgpu_dtype)7;
    assert_int_equal(statgpu_kmeans_matrix(g_context, &bad, k, &params, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    bad = matrix;
    bad.memory = (statgpu_memory)7;
    assert_int_equal(statgpu_kmeans_matrix(g_context, &bad, k, &params, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    bad = matrix;
    bad.rows = 0;
    assert_int_equal(statgpu_kmeans_matrix(g_context, &bad, k, &params, &result), STATGPU_ERROR_EMPTY_INPUT);
    bad = matrix;
    bad.cols = SIZE_MAX / 4;
    assert_int_equal(statgpu_kmeans_matrix(g_context, &bad, k, &params, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_kmeans_matrix(g_context, &matrix, k, &params, NULL), STATGPU_ERROR_INVALID_ARGUMENT);
    free(narrow);
    free(widened);
    free(data);
}

/* The unit of the data does not change the clustering (issue: six distinct
 * rows near 1e-170 were refused as "fewer than k distinct rows", their
 * squared distances all 0). Data times a power of two far from 1 give the
 * same labels, sizes and share explained, and centroids times that power
 * exactly (sums of squares times its square, rounded where that leaves the
 * doubles); the six rows times 1e-170 are clustered as the six rows. A total
 * sum of squares beyond the largest double is an error that says so. */
static void test_units_of_the_data(void **state)
{
    (void)state;
    size_t n = 400, d = 3, k = 4;
    double *data = make_blobs(n, d, n, 4, 3.0, 17);
    double *scaled = malloc(n * d * sizeof *scaled);
    statgpu_kmeans_result *base = fit(g_context, data, n, d, n, k, NULL);
    const int exponents[] = { -600, -1000, 480, -401, 401 };
    for (size_t e = 0; e < sizeof exponents / sizeof exponents[0]; ++e) {
        int exponent = exponents[e];
        for (size_t c = 0; c < n * d; ++c)
            scaled[c] = ldexp(data[c], exponent);
        statgpu_kmeans_result *r = fit(g_context, scaled, n, d, n, k, NULL);
        assert_memory_equal(r->labels, base->labels, n * sizeof *r->labels);
        assert_memory_equal(r->cluster_sizes, base->cluster_sizes, k * sizeof *r->cluster_sizes);
        for (size_t c = 0; c < k * d; ++c)
            assert_bits_equal(r->centroids[c], ldexp(base->centroids[c], exponent));
        for (size_t j = 0; j < k; ++j)
            assert_bits_equal(r->within_ss[j], ldexp(base->within_ss[j], 2 * exponent));
        assert_bits_equal(r->inertia, ldexp(base->inertia, 2 * exponent));
        assert_bits_equal(r->total_ss, ldexp(base->total_ss, 2 * exponent));
        assert_bits_equal(r->between_share, base->between_share);
        assert_int_equal(r->iterations, base->iterations);
        statgpu_kmeans_result_destroy(r);
    }
    assert_true(base->between_share > 0.5 && base->between_share < 1.0);

    /* The case: six distinct rows near 1e-170, k = 2. */
    double six[12] = { 1, 2, 3, 5, 6, 7, 2, 3, 1, 5, 1, 7 }, tiny[12];
    for (size_t c = 0; c < 12; ++c)
        tiny[c] = six[c] * 1e-170;
    statgpu_kmeans_result *ordinary = fit(g_context, six, 6, 2, 6, 2, NULL);
    statgpu_kmeans_result *small = fit(g_context, tiny, 6, 2, 6, 2, NULL);
    assert_memory_equal(small->labels, ordinary->labels, 6 * sizeof *small->labels);
    assert_true(within_relative(small->between_share, ordinary->between_share, 1e-12));
    for (size_t c = 0; c < 4; ++c)
        assert_true(within_relative(small->centroids[c] * 1e170, ordinary->centroids[c], 1e-12));
    statgpu_kmeans_result_destroy(ordinary);
    statgpu_kmeans_result_destroy(small);

    /* Data near 2^600 (4e180) square beyond the largest double. */
    for (size_t c = 0; c < n * d; ++c)
        scaled[c] = ldexp(data[c], 600);
    statgpu_kmeans_result *result = NULL;
    assert_int_equal(statgpu_kmeans(g_context, scaled, n, d, n, k, NULL, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(result);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "larger than the largest double"));
    /* Three rows at +-DBL_MAX among ordinary ones, k = 5: the same reason,
     * said before any run (the runs had failed first: "fewer than k = 5
     * distinct rows"). */
    memcpy(scaled, data, n * d * sizeof *scaled);
    for (size_t i = 0; i < 3; ++i) {
        scaled[i] = DBL_MAX;
        scaled[i + n] = -DBL_MAX;
    }
    assert_int_equal(statgpu_kmeans(g_context, scaled, n, d, n, 5, NULL, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(result);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "larger than the largest double"));
    statgpu_kmeans_result_destroy(base);
    free(scaled);
    free(data);
}

static void test_auto_initialisation_by_size(void **state)
{
    (void)state;
    const size_t sizes[] = { 99999, 100000 };
    for (size_t s = 0; s < 2; ++s) {
        double *data = make_blobs(sizes[s], 2, sizes[s], 4, 3.0, 9);
        statgpu_kmeans_params params;
        statgpu_kmeans_params_init(&params);
        params.restart_count = 1;
        params.max_iterations = 2;
        statgpu_kmeans_result *result = fit(g_context, data, sizes[s], 2, sizes[s], 4, &params);
        assert_int_equal(result->init, s == 0 ? STATGPU_KMEANS_INIT_PLUS_PLUS : STATGPU_KMEANS_INIT_PARALLEL);
        statgpu_kmeans_result_destroy(result);
        free(data);
    }
}

/* -------------------------------------------- progress and cancellation */

typedef struct progress_log {
    size_t calls, cancel_at;
    double last;
    int    monotone;
} progress_log;

static int record_progress(void *user_data, double fraction)
{
    progress_log *log = user_data;
    log->monotone = log->monotone && fraction >= log->last && fraction >= 0.0 && fraction <= 1.0;
    log->last = fraction;
    return ++log->calls == log->cancel_at;
}

static void test_progress_and_cancellation(void **state)
{
    (void)state;
    size_t n = 2000, d = 2, k = 6;
    double *data = make_blobs(n, d, n, 8, 0.8, 3);
    progress_log log = { 0, 0, 0.0, 1 };
    statgpu_context_params context_params;
    statgpu_context_params_init(&context_params);
    context_params.backend = g_backend;
    context_params.progress = record_progress;
    context_params.progress_user_data = &log;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&context_params, &context), STATGPU_OK);

    test_rng rng = { 5 };
    double *initial = pick_rows(data, n, d, n, k, &rng);
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.init = STATGPU_KMEANS_INIT_GIVEN;
    params.initial_centroids = initial;
    params.tolerance = 0.0;
    statgpu_kmeans_result *result = fit(context, data, n, d, n, k, &params);
    assert_int_equal(log.calls, result->iterations);  /* once per iteration */
    assert_true(log.monotone);
    assert_true(result->iterations > 3);
    statgpu_kmeans_result_destroy(result);

    log = (progress_log){ 0, 3, 0.0, 1 };
    assert_int_equal(statgpu_kmeans(context, data, n, d, n, k, &params, &result), STATGPU_ERROR_CANCELLED);
    assert_null(result);
    assert_int_equal(log.calls, 3);
    assert_string_equal(statgpu_context_last_error(context), "cancelled");

    /* Restarts: the fraction runs over all of them. */
    log = (progress_log){ 0, 0, 0.0, 1 };
    params.init = STATGPU_KMEANS_INIT_PLUS_PLUS;
    params.restart_count = 4;
    result = fit(context, data, n, d, n, k, &params);
    assert_true(log.calls >= 4 && log.monotone && log.last > 0.75);
    statgpu_kmeans_result_destroy(result);

    /* A long seeding can be stopped: k-means++ and k-means|| ask the
     * callback every 0.1 s between seeds (10,000 seeds among 30,000 rows of 8
     * variables take seconds; the callback had first been called at Lloyd's
     * first iteration, after all of them). Cancelled at the second call, the
     * run stops there; it had run its one iteration and succeeded. Where a
     * machine seeds in under 0.1 s, Lloyd's first call is the second and the
     * test still holds. */
    free(initial);
    initial = NULL;
    free(data);
    n = 30000, d = 8, k = 10000;
    data = make_blobs(n, d, n, 64, 3.0, 11);
    const statgpu_kmeans_init inits[] = { STATGPU_KMEANS_INIT_PLUS_PLUS, STATGPU_KMEANS_INIT_PARALLEL };
    for (size_t i = 0; i < 2; ++i) {
        statgpu_kmeans_params_init(&params);
        params.init = inits[i];
        params.restart_count = 1;
        params.max_iterations = 1;
        log = (progress_log){ 0, 2, 0.0, 1 };
        result = NULL;
        assert_int_equal(statgpu_kmeans(context, data, n, d, n, k, &params, &result), STATGPU_ERROR_CANCELLED);
        assert_null(result);
        assert_int_equal(log.calls, 2);
    }
    statgpu_context_destroy(context);
    free(initial);
    free(data);
}

/* ------------------------------------------------------------ backends */

static void test_backend_report_says_cpu(void **state)
{
    (void)state;
    const double data[] = { 1, 2, 10, 11 };
    const statgpu_backend asked[] = { STATGPU_BACKEND_CPU, STATGPU_BACKEND_CUDA, STATGPU_BACKEND_AUTO };
    for (size_t a = 0; a < 3; ++a) {
        statgpu_context_params params;
        statgpu_context_params_init(&params);
        params.backend = asked[a];
        statgpu_context *context = NULL;
        assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
        statgpu_kmeans_result *result = NULL;
        assert_int_equal(statgpu_kmeans(context, data, 4, 1, 4, 2, NULL, &result), STATGPU_OK);
        statgpu_backend_report report;
        assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
        if (asked[a] == STATGPU_BACKEND_CUDA && report.cuda_available) {
            assert_int_equal(report.last_used, STATGPU_BACKEND_CUDA);
            assert_string_equal(report.note, "");
        } else {
            assert_int_equal(report.last_used, STATGPU_BACKEND_CPU);  /* AUTO: far below the GPU threshold */
        }
        if (asked[a] == STATGPU_BACKEND_CUDA && !report.cuda_available)
            assert_non_null(strstr(report.note, CPU_NOTE));
        if (asked[a] == STATGPU_BACKEND_CPU)
            assert_null(strstr(report.note, CPU_NOTE));
        char text[512];
        assert_int_equal(statgpu_backend_describe(&report, text, sizeof text), STATGPU_OK);
        print_message("asked for %s: %s\n", statgpu_backend_name(asked[a]), text);
        assert_true(result->centroids[0] == 1.5 || result->centroids[0] == 10.5);
        statgpu_kmeans_result_destroy(result);
        statgpu_context_destroy(context);
    }
}

/* ------------------------------------------------------------ bad input */

static void expect_status(statgpu_status expected, statgpu_status got, statgpu_kmeans_result *result,
                          const char *what)
{
    if (got != expected)
        fail_msg("%s: %s, expected %s (%s)", what, statgpu_status_string(got), statgpu_status_string(expected),
                 statgpu_context_last_error(g_context));
    assert_null(result);
    if (statgpu_context_last_error(g_context)[0] == '\0')
        fail_msg("%s: no message", what);
    print_message("%-40s %-18s %s\n", what, statgpu_status_string(got), statgpu_context_last_error(g_context));
}

static void test_bad_inputs_get_their_status(void **state)
{
    (void)state;
    double data[20];
    for (size_t i = 0; i < 20; ++i)
        data[i] = (double)(i * i % 7);
    statgpu_kmeans_result *result = NULL;
    statgpu_kmeans_params params;
#define EXPECT(status_, call_, what_)                        \
    do {                                                     \
        statgpu_kmeans_params_init(&params);                 \
        result = NULL;                                       \
        statgpu_status got_ = (call_);                       \
        expect_status(status_, got_, result, what_);         \
    } while (0)
#define KMEANS(data_, n_, d_, ld_, k_) statgpu_kmeans(g_context, data_, n_, d_, ld_, k_, &params, &result)

    assert_int_equal(statgpu_kmeans(NULL, data, 10, 2, 10, 2, NULL, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, statgpu_kmeans(g_context, data, 10, 2, 10, 2, NULL, NULL),
           "out_result NULL");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, KMEANS(NULL, 10, 2, 10, 2), "data NULL");
    EXPECT(STATGPU_ERROR_EMPTY_INPUT, KMEANS(data, 0, 2, 10, 1), "no observations");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, KMEANS(data, 10, 0, 10, 1), "no variables");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, KMEANS(data, 10, 2, 9, 2), "ld < n_obs");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, KMEANS(data, 10, 2, 10, 0), "k = 0");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, KMEANS(data, 10, 2, 10, 11), "k > n_obs");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, (params.restart_count = 0, KMEANS(data, 10, 2, 10, 2)),
           "restart_count = 0");
    /* A restart count no call can finish (SIZE_MAX ran until killed) is refused. */
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, (params.restart_count = SIZE_MAX, KMEANS(data, 10, 2, 10, 2)),
           "restart_count = SIZE_MAX");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT,
           (params.restart_count = (size_t)STATGPU_KMEANS_MAX_RESTART_COUNT + 1, KMEANS(data, 10, 2, 10, 2)),
           "restart_count above the limit");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, (params.max_iterations = 0, KMEANS(data, 10, 2, 10, 2)),
           "max_iterations = 0");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, (params.tolerance = -1e-4, KMEANS(data, 10, 2, 10, 2)),
           "tolerance < 0");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, (params.tolerance = NAN, KMEANS(data, 10, 2, 10, 2)), "tolerance NaN");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, (params.init = (statgpu_kmeans_init)7, KMEANS(data, 10, 2, 10, 2)),
           "unknown init");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, (params.init = STATGPU_KMEANS_INIT_GIVEN, KMEANS(data, 10, 2, 10, 2)),
           "given init without centroids");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, (params.struct_bytes = 8, KMEANS(data, 10, 2, 10, 2)),
           "struct_bytes too small");
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT,
           (params.struct_bytes = sizeof params + 8, KMEANS(data, 10, 2, 10, 2)), "struct_bytes too large");
    const double bad_centres[] = { 0, NAN, 1, 2 };
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT,
           (params.init = STATGPU_KMEANS_INIT_GIVEN, params.initial_centroids = bad_centres,
            KMEANS(data, 10, 2, 10, 2)),
           "initial centroid NaN");

    /* Non-finite and huge data. */
    double with_nan[20];
    memcpy(with_nan, data, sizeof data);
    with_nan[13] = NAN;
    EXPECT(STATGPU_ERROR_NAN_IN_DATA, KMEANS(with_nan, 10, 2, 10, 2), "NaN in the data");
    assert_non_null(strstr(statgpu_context_last_error(g_context), "observation 4, variable 2"));
    with_nan[13] = INFINITY;
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, KMEANS(with_nan, 10, 2, 10, 2), "+Inf in the data");
    assert_non_null(strstr(statgpu_context_last_error(g_context), "+Inf"));
    with_nan[13] = -INFINITY;
    with_nan[2] = NAN;
    EXPECT(STATGPU_ERROR_NAN_IN_DATA, KMEANS(with_nan, 10, 2, 10, 2), "NaN before -Inf");
    with_nan[2] = 0.0;
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, KMEANS(with_nan, 10, 2, 10, 2), "-Inf in the data");
    with_nan[13] = 1e300;
    EXPECT(STATGPU_ERROR_INVALID_ARGUMENT, KMEANS(with_nan, 10, 2, 10, 2), "1e300 in the data");
    /* Large but safe: an answer, finite. */
    with_nan[13] = 1e150;
    statgpu_kmeans_params_init(&params);
    assert_int_equal(KMEANS(with_nan, 10, 2, 10, 2), STATGPU_OK);
    assert_true(isfinite(result->inertia) && isfinite(result->total_ss) && result->total_ss > 1e299);
    for (size_t j = 0; j < 4; ++j)
        assert_true(isfinite(result->centroids[j]));
    assert_true(result->centroids[2] == 1e150 || result->centroids[3] == 1e150);  /* a cluster of its own */
    statgpu_kmeans_result_destroy(result);
    statgpu_kmeans_result_destroy(NULL);  /* a harmless no-op */

    /* The ld padding is never read: NaN there changes nothing. */
    double padded[24];
    for (size_t v = 0; v < 2; ++v)
        for (size_t i = 0; i < 12; ++i)
            padded[i + 12 * v] = i < 10 ? data[i + 10 * v] : NAN;
    statgpu_kmeans_params_init(&params);
    assert_int_equal(KMEANS(padded, 10, 2, 12, 2), STATGPU_OK);
    statgpu_kmeans_result_destroy(result);
#undef KMEANS
#undef EXPECT
}

/* ------------------------------------------------------------ data scan */

/* kmeans_cpu.c, compiled in, asks the context whether a long pass was
 * cancelled; the scan never does. */
bool sg_progress_cancelled(statgpu_context *context, double fraction_done)
{
    (void)context;
    (void)fraction_done;
    return false;
}

static sg_kmeans_scan scan_data(const double *data, size_t n, size_t d, size_t k, int threads)
{
    sg_kmeans_problem problem = { data, n, d, n, k, threads };
    sg_kmeans_workspace *workspace = sg_cpu_kmeans_workspace_create(&problem);
    assert_non_null(workspace);
    sg_kmeans_scan scan;
    sg_cpu_kmeans_scan(&problem, workspace, &scan);
    sg_cpu_kmeans_workspace_destroy(workspace);
    return scan;
}

/* 600,001 rows (256 blocks of 2,344 rows, each in two chunks; the last of
 * 2,281) of N(0, 1) on a grid of 2^-20, at offsets and scales where every
 * value is exact: 1e9 + y, -1e6 + y, y / 2^10, and a constant column of 0.1.
 * The sums of squares of the y alone, in long double around a corrected
 * mean, are the reference: the scan must be within a few units in the last
 * place (the two passes over the data it replaced were 8.5e-14 off here),
 * with the same bits at 1, 2 and 3 threads, and the constant column alone
 * must give 0 exactly. */
static void test_scan_sums_of_squares(void **state)
{
    (void)state;
    const size_t n = 600001, d = 4;
    const double offsets[] = { 1e9, -1e6, 0.0, 0.1 }, scales[] = { 1.0, 1.0, 0x1p-10, 0.0 };
    double *data = malloc(n * d * sizeof *data), *y = malloc(n * sizeof *y);
    test_rng rng = { 2024 };
    long double total = 0.0L, variance_sum = 0.0L;
    double largest = 0.0;
    for (size_t v = 0; v < d; ++v) {
        long double sum = 0.0L;
        for (size_t i = 0; i < n; ++i) {
            y[i] = scales[v] * (nearbyint(test_rng_normal(&rng) * 0x1p20) * 0x1p-20);
            data[i + n * v] = offsets[v] + y[i];
            largest = fmax(largest, fabs(data[i + n * v]));
            sum += y[i];
        }
        long double mean = sum / n, shift = 0.0L, squares = 0.0L;
        for (size_t i = 0; i < n; ++i) {
            long double deviation = y[i] - mean;
            shift += deviation;
            squares += deviation * deviation;
        }
        squares -= shift * shift / n;
        total += squares;
        variance_sum += squares / n;
    }
    long double mean_variance = variance_sum / d;
    sg_kmeans_scan scan = scan_data(data, n, d, 2, 1);
    print_message("scan: total_ss %.3Lg, mean_variance %.3Lg relative to long double\n",
                  (scan.total_ss - total) / total, (scan.mean_variance - mean_variance) / mean_variance);
    assert_true(scan.finite);
    assert_true(scan.max_abs == largest);
    assert_true(fabsl(scan.total_ss - total) <= 4 * DBL_EPSILON * total);
    assert_true(fabsl(scan.mean_variance - mean_variance) <= 4 * DBL_EPSILON * mean_variance);
    for (int threads = 2; threads <= 3; ++threads) {
        sg_kmeans_scan other = scan_data(data, n, d, 2, threads);
        assert_bits_equal(other.total_ss, scan.total_ss);
        assert_bits_equal(other.mean_variance, scan.mean_variance);
        assert_true(other.max_abs == scan.max_abs);
    }
    sg_kmeans_scan constant = scan_data(data + n * 3, n, 1, 2, 2);
    assert_true(constant.total_ss == 0.0 && constant.mean_variance == 0.0);
    free(y);
    free(data);
}

/* The first non-finite value is the lowest row's, then the lowest
 * variable's, wherever the blocks and chunks fall; its kind is reported. */
static void test_scan_finds_the_first_non_finite_value(void **state)
{
    (void)state;
    const size_t n = 600001, d = 3;
    double *data = make_blobs(n, d, n, 3, 2.0, 5);
    data[400000 + n * 0] = NAN;
    data[399999 + n * 2] = -INFINITY;
    data[399999 + n * 1] = INFINITY;
    data[500000 + n * 0] = NAN;
    for (int threads = 1; threads <= 2; ++threads) {
        sg_kmeans_scan scan = scan_data(data, n, d, 2, threads);
        assert_false(scan.finite);
        assert_int_equal(scan.bad_row, 399999);
        assert_int_equal(scan.bad_var, 1);
        assert_false(scan.first_bad_is_nan);
        assert_true(scan.total_ss == 0.0 && scan.mean_variance == 0.0);
    }
    data[399999 + n * 1] = 0.0;
    data[399999 + n * 2] = 0.0;
    sg_kmeans_scan scan = scan_data(data, n, d, 2, 2);
    assert_int_equal(scan.bad_row, 400000);
    assert_int_equal(scan.bad_var, 0);
    assert_true(scan.first_bad_is_nan);
    free(data);
}

static void test_params_defaults(void **state)
{
    (void)state;
    statgpu_kmeans_params params;
    memset(&params, 0xAB, sizeof params);
    statgpu_kmeans_params_init(&params);
    assert_int_equal(params.struct_bytes, sizeof params);
    assert_int_equal(params.restart_count, 10);
    assert_int_equal(params.max_iterations, 300);
    assert_true(params.tolerance == 1e-4);
    assert_int_equal(params.init, STATGPU_KMEANS_INIT_AUTO);
    assert_null(params.initial_centroids);
    assert_int_equal(params.seed, 0);
    statgpu_kmeans_params_init(NULL);  /* no crash */
}

/* ---------------------------------------------------------------- main */

static int setup(void **state)
{
    (void)state;
    g_backend = test_backend_from_environment();
    g_context = make_context(0, 0);
    return g_context != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    statgpu_context_destroy(g_context);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_brute_force_lloyd),
        cmocka_unit_test(test_inertia_is_the_sum_of_squared_distances),
        cmocka_unit_test(test_inertia_never_increases),
        cmocka_unit_test(test_same_seed_same_bits),
        cmocka_unit_test(test_thread_counts_give_same_bits),
        cmocka_unit_test(test_empty_cluster_is_reseeded),
        cmocka_unit_test(test_initialisations_pick_distinct_rows),
        cmocka_unit_test(test_fewer_distinct_rows_than_k),
        cmocka_unit_test(test_units_of_the_data),
        cmocka_unit_test(test_matrix_arguments),
        cmocka_unit_test(test_auto_initialisation_by_size),
        cmocka_unit_test(test_progress_and_cancellation),
        cmocka_unit_test(test_backend_report_says_cpu),
        cmocka_unit_test(test_bad_inputs_get_their_status),
        cmocka_unit_test(test_scan_sums_of_squares),
        cmocka_unit_test(test_scan_finds_the_first_non_finite_value),
        cmocka_unit_test(test_params_defaults),
    };
    return cmocka_run_group_tests_name(
        test_backend_from_environment() == STATGPU_BACKEND_CUDA ? "kmeans[cuda requested]" : "kmeans[cpu]", tests,
        setup, teardown);
}
