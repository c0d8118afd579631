/*
 * methods/igmm_tables.c: inverse Gaussian mixtures as their named tables
 * (statgpu.h's statgpu_igmm_tables): the Output words of IGMMFIT, their
 * headers and the statuses' words, defined here once.
 */
#include "core/table.h"
#include "internal.h"

#include <stdio.h>

enum { SG_IGMM_PARAMETERS, SG_IGMM_SUMMARY, SG_IGMM_LABELS, SG_IGMM_TABLE_COUNT };

static const char *const sg_igmm_table_names[SG_IGMM_TABLE_COUNT + 1] = { "parameters", "summary", "labels", NULL };
static const char *const sg_igmm_table_titles[SG_IGMM_TABLE_COUNT] = {
    "Inverse Gaussian mixture parameters", "Inverse Gaussian mixture summary", "Most likely component of each value"
};
const sg_table_catalogue sg_igmm_table_catalogue = {
    "igmm", sg_igmm_table_names, sg_igmm_table_titles, SG_IGMM_TABLE_COUNT
};

const char *statgpu_igmm_status_string(int32_t status)
{
    switch (status) {
    case STATGPU_IGMM_FITTED:       return "fitted";
    case STATGPU_IGMM_NOT_POSITIVE: return "a value is not positive";
    case STATGPU_IGMM_TOO_FEW:      return "fewer than 3 values a component";
    case STATGPU_IGMM_CONSTANT:     return "every value equal";
    case STATGPU_IGMM_OUT_OF_RANGE: return "values too far from ordinary size (more than 1e300 apart, or subnormal), "
                                           "or so large and so close together that lambda is beyond 1e308";
    }
    return "unknown status";
}

/* A data set's name: the caller's variable name, else its number. */
static bool sg_igmm_set_cell(sg_table_build *build, sg_table *table, size_t rows, size_t row, size_t column,
                             size_t set)
{
    char name[32];
    if (build->params.variable_names != NULL)
        return sg_table_set_text(build, table, row, column, sg_table_variable_name(build, set, name, sizeof name));
    sg_table_values(table)[row + rows * column] = (double)(set + 1);
    return true;
}

/* A row per data set and component: data set, component, alpha, mu, lambda
 * (empty for a data set that was not fitted). */
static bool sg_add_parameters(sg_table_build *build, const statgpu_igmm_result *r)
{
    static const char *const headers[] = { "data set", "component", "alpha", "mu", "lambda" };
    const size_t rows = r->set_count * r->k;
    sg_table *table = sg_table_add(build, SG_IGMM_PARAMETERS, rows, 5);
    if (table == NULL)
        return false;
    for (size_t c = 0; c < 5; ++c)
        if (!sg_table_set_header(build, table, c, headers[c]))
            return false;
    double *values = sg_table_values(table);
    for (size_t s = 0; s < r->set_count; ++s)
        for (size_t j = 0; j < r->k; ++j) {
            size_t row = s * r->k + j;
            if (!sg_igmm_set_cell(build, table, rows, row, 0, s))
                return false;
            values[row + rows * 1] = (double)(j + 1);
            const double cells[3] = { r->alpha[row], r->mu[row], r->lambda[row] };
            for (size_t c = 0; c < 3; ++c) {
                values[row + rows * (2 + c)] = cells[c];
                if (r->status[s] != STATGPU_IGMM_FITTED)
                    sg_table_set_empty(table, row, 2 + c);
            }
        }
    return true;
}

/* A row per data set: data set, values, log-likelihood, iterations,
 * converged, best start, re-seeded components, status (text). */
static bool sg_add_summary(sg_table_build *build, const statgpu_igmm_result *r)
{
    static const char *const headers[] = { "data set", "values", "log-likelihood", "iterations", "converged",
                                           "best start", "re-seeded", "status" };
    enum { COLUMNS = sizeof headers / sizeof *headers };
    const size_t rows = r->set_count;
    sg_table *table = sg_table_add(build, SG_IGMM_SUMMARY, rows, COLUMNS);
    if (table == NULL)
        return false;
    for (size_t c = 0; c < COLUMNS; ++c)
        if (!sg_table_set_header(build, table, c, headers[c]))
            return false;
    double *values = sg_table_values(table);
    for (size_t s = 0; s < rows; ++s) {
        if (!sg_igmm_set_cell(build, table, rows, s, 0, s))
            return false;
        const double cells[5] = { r->log_likelihood[s], (double)r->iterations[s], (double)r->converged[s],
                                  (double)(r->best_start[s] + 1), (double)r->reseed_count[s] };
        values[s + rows * 1] = (double)r->lengths[s];
        for (size_t c = 0; c < 5; ++c) {
            values[s + rows * (2 + c)] = cells[c];
            if (r->status[s] != STATGPU_IGMM_FITTED)
                sg_table_set_empty(table, s, 2 + c);
        }
        if (!sg_table_set_text(build, table, s, COLUMNS - 1, statgpu_igmm_status_string(r->status[s])))
            return false;
    }
    return true;
}

/* A column per data set, a row per value (the longest data set's count):
 * the most likely component, 1 to k; empty below a shorter data set's end
 * and in a data set that was not fitted. */
static bool sg_add_labels(sg_table_build *build, const statgpu_igmm_result *r)
{
    size_t rows = 0;
    for (size_t s = 0; s < r->set_count; ++s)
        if (r->lengths[s] > rows)
            rows = r->lengths[s];
    sg_table *table = sg_table_add(build, SG_IGMM_LABELS, rows, r->set_count);
    if (table == NULL || !sg_table_number_rows(build, table, "value"))
        return false;
    double *values = sg_table_values(table);
    for (size_t s = 0; s < r->set_count; ++s) {
        char name[32];
        if (!sg_table_set_header(build, table, s, sg_table_variable_name(build, s, name, sizeof name)))
            return false;
        for (size_t i = 0; i < rows; ++i) {
            int32_t label = i < r->lengths[s] ? r->labels[r->offsets[s] + i] : -1;
            if (label < 0)
                sg_table_set_empty(table, i, s);
            else
                values[i + rows * s] = (double)label + 1.0;
        }
    }
    return true;
}

statgpu_status statgpu_igmm_tables(statgpu_context *context, const statgpu_igmm_result *result,
                                   const statgpu_table_params *params, statgpu_table_set **out_set)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_set == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_set is NULL");
    *out_set = NULL;
    if (result == NULL || result->set_count == 0 || result->k == 0 || result->status == NULL
        || result->labels == NULL || result->lengths == NULL || result->offsets == NULL || result->alpha == NULL
        || result->mu == NULL || result->lambda == NULL || result->log_likelihood == NULL
        || result->iterations == NULL || result->converged == NULL || result->best_start == NULL
        || result->reseed_count == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "result is not an inverse Gaussian mixture");
    /* A result put together by hand: each status one of the enum's, each
     * label a component or -1 (the values of a set not fitted). */
    for (size_t s = 0; s < result->set_count; ++s) {
        if (result->status[s] < STATGPU_IGMM_FITTED || result->status[s] > STATGPU_IGMM_OUT_OF_RANGE)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "data set %zu has status %d, not a set status",
                           s + 1, (int)result->status[s]);
        for (size_t i = 0; i < result->lengths[s]; ++i) {
            const int32_t label = result->labels[result->offsets[s] + i];
            if (label < -1 || (label >= 0 && (size_t)label >= result->k))
                return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                               "data set %zu, value %zu: label %d is not a component of the %zu", s + 1, i + 1,
                               (int)label, result->k);
        }
    }
    sg_table_build build;
    statgpu_status status = sg_table_build_begin(&build, context, &sg_igmm_table_catalogue, params, 0,
                                                 result->set_count, out_set);
    if (status != STATGPU_OK)
        return status;
    if (sg_table_wanted(&build, SG_IGMM_PARAMETERS))
        sg_add_parameters(&build, result);
    if (sg_table_wanted(&build, SG_IGMM_SUMMARY))
        sg_add_summary(&build, result);
    if (sg_table_wanted(&build, SG_IGMM_LABELS))
        sg_add_labels(&build, result);
    return sg_table_build_end(&build, out_set);
}
