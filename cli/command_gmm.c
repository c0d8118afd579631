/*
 * command_gmm.c: statgpu gmm K FILE: a Gaussian mixture of K components
 * fitted to the rows of a CSV table, as Calc's GMMFIT; prints any of its
 * tables. K may list candidates (1-6, 2,4,8) and --covariance be "all": the
 * model of the lowest BIC is chosen, and --output selection compares them.
 */
#include "tool.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static statgpu_status gmm_tables(statgpu_context *context, const void *result, const statgpu_table_params *params,
                                 statgpu_table_set **out_set)
{
    return statgpu_gmm_tables(context, result, params, out_set);
}

/* One whole number >= 0 at *cursor (digits only, within a long); its end in
 * *end, or 0 where there is none. */
static int parse_component_count(const char *cursor, long *value, const char **end)
{
    if (*cursor < '0' || *cursor > '9')
        return 0;
    char *stop = NULL;
    errno = 0;
    *value = strtol(cursor, &stop, 10);
    *end = stop;
    return errno == 0;
}

/* K: a whole number, or candidates for model choice: a comma-separated list
 * of whole numbers and ranges ("1-6", "2,4,8"), no item empty. The count of
 * values, 0 after a message. */
static size_t parse_component_counts(const char *text, size_t *values, size_t capacity, int *several)
{
    size_t count = 0;
    *several = strchr(text, ',') != NULL || (text[0] != '\0' && strchr(text + 1, '-') != NULL);
    const char *cursor = text;
    for (;;) {
        const char *end = NULL;
        long first = 0, last = 0;
        if (!parse_component_count(cursor, &first, &end))
            return 0;
        last = first;
        if (*end == '-' && !parse_component_count(end + 1, &last, &end))
            return 0;
        if ((*end != ',' && *end != '\0') || last < first || (unsigned long)(last - first) >= capacity - count)
            return 0;
        for (long step = 0; step <= last - first; ++step)
            values[count++] = (size_t)(first + step);
        if (*end == '\0')
            return count;
        cursor = end + 1;  /* past the comma: another item must follow */
    }
}

int command_gmm(const options *opt, statgpu_context *context)
{
    enum { MOST_CANDIDATES = 1024 };
    size_t counts[MOST_CANDIDATES];
    int several = 0;
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.reg_covar_relative = 1; /* as GMMFIT: the same fit in any units */
    long k = 0;
    if (parse_int(opt->kmeans_k_text, LONG_MIN, &k)) {
        if (k < 0) {
            fprintf(stderr, "statgpu: invalid argument: k = %ld: at least one component is needed\n", k);
            return EXIT_COMPUTE;
        }
        counts[0] = (size_t)k;
    } else if (parse_component_counts(opt->kmeans_k_text, counts, MOST_CANDIDATES, &several) == 0) {
        return fail_usage("K must be a whole number of components, or a list such as 1-6 or 2,4,8 (at most 1024)",
                          opt->kmeans_k_text);
    }
    size_t count_total = several ? 0 : 1;
    if (several)
        count_total = parse_component_counts(opt->kmeans_k_text, counts, MOST_CANDIDATES, &several);
    statgpu_gmm_covariance types[4] = { STATGPU_GMM_FULL };
    size_t type_count = 1;
    if (opt->covariance_text != NULL) {
        const char *const words[] = { "full", "tied", "diag", "spherical" };
        const statgpu_gmm_covariance all[] = { STATGPU_GMM_FULL, STATGPU_GMM_TIED, STATGPU_GMM_DIAG,
                                               STATGPU_GMM_SPHERICAL };
        type_count = 0;
        for (size_t j = 0; j < 4; ++j)
            if (strcmp(opt->covariance_text, words[j]) == 0 || strcmp(opt->covariance_text, "all") == 0)
                types[type_count++] = all[j];
        if (type_count == 0)
            return fail_usage("--covariance must be full, tied, diag, spherical or all", opt->covariance_text);
    }
    params.covariance = types[0];
    params.init = opt->gmm_init;
    if (run_options(opt, &params.restart_count, &params.max_iterations, &params.tolerance, &params.seed) != 0)
        return EXIT_USAGE;
    const char *output = output_word(opt, "gmm", "--output must be summary, weights, means, covariances, labels, "
                                         "probabilities, density or selection");
    if (output == NULL)
        return EXIT_USAGE;

    csv_table data = { 0 };
    double read_seconds = 0.0;
    int status = read_table_timed(opt, NULL, &data, &read_seconds);
    if (status != 0)
        return status;
    double started = seconds_now();
    statgpu_gmm_result *result = NULL;
    size_t ld = data.complete_count ? data.complete_count : 1;
    statgpu_status engine_status =
        several || type_count > 1
            ? statgpu_gmm_select(context, data.values, data.complete_count, data.column_count, ld, counts,
                                 count_total, types, type_count, &params, &result)
            : statgpu_gmm(context, data.values, data.complete_count, data.column_count, ld, counts[0], &params,
                          &result);
    double compute_seconds = seconds_now() - started;
    progress_end();
    if (engine_status != STATGPU_OK)
        return table_engine_failed(context, engine_status, &data);
    status = print_result_table(context, &data, (const char *const *)data.names, output, gmm_tables, result, opt->as_table);
    statgpu_gmm_result_destroy(result);
    if (status != 0) {
        csv_table_free(&data);
        return status;
    }
    return finish_table_command(opt, context, &data, read_seconds, compute_seconds);
}
