/*
 * arguments.h: the command line of the statgpu tool, parsed apart from the
 * engine so that it can be fuzzed on its own (tests/fuzz/). Only the words
 * are checked here; numbers given as text are checked by their command.
 */
#ifndef STATGPU_CLI_ARGUMENTS_H
#define STATGPU_CLI_ARGUMENTS_H

#include <stdio.h>

#include "csv.h"
#include "statgpu.h"

enum { EXIT_COMPUTE = 1, EXIT_USAGE = 2 };

typedef enum input_format { FORMAT_CSV, FORMAT_F64, FORMAT_F32 } input_format;

/* The commands, in the order the help lists them; statgpu.c runs each. */
typedef enum cli_command_id {
    COMMAND_MEDIAN, COMMAND_SMALL, COMMAND_LARGE, COMMAND_QUANTILE, COMMAND_INFO, COMMAND_KMEANS, COMMAND_LTS,
    COMMAND_GMM,
    COMMAND_IGMM, COMMAND_BESTSUBSET, COMMAND_COUNT
} cli_command_id;

/* Each command's name, as typed. */
extern const char *const cli_command_names[COMMAND_COUNT];

typedef struct options {
    const char     *command;     /* its name, as typed */
    cli_command_id  command_id;
    const char     *path;
    int             path_after_header; /* the file came right after a --header without a word */
    input_format    format;
    csv_header_mode header;
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
    int             as_table;       /* --table: the engine's table, aligned, not CSV */
    /* kmeans and gmm */
    const char     *kmeans_k_text;  /* the K of "kmeans K FILE" and "gmm K FILE" */
    const char     *restarts_text;
    const char     *max_iter_text;
    const char     *tol_text;
    statgpu_kmeans_init kmeans_init;
    /* gmm */
    const char     *covariance_text;
    statgpu_gmm_init gmm_init;
    /* lts */
    const char     *y_column;    /* number or name; NULL = the first column */
    const char     *alpha_text;
    const char     *starts_text;
    int             no_intercept;
    int             lms;
    /* bestsubset */
    const char     *max_size_text;
    const char     *nbest_text;
    const char     *validation_text;
    const char     *folds_text;
    const char     *holdout_text;
    const char     *criterion_text;
    const char     *force_in;     /* comma-separated predictor names or positions */
    const char     *force_out;
} options;

/* Sentinel of parse_arguments: the command is to run. */
enum { ARGUMENTS_RUN = -1 };

/* Parses argv into *opt (whose strings point into argv): ARGUMENTS_RUN, or
 * the exit status when the tool is done (0 after --help or --version,
 * EXIT_USAGE after a message on stderr). */
int parse_arguments(int argc, char **argv, options *opt);

void usage(FILE *out);

/* Prints "statgpu: message[: detail]" and the hint to --help; EXIT_USAGE. */
int fail_usage(const char *message, const char *detail);

/* A whole decimal number >= minimum, the whole of text: 1 and *value, else 0. */
int parse_int(const char *text, long minimum, long *value);

#endif
