/*
 * arguments.c: the statgpu tool's command line and help (see arguments.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "arguments.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A macro's value as a string literal, for messages that state a limit. */
#define TEXT_OF_(x) #x
#define TEXT_OF(x) TEXT_OF_(x)

const char *const cli_command_names[COMMAND_COUNT] = {
    [COMMAND_MEDIAN] = "median", [COMMAND_SMALL] = "small", [COMMAND_LARGE] = "large",
    [COMMAND_QUANTILE] = "quantile", [COMMAND_INFO] = "info", [COMMAND_KMEANS] = "kmeans", [COMMAND_LTS] = "lts",
    [COMMAND_GMM] = "gmm",
    [COMMAND_IGMM] = "igmm", [COMMAND_BESTSUBSET] = "bestsubset",
};

void usage(FILE *out)
{
    fputs("usage: statgpu COMMAND [FILE] [options]\n"
          "commands:\n"
          "  median FILE              the median (as Calc's MEDIAN)\n"
          "  small FILE -k K          the k-th smallest (as SMALL)\n"
          "  large FILE -k K          the k-th largest (as LARGE)\n"
          "  quantile FILE -p P,...   quantiles (as PERCENTILE.INC), one line each\n"
          "  info                     the backend and device in use\n"
          "  kmeans K FILE            k-means clustering of the rows into K clusters (as Calc's KMEANS)\n"
          "  lts FILE                 least trimmed squares regression of the first column on the others\n"
          "                           (as Calc's LTSFIT)\n"
          "  igmm K FILE              a mixture of K inverse Gaussians fitted to each column, a data set\n"
          "                           each (as Calc's IGMMFIT)\n"
          "  bestsubset FILE          the best subsets of the other columns for regressing the first\n"
          "                           column on, every size, exactly (as Calc's BESTSUBSET)\n"
          "  gmm K FILE               a Gaussian mixture of K components fitted to the rows (as Calc's\n"
          "                           GMMFIT); K may list candidates (1-6, 2,4,8): the lowest BIC wins\n"
          "options:\n"
          "  --format csv|f64|f32     input: CSV text (default) or raw little-endian doubles/floats\n"
          "  --column N|NAME          CSV column, by 1-based number or header name (default 1);\n"
          "                           a number that is also a header name (2011) means that column\n"
          "  --header, --no-header    the CSV's first line is (is not) a header; default: it is one\n"
          "                           when it cannot be data (a field is text), said on stderr\n"
          "  --header yes|no|auto     the same as a word\n"
          "  --delimiter C            CSV field separator (default: detected from ',', ';', tab)\n"
          "  --backend auto|cpu|cuda  where to compute (default auto)\n"
          "  --device N               CUDA device index (default 0)\n"
          "  --threads N              CPU threads (default all cores)\n"
          "  --time                   print read and compute times to stderr\n"
          "kmeans, lts and gmm read a CSV table, an observation per line:\n"
          "  --columns LIST           the columns used, by number or header name (default all;\n"
          "                           for lts the predictors)\n"
          "  --seed N                 a whole number that chooses the random starts (default 0)\n"
          "  --table                  print the Output as the engine's table, aligned for reading with\n"
          "                           its title (any Output; default: CSV)\n"
          "kmeans options:\n"
          "  --output centroids|labels|sizes|summary   what to print (default centroids)\n"
          "  --restarts N             runs from different starts; the best is kept (default 10)\n"
          "  --max-iter N             iterations per run at most (default 300)\n"
          "  --tol X                  scikit-learn's relative tolerance (default 1e-4; 0: until no label changes)\n"
          "  --init auto|++|parallel  k-means++ or k-means|| starts (default auto: by size)\n"
          "lts options:\n"
          "  --output coefficients|weights|residuals|summary|subset   what to print (default coefficients)\n"
          "  --y-column N|NAME        the response (default column 1); the predictors are the other\n"
          "                           columns, or those of --columns\n"
          "  --alpha X                the share of rows the fit must explain, 0.5 to 1 (default 0.5)\n"
          "  --no-intercept           no intercept term\n"
          "  --lms                    least median of squares instead of least trimmed squares\n"
          "  --starts N               random elemental starts (default 500)\n"
          "gmm options:\n"
          "  --output summary|weights|means|covariances|labels|probabilities|density|selection\n"
          "                           what to print (default summary; selection: every model compared)\n"
          "  --covariance full|tied|diag|spherical|all   the components' covariances (default full;\n"
          "                           all: each type is fitted and the lowest BIC chosen)\n"
          "  --init kmeans|++|random  the start: a k-means run (default), k-means++ seeds alone, or\n"
          "                           random responsibilities\n"
          "  --restarts N             runs from different k-means starts; the best is kept (default 1)\n"
          "  --max-iter N             EM iterations per run at most (default 100)\n"
          "  --tol X                  the change of the mean log-likelihood that stops a run (default 1e-3)\n"
          "  (each column's variances are regularised by 1e-6 of its variance: the same fit in any units)\n"
          "bestsubset options (--y-column and --columns as for lts):\n"
          "  --output subsets|which|coefficients|summary   what to print (default subsets)\n"
          "  --max-size N             the largest subset size (default 0: every size)\n"
          "  --nbest N                subsets reported per size (default 1)\n"
          "  --validation press|holdout|kfold   the validation error (default press: leave-one-out)\n"
          "  --folds K                folds of kfold (default 10)\n"
          "  --holdout F              the share of rows holdout holds out (default 0.2)\n"
          "  --criterion validation|cp|bic|adjr2   what chooses the size (default validation)\n"
          "  --force-in LIST          predictors in every subset, by name or position among the\n"
          "                           predictors (1 the first)\n"
          "  --force-out LIST         predictors left out of the search\n"
          "  --no-intercept           no intercept term\n"
          "igmm options (every column a data set; its empty or NA fields are skipped, so columns may\n"
          "differ in length):\n"
          "  --output parameters|summary|labels   what to print (default parameters)\n"
          "  --starts N               random starts per data set; the best is kept (default 10)\n"
          "  --max-iter N             EM iterations per start at most (default 100)\n"
          "  --tol X                  the change of the log-likelihood that stops a start (default 1e-6)\n"
          "CSV files: lines end with LF, CR LF or CR; a UTF-8 byte-order mark is dropped; blank lines\n"
          "are skipped; a field may be quoted (\"1,5\"). A field is a decimal number (12, -3.5, 1e-3),\n"
          "or missing: empty, NA, or nan/NaN (as numpy writes a missing value). Empty, NA and nan\n"
          "fields in a CSV column are skipped, as Calc skips empty cells; for kmeans and lts, a line\n"
          "with a missing field is left out of the fit, and its per-row output is empty. Anything else\n"
          "in a column read is an error naming its line and column: text, hexadecimal (0x10), inf,\n"
          "a number beyond the range of a double (1e309, 1e-400), a NUL byte. Any number of columns.\n",
          out);
}

int fail_usage(const char *message, const char *detail)
{
    fprintf(stderr, "statgpu: %s%s%s\n", message, detail ? ": " : "", detail ? detail : "");
    fputs("Try 'statgpu --help'.\n", stderr);
    return EXIT_USAGE;
}

int parse_int(const char *text, long minimum, long *value)
{
    char *end;
    errno = 0;
    long parsed = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || parsed < minimum)
        return 0;
    *value = parsed;
    return 1;
}

/* Whether the blank-separated words of list hold command ("gmm" is not
 * "igmm"). */
static int names_command(const char *list, const char *command)
{
    size_t length = strlen(command);
    for (const char *word = list; *word != '\0';) {
        size_t word_length = strcspn(word, " ");
        if (word_length == length && strncmp(word, command, length) == 0)
            return 1;
        word += word_length;
        word += strspn(word, " ");
    }
    return 0;
}

/* The commands an option belongs to ("kmeans", "lts", "kmeans lts", or
 * "single" for the order statistics' own), or NULL for the common ones. */
static const char *option_command(const char *arg)
{
    static const struct { const char *name, *commands; } owners[] = {
        { "--columns", "kmeans lts gmm igmm bestsubset" }, { "--output", "kmeans lts gmm igmm bestsubset" },
        { "--seed", "kmeans lts gmm igmm bestsubset" },
        { "--restarts", "kmeans gmm" }, { "--max-iter", "kmeans gmm igmm" }, { "--tol", "kmeans gmm igmm" },
        { "--covariance", "gmm" },
        { "--init", "kmeans gmm" },        { "--y-column", "lts bestsubset" },      { "--alpha", "lts" },
        { "--starts", "lts igmm" },    { "--no-intercept", "lts bestsubset" },  { "--lms", "lts" },
        { "--table", "kmeans lts gmm igmm bestsubset" },
        { "--max-size", "bestsubset" }, { "--nbest", "bestsubset" }, { "--validation", "bestsubset" },
        { "--folds", "bestsubset" }, { "--holdout", "bestsubset" }, { "--criterion", "bestsubset" },
        { "--force-in", "bestsubset" }, { "--force-out", "bestsubset" },
        { "--column", "median small large quantile" }, { "-k", "small large" }, { "-p", "quantile" },
    };
    for (size_t j = 0; j < sizeof owners / sizeof *owners; ++j)
        if (strcmp(arg, owners[j].name) == 0)
            return owners[j].commands;
    return NULL;
}

/* Where the value of an option kept as written (and checked by its
 * command) goes, or NULL for the other options. */
static const char **option_text(options *opt, const char *arg)
{
    const struct { const char *name; const char **value; } texts[] = {
        { "--column", &opt->column },         { "-k", &opt->k_text },
        { "-p", &opt->p_text },               { "--columns", &opt->columns },
        { "--output", &opt->output },         { "--seed", &opt->seed_text },
        { "--restarts", &opt->restarts_text }, { "--max-iter", &opt->max_iter_text },
        { "--tol", &opt->tol_text },          { "--y-column", &opt->y_column },
        { "--alpha", &opt->alpha_text },      { "--starts", &opt->starts_text },
        { "--covariance", &opt->covariance_text },
        { "--max-size", &opt->max_size_text }, { "--nbest", &opt->nbest_text },
        { "--validation", &opt->validation_text }, { "--folds", &opt->folds_text },
        { "--holdout", &opt->holdout_text }, { "--criterion", &opt->criterion_text },
        { "--force-in", &opt->force_in }, { "--force-out", &opt->force_out },
    };
    for (size_t j = 0; j < sizeof texts / sizeof *texts; ++j)
        if (strcmp(arg, texts[j].name) == 0)
            return texts[j].value;
    return NULL;
}


/* Whether arg is one of the options that take a value of their own words or
 * numbers (those of option_text aside). */
static int is_word_option(const char *arg)
{
    const char *const names[] = { "--format", "--delimiter", "--backend", "--device", "--threads", "--init" };
    for (size_t j = 0; j < sizeof names / sizeof *names; ++j)
        if (strcmp(arg, names[j]) == 0)
            return 1;
    return 0;
}

/* Whether a comma-separated list is empty or has an empty item ("1,,2",
 * ",1", "1,"). */
static int has_empty_item(const char *list)
{
    size_t length = strlen(list);
    return length == 0 || list[0] == ',' || list[length - 1] == ',' || strstr(list, ",,") != NULL;
}

int parse_arguments(int argc, char **argv, options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->backend = STATGPU_BACKEND_AUTO;
    opt->header = CSV_HEADER_AUTO;

    if (argc < 2 || argv[1] == NULL)
        return usage(stderr), EXIT_USAGE;
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return usage(stdout), 0;
    opt->command = argv[1];
    int known = 0;
    for (int c = 0; c < COMMAND_COUNT && !known; ++c)
        if (strcmp(opt->command, cli_command_names[c]) == 0) {
            opt->command_id = (cli_command_id)c;
            known = 1;
        }
    if (!known)
        return fail_usage("unknown command", opt->command);

    /* kmeans, gmm and igmm take K before the file. */
    const int is_kmeans = opt->command_id == COMMAND_KMEANS || opt->command_id == COMMAND_GMM
                          || opt->command_id == COMMAND_IGMM;
    const int is_table = is_kmeans || opt->command_id == COMMAND_LTS || opt->command_id == COMMAND_BESTSUBSET;
    int header_alone = 0;  /* the argument before this one was --header without a word */
    for (int i = 2; i < argc; ++i) {
        const int after_header = header_alone;
        header_alone = 0;
        const char *arg = argv[i];
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        long number = 0;
        const char **text = option_text(opt, arg);
        const char *only = option_command(arg);
        if (only != NULL && !names_command(only, opt->command)) {
            char message[128];
            snprintf(message, sizeof message, "option not for %s (only for %s)", opt->command, only);
            return fail_usage(message, arg);
        }
        /* Options without a value. */
        if (strcmp(arg, "--time") == 0) {
            opt->show_timing = 1;
            continue;
        }
        if (strcmp(arg, "--no-intercept") == 0) {
            opt->no_intercept = 1;
            continue;
        }
        if (strcmp(arg, "--lms") == 0) {
            opt->lms = 1;
            continue;
        }
        if (strcmp(arg, "--table") == 0) {
            opt->as_table = 1;
            continue;
        }
        if (strcmp(arg, "--help") == 0)
            return usage(stdout), 0;
        if (strcmp(arg, "--no-header") == 0) {
            opt->header = CSV_HEADER_NO;
            continue;
        }
        if (strcmp(arg, "--header") == 0) {  /* alone, or with yes, no or auto */
            const char *const words[] = { "yes", "no", "auto" };
            const csv_header_mode modes[] = { CSV_HEADER_YES, CSV_HEADER_NO, CSV_HEADER_AUTO };
            opt->header = CSV_HEADER_YES;
            header_alone = 1;
            for (size_t j = 0; value != NULL && j < 3; ++j)
                if (strcmp(value, words[j]) == 0) {
                    opt->header = modes[j];
                    header_alone = 0;
                    ++i;
                }
            continue;
        }
        /* Not an option: K of kmeans (which may be negative, to be refused
         * as a count), then the file ("-" is standard input). */
        int is_option = arg[0] == '-' && arg[1] != '\0'
                        && !(is_kmeans && opt->kmeans_k_text == NULL && isdigit((unsigned char)arg[1]));
        if (!is_option) {
            if (is_kmeans && opt->kmeans_k_text == NULL) {
                opt->kmeans_k_text = arg;
            } else {
                if (opt->path != NULL)
                    return fail_usage(after_header || opt->path_after_header
                                          ? "more than one input file (--header takes yes, no or auto, or no word)"
                                          : "more than one input file",
                                      arg);
                opt->path = arg;
                opt->path_after_header = after_header;
            }
            continue;
        }
        if (text == NULL && !is_word_option(arg))
            return fail_usage("unknown option", arg);
        if (value == NULL)
            return fail_usage("option needs a value", arg);
        ++i;
        if (text != NULL) {
            *text = value;
        } else if (strcmp(arg, "--format") == 0) {
            if (strcmp(value, "csv") == 0) opt->format = FORMAT_CSV;
            else if (strcmp(value, "f64") == 0) opt->format = FORMAT_F64;
            else if (strcmp(value, "f32") == 0) opt->format = FORMAT_F32;
            else return fail_usage("--format must be csv, f64 or f32", value);
        } else if (strcmp(arg, "--delimiter") == 0) {
            if (strcmp(value, "\\t") == 0 || strcmp(value, "tab") == 0) opt->delimiter = '\t';
            else if (strlen(value) == 1 && value[0] != '"' && value[0] != '\n' && value[0] != '\r')
                opt->delimiter = value[0];
            else return fail_usage("--delimiter must be one character (not a quote or line break)", value);
        } else if (strcmp(arg, "--backend") == 0) {
            if (strcmp(value, "auto") == 0) opt->backend = STATGPU_BACKEND_AUTO;
            else if (strcmp(value, "cpu") == 0) opt->backend = STATGPU_BACKEND_CPU;
            else if (strcmp(value, "cuda") == 0) opt->backend = STATGPU_BACKEND_CUDA;
            else return fail_usage("--backend must be auto, cpu or cuda", value);
        } else if (strcmp(arg, "--device") == 0) {
            if (!parse_int(value, 0, &number) || number > 1024) return fail_usage("--device must be a device index", value);
            opt->device = (int)number;
        } else if (strcmp(arg, "--threads") == 0) {
            if (!parse_int(value, 1, &number) || number > STATGPU_MAX_THREAD_COUNT) return fail_usage("--threads must be from 1 to " TEXT_OF(STATGPU_MAX_THREAD_COUNT), value);
            opt->thread_count = (int)number;
        } else if (opt->command_id == COMMAND_GMM) {  /* --init of gmm */
            if (strcmp(value, "kmeans") == 0) opt->gmm_init = STATGPU_GMM_INIT_KMEANS;
            else if (strcmp(value, "++") == 0) opt->gmm_init = STATGPU_GMM_INIT_PLUS_PLUS;
            else if (strcmp(value, "random") == 0) opt->gmm_init = STATGPU_GMM_INIT_RANDOM;
            else return fail_usage("--init must be kmeans, ++ or random", value);
        } else {  /* --init of kmeans */
            if (strcmp(value, "auto") == 0) opt->kmeans_init = STATGPU_KMEANS_INIT_AUTO;
            else if (strcmp(value, "++") == 0) opt->kmeans_init = STATGPU_KMEANS_INIT_PLUS_PLUS;
            else if (strcmp(value, "parallel") == 0) opt->kmeans_init = STATGPU_KMEANS_INIT_PARALLEL;
            else return fail_usage("--init must be auto, ++ or parallel", value);
        }
    }
    const struct { const char *name, *value; } lists[] = {
        { "-p", opt->p_text }, { "--columns", opt->columns }, { "--force-in", opt->force_in },
        { "--force-out", opt->force_out },
    };
    for (size_t j = 0; j < sizeof lists / sizeof *lists; ++j)
        if (lists[j].value != NULL && has_empty_item(lists[j].value)) {
            char message[64];
            snprintf(message, sizeof message, "%s has an empty item", lists[j].name);
            return fail_usage(message, lists[j].value);
        }
    if (is_kmeans && (opt->kmeans_k_text == NULL || opt->path == NULL))
        return fail_usage(opt->command_id == COMMAND_GMM
                              ? "gmm needs the number of components K and a file: statgpu gmm K FILE"
                          : opt->command_id == COMMAND_IGMM
                              ? "igmm needs the number of components K and a file: statgpu igmm K FILE"
                              : "kmeans needs the number of clusters K and a file: statgpu kmeans K FILE",
                          NULL);
    if (opt->command_id != COMMAND_INFO && opt->path == NULL)
        return fail_usage("no input file (use - for standard input)", NULL);
    if (opt->format != FORMAT_CSV && opt->path != NULL && strcmp(opt->path, "-") == 0)
        return fail_usage("binary input must be a file", NULL);
    if (opt->format != FORMAT_CSV && is_table)
        return fail_usage("kmeans, lts, gmm, igmm and bestsubset read CSV only", NULL);
    return ARGUMENTS_RUN;
}
