/*
 * test_lts_reference.c: statgpu's least trimmed squares against R's
 * robustbase::ltsReg on the classic data sets of robust regression, from the
 * committed outputs of tests/reference/lts_reference.R (R is not needed
 * here). For every case (data set, alpha, intercept):
 *   - h and the small-sample correction factor raw.cnp2[2] agree;
 *   - statgpu's objective (the sum of the h smallest squared residuals of
 *     the raw fit) is no worse than ltsReg's: at most its value x (1 + 1e-9);
 *   - where ltsReg lists every elemental subset (exhaustive), or where both
 *     reach the same objective (within 1e-9 relative), the fits must be the
 *     same: the same best subset, raw and reweighted coefficients within
 *     1e-8 relative to the largest coefficient, raw and reweighted scales and
 *     the reweighting factors cnp2 within 1e-8 relative, the same 0/1
 *     weights (raw and final), residuals within 1e-8 times the scale.
 * The cases where statgpu finds a strictly lower objective than ltsReg's
 * seed are listed on stdout.
 *
 *     test_lts_reference REFERENCE_DIR
 */
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

#define OBJECTIVE_TOLERANCE 1e-9
#define VALUE_TOLERANCE     1e-8
#define LINE_BYTES          (1 << 16)
#define MAX_VALUES          4096

static const char      *g_reference_dir = ".";
static statgpu_context *g_context;
static char             g_skip_reason[512] = "";

typedef struct reference_case {
    char    id[128];
    char    data[64];
    double  alpha;
    int     intercept;
    size_t  n, p, h;
    int     exhaustive, stable;
    double  raw_coefficients[32], coefficients[32];
    double  raw_scale, scale, raw_cnp2[2], cnp2[2], crit, objective, best_objective;
    size_t  best[MAX_VALUES];
    int     raw_weights[MAX_VALUES], weights[MAX_VALUES];
    double  residuals[MAX_VALUES];
} reference_case;

static FILE *open_reference(const char *name)
{
    return test_open_reference(g_reference_dir, name);
}

/* lts_<name>.csv: a header, then rows of y, x1, x2, ...; returns y and x
 * (column-major, ld = n). */
static void read_data(const char *name, double **y_out, double **x_out, size_t *n_out, size_t *d_out)
{
    char file_name[256];
    snprintf(file_name, sizeof file_name, "lts_%s.csv", name);
    size_t n, columns;
    double *values = test_read_numeric_csv(g_reference_dir, file_name, &n, &columns);
    size_t d = columns - 1;
    double *y = malloc(n * sizeof *y), *x = malloc((n * d > 0 ? n * d : 1) * sizeof *x);
    for (size_t i = 0; i < n; ++i) {
        y[i] = values[i * columns];
        for (size_t v = 0; v < d; ++v)
            x[i + n * v] = values[i * columns + 1 + v];
    }
    free(values);
    *y_out = y;
    *x_out = x;
    *n_out = n;
    *d_out = d;
}

/* All cases of lts_r.csv. */
static reference_case *read_cases(size_t *count_out)
{
    FILE *file = open_reference("lts_r.csv");
    char *line = malloc(LINE_BYTES);
    double *values = malloc(MAX_VALUES * sizeof *values);
    size_t capacity = 32, count = 0;
    reference_case *cases = calloc(capacity, sizeof *cases);
    assert_non_null(fgets(line, LINE_BYTES, file));  /* header */
    while (fgets(line, LINE_BYTES, file)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *first = strchr(line, ','), *second = first ? strchr(first + 1, ',') : NULL;
        assert_non_null(second);
        *first = *second = '\0';
        const char *id = line, *quantity = first + 1, *text = second + 1;
        if (count == 0 || strcmp(cases[count - 1].id, id) != 0) {
            if (count == capacity) {
                cases = realloc(cases, (capacity *= 2) * sizeof *cases);
                memset(cases + count, 0, (capacity - count) * sizeof *cases);
            }
            snprintf(cases[count++].id, sizeof cases->id, "%s", id);
        }
        reference_case *c = &cases[count - 1];
        if (strcmp(quantity, "data") == 0) {
            snprintf(c->data, sizeof c->data, "%s", text);
            continue;
        }
        size_t k = test_parse_numbers(text, values, MAX_VALUES);
        if (strcmp(quantity, "alpha") == 0) c->alpha = values[0];
        else if (strcmp(quantity, "intercept") == 0) c->intercept = (int)values[0];
        else if (strcmp(quantity, "n_p") == 0) { c->n = (size_t)values[0]; c->p = (size_t)values[1]; }
        else if (strcmp(quantity, "exhaustive") == 0) c->exhaustive = (int)values[0];
        else if (strcmp(quantity, "stable") == 0) c->stable = (int)values[0];
        else if (strcmp(quantity, "h") == 0) c->h = (size_t)values[0];
        else if (strcmp(quantity, "raw_coefficients") == 0) memcpy(c->raw_coefficients, values, k * sizeof *values);
        else if (strcmp(quantity, "coefficients") == 0) memcpy(c->coefficients, values, k * sizeof *values);
        else if (strcmp(quantity, "raw_scale") == 0) c->raw_scale = values[0];
        else if (strcmp(quantity, "scale") == 0) c->scale = values[0];
        else if (strcmp(quantity, "raw_cnp2") == 0) memcpy(c->raw_cnp2, values, 2 * sizeof *values);
        else if (strcmp(quantity, "cnp2") == 0) memcpy(c->cnp2, values, 2 * sizeof *values);
        else if (strcmp(quantity, "crit") == 0) c->crit = values[0];
        else if (strcmp(quantity, "objective") == 0) c->objective = values[0];
        else if (strcmp(quantity, "best_objective") == 0) c->best_objective = values[0];
        else if (strcmp(quantity, "best") == 0) for (size_t i = 0; i < k; ++i) c->best[i] = (size_t)values[i];
        else if (strcmp(quantity, "raw_weights") == 0) for (size_t i = 0; i < k; ++i) c->raw_weights[i] = (int)values[i];
        else if (strcmp(quantity, "weights") == 0) for (size_t i = 0; i < k; ++i) c->weights[i] = (int)values[i];
        else if (strcmp(quantity, "residuals") == 0) memcpy(c->residuals, values, k * sizeof *values);
    }
    fclose(file);
    free(line);
    free(values);
    *count_out = count;
    return cases;
}

static double max_abs(const double *values, size_t count)
{
    double largest = 0.0;
    for (size_t i = 0; i < count; ++i)
        largest = fabs(values[i]) > largest ? fabs(values[i]) : largest;
    return largest;
}

static void assert_close(const char *id, const char *what, double ours, double theirs, double tolerance)
{
    if (!(fabs(ours - theirs) <= tolerance))
        fail_msg("%s: %s is %.17g, ltsReg's %.17g (tolerance %g)", id, what, ours, theirs, tolerance);
}

static int g_cases_same, g_cases_better;

static void check_case(const reference_case *c)
{
    double *y, *x;
    size_t n, d;
    read_data(c->data, &y, &x, &n, &d);
    assert_int_equal(n, c->n);
    assert_int_equal(d + (size_t)c->intercept, c->p);

    statgpu_lts_params params;
    statgpu_lts_params_init(&params);
    params.alpha = c->alpha;
    params.intercept = c->intercept;
    statgpu_lts_result *result = NULL;
    statgpu_status status = statgpu_lts(g_context, y, x, n, d, n, &params, &result);
    if (status != STATGPU_OK)
        fail_msg("%s: %s", c->id, statgpu_context_last_error(g_context));
    size_t p = c->p;
    assert_int_equal(result->h, c->h);
    assert_int_equal(result->p, p);
    assert_close(c->id, "raw correction factor", result->raw_correction_factor, c->raw_cnp2[1],
                 1e-12 * c->raw_cnp2[1]);
    assert_int_equal(result->exhaustive, c->exhaustive);

    if (!(result->objective <= c->objective * (1 + OBJECTIVE_TOLERANCE)))
        fail_msg("%s: objective %.17g is worse than ltsReg's %.17g", c->id, result->objective, c->objective);
    bool same = fabs(result->objective - c->objective) <= OBJECTIVE_TOLERANCE * c->objective;
    if (c->exhaustive && !same)
        fail_msg("%s: exhaustive search, yet objective %.17g differs from ltsReg's %.17g", c->id,
                 result->objective, c->objective);
    if (same) {
        ++g_cases_same;
        for (size_t i = 0; i < c->h; ++i)
            if (result->best_subset[i] + 1 != c->best[i])
                fail_msg("%s: best subset differs at position %zu: row %zu, ltsReg's %zu", c->id, i,
                         result->best_subset[i] + 1, c->best[i]);
        double raw_size = max_abs(c->raw_coefficients, p), size = max_abs(c->coefficients, p);
        for (size_t v = 0; v < p; ++v) {
            assert_close(c->id, "raw coefficient", result->raw_coefficients[v], c->raw_coefficients[v],
                         VALUE_TOLERANCE * raw_size);
            assert_close(c->id, "coefficient", result->coefficients[v], c->coefficients[v], VALUE_TOLERANCE * size);
        }
        assert_close(c->id, "raw scale", result->raw_scale, c->raw_scale, VALUE_TOLERANCE * c->raw_scale);
        assert_close(c->id, "scale", result->scale, c->scale, VALUE_TOLERANCE * c->scale);
        assert_close(c->id, "reweighted consistency factor", result->consistency_factor, c->cnp2[0],
                     VALUE_TOLERANCE * c->cnp2[0]);
        assert_close(c->id, "reweighted correction factor", result->correction_factor, c->cnp2[1],
                     VALUE_TOLERANCE * c->cnp2[1]);
        size_t outliers = 0;
        for (size_t i = 0; i < n; ++i) {
            if (result->raw_weights[i] != c->raw_weights[i])
                fail_msg("%s: raw weight of row %zu is %d, ltsReg's %d", c->id, i + 1, result->raw_weights[i],
                         c->raw_weights[i]);
            if (result->weights[i] != c->weights[i])
                fail_msg("%s: weight of row %zu is %d, ltsReg's %d", c->id, i + 1, result->weights[i], c->weights[i]);
            assert_close(c->id, "residual", result->residuals[i], c->residuals[i], VALUE_TOLERANCE * c->scale);
            outliers += c->weights[i] == 0;
        }
        assert_int_equal(result->outlier_count, outliers);
        assert_int_equal(result->exact_fit, 0);
    } else {
        ++g_cases_better;
        printf("%s: objective %.10g, lower than ltsReg's %.10g (the best of its 10 seeds: %.10g)\n", c->id,
               result->objective, c->objective, c->best_objective);
    }
    if (test_backend_from_environment() == STATGPU_BACKEND_CUDA) {
        statgpu_backend_report report;
        assert_int_equal(statgpu_context_backend_report(g_context, &report), STATGPU_OK);
        if (report.last_used != STATGPU_BACKEND_CUDA)
            fail_msg("%s: ran on the CPU with the CUDA backend asked for: %s", c->id, report.note);
    }
    statgpu_lts_result_destroy(result);
    free(y);
    free(x);
}

static void test_ltsreg_cases(void **state)
{
    (void)state;
    TEST_SKIP_IF(g_skip_reason);
    size_t count = 0;
    reference_case *cases = read_cases(&count);
    assert_true(count >= 20);
    for (size_t k = 0; k < count; ++k)
        check_case(&cases[k]);
    printf("%d cases the same fit as ltsReg, %d with a lower objective\n", g_cases_same, g_cases_better);
    free(cases);
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
        cmocka_unit_test(test_ltsreg_cases),
    };
    int failures = cmocka_run_group_tests(tests, setup, teardown);
    return test_exit_code(failures, g_skip_reason);
}
