/*
 * command_gmm.c: statgpu gmm K FILE: a Gaussian mixture of K components
 * fitted to the rows of a CSV table, as Calc's GMMFIT; prints any of its
 * tables.
 */
#include "tool.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static statgpu_status gmm_tables(statgpu_context *context, const void *result, const statgpu_table_params *params,
                                 statgpu_table_set **out_set)
{
    return statgpu_gmm_tables(context, result, params, out_set);
}

int command_gmm(const options *opt, statgpu_context *context)
{
    long k = 0;
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    if (!parse_int(opt->kmeans_k_text, LONG_MIN, &k))
        return fail_usage("K must be a whole number of components", opt->kmeans_k_text);
    if (k < 0) {
        fprintf(stderr, "statgpu: invalid argument: k = %ld: at least one component is needed\n", k);
        return EXIT_COMPUTE;
    }
    if (opt->covariance_text != NULL) {
        const char *const words[] = { "full", "tied", "diag", "spherical" };
        const statgpu_gmm_covariance types[] = { STATGPU_GMM_FULL, STATGPU_GMM_TIED, STATGPU_GMM_DIAG,
                                                 STATGPU_GMM_SPHERICAL };
        int known = 0;
        for (size_t j = 0; j < 4; ++j)
            if (strcmp(opt->covariance_text, words[j]) == 0) {
                params.covariance = types[j];
                known = 1;
            }
        if (!known)
            return fail_usage("--covariance must be full, tied, diag or spherical", opt->covariance_text);
    }
    if (run_options(opt, &params.restart_count, &params.max_iterations, &params.tolerance, &params.seed) != 0)
        return EXIT_USAGE;
    const char *output = opt->output != NULL ? opt->output : statgpu_method_table_names("gmm")[0];
    if (check_output_word("gmm", output,
                          "--output must be summary, weights, means, covariances, labels, probabilities or density")
        != 0)
        return EXIT_USAGE;

    double started = seconds_now();
    csv_table data = { 0 };
    int status = read_table(opt, NULL, &data);
    if (status != 0)
        return status;
    double read_seconds = seconds_now() - started;
    started = seconds_now();
    statgpu_gmm_result *result = NULL;
    statgpu_status engine_status = statgpu_gmm(context, data.values, data.complete_count, data.column_count,
                                               data.complete_count ? data.complete_count : 1, (size_t)k, &params,
                                               &result);
    double compute_seconds = seconds_now() - started;
    if (engine_status != STATGPU_OK)
        return table_engine_failed(context, engine_status, &data);
    status = print_result_table(context, &data, (const char *const *)data.names, output, gmm_tables, result);
    statgpu_gmm_result_destroy(result);
    if (status != 0) {
        csv_table_free(&data);
        return status;
    }
    return finish_table_command(opt, context, &data, read_seconds, compute_seconds);
}
