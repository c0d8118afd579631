/*
 * methods/bestsubset_tables.c: a best subset result as its named tables
 * (statgpu.h's statgpu_bestsubset_tables): the Output words of BESTSUBSET,
 * their headers and the summary's names, defined here once.
 */
#include "core/table.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { SG_SUBSET_SUBSETS, SG_SUBSET_WHICH, SG_SUBSET_COEFFICIENTS, SG_SUBSET_SUMMARY, SG_SUBSET_TABLE_COUNT };

static const char *const sg_subset_table_names[SG_SUBSET_TABLE_COUNT + 1] = {
    "subsets", "which", "coefficients", "summary", NULL
};
static const char *const sg_subset_table_titles[SG_SUBSET_TABLE_COUNT] = {
    "Best subsets of each size", "Predictors in each subset (1 = in)", "Coefficients of the chosen model",
    "Best subset regression summary"
};
const sg_table_catalogue sg_bestsubset_table_catalogue = {
    "bestsubset", sg_subset_table_names, sg_subset_table_titles, SG_SUBSET_TABLE_COUNT
};

static statgpu_status sg_check_subset_result(statgpu_context *context, const statgpu_bestsubset_result *result)
{
    if (result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "result is NULL");
    if (result->n_vars == 0 || result->subset_count == 0 || result->chosen >= result->subset_count
        || result->sizes == NULL || result->ranks == NULL || result->which == NULL || result->rss == NULL
        || result->r_squared == NULL || result->adjusted_r_squared == NULL || result->cp == NULL
        || result->bic_leaps == NULL || result->bic == NULL || result->press == NULL
        || result->validation_error == NULL || result->coefficients == NULL || result->standard_errors == NULL
        || result->coefficient_vars == NULL || result->dropped == NULL
        || result->coefficient_count > result->n_vars + 1)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "result is not a best subset result (n_vars %zu, subsets %zu, chosen %zu, or an array NULL)",
                       result->n_vars, result->subset_count, result->chosen);
    for (size_t c = 0; c < result->coefficient_count; ++c)
        if (result->coefficient_vars[c] != SIZE_MAX && result->coefficient_vars[c] >= result->n_vars)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "result->coefficient_vars[%zu] is %zu: not a predictor", c, result->coefficient_vars[c]);
    return STATGPU_OK;
}

/* The subset's predictors' names, ", "-separated, into text (truncated with
 * "..." when they do not fit). */
static void sg_subset_names(const sg_table_build *build, const statgpu_bestsubset_result *result, size_t row,
                            char *text, size_t text_bytes)
{
    size_t used = 0;
    text[0] = '\0';
    for (size_t v = 0; v < result->n_vars; ++v) {
        if (!result->which[row * result->n_vars + v])
            continue;
        char buffer[32];
        const char *name = sg_table_variable_name(build, v, buffer, sizeof buffer);
        int written = snprintf(text + used, text_bytes - used, "%s%s", used ? ", " : "", name);
        if (written < 0 || (size_t)written >= text_bytes - used) {
            if (text_bytes >= 4)
                memcpy(text + text_bytes - 4, "...", 4);
            return;
        }
        used += (size_t)written;
    }
}

static bool sg_add_subsets(sg_table_build *build, const statgpu_bestsubset_result *result)
{
    static const char *const headers[] = {
        "size", "rank", "RSS", "R2", "adjusted R2", "Cp", "BIC (leaps)", "BIC", "PRESS", "validation error",
        "chosen", "predictors"
    };
    size_t columns = sizeof headers / sizeof *headers, rows = result->subset_count;
    sg_table *table = sg_table_add(build, SG_SUBSET_SUBSETS, rows, columns);
    if (table == NULL)
        return false;
    for (size_t c = 0; c < columns; ++c)
        if (!sg_table_set_header(build, table, c, headers[c]))
            return false;
    double *values = sg_table_values(table);
    char text[4096];
    for (size_t r = 0; r < rows; ++r) {
        const double row_values[] = {
            (double)result->sizes[r], (double)result->ranks[r], result->rss[r], result->r_squared[r],
            result->adjusted_r_squared[r], result->cp[r], result->bic_leaps[r], result->bic[r], result->press[r],
            result->validation_error[r], r == result->chosen ? 1.0 : 0.0
        };
        for (size_t c = 0; c + 1 < columns; ++c) {
            if (isnan(row_values[c]))
                sg_table_set_empty(table, r, c);
            else
                values[r + rows * c] = row_values[c];
        }
        sg_subset_names(build, result, r, text, sizeof text);
        if (!sg_table_set_text(build, table, r, columns - 1, text))
            return false;
    }
    return true;
}

static bool sg_add_which(sg_table_build *build, const statgpu_bestsubset_result *result)
{
    size_t rows = result->subset_count, columns = 2 + result->n_vars;
    sg_table *table = sg_table_add(build, SG_SUBSET_WHICH, rows, columns);
    if (table == NULL || !sg_table_set_header(build, table, 0, "size") || !sg_table_set_header(build, table, 1, "rank"))
        return false;
    for (size_t v = 0; v < result->n_vars; ++v) {
        char buffer[32];
        if (!sg_table_set_header(build, table, 2 + v, sg_table_variable_name(build, v, buffer, sizeof buffer)))
            return false;
    }
    double *values = sg_table_values(table);
    for (size_t r = 0; r < rows; ++r) {
        values[r] = (double)result->sizes[r];
        values[r + rows] = (double)result->ranks[r];
        for (size_t v = 0; v < result->n_vars; ++v)
            values[r + rows * (2 + v)] = result->which[r * result->n_vars + v];
    }
    return true;
}

/* No row labels (a sheet shows only cells): the term is the first column. */
static bool sg_add_coefficients(sg_table_build *build, const statgpu_bestsubset_result *result)
{
    static const char *const headers[] = { "term", "coefficient", "standard error", "t value" };
    size_t rows = result->coefficient_count, columns = sizeof headers / sizeof *headers;
    sg_table *table = sg_table_add(build, SG_SUBSET_COEFFICIENTS, rows, columns);
    if (table == NULL)
        return false;
    for (size_t c = 0; c < columns; ++c)
        if (!sg_table_set_header(build, table, c, headers[c]))
            return false;
    double *values = sg_table_values(table);
    for (size_t c = 0; c < rows; ++c) {
        char buffer[32];
        size_t v = result->coefficient_vars[c];
        const char *term = v == SIZE_MAX ? "(Intercept)" : sg_table_variable_name(build, v, buffer, sizeof buffer);
        if (!sg_table_set_text(build, table, c, 0, term))
            return false;
        values[c + rows] = result->coefficients[c];
        values[c + 2 * rows] = result->standard_errors[c];
        if (result->standard_errors[c] > 0.0)
            values[c + 3 * rows] = result->coefficients[c] / result->standard_errors[c];
        else
            sg_table_set_empty(table, c, 3);
    }
    return true;
}

static bool sg_add_summary(sg_table_build *build, const statgpu_bestsubset_result *result)
{
    static const char *const criteria[] = {
        "criterion (validation error)", "criterion (Cp)", "criterion (BIC)", "criterion (adjusted R2)"
    };
    static const char *const validations[] = {
        "validation (PRESS: leave-one-out)", "validation (holdout)", "validation (k-fold)"
    };
    char dropped[4096] = "predictors left out as dependent on others";
    size_t used = strlen(dropped);
    for (size_t v = 0; v < result->n_vars; ++v) {
        if (!result->dropped[v])
            continue;
        char buffer[32];
        int written = snprintf(dropped + used, sizeof dropped - used, "%s%s", used > 44 ? ", " : ": ",
                               sg_table_variable_name(build, v, buffer, sizeof buffer));
        if (written < 0 || (size_t)written >= sizeof dropped - used)
            break;
        used += (size_t)written;
    }
    size_t chosen = result->chosen;
    const sg_summary_row rows[] = {
        { "chosen size (predictors)", (double)result->sizes[chosen] },
        { criteria[result->criterion <= STATGPU_SUBSET_BY_ADJR2 ? result->criterion : 0], (double)result->criterion },
        { validations[result->validation <= STATGPU_SUBSET_KFOLD ? result->validation : 0], (double)result->validation },
        { "folds (k-fold)", (double)(result->validation == STATGPU_SUBSET_KFOLD ? result->fold_count : 0) },
        { "rows held out (holdout)", (double)result->holdout_count },
        { "R2 of the chosen model", result->r_squared[chosen] },
        { "RSS of the chosen model", result->rss[chosen] },
        { "RSS of the full model", result->full_rss },
        { "RSS of the null model", result->null_rss },
        { "sigma2 (Cp's, from the full model)", result->sigma2 },
        { dropped, (double)result->dropped_count },
        { "subsets evaluated", (double)result->subsets_evaluated },
        { "observations used", (double)result->n_obs },
        { "rows left out (missing values)", (double)(build->source_row_count - result->n_obs) },
    };
    return sg_table_add_summary(build, SG_SUBSET_SUMMARY, rows, sizeof rows / sizeof *rows);
}

statgpu_status statgpu_bestsubset_tables(statgpu_context *context, const statgpu_bestsubset_result *result,
                                         const statgpu_table_params *params, statgpu_table_set **out_set)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_set == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_set is NULL");
    *out_set = NULL;
    statgpu_status status = sg_check_subset_result(context, result);
    if (status != STATGPU_OK)
        return status;
    sg_table_build build;
    status = sg_table_build_begin(&build, context, &sg_bestsubset_table_catalogue, params, result->n_obs,
                                  result->n_vars, out_set);
    if (status != STATGPU_OK)
        return status;
    if (sg_table_wanted(&build, SG_SUBSET_SUBSETS))
        sg_add_subsets(&build, result);
    if (sg_table_wanted(&build, SG_SUBSET_WHICH))
        sg_add_which(&build, result);
    if (sg_table_wanted(&build, SG_SUBSET_COEFFICIENTS))
        sg_add_coefficients(&build, result);
    if (sg_table_wanted(&build, SG_SUBSET_SUMMARY))
        sg_add_summary(&build, result);
    return sg_table_build_end(&build, out_set);
}
