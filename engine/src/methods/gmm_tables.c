/*
 * methods/gmm_tables.c: a Gaussian mixture as its named tables (statgpu.h's
 * statgpu_gmm_tables): the Output words of GMMFIT, their headers and the
 * summary's names, defined here once.
 */
#include "core/table.h"
#include "internal.h"

#include <stdio.h>

enum {
    SG_GMM_SUMMARY, SG_GMM_WEIGHTS, SG_GMM_MEANS, SG_GMM_COVARIANCES, SG_GMM_LABELS, SG_GMM_PROBABILITIES,
    SG_GMM_DENSITY, SG_GMM_SELECTION, SG_GMM_TABLE_COUNT
};

static const char *const sg_gmm_table_names[SG_GMM_TABLE_COUNT + 1] = {
    "summary", "weights", "means", "covariances", "labels", "probabilities", "density", "selection", NULL
};
static const char *const sg_gmm_table_titles[SG_GMM_TABLE_COUNT] = {
    "Gaussian mixture summary", "Mixture weights", "Component means", "Component covariances",
    "Most likely component of each row", "Component probabilities of each row", "Log density of each row",
    "Model selection by BIC"
};
const sg_table_catalogue sg_gmm_table_catalogue = {
    "gmm", sg_gmm_table_names, sg_gmm_table_titles, SG_GMM_TABLE_COUNT
};

static const char *sg_gmm_type_name(statgpu_gmm_covariance type)
{
    switch (type) {
    case STATGPU_GMM_FULL:      return "full";
    case STATGPU_GMM_TIED:      return "tied";
    case STATGPU_GMM_DIAG:      return "diag";
    case STATGPU_GMM_SPHERICAL: return "spherical";
    }
    return "?";
}

static statgpu_status sg_check_gmm_result(statgpu_context *context, const statgpu_gmm_result *result)
{
    if (result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "result is NULL");
    if (result->k < 1 || result->n_obs < result->k || result->n_vars < 1 || result->weights == NULL
        || result->means == NULL || result->covariances == NULL || result->labels == NULL
        || result->responsibilities == NULL || result->row_log_likelihood == NULL
        || result->covariance < STATGPU_GMM_FULL || result->covariance > STATGPU_GMM_SPHERICAL
        || result->candidate_count < 1 || result->candidates == NULL || result->best_candidate >= result->candidate_count)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "result is not a Gaussian mixture (k %zu, n_obs %zu, n_vars %zu, or an array NULL)",
                       result->k, result->n_obs, result->n_vars);
    for (size_t i = 0; i < result->n_obs; ++i)
        if (result->labels[i] < 0 || (size_t)result->labels[i] >= result->k)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "result->labels[%zu] is %d, not in 0 .. %zu",
                           i, (int)result->labels[i], result->k - 1);
    return STATGPU_OK;
}

static bool sg_add_weights(sg_table_build *build, const statgpu_gmm_result *result)
{
    sg_table *table = sg_table_add(build, SG_GMM_WEIGHTS, result->k, 1);
    if (table == NULL || !sg_table_set_header(build, table, 0, "weight")
        || !sg_table_number_rows(build, table, "component"))
        return false;
    double *values = sg_table_values(table);
    for (size_t j = 0; j < result->k; ++j)
        values[j] = result->weights[j];
    return true;
}

static bool sg_set_variable_headers(sg_table_build *build, sg_table *table, size_t count)
{
    for (size_t v = 0; v < count; ++v) {
        char name[32];
        if (!sg_table_set_header(build, table, v, sg_table_variable_name(build, v, name, sizeof name)))
            return false;
    }
    return true;
}

static bool sg_add_means(sg_table_build *build, const statgpu_gmm_result *result)
{
    sg_table *table = sg_table_add(build, SG_GMM_MEANS, result->k, result->n_vars);
    if (table == NULL || !sg_table_number_rows(build, table, "component")
        || !sg_set_variable_headers(build, table, result->n_vars))
        return false;
    double *values = sg_table_values(table);  /* k x n_vars, leading dimension k: the result's layout */
    for (size_t cell = 0; cell < result->k * result->n_vars; ++cell)
        values[cell] = result->means[cell];
    return true;
}

/* full: k stacked d x d blocks (row labels "component j, variable"); tied:
 * one d x d block; diag: k x d variances; spherical: k x 1 variance. */
static bool sg_add_covariances(sg_table_build *build, const statgpu_gmm_result *result)
{
    const size_t k = result->k, d = result->n_vars;
    const statgpu_gmm_covariance type = result->covariance;
    size_t rows = type == STATGPU_GMM_FULL ? k * d : type == STATGPU_GMM_TIED ? d : k;
    size_t columns = type == STATGPU_GMM_SPHERICAL ? 1 : d;
    sg_table *table = sg_table_add(build, SG_GMM_COVARIANCES, rows, columns);
    if (table == NULL)
        return false;
    if (type == STATGPU_GMM_SPHERICAL) {
        if (!sg_table_set_header(build, table, 0, "variance"))
            return false;
    } else if (!sg_set_variable_headers(build, table, d)) {
        return false;
    }
    double *values = sg_table_values(table);
    if (type == STATGPU_GMM_FULL || type == STATGPU_GMM_TIED) {
        if (!sg_table_set_row_label_header(build, table, type == STATGPU_GMM_FULL ? "component, variable" : "variable"))
            return false;
        size_t blocks = type == STATGPU_GMM_FULL ? k : 1;
        for (size_t j = 0; j < blocks; ++j)
            for (size_t r = 0; r < d; ++r) {
                char variable[32], label[64];
                const char *name = sg_table_variable_name(build, r, variable, sizeof variable);
                if (type == STATGPU_GMM_FULL)
                    snprintf(label, sizeof label, "%zu, %s", j + 1, name);
                else
                    snprintf(label, sizeof label, "%s", name);
                if (!sg_table_set_row_label(build, table, j * d + r, label))
                    return false;
                for (size_t c = 0; c < d; ++c)
                    values[j * d + r + rows * c] = result->covariances[j * d * d + r + d * c];
            }
    } else {
        if (!sg_table_number_rows(build, table, "component"))
            return false;
        for (size_t cell = 0; cell < rows * columns; ++cell)  /* k x d or k, leading dimension k */
            values[cell] = result->covariances[cell];
    }
    return true;
}

static double sg_gmm_label(const void *result, size_t observation, size_t column)
{
    (void)column;
    return (double)((const statgpu_gmm_result *)result)->labels[observation] + 1.0;
}

static double sg_gmm_probability(const void *result, size_t observation, size_t column)
{
    const statgpu_gmm_result *r = result;
    return r->responsibilities[observation + r->n_obs * column];
}

static double sg_gmm_density(const void *result, size_t observation, size_t column)
{
    (void)column;
    return ((const statgpu_gmm_result *)result)->row_log_likelihood[observation];
}

static bool sg_add_probabilities(sg_table_build *build, const statgpu_gmm_result *result)
{
    sg_table *table = sg_table_add_per_row(build, SG_GMM_PROBABILITIES, result->k, sg_gmm_probability, result);
    if (table == NULL)
        return false;
    for (size_t j = 0; j < result->k; ++j) {
        char header[32];
        snprintf(header, sizeof header, "%zu", j + 1);
        if (!sg_table_set_header(build, table, j, header))
            return false;
    }
    return true;
}

static bool sg_add_summary(sg_table_build *build, const statgpu_gmm_result *result)
{
    char kind[64];
    snprintf(kind, sizeof kind, "covariance type (0 full, 1 tied, 2 diag, 3 spherical): %s",
             sg_gmm_type_name(result->covariance));
    const sg_summary_row rows[] = {
        { "log-likelihood", result->log_likelihood },
        { "BIC (lower is better; mclust's is its negative)", result->bic },
        { "AIC (lower is better)", result->aic },
        { "parameters", (double)result->parameter_count },
        { "components", (double)result->k },
        { kind, (double)result->covariance },
        { "iterations", (double)result->iterations },
        { "converged (1 yes, 0 no)", (double)result->converged },
        { "restarts", (double)result->restart_count },
        { "best restart", (double)(result->best_restart + 1) },
        { "covariances repaired", (double)result->regularised_count },
        { "observations used", (double)result->n_obs },
        { "rows left out (missing values)", (double)(build->source_row_count - result->n_obs) },
    };
    return sg_table_add_summary(build, SG_GMM_SUMMARY, rows, sizeof rows / sizeof *rows);
}

/* A row per candidate: k, covariance type, log-likelihood, parameters, BIC,
 * AIC, iterations, converged, best (1 on the chosen one) and its singular
 * components (a candidate with any is chosen only where every one has); a
 * candidate that could not be fitted has its numbers empty. */
static bool sg_add_selection(sg_table_build *build, const statgpu_gmm_result *result)
{
    static const char *const headers[] = { "k", "covariance", "log-likelihood", "parameters", "BIC", "AIC",
                                           "iterations", "converged", "best", "singular components" };
    enum { COLUMNS = sizeof headers / sizeof *headers };
    const size_t rows = result->candidate_count;
    sg_table *table = sg_table_add(build, SG_GMM_SELECTION, rows, COLUMNS);
    if (table == NULL || !sg_table_number_rows(build, table, "candidate"))
        return false;
    for (size_t c = 0; c < COLUMNS; ++c)
        if (!sg_table_set_header(build, table, c, headers[c]))
            return false;
    double *values = sg_table_values(table);
    for (size_t r = 0; r < rows; ++r) {
        const statgpu_gmm_candidate *candidate = &result->candidates[r];
        const double cells[COLUMNS] = { (double)candidate->k, 0.0, candidate->log_likelihood,
                                        (double)candidate->parameter_count, candidate->bic, candidate->aic,
                                        (double)candidate->iterations, (double)candidate->converged,
                                        r == result->best_candidate ? 1.0 : 0.0,
                                        (double)candidate->singular_components };
        for (size_t c = 0; c < COLUMNS; ++c)
            values[r + rows * c] = cells[c];
        if (!sg_table_set_text(build, table, r, 1, sg_gmm_type_name(candidate->covariance)))
            return false;
        if (candidate->status != STATGPU_OK)
            for (size_t c = 2; c < COLUMNS; ++c)
                if (c != 8)  /* best: 0 */
                    sg_table_set_empty(table, r, c);
    }
    return true;
}

statgpu_status statgpu_gmm_tables(statgpu_context *context, const statgpu_gmm_result *result,
                                  const statgpu_table_params *params, statgpu_table_set **out_set)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_set == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_set is NULL");
    *out_set = NULL;
    statgpu_status status = sg_check_gmm_result(context, result);
    if (status != STATGPU_OK)
        return status;
    sg_table_build build;
    status = sg_table_build_begin(&build, context, &sg_gmm_table_catalogue, params, result->n_obs, result->n_vars,
                                  out_set);
    if (status != STATGPU_OK)
        return status;
    if (sg_table_wanted(&build, SG_GMM_SUMMARY))
        sg_add_summary(&build, result);
    if (sg_table_wanted(&build, SG_GMM_WEIGHTS))
        sg_add_weights(&build, result);
    if (sg_table_wanted(&build, SG_GMM_MEANS))
        sg_add_means(&build, result);
    if (sg_table_wanted(&build, SG_GMM_COVARIANCES))
        sg_add_covariances(&build, result);
    if (sg_table_wanted(&build, SG_GMM_LABELS))
        sg_table_add_per_row_column(&build, SG_GMM_LABELS, "component", sg_gmm_label, result);
    if (sg_table_wanted(&build, SG_GMM_PROBABILITIES))
        sg_add_probabilities(&build, result);
    if (sg_table_wanted(&build, SG_GMM_DENSITY))
        sg_table_add_per_row_column(&build, SG_GMM_DENSITY, "log density", sg_gmm_density, result);
    if (sg_table_wanted(&build, SG_GMM_SELECTION))
        sg_add_selection(&build, result);
    return sg_table_build_end(&build, out_set);
}
