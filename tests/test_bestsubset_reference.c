/*
 * test_bestsubset_reference.c: statgpu's best subset regression against R's
 * leaps::regsubsets (method "exhaustive") on classic regression data sets,
 * from the committed outputs of tests/reference/bestsubset_leaps.R (R is not
 * needed here). Cases: swiss, mtcars, longley, mtcars without intercept,
 * mtcars with wt forced in, stackloss (nbest 3) and a simulated n = 500,
 * p = 20 set (nbest 2). For every case, on the CPU backend:
 *   - statgpu reports every size leaps reports (leaps's sizes, like
 *     statgpu's, count forced predictors and never the intercept; with wt
 *     forced in leaps starts at size 2, statgpu at the forced-only size 1,
 *     which is compared with nothing), with as many subsets per size;
 *   - the same subsets in the same order per size; where leaps's RSS of two
 *     subsets tie within 1e-12 relative, either order is accepted;
 *   - per subset, RSS within 1e-9 relative, and R^2, adjusted R^2, Cp and
 *     leaps's BIC within 1e-9 of the magnitude of the terms they are made
 *     of: each is RSS over a constant plus a constant, so RSS's relative
 *     error e moves them by e times that term alone (Cp = RSS / sigma^2 -
 *     (n - 2k) near 0, BIC = n ln(RSS / RSS0) + k ln n by n e):
 *         R^2         1e-9 (1 + RSS / RSS0)
 *         adj. R^2    1e-9 (1 + RSS / RSS0 (n - intercept) / (n - k))
 *         Cp          1e-9 (RSS / sigma^2 + |n - 2k|)
 *         BIC         1e-9 (n + |BIC| + k ln n);
 *   - PRESS of each size's rank-1 subset within 1e-9 relative of R's
 *     sum((residual / (1 - hat))^2) of lm;
 *   - with criterion STATGPU_SUBSET_BY_CP, the chosen model is R's lowest-Cp
 *     one (the forced-only model a candidate too), and its coefficients and
 *     standard errors are summary(lm)'s within 1e-8 relative;
 *   - the subset tables, the chosen model and its coefficients are the same
 *     bits at 1 and 3 threads.
 * longley (Employed on 6 predictors, a condition number of about 2e7 in the
 * data's units) needs no looser tolerance: statgpu centres and scales the
 * columns before its QR, and leaps's and lm's values agree with it to the
 * tolerances above. The largest relative differences seen are printed per
 * case.
 *
 *     test_bestsubset_reference REFERENCE_DIR
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "statgpu.h"
#include "test_support.h"
#include "test_reference_csv.h"

#define RSS_TOLERANCE         1e-9
#define STATISTIC_TOLERANCE   1e-9
#define PRESS_TOLERANCE       1e-9
#define COEFFICIENT_TOLERANCE 1e-8
#define TIE_TOLERANCE         1e-12
#define LINE_BYTES            (1 << 16)
#define MAX_VARS              32
#define MAX_ROWS              128

static const char *g_reference_dir = ".";

/* One row of leaps's summary. */
typedef struct leaps_row {
    size_t  size, rank;
    uint8_t which[MAX_VARS];
    double  rss, rsq, adjr2, cp, bic;
} leaps_row;

typedef struct reference_case {
    char      id[64];
    char      data[64];
    size_t    nbest, p;
    int       intercept;
    int8_t    force[MAX_VARS];
    size_t    row_count, press_count;
    leaps_row rows[MAX_ROWS];
    size_t    press_sizes[MAX_VARS + 1];
    double    press[MAX_VARS + 1];
    uint8_t   chosen[MAX_VARS];
    size_t    coefficient_count;
    double    coefficients[MAX_VARS + 1], standard_errors[MAX_VARS + 1];
} reference_case;

/* The largest relative differences of a case, for the log. */
typedef struct case_spread {
    double rss, press, coefficient, standard_error;
} case_spread;

/* bestsubset_<name>.csv: a header, then rows of y, x1, x2, ...; returns y
 * and x (column-major, ld = n). */
static void read_data(const char *name, double **y_out, double **x_out, size_t *n_out, size_t *p_out)
{
    char file_name[256];
    snprintf(file_name, sizeof file_name, "bestsubset_%s.csv", name);
    size_t n, columns;
    double *values = test_read_numeric_csv(g_reference_dir, file_name, &n, &columns);
    size_t p = columns - 1;
    double *y = malloc(n * sizeof *y), *x = malloc(n * p * sizeof *x);
    for (size_t i = 0; i < n; ++i) {
        y[i] = values[i * columns];
        for (size_t v = 0; v < p; ++v)
            x[i + n * v] = values[i * columns + 1 + v];
    }
    free(values);
    *y_out = y;
    *x_out = x;
    *n_out = n;
    *p_out = p;
}

/* One subset line: size, rank, p 0/1s, rss, rsq, adjr2, cp, bic. */
static void read_subset(reference_case *c, const double *values, size_t k)
{
    assert_int_equal(k, 2 + c->p + 5);
    assert_true(c->row_count < MAX_ROWS);
    leaps_row *row = &c->rows[c->row_count++];
    row->size = (size_t)values[0];
    row->rank = (size_t)values[1];
    for (size_t v = 0; v < c->p; ++v)
        row->which[v] = (uint8_t)values[2 + v];
    const double *stats = values + 2 + c->p;
    row->rss = stats[0];
    row->rsq = stats[1];
    row->adjr2 = stats[2];
    row->cp = stats[3];
    row->bic = stats[4];
}

/* One case's quantity (bestsubset_leaps.R's top comment lists them). */
static void read_quantity(reference_case *c, const char *quantity, const char *text, double *values)
{
    if (strcmp(quantity, "data") == 0) {
        snprintf(c->data, sizeof c->data, "%s", text);
        return;
    }
    size_t k = test_parse_numbers(text, values, 4 * MAX_VARS);
    if (strcmp(quantity, "options") == 0) {
        c->nbest = (size_t)values[0];
        c->intercept = (int)values[1];
    } else if (strcmp(quantity, "force") == 0) {
        assert_true(k <= MAX_VARS);
        c->p = k;
        for (size_t v = 0; v < k; ++v)
            c->force[v] = (int8_t)values[v];
    } else if (strcmp(quantity, "subset") == 0) {
        read_subset(c, values, k);
    } else if (strcmp(quantity, "press") == 0) {
        assert_true(c->press_count <= MAX_VARS);
        c->press_sizes[c->press_count] = (size_t)values[0];
        c->press[c->press_count++] = values[1];
    } else if (strcmp(quantity, "chosen") == 0) {
        for (size_t v = 0; v < k; ++v)
            c->chosen[v] = (uint8_t)values[v];
    } else if (strcmp(quantity, "coefficients") == 0) {
        c->coefficient_count = k;
        memcpy(c->coefficients, values, k * sizeof *values);
    } else if (strcmp(quantity, "standard_errors") == 0) {
        assert_int_equal(k, c->coefficient_count);
        memcpy(c->standard_errors, values, k * sizeof *values);
    } else {
        fail_msg("%s: unknown quantity %s", c->id, quantity);
    }
}

/* All cases of bestsubset_leaps.csv: lines of case,quantity,values. */
static reference_case *read_cases(size_t *count_out)
{
    FILE *file = test_open_reference(g_reference_dir, "bestsubset_leaps.csv");
    char *line = malloc(LINE_BYTES);
    double *values = malloc(4 * MAX_VARS * sizeof *values);
    size_t capacity = 8, count = 0;
    reference_case *cases = calloc(capacity, sizeof *cases);
    assert_non_null(fgets(line, LINE_BYTES, file));  /* header */
    while (fgets(line, LINE_BYTES, file)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *first = strchr(line, ','), *second = first ? strchr(first + 1, ',') : NULL;
        assert_non_null(second);
        *first = *second = '\0';
        if (count == 0 || strcmp(cases[count - 1].id, line) != 0) {
            if (count == capacity) {
                cases = realloc(cases, (capacity *= 2) * sizeof *cases);
                memset(cases + count, 0, (capacity - count) * sizeof *cases);
            }
            snprintf(cases[count++].id, sizeof cases->id, "%s", line);
        }
        read_quantity(&cases[count - 1], first + 1, second + 1, values);
    }
    fclose(file);
    free(line);
    free(values);
    *count_out = count;
    return cases;
}

static double relative_difference(double ours, double theirs)
{
    return theirs == 0.0 ? fabs(ours) : fabs(ours - theirs) / fabs(theirs);
}

static void assert_close(const char *id, const char *what, size_t size, size_t rank, double ours, double theirs,
                         double tolerance)
{
    if (!(fabs(ours - theirs) <= tolerance))
        fail_msg("%s: size %zu rank %zu: %s is %.17g, the reference's %.17g (tolerance %g)", id, size, rank, what,
                 ours, theirs, tolerance);
}

/* statgpu_bestsubset on the case's data with its options, Cp choosing. */
static statgpu_bestsubset_result *run_case(statgpu_context *context, const reference_case *c, const double *y,
                                           const double *x, size_t n)
{
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.nbest = c->nbest;
    params.intercept = c->intercept;
    params.force = c->force;
    params.criterion = STATGPU_SUBSET_BY_CP;
    statgpu_bestsubset_result *result = NULL;
    if (statgpu_bestsubset(context, y, x, n, c->p, n, &params, &result) != STATGPU_OK)
        fail_msg("%s: %s", c->id, statgpu_context_last_error(context));
    return result;
}

static bool same_which(const uint8_t *a, const uint8_t *b, size_t p)
{
    return memcmp(a, b, p) == 0;
}

/* The leaps row of size with the subset which, or NULL. */
static const leaps_row *find_leaps_row(const reference_case *c, size_t size, const uint8_t *which)
{
    for (size_t r = 0; r < c->row_count; ++r)
        if (c->rows[r].size == size && same_which(c->rows[r].which, which, c->p))
            return &c->rows[r];
    return NULL;
}

/* The leaps row of size and rank, or NULL. */
static const leaps_row *find_leaps_rank(const reference_case *c, size_t size, size_t rank)
{
    for (size_t r = 0; r < c->row_count; ++r)
        if (c->rows[r].size == size && c->rows[r].rank == rank)
            return &c->rows[r];
    return NULL;
}

static size_t leaps_count_of_size(const reference_case *c, size_t size)
{
    size_t count = 0;
    for (size_t r = 0; r < c->row_count; ++r)
        count += c->rows[r].size == size;
    return count;
}

static size_t statgpu_count_of_size(const statgpu_bestsubset_result *result, size_t size)
{
    size_t count = 0;
    for (size_t r = 0; r < result->subset_count; ++r)
        count += result->sizes[r] == size;
    return count;
}

static size_t forced_count(const reference_case *c)
{
    size_t count = 0;
    for (size_t v = 0; v < c->p; ++v)
        count += c->force[v] == 1;
    return count;
}

/* Statistics of statgpu's row r against leaps's row of the same subset. */
static void check_statistics(const reference_case *c, const statgpu_bestsubset_result *result, size_t r,
                             const leaps_row *row, case_spread *spread)
{
    double n = (double)result->n_obs, k = (double)(row->size + (size_t)c->intercept);
    double ratio = row->rss / result->null_rss, scaled = ratio * (n - c->intercept) / (n - k);
    assert_close(c->id, "RSS", row->size, row->rank, result->rss[r], row->rss, RSS_TOLERANCE * row->rss);
    assert_close(c->id, "R^2", row->size, row->rank, result->r_squared[r], row->rsq,
                 STATISTIC_TOLERANCE * (1.0 + ratio));
    assert_close(c->id, "adjusted R^2", row->size, row->rank, result->adjusted_r_squared[r], row->adjr2,
                 STATISTIC_TOLERANCE * (1.0 + scaled));
    assert_close(c->id, "Cp", row->size, row->rank, result->cp[r], row->cp,
                 STATISTIC_TOLERANCE * (row->rss / result->sigma2 + fabs(n - 2.0 * k)));
    assert_close(c->id, "BIC (leaps)", row->size, row->rank, result->bic_leaps[r], row->bic,
                 STATISTIC_TOLERANCE * (n + fabs(row->bic) + k * log(n)));
    double difference = relative_difference(result->rss[r], row->rss);
    spread->rss = difference > spread->rss ? difference : spread->rss;
}

/* statgpu's row r at leaps's rank: the same subset, or one whose RSS ties
 * (leaps's) with the subset leaps has at that rank. */
static const leaps_row *match_row(const reference_case *c, const statgpu_bestsubset_result *result, size_t r)
{
    size_t size = result->sizes[r], rank = result->ranks[r];
    const uint8_t *which = result->which + r * c->p;
    const leaps_row *at_rank = find_leaps_rank(c, size, rank), *same = find_leaps_row(c, size, which);
    if (at_rank == NULL)
        fail_msg("%s: size %zu: statgpu reports rank %zu, leaps does not", c->id, size, rank);
    if (same == NULL)
        fail_msg("%s: size %zu rank %zu: statgpu's subset is not among leaps's", c->id, size, rank);
    if (same != at_rank && !(fabs(same->rss - at_rank->rss) <= TIE_TOLERANCE * at_rank->rss))
        fail_msg("%s: size %zu: statgpu's rank %zu is leaps's rank %zu (RSS %.17g against %.17g: no tie)", c->id,
                 size, rank, same->rank, same->rss, at_rank->rss);
    return same;
}

/* The subset table: sizes, subsets, order and statistics. */
static void check_subsets(const reference_case *c, const statgpu_bestsubset_result *result, case_spread *spread)
{
    size_t forced = forced_count(c);
    assert_int_equal(result->min_size, forced > 0 ? forced : 1);
    assert_int_equal(result->dropped_count, 0);
    for (size_t r = 0; r < c->row_count; ++r) {  /* every size leaps reports, statgpu does as fully */
        size_t size = c->rows[r].size, count = statgpu_count_of_size(result, size);
        if (count != leaps_count_of_size(c, size))
            fail_msg("%s: size %zu: statgpu reports %zu subsets, leaps %zu", c->id, size, count,
                     leaps_count_of_size(c, size));
    }
    for (size_t r = 0; r < result->subset_count; ++r) {
        if (leaps_count_of_size(c, result->sizes[r]) == 0) {  /* only the forced-only size: leaps starts above it */
            assert_true(forced > 0 && result->sizes[r] == forced);
            continue;
        }
        check_statistics(c, result, r, match_row(c, result, r), spread);
    }
}

/* PRESS of each size's rank-1 subset. */
static void check_press(const reference_case *c, const statgpu_bestsubset_result *result, case_spread *spread)
{
    assert_true(c->press_count > 0);
    for (size_t t = 0; t < c->press_count; ++t) {
        size_t size = c->press_sizes[t], r = 0;
        while (r < result->subset_count && !(result->sizes[r] == size && result->ranks[r] == 1))
            ++r;
        assert_true(r < result->subset_count);
        assert_close(c->id, "PRESS", size, 1, result->press[r], c->press[t], PRESS_TOLERANCE * c->press[t]);
        double difference = relative_difference(result->press[r], c->press[t]);
        spread->press = difference > spread->press ? difference : spread->press;
    }
}

/* The lowest-Cp model and its coefficients and standard errors. */
static void check_chosen(const reference_case *c, const statgpu_bestsubset_result *result, case_spread *spread)
{
    size_t r = result->chosen;
    assert_true(r < result->subset_count);
    if (!same_which(result->which + r * c->p, c->chosen, c->p))
        fail_msg("%s: the lowest-Cp model is statgpu's size %zu, not R's", c->id, result->sizes[r]);
    assert_int_equal(result->coefficient_count, c->coefficient_count);
    size_t t = 0;
    if (c->intercept)
        assert_int_equal(result->coefficient_vars[t++], SIZE_MAX);
    for (size_t v = 0; v < c->p; ++v)  /* the chosen predictors, in the data's order */
        if (c->chosen[v])
            assert_int_equal(result->coefficient_vars[t++], v);
    for (t = 0; t < c->coefficient_count; ++t) {
        double coefficient = c->coefficients[t], error = c->standard_errors[t];
        assert_close(c->id, "coefficient", result->sizes[r], 1, result->coefficients[t], coefficient,
                     COEFFICIENT_TOLERANCE * fabs(coefficient));
        assert_close(c->id, "standard error", result->sizes[r], 1, result->standard_errors[t], error,
                     COEFFICIENT_TOLERANCE * error);
        double difference = relative_difference(result->coefficients[t], coefficient);
        spread->coefficient = difference > spread->coefficient ? difference : spread->coefficient;
        difference = relative_difference(result->standard_errors[t], error);
        spread->standard_error = difference > spread->standard_error ? difference : spread->standard_error;
    }
}

static void assert_same_doubles(const char *id, const char *what, const double *a, const double *b, size_t count)
{
    for (size_t i = 0; i < count; ++i)
        if (!test_same_bits(a[i], b[i]))
            fail_msg("%s: %s of row %zu: %.17g at 1 thread, %.17g at 3", id, what, i, a[i], b[i]);
}

/* The outputs at 1 and 3 threads: the same bits. */
static void check_same_bits(const reference_case *c, const statgpu_bestsubset_result *a,
                            const statgpu_bestsubset_result *b)
{
    size_t rows = a->subset_count;
    assert_int_equal(b->subset_count, rows);
    assert_memory_equal(a->sizes, b->sizes, rows * sizeof *a->sizes);
    assert_memory_equal(a->ranks, b->ranks, rows * sizeof *a->ranks);
    assert_memory_equal(a->which, b->which, rows * c->p);
    assert_same_doubles(c->id, "RSS", a->rss, b->rss, rows);
    assert_same_doubles(c->id, "R^2", a->r_squared, b->r_squared, rows);
    assert_same_doubles(c->id, "adjusted R^2", a->adjusted_r_squared, b->adjusted_r_squared, rows);
    assert_same_doubles(c->id, "Cp", a->cp, b->cp, rows);
    assert_same_doubles(c->id, "BIC (leaps)", a->bic_leaps, b->bic_leaps, rows);
    assert_same_doubles(c->id, "BIC", a->bic, b->bic, rows);
    assert_same_doubles(c->id, "PRESS", a->press, b->press, rows);
    assert_same_doubles(c->id, "validation error", a->validation_error, b->validation_error, rows);
    assert_int_equal(a->chosen, b->chosen);
    assert_int_equal(b->coefficient_count, a->coefficient_count);
    assert_same_doubles(c->id, "coefficient", a->coefficients, b->coefficients, a->coefficient_count);
    assert_same_doubles(c->id, "standard error", a->standard_errors, b->standard_errors, a->coefficient_count);
}

static void check_case(const reference_case *c)
{
    double *y, *x;
    size_t n, p;
    read_data(c->data, &y, &x, &n, &p);
    assert_int_equal(p, c->p);
    statgpu_bestsubset_result *results[2];
    const int threads[2] = { 1, 3 };
    for (int t = 0; t < 2; ++t) {
        statgpu_context *context;
        TEST_CONTEXT_WITH_THREADS(STATGPU_BACKEND_CPU, threads[t], context);
        results[t] = run_case(context, c, y, x, n);
        statgpu_context_destroy(context);
    }
    case_spread spread = { 0 };
    check_subsets(c, results[0], &spread);
    check_press(c, results[0], &spread);
    check_chosen(c, results[0], &spread);
    check_same_bits(c, results[0], results[1]);
    printf("%-16s %2zu subsets; largest relative differences: RSS %.1e, PRESS %.1e, coefficients %.1e, "
           "standard errors %.1e\n", c->id, results[0]->subset_count, spread.rss, spread.press, spread.coefficient,
           spread.standard_error);
    statgpu_bestsubset_result_destroy(results[0]);
    statgpu_bestsubset_result_destroy(results[1]);
    free(y);
    free(x);
}

static void test_leaps_cases(void **state)
{
    (void)state;
    size_t count = 0;
    reference_case *cases = read_cases(&count);
    assert_int_equal(count, 7);
    for (size_t k = 0; k < count; ++k)
        check_case(&cases[k]);
    free(cases);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_reference_dir = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leaps_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
