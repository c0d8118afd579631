/*
 * core/table.c: result tables (statgpu.h's "Result tables"): the set that owns
 * them, the cells and labels a method's builder fills, the row map that puts
 * per-row values at the caller's rows and leaves the rows it left out empty,
 * and the registry of each method's table names.
 */
#include "core/table.h"
#include "internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The public view first, so that a set hands out &table->view; the rest are
 * the same arrays, writable while the table is built. */
struct sg_table {
    statgpu_table  view;
    char         **column_headers;
    char          *row_label_header;
    char         **row_labels;
    double        *values;
    unsigned char *cell_kinds;
    char         **texts;
};

struct statgpu_table_set {
    size_t    count;
    size_t    capacity;  /* fixed when the set is made: tables never move */
    sg_table *tables;
};

/* The oldest statgpu_table_params a caller can pass: every field so far. */
#define SG_TABLE_PARAMS_MIN_BYTES (offsetof(statgpu_table_params, table_name) + sizeof(const char *))

/* ----------------------------------------------------------------- registry */

/* One line per method. */
static const sg_table_catalogue *const sg_catalogues[] = {
    &sg_kmeans_table_catalogue,
    &sg_lts_table_catalogue,
    &sg_gmm_table_catalogue,
    &sg_igmm_table_catalogue,
    &sg_bestsubset_table_catalogue,
};

const sg_table_catalogue *sg_table_catalogue_of(const char *method)
{
    if (method == NULL)
        return NULL;
    for (size_t m = 0; m < sizeof sg_catalogues / sizeof *sg_catalogues; ++m)
        if (strcmp(sg_catalogues[m]->method, method) == 0)
            return sg_catalogues[m];
    return NULL;
}

static int sg_is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static char sg_ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* word equals name (lower case) in ASCII letters of any case, blanks around
 * word ignored: Calc users type "Labels" or "summary ". */
static bool sg_same_word(const char *word, const char *name)
{
    while (sg_is_blank(*word))
        ++word;
    size_t length = strlen(word);
    while (length > 0 && sg_is_blank(word[length - 1]))
        --length;
    if (length != strlen(name))
        return false;
    for (size_t j = 0; j < length; ++j)
        if (sg_ascii_lower(word[j]) != name[j])
            return false;
    return true;
}

size_t sg_table_catalogue_index(const sg_table_catalogue *catalogue, const char *name)
{
    if (name != NULL)
        for (size_t j = 0; j < catalogue->count; ++j)
            if (sg_same_word(name, catalogue->names[j]))
                return j;
    return catalogue->count;
}

const char *const *statgpu_method_table_names(const char *method)
{
    const sg_table_catalogue *catalogue = sg_table_catalogue_of(method);
    return catalogue != NULL ? catalogue->names : NULL;
}

const char *statgpu_method_table_title(const char *method, const char *table_name)
{
    const sg_table_catalogue *catalogue = sg_table_catalogue_of(method);
    if (catalogue == NULL)
        return NULL;
    size_t index = sg_table_catalogue_index(catalogue, table_name);
    return index < catalogue->count ? catalogue->titles[index] : NULL;
}

/* ---------------------------------------------------------------------- set */

size_t statgpu_table_set_count(const statgpu_table_set *set)
{
    return set != NULL ? set->count : 0;
}

const statgpu_table *statgpu_table_set_get(const statgpu_table_set *set, size_t index)
{
    if (set == NULL || index >= set->count)
        return NULL;
    return &set->tables[index].view;
}

const statgpu_table *statgpu_table_set_find(const statgpu_table_set *set, const char *name)
{
    if (set == NULL || name == NULL)
        return NULL;
    for (size_t j = 0; j < set->count; ++j)
        if (sg_same_word(name, set->tables[j].view.name))
            return &set->tables[j].view;
    return NULL;
}

static void sg_free_texts(char **texts, size_t count)
{
    if (texts == NULL)
        return;
    for (size_t j = 0; j < count; ++j)
        free(texts[j]);
    free(texts);
}

static void sg_table_free(sg_table *table)
{
    size_t cells = table->view.row_count * table->view.column_count;  /* checked when made */
    sg_free_texts(table->column_headers, table->view.column_count);
    free(table->row_label_header);
    sg_free_texts(table->row_labels, table->view.row_count);
    free(table->values);
    free(table->cell_kinds);
    sg_free_texts(table->texts, cells);
}

void statgpu_table_set_destroy(statgpu_table_set *set)
{
    if (set == NULL)
        return;
    for (size_t j = 0; j < set->count; ++j)
        sg_table_free(&set->tables[j]);
    free(set->tables);
    free(set);
}

/* ------------------------------------------------------------------ building */

void statgpu_table_params_init(statgpu_table_params *params)
{
    if (params == NULL)
        return;
    memset(params, 0, sizeof *params);
    params->struct_bytes = sizeof *params;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool sg_table_fail(sg_table_build *build, statgpu_status status, const char *format, ...)
{
    char message[SG_MESSAGE_BYTES];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    if (build->status == STATGPU_OK) {
        build->status = status;
        sg_fail(build->context, status, "%s", message);
    }
    return false;
}

static bool sg_table_out_of_memory(sg_table_build *build)
{
    return sg_table_fail(build, STATGPU_ERROR_OUT_OF_MEMORY, "out of memory for the result tables");
}

/* The names the catalogue offers, for a message: "a", "b", "c". */
static void sg_list_names(const sg_table_catalogue *catalogue, char *text, size_t text_bytes)
{
    size_t used = 0;
    text[0] = '\0';
    for (size_t j = 0; j < catalogue->count && used < text_bytes; ++j) {
        int written = snprintf(text + used, text_bytes - used, "%s\"%s\"", j > 0 ? ", " : "",
                               catalogue->names[j]);
        if (written < 0)
            break;
        used += (size_t)written;
    }
}

/* The row map is the caller's promise of where each observation lies. A
 * wrong one would put values beside the wrong rows, silently: so it is
 * checked in full, once (O(n_obs), no allocation). */
static bool sg_check_row_map(sg_table_build *build)
{
    const statgpu_table_params *params = &build->params;
    if (params->source_rows == NULL) {
        if (params->source_row_count != 0 && params->source_row_count != build->n_obs)
            return sg_table_fail(build, STATGPU_ERROR_INVALID_ARGUMENT,
                                 "source_row_count is %zu but source_rows is NULL: without a row map the "
                                 "rows are the result's %zu observations", params->source_row_count, build->n_obs);
        build->source_row_count = build->n_obs;
        return true;
    }
    if (params->source_row_count < build->n_obs)
        return sg_table_fail(build, STATGPU_ERROR_INVALID_ARGUMENT,
                             "source_row_count is %zu, fewer than the result's %zu observations",
                             params->source_row_count, build->n_obs);
    for (size_t i = 0; i < build->n_obs; ++i) {
        size_t row = params->source_rows[i];
        if (row >= params->source_row_count)
            return sg_table_fail(build, STATGPU_ERROR_INVALID_ARGUMENT,
                                 "source_rows[%zu] is %zu, not below source_row_count %zu", i, row,
                                 params->source_row_count);
        if (i > 0 && row <= params->source_rows[i - 1])
            return sg_table_fail(build, STATGPU_ERROR_INVALID_ARGUMENT,
                                 "source_rows[%zu] is %zu, not above source_rows[%zu] = %zu: the row map "
                                 "must be strictly increasing", i, row, i - 1, params->source_rows[i - 1]);
    }
    build->source_row_count = params->source_row_count;
    return true;
}

statgpu_status sg_table_build_begin(sg_table_build *build, statgpu_context *context,
                                    const sg_table_catalogue *catalogue, const statgpu_table_params *params,
                                    size_t n_obs, size_t n_vars, statgpu_table_set **out_set)
{
    memset(build, 0, sizeof *build);
    build->context = context;
    build->catalogue = catalogue;
    build->n_obs = n_obs;
    build->n_vars = n_vars;
    *out_set = NULL;

    statgpu_table_params_init(&build->params);
    if (params != NULL) {
        /* A caller built against an older, shorter struct passes its own size;
         * fields it does not know keep their defaults. */
        if (params->struct_bytes < SG_TABLE_PARAMS_MIN_BYTES || params->struct_bytes > sizeof build->params) {
            sg_table_fail(build, STATGPU_ERROR_INVALID_ARGUMENT,
                          "params->struct_bytes is %zu; call statgpu_table_params_init first",
                          params->struct_bytes);
            return build->status;
        }
        memcpy(&build->params, params, params->struct_bytes);
        build->params.struct_bytes = sizeof build->params;
    }
    if (build->params.table_name != NULL
        && sg_table_catalogue_index(catalogue, build->params.table_name) == catalogue->count) {
        char names[256];
        sg_list_names(catalogue, names, sizeof names);
        sg_table_fail(build, STATGPU_ERROR_INVALID_ARGUMENT, "%s has no table \"%s\"; its tables are %s",
                      catalogue->method, build->params.table_name, names);
        return build->status;
    }
    if (build->params.variable_names != NULL)
        for (size_t v = 0; v < n_vars; ++v)
            if (build->params.variable_names[v] == NULL) {
                sg_table_fail(build, STATGPU_ERROR_INVALID_ARGUMENT, "variable_names[%zu] is NULL", v);
                return build->status;
            }
    if (!sg_check_row_map(build))
        return build->status;

    build->set = calloc(1, sizeof *build->set);
    if (build->set != NULL)
        build->set->tables = calloc(catalogue->count, sizeof *build->set->tables);
    if (build->set == NULL || build->set->tables == NULL) {
        free(build->set);
        build->set = NULL;
        sg_table_out_of_memory(build);
        return build->status;
    }
    build->set->capacity = catalogue->count;
    return STATGPU_OK;
}

bool sg_table_wanted(const sg_table_build *build, size_t index)
{
    if (build->status != STATGPU_OK)
        return false;
    return build->params.table_name == NULL
           || sg_table_catalogue_index(build->catalogue, build->params.table_name) == index;
}

/* count * size, or 0 where it overflows (callers ask for at least 1 byte). */
static size_t sg_bytes(size_t count, size_t size)
{
    return count > SIZE_MAX / size ? 0 : count * size;
}

sg_table *sg_table_add(sg_table_build *build, size_t index, size_t row_count, size_t column_count)
{
    statgpu_table_set *set = build->set;
    if (set->count == set->capacity) {  /* each catalogue entry is built once */
        sg_table_fail(build, STATGPU_ERROR_INTERNAL, "more tables than the catalogue of %s lists",
                      build->catalogue->method);
        return NULL;
    }
    /* Every array gets at least one element: malloc(0) may return NULL. */
    size_t cells = column_count > 0 && row_count > SIZE_MAX / column_count ? 0 : row_count * column_count;
    size_t value_bytes = sg_bytes(cells > 0 ? cells : 1, sizeof(double));
    size_t header_bytes = sg_bytes(column_count > 0 ? column_count : 1, sizeof(char *));
    if ((cells == 0 && row_count > 0 && column_count > 0) || value_bytes == 0 || header_bytes == 0) {
        sg_table_fail(build, STATGPU_ERROR_INVALID_ARGUMENT, "the table %s of %zu x %zu cells is too large",
                      build->catalogue->names[index], row_count, column_count);
        return NULL;
    }
    sg_table *table = &set->tables[set->count];
    memset(table, 0, sizeof *table);
    table->values = calloc(cells > 0 ? cells : 1, sizeof(double));
    table->cell_kinds = calloc(cells > 0 ? cells : 1, 1);  /* 0: STATGPU_CELL_NUMBER */
    table->column_headers = calloc(column_count > 0 ? column_count : 1, sizeof(char *));
    if (table->values == NULL || table->cell_kinds == NULL || table->column_headers == NULL) {
        sg_table_free(table);
        sg_table_out_of_memory(build);
        return NULL;
    }
    table->view.name = build->catalogue->names[index];
    table->view.title = build->catalogue->titles[index];
    table->view.row_count = row_count;
    table->view.column_count = column_count;
    table->view.values = table->values;
    table->view.cell_kinds = table->cell_kinds;
    table->view.column_headers = (const char *const *)table->column_headers;
    set->count++;
    return table;
}

double *sg_table_values(sg_table *table)
{
    return table->values;
}

static char *sg_copy_text(const char *text)
{
    size_t bytes = strlen(text) + 1;
    char *copy = malloc(bytes);
    if (copy != NULL)
        memcpy(copy, text, bytes);
    return copy;
}

/* Replaces *slot with a copy of text. */
static bool sg_store_text(sg_table_build *build, char **slot, const char *text)
{
    char *copy = sg_copy_text(text);
    if (copy == NULL)
        return sg_table_out_of_memory(build);
    free(*slot);
    *slot = copy;
    return true;
}

bool sg_table_set_header(sg_table_build *build, sg_table *table, size_t column, const char *text)
{
    return sg_store_text(build, &table->column_headers[column], text);
}

bool sg_table_set_row_label_header(sg_table_build *build, sg_table *table, const char *text)
{
    if (!sg_store_text(build, &table->row_label_header, text))
        return false;
    table->view.row_label_header = table->row_label_header;
    /* A table of no rows has its (empty) row labels too: row_labels is NULL
     * only where row_label_header is. */
    if (table->row_labels == NULL && table->view.row_count == 0) {
        table->row_labels = calloc(1, sizeof(char *));
        if (table->row_labels == NULL)
            return sg_table_out_of_memory(build);
        table->view.row_labels = (const char *const *)table->row_labels;
    }
    return true;
}

bool sg_table_set_row_label(sg_table_build *build, sg_table *table, size_t row, const char *text)
{
    if (table->row_labels == NULL) {
        table->row_labels = calloc(table->view.row_count > 0 ? table->view.row_count : 1, sizeof(char *));
        if (table->row_labels == NULL)
            return sg_table_out_of_memory(build);
        table->view.row_labels = (const char *const *)table->row_labels;
    }
    return sg_store_text(build, &table->row_labels[row], text);
}

bool sg_table_set_text(sg_table_build *build, sg_table *table, size_t row, size_t column, const char *text)
{
    size_t cells = table->view.row_count * table->view.column_count;
    if (table->texts == NULL) {
        table->texts = calloc(cells, sizeof(char *));  /* cells >= 1: this cell exists */
        if (table->texts == NULL)
            return sg_table_out_of_memory(build);
        table->view.texts = (const char *const *)table->texts;
    }
    size_t cell = row + table->view.row_count * column;
    if (!sg_store_text(build, &table->texts[cell], text))
        return false;
    table->cell_kinds[cell] = STATGPU_CELL_TEXT;
    table->values[cell] = 0.0;
    return true;
}

void sg_table_set_empty(sg_table *table, size_t row, size_t column)
{
    size_t cell = row + table->view.row_count * column;
    table->cell_kinds[cell] = STATGPU_CELL_EMPTY;
    table->values[cell] = 0.0;
}

bool sg_table_number_rows(sg_table_build *build, sg_table *table, const char *heading)
{
    if (!sg_table_set_row_label_header(build, table, heading))
        return false;
    for (size_t r = 0; r < table->view.row_count; ++r) {
        char label[32];
        snprintf(label, sizeof label, "%zu", r + 1);
        if (!sg_table_set_row_label(build, table, r, label))
            return false;
    }
    return true;
}

const char *sg_table_variable_name(const sg_table_build *build, size_t v, char *buffer, size_t buffer_bytes)
{
    if (build->params.variable_names != NULL)
        return build->params.variable_names[v];
    snprintf(buffer, buffer_bytes, "X%zu", v + 1);
    return buffer;
}

size_t sg_table_source_row(const sg_table_build *build, size_t observation)
{
    return build->params.source_rows != NULL ? build->params.source_rows[observation] : observation;
}

/* The one place where the rule lives: a row the caller left out is an empty
 * cell (0 in values, so nothing reads as a stray number), at its own place
 * among the caller's rows. */
sg_table *sg_table_add_per_row(sg_table_build *build, size_t index, size_t column_count,
                               sg_observation_value_fn value_of, const void *result)
{
    size_t rows = build->source_row_count;
    sg_table *table = sg_table_add(build, index, rows, column_count);
    if (table == NULL)
        return NULL;
    memset(table->cell_kinds, STATGPU_CELL_EMPTY, rows * column_count);
    for (size_t c = 0; c < column_count; ++c)
        for (size_t i = 0; i < build->n_obs; ++i) {
            size_t cell = sg_table_source_row(build, i) + rows * c;
            table->values[cell] = value_of(result, i, c);
            table->cell_kinds[cell] = STATGPU_CELL_NUMBER;
        }
    return table;
}

bool sg_table_add_per_row_column(sg_table_build *build, size_t index, const char *header,
                                 sg_observation_value_fn value_of, const void *result)
{
    sg_table *table = sg_table_add_per_row(build, index, 1, value_of, result);
    return table != NULL && sg_table_set_header(build, table, 0, header);
}

bool sg_table_add_summary(sg_table_build *build, size_t index, const sg_summary_row *rows, size_t row_count)
{
    sg_table *table = sg_table_add(build, index, row_count, 2);
    if (table == NULL || !sg_table_set_header(build, table, 0, "value")
        || !sg_table_set_header(build, table, 1, "name"))
        return false;
    for (size_t r = 0; r < row_count; ++r) {
        table->values[r] = rows[r].value;
        if (!sg_table_set_text(build, table, r, 1, rows[r].name))
            return false;
    }
    return true;
}

/* Results never hold NaN or infinities (statgpu.h); a table built from one
 * that does (made by hand, or a bug) must not show a plausible cell. */
static bool sg_check_finite(sg_table_build *build)
{
    for (size_t t = 0; t < build->set->count; ++t) {
        const statgpu_table *table = &build->set->tables[t].view;
        size_t cells = table->row_count * table->column_count;
        for (size_t cell = 0; cell < cells; ++cell)
            if (table->cell_kinds[cell] == STATGPU_CELL_NUMBER && !isfinite(table->values[cell]))
                return sg_table_fail(build, STATGPU_ERROR_INVALID_ARGUMENT,
                                     "the result is not a finite number in the table %s, row %zu, column %zu",
                                     table->name, cell % table->row_count + 1, cell / table->row_count + 1);
    }
    return true;
}

statgpu_status sg_table_build_end(sg_table_build *build, statgpu_table_set **out_set)
{
    if (build->status == STATGPU_OK)
        sg_check_finite(build);
    if (build->status != STATGPU_OK) {
        statgpu_table_set_destroy(build->set);
        build->set = NULL;
        return build->status;
    }
    *out_set = build->set;
    build->set = NULL;
    return sg_succeed(build->context);
}
