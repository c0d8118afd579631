/*
 * test_reference_csv.h: reading the committed outputs of trusted programs
 * (tests/reference/) in the reference tests: opening a file of the reference
 * folder, a numeric CSV with one header line, and a run of numbers in a
 * field. Include after <cmocka.h>.
 */
#ifndef STATGPU_TEST_REFERENCE_CSV_H
#define STATGPU_TEST_REFERENCE_CSV_H

#include <stdio.h>
#include <stdlib.h>

#define TEST_REFERENCE_LINE_BYTES (1 << 16)

/* dir/name opened for reading; the test fails when it cannot be. */
static inline FILE *test_open_reference(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen(path, "r");
    if (file == NULL)
        fail_msg("cannot open %s", path);
    return file;
}

/* dir/name, a CSV of numbers with one header line: its values row-major
 * (the caller frees them), *columns as many as the header has fields and
 * *rows whole rows. */
static inline double *test_read_numeric_csv(const char *dir, const char *name, size_t *rows, size_t *columns)
{
    FILE *file = test_open_reference(dir, name);
    char *line = malloc(TEST_REFERENCE_LINE_BYTES);
    assert_non_null(fgets(line, TEST_REFERENCE_LINE_BYTES, file));
    size_t width = 1;
    for (char *c = line; *c; ++c)
        width += *c == ',';
    size_t capacity = 1024, count = 0;
    double *values = malloc(capacity * sizeof *values);
    while (fgets(line, TEST_REFERENCE_LINE_BYTES, file)) {
        char *cursor = line;
        for (size_t v = 0; v < width; ++v) {
            if (count == capacity)
                values = realloc(values, (capacity *= 2) * sizeof *values);
            values[count++] = strtod(cursor, &cursor);
            if (*cursor == ',')
                ++cursor;
        }
    }
    fclose(file);
    free(line);
    *rows = count / width;
    *columns = width;
    return values;
}

/* The numbers of text (separated by blanks), at most capacity of them. */
static inline size_t test_parse_numbers(const char *text, double *out, size_t capacity)
{
    size_t count = 0;
    char *end;
    while (count < capacity) {
        double value = strtod(text, &end);
        if (end == text)
            break;
        out[count++] = value;
        text = end;
    }
    return count;
}

#endif
