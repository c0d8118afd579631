/*
 * statgpu.c: the statgpu command-line tool, on the same engine as the Calc
 * add-in, for data beyond a sheet, batch use and benchmarks.
 *
 *   statgpu median   FILE [options]
 *   statgpu small    FILE -k K [options]       k-th smallest
 *   statgpu large    FILE -k K [options]       k-th largest
 *   statgpu quantile FILE -p P[,P...] [options]  PERCENTILE.INC
 *   statgpu info     [--backend B] [--device D]
 *   statgpu kmeans   K FILE [options]        k-means clusters of the rows
 *   statgpu lts      FILE [options]          least trimmed squares regression
 *   statgpu bestsubset FILE [options]        best subset regression
 *   statgpu gmm      K FILE [options]        a Gaussian mixture of the rows
 *
 * Exit status: 0 success, 1 the computation failed (the engine's message is
 * printed; this includes numbers the model cannot take, such as K = 0 or
 * --alpha 0.3), 2 bad arguments (an option's value that is not a number or
 * word it takes) or an unreadable file. Never a crash.
 *
 * kmeans and lts print CSV: a header line, then the table. Per-row outputs
 * (labels, weights, residuals) have a line per data row of the input, numbered
 * as the file's rows after its header; a row left out for an empty or NA
 * field has an empty value.
 *
 * The CSV rules are csv.h's; the command line is parsed in arguments.c; each
 * command is a file of its own (command_*.c) on the helpers of tool.c, and
 * the table below maps the commands of arguments.h to them.
 */
#include <stdio.h>
#include <string.h>

#include "tool.h"

/* What runs each command of arguments.h's list. */
static int (*const k_commands[COMMAND_COUNT])(const options *opt, statgpu_context *context) = {
    [COMMAND_MEDIAN] = command_order_statistic,
    [COMMAND_SMALL] = command_order_statistic,
    [COMMAND_LARGE] = command_order_statistic,
    [COMMAND_QUANTILE] = command_order_statistic,
    [COMMAND_INFO] = command_info,
    [COMMAND_KMEANS] = command_kmeans,
    [COMMAND_LTS] = command_lts,
    [COMMAND_GMM] = command_gmm,
    [COMMAND_IGMM] = command_igmm,
    [COMMAND_BESTSUBSET] = command_bestsubset,
};

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0)
        return printf("statgpu %s\n", statgpu_version_string()), 0;
    options opt;
    int parsed = parse_arguments(argc, argv, &opt);
    if (parsed != ARGUMENTS_RUN)
        return parsed;

    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = opt.backend;
    params.device = opt.device;
    params.thread_count = opt.thread_count;
    progress_attach(&opt, &params);
    statgpu_context *context = NULL;
    if (statgpu_context_create(&params, &context) != STATGPU_OK) {
        fprintf(stderr, "statgpu: cannot create an engine context\n");
        return EXIT_COMPUTE;
    }
    int status = k_commands[opt.command_id](&opt, context);
    statgpu_context_destroy(context);
    return status;
}
