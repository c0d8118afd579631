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

#include "statgpu.h"

enum { EXIT_COMPUTE = 1, EXIT_USAGE = 2 };

typedef enum input_format { FORMAT_CSV, FORMAT_F64, FORMAT_F32 } input_format;
typedef enum header_mode { HEADER_AUTO, HEADER_YES, HEADER_NO } header_mode;

typedef struct options {
    const char     *command;
    const char     *path;
    input_format    format;
    header_mode     header;
    const char     *column;      /* 1-based number or header name; NULL = first */
    char            delimiter;   /* 0 = detect */
    statgpu_backend backend;
    int             device;
    int             thread_count;
    const char     *k_text;
    const char     *p_text;
    int             show_timing;
    /* kmeans and lts: the table's columns and what to print */
    const char     *columns;     /* comma-separated numbers or names; NULL = all */
    const char     *output;      /* NULL = the command's default table */
    const char     *seed_text;
    /* kmeans */
    const char     *restarts_text;
    const char     *max_iter_text;
    const char     *tol_text;
    statgpu_kmeans_init kmeans_init;
    /* lts */
    const char     *y_column;    /* number or name; NULL = the first column */
    const char     *alpha_text;
    const char     *starts_text;
    int             no_intercept;
    int             lms;
} options;

static void usage(FILE *out)
{
    fputs("usage: statgpu COMMAND [FILE] [options]\n"
          "commands:\n"
          "  median FILE              the median (as Calc's MEDIAN)\n"
          "  small FILE -k K          the k-th smallest (as SMALL)\n"
          "  large FILE -k K          the k-th largest (as LARGE)\n"
          "  quantile FILE -p P,...   quantiles (as PERCENTILE.INC), one line each\n"
          "  info                     the backend and device in use\n"
          "  kmeans K FILE            k-means clustering of the rows into K clusters (as Calc's KMEANS)\n"
          "  lts FILE                 least trimmed squares regression of the first column on the others\n"
          "                           (as Calc's LTSFIT)\n"
          "options:\n"
          "  --format csv|f64|f32     input: CSV text (default) or raw little-endian doubles/floats\n"
          "  --column N|NAME          CSV column, by 1-based number or header name (default 1)\n"
          "  --header yes|no|auto     whether the CSV's first line is a header (default auto)\n"
          "  --delimiter C            CSV field separator (default: detected from ',', ';', tab)\n"
          "  --backend auto|cpu|cuda  where to compute (default auto)\n"
          "  --device N               CUDA device index (default 0)\n"
          "  --threads N              CPU threads (default all cores)\n"
          "  --time                   print read and compute times to stderr\n"
          "kmeans and lts read a CSV table, an observation per line:\n"
          "  --columns LIST           the columns used, by number or header name (default all;\n"
          "                           for lts the predictors)\n"
          "  --seed N                 a whole number that chooses the random starts (default 0)\n"
          "kmeans options:\n"
          "  --output centroids|labels|sizes|summary   what to print (default centroids)\n"
          "  --restarts N             runs from different starts; the best is kept (default 10)\n"
          "  --max-iter N             iterations per run at most (default 300)\n"
          "  --tol X                  scikit-learn's relative tolerance (default 1e-4; 0: until no label changes)\n"
          "  --init auto|++|parallel  k-means++ or k-means|| starts (default auto: by size)\n"
          "lts options:\n"
          "  --output coefficients|weights|residuals|summary|subset   what to print (default coefficients)\n"
          "  --y-column N|NAME        the response (default column 1); the predictors are the other\n"
          "                           columns, or those of --columns\n"
          "  --alpha X                the share of rows the fit must explain, 0.5 to 1 (default 0.5)\n"
          "  --no-intercept           no intercept term\n"
          "  --lms                    least median of squares instead of least trimmed squares\n"
          "  --starts N               random elemental starts (default 500)\n"
          "Empty fields and NA in a CSV column are skipped, as Calc skips empty cells. For kmeans and\n"
          "lts, a line with an empty or NA field is left out of the fit, and its per-row output is empty.\n",
          out);
}

static int fail_usage(const char *message, const char *detail)
{
    fprintf(stderr, "statgpu: %s%s%s\n", message, detail ? ": " : "", detail ? detail : "");
    fputs("Try 'statgpu --help'.\n", stderr);
    return EXIT_USAGE;
}

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------- parsing */

static int parse_int(const char *text, long minimum, long *value)
{
    char *end;
    errno = 0;
    long parsed = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || parsed < minimum)
        return 0;
    *value = parsed;
    return 1;
}

/* A field without surrounding blanks and one pair of quotes: where it
 * starts, and its length in *length. */
static const char *field_extent(const char *field, size_t *length)
{
    while (isspace((unsigned char)*field))
        ++field;
    size_t n = strlen(field);
    while (n > 0 && isspace((unsigned char)field[n - 1]))
        --n;
    if (n >= 2 && field[0] == '"' && field[n - 1] == '"') {
        ++field;
        n -= 2;
    }
    *length = n;
    return field;
}

/* A whole field as a number; surrounding blanks and one pair of quotes are allowed. */
static int parse_number(const char *field, double *value)
{
    char buffer[128];
    size_t length;
    field = field_extent(field, &length);
    if (length == 0 || length >= sizeof buffer)
        return 0;
    memcpy(buffer, field, length);
    buffer[length] = '\0';
    char *end;
    errno = 0;
    double parsed = strtod(buffer, &end);
    if (end != buffer + length || isnan(parsed))
        return 0;
    if (errno == ERANGE && isinf(parsed))
        return 0;  /* beyond the range of a double */
    *value = parsed;
    return 1;
}

static int is_missing(const char *field)
{
    while (isspace((unsigned char)*field))
        ++field;
    char buffer[8];
    size_t length = strcspn(field, " \t\r\n");
    if (length == 0)
        return 1;
    if (length >= sizeof buffer)
        return 0;
    memcpy(buffer, field, length);
    buffer[length] = '\0';
    return strcmp(buffer, "NA") == 0 || strcmp(buffer, "\"\"") == 0 || strcasecmp(buffer, "nan") == 0
           || strcmp(buffer, "\"NA\"") == 0;
}

/* Splits line in place at delimiter (quotes respected); returns the field count. */
static size_t split_fields(char *line, char delimiter, char **fields, size_t field_capacity)
{
    size_t count = 0;
    char *start = line;
    int quoted = 0;
    for (char *c = line;; ++c) {
        if (*c == '"')
            quoted = !quoted;
        if ((*c == delimiter && !quoted) || *c == '\0' || *c == '\n' || *c == '\r') {
            int end_of_line = *c == '\0' || *c == '\n' || *c == '\r';
            *c = '\0';
            if (count < field_capacity)
                fields[count] = start;
            ++count;
            if (end_of_line)
                break;
            start = c + 1;
        }
    }
    return count;
}

/* The numbers read: doubles from CSV and f64 files; from f32 files, values
 * holds floats (the engine is told their type). */
typedef struct vector { double *values; size_t count, capacity; } vector;

/* A growing array with room for element count (doubling from 4096
 * elements): values itself or its moved copy, or NULL when out of memory
 * (values then stays as it was). */
static void *room_for(void *values, size_t count, size_t *capacity, size_t element_bytes)
{
    if (count < *capacity)
        return values;
    size_t grown_capacity = *capacity ? *capacity * 2 : 4096;
    void *grown = realloc(values, grown_capacity * element_bytes);
    if (grown != NULL)
        *capacity = grown_capacity;
    return grown;
}

static int vector_push(vector *v, double value)
{
    double *values = room_for(v->values, v->count, &v->capacity, sizeof *values);
    if (values == NULL)
        return 0;
    v->values = values;
    v->values[v->count++] = value;
    return 1;
}

/* The separator of a CSV file: whichever of ',', ';' and tab its first line
 * holds most of (',' when none). */
static char detect_delimiter(const char *line)
{
    const char candidates[] = { ',', ';', '\t' };
    char delimiter = ',';
    size_t best = 0;
    for (size_t c = 0; c < 3; ++c) {
        size_t seen = 0;
        for (const char *p = line; *p; ++p)
            seen += *p == candidates[c];
        if (seen > best) {
            best = seen;
            delimiter = candidates[c];
        }
    }
    return delimiter;
}

/* The CSV input of opt->path ("-" for standard input), or NULL after a message. */
static FILE *open_input(const options *opt)
{
    FILE *file = strcmp(opt->path, "-") == 0 ? stdin : fopen(opt->path, "r");
    if (file == NULL)
        fprintf(stderr, "statgpu: cannot open %s: %s\n", opt->path, strerror(errno));
    return file;
}

/* Closes the input; status, or EXIT_USAGE after a message when reading failed. */
static int close_input(const options *opt, FILE *file, int status)
{
    if (status == 0 && ferror(file)) {
        fprintf(stderr, "statgpu: error reading %s\n", opt->path);
        status = EXIT_USAGE;
    }
    if (file != stdin)
        fclose(file);
    return status;
}

/* The fields of a line, at most capacity; *delimiter, when still 0, is
 * detected from this (the first) line. */
static size_t line_fields(char *line, char *delimiter, char **fields, size_t capacity)
{
    if (*delimiter == 0)
        *delimiter = detect_delimiter(line);
    size_t field_count = split_fields(line, *delimiter, fields, capacity);
    return field_count > capacity ? capacity : field_count;
}

static int read_csv(const options *opt, vector *out)
{
    FILE *file = open_input(opt);
    if (file == NULL)
        return EXIT_USAGE;
    char *line = NULL;
    size_t line_bytes = 0;
    char *fields[4096];
    char delimiter = opt->delimiter;
    size_t column = 0, line_number = 0, skipped = 0;
    int status = 0;
    int first = 1;

    while (getline(&line, &line_bytes, file) != -1) {
        ++line_number;
        size_t field_count = line_fields(line, &delimiter, fields, sizeof fields / sizeof *fields);
        if (first) {
            first = 0;
            long number = 0;
            int by_number = opt->column == NULL || parse_int(opt->column, 1, &number);
            if (by_number) {
                column = opt->column == NULL ? 0 : (size_t)number - 1;
            } else {  /* by name: the first line must be a header */
                size_t c = 0;
                for (; c < field_count; ++c) {
                    const char *name = fields[c];
                    size_t length = strlen(name);
                    if (length >= 2 && name[0] == '"' && name[length - 1] == '"')
                        name++, length -= 2;
                    if (strlen(opt->column) == length && strncmp(name, opt->column, length) == 0)
                        break;
                }
                if (c == field_count) {
                    fprintf(stderr, "statgpu: %s: no column named '%s' in the header\n", opt->path, opt->column);
                    status = EXIT_USAGE;
                    break;
                }
                column = c;
            }
            int header = opt->header == HEADER_YES || !by_number;
            if (opt->header == HEADER_AUTO && by_number && column < field_count) {
                double ignored;
                header = !parse_number(fields[column], &ignored) && !is_missing(fields[column]);
            }
            if (header)
                continue;
        }
        if (column >= field_count || is_missing(fields[column])) {
            ++skipped;
            continue;
        }
        double value;
        if (!parse_number(fields[column], &value)) {
            fprintf(stderr, "statgpu: %s:%zu: '%s' is not a number\n", opt->path, line_number, fields[column]);
            status = EXIT_USAGE;
            break;
        }
        if (!vector_push(out, value)) {
            fprintf(stderr, "statgpu: out of memory after %zu values\n", out->count);
            status = EXIT_USAGE;
            break;
        }
    }
    status = close_input(opt, file, status);
    if (status == 0 && skipped > 0)
        fprintf(stderr, "statgpu: skipped %zu empty or NA fields\n", skipped);
    free(line);
    return status;
}

static int read_binary(const options *opt, vector *out)
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
    vector data = { 0 };
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

    started = seconds_now();
    if (strcmp(opt->command, "median") == 0) {
        engine_status = statgpu_vector_median(context, &numbers, &single);
    } else if (strcmp(opt->command, "small") == 0) {
        size_t rank = (size_t)k;
        engine_status = statgpu_vector_select(context, &numbers, &rank, 1, &single);
    } else if (strcmp(opt->command, "large") == 0) {
        /* The k-th largest is the (n-k+1)-th smallest; k beyond n has no rank. */
        size_t rank = (size_t)k <= data.count ? data.count - (size_t)k + 1 : data.count + 1;
        engine_status = statgpu_vector_select(context, &numbers, &rank, 1, &single);
    } else {
        results = malloc(p_count * sizeof *results);
        engine_status = results == NULL ? STATGPU_ERROR_OUT_OF_MEMORY
                                        : statgpu_vector_quantiles(context, &numbers, p, p_count, results);
    }
    double compute_seconds = seconds_now() - started;

    if (engine_status != STATGPU_OK) {
        const char *message = statgpu_context_last_error(context);
        fprintf(stderr, "statgpu: %s%s%s\n", statgpu_status_string(engine_status), message[0] ? ": " : "", message);
        status = EXIT_COMPUTE;
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

/* A CSV table for kmeans and lts: the chosen columns of every line, one
 * observation per line. A line with an empty or NA field in a chosen column
 * stays a row but is incomplete: it is left out of the fit and its per-row
 * output is empty, as Calc's KMEANS and LTSFIT leave out such rows. Blank
 * lines are not rows. */
typedef struct table {
    size_t         column_count;    /* columns chosen */
    char         **names;           /* their header names, or xN (N the file's column number) */
    size_t         row_count;       /* data lines */
    unsigned char *complete;        /* row_count flags: 1 when every chosen field is a number */
    size_t         complete_count;
    double        *values;          /* complete rows, column-major with leading dimension
                                       complete_count: row i, column c at values[i + complete_count*c] */
} table;

static void table_free(table *t)
{
    for (size_t c = 0; c < t->column_count && t->names != NULL; ++c)
        free(t->names[c]);
    free(t->names);
    free(t->complete);
    free(t->values);
    memset(t, 0, sizeof *t);
}

/* A field without surrounding blanks and one pair of quotes, as a new string. */
static char *field_text(const char *field)
{
    size_t length;
    field = field_extent(field, &length);
    char *text = malloc(length + 1);
    if (text != NULL) {
        memcpy(text, field, length);
        text[length] = '\0';
    }
    return text;
}

static int is_blank_line(const char *line)
{
    for (; *line; ++line)
        if (!isspace((unsigned char)*line))
            return 0;
    return 1;
}

/* The 0-based column that spec (a 1-based number or a header name) names in
 * the first line's fields; -1 (after a message) when there is none. */
static long find_column(const options *opt, const char *spec, char **fields, size_t field_count, int *by_name)
{
    long number = 0;
    if (parse_int(spec, 1, &number)) {
        if ((size_t)number > field_count) {
            fprintf(stderr, "statgpu: %s: no column %ld (the first line has %zu)\n", opt->path, number, field_count);
            return -1;
        }
        return number - 1;
    }
    *by_name = 1;
    for (size_t c = 0; c < field_count; ++c) {
        char *name = field_text(fields[c]);
        int same = name != NULL && strcmp(name, spec) == 0;
        free(name);
        if (same)
            return (long)c;
    }
    fprintf(stderr, "statgpu: %s: no column named '%s' in the header\n", opt->path, spec);
    return -1;
}

/* The columns to read, in order: y_spec's first when given (lts's response),
 * then those of opt->columns, else every other column of the first line. */
static int choose_columns(const options *opt, const char *y_spec, char **fields, size_t field_count,
                          size_t **out_columns, size_t *out_count, int *by_name)
{
    size_t capacity = field_count + 1;
    if (opt->columns != NULL)
        for (const char *c = opt->columns; *c; ++c)
            capacity += *c == ',';
    size_t *columns = malloc(capacity * sizeof *columns);
    if (columns == NULL)
        return EXIT_USAGE;
    size_t count = 0;
    if (y_spec != NULL) {
        long y = find_column(opt, y_spec, fields, field_count, by_name);
        if (y < 0) {
            free(columns);
            return EXIT_USAGE;
        }
        columns[count++] = (size_t)y;
    }
    if (opt->columns != NULL) {
        char *copy = strdup(opt->columns), *save = NULL;
        for (char *spec = strtok_r(copy, ",", &save); spec != NULL; spec = strtok_r(NULL, ",", &save)) {
            long column = find_column(opt, spec, fields, field_count, by_name);
            if (column < 0) {
                free(copy);
                free(columns);
                return EXIT_USAGE;
            }
            int seen = 0;
            for (size_t j = 0; j < count; ++j)
                seen |= columns[j] == (size_t)column;
            if (seen && y_spec != NULL && columns[0] == (size_t)column)
                continue;  /* the response is not also a predictor */
            if (seen) {
                fprintf(stderr, "statgpu: --columns names column %ld twice\n", column + 1);
                free(copy);
                free(columns);
                return EXIT_USAGE;
            }
            columns[count++] = (size_t)column;
        }
        free(copy);
    } else {
        for (size_t c = 0; c < field_count; ++c)
            if (y_spec == NULL || c != columns[0])
                columns[count++] = c;
    }
    *out_columns = columns;
    *out_count = count;
    return 0;
}

typedef struct byte_vector { unsigned char *values; size_t count, capacity; } byte_vector;

static int byte_vector_push(byte_vector *v, unsigned char value)
{
    unsigned char *values = room_for(v->values, v->count, &v->capacity, sizeof *values);
    if (values == NULL)
        return 0;
    v->values = values;
    v->values[v->count++] = value;
    return 1;
}

/* Reads the table of opt->path: the columns choose_columns picks. */
static int read_table(const options *opt, const char *y_spec, table *out)
{
    FILE *file = open_input(opt);
    if (file == NULL)
        return EXIT_USAGE;
    char *line = NULL;
    size_t line_bytes = 0, line_number = 0;
    char *fields[4096];
    const size_t field_capacity = sizeof fields / sizeof *fields;
    char delimiter = opt->delimiter;
    size_t *columns = NULL;
    vector values = { 0 };
    byte_vector complete = { 0 };
    int status = 0, first = 1;

    while (status == 0 && getline(&line, &line_bytes, file) != -1) {
        ++line_number;
        if (is_blank_line(line))
            continue;
        size_t field_count = line_fields(line, &delimiter, fields, field_capacity);
        if (first) {
            first = 0;
            int by_name = 0;
            status = choose_columns(opt, y_spec, fields, field_count, &columns, &out->column_count, &by_name);
            if (status != 0)
                break;
            if (by_name && opt->header == HEADER_NO) {
                status = fail_usage("columns named by header need a header line", NULL);
                break;
            }
            int header = opt->header == HEADER_YES || by_name;
            if (opt->header == HEADER_AUTO)
                for (size_t c = 0; c < out->column_count; ++c) {
                    double ignored;
                    const char *field = fields[columns[c]];
                    header |= !parse_number(field, &ignored) && !is_missing(field);
                }
            out->names = calloc(out->column_count ? out->column_count : 1, sizeof *out->names);
            for (size_t c = 0; out->names != NULL && c < out->column_count; ++c) {
                char number[32];
                snprintf(number, sizeof number, "x%zu", columns[c] + 1);
                out->names[c] = header ? field_text(fields[columns[c]]) : strdup(number);
                if (out->names[c] == NULL)
                    status = EXIT_USAGE;
            }
            if (out->names == NULL || status != 0) {
                fprintf(stderr, "statgpu: out of memory\n");
                status = EXIT_USAGE;
                break;
            }
            if (header)
                continue;
        }
        /* A data line: a row, complete when every chosen field is a number. */
        size_t mark = values.count;
        int whole = 1;
        for (size_t c = 0; c < out->column_count; ++c) {
            size_t column = columns[c];
            double value;
            if (column >= field_count || is_missing(fields[column])) {
                whole = 0;
                continue;
            }
            if (!parse_number(fields[column], &value)) {
                fprintf(stderr, "statgpu: %s:%zu: '%s' is not a number\n", opt->path, line_number, fields[column]);
                status = EXIT_USAGE;
                break;
            }
            if (whole && !vector_push(&values, value)) {
                fprintf(stderr, "statgpu: out of memory after %zu rows\n", out->row_count);
                status = EXIT_USAGE;
                break;
            }
        }
        if (status != 0)
            break;
        if (!whole)
            values.count = mark;
        if (!byte_vector_push(&complete, (unsigned char)whole)) {
            fprintf(stderr, "statgpu: out of memory after %zu rows\n", out->row_count);
            status = EXIT_USAGE;
            break;
        }
        ++out->row_count;
        out->complete_count += (size_t)whole;
    }
    status = close_input(opt, file, status);
    if (status == 0) {
        /* Column-major for the engine; never NULL, so an empty table reaches
         * the engine and gets its message. */
        size_t n = out->complete_count, d = out->column_count;
        out->values = malloc((n * d > 0 ? n * d : 1) * sizeof *out->values);
        if (out->values == NULL) {
            fprintf(stderr, "statgpu: out of memory\n");
            status = EXIT_USAGE;
        }
        for (size_t i = 0; status == 0 && i < n; ++i)
            for (size_t c = 0; c < d; ++c)
                out->values[i + n * c] = values.values[i * d + c];
        out->complete = complete.values;
        complete.values = NULL;
        if (out->complete == NULL)
            out->complete = calloc(1, 1);
    }
    if (status == 0 && out->row_count > out->complete_count)
        fprintf(stderr, "statgpu: left out %zu rows with empty or NA fields\n", out->row_count - out->complete_count);
    free(line);
    free(columns);
    free(values.values);
    free(complete.values);
    if (status != 0)
        table_free(out);
    return status;
}

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
static void print_per_row(const table *t, const char *name, double (*value)(const void *result, size_t i),
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

static int engine_failed(statgpu_context *context, statgpu_status status)
{
    const char *message = statgpu_context_last_error(context);
    fprintf(stderr, "statgpu: %s%s%s\n", statgpu_status_string(status), message[0] ? ": " : "", message);
    return EXIT_COMPUTE;
}

static void report_timing(statgpu_context *context, const table *t, double read_seconds, double compute_seconds)
{
    statgpu_backend_report report;
    statgpu_context_backend_report(context, &report);
    fprintf(stderr, "statgpu: %zu rows (%zu used) x %zu columns, read %.3f s, computed in %.6f s on %s%s%s\n",
            t->row_count, t->complete_count, t->column_count, read_seconds, compute_seconds,
            statgpu_backend_name(report.last_used), report.note[0] ? " -- " : "", report.note);
}

/* A failed engine call of a table command: frees the table, says why. */
static int table_engine_failed(statgpu_context *context, statgpu_status status, table *t)
{
    table_free(t);
    return engine_failed(context, status);
}

/* The end of a table command that succeeded: the timing when asked for, the
 * table freed. */
static int finish_table_command(const options *opt, statgpu_context *context, table *t, double read_seconds,
                                double compute_seconds)
{
    if (opt->show_timing)
        report_timing(context, t, read_seconds, compute_seconds);
    table_free(t);
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
    table data = { 0 };
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
    table data = { 0 };
    int status = read_table(opt, opt->y_column != NULL ? opt->y_column : "1", &data);
    if (status != 0)
        return status;
    if (data.column_count < 1 || (data.column_count < 2 && !params.intercept)) {
        fprintf(stderr, "statgpu: %s: lts needs a column for y and %s\n", opt->path,
                params.intercept ? "predictor columns (or the intercept alone)" : "at least one predictor column");
        table_free(&data);
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
            table_free(&data);
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

/* The commands an option belongs to ("kmeans", "lts", "kmeans lts", or
 * "single" for the order statistics' own), or NULL for the common ones. */
static const char *option_command(const char *arg)
{
    static const struct { const char *name, *commands; } owners[] = {
        { "--columns", "kmeans lts" }, { "--output", "kmeans lts" }, { "--seed", "kmeans lts" },
        { "--restarts", "kmeans" },    { "--max-iter", "kmeans" },   { "--tol", "kmeans" },
        { "--init", "kmeans" },        { "--y-column", "lts" },      { "--alpha", "lts" },
        { "--starts", "lts" },         { "--no-intercept", "lts" },  { "--lms", "lts" },
        { "--column", "median small large quantile" }, { "-k", "small large" }, { "-p", "quantile" },
    };
    for (size_t j = 0; j < sizeof owners / sizeof *owners; ++j)
        if (strcmp(arg, owners[j].name) == 0)
            return owners[j].commands;
    return NULL;
}

/* Where the value of an option kept as written (and checked by its
 * command) goes, or NULL for the other options. */
static const char **option_text(options *opt, const char *arg)
{
    const struct { const char *name; const char **value; } texts[] = {
        { "--column", &opt->column },         { "-k", &opt->k_text },
        { "-p", &opt->p_text },               { "--columns", &opt->columns },
        { "--output", &opt->output },         { "--seed", &opt->seed_text },
        { "--restarts", &opt->restarts_text }, { "--max-iter", &opt->max_iter_text },
        { "--tol", &opt->tol_text },          { "--y-column", &opt->y_column },
        { "--alpha", &opt->alpha_text },      { "--starts", &opt->starts_text },
    };
    for (size_t j = 0; j < sizeof texts / sizeof *texts; ++j)
        if (strcmp(arg, texts[j].name) == 0)
            return texts[j].value;
    return NULL;
}

int main(int argc, char **argv)
{
    options opt = { 0 };
    opt.backend = STATGPU_BACKEND_AUTO;
    opt.header = HEADER_AUTO;

    if (argc < 2)
        return usage(stderr), EXIT_USAGE;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return usage(stdout), 0;
    if (strcmp(argv[1], "--version") == 0)
        return printf("statgpu %s\n", statgpu_version_string()), 0;
    opt.command = argv[1];
    const char *const commands[] = { "median", "small", "large", "quantile", "info", "kmeans", "lts" };
    int known = 0;
    for (size_t c = 0; c < sizeof commands / sizeof *commands; ++c)
        known |= strcmp(opt.command, commands[c]) == 0;
    if (!known)
        return fail_usage("unknown command", opt.command);

    const int is_table = strcmp(opt.command, "kmeans") == 0 || strcmp(opt.command, "lts") == 0;
    const char *k_positional = NULL;  /* kmeans K */
    for (int i = 2; i < argc; ++i) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        int takes_value = 1;
        long number = 0;
        const char **text;
        const char *only = option_command(arg);
        if (only != NULL && strstr(only, opt.command) == NULL) {
            char message[128];
            snprintf(message, sizeof message, "option not for %s (only for %s)", opt.command, only);
            return fail_usage(message, arg);
        }
        if (strcmp(arg, "--time") == 0) {
            opt.show_timing = 1;
            takes_value = 0;
        } else if (strcmp(arg, "--no-intercept") == 0) {
            opt.no_intercept = 1;
            takes_value = 0;
        } else if (strcmp(arg, "--lms") == 0) {
            opt.lms = 1;
            takes_value = 0;
        } else if (strcmp(arg, "--help") == 0) {
            return usage(stdout), 0;
        } else if (arg[0] == '-' && arg[1] != '\0' && value == NULL) {
            return fail_usage("option needs a value", arg);
        } else if ((text = option_text(&opt, arg)) != NULL) {
            *text = value;
        } else if (strcmp(arg, "--format") == 0) {
            if (strcmp(value, "csv") == 0) opt.format = FORMAT_CSV;
            else if (strcmp(value, "f64") == 0) opt.format = FORMAT_F64;
            else if (strcmp(value, "f32") == 0) opt.format = FORMAT_F32;
            else return fail_usage("--format must be csv, f64 or f32", value);
        } else if (strcmp(arg, "--header") == 0) {
            if (strcmp(value, "yes") == 0) opt.header = HEADER_YES;
            else if (strcmp(value, "no") == 0) opt.header = HEADER_NO;
            else if (strcmp(value, "auto") == 0) opt.header = HEADER_AUTO;
            else return fail_usage("--header must be yes, no or auto", value);
        } else if (strcmp(arg, "--delimiter") == 0) {
            if (strcmp(value, "\\t") == 0 || strcmp(value, "tab") == 0) opt.delimiter = '\t';
            else if (strlen(value) == 1 && value[0] != '"') opt.delimiter = value[0];
            else return fail_usage("--delimiter must be one character", value);
        } else if (strcmp(arg, "--backend") == 0) {
            if (strcmp(value, "auto") == 0) opt.backend = STATGPU_BACKEND_AUTO;
            else if (strcmp(value, "cpu") == 0) opt.backend = STATGPU_BACKEND_CPU;
            else if (strcmp(value, "cuda") == 0) opt.backend = STATGPU_BACKEND_CUDA;
            else return fail_usage("--backend must be auto, cpu or cuda", value);
        } else if (strcmp(arg, "--device") == 0) {
            if (!parse_int(value, 0, &number) || number > 1024) return fail_usage("--device must be a device index", value);
            opt.device = (int)number;
        } else if (strcmp(arg, "--threads") == 0) {
            if (!parse_int(value, 1, &number) || number > 4096) return fail_usage("--threads must be from 1 to 4096", value);
            opt.thread_count = (int)number;
        } else if (strcmp(arg, "--init") == 0) {
            if (strcmp(value, "auto") == 0) opt.kmeans_init = STATGPU_KMEANS_INIT_AUTO;
            else if (strcmp(value, "++") == 0) opt.kmeans_init = STATGPU_KMEANS_INIT_PLUS_PLUS;
            else if (strcmp(value, "parallel") == 0) opt.kmeans_init = STATGPU_KMEANS_INIT_PARALLEL;
            else return fail_usage("--init must be auto, ++ or parallel", value);
        } else if (arg[0] == '-' && arg[1] != '\0' && !(strcmp(opt.command, "kmeans") == 0 && k_positional == NULL
                                                        && isdigit((unsigned char)arg[1]))) {
            return fail_usage("unknown option", arg);
        } else {
            takes_value = 0;
            if (strcmp(opt.command, "kmeans") == 0 && k_positional == NULL) {
                k_positional = arg;
            } else {
                if (opt.path != NULL)
                    return fail_usage("more than one input file", arg);
                opt.path = arg;
            }
        }
        i += takes_value;
    }
    if (strcmp(opt.command, "kmeans") == 0 && (k_positional == NULL || opt.path == NULL))
        return fail_usage("kmeans needs the number of clusters K and a file: statgpu kmeans K FILE", NULL);
    if (strcmp(opt.command, "info") != 0 && opt.path == NULL)
        return fail_usage("no input file (use - for standard input)", NULL);
    if (opt.format != FORMAT_CSV && opt.path != NULL && strcmp(opt.path, "-") == 0)
        return fail_usage("binary input must be a file", NULL);
    if (opt.format != FORMAT_CSV && is_table)
        return fail_usage("kmeans and lts read CSV only", NULL);

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
                 : strcmp(opt.command, "kmeans") == 0 ? run_kmeans(&opt, context, k_positional)
                 : strcmp(opt.command, "lts") == 0    ? run_lts(&opt, context)
                                                      : run_command(&opt, context);
    statgpu_context_destroy(context);
    return status;
}
