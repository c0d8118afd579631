/*
 * methods/kmeans_tables.c: a k-means result as its named tables (statgpu.h's
 * statgpu_kmeans_tables): the Output words of KMEANS, their headers, and the
 * summary's names, defined here once.
 */
#include "core/table.h"
#include "internal.h"

#include <stdio.h>

enum { SG_KMEANS_CENTROIDS, SG_KMEANS_LABELS, SG_KMEANS_SIZES, SG_KMEANS_SUMMARY, SG_KMEANS_TABLE_COUNT };

static const char *const sg_kmeans_table_names[SG_KMEANS_TABLE_COUNT + 1] = {
    "centroids", "labels", "sizes", "summary", NULL
};
static const char *const sg_kmeans_table_titles[SG_KMEANS_TABLE_COUNT] = {
    "Cluster centroids", "Cluster of each row", "Cluster sizes", "k-means summary"
};
const sg_table_catalogue sg_kmeans_table_catalogue = {
    "kmeans", sg_kmeans_table_names, sg_kmeans_table_titles, SG_KMEANS_TABLE_COUNT
};

/* A result made by hand could be anything; the tables read every array. */
static statgpu_status sg_check_kmeans_result(statgpu_context *context, const statgpu_kmeans_result *result)
{
    if (result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "result is NULL");
    if (result->k < 1 || result->n_obs < result->k || result->n_vars < 1 || result->centroids == NULL
        || result->labels == NULL || result->cluster_sizes == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "result is not a k-means result (k %zu, n_obs %zu, n_vars %zu, or an array NULL)",
                       result->k, result->n_obs, result->n_vars);
    for (size_t i = 0; i < result->n_obs; ++i)
        if (result->labels[i] < 0 || (size_t)result->labels[i] >= result->k)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "result->labels[%zu] is %d, not in 0 .. %zu",
                           i, (int)result->labels[i], result->k - 1);
    return STATGPU_OK;
}

static bool sg_add_centroids(sg_table_build *build, const statgpu_kmeans_result *result)
{
    sg_table *table = sg_table_add(build, SG_KMEANS_CENTROIDS, result->k, result->n_vars);
    if (table == NULL || !sg_table_number_rows(build, table, "cluster"))
        return false;
    for (size_t v = 0; v < result->n_vars; ++v) {
        char name[32];
        if (!sg_table_set_header(build, table, v, sg_table_variable_name(build, v, name, sizeof name)))
            return false;
    }
    /* The result's layout is the table's: k x n_vars, leading dimension k. */
    double *values = sg_table_values(table);
    for (size_t cell = 0; cell < result->k * result->n_vars; ++cell)
        values[cell] = result->centroids[cell];
    return true;
}

static double sg_kmeans_label(const void *result, size_t observation, size_t column)
{
    (void)column;
    return (double)((const statgpu_kmeans_result *)result)->labels[observation] + 1.0;
}

static bool sg_add_sizes(sg_table_build *build, const statgpu_kmeans_result *result)
{
    sg_table *table = sg_table_add(build, SG_KMEANS_SIZES, result->k, 1);
    if (table == NULL || !sg_table_set_header(build, table, 0, "size")
        || !sg_table_number_rows(build, table, "cluster"))
        return false;
    double *values = sg_table_values(table);
    for (size_t j = 0; j < result->k; ++j)
        values[j] = (double)result->cluster_sizes[j];
    return true;
}

/* The names, order and values KMEANS has shown since its first release. */
static bool sg_add_summary(sg_table_build *build, const statgpu_kmeans_result *result)
{
    /* With every row alike (k = 1), there is nothing to explain: the share is 0. */
    double explained = result->between_share;
    const sg_summary_row rows[] = {
        { "inertia (within-cluster sum of squares)", result->inertia },
        { "total sum of squares", result->total_ss },
        { "between / total sum of squares", explained },
        { "iterations", (double)result->iterations },
        { "converged (1 yes, 0 no)", (double)result->converged },
        { "restarts", (double)result->restart_count },
        { "best restart", (double)(result->best_restart + 1) },
        { "observations used", (double)result->n_obs },
        { "rows left out (missing values)", (double)(build->source_row_count - result->n_obs) },
    };
    return sg_table_add_summary(build, SG_KMEANS_SUMMARY, rows, sizeof rows / sizeof *rows);
}

statgpu_status statgpu_kmeans_tables(statgpu_context *context, const statgpu_kmeans_result *result,
                                     const statgpu_table_params *params, statgpu_table_set **out_set)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_set == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_set is NULL");
    *out_set = NULL;
    statgpu_status status = sg_check_kmeans_result(context, result);
    if (status != STATGPU_OK)
        return status;
    sg_table_build build;
    status = sg_table_build_begin(&build, context, &sg_kmeans_table_catalogue, params, result->n_obs,
                                  result->n_vars, out_set);
    if (status != STATGPU_OK)
        return status;
    if (sg_table_wanted(&build, SG_KMEANS_CENTROIDS))
        sg_add_centroids(&build, result);
    if (sg_table_wanted(&build, SG_KMEANS_LABELS))
        sg_table_add_per_row_column(&build, SG_KMEANS_LABELS, "cluster", sg_kmeans_label, result);
    if (sg_table_wanted(&build, SG_KMEANS_SIZES))
        sg_add_sizes(&build, result);
    if (sg_table_wanted(&build, SG_KMEANS_SUMMARY))
        sg_add_summary(&build, result);
    return sg_table_build_end(&build, out_set);
}
