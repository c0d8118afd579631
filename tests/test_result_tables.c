/*
 * test_result_tables.c: results as named tables (statgpu.h's "Result
 * tables"). Real k-means and LTS fits on small synthetic data; every cell of
 * every table against the result's fields (bit for bit), the row map putting
 * each observation at its row and the rows left out as empty cells, headers,
 * row labels, the summary's names exactly as KMEANS and LTSFIT show them in
 * Calc, finding tables by Output word, the method catalogue without a
 * result, and every bad argument's status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "statgpu.h"
#include "test_support.h"

static statgpu_context *g_context;

static int setup(void **state)
{
    (void)state;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    return statgpu_context_create(&params, &g_context) == STATGPU_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    statgpu_context_destroy(g_context);
    return 0;
}

/* ----- the data: rows a caller read, some of them left out ----- */

#define SOURCE_ROWS 40
/* Rows with a missing value in the caller's data (first, last, a run of two). */
static const size_t k_left_out[] = { 0, 7, 8, 21, 39 };
#define LEFT_OUT_COUNT (sizeof k_left_out / sizeof *k_left_out)
#define OBSERVATIONS (SOURCE_ROWS - LEFT_OUT_COUNT)

static int is_left_out(size_t row)
{
    for (size_t j = 0; j < LEFT_OUT_COUNT; ++j)
        if (k_left_out[j] == row)
            return 1;
    return 0;
}

/* The row map of the rows kept: source_rows[i] is observation i's row. */
static void make_row_map(size_t *source_rows)
{
    size_t i = 0;
    for (size_t row = 0; row < SOURCE_ROWS; ++row)
        if (!is_left_out(row))
            source_rows[i++] = row;
    assert_int_equal(i, OBSERVATIONS);
}

/* Three well separated groups in two variables, column-major, ld = n. */
static void make_clusters(double *data, size_t n, uint64_t seed)
{
    static const double centres[3][2] = { { 0.0, 0.0 }, { 10.0, 0.0 }, { 0.0, 10.0 } };
    test_rng rng = { seed };
    for (size_t i = 0; i < n; ++i) {
        data[i] = centres[i % 3][0] + test_rng_normal(&rng);
        data[i + n] = centres[i % 3][1] + test_rng_normal(&rng);
    }
}

static statgpu_kmeans_result *fit_kmeans(const double *data, size_t n)
{
    statgpu_kmeans_result *result = NULL;
    assert_int_equal(statgpu_kmeans(g_context, data, n, 2, n, 3, NULL, &result), STATGPU_OK);
    assert_non_null(result);
    return result;
}

/* y = 1 + 2 a - 3 b + noise, with a quarter of the rows far off the line. */
static void make_regression(double *y, double *x, size_t n, uint64_t seed)
{
    test_rng rng = { seed };
    for (size_t i = 0; i < n; ++i) {
        x[i] = 10.0 * test_rng_uniform(&rng);
        x[i + n] = 10.0 * test_rng_uniform(&rng);
        y[i] = 1.0 + 2.0 * x[i] - 3.0 * x[i + n] + 0.1 * test_rng_normal(&rng) + (i % 4 == 1 ? 50.0 : 0.0);
    }
}

static statgpu_lts_result *fit_lts(const double *y, const double *x, size_t n, size_t n_vars,
                                   statgpu_lts_criterion criterion, int intercept)
{
    statgpu_lts_params params;
    statgpu_lts_params_init(&params);
    params.criterion = criterion;
    params.intercept = intercept;
    statgpu_lts_result *result = NULL;
    assert_int_equal(statgpu_lts(g_context, y, x, n, n_vars, n, &params, &result), STATGPU_OK);
    assert_non_null(result);
    return result;
}

/* ----- checks shared by the tests ----- */

static void assert_all_numbers(const statgpu_table *table)
{
    for (size_t cell = 0; cell < table->row_count * table->column_count; ++cell)
        assert_int_equal(table->cell_kinds[cell], STATGPU_CELL_NUMBER);
    assert_null(table->texts);
}

static void assert_row_labels_numbered(const statgpu_table *table, const char *heading)
{
    assert_non_null(table->row_labels);
    assert_string_equal(table->row_label_header, heading);
    for (size_t r = 0; r < table->row_count; ++r) {
        char expected[32];
        snprintf(expected, sizeof expected, "%zu", r + 1);
        assert_string_equal(table->row_labels[r], expected);
    }
}

/* A per-row table of one column: the observations' values at their rows,
 * empty cells (value 0) at the rows left out. */
static void assert_per_row(const statgpu_table *table, const char *header, size_t source_row_count,
                           const size_t *source_rows, size_t n_obs, const double *expected)
{
    assert_int_equal(table->row_count, source_row_count);
    assert_int_equal(table->column_count, 1);
    assert_string_equal(table->column_headers[0], header);
    assert_null(table->row_labels);
    assert_null(table->row_label_header);
    assert_null(table->texts);
    size_t next = 0, empty = 0;
    for (size_t row = 0; row < source_row_count; ++row) {
        if (next < n_obs && (source_rows != NULL ? source_rows[next] : next) == row) {
            assert_int_equal(table->cell_kinds[row], STATGPU_CELL_NUMBER);
            assert_bits_equal(table->values[row], expected[next]);
            ++next;
        } else {
            assert_int_equal(table->cell_kinds[row], STATGPU_CELL_EMPTY);
            assert_bits_equal(table->values[row], 0.0);
            ++empty;
        }
    }
    assert_int_equal(next, n_obs);
    assert_int_equal(empty, source_row_count - n_obs);
}

/* A summary: value and name (text) columns, the names exactly as given. */
static void assert_summary(const statgpu_table *table, const char *const *names, const double *values,
                           size_t row_count)
{
    assert_int_equal(table->row_count, row_count);
    assert_int_equal(table->column_count, 2);
    assert_string_equal(table->column_headers[0], "value");
    assert_string_equal(table->column_headers[1], "name");
    assert_null(table->row_labels);
    assert_non_null(table->texts);
    for (size_t r = 0; r < row_count; ++r) {
        assert_int_equal(table->cell_kinds[r], STATGPU_CELL_NUMBER);
        assert_null(table->texts[r]);
        assert_bits_equal(table->values[r], values[r]);
        assert_int_equal(table->cell_kinds[r + row_count], STATGPU_CELL_TEXT);
        assert_string_equal(table->texts[r + row_count], names[r]);
        assert_bits_equal(table->values[r + row_count], 0.0);
    }
}

/* The nine names KMEANS writes beside its summary values
 * (addin/statgpu_addin.cxx): the add-in is to show these tables, and no
 * user may see a name change. */
static const char *const k_kmeans_summary_names[9] = {
    "inertia (within-cluster sum of squares)",
    "total sum of squares",
    "between / total sum of squares",
    "iterations",
    "converged (1 yes, 0 no)",
    "restarts",
    "best restart",
    "observations used",
    "rows left out (missing values)",
};

/* LTSFIT's, likewise; the first names the criterion. */
static const char *const k_lts_summary_names[9] = {
    "objective (sum of the h smallest squared residuals)",
    "h (rows the raw fit explains)",
    "scale (reweighted fit)",
    "raw scale",
    "outliers (weight 0)",
    "least median of squares (1 yes, 0 no)",
    "exact fit (1 yes, 0 no)",
    "observations used",
    "rows left out (missing values)",
};
static const char *const k_lms_objective_name = "objective (h-th smallest squared residual)";

/* ----- k-means ----- */

static void check_kmeans_tables(const statgpu_table_set *set, const statgpu_kmeans_result *result,
                                const char *const *names, size_t source_row_count, const size_t *source_rows)
{
    assert_int_equal(statgpu_table_set_count(set), 4);
    const statgpu_table *centroids = statgpu_table_set_get(set, 0);
    const statgpu_table *labels = statgpu_table_set_get(set, 1);
    const statgpu_table *sizes = statgpu_table_set_get(set, 2);
    const statgpu_table *summary = statgpu_table_set_get(set, 3);
    assert_null(statgpu_table_set_get(set, 4));
    assert_string_equal(centroids->name, "centroids");
    assert_string_equal(labels->name, "labels");
    assert_string_equal(sizes->name, "sizes");
    assert_string_equal(summary->name, "summary");
    assert_string_equal(centroids->title, "Cluster centroids");

    size_t k = result->k;
    assert_int_equal(centroids->row_count, k);
    assert_int_equal(centroids->column_count, result->n_vars);
    for (size_t v = 0; v < result->n_vars; ++v) {
        assert_string_equal(centroids->column_headers[v], names[v]);
        for (size_t j = 0; j < k; ++j)
            assert_bits_equal(centroids->values[j + k * v], result->centroids[j + k * v]);
    }
    assert_row_labels_numbered(centroids, "cluster");
    assert_all_numbers(centroids);

    double one_based[OBSERVATIONS + LEFT_OUT_COUNT];
    for (size_t i = 0; i < result->n_obs; ++i)
        one_based[i] = result->labels[i] + 1.0;
    assert_per_row(labels, "cluster", source_row_count, source_rows, result->n_obs, one_based);

    assert_int_equal(sizes->row_count, k);
    assert_int_equal(sizes->column_count, 1);
    assert_string_equal(sizes->column_headers[0], "size");
    assert_row_labels_numbered(sizes, "cluster");
    assert_all_numbers(sizes);
    size_t total = 0;
    for (size_t j = 0; j < k; ++j) {
        assert_bits_equal(sizes->values[j], (double)result->cluster_sizes[j]);
        total += result->cluster_sizes[j];
    }
    assert_int_equal(total, result->n_obs);

    const double values[9] = { result->inertia, result->total_ss, 1.0 - result->inertia / result->total_ss,
                               (double)result->iterations, (double)result->converged,
                               (double)result->restart_count, (double)result->best_restart + 1.0,
                               (double)result->n_obs, (double)(source_row_count - result->n_obs) };
    assert_summary(summary, k_kmeans_summary_names, values, 9);
}

static void test_kmeans_tables_with_row_map_and_names(void **state)
{
    (void)state;
    double data[OBSERVATIONS * 2];
    make_clusters(data, OBSERVATIONS, 11);
    statgpu_kmeans_result *result = fit_kmeans(data, OBSERVATIONS);
    assert_true(result->converged);

    size_t source_rows[OBSERVATIONS];
    make_row_map(source_rows);
    const char *const names[2] = { "eruptions", "waiting" };
    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.variable_names = names;
    params.source_row_count = SOURCE_ROWS;
    params.source_rows = source_rows;
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_kmeans_tables(g_context, result, &params, &set), STATGPU_OK);
    assert_string_equal(statgpu_context_last_error(g_context), "");
    check_kmeans_tables(set, result, names, SOURCE_ROWS, source_rows);

    /* The rows left out, by the numbers a spreadsheet user checks: COUNT of
     * the labels is the observations, the summary's last row the rest. */
    const statgpu_table *labels = statgpu_table_set_find(set, "labels");
    size_t numbers = 0;
    for (size_t row = 0; row < labels->row_count; ++row)
        numbers += labels->cell_kinds[row] == STATGPU_CELL_NUMBER;
    assert_int_equal(numbers, OBSERVATIONS);
    for (size_t j = 0; j < LEFT_OUT_COUNT; ++j)
        assert_int_equal(labels->cell_kinds[k_left_out[j]], STATGPU_CELL_EMPTY);
    assert_bits_equal(statgpu_table_set_find(set, "summary")->values[8], (double)LEFT_OUT_COUNT);

    /* The set holds copies: the names' and the map's storage may go. */
    statgpu_kmeans_result_destroy(result);
    memset(source_rows, 0xff, sizeof source_rows);
    assert_string_equal(statgpu_table_set_find(set, "centroids")->column_headers[1], "waiting");
    statgpu_table_set_destroy(set);
}

static void test_kmeans_tables_defaults(void **state)
{
    (void)state;
    double data[OBSERVATIONS * 2];
    make_clusters(data, OBSERVATIONS, 12);
    statgpu_kmeans_result *result = fit_kmeans(data, OBSERVATIONS);
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_kmeans_tables(g_context, result, NULL, &set), STATGPU_OK);
    const char *const names[2] = { "X1", "X2" };
    check_kmeans_tables(set, result, names, OBSERVATIONS, NULL);
    statgpu_table_set_destroy(set);

    /* Without a map but with the count of rows, which is then n_obs. */
    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.source_row_count = OBSERVATIONS;
    assert_int_equal(statgpu_kmeans_tables(g_context, result, &params, &set), STATGPU_OK);
    check_kmeans_tables(set, result, names, OBSERVATIONS, NULL);
    statgpu_table_set_destroy(set);
    statgpu_kmeans_result_destroy(result);
}

/* k = 1: the total sum of squares is all inertia, and the share explained 0
 * (not 1 - 0/0 where every row is alike). */
static void test_kmeans_summary_with_one_cluster(void **state)
{
    (void)state;
    double data[8] = { 1, 1, 1, 1, 2, 2, 2, 2 };
    statgpu_kmeans_result *result = NULL;
    assert_int_equal(statgpu_kmeans(g_context, data, 4, 2, 4, 1, NULL, &result), STATGPU_OK);
    assert_true(result->total_ss == 0.0);
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_kmeans_tables(g_context, result, NULL, &set), STATGPU_OK);
    const statgpu_table *summary = statgpu_table_set_find(set, "summary");
    assert_bits_equal(summary->values[2], 0.0);
    statgpu_table_set_destroy(set);
    statgpu_kmeans_result_destroy(result);
}

/* Output words as Calc users type them, and the one-table build. */
static void test_find_and_one_table(void **state)
{
    (void)state;
    double data[OBSERVATIONS * 2];
    make_clusters(data, OBSERVATIONS, 13);
    statgpu_kmeans_result *result = fit_kmeans(data, OBSERVATIONS);
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_kmeans_tables(g_context, result, NULL, &set), STATGPU_OK);
    assert_ptr_equal(statgpu_table_set_find(set, "Labels"), statgpu_table_set_get(set, 1));
    assert_ptr_equal(statgpu_table_set_find(set, " SUMMARY "), statgpu_table_set_get(set, 3));
    assert_ptr_equal(statgpu_table_set_find(set, "centroids"), statgpu_table_set_get(set, 0));
    assert_null(statgpu_table_set_find(set, "centroid"));
    assert_null(statgpu_table_set_find(set, "labels lms"));
    assert_null(statgpu_table_set_find(set, ""));
    assert_null(statgpu_table_set_find(set, NULL));
    assert_null(statgpu_table_set_find(NULL, "labels"));
    assert_null(statgpu_table_set_get(NULL, 0));
    assert_int_equal(statgpu_table_set_count(NULL), 0);
    statgpu_table_set_destroy(set);
    statgpu_table_set_destroy(NULL);

    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.table_name = "Sizes";
    assert_int_equal(statgpu_kmeans_tables(g_context, result, &params, &set), STATGPU_OK);
    assert_int_equal(statgpu_table_set_count(set), 1);
    const statgpu_table *sizes = statgpu_table_set_get(set, 0);
    assert_string_equal(sizes->name, "sizes");
    assert_ptr_equal(statgpu_table_set_find(set, "sizes"), sizes);
    assert_null(statgpu_table_set_find(set, "labels"));
    for (size_t j = 0; j < result->k; ++j)
        assert_bits_equal(sizes->values[j], (double)result->cluster_sizes[j]);
    statgpu_table_set_destroy(set);

    params.table_name = "weights";  /* LTS's word, not k-means' */
    set = (statgpu_table_set *)&params;
    assert_int_equal(statgpu_kmeans_tables(g_context, result, &params, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(set);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "\"centroids\", \"labels\", \"sizes\", \"summary\""));
    statgpu_kmeans_result_destroy(result);
}

static void test_method_catalogue(void **state)
{
    (void)state;
    const char *const *kmeans = statgpu_method_table_names("kmeans");
    assert_non_null(kmeans);
    const char *const kmeans_expected[] = { "centroids", "labels", "sizes", "summary" };
    for (size_t j = 0; j < 4; ++j)
        assert_string_equal(kmeans[j], kmeans_expected[j]);
    assert_null(kmeans[4]);

    const char *const *lts = statgpu_method_table_names("lts");
    assert_non_null(lts);
    const char *const lts_expected[] = { "coefficients", "weights", "residuals", "summary", "subset" };
    for (size_t j = 0; j < 5; ++j)
        assert_string_equal(lts[j], lts_expected[j]);
    assert_null(lts[5]);

    assert_null(statgpu_method_table_names("no such method"));
    assert_null(statgpu_method_table_names("KMEANS"));
    assert_null(statgpu_method_table_names(NULL));
    assert_string_equal(statgpu_method_table_title("kmeans", "Centroids"), "Cluster centroids");
    assert_string_equal(statgpu_method_table_title("lts", "weights"), "Weights (0 = outlier)");
    assert_null(statgpu_method_table_title("kmeans", "weights"));
    assert_null(statgpu_method_table_title("kmeans", NULL));
    assert_null(statgpu_method_table_title("no such method", "summary"));

    /* The catalogue and a result's tables agree, name for name and title for title. */
    double data[OBSERVATIONS * 2];
    make_clusters(data, OBSERVATIONS, 14);
    statgpu_kmeans_result *result = fit_kmeans(data, OBSERVATIONS);
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_kmeans_tables(g_context, result, NULL, &set), STATGPU_OK);
    for (size_t j = 0; j < 4; ++j) {
        assert_string_equal(statgpu_table_set_get(set, j)->name, kmeans[j]);
        assert_string_equal(statgpu_table_set_get(set, j)->title, statgpu_method_table_title("kmeans", kmeans[j]));
    }
    statgpu_table_set_destroy(set);
    statgpu_kmeans_result_destroy(result);
}

/* Every bad argument: a status, a message, no set. */
static void expect_kmeans_failure(const statgpu_kmeans_result *result, const statgpu_table_params *params,
                                  const char *message_part)
{
    statgpu_table_set *set = (statgpu_table_set *)&set;  /* must come back NULL */
    assert_int_equal(statgpu_kmeans_tables(g_context, result, params, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(set);
    if (strstr(statgpu_context_last_error(g_context), message_part) == NULL)
        fail_msg("the message \"%s\" does not say \"%s\"", statgpu_context_last_error(g_context), message_part);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    double data[OBSERVATIONS * 2];
    make_clusters(data, OBSERVATIONS, 15);
    statgpu_kmeans_result *result = fit_kmeans(data, OBSERVATIONS);
    statgpu_table_set *set = NULL;

    assert_int_equal(statgpu_kmeans_tables(NULL, result, NULL, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_kmeans_tables(g_context, result, NULL, NULL), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_int_equal(statgpu_lts_tables(NULL, NULL, NULL, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    expect_kmeans_failure(NULL, NULL, "result is NULL");
    set = (statgpu_table_set *)&set;
    assert_int_equal(statgpu_lts_tables(g_context, NULL, NULL, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(set);

    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.struct_bytes = sizeof params + 8;
    expect_kmeans_failure(result, &params, "struct_bytes");
    params.struct_bytes = sizeof(size_t);
    expect_kmeans_failure(result, &params, "struct_bytes");

    size_t source_rows[OBSERVATIONS];
    make_row_map(source_rows);
    statgpu_table_params_init(&params);
    params.source_rows = source_rows;
    params.source_row_count = SOURCE_ROWS;

    source_rows[10] = source_rows[9];  /* a row twice */
    expect_kmeans_failure(result, &params, "strictly increasing");
    make_row_map(source_rows);
    source_rows[10] = source_rows[12];  /* out of order */
    expect_kmeans_failure(result, &params, "strictly increasing");
    make_row_map(source_rows);
    params.source_row_count = source_rows[OBSERVATIONS - 1];  /* the last row beyond the count */
    expect_kmeans_failure(result, &params, "not below source_row_count");
    params.source_row_count = OBSERVATIONS - 1;  /* fewer rows than observations */
    expect_kmeans_failure(result, &params, "fewer than");
    params.source_rows = NULL;  /* a count without a map must be n_obs */
    params.source_row_count = SOURCE_ROWS;
    expect_kmeans_failure(result, &params, "source_rows is NULL");

    statgpu_table_params_init(&params);
    const char *const one_name[2] = { "eruptions", NULL };
    params.variable_names = one_name;
    expect_kmeans_failure(result, &params, "variable_names[1]");

    /* Results made by hand: a label outside 0 .. k-1, a NaN, a NULL array. */
    int32_t label = result->labels[5];
    result->labels[5] = (int32_t)result->k;
    expect_kmeans_failure(result, NULL, "labels[5]");
    result->labels[5] = -1;
    expect_kmeans_failure(result, NULL, "labels[5]");
    result->labels[5] = label;
    double centroid = result->centroids[4];
    result->centroids[4] = NAN;
    expect_kmeans_failure(result, NULL, "not a finite number in the table centroids, row 2, column 2");
    result->centroids[4] = centroid;
    result->inertia = INFINITY;
    expect_kmeans_failure(result, NULL, "table summary, row 1, column 1");
    result->inertia = 1.0;
    /* Only the table asked for is checked: a one-table build need not read the rest. */
    result->centroids[4] = NAN;
    statgpu_table_params_init(&params);
    params.table_name = "labels";
    assert_int_equal(statgpu_kmeans_tables(g_context, result, &params, &set), STATGPU_OK);
    statgpu_table_set_destroy(set);
    result->centroids[4] = centroid;
    int32_t *labels = result->labels;
    result->labels = NULL;
    expect_kmeans_failure(result, NULL, "not a k-means result");
    result->labels = labels;

    assert_int_equal(statgpu_kmeans_tables(g_context, result, NULL, &set), STATGPU_OK);
    assert_string_equal(statgpu_context_last_error(g_context), "");
    statgpu_table_set_destroy(set);
    statgpu_kmeans_result_destroy(result);
}

/* ----- LTS ----- */

static void check_lts_tables(const statgpu_table_set *set, const statgpu_lts_result *result,
                             const char *const *terms, size_t source_row_count, const size_t *source_rows)
{
    assert_int_equal(statgpu_table_set_count(set), 5);
    const char *const names[] = { "coefficients", "weights", "residuals", "summary", "subset" };
    for (size_t j = 0; j < 5; ++j)
        assert_string_equal(statgpu_table_set_get(set, j)->name, names[j]);

    const statgpu_table *coefficients = statgpu_table_set_get(set, 0);
    assert_int_equal(coefficients->row_count, result->p);
    assert_int_equal(coefficients->column_count, 1);
    assert_string_equal(coefficients->column_headers[0], "coefficient");
    assert_string_equal(coefficients->row_label_header, "term");
    for (size_t j = 0; j < result->p; ++j) {
        assert_string_equal(coefficients->row_labels[j], terms[j]);
        assert_bits_equal(coefficients->values[j], result->coefficients[j]);
    }
    assert_all_numbers(coefficients);

    double weights[OBSERVATIONS + LEFT_OUT_COUNT];
    size_t outliers = 0;
    for (size_t i = 0; i < result->n_obs; ++i) {
        weights[i] = (double)result->weights[i];
        outliers += result->weights[i] == 0;
    }
    assert_int_equal(outliers, result->outlier_count);
    assert_per_row(statgpu_table_set_get(set, 1), "weight", source_row_count, source_rows, result->n_obs, weights);
    assert_per_row(statgpu_table_set_get(set, 2), "residual", source_row_count, source_rows, result->n_obs,
                   result->residuals);

    const char *summary_names[9];
    memcpy(summary_names, k_lts_summary_names, sizeof summary_names);
    if (result->criterion == STATGPU_LTS_MEDIAN)
        summary_names[0] = k_lms_objective_name;
    const double values[9] = { result->objective, (double)result->h, result->scale, result->raw_scale,
                               (double)result->outlier_count, result->criterion == STATGPU_LTS_MEDIAN ? 1.0 : 0.0,
                               (double)result->exact_fit, (double)result->n_obs,
                               (double)(source_row_count - result->n_obs) };
    assert_summary(statgpu_table_set_get(set, 3), summary_names, values, 9);

    const statgpu_table *subset = statgpu_table_set_get(set, 4);
    assert_int_equal(subset->row_count, result->h);
    assert_int_equal(subset->column_count, 1);
    assert_string_equal(subset->column_headers[0], "row");
    assert_null(subset->row_labels);
    assert_all_numbers(subset);
    for (size_t j = 0; j < result->h; ++j) {
        size_t observation = result->best_subset[j];
        size_t row = source_rows != NULL ? source_rows[observation] : observation;
        assert_bits_equal(subset->values[j], (double)row + 1.0);
        /* The subset's rows are the caller's rows that hold numbers in the per-row tables. */
        assert_int_equal(statgpu_table_set_get(set, 1)->cell_kinds[row], STATGPU_CELL_NUMBER);
    }
}

static void test_lts_tables_with_row_map_and_names(void **state)
{
    (void)state;
    double y[OBSERVATIONS], x[OBSERVATIONS * 2];
    make_regression(y, x, OBSERVATIONS, 21);
    statgpu_lts_result *result = fit_lts(y, x, OBSERVATIONS, 2, STATGPU_LTS_SQUARES, 1);
    assert_true(result->outlier_count >= OBSERVATIONS / 4);  /* the rows moved by 50 */

    size_t source_rows[OBSERVATIONS];
    make_row_map(source_rows);
    const char *const names[2] = { "Air.Flow", "Water.Temp" };
    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.variable_names = names;
    params.source_row_count = SOURCE_ROWS;
    params.source_rows = source_rows;
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_lts_tables(g_context, result, &params, &set), STATGPU_OK);
    const char *const terms[3] = { "(Intercept)", "Air.Flow", "Water.Temp" };
    check_lts_tables(set, result, terms, SOURCE_ROWS, source_rows);

    /* An outlier's weight 0 is a number; a row left out is no number at all. */
    const statgpu_table *weights = statgpu_table_set_find(set, "Weights");
    size_t zeros = 0, empty = 0;
    for (size_t row = 0; row < SOURCE_ROWS; ++row) {
        zeros += weights->cell_kinds[row] == STATGPU_CELL_NUMBER && weights->values[row] == 0.0;
        empty += weights->cell_kinds[row] == STATGPU_CELL_EMPTY;
    }
    assert_int_equal(zeros, result->outlier_count);
    assert_int_equal(empty, LEFT_OUT_COUNT);
    statgpu_table_set_destroy(set);
    statgpu_lts_result_destroy(result);
}

/* LMS, without an intercept, default names, no row map. */
static void test_lts_tables_lms_without_intercept(void **state)
{
    (void)state;
    double y[OBSERVATIONS], x[OBSERVATIONS * 2];
    make_regression(y, x, OBSERVATIONS, 22);
    statgpu_lts_result *result = fit_lts(y, x, OBSERVATIONS, 2, STATGPU_LTS_MEDIAN, 0);
    statgpu_table_set *set = NULL;
    assert_int_equal(statgpu_lts_tables(g_context, result, NULL, &set), STATGPU_OK);
    const char *const terms[2] = { "X1", "X2" };
    check_lts_tables(set, result, terms, OBSERVATIONS, NULL);
    assert_string_equal(statgpu_table_set_find(set, "summary")->texts[9], k_lms_objective_name);
    statgpu_table_set_destroy(set);

    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.table_name = "subset";
    assert_int_equal(statgpu_lts_tables(g_context, result, &params, &set), STATGPU_OK);
    assert_int_equal(statgpu_table_set_count(set), 1);
    assert_int_equal(statgpu_table_set_get(set, 0)->row_count, result->h);
    statgpu_table_set_destroy(set);

    params.table_name = "centroids";
    set = (statgpu_table_set *)&params;
    assert_int_equal(statgpu_lts_tables(g_context, result, &params, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(set);

    /* A best subset that is not ascending rows below n_obs is no LTS result. */
    size_t first = result->best_subset[0];
    result->best_subset[0] = result->n_obs;
    assert_int_equal(statgpu_lts_tables(g_context, result, NULL, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(set);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "best_subset[0]"));
    result->best_subset[0] = first;
    result->residuals[3] = NAN;
    assert_int_equal(statgpu_lts_tables(g_context, result, NULL, &set), STATGPU_ERROR_INVALID_ARGUMENT);
    assert_null(set);
    assert_non_null(strstr(statgpu_context_last_error(g_context), "table residuals, row 4"));
    statgpu_lts_result_destroy(result);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kmeans_tables_with_row_map_and_names),
        cmocka_unit_test(test_kmeans_tables_defaults),
        cmocka_unit_test(test_kmeans_summary_with_one_cluster),
        cmocka_unit_test(test_find_and_one_table),
        cmocka_unit_test(test_method_catalogue),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_lts_tables_with_row_map_and_names),
        cmocka_unit_test(test_lts_tables_lms_without_intercept),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
