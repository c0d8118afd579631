/*
 * command_igmm.c: statgpu igmm K FILE: a mixture of K inverse Gaussians
 * fitted to every column of a CSV table, each column a data set (its empty
 * or NA fields skipped, so columns may differ in length), as Calc's IGMMFIT;
 * prints any of its tables.
 */
#include "tool.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static statgpu_status igmm_tables(statgpu_context *context, const void *result, const statgpu_table_params *params,
                                  statgpu_table_set **out_set)
{
    return statgpu_igmm_tables(context, result, params, out_set);
}

int command_igmm(const options *opt, statgpu_context *context)
{
    long k = 0;
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    if (!parse_int(opt->kmeans_k_text, LONG_MIN, &k))
        return fail_usage("K must be a whole number of components", opt->kmeans_k_text);
    if (k < 1) {
        fprintf(stderr, "statgpu: invalid argument: k = %ld: at least one component is needed\n", k);
        return EXIT_COMPUTE;
    }
    size_t unused_restarts = 1;
    if (count_option(opt->starts_text, "--starts must be a whole number", &params.start_count) != 0
        || run_options(opt, &unused_restarts, &params.max_iterations, &params.tolerance, &params.seed) != 0)
        return EXIT_USAGE;
    const char *output = output_word(opt, "igmm", "--output must be parameters, summary or labels");
    if (output == NULL)
        return EXIT_USAGE;

    csv_table data = { 0 };
    double read_seconds = 0.0;
    int status = read_table_timed(opt, NULL, &data, &read_seconds);
    if (status != 0)
        return status;

    /* Each column's numbers, in order, the missing ones skipped. */
    const size_t n = data.complete_count, sets = data.column_count;
    double *packed = malloc((n * sets > 0 ? n * sets : 1) * sizeof *packed);
    const double **columns = malloc((sets ? sets : 1) * sizeof *columns);
    size_t *lengths = calloc(sets ? sets : 1, sizeof *lengths);
    if (packed == NULL || columns == NULL || lengths == NULL) {
        free(packed);
        free(columns);
        free(lengths);
        csv_table_free(&data);
        fprintf(stderr, "statgpu: out of memory\n");
        return EXIT_COMPUTE;
    }
    for (size_t c = 0; c < sets; ++c) {
        columns[c] = packed + n * c;
        for (size_t i = 0; i < n; ++i)
            if (!isnan(data.values[i + n * c]))
                packed[n * c + lengths[c]++] = data.values[i + n * c];
    }
    double started = seconds_now();
    statgpu_igmm_result *result = NULL;
    statgpu_status engine_status = statgpu_igmm(context, columns, lengths, sets, (size_t)k, &params, &result);
    double compute_seconds = seconds_now() - started;
    progress_end();
    free(packed);
    free(columns);
    free(lengths);
    if (engine_status != STATGPU_OK)
        return table_engine_failed(context, engine_status, &data);
    /* A data set left unfitted is said on stderr; none fitted is a failure. */
    size_t fitted = 0;
    for (size_t s = 0; s < sets; ++s) {
        if (result->status[s] == STATGPU_IGMM_FITTED)
            ++fitted;
        else
            fprintf(stderr, "statgpu: %s: data set %s not fitted: %s\n", opt->path, data.names[s],
                    statgpu_igmm_status_string(result->status[s]));
    }
    if (fitted == 0) {
        fprintf(stderr, "statgpu: %s: no data set could be fitted\n", opt->path);
        statgpu_igmm_result_destroy(result);
        csv_table_free(&data);
        return EXIT_COMPUTE;
    }

    /* No row map: a data set's rows are its own values. */
    csv_table whole = data;
    unsigned char every = 1;
    whole.complete = &every;
    whole.row_count = 0;
    whole.complete_count = 0;
    status = print_result_table(context, &whole, (const char *const *)data.names, output, igmm_tables, result,
                                opt->as_table);
    statgpu_igmm_result_destroy(result);
    if (status != 0) {
        csv_table_free(&data);
        return status;
    }
    return finish_table_command(opt, context, &data, read_seconds, compute_seconds);
}
