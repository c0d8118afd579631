/*
 * test_alloc_failure.c: every public engine call survives a failed
 * allocation. The engine's sources are compiled into this binary and linked
 * with --wrap for malloc, calloc, realloc, aligned_alloc, posix_memalign and
 * pthread_create (tests/CMakeLists.txt), so each allocation and thread start
 * of the engine passes through a counter here. Each case runs a call on a
 * small input with the CPU backend once to count its allocations (K), then
 * again for every i in 1 .. K (a spread of about 2000 of them, the first and
 * last 200 included, where K is larger) with the i-th allocation failing,
 * once more with every allocation from the i-th on failing (memory that
 * stays short: the fallbacks fail too), and, where the context has several
 * threads, once with the i-th failing and no thread starting (a process at
 * its limit of threads: every parallel loop runs on the calling thread, the
 * other threads' scratch unused). It asserts that the call either
 * succeeds with the clean run's result, bit for bit, or returns
 * STATGPU_ERROR_OUT_OF_MEMORY with a message and no result object, that the
 * result's destroy function takes what the call left, and that the context
 * still gives the clean result afterwards. Leaks on the failure paths are
 * caught where this binary runs under AddressSanitizer (the sanitizer tier).
 *
 * For a failing run, STATGPU_TEST_ALLOC_CASE=<name> runs the cases whose
 * names match (cmocka's filter, * as wildcard), STATGPU_TEST_ALLOC_INDEX=i
 * only the i-th allocation's failure, and STATGPU_TEST_ALLOC_TRACE=1
 * prints the stack of each allocation that is made to fail.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "statgpu.h"
#include "test_support.h"
/* The engine's parallel loop, compiled in: its pool is built on first use. */
#include "core/pool.h"

#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ----- the wrapped allocator ----- */

void *__real_malloc(size_t bytes);
void *__real_calloc(size_t count, size_t bytes);
void *__real_realloc(void *pointer, size_t bytes);
void *__real_aligned_alloc(size_t alignment, size_t bytes);
int   __real_posix_memalign(void **pointer, size_t alignment, size_t bytes);
int   __real_pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *),
                            void *argument);

static atomic_ulong g_allocations;  /* allocations and thread starts counted since the last reset */
static atomic_ulong g_fail_at;      /* the one to fail (1-based), 0: none */
static atomic_int   g_fail_after;   /* 1: every one from g_fail_at on fails too */
static atomic_int   g_no_threads;   /* 1: every thread start fails */
static atomic_int   g_failed;       /* whether it has failed */
static bool         g_trace;        /* STATGPU_TEST_ALLOC_TRACE */

static bool should_fail(void)
{
    unsigned long number = atomic_fetch_add(&g_allocations, 1) + 1;
    unsigned long fail_at = atomic_load(&g_fail_at);
    if (fail_at == 0 || number < fail_at || (number > fail_at && !atomic_load(&g_fail_after)))
        return false;
    atomic_store(&g_failed, 1);
    if (g_trace) {
        void *frames[32];
        int depth = backtrace(frames, 32);
        fprintf(stderr, "allocation %lu fails here:\n", number);
        backtrace_symbols_fd(frames, depth, STDERR_FILENO);
    }
    return true;
}

void *__wrap_malloc(size_t bytes)
{
    return should_fail() ? NULL : __real_malloc(bytes);
}

void *__wrap_calloc(size_t count, size_t bytes)
{
    return should_fail() ? NULL : __real_calloc(count, bytes);
}

void *__wrap_realloc(void *pointer, size_t bytes)
{
    return should_fail() ? NULL : __real_realloc(pointer, bytes);
}

void *__wrap_aligned_alloc(size_t alignment, size_t bytes)
{
    return should_fail() ? NULL : __real_aligned_alloc(alignment, bytes);
}

int __wrap_posix_memalign(void **pointer, size_t alignment, size_t bytes)
{
    return should_fail() ? ENOMEM : __real_posix_memalign(pointer, alignment, bytes);
}

int __wrap_pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *),
                          void *argument)
{
    bool fail = should_fail() || atomic_load(&g_no_threads);
    return fail ? EAGAIN : __real_pthread_create(thread, attributes, start, argument);
}

/* The test's own memory, never counted nor failed. */
static void *unwatched_calloc(size_t count, size_t bytes)
{
    void *pointer = __real_calloc(count > 0 ? count : 1, bytes > 0 ? bytes : 1);
    assert_non_null(pointer);
    return pointer;
}

/* How the allocations from the armed one on fail. */
typedef enum fail_mode {
    FAIL_ONE,         /* that one alone */
    FAIL_ALL_AFTER,   /* that one and every later one */
    FAIL_NO_THREADS,  /* that one, and every thread start */
    FAIL_MODE_COUNT
} fail_mode;

static const char *const k_mode_names[FAIL_MODE_COUNT] = { "", " and after", " and no thread" };

static void arm(unsigned long fail_at, fail_mode mode)
{
    atomic_store(&g_fail_at, 0);
    atomic_store(&g_failed, 0);
    atomic_store(&g_allocations, 0);
    atomic_store(&g_fail_after, mode == FAIL_ALL_AFTER);
    atomic_store(&g_no_threads, mode == FAIL_NO_THREADS);
    atomic_store(&g_fail_at, fail_at);
}

/* Ends a counted stretch; returns the allocations it made. */
static unsigned long disarm(void)
{
    atomic_store(&g_fail_at, 0);
    atomic_store(&g_no_threads, 0);
    return atomic_load(&g_allocations);
}

/* The run under way, for messages: "clean", or which allocations fail. */
static char g_run_label[96];

/* ----- a case: one call, its result, and how two results compare ----- */

typedef struct alloc_case alloc_case;
struct alloc_case {
    const char *name;
    int         thread_count;   /* the context's; 0 means 1 */
    statgpu_select_method select_method;
    bool        own_thread;     /* each call on a new thread: its pool of helpers is built in the call */
    bool        no_context;     /* the call makes its own context: no message can say why it failed */
    /* Runs the engine call (counted) on context; *output is what it made
     * (a result object, a table set, or the test's copy of the values). */
    statgpu_status (*call)(const alloc_case *self, statgpu_context *context, void **output);
    /* Fails the test unless got is expected, bit for bit. */
    void (*check_same)(const alloc_case *self, const void *expected, const void *got);
    /* Frees an output; must take NULL (a result object's destroy function). */
    void (*release)(void *output);
    const void *input;
    /* The clean call after a failed one, which checks that the context is
     * whole, runs after every again_every-th index (0: every one): for a
     * call too slow to run twice per index. */
    unsigned    again_every;
};

/* The outcome of one call. */
typedef struct call_run {
    const alloc_case *which;
    statgpu_context  *context;
    unsigned long     fail_at;
    fail_mode         mode;
    statgpu_status    status;
    void             *output;
    unsigned long     allocations;
    bool              failed;
} call_run;

static void *call_run_body(void *argument)
{
    call_run *run = argument;
    arm(run->fail_at, run->mode);
    run->status = run->which->call(run->which, run->context, &run->output);
    run->allocations = disarm();
    run->failed = atomic_load(&g_failed) != 0;
    return NULL;
}

static void call_once(call_run *run)
{
    if (!run->which->own_thread) {
        call_run_body(run);
        return;
    }
    pthread_t thread;
    assert_int_equal(__real_pthread_create(&thread, NULL, call_run_body, run), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
}

static statgpu_context *make_context(const alloc_case *which)
{
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    params.thread_count = which->thread_count > 0 ? which->thread_count : 1;
    params.select_method = which->select_method;
    params.seed = 11;
    statgpu_context *context = NULL;
    assert_int_equal(statgpu_context_create(&params, &context), STATGPU_OK);
    return context;
}

/* The indices to fail: all of 1 .. count up to 2000, else the first and last
 * 200 and 1600 spread evenly between. Returns how many it wrote. */
#define MOST_INDICES 2000
static size_t chosen_indices(unsigned long count, unsigned long *indices)
{
    const char *only = getenv("STATGPU_TEST_ALLOC_INDEX");
    if (only != NULL && only[0] != '\0') {
        indices[0] = strtoul(only, NULL, 10);
        return 1;
    }
    if (count <= MOST_INDICES) {
        for (unsigned long i = 0; i < count; ++i)
            indices[i] = i + 1;
        return count;
    }
    size_t written = 0;
    for (unsigned long i = 1; i <= 200; ++i)
        indices[written++] = i;
    const unsigned long middle = count - 400, spread = MOST_INDICES - 400;
    for (unsigned long j = 0; j < spread; ++j)
        indices[written++] = 201 + j * middle / spread;
    for (unsigned long i = count - 199; i <= count; ++i)
        indices[written++] = i;
    return written;
}

static double seconds_now(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

static void run_case(const alloc_case *which)
{
    const double started = seconds_now();
    snprintf(g_run_label, sizeof g_run_label, "clean");
    /* The clean result, twice: on one thread the allocations must not vary;
     * on several, a helper that joins a loop late may find no work left and
     * make none of its scratch. */
    call_run clean[2];
    for (int r = 0; r < 2; ++r) {
        clean[r] = (call_run){ .which = which, .context = make_context(which) };
        call_once(&clean[r]);
        if (clean[r].status != STATGPU_OK)
            fail_msg("%s: the clean call failed: %s", which->name, statgpu_context_last_error(clean[r].context));
        statgpu_context_destroy(clean[r].context);
    }
    which->check_same(which, clean[0].output, clean[1].output);
    which->release(clean[1].output);
    const unsigned long count = clean[0].allocations > clean[1].allocations ? clean[0].allocations
                                                                            : clean[1].allocations;
    if (clean[1].allocations != clean[0].allocations && which->thread_count <= 1)
        fail_msg("%s: a clean call made %lu allocations, the next %lu", which->name, clean[0].allocations,
                 clean[1].allocations);

    unsigned long *indices = unwatched_calloc(MOST_INDICES, sizeof *indices);
    const size_t index_count = chosen_indices(count, indices);
    size_t failures = 0, recovered = 0;
    /* Thread starts fail in the first two modes too, where they are counted. */
    const size_t modes = which->thread_count > 1 || which->own_thread ? FAIL_MODE_COUNT : FAIL_NO_THREADS;
    for (size_t j = 0; j < modes * index_count; ++j) {
        call_run run = { .which = which, .context = make_context(which), .fail_at = indices[j / modes],
                         .mode = (fail_mode)(j % modes) };
        const char *mode = k_mode_names[run.mode];
        snprintf(g_run_label, sizeof g_run_label, "allocation %lu%s of %lu failing", run.fail_at, mode, count);
        call_once(&run);
        if (run.status == STATGPU_OK) {
            recovered += run.failed;
            which->check_same(which, clean[0].output, run.output);
        } else {
            ++failures;
            const char *message = statgpu_context_last_error(run.context);
            if (run.status != STATGPU_ERROR_OUT_OF_MEMORY)
                fail_msg("%s, allocation %lu%s of %lu failing: status %d (%s), not out of memory: %s", which->name,
                         run.fail_at, mode, count, (int)run.status, statgpu_status_string(run.status), message);
            if (message[0] == '\0' && !which->no_context)
                fail_msg("%s, allocation %lu%s of %lu failing: no message", which->name, run.fail_at, mode, count);
            if (run.output != NULL)
                fail_msg("%s, allocation %lu%s of %lu failing: a result is left after the failure", which->name,
                         run.fail_at, mode, count);
        }
        which->release(run.output);
        if (which->again_every > 1 && j / modes % which->again_every != 0) {
            statgpu_context_destroy(run.context);
            continue;
        }
        /* The context is whole: a clean call on it gives the clean result. */
        snprintf(g_run_label, sizeof g_run_label, "a clean call after allocation %lu%s failed", run.fail_at, mode);
        call_run again = { .which = which, .context = run.context };
        call_once(&again);
        if (again.status != STATGPU_OK)
            fail_msg("%s, after allocation %lu%s failed: the next clean call failed: %s", which->name, run.fail_at,
                     mode, statgpu_context_last_error(run.context));
        which->check_same(which, clean[0].output, again.output);
        which->release(again.output);
        statgpu_context_destroy(run.context);
    }
    which->release(clean[0].output);
    free(indices);
    print_message("%-28s %6lu allocations, %4zu failed calls, %4zu recovered, %.2f s\n", which->name, count,
                  failures, recovered, seconds_now() - started);
}

static void test_case(void **state)
{
    run_case(*state);
}

/* ----- comparing results bit for bit ----- */

static void assert_same_bytes(const char *where, const char *what, const void *expected, const void *got,
                              size_t bytes)
{
    if ((expected == NULL) != (got == NULL))
        fail_msg("%s, %s: %s is %s", where, g_run_label, what, got == NULL ? "NULL" : "not NULL");
    if (expected != NULL && memcmp(expected, got, bytes) != 0)
        fail_msg("%s, %s: %s differs from the clean run's", where, g_run_label, what);
}

#define SAME_ARRAY(where, expected, got, field, count) \
    assert_same_bytes((where), #field, (expected)->field, (got)->field, (count) * sizeof *(expected)->field)
#define SAME_FIELD(where, expected, got, field) \
    assert_same_bytes((where), #field, &(expected)->field, &(got)->field, sizeof (expected)->field)

static void free_output(void *output)
{
    free(output);
}

/* ----- inputs ----- */

typedef struct select_input {
    statgpu_vector vector;     /* data; HOST_SCRATCH data are copied for each call */
    size_t         rank_count; /* results */
    const size_t  *ranks;      /* vector_select */
    const double  *p;          /* quantiles */
    int            function;   /* which call */
} select_input;

enum {
    CALL_MEDIAN, CALL_KTH_SMALLEST, CALL_QUANTILE, CALL_QUANTILES, CALL_VECTOR_SELECT, CALL_VECTOR_MEDIAN,
    CALL_VECTOR_QUANTILES
};

static statgpu_status call_select(const alloc_case *self, statgpu_context *context, void **output)
{
    const select_input *in = self->input;
    double *results = unwatched_calloc(in->rank_count, sizeof *results);
    statgpu_vector vector = in->vector;
    void *scratch = NULL;
    if (vector.memory == STATGPU_MEMORY_HOST_SCRATCH) {
        const size_t bytes = vector.count * (vector.dtype == STATGPU_DTYPE_FLOAT32 ? sizeof(float) : sizeof(double));
        scratch = unwatched_calloc(1, bytes);
        memcpy(scratch, vector.data, bytes);
        vector.data = scratch;
    }
    const double *data = vector.data;
    statgpu_status status = STATGPU_ERROR_INTERNAL;
    switch (in->function) {
    case CALL_MEDIAN:          status = statgpu_median(context, data, vector.count, results); break;
    case CALL_KTH_SMALLEST:    status = statgpu_kth_smallest(context, data, vector.count, in->ranks[0], results); break;
    case CALL_QUANTILE:        status = statgpu_quantile(context, data, vector.count, in->p[0], results); break;
    case CALL_QUANTILES:       status = statgpu_quantiles(context, data, vector.count, in->p, in->rank_count, results); break;
    case CALL_VECTOR_SELECT:   status = statgpu_vector_select(context, &vector, in->ranks, in->rank_count, results); break;
    case CALL_VECTOR_MEDIAN:   status = statgpu_vector_median(context, &vector, results); break;
    case CALL_VECTOR_QUANTILES:
        status = statgpu_vector_quantiles(context, &vector, in->p, in->rank_count, results);
        break;
    }
    free(scratch);
    if (status != STATGPU_OK) {
        free(results);
        results = NULL;
    }
    *output = results;
    return status;
}

static void same_values(const alloc_case *self, const void *expected, const void *got)
{
    const select_input *in = self->input;
    assert_same_bytes(self->name, "results", expected, got, in->rank_count * sizeof(double));
}

/* The data of the order statistics: normal values (a float32 copy of the
 * middle ones), a few values repeated many times, and uniform values. */
#define SMALL_COUNT 301
#define MIDDLE_COUNT 5000
#define LARGE_COUNT 70000
#define HUGE_COUNT ((size_t)1 << 20)
static double *g_small, *g_middle, *g_large, *g_duplicates, *g_huge;
static float *g_middle_floats;
static const size_t k_ranks[] = { 1, 2500, 2501 };
static const size_t k_large_rank[] = { 35001 };
static const double k_probabilities[] = { 0.0, 0.1, 0.5, 0.9, 1.0 };
static const double k_two_probabilities[] = { 0.3, 0.7 };

/* ----- k-means ----- */

typedef struct kmeans_input {
    const double *data;
    size_t        n_obs, n_vars, k;
    statgpu_kmeans_params params;
    bool          as_floats;  /* through statgpu_kmeans_matrix, float32 */
    const float  *floats;
} kmeans_input;

static statgpu_status call_kmeans(const alloc_case *self, statgpu_context *context, void **output)
{
    const kmeans_input *in = self->input;
    statgpu_kmeans_result *result = NULL;
    statgpu_status status;
    if (in->as_floats) {
        statgpu_matrix matrix = { in->floats, in->n_obs, in->n_vars, in->n_obs, STATGPU_DTYPE_FLOAT32,
                                  STATGPU_MEMORY_HOST };
        status = statgpu_kmeans_matrix(context, &matrix, in->k, &in->params, &result);
    } else {
        status = statgpu_kmeans(context, in->data, in->n_obs, in->n_vars, in->n_obs, in->k, &in->params, &result);
    }
    *output = result;
    return status;
}

static void same_kmeans(const alloc_case *self, const void *expected_output, const void *got_output)
{
    const statgpu_kmeans_result *e = expected_output, *g = got_output;
    const char *w = self->name;
    assert_non_null(g);
    SAME_FIELD(w, e, g, k);
    SAME_FIELD(w, e, g, n_obs);
    SAME_FIELD(w, e, g, n_vars);
    SAME_ARRAY(w, e, g, centroids, e->k * e->n_vars);
    SAME_ARRAY(w, e, g, labels, e->n_obs);
    SAME_ARRAY(w, e, g, cluster_sizes, e->k);
    SAME_ARRAY(w, e, g, within_ss, e->k);
    SAME_FIELD(w, e, g, inertia);
    SAME_FIELD(w, e, g, total_ss);
    SAME_FIELD(w, e, g, iterations);
    SAME_FIELD(w, e, g, converged);
    SAME_FIELD(w, e, g, best_restart);
    SAME_FIELD(w, e, g, restart_count);
    SAME_FIELD(w, e, g, reseed_count);
    SAME_FIELD(w, e, g, init);
    SAME_FIELD(w, e, g, between_share);
}

static void release_kmeans(void *output)
{
    statgpu_kmeans_result_destroy(output);
}

/* Well separated groups around k centres, column-major, times scale. */
static double *make_clusters(size_t n, size_t d, size_t k, double scale, uint64_t seed)
{
    double *data = unwatched_calloc(n * d, sizeof *data);
    test_rng rng = { seed };
    for (size_t i = 0; i < n; ++i)
        for (size_t v = 0; v < d; ++v)
            data[i + n * v] = scale * (10.0 * (double)((i % k + v) % k) + test_rng_normal(&rng));
    return data;
}

/* ----- LTS ----- */

typedef struct lts_input {
    const double *y, *x;
    size_t        n_obs, n_vars;
    statgpu_lts_params params;
    const float  *x_floats;  /* through statgpu_lts_matrix where not NULL */
} lts_input;

static statgpu_status call_lts(const alloc_case *self, statgpu_context *context, void **output)
{
    const lts_input *in = self->input;
    statgpu_lts_result *result = NULL;
    statgpu_status status;
    if (in->x_floats != NULL) {
        statgpu_vector y = { in->y, in->n_obs, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
        statgpu_matrix x = { in->x_floats, in->n_obs, in->n_vars, in->n_obs, STATGPU_DTYPE_FLOAT32,
                             STATGPU_MEMORY_HOST };
        status = statgpu_lts_matrix(context, &y, &x, &in->params, &result);
    } else {
        status = statgpu_lts(context, in->y, in->x, in->n_obs, in->n_vars, in->n_obs, &in->params, &result);
    }
    *output = result;
    return status;
}

static void same_lts(const alloc_case *self, const void *expected_output, const void *got_output)
{
    const statgpu_lts_result *e = expected_output, *g = got_output;
    const char *w = self->name;
    assert_non_null(g);
    SAME_FIELD(w, e, g, n_obs);
    SAME_FIELD(w, e, g, p);
    SAME_FIELD(w, e, g, h);
    SAME_ARRAY(w, e, g, raw_coefficients, e->p);
    SAME_ARRAY(w, e, g, coefficients, e->p);
    SAME_ARRAY(w, e, g, raw_weights, e->n_obs);
    SAME_ARRAY(w, e, g, weights, e->n_obs);
    SAME_ARRAY(w, e, g, residuals, e->n_obs);
    SAME_ARRAY(w, e, g, raw_residuals, e->n_obs);
    SAME_ARRAY(w, e, g, best_subset, e->h);
    SAME_FIELD(w, e, g, raw_scale);
    SAME_FIELD(w, e, g, raw_consistency_factor);
    SAME_FIELD(w, e, g, raw_correction_factor);
    SAME_FIELD(w, e, g, scale);
    SAME_FIELD(w, e, g, consistency_factor);
    SAME_FIELD(w, e, g, correction_factor);
    SAME_FIELD(w, e, g, objective);
    SAME_FIELD(w, e, g, outlier_count);
    SAME_FIELD(w, e, g, exact_fit);
    SAME_FIELD(w, e, g, starts_evaluated);
    SAME_FIELD(w, e, g, c_steps);
    SAME_FIELD(w, e, g, exhaustive);
}

static void release_lts(void *output)
{
    statgpu_lts_result_destroy(output);
}

/* y = 1 + 2 x1 - x2 + noise, with a tenth of the rows outliers. */
static void make_regression(size_t n, size_t d, uint64_t seed, double **y, double **x)
{
    test_rng rng = { seed };
    *y = unwatched_calloc(n, sizeof **y);
    *x = unwatched_calloc(n * d, sizeof **x);
    for (size_t i = 0; i < n; ++i) {
        double fit = 1.0;
        for (size_t v = 0; v < d; ++v) {
            (*x)[i + n * v] = 3.0 * test_rng_normal(&rng);
            fit += (v % 2 ? -1.0 : 2.0) / (double)(v + 1) * (*x)[i + n * v];
        }
        (*y)[i] = fit + 0.5 * test_rng_normal(&rng) + (i % 10 == 3 ? 25.0 : 0.0);
    }
}

/* ----- Gaussian mixtures ----- */

typedef struct gmm_input {
    const double *data;
    size_t        n_obs, n_vars, k;
    statgpu_gmm_params params;
    const float  *floats;  /* through statgpu_gmm_matrix where not NULL */
    /* statgpu_gmm_select where k_count > 0 */
    const size_t *k_values;
    size_t        k_count;
    const statgpu_gmm_covariance *types;
    size_t        type_count;
} gmm_input;

static statgpu_status call_gmm(const alloc_case *self, statgpu_context *context, void **output)
{
    const gmm_input *in = self->input;
    statgpu_gmm_result *result = NULL;
    statgpu_status status;
    if (in->k_count > 0) {
        status = statgpu_gmm_select(context, in->data, in->n_obs, in->n_vars, in->n_obs, in->k_values, in->k_count,
                                    in->types, in->type_count, &in->params, &result);
    } else if (in->floats != NULL) {
        statgpu_matrix matrix = { in->floats, in->n_obs, in->n_vars, in->n_obs, STATGPU_DTYPE_FLOAT32,
                                  STATGPU_MEMORY_HOST };
        status = statgpu_gmm_matrix(context, &matrix, in->k, &in->params, &result);
    } else {
        status = statgpu_gmm(context, in->data, in->n_obs, in->n_vars, in->n_obs, in->k, &in->params, &result);
    }
    *output = result;
    return status;
}

static size_t gmm_covariance_count(const statgpu_gmm_result *result)
{
    const size_t k = result->k, d = result->n_vars;
    switch (result->covariance) {
    case STATGPU_GMM_FULL:      return k * d * d;
    case STATGPU_GMM_TIED:      return d * d;
    case STATGPU_GMM_DIAG:      return k * d;
    case STATGPU_GMM_SPHERICAL: return k;
    }
    return 0;
}

static void same_gmm(const alloc_case *self, const void *expected_output, const void *got_output)
{
    const statgpu_gmm_result *e = expected_output, *g = got_output;
    const char *w = self->name;
    assert_non_null(g);
    SAME_FIELD(w, e, g, k);
    SAME_FIELD(w, e, g, n_obs);
    SAME_FIELD(w, e, g, n_vars);
    SAME_FIELD(w, e, g, covariance);
    SAME_ARRAY(w, e, g, weights, e->k);
    SAME_ARRAY(w, e, g, means, e->k * e->n_vars);
    SAME_ARRAY(w, e, g, covariances, gmm_covariance_count(e));
    SAME_ARRAY(w, e, g, precisions_cholesky, gmm_covariance_count(e));
    SAME_ARRAY(w, e, g, responsibilities, e->n_obs * e->k);
    SAME_ARRAY(w, e, g, row_log_likelihood, e->n_obs);
    SAME_ARRAY(w, e, g, labels, e->n_obs);
    SAME_FIELD(w, e, g, log_likelihood);
    SAME_FIELD(w, e, g, lower_bound);
    SAME_FIELD(w, e, g, iterations);
    SAME_FIELD(w, e, g, converged);
    SAME_FIELD(w, e, g, parameter_count);
    SAME_FIELD(w, e, g, bic);
    SAME_FIELD(w, e, g, aic);
    SAME_FIELD(w, e, g, best_restart);
    SAME_FIELD(w, e, g, restart_count);
    SAME_FIELD(w, e, g, regularised_count);
    SAME_FIELD(w, e, g, candidate_count);
    SAME_FIELD(w, e, g, best_candidate);
    SAME_FIELD(w, e, g, singular_components);
    assert_int_equal(e->candidate_count, g->candidate_count);
    for (size_t c = 0; c < e->candidate_count; ++c) {
        const statgpu_gmm_candidate *ec = &e->candidates[c], *gc = &g->candidates[c];
        SAME_FIELD(w, ec, gc, k);
        SAME_FIELD(w, ec, gc, covariance);
        SAME_FIELD(w, ec, gc, status);
        SAME_FIELD(w, ec, gc, log_likelihood);
        SAME_FIELD(w, ec, gc, bic);
        SAME_FIELD(w, ec, gc, aic);
        SAME_FIELD(w, ec, gc, parameter_count);
        SAME_FIELD(w, ec, gc, iterations);
        SAME_FIELD(w, ec, gc, converged);
        SAME_FIELD(w, ec, gc, singular_components);
    }
}

static void release_gmm(void *output)
{
    statgpu_gmm_result_destroy(output);
}

/* ----- inverse Gaussian mixtures ----- */

#define IGMM_SETS 4
typedef struct igmm_input {
    const double *sets[IGMM_SETS];
    size_t        lengths[IGMM_SETS];
    size_t        set_count, k;
    statgpu_igmm_params params;
} igmm_input;

static statgpu_status call_igmm(const alloc_case *self, statgpu_context *context, void **output)
{
    const igmm_input *in = self->input;
    statgpu_igmm_result *result = NULL;
    statgpu_status status = statgpu_igmm(context, in->sets, in->lengths, in->set_count, in->k, &in->params, &result);
    *output = result;
    return status;
}

static void same_igmm(const alloc_case *self, const void *expected_output, const void *got_output)
{
    const statgpu_igmm_result *e = expected_output, *g = got_output;
    const char *w = self->name;
    assert_non_null(g);
    SAME_FIELD(w, e, g, set_count);
    SAME_FIELD(w, e, g, k);
    SAME_FIELD(w, e, g, start_count);
    size_t total = 0;
    for (size_t s = 0; s < e->set_count; ++s)
        total += e->lengths[s];
    const size_t sk = e->set_count * e->k;
    SAME_ARRAY(w, e, g, lengths, e->set_count);
    SAME_ARRAY(w, e, g, status, e->set_count);
    SAME_ARRAY(w, e, g, alpha, sk);
    SAME_ARRAY(w, e, g, mu, sk);
    SAME_ARRAY(w, e, g, lambda, sk);
    SAME_ARRAY(w, e, g, log_likelihood, e->set_count);
    SAME_ARRAY(w, e, g, iterations, e->set_count);
    SAME_ARRAY(w, e, g, converged, e->set_count);
    SAME_ARRAY(w, e, g, best_start, e->set_count);
    SAME_ARRAY(w, e, g, reseed_count, e->set_count);
    SAME_ARRAY(w, e, g, labels, total);
    SAME_ARRAY(w, e, g, offsets, e->set_count);
    SAME_ARRAY(w, e, g, responsibilities, total * e->k);
}

static void release_igmm(void *output)
{
    statgpu_igmm_result_destroy(output);
}

/* Two inverse Gaussian components (means 1 and 6) by the Michael-Schucany-Haas
 * transformation. */
static double *make_inverse_gaussian(size_t n, uint64_t seed)
{
    double *data = unwatched_calloc(n, sizeof *data);
    test_rng rng = { seed };
    for (size_t i = 0; i < n; ++i) {
        const double mu = i % 3 == 0 ? 6.0 : 1.0, lambda = i % 3 == 0 ? 20.0 : 3.0;
        const double nu = test_rng_normal(&rng), y = nu * nu;
        const double x = mu + mu * mu * y / (2 * lambda)
                         - mu / (2 * lambda) * sqrt(4 * mu * lambda * y + mu * mu * y * y);
        data[i] = test_rng_uniform(&rng) <= mu / (mu + x) ? x : mu * mu / x;
    }
    return data;
}

/* ----- best subset regression ----- */

typedef struct bestsubset_input {
    const double *y, *x;
    size_t        n_obs, n_vars;
    statgpu_bestsubset_params params;
} bestsubset_input;

static statgpu_status call_bestsubset(const alloc_case *self, statgpu_context *context, void **output)
{
    const bestsubset_input *in = self->input;
    statgpu_bestsubset_result *result = NULL;
    statgpu_status status = statgpu_bestsubset(context, in->y, in->x, in->n_obs, in->n_vars, in->n_obs, &in->params,
                                               &result);
    *output = result;
    return status;
}

static void same_bestsubset(const alloc_case *self, const void *expected_output, const void *got_output)
{
    const statgpu_bestsubset_result *e = expected_output, *g = got_output;
    const char *w = self->name;
    assert_non_null(g);
    SAME_FIELD(w, e, g, n_obs);
    SAME_FIELD(w, e, g, n_vars);
    SAME_FIELD(w, e, g, min_size);
    SAME_FIELD(w, e, g, max_size);
    SAME_FIELD(w, e, g, subset_count);
    const size_t s = e->subset_count;
    SAME_ARRAY(w, e, g, sizes, s);
    SAME_ARRAY(w, e, g, ranks, s);
    SAME_ARRAY(w, e, g, which, s * e->n_vars);
    SAME_ARRAY(w, e, g, rss, s);
    SAME_ARRAY(w, e, g, r_squared, s);
    SAME_ARRAY(w, e, g, adjusted_r_squared, s);
    SAME_ARRAY(w, e, g, cp, s);
    SAME_ARRAY(w, e, g, bic_leaps, s);
    SAME_ARRAY(w, e, g, bic, s);
    SAME_ARRAY(w, e, g, press, s);
    SAME_ARRAY(w, e, g, validation_error, s);
    SAME_FIELD(w, e, g, null_rss);
    SAME_FIELD(w, e, g, full_rss);
    SAME_FIELD(w, e, g, sigma2);
    SAME_FIELD(w, e, g, fold_count);
    SAME_FIELD(w, e, g, holdout_count);
    SAME_FIELD(w, e, g, chosen);
    SAME_FIELD(w, e, g, coefficient_count);
    SAME_ARRAY(w, e, g, coefficients, e->coefficient_count);
    SAME_ARRAY(w, e, g, standard_errors, e->coefficient_count);
    SAME_ARRAY(w, e, g, coefficient_vars, e->coefficient_count);
    SAME_ARRAY(w, e, g, dropped, e->n_vars);
    SAME_FIELD(w, e, g, dropped_count);
}

static void release_bestsubset(void *output)
{
    statgpu_bestsubset_result_destroy(output);
}

/* ----- result tables ----- */

enum { TABLES_KMEANS, TABLES_LTS, TABLES_GMM, TABLES_IGMM, TABLES_BESTSUBSET };

typedef struct tables_input {
    int                  method;
    const void          *result;  /* made once, by a clean call */
    statgpu_table_params params;
} tables_input;

static statgpu_status call_tables(const alloc_case *self, statgpu_context *context, void **output)
{
    const tables_input *in = self->input;
    statgpu_table_set *set = NULL;
    statgpu_status status = STATGPU_ERROR_INTERNAL;
    switch (in->method) {
    case TABLES_KMEANS:     status = statgpu_kmeans_tables(context, in->result, &in->params, &set); break;
    case TABLES_LTS:        status = statgpu_lts_tables(context, in->result, &in->params, &set); break;
    case TABLES_GMM:        status = statgpu_gmm_tables(context, in->result, &in->params, &set); break;
    case TABLES_IGMM:       status = statgpu_igmm_tables(context, in->result, &in->params, &set); break;
    case TABLES_BESTSUBSET: status = statgpu_bestsubset_tables(context, in->result, &in->params, &set); break;
    }
    *output = set;
    return status;
}

static void same_text(const char *where, const char *what, const char *expected, const char *got)
{
    if ((expected == NULL) != (got == NULL) || (expected != NULL && strcmp(expected, got) != 0))
        fail_msg("%s, %s: %s is \"%s\", not \"%s\"", where, g_run_label, what, got ? got : "(NULL)",
                 expected ? expected : "(NULL)");
}

static void same_tables(const alloc_case *self, const void *expected_output, const void *got_output)
{
    const statgpu_table_set *e = expected_output, *g = got_output;
    assert_non_null(g);
    assert_int_equal(statgpu_table_set_count(e), statgpu_table_set_count(g));
    for (size_t t = 0; t < statgpu_table_set_count(e); ++t) {
        const statgpu_table *et = statgpu_table_set_get(e, t), *gt = statgpu_table_set_get(g, t);
        const char *w = self->name;
        same_text(w, "a table's name", et->name, gt->name);
        same_text(w, "a table's title", et->title, gt->title);
        SAME_FIELD(w, et, gt, row_count);
        SAME_FIELD(w, et, gt, column_count);
        const size_t cells = et->row_count * et->column_count;
        SAME_ARRAY(w, et, gt, values, cells);
        SAME_ARRAY(w, et, gt, cell_kinds, cells);
        for (size_t c = 0; c < et->column_count; ++c)
            same_text(w, "a column header", et->column_headers[c], gt->column_headers[c]);
        same_text(w, "the row labels' header", et->row_label_header, gt->row_label_header);
        if ((et->row_labels == NULL) != (gt->row_labels == NULL))
            fail_msg("%s: table %s's row labels are %s", w, et->name, gt->row_labels ? "there" : "missing");
        for (size_t r = 0; et->row_labels != NULL && r < et->row_count; ++r)
            same_text(w, "a row label", et->row_labels[r], gt->row_labels[r]);
        if ((et->texts == NULL) != (gt->texts == NULL))
            fail_msg("%s: table %s's texts are %s", w, et->name, gt->texts ? "there" : "missing");
        for (size_t cell = 0; et->texts != NULL && cell < cells; ++cell)
            same_text(w, "a text cell", et->texts[cell], gt->texts[cell]);
    }
}

static void release_tables(void *output)
{
    statgpu_table_set_destroy(output);
}

/* ----- the context itself ----- */

static statgpu_status call_context_create(const alloc_case *self, statgpu_context *context, void **output)
{
    (void)self;
    (void)context;
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = STATGPU_BACKEND_CPU;
    params.thread_count = 2;
    statgpu_context *made = (statgpu_context *)(uintptr_t)1;  /* must become NULL on failure */
    statgpu_status status = statgpu_context_create(&params, &made);
    if (status != STATGPU_OK) {
        assert_null(made);
        *output = NULL;
        return status;
    }
    statgpu_backend_report report;
    assert_int_equal(statgpu_context_backend_report(made, &report), STATGPU_OK);
    char text[256];
    assert_int_equal(statgpu_backend_describe(&report, text, sizeof text), STATGPU_OK);
    int *threads = unwatched_calloc(1, sizeof *threads);
    *threads = report.cpu_thread_count;
    statgpu_context_destroy(made);
    *output = threads;
    return status;
}

static void same_int(const alloc_case *self, const void *expected, const void *got)
{
    assert_same_bytes(self->name, "the value", expected, got, sizeof(int));
}

/* ----- the pool of helper threads, on a thread of its own each time ----- */

typedef struct pool_count {
    atomic_int runs[64];
} pool_count;

static void pool_block(void *context, size_t block, int slot)
{
    (void)slot;
    pool_count *count = context;
    atomic_fetch_add(&count->runs[block], 1);
}

static statgpu_status call_pool(const alloc_case *self, statgpu_context *context, void **output)
{
    (void)self;
    (void)context;
    pool_count *count = unwatched_calloc(1, sizeof *count);
    /* Twice: the second loop finds the pool as the first left it. */
    sg_parallel_for(4, 64, pool_block, count);
    sg_parallel_for(4, 64, pool_block, count);
    int *runs = unwatched_calloc(64, sizeof *runs);
    for (size_t b = 0; b < 64; ++b)
        runs[b] = atomic_load(&count->runs[b]);
    free(count);
    *output = runs;
    return STATGPU_OK;
}

static void same_runs(const alloc_case *self, const void *expected, const void *got)
{
    const int *runs = got;
    for (size_t b = 0; b < 64; ++b)
        if (runs[b] != 2)
            fail_msg("%s: block %zu ran %d times in two loops", self->name, b, runs[b]);
    assert_same_bytes(self->name, "the runs", expected, got, 64 * sizeof(int));
}

/* ----- the cases ----- */

static kmeans_input g_kmeans_plus_plus, g_kmeans_parallel, g_kmeans_given, g_kmeans_floats, g_kmeans_huge,
    g_kmeans_huge_given, g_kmeans_threads;
static lts_input g_lts, g_lts_lms, g_lts_squares, g_lts_floats, g_lts_large, g_lts_threads, g_lts_exact,
    g_lts_huge;
static gmm_input g_gmm_full, g_gmm_tied, g_gmm_diag, g_gmm_spherical, g_gmm_relative, g_gmm_floats,
    g_gmm_select, g_gmm_select_side, g_gmm_full_given, g_gmm_tied_given, g_gmm_threads;
static igmm_input g_igmm, g_igmm_given, g_igmm_threads, g_igmm_scaled, g_igmm_empty;
static bestsubset_input g_subset_press, g_subset_holdout, g_subset_kfold, g_subset_threads;
static tables_input g_tables_kmeans, g_tables_lts, g_tables_gmm, g_tables_gmm_one, g_tables_igmm,
    g_tables_igmm_empty, g_tables_bestsubset;
static select_input g_select_median, g_select_quantiles, g_select_radix, g_select_window,
    g_select_window_quantiles, g_select_sort, g_select_floats, g_select_scratch_window, g_select_scratch_radix,
    g_select_scratch_small, g_select_duplicates, g_select_threads, g_select_quantile;

#define SELECT_CASE(label, in, method, threads)                                                             \
    { .name = label, .thread_count = threads, .select_method = method, .own_thread = threads > 1,              \
      .call = call_select, .check_same = same_values, .release = free_output, .input = &in }
#define RESULT_CASE(label, kind, in, threads)                                                               \
    { .name = label, .thread_count = threads, .own_thread = threads > 1, .call = call_##kind,                  \
      .check_same = same_##kind, .release = release_##kind, .input = &in }
#define TABLES_CASE(label, in)                                                                              \
    { .name = label, .thread_count = 1, .call = call_tables, .check_same = same_tables,                        \
      .release = release_tables, .input = &in }

static alloc_case g_cases[] = {
    { .name = "context_create", .thread_count = 1, .no_context = true, .call = call_context_create,
      .check_same = same_int, .release = free_output },
    { .name = "parallel_loop", .thread_count = 1, .own_thread = true, .call = call_pool, .check_same = same_runs,
      .release = free_output },
    SELECT_CASE("median", g_select_median, STATGPU_SELECT_AUTO, 1),
    SELECT_CASE("quantile", g_select_quantile, STATGPU_SELECT_AUTO, 1),
    SELECT_CASE("quantiles", g_select_quantiles, STATGPU_SELECT_AUTO, 1),
    SELECT_CASE("kth_smallest_radix", g_select_radix, STATGPU_SELECT_RADIX, 1),
    SELECT_CASE("median_window", g_select_window, STATGPU_SELECT_AUTO, 1),
    SELECT_CASE("quantiles_window", g_select_window_quantiles, STATGPU_SELECT_CUTTING_PLANE, 1),
    SELECT_CASE("vector_select_sort", g_select_sort, STATGPU_SELECT_SORT, 1),
    SELECT_CASE("vector_select_float32", g_select_floats, STATGPU_SELECT_CUTTING_PLANE, 1),
    SELECT_CASE("vector_median_scratch", g_select_scratch_window, STATGPU_SELECT_AUTO, 1),
    SELECT_CASE("vector_select_scratch_radix", g_select_scratch_radix, STATGPU_SELECT_RADIX, 1),
    SELECT_CASE("vector_quantiles_scratch", g_select_scratch_small, STATGPU_SELECT_AUTO, 1),
    SELECT_CASE("median_duplicates", g_select_duplicates, STATGPU_SELECT_AUTO, 1),
    SELECT_CASE("median_threads", g_select_threads, STATGPU_SELECT_AUTO, 2),
    RESULT_CASE("kmeans", kmeans, g_kmeans_plus_plus, 1),
    RESULT_CASE("kmeans_parallel_init", kmeans, g_kmeans_parallel, 1),
    RESULT_CASE("kmeans_given", kmeans, g_kmeans_given, 1),
    RESULT_CASE("kmeans_matrix_float32", kmeans, g_kmeans_floats, 1),
    RESULT_CASE("kmeans_scaled_units", kmeans, g_kmeans_huge, 1),
    RESULT_CASE("kmeans_scaled_given", kmeans, g_kmeans_huge_given, 1),
    RESULT_CASE("kmeans_threads", kmeans, g_kmeans_threads, 2),
    RESULT_CASE("lts", lts, g_lts, 1),
    RESULT_CASE("lts_lms", lts, g_lts_lms, 1),
    RESULT_CASE("lts_alpha_1", lts, g_lts_squares, 1),
    RESULT_CASE("lts_matrix_float32", lts, g_lts_floats, 1),
    { .name = "lts_many_rows", .thread_count = 1, .call = call_lts, .check_same = same_lts, .release = release_lts,
      .input = &g_lts_large, .again_every = 8 },
    RESULT_CASE("lts_threads", lts, g_lts_threads, 2),
    RESULT_CASE("lts_exact_fit", lts, g_lts_exact, 1),
    RESULT_CASE("lts_scaled_units", lts, g_lts_huge, 1),
    RESULT_CASE("gmm_full", gmm, g_gmm_full, 1),
    RESULT_CASE("gmm_tied_random", gmm, g_gmm_tied, 1),
    RESULT_CASE("gmm_diag_plus_plus", gmm, g_gmm_diag, 1),
    RESULT_CASE("gmm_spherical_given", gmm, g_gmm_spherical, 1),
    RESULT_CASE("gmm_full_given", gmm, g_gmm_full_given, 1),
    RESULT_CASE("gmm_tied_given", gmm, g_gmm_tied_given, 1),
    RESULT_CASE("gmm_relative_scaled", gmm, g_gmm_relative, 1),
    RESULT_CASE("gmm_matrix_float32", gmm, g_gmm_floats, 1),
    RESULT_CASE("gmm_threads", gmm, g_gmm_threads, 2),
    RESULT_CASE("gmm_select", gmm, g_gmm_select, 1),
    RESULT_CASE("gmm_select_side_by_side", gmm, g_gmm_select_side, 2),
    RESULT_CASE("igmm", igmm, g_igmm, 1),
    RESULT_CASE("igmm_given", igmm, g_igmm_given, 1),
    RESULT_CASE("igmm_threads", igmm, g_igmm_threads, 2),
    RESULT_CASE("igmm_scaled_units", igmm, g_igmm_scaled, 1),
    RESULT_CASE("igmm_empty_sets", igmm, g_igmm_empty, 1),
    RESULT_CASE("bestsubset_press", bestsubset, g_subset_press, 1),
    RESULT_CASE("bestsubset_holdout", bestsubset, g_subset_holdout, 1),
    RESULT_CASE("bestsubset_kfold", bestsubset, g_subset_kfold, 1),
    RESULT_CASE("bestsubset_threads", bestsubset, g_subset_threads, 2),
    TABLES_CASE("kmeans_tables", g_tables_kmeans),
    TABLES_CASE("lts_tables", g_tables_lts),
    TABLES_CASE("gmm_tables", g_tables_gmm),
    TABLES_CASE("gmm_tables_one", g_tables_gmm_one),
    TABLES_CASE("igmm_tables", g_tables_igmm),
    TABLES_CASE("igmm_tables_empty_sets", g_tables_igmm_empty),
    TABLES_CASE("bestsubset_tables", g_tables_bestsubset),
};
#define CASE_COUNT (sizeof g_cases / sizeof *g_cases)

/* ----- making the inputs (unarmed) ----- */

static select_input select_of(const void *data, size_t count, statgpu_dtype dtype, statgpu_memory memory,
                              int function, size_t rank_count, const size_t *ranks, const double *p)
{
    select_input in = { { data, count, dtype, memory }, rank_count, ranks, p, function };
    return in;
}

#define N_OBS 90
#define N_LTS 60
/* From 65,536 rows LTS's C-steps share each fit's rows among the threads,
 * from 8192 its medians are taken in a sampled window, from 8000 its starts
 * run on subsamples. */
#define N_LARGE_LTS 65536
static double *g_clusters, *g_clusters_huge, *g_clusters_wide, *g_y, *g_x, *g_y_large, *g_x_large, *g_y_subset,
    *g_x_subset, *g_y_wide, *g_x_wide, *g_y_exact, *g_y_huge, *g_x_huge;
static float *g_clusters_floats, *g_x_floats;
static double *g_ig[IGMM_SETS], *g_ig_long[IGMM_SETS], *g_ig_huge;
static double g_given_centroids[3 * 2], g_given_centroids_huge[3 * 2];
static const double k_gmm_weights[2] = { 0.5, 0.5 };
static const double k_gmm_means[2 * 2] = { 0.0, 10.0, 0.0, 0.0 };
static const double k_gmm_precisions[2] = { 1.0, 1.0 };
static const double k_gmm_full_precisions[2 * 2 * 2] = { 1.0, 0.25, 0.25, 1.0, 2.0, 0.0, 0.0, 0.5 };
static const double k_ig_alpha[2] = { 0.6, 0.4 }, k_ig_mu[2] = { 1.0, 5.0 }, k_ig_lambda[2] = { 2.0, 10.0 };
static const size_t k_gmm_k_values[] = { 1, 2, 3 };
static const statgpu_gmm_covariance k_gmm_types[] = { STATGPU_GMM_FULL, STATGPU_GMM_DIAG };
static const char *const k_names[] = { "height", "weight", "age", "income", "score", "rank" };
static size_t g_row_map[N_OBS];
static statgpu_kmeans_result *g_kmeans_result;
static statgpu_lts_result *g_lts_result;
static statgpu_gmm_result *g_gmm_result, *g_gmm_one_result;
static statgpu_igmm_result *g_igmm_result, *g_igmm_empty_result;
static statgpu_bestsubset_result *g_bestsubset_result;

static void make_inputs(void)
{
    g_small = unwatched_calloc(SMALL_COUNT, sizeof *g_small);
    test_fill(g_small, SMALL_COUNT, PATTERN_NORMAL, 1);
    g_middle = unwatched_calloc(MIDDLE_COUNT, sizeof *g_middle);
    test_fill(g_middle, MIDDLE_COUNT, PATTERN_NORMAL, 2);
    g_middle_floats = unwatched_calloc(MIDDLE_COUNT, sizeof *g_middle_floats);
    for (size_t i = 0; i < MIDDLE_COUNT; ++i)
        g_middle_floats[i] = (float)g_middle[i];
    g_large = unwatched_calloc(LARGE_COUNT, sizeof *g_large);
    test_fill(g_large, LARGE_COUNT, PATTERN_NORMAL, 3);
    g_duplicates = unwatched_calloc(LARGE_COUNT, sizeof *g_duplicates);
    test_fill(g_duplicates, LARGE_COUNT, PATTERN_MANY_DUPLICATES, 4);
    g_huge = unwatched_calloc(HUGE_COUNT, sizeof *g_huge);
    test_fill(g_huge, HUGE_COUNT, PATTERN_UNIFORM, 5);

    const statgpu_dtype f64 = STATGPU_DTYPE_FLOAT64;
    const statgpu_memory host = STATGPU_MEMORY_HOST, scratch = STATGPU_MEMORY_HOST_SCRATCH;
    g_select_median = select_of(g_small, SMALL_COUNT, f64, host, CALL_MEDIAN, 1, NULL, NULL);
    g_select_quantile = select_of(g_small, SMALL_COUNT, f64, host, CALL_QUANTILE, 1, NULL, k_two_probabilities);
    g_select_quantiles = select_of(g_small, SMALL_COUNT, f64, host, CALL_QUANTILES, 5, NULL, k_probabilities);
    g_select_radix = select_of(g_large, LARGE_COUNT, f64, host, CALL_KTH_SMALLEST, 1, k_large_rank, NULL);
    g_select_window = select_of(g_large, LARGE_COUNT, f64, host, CALL_MEDIAN, 1, NULL, NULL);
    g_select_window_quantiles = select_of(g_middle, MIDDLE_COUNT, f64, host, CALL_QUANTILES, 2, NULL,
                                          k_two_probabilities);
    g_select_sort = select_of(g_middle, MIDDLE_COUNT, f64, host, CALL_VECTOR_SELECT, 3, k_ranks, NULL);
    g_select_floats = select_of(g_middle_floats, MIDDLE_COUNT, STATGPU_DTYPE_FLOAT32, host, CALL_VECTOR_SELECT, 3,
                                k_ranks, NULL);
    g_select_scratch_window = select_of(g_large, LARGE_COUNT, f64, scratch, CALL_VECTOR_MEDIAN, 1, NULL, NULL);
    g_select_scratch_radix = select_of(g_large, LARGE_COUNT, f64, scratch, CALL_VECTOR_SELECT, 3, k_ranks, NULL);
    g_select_scratch_small = select_of(g_small, SMALL_COUNT, f64, scratch, CALL_VECTOR_QUANTILES, 5, NULL,
                                       k_probabilities);
    g_select_duplicates = select_of(g_duplicates, LARGE_COUNT, f64, host, CALL_MEDIAN, 1, NULL, NULL);
    g_select_threads = select_of(g_huge, HUGE_COUNT, f64, host, CALL_VECTOR_MEDIAN, 1, NULL, NULL);

    /* k-means: three groups in two variables; eight in eight for the threads. */
    g_clusters = make_clusters(N_OBS, 2, 3, 1.0, 6);
    g_clusters_huge = make_clusters(N_OBS, 2, 3, 1e125, 6);
    g_clusters_floats = unwatched_calloc(N_OBS * 2, sizeof *g_clusters_floats);
    for (size_t i = 0; i < N_OBS * 2; ++i)
        g_clusters_floats[i] = (float)g_clusters[i];
    g_clusters_wide = make_clusters(4096, 8, 8, 1.0, 7);
    for (size_t j = 0; j < 3; ++j)
        for (size_t v = 0; v < 2; ++v) {
            g_given_centroids[j + 3 * v] = g_clusters[j + N_OBS * v] + 0.5;
            g_given_centroids_huge[j + 3 * v] = g_clusters_huge[j + N_OBS * v];
        }
    statgpu_kmeans_params kmeans;
    statgpu_kmeans_params_init(&kmeans);
    kmeans.restart_count = 2;
    g_kmeans_plus_plus = (kmeans_input){ g_clusters, N_OBS, 2, 3, kmeans, false, NULL };
    g_kmeans_huge = (kmeans_input){ g_clusters_huge, N_OBS, 2, 3, kmeans, false, NULL };
    g_kmeans_floats = (kmeans_input){ NULL, N_OBS, 2, 3, kmeans, true, g_clusters_floats };
    kmeans.init = STATGPU_KMEANS_INIT_PARALLEL;
    g_kmeans_parallel = (kmeans_input){ g_clusters, N_OBS, 2, 3, kmeans, false, NULL };
    kmeans.init = STATGPU_KMEANS_INIT_GIVEN;
    kmeans.initial_centroids = g_given_centroids;
    g_kmeans_given = (kmeans_input){ g_clusters, N_OBS, 2, 3, kmeans, false, NULL };
    kmeans.initial_centroids = g_given_centroids_huge;
    g_kmeans_huge_given = (kmeans_input){ g_clusters_huge, N_OBS, 2, 3, kmeans, false, NULL };
    statgpu_kmeans_params_init(&kmeans);
    kmeans.restart_count = 1;
    g_kmeans_threads = (kmeans_input){ g_clusters_wide, 4096, 8, 8, kmeans, false, NULL };

    /* LTS: two predictors, outliers; the subsampling stage from 8000 rows. */
    make_regression(N_LTS, 2, 8, &g_y, &g_x);
    g_x_floats = unwatched_calloc(N_LTS * 2, sizeof *g_x_floats);
    for (size_t i = 0; i < N_LTS * 2; ++i)
        g_x_floats[i] = (float)g_x[i];
    make_regression(N_LARGE_LTS, 1, 9, &g_y_large, &g_x_large);
    /* Two thirds of the rows exactly on a plane; the data times 1e130. */
    g_y_exact = unwatched_calloc(N_LTS, sizeof *g_y_exact);
    g_y_huge = unwatched_calloc(N_LTS, sizeof *g_y_huge);
    g_x_huge = unwatched_calloc(2 * N_LTS, sizeof *g_x_huge);
    for (size_t i = 0; i < N_LTS; ++i) {
        g_y_exact[i] = 1.0 + 2.0 * g_x[i] - g_x[i + N_LTS] + (i % 3 == 0 ? g_y[i] : 0.0);
        g_y_huge[i] = 1e130 * g_y[i];
        g_x_huge[i] = 1e130 * g_x[i];
        g_x_huge[i + N_LTS] = g_x[i + N_LTS];
    }    statgpu_lts_params lts;
    statgpu_lts_params_init(&lts);
    lts.start_count = 30;
    g_lts = (lts_input){ g_y, g_x, N_LTS, 2, lts, NULL };
    g_lts_floats = (lts_input){ g_y, NULL, N_LTS, 2, lts, g_x_floats };
    g_lts_threads = (lts_input){ g_y, g_x, N_LTS, 2, lts, NULL };
    g_lts_exact = (lts_input){ g_y_exact, g_x, N_LTS, 2, lts, NULL };
    g_lts_huge = (lts_input){ g_y_huge, g_x_huge, N_LTS, 2, lts, NULL };
    lts.start_count = 4;
    lts.best_count = 1;
    lts.max_steps = 1;
    g_lts_large = (lts_input){ g_y_large, g_x_large, N_LARGE_LTS, 1, lts, NULL };
    statgpu_lts_params_init(&lts);
    lts.start_count = 30;
    lts.criterion = STATGPU_LTS_MEDIAN;
    lts.intercept = 0;
    lts.alpha = 0.75;
    g_lts_lms = (lts_input){ g_y, g_x, N_LTS, 2, lts, NULL };
    statgpu_lts_params_init(&lts);
    lts.alpha = 1.0;
    g_lts_squares = (lts_input){ g_y, g_x, N_LTS, 2, lts, NULL };

    /* Gaussian mixtures on the k-means groups. */
    statgpu_gmm_params gmm;
    statgpu_gmm_params_init(&gmm);
    g_gmm_full = (gmm_input){ g_clusters, N_OBS, 2, 2, gmm, NULL, NULL, 0, NULL, 0 };
    g_gmm_floats = (gmm_input){ NULL, N_OBS, 2, 3, gmm, g_clusters_floats, NULL, 0, NULL, 0 };
    g_gmm_select = (gmm_input){ g_clusters, N_OBS, 2, 0, gmm, NULL, k_gmm_k_values, 3, k_gmm_types, 2 };
    g_gmm_select_side = g_gmm_select;
    gmm.max_iterations = 5;
    g_gmm_threads = (gmm_input){ g_clusters_wide, 4096, 8, 4, gmm, NULL, NULL, 0, NULL, 0 };
    gmm.max_iterations = 100;
    gmm.restart_count = 2;
    gmm.covariance = STATGPU_GMM_TIED;
    gmm.init = STATGPU_GMM_INIT_RANDOM;
    g_gmm_tied = (gmm_input){ g_clusters, N_OBS, 2, 3, gmm, NULL, NULL, 0, NULL, 0 };
    statgpu_gmm_params_init(&gmm);
    gmm.covariance = STATGPU_GMM_DIAG;
    gmm.init = STATGPU_GMM_INIT_PLUS_PLUS;
    g_gmm_diag = (gmm_input){ g_clusters, N_OBS, 2, 3, gmm, NULL, NULL, 0, NULL, 0 };
    gmm = test_gmm_given_start(STATGPU_GMM_SPHERICAL, k_gmm_weights, k_gmm_means, k_gmm_precisions);
    gmm.max_iterations = 20;
    g_gmm_spherical = (gmm_input){ g_clusters, N_OBS, 2, 2, gmm, NULL, NULL, 0, NULL, 0 };
    gmm.covariance = STATGPU_GMM_FULL;
    gmm.initial_precisions = k_gmm_full_precisions;
    g_gmm_full_given = (gmm_input){ g_clusters, N_OBS, 2, 2, gmm, NULL, NULL, 0, NULL, 0 };
    gmm.covariance = STATGPU_GMM_TIED;
    g_gmm_tied_given = (gmm_input){ g_clusters, N_OBS, 2, 2, gmm, NULL, NULL, 0, NULL, 0 };
    statgpu_gmm_params_init(&gmm);
    gmm.reg_covar_relative = 1;
    g_gmm_relative = (gmm_input){ g_clusters_huge, N_OBS, 2, 3, gmm, NULL, NULL, 0, NULL, 0 };

    /* Inverse Gaussian mixtures: four data sets, one of them unusable (a zero). */
    static const size_t lengths[IGMM_SETS] = { 40, 31, 25, 12 };
    for (size_t s = 0; s < IGMM_SETS; ++s) {
        g_ig[s] = make_inverse_gaussian(lengths[s], 20 + s);
        g_ig_long[s] = make_inverse_gaussian(100 * lengths[s], 30 + s);
    }
    g_ig[3][5] = 0.0;
    statgpu_igmm_params igmm;
    statgpu_igmm_params_init(&igmm);
    igmm.start_count = 3;
    igmm.keep_responsibilities = 1;
    g_igmm = (igmm_input){ { g_ig[0], g_ig[1], g_ig[2], g_ig[3] }, { 40, 31, 25, 12 }, IGMM_SETS, 2, igmm };
    igmm.keep_responsibilities = 0;
    igmm.start_count = 4;
    g_igmm_threads = (igmm_input){ { g_ig_long[0], g_ig_long[1], g_ig_long[2], g_ig_long[3] },
                                   { 4000, 3100, 2500, 1200 }, IGMM_SETS, 2, igmm };
    igmm.initial_alpha = k_ig_alpha;
    igmm.initial_mu = k_ig_mu;
    igmm.initial_lambda = k_ig_lambda;
    g_igmm_given = (igmm_input){ { g_ig[0], g_ig[1], g_ig[2] }, { 40, 31, 25 }, 3, 2, igmm };
    /* A data set near 1e200 (fitted scaled), and data sets of no values. */
    g_ig_huge = unwatched_calloc(lengths[0], sizeof *g_ig_huge);
    for (size_t i = 0; i < lengths[0]; ++i)
        g_ig_huge[i] = 1e200 * g_ig[0][i];
    statgpu_igmm_params_init(&igmm);
    igmm.start_count = 2;
    g_igmm_scaled = (igmm_input){ { g_ig[1], g_ig_huge }, { 31, 40 }, 2, 2, igmm };
    g_igmm_empty = (igmm_input){ { NULL, NULL }, { 0, 0 }, 2, 2, igmm };

    /* Best subsets of five predictors (the last a copy of the first: dropped),
     * and of eighteen for the threads. */
    make_regression(40, 5, 10, &g_y_subset, &g_x_subset);
    for (size_t i = 0; i < 40; ++i)
        g_x_subset[i + 40 * 4] = 2.0 * g_x_subset[i];
    make_regression(300, 18, 11, &g_y_wide, &g_x_wide);
    test_rng noise = { 12 };
    for (size_t i = 0; i < 300; ++i)  /* no predictor matters: the bounds cut little */
        g_y_wide[i] = test_rng_normal(&noise);
    statgpu_bestsubset_params subset;
    statgpu_bestsubset_params_init(&subset);
    g_subset_press = (bestsubset_input){ g_y_subset, g_x_subset, 40, 5, subset };
    g_subset_threads = (bestsubset_input){ g_y_wide, g_x_wide, 300, 18, subset };
    subset.validation = STATGPU_SUBSET_HOLDOUT;
    subset.nbest = 2;
    subset.criterion = STATGPU_SUBSET_BY_CP;
    g_subset_holdout = (bestsubset_input){ g_y_subset, g_x_subset, 40, 5, subset };
    statgpu_bestsubset_params_init(&subset);
    static const int8_t force[5] = { 1, 0, 0, -1, 0 };
    subset.validation = STATGPU_SUBSET_KFOLD;
    subset.fold_count = 3;
    subset.force = force;
    g_subset_kfold = (bestsubset_input){ g_y_subset, g_x_subset, 40, 5, subset };

    /* Results for the tables, made by clean calls; rows 0, 1 and 2 of every
     * 30 left out by the row map. */
    statgpu_context *context = make_context(&(alloc_case){ .thread_count = 1 });
    void *result = NULL;
    assert_int_equal(call_kmeans(&(alloc_case){ .input = &g_kmeans_plus_plus }, context, &result), STATGPU_OK);
    g_kmeans_result = result;
    assert_int_equal(call_lts(&(alloc_case){ .input = &g_lts }, context, &result), STATGPU_OK);
    g_lts_result = result;
    assert_int_equal(call_gmm(&(alloc_case){ .input = &g_gmm_select }, context, &result), STATGPU_OK);
    g_gmm_result = result;
    assert_int_equal(call_gmm(&(alloc_case){ .input = &g_gmm_full }, context, &result), STATGPU_OK);
    g_gmm_one_result = result;
    assert_int_equal(call_igmm(&(alloc_case){ .input = &g_igmm }, context, &result), STATGPU_OK);
    g_igmm_result = result;
    assert_int_equal(call_igmm(&(alloc_case){ .input = &g_igmm_empty }, context, &result), STATGPU_OK);
    g_igmm_empty_result = result;
    assert_int_equal(call_bestsubset(&(alloc_case){ .input = &g_subset_holdout }, context, &result), STATGPU_OK);
    g_bestsubset_result = result;
    statgpu_context_destroy(context);
    for (size_t i = 0; i < N_OBS; ++i)
        g_row_map[i] = i + 3 * (i / 27 + 1);
    statgpu_table_params table;
    statgpu_table_params_init(&table);
    table.variable_names = k_names;
    g_tables_kmeans = (tables_input){ TABLES_KMEANS, g_kmeans_result, table };
    g_tables_kmeans.params.source_rows = g_row_map;
    g_tables_kmeans.params.source_row_count = g_row_map[N_OBS - 1] + 2;
    g_tables_lts = (tables_input){ TABLES_LTS, g_lts_result, table };
    g_tables_gmm = (tables_input){ TABLES_GMM, g_gmm_result, table };
    g_tables_igmm = (tables_input){ TABLES_IGMM, g_igmm_result, table };
    g_tables_igmm_empty = (tables_input){ TABLES_IGMM, g_igmm_empty_result, table };
    g_tables_bestsubset = (tables_input){ TABLES_BESTSUBSET, g_bestsubset_result, table };
    table.variable_names = NULL;
    table.table_name = "Covariances ";
    g_tables_gmm_one = (tables_input){ TABLES_GMM, g_gmm_one_result, table };
}

static void free_inputs(void)
{
    statgpu_kmeans_result_destroy(g_kmeans_result);
    statgpu_lts_result_destroy(g_lts_result);
    statgpu_gmm_result_destroy(g_gmm_result);
    statgpu_gmm_result_destroy(g_gmm_one_result);
    statgpu_igmm_result_destroy(g_igmm_result);
    statgpu_igmm_result_destroy(g_igmm_empty_result);
    statgpu_bestsubset_result_destroy(g_bestsubset_result);
    double *arrays[] = { g_small, g_middle, g_large, g_duplicates, g_huge, g_clusters, g_clusters_huge,
                         g_clusters_wide, g_y, g_x, g_y_large, g_x_large, g_y_subset, g_x_subset, g_y_wide, g_x_wide,
                         g_y_exact, g_y_huge, g_x_huge, g_ig_huge };
    for (size_t a = 0; a < sizeof arrays / sizeof *arrays; ++a)
        free(arrays[a]);
    for (size_t s = 0; s < IGMM_SETS; ++s) {
        free(g_ig[s]);
        free(g_ig_long[s]);
    }
    free(g_middle_floats);
    free(g_clusters_floats);
    free(g_x_floats);
}

int main(void)
{
    g_trace = getenv("STATGPU_TEST_ALLOC_TRACE") != NULL;
    const char *only = getenv("STATGPU_TEST_ALLOC_CASE");
    if (only != NULL && only[0] != '\0')
        cmocka_set_test_filter(only);
    make_inputs();
    struct CMUnitTest tests[CASE_COUNT];
    for (size_t c = 0; c < CASE_COUNT; ++c)
        tests[c] = (struct CMUnitTest){ g_cases[c].name, test_case, NULL, NULL, &g_cases[c] };
    int failures = cmocka_run_group_tests(tests, NULL, NULL);
    free_inputs();
    return failures;
}
