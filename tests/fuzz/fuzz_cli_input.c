/*
 * fuzz_cli_input.c: a seeded mutation fuzzer of the command-line tool's CSV
 * reader (cli/csv.c) and argument parser (cli/arguments.c), built with
 * AddressSanitizer and UndefinedBehaviorSanitizer. It needs only a C
 * compiler (no libFuzzer), runs a fixed number of iterations from a fixed
 * seed, so a run in CI is repeatable, and checks beyond the sanitizers what
 * the readers promise: finite numbers, counts that add up, a result or a
 * message.
 *
 *   fuzz_cli_input CORPUS ITERATIONS [SEED]   fuzz from the files of CORPUS/csv and CORPUS/arguments
 *   fuzz_cli_input CORPUS ITERATIONS SEED N   print input N of that run to stdout and stop
 *
 * A file of CORPUS/arguments holds one argument per line. The readers'
 * messages are sent to /dev/null; the report goes to stderr.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arguments.h"
#include "csv.h"

#if defined(__SANITIZE_ADDRESS__)
#define FUZZ_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUZZ_SANITIZED 1
#endif
#endif
#ifdef FUZZ_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

typedef struct input { unsigned char *bytes; size_t length; } input;
typedef struct corpus { input *inputs; size_t count; } corpus;

static FILE *report;
static size_t current_iteration;  /* for the report of a sanitizer */

static void fail(const char *what, size_t iteration)
{
    fprintf(report, "FAIL at iteration %zu: %s (print the input: give the iteration after the seed)\n", iteration,
            what);
    exit(1);
}

static uint64_t rng_state;

static uint64_t next_random(void)  /* xorshift64* */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static size_t below(size_t n)
{
    return n ? (size_t)(next_random() % n) : 0;
}

static void read_corpus(const char *folder, corpus *out)
{
    DIR *dir = opendir(folder);
    if (dir == NULL) {
        fprintf(report, "fuzz_cli_input: cannot open %s\n", folder);
        exit(2);
    }
    char **names = NULL;
    size_t name_count = 0;
    for (struct dirent *entry; (entry = readdir(dir)) != NULL;) {
        if (entry->d_name[0] == '.')
            continue;
        names = realloc(names, (name_count + 1) * sizeof *names);
        names[name_count++] = strdup(entry->d_name);
    }
    closedir(dir);
    /* In name order, so that a seed means the same inputs everywhere. */
    for (size_t i = 1; i < name_count; ++i)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; --j) {
            char *swap = names[j];
            names[j] = names[j - 1];
            names[j - 1] = swap;
        }
    out->inputs = calloc(name_count ? name_count : 1, sizeof *out->inputs);
    for (size_t i = 0; i < name_count; ++i) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", folder, names[i]);
        FILE *file = fopen(path, "rb");
        if (file == NULL) {
            fprintf(report, "fuzz_cli_input: cannot open %s\n", path);
            exit(2);
        }
        input *in = &out->inputs[out->count++];
        fseek(file, 0, SEEK_END);
        in->length = (size_t)ftell(file);
        rewind(file);
        in->bytes = malloc(in->length + 1);
        if (fread(in->bytes, 1, in->length, file) != in->length)
            exit(2);
        fclose(file);
        free(names[i]);
    }
    free(names);
    if (out->count == 0) {
        fprintf(report, "fuzz_cli_input: %s holds no seeds\n", folder);
        exit(2);
    }
}

/* Pieces that the readers treat specially, spliced in by the mutator. */
static const char *const tokens[] = {
    ",", ";", "\t", "\"", "\"\"", "\n", "\r", "\r\n", "\xef\xbb\xbf", "NA", "nan", "inf", "-Infinity", "0x10",
    "1e309", "-1e400", "4.9e-324", "1.7976931348623157e308", "1e", ".", "-", "+.5", "  ", "\0",
    "--header", "--no-header", "--column", "--columns", "--y-column", "-k", "-p", "--delimiter", "--format",
    "f32", "kmeans", "lts", "median", "quantile", "2011", "0", "-1", "99999999999999999999", "\xff\xfe",
};

/* A copy of seed with 1 to 8 random changes (and maybe a splice of other). */
static input mutate(const input *seed, const input *other)
{
    size_t capacity = seed->length + other->length + 4096;
    unsigned char *bytes = malloc(capacity);
    size_t length = seed->length;
    memcpy(bytes, seed->bytes, length);
    size_t changes = 1 + below(8);
    for (size_t c = 0; c < changes; ++c) {
        size_t at = below(length + 1);
        switch (below(7)) {
        case 0:  /* flip a bit */
            if (length > 0)
                bytes[below(length)] ^= (unsigned char)(1u << below(8));
            break;
        case 1:  /* a random byte */
            if (length > 0)
                bytes[below(length)] = (unsigned char)below(256);
            break;
        case 2: {  /* insert a token */
            size_t token = below(sizeof tokens / sizeof *tokens);
            size_t n = strlen(tokens[token]);
            if (n == 0)
                n = 1;  /* the NUL byte */
            if (length + n <= capacity) {
                memmove(bytes + at + n, bytes + at, length - at);
                memcpy(bytes + at, tokens[token], n);
                length += n;
            }
            break;
        }
        case 3: {  /* delete a range */
            size_t n = below(length - at + 1);
            if (n > 16)
                n = below(17);
            memmove(bytes + at, bytes + at + n, length - at - n);
            length -= n;
            break;
        }
        case 4: {  /* repeat a range */
            size_t n = below(length - at + 1) % 64;
            if (length + n <= capacity) {
                memmove(bytes + at + n, bytes + at, length - at);
                length += n;
            }
            break;
        }
        case 5: {  /* splice the end of another seed */
            size_t from = below(other->length + 1);
            size_t n = other->length - from;
            if (at + n <= capacity) {
                memcpy(bytes + at, other->bytes + from, n);
                length = at + n;
            }
            break;
        }
        default:  /* a digit */
            if (length > 0)
                bytes[below(length)] = (unsigned char)('0' + below(10));
            break;
        }
    }
    input out = { bytes, length };
    return out;
}

static FILE *open_bytes(const input *in)
{
    /* fmemopen refuses a size of 0 on some C libraries. */
    return in->length ? fmemopen(in->bytes, in->length, "rb") : fopen("/dev/null", "rb");
}

static size_t line_count_at_most(const input *in)
{
    size_t lines = 1;
    for (size_t i = 0; i < in->length; ++i)
        lines += in->bytes[i] == '\n' || in->bytes[i] == '\r';
    return lines;
}

static void fuzz_csv(const input *in, size_t iteration)
{
    static const char *const column_specs[] = { NULL, "2", "y", "2011", "0", "5000" };
    static const char *const list_specs[] = { NULL, "2,1", "x,1", "1,1", "3" };
    static const char delimiters[] = { 0, ',', ';', '\t' };
    csv_settings settings = { "fuzz", delimiters[below(4)], (csv_header_mode)below(3),
                              column_specs[below(sizeof column_specs / sizeof *column_specs)],
                              list_specs[below(sizeof list_specs / sizeof *list_specs)], (int)below(2) };
    size_t lines = line_count_at_most(in);

    FILE *file = open_bytes(in);
    csv_column column = { 0 };
    int status = csv_read_column(&settings, file, &column);
    fclose(file);
    if (status != 0 && status != CSV_BAD_INPUT)
        fail("the column reader returned an unknown status", iteration);
    if (status != 0 && (column.values != NULL || column.count != 0))
        fail("the column reader failed but returned values", iteration);
    if (column.count > lines)
        fail("more values than lines", iteration);
    for (size_t i = 0; i < column.count; ++i)
        if (!isfinite(column.values[i]))
            fail("the column reader returned a value that is not finite", iteration);
    free(column.values);

    file = open_bytes(in);
    csv_table table;
    const char *y_spec = below(2) ? NULL : column_specs[1 + below(3)];
    status = csv_read_table(&settings, file, y_spec, &table);
    fclose(file);
    if (status != 0 && status != CSV_BAD_INPUT)
        fail("the table reader returned an unknown status", iteration);
    if (status == 0) {
        if (table.complete_count > table.row_count || table.row_count > lines || table.values == NULL
            || table.complete == NULL || (table.column_count > 0 && table.names == NULL))
            fail("the table's counts do not add up", iteration);
        size_t complete = 0;
        for (size_t i = 0; i < table.row_count; ++i)
            complete += table.complete[i] == 1;
        if (complete != table.complete_count)
            fail("the table's complete flags do not match its count", iteration);
        for (size_t c = 0; c < table.column_count; ++c)
            if (table.names[c] == NULL)
                fail("a column without a name", iteration);
        /* Ragged tables (igmm's) hold a missing field as NaN, never an infinity. */
        for (size_t i = 0; i < table.complete_count * table.column_count; ++i)
            if (settings.ragged ? isinf(table.values[i]) : !isfinite(table.values[i]))
                fail("the table reader returned a value that is not finite", iteration);
    } else if (table.values != NULL || table.names != NULL || table.complete != NULL) {
        fail("the table reader failed but kept its table", iteration);
    }
    csv_table_free(&table);

    /* The field classifier on the whole input as one field. */
    char *field = malloc(in->length + 1);
    memcpy(field, in->bytes, in->length);
    field[in->length] = '\0';
    double value = 0;
    if (csv_field_classify(field, &value) == CSV_FIELD_NUMBER && !isfinite(value))
        fail("a field classified as a number that is not finite", iteration);
    free(field);
}

static void fuzz_arguments(const input *in, size_t iteration)
{
    /* One argument per line, after the program's name. */
    char *text = malloc(in->length + 1);
    memcpy(text, in->bytes, in->length);
    text[in->length] = '\0';
    char *argv[65] = { "statgpu" };
    int argc = 1;
    for (char *start = text, *c = text;; ++c)
        if (*c == '\n' || *c == '\0' || c == text + in->length) {
            int end = c == text + in->length || *c == '\0';
            *c = '\0';
            if (argc < 64)
                argv[argc++] = start;
            if (end)
                break;
            start = c + 1;
        }
    argv[argc] = NULL;
    options opt;
    int status = parse_arguments(argc, argv, &opt);
    if (status != ARGUMENTS_RUN && status != 0 && status != EXIT_USAGE)
        fail("the argument parser returned an unknown status", iteration);
    if (status == ARGUMENTS_RUN) {
        if (opt.command == NULL || (strcmp(opt.command, "info") != 0 && opt.path == NULL))
            fail("a command to run without a command or a file", iteration);
        if (strcmp(opt.command, "kmeans") == 0 && opt.kmeans_k_text == NULL)
            fail("kmeans to run without K", iteration);
        if (opt.header > CSV_HEADER_NO || opt.format > FORMAT_F32)
            fail("an option out of its range", iteration);
    }
    free(text);
}

#ifdef FUZZ_SANITIZED
static void name_the_input(void)
{
    if (current_iteration == SIZE_MAX)
        fprintf(report, "FAIL after the last input (a leak: the report above says where)\n");
    else
        fprintf(report, "FAIL at iteration %zu (print the input: give the iteration after the seed)\n",
                current_iteration);
    fflush(report);
}
#endif

int main(int argc, char **argv)
{
    report = fdopen(dup(2), "w");
    if (argc < 3 || report == NULL) {
        fprintf(stderr, "usage: fuzz_cli_input CORPUS ITERATIONS [SEED [N]]\n");
        return 2;
    }
    size_t iterations = strtoull(argv[2], NULL, 10);
    rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) * 2 + 1 : 0x9e3779b97f4a7c15ULL;
    long dump = argc > 4 ? atol(argv[4]) : -1;
    char folder[4096];
    corpus csv_seeds = { 0 }, argument_seeds = { 0 };
    snprintf(folder, sizeof folder, "%s/csv", argv[1]);
    read_corpus(folder, &csv_seeds);
    snprintf(folder, sizeof folder, "%s/arguments", argv[1]);
    read_corpus(folder, &argument_seeds);

    FILE *dump_to = dump >= 0 ? fdopen(dup(1), "w") : NULL;
    /* The readers write their messages (and the help) to stdout and stderr,
     * which go to /dev/null; a sanitizer's report goes where stderr went. */
#ifdef FUZZ_SANITIZED
    __sanitizer_set_report_fd((void *)(intptr_t)fileno(report));
    __sanitizer_set_death_callback(name_the_input);
#endif
    if (freopen("/dev/null", "w", stderr) == NULL || freopen("/dev/null", "w", stdout) == NULL)
        return 2;

    /* First every seed as it is, then mutations. */
    size_t seed_runs = csv_seeds.count + argument_seeds.count;
    for (size_t iteration = 0; iteration < seed_runs + iterations; ++iteration) {
        int is_csv = iteration < seed_runs ? iteration < csv_seeds.count : (int)below(2);
        corpus *seeds = is_csv ? &csv_seeds : &argument_seeds;
        input in;
        if (iteration < seed_runs) {
            const input *seed = &seeds->inputs[is_csv ? iteration : iteration - csv_seeds.count];
            in.length = seed->length;
            in.bytes = malloc(in.length + 1);
            memcpy(in.bytes, seed->bytes, in.length);
        } else {
            in = mutate(&seeds->inputs[below(seeds->count)], &seeds->inputs[below(seeds->count)]);
        }
        if (dump >= 0 && (size_t)dump == iteration) {
            fprintf(report, "input %zu: %s, %zu bytes\n", iteration, is_csv ? "CSV" : "arguments", in.length);
            fwrite(in.bytes, 1, in.length, dump_to);
            fclose(dump_to);
            free(in.bytes);
            break;
        }
        current_iteration = iteration;
        if (is_csv)
            fuzz_csv(&in, iteration);
        else
            fuzz_arguments(&in, iteration);
        free(in.bytes);
    }
    current_iteration = SIZE_MAX;
    for (size_t i = 0; i < csv_seeds.count; ++i)
        free(csv_seeds.inputs[i].bytes);
    for (size_t i = 0; i < argument_seeds.count; ++i)
        free(argument_seeds.inputs[i].bytes);
    free(csv_seeds.inputs);
    free(argument_seeds.inputs);
    if (dump < 0)
        fprintf(report, "fuzz_cli_input: %zu seeds and %zu mutated inputs, no failure\n", seed_runs, iterations);
    fclose(report);
    return 0;
}
