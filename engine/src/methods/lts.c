/*
 * lts.c: the public least trimmed squares function (FAST-LTS, and least
 * median of squares as an option): validation, standardisation, the random
 * or exhaustive elemental starts, the C-step iterations, the accurate final
 * least-squares fits and robustbase::ltsReg's scales, factors and weights.
 *
 * The passes over the rows (residuals, the h-th smallest squared residual,
 * the h-subset's cross products) go through one C-step primitive that the
 * CPU (lts_cpu.c) and the CUDA module implement alike; this file asks the
 * dispatch rule (backend/dispatch.c) for the backend, falls back to the CPU
 * when CUDA fails, and leaves the dense algebra to math/dense.c. The passes
 * over all the rows around the search (finiteness, standardisation, the
 * final fits' residuals, trimmed sums and weights) run on the CPU's threads
 * whichever backend runs the C-steps (lts_cpu.c, the same bits at any
 * thread count).
 *
 * Units. The search runs on a standardised copy of the data: with an
 * intercept every predictor and the response are centred on their medians
 * and divided by their median absolute deviations; without one they are only
 * divided by the median of their absolute values. LTS is equivariant under
 * these maps, so the search loses nothing, and the normal equations of the
 * C-steps stay well conditioned. The final fits are Householder QR on the
 * standardised rows, mapped back to the original units.
 */
#include "internal.h"
#include "core/units.h"
#include "core/matrix.h"
#include "math/dense.h"
#include "math/distributions.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under STATGPU_BACKEND_AUTO, from this many rows the C-steps run on the
 * GPU: at 2000 rows, p = 5, the GPU's whole call took 18.5 ms and the CPU's
 * 22.4 on 16 threads (bench/NOTES.md, "AUTO"); scaled by dispatch.h for
 * more threads. */
#define SG_LTS_AUTO_CUDA_MIN_OBS ((size_t)2000)

/* On the CPU, from this many rows the starts' two C-steps run on a random
 * working subsample of SG_LTS_START_ROWS rows (SG_LTS_START_GROUPS of them), the best are
 * iterated to convergence on a larger one of SG_LTS_MIDDLE_ROWS rows, and
 * the SG_LTS_FULL_CANDIDATES best of those on all the rows. Measured on
 * 2 cores at p = 10 with 20% vertical outliers and 5% bad leverage points:
 * at n = 10^5 0.37 s where every stage on all the rows takes 2.6 s, with
 * objectives 2e-7 apart (both below the true coefficients'); at n = 10^6
 * 1.5 s. One, two or three full-data candidates gave the same objective to
 * 7 digits there; two hedge against a start the subsample ranked wrongly.
 * From 8000 rows (twice the start sample) the subsample pays: at n = 10^4
 * 0.13 s against 0.37 s on all the rows, the same objectives over 6 seeds
 * to 4e-5 relative, ltsReg's own within that range. */
#define SG_LTS_SUBSAMPLE_MIN_OBS ((size_t)8000)
#define SG_LTS_START_ROWS        ((size_t)4000)
#define SG_LTS_MIDDLE_ROWS       ((size_t)20000)
#define SG_LTS_FULL_CANDIDATES   ((size_t)2)

/* With the working subsample, the starts are shared among
 * SG_LTS_START_GROUPS subsamples, each drawn afresh and keeping its own
 * best_count, and all those candidates go on to C-steps to convergence on
 * the middle sample (ltsReg carries best_count from each of its 5 subsets).
 * With one subsample and best_count carried, at 8000-19000 rows and alpha
 * 0.75 the default run ended above ltsReg's objective on 17 of 144 runs (36
 * synthetic data sets, 4 seeds; up to 1.5e-5 relative): the winners of one
 * subsample lie close together and the eventual winner was ranked outside
 * the best 10. Carrying 50 from one subsample: 3 of 144; 100: 2; five
 * subsamples of 10 each: 0 of 144. */
#define SG_LTS_START_CARRY  ((size_t)5)
#define SG_LTS_START_GROUPS SG_LTS_START_CARRY

/* Starts evaluated per call of the primitive, and so between progress
 * reports; the GPU takes more at once, its passes over the rows being shared
 * by every start of a call. On the CPU fewer where a start is much work, so
 * that Stop is heard within about 2^30 multiply-adds (sg_lts_start_batch). */
#define SG_LTS_START_BATCH      ((size_t)128)
#define SG_LTS_CUDA_START_BATCH ((size_t)512)
#define SG_LTS_BATCH_WORK       1073741824.0

/* The CPU's batch for p coefficients on a stage of rows: a start's work is
 * about p^3 (its elemental fit and two solves, on the calling thread) and
 * 2 rows p^2 (its two C-steps' cross products). At p = 400 on 803 rows a
 * batch of 128 had run for a minute and a half between reports; below about
 * 60 coefficients on the usual stages the batch stays 128. The starts and
 * their order are the same whatever the batch: so are the results. */
static size_t sg_lts_start_batch(size_t p, size_t rows)
{
    const double per_start = (double)p * (double)p * ((double)p + 2.0 * (double)rows);
    const double fitting = SG_LTS_BATCH_WORK / (per_start > 1.0 ? per_start : 1.0);
    return fitting >= (double)SG_LTS_START_BATCH ? SG_LTS_START_BATCH : fitting < 1.0 ? 1 : (size_t)fitting;
}

/* Redraws of a singular elemental subset before the start is given up. */
#define SG_LTS_MAX_REDRAWS 100

/* Column dependence tolerances, relative to a column's norm: R's lm.fit
 * tolerance for the final fits and the rank check, a stricter one for
 * elemental subsets (which are square and exact) and for the normal
 * equations of the C-steps (which square the norms). */
#define SG_LTS_QR_TOLERANCE        1e-7
#define SG_LTS_ELEMENTAL_TOLERANCE 1e-10
#define SG_LTS_CHOLESKY_TOLERANCE  1e-12

/* robustbase's cut-off for weights: qnorm(0.9875). */
#define SG_LTS_WEIGHT_CUTOFF 2.241402727604947

/* robustbase's exact-fit test is |scale| < 1e-7 in the data's units; here
 * relative to the response's robust scale. */
#define SG_LTS_EXACT_FIT_TOLERANCE 1e-7

#define SG_LTS_PARAMS_MIN_BYTES (offsetof(statgpu_lts_params, seed) + sizeof(uint64_t))

/* ================================================================ small maths */

/* The stream of draw `index` of a call (index 0 chooses the subsamples,
 * start s uses s + 1), from the context's and the call's seeds. */
static uint64_t sg_lts_stream(uint64_t context_seed, uint64_t call_seed, size_t index)
{
    return sg_derive_stream(context_seed, call_seed, 0x8CB92BA72F3D8DD7ull, index);
}


static double sg_dnorm(double x) { return exp(-0.5 * x * x) / sqrt(2.0 * 3.14159265358979323846); }

/* robustbase's h.alpha.n(alpha, n, p). */
static size_t sg_lts_h(double alpha, size_t n, size_t p)
{
    size_t n2 = (n + p + 1) / 2;
    return (size_t)floor(2.0 * (double)n2 - (double)n + 2.0 * (double)(n - n2) * alpha);
}

/* The consistency factor of a trimmed scale that keeps `kept` of n rows:
 * 1 / sqrt(1 - 2n / (kept / q) dnorm(q)), q = qnorm((kept + n) / 2n), as
 * ltsReg computes it; 1 where it is undefined. */
static double sg_lts_consistency(double kept, double n)
{
    if (kept >= n)
        return 1.0;
    double q = sg_qnorm((kept + n) / (2.0 * n));
    double inner = 1.0 - (2.0 * n) / (kept / q) * sg_dnorm(q);
    double factor = 1.0 / sqrt(inner);
    return inner > 0.0 && isfinite(factor) ? factor : 1.0;
}

/* robustbase's LTScnp2 (reweighted = false) and LTScnp2.rew (true): the
 * small-sample correction factors, interpolated in alpha between fits at
 * 0.5 and 0.875. p counts the intercept. */
static double sg_lts_small_sample(size_t p_total, int intercept, size_t n_obs, double alpha, bool reweighted)
{
    double n = (double)n_obs;
    size_t p = intercept ? p_total - 1 : p_total;
    double fp500, fp875, fp;
    if (p == 0) {
        if (!reweighted) {
            fp500 = 1 - exp(0.262024211897096) / pow(n, 0.604756680630497);
            fp875 = 1 - exp(-0.351584646688712) / pow(n, 1.01646567502486);
            if (alpha <= 0.875)
                fp = sqrt(fp500 + (fp875 - fp500) / 0.375 * (alpha - 0.5));
            else if (alpha < 1)
                fp = sqrt(fp875 + (1 - fp875) / 0.125 * (alpha - 0.875));
            else
                fp = 1.0;  /* R leaves it undefined; alpha = 1 never asks */
        } else {
            fp500 = 1 - exp(1.11098143415027) / pow(n, 1.5182890270453);
            fp875 = 1 - exp(-0.66046776772861) / pow(n, 0.88939595831888);
            fp = alpha <= 0.875 ? fp500 + (fp875 - fp500) / 0.375 * (alpha - 0.5)
                                : fp875 + (1 - fp875) / 0.125 * (alpha - 0.875);
            fp = sqrt(fp);
        }
        return 1.0 / fp;
    }
    if (p == 1) {
        if (!reweighted) {
            if (intercept) {
                fp500 = 1 - exp(0.630869217886906) / pow(n, 0.650789250442946);
                fp875 = 1 - exp(0.565065391014791) / pow(n, 1.03044199012509);
            } else {
                fp500 = 1 - exp(-0.0181777452315321) / pow(n, 0.697629772271099);
                fp875 = 1 - exp(-0.310122738776431) / pow(n, 1.06241615923172);
            }
        } else {
            if (intercept) {
                fp500 = 1 - exp(1.58609654199605) / pow(n, 1.46340162526468);
                fp875 = 1 - exp(0.391653958727332) / pow(n, 1.03167487483316);
            } else {
                fp500 = 1 - exp(0.6329852387657) / pow(n, 1.40361879788014);
                fp875 = 1 - exp(-0.642240988645469) / pow(n, 0.926325452943084);
            }
        }
    } else {
        /* {alfaq, betaq, qwaarden} at 0.875 and 0.5, two columns each. */
        static const double raw_int_875[2][3] = { { -0.458580153984614, 1.12236071104403, 3 },
                                                  { -0.267178168108996, 1.1022478781154, 5 } };
        static const double raw_int_500[2][3] = { { -0.746945886714663, 0.56264937192689, 3 },
                                                  { -0.535478048924724, 0.543323462033445, 5 } };
        static const double raw_no_875[2][3] = { { -0.251778730491252, 0.883966931611758, 3 },
                                                 { -0.146660023184295, 0.86292940340761, 5 } };
        static const double raw_no_500[2][3] = { { -0.487338281979106, 0.405511279418594, 3 },
                                                 { -0.340762058011, 0.37972360544988, 5 } };
        static const double rew_int_875[2][3] = { { -0.474174840843602, 1.39681715704956, 3 },
                                                  { -0.276640353112907, 1.42543242287677, 5 } };
        static const double rew_int_500[2][3] = { { -0.773365715932083, 2.02013996406346, 3 },
                                                  { -0.337571678986723, 2.02037467454833, 5 } };
        static const double rew_no_875[2][3] = { { -0.267522855927958, 1.17559984533974, 3 },
                                                 { -0.161200683014406, 1.21675019853961, 5 } };
        static const double rew_no_500[2][3] = { { -0.417574780492848, 1.83958876341367, 3 },
                                                 { -0.175753709374146, 1.8313809497999, 5 } };
        const double (*c875)[3] = reweighted ? (intercept ? rew_int_875 : rew_no_875)
                                             : (intercept ? raw_int_875 : raw_no_875);
        const double (*c500)[3] = reweighted ? (intercept ? rew_int_500 : rew_no_500)
                                             : (intercept ? raw_int_500 : raw_no_500);
        double pd = (double)p;
        double fps[2];
        for (int which = 0; which < 2; ++which) {
            const double (*c)[3] = which == 0 ? c500 : c875;
            /* Solve [1, -log(q1 p^2); 1, -log(q2 p^2)] (a, b) = (y1, y2). */
            double y1 = log(-c[0][0] / pow(pd, c[0][1])), y2 = log(-c[1][0] / pow(pd, c[1][1]));
            double m1 = -log(c[0][2] * pd * pd), m2 = -log(c[1][2] * pd * pd);
            double b = (y1 - y2) / (m1 - m2);
            double a = y1 - m1 * b;
            fps[which] = 1 - exp(a) / pow(n, b);
        }
        fp500 = fps[0];
        fp875 = fps[1];
    }
    fp = alpha <= 0.875 ? fp500 + (fp875 - fp500) / 0.375 * (alpha - 0.5)
                        : fp875 + (1 - fp875) / 0.125 * (alpha - 0.875);
    return 1.0 / fp;
}

/* ============================================================== the backends */

/* Where the C-steps of the full problem run: the CPU primitive, or the CUDA
 * module's session with the CPU as fallback. */
typedef struct sg_lts_evaluator {
    const sg_lts_problem        *problem;  /* the full standardised problem */
    const statgpu_cuda_module_i *module;
    statgpu_cuda_lts_session    *session;  /* NULL: the CPU */
    double                       transfer_seconds, compute_seconds;
    char                         failure[256];  /* why CUDA stopped, else "" */
} sg_lts_evaluator;

static statgpu_status sg_lts_evaluate(sg_lts_evaluator *evaluator, size_t h, const double *coef, size_t m,
                                      double *kth, double *objective, double *gram, double *xty)
{
    if (evaluator->session != NULL) {
        char message[256] = "";
        statgpu_cuda_timing timing = { 0.0, 0.0 };
        statgpu_cuda_status status = evaluator->module->lts->csteps(evaluator->session, h, coef, m, kth, objective,
                                                                   gram, xty, &timing, message, sizeof message);
        if (status == STATGPU_CUDA_OK) {
            evaluator->compute_seconds += timing.compute_seconds;
            evaluator->transfer_seconds += timing.transfer_seconds;
            return STATGPU_OK;
        }
        snprintf(evaluator->failure, sizeof evaluator->failure, "%s",
                 message[0] != '\0' ? message : "the C-steps failed on the GPU");
        evaluator->module->lts->end(evaluator->session);
        evaluator->session = NULL;
    }
    return sg_cpu_lts_csteps(evaluator->problem, h, coef, m, kth, objective, gram, xty);
}

/* One stage of the search: a problem (the full data through the evaluator,
 * or a working subsample on the CPU) and its h. */
typedef struct sg_lts_stage {
    sg_lts_evaluator *evaluator;  /* non-NULL: the full data */
    sg_lts_problem    problem;    /* the subsample otherwise */
    size_t            h;
} sg_lts_stage;

static statgpu_status sg_lts_stage_evaluate(sg_lts_stage *stage, const double *coef, size_t m, double *kth,
                                            double *objective, double *gram, double *xty)
{
    if (stage->evaluator != NULL)
        return sg_lts_evaluate(stage->evaluator, stage->h, coef, m, kth, objective, gram, xty);
    return sg_cpu_lts_csteps(&stage->problem, stage->h, coef, m, kth, objective, gram, xty);
}

/* ================================================================ the search */

/* The candidates kept between stages: best first. */
typedef struct sg_lts_candidates {
    size_t  capacity, count, p;
    double *coef;       /* capacity x p */
    double *value;      /* the criterion */
    size_t *origin;     /* start index, for ties */
    size_t *steps;      /* C-steps taken */
} sg_lts_candidates;

/* count x item_bytes, or 0 where the product does not fit in a size_t (no
 * allocation of that size can succeed, and 0 bytes makes none succeed). */
static size_t sg_array_bytes(size_t count, size_t item_bytes)
{
    size_t bytes;
    return __builtin_mul_overflow(count, item_bytes, &bytes) ? 0 : bytes;
}

static bool sg_candidates_init(sg_lts_candidates *list, size_t capacity, size_t p)
{
    list->capacity = capacity;
    list->count = 0;
    list->p = p;
    list->coef = list->value = NULL;
    list->origin = list->steps = NULL;
    size_t coef_bytes = sg_array_bytes(capacity, p * sizeof *list->coef);
    if (coef_bytes == 0 || capacity > SIZE_MAX / sizeof(size_t))
        return false;
    list->coef = malloc(coef_bytes);
    list->value = malloc(capacity * sizeof *list->value);
    list->origin = malloc(capacity * sizeof *list->origin);
    list->steps = malloc(capacity * sizeof *list->steps);
    return list->coef && list->value && list->origin && list->steps;
}

static void sg_candidates_free(sg_lts_candidates *list)
{
    free(list->coef);
    free(list->value);
    free(list->origin);
    free(list->steps);
}

/* Inserts a candidate if it is among the best `capacity` (lower value first,
 * then lower origin); an exact duplicate of a kept one is skipped. */
static void sg_candidates_offer(sg_lts_candidates *list, const double *coef, double value, size_t origin,
                                size_t steps)
{
    size_t p = list->p;
    for (size_t i = 0; i < list->count; ++i)
        if (list->value[i] == value && memcmp(list->coef + p * i, coef, p * sizeof *coef) == 0)
            return;
    size_t position = list->count;
    while (position > 0 && (value < list->value[position - 1]
                            || (value == list->value[position - 1] && origin < list->origin[position - 1])))
        --position;
    if (position >= list->capacity)
        return;
    size_t last = list->count < list->capacity ? list->count : list->capacity - 1;
    for (size_t i = last; i > position; --i) {
        memcpy(list->coef + p * i, list->coef + p * (i - 1), p * sizeof *coef);
        list->value[i] = list->value[i - 1];
        list->origin[i] = list->origin[i - 1];
        list->steps[i] = list->steps[i - 1];
    }
    memcpy(list->coef + p * position, coef, p * sizeof *coef);
    list->value[position] = value;
    list->origin[position] = origin;
    list->steps[position] = steps;
    if (list->count < list->capacity)
        ++list->count;
}

/* Scratch for evaluating up to `capacity` vectors at once. */
typedef struct sg_lts_batch {
    size_t  capacity, p;
    double *coef, *next, *kth, *objective, *gram, *xty, *work;
    double *best_coef, *best_value;
} sg_lts_batch;

static bool sg_batch_init(sg_lts_batch *batch, size_t capacity, size_t p)
{
    batch->capacity = capacity;
    batch->p = p;
    /* p <= 1000, so p * p * sizeof(double) cannot wrap; capacity times it can. */
    if (sg_array_bytes(capacity, p * p * sizeof(double)) == 0) {
        memset(batch, 0, sizeof *batch);
        return false;
    }
    batch->coef = malloc(capacity * p * sizeof(double));
    batch->next = malloc(capacity * p * sizeof(double));
    batch->kth = malloc(capacity * sizeof(double));
    batch->objective = malloc(capacity * sizeof(double));
    batch->gram = malloc(capacity * p * p * sizeof(double));
    batch->xty = malloc(capacity * p * sizeof(double));
    batch->work = malloc(p * p * sizeof(double));
    batch->best_coef = malloc(capacity * p * sizeof(double));
    batch->best_value = malloc(capacity * sizeof(double));
    return batch->coef && batch->next && batch->kth && batch->objective && batch->gram && batch->xty
           && batch->work && batch->best_coef && batch->best_value;
}

static void sg_batch_free(sg_lts_batch *batch)
{
    free(batch->coef);
    free(batch->next);
    free(batch->kth);
    free(batch->objective);
    free(batch->gram);
    free(batch->xty);
    free(batch->work);
    free(batch->best_coef);
    free(batch->best_value);
}

/* The state of one call. */
typedef struct sg_lts_search {
    statgpu_context      *context;
    const double         *z, *zy;        /* standardised design (n x p, intercept first) and response */
    size_t                n, p, h;
    statgpu_lts_criterion criterion;
    size_t                start_count, best_count, max_steps;
    uint64_t              context_seed, call_seed;
    bool                  exhaustive;
    size_t                starts_evaluated;
    double                progress_base, progress_span;
} sg_lts_search;

static double sg_criterion_value(statgpu_lts_criterion criterion, double kth, double objective)
{
    return criterion == STATGPU_LTS_MEDIAN ? kth : objective;
}

/* The exact fit through the p rows of `subset` (standardised units), or
 * false when those rows are singular. */
static bool sg_elemental_fit(const sg_lts_search *search, const size_t *subset, double *matrix, double *coef)
{
    size_t p = search->p, n = search->n;
    for (size_t v = 0; v <= p; ++v) {
        const double *source = v < p ? search->z + n * v : search->zy;
        for (size_t r = 0; r < p; ++r)
            matrix[r + p * v] = source[subset[r]];
    }
    bool kept[64];
    bool *keep = p <= 64 ? kept : malloc(p * sizeof *keep);
    if (keep == NULL)
        return false;
    size_t rank = sg_qr_solve(matrix, p, p, p, SG_LTS_ELEMENTAL_TOLERANCE, NULL, coef, keep);
    if (keep != kept)
        free(keep);
    if (rank < p)
        return false;
    for (size_t v = 0; v < p; ++v)
        if (!(fabs(coef[v]) <= SG_LTS_MAX_COEFFICIENT))
            return false;
    return true;
}

/* The next p-subset of 0..n-1 in lexicographic order; false after the last. */
static bool sg_next_combination(size_t *subset, size_t p, size_t n)
{
    size_t i = p;
    while (i > 0 && subset[i - 1] == n - p + i - 1)
        --i;
    if (i == 0)
        return false;
    ++subset[i - 1];
    for (size_t j = i; j < p; ++j)
        subset[j] = subset[j - 1] + 1;
    return true;
}

/* Draws start s's elemental subset (p distinct rows) and fits it; redraws a
 * singular one. */
static bool sg_random_start(const sg_lts_search *search, size_t s, size_t *subset, double *matrix, double *coef)
{
    sg_rng rng = { sg_lts_stream(search->context_seed, search->call_seed, s + 1) };
    for (int attempt = 0; attempt <= SG_LTS_MAX_REDRAWS; ++attempt) {
        for (size_t r = 0; r < search->p; ++r) {
            bool repeated;
            do {
                subset[r] = sg_rng_below(&rng, search->n);
                repeated = false;
                for (size_t q = 0; q < r; ++q)
                    repeated |= subset[q] == subset[r];
            } while (repeated);
        }
        if (sg_elemental_fit(search, subset, matrix, coef))
            return true;
    }
    return false;
}

/* Two C-steps from each of m starts in batch->coef, on the stage; offers the
 * better of the two fits (or, for LMS, the best of all three) to the list. */
static statgpu_status sg_two_csteps(const sg_lts_search *search, sg_lts_stage *stage, sg_lts_batch *batch,
                                    size_t m, const size_t *origins, sg_lts_candidates *list)
{
    size_t p = search->p;
    bool median = search->criterion == STATGPU_LTS_MEDIAN;
    for (size_t j = 0; j < m; ++j)
        batch->best_value[j] = INFINITY;
    for (int round = 0; round < 3; ++round) {
        bool last = round == 2;
        statgpu_status status = sg_lts_stage_evaluate(stage, batch->coef, m, batch->kth, batch->objective,
                                                      last ? NULL : batch->gram, last ? NULL : batch->xty);
        if (status != STATGPU_OK)
            return status;
        for (size_t j = 0; j < m; ++j) {
            double value = sg_criterion_value(search->criterion, batch->kth[j], batch->objective[j]);
            /* LTS: the elemental fit itself is only a start; its C-steps
             * never do worse on the working rows. */
            if ((round > 0 || median) && value < batch->best_value[j]) {
                batch->best_value[j] = value;
                memcpy(batch->best_coef + p * j, batch->coef + p * j, p * sizeof(double));
            }
            if (!last && !sg_solve_normal_equations(batch->gram + p * p * j, batch->xty + p * j, p,
                                                    SG_LTS_CHOLESKY_TOLERANCE, SG_LTS_MAX_COEFFICIENT, batch->work,
                                                    batch->next + p * j))
                memcpy(batch->next + p * j, batch->coef + p * j, p * sizeof(double));
        }
        if (!last)
            memcpy(batch->coef, batch->next, m * p * sizeof(double));
    }
    for (size_t j = 0; j < m; ++j)
        if (!isnan(batch->best_value[j]))
            sg_candidates_offer(list, batch->best_coef + p * j, batch->best_value[j], origins[j], 2);
    return STATGPU_OK;
}

static bool sg_search_cancelled(const sg_lts_search *search, double fraction)
{
    return sg_progress_cancelled(search->context, search->progress_base + search->progress_span * fraction);
}

/* The starts: every elemental subset (exhaustive) or the random ones
 * numbered first .. last - 1, two C-steps each on the stage, the best kept
 * in list. */
static statgpu_status sg_lts_starts(sg_lts_search *search, sg_lts_stage *stage, sg_lts_candidates *list,
                                    size_t first, size_t last)
{
    size_t p = search->p;
    const bool on_gpu = stage->evaluator != NULL && stage->evaluator->session != NULL;
    const size_t batch_size = on_gpu ? SG_LTS_CUDA_START_BATCH
                                     : sg_lts_start_batch(p, stage->evaluator != NULL ? search->n : stage->problem.n);
    sg_lts_batch batch;
    size_t *origins = malloc(batch_size * sizeof *origins);
    size_t *subset = malloc(p * sizeof *subset);
    double *matrix = malloc(p * (p + 1) * sizeof *matrix);
    statgpu_status status = STATGPU_OK;
    if (!sg_batch_init(&batch, batch_size, p) || !origins || !subset || !matrix) {
        status = STATGPU_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    size_t total = last;
    bool more = first < last;
    size_t s = first;
    if (search->exhaustive)
        for (size_t r = 0; r < p; ++r)
            subset[r] = r;
    while (more) {
        size_t m = 0;
        while (m < batch_size && more) {
            bool fitted;
            if (search->exhaustive) {
                fitted = sg_elemental_fit(search, subset, matrix, batch.coef + p * m);
                more = sg_next_combination(subset, p, search->n);
            } else {
                fitted = sg_random_start(search, s, subset, matrix, batch.coef + p * m);
                more = s + 1 < total;
            }
            if (fitted)
                origins[m++] = s;
            ++s;
        }
        if (m > 0) {
            search->starts_evaluated += m;
            status = sg_two_csteps(search, stage, &batch, m, origins, list);
            if (status != STATGPU_OK)
                goto done;
        }
        if (sg_search_cancelled(search, search->exhaustive ? 0.5 : (double)(s - first) / (double)(total - first))) {
            status = STATGPU_ERROR_CANCELLED;
            goto done;
        }
    }
done:
    sg_batch_free(&batch);
    free(origins);
    free(subset);
    free(matrix);
    return status;
}

/* C-steps on the stage for every candidate until its criterion stops
 * falling (for LTS: its h-subset no longer changes) or after max_steps; the
 * candidates' values are then their values on this stage. A fit that does
 * not improve on the one it came from is never kept, so no candidate's
 * value ever rises. */
static statgpu_status sg_lts_converge(sg_lts_search *search, sg_lts_stage *stage, sg_lts_candidates *list)
{
    size_t p = search->p, k = list->count;
    if (k == 0)
        return STATGPU_OK;
    sg_lts_batch batch;
    size_t *active = malloc(k * sizeof *active);
    statgpu_status status = STATGPU_OK;
    if (!sg_batch_init(&batch, k, p) || active == NULL) {
        status = STATGPU_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    /* batch.next + p*i: candidate i's proposed next fit. */
    size_t active_count = k;
    for (size_t i = 0; i < k; ++i) {
        active[i] = i;
        memcpy(batch.next + p * i, list->coef + p * i, p * sizeof(double));
    }
    for (size_t step = 0; active_count > 0; ++step) {
        bool last = step >= search->max_steps;
        for (size_t a = 0; a < active_count; ++a)
            memcpy(batch.coef + p * a, batch.next + p * active[a], p * sizeof(double));
        status = sg_lts_stage_evaluate(stage, batch.coef, active_count, batch.kth, batch.objective,
                                       last ? NULL : batch.gram, last ? NULL : batch.xty);
        if (status != STATGPU_OK)
            goto done;
        size_t still = 0;
        for (size_t a = 0; a < active_count; ++a) {
            size_t i = active[a];
            double value = sg_criterion_value(search->criterion, batch.kth[a], batch.objective[a]);
            if (step > 0) {
                if (!(value < list->value[i]))
                    continue;  /* converged: the previous fit stays */
                memcpy(list->coef + p * i, batch.coef + p * a, p * sizeof(double));
                ++list->steps[i];
            }
            list->value[i] = value;
            if (last || !sg_solve_normal_equations(batch.gram + p * p * a, batch.xty + p * a, p,
                                                   SG_LTS_CHOLESKY_TOLERANCE, SG_LTS_MAX_COEFFICIENT, batch.work,
                                                   batch.next + p * i))
                continue;
            active[still++] = i;
        }
        active_count = still;
        if (sg_search_cancelled(search, (double)(step + 1) / ((double)search->max_steps + 1.0))) {
            status = STATGPU_ERROR_CANCELLED;
            goto done;
        }
    }
done:
    sg_batch_free(&batch);
    free(active);
    return status;
}

/* Orders the list by value, then origin, after a stage changed the values. */
static void sg_candidates_sort(sg_lts_candidates *list, double *swap_coef)
{
    size_t p = list->p;
    for (size_t i = 1; i < list->count; ++i) {
        size_t j = i;
        while (j > 0 && (list->value[j] < list->value[j - 1]
                         || (list->value[j] == list->value[j - 1] && list->origin[j] < list->origin[j - 1]))) {
            memcpy(swap_coef, list->coef + p * j, p * sizeof(double));
            memcpy(list->coef + p * j, list->coef + p * (j - 1), p * sizeof(double));
            memcpy(list->coef + p * (j - 1), swap_coef, p * sizeof(double));
            double value = list->value[j];
            list->value[j] = list->value[j - 1];
            list->value[j - 1] = value;
            size_t origin = list->origin[j];
            list->origin[j] = list->origin[j - 1];
            list->origin[j - 1] = origin;
            size_t steps = list->steps[j];
            list->steps[j] = list->steps[j - 1];
            list->steps[j - 1] = steps;
            --j;
        }
    }
}

/* ============================================================ the interface */

void statgpu_lts_params_init(statgpu_lts_params *params)
{
    if (params == NULL)
        return;
    memset(params, 0, sizeof *params);
    params->struct_bytes = sizeof *params;
    params->alpha        = 0.5;
    params->intercept    = 1;
    params->criterion    = STATGPU_LTS_SQUARES;
    params->start_count  = 500;
    params->best_count   = 10;
    params->max_steps    = 100;
    params->seed         = 0;
}

void statgpu_lts_result_destroy(statgpu_lts_result *result)
{
    if (result == NULL)
        return;
    free(result->raw_coefficients);
    free(result->coefficients);
    free(result->raw_weights);
    free(result->weights);
    free(result->residuals);
    free(result->raw_residuals);
    free(result->best_subset);
    free(result);
}

static statgpu_lts_result *sg_lts_result_create(size_t n_obs, size_t p, size_t h)
{
    statgpu_lts_result *result = calloc(1, sizeof *result);
    if (result == NULL)
        return NULL;
    result->raw_coefficients = calloc(p, sizeof(double));
    result->coefficients = calloc(p, sizeof(double));
    result->raw_weights = calloc(n_obs, sizeof(int32_t));
    result->weights = calloc(n_obs, sizeof(int32_t));
    result->residuals = calloc(n_obs, sizeof(double));
    result->raw_residuals = calloc(n_obs, sizeof(double));
    result->best_subset = calloc(h, sizeof(size_t));
    if (!result->raw_coefficients || !result->coefficients || !result->raw_weights || !result->weights
        || !result->residuals || !result->raw_residuals || !result->best_subset) {
        statgpu_lts_result_destroy(result);
        return NULL;
    }
    return result;
}

static statgpu_status sg_check_lts_arguments(statgpu_context *context, const double *y, const double *x,
                                             size_t n_obs, size_t n_vars, size_t ld,
                                             const statgpu_lts_params *params)
{
    if (y == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "y is NULL");
    if (x == NULL && n_vars > 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "x is NULL");
    if (n_obs == 0)
        return sg_fail(context, STATGPU_ERROR_EMPTY_INPUT, "the data hold no observations");
    if (n_vars > 0 && ld < n_obs)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "the leading dimension %zu is less than the %zu observations", ld, n_obs);
    if (!(params->intercept == 0 || params->intercept == 1))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "intercept is %d; it must be 0 or 1",
                       params->intercept);
    size_t p = n_vars + (size_t)params->intercept;
    if (p == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "no coefficients to fit: no predictors and no intercept");
    if (p > 1000 || n_obs > SIZE_MAX / sizeof(double) / (p + 1) || (n_vars > 0 && n_vars > SIZE_MAX / sizeof(double) / ld))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the data are too large (%zu x %zu)", n_obs, n_vars);
    if (n_obs <= 2 * p)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "%zu observations for %zu coefficients: LTS needs more than twice as many observations "
                       "as coefficients (more than %zu)", n_obs, p, 2 * p);
    if (!(params->alpha >= 0.5 && params->alpha <= 1.0))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "alpha = %.17g lies outside [0.5, 1]", params->alpha);
    if (params->criterion != STATGPU_LTS_SQUARES && params->criterion != STATGPU_LTS_MEDIAN)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "unknown criterion %d", (int)params->criterion);
    if (params->start_count == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "start_count is 0: at least one start is needed");
    if (params->start_count > STATGPU_LTS_MAX_START_COUNT)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "start_count = %zu is more than the %u starts a call may ask for", params->start_count,
                       STATGPU_LTS_MAX_START_COUNT);
    if (params->best_count == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "best_count is 0: at least one start must be iterated");
    if (params->max_steps == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "max_steps is 0");
    return STATGPU_OK;
}

/* NaN first (its own status), then infinities, in row then variable order
 * (the response counts as variable 0). */
static statgpu_status sg_check_finite(statgpu_context *context, const double *y, const double *x, size_t n,
                                      size_t n_vars, size_t ld)
{
    if (sg_columns_finite(y, n, 1, n, context->cpu_thread_count)
        && sg_columns_finite(x, n, n_vars, ld, context->cpu_thread_count))
        return STATGPU_OK;
    for (int pass = 0; pass < 2; ++pass)
        for (size_t v = 0; v <= n_vars; ++v) {
            const double *column = v == 0 ? y : x + ld * (v - 1);
            for (size_t i = 0; i < n; ++i) {
                double value = column[i];
                bool bad = pass == 0 ? isnan(value) : isinf(value);
                if (!bad)
                    continue;
                if (pass == 0)
                    return sg_fail(context, STATGPU_ERROR_NAN_IN_DATA,
                                   v == 0 ? "y contains NaN (observation %zu)"
                                          : "x contains NaN (observation %zu, predictor %zu)", i + 1, v);
                return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                               v == 0 ? "y contains an infinity (observation %zu); LTS needs finite numbers"
                                      : "x contains an infinity (observation %zu, predictor %zu); LTS needs "
                                        "finite numbers", i + 1, v);
            }
        }
    return STATGPU_OK;
}

/* How many of the n p-subsets there are, saturating at SIZE_MAX. */
static size_t sg_choose(size_t n, size_t p)
{
    double count = 1.0;
    for (size_t i = 0; i < p; ++i)
        count = count * (double)(n - i) / (double)(i + 1);
    return count >= 1e18 ? SIZE_MAX : (size_t)llround(count);
}

/* ltsReg lists every elemental subset when n <= replow(p): 500, 50, 22,
 * 17, 15, 14 for p = 1..6 (rfltsreg.f); so do we, and also whenever all of
 * them fit in start_count. */
static bool sg_lts_is_exhaustive(size_t n, size_t p, size_t start_count)
{
    static const size_t replow[7] = { 0, 500, 50, 22, 17, 15, 14 };
    if (p <= 6 && n <= replow[p])
        return true;
    return sg_choose(n, p) <= start_count;
}

/* Coefficients in the original units from standardised ones. */
static void sg_destandardise(const double *standard, size_t p, int intercept, const double *x_location,
                             const double *x_scale, double y_location, double y_scale, double *coef)
{
    size_t first = (size_t)intercept;
    double constant = intercept ? y_location + y_scale * standard[0] : 0.0;
    for (size_t v = first; v < p; ++v) {
        coef[v] = y_scale * standard[v] / x_scale[v - first];
        if (intercept)
            constant -= coef[v] * x_location[v - first];
    }
    if (intercept)
        coef[0] = constant;
}

typedef struct sg_lts_data {
    double *z, *zy;                 /* standardised design and response */
    double *x_location, *x_scale;   /* per predictor */
    double  y_location, y_scale;
} sg_lts_data;

static void sg_lts_data_free(sg_lts_data *data)
{
    free(data->z);
    free(data->zy);
    free(data->x_location);
    free(data->x_scale);
}

/* Builds the standardised design and checks its columns: constant
 * predictors beside an intercept, magnitudes (collinearity: sg_lts_rank_run). */
static statgpu_status sg_lts_prepare(statgpu_context *context, const double *y, const double *x, size_t n,
                                     size_t n_vars, size_t ld, int intercept, sg_lts_data *data)
{
    size_t p = n_vars + (size_t)intercept;
    int threads = context->cpu_thread_count;
    data->z = malloc(n * p * sizeof(double));
    data->zy = malloc(n * sizeof(double));
    data->x_location = malloc((n_vars > 0 ? n_vars : 1) * sizeof(double));
    data->x_scale = malloc((n_vars > 0 ? n_vars : 1) * sizeof(double));
    sg_lts_column *columns = malloc((n_vars + 1) * sizeof *columns);
    statgpu_status status = STATGPU_OK;
    if (!data->z || !data->zy || !data->x_location || !data->x_scale || !columns) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY,
                         "could not allocate LTS work space for %zu observations x %zu coefficients", n, p);
        goto done;
    }
    sg_lts_standardise(y, x, n, n_vars, ld, intercept, threads, data->z, data->zy, columns);
    /* The first column at fault, in column order (y last). */
    for (size_t v = 0; v <= n_vars; ++v) {
        const sg_lts_column *column = &columns[v];
        if (column->status != STATGPU_OK)
            goto out_of_memory;
        switch (column->fault) {
        case SG_LTS_COLUMN_OK:
            break;
        case SG_LTS_COLUMN_CONSTANT:
            status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                             "predictor %zu is constant (%g): beside the intercept it is collinear; remove it",
                             v + 1, column->value);
            goto done;
        case SG_LTS_COLUMN_ZEROS:
            status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "predictor %zu is all zeros", v + 1);
            goto done;
        case SG_LTS_COLUMN_TOO_FAR:
            if (v < n_vars)
                status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                                 "predictor %zu: observation %zu (%g) is too far from the others (scale %g); "
                                 "rescale the data", v + 1, column->row + 1, column->value, column->scale);
            else
                status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                                 "y: observation %zu (%g) is too far from the others (scale %g); rescale the data",
                                 column->row + 1, column->value, column->scale);
            goto done;
        }
        if (v < n_vars) {
            data->x_location[v] = column->location;
            data->x_scale[v] = column->scale;
        } else {
            data->y_location = column->location;
            data->y_scale = column->scale;
        }
    }
    goto done;
out_of_memory:
    status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
done:
    free(columns);
    return status;
}

/* The collinearity check: the rank of the standardised design by a QR of
 * all its rows. On the GPU path it runs on a thread of its own while the
 * GPU searches (the host only waits there), else before the search. */
typedef struct sg_lts_rank_check {
    const sg_lts_data *data;
    size_t             n, p;
    int                threads;
    size_t             rank;  /* (size_t)-1: out of memory */
    bool              *kept;  /* p */
} sg_lts_rank_check;

static void *sg_lts_rank_run(void *argument)
{
    sg_lts_rank_check *check = argument;
    size_t p = check->p;
    double *coef = malloc(p * sizeof *coef);
    check->rank = coef == NULL ? (size_t)-1
                               : sg_least_squares_rows(check->data->z, check->data->zy, check->n, p, NULL, check->n,
                                                       SG_LTS_QR_TOLERANCE, check->threads, coef, check->kept, NULL);
    free(coef);
    return NULL;
}

/* The check's outcome as the call's status: the first predictor that is a
 * combination of those before it. */
static statgpu_status sg_lts_rank_status(statgpu_context *context, const sg_lts_rank_check *check, int intercept)
{
    if (check->rank == (size_t)-1)
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
    if (check->rank >= check->p)
        return STATGPU_OK;
    size_t dependent = 0;
    while (dependent < check->p && check->kept[dependent])
        ++dependent;
    size_t predictor = dependent + 1 - (size_t)intercept;
    return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                   "the predictors are collinear: predictor %zu is a linear combination of %s; remove it", predictor,
                   intercept ? (predictor == 1 ? "the intercept" : "the intercept and the predictors before it")
                             : "the predictors before it");
}

/* Gathers the listed rows of the full problem into a compact one. */
static bool sg_lts_subsample(const sg_lts_search *search, const size_t *rows, size_t count, int threads,
                             double **x_out, double **y_out, sg_lts_stage *stage)
{
    size_t p = search->p, n = search->n;
    double *x = malloc(count * p * sizeof *x), *y = malloc(count * sizeof *y);
    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        return false;
    }
    for (size_t v = 0; v < p; ++v)
        for (size_t r = 0; r < count; ++r)
            x[r + count * v] = search->z[rows[r] + n * v];
    for (size_t r = 0; r < count; ++r)
        y[r] = search->zy[rows[r]];
    *x_out = x;
    *y_out = y;
    stage->evaluator = NULL;
    stage->problem.x = x;
    stage->problem.y = y;
    stage->problem.n = count;
    stage->problem.p = p;
    stage->problem.thread_count = threads;
    size_t h = (size_t)floor((double)count * (double)search->h / (double)n);
    stage->h = h < p + 1 ? p + 1 : (h > count ? count : h);
    return true;
}

static int sg_compare_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* The whole search: starts, then convergence; writes the winner's
 * standardised coefficients and its C-step count. */
static statgpu_status sg_lts_run_search(sg_lts_search *search, sg_lts_evaluator *evaluator, int threads,
                                        double *winner, size_t *winner_steps)
{
    size_t p = search->p, n = search->n;
    sg_lts_candidates list = { 0 };
    sg_lts_stage full = { evaluator, { NULL, NULL, 0, 0, 0 }, search->h };
    sg_lts_stage start_stage = full, middle_stage = full;
    double *start_x = NULL, *start_y = NULL, *middle_x = NULL, *middle_y = NULL;
    sg_lts_candidates group_list = { 0 };
    size_t *order = NULL;
    double *swap = malloc(p * sizeof *swap);
    statgpu_status status = STATGPU_OK;
    bool subsample = evaluator->session == NULL && !search->exhaustive && n >= SG_LTS_SUBSAMPLE_MIN_OBS;
    /* No more candidates than starts: a larger best_count is the same search. */
    size_t best_count = search->best_count < search->start_count ? search->best_count : search->start_count;
    size_t carried = best_count;
    if (subsample)
        carried = carried <= SIZE_MAX / SG_LTS_START_CARRY ? carried * SG_LTS_START_CARRY : SIZE_MAX;
    if (swap == NULL || !sg_candidates_init(&list, carried, p)) {
        status = STATGPU_ERROR_OUT_OF_MEMORY;
        goto done;
    }
    sg_rng rng = { 0 };  /* draws the working subsamples */
    if (subsample) {
        /* Two nested random samples of the rows: a partial Fisher-Yates
         * shuffle; the first SG_LTS_START_ROWS are the smaller one. */
        size_t middle = SG_LTS_MIDDLE_ROWS < n ? SG_LTS_MIDDLE_ROWS : n;
        size_t starts = SG_LTS_START_ROWS < middle ? SG_LTS_START_ROWS : middle;
        order = malloc(n * sizeof *order);
        if (order == NULL) {
            status = STATGPU_ERROR_OUT_OF_MEMORY;
            goto done;
        }
        for (size_t i = 0; i < n; ++i)
            order[i] = i;
        rng.state = sg_lts_stream(search->context_seed, search->call_seed, 0);
        for (size_t i = 0; i < middle; ++i) {
            size_t j = i + sg_rng_below(&rng, n - i);
            size_t t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        qsort(order, starts, sizeof *order, sg_compare_size);
        if (!sg_lts_subsample(search, order, starts, threads, &start_x, &start_y, &start_stage)) {
            status = STATGPU_ERROR_OUT_OF_MEMORY;
            goto done;
        }
        qsort(order, middle, sizeof *order, sg_compare_size);
        if (!sg_lts_subsample(search, order, middle, threads, &middle_x, &middle_y, &middle_stage)) {
            status = STATGPU_ERROR_OUT_OF_MEMORY;
            goto done;
        }
    }

    search->progress_base = 0.0;
    search->progress_span = subsample ? 0.5 : 0.6;
    if (!subsample) {
        status = sg_lts_starts(search, &start_stage, &list, 0, search->start_count);
        if (status != STATGPU_OK)
            goto done;
    } else {
        if (!sg_candidates_init(&group_list, best_count, p)) {
            status = STATGPU_ERROR_OUT_OF_MEMORY;
            goto done;
        }
        size_t starts = start_stage.problem.n;
        for (size_t g = 0; g < SG_LTS_START_GROUPS; ++g) {
            if (g > 0) {
                /* A fresh sample of the rows for this group (order is still
                 * a permutation of them). */
                for (size_t i = 0; i < starts; ++i) {
                    size_t j = i + sg_rng_below(&rng, n - i);
                    size_t t = order[i];
                    order[i] = order[j];
                    order[j] = t;
                }
                qsort(order, starts, sizeof *order, sg_compare_size);
                free(start_x);
                free(start_y);
                start_x = start_y = NULL;
                if (!sg_lts_subsample(search, order, starts, threads, &start_x, &start_y, &start_stage)) {
                    status = STATGPU_ERROR_OUT_OF_MEMORY;
                    goto done;
                }
            }
            group_list.count = 0;
            size_t first = search->start_count / SG_LTS_START_GROUPS * g;
            size_t last = g + 1 == SG_LTS_START_GROUPS ? search->start_count
                                                      : search->start_count / SG_LTS_START_GROUPS * (g + 1);
            search->progress_span = 0.5 / (double)SG_LTS_START_GROUPS;
            search->progress_base = search->progress_span * (double)g;
            status = sg_lts_starts(search, &start_stage, &group_list, first, last);
            if (status != STATGPU_OK)
                goto done;
            for (size_t c = 0; c < group_list.count; ++c)
                sg_candidates_offer(&list, group_list.coef + p * c, group_list.value[c], group_list.origin[c],
                                    group_list.steps[c]);
        }
    }
    if (list.count == 0) {
        /* Every elemental subset was singular (many repeated rows): start
         * from the least-squares fit of all rows instead. */
        bool *kept = malloc(p * sizeof *kept);
        double *coef = malloc(p * sizeof *coef);
        size_t rank = kept && coef ? sg_least_squares_rows(search->z, search->zy, n, p, NULL, n, SG_LTS_QR_TOLERANCE,
                                                           threads, coef, kept, NULL)
                                   : (size_t)-1;
        if (rank != (size_t)-1)
            sg_candidates_offer(&list, coef, INFINITY, 0, 0);
        free(kept);
        free(coef);
        if (rank == (size_t)-1) {
            status = STATGPU_ERROR_OUT_OF_MEMORY;
            goto done;
        }
    }
    if (subsample) {
        search->progress_base = 0.5;
        search->progress_span = 0.25;
        status = sg_lts_converge(search, &middle_stage, &list);
        if (status != STATGPU_OK)
            goto done;
        sg_candidates_sort(&list, swap);
        if (list.count > SG_LTS_FULL_CANDIDATES)
            list.count = SG_LTS_FULL_CANDIDATES;
        search->progress_base = 0.75;
        search->progress_span = 0.25;
    } else {
        search->progress_base = 0.6;
        search->progress_span = 0.4;
    }
    status = sg_lts_converge(search, &full, &list);
    if (status != STATGPU_OK)
        goto done;
    sg_candidates_sort(&list, swap);
    memcpy(winner, list.coef, p * sizeof *winner);
    *winner_steps = list.steps[0];
done:
    sg_candidates_free(&list);
    sg_candidates_free(&group_list);
    free(start_x);
    free(start_y);
    free(middle_x);
    free(middle_y);
    free(order);
    free(swap);
    return status;
}

/* The backend of the C-steps on the full data: CUDA where asked for (or,
 * under AUTO, for large data) and it can start, else the CPU. */
static void sg_lts_choose_backend(statgpu_context *context, const sg_lts_problem *problem,
                                  sg_lts_evaluator *evaluator)
{
    memset(evaluator, 0, sizeof *evaluator);
    evaluator->problem = problem;
    if (!sg_dispatch_wants_cuda_above(context, (double)problem->n, (double)SG_LTS_AUTO_CUDA_MIN_OBS, false))
        return;
    char message[256] = "";
    statgpu_cuda_status status = STATGPU_CUDA_NO_DEVICE;
    const statgpu_cuda_module_i *module = NULL;
    if (sg_dispatch_cuda_ready(context, message, sizeof message)) {
        module = sg_cuda_module(NULL);
        if (module == NULL || module->lts == NULL)
            snprintf(message, sizeof message, "the CUDA module has no LTS kernels");
        else {
            statgpu_cuda_timing timing = { 0.0, 0.0 };
            status = module->lts->begin(context->cuda_state, problem->x, problem->n, problem->p, problem->n,
                                       problem->y, &evaluator->session, &timing, message, sizeof message);
            if (status == STATGPU_CUDA_OK) {
                evaluator->module = module;
                evaluator->transfer_seconds = timing.transfer_seconds;
                evaluator->compute_seconds = timing.compute_seconds;
                return;
            }
            evaluator->session = NULL;
        }
    }
    sg_dispatch_note_cpu(context, status, message, "LTS");
}

/* The scales, weights and reweighted fit, as ltsReg computes them from the
 * raw fit. raw_residuals must hold the raw fit's residuals. */
static statgpu_status sg_lts_reweight(statgpu_context *context, const double *y, const double *x, size_t n_vars,
                                      size_t ld, const sg_lts_data *data, statgpu_lts_result *result)
{
    size_t n = result->n_obs, p = result->p, h = result->h;
    int intercept = result->intercept, threads = context->cpu_thread_count;
    double exact_tolerance = SG_LTS_EXACT_FIT_TOLERANCE * data->y_scale;
    double s0;
    if (result->alpha == 1.0) {
        s0 = sqrt(result->objective / (double)(n - p));
        result->raw_consistency_factor = 1.0;
        result->raw_correction_factor = 1.0;
    } else if (result->criterion == STATGPU_LTS_MEDIAN) {
        /* The h-th smallest squared residual's root, made consistent at the
         * normal and corrected as Rousseeuw and Leroy's LMS scale. */
        result->raw_consistency_factor = 1.0 / sg_qnorm(((double)h + (double)n) / (2.0 * (double)n));
        result->raw_correction_factor = 1.0 + 5.0 / (double)(n - p);
        s0 = sqrt(result->objective) * result->raw_consistency_factor * result->raw_correction_factor;
    } else {
        result->raw_consistency_factor = sg_lts_consistency((double)h, (double)n);
        result->raw_correction_factor = sg_lts_small_sample(p, intercept, n, result->alpha, false);
        s0 = sqrt(result->objective / (double)h) * result->raw_consistency_factor * result->raw_correction_factor;
    }
    result->consistency_factor = 1.0;
    result->correction_factor = 1.0;

    if (!(s0 >= exact_tolerance)) {
        /* An exact fit: at least h rows on one hyperplane. */
        result->exact_fit = 1;
        result->raw_scale = result->scale = 0.0;
        memcpy(result->coefficients, result->raw_coefficients, p * sizeof(double));
        memcpy(result->residuals, result->raw_residuals, n * sizeof(double));
        size_t fitting = sg_lts_flag_rows(result->raw_residuals, n, 0.0, exact_tolerance, threads,
                                          result->raw_weights, NULL);
        if (fitting == (size_t)-1)
            return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
        memcpy(result->weights, result->raw_weights, n * sizeof(int32_t));
        result->outlier_count = n - fitting;
        return STATGPU_OK;
    }
    result->raw_scale = s0;
    size_t *rows = malloc(n * sizeof *rows);
    double *coef = malloc(p * sizeof *coef);
    bool *kept = malloc(p * sizeof *kept);
    if (!rows || !coef || !kept) {
        free(rows);
        free(coef);
        free(kept);
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
    }
    size_t weight_sum = sg_lts_flag_rows(result->raw_residuals, n, s0, SG_LTS_WEIGHT_CUTOFF, threads,
                                         result->raw_weights, rows);
    size_t rank = weight_sum == (size_t)-1 ? weight_sum
                                           : sg_least_squares_rows(data->z, data->zy, n, p, rows, weight_sum,
                                                                   SG_LTS_QR_TOLERANCE, threads, coef, kept, NULL);
    free(rows);
    free(kept);
    if (rank == (size_t)-1) {
        free(coef);
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
    }
    sg_destandardise(coef, p, intercept, data->x_location, data->x_scale, data->y_location, data->y_scale,
                     result->coefficients);
    free(coef);
    sg_lts_residuals(y, x, n, n_vars, ld, intercept, result->coefficients, threads, result->residuals, NULL);
    double weighted = sg_lts_weighted_squares(result->residuals, result->raw_weights, n, threads);
    double scale = weight_sum > 1 ? sqrt(weighted / (double)(weight_sum - 1)) : s0;
    if (weight_sum < n && weight_sum > 1) {
        result->consistency_factor = sg_lts_consistency((double)weight_sum, (double)n);
        if (result->alpha < 1.0 && result->criterion == STATGPU_LTS_SQUARES)
            result->correction_factor = sg_lts_small_sample(p, intercept, n, result->alpha, true);
        scale *= result->consistency_factor * result->correction_factor;
    }
    /* Where the weight-1 rows fit exactly the flags keep to the exact-fit
     * tolerance (the scale 0 asks sg_lts_flag_rows for that). */
    if (!(scale > 0.0) || !isfinite(scale))
        scale = 0.0;
    size_t fitting = sg_lts_flag_rows(result->residuals, n, scale,
                                      scale > 0.0 ? SG_LTS_WEIGHT_CUTOFF : exact_tolerance, threads,
                                      result->weights, NULL);
    if (fitting == (size_t)-1)
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
    result->outlier_count = n - fitting;
    result->scale = scale;
    return STATGPU_OK;
}

static statgpu_status sg_search_failed(statgpu_context *context, statgpu_status status)
{
    switch (status) {
    case STATGPU_ERROR_CANCELLED:
        return sg_fail(context, status, "cancelled");
    case STATGPU_ERROR_OUT_OF_MEMORY:
        return sg_fail(context, status, "could not allocate LTS work space");
    default:
        return sg_fail(context, STATGPU_ERROR_INTERNAL, "the LTS search failed: %s", statgpu_status_string(status));
    }
}

statgpu_status statgpu_lts(statgpu_context *context, const double *y, const double *x, size_t n_obs,
                           size_t n_vars, size_t ld, const statgpu_lts_params *params,
                           statgpu_lts_result **out_result)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_result is NULL");
    *out_result = NULL;

    statgpu_lts_params chosen;
    statgpu_lts_params_init(&chosen);
    if (params != NULL) {
        if (params->struct_bytes < SG_LTS_PARAMS_MIN_BYTES || params->struct_bytes > sizeof chosen)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "params->struct_bytes is %zu; call statgpu_lts_params_init first", params->struct_bytes);
        memcpy(&chosen, params, params->struct_bytes);
        chosen.struct_bytes = sizeof chosen;
    }
    statgpu_status status = sg_check_lts_arguments(context, y, x, n_obs, n_vars, ld, &chosen);
    if (status != STATGPU_OK)
        return status;
    status = sg_check_finite(context, y, x, n_obs, n_vars, ld);
    if (status != STATGPU_OK)
        return status;
    if (sg_progress_cancelled(context, 0.0))
        return sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");

    int intercept = chosen.intercept;
    size_t n = n_obs, p = n_vars + (size_t)intercept;
    int threads = context->cpu_thread_count;
    size_t h = chosen.alpha == 1.0 ? n : sg_lts_h(chosen.alpha, n, p);
    if (h > n)
        h = n;
    if (h == n && chosen.criterion == STATGPU_LTS_MEDIAN)
        /* LMS's h-th smallest squared residual is then the largest, and its
         * scale, made consistent by 1 / qnorm((h + n) / 2n), is 0. */
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "least median of squares needs alpha below 1 (h below the %zu rows): at h = n its scale is "
                       "not defined; lower alpha, or fit least squares (LTS at alpha 1)", n);

    sg_lts_data data = { 0 };
    statgpu_lts_result *result = NULL;
    double *standard = malloc(p * sizeof *standard);
    double *squared = malloc(n * sizeof *squared);
    bool *kept = malloc(p * sizeof *kept);
    double *y_scaled = NULL;  /* y in the units the fit runs in, when they are not y's own */
    double *x_scaled = NULL;  /* x likewise, column by column (ld n) */
    int *x_exponents = NULL;  /* each predictor's unit exponent (0: its own units) */
    sg_lts_evaluator evaluator;
    memset(&evaluator, 0, sizeof evaluator);
    sg_lts_rank_check rank_check = { 0 };
    pthread_t rank_thread;
    bool rank_started = false;
    sg_dispatch_begin(context);
    if (!standard || !squared || !kept) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
        goto done;
    }
    status = sg_lts_prepare(context, y, x, n, n_vars, ld, intercept, &data);
    if (status != STATGPU_OK)
        goto done;
    /* The search runs on standardised data, whatever y's unit; the raw fit,
     * the scales and the weights square y's residuals, so they run on y times
     * 2^unit_exponent when y is far from ordinary size (core/units.h), and on
     * each predictor far from ordinary size times its own 2^x_exponents[v],
     * so that a slope in the fit's units stays a double where y and x are
     * both tiny or both huge (y and x near 1e-310: y's 2^1030 alone would
     * make a slope of 1 about 2^1030). */
    x_exponents = calloc(n_vars > 0 ? n_vars : 1, sizeof *x_exponents);
    if (x_exponents == NULL) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
        goto done;
    }
    bool x_far = false;
    for (size_t v = 0; v < n_vars; ++v) {
        x_exponents[v] = sg_units_exponent(data.x_scale[v]);
        x_far = x_far || x_exponents[v] != 0;
    }
    if (x_far) {
        x_scaled = malloc(n * n_vars * sizeof *x_scaled);
        if (x_scaled == NULL) {
            status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
            goto done;
        }
        for (size_t v = 0; v < n_vars; ++v) {
            for (size_t i = 0; i < n; ++i)
                x_scaled[v * n + i] = ldexp(x[v * ld + i], x_exponents[v]);
            data.x_location[v] = ldexp(data.x_location[v], x_exponents[v]);
            data.x_scale[v] = ldexp(data.x_scale[v], x_exponents[v]);
        }
        x = x_scaled;
        ld = n;
    }
    int unit_exponent = sg_units_exponent(data.y_scale);
    if (unit_exponent != 0) {
        y_scaled = malloc(n * sizeof *y_scaled);
        if (y_scaled == NULL) {
            status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
            goto done;
        }
        for (size_t i = 0; i < n; ++i)
            y_scaled[i] = ldexp(y[i], unit_exponent);
        data.y_location = ldexp(data.y_location, unit_exponent);
        data.y_scale = ldexp(data.y_scale, unit_exponent);
        y = y_scaled;
    }
    result = sg_lts_result_create(n, p, h);
    if (result == NULL) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the LTS result");
        goto done;
    }
    result->n_obs = n;
    result->n_vars = n_vars;
    result->p = p;
    result->intercept = intercept;
    result->criterion = chosen.criterion;
    result->h = h;
    result->alpha = chosen.alpha;

    sg_lts_problem problem = { data.z, data.zy, n, p, threads };
    bool on_cuda = false;
    rank_check = (sg_lts_rank_check){ &data, n, p, threads, 0, kept };
    if (h == n) {
        /* alpha = 1 (or h = n): least squares on every row. */
        sg_lts_rank_run(&rank_check);
        status = sg_lts_rank_status(context, &rank_check, intercept);
        if (status != STATGPU_OK)
            goto done;
        for (size_t i = 0; i < n; ++i)
            result->best_subset[i] = i;
        if (context->params.backend == STATGPU_BACKEND_CUDA)
            snprintf(context->note, sizeof context->note, "alpha = 1 is least squares; it ran on the CPU");
    } else {
        /* The collinearity check runs beside the GPU's start and search;
         * on the CPU (or where no thread starts) before the search. */
        rank_started = threads > 1 && pthread_create(&rank_thread, NULL, sg_lts_rank_run, &rank_check) == 0;
        sg_lts_choose_backend(context, &problem, &evaluator);
        on_cuda = evaluator.session != NULL;
        if (!on_cuda || !rank_started) {
            if (rank_started)
                pthread_join(rank_thread, NULL);
            else
                sg_lts_rank_run(&rank_check);
            rank_started = false;
            status = sg_lts_rank_status(context, &rank_check, intercept);
            if (status != STATGPU_OK)
                goto done;
        }
        sg_lts_search search = { context, data.z, data.zy, n, p, h, chosen.criterion, chosen.start_count,
                                 chosen.best_count, chosen.max_steps, context->params.seed, chosen.seed,
                                 sg_lts_is_exhaustive(n, p, chosen.start_count), 0, 0.0, 1.0 };
        size_t steps = 0;
        status = sg_lts_run_search(&search, &evaluator, threads, standard, &steps);
        if (rank_started) {
            /* Collinear data fail as collinear, whatever the search did. */
            pthread_join(rank_thread, NULL);
            rank_started = false;
            statgpu_status rank_status = sg_lts_rank_status(context, &rank_check, intercept);
            if (rank_status != STATGPU_OK) {
                status = rank_status;
                goto done;
            }
        }
        if (status != STATGPU_OK) {
            status = sg_search_failed(context, status);
            goto done;
        }
        result->starts_evaluated = search.starts_evaluated;
        result->c_steps = steps;
        result->exhaustive = search.exhaustive;
        if (on_cuda && evaluator.session == NULL) {
            on_cuda = false;
            sg_dispatch_note_cpu(context, STATGPU_CUDA_ERROR, evaluator.failure, "LTS");
        }
        /* The h-subset of the winner, from its standardised residuals. */
        sg_lts_residuals(data.zy, data.z, n, p, n, 0, standard, threads, NULL, squared);
        double kth, sum;
        status = sg_lts_trimmed(squared, n, h, threads, &kth, &sum, result->best_subset);
        if (status != STATGPU_OK) {
            status = sg_fail(context, status, "could not allocate LTS work space");
            goto done;
        }
    }

    /* The raw fit: least squares on the h-subset (LTS, as ltsReg refits
     * it), or the winner itself (LMS). */
    if (chosen.criterion == STATGPU_LTS_SQUARES || h == n) {
        size_t rank = sg_least_squares_rows(data.z, data.zy, n, p, result->best_subset, h, SG_LTS_QR_TOLERANCE,
                                            threads, standard, kept, NULL);
        if (rank == (size_t)-1) {
            status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate LTS work space");
            goto done;
        }
    }
    sg_destandardise(standard, p, intercept, data.x_location, data.x_scale, data.y_location, data.y_scale,
                     result->raw_coefficients);
    sg_lts_residuals(y, x, n, n_vars, ld, intercept, result->raw_coefficients, threads, result->raw_residuals,
                     squared);
    {
        double kth, sum;
        status = sg_lts_trimmed(squared, n, h, threads, &kth, &sum,
                                chosen.criterion == STATGPU_LTS_MEDIAN && h < n ? result->best_subset : NULL);
        if (status != STATGPU_OK) {
            status = sg_fail(context, status, "could not allocate LTS work space");
            goto done;
        }
        result->objective = chosen.criterion == STATGPU_LTS_MEDIAN && h < n ? kth : sum;
    }
    status = sg_lts_reweight(context, y, x, n_vars, ld, &data, result);
    if (status != STATGPU_OK)
        goto done;
    /* Back to the data's units: a slope is in y's units per its predictor's
     * (one power of two, so that it does not pass through infinity on the
     * way), the intercept, residuals and scales in y's, the objective in
     * their square. */
    for (size_t v = 0; v < p; ++v) {
        const bool slope = v >= (size_t)intercept;
        const int exponent = (slope ? x_exponents[v - (size_t)intercept] : 0) - unit_exponent;
        const double raw = result->raw_coefficients[v], reweighted = result->coefficients[v];
        /* (+ 0.0: a coefficient that underflows is 0, not -0.) */
        result->raw_coefficients[v] = ldexp(raw, exponent) + 0.0;
        result->coefficients[v] = ldexp(reweighted, exponent) + 0.0;
        /* A coefficient that underflows to 0 is refused where it mattered:
         * where its term (times its predictor's size) reached 2^-40 of y's
         * size. Below that it is rounding noise of the fit (the intercept of
         * a line through 0 fitted to subnormal y), and 0 is its value. */
        const double term_size = slope ? fabs(data.x_location[v - (size_t)intercept])
                                             + data.x_scale[v - (size_t)intercept]
                                       : 1.0;
        const double y_size = fabs(data.y_location) + data.y_scale;
        const bool raw_mattered = fabs(raw) * term_size > 0x1p-40 * y_size;
        const bool reweighted_mattered = fabs(reweighted) * term_size > 0x1p-40 * y_size;
        if ((raw_mattered && result->raw_coefficients[v] == 0.0)
            || (reweighted_mattered && result->coefficients[v] == 0.0)) {
            status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                             "coefficient %zu is smaller than the smallest double in the data's units (y per "
                             "unit of its predictor); rescale y or the predictor by a power of ten", v + 1);
            goto done;
        }
    }
    if (unit_exponent != 0) {
        sg_units_scale(result->raw_residuals, n, -unit_exponent);
        sg_units_scale(result->residuals, n, -unit_exponent);
        result->raw_scale = ldexp(result->raw_scale, -unit_exponent);
        result->scale = ldexp(result->scale, -unit_exponent);
        result->objective = ldexp(result->objective, -2 * unit_exponent);
        if (isinf(result->objective)) {
            status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                             "the objective, %s of squared residuals of y, is larger than the largest double "
                             "in y's units (the raw scale is %.3g); divide y by a power of ten",
                             chosen.criterion == STATGPU_LTS_MEDIAN ? "the h-th smallest" : "a sum",
                             result->raw_scale);
            goto done;
        }
    }

    /* Nothing NaN leaves: every output is checked once. */
    bool finite = isfinite(result->objective) && isfinite(result->raw_scale) && isfinite(result->scale);
    for (size_t v = 0; v < p; ++v)
        finite = finite && isfinite(result->raw_coefficients[v]) && isfinite(result->coefficients[v]);
    finite = finite && sg_columns_finite(result->residuals, n, 1, n, threads)
             && sg_columns_finite(result->raw_residuals, n, 1, n, threads);
    if (!finite) {
        status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                         "the fit overflowed: the data span too many orders of magnitude; rescale them");
        goto done;
    }

    sg_dispatch_ran(context, on_cuda ? STATGPU_BACKEND_CUDA : STATGPU_BACKEND_CPU, evaluator.transfer_seconds,
                    evaluator.compute_seconds);
    *out_result = result;
    result = NULL;
    status = sg_succeed(context);
done:
    if (rank_started)
        pthread_join(rank_thread, NULL);
    if (evaluator.session != NULL)
        evaluator.module->lts->end(evaluator.session);
    statgpu_lts_result_destroy(result);
    sg_lts_data_free(&data);
    free(standard);
    free(squared);
    free(kept);
    free(y_scaled);
    free(x_scaled);
    free(x_exponents);
    return status;
}

statgpu_status statgpu_lts_matrix(statgpu_context *context, const statgpu_vector *y, const statgpu_matrix *x,
                                  const statgpu_lts_params *params, statgpu_lts_result **out_result)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_result is NULL");
    *out_result = NULL;
    if (y != NULL && x != NULL && y->count != x->rows)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "y has %zu elements and x %zu rows", y->count,
                       x->rows);
    sg_host_doubles host_y, host_x = { 0 };
    statgpu_status status = sg_vector_host_doubles(context, y, "y", &host_y);
    if (status != STATGPU_OK)
        return status;
    if (x != NULL && x->cols == 0)  /* the intercept alone, as statgpu_lts takes it */
        status = statgpu_lts(context, host_y.data, NULL, x->rows, 0, x->rows, params, out_result);
    else if ((status = sg_matrix_host_doubles(context, x, "x", &host_x)) == STATGPU_OK)
        status = statgpu_lts(context, host_y.data, host_x.data, x->rows, x->cols, host_x.ld, params, out_result);
    free(host_y.owned);
    free(host_x.owned);
    return status;
}
