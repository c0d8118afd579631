/*
 * tool.c: what the statgpu tool's commands share (see tool.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "tool.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------- progress */

/* The quiet time before a progress line is shown: a shorter computation
 * would only flicker one. */
#define PROGRESS_AFTER_SECONDS 1.0

static struct {
    const char *command;
    double      started;   /* since when nothing was printed: reading the file counts */
    int         percent;   /* the percentage shown, -1 while no line is */
} progress_line = { NULL, 0.0, -1 };

/* The context's progress callback, which the engine calls on the calling
 * thread: the line, rewritten when the whole percentage changes (padded to
 * three digits, so a smaller number covers a larger one). Never cancels. */
static int show_progress(void *user_data, double fraction_done)
{
    (void)user_data;
    if (seconds_now() - progress_line.started < PROGRESS_AFTER_SECONDS)
        return 0;
    double percent = isfinite(fraction_done) ? floor(100.0 * fraction_done) : 0.0;
    int whole = percent < 0.0 ? 0 : percent > 100.0 ? 100 : (int)percent;
    if (whole != progress_line.percent) {
        progress_line.percent = whole;
        fprintf(stderr, "\rstatgpu: %s %3d%%", progress_line.command, whole);
    }
    return 0;
}

void progress_attach(const options *opt, statgpu_context_params *params)
{
    const int reports = opt->command_id == COMMAND_KMEANS || opt->command_id == COMMAND_LTS
                        || opt->command_id == COMMAND_GMM || opt->command_id == COMMAND_IGMM
                        || opt->command_id == COMMAND_BESTSUBSET;
    if (!reports || !isatty(STDERR_FILENO))
        return;
    progress_line.command = opt->command;
    progress_line.started = seconds_now();
    params->progress = show_progress;
}

void progress_end(void)
{
    if (progress_line.percent >= 0)  /* blanks over "statgpu: COMMAND 100%" */
        fprintf(stderr, "\r%*s\r", (int)strlen(progress_line.command) + 14, "");
    progress_line.percent = -1;
    progress_line.started = seconds_now();
}

/* A number given on the command line: decimal, finite, as in a CSV file. */
int parse_number(const char *text, double *value)
{
    return csv_field_classify(text, value) == CSV_FIELD_NUMBER;
}

/* The CSV input of opt->path ("-" for standard input), or NULL after a message. */
static FILE *open_input(const options *opt)
{
    FILE *file = strcmp(opt->path, "-") == 0 ? stdin : fopen(opt->path, "rb");
    if (file == NULL) {
        fprintf(stderr, "statgpu: cannot open %s: %s\n", opt->path, strerror(errno));
        return NULL;
    }
    struct stat status;
    if (file != stdin && fstat(fileno(file), &status) == 0 && S_ISDIR(status.st_mode)) {
        fprintf(stderr, "statgpu: %s is a directory, not a file\n", opt->path);
        fclose(file);
        return NULL;
    }
    return file;
}

static csv_settings settings_of(const options *opt)
{
    csv_settings settings = { opt->path, opt->delimiter, opt->header, opt->column, opt->columns, 0 };
    return settings;
}

/* The column of a CSV file that the order statistics read. */
int read_csv(const options *opt, csv_column *out)
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
int read_table(const options *opt, const char *y_spec, csv_table *out)
{
    FILE *file = open_input(opt);
    if (file == NULL)
        return EXIT_USAGE;
    csv_settings settings = settings_of(opt);
    settings.ragged = opt->command_id == COMMAND_IGMM;
    int status = csv_read_table(&settings, file, y_spec, out);
    if (file != stdin)
        fclose(file);
    return status;
}

int read_table_timed(const options *opt, const char *y_spec, csv_table *out, double *read_seconds)
{
    double started = seconds_now();
    int status = read_table(opt, y_spec, out);
    *read_seconds = seconds_now() - started;
    return status;
}

const char *output_word(const options *opt, const char *method, const char *message)
{
    const char *output = opt->output != NULL ? opt->output : statgpu_method_table_names(method)[0];
    return check_output_word(method, output, message) == 0 ? output : NULL;
}

/* The engine's failure: its message, led by the status's own text unless
 * the message already begins with it. */
int engine_failed(statgpu_context *context, statgpu_status status)
{
    const char *message = statgpu_context_last_error(context);
    const char *name = statgpu_status_string(status);
    if (strncmp(message, name, strlen(name)) == 0)
        fprintf(stderr, "statgpu: %s\n", message);
    else
        fprintf(stderr, "statgpu: %s%s%s\n", name, message[0] ? ": " : "", message);
    return EXIT_COMPUTE;
}

int read_binary(const options *opt, csv_column *out)
{
    FILE *file = fopen(opt->path, "rb");
    if (file == NULL) {
        fprintf(stderr, "statgpu: cannot open %s: %s\n", opt->path, strerror(errno));
        return EXIT_USAGE;
    }
    size_t element_bytes = opt->format == FORMAT_F64 ? 8 : 4;
    int status = 0;
    struct stat file_status;
    if (fstat(fileno(file), &file_status) != 0 || !S_ISREG(file_status.st_mode) || fseek(file, 0, SEEK_END) != 0) {
        fprintf(stderr, "statgpu: %s is not a regular file (--format f64 and f32 read files)\n", opt->path);
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

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
void print_field(const char *text)
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
int parse_count(const char *text, uint64_t *value)
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
int count_option(const char *text, const char *message, size_t *value)
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
int seed_option(const options *opt, uint64_t *seed)
{
    if (opt->seed_text != NULL && !parse_count(opt->seed_text, seed))
        return fail_usage("--seed must be a whole number from 0", opt->seed_text);
    return 0;
}

int run_options(const options *opt, size_t *restart_count, size_t *max_iterations, double *tolerance,
                uint64_t *seed)
{
    if (count_option(opt->restarts_text, "--restarts must be a whole number", restart_count) != 0
        || count_option(opt->max_iter_text, "--max-iter must be a whole number", max_iterations) != 0)
        return EXIT_USAGE;
    if (opt->tol_text != NULL && !parse_number(opt->tol_text, tolerance))
        return fail_usage("--tol must be a number", opt->tol_text);
    return seed_option(opt, seed);
}

void report_timing(statgpu_context *context, const csv_table *t, double read_seconds, double compute_seconds)
{
    statgpu_backend_report report;
    statgpu_context_backend_report(context, &report);
    char device[96] = "";
    if (report.last_used == STATGPU_BACKEND_CUDA)
        snprintf(device, sizeof device, " (of it on the GPU: copies %.6f s, device work %.6f s)",
                 report.last_transfer_seconds, report.last_compute_seconds);
    fprintf(stderr, "statgpu: %zu rows (%zu used) x %zu columns, read %.3f s, computed in %.6f s on %s%s%s%s\n",
            t->row_count, t->complete_count, t->column_count, read_seconds, compute_seconds,
            statgpu_backend_name(report.last_used), device, report.note[0] ? " -- " : "", report.note);
}

/* A failed engine call of a table command: frees the table, says why. */
int table_engine_failed(statgpu_context *context, statgpu_status status, csv_table *t)
{
    csv_table_free(t);
    return engine_failed(context, status);
}

/* The end of a table command that succeeded: the timing when asked for, the
 * table freed. */
int finish_table_command(const options *opt, statgpu_context *context, csv_table *t, double read_seconds,
                         double compute_seconds)
{
    if (opt->show_timing)
        report_timing(context, t, read_seconds, compute_seconds);
    csv_table_free(t);
    return 0;
}

/* A table for reading: its title, then the header and the rows with every
 * column as wide as its widest entry (names and texts whole, however long).
 * 0, or EXIT_COMPUTE out of memory. */
static int print_aligned(const statgpu_table *table)
{
    const size_t rows = table->row_count + 1, columns = table->column_count + 1;
    const char **cells = malloc(rows * columns * sizeof *cells);
    char (*numbers)[32] = malloc(rows * columns * sizeof *numbers);  /* the cells written here */
    size_t *widths = calloc(columns, sizeof *widths);
    if (cells == NULL || numbers == NULL || widths == NULL) {
        free(cells);
        free(numbers);
        free(widths);
        fprintf(stderr, "statgpu: out of memory\n");
        return EXIT_COMPUTE;
    }
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < columns; ++c) {
            const size_t at = r * columns + c;
            const char *text = "";
            if (r == 0 && c == 0) {
                text = table->row_labels != NULL ? table->row_label_header : "row";
            } else if (r == 0) {
                text = table->column_headers[c - 1];
            } else if (c == 0 && table->row_labels != NULL) {
                text = table->row_labels[r - 1];
            } else if (c == 0) {
                snprintf(numbers[at], sizeof numbers[at], "%zu", r);
                text = numbers[at];
            } else {
                size_t cell = (r - 1) + table->row_count * (c - 1);
                if (table->cell_kinds[cell] == STATGPU_CELL_NUMBER) {
                    snprintf(numbers[at], sizeof numbers[at], "%.10g", table->values[cell]);
                    text = numbers[at];
                } else if (table->cell_kinds[cell] == STATGPU_CELL_TEXT) {
                    text = table->texts[cell];
                }
            }
            cells[at] = text != NULL ? text : "";
            size_t length = strlen(cells[at]);
            if (length > widths[c])
                widths[c] = length;
        }
    printf("%s\n", table->title);
    for (size_t r = 0; r < rows; ++r) {
        for (size_t c = 0; c < columns; ++c) {
            size_t cell = (r - 1) + table->row_count * (c - 1);
            bool number = r > 0 && c > 0 && table->cell_kinds[cell] == STATGPU_CELL_NUMBER;
            int width = c + 1 == columns && !number ? 0 : (int)widths[c];  /* no blanks at the end */
            printf(c == 0 ? "%-*s" : number ? "  %*s" : "  %-*s", width, cells[r * columns + c]);
        }
        putchar('\n');
    }
    free(cells);
    free(numbers);
    free(widths);
    return 0;
}

int print_result_table(statgpu_context *context, const csv_table *t, const char *const *variable_names,
                       const char *name, table_maker make_tables, const void *result, bool as_table)
{
    size_t *rows = malloc((t->complete_count ? t->complete_count : 1) * sizeof *rows);
    if (rows == NULL) {
        fprintf(stderr, "statgpu: out of memory\n");
        return EXIT_COMPUTE;
    }
    for (size_t row = 0, next = 0; row < t->row_count; ++row)
        if (t->complete[row])
            rows[next++] = row;
    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.variable_names = variable_names;
    params.source_row_count = t->row_count;
    params.source_rows = rows;
    params.table_name = name;
    statgpu_table_set *set = NULL;
    statgpu_status status = make_tables(context, result, &params, &set);
    free(rows);
    if (status != STATGPU_OK)
        return engine_failed(context, status);
    const statgpu_table *table = statgpu_table_set_find(set, name);
    if (as_table) {
        int printed = print_aligned(table);
        statgpu_table_set_destroy(set);
        return printed;
    }
    /* The row labels' column: the table's own, or the rows numbered from 1. */
    print_field(table->row_labels != NULL ? table->row_label_header : "row");
    for (size_t c = 0; c < table->column_count; ++c) {
        putchar(',');
        print_field(table->column_headers[c]);
    }
    putchar('\n');
    for (size_t r = 0; r < table->row_count; ++r) {
        if (table->row_labels != NULL)
            print_field(table->row_labels[r]);
        else
            printf("%zu", r + 1);
        for (size_t c = 0; c < table->column_count; ++c) {
            size_t cell = r + table->row_count * c;
            putchar(',');
            if (table->cell_kinds[cell] == STATGPU_CELL_NUMBER)
                printf("%.17g", table->values[cell]);
            else if (table->cell_kinds[cell] == STATGPU_CELL_TEXT)
                print_field(table->texts[cell]);
        }
        putchar('\n');
    }
    statgpu_table_set_destroy(set);
    return 0;
}

int check_output_word(const char *method, const char *output, const char *message)
{
    for (const char *const *name = statgpu_method_table_names(method); *name != NULL; ++name)
        if (strcmp(output, *name) == 0)
            return 0;
    return fail_usage(message, output);
}
