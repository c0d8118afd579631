/*
 * tool.h: what the statgpu tool's commands share: reading the input (a CSV
 * column or table, or raw binary values), the engine's failures, CSV fields,
 * whole-number options, per-row output and timings. Each command is a file
 * of its own (command_*.c), listed in the command table of statgpu.c.
 */
#ifndef STATGPU_CLI_TOOL_H
#define STATGPU_CLI_TOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "arguments.h"
#include "csv.h"
#include "statgpu.h"

/* A monotonic clock, in seconds. */
double seconds_now(void);

/* A long computation's progress on stderr, where stderr is a terminal (else
 * nothing): after about a second, one line that updates itself in place,
 * "statgpu: bestsubset  37%". progress_attach sets the progress callback of
 * the context params for the commands whose methods report their progress
 * as they go (kmeans, lts, gmm, igmm, bestsubset: the order statistics
 * report only their start and end); a command calls progress_end once its
 * method has returned, before it prints anything, to clear the line. Ctrl-C
 * keeps its default action: it ends the tool at once. */
void progress_attach(const options *opt, statgpu_context_params *params);
void progress_end(void);

/* A number given on the command line: decimal, finite, as in a CSV file. */
int parse_number(const char *text, double *value);

/* The column of a CSV file that the order statistics read. */
int read_csv(const options *opt, csv_column *out);

/* The table of a CSV file for kmeans and lts: y_spec's column first (lts's
 * response), then those of --columns. */
int read_table(const options *opt, const char *y_spec, csv_table *out);
/* read_table, and the seconds it took. */
int read_table_timed(const options *opt, const char *y_spec, csv_table *out, double *read_seconds);
/* The --output word of a table command (the method's first table when not
 * given), or NULL after the usage failure with message. */
const char *output_word(const options *opt, const char *method, const char *message);

/* The engine's failure: its message, led by the status's own text unless
 * the message already begins with it. */
int engine_failed(statgpu_context *context, statgpu_status status);

/* The values of a raw binary file (--format f64 or f32), kept as they are. */
int read_binary(const options *opt, csv_column *out);

/* A CSV field: quoted when it holds a comma, a quote or a line break. */
void print_field(const char *text);

/* A whole number argument (>= 0) such as a seed or a count. */
int parse_count(const char *text, uint64_t *value);

/* An optional whole-number option: *value stays as it is when text is NULL;
 * 0, or the usage failure with message. */
int count_option(const char *text, const char *message, size_t *value);

/* The seed option into *seed (unchanged when absent); 0, or the usage failure. */
int seed_option(const options *opt, uint64_t *seed);
/* --restarts, --max-iter, --tol and --seed of kmeans and gmm into the
 * method's parameters (left as they are where not given); EXIT_USAGE or 0. */
int run_options(const options *opt, size_t *restart_count, size_t *max_iterations, double *tolerance,
                uint64_t *seed);

/* --time of a table command: rows, times and the backend, on stderr. */
void report_timing(statgpu_context *context, const csv_table *t, double read_seconds, double compute_seconds);

/* A failed engine call of a table command: frees the table, says why. */
int table_engine_failed(statgpu_context *context, statgpu_status status, csv_table *t);

/* The end of a table command that succeeded: the timing when asked for, the
 * table freed. */
int finish_table_command(const options *opt, statgpu_context *context, csv_table *t, double read_seconds,
                         double compute_seconds);

/* A method's statgpu_<method>_tables on its result, for print_result_table. */
typedef statgpu_status (*table_maker)(statgpu_context *context, const void *result,
                                      const statgpu_table_params *params, statgpu_table_set **out_set);

/* Prints the table called name of a result as CSV (or, with as_table, its
 * title and the same lines with columns aligned: text to the left, numbers
 * with 10 significant digits to the right): a header line (the row
 * labels' header, or "row", then the column headers), then a line per row
 * (its label, or its number from 1, then the cells: a number with every
 * digit, a text, or nothing for a row left out). Per-row tables follow the
 * file's data rows (t's complete flags). variable_names (t's column names for
 * the data the method saw) head the columns. 0, or EXIT_COMPUTE after the
 * engine's message. */
int print_result_table(statgpu_context *context, const csv_table *t, const char *const *variable_names,
                       const char *name, table_maker make_tables, const void *result, bool as_table);

/* 0 when output is one of the method's table names (statgpu_method_table_names),
 * else the usage failure with message. */
int check_output_word(const char *method, const char *output, const char *message);

/* The commands (command_*.c): each runs its command of opt on context and
 * returns the tool's exit status. */
int command_order_statistic(const options *opt, statgpu_context *context);
int command_info(const options *opt, statgpu_context *context);
int command_kmeans(const options *opt, statgpu_context *context);
int command_lts(const options *opt, statgpu_context *context);
int command_gmm(const options *opt, statgpu_context *context);
int command_igmm(const options *opt, statgpu_context *context);
int command_bestsubset(const options *opt, statgpu_context *context);

#endif
