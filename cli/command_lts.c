/*
 * command_lts.c: statgpu lts FILE: least trimmed squares regression of one
 * column of a CSV table on others, as Calc's LTSFIT.
 */
#include "tool.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static statgpu_status lts_tables(statgpu_context *context, const void *result, const statgpu_table_params *params,
                                 statgpu_table_set **out_set)
{
    return statgpu_lts_tables(context, result, params, out_set);
}

int command_lts(const options *opt, statgpu_context *context)
{
    statgpu_lts_params params;
    statgpu_lts_params_init(&params);
    if (opt->alpha_text != NULL && !parse_number(opt->alpha_text, &params.alpha))
        return fail_usage("--alpha must be a number from 0.5 to 1", opt->alpha_text);
    if (seed_option(opt, &params.seed) != 0
        || count_option(opt->starts_text, "--starts must be a whole number", &params.start_count) != 0)
        return EXIT_USAGE;
    params.intercept = !opt->no_intercept;
    params.criterion = opt->lms ? STATGPU_LTS_MEDIAN : STATGPU_LTS_SQUARES;
    const char *output = opt->output != NULL ? opt->output : statgpu_method_table_names("lts")[0];
    if (check_output_word("lts", output, "--output must be coefficients, weights, residuals, summary or subset") != 0)
        return EXIT_USAGE;

    double started = seconds_now();
    csv_table data = { 0 };
    int status = read_table(opt, opt->y_column != NULL ? opt->y_column : "1", &data);
    if (status != 0)
        return status;
    if (data.row_count == 0 && data.column_count == 0) {
        fprintf(stderr, "statgpu: %s is empty: no observations\n",
                strcmp(opt->path, "-") == 0 ? "standard input" : opt->path);
        csv_table_free(&data);
        return EXIT_COMPUTE;
    }
    if (data.column_count < 1 || (data.column_count < 2 && !params.intercept)) {
        fprintf(stderr, "statgpu: %s: lts needs a column for y and %s\n", opt->path,
                params.intercept ? "predictor columns (or the intercept alone)" : "at least one predictor column");
        csv_table_free(&data);
        return EXIT_USAGE;
    }
    double read_seconds = seconds_now() - started;
    size_t n = data.complete_count, n_vars = data.column_count - 1;
    started = seconds_now();
    statgpu_lts_result *result = NULL;
    statgpu_status engine_status = statgpu_lts(context, data.values, data.values + n, n, n_vars, n ? n : 1,
                                               &params, &result);
    double compute_seconds = seconds_now() - started;
    progress_end();
    if (engine_status != STATGPU_OK)
        return table_engine_failed(context, engine_status, &data);

    if (opt->as_table) {
        status = print_result_table(context, &data, (const char *const *)data.names + 1, output, lts_tables, result,
                                    true);
        if (status != 0) {
            statgpu_lts_result_destroy(result);
            csv_table_free(&data);
            return status;
        }
    } else if (strcmp(output, "coefficients") == 0) {
        puts("term,coefficient,raw_coefficient");
        for (size_t j = 0; j < result->p; ++j) {
            if (result->intercept && j == 0)
                fputs("(Intercept)", stdout);
            else
                print_field(data.names[1 + j - (size_t)(result->intercept != 0)]);
            printf(",%.17g,%.17g\n", result->coefficients[j], result->raw_coefficients[j]);
        }
    } else if (strcmp(output, "weights") == 0 || strcmp(output, "residuals") == 0) {
        /* The engine's tables; coefficients (with the raw fit's beside them),
         * subset and summary are the tool's own. */
        status = print_result_table(context, &data, (const char *const *)data.names + 1, output, lts_tables, result, opt->as_table);
        if (status != 0) {
            statgpu_lts_result_destroy(result);
            csv_table_free(&data);
            return status;
        }
    } else if (strcmp(output, "subset") == 0) {
        /* The best h-subset, as row numbers of the file (after its header). */
        size_t *row_of = malloc((n ? n : 1) * sizeof *row_of);
        if (row_of == NULL) {
            statgpu_lts_result_destroy(result);
            csv_table_free(&data);
            fprintf(stderr, "statgpu: out of memory\n");
            return EXIT_COMPUTE;
        }
        for (size_t row = 0, next = 0; row < data.row_count; ++row)
            if (data.complete[row])
                row_of[next++] = row;
        puts("row");
        for (size_t j = 0; j < result->h; ++j)
            printf("%zu\n", row_of[result->best_subset[j]] + 1);
        free(row_of);
    } else {
        puts("name,value");
        printf("criterion,%s\n", result->criterion == STATGPU_LTS_MEDIAN ? "lms" : "lts");
        printf("objective,%.17g\n", result->objective);
        printf("h,%zu\n", result->h);
        printf("alpha,%.17g\n", result->alpha);
        printf("scale,%.17g\n", result->scale);
        printf("raw_scale,%.17g\n", result->raw_scale);
        printf("outliers,%zu\n", result->outlier_count);
        printf("exact_fit,%d\n", result->exact_fit);
        printf("intercept,%d\n", result->intercept);
        printf("observations,%zu\n", result->n_obs);
        printf("rows_left_out,%zu\n", data.row_count - data.complete_count);
        printf("starts_evaluated,%zu\n", result->starts_evaluated);
        printf("c_steps,%zu\n", result->c_steps);
    }
    statgpu_lts_result_destroy(result);
    return finish_table_command(opt, context, &data, read_seconds, compute_seconds);
}
