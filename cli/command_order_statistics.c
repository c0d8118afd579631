/*
 * command_order_statistics.c: statgpu median, small, large and quantile: an
 * order statistic of a CSV column or of raw binary values.
 */
#define _POSIX_C_SOURCE 200809L
#include "tool.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int parse_probabilities(const char *text, double **out, size_t *count)
{
    size_t capacity = 1;
    for (const char *c = text; *c; ++c)
        capacity += *c == ',';
    double *values = malloc(capacity * sizeof *values);
    if (values == NULL)
        return 0;
    char *copy = strdup(text), *save = NULL;
    size_t n = 0;
    for (char *token = strtok_r(copy, ",", &save); token; token = strtok_r(NULL, ",", &save)) {
        if (!parse_number(token, &values[n])) {
            free(copy);
            free(values);
            return 0;
        }
        ++n;
    }
    free(copy);
    if (n == 0) {
        free(values);
        return 0;
    }
    *out = values;
    *count = n;
    return 1;
}

int command_order_statistic(const options *opt, statgpu_context *context)
{
    double started = seconds_now();
    csv_column data = { 0 };
    int status = opt->format == FORMAT_CSV ? read_csv(opt, &data) : read_binary(opt, &data);
    if (status != 0) {
        free(data.values);
        return status;
    }
    double read_seconds = seconds_now() - started;

    statgpu_vector numbers = { data.values, data.count,
                               opt->format == FORMAT_F32 ? STATGPU_DTYPE_FLOAT32 : STATGPU_DTYPE_FLOAT64,
                               STATGPU_MEMORY_HOST };
    double *p = NULL, *results = NULL, single = 0;
    size_t p_count = 1;
    long k = 0;
    statgpu_status engine_status = STATGPU_OK;
    if ((opt->command_id == COMMAND_SMALL || opt->command_id == COMMAND_LARGE)
        && (opt->k_text == NULL || !parse_int(opt->k_text, 1, &k))) {
        free(data.values);
        return fail_usage("-k needs a whole number of at least 1", opt->k_text);
    }
    if (opt->command_id == COMMAND_QUANTILE
        && (opt->p_text == NULL || !parse_probabilities(opt->p_text, &p, &p_count))) {
        free(data.values);
        return fail_usage("-p needs probabilities such as 0.5 or 0.1,0.5,0.9", opt->p_text);
    }
    if (k > 0 && data.count > 0 && (unsigned long)k > data.count) {
        /* Said here: for large the engine sees only the rank n-k+1. */
        fprintf(stderr, "statgpu: invalid argument: k = %ld lies outside 1..%zu (the number of values)\n", k,
                data.count);
        free(data.values);
        return EXIT_COMPUTE;
    }

    started = seconds_now();
    if (opt->command_id == COMMAND_MEDIAN) {
        engine_status = statgpu_vector_median(context, &numbers, &single);
    } else if (opt->command_id == COMMAND_SMALL) {
        size_t rank = (size_t)k;
        engine_status = statgpu_vector_select(context, &numbers, &rank, 1, &single);
    } else if (opt->command_id == COMMAND_LARGE) {
        /* The k-th largest is the (n-k+1)-th smallest. */
        size_t rank = data.count > 0 ? data.count - (size_t)k + 1 : 1;
        engine_status = statgpu_vector_select(context, &numbers, &rank, 1, &single);
    } else {
        results = malloc(p_count * sizeof *results);
        engine_status = results == NULL ? STATGPU_ERROR_OUT_OF_MEMORY
                                        : statgpu_vector_quantiles(context, &numbers, p, p_count, results);
    }
    double compute_seconds = seconds_now() - started;

    if (engine_status != STATGPU_OK) {
        status = engine_failed(context, engine_status);
    } else if (results != NULL) {
        for (size_t j = 0; j < p_count; ++j)
            printf("%.17g\t%.17g\n", p[j], results[j]);
    } else {
        printf("%.17g\n", single);
    }
    if (opt->show_timing && engine_status == STATGPU_OK) {
        statgpu_backend_report report;
        statgpu_context_backend_report(context, &report);
        fprintf(stderr, "statgpu: %zu values, read %.3f s, computed in %.6f s on %s%s%s\n", data.count, read_seconds,
                compute_seconds, statgpu_backend_name(report.last_used), report.note[0] ? " -- " : "", report.note);
    }
    free(results);
    free(p);
    free(data.values);
    return status;
}
