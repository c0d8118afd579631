/*
 * test_gmm.c: Gaussian mixtures (statgpu_gmm) against scikit-learn and on the
 * cases that break a naive EM.
 *
 * Reference (tests/reference/gmm_sklearn.csv, written by gmm_sklearn.py with
 * scikit-learn's GaussianMixture): Old Faithful (k = 2) and iris (k = 3), every
 * covariance type, from the same given initial parameters:
 *   - the lower bound (mean per-row log-likelihood of the E-step) after each of
 *     the first 12 iterations within 1e-9 relative;
 *   - after 12 iterations the weights, means, covariances and precision factors
 *     within 1e-8 relative (absolute floor 1e-10 of the largest magnitude of
 *     each), the total log-likelihood within 1e-9 relative, BIC and AIC
 *     within 1e-9 relative, the parameter count exactly;
 *   - with scikit-learn's defaults (tol 1e-3, max_iter 100) the same number of
 *     iterations and the lower bound within 1e-9.
 * The lower bound never decreases from one iteration to the next (EM's
 * invariant), within 1e-12 relative for rounding.
 *
 * Robustness: a component collapsed on one point, duplicate rows, a constant
 * column, more variables than a component has rows: the fit returns finite
 * parameters and counts its repairs. The CPU's E-step in chunks (gmm_estep.c)
 * against a naive one in long double, every covariance type, part chunks and
 * a component no row reaches; its AVX2 kernel gives the generic (SSE2)
 * kernel's bits. The same bits at 1, 2 and 3 threads;
 * k-means starts and restarts; every bad argument; the result tables.
 *
 * With STATGPU_TEST_BACKEND=cuda (ctest's reference_gmm_cuda) the same tests
 * run with the E-steps on the GPU, to the same tolerances, and each
 * reference fit must have run there; skipped (exit 77) where CUDA is
 * unusable, unless STATGPU_EXPECT_CUDA=1.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "statgpu.h"
#include "methods/gmm_estep.h"
#include "test_reference_csv.h"
#include "test_support.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static statgpu_context *g_context;
static bool             g_cuda;               /* STATGPU_TEST_BACKEND=cuda: the E-steps on the GPU */
static char             g_skip_reason[512] = "";

/* With CUDA asked for, the fit must have run there. */
static void assert_ran_where_asked(void)
{
    if (g_cuda)
        TEST_ASSERT_RAN_ON_CUDA(g_context, "a mixture");
}
static const char      *g_reference_dir = "tests/reference";

#define LINE_BYTES 65536
#define MAX_VALUES 256

static int close_to(double a, double b, double relative, double absolute)
{
    return fabs(a - b) <= relative * fabs(b) + absolute;
}

/* The values of (case_name, quantity) in gmm_sklearn.csv; their count. */
static size_t reference_values(const char *case_name, const char *quantity, double *out)
{
    FILE *file = test_open_reference(g_reference_dir, "gmm_sklearn.csv");
    char *line = malloc(LINE_BYTES);
    size_t count = 0;
    int found = 0;
    while (!found && fgets(line, LINE_BYTES, file)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *first = strchr(line, ','), *second = first ? strchr(first + 1, ',') : NULL;
        if (second == NULL)
            continue;
        *first = *second = '\0';
        if (strcmp(line, case_name) == 0 && strcmp(first + 1, quantity) == 0) {
            count = test_parse_numbers(second + 1, out, MAX_VALUES);
            found = 1;
        }
    }
    fclose(file);
    free(line);
    if (!found)
        fail_msg("gmm_sklearn.csv has no %s %s", case_name, quantity);
    return count;
}

/* A reference data set, column-major with leading dimension n. */
static double *read_data(const char *name, size_t *n, size_t *d)
{
    char file_name[64];
    snprintf(file_name, sizeof file_name, "%s.csv", name);
    double *rows = test_read_numeric_csv(g_reference_dir, file_name, n, d);
    double *data = malloc(*n * *d * sizeof *data);
    for (size_t i = 0; i < *n; ++i)
        for (size_t v = 0; v < *d; ++v)
            data[i + *n * v] = rows[i * *d + v];
    free(rows);
    return data;
}

static const char *const k_types[] = { "full", "tied", "diag", "spherical" };

/* scikit-learn's arrays (row-major by component) in the engine's layouts. */
static void to_engine_layout(statgpu_gmm_covariance type, const double *sk, size_t k, size_t d, double *out,
                             int is_covariance_like)
{
    (void)is_covariance_like;
    switch (type) {
    case STATGPU_GMM_FULL:  /* (k, d, d) [j][r][c] -> block j, (r, c) at r + d c */
        for (size_t j = 0; j < k; ++j)
            for (size_t r = 0; r < d; ++r)
                for (size_t c = 0; c < d; ++c)
                    out[j * d * d + r + d * c] = sk[(j * d + r) * d + c];
        break;
    case STATGPU_GMM_TIED:
        for (size_t r = 0; r < d; ++r)
            for (size_t c = 0; c < d; ++c)
                out[r + d * c] = sk[r * d + c];
        break;
    case STATGPU_GMM_DIAG:  /* (k, d) -> j + k v */
        for (size_t j = 0; j < k; ++j)
            for (size_t v = 0; v < d; ++v)
                out[j + k * v] = sk[j * d + v];
        break;
    case STATGPU_GMM_SPHERICAL:
        memcpy(out, sk, k * sizeof *out);
        break;
    }
}

static size_t cov_count(statgpu_gmm_covariance type, size_t k, size_t d)
{
    return type == STATGPU_GMM_FULL ? k * d * d : type == STATGPU_GMM_TIED ? d * d
                                                  : type == STATGPU_GMM_DIAG ? k * d : k;
}

static void check_close_array(const char *what, const double *got, const double *expected, size_t count,
                              double relative)
{
    double largest = 0.0;
    for (size_t e = 0; e < count; ++e)
        largest = fmax(largest, fabs(expected[e]));
    for (size_t e = 0; e < count; ++e)
        if (!close_to(got[e], expected[e], relative, 1e-10 * largest))
            fail_msg("%s[%zu]: statgpu %.17g, scikit-learn %.17g", what, e, got[e], expected[e]);
}

static void check_reference_case(const char *data_name, size_t k, statgpu_gmm_covariance type)
{
    size_t n, d;
    double *data = read_data(data_name, &n, &d);
    char case_name[64];
    snprintf(case_name, sizeof case_name, "%s_%s", data_name, k_types[type]);
    double weights[MAX_VALUES], means_sk[MAX_VALUES], precisions_sk[MAX_VALUES], bounds[MAX_VALUES];
    double means[MAX_VALUES], precisions[MAX_VALUES], expected[MAX_VALUES], values[MAX_VALUES];
    reference_values(case_name, "weights_init", weights);
    reference_values(case_name, "means_init", means_sk);
    reference_values(case_name, "precisions_init", precisions_sk);
    for (size_t j = 0; j < k; ++j)
        for (size_t v = 0; v < d; ++v)
            means[j + k * v] = means_sk[j * d + v];
    to_engine_layout(type, precisions_sk, k, d, precisions, 0);
    size_t iterations = reference_values(case_name, "bounds", bounds);

    statgpu_gmm_params params = test_gmm_given_start(type, weights, means, precisions);
    double previous = -INFINITY;
    for (size_t t = 1; t <= iterations; ++t) {
        params.max_iterations = t;
        statgpu_gmm_result *r = NULL;
        if (statgpu_gmm(g_context, data, n, d, n, k, &params, &r) != STATGPU_OK)
            fail_msg("%s t=%zu: %s", case_name, t, statgpu_context_last_error(g_context));
        assert_ran_where_asked();
        if (!close_to(r->lower_bound, bounds[t - 1], 1e-9, 0.0))
            fail_msg("%s: lower bound after %zu iterations %.17g, scikit-learn %.17g", case_name, t, r->lower_bound,
                     bounds[t - 1]);
        if (!(r->lower_bound >= previous - 1e-12 * fabs(previous)))
            fail_msg("%s: the lower bound fell from %.17g to %.17g at iteration %zu", case_name, previous,
                     r->lower_bound, t);
        previous = r->lower_bound;
        assert_int_equal(r->iterations, t);
        if (t < iterations) {
            statgpu_gmm_result_destroy(r);
            continue;
        }
        char what[96];
        reference_values(case_name, "weights", expected);
        snprintf(what, sizeof what, "%s weights", case_name);
        check_close_array(what, r->weights, expected, k, 1e-8);
        reference_values(case_name, "means", values);
        for (size_t j = 0; j < k; ++j)
            for (size_t v = 0; v < d; ++v)
                expected[j + k * v] = values[j * d + v];
        snprintf(what, sizeof what, "%s means", case_name);
        check_close_array(what, r->means, expected, k * d, 1e-8);
        reference_values(case_name, "covariances", values);
        to_engine_layout(type, values, k, d, expected, 1);
        snprintf(what, sizeof what, "%s covariances", case_name);
        check_close_array(what, r->covariances, expected, cov_count(type, k, d), 1e-8);
        reference_values(case_name, "precisions_cholesky", values);
        to_engine_layout(type, values, k, d, expected, 1);
        snprintf(what, sizeof what, "%s precision factors", case_name);
        check_close_array(what, r->precisions_cholesky, expected, cov_count(type, k, d), 1e-8);
        reference_values(case_name, "score", values);
        if (!close_to(r->log_likelihood, values[0], 1e-9, 0.0))
            fail_msg("%s: log-likelihood %.17g, scikit-learn %.17g", case_name, r->log_likelihood, values[0]);
        reference_values(case_name, "bic", values);
        assert_true(close_to(r->bic, values[0], 1e-9, 0.0));
        reference_values(case_name, "aic", values);
        assert_true(close_to(r->aic, values[0], 1e-9, 0.0));
        reference_values(case_name, "parameters", values);
        assert_int_equal(r->parameter_count, (size_t)values[0]);
        for (size_t i = 0; i < n; ++i) {
            double total = 0.0;
            for (size_t j = 0; j < k; ++j)
                total += r->responsibilities[i + n * j];
            assert_true(fabs(total - 1.0) < 1e-12);
            assert_true(r->labels[i] >= 0 && (size_t)r->labels[i] < k);
        }
        statgpu_gmm_result_destroy(r);
    }

    params.tolerance = 1e-3;
    params.max_iterations = 100;
    statgpu_gmm_result *r = NULL;
    assert_int_equal(statgpu_gmm(g_context, data, n, d, n, k, &params, &r), STATGPU_OK);
    reference_values(case_name, "converged_iterations", values);
    if (r->iterations != (size_t)values[0])
        fail_msg("%s: converged after %zu iterations, scikit-learn after %g", case_name, r->iterations, values[0]);
    assert_int_equal(r->converged, 1);
    reference_values(case_name, "converged_bound", values);
    assert_true(close_to(r->lower_bound, values[0], 1e-9, 0.0));
    statgpu_gmm_result_destroy(r);
    free(data);
}

static void test_scikit_learn_faithful(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    for (int type = STATGPU_GMM_FULL; type <= STATGPU_GMM_SPHERICAL; ++type)
        check_reference_case("faithful", 2, (statgpu_gmm_covariance)type);
}

static void test_scikit_learn_iris(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    for (int type = STATGPU_GMM_FULL; type <= STATGPU_GMM_SPHERICAL; ++type)
        check_reference_case("iris", 3, (statgpu_gmm_covariance)type);
}

/* ------------------------------------------------------------ robustness */

static void assert_finite_result(const statgpu_gmm_result *r)
{
    size_t k = r->k, d = r->n_vars;
    for (size_t j = 0; j < k; ++j)
        assert_true(isfinite(r->weights[j]) && r->weights[j] > 0.0);
    for (size_t e = 0; e < k * d; ++e)
        assert_true(isfinite(r->means[e]));
    for (size_t e = 0; e < cov_count(r->covariance, k, d); ++e)
        assert_true(isfinite(r->covariances[e]) && isfinite(r->precisions_cholesky[e]));
    for (size_t i = 0; i < r->n_obs; ++i)
        assert_true(isfinite(r->row_log_likelihood[i]));
    assert_true(isfinite(r->log_likelihood) && isfinite(r->bic) && isfinite(r->aic));
}

static void test_degenerate_data(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    enum { n = 40 };
    double data[n * 3];
    test_rng rng = { 3 };
    /* Rows 0..9 all equal (a component collapses on them), a constant third
     * column, the rest two loose clusters. */
    for (size_t i = 0; i < n; ++i) {
        data[i] = i < 10 ? 5.0 : (i % 2 ? 10.0 : -10.0) + test_rng_normal(&rng);
        data[i + n] = i < 10 ? 5.0 : test_rng_normal(&rng);
        data[i + 2 * n] = 7.0;
    }
    for (int type = STATGPU_GMM_FULL; type <= STATGPU_GMM_SPHERICAL; ++type) {
        statgpu_gmm_params params;
        statgpu_gmm_params_init(&params);
        params.covariance = (statgpu_gmm_covariance)type;
        params.reg_covar = 0.0;  /* nothing hides the singular covariances */
        statgpu_gmm_result *r = NULL;
        if (statgpu_gmm(g_context, data, n, 3, n, 3, &params, &r) != STATGPU_OK)
            fail_msg("type %d: %s", type, statgpu_context_last_error(g_context));
        assert_finite_result(r);
        /* The collapsed component's full covariance is singular and must be
         * repaired; the other types' estimates around a mean a few ulps off
         * 7 may stay barely positive, which is no failure either. */
        if (type == STATGPU_GMM_FULL && r->regularised_count == 0)
            fail_msg("the singular full covariance was not repaired");
        statgpu_gmm_result_destroy(r);
    }
    /* More variables than rows in a component. */
    enum { wide_n = 12, wide_d = 20 };
    double wide[wide_n * wide_d];
    for (size_t c = 0; c < (size_t)wide_n * wide_d; ++c)
        wide[c] = test_rng_normal(&rng) + (c % wide_n < 6 ? 0.0 : 8.0);
    statgpu_gmm_result *r = NULL;
    assert_int_equal(statgpu_gmm(g_context, wide, wide_n, wide_d, wide_n, 2, NULL, &r), STATGPU_OK);
    assert_finite_result(r);
    statgpu_gmm_result_destroy(r);
}

/* The tables (statgpu_gmm_tables) hold the result's fields cell for cell:
 * weights, means, covariances (full: stacked blocks), labels 1-based and
 * empty at rows left out, probabilities, density, the summary's values; the
 * catalogue lists the tables in order. */
static void test_result_tables(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n, d;
    double *data = read_data("faithful", &n, &d);
    statgpu_gmm_result *r = NULL;
    assert_int_equal(statgpu_gmm(g_context, data, n, d, n, 2, NULL, &r), STATGPU_OK);
    /* The observations came from every other row of a sheet of 2n rows. */
    size_t *rows = malloc(n * sizeof *rows);
    for (size_t i = 0; i < n; ++i)
        rows[i] = 2 * i + 1;
    const char *const names[] = { "eruptions", "waiting" };
    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.variable_names = names;
    params.source_row_count = 2 * n;
    params.source_rows = rows;
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_gmm_tables(g_context, r, &params, &set), STATGPU_OK);
    const char *const *catalogue = statgpu_method_table_names("gmm");
    assert_int_equal(statgpu_table_set_count(set), 8);
    for (size_t t = 0; t < 8; ++t)
        assert_string_equal(statgpu_table_set_get(set, t)->name, catalogue[t]);

    const statgpu_table *weights = statgpu_table_set_find(set, "weights");
    for (size_t j = 0; j < 2; ++j)
        assert_bits_equal(weights->values[j], r->weights[j]);
    const statgpu_table *means = statgpu_table_set_find(set, "Means ");
    assert_string_equal(means->column_headers[1], "waiting");
    for (size_t e = 0; e < 2 * d; ++e)
        assert_bits_equal(means->values[e], r->means[e]);
    const statgpu_table *cov = statgpu_table_set_find(set, "covariances");
    assert_int_equal(cov->row_count, 2 * d);
    assert_string_equal(cov->row_labels[d + 1], "2, waiting");
    for (size_t j = 0; j < 2; ++j)
        for (size_t row = 0; row < d; ++row)
            for (size_t c = 0; c < d; ++c)
                assert_bits_equal(cov->values[j * d + row + 2 * d * c], r->covariances[j * d * d + row + d * c]);
    const statgpu_table *labels = statgpu_table_set_find(set, "labels");
    const statgpu_table *probabilities = statgpu_table_set_find(set, "probabilities");
    const statgpu_table *density = statgpu_table_set_find(set, "density");
    assert_int_equal(labels->row_count, 2 * n);
    for (size_t i = 0; i < n; ++i) {
        assert_int_equal(labels->cell_kinds[2 * i], STATGPU_CELL_EMPTY);
        assert_int_equal(labels->cell_kinds[2 * i + 1], STATGPU_CELL_NUMBER);
        assert_bits_equal(labels->values[2 * i + 1], (double)r->labels[i] + 1.0);
        assert_bits_equal(density->values[2 * i + 1], r->row_log_likelihood[i]);
        for (size_t j = 0; j < 2; ++j)
            assert_bits_equal(probabilities->values[2 * i + 1 + 2 * n * j], r->responsibilities[i + n * j]);
    }
    const statgpu_table *summary = statgpu_table_set_find(set, "summary");
    assert_bits_equal(summary->values[0], r->log_likelihood);
    assert_bits_equal(summary->values[1], r->bic);
    assert_string_equal(summary->texts[summary->row_count + 1], "BIC (lower is better; mclust's is its negative)");
    assert_bits_equal(summary->values[summary->row_count - 1], (double)n);
    const statgpu_table *selection = statgpu_table_set_find(set, "selection");
    assert_int_equal(selection->row_count, 1);
    assert_int_equal(selection->column_count, 10);
    assert_string_equal(selection->texts[1], "full");
    assert_bits_equal(selection->values[4], r->bic);
    assert_bits_equal(selection->values[8], 1.0);
    assert_bits_equal(selection->values[9], (double)r->singular_components);
    statgpu_table_set_destroy(set);
    free(rows);
    statgpu_gmm_result_destroy(r);
    free(data);
}

static bool same_result(const statgpu_gmm_result *a, const statgpu_gmm_result *b)
{
    size_t k = a->k, d = a->n_vars;
    return memcmp(a->means, b->means, k * d * sizeof(double)) == 0
           && memcmp(a->weights, b->weights, k * sizeof(double)) == 0
           && memcmp(a->covariances, b->covariances, cov_count(a->covariance, k, d) * sizeof(double)) == 0
           && memcmp(a->labels, b->labels, a->n_obs * sizeof(int32_t)) == 0
           && test_same_bits(a->log_likelihood, b->log_likelihood) && a->iterations == b->iterations;
}

/* 20000 rows (five blocks): the same bits at 1, 2 and 3 threads; restarts
 * keep the highest lower bound. */
static void test_threads_and_restarts(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    enum { n = 20000, d = 3 };
    double *data = malloc(n * d * sizeof *data);
    test_rng rng = { 11 };
    for (size_t i = 0; i < n; ++i)
        for (size_t v = 0; v < d; ++v)
            data[i + n * v] = 4.0 * (double)(i % 4) + (double)v + test_rng_normal(&rng);
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.seed = 9;
    statgpu_gmm_result *first = NULL;
    for (int threads = 1; threads <= 3; ++threads) {
        statgpu_context *context = NULL;
        TEST_CONTEXT_WITH_THREADS(STATGPU_BACKEND_CPU, threads, context);
        statgpu_gmm_result *r = NULL;
        assert_int_equal(statgpu_gmm(context, data, n, d, n, 4, &params, &r), STATGPU_OK);
        assert_finite_result(r);
        if (first == NULL)
            first = r;
        else {
            assert_true(same_result(first, r));
            statgpu_gmm_result_destroy(r);
        }
        statgpu_context_destroy(context);
    }
    params.restart_count = 4;
    statgpu_gmm_result *best = NULL;
    assert_int_equal(statgpu_gmm(g_context, data, n, d, n, 4, &params, &best), STATGPU_OK);
    assert_int_equal(best->restart_count, 4);
    assert_true(best->lower_bound >= first->lower_bound - 1e-12 * fabs(first->lower_bound)
                || best->best_restart != 0);
    statgpu_gmm_result_destroy(best);
    statgpu_gmm_result_destroy(first);
    free(data);
}

/* A naive E-step in long double, a row at a time: log w_j + log det U_j -
 * d log(2 pi) / 2 - |U_j^T (x - mean_j)|^2 / 2 per component, with U_j the
 * precision factor (full and tied upper triangular, n_vars x n_vars blocks;
 * diag k x n_vars; spherical k), the responsibilities into resp (n x k)
 * and each row's log-likelihood into row_ll. */
static void naive_e_step(statgpu_gmm_covariance type, const double *data, size_t n, size_t d, size_t k,
                         const double *weights, const double *means, const double *factors, double *resp,
                         double *row_ll)
{
    long double log_terms[16];
    assert_true(k <= 16);
    for (size_t i = 0; i < n; ++i) {
        long double largest = -INFINITY;
        for (size_t j = 0; j < k; ++j) {
            long double quadratic = 0.0L, log_det = 0.0L;
            for (size_t c = 0; c < d; ++c) {
                long double y = 0.0L, u_cc;
                if (type == STATGPU_GMM_FULL || type == STATGPU_GMM_TIED) {
                    const double *u = factors + (type == STATGPU_GMM_FULL ? j * d * d : 0);
                    for (size_t r = 0; r <= c; ++r)
                        y += (long double)u[r + d * c] * ((long double)data[i + n * r] - means[j + k * r]);
                    u_cc = u[c + d * c];
                } else {
                    u_cc = type == STATGPU_GMM_DIAG ? factors[j + k * c] : factors[j];
                    y = u_cc * ((long double)data[i + n * c] - means[j + k * c]);
                }
                quadratic += y * y;
                log_det += logl(u_cc);
            }
            log_terms[j] = logl(weights[j]) + log_det - 0.5L * (long double)d * logl(2.0L * 3.14159265358979323846264338327950288L)
                           - 0.5L * quadratic;
            largest = log_terms[j] > largest ? log_terms[j] : largest;
        }
        long double sum = 0.0L;
        for (size_t j = 0; j < k; ++j)
            sum += expl(log_terms[j] - largest);
        row_ll[i] = (double)(largest + logl(sum));
        for (size_t j = 0; j < k; ++j)
            resp[i + n * j] = (double)(expl(log_terms[j] - largest) / sum);
    }
}

/* The E-step's chunks (gmm_estep.c: 32 rows, the last filled up) and blocks
 * (4096 rows): 4141 rows, so two blocks and a part chunk, every covariance
 * type, n_vars 1, 3, 6, 8, 9 and 17 (more than a tile of the quadratic
 * forms; 6, 8 and 9 take the GPU's tensor-core E-step, with 8 and 16 slots
 * for components), k 1 to 5 and 11, one component far from every row (its
 * responsibilities 0, the exps clamped). One iteration from given parameters: the lower bound
 * against a naive E-step's mean log-likelihood, weights, means and
 * covariances against the naive M-step of its responsibilities; the final
 * E-step's responsibilities and row log-likelihoods against the naive
 * E-step of the returned parameters. */
static void test_e_step_chunks(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    enum { n = 4141, most_vars = 17, most_k = 11 };
    static const size_t shapes[][2] = { { 1, 1 }, { 3, 4 }, { 9, 5 }, { 17, 3 }, { 1, 4 }, { 8, 3 }, { 6, 11 } };
    static const statgpu_gmm_covariance types[] = { STATGPU_GMM_FULL, STATGPU_GMM_TIED, STATGPU_GMM_DIAG,
                                                    STATGPU_GMM_SPHERICAL };
    double *data = malloc(n * most_vars * sizeof *data);
    double *resp = malloc(n * most_k * sizeof *resp), *row_ll = malloc(n * sizeof *row_ll);
    double weights[most_k], means[most_k * most_vars], expected[most_k * most_vars * most_vars];
    double factors[most_k * most_vars * most_vars], precisions[most_k * most_vars * most_vars];
    test_rng rng = { 23 };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
        const size_t d = shapes[s][0], k = shapes[s][1];
        for (size_t i = 0; i < n; ++i)
            for (size_t v = 0; v < d; ++v)
                data[i + n * v] = 100.0 + 3.0 * (double)(i % 3) * (double)(v % 2 ? -1 : 1) + test_rng_normal(&rng);
        for (size_t j = 0; j < k; ++j) {
            weights[j] = 1.0 / (double)k;
            for (size_t v = 0; v < d; ++v)  /* a row's values; the last of four or more components far off */
                means[j + k * v] = data[(j * 997) % n + n * v] + (k >= 4 && j == k - 1 ? 60.0 : 0.0);
        }
        for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
            const statgpu_gmm_covariance type = types[t];
            const size_t blocks = type == STATGPU_GMM_FULL ? k : 1;
            /* factors U (upper triangular, off-diagonal terms up to 0.1), precisions U U^T */
            memset(factors, 0, sizeof factors);
            memset(precisions, 0, sizeof precisions);
            if (type == STATGPU_GMM_FULL || type == STATGPU_GMM_TIED) {
                for (size_t j = 0; j < blocks; ++j) {
                    double *u = factors + j * d * d, *p = precisions + j * d * d;
                    for (size_t c = 0; c < d; ++c)
                        for (size_t r = 0; r <= c; ++r)
                            u[r + d * c] = r == c ? 0.8 + 0.1 * (double)((j + c) % 3)
                                                  : 0.05 * (double)((int)((r + 2 * c + j) % 5) - 2);
                    for (size_t c = 0; c < d; ++c)
                        for (size_t r = 0; r < d; ++r)
                            for (size_t q = r > c ? r : c; q < d; ++q)
                                p[r + d * c] += u[r + d * q] * u[c + d * q];
                }
            } else {
                const size_t count = type == STATGPU_GMM_DIAG ? k * d : k;
                for (size_t e = 0; e < count; ++e) {
                    factors[e] = 0.8 + 0.1 * (double)(e % 3);
                    precisions[e] = factors[e] * factors[e];
                }
            }
            statgpu_gmm_params params = test_gmm_given_start(type, weights, means, precisions);
            params.max_iterations = 1;
            statgpu_gmm_result *r = NULL;
            if (statgpu_gmm(g_context, data, n, d, n, k, &params, &r) != STATGPU_OK)
                fail_msg("d = %zu, k = %zu, type %d: %s", d, k, (int)type, statgpu_context_last_error(g_context));
            char what[96];
            snprintf(what, sizeof what, "d = %zu, k = %zu, type %d", d, k, (int)type);

            /* the iteration: its E-step of the given parameters, its M-step */
            naive_e_step(type, data, n, d, k, weights, means, factors, resp, row_ll);
            long double total = 0.0L, nk[most_k], nk_total = 0.0L;
            for (size_t i = 0; i < n; ++i)
                total += row_ll[i];
            if (!close_to(r->lower_bound, (double)(total / n), 1e-12, 0.0))
                fail_msg("%s: lower bound %.17g, naive %.17g", what, r->lower_bound, (double)(total / n));
            for (size_t j = 0; j < k; ++j) {
                nk[j] = 10.0L * DBL_EPSILON;
                for (size_t i = 0; i < n; ++i)
                    nk[j] += resp[i + n * j];
                nk_total += nk[j];
            }
            for (size_t j = 0; j < k; ++j)
                expected[j] = (double)(nk[j] / nk_total);
            check_close_array(what, r->weights, expected, k, 1e-12);
            for (size_t j = 0; j < k; ++j)
                for (size_t v = 0; v < d; ++v) {
                    long double sum = 0.0L;
                    for (size_t i = 0; i < n; ++i)
                        sum += (long double)resp[i + n * j] * data[i + n * v];
                    expected[j + k * v] = (double)(sum / nk[j]);
                }
            check_close_array(what, r->means, expected, k * d, 1e-12);
            const double *new_means = r->means;
            size_t count = type == STATGPU_GMM_FULL ? k * d * d : type == STATGPU_GMM_TIED ? d * d
                           : type == STATGPU_GMM_DIAG ? k * d : k;
            for (size_t e = 0; e < count; ++e)
                expected[e] = 0.0;
            for (size_t j = 0; j < k; ++j)
                for (size_t c = 0; c < d; ++c)
                    for (size_t q = 0; q < d; ++q) {
                        if (type != STATGPU_GMM_FULL && type != STATGPU_GMM_TIED && q != c)
                            continue;
                        long double sum = 0.0L;
                        for (size_t i = 0; i < n; ++i)
                            sum += (long double)resp[i + n * j] * (data[i + n * c] - (long double)new_means[j + k * c])
                                   * (data[i + n * q] - (long double)new_means[j + k * q]);
                        if (type == STATGPU_GMM_FULL)
                            expected[j * d * d + q + d * c] = (double)(sum / nk[j]) + (q == c ? params.reg_covar : 0.0);
                        else if (type == STATGPU_GMM_TIED)
                            expected[q + d * c] += (double)(sum / nk_total) + (q == c && j == 0 ? params.reg_covar : 0.0);
                        else if (type == STATGPU_GMM_DIAG)
                            expected[j + k * c] = (double)(sum / nk[j]) + params.reg_covar;
                        else
                            expected[j] += ((double)(sum / nk[j]) + params.reg_covar) / (double)d;
                    }
            check_close_array(what, r->covariances, expected, count, 1e-9);

            /* the final E-step, of the returned parameters */
            naive_e_step(type, data, n, d, k, r->weights, r->means, r->precisions_cholesky, resp, row_ll);
            check_close_array(what, r->row_log_likelihood, row_ll, n, 1e-12);
            for (size_t e = 0; e < n * k; ++e)
                if (fabs(r->responsibilities[e] - resp[e]) > 1e-12)
                    fail_msg("%s: responsibility %zu %.17g, naive %.17g", what, e, r->responsibilities[e], resp[e]);
            statgpu_gmm_result_destroy(r);
        }
    }
    free(data);
    free(resp);
    free(row_ll);
}

/* The CPU E-step's kernels (gmm_estep.c): the AVX2 one gives the generic
 * one's bits (SSE2 code on x86-64, what a CPU without AVX2 runs) in every
 * output: responsibilities, row log-likelihoods and the sums. Every
 * covariance type, n_vars 1 to 5, 7 to 9, 16 and 17 (vector tails, more
 * than a tile), k 1, 2, 3, 5 and 11 (components spread out, the farthest
 * with responsibilities 0 or subnormal), rows 5 to 106 of 110 (three
 * chunks and a part-filled one, from a row not on a chunk's boundary).
 * Skipped where the CPU has no AVX2. */
static void test_e_step_kernels_agree(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    sg_gmm_estep_kernel *generic = sg_gmm_estep_kernel_named("generic");
    sg_gmm_estep_kernel *avx2 = sg_gmm_estep_kernel_named("avx2");
    assert_non_null(generic);
    if (avx2 == NULL) {
        print_message("skipped: this CPU has no AVX2, so only the generic E-step kernel runs here\n");
        skip();
    }
    enum { n = 110, ld = 113, begin = 5, end = 107, most_vars = 17, most_k = 11 };
    static const size_t var_counts[] = { 1, 2, 3, 4, 5, 7, 8, 9, 16, 17 };
    static const size_t component_counts[] = { 1, 2, 3, 5, 11 };
    static const statgpu_gmm_covariance types[] = { STATGPU_GMM_FULL, STATGPU_GMM_TIED, STATGPU_GMM_DIAG,
                                                    STATGPU_GMM_SPHERICAL };
    static double data[ld * most_vars], means[most_k * most_vars], factors[most_k * most_vars * most_vars];
    static double resp[2][n * most_k], row_ll[2][n], partial[2][1 + most_k + 2 * most_k * most_vars * most_vars];
    double constant[most_k];
    test_rng rng = { 31 };
    for (size_t e = 0; e < ld * most_vars; ++e)
        data[e] = 10.0 + 2.0 * test_rng_normal(&rng);
    for (size_t dv = 0; dv < sizeof var_counts / sizeof var_counts[0]; ++dv)
        for (size_t dk = 0; dk < sizeof component_counts / sizeof component_counts[0]; ++dk)
            for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
                const size_t d = var_counts[dv], k = component_counts[dk];
                const statgpu_gmm_covariance type = types[t];
                const bool products = type == STATGPU_GMM_FULL || type == STATGPU_GMM_TIED;
                const size_t partial_count = 1 + k + k * d + k * (products ? d * d : d);
                char what[96];
                snprintf(what, sizeof what, "d = %zu, k = %zu, type %d", d, k, (int)type);
                /* component j a row's values moved by 7 j in the first variable */
                for (size_t j = 0; j < k; ++j)
                    for (size_t v = 0; v < d; ++v)
                        means[j + k * v] = data[(j * 37) % n + ld * v] + (v == 0 ? 7.0 * (double)j : 0.0);
                /* factors U (upper triangular), constant log w_j + log det U_j - d log(2 pi) / 2 */
                memset(factors, 0, sizeof factors);
                for (size_t j = 0; j < (type == STATGPU_GMM_TIED ? 1 : k); ++j)
                    for (size_t c = 0; c < d; ++c) {
                        const double diagonal = 0.6 + 0.1 * (double)((j + c) % 4);
                        if (products) {
                            double *u = factors + j * d * d;
                            for (size_t r = 0; r < c; ++r)
                                u[r + d * c] = 0.05 * (double)((int)((r + 2 * c + j) % 5) - 2);
                            u[c + d * c] = diagonal;
                        } else if (type == STATGPU_GMM_DIAG) {
                            factors[j + k * c] = diagonal;
                        } else {
                            factors[j] = diagonal;
                        }
                    }
                for (size_t j = 0; j < k; ++j) {
                    double log_det = 0.0;
                    for (size_t c = 0; c < d; ++c)
                        log_det += log(type == STATGPU_GMM_FULL ? factors[j * d * d + c + d * c]
                                       : type == STATGPU_GMM_TIED ? factors[c + d * c]
                                       : type == STATGPU_GMM_DIAG ? factors[j + k * c] : factors[j]);
                    constant[j] = log(1.0 / (double)k) + log_det - 0.5 * (double)d * 1.8378770664093454835606594728112;
                }
                const sg_gmm_estep_model model = { d, k, type, means, factors, constant };
                sg_gmm_estep_kernel *const kernels[2] = { generic, avx2 };
                double *scratch = malloc(sg_gmm_estep_scratch_count(d, k) * sizeof *scratch);
                assert_non_null(scratch);
                for (int which = 0; which < 2; ++which) {
                    /* the rows outside [begin, end) keep what they hold */
                    for (size_t e = 0; e < n * k; ++e)
                        resp[which][e] = -1.0;
                    for (size_t i = 0; i < n; ++i)
                        row_ll[which][i] = -1.0;
                    memset(partial[which], 0, partial_count * sizeof partial[which][0]);
                    const sg_gmm_estep_out out = { resp[which], n, row_ll[which], partial[which] };
                    kernels[which](&model, data, ld, begin, end, &out, scratch);
                }
                free(scratch);
                assert_array_bits_equal(what, "responsibilities", resp[1], resp[0], n * k);
                assert_array_bits_equal(what, "row log-likelihoods", row_ll[1], row_ll[0], n);
                assert_array_bits_equal(what, "sums", partial[1], partial[0], partial_count);
                for (size_t i = begin; i < end; ++i)
                    if (!isfinite(row_ll[0][i]))
                        fail_msg("%s: row %zu's log-likelihood %g", what, i, row_ll[0][i]);
            }
}

/* The data's scan runs on blocks of rows in parallel: the value it reports is
 * still the first by variable, then observation, and the rows below n of a
 * longer leading dimension are not data. */
static void test_first_bad_value(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    const size_t n = 3 * 4096 + 5, d = 3, ld = n + 2;
    double *data = malloc(ld * d * sizeof *data);
    assert_non_null(data);
    for (size_t i = 0; i < ld * d; ++i)
        data[i] = (double)(i % 97) / 7.0;
    data[n + ld * 0] = INFINITY;  /* beyond the observations: ignored */
    data[n + 1 + ld * 2] = NAN;
    statgpu_gmm_result *r = NULL;
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.max_iterations = 2;
    assert_int_equal(statgpu_gmm(g_context, data, n, d, ld, 2, &params, &r), STATGPU_OK);
    statgpu_gmm_result_destroy(r);
    r = NULL;
    data[9000 + ld * 2] = NAN;        /* a later variable, an earlier row */
    data[12000 + ld * 1] = -INFINITY; /* the first by variable */
    data[8000 + ld * 2] = INFINITY;
    assert_int_equal(statgpu_gmm(g_context, data, n, d, ld, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(r);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "infinity (observation 12001, variable 2)"));
    data[12000 + ld * 1] = 1.0;
    assert_int_equal(statgpu_gmm(g_context, data, n, d, ld, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "infinity (observation 8001, variable 3)"));
    data[8000 + ld * 2] = 1.0;
    assert_int_equal(statgpu_gmm(g_context, data, n, d, ld, 2, &params, &r), STATGPU_ERROR_NAN_IN_DATA);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "NaN (observation 9001, variable 3)"));
    free(data);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    double data[6] = { 1, 2, 3, 4, 5, NAN };
    statgpu_gmm_result *r = (statgpu_gmm_result *)1;
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 2, NULL, &r), STATGPU_ERROR_NAN_IN_DATA);
    assert_null(r);
    data[5] = 6;
    assert_int_equal(statgpu_gmm(g_context, NULL, 6, 1, 6, 2, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 0, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 7, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 5, 2, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_gmm(g_context, data, 0, 1, 6, 2, NULL, &r), STATGPU_ERROR_EMPTY_INPUT);
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 2, NULL, NULL), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.covariance = (statgpu_gmm_covariance)9;
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_gmm_params_init(&params);
    params.reg_covar = -1.0;
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_gmm_params_init(&params);
    params.reg_covar_relative = 7;  /* 0 or 1 */
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_gmm_params_init(&params);
    params.max_iterations = 0;
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_gmm_params_init(&params);
    params.init = STATGPU_GMM_INIT_GIVEN;
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    double weights[2] = { 0.5, 0.5 }, means[2] = { 1, 5 }, not_positive[2] = { 1, -1 };
    params.initial_weights = weights;
    params.initial_means = means;
    params.initial_precisions = not_positive;
    params.covariance = STATGPU_GMM_DIAG;
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "not positive"));
    double bad_weights[2] = { 0.5, 0.6 };
    params.initial_weights = bad_weights;
    not_positive[1] = 1;
    assert_int_equal(statgpu_gmm(g_context, data, 6, 1, 6, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(r);
}

/* ---- mclust's optima (gmm_mclust.csv) ------------------------------------ */

/* Splits a line of gmm_mclust.csv (fields quoted or not, no comma inside a
 * quoted field) in place; the field count. */
static size_t split_csv_line(char *line, char **fields, size_t capacity)
{
    size_t count = 0;
    char *cursor = line;
    while (count < capacity) {
        char *end = strchr(cursor, ',');
        if (end != NULL)
            *end = '\0';
        size_t length = strlen(cursor);
        if (length >= 2 && cursor[0] == '"' && cursor[length - 1] == '"') {
            cursor[length - 1] = '\0';
            ++cursor;
        }
        fields[count++] = cursor;
        if (end == NULL)
            break;
        cursor = end + 1;
    }
    return count;
}

/* The component of a that matches component j of b: the nearest means. */
static size_t matching_component(const double *means_a, const double *means_b, size_t k, size_t d, size_t j)
{
    size_t best = 0;
    double best_distance = INFINITY;
    for (size_t c = 0; c < k; ++c) {
        double distance = 0.0;
        for (size_t v = 0; v < d; ++v)
            distance += pow(means_a[c + k * v] - means_b[j * d + v], 2);
        if (distance < best_distance) {
            best_distance = distance;
            best = c;
        }
    }
    return best;
}

/* The inverse of a symmetric positive definite d x d matrix by Gauss-Jordan
 * (d <= 4 here). */
static void invert(const double *a, size_t d, double *inverse)
{
    double work[16 * 2];
    for (size_t r = 0; r < d; ++r)
        for (size_t c = 0; c < 2 * d; ++c)
            work[r * 2 * d + c] = c < d ? a[r * d + c] : (c - d == r);
    for (size_t p = 0; p < d; ++p) {
        double pivot = work[p * 2 * d + p];
        for (size_t c = 0; c < 2 * d; ++c)
            work[p * 2 * d + c] /= pivot;
        for (size_t r = 0; r < d; ++r)
            if (r != p) {
                double factor = work[r * 2 * d + p];
                for (size_t c = 0; c < 2 * d; ++c)
                    work[r * 2 * d + c] -= factor * work[p * 2 * d + c];
            }
    }
    for (size_t r = 0; r < d; ++r)
        for (size_t c = 0; c < d; ++c)
            inverse[r * d + c] = work[r * 2 * d + d + c];
}

typedef struct mclust_case {
    const char *data, *model;
    statgpu_gmm_covariance type;
    size_t k, parameters;
    double loglik, bic, weights[MAX_VALUES], means[MAX_VALUES], covariances[MAX_VALUES];
} mclust_case;

/* Fails unless r holds mclust's parameters (component j of mclust is r's
 * nearest by means): weights within 1e-4, means and covariances within 1e-4
 * of the largest of each. */
static void check_mclust_parameters(const mclust_case *m, const statgpu_gmm_result *r, size_t d)
{
    size_t k = m->k;
    double largest_mean = 0.0, largest_cov = 0.0;
    for (size_t e = 0; e < k * d; ++e)
        largest_mean = fmax(largest_mean, fabs(m->means[e]));
    for (size_t e = 0; e < k * d * d; ++e)
        largest_cov = fmax(largest_cov, fabs(m->covariances[e]));
    for (size_t j = 0; j < k; ++j) {
        size_t c = matching_component(r->means, m->means, k, d, j);
        if (fabs(r->weights[c] - m->weights[j]) > 1e-4)
            fail_msg("%s %s: weight %zu %.17g, mclust %.17g", m->data, m->model, j, r->weights[c], m->weights[j]);
        for (size_t v = 0; v < d; ++v) {
            if (fabs(r->means[c + k * v] - m->means[j * d + v]) > 1e-4 * largest_mean)
                fail_msg("%s %s: mean %zu,%zu %.17g, mclust %.17g", m->data, m->model, j, v, r->means[c + k * v],
                         m->means[j * d + v]);
            for (size_t w = 0; w < d; ++w) {
                double expected = m->covariances[(j * d + v) * d + w], got = 0.0;
                switch (m->type) {
                case STATGPU_GMM_FULL:      got = r->covariances[c * d * d + v + d * w]; break;
                case STATGPU_GMM_TIED:      got = r->covariances[v + d * w]; break;
                case STATGPU_GMM_DIAG:      got = v == w ? r->covariances[c + k * v] : 0.0; break;
                case STATGPU_GMM_SPHERICAL: got = v == w ? r->covariances[c] : 0.0; break;
                }
                if (fabs(got - expected) > 1e-4 * largest_cov)
                    fail_msg("%s %s: covariance %zu (%zu,%zu) %.17g, mclust %.17g", m->data, m->model, j, v, w,
                             got, expected);
            }
        }
    }
}

/* mclust's optima (gmm_mclust.csv: mclust's EM from its own hierarchical
 * start, run to a relative change of 1e-12), each covariance type, with
 * reg_covar = 0 as mclust and tolerance 1e-13:
 *   - started at mclust's optimum, the engine's EM stays there: the
 *     log-likelihood within 1e-9 relative of mclust's (the issue asks 1e-6),
 *     BIC the negative of mclust's within 1e-9, the same parameter count, and
 *     the parameters within 1e-4 (a maximum is flat: parameters agree to
 *     about the square root of the log-likelihood's precision; with faithful's
 *     3 full components the smallest weight still moves by 8e-6 after
 *     mclust's stopping rule, at a log-likelihood equal to 1e-11);
 *   - from its own k-means starts (20 restarts) the engine reaches that
 *     optimum or a higher one (faithful with 3 full components: -1119.214
 *     where mclust's start ends at -1127.072), never a lower one; where it
 *     is the same optimum, the same parameters. */
static void test_mclust_optima(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    FILE *file = test_open_reference(g_reference_dir, "gmm_mclust.csv");
    char *line = malloc(LINE_BYTES);
    size_t cases = 0, same_optimum = 0;
    assert_non_null(fgets(line, LINE_BYTES, file)); /* the header */
    while (fgets(line, LINE_BYTES, file)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *fields[10];
        if (split_csv_line(line, fields, 10) != 10)
            continue;
        mclust_case m = { .data = fields[0], .model = fields[1], .k = (size_t)atoi(fields[2]),
                          .parameters = (size_t)atoi(fields[5]), .loglik = strtod(fields[4], NULL),
                          .bic = strtod(fields[6], NULL) };
        const char *const models[] = { "VVV", "EEE", "VVI", "VII" };
        for (int t = 0; t < 4; ++t)
            if (strcmp(m.model, models[t]) == 0)
                m.type = (statgpu_gmm_covariance)t;
        test_parse_numbers(fields[7], m.weights, MAX_VALUES);
        test_parse_numbers(fields[8], m.means, MAX_VALUES);
        test_parse_numbers(fields[9], m.covariances, MAX_VALUES);
        size_t k = m.k, n, d;
        double *data = read_data(m.data, &n, &d);

        /* mclust's optimum in the engine's layouts: means k x d, precisions. */
        double means[MAX_VALUES], precisions[MAX_VALUES], inverse[16];
        for (size_t j = 0; j < k; ++j) {
            for (size_t v = 0; v < d; ++v)
                means[j + k * v] = m.means[j * d + v];
            invert(m.covariances + j * d * d, d, inverse);
            for (size_t v = 0; v < d; ++v)
                for (size_t w = 0; w < d; ++w) {
                    if (m.type == STATGPU_GMM_FULL)
                        precisions[j * d * d + v + d * w] = inverse[v * d + w];
                    else if (m.type == STATGPU_GMM_TIED && j == 0)
                        precisions[v + d * w] = inverse[v * d + w];
                    else if (m.type == STATGPU_GMM_DIAG && v == w)
                        precisions[j + k * v] = inverse[v * d + v];
                    else if (m.type == STATGPU_GMM_SPHERICAL && v == 0 && w == 0)
                        precisions[j] = inverse[0];
                }
        }
        statgpu_gmm_params params;
        statgpu_gmm_params_init(&params);
        params.covariance = m.type;
        params.reg_covar = 0.0;
        params.tolerance = 1e-13;
        params.max_iterations = 1000000;
        params.init = STATGPU_GMM_INIT_GIVEN;
        params.initial_weights = m.weights;
        params.initial_means = means;
        params.initial_precisions = precisions;
        statgpu_gmm_result *r = NULL;
        assert_int_equal(statgpu_gmm(g_context, data, n, d, n, k, &params, &r), STATGPU_OK);
        assert_ran_where_asked();
        if (!close_to(r->log_likelihood, m.loglik, 1e-9, 0.0) || !close_to(r->bic, -m.bic, 1e-9, 0.0))
            fail_msg("%s %s G=%zu from mclust's optimum: log-likelihood %.17g (mclust %.17g), BIC %.17g "
                     "(mclust %.17g)", m.data, m.model, k, r->log_likelihood, m.loglik, r->bic, -m.bic);
        assert_true(r->converged);
        assert_int_equal(r->parameter_count, m.parameters);
        check_mclust_parameters(&m, r, d);
        statgpu_gmm_result_destroy(r);

        params.init = STATGPU_GMM_INIT_KMEANS;
        params.restart_count = 20;
        assert_int_equal(statgpu_gmm(g_context, data, n, d, n, k, &params, &r), STATGPU_OK);
        if (r->log_likelihood < m.loglik - 1e-9 * fabs(m.loglik))
            fail_msg("%s %s G=%zu from k-means starts: log-likelihood %.17g below mclust's optimum %.17g", m.data,
                     m.model, k, r->log_likelihood, m.loglik);
        if (close_to(r->log_likelihood, m.loglik, 1e-9, 0.0)) {
            check_mclust_parameters(&m, r, d);
            ++same_optimum;
        }
        statgpu_gmm_result_destroy(r);
        free(data);
        ++cases;
    }
    fclose(file);
    free(line);
    assert_int_equal(cases, 10);
    print_message("mclust's optimum reached from k-means starts in %zu of %zu cases, a higher one in the rest\n",
                  same_optimum, cases);
}

/* The four covariance types, in statgpu.h's order. */
static const statgpu_gmm_covariance k_all_types[] = { STATGPU_GMM_FULL, STATGPU_GMM_TIED, STATGPU_GMM_DIAG,
                                                      STATGPU_GMM_SPHERICAL };

/* Model choice: faithful with k = 1..5 and 7 (7 of 272 rows: fitted), 300
 * (more than the rows: a candidate with an error status and empty cells),
 * every covariance type. Each candidate's numbers are the bits of
 * statgpu_gmm on that k and type alone, the result is the whole fit of the
 * lowest BIC, and the choice is mclust's on Old Faithful among these models
 * (Mclust(faithful): EEE, that is tied, with 3 components). */
static void test_model_selection(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n, d;
    double *data = read_data("faithful", &n, &d);
    const size_t ks[] = { 1, 2, 3, 4, 5, 7, 300 };
    const statgpu_gmm_covariance *types = k_all_types;
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.restart_count = 3;
    params.seed = 5;
    statgpu_gmm_result *chosen = NULL;
    assert_int_equal(statgpu_gmm_select(g_context, data, n, d, n, ks, 7, types, 4, &params, &chosen), STATGPU_OK);
    assert_int_equal(chosen->candidate_count, 28);
    double lowest = INFINITY;
    size_t lowest_index = 0;
    for (size_t c = 0; c < 28; ++c) {
        const statgpu_gmm_candidate *candidate = &chosen->candidates[c];
        assert_int_equal(candidate->k, ks[c / 4]);
        assert_int_equal(candidate->covariance, types[c % 4]);
        if (candidate->k > n) {
            assert_int_equal(candidate->status, STATGPU_ERROR_INVALID_ARGUMENT);
            continue;
        }
        assert_int_equal(candidate->status, STATGPU_OK);
        params.covariance = candidate->covariance;
        statgpu_gmm_result *alone = NULL;
        assert_int_equal(statgpu_gmm(g_context, data, n, d, n, candidate->k, &params, &alone), STATGPU_OK);
        assert_bits_equal(candidate->log_likelihood, alone->log_likelihood);
        assert_bits_equal(candidate->bic, alone->bic);
        assert_bits_equal(candidate->aic, alone->aic);
        assert_int_equal(candidate->parameter_count, alone->parameter_count);
        assert_int_equal(candidate->iterations, alone->iterations);
        assert_int_equal(candidate->converged, alone->converged);
        assert_int_equal(candidate->singular_components, alone->singular_components);
        if (candidate->bic < lowest) {
            lowest = candidate->bic;
            lowest_index = c;
        }
        if (c == chosen->best_candidate)
            assert_true(same_result(chosen, alone));
        statgpu_gmm_result_destroy(alone);
    }
    assert_int_equal(chosen->best_candidate, lowest_index);
    assert_int_equal(chosen->k, 3);
    assert_int_equal(chosen->covariance, STATGPU_GMM_TIED);

    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_gmm_tables(g_context, chosen, NULL, &set), STATGPU_OK);
    const statgpu_table *selection = statgpu_table_set_find(set, "selection");
    assert_int_equal(selection->row_count, 28);
    assert_string_equal(selection->column_headers[4], "BIC");
    for (size_t c = 0; c < 28; ++c) {
        assert_bits_equal(selection->values[c], (double)ks[c / 4]);
        assert_string_equal(selection->texts[c + 28], k_types[c % 4]);
        assert_bits_equal(selection->values[c + 28 * 8], c == chosen->best_candidate ? 1.0 : 0.0);
        for (size_t column = 2; column < 8; ++column)
            assert_int_equal(selection->cell_kinds[c + 28 * column],
                             ks[c / 4] > n ? STATGPU_CELL_EMPTY : STATGPU_CELL_NUMBER);
    }
    assert_bits_equal(selection->values[chosen->best_candidate + 28 * 4], chosen->bic);
    statgpu_table_set_destroy(set);
    statgpu_gmm_result_destroy(chosen);

    /* One type: params->covariance; bad lists. */
    params.covariance = STATGPU_GMM_DIAG;
    assert_int_equal(statgpu_gmm_select(g_context, data, n, d, n, ks, 2, NULL, 0, &params, &chosen), STATGPU_OK);
    assert_int_equal(chosen->candidate_count, 2);
    assert_int_equal(chosen->candidates[1].covariance, STATGPU_GMM_DIAG);
    statgpu_gmm_result_destroy(chosen);
    /* A k listed again is the same model: fitted once, where first listed,
     * the result the bits of the list without the repeats. */
    const size_t repeated[] = { 3, 2, 3, 3, 1, 2 }, once[] = { 3, 2, 1 };
    statgpu_gmm_result *plain = NULL;
    assert_int_equal(statgpu_gmm_select(g_context, data, n, d, n, once, 3, NULL, 0, &params, &plain), STATGPU_OK);
    assert_int_equal(statgpu_gmm_select(g_context, data, n, d, n, repeated, 6, NULL, 0, &params, &chosen),
                     STATGPU_OK);
    assert_int_equal(chosen->candidate_count, 3);
    for (size_t c = 0; c < 3; ++c) {
        assert_int_equal(chosen->candidates[c].k, once[c]);
        assert_bits_equal(chosen->candidates[c].bic, plain->candidates[c].bic);
        assert_bits_equal(chosen->candidates[c].log_likelihood, plain->candidates[c].log_likelihood);
    }
    assert_int_equal(chosen->best_candidate, plain->best_candidate);
    assert_bits_equal(chosen->bic, plain->bic);
    statgpu_gmm_result_destroy(plain);
    statgpu_gmm_result_destroy(chosen);
    const size_t zero[] = { 2, 0 }, too_many[] = { 300, 400 };
    const statgpu_gmm_covariance twice[] = { STATGPU_GMM_FULL, STATGPU_GMM_FULL };
    assert_int_equal(statgpu_gmm_select(g_context, data, n, d, n, zero, 2, NULL, 0, &params, &chosen),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "candidate 2"));
    assert_int_equal(statgpu_gmm_select(g_context, data, n, d, n, ks, 0, NULL, 0, &params, &chosen),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_gmm_select(g_context, data, n, d, n, ks, 2, twice, 2, &params, &chosen),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_gmm_select(g_context, data, n, d, n, too_many, 2, NULL, 0, &params, &chosen),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(chosen);
    free(data);

    /* Three distinct rows, each twice: k = 4 is a fit the data cannot give
     * (statgpu_gmm refuses it), left out of the choice as a k above the rows
     * is; k = 1 to 3 are fitted and one chosen. Only k of 4 and 5: no
     * candidate, and the message says why. */
    const double few[] = { 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3 };  /* 6 x 2, column-major */
    const size_t few_ks[] = { 1, 2, 3, 4 }, above[] = { 4, 5 };
    statgpu_gmm_params few_params;
    statgpu_gmm_params_init(&few_params);
    statgpu_gmm_result *alone = NULL;
    assert_int_equal(statgpu_gmm(g_context, few, 6, 2, 6, 4, &few_params, &alone), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(alone);
    assert_int_equal(statgpu_gmm_select(g_context, few, 6, 2, 6, few_ks, 4, NULL, 0, &few_params, &chosen),
                     STATGPU_OK);
    assert_int_equal(chosen->candidate_count, 4);
    for (size_t c = 0; c < 3; ++c)
        assert_int_equal(chosen->candidates[c].status, STATGPU_OK);
    assert_int_equal(chosen->candidates[3].status, STATGPU_ERROR_INVALID_ARGUMENT);
    assert_true(chosen->best_candidate < 3);
    assert_int_equal(chosen->k, chosen->candidates[chosen->best_candidate].k);
    statgpu_gmm_result_destroy(chosen);
    chosen = NULL;
    assert_int_equal(statgpu_gmm_select(g_context, few, 6, 2, 6, above, 2, NULL, 0, &few_params, &chosen),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(chosen);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "distinct rows"));
}

/* Singular components counted as the engine's header defines them, here by
 * the test's own Cholesky: a component whose covariance less the regulariser
 * (reg on every variable), in units of each variable's variance over the
 * rows, less 1e-8 on its diagonal, is not positive definite. */
static size_t count_singular(const statgpu_gmm_result *r, const double *data, size_t n, size_t d, double reg)
{
    double variance[8];
    assert_true(d <= 8);
    for (size_t v = 0; v < d; ++v) {
        long double mean = 0.0L, squares = 0.0L;
        for (size_t i = 0; i < n; ++i)
            mean += data[i + n * v];
        mean /= (long double)n;
        for (size_t i = 0; i < n; ++i)
            squares += (data[i + n * v] - mean) * (data[i + n * v] - mean);
        variance[v] = (double)(squares / (long double)n);
    }
    size_t singular = 0;
    for (size_t j = 0; j < r->k; ++j) {
        double a[64];
        for (size_t c = 0; c < d; ++c)
            for (size_t row = 0; row < d; ++row) {
                double value;
                if (r->covariance == STATGPU_GMM_FULL)
                    value = r->covariances[j * d * d + row + d * c];
                else if (r->covariance == STATGPU_GMM_DIAG)
                    value = row == c ? r->covariances[j + r->k * c] : 0.0;
                else
                    fail_msg("count_singular: full and diag only");
                a[row + d * c] = (value - (row == c ? reg : 0.0)) / sqrt(variance[row] * variance[c])
                                 - (row == c ? 1e-8 : 0.0);
            }
        bool positive = true;
        for (size_t c = 0; c < d && positive; ++c) {  /* a = L L^T, L in the lower triangle */
            for (size_t row = c; row < d; ++row) {
                double value = a[row + d * c];
                for (size_t t = 0; t < c; ++t)
                    value -= a[row + d * t] * a[c + d * t];
                if (row == c) {
                    positive = value > 0.0;
                    a[c + d * c] = sqrt(value);
                } else {
                    a[row + d * c] = value / a[c + d * c];
                }
            }
        }
        singular += !positive;
    }
    return singular;
}

/* Components on rows that repeat one value (Old Faithful's waiting times
 * are whole minutes) are singular: 38 diagonal components put spikes on
 * repeated waiting times, and 12 full ones one, each counted as the test
 * counts them; a mixture of continuous data has none. Model choice leaves
 * singular candidates out while any other remains: over k = 1 to 40 of
 * every type the spikes' BIC (1954 for k = 38, diag) is lower than any
 * regular model's, and the choice is still mclust's tied k = 3 (BIC 2314.38,
 * mclust's -2314.386). Where every candidate is singular, the lowest BIC of
 * them is chosen. */
static void test_singular_components(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n, d;
    double *data = read_data("faithful", &n, &d);
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    const struct { size_t k; statgpu_gmm_covariance type; } fits[] = {
        { 38, STATGPU_GMM_DIAG }, { 12, STATGPU_GMM_FULL }, { 2, STATGPU_GMM_FULL }, { 3, STATGPU_GMM_DIAG } };
    for (size_t f = 0; f < sizeof fits / sizeof fits[0]; ++f) {
        params.covariance = fits[f].type;
        statgpu_gmm_result *r = NULL;
        assert_int_equal(statgpu_gmm(g_context, data, n, d, n, fits[f].k, &params, &r), STATGPU_OK);
        const size_t expected = count_singular(r, data, n, d, params.reg_covar);
        if (r->singular_components != expected)
            fail_msg("k = %zu type %d: %zu singular components, the test counts %zu", fits[f].k, (int)fits[f].type,
                     r->singular_components, expected);
        assert_true(fits[f].k >= 12 ? expected > 0 : expected == 0);
        assert_int_equal(r->candidates[0].singular_components, r->singular_components);
        statgpu_gmm_result_destroy(r);
    }

    size_t ks[40];
    for (size_t k = 0; k < 40; ++k)
        ks[k] = k + 1;
    statgpu_gmm_result *chosen = NULL;
    params.restart_count = 1;
    assert_int_equal(statgpu_gmm_select(g_context, data, n, d, n, ks, 40, k_all_types, 4, &params, &chosen),
                     STATGPU_OK);
    assert_int_equal(chosen->singular_components, 0);
    assert_int_equal(chosen->k, 3);
    assert_int_equal(chosen->covariance, STATGPU_GMM_TIED);
    assert_true(fabs(chosen->bic - 2314.386) < 0.05);  /* mclust's EM stops on its own tolerance */
    double lowest_singular = INFINITY;
    for (size_t c = 0; c < chosen->candidate_count; ++c) {
        const statgpu_gmm_candidate *candidate = &chosen->candidates[c];
        if (candidate->status == STATGPU_OK && candidate->singular_components == 0)
            assert_true(candidate->bic >= chosen->bic);
        if (candidate->status == STATGPU_OK && candidate->singular_components > 0)
            lowest_singular = fmin(lowest_singular, candidate->bic);
    }
    assert_true(lowest_singular < chosen->bic - 300.0);
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_gmm_tables(g_context, chosen, NULL, &set), STATGPU_OK);
    const statgpu_table *selection = statgpu_table_set_find(set, "selection");
    assert_int_equal(selection->column_count, 10);
    assert_string_equal(selection->column_headers[9], "singular components");
    for (size_t c = 0; c < chosen->candidate_count; ++c)
        assert_bits_equal(selection->values[c + selection->row_count * 9],
                          (double)chosen->candidates[c].singular_components);
    statgpu_table_set_destroy(set);
    statgpu_gmm_result_destroy(chosen);
    free(data);

    /* Three distinct rows, each twice: k = 2 and 3 both put a component on
     * one repeated row; the lower BIC of the two is chosen. */
    const double few[] = { 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3 };  /* 6 x 2, column-major */
    const size_t few_ks[] = { 2, 3 };
    statgpu_gmm_params_init(&params);
    chosen = NULL;
    assert_int_equal(statgpu_gmm_select(g_context, few, 6, 2, 6, few_ks, 2, NULL, 0, &params, &chosen), STATGPU_OK);
    assert_true(chosen->candidates[0].singular_components > 0 && chosen->candidates[1].singular_components > 0);
    assert_int_equal(chosen->best_candidate, chosen->candidates[1].bic < chosen->candidates[0].bic ? 1 : 0);
    statgpu_gmm_result_destroy(chosen);
}

static int g_select_progress_calls;
static int cancel_select(void *user, double fraction)
{
    (void)user;
    (void)fraction;
    ++g_select_progress_calls;
    return 1;
}

/* Model choice side by side (worker contexts, one fit each at a time) gives
 * the bits of one after another: a 1-thread context fits the candidates in
 * turn, 2 to 5 threads on as many workers (at most 4). The chosen fit, its
 * backend record and every candidate agree; the same context again (its
 * workers kept) agrees too. A NaN fails as statgpu_gmm fails, with its
 * message; the caller's progress callback can cancel from the calling
 * thread. */
static void test_selection_side_by_side(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n, d;
    double *data = read_data("faithful", &n, &d);
    const size_t ks[] = { 1, 2, 3, 4, 6, 500 };
    const statgpu_gmm_covariance *types = k_all_types;
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.restart_count = 2;
    params.seed = 11;
    statgpu_backend backend = test_backend_from_environment();
    statgpu_context *serial = NULL;
    TEST_CONTEXT_WITH_THREADS(backend, 1, serial);
    statgpu_gmm_result *reference = NULL;
    assert_int_equal(statgpu_gmm_select(serial, data, n, d, n, ks, 6, types, 4, &params, &reference), STATGPU_OK);
    statgpu_backend_report serial_report;
    assert_int_equal(statgpu_context_backend_report(serial, &serial_report), STATGPU_OK);
    for (int threads = 2; threads <= 5; ++threads) {
        statgpu_context *context = NULL;
        TEST_CONTEXT_WITH_THREADS(backend, threads, context);
        for (int again = 0; again < 2; ++again) {
            statgpu_gmm_result *chosen = NULL;
            assert_int_equal(statgpu_gmm_select(context, data, n, d, n, ks, 6, types, 4, &params, &chosen),
                             STATGPU_OK);
            assert_true(same_result(chosen, reference));
            assert_int_equal(chosen->best_candidate, reference->best_candidate);
            assert_int_equal(chosen->candidate_count, 24);
            for (size_t c = 0; c < 24; ++c) {
                const statgpu_gmm_candidate *a = &chosen->candidates[c], *b = &reference->candidates[c];
                assert_int_equal(a->k, b->k);
                assert_int_equal(a->covariance, b->covariance);
                assert_int_equal(a->status, b->status);
                assert_bits_equal(a->log_likelihood, b->log_likelihood);
                assert_bits_equal(a->bic, b->bic);
                assert_int_equal(a->iterations, b->iterations);
            }
            statgpu_backend_report report;
            assert_int_equal(statgpu_context_backend_report(context, &report), STATGPU_OK);
            assert_int_equal(report.last_used, serial_report.last_used);
            statgpu_gmm_result_destroy(chosen);
        }
        statgpu_context_destroy(context);
    }

    /* A NaN: the first candidate's error, as statgpu_gmm gives it. */
    statgpu_context *context = NULL;
    TEST_CONTEXT_WITH_THREADS(backend, 3, context);
    data[17] = NAN;
    statgpu_gmm_result *chosen = NULL, *alone = NULL;
    statgpu_status expected = statgpu_gmm(context, data, n, d, n, 1, &params, &alone);
    assert_int_not_equal(expected, STATGPU_OK);
    char message[512];
    snprintf(message, sizeof message, "%s", statgpu_context_last_error(context));
    assert_int_equal(statgpu_gmm_select(context, data, n, d, n, ks, 6, types, 4, &params, &chosen), expected);
    assert_null(chosen);
    assert_string_equal(statgpu_context_last_error(context), message);
    statgpu_context_destroy(context);
    data[17] = 1.0;

    /* Cancelled from the caller's callback. */
    statgpu_context_params cp;
    statgpu_context_params_init(&cp);
    cp.backend = backend;
    cp.thread_count = 4;
    cp.progress = cancel_select;
    assert_int_equal(statgpu_context_create(&cp, &context), STATGPU_OK);
    g_select_progress_calls = 0;
    assert_int_equal(statgpu_gmm_select(context, data, n, d, n, ks, 6, types, 4, &params, &chosen),
                     STATGPU_ERROR_CANCELLED);
    assert_null(chosen);
    assert_true(g_select_progress_calls >= 1);
    /* Small fits finish fast, maybe before any candidate hears the stop:
     * wherever the callback was called (and asked to stop), the call is
     * cancelled, never a result; repeated, for the race. */
    for (int repeat = 0; repeat < 40; ++repeat) {
        g_select_progress_calls = 0;
        statgpu_status got = statgpu_gmm_select(context, data, 90, d, n, ks, 5, types, 4, &params, &chosen);
        if (g_select_progress_calls > 0) {
            assert_int_equal(got, STATGPU_ERROR_CANCELLED);
            assert_null(chosen);
        } else {
            assert_int_equal(got, STATGPU_OK);
            statgpu_gmm_result_destroy(chosen);
            chosen = NULL;
        }
    }
    statgpu_context_destroy(context);
    statgpu_gmm_result_destroy(reference);
    statgpu_context_destroy(serial);
    free(data);
}

/* statgpu_gmm_matrix: a host float64 matrix with a leading dimension gives
 * the bits of statgpu_gmm on the same numbers, a float32 one the bits of
 * statgpu_gmm on its values widened; a bad description is refused. (Device
 * matrices: test_device_vectors.c.) */
static void test_matrix_arguments(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n, d;
    double *data = read_data("faithful", &n, &d);
    const size_t ld = n + 3;
    double *padded = calloc(ld * d, sizeof *padded), *widened = malloc(n * d * sizeof *widened);
    float *narrow = calloc(ld * d, sizeof *narrow);
    for (size_t v = 0; v < d; ++v)
        for (size_t i = 0; i < n; ++i) {
            padded[i + ld * v] = data[i + n * v];
            narrow[i + ld * v] = (float)data[i + n * v];
            widened[i + n * v] = (double)narrow[i + ld * v];
        }
    statgpu_gmm_result *expected = NULL, *got = NULL;
    assert_int_equal(statgpu_gmm(g_context, data, n, d, n, 2, NULL, &expected), STATGPU_OK);
    statgpu_matrix matrix = { padded, n, d, ld, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
    assert_int_equal(statgpu_gmm_matrix(g_context, &matrix, 2, NULL, &got), STATGPU_OK);
    assert_true(same_result(expected, got));
    statgpu_gmm_result_destroy(expected);
    statgpu_gmm_result_destroy(got);
    assert_int_equal(statgpu_gmm(g_context, widened, n, d, n, 2, NULL, &expected), STATGPU_OK);
    statgpu_matrix floats = { narrow, n, d, ld, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_HOST };
    assert_int_equal(statgpu_gmm_matrix(g_context, &floats, 2, NULL, &got), STATGPU_OK);
    assert_true(same_result(expected, got));
    statgpu_gmm_result_destroy(expected);
    statgpu_gmm_result_destroy(got);
    statgpu_matrix bad = matrix;
    bad.ld = n - 1;
    got = (statgpu_gmm_result *)1;
    assert_int_equal(statgpu_gmm_matrix(g_context, &bad, 2, NULL, &got), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(got);
    assert_int_equal(statgpu_gmm_matrix(g_context, NULL, 2, NULL, &got), STATGPU_ERROR_INVALID_ARGUMENT);
    free(data);
    free(padded);
    free(widened);
    free(narrow);
}

/* Every initialisation on Old Faithful with two full components, run to
 * convergence (tolerance 1e-10): k-means (the default), k-means++ seeds
 * alone and random responsibilities reach mclust's optimum
 * (gmm_mclust.csv, VVV, G = 2: -1130.2639601847461 with reg_covar 0) within
 * 1e-9 relative; the same seed gives the same bits, another seed another
 * start; an unknown initialisation is refused. */
static void test_initialisations(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n, d;
    double *data = read_data("faithful", &n, &d);
    const statgpu_gmm_init inits[] = { STATGPU_GMM_INIT_KMEANS, STATGPU_GMM_INIT_PLUS_PLUS,
                                       STATGPU_GMM_INIT_RANDOM };
    for (size_t m = 0; m < 3; ++m) {
        statgpu_gmm_params params;
        statgpu_gmm_params_init(&params);
        params.init = inits[m];
        params.reg_covar = 0.0;
        params.tolerance = 1e-10;
        params.max_iterations = 10000;
        params.seed = 3;
        statgpu_gmm_result *a = NULL, *b = NULL, *c = NULL;
        assert_int_equal(statgpu_gmm(g_context, data, n, d, n, 2, &params, &a), STATGPU_OK);
        if (!close_to(a->log_likelihood, -1130.2639601847461, 1e-9, 0.0))
            fail_msg("initialisation %d: log-likelihood %.17g", (int)inits[m], a->log_likelihood);
        assert_true(a->converged);
        assert_int_equal(statgpu_gmm(g_context, data, n, d, n, 2, &params, &b), STATGPU_OK);
        assert_true(same_result(a, b));
        params.max_iterations = 1;
        params.seed = 4;
        assert_int_equal(statgpu_gmm(g_context, data, n, d, n, 2, &params, &c), STATGPU_OK);
        statgpu_gmm_result *first = NULL;
        params.seed = 3;
        assert_int_equal(statgpu_gmm(g_context, data, n, d, n, 2, &params, &first), STATGPU_OK);
        if (inits[m] == STATGPU_GMM_INIT_RANDOM)  /* one iteration from two random starts */
            assert_false(test_same_bits(first->lower_bound, c->lower_bound));
        assert_finite_result(c);
        statgpu_gmm_result_destroy(a);
        statgpu_gmm_result_destroy(b);
        statgpu_gmm_result_destroy(c);
        statgpu_gmm_result_destroy(first);
    }
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.init = (statgpu_gmm_init)9;
    statgpu_gmm_result *r = NULL;
    assert_int_equal(statgpu_gmm(g_context, data, n, d, n, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(r);
    free(data);
}

/* ------------------------------------------------- relative regularisers */

/* A fit's precision matrices (full and tied: U U^T of each factor; diag and
 * spherical: the squares), laid out as initial_precisions. */
static void precisions_of(const statgpu_gmm_result *r, double *out)
{
    const size_t k = r->k, d = r->n_vars;
    const size_t blocks = r->covariance == STATGPU_GMM_FULL ? k : r->covariance == STATGPU_GMM_TIED ? 1 : 0;
    for (size_t j = 0; j < blocks; ++j) {
        const double *u = r->precisions_cholesky + j * d * d;
        for (size_t a = 0; a < d; ++a)
            for (size_t b = 0; b < d; ++b) {
                double total = 0.0;
                for (size_t c = 0; c < d; ++c)
                    total += u[a + d * c] * u[b + d * c];
                out[j * d * d + a + d * b] = total;
            }
    }
    if (blocks == 0)
        for (size_t e = 0; e < cov_count(r->covariance, k, d); ++e)
            out[e] = r->precisions_cholesky[e] * r->precisions_cholesky[e];
}

/* The scale of covariance entry e of a fit whose variable v was multiplied by
 * scale[v]: scale[row] scale[column] (diag: scale[v]^2; spherical: every
 * variable has the same scale). */
static double covariance_scale(statgpu_gmm_covariance type, size_t k, size_t d, size_t e, const double *scale)
{
    switch (type) {
    case STATGPU_GMM_FULL:
    case STATGPU_GMM_TIED:
        return scale[e % d] * scale[(e / d) % d];
    case STATGPU_GMM_DIAG:
        return scale[e / k] * scale[e / k];
    default:
        return scale[0] * scale[0];
    }
}

static void fit_relative(const double *data, size_t n, size_t d, size_t k, const statgpu_gmm_params *given,
                         statgpu_gmm_result **out)
{
    statgpu_gmm_params params = *given;
    params.reg_covar_relative = 1;
    if (statgpu_gmm(g_context, data, n, d, n, k, &params, out) != STATGPU_OK)
        fail_msg("%s", statgpu_context_last_error(g_context));
    assert_ran_where_asked();
    assert_finite_result(*out);
}

/* With reg_covar_relative a fit does not depend on the data's units: each
 * variable of Old Faithful multiplied by its own factor (3e-5 and 7e3; one
 * factor for spherical, whose single variance mixes the variables), from the
 * same given parameters in the new units, gives the same labels, the means
 * and covariances times the factors (1e-9 relative) and the log-likelihood
 * less n sum log factor (1e-10 relative). Data times 2^-480 or 2^480 are
 * fitted as the data times 2^-6, bit for bit (k-means, k-means++ and random
 * starts: k-means++ alone failed near 1e-200 before, its squared distances
 * all 0), the log densities shifted by d 474 or 486 ln 2 (1e-12 relative);
 * data times 1e-140 have the labels of the data themselves; data times
 * 1e-200, whose variances are below the doubles, are an invalid argument,
 * never zero variances. One variable: the
 * regulariser is reg_covar times the variance over the rows (squared
 * deviations from the mean over n), the bits of an absolute reg_covar of
 * that size. A constant variable takes reg_covar times the largest
 * variance. */
static void test_relative_regularisers(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n, d;
    double *data = read_data("faithful", &n, &d);
    assert_int_equal(d, 2);
    const size_t k = 2;
    double *scaled = malloc(n * d * sizeof *scaled);
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.tolerance = 0.0;
    params.max_iterations = 30;

    for (int type = STATGPU_GMM_FULL; type <= STATGPU_GMM_SPHERICAL; ++type) {
        const double scale[2] = { 3e-5, type == STATGPU_GMM_SPHERICAL ? 3e-5 : 7e3 };
        params.covariance = (statgpu_gmm_covariance)type;
        params.init = STATGPU_GMM_INIT_KMEANS;
        statgpu_gmm_result *start = NULL, *a = NULL, *b = NULL;
        fit_relative(data, n, d, k, &params, &start);
        const size_t cov = cov_count(params.covariance, k, d);
        double means[4], precisions[8], scaled_means[4], scaled_precisions[8];
        memcpy(means, start->means, k * d * sizeof *means);
        precisions_of(start, precisions);
        for (size_t e = 0; e < k * d; ++e)
            scaled_means[e] = means[e] * scale[e / k];
        for (size_t e = 0; e < cov; ++e)
            scaled_precisions[e] = precisions[e] / covariance_scale(params.covariance, k, d, e, scale);
        for (size_t i = 0; i < n; ++i)
            for (size_t v = 0; v < d; ++v)
                scaled[i + n * v] = data[i + n * v] * scale[v];
        statgpu_gmm_params given = params;
        given.init = STATGPU_GMM_INIT_GIVEN;
        given.initial_weights = start->weights;
        given.initial_means = means;
        given.initial_precisions = precisions;
        fit_relative(data, n, d, k, &given, &a);
        given.initial_means = scaled_means;
        given.initial_precisions = scaled_precisions;
        fit_relative(scaled, n, d, k, &given, &b);
        assert_memory_equal(a->labels, b->labels, n * sizeof *a->labels);
        for (size_t e = 0; e < k * d; ++e)
            if (!close_to(b->means[e], a->means[e] * scale[e / k], 1e-9, 0.0))
                fail_msg("type %d: mean %zu: %.17g in the new units, %.17g in the old", type, e, b->means[e],
                         a->means[e]);
        for (size_t e = 0; e < cov; ++e)
            if (!close_to(b->covariances[e], a->covariances[e] * covariance_scale(params.covariance, k, d, e, scale),
                          1e-9, 1e-12 * fabs(b->covariances[0])))
                fail_msg("type %d: covariance %zu: %.17g in the new units, %.17g in the old", type, e,
                         b->covariances[e], a->covariances[e]);
        const double shift = -(double)n * (log(scale[0]) + log(scale[1]));
        if (!close_to(b->log_likelihood, a->log_likelihood + shift, 1e-10, 0.0))
            fail_msg("type %d: log-likelihood %.17g in the new units, %.17g + %.17g in the old", type,
                     b->log_likelihood, a->log_likelihood, shift);
        statgpu_gmm_result_destroy(start);
        statgpu_gmm_result_destroy(a);
        statgpu_gmm_result_destroy(b);
    }

    /* Beyond the doubles' squares: fitted as the data times 2^-6. */
    const statgpu_gmm_init inits[] = { STATGPU_GMM_INIT_KMEANS, STATGPU_GMM_INIT_PLUS_PLUS,
                                       STATGPU_GMM_INIT_RANDOM };
    for (int type = STATGPU_GMM_FULL; type <= STATGPU_GMM_SPHERICAL; ++type)
        for (size_t m = 0; m < 3; ++m) {
            params.covariance = (statgpu_gmm_covariance)type;
            params.init = inits[m];
            params.max_iterations = 20;
            const size_t cov = cov_count(params.covariance, k, d);
            for (size_t e = 0; e < n * d; ++e)
                scaled[e] = ldexp(data[e], -6);
            statgpu_gmm_result *ordinary = NULL;
            fit_relative(scaled, n, d, k, &params, &ordinary);
            for (int sign = -1; sign <= 1; sign += 2) {
                const int exponent = sign * 480;
                for (size_t e = 0; e < n * d; ++e)
                    scaled[e] = ldexp(data[e], exponent);
                statgpu_gmm_result *far = NULL;
                fit_relative(scaled, n, d, k, &params, &far);
                const int back = -6 - exponent;
                for (size_t e = 0; e < k * d; ++e)
                    if (!test_same_bits(ldexp(far->means[e], back), ordinary->means[e]))
                        fail_msg("type %d, init %d, 2^%d: mean %zu: %.17g", type, (int)inits[m], exponent, e,
                                 far->means[e]);
                for (size_t e = 0; e < cov; ++e)
                    if (!test_same_bits(ldexp(far->covariances[e], 2 * back), ordinary->covariances[e])
                        || !test_same_bits(ldexp(far->precisions_cholesky[e], -back),
                                           ordinary->precisions_cholesky[e]))
                        fail_msg("type %d, init %d, 2^%d: covariance %zu: %.17g", type, (int)inits[m], exponent, e,
                                 far->covariances[e]);
                assert_memory_equal(far->weights, ordinary->weights, k * sizeof *far->weights);
                assert_memory_equal(far->labels, ordinary->labels, n * sizeof *far->labels);
                assert_memory_equal(far->responsibilities, ordinary->responsibilities,
                                    n * k * sizeof *far->responsibilities);
                assert_int_equal(far->iterations, ordinary->iterations);
                const double shift = (double)d * (double)back * M_LN2;
                if (!close_to(far->log_likelihood, ordinary->log_likelihood + (double)n * shift, 1e-12, 0.0)
                    || !close_to(far->row_log_likelihood[7], ordinary->row_log_likelihood[7] + shift, 1e-12, 0.0)
                    || !close_to(far->lower_bound, ordinary->lower_bound + shift, 1e-12, 0.0)
                    || !close_to(far->bic, -2.0 * far->log_likelihood + (double)far->parameter_count * log((double)n),
                                 1e-15, 0.0)
                    || !close_to(far->candidates[0].log_likelihood, far->log_likelihood, 0.0, 0.0))
                    fail_msg("type %d, init %d, 2^%d: log-likelihood %.17g, ordinary %.17g", type, (int)inits[m],
                             exponent, far->log_likelihood, ordinary->log_likelihood);
                statgpu_gmm_result_destroy(far);
            }
            statgpu_gmm_result_destroy(ordinary);
        }

    /* Not a power of two: the same labels. */
    params.covariance = STATGPU_GMM_FULL;
    params.init = STATGPU_GMM_INIT_PLUS_PLUS;
    statgpu_gmm_result *ordinary = NULL, *tiny = NULL;
    fit_relative(data, n, d, k, &params, &ordinary);
    for (size_t e = 0; e < n * d; ++e)
        scaled[e] = data[e] * 1e-140;
    fit_relative(scaled, n, d, k, &params, &tiny);
    assert_memory_equal(tiny->labels, ordinary->labels, n * sizeof *tiny->labels);
    statgpu_gmm_result_destroy(ordinary);
    statgpu_gmm_result_destroy(tiny);
    for (size_t e = 0; e < n * d; ++e)
        scaled[e] = data[e] * 1e-200;
    statgpu_gmm_params relative = params;
    relative.reg_covar_relative = 1;
    assert_int_equal(statgpu_gmm(g_context, scaled, n, d, n, k, &relative, &tiny), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(tiny);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "beyond the range of a double"));

    /* One variable: reg_covar times its variance, as an absolute reg_covar. */
    for (int type = STATGPU_GMM_FULL; type <= STATGPU_GMM_SPHERICAL; ++type) {
        double mean = 0.0, squares = 0.0;
        for (size_t i = 0; i < n; ++i)
            mean += data[i];
        mean /= (double)n;
        for (size_t i = 0; i < n; ++i)
            squares += (data[i] - mean) * (data[i] - mean);
        statgpu_gmm_params one = params;
        one.covariance = (statgpu_gmm_covariance)type;
        one.init = STATGPU_GMM_INIT_KMEANS;
        one.reg_covar = 1e-3;
        statgpu_gmm_result *relative = NULL, *absolute = NULL;
        fit_relative(data, n, 1, k, &one, &relative);
        one.reg_covar = 1e-3 * (squares / (double)n);
        assert_int_equal(statgpu_gmm(g_context, data, n, 1, n, k, &one, &absolute), STATGPU_OK);
        assert_true(same_result(relative, absolute));
        statgpu_gmm_result_destroy(relative);
        statgpu_gmm_result_destroy(absolute);
    }

    /* A constant variable beside Old Faithful's: repaired from reg_covar
     * times the largest variance, never a failure. */
    double *wide = malloc(n * 3 * sizeof *wide);
    memcpy(wide, data, n * d * sizeof *wide);
    for (size_t i = 0; i < n; ++i)
        wide[i + 2 * n] = 1e-7;
    for (int type = STATGPU_GMM_FULL; type <= STATGPU_GMM_SPHERICAL; ++type) {
        params.covariance = (statgpu_gmm_covariance)type;
        params.init = STATGPU_GMM_INIT_KMEANS;
        statgpu_gmm_result *r = NULL;
        fit_relative(wide, n, 3, k, &params, &r);
        statgpu_gmm_result_destroy(r);
    }
    free(wide);
    free(scaled);
    free(data);
}

TEST_BACKEND_CONTEXT_FIXTURES(g_context, g_cuda, g_skip_reason)

int main(int argc, char **argv)
{
    if (argc > 1)
        g_reference_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scikit_learn_faithful),
        cmocka_unit_test(test_scikit_learn_iris),
        cmocka_unit_test(test_mclust_optima),
        cmocka_unit_test(test_degenerate_data),
        cmocka_unit_test(test_first_bad_value),
        cmocka_unit_test(test_threads_and_restarts),
        cmocka_unit_test(test_e_step_chunks),
        cmocka_unit_test(test_e_step_kernels_agree),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_result_tables),
        cmocka_unit_test(test_model_selection),
        cmocka_unit_test(test_singular_components),
        cmocka_unit_test(test_selection_side_by_side),
        cmocka_unit_test(test_matrix_arguments),
        cmocka_unit_test(test_initialisations),
        cmocka_unit_test(test_relative_regularisers),
    };
    int failures = cmocka_run_group_tests(tests, setup, teardown);
    return test_exit_code(failures, g_skip_reason);
}
