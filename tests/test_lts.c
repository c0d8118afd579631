/*
 * test_lts.c: statgpu's least trimmed squares (statgpu_lts) against exact
 * brute force, and its C-step primitive (sg_cpu_lts_csteps, compiled into
 * this test) against a sort:
 *   - on tiny data every h-subset is fitted by least squares: statgpu's
 *     objective equals the least of them (1e-9 relative) and its best subset
 *     is that subset, with and without intercept, at several alphas;
 *   - LMS: no worse than the best elemental fit's h-th smallest squared
 *     residual, and equal to the h-th smallest of its own raw fit;
 *   - the C-step invariant: the objective never rises with max_steps;
 *   - the primitive: the h-th value, the h-subset with ties taken in row
 *     order, its objective, X_H^T X_H and X_H^T y equal a sort-based
 *     reference (1e-12 relative), in its vector-parallel and row-parallel
 *     modes and at every thread count the same bits;
 *   - exact fit, alpha = 1 (least squares), large contaminated data (no worse
 *     than the true coefficients), reproducibility (same seed, same bits;
 *     any thread count, same bits, also at 200000 rows), no NaN in any
 *     output;
 *   - the standardisation's locations and scales (medians, MADs) equal a
 *     sort's, bit for bit;
 *   - bad input: NULL, n <= 2p, alpha outside [0.5, 1], NaN, infinities,
 *     constant and collinear predictors, identical rows, bad params.
 * With STATGPU_TEST_BACKEND=cuda the fits run on the CUDA backend (skipped
 * where there is none) and are also compared with the CPU backend's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"
#include "core/threads.h"
#include "statgpu.h"
#include "test_support.h"

static statgpu_context *g_context;      /* the backend under test */
static statgpu_context *g_cpu_context;  /* the CPU, for comparisons */
static char             g_skip_reason[512] = "";
static bool             g_cuda;

/* ------------------------------------------------------------- helpers */

/* Least squares by the normal equations in long double with partial
 * pivoting: independent of the engine's QR. rows (count) index the rows
 * used; p = n_vars + intercept. Returns the residual sum of squares. */
static double brute_least_squares(const double *y, const double *x, size_t n, size_t n_vars, int intercept,
                                  const size_t *rows, size_t count, double *coef)
{
    size_t p = n_vars + (size_t)intercept;
    long double a[16][17];
    memset(a, 0, sizeof a);
    for (size_t r = 0; r < count; ++r) {
        long double z[17];
        size_t i = rows[r];
        for (size_t v = 0; v < p; ++v)
            z[v] = intercept && v == 0 ? 1.0L : x[i + n * (v - (size_t)intercept)];
        z[p] = y[i];
        for (size_t u = 0; u < p; ++u)
            for (size_t v = 0; v <= p; ++v)
                a[u][v] += z[u] * z[v];
    }
    for (size_t c = 0; c < p; ++c) {
        size_t pivot = c;
        for (size_t r = c + 1; r < p; ++r)
            if (fabsl(a[r][c]) > fabsl(a[pivot][c]))
                pivot = r;
        for (size_t v = 0; v <= p; ++v) {
            long double t = a[c][v];
            a[c][v] = a[pivot][v];
            a[pivot][v] = t;
        }
        for (size_t r = 0; r < p; ++r) {
            if (r == c || a[c][c] == 0.0L)
                continue;
            long double f = a[r][c] / a[c][c];
            for (size_t v = c; v <= p; ++v)
                a[r][v] -= f * a[c][v];
        }
    }
    for (size_t v = 0; v < p; ++v)
        coef[v] = (double)(a[v][p] / a[v][v]);
    long double rss = 0.0L;
    for (size_t r = 0; r < count; ++r) {
        size_t i = rows[r];
        long double fit = 0.0L;
        for (size_t v = 0; v < p; ++v)
            fit += (long double)coef[v] * (intercept && v == 0 ? 1.0L : x[i + n * (v - (size_t)intercept)]);
        rss += ((long double)y[i] - fit) * ((long double)y[i] - fit);
    }
    return (double)rss;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sum of the h smallest squared residuals (or the h-th, for LMS) of coef. */
static double trimmed_of(const double *y, const double *x, size_t n, size_t n_vars, int intercept,
                         const double *coef, size_t h, bool median)
{
    double *squared = malloc(n * sizeof *squared);
    for (size_t i = 0; i < n; ++i) {
        double fit = intercept ? coef[0] : 0.0;
        for (size_t v = 0; v < n_vars; ++v)
            fit += coef[v + (size_t)intercept] * x[i + n * v];
        squared[i] = (y[i] - fit) * (y[i] - fit);
    }
    qsort(squared, n, sizeof *squared, compare_doubles);
    double sum = 0.0;
    for (size_t i = 0; i < h; ++i)
        sum += squared[i];
    double value = median ? squared[h - 1] : sum;
    free(squared);
    return value;
}

/* y = 1 + 2 x1 (- x2 ...) + noise, a share of rows shifted far away. */
static void make_data(size_t n, size_t n_vars, double outlier_share, uint64_t seed, double *y, double *x)
{
    test_rng rng = { seed };
    for (size_t i = 0; i < n; ++i) {
        double fit = 1.0;
        for (size_t v = 0; v < n_vars; ++v) {
            x[i + n * v] = test_rng_normal(&rng);
            fit += (v % 2 ? -1.0 : 2.0) * x[i + n * v];
        }
        y[i] = fit + 0.5 * test_rng_normal(&rng);
        if (test_rng_uniform(&rng) < outlier_share)
            y[i] += 20.0 + 5.0 * test_rng_normal(&rng);
    }
}

static void assert_all_finite(const statgpu_lts_result *r)
{
    for (size_t v = 0; v < r->p; ++v) {
        assert_true(isfinite(r->raw_coefficients[v]));
        assert_true(isfinite(r->coefficients[v]));
    }
    assert_true(isfinite(r->raw_scale) && isfinite(r->scale) && isfinite(r->objective));
    assert_true(isfinite(r->raw_consistency_factor) && isfinite(r->raw_correction_factor));
    assert_true(isfinite(r->consistency_factor) && isfinite(r->correction_factor));
    size_t outliers = 0;
    for (size_t i = 0; i < r->n_obs; ++i) {
        assert_true(isfinite(r->residuals[i]) && isfinite(r->raw_residuals[i]));
        assert_true(r->weights[i] == 0 || r->weights[i] == 1);
        assert_true(r->raw_weights[i] == 0 || r->raw_weights[i] == 1);
        outliers += r->weights[i] == 0;
    }
    assert_int_equal(outliers, r->outlier_count);
    for (size_t k = 0; k < r->h; ++k) {
        assert_true(r->best_subset[k] < r->n_obs);
        if (k > 0)
            assert_true(r->best_subset[k] > r->best_subset[k - 1]);
    }
}

/* Fits on the backend under test and checks what every fit must satisfy;
 * on CUDA also against the CPU backend. */
static statgpu_lts_result *fit(const double *y, const double *x, size_t n, size_t n_vars,
                               const statgpu_lts_params *params)
{
    statgpu_lts_result *result = NULL;
    statgpu_status status = statgpu_lts(g_context, y, x, n, n_vars, n, params, &result);
    if (status != STATGPU_OK)
        fail_msg("statgpu_lts: %s", statgpu_context_last_error(g_context));
    assert_all_finite(result);
    if (g_cuda) {
        statgpu_backend_report report;
        assert_int_equal(statgpu_context_backend_report(g_context, &report), STATGPU_OK);
        if (result->h < n && report.last_used != STATGPU_BACKEND_CUDA)
            fail_msg("asked for CUDA, ran on the CPU: %s", report.note);
        statgpu_lts_result *cpu = NULL;
        assert_int_equal(statgpu_lts(g_cpu_context, y, x, n, n_vars, n, params, &cpu), STATGPU_OK);
        /* Below the CPU's subsampling size both run the same search; above
         * it the GPU runs every start on all the rows. The absolute term is
         * rounding on an exact fit: residuals of about 1e-13 of |y| each. */
        double y_max = 0.0;
        for (size_t i = 0; i < n; ++i)
            y_max = fmax(y_max, fabs(y[i]));
        const double rounding = (double)n * (1e-13 * y_max) * (1e-13 * y_max) + 1e-300;
        if (n < 8000 && !(fabs(result->objective - cpu->objective) <= 1e-9 * cpu->objective + rounding))
            fail_msg("objective on CUDA %.17g, on the CPU %.17g", result->objective, cpu->objective);
        if (!(result->objective <= cpu->objective * (1 + 1e-6) + rounding))
            fail_msg("objective on CUDA %.17g worse than on the CPU %.17g", result->objective, cpu->objective);
        statgpu_lts_result_destroy(cpu);
    }
    return result;
}

static statgpu_status fit_status(const double *y, const double *x, size_t n, size_t n_vars,
                                 const statgpu_lts_params *params, const char *message_part)
{
    statgpu_lts_result *result = (statgpu_lts_result *)1;
    statgpu_status status = statgpu_lts(g_context, y, x, n, n_vars, n, params, &result);
    if (status != STATGPU_OK) {
        assert_null(result);
        if (message_part != NULL && strstr(statgpu_context_last_error(g_context), message_part) == NULL)
            fail_msg("message \"%s\" lacks \"%s\"", statgpu_context_last_error(g_context), message_part);
    }
    statgpu_lts_result_destroy(status == STATGPU_OK ? result : NULL);
    return status;
}

/* ------------------------------------------------- brute force over subsets */

/* Every h-subset of n rows (lexicographic), least squares on each. */
static double brute_force_lts(const double *y, const double *x, size_t n, size_t n_vars, int intercept,
                              size_t h, size_t *best, bool *unique)
{
    size_t subset[64];
    for (size_t k = 0; k < h; ++k)
        subset[k] = k;
    double coef[16], lowest = INFINITY, second = INFINITY;
    for (;;) {
        double rss = brute_least_squares(y, x, n, n_vars, intercept, subset, h, coef);
        if (rss < lowest) {
            second = lowest;
            lowest = rss;
            memcpy(best, subset, h * sizeof *subset);
        } else if (rss < second) {
            second = rss;
        }
        size_t i = h;
        while (i > 0 && subset[i - 1] == n - h + i - 1)
            --i;
        if (i == 0)
            break;
        ++subset[i - 1];
        for (size_t j = i; j < h; ++j)
            subset[j] = subset[j - 1] + 1;
    }
    *unique = second > lowest * (1 + 1e-6);
    return lowest;
}

static void test_brute_force_subsets(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    struct { size_t n, n_vars; int intercept; double alpha; } cases[] = {
        { 12, 1, 1, 0.5 }, { 13, 2, 1, 0.5 }, { 12, 1, 0, 0.5 }, { 14, 2, 0, 0.5 },
        { 12, 1, 1, 0.75 }, { 13, 2, 1, 0.9 }, { 11, 3, 1, 0.5 }, { 16, 2, 1, 0.5 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c)
        for (uint64_t seed = 1; seed <= 4; ++seed) {
            size_t n = cases[c].n, d = cases[c].n_vars;
            double y[32], x[96];
            make_data(n, d, 0.3, 100 * c + seed, y, x);
            statgpu_lts_params params;
            statgpu_lts_params_init(&params);
            params.intercept = cases[c].intercept;
            params.alpha = cases[c].alpha;
            statgpu_lts_result *r = fit(y, x, n, d, &params);
            size_t best[32];
            bool unique;
            double lowest = brute_force_lts(y, x, n, d, cases[c].intercept, r->h, best, &unique);
            if (!(fabs(r->objective - lowest) <= 1e-9 * lowest))
                fail_msg("case %zu seed %llu: objective %.17g, exhaustive minimum %.17g", c,
                         (unsigned long long)seed, r->objective, lowest);
            if (unique)
                for (size_t k = 0; k < r->h; ++k)
                    assert_int_equal(r->best_subset[k], best[k]);
            /* The raw fit is the least squares fit of the best subset. */
            double coef[16];
            brute_least_squares(y, x, n, d, cases[c].intercept, r->best_subset, r->h, coef);
            for (size_t v = 0; v < r->p; ++v)
                assert_true(fabs(r->raw_coefficients[v] - coef[v]) <= 1e-9 * (1 + fabs(coef[v])));
            statgpu_lts_result_destroy(r);
        }
}

/* LMS: at least as good as every elemental fit (all are starts here). */
static void test_least_median_of_squares(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    for (uint64_t seed = 1; seed <= 5; ++seed) {
        size_t n = 15, d = 1;
        double y[15], x[15];
        make_data(n, d, 0.3, 500 + seed, y, x);
        statgpu_lts_params params;
        statgpu_lts_params_init(&params);
        params.criterion = STATGPU_LTS_MEDIAN;
        statgpu_lts_result *r = fit(y, x, n, d, &params);
        assert_int_equal(r->criterion, STATGPU_LTS_MEDIAN);
        assert_int_equal(r->exhaustive, 1);
        double best_elemental = INFINITY;
        for (size_t i = 0; i < n; ++i)
            for (size_t j = i + 1; j < n; ++j) {
                if (x[i] == x[j])
                    continue;
                double slope = (y[j] - y[i]) / (x[j] - x[i]);
                double coef[2] = { y[i] - slope * x[i], slope };
                double value = trimmed_of(y, x, n, d, 1, coef, r->h, true);
                best_elemental = value < best_elemental ? value : best_elemental;
            }
        assert_true(r->objective <= best_elemental * (1 + 1e-12));
        double own = trimmed_of(y, x, n, d, 1, r->raw_coefficients, r->h, true);
        assert_true(fabs(own - r->objective) <= 1e-12 * own);
        /* LMS's objective is the h-th smallest, never above the LTS sum. */
        statgpu_lts_params lts;
        statgpu_lts_params_init(&lts);
        statgpu_lts_result *squares = fit(y, x, n, d, &lts);
        assert_true(r->objective <= squares->objective);
        statgpu_lts_result_destroy(squares);
        statgpu_lts_result_destroy(r);
    }
}

/* More C-steps never raise the objective. */
static void test_csteps_never_raise_objective(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n = 400, d = 4;
    double *y = malloc(n * sizeof *y), *x = malloc(n * d * sizeof *x);
    make_data(n, d, 0.35, 77, y, x);
    statgpu_lts_params params;
    statgpu_lts_params_init(&params);
    params.start_count = 1;
    params.best_count = 1;
    double previous = INFINITY;
    for (size_t steps = 1; steps <= 30; ++steps) {
        params.max_steps = steps;
        statgpu_lts_result *r = fit(y, x, n, d, &params);
        if (!(r->objective <= previous * (1 + 1e-12)))
            fail_msg("max_steps %zu: objective %.17g above %.17g", steps, r->objective, previous);
        previous = r->objective;
        statgpu_lts_result_destroy(r);
    }
    free(y);
    free(x);
}

/* ------------------------------------------------------ the C-step primitive */

static void reference_csteps(const sg_lts_problem *problem, size_t h, const double *coef, double *kth,
                             double *objective, double *gram, double *xty)
{
    size_t n = problem->n, p = problem->p;
    double *squared = malloc(n * sizeof *squared), *sorted = malloc(n * sizeof *sorted);
    for (size_t i = 0; i < n; ++i) {
        double r = problem->y[i];
        for (size_t v = 0; v < p; ++v)
            r -= problem->x[i + n * v] * coef[v];
        squared[i] = r * r;
    }
    memcpy(sorted, squared, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, compare_doubles);
    *kth = sorted[h - 1];
    size_t below = 0;
    for (size_t i = 0; i < n; ++i)
        below += squared[i] < *kth;
    size_t quota = h - below;
    long double sum = 0.0L, g[16][16] = { { 0 } }, b[16] = { 0 };
    for (size_t i = 0; i < n; ++i) {
        bool in = squared[i] < *kth || (squared[i] == *kth && quota > 0);
        if (!in)
            continue;
        if (!(squared[i] < *kth))
            --quota;
        sum += squared[i];
        for (size_t u = 0; u < p; ++u) {
            for (size_t v = 0; v < p; ++v)
                g[u][v] += (long double)problem->x[i + n * u] * problem->x[i + n * v];
            b[u] += (long double)problem->x[i + n * u] * problem->y[i];
        }
    }
    *objective = (double)sum;
    for (size_t u = 0; u < p; ++u) {
        for (size_t v = 0; v < p; ++v)
            gram[u + p * v] = (double)g[u][v];
        xty[u] = (double)b[u];
    }
    free(squared);
    free(sorted);
}

static void check_primitive(size_t n, size_t p, size_t h, size_t m, bool ties)
{
    double *x = malloc(n * p * sizeof *x), *y = malloc(n * sizeof *y), *coef = malloc(m * p * sizeof *coef);
    test_rng rng = { n * 31 + p + (ties ? 7 : 0) };
    for (size_t i = 0; i < n; ++i) {
        for (size_t v = 0; v < p; ++v)
            x[i + n * v] = v == 0 ? 1.0 : (ties ? (double)(test_rng_next(&rng) % 3) : test_rng_normal(&rng));
        y[i] = ties ? (double)(test_rng_next(&rng) % 4) : test_rng_normal(&rng) * 3;
    }
    for (size_t k = 0; k < m * p; ++k)
        coef[k] = ties ? (double)(test_rng_next(&rng) % 3) - 1.0 : test_rng_normal(&rng);
    double *kth = malloc(m * sizeof *kth), *objective = malloc(m * sizeof *objective);
    double *gram = malloc(m * p * p * sizeof *gram), *xty = malloc(m * p * sizeof *xty);
    double *first_gram = malloc(m * p * p * sizeof *gram), *first_objective = malloc(m * sizeof *objective);
    for (int threads = 1; threads <= 3; ++threads) {
        sg_lts_problem problem = { x, y, n, p, threads };
        assert_int_equal(sg_cpu_lts_csteps(&problem, h, coef, m, kth, objective, gram, xty), STATGPU_OK);
        for (size_t j = 0; j < m; ++j) {
            double ref_kth, ref_objective, ref_gram[256], ref_xty[16];
            reference_csteps(&problem, h, coef + p * j, &ref_kth, &ref_objective, ref_gram, ref_xty);
            assert_true(kth[j] == ref_kth);
            assert_true(fabs(objective[j] - ref_objective) <= 1e-12 * (ref_objective + 1e-300));
            for (size_t k = 0; k < p * p; ++k)
                assert_true(fabs(gram[p * p * j + k] - ref_gram[k]) <= 1e-12 * fabs(ref_gram[0]) + 1e-300);
            for (size_t k = 0; k < p; ++k)
                assert_true(fabs(xty[p * j + k] - ref_xty[k]) <= 1e-12 * (fabs(ref_xty[k]) + fabs(ref_gram[0])));
        }
        if (threads == 1) {
            memcpy(first_gram, gram, m * p * p * sizeof *gram);
            memcpy(first_objective, objective, m * sizeof *objective);
        } else {
            assert_memory_equal(first_gram, gram, m * p * p * sizeof *gram);
            assert_memory_equal(first_objective, objective, m * sizeof *objective);
        }
        /* NULL outputs are skipped; the rest stay the same. */
        double kth_only[64];
        assert_int_equal(sg_cpu_lts_csteps(&problem, h, coef, m, kth_only, NULL, NULL, NULL), STATGPU_OK);
        assert_memory_equal(kth_only, kth, m * sizeof *kth);
    }
    free(x); free(y); free(coef); free(kth); free(objective); free(gram); free(xty);
    free(first_gram); free(first_objective);
}

static void test_primitive_against_sort(void **state)
{
    (void)state;
    check_primitive(50, 3, 26, 5, false);
    check_primitive(50, 3, 26, 5, true);       /* many equal squared residuals */
    check_primitive(9000, 4, 4600, 7, false);  /* several blocks, vector-parallel */
    check_primitive(9000, 2, 4501, 3, true);
    check_primitive(70000, 3, 35002, 2, false); /* row-parallel */
    check_primitive(70000, 2, 40000, 2, true);
    check_primitive(30, 2, 30, 1, false);       /* h = n */
    check_primitive(30, 2, 1, 1, true);         /* h = 1 */
}

/* ----------------------------------------------------------- whole fits */

static void test_exact_fit(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    /* 15 of 20 points on y = 3 - 2x, the others far off: more than h. */
    size_t n = 20;
    double x[20], y[20];
    for (size_t i = 0; i < n; ++i) {
        x[i] = (double)i * 0.5;
        y[i] = 3.0 - 2.0 * x[i];
        if (i % 4 == 1)
            y[i] += 10.0 + (double)i;
    }
    statgpu_lts_result *r = fit(y, x, n, 1, NULL);
    assert_int_equal(r->exact_fit, 1);
    assert_true(r->raw_scale == 0.0 && r->scale == 0.0);
    assert_true(fabs(r->raw_coefficients[0] - 3.0) < 1e-12 && fabs(r->raw_coefficients[1] + 2.0) < 1e-12);
    assert_true(fabs(r->coefficients[0] - 3.0) < 1e-12 && fabs(r->coefficients[1] + 2.0) < 1e-12);
    for (size_t i = 0; i < n; ++i)
        assert_int_equal(r->weights[i], i % 4 == 1 ? 0 : 1);
    assert_int_equal(r->outlier_count, 5);
    assert_true(r->objective < 1e-20);
    statgpu_lts_result_destroy(r);

    /* All rows identical without intercept: an exact fit through them. */
    double same_x[8] = { 2, 2, 2, 2, 2, 2, 2, 2 }, same_y[8] = { 5, 5, 5, 5, 5, 5, 5, 5 };
    statgpu_lts_params params;
    statgpu_lts_params_init(&params);
    params.intercept = 0;
    r = fit(same_y, same_x, 8, 1, &params);
    assert_int_equal(r->exact_fit, 1);
    assert_true(fabs(r->coefficients[0] - 2.5) < 1e-14);
    assert_int_equal(r->outlier_count, 0);
    statgpu_lts_result_destroy(r);

    /* Intercept only with a constant majority. */
    double location[9] = { 4, 4, 4, 4, 4, 4, 9, -3, 100 };
    r = fit(location, NULL, 9, 0, NULL);
    assert_int_equal(r->exact_fit, 1);
    assert_true(r->coefficients[0] == 4.0);
    assert_int_equal(r->outlier_count, 3);
    statgpu_lts_result_destroy(r);
}

static void test_alpha_one_is_least_squares(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n = 40, d = 2;
    double y[40], x[80];
    make_data(n, d, 0.1, 9, y, x);
    statgpu_lts_params params;
    statgpu_lts_params_init(&params);
    params.alpha = 1.0;
    statgpu_lts_result *r = fit(y, x, n, d, &params);
    assert_int_equal(r->h, n);
    size_t rows[40];
    for (size_t i = 0; i < n; ++i)
        rows[i] = i;
    double coef[3];
    double rss = brute_least_squares(y, x, n, d, 1, rows, n, coef);
    for (size_t v = 0; v < 3; ++v)
        assert_true(fabs(r->raw_coefficients[v] - coef[v]) <= 1e-10 * (1 + fabs(coef[v])));
    assert_true(fabs(r->objective - rss) <= 1e-10 * rss);
    assert_true(fabs(r->raw_scale - sqrt(rss / (double)(n - 3))) <= 1e-10 * r->raw_scale);
    statgpu_lts_result_destroy(r);
}

/* 25% contamination (vertical outliers and bad leverage points): the fit is
 * no worse than the true coefficients and flags the contamination. */
static void test_large_contaminated(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n = 60000, d = 5;
    double *y = malloc(n * sizeof *y), *x = malloc(n * d * sizeof *x);
    double truth[6] = { 1, 2, -1, 2, -1, 2 };
    test_rng rng = { 4242 };
    for (size_t i = 0; i < n; ++i) {
        double u = test_rng_uniform(&rng), f = truth[0];
        for (size_t v = 0; v < d; ++v) {
            x[i + n * v] = u < 0.05 ? 8.0 + test_rng_normal(&rng) : test_rng_normal(&rng);
            f += truth[v + 1] * x[i + n * v];
        }
        y[i] = u < 0.05 ? -40.0 + test_rng_normal(&rng) : f + test_rng_normal(&rng);
        if (u >= 0.05 && u < 0.25)
            y[i] += 30.0 + 3.0 * test_rng_normal(&rng);
    }
    statgpu_lts_result *r = fit(y, x, n, d, NULL);
    double at_truth = trimmed_of(y, x, n, d, 1, truth, r->h, false);
    if (!(r->objective <= at_truth))
        fail_msg("objective %.17g, the true coefficients' %.17g", r->objective, at_truth);
    for (size_t v = 0; v <= d; ++v)
        assert_true(fabs(r->coefficients[v] - truth[v]) < 0.05);
    assert_true(r->outlier_count > n / 4 - n / 50 && r->outlier_count < n / 4 + n / 25);
    statgpu_lts_result_destroy(r);
    free(y);
    free(x);
}

static bool same_result(const statgpu_lts_result *a, const statgpu_lts_result *b)
{
    return a->h == b->h && memcmp(a->raw_coefficients, b->raw_coefficients, a->p * sizeof(double)) == 0
           && memcmp(a->coefficients, b->coefficients, a->p * sizeof(double)) == 0
           && memcmp(&a->objective, &b->objective, sizeof(double)) == 0
           && memcmp(&a->scale, &b->scale, sizeof(double)) == 0
           && memcmp(a->weights, b->weights, a->n_obs * sizeof(int32_t)) == 0
           && memcmp(a->residuals, b->residuals, a->n_obs * sizeof(double)) == 0
           && memcmp(a->best_subset, b->best_subset, a->h * sizeof(size_t)) == 0
           && memcmp(&a->raw_scale, &b->raw_scale, sizeof(double)) == 0
           && memcmp(a->raw_weights, b->raw_weights, a->n_obs * sizeof(int32_t)) == 0
           && memcmp(a->raw_residuals, b->raw_residuals, a->n_obs * sizeof(double)) == 0
           && a->outlier_count == b->outlier_count;
}

/* Same seed, same bits; and the same bits at 1, 2 and 3 threads, on small
 * data and on data large enough for the working subsamples. */
static void test_reproducible_at_any_thread_count(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t sizes[2] = { 300, 25000 };
    for (int s = 0; s < 2; ++s) {
        size_t n = sizes[s], d = 3;
        double *y = malloc(n * sizeof *y), *x = malloc(n * d * sizeof *x);
        make_data(n, d, 0.3, 31 + (uint64_t)s, y, x);
        statgpu_lts_params params;
        statgpu_lts_params_init(&params);
        params.seed = 12;
        statgpu_lts_result *first = fit(y, x, n, d, &params);
        statgpu_lts_result *again = fit(y, x, n, d, &params);
        assert_true(same_result(first, again));
        statgpu_lts_result_destroy(again);
        for (int threads = 1; threads <= 3; ++threads) {
            statgpu_context *context = NULL;
            TEST_CONTEXT_WITH_THREADS(test_backend_from_environment(), threads, context);
            statgpu_lts_result *r = NULL;
            assert_int_equal(statgpu_lts(context, y, x, n, d, n, &params, &r), STATGPU_OK);
            assert_true(same_result(first, r));
            statgpu_lts_result_destroy(r);
            statgpu_context_destroy(context);
        }
        statgpu_lts_result_destroy(first);
        free(y);
        free(x);
    }
}

/* The passes over all the rows (standardisation, residuals, trimmed sums,
 * weights) cut the rows into blocks of 65536 and the full-data C-steps
 * share out blocks of rows from 65536 rows on: at 200000 rows every output
 * is the same bits at 1, 2 and 3 threads. */
static void test_same_bits_at_any_thread_count_on_many_rows(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n = 200000, d = 3;
    double *y = malloc(n * sizeof *y), *x = malloc(n * d * sizeof *x);
    make_data(n, d, 0.2, 77, y, x);
    for (size_t i = 0; i < n; i += 20)
        x[i] += 10.0;  /* bad leverage points */
    statgpu_lts_result *first = NULL;
    for (int threads = 1; threads <= 3; ++threads) {
        statgpu_context *context = NULL;
        TEST_CONTEXT_WITH_THREADS(STATGPU_BACKEND_CPU, threads, context);
        statgpu_lts_result *r = NULL;
        assert_int_equal(statgpu_lts(context, y, x, n, d, n, NULL, &r), STATGPU_OK);
        assert_all_finite(r);
        if (first == NULL)
            first = r;
        else {
            if (!same_result(first, r))
                fail_msg("%d threads: not the same bits as 1 thread", threads);
            statgpu_lts_result_destroy(r);
        }
        statgpu_context_destroy(context);
    }
    statgpu_lts_result_destroy(first);
    free(y);
    free(x);
}

/* IEEE total order, as the engine's selection orders doubles (-0.0 first). */
static int compare_total_order(const void *a, const void *b)
{
    uint64_t x = sg_key_from_double(*(const double *)a), y = sg_key_from_double(*(const double *)b);
    return (x > y) - (x < y);
}

/* R's median by a sort in the selection's order. */
static double sorted_median(const double *values, size_t n)
{
    double *copy = malloc(n * sizeof *copy);
    memcpy(copy, values, n * sizeof *copy);
    qsort(copy, n, sizeof *copy, compare_total_order);
    double median = n % 2 ? copy[n / 2] : copy[n / 2 - 1] / 2 + copy[n / 2] / 2;
    free(copy);
    return median;
}

/* The standardisation's location and scale (median and MAD, or the median
 * of |x| without an intercept) equal a sort's, bit for bit, on columns of
 * both parities large enough for the radix selection: continuous values,
 * heavy ties, and middles that are zeros of both signs. */
static void test_standardise_against_sort(void **state)
{
    (void)state;
    size_t counts[2] = { 70001, 70000 };
    for (int c = 0; c < 2; ++c) {
        size_t n = counts[c], d = 4;
        double *x = malloc(n * d * sizeof *x), *y = malloc(n * sizeof *y), *deviation = malloc(n * sizeof *deviation);
        double *z = malloc(n * (d + 1) * sizeof *z), *zy = malloc(n * sizeof *zy);
        test_rng rng = { 99 + (uint64_t)c };
        for (size_t i = 0; i < n; ++i) {
            double u = test_rng_normal(&rng);
            x[i] = u;                                            /* continuous */
            x[i + n] = round(3.0 * u);                           /* ties */
            x[i + 2 * n] = i % 2 ? -0.0 : (i % 3 ? 0.0 : 1.0 + (double)(i % 7)); /* zeros of both signs */
            x[i + 3 * n] = i < n / 2 ? -0.0 : 0.5 * u;           /* the lower middle is -0.0 */
            y[i] = 2.0 * u + test_rng_normal(&rng);
        }
        for (int intercept = 0; intercept <= 1; ++intercept) {
            sg_lts_column columns[5];
            sg_lts_standardise(y, x, n, d, n, intercept, 3, z, zy, columns);
            for (size_t v = 0; v <= d; ++v) {
                const double *source = v < d ? x + n * v : y;
                assert_int_equal(columns[v].status, STATGPU_OK);
                if (columns[v].fault != SG_LTS_COLUMN_OK)
                    fail_msg("n %zu column %zu intercept %d: fault %d", n, v, intercept, (int)columns[v].fault);
                double location = intercept ? sorted_median(source, n) : 0.0;
                for (size_t i = 0; i < n; ++i)
                    deviation[i] = fabs(source[i] - location);
                double scale = sorted_median(deviation, n);
                if (!(scale > 0.0)) {
                    double mean = 0.0;
                    for (size_t i = 0; i < n; ++i)
                        mean += deviation[i];
                    scale = mean / (double)n > 0.0 ? mean / (double)n : 1.0;
                }
                if (memcmp(&columns[v].location, &location, sizeof location) != 0
                    || memcmp(&columns[v].scale, &scale, sizeof scale) != 0)
                    fail_msg("n %zu column %zu intercept %d: location %.17g scale %.17g, by sorting %.17g and %.17g",
                             n, v, intercept, columns[v].location, columns[v].scale, location, scale);
                const double *standard = v < d ? z + n * (v + (size_t)intercept) : zy;
                for (size_t i = 0; i < n; ++i) {
                    double expected = (source[i] - location) / scale;
                    if (memcmp(&standard[i], &expected, sizeof expected) != 0)
                        fail_msg("n %zu column %zu row %zu: %.17g, expected %.17g", n, v, i, standard[i], expected);
                }
            }
        }
        free(x);
        free(y);
        free(deviation);
        free(z);
        free(zy);
    }
}

/* sg_lts_median_window against a sort of the same values, bit for bit:
 * samples from none to the engine's own (the small ones give narrow or
 * badly placed windows, so the full selection runs too), values and their
 * absolute deviations, both parities; continuous values, ties, zeros of both
 * signs, sorted and reversed columns, and columns whose sampled rows all
 * hold one outlying value (the window then misses the middle). */
static void test_median_window(void **state)
{
    (void)state;
    size_t counts[4] = { 1, 2, 9001, 70000 };
    size_t samples[5] = { 0, 2, 64, 512, SG_LTS_MEDIAN_SAMPLE };
    for (int c = 0; c < 4; ++c) {
        size_t n = counts[c];
        double *source = malloc(n * sizeof *source), *values = malloc(n * sizeof *values);
        double *scratch = malloc(n * sizeof *scratch);
        for (int kind = 0; kind < 6; ++kind)
            for (int s = 0; s < 5; ++s) {
                size_t m = samples[s];
                test_rng rng = { 1000u + (uint64_t)(kind * 10 + s) };
                for (size_t i = 0; i < n; ++i) {
                    double u = test_rng_normal(&rng);
                    switch (kind) {
                    case 0: source[i] = u; break;
                    case 1: source[i] = round(2.0 * u); break;
                    case 2: source[i] = i % 3 == 0 ? -0.0 : i % 3 == 1 ? 0.0 : u; break;
                    case 3: source[i] = (double)i * 0.5 - 7.0; break;
                    case 4: source[i] = -(double)i; break;
                    default: source[i] = u; break;
                    }
                }
                if (kind == 5 && m > 0 && n >= 4 * m)
                    for (size_t j = 0; j < m; ++j)
                        source[(j * n + n / 2) / m] = 1e300;
                for (int absolute = 0; absolute <= 1; ++absolute) {
                    double centre = absolute ? sorted_median(source, n) : 0.0;
                    double low = INFINITY, high = -INFINITY;
                    for (size_t i = 0; i < n; ++i) {
                        values[i] = absolute ? fabs(source[i] - centre) : source[i];
                        low = values[i] < low ? values[i] : low;
                        high = values[i] > high ? values[i] : high;
                    }
                    double expected = sorted_median(values, n), median = -1.0, got_low = 0.0, got_high = 0.0;
                    assert_int_equal(sg_lts_median_window(source, n, absolute != 0, centre, m, scratch, &median,
                                                          &got_low, &got_high),
                                     STATGPU_OK);
                    if (memcmp(&median, &expected, sizeof median) != 0)
                        fail_msg("n %zu kind %d sample %zu absolute %d: %.17g, by sorting %.17g", n, kind, m,
                                 absolute, median, expected);
                    assert_true(got_low == low && got_high == high);
                }
            }
        free(source);
        free(values);
        free(scratch);
    }
}

static int g_progress_calls;
static int cancel_at_second(void *user, double fraction)
{
    (void)user;
    (void)fraction;
    return ++g_progress_calls >= 2;
}

static void test_bad_input(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n = 20;
    double y[20], x[40];
    make_data(n, 2, 0.0, 3, y, x);
    statgpu_lts_result *r = NULL;
    statgpu_lts_params params;
    statgpu_lts_params_init(&params);

    assert_int_equal(statgpu_lts(NULL, y, x, n, 2, n, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_lts(g_context, NULL, x, n, 2, n, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_lts(g_context, y, NULL, n, 2, n, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_lts(g_context, y, x, n, 2, n, NULL, NULL), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_lts(g_context, y, x, 0, 2, n, NULL, &r), STATGPU_ERROR_EMPTY_INPUT);
    assert_int_equal(statgpu_lts(g_context, y, x, n, 2, n - 1, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    /* n <= 2p: 6 rows for 3 coefficients. */
    assert_int_equal(fit_status(y, x, 6, 2, NULL, "more than twice"), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(fit_status(y, x, 7, 2, NULL, NULL), STATGPU_OK);
    /* alpha outside [0.5, 1]. */
    double alphas[3] = { 0.49, 1.01, NAN };
    for (int k = 0; k < 3; ++k) {
        params.alpha = alphas[k];
        assert_int_equal(fit_status(y, x, n, 2, &params, "alpha"), STATGPU_ERROR_INVALID_ARGUMENT);
    }
    /* Just outside the interval: the message shows the value as given, not
     * rounded to "1" by %g. */
    params.alpha = 1.0000001;
    assert_int_equal(fit_status(y, x, n, 2, &params, "alpha = 1.0000001"), STATGPU_ERROR_INVALID_ARGUMENT);
    /* LMS at alpha 1 (h = n): its scale is not defined, and it had answered
     * least squares as LMS. */
    statgpu_lts_params_init(&params);
    params.criterion = STATGPU_LTS_MEDIAN;
    params.alpha = 1.0;
    assert_int_equal(fit_status(y, x, n, 2, &params, "least median of squares needs alpha below 1 (h below the 20 rows)"),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    params.alpha = 0.999;
    assert_int_equal(fit_status(y, x, n, 2, &params, NULL), STATGPU_OK);
    statgpu_lts_params_init(&params);
    params.start_count = 0;
    assert_int_equal(fit_status(y, x, n, 2, &params, "start_count"), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_lts_params_init(&params);
    params.criterion = (statgpu_lts_criterion)7;
    assert_int_equal(fit_status(y, x, n, 2, &params, "criterion"), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_lts_params_init(&params);
    params.struct_bytes = 3;
    assert_int_equal(fit_status(y, x, n, 2, &params, "struct_bytes"), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_lts_params_init(&params);
    params.intercept = 0;
    assert_int_equal(fit_status(y, NULL, n, 0, &params, "no coefficients"), STATGPU_ERROR_INVALID_ARGUMENT);

    /* NaN and infinities, named by row. */
    double bad_y[20], bad_x[40];
    memcpy(bad_x, x, sizeof x);
    memcpy(bad_y, y, sizeof y);
    bad_x[5 + 20] = NAN;
    assert_int_equal(fit_status(bad_y, bad_x, n, 2, NULL, "observation 6, predictor 2"), STATGPU_ERROR_NAN_IN_DATA);
    memcpy(bad_x, x, sizeof x);
    bad_y[3] = INFINITY;
    assert_int_equal(fit_status(bad_y, bad_x, n, 2, NULL, "infinity"), STATGPU_ERROR_INVALID_ARGUMENT);
    bad_y[3] = NAN;
    assert_int_equal(fit_status(bad_y, bad_x, n, 2, NULL, "NaN"), STATGPU_ERROR_NAN_IN_DATA);
    memcpy(bad_y, y, sizeof y);
    bad_y[0] = 1e300;
    assert_int_equal(fit_status(bad_y, bad_x, n, 2, NULL, "too far"), STATGPU_ERROR_INVALID_ARGUMENT);

    /* A constant predictor beside the intercept; collinear predictors;
     * identical rows. */
    for (size_t i = 0; i < n; ++i)
        bad_x[i + 20] = 4.0;
    assert_int_equal(fit_status(y, bad_x, n, 2, NULL, "constant"), STATGPU_ERROR_INVALID_ARGUMENT);
    for (size_t i = 0; i < n; ++i)
        bad_x[i + 20] = 2.0 * x[i] - 1.0;
    assert_int_equal(fit_status(y, bad_x, n, 2, NULL, "collinear"), STATGPU_ERROR_INVALID_ARGUMENT);
    params.intercept = 0;
    for (size_t i = 0; i < n; ++i)
        bad_x[i + 20] = -3.0 * x[i];
    assert_int_equal(fit_status(y, bad_x, n, 2, &params, "collinear"), STATGPU_ERROR_INVALID_ARGUMENT);
    /* Without an intercept, a predictor of zeros (of both signs). */
    for (size_t i = 0; i < n; ++i)
        bad_x[i + 20] = i % 2 ? -0.0 : 0.0;
    assert_int_equal(fit_status(y, bad_x, n, 2, &params, "predictor 2 is all zeros"), STATGPU_ERROR_INVALID_ARGUMENT);
    for (size_t i = 0; i < n; ++i) {
        bad_x[i] = 1.5;
        bad_x[i + 20] = -2.0;
        bad_y[i] = 7.0;
    }
    assert_int_equal(fit_status(bad_y, bad_x, n, 2, NULL, "constant"), STATGPU_ERROR_INVALID_ARGUMENT);

    /* Cancelling from the progress callback. */
    statgpu_context_params cp;
    statgpu_context_params_init(&cp);
    cp.backend = test_backend_from_environment();
    cp.progress = cancel_at_second;
    statgpu_context *context;
    assert_int_equal(statgpu_context_create(&cp, &context), STATGPU_OK);
    g_progress_calls = 0;
    r = (statgpu_lts_result *)1;
    assert_int_equal(statgpu_lts(context, y, x, n, 2, n, NULL, &r), STATGPU_ERROR_CANCELLED);
    assert_null(r);
    statgpu_context_destroy(context);
    statgpu_lts_result_destroy(NULL);
}

static int g_early_calls;
static int count_early(void *user, double fraction)
{
    (void)user;
    g_early_calls += fraction < 0.6;  /* the starts report 0 to 0.6 (no subsamples below 8000 rows) */
    return 0;
}

/* Many coefficients: the starts report their progress in batches sized by
 * their work, so that Stop is heard within about 2^30 multiply-adds (at p =
 * 400 a batch of 128 starts had run for a minute and a half between two
 * reports). 48 starts at p = 200 on 500 rows: batches of 22, reports after
 * the first two (and the call's own at 0), where one batch had held all 48.
 * The fit is the same bits as the CPU's usual batch gives: the starts and
 * their order do not depend on it (checked by the thread-count tests). */
static void test_progress_between_wide_starts(void **state)
{
    (void)state;
    enum { n = 500, n_vars = 199 };
    double *y = malloc(n * sizeof *y), *x = malloc((size_t)n * n_vars * sizeof *x);
    make_data(n, n_vars, 0.1, 41, y, x);
    statgpu_context_params cp;
    statgpu_context_params_init(&cp);
    cp.backend = STATGPU_BACKEND_CPU;
    cp.progress = count_early;
    statgpu_context *context;
    assert_int_equal(statgpu_context_create(&cp, &context), STATGPU_OK);
    statgpu_lts_params params;
    statgpu_lts_params_init(&params);
    params.start_count = 48;
    g_early_calls = 0;
    statgpu_lts_result *r = NULL;
    assert_int_equal(statgpu_lts(context, y, x, n, n_vars, n, &params, &r), STATGPU_OK);
    assert_int_equal(g_early_calls, 3);
    statgpu_lts_result_destroy(r);
    statgpu_context_destroy(context);
    free(y);
    free(x);
}

/* Counts far beyond what a search can use: a huge best_count is the same
 * search as best_count = start_count (it can carry no more candidates than
 * there are starts), never a product that wraps round to a small allocation;
 * max_steps = SIZE_MAX is "until converged"; a start_count beyond the stated
 * limit is refused with a message that names it. */
static void test_impossible_counts(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n = 40;
    double y[40], x[80];
    make_data(n, 2, 0.2, 5, y, x);
    statgpu_lts_params params;
    statgpu_lts_params_init(&params);
    params.start_count = 30;
    params.best_count = 30;
    statgpu_lts_result *reference = NULL;
    assert_int_equal(statgpu_lts(g_context, y, x, n, 2, n, &params, &reference), STATGPU_OK);

    size_t huge_counts[3] = { (size_t)1 << 61, SIZE_MAX / 2, SIZE_MAX };
    for (int c = 0; c < 3; ++c) {
        params.best_count = huge_counts[c];
        statgpu_lts_result *r = NULL;
        assert_int_equal(statgpu_lts(g_context, y, x, n, 2, n, &params, &r), STATGPU_OK);
        assert_memory_equal(r->raw_coefficients, reference->raw_coefficients, 3 * sizeof(double));
        assert_memory_equal(r->weights, reference->weights, n * sizeof(int32_t));
        statgpu_lts_result_destroy(r);
    }

    statgpu_lts_params_init(&params);
    params.max_steps = SIZE_MAX;
    statgpu_lts_result *r = NULL;
    assert_int_equal(statgpu_lts(g_context, y, x, n, 2, n, &params, &r), STATGPU_OK);
    for (size_t j = 0; j < 3; ++j)
        assert_true(isfinite(r->coefficients[j]));
    statgpu_lts_result_destroy(r);

    statgpu_lts_params_init(&params);
    params.start_count = SIZE_MAX;
    assert_int_equal(fit_status(y, x, n, 2, &params, "start_count"), STATGPU_ERROR_INVALID_ARGUMENT);
    params.start_count = (size_t)STATGPU_LTS_MAX_START_COUNT + 1;
    assert_int_equal(fit_status(y, x, n, 2, &params, "start_count"), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_lts_result_destroy(reference);
}

/* The team of a call (core/threads.h): no more threads than blocks of work,
 * one for work too small to share, never 0. */
static void test_thread_teams(void **state)
{
    (void)state;
    assert_int_equal(sg_threads_for(16, 1, 1e12), 1);                       /* one block */
    assert_int_equal(sg_threads_for(16, 1000, 178.0 * 13 * 3), 1);         /* tiny work */
    assert_int_equal(sg_threads_for(16, 1000, 1e12), 16);
    assert_int_equal(sg_threads_for(16, 5, 1e12), 5);
    assert_int_equal(sg_threads_for(16, 1000, 4 * SG_THREADS_MIN_WORK), 4);
    assert_int_equal(sg_threads_for(0, 0, 0.0), 1);
}

/* A predictor that is almost constant but not quite (a large offset):
 * standardisation keeps it usable, with no NaN anywhere. */
static void test_offset_predictor(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t n = 50;
    double y[50], x[50];
    test_rng rng = { 5 };
    for (size_t i = 0; i < n; ++i) {
        double t = test_rng_normal(&rng);
        x[i] = 1e6 + 1e-3 * t;
        y[i] = 2.0 + 3.0 * t + 0.01 * test_rng_normal(&rng);
        if (i % 5 == 0)
            y[i] += 50.0;
    }
    statgpu_lts_result *r = fit(y, x, n, 1, NULL);
    assert_true(fabs(r->coefficients[1] - 3000.0) < 30.0);
    statgpu_lts_result_destroy(r);
}

/* The unit of y does not change the fit (issue: y near 1e-170 gave an
 * "exact fit" with every row an outlier, y near 1e161 an overflow). y times a
 * power of two far from 1 gives the same weights and subset, and coefficients,
 * residuals and scales times that power exactly (the objective times its
 * square, rounded where that leaves the doubles); y times 1e-170, not a power
 * of two, the same weights and the coefficients within 1e-12. An objective
 * larger than the largest double is an error that says so. */
static void test_units_of_y(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    enum { n = 60, n_vars = 2 };
    double y[n], x[n * n_vars], scaled[n];
    make_data(n, n_vars, 0.2, 31, y, x);
    statgpu_lts_result *base = fit(y, x, n, n_vars, NULL);
    assert_true(base->outlier_count > 0 && base->outlier_count < n / 2);
    const int exponents[] = { -600, -1000, 480, -401, 401 };
    for (size_t e = 0; e < sizeof exponents / sizeof exponents[0]; ++e) {
        int exponent = exponents[e];
        for (size_t i = 0; i < n; ++i)
            scaled[i] = ldexp(y[i], exponent);
        statgpu_lts_result *r = fit(scaled, x, n, n_vars, NULL);
        assert_int_equal(r->exact_fit, 0);
        assert_memory_equal(r->weights, base->weights, n * sizeof(int32_t));
        assert_memory_equal(r->best_subset, base->best_subset, base->h * sizeof(size_t));
        for (size_t v = 0; v < base->p; ++v) {
            assert_bits_equal(r->coefficients[v], ldexp(base->coefficients[v], exponent));
            assert_bits_equal(r->raw_coefficients[v], ldexp(base->raw_coefficients[v], exponent));
        }
        for (size_t i = 0; i < n; ++i)
            assert_bits_equal(r->residuals[i], ldexp(base->residuals[i], exponent));
        assert_bits_equal(r->scale, ldexp(base->scale, exponent));
        assert_bits_equal(r->raw_scale, ldexp(base->raw_scale, exponent));
        assert_bits_equal(r->objective, ldexp(base->objective, 2 * exponent));
        statgpu_lts_result_destroy(r);
    }

    for (size_t i = 0; i < n; ++i)
        scaled[i] = y[i] * 1e-170;
    statgpu_lts_result *tiny = fit(scaled, x, n, n_vars, NULL);
    assert_int_equal(tiny->exact_fit, 0);
    assert_memory_equal(tiny->weights, base->weights, n * sizeof(int32_t));
    for (size_t v = 0; v < base->p; ++v)
        assert_true(fabs(tiny->coefficients[v] * 1e170 - base->coefficients[v])
                    <= 1e-12 * fabs(base->coefficients[v]));
    statgpu_lts_result_destroy(tiny);

    /* Residuals near 2^600 (4e180) square beyond the largest double. */
    for (size_t i = 0; i < n; ++i)
        scaled[i] = ldexp(y[i], 600);
    assert_int_equal(fit_status(scaled, x, n, n_vars, NULL, "larger than the largest double in y's units"),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_lts_result_destroy(base);
}

/* The units of the predictors do not change the fit either: each predictor
 * times its own power of two far from 1, with y times another, gives the same
 * weights and subset, and each slope times y's power over its predictor's
 * exactly, the intercept times y's (y and x both near 2^-1030, subnormal
 * numbers, had overflowed: y's scaling alone made a slope of 2 about 2^1031).
 * Subnormal data carry fewer bits, so on them (the product of every value
 * with 1e-310) the coefficients are within 1e-9. A slope below the smallest
 * double in the data's units is an error that says so, not a 0, where its
 * term mattered; a coefficient of rounding noise that underflows is 0. */
static void test_units_of_predictors(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    enum { n = 60, n_vars = 2 };
    double y[n], x[n * n_vars], y_scaled[n], x_scaled[n * n_vars];
    make_data(n, n_vars, 0.2, 31, y, x);
    statgpu_lts_result *base = fit(y, x, n, n_vars, NULL);
    const int exponents[][3] = { /* y, predictor 1, predictor 2 */
        { -980, -980, -980 }, { 0, -600, 500 }, { 450, 700, 0 }, { -900, 0, -450 }, { 300, 700, -300 },
    };
    for (size_t e = 0; e < sizeof exponents / sizeof exponents[0]; ++e) {
        for (size_t i = 0; i < n; ++i) {
            y_scaled[i] = ldexp(y[i], exponents[e][0]);
            for (size_t v = 0; v < n_vars; ++v)
                x_scaled[v * n + i] = ldexp(x[v * n + i], exponents[e][1 + v]);
        }
        statgpu_lts_result *r = fit(y_scaled, x_scaled, n, n_vars, NULL);
        assert_int_equal(r->exact_fit, 0);
        assert_memory_equal(r->weights, base->weights, n * sizeof(int32_t));
        assert_memory_equal(r->best_subset, base->best_subset, base->h * sizeof(size_t));
        assert_bits_equal(r->coefficients[0], ldexp(base->coefficients[0], exponents[e][0]));
        assert_bits_equal(r->raw_coefficients[0], ldexp(base->raw_coefficients[0], exponents[e][0]));
        for (size_t v = 0; v < n_vars; ++v) {
            const int exponent = exponents[e][0] - exponents[e][1 + v];
            assert_bits_equal(r->coefficients[1 + v], ldexp(base->coefficients[1 + v], exponent));
            assert_bits_equal(r->raw_coefficients[1 + v], ldexp(base->raw_coefficients[1 + v], exponent));
        }
        assert_bits_equal(r->scale, ldexp(base->scale, exponents[e][0]));
        statgpu_lts_result_destroy(r);
    }

    for (size_t i = 0; i < n; ++i) {
        y_scaled[i] = y[i] * 1e-310;
        for (size_t v = 0; v < n_vars; ++v)
            x_scaled[v * n + i] = x[v * n + i] * 1e-310;
    }
    statgpu_lts_result *tiny = fit(y_scaled, x_scaled, n, n_vars, NULL);
    assert_memory_equal(tiny->weights, base->weights, n * sizeof(int32_t));
    assert_true(fabs(tiny->coefficients[0] / 1e-310 - base->coefficients[0]) <= 1e-9 * fabs(base->coefficients[0]));
    for (size_t v = 1; v < base->p; ++v)
        assert_true(fabs(tiny->coefficients[v] - base->coefficients[v]) <= 1e-9 * fabs(base->coefficients[v]));
    statgpu_lts_result_destroy(tiny);

    /* y near 2^-600 on predictors near 2^600: slopes near 2^-1200. */
    for (size_t i = 0; i < n; ++i) {
        y_scaled[i] = ldexp(y[i], -600);
        for (size_t v = 0; v < n_vars; ++v)
            x_scaled[v * n + i] = ldexp(x[v * n + i], 600);
    }
    assert_int_equal(fit_status(y_scaled, x_scaled, n, n_vars, NULL, "smaller than the smallest double"),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_lts_result_destroy(base);

    /* y = i 1e-320 on x = i (subnormal y on a line through 0), at every
     * Alpha: the slope is the double nearest 1e-320 (the fit is exact) and
     * the intercept, rounding noise below the smallest double in y's units,
     * is +0, not an error (Alpha 0.5 had refused it) and not -0. */
    enum { line = 11 };
    double y_line[line], x_line[line];
    for (size_t i = 0; i < line; ++i) {
        y_line[i] = (double)(i + 1) * 1e-320;
        x_line[i] = (double)(i + 1);
    }
    const double alphas[] = { 0.5, 0.75, 1.0 };
    for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; ++a) {
        statgpu_lts_params params;
        statgpu_lts_params_init(&params);
        params.alpha = alphas[a];
        statgpu_lts_result *r = fit(y_line, x_line, line, 1, &params);
        assert_bits_equal(r->coefficients[1], 1e-320);
        assert_bits_equal(r->raw_coefficients[1], 1e-320);
        assert_bits_equal(r->coefficients[0], 0.0);
        assert_bits_equal(r->raw_coefficients[0], 0.0);
        statgpu_lts_result_destroy(r);
    }
}

/* statgpu_lts_matrix: host float64 with a leading dimension gives the bits
 * of statgpu_lts; float32 y and x the bits of statgpu_lts on their values
 * widened; y and x of other lengths are refused. */
static void test_matrix_arguments(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    enum { n = 80, n_vars = 2, ld = 83 };
    double y[n], x[ld * n_vars], packed[n * n_vars];
    make_data(n, n_vars, 0.2, 77, y, packed);
    for (size_t v = 0; v < n_vars; ++v)
        for (size_t i = 0; i < ld; ++i)
            x[i + ld * v] = i < n ? packed[i + n * v] : NAN;  /* never read */
    statgpu_lts_result *expected = fit(y, packed, n, n_vars, NULL);
    statgpu_vector y_vector = { y, n, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
    statgpu_matrix x_matrix = { x, n, n_vars, ld, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
    statgpu_lts_result *result = NULL;
    assert_int_equal(statgpu_lts_matrix(g_context, &y_vector, &x_matrix, NULL, &result), STATGPU_OK);
    assert_true(same_result(result, expected));
    statgpu_lts_result_destroy(result);
    statgpu_lts_result_destroy(expected);

    float y_narrow[n], x_narrow[ld * n_vars];
    double y_wide[n], x_wide[n * n_vars];
    for (size_t i = 0; i < n; ++i)
        y_wide[i] = y_narrow[i] = (float)y[i];
    for (size_t v = 0; v < n_vars; ++v)
        for (size_t i = 0; i < n; ++i)
            x_wide[i + n * v] = x_narrow[i + ld * v] = (float)x[i + ld * v];
    expected = fit(y_wide, x_wide, n, n_vars, NULL);
    statgpu_vector y_floats = { y_narrow, n, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_HOST };
    statgpu_matrix x_floats = { x_narrow, n, n_vars, ld, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_HOST };
    assert_int_equal(statgpu_lts_matrix(g_context, &y_floats, &x_floats, NULL, &result), STATGPU_OK);
    assert_true(same_result(result, expected));
    statgpu_lts_result_destroy(result);
    statgpu_lts_result_destroy(expected);

    /* No predictors, the intercept alone: a matrix of no columns is what
     * statgpu_lts takes as x NULL and no variables (it had been refused). */
    statgpu_matrix no_columns = { NULL, n, 0, n, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
    assert_int_equal(statgpu_lts(g_context, y, NULL, n, 0, n, NULL, &expected), STATGPU_OK);
    assert_int_equal(statgpu_lts_matrix(g_context, &y_vector, &no_columns, NULL, &result), STATGPU_OK);
    assert_true(same_result(result, expected));
    statgpu_lts_result_destroy(result);
    statgpu_lts_result_destroy(expected);

    y_vector.count = n - 1;
    result = (statgpu_lts_result *)1;
    assert_int_equal(statgpu_lts_matrix(g_context, &y_vector, &x_matrix, NULL, &result),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(result);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "y has 79 elements and x 80 rows"));
    assert_int_equal(statgpu_lts_matrix(g_context, NULL, &x_matrix, NULL, &result), STATGPU_ERROR_INVALID_ARGUMENT);
    y_vector.count = n;
    assert_int_equal(statgpu_lts_matrix(g_context, &y_vector, NULL, NULL, &result), STATGPU_ERROR_INVALID_ARGUMENT);
}

static int setup(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = test_backend_from_environment();
    g_cuda = params.backend == STATGPU_BACKEND_CUDA;
    if (statgpu_context_create(&params, &g_context) != STATGPU_OK)
        return -1;
    params.backend = STATGPU_BACKEND_CPU;
    if (statgpu_context_create(&params, &g_cpu_context) != STATGPU_OK)
        return -1;
    test_note_missing_cuda(g_context, g_cuda ? STATGPU_BACKEND_CUDA : STATGPU_BACKEND_CPU, g_skip_reason,
                           sizeof g_skip_reason);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    statgpu_context_destroy(g_context);
    statgpu_context_destroy(g_cpu_context);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_primitive_against_sort),
        cmocka_unit_test(test_brute_force_subsets),
        cmocka_unit_test(test_least_median_of_squares),
        cmocka_unit_test(test_csteps_never_raise_objective),
        cmocka_unit_test(test_exact_fit),
        cmocka_unit_test(test_alpha_one_is_least_squares),
        cmocka_unit_test(test_large_contaminated),
        cmocka_unit_test(test_reproducible_at_any_thread_count),
        cmocka_unit_test(test_same_bits_at_any_thread_count_on_many_rows),
        cmocka_unit_test(test_standardise_against_sort),
        cmocka_unit_test(test_median_window),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_progress_between_wide_starts),
        cmocka_unit_test(test_impossible_counts),
        cmocka_unit_test(test_thread_teams),
        cmocka_unit_test(test_offset_predictor),
        cmocka_unit_test(test_units_of_y),
        cmocka_unit_test(test_units_of_predictors),
        cmocka_unit_test(test_matrix_arguments),
    };
    int failures = cmocka_run_group_tests(tests, setup, teardown);
    return test_exit_code(failures, g_skip_reason);
}
