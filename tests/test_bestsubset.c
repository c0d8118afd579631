/*
 * test_bestsubset.c: best subset regression (statgpu_bestsubset) against an
 * exact brute force over every subset, and on the inputs that break a naive
 * search.
 *
 * The brute force fits every subset by modified Gram-Schmidt in long double
 * on the centred data and ranks the subsets of each size by RSS, then by
 * their predictors (the earliest differing one first). The engine must
 * report the same nbest subsets in the same order, their RSS within 1e-10
 * relative (double against long double on well-conditioned data), and the
 * statistics that follow from RSS by leaps's formulas within 1e-10.
 * PRESS is checked against refitting without each row (1e-9 relative);
 * k-fold validation with as many folds as rows against the brute force
 * repeated without each row (1e-9). Also: forced and left-out predictors, a
 * largest size, dependent and constant columns dropped and named, predictors
 * near 1e-200 and 1e200 as at 1 (and y that far a clear error), the same
 * bits at 1, 2 and 4 threads, the criteria's choices, cancelling, the
 * tables, and bad arguments.
 *
 * With STATGPU_TEST_BACKEND=cuda every fit asks for CUDA: those of one best
 * subset per size must run their search on the GPU, and a search of 30
 * predictors gives the CPU's results bit for bit (the same tree, the same
 * rotations); without a usable GPU the binary is skipped (exit 77).
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

#define MAX_P 16

static statgpu_backend g_backend = STATGPU_BACKEND_CPU;
static char            g_skip_reason[512] = "";

/* A data set: n rows, p predictors, column-major x. */
typedef struct problem {
    size_t  n, p;
    double *y, *x;
} problem;

static problem make_problem(size_t n, size_t p, uint64_t seed, double correlation)
{
    problem d = { n, p, malloc(n * sizeof(double)), malloc(n * p * sizeof(double)) };
    test_rng rng = { seed };
    for (size_t i = 0; i < n; ++i) {
        double common = test_rng_normal(&rng);
        double response = 0.5 * test_rng_normal(&rng);
        for (size_t v = 0; v < p; ++v) {
            double value = correlation * common + test_rng_normal(&rng);
            d.x[i + n * v] = value;
            response += (v % 3 == 0 ? 1.0 / (double)(v + 1) : 0.05 * (double)v) * value;
        }
        d.y[i] = response + 3.0;
    }
    return d;
}

static void free_problem(problem *d)
{
    free(d->y);
    free(d->x);
}

/* ---------------------------------------------------------- brute force */

/* The RSS of y on the predictors of mask over rows (skip: a row left out,
 * or SIZE_MAX), with or without an intercept, by modified Gram-Schmidt in
 * long double. Also the coefficients (of the centred problem) when coef is
 * not NULL, in predictor order. */
static long double brute_rss(const problem *d, unsigned mask, int intercept, size_t skip, long double *coef)
{
    size_t n = d->n, m = 0, vars[MAX_P];
    for (size_t v = 0; v < d->p; ++v)
        if (mask & (1u << v))
            vars[m++] = v;
    long double *q = malloc((m + 1) * n * sizeof *q), r[MAX_P + 1][MAX_P + 1] = { { 0 } };
    size_t rows = 0;
    long double means[MAX_P + 1] = { 0 };
    for (size_t c = 0; c <= m; ++c) {
        const double *column = c < m ? d->x + n * vars[c] : d->y;
        rows = 0;
        for (size_t i = 0; i < n; ++i)
            if (i != skip) {
                means[c] += column[i];
                ++rows;
            }
        means[c] = intercept ? means[c] / (long double)rows : 0.0L;
        size_t at = 0;
        for (size_t i = 0; i < n; ++i)
            if (i != skip)
                q[c * n + at++] = column[i] - means[c];
    }
    for (size_t c = 0; c <= m; ++c) {
        for (size_t b = 0; b < c; ++b) {
            long double dot = 0.0L;
            for (size_t i = 0; i < rows; ++i)
                dot += q[b * n + i] * q[c * n + i];
            r[b][c] = dot;
            for (size_t i = 0; i < rows; ++i)
                q[c * n + i] -= dot * q[b * n + i];
        }
        long double norm = 0.0L;
        for (size_t i = 0; i < rows; ++i)
            norm += q[c * n + i] * q[c * n + i];
        norm = sqrtl(norm);
        r[c][c] = norm;
        if (c < m)
            for (size_t i = 0; i < rows; ++i)
                q[c * n + i] /= norm;
    }
    if (coef != NULL) {
        for (size_t c = m; c-- > 0;) {
            long double sum = r[c][m];
            for (size_t t = c + 1; t < m; ++t)
                sum -= r[c][t] * coef[t];
            coef[c] = sum / r[c][c];
        }
        /* The intercept last: mean(y) - sum b mean(x). */
        long double a = means[m];
        for (size_t c = 0; c < m; ++c)
            a -= coef[c] * means[c];
        coef[m] = a;
    }
    free(q);
    return r[m][m] * r[m][m];
}

static bool mask_before(long double rss_a, unsigned a, long double rss_b, unsigned b)
{
    if (rss_a != rss_b)
        return rss_a < rss_b;
    unsigned differ = a ^ b;
    return differ != 0 && (a & (differ & (~differ + 1u))) != 0;
}

/* The brute force's best nbest subsets of size s among the allowed masks
 * (those holding must and none of never). */
static size_t brute_best(const problem *d, int intercept, size_t s, size_t nbest, unsigned must, unsigned never,
                         size_t skip, unsigned *masks, long double *rss)
{
    size_t count = 0;
    for (unsigned mask = 1; mask < (1u << d->p); ++mask) {
        if ((size_t)__builtin_popcount(mask) != s || (mask & must) != must || (mask & never) != 0)
            continue;
        long double value = brute_rss(d, mask, intercept, skip, NULL);
        size_t at = count < nbest ? count : nbest;
        if (at == nbest && !mask_before(value, mask, rss[nbest - 1], masks[nbest - 1]))
            continue;
        if (at == nbest)
            --at;
        while (at > 0 && mask_before(value, mask, rss[at - 1], masks[at - 1])) {
            rss[at] = rss[at - 1];
            masks[at] = masks[at - 1];
            --at;
        }
        rss[at] = value;
        masks[at] = mask;
        if (count < nbest)
            ++count;
    }
    return count;
}

static unsigned result_mask(const statgpu_bestsubset_result *result, size_t row)
{
    unsigned mask = 0;
    for (size_t v = 0; v < result->n_vars; ++v)
        if (result->which[row * result->n_vars + v])
            mask |= 1u << v;
    return mask;
}

static void assert_close(double actual, long double expected, double relative, const char *what)
{
    if (!(fabsl((long double)actual - expected) <= relative * fabsl(expected) + 1e-300))
        fail_msg("%s: %.17g is not %.17Lg (relative %.1e)", what, actual, expected, relative);
}

static statgpu_bestsubset_result *fit_on(statgpu_backend backend, const problem *d,
                                          const statgpu_bestsubset_params *params, int threads)
{
    statgpu_context *context;
    TEST_CONTEXT_WITH_THREADS(backend, threads, context);
    statgpu_bestsubset_result *result = NULL;
    statgpu_status status = statgpu_bestsubset(context, d->y, d->x, d->n, d->p, d->n, params, &result);
    if (status != STATGPU_OK)
        fail_msg("statgpu_bestsubset failed: %s", statgpu_context_last_error(context));
    if (backend == STATGPU_BACKEND_CUDA && (params == NULL || params->nbest == 1))
        TEST_ASSERT_RAN_ON_CUDA(context, "a best subset search");
    statgpu_context_destroy(context);
    return result;
}

/* On the backend under test. */
static statgpu_bestsubset_result *fit(const problem *d, const statgpu_bestsubset_params *params, int threads)
{
    return fit_on(g_backend, d, params, threads);
}

/* Every reported size against the brute force: the same subsets in the same
 * order, RSS and the statistics that follow from it. */
static void check_against_brute_force(const problem *d, const statgpu_bestsubset_params *params,
                                      const statgpu_bestsubset_result *result, unsigned must, unsigned never)
{
    int intercept = params->intercept;
    size_t n = d->n;
    long double null_rss = 0.0L, mean = 0.0L;
    for (size_t i = 0; i < n; ++i)
        mean += d->y[i];
    mean = intercept ? mean / (long double)n : 0.0L;
    for (size_t i = 0; i < n; ++i)
        null_rss += (d->y[i] - mean) * (d->y[i] - mean);
    unsigned all = ((1u << d->p) - 1u) & ~never;
    long double full = brute_rss(d, all, intercept, SIZE_MAX, NULL);
    size_t k_full = (size_t)__builtin_popcount(all) + (size_t)intercept;
    long double sigma2 = full / (long double)(n - k_full);
    assert_close(result->null_rss, null_rss, 1e-12, "null RSS");
    assert_close(result->full_rss, full, 1e-10, "full RSS");
    size_t row = 0;
    for (size_t s = result->min_size; s <= result->max_size; ++s) {
        unsigned masks[64];
        long double rss[64];
        size_t count = brute_best(d, intercept, s, params->nbest, must, never, SIZE_MAX, masks, rss);
        for (size_t i = 0; i < count; ++i, ++row) {
            assert_true(row < result->subset_count);
            assert_int_equal(result->sizes[row], s);
            assert_int_equal(result->ranks[row], i + 1);
            if (result_mask(result, row) != masks[i])
                fail_msg("size %zu rank %zu: subset %#x where the brute force has %#x (RSS %.17g, %.17Lg)", s,
                         i + 1, result_mask(result, row), masks[i], result->rss[row], rss[i]);
            assert_close(result->rss[row], rss[i], 1e-10, "RSS");
            long double k = (long double)(s + (size_t)intercept), ratio = rss[i] / null_rss;
            assert_close(result->r_squared[row], 1.0L - ratio, 1e-10, "R2");
            assert_close(result->adjusted_r_squared[row], 1.0L - ratio * ((long double)n - intercept) / ((long double)n - k),
                         1e-10, "adjusted R2");
            assert_close(result->cp[row], rss[i] / sigma2 - ((long double)n - 2.0L * k), 1e-9, "Cp");
            assert_close(result->bic_leaps[row], (long double)n * logl(ratio) + k * logl((long double)n), 1e-10,
                         "BIC (leaps)");
            assert_close(result->bic[row], (long double)n * logl(rss[i] / (long double)n) + k * logl((long double)n),
                         1e-10, "BIC");
        }
    }
    assert_int_equal(row, result->subset_count);
}

/* ------------------------------------------------------------------ tests */

static void test_brute_force_with_intercept(void **state)
{
    (void)state;
    problem d = make_problem(40, 9, 11, 0.7);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.nbest = 3;
    statgpu_bestsubset_result *result = fit(&d, &params, 1);
    assert_int_equal(result->min_size, 1);
    assert_int_equal(result->max_size, 9);
    check_against_brute_force(&d, &params, result, 0, 0);
    statgpu_bestsubset_result_destroy(result);
    free_problem(&d);
}

static void test_brute_force_without_intercept(void **state)
{
    (void)state;
    problem d = make_problem(35, 8, 12, 0.3);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.intercept = 0;
    params.nbest = 2;
    statgpu_bestsubset_result *result = fit(&d, &params, 2);
    check_against_brute_force(&d, &params, result, 0, 0);
    statgpu_bestsubset_result_destroy(result);
    free_problem(&d);
}

/* 14 predictors (16383 subsets), 5 best of each size: deep enough for the
 * bounds and the reordering to cut. */
static void test_brute_force_wider(void **state)
{
    (void)state;
    problem d = make_problem(120, 14, 13, 0.5);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.nbest = 5;
    statgpu_bestsubset_result *result = fit(&d, &params, 3);
    check_against_brute_force(&d, &params, result, 0, 0);
    assert_true(result->subsets_evaluated < 16383);  /* the bounds cut something */
    statgpu_bestsubset_result_destroy(result);
    free_problem(&d);
}

static void test_forced_and_left_out(void **state)
{
    (void)state;
    problem d = make_problem(50, 9, 14, 0.6);
    int8_t force[9] = { 0, 1, 0, -1, 0, 0, 1, 0, 0 };
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.nbest = 2;
    params.force = force;
    statgpu_bestsubset_result *result = fit(&d, &params, 1);
    assert_int_equal(result->min_size, 2);
    assert_int_equal(result->max_size, 8);
    assert_int_equal(result->dropped_count, 0);
    check_against_brute_force(&d, &params, result, (1u << 1) | (1u << 6), 1u << 3);
    statgpu_bestsubset_result_destroy(result);
    free_problem(&d);
}

static void test_largest_size(void **state)
{
    (void)state;
    problem d = make_problem(40, 10, 15, 0.2);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.max_size = 3;
    params.nbest = 4;
    statgpu_bestsubset_result *result = fit(&d, &params, 2);
    assert_int_equal(result->max_size, 3);
    assert_int_equal(result->subset_count, 12);
    check_against_brute_force(&d, &params, result, 0, 0);
    statgpu_bestsubset_result_destroy(result);
    free_problem(&d);
}

/* PRESS: refit without each row. */
static void test_press(void **state)
{
    (void)state;
    problem d = make_problem(30, 6, 16, 0.4);
    for (int intercept = 0; intercept <= 1; ++intercept) {
        statgpu_bestsubset_params params;
        statgpu_bestsubset_params_init(&params);
        params.intercept = intercept;
        statgpu_bestsubset_result *result = fit(&d, &params, 1);
        for (size_t row = 0; row < result->subset_count; ++row) {
            unsigned mask = result_mask(result, row);
            long double press = 0.0L, coef[MAX_P + 1];
            size_t vars[MAX_P], m = 0;
            for (size_t v = 0; v < d.p; ++v)
                if (mask & (1u << v))
                    vars[m++] = v;
            for (size_t i = 0; i < d.n; ++i) {
                brute_rss(&d, mask, intercept, i, coef);
                long double prediction = intercept ? coef[m] : 0.0L;
                for (size_t c = 0; c < m; ++c)
                    prediction += coef[c] * d.x[i + d.n * vars[c]];
                press += (d.y[i] - prediction) * (d.y[i] - prediction);
            }
            assert_close(result->press[row], press, 1e-9, "PRESS");
            assert_close(result->validation_error[row], press / (long double)d.n, 1e-9, "PRESS / n");
        }
        statgpu_bestsubset_result_destroy(result);
    }
    free_problem(&d);
}

/* k-fold with a fold per row: each row predicted by the best subset of each
 * size found without it. */
static void test_kfold_leave_one_out(void **state)
{
    (void)state;
    problem d = make_problem(24, 5, 17, 0.5);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.validation = STATGPU_SUBSET_KFOLD;
    params.fold_count = d.n;
    statgpu_bestsubset_result *result = fit(&d, &params, 2);
    assert_int_equal(result->fold_count, d.n);
    for (size_t row = 0; row < result->subset_count; ++row) {
        size_t s = result->sizes[row];
        long double sse = 0.0L;
        for (size_t i = 0; i < d.n; ++i) {
            unsigned masks[1];
            long double rss[1], coef[MAX_P + 1];
            brute_best(&d, 1, s, 1, 0, 0, i, masks, rss);
            brute_rss(&d, masks[0], 1, i, coef);
            long double prediction = coef[s];
            for (size_t v = 0, c = 0; v < d.p; ++v)
                if (masks[0] & (1u << v))
                    prediction += coef[c++] * d.x[i + d.n * v];
            sse += (d.y[i] - prediction) * (d.y[i] - prediction);
        }
        assert_close(result->validation_error[row], sse / (long double)d.n, 1e-9, "k-fold error");
    }
    statgpu_bestsubset_result_destroy(result);
    free_problem(&d);
}

/* Holdout and k-fold: the same seed the same bits, another seed other
 * folds; only rank-1 rows carry the error. */
static void test_validation_seeds(void **state)
{
    (void)state;
    problem d = make_problem(60, 7, 18, 0.5);
    for (int kind = 1; kind <= 2; ++kind) {
        statgpu_bestsubset_params params;
        statgpu_bestsubset_params_init(&params);
        params.validation = (statgpu_subset_validation)kind;
        params.fold_count = 5;
        params.nbest = 2;
        statgpu_bestsubset_result *a = fit(&d, &params, 1), *b = fit(&d, &params, 4);
        params.seed = 99;
        statgpu_bestsubset_result *c = fit(&d, &params, 1);
        bool differs = false;
        for (size_t row = 0; row < a->subset_count; ++row) {
            if (a->ranks[row] == 1) {
                assert_true(isfinite(a->validation_error[row]) && a->validation_error[row] > 0.0);
                assert_bits_equal(a->validation_error[row], b->validation_error[row]);
                differs = differs || a->validation_error[row] != c->validation_error[row];
            } else {
                assert_true(isnan(a->validation_error[row]));
            }
        }
        assert_true(differs);
        if (kind == 1)
            assert_int_equal(a->holdout_count, 12);
        statgpu_bestsubset_result_destroy(a);
        statgpu_bestsubset_result_destroy(b);
        statgpu_bestsubset_result_destroy(c);
    }
    free_problem(&d);
}

/* The same bits at 1, 2 and 4 threads. */
static void test_threads(void **state)
{
    (void)state;
    problem d = make_problem(200, 16, 19, 0.8);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.nbest = 3;
    statgpu_bestsubset_result *one = fit(&d, &params, 1);
    for (int threads = 2; threads <= 4; threads += 2) {
        statgpu_bestsubset_result *other = fit(&d, &params, threads);
        assert_int_equal(other->subset_count, one->subset_count);
        assert_memory_equal(other->which, one->which, one->subset_count * d.p);
        for (size_t row = 0; row < one->subset_count; ++row) {
            assert_bits_equal(other->rss[row], one->rss[row]);
            assert_bits_equal(other->press[row], one->press[row]);
        }
        assert_int_equal(other->chosen, one->chosen);
        statgpu_bestsubset_result_destroy(other);
    }
    statgpu_bestsubset_result_destroy(one);
    free_problem(&d);
}

/* The backend under test against the CPU on one thread: the same bits in
 * every array, k-fold's searches included (30 predictors, so the GPU's part
 * of the tree is most of it). */
static void test_backends_agree(void **state)
{
    (void)state;
    problem d = make_problem(500, 30, 25, 0.6);
    for (int kind = 0; kind < 2; ++kind) {
        statgpu_bestsubset_params params;
        statgpu_bestsubset_params_init(&params);
        if (kind == 1) {
            params.validation = STATGPU_SUBSET_KFOLD;
            params.fold_count = 4;
        }
        statgpu_bestsubset_result *cpu = fit_on(STATGPU_BACKEND_CPU, &d, &params, 1);
        statgpu_bestsubset_result *other = fit(&d, &params, 4);
        assert_int_equal(other->subset_count, cpu->subset_count);
        assert_memory_equal(other->which, cpu->which, cpu->subset_count * d.p);
        for (size_t row = 0; row < cpu->subset_count; ++row) {
            assert_bits_equal(other->rss[row], cpu->rss[row]);
            assert_bits_equal(other->press[row], cpu->press[row]);
            assert_bits_equal(other->validation_error[row], cpu->validation_error[row]);
        }
        assert_int_equal(other->chosen, cpu->chosen);
        assert_memory_equal(other->coefficients, cpu->coefficients, cpu->coefficient_count * sizeof(double));
        statgpu_bestsubset_result_destroy(cpu);
        statgpu_bestsubset_result_destroy(other);
    }
    free_problem(&d);
}

/* A copy, a sum of two others and a constant column are dropped (and named);
 * the rest is the brute force over the others. */
static void test_dependent_columns(void **state)
{
    (void)state;
    problem d = make_problem(40, 8, 20, 0.3);
    for (size_t i = 0; i < d.n; ++i) {
        d.x[i + d.n * 2] = d.x[i + d.n * 0];                       /* a copy of X1 */
        d.x[i + d.n * 5] = d.x[i + d.n * 1] - 2.0 * d.x[i + d.n * 3];  /* X2 - 2 X4 */
        d.x[i + d.n * 7] = 0.1;  /* constant: centring leaves rounding, not 0 */
    }
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.nbest = 2;
    statgpu_bestsubset_result *result = fit(&d, &params, 1);
    assert_int_equal(result->dropped_count, 3);
    assert_true(result->dropped[2] && result->dropped[5] && result->dropped[7]);
    assert_int_equal(result->max_size, 5);
    check_against_brute_force(&d, &params, result, 0, (1u << 2) | (1u << 5) | (1u << 7));
    for (size_t row = 0; row < result->subset_count; ++row)
        assert_true(isfinite(result->press[row]) && isfinite(result->cp[row]));
    /* Forcing in the constant one is an error that names it (a forced copy
     * would stay, and its original be dropped: forced columns come first). */
    int8_t force[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };
    params.force = force;
    statgpu_context *context;
    TEST_CONTEXT_WITH_THREADS(g_backend, 1, context);
    statgpu_bestsubset_result *none = NULL;
    assert_int_equal(statgpu_bestsubset(context, d.y, d.x, d.n, d.p, d.n, &params, &none),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(statgpu_context_last_error(context), "predictor 8 is forced in but is constant"));
    assert_null(none);
    statgpu_context_destroy(context);
    statgpu_bestsubset_result_destroy(result);
    free_problem(&d);
}

/* Predictors near 1e-200 or 1e200: the same subsets and RSS as at 1 (their
 * norms are taken without underflow or overflow); y that far: a clear error. */
static void test_extreme_units(void **state)
{
    (void)state;
    problem d = make_problem(50, 6, 26, 0.3);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    statgpu_bestsubset_result *plain = fit(&d, &params, 1);
    const double factors[] = { 0x1p-660, 0x1p660, 1e-200 };
    for (size_t f = 0; f < sizeof factors / sizeof *factors; ++f) {
        problem scaled = make_problem(50, 6, 26, 0.3);
        for (size_t i = 0; i < d.n * d.p; ++i)
            scaled.x[i] *= factors[f];
        statgpu_bestsubset_result *result = fit(&scaled, &params, 1);
        assert_int_equal(result->subset_count, plain->subset_count);
        assert_memory_equal(result->which, plain->which, plain->subset_count * d.p);
        for (size_t row = 0; row < plain->subset_count; ++row)
            assert_close(result->rss[row], plain->rss[row], 1e-12, "RSS of scaled predictors");
        statgpu_bestsubset_result_destroy(result);
        free_problem(&scaled);
    }
    for (size_t i = 0; i < d.n; ++i)
        d.y[i] *= 1e200;
    statgpu_context *context;
    TEST_CONTEXT_WITH_THREADS(g_backend, 1, context);
    statgpu_bestsubset_result *none = NULL;
    assert_int_equal(statgpu_bestsubset(context, d.y, d.x, d.n, d.p, d.n, &params, &none),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(statgpu_context_last_error(context), "beyond the range of doubles"));
    statgpu_context_destroy(context);
    statgpu_bestsubset_result_destroy(plain);
    free_problem(&d);
}

/* The chosen model: the criterion's best rank-1 row; its coefficients are
 * the least squares fit of that subset. */
static void test_criteria(void **state)
{
    (void)state;
    problem d = make_problem(80, 8, 21, 0.4);
    for (int criterion = 0; criterion <= 3; ++criterion) {
        statgpu_bestsubset_params params;
        statgpu_bestsubset_params_init(&params);
        params.criterion = (statgpu_subset_criterion)criterion;
        params.nbest = 2;
        statgpu_bestsubset_result *result = fit(&d, &params, 1);
        size_t best = SIZE_MAX;
        for (size_t row = 0; row < result->subset_count; ++row) {
            if (result->ranks[row] != 1)
                continue;
            double value = criterion == 1 ? result->cp[row] : criterion == 2 ? result->bic[row]
                           : criterion == 3 ? -result->adjusted_r_squared[row] : result->validation_error[row];
            double current = best == SIZE_MAX ? INFINITY
                             : criterion == 1 ? result->cp[best] : criterion == 2 ? result->bic[best]
                             : criterion == 3 ? -result->adjusted_r_squared[best] : result->validation_error[best];
            if (value < current)
                best = row;
        }
        assert_int_equal(result->chosen, best);
        /* Coefficients: intercept first, then the chosen predictors. */
        unsigned mask = result_mask(result, best);
        long double coef[MAX_P + 1];
        brute_rss(&d, mask, 1, SIZE_MAX, coef);
        size_t m = (size_t)__builtin_popcount(mask);
        assert_int_equal(result->coefficient_count, m + 1);
        assert_int_equal(result->coefficient_vars[0], SIZE_MAX);
        assert_close(result->coefficients[0], coef[m], 1e-9, "intercept");
        for (size_t c = 0; c < m; ++c) {
            assert_true(mask & (1u << result->coefficient_vars[c + 1]));
            assert_close(result->coefficients[c + 1], coef[c], 1e-9, "coefficient");
            assert_true(result->standard_errors[c + 1] > 0.0);
        }
        statgpu_bestsubset_result_destroy(result);
    }
    free_problem(&d);
}

static int cancel_at_once(void *user_data, double fraction)
{
    (void)user_data;
    return fraction > 0.0;
}

static void test_cancel(void **state)
{
    (void)state;
    problem d = make_problem(300, 24, 22, 0.0);
    statgpu_context_params context_params;
    statgpu_context_params_init(&context_params);
    context_params.backend = g_backend;
    context_params.progress = cancel_at_once;
    statgpu_context *context;
    assert_int_equal(statgpu_context_create(&context_params, &context), STATGPU_OK);
    statgpu_bestsubset_result *result = NULL;
    assert_int_equal(statgpu_bestsubset(context, d.y, d.x, d.n, d.p, d.n, NULL, &result), STATGPU_ERROR_CANCELLED);
    assert_null(result);
    statgpu_context_destroy(context);
    free_problem(&d);
}

static void test_tables(void **state)
{
    (void)state;
    problem d = make_problem(30, 4, 23, 0.2);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.nbest = 2;
    statgpu_bestsubset_result *result = fit(&d, &params, 1);
    statgpu_context *context;
    TEST_CONTEXT_WITH_THREADS(STATGPU_BACKEND_CPU, 1, context);
    const char *names[4] = { "a", "b", "c", "d" };
    statgpu_table_params table_params;
    statgpu_table_params_init(&table_params);
    table_params.variable_names = names;
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_bestsubset_tables(context, result, &table_params, &set), STATGPU_OK);
    assert_int_equal(statgpu_table_set_count(set), 4);
    const statgpu_table *subsets = statgpu_table_set_find(set, "subsets");
    assert_non_null(subsets);
    assert_int_equal(subsets->row_count, result->subset_count);
    assert_int_equal(subsets->column_count, 12);
    size_t chosen_flags = 0;
    for (size_t row = 0; row < subsets->row_count; ++row)
        chosen_flags += subsets->values[row + subsets->row_count * 10] == 1.0;
    assert_int_equal(chosen_flags, 1);
    /* The last column names the predictors of the first row: the best one. */
    const char *text = subsets->texts[0 + subsets->row_count * 11];
    assert_non_null(text);
    size_t v = 0;
    while (!result->which[v])
        ++v;
    assert_string_equal(text, names[v]);
    const statgpu_table *which = statgpu_table_set_find(set, "which");
    assert_int_equal(which->column_count, 6);
    assert_string_equal(which->column_headers[2], "a");
    const statgpu_table *coefficients = statgpu_table_set_find(set, "coefficients");
    /* No row labels (Calc shows none): the terms are the first column, texts. */
    assert_int_equal(coefficients->row_count, result->coefficient_count);
    assert_int_equal(coefficients->column_count, 4);
    assert_null(coefficients->row_labels);
    assert_string_equal(coefficients->column_headers[0], "term");
    assert_string_equal(coefficients->column_headers[3], "t value");
    assert_string_equal(coefficients->texts[0], "(Intercept)");
    for (size_t c = 1; c < coefficients->row_count; ++c) {
        size_t v = result->coefficient_vars[c];
        assert_int_equal(coefficients->cell_kinds[c], STATGPU_CELL_TEXT);
        assert_string_equal(coefficients->texts[c], names[v]);
        assert_true(coefficients->values[c + coefficients->row_count] == result->coefficients[c]);
        assert_true(coefficients->values[c + 2 * coefficients->row_count] == result->standard_errors[c]);
    }
    assert_int_equal(statgpu_table_set_find(set, "summary")->row_count, 14);
    statgpu_table_set_destroy(set);
    const char *const *table_names = statgpu_method_table_names("bestsubset");
    assert_string_equal(table_names[0], "subsets");
    statgpu_context_destroy(context);
    statgpu_bestsubset_result_destroy(result);
    free_problem(&d);
}

static statgpu_status call(problem *d, const statgpu_bestsubset_params *params, statgpu_context *context)
{
    statgpu_bestsubset_result *result = NULL;
    statgpu_status status = statgpu_bestsubset(context, d->y, d->x, d->n, d->p, d->n, params, &result);
    if (status == STATGPU_OK)
        statgpu_bestsubset_result_destroy(result);
    else
        assert_null(result);
    return status;
}

/* statgpu_bestsubset_split: the counts by the rule the fits use, and a
 * fit runs exactly where the split is valid and keeps more rows than the
 * full model's coefficients (4 predictors and the intercept). */
static void test_split(void **state)
{
    (void)state;
    size_t held = 99, kept = 99;
    assert_int_equal(statgpu_bestsubset_split(NULL, 10, &held, &kept), STATGPU_OK);  /* PRESS */
    assert_int_equal(held, 1);
    assert_int_equal(kept, 9);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.validation = STATGPU_SUBSET_HOLDOUT;
    params.holdout_fraction = 0.25;  /* 2.5 rounds away from 0 */
    assert_int_equal(statgpu_bestsubset_split(&params, 10, &held, &kept), STATGPU_OK);
    assert_int_equal(held, 3);
    assert_int_equal(kept, 7);
    params.holdout_fraction = 0.04;  /* 0.4 rows: none */
    assert_int_equal(statgpu_bestsubset_split(&params, 10, &held, &kept), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(held, 0);
    assert_int_equal(kept, 0);
    params.holdout_fraction = 1.0;
    assert_int_equal(statgpu_bestsubset_split(&params, 10, &held, &kept), STATGPU_ERROR_INVALID_ARGUMENT);
    params.validation = STATGPU_SUBSET_KFOLD;
    params.fold_count = 3;  /* folds of 4, 3 and 3 rows */
    assert_int_equal(statgpu_bestsubset_split(&params, 10, &held, &kept), STATGPU_OK);
    assert_int_equal(held, 4);
    assert_int_equal(kept, 6);
    params.fold_count = 11;
    assert_int_equal(statgpu_bestsubset_split(&params, 10, &held, &kept), STATGPU_ERROR_INVALID_ARGUMENT);
    /* Counts near the largest size_t: no wrap round (folds had come out 0
     * rows and been refused; a holdout of nearly all 2^64 rows 2^63). */
    params.fold_count = 3;
    assert_int_equal(statgpu_bestsubset_split(&params, SIZE_MAX, &held, &kept), STATGPU_OK);
    assert_true(held == SIZE_MAX / 3 && kept == SIZE_MAX - SIZE_MAX / 3);
    params.validation = STATGPU_SUBSET_HOLDOUT;
    params.holdout_fraction = 0.9999999999;
    assert_int_equal(statgpu_bestsubset_split(&params, SIZE_MAX, &held, &kept), STATGPU_OK);
    assert_true(held > SIZE_MAX / 2 + SIZE_MAX / 4 && held <= SIZE_MAX && kept == SIZE_MAX - held);
    params.validation = STATGPU_SUBSET_KFOLD;
    params.fold_count = 1;
    assert_int_equal(statgpu_bestsubset_split(&params, 10, &held, &kept), STATGPU_ERROR_INVALID_ARGUMENT);
    params.validation = (statgpu_subset_validation)7;
    assert_int_equal(statgpu_bestsubset_split(&params, 10, &held, &kept), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_bestsubset_params_init(&params);
    assert_int_equal(statgpu_bestsubset_split(&params, 0, &held, &kept), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_bestsubset_split(&params, 10, NULL, &kept), STATGPU_ERROR_INVALID_ARGUMENT);
    params.struct_bytes = 8;
    assert_int_equal(statgpu_bestsubset_split(&params, 10, &held, &kept), STATGPU_ERROR_INVALID_ARGUMENT);

    statgpu_context *context;
    TEST_CONTEXT_WITH_THREADS(g_backend, 1, context);
    problem d = make_problem(20, 4, 31, 0.0);
    const size_t coefficients = 5;
    for (int kind = 1; kind <= 2; ++kind)
        for (int step = 1; step <= 41; ++step) {
            statgpu_bestsubset_params chosen;
            statgpu_bestsubset_params_init(&chosen);
            chosen.validation = (statgpu_subset_validation)kind;
            chosen.holdout_fraction = step / 42.0;
            chosen.fold_count = (size_t)step / 2;  /* 0 ... 20 */
            const bool valid = statgpu_bestsubset_split(&chosen, d.n, &held, &kept) == STATGPU_OK;
            statgpu_bestsubset_result *result = NULL;
            const statgpu_status status =
                statgpu_bestsubset(context, d.y, d.x, d.n, d.p, d.n, &chosen, &result);
            if ((status == STATGPU_OK) != (valid && kept > coefficients))
                fail_msg("validation %d, share %.4f, folds %zu: split %s (held %zu, kept %zu), fit %s", kind,
                         chosen.holdout_fraction, chosen.fold_count, valid ? "valid" : "refused", held, kept,
                         statgpu_status_string(status));
            if (result != NULL && kind == 1)
                assert_int_equal(result->holdout_count, held);
            statgpu_bestsubset_result_destroy(result);
        }
    free_problem(&d);
    statgpu_context_destroy(context);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    statgpu_context *context;
    TEST_CONTEXT_WITH_THREADS(g_backend, 1, context);
    problem d = make_problem(20, 4, 24, 0.0);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    assert_int_equal(call(&d, &params, context), STATGPU_OK);

    statgpu_bestsubset_params bad = params;
    bad.nbest = 0;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    bad = params;
    bad.intercept = 2;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    bad = params;
    bad.validation = (statgpu_subset_validation)7;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    bad = params;
    bad.criterion = (statgpu_subset_criterion)9;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    bad = params;
    bad.validation = STATGPU_SUBSET_HOLDOUT;
    bad.holdout_fraction = 0.0;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    bad.holdout_fraction = 0.99;  /* too few rows left to fit the full model */
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    bad = params;
    bad.validation = STATGPU_SUBSET_KFOLD;
    bad.fold_count = 1;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    bad.fold_count = 21;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    int8_t force[4] = { 2, 0, 0, 0 };
    bad = params;
    bad.force = force;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    int8_t all_forced[4] = { 1, 1, -1, 1 };
    bad.force = all_forced;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    int8_t two_forced[4] = { 1, 1, 0, 0 };
    bad.force = two_forced;
    bad.max_size = 1;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);
    bad = params;
    bad.struct_bytes = 8;
    assert_int_equal(call(&d, &bad, context), STATGPU_ERROR_INVALID_ARGUMENT);

    /* Data: NaN, infinity, too few rows, constant y, an exact fit. */
    double saved = d.x[3];
    d.x[3] = NAN;
    assert_int_equal(call(&d, &params, context), STATGPU_ERROR_NAN_IN_DATA);
    d.x[3] = INFINITY;
    assert_int_equal(call(&d, &params, context), STATGPU_ERROR_INVALID_ARGUMENT);
    d.x[3] = saved;
    problem few = d;
    few.n = 5;  /* 5 rows for 5 coefficients */
    assert_int_equal(statgpu_bestsubset(context, few.y, few.x, few.n, few.p, d.n, &params, &(statgpu_bestsubset_result *){ NULL }),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    double *y = d.y;
    double constant[20];
    for (size_t i = 0; i < 20; ++i)
        constant[i] = 2.5;
    d.y = constant;
    assert_int_equal(call(&d, &params, context), STATGPU_ERROR_INVALID_ARGUMENT);
    /* Constant at any size, where a mean summed in one pass leaves rounding
     * (0.1, 1e15 + 0.1): refused as constant. */
    const double constants[] = { 0.1, 1e15 + 0.1, -3e200 };
    for (size_t c = 0; c < sizeof constants / sizeof constants[0]; ++c) {
        for (size_t i = 0; i < 20; ++i)
            constant[i] = constants[c];
        assert_int_equal(call(&d, &params, context), STATGPU_ERROR_INVALID_ARGUMENT);
        assert_non_null(strstr(statgpu_context_last_error(context), "constant"));
    }
    /* y far from 0 against its spread (y + 2^47: its spread about 1e-13 of
     * its size) is no constant: it is fitted (it had been refused as
     * constant). */
    for (size_t i = 0; i < 20; ++i)
        constant[i] = 0x1p47 + y[i];
    assert_int_equal(call(&d, &params, context), STATGPU_OK);
    for (size_t i = 0; i < 20; ++i)
        constant[i] = 1.0 + 2.0 * d.x[i] - d.x[i + 20 * 2];
    assert_int_equal(call(&d, &params, context), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(statgpu_context_last_error(context), "exact"));
    d.y = y;
    statgpu_bestsubset_result *result = NULL;
    assert_int_equal(statgpu_bestsubset(context, d.y, d.x, 0, d.p, 1, &params, &result), STATGPU_ERROR_EMPTY_INPUT);
    assert_int_equal(statgpu_bestsubset(context, d.y, d.x, d.n, 0, d.n, &params, &result),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_bestsubset(context, d.y, d.x, d.n, d.p, d.n - 1, &params, &result),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_bestsubset(context, NULL, d.x, d.n, d.p, d.n, &params, &result),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_bestsubset(context, d.y, d.x, d.n, d.p, d.n, &params, NULL),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_bestsubset(NULL, d.y, d.x, d.n, d.p, d.n, &params, &result),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_bestsubset_tables(context, NULL, NULL, &(statgpu_table_set *){ NULL }),
                     STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_bestsubset_result_destroy(NULL);
    statgpu_context_destroy(context);
    free_problem(&d);
}

int main(void)
{
    g_backend = test_backend_from_environment();
    if (test_cuda_missing(g_skip_reason, sizeof g_skip_reason))
        return test_exit_code(0, g_skip_reason);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_brute_force_with_intercept),
        cmocka_unit_test(test_brute_force_without_intercept),
        cmocka_unit_test(test_brute_force_wider),
        cmocka_unit_test(test_forced_and_left_out),
        cmocka_unit_test(test_largest_size),
        cmocka_unit_test(test_press),
        cmocka_unit_test(test_kfold_leave_one_out),
        cmocka_unit_test(test_validation_seeds),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_backends_agree),
        cmocka_unit_test(test_dependent_columns),
        cmocka_unit_test(test_extreme_units),
        cmocka_unit_test(test_criteria),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_bad_arguments),
    };
    return test_exit_code(cmocka_run_group_tests(tests, NULL, NULL), g_skip_reason);
}
