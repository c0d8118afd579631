/*
 * statgpu.c: the statgpu command-line tool, on the same engine as the Calc
 * add-in, for data beyond a sheet, batch use and benchmarks.
 *
 *   statgpu median   FILE [options]
 *   statgpu small    FILE -k K [options]       k-th smallest
 *   statgpu large    FILE -k K [options]       k-th largest
 *   statgpu quantile FILE -p P[,P...] [options]  PERCENTILE.INC
 *   statgpu info     [--backend B] [--device D]
 *
 * Exit status: 0 success, 1 the computation failed (the engine's message is
 * printed), 2 bad arguments or an unreadable file. Never a crash.
 */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
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
          "options:\n"
          "  --format csv|f64|f32     input: CSV text (default) or raw little-endian doubles/floats\n"
          "  --column N|NAME          CSV column, by 1-based number or header name (default 1)\n"
          "  --header yes|no|auto     whether the CSV's first line is a header (default auto)\n"
          "  --delimiter C            CSV field separator (default: detected from ',', ';', tab)\n"
          "  --backend auto|cpu|cuda  where to compute (default auto)\n"
          "  --device N               CUDA device index (default 0)\n"
          "  --threads N              CPU threads (default all cores)\n"
          "  --time                   print read and compute times to stderr\n"
          "Empty fields and NA in a CSV column are skipped, as Calc skips empty cells.\n",
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

/* A whole field as a number; surrounding blanks and one pair of quotes are allowed. */
static int parse_number(const char *field, double *value)
{
    while (isspace((unsigned char)*field))
        ++field;
    char buffer[128];
    size_t length = strlen(field);
    while (length > 0 && isspace((unsigned char)field[length - 1]))
        --length;
    if (length >= 2 && field[0] == '"' && field[length - 1] == '"') {
        ++field;
        length -= 2;
    }
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

static int vector_push(vector *v, double value)
{
    if (v->count == v->capacity) {
        size_t capacity = v->capacity ? v->capacity * 2 : 4096;
        double *grown = realloc(v->values, capacity * sizeof *grown);
        if (grown == NULL)
            return 0;
        v->values = grown;
        v->capacity = capacity;
    }
    v->values[v->count++] = value;
    return 1;
}

static int read_csv(const options *opt, vector *out)
{
    FILE *file = strcmp(opt->path, "-") == 0 ? stdin : fopen(opt->path, "r");
    if (file == NULL) {
        fprintf(stderr, "statgpu: cannot open %s: %s\n", opt->path, strerror(errno));
        return EXIT_USAGE;
    }
    char *line = NULL;
    size_t line_bytes = 0;
    char *fields[4096];
    char delimiter = opt->delimiter;
    size_t column = 0, line_number = 0, skipped = 0;
    int status = 0;
    int first = 1;

    while (getline(&line, &line_bytes, file) != -1) {
        ++line_number;
        if (first && delimiter == 0) {
            const char candidates[] = { ',', ';', '\t' };
            delimiter = ',';
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
        }
        size_t field_count = split_fields(line, delimiter, fields, sizeof fields / sizeof *fields);
        if (field_count > sizeof fields / sizeof *fields)
            field_count = sizeof fields / sizeof *fields;
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
    if (status == 0 && ferror(file)) {
        fprintf(stderr, "statgpu: error reading %s\n", opt->path);
        status = EXIT_USAGE;
    }
    if (status == 0 && skipped > 0)
        fprintf(stderr, "statgpu: skipped %zu empty or NA fields\n", skipped);
    free(line);
    if (file != stdin)
        fclose(file);
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

/* ---------------------------------------------------------------- main */

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
    const char *const commands[] = { "median", "small", "large", "quantile", "info" };
    int known = 0;
    for (size_t c = 0; c < sizeof commands / sizeof *commands; ++c)
        known |= strcmp(opt.command, commands[c]) == 0;
    if (!known)
        return fail_usage("unknown command", opt.command);

    for (int i = 2; i < argc; ++i) {
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        int takes_value = 1;
        long number = 0;
        if (strcmp(arg, "--time") == 0) {
            opt.show_timing = 1;
            takes_value = 0;
        } else if (strcmp(arg, "--help") == 0) {
            return usage(stdout), 0;
        } else if (arg[0] == '-' && arg[1] != '\0' && value == NULL) {
            return fail_usage("option needs a value", arg);
        } else if (strcmp(arg, "--format") == 0) {
            if (strcmp(value, "csv") == 0) opt.format = FORMAT_CSV;
            else if (strcmp(value, "f64") == 0) opt.format = FORMAT_F64;
            else if (strcmp(value, "f32") == 0) opt.format = FORMAT_F32;
            else return fail_usage("--format must be csv, f64 or f32", value);
        } else if (strcmp(arg, "--column") == 0) {
            opt.column = value;
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
        } else if (strcmp(arg, "-k") == 0) {
            opt.k_text = value;
        } else if (strcmp(arg, "-p") == 0) {
            opt.p_text = value;
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return fail_usage("unknown option", arg);
        } else {
            takes_value = 0;
            if (opt.path != NULL)
                return fail_usage("more than one input file", arg);
            opt.path = arg;
        }
        i += takes_value;
    }
    if (strcmp(opt.command, "info") != 0 && opt.path == NULL)
        return fail_usage("no input file (use - for standard input)", NULL);
    if (opt.format != FORMAT_CSV && opt.path != NULL && strcmp(opt.path, "-") == 0)
        return fail_usage("binary input must be a file", NULL);

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
    int status = strcmp(opt.command, "info") == 0 ? print_info(context) : run_command(&opt, context);
    statgpu_context_destroy(context);
    return status;
}
