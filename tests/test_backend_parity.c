/*
 * test_backend_parity.c: every method on the CPU and on CUDA, on the same
 * problems, compared case by case (as ggml's test-backend-ops compares its
 * backends). A new method adds its cases to the table at the end.
 *
 * What must agree, and how closely:
 *   order statistics  the same bits (both are exact), float64 and float32,
 *                     patterns with ties, signed zeros, extremes
 *   k-means           from the same given centroids (columns with padding
 *                     below them too): the same labels and
 *                     sizes, centroids within 1e-12 relative (absolute floor
 *                     1e-12 x the data's largest magnitude), inertia within
 *                     1e-11 relative: the GPU sums in another order
 *   LTS               objectives within 1e-9 relative, the same weights:
 *                     below 8000 rows both run the same search
 *   Gaussian mixture  from the same given parameters, 30 EM iterations,
 *                     every covariance type, 1 to 16 variables (padded on
 *                     the GPU to 1, 2, 4, 8, 16): log-likelihood within 1e-10
 *                     relative, weights, means and covariances within 1e-8
 *                     of the largest of each, the same labels but for rows
 *                     whose two best probabilities tie to 1e-6; a second GPU
 *                     run gives the same bits; 17 variables run on the CPU
 *                     with a note that says why; 20 restarts (16 of them in
 *                     one launch an iteration) reach the CPU's optimum;
 *                     on the GPU alone, the 8-variable E-step's paired
 *                     products of sums against every component alone:
 *                     log-likelihood within 1e-12, parameters within 1e-10
 *
 * Skipped (exit 77) where CUDA is unusable, unless STATGPU_EXPECT_CUDA=1 says
 * a GPU must be there.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "statgpu.h"
#include "test_support.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static statgpu_context *g_cpu, *g_cuda;
static char             g_skip_reason[512] = "";

static int close_to(double a, double b, double relative, double absolute)
{
    return fabs(a - b) <= relative * fabs(b) + absolute;
}

/* ------------------------------------------------------- order statistics */

static void check_select(const void *data, size_t count, statgpu_dtype dtype, const char *what)
{
    const size_t ranks[5] = { 1, count / 4 + 1, (count + 1) / 2, count - count / 10, count };
    double on_cpu[5], on_cuda[5];
    statgpu_vector vector = { data, count, dtype, STATGPU_MEMORY_HOST };
    assert_int_equal(statgpu_vector_select(g_cpu, &vector, ranks, 5, on_cpu), STATGPU_OK);
    assert_int_equal(statgpu_vector_select(g_cuda, &vector, ranks, 5, on_cuda), STATGPU_OK);
    for (int j = 0; j < 5; ++j)
        if (!test_same_bits(on_cpu[j], on_cuda[j]))
            fail_msg("%s, rank %zu: CPU %.17g, CUDA %.17g", what, ranks[j], on_cpu[j], on_cuda[j]);
    double cpu_median, cuda_median;
    assert_int_equal(statgpu_vector_median(g_cpu, &vector, &cpu_median), STATGPU_OK);
    assert_int_equal(statgpu_vector_median(g_cuda, &vector, &cuda_median), STATGPU_OK);
    if (!test_same_bits(cpu_median, cuda_median))
        fail_msg("%s, median: CPU %.17g, CUDA %.17g", what, cpu_median, cuda_median);
}

static void test_order_statistics(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    const size_t counts[] = { 1, 1000, 1u << 20, 3000017 };
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
        size_t count = counts[c];
        double *data = malloc(count * sizeof *data);
        float *narrow = malloc(count * sizeof *narrow);
        for (int pattern = 0; pattern < PATTERN_COUNT; ++pattern) {
            test_fill(data, count, (test_pattern)pattern, 7 + count);
            char what[128];
            snprintf(what, sizeof what, "float64 %s n=%zu", test_pattern_names[pattern], count);
            check_select(data, count, STATGPU_DTYPE_FLOAT64, what);
            bool finite_floats = true;
            for (size_t i = 0; i < count; ++i) {
                narrow[i] = (float)data[i];
                finite_floats = finite_floats && isfinite(narrow[i]);
            }
            if (finite_floats) {
                snprintf(what, sizeof what, "float32 %s n=%zu", test_pattern_names[pattern], count);
                check_select(narrow, count, STATGPU_DTYPE_FLOAT32, what);
            }
        }
        free(data);
        free(narrow);
    }
}

/* ---------------------------------------------------------------- k-means */

static void test_kmeans(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    /* n, d, k and the rows of padding below each column: the last case's
     * columns and labels cross the bus through the transfer lanes in chunks
     * that start inside columns. */
    const size_t sizes[][4] = { { 500, 2, 3, 0 }, { 20000, 5, 8, 0 }, { 200000, 8, 16, 0 }, { 1200007, 3, 4, 5 } };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        size_t n = sizes[s][0], d = sizes[s][1], k = sizes[s][2], ld = n + sizes[s][3];
        double *data = malloc(ld * d * sizeof *data), *initial = malloc(k * d * sizeof *initial);
        for (size_t e = 0; e < ld * d; ++e)
            data[e] = NAN;  /* the padding is never read */
        test_rng rng = { 41 + s };
        double largest = 0.0;
        for (size_t i = 0; i < n; ++i)
            for (size_t v = 0; v < d; ++v) {
                double x = 4.0 * (double)(i % k) + (double)v + test_rng_normal(&rng);
                data[i + ld * v] = x;
                largest = fmax(largest, fabs(x));
            }
        for (size_t j = 0; j < k; ++j)
            for (size_t v = 0; v < d; ++v)
                initial[j + k * v] = data[(j * 7919) % n + ld * v];
        statgpu_kmeans_params params;
        statgpu_kmeans_params_init(&params);
        params.init = STATGPU_KMEANS_INIT_GIVEN;
        params.initial_centroids = initial;
        params.max_iterations = 50;
        statgpu_kmeans_result *cpu = NULL, *cuda = NULL;
        assert_int_equal(statgpu_kmeans(g_cpu, data, n, d, ld, k, &params, &cpu), STATGPU_OK);
        assert_int_equal(statgpu_kmeans(g_cuda, data, n, d, ld, k, &params, &cuda), STATGPU_OK);
        TEST_ASSERT_RAN_ON_CUDA(g_cuda, "k-means");
        assert_memory_equal(cpu->labels, cuda->labels, n * sizeof *cpu->labels);
        assert_memory_equal(cpu->cluster_sizes, cuda->cluster_sizes, k * sizeof *cpu->cluster_sizes);
        assert_int_equal(cpu->iterations, cuda->iterations);
        for (size_t e = 0; e < k * d; ++e)
            if (!close_to(cuda->centroids[e], cpu->centroids[e], 1e-12, 1e-12 * largest))
                fail_msg("n=%zu: centroid entry %zu: CPU %.17g, CUDA %.17g", n, e, cpu->centroids[e],
                         cuda->centroids[e]);
        if (!close_to(cuda->inertia, cpu->inertia, 1e-11, 0.0))
            fail_msg("n=%zu: inertia CPU %.17g, CUDA %.17g", n, cpu->inertia, cuda->inertia);
        statgpu_kmeans_result_destroy(cpu);
        statgpu_kmeans_result_destroy(cuda);
        free(data);
        free(initial);
    }
}

/* -------------------------------------------------------------------- LTS */

static void test_lts(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    const size_t sizes[][2] = { { 60, 1 }, { 500, 3 }, { 5000, 5 } };
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        size_t n = sizes[s][0], p = sizes[s][1];
        double *y = malloc(n * sizeof *y), *x = malloc(n * p * sizeof *x);
        test_rng rng = { 101 + s };
        for (size_t i = 0; i < n; ++i) {
            double fit = 1.0;
            for (size_t v = 0; v < p; ++v) {
                x[i + n * v] = test_rng_normal(&rng);
                fit += (double)(v + 1) * x[i + n * v];
            }
            y[i] = fit + 0.5 * test_rng_normal(&rng) + (i % 5 == 0 ? 25.0 : 0.0);
        }
        statgpu_lts_result *cpu = NULL, *cuda = NULL;
        assert_int_equal(statgpu_lts(g_cpu, y, x, n, p, n, NULL, &cpu), STATGPU_OK);
        assert_int_equal(statgpu_lts(g_cuda, y, x, n, p, n, NULL, &cuda), STATGPU_OK);
        TEST_ASSERT_RAN_ON_CUDA(g_cuda, "LTS");
        if (!close_to(cuda->objective, cpu->objective, 1e-9, 0.0))
            fail_msg("n=%zu p=%zu: objective CPU %.17g, CUDA %.17g", n, p, cpu->objective, cuda->objective);
        assert_memory_equal(cpu->weights, cuda->weights, n * sizeof *cpu->weights);
        statgpu_lts_result_destroy(cpu);
        statgpu_lts_result_destroy(cuda);
        free(y);
        free(x);
    }
}

/* ------------------------------------------------------- Gaussian mixture */

/* Component c's centre is at spacing c (or spacing c^2 where quadratic) in
 * every variable, alternating signs: at spacing 3 the components overlap;
 * the GPU's 8-variable E-step pairs components for its products of sums
 * only where their centres are near relative to their spread, so spacing 300
 * leaves every component alone and spacing 3 c^2 pairs the near ones only. */
/* The reference fit: the CPU's, or (g_pairs_reference) the GPU's with every
 * component alone in the 8-variable E-step's products of sums
 * (STATGPU_CUDA_GMM_PAIRS=0), to tighter tolerances. */
static bool g_pairs_reference = false;
static int  g_pairs_differ = 0;  /* fits whose covariances' bits differ between the two */

static void check_gmm_spaced(size_t n, size_t d, size_t k, statgpu_gmm_covariance type, double spacing,
                             bool quadratic)
{
    const double ll_tolerance = g_pairs_reference ? 1e-12 : 1e-10;
    const double parameter_tolerance = g_pairs_reference ? 1e-10 : 1e-8;
    const char *reference = g_pairs_reference ? "alone" : "CPU", *tested = g_pairs_reference ? "paired" : "CUDA";
    double *data = malloc(n * d * sizeof *data);
    test_rng rng = { 7 + n + d + k };
    for (size_t i = 0; i < n; ++i)
        for (size_t v = 0; v < d; ++v) {
            const double c = (double)(i % k);
            data[i + n * v] = spacing * (quadratic ? c * c : c) * (v % 2 ? -1.0 : 1.0) + 0.2 * (double)v
                              + (1.0 + 0.1 * c) * test_rng_normal(&rng);
        }
    /* Given start: means at spread rows, unit precisions. */
    size_t cov = type == STATGPU_GMM_FULL ? k * d * d : type == STATGPU_GMM_TIED ? d * d
                 : type == STATGPU_GMM_DIAG ? k * d : k;
    double *weights = malloc(k * sizeof *weights), *means = malloc(k * d * sizeof *means);
    double *precisions = calloc(cov, sizeof *precisions);
    for (size_t j = 0; j < k; ++j) {
        weights[j] = 1.0 / (double)k;
        for (size_t v = 0; v < d; ++v)
            means[j + k * v] = data[(j * 7919 + 13) % n + n * v];
    }
    if (type == STATGPU_GMM_FULL || type == STATGPU_GMM_TIED) {
        for (size_t b = 0; b < (type == STATGPU_GMM_FULL ? k : 1); ++b)
            for (size_t v = 0; v < d; ++v)
                precisions[b * d * d + v + d * v] = 1.0;
    } else {
        for (size_t e = 0; e < cov; ++e)
            precisions[e] = 1.0;
    }
    statgpu_gmm_params params = test_gmm_given_start(type, weights, means, precisions);
    params.max_iterations = 30;
    statgpu_gmm_result *cpu = NULL, *cuda = NULL, *again = NULL;
    if (g_pairs_reference) {
        assert_int_equal(setenv("STATGPU_CUDA_GMM_PAIRS", "0", 1), 0);
        const statgpu_status status = statgpu_gmm(g_cuda, data, n, d, n, k, &params, &cpu);
        assert_int_equal(unsetenv("STATGPU_CUDA_GMM_PAIRS"), 0);
        assert_int_equal(status, STATGPU_OK);
        TEST_ASSERT_RAN_ON_CUDA(g_cuda, "a mixture with every component alone");
    } else {
        assert_int_equal(statgpu_gmm(g_cpu, data, n, d, n, k, &params, &cpu), STATGPU_OK);
    }
    assert_int_equal(statgpu_gmm(g_cuda, data, n, d, n, k, &params, &cuda), STATGPU_OK);
    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(g_cuda, &report), STATGPU_OK);
    if (d > 16) {
        if (report.last_used != STATGPU_BACKEND_CPU || strstr(report.note, "16 variables") == NULL)
            fail_msg("d=%zu: expected the CPU with a note, ran on %d: %s", d, (int)report.last_used, report.note);
    } else if (report.last_used != STATGPU_BACKEND_CUDA) {
        fail_msg("n=%zu d=%zu k=%zu: a mixture asked for CUDA ran on the CPU: %s", n, d, k, report.note);
    }
    assert_int_equal(statgpu_gmm(g_cuda, data, n, d, n, k, &params, &again), STATGPU_OK);
    assert_memory_equal(cuda->means, again->means, k * d * sizeof(double));
    assert_memory_equal(cuda->covariances, again->covariances, cov * sizeof(double));
    assert_true(test_same_bits(cuda->log_likelihood, again->log_likelihood));
    if (!close_to(cuda->log_likelihood, cpu->log_likelihood, ll_tolerance, 0.0))
        fail_msg("n=%zu d=%zu k=%zu type %d: log-likelihood %s %.17g, %s %.17g", n, d, k, (int)type, reference,
                 cpu->log_likelihood, tested, cuda->log_likelihood);
    double largest_mean = 0.0, largest_cov = 0.0;
    for (size_t e = 0; e < k * d; ++e)
        largest_mean = fmax(largest_mean, fabs(cpu->means[e]));
    for (size_t e = 0; e < cov; ++e)
        largest_cov = fmax(largest_cov, fabs(cpu->covariances[e]));
    for (size_t j = 0; j < k; ++j)
        assert_true(close_to(cuda->weights[j], cpu->weights[j], 0.0, parameter_tolerance));
    for (size_t e = 0; e < k * d; ++e)
        if (!close_to(cuda->means[e], cpu->means[e], 0.0, parameter_tolerance * largest_mean))
            fail_msg("d=%zu k=%zu type %d: mean %zu %s %.17g, %s %.17g", d, k, (int)type, e, reference,
                     cpu->means[e], tested, cuda->means[e]);
    if (g_pairs_reference && memcmp(cuda->covariances, cpu->covariances, cov * sizeof(double)) != 0)
        ++g_pairs_differ;
    for (size_t e = 0; e < cov; ++e)
        if (!close_to(cuda->covariances[e], cpu->covariances[e], 0.0, parameter_tolerance * largest_cov))
            fail_msg("d=%zu k=%zu type %d: covariance %zu %s %.17g, %s %.17g", d, k, (int)type, e, reference,
                     cpu->covariances[e], tested, cuda->covariances[e]);
    for (size_t i = 0; i < n; ++i)
        if (cpu->labels[i] != cuda->labels[i]) {
            double a = cpu->responsibilities[i + n * (size_t)cpu->labels[i]];
            double b = cpu->responsibilities[i + n * (size_t)cuda->labels[i]];
            if (fabs(a - b) > 1e-6)
                fail_msg("row %zu: label %s %d, %s %d", i, reference, cpu->labels[i], tested, cuda->labels[i]);
        }
    statgpu_gmm_result_destroy(cpu);
    statgpu_gmm_result_destroy(cuda);
    statgpu_gmm_result_destroy(again);
    free(data);
    free(weights);
    free(means);
    free(precisions);
}

/* Restarts: on the GPU up to 16 go in one launch an iteration; 20 restarts
 * (a launch of 16, then one of 4) from k-means starts reach the CPU's best
 * log-likelihood within 1e-10 (which restart wins among those that reach the
 * same optimum is a matter of the last bits), and a second GPU run gives the
 * same bits and the same restart. */
static void check_gmm(size_t n, size_t d, size_t k, statgpu_gmm_covariance type)
{
    check_gmm_spaced(n, d, k, type, 3.0, false);
}

static void check_gmm_restarts(void)
{
    const size_t n = 4000, d = 2, k = 3;
    double *data = malloc(n * d * sizeof *data);
    test_rng rng = { 77 };
    for (size_t i = 0; i < n; ++i)
        for (size_t v = 0; v < d; ++v)
            data[i + n * v] = 2.0 * (double)(i % k) * (v ? 1.0 : -1.0) + test_rng_normal(&rng);
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.restart_count = 20;
    params.seed = 12;
    params.tolerance = 1e-8;
    statgpu_gmm_result *cpu = NULL, *cuda = NULL, *again = NULL;
    assert_int_equal(statgpu_gmm(g_cpu, data, n, d, n, k, &params, &cpu), STATGPU_OK);
    assert_int_equal(statgpu_gmm(g_cuda, data, n, d, n, k, &params, &cuda), STATGPU_OK);
    TEST_ASSERT_RAN_ON_CUDA(g_cuda, "GMM restarts");
    assert_int_equal(statgpu_gmm(g_cuda, data, n, d, n, k, &params, &again), STATGPU_OK);
    assert_int_equal(cuda->restart_count, 20);
    assert_int_equal(again->best_restart, cuda->best_restart);
    if (!close_to(cuda->log_likelihood, cpu->log_likelihood, 1e-10, 0.0))
        fail_msg("20 restarts: log-likelihood CPU %.17g, CUDA %.17g", cpu->log_likelihood, cuda->log_likelihood);
    assert_true(test_same_bits(cuda->log_likelihood, again->log_likelihood));
    assert_memory_equal(cuda->means, again->means, k * d * sizeof(double));
    statgpu_gmm_result_destroy(cpu);
    statgpu_gmm_result_destroy(cuda);
    statgpu_gmm_result_destroy(again);
    free(data);
}

static void test_gmm(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    check_gmm_restarts();
    const size_t shapes[][3] = { { 300, 1, 2 }, { 5000, 3, 5 }, { 20000, 8, 8 }, { 3000, 13, 4 },
                                 { 70000, 16, 16 }, { 1000, 2, 64 }, { 2000, 17, 3 },
                                 { 4000, 7, 11 }, { 2500, 6, 3 } };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s)
        for (int type = STATGPU_GMM_FULL; type <= STATGPU_GMM_SPHERICAL; ++type)
            check_gmm(shapes[s][0], shapes[s][1], shapes[s][2], (statgpu_gmm_covariance)type);
    check_gmm_spaced(6000, 8, 6, STATGPU_GMM_FULL, 300.0, false);
    check_gmm_spaced(9000, 8, 12, STATGPU_GMM_FULL, 300.0, false); /* 12 alone: two units a warp */
    check_gmm_spaced(8000, 8, 8, STATGPU_GMM_FULL, 3.0, true);
    check_gmm_spaced(9000, 5, 13, STATGPU_GMM_FULL, 2.0, true);
}

/* The 8-variable E-step's paired products of sums (kernels/gmm.cu,
 * PairSums) against every component alone, both on the GPU: 5 and 8
 * variables, k = 1 to 16 (odd k, one and two units a warp), overlapping and
 * spread components; log-likelihoods within 1e-12, parameters within 1e-10
 * of the largest. */
static void test_gmm_pairs(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    const size_t vars[] = { 5, 8 }, components[] = { 1, 2, 3, 7, 8, 9, 12, 16 };
    g_pairs_reference = true;
    for (size_t a = 0; a < sizeof vars / sizeof vars[0]; ++a)
        for (size_t b = 0; b < sizeof components / sizeof components[0]; ++b) {
            check_gmm_spaced(3000 + 100 * components[b], vars[a], components[b], STATGPU_GMM_FULL, 3.0, false);
            check_gmm_spaced(3000 + 100 * components[b], vars[a], components[b], STATGPU_GMM_FULL, 1.5, true);
        }
    g_pairs_reference = false;
    /* The two must have run different sums: the same bits everywhere would
     * mean the pairing never ran. */
    if (g_pairs_differ == 0)
        fail_msg("every paired fit had the same bits as the fit with every component alone");
}

static int setup(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    if (statgpu_context_create(&params, &g_cpu) != STATGPU_OK)
        return -1;
    params.backend = STATGPU_BACKEND_CUDA;
    if (statgpu_context_create(&params, &g_cuda) != STATGPU_OK)
        return -1;
    statgpu_backend_report report;
    statgpu_context_backend_report(g_cuda, &report);
    if (!report.cuda_available)
        snprintf(g_skip_reason, sizeof g_skip_reason, "no usable CUDA backend: %s", report.note);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    statgpu_context_destroy(g_cpu);
    statgpu_context_destroy(g_cuda);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_statistics),
        cmocka_unit_test(test_kmeans),
        cmocka_unit_test(test_lts),
        cmocka_unit_test(test_gmm),
        cmocka_unit_test(test_gmm_pairs),
    };
    int failures = cmocka_run_group_tests(tests, setup, teardown);
    return test_exit_code(failures, g_skip_reason);
}
