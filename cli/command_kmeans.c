/*
 * command_kmeans.c: statgpu kmeans K FILE: k-means clusters of the rows of a
 * CSV table, as Calc's KMEANS.
 */
#include "tool.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *kmeans_init_name(statgpu_kmeans_init init)
{
    switch (init) {
    case STATGPU_KMEANS_INIT_PLUS_PLUS: return "k-means++";
    case STATGPU_KMEANS_INIT_PARALLEL:  return "k-means||";
    case STATGPU_KMEANS_INIT_GIVEN:     return "given";
    case STATGPU_KMEANS_INIT_AUTO:      break;
    }
    return "auto";
}

static statgpu_status kmeans_tables(statgpu_context *context, const void *result, const statgpu_table_params *params,
                                    statgpu_table_set **out_set)
{
    return statgpu_kmeans_tables(context, result, params, out_set);
}

int command_kmeans(const options *opt, statgpu_context *context)
{
    const char *k_text = opt->kmeans_k_text;
    long k = 0;
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.init = opt->kmeans_init;
    if (!parse_int(k_text, LONG_MIN, &k))
        return fail_usage("K must be a whole number of clusters", k_text);
    if (k < 0) {  /* a number, but no count of clusters: the engine's case of k = 0 */
        fprintf(stderr, "statgpu: invalid argument: k = %ld: at least one cluster is needed\n", k);
        return EXIT_COMPUTE;
    }
    if (run_options(opt, &params.restart_count, &params.max_iterations, &params.tolerance, &params.seed) != 0)
        return EXIT_USAGE;
    const char *output = output_word(opt, "kmeans", "--output must be centroids, labels, sizes or summary");
    if (output == NULL)
        return EXIT_USAGE;

    csv_table data = { 0 };
    double read_seconds = 0.0;
    int status = read_table_timed(opt, NULL, &data, &read_seconds);
    if (status != 0)
        return status;
    double started = seconds_now();
    statgpu_kmeans_result *result = NULL;
    statgpu_status engine_status = statgpu_kmeans(context, data.values, data.complete_count, data.column_count,
                                                  data.complete_count ? data.complete_count : 1, (size_t)k,
                                                  &params, &result);
    double compute_seconds = seconds_now() - started;
    progress_end();
    if (engine_status != STATGPU_OK)
        return table_engine_failed(context, engine_status, &data);

    /* The summary is the tool's own: keys for scripts, and more rows than
     * Calc's; every other Output is the engine's table. */
    if (strcmp(output, "summary") != 0 || opt->as_table) {
        status = print_result_table(context, &data, (const char *const *)data.names, output, kmeans_tables, result, opt->as_table);
        if (status != 0) {
            statgpu_kmeans_result_destroy(result);
            csv_table_free(&data);
            return status;
        }
    } else {
        puts("name,value");
        printf("inertia,%.17g\n", result->inertia);
        printf("total_ss,%.17g\n", result->total_ss);
        printf("iterations,%zu\n", result->iterations);
        printf("converged,%d\n", result->converged);
        printf("restarts,%zu\n", result->restart_count);
        printf("best_restart,%zu\n", result->best_restart + 1);
        printf("init,%s\n", kmeans_init_name(result->init));
        printf("observations,%zu\n", result->n_obs);
        printf("rows_left_out,%zu\n", data.row_count - data.complete_count);
    }
    statgpu_kmeans_result_destroy(result);
    return finish_table_command(opt, context, &data, read_seconds, compute_seconds);
}
