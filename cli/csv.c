/*
 * csv.c: the command-line tool's CSV reader (the rules are in csv.h). No
 * fixed limits: lines, fields and columns grow as the file needs.
 */
#define _POSIX_C_SOURCE 200809L
#include "csv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

/* A growing array with room for element count + 1: values itself or its
 * moved copy, or NULL when out of memory (values then stays as it was). */
static void *room_for(void *values, size_t count, size_t *capacity, size_t element_bytes)
{
    if (count < *capacity)
        return values;
    size_t grown_capacity = *capacity ? *capacity * 2 : 64;
    if (grown_capacity < *capacity || grown_capacity > SIZE_MAX / element_bytes)
        return NULL;
    void *grown = realloc(values, grown_capacity * element_bytes);
    if (grown != NULL)
        *capacity = grown_capacity;
    return grown;
}

/* ---------------------------------------------------------------- fields */

/* The length of a decimal number at text (sign, digits with at most one
 * point, an exponent), 0 when there is none; *nonzero tells whether a digit
 * of its mantissa is not 0. */
static size_t decimal_length(const char *text, int *nonzero)
{
    const char *c = text;
    size_t digits = 0;
    *nonzero = 0;
    if (*c == '+' || *c == '-')
        ++c;
    for (; isdigit((unsigned char)*c); ++c, ++digits)
        *nonzero |= *c != '0';
    if (*c == '.')
        for (++c; isdigit((unsigned char)*c); ++c, ++digits)
            *nonzero |= *c != '0';
    if (digits == 0)
        return 0;
    if (*c == 'e' || *c == 'E') {
        const char *exponent = c + 1;
        if (*exponent == '+' || *exponent == '-')
            ++exponent;
        if (isdigit((unsigned char)*exponent)) {
            c = exponent;
            while (isdigit((unsigned char)*c))
                ++c;
        }
    }
    return (size_t)(c - text);
}

csv_field_kind csv_field_classify(const char *field, double *value)
{
    if (field[0] == '\0' || strcmp(field, "NA") == 0 || ((field[0] | 0x20) == 'n' && strcasecmp(field, "nan") == 0))
        return CSV_FIELD_MISSING;
    int nonzero;
    size_t length = decimal_length(field, &nonzero);
    if (length == 0 || field[length] != '\0')
        return CSV_FIELD_TEXT;  /* hexadecimal, inf and words included */
    errno = 0;
    double parsed = strtod(field, NULL);
    if (isinf(parsed) || (parsed == 0 && nonzero))
        return CSV_FIELD_OUT_OF_RANGE;
    *value = parsed;
    return CSV_FIELD_NUMBER;
}

/* ---------------------------------------------------------------- records */

struct csv_reader {
    FILE       *file;
    const char *name;
    char        delimiter;
    char       *chunk;          /* up to and with an LF: may hold lines ended by CR */
    size_t      chunk_capacity;
    char       *buffer;         /* the file's bytes read ahead (read_chunk) */
    size_t      buffer_start, buffer_end;
    size_t      chunk_length;
    size_t      chunk_next;     /* where the next line of chunk starts */
    char       *line;           /* the line last read, in chunk */
    char      **fields;
    size_t      field_capacity;
    size_t      line_number;    /* of the line last read */
};

csv_reader *csv_reader_create(FILE *file, const char *name, char delimiter)
{
    csv_reader *reader = calloc(1, sizeof *reader);
    if (reader != NULL) {
        reader->file = file;
        reader->name = name;
        reader->delimiter = delimiter;
    }
    return reader;
}

void csv_reader_destroy(csv_reader *reader)
{
    if (reader == NULL)
        return;
    free(reader->chunk);
    free(reader->buffer);
    free(reader->fields);
    free(reader);
}

enum { READ_AHEAD = 1 << 16 };
/* The longest line read: beyond it a file is not a table (a stream with no
 * line break, such as /dev/zero, would otherwise fill the memory). */
#define LONGEST_LINE ((size_t)1 << 30)

/* Reads the file's next bytes up to and with an LF (or to its end) into
 * reader->chunk, NUL-terminated, as getdelim would, but in pieces of
 * READ_AHEAD bytes: it stops early after a piece holding a NUL byte (the
 * line's check then refuses it) and refuses a line beyond LONGEST_LINE. The
 * chunk's length; 0 at the end of the file; -1 after a message. */
static ssize_t read_chunk(csv_reader *reader)
{
    size_t length = 0;
    if (reader->buffer == NULL && (reader->buffer = malloc(READ_AHEAD)) == NULL) {
        fprintf(stderr, "statgpu: %s: out of memory\n", reader->name);
        return -1;
    }
    for (;;) {
        if (reader->buffer_start == reader->buffer_end) {
            reader->buffer_start = 0;
            reader->buffer_end = fread(reader->buffer, 1, READ_AHEAD, reader->file);
            if (reader->buffer_end == 0) {
                if (ferror(reader->file)) {
                    fprintf(stderr, "statgpu: %s: read error after line %zu\n", reader->name, reader->line_number);
                    return -1;
                }
                break;
            }
        }
        const char *piece = reader->buffer + reader->buffer_start;
        size_t available = reader->buffer_end - reader->buffer_start;
        const char *lf = memchr(piece, '\n', available);
        size_t take = lf != NULL ? (size_t)(lf - piece) + 1 : available;
        if (length + take > LONGEST_LINE) {
            fprintf(stderr, "statgpu: %s:%zu: a line longer than %zu bytes (not a table?)\n", reader->name,
                    reader->line_number + 1, LONGEST_LINE);
            return -1;
        }
        if (length + take + 1 > reader->chunk_capacity) {
            size_t capacity = reader->chunk_capacity ? reader->chunk_capacity : 256;
            while (capacity < length + take + 1)
                capacity *= 2;
            char *grown = realloc(reader->chunk, capacity);
            if (grown == NULL) {
                fprintf(stderr, "statgpu: %s: out of memory after line %zu\n", reader->name, reader->line_number);
                return -1;
            }
            reader->chunk = grown;
            reader->chunk_capacity = capacity;
        }
        memcpy(reader->chunk + length, piece, take);
        length += take;
        reader->buffer_start += take;
        if (lf != NULL || memchr(piece, '\0', take) != NULL)
            break;
    }
    if (length > 0)
        reader->chunk[length] = '\0';
    return (ssize_t)length;
}

/* Reads one line (LF, CR LF or CR ended) into reader->line, its end made a
 * NUL: 1, 0 at the end of the file, -1 after a message. */
static int read_line(csv_reader *reader, size_t *length)
{
    if (reader->chunk_next >= reader->chunk_length) {
        ssize_t got = read_chunk(reader);
        if (got < 0)
            return -1;
        if (got == 0)
            return 0;
        int first = reader->line_number == 0 && reader->chunk_length == 0;
        reader->chunk_length = (size_t)got;
        reader->chunk_next = 0;
        if (first && got >= 3 && memcmp(reader->chunk, "\xef\xbb\xbf", 3) == 0)
            reader->chunk_next = 3;  /* the UTF-8 byte-order mark */
    }
    char *start = reader->chunk + reader->chunk_next, *end = start;
    char *stop = reader->chunk + reader->chunk_length;
    if (reader->chunk_next == 0 && memchr(start, '\r', reader->chunk_length) == NULL)
        end = stop - (stop > start && stop[-1] == '\n');  /* one LF-ended line, the usual case */
    else
        while (end < stop && *end != '\n' && *end != '\r')
            ++end;
    ++reader->line_number;
    if (memchr(start, '\0', (size_t)(end - start)) != NULL) {
        fprintf(stderr, "statgpu: %s:%zu: the line holds a NUL byte (not a text file?)\n", reader->name,
                reader->line_number);
        return -1;
    }
    size_t next = (size_t)(end - reader->chunk) + (end < stop);
    if (end < stop && *end == '\r' && end + 1 < stop && end[1] == '\n')
        ++next;
    *end = '\0';  /* read_chunk leaves a NUL after the chunk */
    reader->chunk_next = next;
    reader->line = start;
    *length = (size_t)(end - start);
    return 1;
}

/* The separator of a CSV file: whichever of ',', ';' and tab its first line
 * holds most of outside quotes (',' when none). */
static char detect_delimiter(const char *line)
{
    const char candidates[] = { ',', ';', '\t' };
    size_t seen[3] = { 0 };
    int quoted = 0;
    for (const char *p = line; *p; ++p) {
        quoted ^= *p == '"';
        for (size_t c = 0; c < 3 && !quoted; ++c)
            seen[c] += *p == candidates[c];
    }
    char delimiter = ',';
    size_t best = 0;
    for (size_t c = 0; c < 3; ++c)
        if (seen[c] > best) {
            best = seen[c];
            delimiter = candidates[c];
        }
    return delimiter;
}

/* A field in place without surrounding blanks and one pair of quotes (a
 * doubled quote inside them stands for one). */
static char *clean_field(char *field)
{
    while (isspace((unsigned char)*field))
        ++field;
    size_t n = strlen(field);
    while (n > 0 && isspace((unsigned char)field[n - 1]))
        --n;
    field[n] = '\0';
    if (n >= 2 && field[0] == '"' && field[n - 1] == '"') {
        field[n - 1] = '\0';
        ++field;
        char *to = field;
        for (const char *from = field; *from; ++from) {
            *to++ = *from;
            if (from[0] == '"' && from[1] == '"')
                ++from;
        }
        *to = '\0';
    }
    return field;
}

int csv_reader_next(csv_reader *reader, char ***fields, size_t *field_count, size_t *line_number)
{
    size_t length = 0;
    for (;;) {
        int got = read_line(reader, &length);
        if (got <= 0)
            return got;
        size_t blank = 0;
        while (blank < length && isspace((unsigned char)reader->line[blank]))
            ++blank;
        if (blank < length)
            break;
    }
    if (reader->delimiter == 0)
        reader->delimiter = detect_delimiter(reader->line);
    size_t count = 0;
    char *start = reader->line;
    int quoted = 0;
    for (char *c = reader->line;; ++c) {
        if (*c == '"')
            quoted = !quoted;
        if ((*c == reader->delimiter && !quoted) || *c == '\0') {
            int end = *c == '\0';
            *c = '\0';
            char **grown = room_for(reader->fields, count, &reader->field_capacity, sizeof *grown);
            if (grown == NULL) {
                fprintf(stderr, "statgpu: %s:%zu: out of memory\n", reader->name, reader->line_number);
                return -1;
            }
            reader->fields = grown;
            reader->fields[count++] = start;
            if (end)
                break;
            start = c + 1;
        }
    }
    for (size_t j = 0; j < count; ++j)
        reader->fields[j] = clean_field(reader->fields[j]);
    *fields = reader->fields;
    *field_count = count;
    *line_number = reader->line_number;
    return 1;
}

/* --------------------------------------------------------------- columns */

/* A column position from text: 1 with *number for a whole number (of any
 * sign), 0 for anything else. */
static int whole_number(const char *text, long *number)
{
    char *end;
    errno = 0;
    long parsed = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || isspace((unsigned char)text[0]))
        return 0;
    *number = parsed;
    return 1;
}

/* The 0-based column that spec names on a first line of field_count fields,
 * a header or not; -1 after a message when there is none. */
static long find_column(const csv_settings *settings, const char *spec, char **fields, size_t field_count,
                        int header)
{
    long number = 0;
    int is_number = whole_number(spec, &number);
    if (header)
        for (size_t c = 0; c < field_count; ++c)
            if (strcmp(fields[c], spec) == 0) {
                for (size_t other = c + 1; other < field_count; ++other)
                    if (strcmp(fields[other], spec) == 0) {
                        fprintf(stderr, "statgpu: %s: columns %zu and %zu of the header are both named '%s': give"
                                        " the number of the one meant\n", settings->name, c + 1, other + 1, spec);
                        return -1;
                    }
                if (is_number && number >= 1 && (size_t)number <= field_count && (size_t)number != c + 1)
                    fprintf(stderr, "statgpu: %s: column '%s' is the header's column %zu named so, not column %ld\n",
                            settings->name, spec, c + 1, number);
                return (long)c;
            }
    if (is_number && number < 1) {
        fprintf(stderr, "statgpu: %s: no column %ld: columns are numbered from 1\n", settings->name, number);
        return -1;
    }
    if (is_number && (size_t)number > field_count) {
        fprintf(stderr, "statgpu: %s: no column %ld (the %s has %zu %s)\n", settings->name, number,
                header ? "header" : "first line", field_count, header ? "columns" : "fields");
        for (size_t c = 0; !header && c < field_count; ++c)
            if (strcmp(fields[c], spec) == 0)
                fprintf(stderr, "statgpu: the first line names a column '%s': give --header yes if it is a header\n",
                        spec);
        return -1;
    }
    if (is_number)
        return number - 1;
    if (!header) {
        fprintf(stderr, "statgpu: %s: no column named '%s': the first line is %s\n", settings->name, spec,
                settings->header == CSV_HEADER_NO ? "not a header (--header no)"
                                                  : "data, not a header (give --header yes if it is one)");
        return -1;
    }
    fprintf(stderr, "statgpu: %s: no column named '%s' in the header\n", settings->name, spec);
    return -1;
}

/* Whether the first line is a header, by settings->header or else the
 * guess: a field that is text cannot be data. The guess is reported unless
 * quiet (a column named by the header). */
static int is_header(const csv_settings *settings, char **fields, size_t field_count, int quiet)
{
    if (settings->header != CSV_HEADER_AUTO)
        return settings->header == CSV_HEADER_YES;
    for (size_t c = 0; c < field_count; ++c) {
        double ignored;
        if (csv_field_classify(fields[c], &ignored) == CSV_FIELD_TEXT) {
            if (!quiet)
                fprintf(stderr,
                        "statgpu: %s: first line taken as a header (field %zu, '%.40s', is not a number);"
                        " --header no reads it as data\n",
                        settings->name, c + 1, fields[c]);
            return 1;
        }
    }
    return 0;
}

/* Whether spec names a column by name: not a whole number. */
static int names_column(const char *spec)
{
    long ignored;
    return spec != NULL && !whole_number(spec, &ignored);
}

/* A field that is out of range or text where a number is needed: the
 * message, naming line and column. */
static int bad_number(const csv_settings *settings, size_t line_number, size_t column, const char *field,
                      csv_field_kind kind)
{
    char *end;
    if (kind == CSV_FIELD_OUT_OF_RANGE)
        fprintf(stderr, "statgpu: %s:%zu: column %zu: '%.60s' is beyond the range of a double (4.9e-324 to 1.8e308"
                        " in size)\n", settings->name, line_number, column + 1, field);
    else if (strtod(field, &end), end != field && *end == '\0')
        fprintf(stderr, "statgpu: %s:%zu: column %zu: '%.60s' is not a decimal number (hexadecimal numbers and"
                        " infinities are not read)\n", settings->name, line_number, column + 1, field);
    else
        fprintf(stderr, "statgpu: %s:%zu: column %zu: '%.60s' is not a number\n", settings->name, line_number,
                column + 1, field);
    return CSV_BAD_INPUT;
}

/* A data line with more fields than the first line (the header, or the
 * first line of data) is refused: which column each of its fields belongs to
 * cannot be told. Most often a ',' inside numbers, a decimal comma (1,5) or a
 * thousands separator (1,234), in a file whose first line holds fewer commas.
 * Empty fields past the first line's count (a delimiter ending the line) are
 * not counted. 0, or CSV_BAD_INPUT after a message naming the line, both
 * counts and the likely cause. */
static int check_field_count(const csv_settings *settings, const csv_reader *reader, char **fields,
                             size_t field_count, size_t first_count, int header, size_t line_number)
{
    size_t used = field_count;
    while (used > first_count && fields[used - 1][0] == '\0')
        --used;
    if (used <= first_count)
        return 0;
    size_t extra = first_count;  /* the first field beyond the count that is not empty */
    while (fields[extra][0] == '\0')
        ++extra;
    fprintf(stderr, "statgpu: %s:%zu: %zu fields, but the %s has %zu (field %zu is '%.40s')\n", settings->name,
            line_number, used, header ? "header" : "first line", first_count, extra + 1, fields[extra]);
    if (reader->delimiter == ',')
        fprintf(stderr, "statgpu: ',' may be a decimal comma or a thousands separator here; statgpu reads '.' as"
                        " the decimal point and no thousands separators: write 1,5 as 1.5 and 1,234 as 1234, or"
                        " give --delimiter if another character separates the fields\n");
    else
        fprintf(stderr, "statgpu: a line may have no more fields than the %s (a field that holds the delimiter"
                        " must be quoted)\n", header ? "header" : "first line");
    return CSV_BAD_INPUT;
}

/* ------------------------------------------------------------ one column */

int csv_read_column(const csv_settings *settings, FILE *file, csv_column *out)
{
    csv_reader *reader = csv_reader_create(file, settings->name, settings->delimiter);
    if (reader == NULL) {
        fprintf(stderr, "statgpu: out of memory\n");
        return CSV_BAD_INPUT;
    }
    char **fields;
    size_t field_count, line_number, column = 0, skipped = 0, short_lines = 0, capacity = 0, first_count = 0;
    int status = 0, first = 1, header = 0, got = 0;
    out->values = NULL;
    out->count = 0;

    while ((got = csv_reader_next(reader, &fields, &field_count, &line_number)) == 1) {
        if (first) {
            first = 0;
            int by_name = names_column(settings->column);
            if (by_name && settings->header == CSV_HEADER_NO) {
                fprintf(stderr, "statgpu: a column named by the header needs a header line (not --header no)\n");
                status = CSV_BAD_INPUT;
                break;
            }
            header = is_header(settings, fields, field_count, by_name);
            long found = settings->column == NULL ? 0 : find_column(settings, settings->column, fields, field_count,
                                                                   header);
            if (found < 0) {
                status = CSV_BAD_INPUT;
                break;
            }
            column = (size_t)found;
            first_count = field_count;
            if (header)
                continue;
        }
        if ((status = check_field_count(settings, reader, fields, field_count, first_count, header, line_number)) != 0)
            break;
        if (column >= field_count) {
            ++short_lines;
            continue;
        }
        double value;
        csv_field_kind kind = csv_field_classify(fields[column], &value);
        if (kind == CSV_FIELD_MISSING) {
            ++skipped;
            continue;
        }
        if (kind != CSV_FIELD_NUMBER) {
            status = bad_number(settings, line_number, column, fields[column], kind);
            break;
        }
        double *values = room_for(out->values, out->count, &capacity, sizeof *values);
        if (values == NULL) {
            fprintf(stderr, "statgpu: out of memory after %zu values\n", out->count);
            status = CSV_BAD_INPUT;
            break;
        }
        out->values = values;
        out->values[out->count++] = value;
    }
    if (got < 0)
        status = CSV_BAD_INPUT;
    csv_reader_destroy(reader);
    if (status == 0 && skipped > 0)
        fprintf(stderr, "statgpu: skipped %zu empty or NA fields\n", skipped);
    if (status == 0 && short_lines > 0)
        fprintf(stderr, "statgpu: skipped %zu lines that have no column %zu\n", short_lines, column + 1);
    if (status != 0) {
        free(out->values);
        out->values = NULL;
        out->count = 0;
    }
    return status;
}

/* ----------------------------------------------------------------- table */

void csv_table_free(csv_table *table)
{
    for (size_t c = 0; c < table->column_count && table->names != NULL; ++c)
        free(table->names[c]);
    free(table->names);
    free(table->complete);
    free(table->values);
    memset(table, 0, sizeof *table);
}

/* The columns to read, in order: y_spec's first when given (lts's
 * response), then those of settings->columns, else every other column of the
 * first line. 0, or CSV_BAD_INPUT after a message. */
static int choose_columns(const csv_settings *settings, const char *y_spec, char **fields, size_t field_count,
                          int header, size_t **out_columns, size_t *out_count)
{
    size_t capacity = field_count + 1;
    if (settings->columns != NULL)
        for (const char *c = settings->columns; *c; ++c)
            capacity += *c == ',';
    size_t *columns = malloc(capacity * sizeof *columns);
    if (columns == NULL) {
        fprintf(stderr, "statgpu: out of memory\n");
        return CSV_BAD_INPUT;
    }
    size_t count = 0;
    if (y_spec != NULL) {
        long y = find_column(settings, y_spec, fields, field_count, header);
        if (y < 0) {
            free(columns);
            return CSV_BAD_INPUT;
        }
        columns[count++] = (size_t)y;
    }
    if (settings->columns != NULL) {
        char *copy = strdup(settings->columns), *save = NULL;
        if (copy == NULL) {
            free(columns);
            fprintf(stderr, "statgpu: out of memory\n");
            return CSV_BAD_INPUT;
        }
        for (char *spec = strtok_r(copy, ",", &save); spec != NULL; spec = strtok_r(NULL, ",", &save)) {
            long column = find_column(settings, spec, fields, field_count, header);
            if (column < 0) {
                free(copy);
                free(columns);
                return CSV_BAD_INPUT;
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
                return CSV_BAD_INPUT;
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

/* Whether any comma-separated spec of list names a column by name. */
static int list_names_column(const char *list)
{
    if (list == NULL)
        return 0;
    char *copy = strdup(list), *save = NULL;
    int named = copy == NULL;
    for (char *spec = copy ? strtok_r(copy, ",", &save) : NULL; spec != NULL; spec = strtok_r(NULL, ",", &save))
        named |= names_column(spec);
    free(copy);
    return named;
}

int csv_read_table(const csv_settings *settings, FILE *file, const char *y_spec, csv_table *out)
{
    memset(out, 0, sizeof *out);
    csv_reader *reader = csv_reader_create(file, settings->name, settings->delimiter);
    if (reader == NULL) {
        fprintf(stderr, "statgpu: out of memory\n");
        return CSV_BAD_INPUT;
    }
    char **fields;
    size_t field_count, line_number;
    size_t *columns = NULL;
    double *values = NULL;
    size_t value_count = 0, value_capacity = 0, complete_capacity = 0, first_count = 0, short_rows = 0;
    int status = 0, first = 1, header = 0, got = 0;

    while (status == 0 && (got = csv_reader_next(reader, &fields, &field_count, &line_number)) == 1) {
        if (first) {
            first = 0;
            int by_name = names_column(y_spec) || list_names_column(settings->columns);
            if (by_name && settings->header == CSV_HEADER_NO) {
                fprintf(stderr, "statgpu: columns named by the header need a header line (not --header no)\n");
                status = CSV_BAD_INPUT;
                break;
            }
            /* Empty fields ending the first line (a delimiter ending every
             * line, as some spreadsheets export) make no columns. */
            while (field_count > 1 && fields[field_count - 1][0] == '\0')
                --field_count;
            header = is_header(settings, fields, field_count, by_name);
            first_count = field_count;
            status = choose_columns(settings, y_spec, fields, field_count, header, &columns, &out->column_count);
            if (status != 0)
                break;
            out->names = calloc(out->column_count ? out->column_count : 1, sizeof *out->names);
            for (size_t c = 0; out->names != NULL && c < out->column_count; ++c) {
                char number[32];
                snprintf(number, sizeof number, "x%zu", columns[c] + 1);
                out->names[c] = strdup(header ? fields[columns[c]] : number);
                if (out->names[c] == NULL)
                    status = CSV_BAD_INPUT;
            }
            if (out->names == NULL || status != 0) {
                fprintf(stderr, "statgpu: out of memory\n");
                status = CSV_BAD_INPUT;
                break;
            }
            if (header)
                continue;
        }
        /* A data line: a row, complete when every chosen field is a number. */
        if ((status = check_field_count(settings, reader, fields, field_count, first_count, header, line_number)) != 0)
            break;
        size_t mark = value_count;
        int whole = 1, too_short = 0;
        for (size_t c = 0; c < out->column_count; ++c) {
            size_t column = columns[c];
            double value;
            csv_field_kind kind = column < field_count ? csv_field_classify(fields[column], &value)
                                                       : CSV_FIELD_MISSING;
            if (kind == CSV_FIELD_MISSING && settings->ragged) {
                kind = CSV_FIELD_NUMBER;
                value = NAN;
            }
            if (kind == CSV_FIELD_MISSING) {
                whole = 0;
                too_short |= column >= field_count;
                continue;
            }
            if (kind != CSV_FIELD_NUMBER) {
                status = bad_number(settings, line_number, column, fields[column], kind);
                break;
            }
            double *grown = whole ? room_for(values, value_count, &value_capacity, sizeof *values) : values;
            if (grown == NULL) {
                fprintf(stderr, "statgpu: out of memory after %zu rows\n", out->row_count);
                status = CSV_BAD_INPUT;
                break;
            }
            values = grown;
            if (whole)
                values[value_count++] = value;
        }
        if (status != 0)
            break;
        if (!whole)
            value_count = mark;
        short_rows += (size_t)too_short;
        unsigned char *complete = room_for(out->complete, out->row_count, &complete_capacity, 1);
        if (complete == NULL) {
            fprintf(stderr, "statgpu: out of memory after %zu rows\n", out->row_count);
            status = CSV_BAD_INPUT;
            break;
        }
        out->complete = complete;
        out->complete[out->row_count++] = (unsigned char)whole;
        out->complete_count += (size_t)whole;
    }
    if (got < 0)
        status = CSV_BAD_INPUT;
    csv_reader_destroy(reader);
    if (status == 0) {
        /* Column-major for the engine; never NULL, so an empty table reaches
         * the engine and gets its message. */
        size_t n = out->complete_count, d = out->column_count;
        out->values = malloc((n * d > 0 ? n * d : 1) * sizeof *out->values);
        if (out->values == NULL) {
            fprintf(stderr, "statgpu: out of memory\n");
            status = CSV_BAD_INPUT;
        }
        for (size_t i = 0; status == 0 && i < n; ++i)
            for (size_t c = 0; c < d; ++c)
                out->values[i + n * c] = values[i * d + c];
        if (status == 0 && out->complete == NULL && (out->complete = calloc(1, 1)) == NULL) {
            fprintf(stderr, "statgpu: out of memory\n");
            status = CSV_BAD_INPUT;
        }
    }
    if (status == 0 && out->row_count > out->complete_count && short_rows == 0)
        fprintf(stderr, "statgpu: left out %zu rows with empty or NA fields\n", out->row_count - out->complete_count);
    else if (status == 0 && out->row_count > out->complete_count)
        fprintf(stderr, "statgpu: left out %zu rows with empty or NA fields, %zu of them lines with fewer fields than"
                        " the %s (%zu)\n", out->row_count - out->complete_count, short_rows,
                header ? "header" : "first line", first_count);
    free(columns);
    free(values);
    if (status != 0)
        csv_table_free(out);
    return status;
}
