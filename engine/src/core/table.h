/*
 * core/table.h: how a method's file builds its result tables (statgpu.h's
 * "Result tables"): the set, a table's cells, the row map that places per-row
 * values at the caller's rows (the one place where rows left out become empty
 * cells), summaries of name and value, and the registry of each method's
 * table names.
 */
#ifndef STATGPU_CORE_TABLE_H
#define STATGPU_CORE_TABLE_H

#include "statgpu.h"

#include <stdbool.h>

/* A method's tables, defined once: the Output words and report titles, in the
 * method's order (the first is the default Output). names ends with NULL. */
typedef struct sg_table_catalogue {
    const char        *method;  /* "kmeans" */
    const char *const *names;   /* count names and a NULL */
    const char *const *titles;  /* count titles */
    size_t             count;
} sg_table_catalogue;

extern const sg_table_catalogue sg_kmeans_table_catalogue;
extern const sg_table_catalogue sg_lts_table_catalogue;
extern const sg_table_catalogue sg_gmm_table_catalogue;
extern const sg_table_catalogue sg_igmm_table_catalogue;
extern const sg_table_catalogue sg_bestsubset_table_catalogue;

/* The tables of one result being built. */
typedef struct sg_table_build {
    statgpu_context           *context;
    const sg_table_catalogue  *catalogue;
    statgpu_table_params       params;      /* the caller's, completed with defaults */
    size_t                     n_obs;       /* observations of the result */
    size_t                     n_vars;      /* variables the names are for */
    size_t                     source_row_count;  /* resolved: n_obs without a row map */
    statgpu_table_set         *set;
    statgpu_status             status;      /* the first failure, else STATGPU_OK */
} sg_table_build;

/* Checks context, out_set, params (struct_bytes, the row map against n_obs,
 * table_name against the catalogue) and creates an empty set in build.
 * *out_set is set to NULL first. On failure nothing is left to free. */
statgpu_status sg_table_build_begin(sg_table_build *build, statgpu_context *context,
                                    const sg_table_catalogue *catalogue, const statgpu_table_params *params,
                                    size_t n_obs, size_t n_vars, statgpu_table_set **out_set);

/* Whether the table at the catalogue's index is to be built: params'
 * table_name allows it and nothing has failed yet. */
bool sg_table_wanted(const sg_table_build *build, size_t index);

/* Appends the catalogue's index-th table of row_count x column_count number
 * cells, all 0, to the set; NULL (with the failure recorded on the context)
 * when memory runs out or the size overflows. The cells and labels it returns
 * are the builder's to fill. */
typedef struct sg_table sg_table;
sg_table *sg_table_add(sg_table_build *build, size_t index, size_t row_count, size_t column_count);

/* The cells of a table being built: column-major, leading dimension row_count. */
double *sg_table_values(sg_table *table);

/* Copies text into a header, row label, the row labels' heading or a cell
 * (which becomes a TEXT cell). False (with the failure recorded) when memory
 * runs out. */
bool sg_table_set_header(sg_table_build *build, sg_table *table, size_t column, const char *text);
bool sg_table_set_row_label(sg_table_build *build, sg_table *table, size_t row, const char *text);
bool sg_table_set_row_label_header(sg_table_build *build, sg_table *table, const char *text);
bool sg_table_set_text(sg_table_build *build, sg_table *table, size_t row, size_t column, const char *text);
/* Makes a cell EMPTY (a value that does not exist, such as an unfitted
 * candidate's). */
void sg_table_set_empty(sg_table *table, size_t row, size_t column);

/* Row labels "1" .. row_count under heading. */
bool sg_table_number_rows(sg_table_build *build, sg_table *table, const char *heading);

/* The name of variable v: the caller's, or "X<v+1>" written into buffer. */
const char *sg_table_variable_name(const sg_table_build *build, size_t v, char *buffer, size_t buffer_bytes);

/* A per-row table: a row per row of the caller's data, value_of(result, i,
 * column) for observation i at its source row, empty cells at the rows left
 * out. Returns the table for its headers, or NULL (failure recorded). */
typedef double (*sg_observation_value_fn)(const void *result, size_t observation, size_t column);
sg_table *sg_table_add_per_row(sg_table_build *build, size_t index, size_t column_count,
                               sg_observation_value_fn value_of, const void *result);

/* The same with one column under header. */
bool sg_table_add_per_row_column(sg_table_build *build, size_t index, const char *header,
                                 sg_observation_value_fn value_of, const void *result);

/* The caller's 0-based row of observation i. */
size_t sg_table_source_row(const sg_table_build *build, size_t observation);

/* A summary: one row per statistic, "value" and "name" (text). The value
 * comes first: a summary entered into one column of a sheet shows the values. */
typedef struct sg_summary_row {
    const char *name;
    double      value;
} sg_summary_row;
bool sg_table_add_summary(sg_table_build *build, size_t index, const sg_summary_row *rows, size_t row_count);

/* Ends a build: after no failure, checks that every number cell is finite and
 * hands the set to *out_set; after one, frees it. Returns the build's status. */
statgpu_status sg_table_build_end(sg_table_build *build, statgpu_table_set **out_set);

/* The catalogue of a method, or NULL. */
const sg_table_catalogue *sg_table_catalogue_of(const char *method);

/* The catalogue's index of a name compared as Calc compares words; count
 * when there is none. */
size_t sg_table_catalogue_index(const sg_table_catalogue *catalogue, const char *name);

#endif /* STATGPU_CORE_TABLE_H */
