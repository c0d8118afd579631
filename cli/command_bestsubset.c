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

/* The index of word among words (NULL-terminated), fallback when word is
 * NULL, -1 when it is none of them. */
static int word_index(const char *word, const char *const *words, int fallback)
{
    if (word == NULL)
        return fallback;
    for (int w = 0; words[w] != NULL; ++w)
        if (strcmp(word, words[w]) == 0)
            return w;
    return -1;
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
        size_t found = n_vars, also = n_vars;  /* the first and a second predictor of that name */
        for (size_t v = 0; v < n_vars && also == n_vars; ++v)
            if (strcmp(data->names[1 + v], item) == 0) {
                if (found == n_vars)
                    found = v;
                else
                    also = v;
            }
        long position = 0;
        if (found == n_vars && parse_int(item, 1, &position) && (size_t)position <= n_vars)
            found = (size_t)position - 1;
        if (also != n_vars) {
            fprintf(stderr, "statgpu: %s: predictors %zu and %zu are both named '%s': give the position of the one"
                            " meant\n", option, found + 1, also + 1, item);
            status = EXIT_USAGE;
        } else if (found == n_vars) {
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

/* The predictors that the engine's rank test left out of the search, said
 * on stderr whatever the output (the summary names them too). */
static void report_dropped(const char *path, const csv_table *data, const statgpu_bestsubset_result *result)
{
    fprintf(stderr, "statgpu: %s: %s", path, result->dropped_count == 1 ? "predictor" : "predictors");
    const char *separator = " ";
    for (size_t v = 0; v < result->n_vars; ++v)
        if (result->dropped[v]) {
            fprintf(stderr, "%s'%s'", separator, data->names[1 + v]);
            separator = ", ";
        }
    fprintf(stderr, " left out of the search: %sa linear combination of the predictors before it%s\n",
            result->dropped_count == 1 ? "" : "each ", result->intercept ? ", or constant" : "");
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
    static const char *const validations[] = { "press", "holdout", "kfold", NULL };
    static const char *const criteria[] = { "validation", "cp", "bic", "adjr2", NULL };
    int validation = word_index(opt->validation_text, validations, 0);
    if (validation < 0)
        return fail_usage("--validation must be press, holdout or kfold", opt->validation_text);
    int criterion = word_index(opt->criterion_text, criteria, 0);
    if (criterion < 0)
        return fail_usage("--criterion must be validation, cp, bic or adjr2", opt->criterion_text);
    /* A share or a count for a validation not asked for would be ignored. */
    if (opt->holdout_text != NULL && validation != STATGPU_SUBSET_HOLDOUT)
        return fail_usage("--holdout needs --validation holdout", opt->holdout_text);
    if (opt->folds_text != NULL && validation != STATGPU_SUBSET_KFOLD)
        return fail_usage("--folds needs --validation kfold", opt->folds_text);
    params.validation = (statgpu_subset_validation)validation;
    params.criterion = (statgpu_subset_criterion)criterion;
    const char *output = output_word(opt, "bestsubset", "--output must be subsets, which, coefficients or summary");
    if (output == NULL)
        return EXIT_USAGE;

    csv_table data = { 0 };
    double read_seconds = 0.0;
    int status = read_table_timed(opt, opt->y_column != NULL ? opt->y_column : "1", &data, &read_seconds);
    if (status != 0)
        return status;
    if (data.column_count < 2) {
        fprintf(stderr, "statgpu: %s: bestsubset needs a column for y and predictor columns\n", opt->path);
        const int no_columns = data.column_count == 0;  /* read before csv_table_free clears it */
        csv_table_free(&data);
        return no_columns ? EXIT_COMPUTE : EXIT_USAGE;
    }
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
    double started = seconds_now();
    statgpu_bestsubset_result *result = NULL;
    statgpu_status engine_status = statgpu_bestsubset(context, data.values, data.values + n, n, n_vars, n ? n : 1,
                                                      &params, &result);
    double compute_seconds = seconds_now() - started;
    progress_end();
    free(force);
    if (engine_status != STATGPU_OK)
        return table_engine_failed(context, engine_status, &data);
    if (result->dropped_count > 0)
        report_dropped(opt->path, &data, result);
    status = print_result_table(context, &data, (const char *const *)data.names + 1, output, bestsubset_tables,
                                result, opt->as_table);
    statgpu_bestsubset_result_destroy(result);
    if (status != 0) {
        csv_table_free(&data);
        return status;
    }
    return finish_table_command(opt, context, &data, read_seconds, compute_seconds);
}
