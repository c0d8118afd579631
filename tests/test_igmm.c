/*
 * test_igmm.c: mixtures of inverse Gaussians (statgpu_igmm) against R and on
 * the data sets that break a naive EM.
 *
 * Reference (tests/reference/igmm_r.csv and igmm_data.csv, written by
 * igmm_reference.R with statmod's densities and the same updates): three
 * simulated data sets fitted in one call from given starts:
 *   - the log-likelihood after each of the first 15 iterations within 1e-10
 *     relative, the parameters after 15 within 1e-9 relative;
 *   - with the defaults (tolerance 1e-6, at most 100 iterations) the same
 *     number of iterations and the log-likelihood within 1e-10.
 * Also: one component is its maximum likelihood estimate after one
 * iteration (1e-12); the log-likelihood never falls from one iteration to
 * the next; random starts recover the simulated two-component mixture;
 * bad data sets (a zero, a negative value, too few, constant, empty) get
 * their status while the good one is fitted; data far from ordinary size
 * (2^600, 1e-200, ...) give the unscaled fit in their own units
 * (log-likelihood 1e-9 relative, parameters 1e-6), values spanning more
 * than 2^1000 their own status; nearly constant data (cv 1e-3 to 1e-7, five
 * 1's and one 1.000000001, two tight components far apart) give lambda
 * within 1e-13 of the exact estimate (long double), and a lambda beyond the
 * doubles a status that says so; a long CPU fit hears its progress and
 * stops at the callback's word within seconds; a collapsing component is
 * re-seeded, never NaN; the same bits at 1, 2 and 3 threads; bad arguments;
 * the E-step's own exp (engine/src/math/exp_nonpositive.h) within 1 ulp of the
 * exact value on [-746, 0], subnormal results included, exactly 1 at 0, 0
 * at -746 and NaN at NaN; the E-step's AVX2 kernel gives the generic (SSE2)
 * kernel's bits.
 *
 * With STATGPU_TEST_BACKEND=cuda every call asks for CUDA (the GPU fits each
 * (data set, start) pair; a pair whose M-step would re-seed goes back to the
 * CPU), to the same tolerances; and 300 data sets of 50 to 200,000 values
 * (two beyond the GPU's shared memory, fitted by its grid path) fitted on
 * both backends for 40 iterations agree, and the two long ones to
 * convergence: log-likelihoods within 1e-9 relative, parameters within
 * 1e-6 (the likelihood is flat near its optimum, so the sums' rounding
 * moves them by up to about 2e-8 after 40 iterations while the
 * log-likelihood moves by 1e-15). Without a usable GPU the binary is
 * skipped (exit 77).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "statgpu.h"
#include "test_reference_csv.h"
/* The engine's private headers: the exp (a static inline function) and the
 * E-step's kernels, whose source is compiled in (tests/CMakeLists.txt). */
#include "math/exp_nonpositive.h"
#include "methods/igmm_estep.h"
#include "test_support.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static statgpu_context *g_context;
static bool             g_cuda;
static char             g_skip_reason[512] = "";
static const char      *g_reference_dir = "tests/reference";

#define LINE_BYTES 8192
#define MAX_VALUES 64
#define SET_COUNT 3

static const char *const k_cases[SET_COUNT] = { "two", "three", "one" };

static int close_to(double a, double b, double relative, double absolute)
{
    return fabs(a - b) <= relative * fabs(b) + absolute;
}

/* The values of (case, quantity) in igmm_r.csv; their count. */
static size_t reference_values(const char *case_name, const char *quantity, double *out)
{
    FILE *file = test_open_reference(g_reference_dir, "igmm_r.csv");
    char line[LINE_BYTES], wanted[128];
    snprintf(wanted, sizeof wanted, "\"%s\",\"%s\",\"", case_name, quantity);
    size_t count = 0;
    bool found = false;
    while (!found && fgets(line, sizeof line, file))
        if (strncmp(line, wanted, strlen(wanted)) == 0) {
            count = test_parse_numbers(line + strlen(wanted), out, MAX_VALUES);
            found = true;
        }
    fclose(file);
    if (!found)
        fail_msg("igmm_r.csv has no %s %s", case_name, quantity);
    return count;
}

/* The three data sets of igmm_data.csv, in k_cases' order. */
typedef struct data_sets {
    double *values[SET_COUNT];
    size_t  lengths[SET_COUNT];
} data_sets;

static void read_sets(data_sets *sets)
{
    FILE *file = test_open_reference(g_reference_dir, "igmm_data.csv");
    char line[256];
    for (int s = 0; s < SET_COUNT; ++s) {
        sets->values[s] = malloc(4000 * sizeof(double));
        sets->lengths[s] = 0;
    }
    assert_non_null(fgets(line, sizeof line, file));  /* the header */
    while (fgets(line, sizeof line, file)) {
        char *comma = strchr(line, ',');
        if (comma == NULL)
            continue;
        *comma = '\0';
        for (int s = 0; s < SET_COUNT; ++s)
            if (strcmp(line, k_cases[s]) == 0 && sets->lengths[s] < 4000)
                sets->values[s][sets->lengths[s]++] = strtod(comma + 1, NULL);
    }
    fclose(file);
    assert_int_equal(sets->lengths[0], 2000);
    assert_int_equal(sets->lengths[1], 3000);
    assert_int_equal(sets->lengths[2], 500);
}

static void free_sets(data_sets *sets)
{
    for (int s = 0; s < SET_COUNT; ++s)
        free(sets->values[s]);
}

/* R's updates from R's starts, one data set at a time (a given start is one
 * for every data set of a call). */
static void test_r_reference(void **state)
{
    (void)state;
    data_sets sets;
    read_sets(&sets);
    for (int s = 0; s < SET_COUNT; ++s) {
        double alpha[MAX_VALUES], mu[MAX_VALUES], lambda[MAX_VALUES], loglik[MAX_VALUES], values[MAX_VALUES];
        size_t k = reference_values(k_cases[s], "alpha_init", alpha);
        reference_values(k_cases[s], "mu_init", mu);
        reference_values(k_cases[s], "lambda_init", lambda);
        size_t iterations = reference_values(k_cases[s], "loglik", loglik);
        statgpu_igmm_params params;
        statgpu_igmm_params_init(&params);
        params.initial_alpha = alpha;
        params.initial_mu = mu;
        params.initial_lambda = lambda;
        params.tolerance = 0.0;
        const double *one[1] = { sets.values[s] };
        statgpu_igmm_result *r = NULL;
        for (size_t t = 1; t <= iterations; ++t) {
            params.max_iterations = t;
            assert_int_equal(statgpu_igmm(g_context, one, &sets.lengths[s], 1, k, &params, &r), STATGPU_OK);
            assert_int_equal(r->status[0], STATGPU_IGMM_FITTED);
            assert_int_equal(r->iterations[0], t);
            if (!close_to(r->log_likelihood[0], loglik[t - 1], 1e-10, 0.0))
                fail_msg("%s t=%zu: log-likelihood %.17g, R %.17g", k_cases[s], t, r->log_likelihood[0],
                         loglik[t - 1]);
            if (t < iterations)
                statgpu_igmm_result_destroy(r);
        }
        const char *const names[3] = { "alpha", "mu", "lambda" };
        const double *got[3] = { r->alpha, r->mu, r->lambda };
        for (int q = 0; q < 3; ++q) {
            reference_values(k_cases[s], names[q], values);
            for (size_t j = 0; j < k; ++j)
                if (!close_to(got[q][j], values[j], 1e-9, 0.0))
                    fail_msg("%s %s[%zu]: %.17g, R %.17g", k_cases[s], names[q], j, got[q][j], values[j]);
        }
        statgpu_igmm_result_destroy(r);

        statgpu_igmm_params_init(&params);
        params.initial_alpha = alpha;
        params.initial_mu = mu;
        params.initial_lambda = lambda;
        assert_int_equal(statgpu_igmm(g_context, one, &sets.lengths[s], 1, k, &params, &r), STATGPU_OK);
        reference_values(k_cases[s], "converged_iterations", values);
        assert_int_equal(r->iterations[0], (size_t)values[0]);
        assert_int_equal(r->converged[0], (size_t)values[0] < 100);
        reference_values(k_cases[s], "converged_loglik", values);
        assert_true(close_to(r->log_likelihood[0], values[0], 1e-10, 0.0));
        statgpu_igmm_result_destroy(r);
    }
    free_sets(&sets);
}

/* One component: after one iteration the maximum likelihood estimate. */
static void test_one_component(void **state)
{
    (void)state;
    data_sets sets;
    read_sets(&sets);
    const double *x = sets.values[2];
    size_t n = sets.lengths[2];
    double sum = 0.0, inverse = 0.0;
    for (size_t i = 0; i < n; ++i) {
        sum += x[i];
        inverse += 1.0 / x[i];
    }
    double mean = sum / (double)n, shape = (double)n / (inverse - (double)n / mean);
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    params.start_count = 3;
    statgpu_igmm_result *r = NULL;
    assert_int_equal(statgpu_igmm(g_context, &x, &n, 1, 1, &params, &r), STATGPU_OK);
    assert_true(close_to(r->mu[0], mean, 1e-12, 0.0));
    assert_true(close_to(r->lambda[0], shape, 1e-12, 0.0));
    assert_true(r->alpha[0] == 1.0);
    assert_true(r->converged[0]);
    statgpu_igmm_result_destroy(r);
    free_sets(&sets);
}

/* Random starts, iterations 1 .. 40: the kept start's log-likelihood after
 * t iterations never below its value after t - 1 (one start, so the same
 * run), within 1e-12 relative for rounding. */
static void test_never_decreases(void **state)
{
    (void)state;
    data_sets sets;
    read_sets(&sets);
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    params.start_count = 1;
    params.tolerance = 0.0;
    params.seed = 17;
    const double *const *values = (const double *const *)sets.values;
    double previous[SET_COUNT] = { -INFINITY, -INFINITY, -INFINITY };
    for (size_t t = 1; t <= 40; ++t) {
        params.max_iterations = t;
        statgpu_igmm_result *r = NULL;
        assert_int_equal(statgpu_igmm(g_context, values, sets.lengths, SET_COUNT, 2, &params, &r), STATGPU_OK);
        for (int s = 0; s < SET_COUNT; ++s) {
            if (r->reseed_count[s] == 0 && r->log_likelihood[s] < previous[s] - 1e-12 * fabs(previous[s]))
                fail_msg("%s: log-likelihood %.17g after %zu iterations, %.17g before", k_cases[s],
                         r->log_likelihood[s], t, previous[s]);
            previous[s] = r->log_likelihood[s];
        }
        statgpu_igmm_result_destroy(r);
    }
    free_sets(&sets);
}

/* The simulated two-component mixture (alpha 0.4, 0.6; mu 0.5, 2; lambda 2,
 * 8; 2,000 observations) from 10 random starts to convergence: the smaller
 * mean's component within 0.1 of 0.4 in weight and 20% of its mean; the
 * means within 20%; labels and responsibilities consistent. */
static void test_recovers_simulated(void **state)
{
    (void)state;
    data_sets sets;
    read_sets(&sets);
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    params.tolerance = 1e-9;
    params.max_iterations = 5000;
    params.keep_responsibilities = 1;
    statgpu_igmm_result *r = NULL;
    const double *x = sets.values[0];
    assert_int_equal(statgpu_igmm(g_context, &x, &sets.lengths[0], 1, 2, &params, &r), STATGPU_OK);
    size_t low = r->mu[0] < r->mu[1] ? 0 : 1, high = 1 - low;
    if (!(fabs(r->alpha[low] - 0.4) < 0.1 && fabs(r->mu[low] - 0.5) < 0.1 && fabs(r->mu[high] - 2.0) < 0.4))
        fail_msg("recovered alpha %.4g %.4g, mu %.4g %.4g, lambda %.4g %.4g", r->alpha[low], r->alpha[high],
                 r->mu[low], r->mu[high], r->lambda[low], r->lambda[high]);
    for (size_t i = 0; i < sets.lengths[0]; ++i) {
        const double *row = r->responsibilities + i * 2;
        assert_true(fabs(row[0] + row[1] - 1.0) < 1e-12);
        assert_int_equal(r->labels[i], row[1] > row[0] ? 1 : 0);
    }
    statgpu_igmm_result_destroy(r);
    free_sets(&sets);
}

static void assert_all_finite(const statgpu_igmm_result *r)
{
    for (size_t e = 0; e < r->set_count * r->k; ++e)
        assert_true(isfinite(r->alpha[e]) && isfinite(r->mu[e]) && isfinite(r->lambda[e]));
    for (size_t s = 0; s < r->set_count; ++s)
        assert_true(isfinite(r->log_likelihood[s]));
}

/* A status per data set: the good one fitted, the others unfitted with
 * zeros and labels -1. */
static void test_bad_data_sets(void **state)
{
    (void)state;
    data_sets sets;
    read_sets(&sets);
    double zero[20], negative[20], constant[20], few[5];
    for (int i = 0; i < 20; ++i) {
        zero[i] = 1.0 + i;
        negative[i] = 1.0 + i;
        constant[i] = 2.5;
    }
    zero[7] = 0.0;
    negative[3] = -1.0;
    for (int i = 0; i < 5; ++i)
        few[i] = 1.0 + i;
    const double *values[6] = { zero, sets.values[2], negative, constant, few, NULL };
    size_t lengths[6] = { 20, sets.lengths[2], 20, 20, 5, 0 };
    statgpu_igmm_result *r = NULL;
    assert_int_equal(statgpu_igmm(g_context, values, lengths, 6, 2, NULL, &r), STATGPU_OK);
    const int32_t expected[6] = { STATGPU_IGMM_NOT_POSITIVE, STATGPU_IGMM_FITTED, STATGPU_IGMM_NOT_POSITIVE,
                                  STATGPU_IGMM_CONSTANT, STATGPU_IGMM_TOO_FEW, STATGPU_IGMM_TOO_FEW };
    for (int s = 0; s < 6; ++s) {
        assert_int_equal(r->status[s], expected[s]);
        if (s != 1) {
            assert_true(r->alpha[s * 2] == 0.0 && r->mu[s * 2] == 0.0 && r->log_likelihood[s] == 0.0);
            for (size_t i = 0; i < lengths[s]; ++i)
                assert_int_equal(r->labels[r->offsets[s] + i], -1);
        }
    }
    assert_true(r->log_likelihood[1] < 0.0 && r->alpha[2] + r->alpha[3] > 0.99);
    assert_all_finite(r);
    statgpu_igmm_result_destroy(r);
    free_sets(&sets);
}

/* Values of any size: the simulated two-component data set times 2^600,
 * 2^-600, 1e200 and 1e-200 (all beyond the range the E-step's squares
 * allow, about 1e-154 to 1e154) in one call beside the data set itself,
 * random starts (each data set its own): each gives the unscaled fit in
 * its own units: the log-likelihood less n log factor within 1e-9 relative,
 * mu and lambda times the factor within 1e-6 relative and the weights within
 * 1e-6 (other starts reach the flat optimum by another path, as in
 * test_backends_agree), the labels alike; where, before,
 * 1e200 gave a log-likelihood n/2 too high and two equal components. A data
 * set whose values span more than 2^1000 cannot be scaled into range: its
 * status says so and the others are fitted. The statuses in words. */
static void test_values_of_any_size(void **state)
{
    (void)state;
    data_sets sets;
    read_sets(&sets);
    const size_t n = sets.lengths[0];
    const double factors[] = { 1.0, 0x1p600, 0x1p-600, 1e200, 1e-200 };
    enum { SCALES = sizeof factors / sizeof factors[0] };
    double *scaled = malloc(n * SCALES * sizeof *scaled);
    double wide[40];
    assert_non_null(scaled);
    const double *values[SCALES + 1];
    size_t lengths[SCALES + 1];
    for (size_t c = 0; c < SCALES; ++c) {
        for (size_t i = 0; i < n; ++i)
            scaled[c * n + i] = sets.values[0][i] * factors[c];
        values[c] = scaled + c * n;
        lengths[c] = n;
    }
    for (int i = 0; i < 40; ++i)
        wide[i] = i % 2 ? 1e-160 * (1 + i) : 1e150 * (1 + i);  /* a span of about 1e311 */
    values[SCALES] = wide;
    lengths[SCALES] = 40;
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    params.tolerance = 1e-10;
    params.max_iterations = 2000;
    statgpu_igmm_result *r = NULL;
    assert_int_equal(statgpu_igmm(g_context, values, lengths, SCALES + 1, 2, &params, &r), STATGPU_OK);
    assert_int_equal(r->status[0], STATGPU_IGMM_FITTED);
    for (size_t c = 1; c < SCALES; ++c) {
        assert_int_equal(r->status[c], STATGPU_IGMM_FITTED);
        const double shift = (double)n * log(factors[c]);
        if (!close_to(r->log_likelihood[c], r->log_likelihood[0] - shift, 1e-9, 0.0))
            fail_msg("factor %g: log-likelihood %.17g, unscaled %.17g less %.17g", factors[c], r->log_likelihood[c],
                     r->log_likelihood[0], shift);
        /* Each data set draws its own random starts, so the components may
         * come in the other order: matched by mu. */
        const size_t swap = (r->mu[c * 2] < r->mu[c * 2 + 1]) != (r->mu[0] < r->mu[1]);
        for (size_t j = 0; j < 2; ++j) {
            const size_t at = c * 2 + (j ^ swap);
            if (!close_to(r->mu[at], r->mu[j] * factors[c], 1e-6, 0.0)
                || !close_to(r->lambda[at], r->lambda[j] * factors[c], 1e-6, 0.0)
                || !close_to(r->alpha[at], r->alpha[j], 0.0, 1e-6))
                fail_msg("factor %g, component %zu: alpha %.17g mu %.17g lambda %.17g against %.17g %.17g %.17g",
                         factors[c], j, r->alpha[at], r->mu[at], r->lambda[at], r->alpha[j], r->mu[j] * factors[c],
                         r->lambda[j] * factors[c]);
        }
        for (size_t i = 0; i < n; ++i)
            assert_int_equal(r->labels[r->offsets[c] + i], r->labels[i] ^ (int32_t)swap);
    }
    assert_int_equal(r->status[SCALES], STATGPU_IGMM_OUT_OF_RANGE);
    assert_true(r->mu[SCALES * 2] == 0.0 && r->log_likelihood[SCALES] == 0.0);
    for (size_t i = 0; i < 40; ++i)
        assert_int_equal(r->labels[r->offsets[SCALES] + i], -1);
    assert_all_finite(r);
    statgpu_igmm_result_destroy(r);

    /* Subnormal values: the fit is made scaled, but mu and lambda would be
     * rounded back among the subnormals, away from the log-likelihood and
     * labels they belong to: not fitted, said so. */
    double tiny[40];
    for (int i = 0; i < 40; ++i)
        tiny[i] = 1e-310 * (1.0 + 0.37 * i);
    const double *tiny_set = tiny;
    size_t tiny_length = 40;
    assert_int_equal(statgpu_igmm(g_context, &tiny_set, &tiny_length, 1, 1, &params, &r), STATGPU_OK);
    assert_int_equal(r->status[0], STATGPU_IGMM_OUT_OF_RANGE);
    assert_true(r->mu[0] == 0.0 && r->lambda[0] == 0.0 && r->labels[0] == -1);
    /* A result with an array missing is refused by the tables, not read. */
    statgpu_igmm_result damaged = *r;
    damaged.alpha = NULL;
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_igmm_tables(g_context, &damaged, NULL, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(set);
    /* A label beyond the k components, or a status not of the enum: refused,
     * not shown as component 100 or "unknown status". */
    damaged = *r;
    int32_t bad_label = 99, bad_status = 42;
    damaged.labels = &bad_label;
    damaged.lengths = &(size_t){ 1 };
    assert_int_equal(statgpu_igmm_tables(g_context, &damaged, NULL, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "label 99"));
    damaged = *r;
    damaged.status = &bad_status;
    assert_int_equal(statgpu_igmm_tables(g_context, &damaged, NULL, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(set);
    statgpu_igmm_result_destroy(r);

    /* One empty data set: its labels table has no rows, and its row labels
     * (none) are there wherever their header is. */
    const double *no_values = NULL;
    size_t no_length = 0;
    assert_int_equal(statgpu_igmm(g_context, &no_values, &no_length, 1, 1, NULL, &r), STATGPU_OK);
    assert_int_equal(statgpu_igmm_tables(g_context, r, NULL, &set), STATGPU_OK);
    const statgpu_table *empty_labels = statgpu_table_set_find(set, "labels");
    assert_non_null(empty_labels);
    assert_int_equal(empty_labels->row_count, 0);
    assert_true((empty_labels->row_label_header == NULL) == (empty_labels->row_labels == NULL));
    statgpu_table_set_destroy(set);
    statgpu_igmm_result_destroy(r);

    assert_string_equal(statgpu_igmm_status_string(STATGPU_IGMM_FITTED), "fitted");
    assert_string_equal(statgpu_igmm_status_string(STATGPU_IGMM_NOT_POSITIVE), "a value is not positive");
    assert_string_equal(statgpu_igmm_status_string(STATGPU_IGMM_TOO_FEW), "fewer than 3 values a component");
    assert_string_equal(statgpu_igmm_status_string(STATGPU_IGMM_CONSTANT), "every value equal");
    assert_non_null(strstr(statgpu_igmm_status_string(STATGPU_IGMM_OUT_OF_RANGE), "too far from ordinary size"));
    assert_string_equal(statgpu_igmm_status_string(99), "unknown status");
    free(scaled);
    free_sets(&sets);
}

/* The inverse Gaussian maximum likelihood estimate of x[0..n-1] in long
 * double (64-bit significand on x86-64), two passes: the mean, then
 * lambda = n / sum((x - mean)^2 / x) * mean^2, which loses nothing to
 * cancellation. */
static void exact_estimate(const double *x, size_t n, long double *mean, long double *lambda)
{
    long double sum = 0.0L, spread = 0.0L;
    for (size_t i = 0; i < n; ++i)
        sum += x[i];
    *mean = sum / (long double)n;
    for (size_t i = 0; i < n; ++i) {
        const long double deviation = (long double)x[i] - *mean;
        spread += deviation * deviation / (long double)x[i];
    }
    *lambda = (long double)n * *mean * *mean / spread;
}

/* A fitted lambda within 1e-13 relative of the exact estimate. What the
 * M-step's sums centred on each component's mean (engine/src/methods/
 * igmm_estep.h) honestly give: within 2e-16 on the CPU at every cv below;
 * the uncentred sum r / x - W / mu lost eps / cv^2, 1e-10 at cv 1e-3, 1e-5
 * at 1e-5, 3e-2 at 1e-7. */
#define NEAR_CONSTANT_TOLERANCE 1e-13

/* k = 1 on values scale (1 + cv N(0, 1)), nearly constant, in one call:
 * 50 values at cv 1e-3, 1e-5 and 1e-7 at 1000, cv 1e-6 at 1e-5 and cv
 * 1e-7 at 1e200 (fitted scaled by a power of two), and 10,000 at cv 1e-7
 * (beyond the GPU's shared memory: its grid path): mu within 1e-14 and
 * lambda within NEAR_CONSTANT_TOLERANCE of the exact estimate (on the H200
 * the GPU's within 2e-16 too, the same bits as the CPU's but for an ulp of
 * the long set's lambda). */
static void test_nearly_constant(void **state)
{
    (void)state;
    enum { SETS = 6 };
    const double scales[SETS] = { 1000.0, 1000.0, 1000.0, 1e-5, 1e200, 1000.0 };
    const double spreads[SETS] = { 1e-3, 1e-5, 1e-7, 1e-6, 1e-7, 1e-7 };
    const size_t lengths[SETS] = { 50, 50, 50, 50, 50, 10000 };
    double *x[SETS];
    test_rng rng = { 2027 };
    for (size_t s = 0; s < SETS; ++s) {
        x[s] = malloc(lengths[s] * sizeof(double));
        assert_non_null(x[s]);
        for (size_t i = 0; i < lengths[s]; ++i)
            x[s][i] = scales[s] * (1.0 + spreads[s] * test_rng_normal(&rng));
    }
    statgpu_igmm_result *r = NULL;
    assert_int_equal(statgpu_igmm(g_context, (const double *const *)x, lengths, SETS, 1, NULL, &r), STATGPU_OK);
    if (g_cuda)
        TEST_ASSERT_RAN_ON_CUDA(g_context, "inverse Gaussian mixtures");
    int failures = 0;
    for (size_t s = 0; s < SETS; ++s) {
        long double mean, lambda;
        exact_estimate(x[s], lengths[s], &mean, &lambda);
        const double mu_error = (double)fabsl(r->mu[s] / mean - 1.0L);
        const double lambda_error = (double)fabsl(r->lambda[s] / lambda - 1.0L);
        if (r->status[s] != STATGPU_IGMM_FITTED || !(mu_error <= 1e-14) || !(lambda_error <= NEAR_CONSTANT_TOLERANCE)) {
            print_error("%zu values at %g, cv %g: status %d, mu %.17g (%.2g off), lambda %.17g (%.2g off the exact "
                        "%.17Lg)\n", lengths[s], scales[s], spreads[s], (int)r->status[s], r->mu[s], mu_error,
                        r->lambda[s], lambda_error, lambda);
            ++failures;
        }
    }
    statgpu_igmm_result_destroy(r);
    for (size_t s = 0; s < SETS; ++s)
        free(x[s]);
    if (failures > 0)
        fail_msg("%d of %d nearly constant data sets off their estimate", failures, SETS);
}

/* Five values 1 and one 1.000000001: fitted, lambda (about 7.2e18) within
 * NEAR_CONSTANT_TOLERANCE of the exact estimate. Before, the estimate's
 * denominator cancelled to nothing and the data set was "not fitted: values
 * too far from ordinary size (more than 1e300 apart, or subnormal)", which
 * it is not. Values near 1e300 that agree to 1e-12 have a lambda near 1e324
 * that no double holds: not fitted, and the status says that. */
static void test_five_ones_and_one(void **state)
{
    (void)state;
    double x[6] = { 1.0, 1.0, 1.0, 1.0, 1.0, 1.000000001 }, huge[50];
    test_rng rng = { 11 };
    for (size_t i = 0; i < 50; ++i)
        huge[i] = 1e300 * (1.0 + 1e-12 * test_rng_normal(&rng));
    const double *values[2] = { x, huge };
    size_t lengths[2] = { 6, 50 };
    statgpu_igmm_result *r = NULL;
    assert_int_equal(statgpu_igmm(g_context, values, lengths, 2, 1, NULL, &r), STATGPU_OK);
    long double mean, lambda;
    exact_estimate(x, 6, &mean, &lambda);
    if (r->status[0] != STATGPU_IGMM_FITTED || !close_to(r->lambda[0], (double)lambda, NEAR_CONSTANT_TOLERANCE, 0.0)
        || !close_to(r->mu[0], (double)mean, 1e-15, 0.0) || !isfinite(r->log_likelihood[0]))
        fail_msg("status %d (%s), mu %.17g, lambda %.17g, the exact %.17Lg and %.17Lg", (int)r->status[0],
                 statgpu_igmm_status_string(r->status[0]), r->mu[0], r->lambda[0], mean, lambda);
    assert_int_equal(r->status[1], STATGPU_IGMM_OUT_OF_RANGE);
    assert_non_null(strstr(statgpu_igmm_status_string(r->status[1]), "lambda is beyond 1e308"));
    statgpu_igmm_result_destroy(r);
}

/* Two tight components (cv 1e-6) far apart, 60 values near 1 and 40 near
 * 100, from the default random starts: the responsibilities are 0 and 1 to
 * double precision, so each component's lambda is the estimate of its own
 * values, within NEAR_CONSTANT_TOLERANCE, and mu within 1e-14. */
static void test_two_tight_components(void **state)
{
    (void)state;
    enum { LOW = 60, HIGH = 40 };
    double x[LOW + HIGH];
    test_rng rng = { 5 };
    for (size_t i = 0; i < LOW + HIGH; ++i)
        x[i] = (i < LOW ? 1.0 : 100.0) * (1.0 + 1e-6 * test_rng_normal(&rng));
    const double *values = x;
    size_t length = LOW + HIGH;
    statgpu_igmm_result *r = NULL;
    assert_int_equal(statgpu_igmm(g_context, &values, &length, 1, 2, NULL, &r), STATGPU_OK);
    assert_int_equal(r->status[0], STATGPU_IGMM_FITTED);
    const size_t low = r->mu[0] < r->mu[1] ? 0 : 1;
    for (size_t c = 0; c < 2; ++c) {
        const size_t j = c == 0 ? low : 1 - low;
        long double mean, lambda;
        exact_estimate(c == 0 ? x : x + LOW, c == 0 ? LOW : HIGH, &mean, &lambda);
        if (!close_to(r->lambda[j], (double)lambda, NEAR_CONSTANT_TOLERANCE, 0.0)
            || !close_to(r->mu[j], (double)mean, 1e-14, 0.0)
            || !close_to(r->alpha[j], (c == 0 ? LOW : HIGH) / (double)(LOW + HIGH), 1e-15, 0.0))
            fail_msg("component near %s: alpha %.17g, mu %.17g, lambda %.17g (%.2g off), the exact mu %.17Lg "
                     "and lambda %.17Lg", c == 0 ? "1" : "100", r->alpha[j], r->mu[j], r->lambda[j],
                     (double)fabsl(r->lambda[j] / lambda - 1.0L), mean, lambda);
    }
    for (size_t i = 0; i < LOW + HIGH; ++i)
        assert_int_equal(r->labels[i], i < LOW ? (int32_t)low : (int32_t)(1 - low));
    statgpu_igmm_result_destroy(r);
}

static int g_igmm_progress_calls;
static double g_igmm_last_fraction;
/* Asks to stop at its second call (the first comes within 0.1 s of work). */
static int stop_second_call(void *user, double fraction)
{
    (void)user;
    g_igmm_last_fraction = fraction;
    return ++g_igmm_progress_calls >= 2;
}

/* A long fit on the CPU (8 data sets of 20,000 values, k = 8, 40 starts,
 * 100,000 iterations with tolerance 0: hours of work) hears its progress
 * while it runs and stops at the callback's word: before, the callback was
 * asked only after every fit had ended, so this test would outlast ctest's
 * time-out. */
static void test_stops_while_fitting(void **state)
{
    (void)state;
    enum { SETS = 8, LENGTH = 20000 };
    double *values = malloc(SETS * LENGTH * sizeof *values);
    assert_non_null(values);
    const double *sets[SETS];
    size_t lengths[SETS];
    uint64_t seed = 12345;
    for (size_t s = 0; s < SETS; ++s) {
        for (size_t i = 0; i < LENGTH; ++i) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            values[s * LENGTH + i] = 0.1 + (double)(seed >> 11) * 0x1p-53 * (1.0 + (double)(i % 3));
        }
        sets[s] = values + s * LENGTH;
        lengths[s] = LENGTH;
    }
    statgpu_context_params cp;
    statgpu_context_params_init(&cp);
    cp.backend = STATGPU_BACKEND_CPU;
    cp.progress = stop_second_call;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&cp, &context), STATGPU_OK);
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    params.start_count = 40;
    params.max_iterations = 100000;
    params.tolerance = 0.0;
    g_igmm_progress_calls = 0;
    statgpu_igmm_result *r = NULL;
    assert_int_equal(statgpu_igmm(context, sets, lengths, SETS, 8, &params, &r), STATGPU_ERROR_CANCELLED);
    assert_null(r);
    assert_true(g_igmm_progress_calls >= 2);
    assert_true(g_igmm_last_fraction >= 0.0 && g_igmm_last_fraction <= 1.0);
    statgpu_context_destroy(context);
    free(values);
}

/* Duplicates and a lone far value, three components: a component collapses
 * onto a single value and is re-seeded; nothing NaN. */
static void test_collapsing_component(void **state)
{
    (void)state;
    double x[40];
    for (int i = 0; i < 40; ++i)
        x[i] = i < 18 ? 1.0 : i < 36 ? 2.0 + 0.001 * i : 50.0 + i;
    const double *values[1] = { x };
    size_t length = 40;
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    params.start_count = 20;
    params.max_iterations = 500;
    statgpu_igmm_result *r = NULL;
    assert_int_equal(statgpu_igmm(g_context, values, &length, 1, 3, &params, &r), STATGPU_OK);
    assert_int_equal(r->status[0], STATGPU_IGMM_FITTED);
    assert_all_finite(r);
    for (size_t j = 0; j < 3; ++j)
        assert_true(r->alpha[j] > 0.0 && r->mu[j] > 0.0 && r->lambda[j] > 0.0);
    statgpu_igmm_result_destroy(r);
}

/* 30 data sets (the three, ten times), 4 random starts: the same bits with
 * 1, 2 and 3 threads. */
static void test_threads(void **state)
{
    (void)state;
    data_sets sets;
    read_sets(&sets);
    const double *values[30];
    size_t lengths[30];
    for (int s = 0; s < 30; ++s) {
        values[s] = sets.values[s % 3];
        lengths[s] = sets.lengths[s % 3] - (size_t)s;
    }
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    params.start_count = 4;
    params.seed = 3;
    statgpu_igmm_result *first = NULL;
    for (int threads = 1; threads <= 3; ++threads) {
        statgpu_context *context = NULL;
        TEST_CONTEXT_WITH_THREADS(test_backend_from_environment(), threads, context);
        statgpu_igmm_result *r = NULL;
        assert_int_equal(statgpu_igmm(context, values, lengths, 30, 2, &params, &r), STATGPU_OK);
        if (first == NULL) {
            first = r;
        } else {
            assert_memory_equal(first->mu, r->mu, 60 * sizeof(double));
            assert_memory_equal(first->lambda, r->lambda, 60 * sizeof(double));
            assert_memory_equal(first->log_likelihood, r->log_likelihood, 30 * sizeof(double));
            assert_memory_equal(first->best_start, r->best_start, 30 * sizeof(size_t));
            statgpu_igmm_result_destroy(r);
        }
        statgpu_context_destroy(context);
    }
    statgpu_igmm_result_destroy(first);
    free_sets(&sets);
}

/* The E-steps' exp (the CPU's, nothing fused, and the GPU's, fused, here with
 * C's fma) against long double's expl (64-bit significand) on
 * 10^6 values spread over [-746, 0] (a third in (-2, 0], a third in the
 * subnormal results' [-746, -708]): within 1 ulp of the result (2^-1074
 * for a subnormal one). */
static void check_exp_accuracy(int fused)
{
    uint64_t bits = 0x9E3779B97F4A7C15ull;
    double worst = 0.0, worst_at = 0.0;
    for (int i = 0; i < 1000000; ++i) {
        bits ^= bits << 13;
        bits ^= bits >> 7;
        bits ^= bits << 17;
        const double u = (double)(bits >> 11) * 0x1p-53;
        const double y = i % 3 == 0 ? -746.0 * u : i % 3 == 1 ? -2.0 * u : -708.0 - 38.0 * u;
        const long double exact = expl((long double)y);
        const double rounded = (double)exact;
        const double ulp = rounded < DBL_MIN ? 0x1p-1074 : nextafter(rounded, INFINITY) - rounded;
        const double error = (double)(fabsl((long double)sg_exp_nonpositive_with(y, fused) - exact) / ulp);
        if (error > worst) {
            worst = error;
            worst_at = y;
        }
    }
    if (worst > 1.0)
        fail_msg("exp(%a) (%s) is %.3f ulp from the exact value", worst_at, fused ? "fused" : "not fused", worst);
}

static void test_exp(void **state)
{
    (void)state;
    for (int fused = 0; fused <= 1; ++fused)
        check_exp_accuracy(fused);
    assert_true(sg_exp_nonpositive(0.0) == 1.0);
    assert_true(sg_exp_nonpositive(-0.0) == 1.0);
    assert_true(sg_exp_nonpositive(-746.0) == 0.0);
    assert_true(sg_exp_nonpositive(-745.0) == exp(-745.0));  /* the smallest subnormal */
    assert_true(sg_exp_nonpositive(-1e-300) == 1.0);
    assert_true(isnan(sg_exp_nonpositive(NAN)));
    assert_true(sg_exp_nonpositive_with(0.0, 1) == 1.0);
    assert_true(sg_exp_nonpositive_with(-746.0, 1) == 0.0);
    assert_true(sg_exp_nonpositive_with(-745.0, 1) == exp(-745.0));
    assert_true(isnan(sg_exp_nonpositive_with(NAN, 1)));
}

/* The CPU E-step's kernels (igmm_estep.c): the AVX2 one gives the generic
 * one's bits (SSE2 code on x86-64, what a CPU without AVX2 runs) in the
 * responsibilities and every sum, with and without responsibilities. k 1,
 * 2 (its own path), 3, 5, 8 and 64; n 1, 3, 31, 32, 33, 517 and 1027
 * (part-filled last blocks; at 1027 the products' logs taken twice from
 * k 2 on); narrow components, so responsibilities 0 (terms below the
 * clamp) and subnormal. Skipped where the CPU has no AVX2. */
static void test_e_step_kernels_agree(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    sg_igmm_e_kernel *generic = sg_igmm_e_kernel_named("generic");
    sg_igmm_e_kernel *avx2 = sg_igmm_e_kernel_named("avx2");
    assert_non_null(generic);
    if (avx2 == NULL) {
        print_message("skipped: this CPU has no AVX2, so only the generic E-step kernel runs here\n");
        skip();
    }
    enum { most_n = 1027, most_k = SG_IGMM_MAX_K };
    static const size_t lengths[] = { 1, 3, 31, 32, 33, 517, 1027 };
    static const size_t component_counts[] = { 1, 2, 3, 5, 8, 64 };
    static double x[most_n], log_term[most_n], inverse[most_n], resp[2][most_n * most_k];
    static sg_igmm_sums sums[2], sums_alone[2];
    test_rng rng = { 41 };
    for (size_t i = 0; i < most_n; ++i)
        x[i] = exp(1.2 * test_rng_normal(&rng));
    sg_igmm_terms terms = { log_term, inverse };
    sg_igmm_fill_terms(x, most_n, &terms);
    for (size_t dk = 0; dk < sizeof component_counts / sizeof component_counts[0]; ++dk) {
        const size_t k = component_counts[dk];
        /* alpha 1/k, mu from 0.3 up, lambda 2000 (narrow) for components 1, 4, 7, ... */
        sg_igmm_constants constants;
        for (size_t j = 0; j < k; ++j) {
            const double mu = 0.3 * pow(1.3, (double)j), lambda = j % 3 == 1 ? 2000.0 : 1.0 + (double)j;
            constants.offset[j] = log(1.0 / (double)k) + 0.5 * (log(lambda) - 1.8378770664093454835606594728112);
            constants.half_shape_over_mu[j] = lambda / (2.0 * mu);
            constants.mu[j] = mu;
            constants.inverse_mu[j] = 1.0 / mu;
        }
        for (size_t dn = 0; dn < sizeof lengths / sizeof lengths[0]; ++dn) {
            const size_t n = lengths[dn];
            char what[64];
            snprintf(what, sizeof what, "n = %zu, k = %zu", n, k);
            sg_igmm_e_kernel *const kernels[2] = { generic, avx2 };
            for (int which = 0; which < 2; ++which) {
                /* as the E-step starts them; beyond k untouched */
                memset(&sums[which], 0, sizeof sums[which]);
                for (size_t l = 0; l < SG_IGMM_LANES; ++l)
                    sums[which].product[l] = 1.0;
                sums_alone[which] = sums[which];
                for (size_t e = 0; e < n * k; ++e)
                    resp[which][e] = -1.0;
                kernels[which](x, &terms, n, k, &constants, resp[which], &sums[which]);
                kernels[which](x, &terms, n, k, &constants, NULL, &sums_alone[which]);
            }
            assert_array_bits_equal(what, "responsibilities", resp[1], resp[0], n * k);
            assert_array_bits_equal(what, "sums", (const double *)&sums[1], (const double *)&sums[0],
                            sizeof sums[0] / sizeof(double));
            assert_array_bits_equal(what, "sums without responsibilities", (const double *)&sums_alone[1],
                            (const double *)&sums_alone[0], sizeof sums[0] / sizeof(double));
            if (!isfinite(sums[0].logs))
                fail_msg("%s: the logs' sum %g", what, sums[0].logs);
        }
    }
}

/* The backend under test against the CPU: 300 data sets of 50 to 200,000
 * values (two beyond the GPU's shared memory: the grid path, 2 and 25
 * blocks a start), 3 starts, 40 iterations each (tolerance 0, so both run
 * exactly as many); then the two long ones to convergence. */
static void test_backends_agree(void **state)
{
    (void)state;
    enum { SETS = 300, STARTS = 3 };
    double *values[SETS];
    const double *pointers[SETS];
    size_t lengths[SETS];
    test_rng rng = { 77 };
    for (size_t s = 0; s < SETS; ++s) {
        lengths[s] = s == 0 ? 9000 : s == 1 ? 200000 : 50 + (size_t)(test_rng_uniform(&rng) * 3000.0);
        values[s] = malloc(lengths[s] * sizeof(double));
        for (size_t i = 0; i < lengths[s]; ++i) {
            /* A two-mode positive sample: log-normal around 0.5 and 2. */
            double centre = test_rng_uniform(&rng) < 0.4 ? log(0.5) : log(2.0);
            values[s][i] = exp(centre + 0.3 * test_rng_normal(&rng));
        }
        pointers[s] = values[s];
    }
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    params.start_count = STARTS;
    params.max_iterations = 40;
    params.tolerance = 0.0;
    params.seed = 5;
    statgpu_context *cpu = NULL;
    TEST_CONTEXT_WITH_THREADS(STATGPU_BACKEND_CPU, 0, cpu);
    statgpu_igmm_result *expected = NULL, *got = NULL;
    assert_int_equal(statgpu_igmm(cpu, pointers, lengths, SETS, 2, &params, &expected), STATGPU_OK);
    assert_int_equal(statgpu_igmm(g_context, pointers, lengths, SETS, 2, &params, &got), STATGPU_OK);
    if (g_cuda)
        TEST_ASSERT_RAN_ON_CUDA(g_context, "inverse Gaussian mixtures");
    for (size_t s = 0; s < SETS; ++s) {
        assert_int_equal(got->status[s], STATGPU_IGMM_FITTED);
        assert_true(close_to(got->log_likelihood[s], expected->log_likelihood[s], 1e-9, 0.0));
        assert_int_equal(got->iterations[s], expected->iterations[s]);
        /* Starts that end at the same optimum with the components swapped
         * tie to rounding, so either may be kept: compare by mu's order. */
        size_t swap_got = got->mu[s * 2] > got->mu[s * 2 + 1], swap_expected = expected->mu[s * 2] > expected->mu[s * 2 + 1];
        for (size_t j = 0; j < 2; ++j) {
            size_t at = s * 2 + (j ^ swap_got), at_expected = s * 2 + (j ^ swap_expected);
            if (!close_to(got->mu[at], expected->mu[at_expected], 1e-6, 0.0)
                || !close_to(got->lambda[at], expected->lambda[at_expected], 1e-6, 0.0)
                || !close_to(got->alpha[at], expected->alpha[at_expected], 1e-6, 0.0))
                fail_msg("data set %zu component %zu: (%.17g, %.17g, %.17g) against the CPU's (%.17g, %.17g, "
                         "%.17g)", s, j, got->alpha[at], got->mu[at], got->lambda[at], expected->alpha[at_expected],
                         expected->mu[at_expected], expected->lambda[at_expected]);
        }
    }
    statgpu_igmm_result_destroy(expected);
    statgpu_igmm_result_destroy(got);

    /* The two long data sets alone, to convergence (the default tolerance):
     * both backends stop, within an iteration of each other (the last
     * change of the log-likelihood may straddle the tolerance by rounding). */
    params.tolerance = 1e-6;
    params.max_iterations = 500;
    assert_int_equal(statgpu_igmm(cpu, pointers, lengths, 2, 2, &params, &expected), STATGPU_OK);
    assert_int_equal(statgpu_igmm(g_context, pointers, lengths, 2, 2, &params, &got), STATGPU_OK);
    for (size_t s = 0; s < 2; ++s) {
        assert_int_equal(got->converged[s], 1);
        assert_int_equal(expected->converged[s], 1);
        assert_true(got->iterations[s] + 1 >= expected->iterations[s] && got->iterations[s] <= expected->iterations[s] + 1);
        assert_true(close_to(got->log_likelihood[s], expected->log_likelihood[s], 1e-9, 0.0));
    }
    statgpu_igmm_result_destroy(expected);
    statgpu_igmm_result_destroy(got);
    statgpu_context_destroy(cpu);
    for (size_t s = 0; s < SETS; ++s)
        free(values[s]);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    double x[10] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
    const double *values[1] = { x };
    size_t length = 10;
    statgpu_igmm_result *r = NULL;
    assert_int_equal(statgpu_igmm(g_context, NULL, &length, 1, 2, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(r);
    assert_int_equal(statgpu_igmm(g_context, values, &length, 0, 2, NULL, &r), STATGPU_ERROR_EMPTY_INPUT);
    assert_int_equal(statgpu_igmm(g_context, values, &length, 1, 0, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_igmm(g_context, values, &length, 1, 65, NULL, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_igmm(g_context, values, &length, 1, 2, NULL, NULL), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    params.start_count = 0;
    assert_int_equal(statgpu_igmm(g_context, values, &length, 1, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_igmm_params_init(&params);
    params.tolerance = -1.0;
    assert_int_equal(statgpu_igmm(g_context, values, &length, 1, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_igmm_params_init(&params);
    params.max_iterations = 0;
    assert_int_equal(statgpu_igmm(g_context, values, &length, 1, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    statgpu_igmm_params_init(&params);
    const double alpha[2] = { 0.5, 0.6 }, mu[2] = { 1, 2 }, lambda[2] = { 1, -1 };
    params.initial_alpha = alpha;
    assert_int_equal(statgpu_igmm(g_context, values, &length, 1, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    params.initial_mu = mu;
    params.initial_lambda = lambda;
    assert_int_equal(statgpu_igmm(g_context, values, &length, 1, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "not positive"));
    params.struct_bytes = 3;
    assert_int_equal(statgpu_igmm(g_context, values, &length, 1, 2, &params, &r), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(r);
}

/* The tables: a good data set and a constant one, named. */
static void test_tables(void **state)
{
    (void)state;
    data_sets sets;
    read_sets(&sets);
    double constant[10] = { 2, 2, 2, 2, 2, 2, 2, 2, 2, 2 };
    const double *values[2] = { sets.values[2], constant };
    size_t lengths[2] = { sets.lengths[2], 10 };
    statgpu_igmm_result *r = NULL;
    assert_int_equal(statgpu_igmm(g_context, values, lengths, 2, 2, NULL, &r), STATGPU_OK);
    const char *const names[2] = { "subject A", "subject B" };
    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.variable_names = names;
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_igmm_tables(g_context, r, &params, &set), STATGPU_OK);
    assert_int_equal(statgpu_table_set_count(set), 3);
    const statgpu_table *parameters = statgpu_table_set_find(set, "parameters");
    assert_int_equal(parameters->row_count, 4);
    assert_string_equal(parameters->texts[0], "subject A");
    assert_string_equal(parameters->texts[3], "subject B");
    for (size_t j = 0; j < 2; ++j) {
        assert_true(test_same_bits(parameters->values[j + 4 * 3], r->mu[j]));
        assert_int_equal(parameters->cell_kinds[2 + j + 4 * 3], STATGPU_CELL_EMPTY);
    }
    const statgpu_table *summary = statgpu_table_set_find(set, "summary");
    assert_int_equal(summary->row_count, 2);
    assert_true(test_same_bits(summary->values[0 + 2 * 2], r->log_likelihood[0]));
    assert_string_equal(summary->texts[0 + 2 * 7], "fitted");
    assert_string_equal(summary->texts[1 + 2 * 7], "every value equal");
    assert_true(summary->values[1 + 2 * 1] == 10.0);
    const statgpu_table *labels = statgpu_table_set_find(set, "labels");
    assert_int_equal(labels->row_count, sets.lengths[2]);
    assert_int_equal(labels->column_count, 2);
    assert_string_equal(labels->column_headers[1], "subject B");
    for (size_t i = 0; i < labels->row_count; ++i) {
        assert_true(labels->values[i] == (double)r->labels[i] + 1.0);
        assert_int_equal(labels->cell_kinds[i + labels->row_count], STATGPU_CELL_EMPTY);
    }
    statgpu_table_set_destroy(set);
    statgpu_igmm_result_destroy(r);
    free_sets(&sets);
}

TEST_BACKEND_CONTEXT_FIXTURES(g_context, g_cuda, g_skip_reason)

int main(int argc, char **argv)
{
    if (argc > 1)
        g_reference_dir = argv[1];
    if (test_cuda_missing(g_skip_reason, sizeof g_skip_reason))
        return test_exit_code(0, g_skip_reason);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_r_reference),
        cmocka_unit_test(test_one_component),
        cmocka_unit_test(test_never_decreases),
        cmocka_unit_test(test_recovers_simulated),
        cmocka_unit_test(test_bad_data_sets),
        cmocka_unit_test(test_values_of_any_size),
        cmocka_unit_test(test_nearly_constant),
        cmocka_unit_test(test_five_ones_and_one),
        cmocka_unit_test(test_two_tight_components),
        cmocka_unit_test(test_stops_while_fitting),
        cmocka_unit_test(test_collapsing_component),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_backends_agree),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_tables),
        cmocka_unit_test(test_exp),
        cmocka_unit_test(test_e_step_kernels_agree),
    };
    return test_exit_code(cmocka_run_group_tests(tests, setup, teardown), g_skip_reason);
}
