/*
 * test_concurrency.c: the engine called from many threads at once, as Calc
 * calls the add-in (statgpu.h: one context per thread). Every method and its
 * result tables run in eight threads together, each with a context of its
 * own, half on the CPU backend and half on AUTO, with progress callbacks
 * installed and one thread cancelling some of its own calls part way; every
 * result must be the same bits as the same call made alone beforehand
 * (statgpu.h: the same input on the same backend gives the same bits, at any
 * thread count). Also: the CUDA loader's once-initialisation reached by many
 * threads at the same moment must give every one the same answer, contexts
 * made and destroyed in threads that come and go, and each context's last
 * error read by the thread that made the call. Built with
 * STATGPU_SANITIZE=thread, ThreadSanitizer checks the same runs for races.
 *
 * cmocka's asserts jump back into the test that runs them, so the threads
 * only record their first failure; the test reports it once they are joined.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "statgpu.h"
#include "test_support.h"

#define THREAD_COUNT 8
#define ROUNDS 2
/* Threads per context: enough that the sizes below run on the engine's
 * parallel loops (core/pool.c), each calling thread on a pool of its own. */
#define CONTEXT_THREADS 2
#define CONTEXT_SEED 20240611u

/* ----- a thread's first failure ----- */

typedef struct failure {
    char message[512];
} failure;

static void fail_once(failure *record, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void fail_once(failure *record, const char *format, ...)
{
    if (record->message[0] != '\0')
        return;
    va_list args;
    va_start(args, format);
    vsnprintf(record->message, sizeof record->message, format, args);
    va_end(args);
}

static void assert_no_failure(const failure *records, size_t count)
{
    for (size_t t = 0; t < count; ++t)
        if (records[t].message[0] != '\0')
            fail_msg("thread %zu: %s", t, records[t].message);
}

/* ----- a result as bytes, to compare bit for bit ----- */

typedef struct digest {
    unsigned char *bytes;
    size_t         count, capacity;
    bool           out_of_memory;
} digest;

static void digest_add(digest *d, const void *data, size_t bytes)
{
    if (bytes == 0 || d->out_of_memory)
        return;
    if (d->count + bytes > d->capacity) {
        size_t capacity = d->capacity ? d->capacity : 4096;
        while (capacity < d->count + bytes)
            capacity *= 2;
        unsigned char *grown = realloc(d->bytes, capacity);
        if (grown == NULL) {
            d->out_of_memory = true;
            return;
        }
        d->bytes = grown;
        d->capacity = capacity;
    }
    memcpy(d->bytes + d->count, data, bytes);
    d->count += bytes;
}

static void digest_text(digest *d, const char *text)
{
    digest_add(d, text != NULL ? text : "(null)", strlen(text != NULL ? text : "(null)") + 1);
}

#define DIGEST_VALUE(d, value)                                 \
    do {                                                       \
        __typeof__(value) digest_value_ = (value);             \
        digest_add((d), &digest_value_, sizeof digest_value_); \
    } while (0)

static void digest_clear(digest *d)
{
    d->count = 0;
    d->out_of_memory = false;
}

static void digest_free(digest *d)
{
    free(d->bytes);
    memset(d, 0, sizeof *d);
}

/* Every table of a set: names, sizes, headers, labels, cells. skip_row_named
 * leaves out the summary row of that name (a count that depends on the
 * threads' timing). */
static void digest_tables(digest *d, const statgpu_table_set *set, const char *skip_row_named)
{
    size_t count = statgpu_table_set_count(set);
    DIGEST_VALUE(d, count);
    for (size_t index = 0; index < count; ++index) {
        const statgpu_table *table = statgpu_table_set_get(set, index);
        digest_text(d, table->name);
        digest_text(d, table->title);
        DIGEST_VALUE(d, table->row_count);
        DIGEST_VALUE(d, table->column_count);
        for (size_t c = 0; c < table->column_count; ++c)
            digest_text(d, table->column_headers[c]);
        digest_text(d, table->row_label_header);
        for (size_t r = 0; r < table->row_count; ++r) {
            if (skip_row_named != NULL && table->texts != NULL && table->column_count == 2
                && table->texts[r + table->row_count] != NULL
                && strcmp(table->texts[r + table->row_count], skip_row_named) == 0)
                continue;
            if (table->row_labels != NULL)
                digest_text(d, table->row_labels[r]);
            for (size_t c = 0; c < table->column_count; ++c) {
                size_t cell = r + table->row_count * c;
                digest_add(d, &table->values[cell], sizeof table->values[cell]);
                digest_add(d, &table->cell_kinds[cell], 1);
                if (table->texts != NULL)
                    digest_text(d, table->texts[cell]);
            }
        }
    }
}

/* ----- the data, made once and shared read-only by every thread ----- */

#define SELECT_COUNT 300000   /* above 2^17 values a thread: two threads select */
#define KMEANS_ROWS 20000     /* n_obs n_vars k above 2^17 a thread: two threads */
#define KMEANS_VARS 4
#define KMEANS_K 4
#define GMM_ROWS 9000         /* three blocks of rows, two threads */
#define GMM_VARS 4
#define GMM_K 3
#define SELECT_ROWS 1500      /* statgpu_gmm_select: candidates side by side on worker contexts */
#define SELECT_VARS 2
#define LTS_ROWS 400
#define LTS_VARS 2
#define IGMM_SETS 4
#define IGMM_LENGTH 400
#define SUBSET_ROWS 200
#define SUBSET_VARS 10

typedef struct shared_data {
    double  values[SELECT_COUNT];
    float   values32[SELECT_COUNT];
    double  kmeans[KMEANS_ROWS * KMEANS_VARS];
    double  gmm[GMM_ROWS * GMM_VARS];
    double  gmm_select[SELECT_ROWS * SELECT_VARS];
    double  lts_y[LTS_ROWS], lts_x[LTS_ROWS * LTS_VARS];
    double  igmm[IGMM_SETS][IGMM_LENGTH];
    double  subset_y[SUBSET_ROWS], subset_x[SUBSET_ROWS * SUBSET_VARS];
} shared_data;

static shared_data *g_data;

/* Rows around k centres in n_vars variables, column-major, ld = n. */
static void fill_clusters(double *x, size_t n, size_t n_vars, size_t k, uint64_t seed)
{
    test_rng rng = { seed };
    for (size_t i = 0; i < n; ++i)
        for (size_t v = 0; v < n_vars; ++v)
            x[i + n * v] = 6.0 * (double)((i % k + v) % k) + (1.0 + 0.2 * (double)v) * test_rng_normal(&rng);
}

static void make_data(void)
{
    g_data = malloc(sizeof *g_data);
    assert_non_null(g_data);
    test_fill(g_data->values, SELECT_COUNT, PATTERN_NORMAL, 11);
    for (size_t i = 0; i < SELECT_COUNT; ++i)
        g_data->values32[i] = (float)g_data->values[i];
    fill_clusters(g_data->kmeans, KMEANS_ROWS, KMEANS_VARS, KMEANS_K, 12);
    fill_clusters(g_data->gmm, GMM_ROWS, GMM_VARS, GMM_K, 13);
    fill_clusters(g_data->gmm_select, SELECT_ROWS, SELECT_VARS, 3, 14);
    test_rng rng = { 15 };
    for (size_t i = 0; i < LTS_ROWS; ++i) {
        double a = 10.0 * test_rng_uniform(&rng), b = 10.0 * test_rng_uniform(&rng);
        g_data->lts_x[i] = a;
        g_data->lts_x[i + LTS_ROWS] = b;
        g_data->lts_y[i] = 1.0 + 2.0 * a - 3.0 * b + 0.1 * test_rng_normal(&rng) + (i % 5 == 2 ? 40.0 : 0.0);
    }
    for (size_t s = 0; s < IGMM_SETS; ++s)
        for (size_t i = 0; i < IGMM_LENGTH; ++i) {
            /* two groups of positive, right-skewed values */
            double z = test_rng_normal(&rng);
            double centre = i % 2 ? 1.0 + 0.5 * (double)s : 6.0 + (double)s;
            g_data->igmm[s][i] = centre * exp(0.3 * z);
        }
    for (size_t i = 0; i < SUBSET_ROWS; ++i) {
        double y = 0.5;
        for (size_t v = 0; v < SUBSET_VARS; ++v) {
            double x = test_rng_normal(&rng);
            g_data->subset_x[i + SUBSET_ROWS * v] = x;
            y += (v % 3 == 0 ? 1.0 + 0.2 * (double)v : 0.02) * x;
        }
        g_data->subset_y[i] = y + 0.5 * test_rng_normal(&rng);
    }
}

/* ----- every method, as one call each ----- */

typedef enum call_kind {
    CALL_MEDIAN, CALL_SMALL, CALL_LARGE, CALL_QUANTILES, CALL_SELECT_FLOAT32,
    CALL_KMEANS, CALL_KMEANS_PARALLEL_INIT, CALL_GMM, CALL_GMM_SELECT, CALL_LTS, CALL_LMS, CALL_IGMM, CALL_BESTSUBSET,
    CALL_BESTSUBSET_KFOLD,
    CALL_COUNT
} call_kind;

static const char *const k_call_names[CALL_COUNT] = {
    "median", "k-th smallest", "k-th largest", "quantiles", "float32 ranks",
    "k-means", "k-means (k-means|| starts)", "gmm", "gmm select", "lts", "lms", "igmm", "best subset",
    "best subset (k-fold)",
};

/* A method's tables into d, with its summary row skip_row_named left out. */
#define DIGEST_TABLES(d, function, context, result, skip_row_named)                   \
    do {                                                                              \
        statgpu_table_set *tables_ = NULL;                                            \
        statgpu_status tables_status_ = function((context), (result), NULL, &tables_); \
        DIGEST_VALUE((d), tables_status_);                                            \
        if (tables_status_ == STATGPU_OK)                                             \
            digest_tables((d), tables_, (skip_row_named));                            \
        statgpu_table_set_destroy(tables_);                                           \
    } while (0)

static statgpu_status call_order_statistic(call_kind kind, statgpu_context *context, digest *d)
{
    const double *x = g_data->values;
    double results[7];
    size_t count = 1;
    statgpu_status status = STATGPU_ERROR_INTERNAL;
    switch (kind) {
    case CALL_MEDIAN:
        status = statgpu_median(context, x, SELECT_COUNT, results);
        break;
    case CALL_SMALL:
        status = statgpu_kth_smallest(context, x, SELECT_COUNT, 1234, results);
        break;
    case CALL_LARGE:  /* Calc's LARGE(x; 17) */
        status = statgpu_kth_smallest(context, x, SELECT_COUNT, SELECT_COUNT - 17 + 1, results);
        break;
    case CALL_QUANTILES: {
        const double p[7] = { 0.0, 0.01, 0.25, 0.5, 0.75, 0.999, 1.0 };
        count = 7;
        status = statgpu_quantiles(context, x, SELECT_COUNT, p, count, results);
        break;
    }
    case CALL_SELECT_FLOAT32: {
        const size_t ranks[3] = { SELECT_COUNT, 1, SELECT_COUNT / 3 };
        statgpu_vector vector = { g_data->values32, SELECT_COUNT, STATGPU_DTYPE_FLOAT32, STATGPU_MEMORY_HOST };
        count = 3;
        status = statgpu_vector_select(context, &vector, ranks, count, results);
        break;
    }
    default:
        break;
    }
    if (status == STATGPU_OK)
        digest_add(d, results, count * sizeof *results);
    return status;
}

static statgpu_status call_kmeans(statgpu_context *context, digest *d, statgpu_kmeans_init init)
{
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.init = init;
    params.restart_count = 3;
    params.max_iterations = 30;
    params.seed = 5;
    statgpu_kmeans_result *r = NULL;
    statgpu_status status = statgpu_kmeans(context, g_data->kmeans, KMEANS_ROWS, KMEANS_VARS, KMEANS_ROWS, KMEANS_K,
                                           &params, &r);
    if (status != STATGPU_OK)
        return status;
    digest_add(d, r->centroids, r->k * r->n_vars * sizeof *r->centroids);
    digest_add(d, r->labels, r->n_obs * sizeof *r->labels);
    digest_add(d, r->cluster_sizes, r->k * sizeof *r->cluster_sizes);
    digest_add(d, r->within_ss, r->k * sizeof *r->within_ss);
    DIGEST_VALUE(d, r->inertia);
    DIGEST_VALUE(d, r->total_ss);
    DIGEST_VALUE(d, r->iterations);
    DIGEST_VALUE(d, r->converged);
    DIGEST_VALUE(d, r->best_restart);
    DIGEST_VALUE(d, r->reseed_count);
    DIGEST_VALUE(d, r->between_share);
    DIGEST_TABLES(d, statgpu_kmeans_tables, context, r, NULL);
    statgpu_kmeans_result_destroy(r);
    return status;
}

static size_t gmm_covariance_count(const statgpu_gmm_result *r)
{
    switch (r->covariance) {
    case STATGPU_GMM_FULL:      return r->k * r->n_vars * r->n_vars;
    case STATGPU_GMM_TIED:      return r->n_vars * r->n_vars;
    case STATGPU_GMM_DIAG:      return r->k * r->n_vars;
    case STATGPU_GMM_SPHERICAL: return r->k;
    }
    return 0;
}

static void digest_gmm(digest *d, statgpu_context *context, const statgpu_gmm_result *r)
{
    digest_add(d, r->weights, r->k * sizeof *r->weights);
    digest_add(d, r->means, r->k * r->n_vars * sizeof *r->means);
    digest_add(d, r->covariances, gmm_covariance_count(r) * sizeof *r->covariances);
    digest_add(d, r->precisions_cholesky, gmm_covariance_count(r) * sizeof *r->precisions_cholesky);
    digest_add(d, r->responsibilities, r->n_obs * r->k * sizeof *r->responsibilities);
    digest_add(d, r->row_log_likelihood, r->n_obs * sizeof *r->row_log_likelihood);
    digest_add(d, r->labels, r->n_obs * sizeof *r->labels);
    DIGEST_VALUE(d, r->log_likelihood);
    DIGEST_VALUE(d, r->lower_bound);
    DIGEST_VALUE(d, r->iterations);
    DIGEST_VALUE(d, r->converged);
    DIGEST_VALUE(d, r->bic);
    DIGEST_VALUE(d, r->best_restart);
    DIGEST_VALUE(d, r->regularised_count);
    DIGEST_VALUE(d, r->best_candidate);
    for (size_t c = 0; c < r->candidate_count; ++c) {
        const statgpu_gmm_candidate *candidate = &r->candidates[c];
        DIGEST_VALUE(d, candidate->k);
        DIGEST_VALUE(d, candidate->status);
        DIGEST_VALUE(d, candidate->log_likelihood);
        DIGEST_VALUE(d, candidate->bic);
        DIGEST_VALUE(d, candidate->iterations);
    }
    DIGEST_TABLES(d, statgpu_gmm_tables, context, r, NULL);
}

static statgpu_status call_gmm(statgpu_context *context, digest *d, bool select)
{
    statgpu_gmm_params params;
    statgpu_gmm_params_init(&params);
    params.max_iterations = 20;
    params.seed = 3;
    statgpu_gmm_result *r = NULL;
    statgpu_status status;
    if (select) {
        const size_t k_values[3] = { 1, 2, 3 };
        const statgpu_gmm_covariance types[2] = { STATGPU_GMM_FULL, STATGPU_GMM_DIAG };
        status = statgpu_gmm_select(context, g_data->gmm_select, SELECT_ROWS, SELECT_VARS, SELECT_ROWS, k_values, 3,
                                    types, 2, &params, &r);
    } else {
        params.restart_count = 2;
        status = statgpu_gmm(context, g_data->gmm, GMM_ROWS, GMM_VARS, GMM_ROWS, GMM_K, &params, &r);
    }
    if (status == STATGPU_OK)
        digest_gmm(d, context, r);
    statgpu_gmm_result_destroy(r);
    return status;
}

static statgpu_status call_lts(statgpu_context *context, digest *d, statgpu_lts_criterion criterion)
{
    statgpu_lts_params params;
    statgpu_lts_params_init(&params);
    params.criterion = criterion;
    params.alpha = 0.75;
    params.seed = 9;
    statgpu_lts_result *r = NULL;
    statgpu_status status = statgpu_lts(context, g_data->lts_y, g_data->lts_x, LTS_ROWS, LTS_VARS, LTS_ROWS, &params,
                                        &r);
    if (status != STATGPU_OK)
        return status;
    digest_add(d, r->raw_coefficients, r->p * sizeof *r->raw_coefficients);
    digest_add(d, r->coefficients, r->p * sizeof *r->coefficients);
    digest_add(d, r->raw_weights, r->n_obs * sizeof *r->raw_weights);
    digest_add(d, r->weights, r->n_obs * sizeof *r->weights);
    digest_add(d, r->residuals, r->n_obs * sizeof *r->residuals);
    digest_add(d, r->raw_residuals, r->n_obs * sizeof *r->raw_residuals);
    digest_add(d, r->best_subset, r->h * sizeof *r->best_subset);
    DIGEST_VALUE(d, r->raw_scale);
    DIGEST_VALUE(d, r->scale);
    DIGEST_VALUE(d, r->objective);
    DIGEST_VALUE(d, r->outlier_count);
    DIGEST_VALUE(d, r->starts_evaluated);
    DIGEST_VALUE(d, r->c_steps);
    DIGEST_TABLES(d, statgpu_lts_tables, context, r, NULL);
    statgpu_lts_result_destroy(r);
    return status;
}

static statgpu_status call_igmm(statgpu_context *context, digest *d)
{
    statgpu_igmm_params params;
    statgpu_igmm_params_init(&params);
    params.start_count = 4;
    params.max_iterations = 60;
    params.seed = 4;
    params.keep_responsibilities = 1;
    const double *sets[IGMM_SETS];
    size_t lengths[IGMM_SETS];
    for (size_t s = 0; s < IGMM_SETS; ++s) {
        sets[s] = g_data->igmm[s];
        lengths[s] = IGMM_LENGTH - 37 * s;  /* data sets of different lengths */
    }
    statgpu_igmm_result *r = NULL;
    statgpu_status status = statgpu_igmm(context, sets, lengths, IGMM_SETS, 2, &params, &r);
    if (status != STATGPU_OK)
        return status;
    size_t values = 0;
    for (size_t s = 0; s < r->set_count; ++s)
        values += r->lengths[s];
    size_t cells = r->set_count * r->k;
    digest_add(d, r->status, r->set_count * sizeof *r->status);
    digest_add(d, r->alpha, cells * sizeof *r->alpha);
    digest_add(d, r->mu, cells * sizeof *r->mu);
    digest_add(d, r->lambda, cells * sizeof *r->lambda);
    digest_add(d, r->log_likelihood, r->set_count * sizeof *r->log_likelihood);
    digest_add(d, r->iterations, r->set_count * sizeof *r->iterations);
    digest_add(d, r->converged, r->set_count * sizeof *r->converged);
    digest_add(d, r->best_start, r->set_count * sizeof *r->best_start);
    digest_add(d, r->reseed_count, r->set_count * sizeof *r->reseed_count);
    digest_add(d, r->labels, values * sizeof *r->labels);
    digest_add(d, r->responsibilities, values * r->k * sizeof *r->responsibilities);
    DIGEST_TABLES(d, statgpu_igmm_tables, context, r, NULL);
    statgpu_igmm_result_destroy(r);
    return status;
}

static statgpu_status call_bestsubset(statgpu_context *context, digest *d, bool kfold)
{
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.nbest = 2;
    if (kfold) {
        params.validation = STATGPU_SUBSET_KFOLD;
        params.fold_count = 4;
        params.seed = 8;
    }
    statgpu_bestsubset_result *r = NULL;
    statgpu_status status = statgpu_bestsubset(context, g_data->subset_y, g_data->subset_x, SUBSET_ROWS, SUBSET_VARS,
                                               SUBSET_ROWS, &params, &r);
    if (status != STATGPU_OK)
        return status;
    /* Every field but subsets_evaluated, which depends on the order the
     * threads met the bounds (statgpu.h). */
    size_t n = r->subset_count;
    digest_add(d, r->sizes, n * sizeof *r->sizes);
    digest_add(d, r->ranks, n * sizeof *r->ranks);
    digest_add(d, r->which, n * r->n_vars);
    digest_add(d, r->rss, n * sizeof *r->rss);
    digest_add(d, r->cp, n * sizeof *r->cp);
    digest_add(d, r->bic, n * sizeof *r->bic);
    digest_add(d, r->press, n * sizeof *r->press);
    digest_add(d, r->validation_error, n * sizeof *r->validation_error);
    digest_add(d, r->coefficients, r->coefficient_count * sizeof *r->coefficients);
    digest_add(d, r->standard_errors, r->coefficient_count * sizeof *r->standard_errors);
    DIGEST_VALUE(d, r->chosen);
    DIGEST_VALUE(d, r->sigma2);
    DIGEST_TABLES(d, statgpu_bestsubset_tables, context, r, "subsets evaluated");
    statgpu_bestsubset_result_destroy(r);
    return status;
}

/* Runs one call; on success its result is in d. */
static statgpu_status run_call(call_kind kind, statgpu_context *context, digest *d)
{
    digest_clear(d);
    switch (kind) {
    case CALL_KMEANS:               return call_kmeans(context, d, STATGPU_KMEANS_INIT_AUTO);
    case CALL_KMEANS_PARALLEL_INIT: return call_kmeans(context, d, STATGPU_KMEANS_INIT_PARALLEL);
    case CALL_GMM:                  return call_gmm(context, d, false);
    case CALL_GMM_SELECT:           return call_gmm(context, d, true);
    case CALL_LTS:                  return call_lts(context, d, STATGPU_LTS_SQUARES);
    case CALL_LMS:                  return call_lts(context, d, STATGPU_LTS_MEDIAN);
    case CALL_IGMM:                 return call_igmm(context, d);
    case CALL_BESTSUBSET:           return call_bestsubset(context, d, false);
    case CALL_BESTSUBSET_KFOLD:     return call_bestsubset(context, d, true);
    default:                        return call_order_statistic(kind, context, d);
    }
}

/* ----- contexts with a progress callback of their own ----- */

/* What one thread's progress callback sees. cancel_at > 0: the callback asks
 * to stop at its cancel_at-th call of the current engine call. */
typedef struct progress_state {
    pthread_t owner;
    int       calls;
    int       cancel_at;
    bool      stop_asked;
    bool      foreign_thread;  /* called from a thread other than the caller's */
    bool      out_of_range;
} progress_state;

static int progress_callback(void *user_data, double fraction_done)
{
    progress_state *progress = user_data;
    if (!pthread_equal(progress->owner, pthread_self()))
        progress->foreign_thread = true;
    if (!(fraction_done >= 0.0 && fraction_done <= 1.0))
        progress->out_of_range = true;
    ++progress->calls;
    if (progress->cancel_at > 0 && progress->calls >= progress->cancel_at) {
        progress->stop_asked = true;
        return 1;
    }
    return 0;
}

static statgpu_status make_context(statgpu_backend backend, progress_state *progress, statgpu_context **out)
{
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = backend;
    params.thread_count = CONTEXT_THREADS;
    params.seed = CONTEXT_SEED;
    if (progress != NULL) {
        params.progress = progress_callback;
        params.progress_user_data = progress;
    }
    return statgpu_context_create(&params, out);
}

/* ----- the CUDA loader's once-initialisation, from many threads at once ----- */

#define LOADER_THREADS 16

typedef struct loader_probe {
    pthread_barrier_t *start;
    int                index;
    int                cuda_available;
    statgpu_backend    last_used;
    char               note[256];
    char               cuda_note[256];
    failure            failed;
} loader_probe;

static void *probe_loader(void *argument)
{
    loader_probe *probe = argument;
    /* Even threads ask for AUTO, odd ones for CUDA: both reach the loader. */
    statgpu_backend backend = probe->index % 2 ? STATGPU_BACKEND_CUDA : STATGPU_BACKEND_AUTO;
    statgpu_context *context = NULL;
    if (make_context(backend, NULL, &context) != STATGPU_OK) {
        fail_once(&probe->failed, "no context");
        pthread_barrier_wait(probe->start);
        return NULL;
    }
    pthread_barrier_wait(probe->start);
    statgpu_backend_report report;
    if (statgpu_context_backend_report(context, &report) != STATGPU_OK) {
        fail_once(&probe->failed, "backend report failed");
    } else {
        probe->cuda_available = report.cuda_available;
        snprintf(probe->note, sizeof probe->note, "%s", report.note);
    }
    double median = 0.0;
    const double data[5] = { 5, 1, 4, 2, 3 };
    if (statgpu_median(context, data, 5, &median) != STATGPU_OK || median != 3.0)
        fail_once(&probe->failed, "median failed: %s", statgpu_context_last_error(context));
    if (statgpu_context_backend_report(context, &report) == STATGPU_OK) {
        probe->last_used = report.last_used;
        snprintf(probe->cuda_note, sizeof probe->cuda_note, "%s", report.note);
    }
    statgpu_context_destroy(context);
    return NULL;
}

/* Runs first: no context of this process has reached the loader yet. */
static void test_cuda_loader_once_from_many_threads(void **state)
{
    (void)state;
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, LOADER_THREADS), 0);
    loader_probe probes[LOADER_THREADS];
    pthread_t threads[LOADER_THREADS];
    memset(probes, 0, sizeof probes);
    for (int t = 0; t < LOADER_THREADS; ++t) {
        probes[t].start = &start;
        probes[t].index = t;
        assert_int_equal(pthread_create(&threads[t], NULL, probe_loader, &probes[t]), 0);
    }
    for (int t = 0; t < LOADER_THREADS; ++t)
        assert_int_equal(pthread_join(threads[t], NULL), 0);
    pthread_barrier_destroy(&start);
    for (int t = 0; t < LOADER_THREADS; ++t)
        if (probes[t].failed.message[0] != '\0')
            fail_msg("thread %d: %s", t, probes[t].failed.message);

    /* Every thread got the same answer, and the same reason where CUDA is
     * missing (STATGPU_EXPECT_CUDA=0: it must be, as ctest runs this test
     * with a module path that does not exist). */
    const char *expect = getenv("STATGPU_EXPECT_CUDA");
    printf("# CUDA %s: %s\n", probes[0].cuda_available ? "available" : "unavailable", probes[0].note);
    for (int t = 0; t < LOADER_THREADS; ++t) {
        if (probes[t].cuda_available != probes[0].cuda_available)
            fail_msg("thread %d: CUDA available %d, thread 0: %d", t, probes[t].cuda_available,
                     probes[0].cuda_available);
        if (expect != NULL && strcmp(expect, "0") == 0 && probes[t].cuda_available)
            fail_msg("thread %d: CUDA available where its module is missing", t);
        if (probes[t].cuda_available)
            continue;
        if (strcmp(probes[t].note, probes[0].note) != 0)
            fail_msg("thread %d says \"%s\", thread 0 \"%s\"", t, probes[t].note, probes[0].note);
        if (probes[t].note[0] == '\0')
            fail_msg("thread %d: no reason given for CUDA being unavailable", t);
        if (probes[t].last_used != STATGPU_BACKEND_CPU)
            fail_msg("thread %d: without CUDA the median ran on %s", t, statgpu_backend_name(probes[t].last_used));
        /* A context that asked for CUDA says that its call ran on the CPU. */
        if (t % 2 == 1 && strstr(probes[t].cuda_note, "ran on the CPU") == NULL)
            fail_msg("thread %d asked for CUDA: its note \"%s\" does not say the CPU ran the call", t,
                     probes[t].cuda_note);
    }
}

/* ----- every method in every thread at once ----- */

typedef struct method_thread {
    int                index;
    statgpu_backend    backend;
    bool               cancels;     /* cancels some of its own calls part way */
    const digest      *references;  /* CALL_COUNT: each call alone */
    pthread_barrier_t *start;
    size_t             cancelled_calls;
    failure            failed;
} method_thread;

static void *run_methods(void *argument)
{
    method_thread *self = argument;
    progress_state progress = { .owner = pthread_self() };
    statgpu_context *context = NULL;
    statgpu_status made = make_context(self->backend, &progress, &context);
    pthread_barrier_wait(self->start);
    if (made != STATGPU_OK) {
        fail_once(&self->failed, "no context");
        return NULL;
    }
    digest got = { 0 };
    for (int round = 0; round < ROUNDS && self->failed.message[0] == '\0'; ++round)
        for (int step = 0; step < CALL_COUNT; ++step) {
            /* Threads start at different methods, so that every method meets
             * every other. */
            call_kind kind = (call_kind)((step + self->index * 2 + round) % CALL_COUNT);
            progress.calls = 0;
            progress.stop_asked = false;
            /* The canceller stops every other call, at its first or its
             * second report of progress; its other calls must not notice. */
            progress.cancel_at = self->cancels && (step + round) % 2 == 0 ? 1 + step % 2 : 0;
            statgpu_status status = run_call(kind, context, &got);
            const char *name = k_call_names[kind];
            if (got.out_of_memory) {
                fail_once(&self->failed, "%s: the test ran out of memory", name);
                break;
            }
            if (progress.foreign_thread)
                fail_once(&self->failed, "%s: the progress callback was called from another thread", name);
            if (progress.out_of_range)
                fail_once(&self->failed, "%s: a progress fraction outside [0, 1]", name);
            if (progress.stop_asked) {
                if (status != STATGPU_ERROR_CANCELLED)
                    fail_once(&self->failed, "%s: the callback asked to stop at its call %d, the call returned %s",
                              name, progress.cancel_at, statgpu_status_string(status));
                else if (statgpu_context_last_error(context)[0] == '\0')
                    fail_once(&self->failed, "%s: cancelled without a message", name);
                ++self->cancelled_calls;
                continue;
            }
            if (status != STATGPU_OK) {
                fail_once(&self->failed, "%s failed: %s (%s)", name, statgpu_status_string(status),
                          statgpu_context_last_error(context));
                continue;
            }
            const digest *expected = &self->references[kind];
            if (got.count != expected->count || memcmp(got.bytes, expected->bytes, got.count) != 0) {
                size_t at = 0;
                while (at < got.count && at < expected->count && got.bytes[at] == expected->bytes[at])
                    ++at;
                fail_once(&self->failed, "%s on %s, round %d: not the bits of the call alone (%zu bytes, expected "
                          "%zu; first difference at byte %zu)", name, statgpu_backend_name(self->backend), round,
                          got.count, expected->count, at);
            }
            if (self->backend == STATGPU_BACKEND_AUTO) {
                statgpu_backend_report report;
                if (statgpu_context_backend_report(context, &report) != STATGPU_OK)
                    fail_once(&self->failed, "%s: no backend report", name);
                else if (!report.cuda_available && report.last_used != STATGPU_BACKEND_CPU)
                    fail_once(&self->failed, "%s on AUTO without CUDA ran on %s", name,
                              statgpu_backend_name(report.last_used));
            }
        }
    digest_free(&got);
    statgpu_context_destroy(context);
    return NULL;
}

static void test_methods_in_many_threads_at_once(void **state)
{
    (void)state;
    /* Each call alone first, on a CPU context like the threads'. */
    digest references[CALL_COUNT];
    memset(references, 0, sizeof references);
    statgpu_context *context = NULL;
    assert_int_equal(make_context(STATGPU_BACKEND_CPU, NULL, &context), STATGPU_OK);
    for (int kind = 0; kind < CALL_COUNT; ++kind) {
        statgpu_status status = run_call((call_kind)kind, context, &references[kind]);
        if (status != STATGPU_OK)
            fail_msg("%s alone: %s (%s)", k_call_names[kind], statgpu_status_string(status),
                     statgpu_context_last_error(context));
        assert_false(references[kind].out_of_memory);
    }
    statgpu_context_destroy(context);

    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, THREAD_COUNT), 0);
    method_thread threads[THREAD_COUNT];
    pthread_t ids[THREAD_COUNT];
    failure failures[THREAD_COUNT];
    memset(threads, 0, sizeof threads);
    for (int t = 0; t < THREAD_COUNT; ++t) {
        threads[t].index = t;
        threads[t].backend = t % 2 ? STATGPU_BACKEND_AUTO : STATGPU_BACKEND_CPU;
        threads[t].cancels = t == 2;
        threads[t].references = references;
        threads[t].start = &start;
        assert_int_equal(pthread_create(&ids[t], NULL, run_methods, &threads[t]), 0);
    }
    for (int t = 0; t < THREAD_COUNT; ++t) {
        assert_int_equal(pthread_join(ids[t], NULL), 0);
        failures[t] = threads[t].failed;
    }
    pthread_barrier_destroy(&start);
    for (int kind = 0; kind < CALL_COUNT; ++kind)
        digest_free(&references[kind]);
    assert_no_failure(failures, THREAD_COUNT);
    /* The canceller did stop calls (every method reports progress). */
    assert_true(threads[2].cancelled_calls > 0);
    printf("# the canceller stopped %zu calls\n", threads[2].cancelled_calls);
}

/* ----- contexts made and destroyed in threads that come and go ----- */

#define CHURN_THREADS 8
#define CHURN_ROUNDS 6

typedef struct churn_thread {
    int     index;
    failure failed;
} churn_thread;

/* The median of the shared values, computed alone. */
static double g_median_alone;

/* One context's life: made, a median on up to three threads (the calling
 * thread's pool is made or reused), destroyed. */
static void one_context_life(churn_thread *self, int round)
{
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = (self->index + round) % 2 ? STATGPU_BACKEND_AUTO : STATGPU_BACKEND_CPU;
    params.thread_count = 1 + (self->index + round) % 3;
    statgpu_context *context = NULL;
    if (statgpu_context_create(&params, &context) != STATGPU_OK) {
        fail_once(&self->failed, "no context");
        return;
    }
    double median = 0.0;
    statgpu_status status = statgpu_median(context, g_data->values, SELECT_COUNT, &median);
    if (status != STATGPU_OK)
        fail_once(&self->failed, "median: %s (%s)", statgpu_status_string(status),
                  statgpu_context_last_error(context));
    else if (!test_same_bits(median, g_median_alone))
        fail_once(&self->failed, "median %a, alone %a", median, g_median_alone);
    statgpu_context_destroy(context);
}

static void *short_lived(void *argument)
{
    churn_thread *self = argument;
    one_context_life(self, 1);
    return NULL;
}

static void *churn(void *argument)
{
    churn_thread *self = argument;
    for (int round = 0; round < CHURN_ROUNDS; ++round) {
        /* A thread that makes a context, runs a call on the engine's
         * threads and ends: its pool goes with it while other threads make
         * theirs. */
        churn_thread child = { .index = self->index + round };
        pthread_t id;
        if (pthread_create(&id, NULL, short_lived, &child) != 0) {
            fail_once(&self->failed, "no thread");
            return NULL;
        }
        one_context_life(self, round);
        pthread_join(id, NULL);
        if (child.failed.message[0] != '\0')
            fail_once(&self->failed, "a short-lived thread: %s", child.failed.message);
    }
    return NULL;
}

static void test_contexts_made_and_destroyed_at_once(void **state)
{
    (void)state;
    statgpu_context *context = NULL;
    assert_int_equal(make_context(STATGPU_BACKEND_CPU, NULL, &context), STATGPU_OK);
    assert_int_equal(statgpu_median(context, g_data->values, SELECT_COUNT, &g_median_alone), STATGPU_OK);
    statgpu_context_destroy(context);
    churn_thread threads[CHURN_THREADS];
    pthread_t ids[CHURN_THREADS];
    failure failures[CHURN_THREADS];
    memset(threads, 0, sizeof threads);
    for (int t = 0; t < CHURN_THREADS; ++t) {
        threads[t].index = t;
        assert_int_equal(pthread_create(&ids[t], NULL, churn, &threads[t]), 0);
    }
    for (int t = 0; t < CHURN_THREADS; ++t) {
        assert_int_equal(pthread_join(ids[t], NULL), 0);
        failures[t] = threads[t].failed;
    }
    assert_no_failure(failures, CHURN_THREADS);
}

/* ----- errors and messages, read by the thread that made the call ----- */

#define MESSAGE_THREADS 8
#define MESSAGE_ROUNDS 200

typedef struct message_thread {
    int                index;
    pthread_barrier_t *start;
    failure            failed;
} message_thread;

static void *check_messages(void *argument)
{
    message_thread *self = argument;
    statgpu_context *context = NULL;
    statgpu_status made = make_context(self->index % 2 ? STATGPU_BACKEND_AUTO : STATGPU_BACKEND_CPU, NULL, &context);
    pthread_barrier_wait(self->start);
    if (made != STATGPU_OK) {
        fail_once(&self->failed, "no context");
        return NULL;
    }
    const double data[3] = { 3, 1, 2 };
    for (int round = 0; round < MESSAGE_ROUNDS && self->failed.message[0] == '\0'; ++round) {
        /* A rank of this thread's own, which the message must name. */
        size_t k = 4 + (size_t)self->index * 1000 + (size_t)round;
        double result = 0.0;
        statgpu_status status = statgpu_kth_smallest(context, data, 3, k, &result);
        char expected[64];
        snprintf(expected, sizeof expected, "k = %zu", k);
        if (status != STATGPU_ERROR_INVALID_ARGUMENT)
            fail_once(&self->failed, "k = %zu of 3 values: %s", k, statgpu_status_string(status));
        else if (strstr(statgpu_context_last_error(context), expected) == NULL)
            fail_once(&self->failed, "the message \"%s\" does not name %s", statgpu_context_last_error(context),
                      expected);
        if (round % 3 == 0) {
            /* A method's own message, then a success that clears it. */
            statgpu_kmeans_result *none = NULL;
            if (statgpu_kmeans(context, data, 3, 1, 3, 4 + (size_t)self->index, NULL, &none)
                    != STATGPU_ERROR_INVALID_ARGUMENT || none != NULL)
                fail_once(&self->failed, "k-means with k above the rows did not fail");
            else if (statgpu_context_last_error(context)[0] == '\0')
                fail_once(&self->failed, "k-means failed without a message");
        }
        if (statgpu_kth_smallest(context, data, 3, 2, &result) != STATGPU_OK || result != 2.0)
            fail_once(&self->failed, "the 2nd smallest of 3 values failed");
        else if (statgpu_context_last_error(context)[0] != '\0')
            fail_once(&self->failed, "a success left the message \"%s\"", statgpu_context_last_error(context));
        /* The static texts and a description, from every thread. */
        if (strcmp(statgpu_status_string(STATGPU_ERROR_CANCELLED), "cancelled") != 0
            || strcmp(statgpu_backend_name(STATGPU_BACKEND_CPU), "cpu") != 0
            || strcmp(statgpu_igmm_status_string(STATGPU_IGMM_FITTED), "fitted") != 0
            || statgpu_method_table_names("kmeans") == NULL
            || strcmp(statgpu_method_table_names("kmeans")[0], "centroids") != 0)
            fail_once(&self->failed, "a static text changed");
        statgpu_backend_report report;
        char text[512];
        if (statgpu_context_backend_report(context, &report) != STATGPU_OK
            || statgpu_backend_describe(&report, text, sizeof text) != STATGPU_OK
            || strncmp(text, report.cuda_available ? "CUDA: " : "CPU: ", report.cuda_available ? 6 : 5) != 0)
            fail_once(&self->failed, "the backend description \"%s\"", text);
    }
    statgpu_context_destroy(context);
    return NULL;
}

static void test_messages_belong_to_the_calling_thread(void **state)
{
    (void)state;
    pthread_barrier_t start;
    assert_int_equal(pthread_barrier_init(&start, NULL, MESSAGE_THREADS), 0);
    message_thread threads[MESSAGE_THREADS];
    pthread_t ids[MESSAGE_THREADS];
    failure failures[MESSAGE_THREADS];
    memset(threads, 0, sizeof threads);
    for (int t = 0; t < MESSAGE_THREADS; ++t) {
        threads[t].index = t;
        threads[t].start = &start;
        assert_int_equal(pthread_create(&ids[t], NULL, check_messages, &threads[t]), 0);
    }
    for (int t = 0; t < MESSAGE_THREADS; ++t) {
        assert_int_equal(pthread_join(ids[t], NULL), 0);
        failures[t] = threads[t].failed;
    }
    pthread_barrier_destroy(&start);
    assert_no_failure(failures, MESSAGE_THREADS);
}

static int setup(void **state)
{
    (void)state;
    make_data();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(g_data);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        /* First: the loader must not have been reached before it. */
        cmocka_unit_test(test_cuda_loader_once_from_many_threads),
        cmocka_unit_test(test_methods_in_many_threads_at_once),
        cmocka_unit_test(test_contexts_made_and_destroyed_at_once),
        cmocka_unit_test(test_messages_belong_to_the_calling_thread),
    };
    return cmocka_run_group_tests_name("concurrency", tests, setup, teardown);
}
