/*
 * bestsubset.c: the public best subset regression (statgpu.h's
 * statgpu_bestsubset): validation, the QR of the design with its rank test,
 * the search on all rows (bestsubset_search.c), the statistics of every
 * reported subset, the validation searches and the chosen model.
 *
 * Units. With an intercept the predictors and the response are centred on
 * their means (over the rows of the fit), and every column is divided by its
 * norm; without one only divided. Subsets' RSS do not change under either
 * map, the Givens rotations of the search never see numbers beyond 1, and
 * every output is in the data's units.
 */
#include "methods/bestsubset.h"

#include "internal.h"
#include "core/pool.h"
#include "core/random.h"
#include "math/dense.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SG_BESTSUBSET_PARAMS_MIN_BYTES (offsetof(statgpu_bestsubset_params, seed) + sizeof(uint64_t))
/* The QR's rank test: a column whose part beyond the columns before it is at
 * most this share of its norm depends on them (R's lm.fit uses 1e-7). */
#define SG_SUBSET_RANK_TOLERANCE 1e-7
/* The search's margin, as a share of the null model's RSS. */
#define SG_SUBSET_MARGIN 1e-10
/* A full model's RSS at most this share of the null model's is an exact fit. */
#define SG_SUBSET_EXACT_FIT 1e-24
#define SG_SUBSET_SALT 0xB5B5u
/* Under STATGPU_BACKEND_AUTO the GPU searches from this many free
 * predictors: on the H100 machine at n = 10^4 and 40 predictors the GPU
 * took 0.032 s against the 16-core CPU's 0.035 (8 strong effects) and 0.135
 * against 0.250 (all small); with fewer the trees are too small to fill it
 * (bench/NOTES.md, best subset). */
#define SG_SUBSET_AUTO_CUDA_MIN_FREE 32.0

/* The rows a holdout of `fraction` (in (0, 1)) takes of n: round(fraction
 * n), at most n (llround saturates beyond 2^63). */
static size_t sg_holdout_rows(double fraction, size_t n)
{
    const double rows = round(fraction * (double)n);
    return rows >= (double)n ? n : (size_t)rows;
}

void statgpu_bestsubset_params_init(statgpu_bestsubset_params *params)
{
    if (params == NULL)
        return;
    memset(params, 0, sizeof *params);
    params->struct_bytes     = sizeof *params;
    params->intercept        = 1;
    params->max_size         = 0;
    params->nbest            = 1;
    params->force            = NULL;
    params->validation       = STATGPU_SUBSET_PRESS;
    params->holdout_fraction = 0.2;
    params->fold_count       = 10;
    params->criterion        = STATGPU_SUBSET_BY_VALIDATION;
    params->seed             = 0;
}

statgpu_status statgpu_bestsubset_split(const statgpu_bestsubset_params *params, size_t n_obs, size_t *held_out,
                                        size_t *kept)
{
    if (held_out == NULL || kept == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    *held_out = 0;
    *kept = 0;
    statgpu_bestsubset_params chosen;
    statgpu_bestsubset_params_init(&chosen);
    if (params != NULL) {
        if (params->struct_bytes < SG_BESTSUBSET_PARAMS_MIN_BYTES || params->struct_bytes > sizeof chosen)
            return STATGPU_ERROR_INVALID_ARGUMENT;
        memcpy(&chosen, params, params->struct_bytes);
    }
    size_t held;
    switch (chosen.validation) {
    case STATGPU_SUBSET_PRESS:
        held = 1;
        break;
    case STATGPU_SUBSET_HOLDOUT:
        if (!(chosen.holdout_fraction > 0.0 && chosen.holdout_fraction < 1.0))
            return STATGPU_ERROR_INVALID_ARGUMENT;
        held = sg_holdout_rows(chosen.holdout_fraction, n_obs);
        break;
    case STATGPU_SUBSET_KFOLD:
        if (chosen.fold_count < 2 || chosen.fold_count > n_obs)
            return STATGPU_ERROR_INVALID_ARGUMENT;
        held = n_obs / chosen.fold_count + (n_obs % chosen.fold_count != 0);  /* fold 0, the largest */
        break;
    default:
        return STATGPU_ERROR_INVALID_ARGUMENT;
    }
    if (held < 1 || held > n_obs)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    *held_out = held;
    *kept = n_obs - held;
    return STATGPU_OK;
}

void statgpu_bestsubset_result_destroy(statgpu_bestsubset_result *result)
{
    if (result == NULL)
        return;
    free(result->sizes);
    free(result->ranks);
    free(result->which);
    free(result->rss);
    free(result->r_squared);
    free(result->adjusted_r_squared);
    free(result->cp);
    free(result->bic_leaps);
    free(result->bic);
    free(result->press);
    free(result->validation_error);
    free(result->coefficients);
    free(result->standard_errors);
    free(result->coefficient_vars);
    free(result->dropped);
    free(result);
}

/* ------------------------------------------------------------- the design */

/* The data of a call. */
typedef struct sg_subset_data {
    const double *y, *x;
    size_t        n, n_vars, ld;
    int           intercept;
    const int8_t *force;
    int           threads;
} sg_subset_data;

/* The design over some rows: means, norms, the rank test's columns and the
 * triangular factor the search takes. */
typedef struct sg_subset_design {
    size_t  row_count;
    double *shift, *scale;   /* n_vars + 1 (the response last): centre and 1 / norm */
    double  y_norm;          /* the response's norm after centring: RSS0 = y_norm^2 */
    size_t  columns, forced; /* the tree's columns, forced first */
    size_t *vars;            /* columns */
    bool   *kept;            /* n_vars: false where the rank test dropped a predictor */
    double *r;               /* (columns + 1)^2 */
} sg_subset_design;

static void sg_design_free(sg_subset_design *design)
{
    free(design->shift);
    free(design->scale);
    free(design->vars);
    free(design->kept);
    free(design->r);
    memset(design, 0, sizeof *design);
}

static const double *sg_data_column(const sg_subset_data *data, size_t v)
{
    return v < data->n_vars ? data->x + data->ld * v : data->y;
}

/* Builds the design over rows (NULL: all). Fails with a message for a
 * constant response, a forced predictor the rank test drops, no free
 * predictor left, or too few rows for the full model. what names the rows
 * in messages ("" for all rows). */
static statgpu_status sg_design_build(statgpu_context *context, const sg_subset_data *data, const size_t *rows,
                                      size_t row_count, const char *what, sg_subset_design *design)
{
    memset(design, 0, sizeof *design);
    size_t n_vars = data->n_vars, width_all = n_vars + 1;
    design->row_count = row_count;
    design->shift = calloc(width_all, sizeof *design->shift);
    design->scale = malloc(width_all * sizeof *design->scale);
    design->vars = malloc((n_vars ? n_vars : 1) * sizeof *design->vars);
    design->kept = calloc(n_vars ? n_vars : 1, sizeof *design->kept);
    size_t candidate_count = 0;
    size_t *candidates = malloc(width_all * sizeof *candidates);
    const double **columns = malloc(width_all * sizeof *columns);
    double *factor = NULL, *copy = NULL, *norms = NULL, *coef = NULL;
    bool *independent = NULL;
    statgpu_status status = STATGPU_OK;
    if (!design->shift || !design->scale || !design->vars || !design->kept || !candidates || !columns) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the subset search's design");
        goto done;
    }
    /* Means (of the values divided by the count, so that no sum overflows),
     * then norms about them, scaled by the largest magnitude (as LAPACK's
     * dnrm2), so that values near 1e-200 or 1e200 neither underflow nor
     * overflow on the way. */
    for (size_t v = 0; v <= n_vars; ++v) {
        const double *column = sg_data_column(data, v);
        double mean = 0.0;
        if (data->intercept) {
            for (size_t i = 0; i < row_count; ++i)
                mean += column[rows ? rows[i] : i] / (double)row_count;
            /* A second pass corrects the mean by the mean of what it leaves
             * (as R's mean.default): the first pass's error grows with the
             * count times the values' size, and had made the centred norm of
             * y = 1e15 + i rounding-sized; after it a constant column's mean
             * is the constant exactly, and its centred norm 0. */
            double correction = 0.0;
            for (size_t i = 0; i < row_count; ++i)
                correction += (column[rows ? rows[i] : i] - mean) / (double)row_count;
            mean += correction;
        }
        double largest = 0.0, largest_raw = 0.0;
        for (size_t i = 0; i < row_count; ++i) {
            double value = column[rows ? rows[i] : i];
            largest = fmax(largest, fabs(value - mean));
            largest_raw = fmax(largest_raw, fabs(value));
        }
        double sum = 0.0, raw = 0.0;
        for (size_t i = 0; i < row_count && largest > 0.0; ++i) {
            double value = column[rows ? rows[i] : i], centred = (value - mean) / largest, plain = value / largest_raw;
            sum += centred * centred;
            raw += plain * plain;
        }
        double norm = largest * sqrt(sum);
        raw = largest_raw * sqrt(raw);
        /* What centring leaves of a constant column is rounding: as in R's
         * lm.fit, where the intercept's column comes first, a column whose
         * centred norm is at most the rank tolerance of its own is constant
         * (scaled to 0, so the rank test drops it); y's bound is rounding's,
         * 16 units in the last place of its raw norm (1e-12 had called
         * y = 1e14 + i + noise constant: its spread is 1e-13 of its size). */
        bool constant = !(norm > (v == n_vars ? 0x1p-48 : SG_SUBSET_RANK_TOLERANCE) * raw);
        design->shift[v] = mean;
        design->scale[v] = constant ? 0.0 : norm > 0.0 && isfinite(norm) ? 1.0 / norm : 1.0;
        if (v == n_vars) {
            design->y_norm = norm;
            if (constant)
                status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                                 data->intercept ? "y is constant%s: every model fits it exactly"
                                                 : "y is 0 on every row%s: every model fits it exactly", what);
            else if (!isfinite(norm))
                status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                                 "y's sum of squares%s exceeds the range of doubles", what);
        } else if (!isfinite(norm))
            status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                             "predictor %zu's sum of squares%s exceeds the range of doubles", v + 1, what);
        if (status != STATGPU_OK)
            goto done;
    }
    /* The candidates: forced first, then free, each in order; the response last. */
    for (int pass = 0; pass < 2; ++pass)
        for (size_t v = 0; v < n_vars; ++v) {
            int force = data->force ? data->force[v] : 0;
            if ((pass == 0 && force == 1) || (pass == 1 && force == 0))
                candidates[candidate_count++] = v;
        }
    size_t width = candidate_count + 1;
    for (size_t c = 0; c < candidate_count; ++c)
        columns[c] = sg_data_column(data, candidates[c]);
    columns[candidate_count] = data->y;
    double *shift = malloc(width * sizeof *shift), *scale = malloc(width * sizeof *scale);
    factor = malloc(width * width * sizeof *factor);
    copy = malloc(width * width * sizeof *copy);
    norms = malloc(width * sizeof *norms);
    coef = malloc(width * sizeof *coef);
    independent = malloc(width * sizeof *independent);
    if (!shift || !scale || !factor || !copy || !norms || !coef || !independent) {
        free(shift);
        free(scale);
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the subset search's design");
        goto done;
    }
    for (size_t c = 0; c < width; ++c) {
        size_t v = c < candidate_count ? candidates[c] : n_vars;
        shift[c] = design->shift[v];
        scale[c] = design->scale[v];
    }
    bool factored = sg_qr_factor_columns(columns, shift, scale, width, rows, row_count, data->threads, factor);
    free(shift);
    free(scale);
    if (!factored) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the subset search's design");
        goto done;
    }
    /* The rank test: R's columns have the scaled columns' norms. */
    for (size_t c = 0; c < width; ++c) {
        double sum = 0.0;
        for (size_t i = 0; i <= c; ++i)
            sum += factor[i + width * c] * factor[i + width * c];
        norms[c] = sqrt(sum);
    }
    memcpy(copy, factor, width * width * sizeof *copy);
    sg_qr_solve(copy, width, candidate_count, width, SG_SUBSET_RANK_TOLERANCE, norms, coef, independent);
    size_t kept_count = 0;
    for (size_t c = 0; c < candidate_count; ++c) {
        size_t v = candidates[c];
        int force = data->force ? data->force[v] : 0;
        if (!independent[c]) {
            if (force == 1) {
                status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                                 "predictor %zu is forced in but is %s%s", v + 1,
                                 design->scale[v] == 0.0 ? (data->intercept ? "constant" : "0 on every row")
                                                         : "a linear combination of the forced predictors before it",
                                 what);
                goto done;
            }
            continue;
        }
        design->kept[v] = true;
        if (force == 1)
            ++design->forced;
        design->vars[kept_count] = v;
        /* The kept columns, in order, then the response. */
        memcpy(copy + width * kept_count, factor + width * c, width * sizeof *copy);
        ++kept_count;
    }
    if (kept_count == design->forced) {
        status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                         "no predictor is left to choose from%s (all forced in, left out, or dependent on others)", what);
        goto done;
    }
    if (row_count <= kept_count + (size_t)data->intercept) {
        status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                         "%zu rows%s for a full model of %zu coefficients: best subset regression needs more rows "
                         "than coefficients", row_count, what, kept_count + (size_t)data->intercept);
        goto done;
    }
    memcpy(copy + width * kept_count, factor + width * candidate_count, width * sizeof *copy);
    size_t tree_width = kept_count + 1;
    sg_qr_reduce(copy, width, tree_width, width);
    design->columns = kept_count;
    design->r = malloc(tree_width * tree_width * sizeof *design->r);
    if (design->r == NULL) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the subset search's design");
        goto done;
    }
    for (size_t c = 0; c < tree_width; ++c)
        for (size_t i = 0; i < tree_width; ++i)
            design->r[i + tree_width * c] = i <= c ? copy[i + width * c] : 0.0;
    double full = design->r[kept_count + tree_width * kept_count];
    if (full * full <= SG_SUBSET_EXACT_FIT) {
        status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                         "y is an exact linear function of the predictors%s: the full model's residuals are 0", what);
        goto done;
    }

done:
    free(candidates);
    free(columns);
    free(factor);
    free(copy);
    free(norms);
    free(coef);
    free(independent);
    if (status != STATGPU_OK)
        sg_design_free(design);
    return status;
}

/* ------------------------------------------------------------ one subset */

/* A subset fitted on some rows: its triangular factor (scaled units, the
 * response last) and what follows from it. */
typedef struct sg_subset_fit {
    size_t  size;
    size_t  vars[STATGPU_BESTSUBSET_MAX_VARS];
    double *r;           /* (size + 1)^2 */
    double *coef;        /* size, scaled units */
    double  rss_scaled;  /* in the design's units (RSS / y_norm^2) */
} sg_subset_fit;

/* Fits the subset of mask on the design's rows: its factor is the QR of
 * the design's factor's columns of the subset and the response (the same
 * fit as a QR of those rows, in O(columns size^2) instead of O(rows
 * size^2)). work holds (columns + 1)(size + 1) + size doubles. */
static void sg_subset_fit_design(const sg_subset_data *data, const sg_subset_design *design,
                                 const sg_subset_mask *mask, double *work, sg_subset_fit *fit)
{
    size_t size = 0, q = design->columns + 1;
    for (size_t v = 0; v < data->n_vars; ++v)
        if ((mask->word[v / 64] >> (v % 64)) & 1u)
            fit->vars[size++] = v;
    size_t width = size + 1;
    fit->size = size;
    fit->r = work;
    fit->coef = work + q * width;
    for (size_t t = 0; t <= size; ++t) {
        size_t c = design->columns;  /* the response */
        if (t < size)
            for (c = 0; c < design->columns && design->vars[c] != fit->vars[t]; ++c)
                ;
        memcpy(fit->r + q * t, design->r + q * c, q * sizeof *fit->r);
    }
    sg_qr_reduce(fit->r, q, width, q);
    /* Keep the triangle with leading dimension width. */
    for (size_t t = 0; t <= size; ++t)
        for (size_t i = 0; i <= t; ++i)
            fit->r[i + width * t] = fit->r[i + q * t];
    for (size_t i = size; i-- > 0;) {
        double sum = fit->r[i + width * size];
        for (size_t t = i + 1; t < size; ++t)
            sum -= fit->r[i + width * t] * fit->coef[t];
        fit->coef[i] = sum / fit->r[i + width * i];
    }
    double last = fit->r[size + width * size];
    fit->rss_scaled = last * last;
}

/* A row's scaled predictors of the subset, and its prediction error. */
static double sg_subset_row(const sg_subset_data *data, const sg_subset_design *design, const sg_subset_fit *fit,
                            size_t row, double *scaled)
{
    double prediction = 0.0;
    for (size_t t = 0; t < fit->size; ++t) {
        size_t v = fit->vars[t];
        scaled[t] = (data->x[row + data->ld * v] - design->shift[v]) * design->scale[v];
        prediction += fit->coef[t] * scaled[t];
    }
    double observed = (data->y[row] - design->shift[data->n_vars]) * design->scale[data->n_vars];
    return observed - prediction;
}

/* PRESS (scaled units) of a fit on all rows: sum (e / (1 - h))^2. */
static double sg_subset_press(const sg_subset_data *data, const sg_subset_design *design, const sg_subset_fit *fit,
                              double *scaled)
{
    size_t width = fit->size + 1;
    double press = 0.0;
    for (size_t i = 0; i < data->n; ++i) {
        double e = sg_subset_row(data, design, fit, i, scaled);
        /* h = ||R^-T x||^2 (+ 1/n): forward substitution in place. */
        double h = data->intercept ? 1.0 / (double)data->n : 0.0;
        for (size_t t = 0; t < fit->size; ++t) {
            double sum = scaled[t];
            for (size_t u = 0; u < t; ++u)
                sum -= fit->r[u + width * t] * scaled[u];
            scaled[t] = sum / fit->r[t + width * t];
            h += scaled[t] * scaled[t];
        }
        double left = 1.0 - h;
        if (left > 1e-12)
            press += (e / left) * (e / left);
    }
    return press;
}

/* ------------------------------------------------------- the statistics */

typedef struct sg_subset_stats_job {
    const sg_subset_data   *data;
    const sg_subset_design *design;
    const sg_subset_mask   *masks;     /* per reported subset */
    double                 *rss, *press;  /* scaled units */
    double                **work;      /* per slot */
    atomic_int              failed;
} sg_subset_stats_job;

static void sg_subset_stats_block(void *context, size_t s, int slot)
{
    sg_subset_stats_job *job = context;
    sg_subset_fit fit;
    double *work = job->work[slot];
    size_t width_max = job->data->n_vars + 1;
    sg_subset_fit_design(job->data, job->design, &job->masks[s], work, &fit);
    job->rss[s] = fit.rss_scaled;
    job->press[s] = sg_subset_press(job->data, job->design, &fit, work + width_max * width_max + width_max);
}

/* ------------------------------------------------------------ validation */

/* The validation searches: per size, the squared prediction error of the
 * best subset found without the held-out rows, summed over the folds, and
 * in how many folds the size was reached. */
static statgpu_status sg_subset_validate(statgpu_context *context, const sg_subset_data *data,
                                         const statgpu_bestsubset_params *params, size_t min_size, size_t max_size,
                                         sg_subset_device *device, double *sse, size_t *reached, uint64_t *nodes)
{
    size_t n = data->n, folds = params->validation == STATGPU_SUBSET_KFOLD ? params->fold_count : 1;
    size_t held_total = params->validation == STATGPU_SUBSET_KFOLD ? n : sg_holdout_rows(params->holdout_fraction, n);
    size_t *order = malloc(n * sizeof *order), *train = malloc(n * sizeof *train), *held = malloc(n * sizeof *held);
    size_t width_max = data->n_vars + 1;
    double *work = malloc((width_max * width_max + 2 * width_max) * sizeof *work);
    statgpu_status status = STATGPU_OK;
    if (!order || !train || !held || !work) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the validation");
        goto done;
    }
    sg_rng rng = { sg_derive_stream(context->params.seed, params->seed, SG_SUBSET_SALT, 0) };
    for (size_t i = 0; i < n; ++i)
        order[i] = i;
    for (size_t i = n; i > 1; --i) {  /* Fisher-Yates */
        size_t j = sg_rng_below(&rng, i), swap = order[i - 1];
        order[i - 1] = order[j];
        order[j] = swap;
    }
    for (size_t f = 0; f < folds; ++f) {
        /* Fold f holds the shuffled rows f, f + K, ...; the holdout the first share. */
        size_t train_count = 0, held_count = 0;
        char *mark = calloc(n, 1);
        if (mark == NULL) {
            status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the validation");
            goto done;
        }
        for (size_t i = 0; i < n; ++i)
            if (folds > 1 ? i % folds == f : i < held_total)
                mark[order[i]] = 1;
        for (size_t i = 0; i < n; ++i) {
            if (mark[i])
                held[held_count++] = i;
            else
                train[train_count++] = i;
        }
        free(mark);
        char what[64];
        if (folds > 1)
            snprintf(what, sizeof what, " without fold %zu", f + 1);
        else
            snprintf(what, sizeof what, " without the held-out rows");
        sg_subset_design design;
        status = sg_design_build(context, data, train, train_count, what, &design);
        if (status != STATGPU_OK)
            goto done;
        sg_subset_problem problem = { design.r, design.columns, design.forced, design.vars,
                                      min_size > design.forced ? min_size : (design.forced ? design.forced : 1),
                                      max_size < design.columns ? max_size : design.columns, 1,
                                      SG_SUBSET_MARGIN };
        sg_subset_best best;
        if (!sg_subset_best_init(&best, design.columns, 1)) {
            sg_design_free(&design);
            status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the validation");
            goto done;
        }
        double from = (double)(f + 1) / (double)(folds + 1), to = (double)(f + 2) / (double)(folds + 1);
        if (problem.min_size <= problem.max_size)
            status = sg_subset_search(context, &problem, data->threads, from, to, device, &best, nodes);
        for (size_t s = min_size; status == STATGPU_OK && s <= max_size; ++s) {
            if (s > design.columns || best.count[s] == 0)
                continue;
            sg_subset_fit fit;
            sg_subset_fit_design(data, &design, &best.mask[s], work, &fit);
            double scaled[STATGPU_BESTSUBSET_MAX_VARS], sum = 0.0, unit = design.y_norm;
            for (size_t i = 0; i < held_count; ++i) {
                double e = sg_subset_row(data, &design, &fit, held[i], scaled) * unit;
                sum += e * e;
            }
            sse[s] += sum;
            reached[s] += 1;
        }
        sg_subset_best_free(&best);
        sg_design_free(&design);
        if (status != STATGPU_OK)
            goto done;
    }
done:
    free(order);
    free(train);
    free(held);
    free(work);
    return status;
}

/* ------------------------------------------------------------- the call */

static statgpu_status sg_check_arguments(statgpu_context *context, const double *y, const double *x, size_t n_obs,
                                         size_t n_vars, size_t ld, const statgpu_bestsubset_params *params)
{
    if (y == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "y is NULL");
    if (x == NULL && n_vars > 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "x is NULL");
    if (n_obs == 0)
        return sg_fail(context, STATGPU_ERROR_EMPTY_INPUT, "the data hold no observations");
    if (n_vars == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "there are no predictors to choose from");
    if (ld < n_obs)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "the leading dimension %zu is less than the %zu observations", ld, n_obs);
    if (n_vars > SIZE_MAX / sizeof(double) / ld)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the data are too large (%zu x %zu)", n_obs, n_vars);
    if (!(params->intercept == 0 || params->intercept == 1))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "intercept is %d; it must be 0 or 1", params->intercept);
    if (params->nbest == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "nbest is 0: at least one subset per size is needed");
    if (params->nbest > 1000)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "nbest = %zu is more than 1000", params->nbest);
    size_t free_count = 0;
    for (size_t v = 0; v < n_vars; ++v) {
        int force = params->force ? params->force[v] : 0;
        if (force < -1 || force > 1)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "force[%zu] is %d; it must be 1 (in), -1 (out) or 0 (free)", v, force);
        free_count += force == 0;
    }
    if (free_count == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "every predictor is forced in or left out: there is nothing to choose");
    if (free_count > STATGPU_BESTSUBSET_MAX_VARS)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "%zu predictors to choose from; an exhaustive search takes at most %d", free_count,
                       STATGPU_BESTSUBSET_MAX_VARS);
    if (n_vars > STATGPU_BESTSUBSET_MAX_VARS)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "%zu predictors; best subset regression takes at most %d", n_vars, STATGPU_BESTSUBSET_MAX_VARS);
    switch (params->validation) {
    case STATGPU_SUBSET_PRESS:
        break;
    case STATGPU_SUBSET_HOLDOUT:
        if (!(params->holdout_fraction > 0.0 && params->holdout_fraction < 1.0))
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "holdout_fraction = %.17g lies outside (0, 1)", params->holdout_fraction);
        if (sg_holdout_rows(params->holdout_fraction, n_obs) < 1)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "a holdout of %.17g of %zu rows holds out no row", params->holdout_fraction, n_obs);
        break;
    case STATGPU_SUBSET_KFOLD:
        if (params->fold_count < 2 || params->fold_count > n_obs)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "fold_count = %zu lies outside 2 .. %zu (the observations)", params->fold_count, n_obs);
        break;
    default:
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "unknown validation %d", (int)params->validation);
    }
    if ((int)params->criterion < 0 || params->criterion > STATGPU_SUBSET_BY_ADJR2)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "unknown criterion %d", (int)params->criterion);
    for (size_t v = 0; v <= n_vars; ++v) {
        const double *column = v < n_vars ? x + ld * v : y;
        for (size_t i = 0; i < n_obs; ++i) {
            if (isnan(column[i]))
                return sg_fail(context, STATGPU_ERROR_NAN_IN_DATA,
                               v == n_vars ? "y contains NaN (observation %zu)"
                                           : "x contains NaN (observation %zu, predictor %zu)", i + 1, v + 1);
            if (isinf(column[i]))
                return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                               v == n_vars ? "y contains an infinity (observation %zu)"
                                           : "x contains an infinity (observation %zu, predictor %zu)", i + 1, v + 1);
        }
    }
    return STATGPU_OK;
}

static statgpu_bestsubset_result *sg_result_create(size_t rows, size_t n_vars)
{
    statgpu_bestsubset_result *result = calloc(1, sizeof *result);
    if (result == NULL)
        return NULL;
    size_t count = rows ? rows : 1;
    result->sizes = calloc(count, sizeof(size_t));
    result->ranks = calloc(count, sizeof(size_t));
    result->which = calloc(count * n_vars, 1);
    result->rss = calloc(count, sizeof(double));
    result->r_squared = calloc(count, sizeof(double));
    result->adjusted_r_squared = calloc(count, sizeof(double));
    result->cp = calloc(count, sizeof(double));
    result->bic_leaps = calloc(count, sizeof(double));
    result->bic = calloc(count, sizeof(double));
    result->press = calloc(count, sizeof(double));
    result->validation_error = calloc(count, sizeof(double));
    result->coefficients = calloc(n_vars + 1, sizeof(double));
    result->standard_errors = calloc(n_vars + 1, sizeof(double));
    result->coefficient_vars = calloc(n_vars + 1, sizeof(size_t));
    result->dropped = calloc(n_vars, 1);
    if (!result->sizes || !result->ranks || !result->which || !result->rss || !result->r_squared
        || !result->adjusted_r_squared || !result->cp || !result->bic_leaps || !result->bic || !result->press
        || !result->validation_error || !result->coefficients || !result->standard_errors
        || !result->coefficient_vars || !result->dropped) {
        statgpu_bestsubset_result_destroy(result);
        return NULL;
    }
    return result;
}

/* The chosen model's coefficients and standard errors in the data's units. */
static bool sg_chosen_coefficients(const sg_subset_data *data, const sg_subset_design *design,
                                   const sg_subset_mask *mask, statgpu_bestsubset_result *result)
{
    size_t width_max = data->n_vars + 1;
    double *work = malloc((2 * width_max * width_max + width_max) * sizeof *work);
    if (work == NULL)
        return false;
    sg_subset_fit fit;
    sg_subset_fit_design(data, design, mask, work, &fit);
    size_t size = fit.size, width = size + 1, k = size + (size_t)data->intercept, n = data->n;
    double *inverse = work + width_max * width_max + width_max;  /* size^2: R^-1 */
    sg_upper_inverse(fit.r, width, size, inverse);
    double y_unit = design->y_norm;  /* the response's scaled unit */
    double sigma2 = fit.rss_scaled * y_unit * y_unit / (double)(n - k);
    size_t at = 0;
    double intercept = data->intercept ? design->shift[data->n_vars] : 0.0;
    /* x-bar in scaled units, for the intercept's variance: ||R^-T D^-1 x-bar||^2. */
    double intercept_variance = data->intercept ? 1.0 / (double)n : 0.0, bar[STATGPU_BESTSUBSET_MAX_VARS];
    for (size_t t = 0; t < size; ++t)
        bar[t] = design->shift[fit.vars[t]] * design->scale[fit.vars[t]];
    for (size_t t = 0; t < size && data->intercept; ++t) {
        double sum = 0.0;  /* (R^-T bar)_t = sum_u inverse[u, t] bar[u] */
        for (size_t u = 0; u <= t; ++u)
            sum += inverse[u + size * t] * bar[u];
        intercept_variance += sum * sum;
    }
    if (data->intercept) {
        result->coefficient_vars[at] = SIZE_MAX;
        at = 1;
    }
    for (size_t t = 0; t < size; ++t) {
        size_t v = fit.vars[t];
        double coefficient = fit.coef[t] * y_unit * design->scale[v];
        result->coefficients[at + t] = coefficient;
        result->coefficient_vars[at + t] = v;
        intercept -= coefficient * design->shift[v];
    }
    /* sigma2 is in the data's units; the scaled coefficient's variance is
     * sigma2 / y_unit^2 * norm, so the data's is sigma2 * norm * scale^2. */
    for (size_t t = 0; t < size; ++t) {
        size_t v = fit.vars[t];
        double norm = 0.0;
        for (size_t u = t; u < size; ++u)
            norm += inverse[t + size * u] * inverse[t + size * u];
        result->standard_errors[at + t] = sqrt(sigma2 * norm) * design->scale[v];
    }
    if (data->intercept) {
        result->coefficients[0] = intercept;
        result->standard_errors[0] = sqrt(sigma2 * intercept_variance);
    }
    result->coefficient_count = at + size;
    free(work);
    return true;
}

statgpu_status statgpu_bestsubset(statgpu_context *context, const double *y, const double *x, size_t n_obs,
                                  size_t n_vars, size_t ld, const statgpu_bestsubset_params *params,
                                  statgpu_bestsubset_result **out_result)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_result is NULL");
    *out_result = NULL;
    statgpu_bestsubset_params chosen;
    statgpu_bestsubset_params_init(&chosen);
    if (params != NULL) {
        if (params->struct_bytes < SG_BESTSUBSET_PARAMS_MIN_BYTES || params->struct_bytes > sizeof chosen)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "params->struct_bytes is %zu; call statgpu_bestsubset_params_init first",
                           params->struct_bytes);
        memcpy(&chosen, params, params->struct_bytes);
        chosen.struct_bytes = sizeof chosen;
    }
    statgpu_status status = sg_check_arguments(context, y, x, n_obs, n_vars, ld, &chosen);
    if (status != STATGPU_OK)
        return status;
    sg_dispatch_begin(context);
    if (sg_progress_cancelled(context, 0.0))
        return sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");

    sg_subset_data data = { y, x, n_obs, n_vars, ld, chosen.intercept, chosen.force, context->cpu_thread_count };
    sg_subset_design design;
    status = sg_design_build(context, &data, NULL, n_obs, "", &design);
    if (status != STATGPU_OK)
        return status;
    size_t min_size = design.forced > 0 ? design.forced : 1;
    size_t max_size = chosen.max_size == 0 || chosen.max_size > design.columns ? design.columns : chosen.max_size;
    statgpu_bestsubset_result *result = NULL;
    sg_subset_best best = { 0 };
    sg_subset_mask *masks = NULL;
    double *rss = NULL, *press = NULL, *sse = NULL;
    size_t *reached = NULL;
    sg_subset_stats_job job = { 0 };
    int team = context->cpu_thread_count > 0 ? context->cpu_thread_count : 1;
    if (max_size < min_size) {
        status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                         "the largest size %zu is less than the %zu predictors forced in", max_size, min_size);
        goto done;
    }
    if (!sg_subset_best_init(&best, design.columns, chosen.nbest)) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the subset search");
        goto done;
    }
    uint64_t nodes = 0;
    size_t folds = chosen.validation == STATGPU_SUBSET_KFOLD ? chosen.fold_count
                   : chosen.validation == STATGPU_SUBSET_HOLDOUT ? 1 : 0;
    sg_subset_problem problem = { design.r, design.columns, design.forced, design.vars, min_size, max_size,
                                  chosen.nbest, SG_SUBSET_MARGIN };
    /* The GPU for the searches that may be long, one best subset per size. */
    sg_subset_device device = { 0 };
    device.status = STATGPU_CUDA_NO_DEVICE;
    if (sg_dispatch_wants_cuda(context, (double)(design.columns - design.forced), SG_SUBSET_AUTO_CUDA_MIN_FREE, false)) {
        if (chosen.nbest != 1)
            snprintf(device.message, sizeof device.message, "the GPU searches one best subset per size (nbest 1)");
        else
            device.wanted = sg_dispatch_cuda_ready(context, device.message, sizeof device.message);
        if (!device.wanted)
            sg_dispatch_note_cpu(context, STATGPU_CUDA_NO_DEVICE, device.message, "best subset search");
    }
    status = sg_subset_search(context, &problem, data.threads, 0.0, 1.0 / (double)(folds + 1), &device, &best,
                              &nodes);
    if (device.wanted && !device.ran && status == STATGPU_OK) {
        sg_dispatch_note_cpu(context, device.status, device.message, "best subset search");
        device.wanted = false;
    }
    if (status != STATGPU_OK)
        goto done;

    /* The reported subsets, by size then rank. */
    size_t rows = 0;
    for (size_t s = min_size; s <= max_size; ++s)
        rows += best.count[s];
    result = sg_result_create(rows, n_vars);
    masks = malloc((rows ? rows : 1) * sizeof *masks);
    rss = malloc((rows ? rows : 1) * sizeof *rss);
    press = malloc((rows ? rows : 1) * sizeof *press);
    sse = calloc(max_size + 1, sizeof *sse);
    reached = calloc(max_size + 1, sizeof *reached);
    job.work = calloc((size_t)team, sizeof *job.work);
    bool ok = result && masks && rss && press && sse && reached && job.work;
    size_t width_max = n_vars + 1;
    for (int slot = 0; ok && slot < team; ++slot)
        ok = (job.work[slot] = malloc((width_max * width_max + 3 * width_max) * sizeof(double))) != NULL;
    if (!ok) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the best subset result");
        goto done;
    }
    size_t row = 0;
    for (size_t s = min_size; s <= max_size; ++s)
        for (size_t i = 0; i < best.count[s]; ++i, ++row) {
            masks[row] = best.mask[s * chosen.nbest + i];
            result->sizes[row] = s;
            result->ranks[row] = i + 1;
        }
    job.data = &data;
    job.design = &design;
    job.masks = masks;
    job.rss = rss;
    job.press = press;
    atomic_init(&job.failed, 0);
    sg_parallel_for(team, rows, sg_subset_stats_block, &job);
    if (atomic_load(&job.failed)) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the best subset result");
        goto done;
    }
    if (folds > 0) {
        status = sg_subset_validate(context, &data, &chosen, min_size, max_size, &device, sse, reached, &nodes);
        if (status != STATGPU_OK)
            goto done;
    }

    /* The statistics, leaps's way. */
    double unit2 = design.y_norm * design.y_norm, n = (double)n_obs;
    if (!(unit2 >= DBL_MIN) || !isfinite(unit2)) {
        status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                         "y's sum of squares about its %s (%.3g squared) lies beyond the range of doubles: "
                         "y in other units (a power of ten) gives the same subsets", chosen.intercept ? "mean" : "0",
                         design.y_norm);
        goto done;
    }
    double full_rss = design.r[design.columns + (design.columns + 1) * design.columns];
    full_rss *= full_rss * unit2;
    size_t k_full = design.columns + (size_t)chosen.intercept;
    double sigma2 = full_rss / (double)(n_obs - k_full);
    result->n_obs = n_obs;
    result->n_vars = n_vars;
    result->intercept = chosen.intercept;
    result->nbest = chosen.nbest;
    result->min_size = min_size;
    result->max_size = max_size;
    result->subset_count = rows;
    result->null_rss = unit2;
    result->full_rss = full_rss;
    result->sigma2 = sigma2;
    result->validation = chosen.validation;
    result->criterion = chosen.criterion;
    result->fold_count = folds;
    result->holdout_count = chosen.validation == STATGPU_SUBSET_HOLDOUT
                                ? sg_holdout_rows(chosen.holdout_fraction, n) : 0;
    for (size_t v = 0; v < n_vars; ++v) {
        int force = chosen.force ? chosen.force[v] : 0;
        result->dropped[v] = force != -1 && !design.kept[v];
        result->dropped_count += result->dropped[v];
    }
    /* Within a size the subsets keep the search's ranks; their statistics
     * come from a fresh QR of each on all rows. */
    for (size_t r = 0; r < rows; ++r) {
        size_t s = result->sizes[r];
        double k = (double)(s + (size_t)chosen.intercept), value = rss[r] * unit2, ratio = rss[r];
        for (size_t v = 0; v < n_vars; ++v)
            result->which[r * n_vars + v] = (uint8_t)((masks[r].word[v / 64] >> (v % 64)) & 1u);
        result->rss[r] = value;
        result->r_squared[r] = 1.0 - ratio;
        result->adjusted_r_squared[r] = 1.0 - ratio * (n - (double)chosen.intercept) / (n - k);
        result->cp[r] = value / sigma2 - (n - 2.0 * k);
        result->bic_leaps[r] = n * log(ratio) + k * log(n);
        result->bic[r] = n * log(value / n) + k * log(n);
        result->press[r] = press[r] * unit2;
        if (folds == 0)
            result->validation_error[r] = result->press[r] / n;
        else if (result->ranks[r] == 1 && reached[s] == folds)
            result->validation_error[r] = sse[s] / (chosen.validation == STATGPU_SUBSET_KFOLD ? n
                                                    : (double)result->holdout_count);
        else
            result->validation_error[r] = NAN;
        if (!isfinite(result->rss[r]) || !isfinite(result->bic[r]) || !isfinite(result->cp[r])) {
            status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                             "the sums of squares exceed the range of doubles");
            goto done;
        }
    }
    /* The chosen size. */
    size_t choice = SIZE_MAX;
    double choice_value = 0.0;
    for (size_t r = 0; r < rows; ++r) {
        if (result->ranks[r] != 1)
            continue;
        double value = chosen.criterion == STATGPU_SUBSET_BY_CP    ? result->cp[r]
                       : chosen.criterion == STATGPU_SUBSET_BY_BIC ? result->bic[r]
                       : chosen.criterion == STATGPU_SUBSET_BY_ADJR2 ? -result->adjusted_r_squared[r]
                                                                   : result->validation_error[r];
        if (isnan(value))
            continue;
        if (choice == SIZE_MAX || value < choice_value) {
            choice = r;
            choice_value = value;
        }
    }
    if (choice == SIZE_MAX) {
        status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                         "no size could be validated: every fold's search fell short of the sizes asked for");
        goto done;
    }
    result->chosen = choice;
    if (!sg_chosen_coefficients(&data, &design, &masks[choice], result)) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the best subset result");
        goto done;
    }
    result->subsets_evaluated = nodes;
    if (sg_progress_cancelled(context, 1.0)) {
        status = sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");
        goto done;
    }
    sg_dispatch_ran(context, device.ran ? STATGPU_BACKEND_CUDA : STATGPU_BACKEND_CPU, device.transfer_seconds,
                    device.compute_seconds);
    *out_result = result;
    result = NULL;
    status = sg_succeed(context);
done:
    statgpu_bestsubset_result_destroy(result);
    for (int slot = 0; job.work != NULL && slot < team; ++slot)
        free(job.work[slot]);
    free(job.work);
    free(masks);
    free(rss);
    free(press);
    free(sse);
    free(reached);
    if (best.count != NULL)
        sg_subset_best_free(&best);
    sg_design_free(&design);
    return status;
}
