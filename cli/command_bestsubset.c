/*
 * command_bestsubset.c: statgpu bestsubset FILE: best subset regression of
 * one column of a CSV table on others, as Calc's BESTSUBSET.
 */
#include "tool.h"

#include <stdlib.h>
#include <string.h>

static statgpu_status bestsubset_tables(statgpu_context *context, const void *result,
                                        const statgpu_table_params *params, statgpu_table_set **out_set)
{
    return statgpu_bestsubset_tables(context, result, params, out_set);
}

/* Marks the predictors of a comma-separated list (names, else 1-based
 * positions among the predictors) with mark; 0, or the usage failure. */
static int mark_predictors(const char *list, const csv_table *data, int8_t mark, int8_t *force, const char *option)
{
    if (list == NULL)
        return 0;
    size_t n_vars = data->column_count - 1;
    char *copy = strdup(list);
    if (copy == NULL) {
        fprintf(stderr, "statgpu: out of memory\n");
        return EXIT_COMPUTE;
    }
    int status = 0;
    for (char *item = strtok(copy, ","); item != NULL && status == 0; item = strtok(NULL, ",")) {
        size_t found = n_vars;
        for (size_t v = 0; v < n_vars && found == n_vars; ++v)
            if (strcmp(data->names[1 + v], item) == 0)
                found = v;
        long position = 0;
        if (found == n_vars && parse_int(item, 1, &position) && (size_t)position <= n_vars)
            found = (size_t)position - 1;
        if (found == n_vars) {
            char message[96];
            snprintf(message, sizeof message, "%s names no predictor", option);
            status = fail_usage(message, item);
        } else if (force[found] != 0 && force[found] != mark) {
            status = fail_usage("a predictor is both forced in and left out", item);
        } else {
            force[found] = mark;
        }
    }
    free(copy);
    return status;
}

int command_bestsubset(const options *opt, statgpu_context *context)
{
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    if (seed_option(opt, &params.seed) != 0
        || count_option(opt->max_size_text, "--max-size must be a whole number", &params.max_size) != 0
        || count_option(opt->nbest_text, "--nbest must be a whole number from 1", &params.nbest) != 0
        || count_option(opt->folds_text, "--folds must be a whole number from 2", &params.fold_count) != 0)
        return EXIT_USAGE;
    if (opt->holdout_text != NULL && !parse_number(opt->holdout_text, &params.holdout_fraction))
        return fail_usage("--holdout must be a number between 0 and 1", opt->holdout_text);
    params.intercept = !opt->no_intercept;
    if (opt->validation_text != NULL) {
        const char *const words[] = { "press", "holdout", "kfold" };
        size_t w = 0;
        while (w < 3 && strcmp(opt->validation_text, words[w]) != 0)
            ++w;
        if (w == 3)
            return fail_usage("--validation must be press, holdout or kfold", opt->validation_text);
        params.validation = (statgpu_subset_validation)w;
    }
    if (opt->criterion_text != NULL) {
        const char *const words[] = { "validation", "cp", "bic", "adjr2" };
        size_t w = 0;
        while (w < 4 && strcmp(opt->criterion_text, words[w]) != 0)
            ++w;
        if (w == 4)
            return fail_usage("--criterion must be validation, cp, bic or adjr2", opt->criterion_text);
        params.criterion = (statgpu_subset_criterion)w;
    }
    const char *output = opt->output != NULL ? opt->output : statgpu_method_table_names("bestsubset")[0];
    if (check_output_word("bestsubset", output, "--output must be subsets, which, coefficients or summary") != 0)
        return EXIT_USAGE;

    double started = seconds_now();
    csv_table data = { 0 };
    int status = read_table(opt, opt->y_column != NULL ? opt->y_column : "1", &data);
    if (status != 0)
        return status;
    if (data.column_count < 2) {
        fprintf(stderr, "statgpu: %s: bestsubset needs a column for y and predictor columns\n", opt->path);
        csv_table_free(&data);
        return data.column_count == 0 ? EXIT_COMPUTE : EXIT_USAGE;
    }
    double read_seconds = seconds_now() - started;
    size_t n = data.complete_count, n_vars = data.column_count - 1;
    int8_t *force = calloc(n_vars, sizeof *force);
    if (force == NULL) {
        csv_table_free(&data);
        fprintf(stderr, "statgpu: out of memory\n");
        return EXIT_COMPUTE;
    }
    status = mark_predictors(opt->force_in, &data, 1, force, "--force-in");
    if (status == 0)
        status = mark_predictors(opt->force_out, &data, -1, force, "--force-out");
    if (status != 0) {
        free(force);
        csv_table_free(&data);
        return status;
    }
    params.force = force;
    started = seconds_now();
    statgpu_bestsubset_result *result = NULL;
    statgpu_status engine_status = statgpu_bestsubset(context, data.values, data.values + n, n, n_vars, n ? n : 1,
                                                      &params, &result);
    double compute_seconds = seconds_now() - started;
    free(force);
    if (engine_status != STATGPU_OK)
        return table_engine_failed(context, engine_status, &data);
    status = print_result_table(context, &data, (const char *const *)data.names + 1, output, bestsubset_tables,
                                result, opt->as_table);
    statgpu_bestsubset_result_destroy(result);
    if (status != 0) {
        csv_table_free(&data);
        return status;
    }
    return finish_table_command(opt, context, &data, read_seconds, compute_seconds);
}
