/*
 * methods/lts_tables.c: an LTS (or LMS) result as its named tables
 * (statgpu.h's statgpu_lts_tables): the Output words of LTSFIT, their
 * headers, and the summary's names, defined here once.
 */
#include "core/table.h"
#include "internal.h"

enum { SG_LTS_COEFFICIENTS, SG_LTS_WEIGHTS, SG_LTS_RESIDUALS, SG_LTS_SUMMARY, SG_LTS_SUBSET, SG_LTS_TABLE_COUNT };

static const char *const sg_lts_table_names[SG_LTS_TABLE_COUNT + 1] = {
    "coefficients", "weights", "residuals", "summary", "subset", NULL
};
static const char *const sg_lts_table_titles[SG_LTS_TABLE_COUNT] = {
    "Coefficients (reweighted fit)", "Weights (0 = outlier)", "Residuals (reweighted fit)",
    "Robust regression summary", "Best h-subset (rows of the raw fit)"
};
const sg_table_catalogue sg_lts_table_catalogue = {
    "lts", sg_lts_table_names, sg_lts_table_titles, SG_LTS_TABLE_COUNT
};

/* A result made by hand could be anything; the tables read every array. */
static statgpu_status sg_check_lts_result(statgpu_context *context, const statgpu_lts_result *result)
{
    if (result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "result is NULL");
    if (result->p < 1 || result->p != result->n_vars + (result->intercept != 0) || result->h < 1
        || result->h > result->n_obs || result->coefficients == NULL || result->weights == NULL
        || result->residuals == NULL || result->best_subset == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "result is not an LTS result (p %zu, n_vars %zu, h %zu, n_obs %zu, or an array NULL)",
                       result->p, result->n_vars, result->h, result->n_obs);
    for (size_t j = 0; j < result->h; ++j)
        if (result->best_subset[j] >= result->n_obs || (j > 0 && result->best_subset[j] <= result->best_subset[j - 1]))
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "result->best_subset[%zu] is %zu: not an ascending row below n_obs %zu", j,
                           result->best_subset[j], result->n_obs);
    return STATGPU_OK;
}

static bool sg_add_coefficients(sg_table_build *build, const statgpu_lts_result *result)
{
    sg_table *table = sg_table_add(build, SG_LTS_COEFFICIENTS, result->p, 1);
    if (table == NULL || !sg_table_set_header(build, table, 0, "coefficient")
        || !sg_table_set_row_label_header(build, table, "term"))
        return false;
    double *values = sg_table_values(table);
    size_t first_predictor = result->intercept ? 1 : 0;
    for (size_t j = 0; j < result->p; ++j) {
        char name[32];
        const char *term = j < first_predictor ? "(Intercept)"  /* R's name for it */
                                               : sg_table_variable_name(build, j - first_predictor, name, sizeof name);
        if (!sg_table_set_row_label(build, table, j, term))
            return false;
        values[j] = result->coefficients[j];
    }
    return true;
}

static double sg_lts_weight(const void *result, size_t observation, size_t column)
{
    (void)column;
    return (double)((const statgpu_lts_result *)result)->weights[observation];
}

static double sg_lts_residual(const void *result, size_t observation, size_t column)
{
    (void)column;
    return ((const statgpu_lts_result *)result)->residuals[observation];
}

/* The names, order and values LTSFIT has shown since its first release. */
static bool sg_add_summary(sg_table_build *build, const statgpu_lts_result *result)
{
    int lms = result->criterion == STATGPU_LTS_MEDIAN;
    const sg_summary_row rows[] = {
        { lms ? "objective (h-th smallest squared residual)" : "objective (sum of the h smallest squared residuals)",
          result->objective },
        { "h (rows the raw fit explains)", (double)result->h },
        { "scale (reweighted fit)", result->scale },
        { "raw scale", result->raw_scale },
        { "outliers (weight 0)", (double)result->outlier_count },
        { "least median of squares (1 yes, 0 no)", lms ? 1.0 : 0.0 },
        { "exact fit (1 yes, 0 no)", (double)result->exact_fit },
        { "observations used", (double)result->n_obs },
        { "rows left out (missing values)", (double)(build->source_row_count - result->n_obs) },
    };
    return sg_table_add_summary(build, SG_LTS_SUMMARY, rows, sizeof rows / sizeof *rows);
}

/* Row numbers of the caller's data, so that they point at the rows the caller
 * sees, not at the observations the engine was given. */
static bool sg_add_subset(sg_table_build *build, const statgpu_lts_result *result)
{
    sg_table *table = sg_table_add(build, SG_LTS_SUBSET, result->h, 1);
    if (table == NULL || !sg_table_set_header(build, table, 0, "row"))
        return false;
    double *values = sg_table_values(table);
    for (size_t j = 0; j < result->h; ++j)
        values[j] = (double)sg_table_source_row(build, result->best_subset[j]) + 1.0;
    return true;
}

statgpu_status statgpu_lts_tables(statgpu_context *context, const statgpu_lts_result *result,
                                  const statgpu_table_params *params, statgpu_table_set **out_set)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_set == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_set is NULL");
    *out_set = NULL;
    statgpu_status status = sg_check_lts_result(context, result);
    if (status != STATGPU_OK)
        return status;
    sg_table_build build;
    status = sg_table_build_begin(&build, context, &sg_lts_table_catalogue, params, result->n_obs, result->n_vars,
                                  out_set);
    if (status != STATGPU_OK)
        return status;
    if (sg_table_wanted(&build, SG_LTS_COEFFICIENTS))
        sg_add_coefficients(&build, result);
    if (sg_table_wanted(&build, SG_LTS_WEIGHTS))
        sg_table_add_per_row_column(&build, SG_LTS_WEIGHTS, "weight", sg_lts_weight, result);
    if (sg_table_wanted(&build, SG_LTS_RESIDUALS))
        sg_table_add_per_row_column(&build, SG_LTS_RESIDUALS, "residual", sg_lts_residual, result);
    if (sg_table_wanted(&build, SG_LTS_SUMMARY))
        sg_add_summary(&build, result);
    if (sg_table_wanted(&build, SG_LTS_SUBSET))
        sg_add_subset(&build, result);
    return sg_table_build_end(&build, out_set);
}
