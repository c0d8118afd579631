/*
 * csv.h: the command-line tool's CSV reader, apart from the engine so that it
 * can be fuzzed on its own (tests/fuzz/).
 *
 * What a CSV file is here:
 * - Lines end with LF, CR LF or a lone CR (old Mac exports). A UTF-8
 *   byte-order mark at the start is dropped. Blank lines are not rows. A NUL
 *   byte anywhere is an error.
 * - Fields are separated by ',', ';' or tab (detected from the first line
 *   unless given); a pair of double quotes around a field protects separators.
 *   Blanks around a field and one pair of quotes are not part of it.
 * - A field is a number (decimal: 12, -3.5, .5, 1e-3, 1.5E+10), missing
 *   (empty, NA, or nan/NaN as numpy and Julia write a missing value) or text.
 *   Hexadecimal, inf and Infinity are text, and a number beyond the range of a
 *   double (1e309) or so small that it would read as 0 (1e-400) is an error
 *   wherever it is.
 * - The first line is a header when it cannot be data: one of its fields is
 *   text. --header yes / no decide instead. A header taken by that guess is
 *   reported on stderr.
 * - The first line (header or data) sets the count of fields. A line with
 *   fewer is read (the fields it lacks are missing); a line with more is an
 *   error naming it (a ',' inside numbers, as a decimal comma or a thousands
 *   separator, is the likely cause), except for empty fields at its end (a
 *   delimiter ending every line).
 * - A column is named by its header name or its 1-based position. A whole
 *   number that is also a header name (years: 2010,2011) means the column of
 *   that name. A name that two columns of the header have is an error (the
 *   position tells them apart).
 *
 * The readers print their messages on stderr, prefixed "statgpu: ", and
 * return 0 or the tool's exit status for a bad file (2).
 */
#ifndef STATGPU_CLI_CSV_H
#define STATGPU_CLI_CSV_H

#include <stddef.h>
#include <stdio.h>

enum { CSV_BAD_INPUT = 2 };

typedef enum csv_header_mode { CSV_HEADER_AUTO, CSV_HEADER_YES, CSV_HEADER_NO } csv_header_mode;

/* What the reader is asked to read. */
typedef struct csv_settings {
    const char     *name;        /* the file's name in messages */
    char            delimiter;   /* 0 = detect from the first line */
    csv_header_mode header;
    const char     *column;      /* the column reader's column; NULL = the first */
    const char     *columns;     /* the table reader's comma-separated list; NULL = all */
    int             ragged;      /* the table reader keeps every row, a missing field as NaN
                                    (columns of different lengths: igmm's data sets) */
} csv_settings;

/* ---------------------------------------------------------------- fields */

typedef enum csv_field_kind {
    CSV_FIELD_NUMBER,        /* *value is set */
    CSV_FIELD_MISSING,       /* empty, NA or nan */
    CSV_FIELD_TEXT,          /* anything else that is no number */
    CSV_FIELD_OUT_OF_RANGE   /* a decimal number no double can hold */
} csv_field_kind;

/* What a field (without its quotes and blanks) is; *value for a number. */
csv_field_kind csv_field_classify(const char *field, double *value);

/* ---------------------------------------------------------------- records */

typedef struct csv_reader csv_reader;

/* A reader of file, or NULL when out of memory; the caller closes file. */
csv_reader *csv_reader_create(FILE *file, const char *name, char delimiter);
void        csv_reader_destroy(csv_reader *reader);

/* The next non-blank line's fields (blanks and quotes removed), owned by the
 * reader until the next call: 1 with *fields, *field_count and *line_number
 * set, 0 at the end of the file, -1 after a message (a NUL byte, a read
 * error, no memory). */
int csv_reader_next(csv_reader *reader, char ***fields, size_t *field_count, size_t *line_number);

/* --------------------------------------------------------------- readers */

/* The numbers of one column (settings->column), skipping missing fields. */
typedef struct csv_column { double *values; size_t count; } csv_column;

int csv_read_column(const csv_settings *settings, FILE *file, csv_column *out);

/* A table for kmeans and lts: the chosen columns of every line, one
 * observation per line. A line with a missing field in a chosen column stays
 * a row but is incomplete: it is left out of the fit and its per-row output
 * is empty. */
typedef struct csv_table {
    size_t         column_count;    /* columns chosen */
    char         **names;           /* their header names, or xN (N the file's column number) */
    size_t         row_count;       /* data lines */
    unsigned char *complete;        /* row_count flags: 1 when every chosen field is a number */
    size_t         complete_count;
    double        *values;          /* complete rows, column-major with leading dimension
                                       complete_count: row i, column c at values[i + complete_count*c] */
} csv_table;

/* Reads the columns y_spec (when not NULL: first, lts's response) and
 * settings->columns (else every other column). An empty file gives a table of
 * no columns and no rows. */
int  csv_read_table(const csv_settings *settings, FILE *file, const char *y_spec, csv_table *out);
void csv_table_free(csv_table *table);

#endif
