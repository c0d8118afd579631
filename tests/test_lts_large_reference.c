/*
 * test_lts_large_reference.c: statgpu's least trimmed squares at 8000-20000
 * rows (the CPU's working-subsample search) against R's robustbase::ltsReg,
 * from the committed output of tests/reference/lts_large_reference.R (R is
 * not needed here). Each data set is generated here by the same formula as
 * in the R script (a Park-Miller generator, Box-Muller normals), so only
 * ltsReg's raw coefficients are committed. For every case, with alpha 0.75
 * and every other setting at its default, statgpu's raw objective (the sum
 * of the h smallest squared residuals of its raw fit) must be at most
 * ltsReg's, computed here from its coefficients on the same data, times
 * (1 + 1e-12).
 *
 *     test_lts_large_reference REFERENCE_DIR
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "statgpu.h"
#include "test_support.h"
#include "test_reference_csv.h"

#define OBJECTIVE_TOLERANCE 1e-12
#define ALPHA               0.75
#define MAX_COEFFICIENTS    32

static const char      *g_reference_dir = ".";
static statgpu_context *g_context;
static char             g_skip_reason[512] = "";

/* The R script's generator: exact in doubles (16807 x state < 2^46). */
typedef struct park_miller {
    double state;
} park_miller;

static double pm_uniform(park_miller *g)
{
    g->state = fmod(16807.0 * g->state, 2147483647.0);
    return g->state / 2147483647.0;
}

static double pm_normal(park_miller *g)
{
    double u1 = pm_uniform(g), u2 = pm_uniform(g);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * 3.14159265358979323846 * u2);
}

/* lts_large_data() of the R script: x column-major (ld = n). */
static void make_data(size_t n, size_t p, int kind, double seed, double *y, double *x)
{
    park_miller g = { seed };
    for (size_t j = 0; j < p; ++j)
        for (size_t i = 0; i < n; ++i)
            x[i + n * j] = pm_normal(&g);
    for (size_t i = 0; i < n; ++i) {
        double e = pm_normal(&g);
        if (kind == 3) {
            double a = pm_normal(&g), b = pm_normal(&g);
            e /= sqrt((a * a + b * b) / 2.0);
        }
        double fit = 0.0;
        for (size_t j = 0; j < p; ++j)
            fit += x[i + n * j] * (double)(j + 1);
        y[i] = 1.0 + fit + e;
    }
    size_t m = (size_t)floor(0.2 * (double)n);
    for (size_t i = 0; i < m; ++i) {
        if (kind == 1)
            y[i] += 50.0 + pm_normal(&g);
        if (kind == 2) {
            x[i] += 10.0;
            y[i] = pm_normal(&g);
        }
    }
}

/* The sum of the h smallest squared residuals of coef (intercept first). */
static double trimmed_objective(const double *y, const double *x, size_t n, size_t p, const double *coef,
                                size_t h)
{
    double *squared = malloc(n * sizeof *squared);
    assert_non_null(squared);
    for (size_t i = 0; i < n; ++i) {
        double r = y[i] - coef[0];
        for (size_t j = 0; j < p; ++j)
            r -= coef[j + 1] * x[i + n * j];
        squared[i] = r * r;
    }
    qsort(squared, n, sizeof *squared, test_total_order_compare);
    double sum = 0.0;
    for (size_t i = 0; i < h; ++i)
        sum += squared[i];
    free(squared);
    return sum;
}

/* Whether statgpu's objective is at most ltsReg's on the case of line. */
static bool check_line(const char *line)
{
    unsigned long n, p;
    int kind;
    double seed;
    int used = 0;
    assert_int_equal(sscanf(line, "%lu,%lu,%d,%lf,%n", &n, &p, &kind, &seed, &used), 4);
    assert_true(used > 0 && p + 1 <= MAX_COEFFICIENTS);
    double reference[MAX_COEFFICIENTS];
    char coefficients[4096];
    snprintf(coefficients, sizeof coefficients, "%s", line + used);
    for (char *c = coefficients; *c; ++c)
        if (*c == ';')
            *c = ' ';
    assert_int_equal(test_parse_numbers(coefficients, reference, MAX_COEFFICIENTS), p + 1);

    double *y = malloc(n * sizeof *y), *x = malloc(n * p * sizeof *x);
    assert_non_null(y);
    assert_non_null(x);
    make_data(n, p, kind, seed, y, x);
    statgpu_lts_params params;
    statgpu_lts_params_init(&params);
    params.alpha = ALPHA;
    statgpu_lts_result *result = NULL;
    assert_int_equal(statgpu_lts(g_context, y, x, n, p, n, &params, &result), STATGPU_OK);
    double ours = trimmed_objective(y, x, n, p, result->raw_coefficients, result->h);
    double theirs = trimmed_objective(y, x, n, p, reference, result->h);
    printf("n = %lu, p = %lu, kind %d, seed %.0f: statgpu %.17g, ltsReg %.17g (%+.2e relative)\n", n, p, kind,
           seed, ours, theirs, (ours - theirs) / theirs);
    statgpu_lts_result_destroy(result);
    free(y);
    free(x);
    return ours <= theirs * (1.0 + OBJECTIVE_TOLERANCE);
}

static void test_ltsreg_large_cases(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    FILE *file = test_open_reference(g_reference_dir, "lts_large_r.csv");
    assert_non_null(file);
    char line[8192];
    assert_non_null(fgets(line, sizeof line, file));  /* the header */
    size_t count = 0, worse = 0;
    while (fgets(line, sizeof line, file) != NULL) {
        if (line[0] == '\n' || line[0] == '\0')
            continue;
        if (!check_line(line))
            ++worse;
        ++count;
    }
    fclose(file);
    assert_true(count >= 3);
    assert_int_equal(worse, 0);
}

static int setup(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = test_backend_from_environment();
    if (statgpu_context_create(&params, &g_context) != STATGPU_OK)
        return -1;
    test_note_missing_cuda(g_context, params.backend, g_skip_reason, sizeof g_skip_reason);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    statgpu_context_destroy(g_context);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_reference_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ltsreg_large_cases),
    };
    int failures = cmocka_run_group_tests(tests, setup, teardown);
    return test_exit_code(failures, g_skip_reason);
}
