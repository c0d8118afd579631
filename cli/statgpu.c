/*
 * statgpu.c: the statgpu command-line tool, on the same engine as the Calc
 * add-in, for data beyond a sheet, batch use and benchmarks.
 *
 *   statgpu median   FILE [options]
 *   statgpu small    FILE -k K [options]       k-th smallest
 *   statgpu large    FILE -k K [options]       k-th largest
 *   statgpu quantile FILE -p P[,P...] [options]  PERCENTILE.INC
 *   statgpu info     [--backend B] [--device D]
 *   statgpu kmeans   K FILE [options]        k-means clusters of the rows
 *   statgpu lts      FILE [options]          least trimmed squares regression
 *
 * Exit status: 0 success, 1 the computation failed (the engine's message is
 * printed; this includes numbers the model cannot take, such as K = 0 or
 * --alpha 0.3), 2 bad arguments (an option's value that is not a number or
 * word it takes) or an unreadable file. Never a crash.
 *
 * kmeans and lts print CSV: a header line, then the table. Per-row outputs
 * (labels, weights, residuals) have a line per data row of the input, numbered
 * as the file's rows after its header; a row left out for an empty or NA
 * field has an empty value.
 *
 * The CSV rules are csv.h's; the command line is parsed in arguments.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "arguments.h"
#include "csv.h"
#include "statgpu.h"

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------- parsing */

/* A number given on the command line: decimal, finite, as in a CSV file. */
static int parse_number(const char *text, double *value)
{
    return csv_field_classify(text, value) == CSV_FIELD_NUMBER;
}

/* The CSV input of opt->path ("-" for standard input), or NULL after a message. */
static FILE *open_input(const options *opt)
{
    FILE *file = strcmp(opt->path, "-") == 0 ? stdin : fopen(opt->path, "rb");
    if (file == NULL)
        fprintf(stderr, "statgpu: cannot open %s: %s\n", opt->path, strerror(errno));
    return file;
}

static csv_settings settings_of(const options *opt)
{
    csv_settings settings = { opt->path, opt->delimiter, opt->header, opt->column, opt->columns };
    return settings;
}

/* The column of a CSV file that the order statistics read. */
static int read_csv(const options *opt, csv_column *out)
{
    FILE *file = open_input(opt);
    if (file == NULL)
        return EXIT_USAGE;
    csv_settings settings = settings_of(opt);
    int status = csv_read_column(&settings, file, out);
    if (file != stdin)
        fclose(file);
    return status;
}

/* The table of a CSV file for kmeans and lts: y_spec's column first (lts's
 * response), then those of --columns. */
static int read_table(const options *opt, const char *y_spec, csv_table *out)
{
    FILE *file = open_input(opt);
    if (file == NULL)
        return EXIT_USAGE;
    csv_settings settings = settings_of(opt);
    int status = csv_read_table(&settings, file, y_spec, out);
    if (file != stdin)
        fclose(file);
    return status;
}

/* The engine's failure: its message, led by the status's own text unless
 * the message already begins with it. */
static int engine_failed(statgpu_context *context, statgpu_status status)
{
    const char *message = statgpu_context_last_error(context);
    const char *name = statgpu_status_string(status);
    if (strncmp(message, name, strlen(name)) == 0)
        fprintf(stderr, "statgpu: %s\n", message);
    else
        fprintf(stderr, "statgpu: %s%s%s\n", name, message[0] ? ": " : "", message);
    return EXIT_COMPUTE;
}

static int read_binary(const options *opt, csv_column *out)
{
    FILE *file = fopen(opt->path, "rb");
    if (file == NULL) {
        fprintf(stderr, "statgpu: cannot open %s: %s\n", opt->path, strerror(errno));
        return EXIT_USAGE;
    }
    size_t element_bytes = opt->format == FORMAT_F64 ? 8 : 4;
    int status = 0;
    if (fseek(file, 0, SEEK_END) != 0) {
        fprintf(stderr, "statgpu: %s is not a regular file\n", opt->path);
        fclose(file);
        return EXIT_USAGE;
    }
    long file_bytes = ftell(file);
    rewind(file);
    if (file_bytes < 0 || (size_t)file_bytes % element_bytes != 0) {
        fprintf(stderr, "statgpu: %s holds %ld bytes, not a whole number of %zu-byte values\n", opt->path,
                file_bytes, element_bytes);
        fclose(file);
        return EXIT_USAGE;
    }
    size_t count = (size_t)file_bytes / element_bytes;
    /* Floats stay floats: the engine selects on them as they are, exactly. */
    out->values = malloc((count ? count : 1) * element_bytes);
    if (out->values == NULL) {
        fprintf(stderr, "statgpu: cannot allocate %zu values\n", count);
        fclose(file);
        return EXIT_USAGE;
    }
    if (fread(out->values, element_bytes, count, file) != count)
        status = EXIT_USAGE;
    if (status != 0)
        fprintf(stderr, "statgpu: error reading %s\n", opt->path);
    out->count = count;
    fclose(file);
    return status;
}

/* ------------------------------------------------------------ commands */

static int print_info(statgpu_context *context)
{
    statgpu_backend_report report;
    statgpu_context_backend_report(context, &report);
    char text[512];
    statgpu_backend_describe(&report, text, sizeof text);
    printf("statgpu %s\n%s\n", statgpu_version_string(), text);
    if (report.cuda_available)
        printf("backend: cuda\ndevice: %s\ncuda runtime: %d.%d\ncuda driver: %d.%d\n", report.device_name,
               report.cuda_runtime_version / 1000, report.cuda_runtime_version % 1000 / 10,
               report.cuda_driver_version / 1000, report.cuda_driver_version % 1000 / 10);
    else
        printf("backend: cpu\n");
    printf("cpu threads: %d\n", report.cpu_thread_count);
    if (report.note[0] != '\0')
        printf("note: %s\n", report.note);
    return 0;
}

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

static int run_command(const options *opt, statgpu_context *context)
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
    if ((strcmp(opt->command, "small") == 0 || strcmp(opt->command, "large") == 0)
        && (opt->k_text == NULL || !parse_int(opt->k_text, 1, &k))) {
        free(data.values);
        return fail_usage("-k needs a whole number of at least 1", opt->k_text);
    }
    if (strcmp(opt->command, "quantile") == 0 && (opt->p_text == NULL || !parse_probabilities(opt->p_text, &p, &p_count))) {
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
    if (strcmp(opt->command, "median") == 0) {
        engine_status = statgpu_vector_median(context, &numbers, &single);
    } else if (strcmp(opt->command, "small") == 0) {
        size_t rank = (size_t)k;
        engine_status = statgpu_vector_select(context, &numbers, &rank, 1, &single);
    } else if (strcmp(opt->command, "large") == 0) {
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

/* ------------------------------------------------------------- tables */

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
static void print_field(const char *text)
{
    if (strpbrk(text, ",\"\n\r") == NULL) {
        fputs(text, stdout);
        return;
    }
    putchar('"');
    for (; *text; ++text) {
        if (*text == '"')
            putchar('"');
        putchar(*text);
    }
    putchar('"');
}

/* A whole number argument (>= 0) such as a seed or a count. */
static int parse_count(const char *text, uint64_t *value)
{
    if (text == NULL || *text == '\0' || *text == '-' || *text == '+' || isspace((unsigned char)*text))
        return 0;
    char *end;
    errno = 0;
    unsigned long long parsed = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0')
        return 0;
    *value = (uint64_t)parsed;
    return 1;
}

/* An optional whole-number option: *value stays as it is when text is NULL;
 * 0, or the usage failure with message. */
static int count_option(const char *text, const char *message, size_t *value)
{
    uint64_t parsed = 0;
    if (text == NULL)
        return 0;
    if (!parse_count(text, &parsed))
        return fail_usage(message, text);
    *value = (size_t)parsed;
    return 0;
}

/* The seed option into *seed (unchanged when absent); 0, or the usage failure. */
static int seed_option(const options *opt, uint64_t *seed)
{
    if (opt->seed_text != NULL && !parse_count(opt->seed_text, seed))
        return fail_usage("--seed must be a whole number from 0", opt->seed_text);
    return 0;
}

/* A line per data row, numbered as the rows of the file after its header:
 * the value of the next complete row, or nothing for a row left out. */
static void print_per_row(const csv_table *t, const char *name, double (*value)(const void *result, size_t i),
                          const void *result)
{
    printf("row,%s\n", name);
    for (size_t row = 0, next = 0; row < t->row_count; ++row) {
        if (t->complete[row])
            printf("%zu,%.17g\n", row + 1, value(result, next++));
        else
            printf("%zu,\n", row + 1);
    }
}

static void report_timing(statgpu_context *context, const csv_table *t, double read_seconds, double compute_seconds)
{
    statgpu_backend_report report;
    statgpu_context_backend_report(context, &report);
    fprintf(stderr, "statgpu: %zu rows (%zu used) x %zu columns, read %.3f s, computed in %.6f s on %s%s%s\n",
            t->row_count, t->complete_count, t->column_count, read_seconds, compute_seconds,
            statgpu_backend_name(report.last_used), report.note[0] ? " -- " : "", report.note);
}

/* A failed engine call of a table command: frees the table, says why. */
static int table_engine_failed(statgpu_context *context, statgpu_status status, csv_table *t)
{
    csv_table_free(t);
    return engine_failed(context, status);
}

/* The end of a table command that succeeded: the timing when asked for, the
 * table freed. */
static int finish_table_command(const options *opt, statgpu_context *context, csv_table *t, double read_seconds,
                                double compute_seconds)
{
    if (opt->show_timing)
        report_timing(context, t, read_seconds, compute_seconds);
    csv_table_free(t);
    return 0;
}

/* ------------------------------------------------------------ kmeans */

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

/* A row's cluster, 1-based as shown. */
static double kmeans_cluster_of_row(const void *result, size_t i)
{
    return (double)((const statgpu_kmeans_result *)result)->labels[i] + 1;
}

static int run_kmeans(const options *opt, statgpu_context *context, const char *k_text)
{
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
    if (count_option(opt->restarts_text, "--restarts must be a whole number", &params.restart_count) != 0
        || count_option(opt->max_iter_text, "--max-iter must be a whole number", &params.max_iterations) != 0)
        return EXIT_USAGE;
    if (opt->tol_text != NULL && !parse_number(opt->tol_text, &params.tolerance))
        return fail_usage("--tol must be a number", opt->tol_text);
    if (seed_option(opt, &params.seed) != 0)
        return EXIT_USAGE;
    const char *output = opt->output != NULL ? opt->output : "centroids";
    if (strcmp(output, "centroids") != 0 && strcmp(output, "labels") != 0 && strcmp(output, "sizes") != 0
        && strcmp(output, "summary") != 0)
        return fail_usage("--output must be centroids, labels, sizes or summary", output);

    double started = seconds_now();
    csv_table data = { 0 };
    int status = read_table(opt, NULL, &data);
    if (status != 0)
        return status;
    double read_seconds = seconds_now() - started;
    started = seconds_now();
    statgpu_kmeans_result *result = NULL;
    statgpu_status engine_status = statgpu_kmeans(context, data.values, data.complete_count, data.column_count,
                                                  data.complete_count ? data.complete_count : 1, (size_t)k,
                                                  &params, &result);
    double compute_seconds = seconds_now() - started;
    if (engine_status != STATGPU_OK)
        return table_engine_failed(context, engine_status, &data);

    if (strcmp(output, "centroids") == 0) {
        fputs("cluster", stdout);
        for (size_t v = 0; v < result->n_vars; ++v) {
            putchar(',');
            print_field(data.names[v]);
        }
        putchar('\n');
        for (size_t j = 0; j < result->k; ++j) {
            printf("%zu", j + 1);
            for (size_t v = 0; v < result->n_vars; ++v)
                printf(",%.17g", result->centroids[j + result->k * v]);
            putchar('\n');
        }
    } else if (strcmp(output, "labels") == 0) {
        print_per_row(&data, "cluster", kmeans_cluster_of_row, result);
    } else if (strcmp(output, "sizes") == 0) {
        puts("cluster,size");
        for (size_t j = 0; j < result->k; ++j)
            printf("%zu,%zu\n", j + 1, result->cluster_sizes[j]);
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

/* --------------------------------------------------------------- lts */

static double lts_weight_of_row(const void *result, size_t i)
{
    return (double)((const statgpu_lts_result *)result)->weights[i];
}

static double lts_residual_of_row(const void *result, size_t i)
{
    return ((const statgpu_lts_result *)result)->residuals[i];
}

static int run_lts(const options *opt, statgpu_context *context)
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
    const char *output = opt->output != NULL ? opt->output : "coefficients";
    const char *const outputs[] = { "coefficients", "weights", "residuals", "summary", "subset" };
    int known = 0;
    for (size_t j = 0; j < sizeof outputs / sizeof *outputs; ++j)
        known |= strcmp(output, outputs[j]) == 0;
    if (!known)
        return fail_usage("--output must be coefficients, weights, residuals, summary or subset", output);

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
    if (engine_status != STATGPU_OK)
        return table_engine_failed(context, engine_status, &data);

    if (strcmp(output, "coefficients") == 0) {
        puts("term,coefficient,raw_coefficient");
        for (size_t j = 0; j < result->p; ++j) {
            if (result->intercept && j == 0)
                fputs("(Intercept)", stdout);
            else
                print_field(data.names[1 + j - (size_t)(result->intercept != 0)]);
            printf(",%.17g,%.17g\n", result->coefficients[j], result->raw_coefficients[j]);
        }
    } else if (strcmp(output, "weights") == 0 || strcmp(output, "residuals") == 0) {
        if (strcmp(output, "weights") == 0)
            print_per_row(&data, "weight", lts_weight_of_row, result);
        else
            print_per_row(&data, "residual", lts_residual_of_row, result);
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

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0)
        return printf("statgpu %s\n", statgpu_version_string()), 0;
    options opt;
    int parsed = parse_arguments(argc, argv, &opt);
    if (parsed != ARGUMENTS_RUN)
        return parsed;

    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = opt.backend;
    params.device = opt.device;
    params.thread_count = opt.thread_count;
    statgpu_context *context = NULL;
    if (statgpu_context_create(&params, &context) != STATGPU_OK) {
        fprintf(stderr, "statgpu: cannot create an engine context\n");
        return EXIT_COMPUTE;
    }
    int status = strcmp(opt.command, "info") == 0     ? print_info(context)
                 : strcmp(opt.command, "kmeans") == 0 ? run_kmeans(&opt, context, opt.kmeans_k_text)
                 : strcmp(opt.command, "lts") == 0    ? run_lts(&opt, context)
                                                      : run_command(&opt, context);
    statgpu_context_destroy(context);
    return status;
}
