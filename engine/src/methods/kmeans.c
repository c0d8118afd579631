/*
 * kmeans.c: the public k-means function: validation, the checks of the data
 * (finite, not so large that squared distances overflow), the backend choice,
 * the restarts and the result object. The passes over the data are in
 * kmeans_cpu.c; Lloyd's iterations also run on the CUDA backend (the
 * module's kmeans_lloyd), with the initialisation always on the CPU.
 */
#include "internal.h"
#include "core/matrix.h"
#include "core/units.h"
#include "core/threads.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under STATGPU_KMEANS_INIT_AUTO, from this many observations k-means|| takes
 * over from k-means++: its ~6 passes over the data replace k-means++'s 2k,
 * which dominate once the data no longer fit in the cache. */
#define SG_KMEANS_PARALLEL_MIN_OBS ((size_t)100000)

/* Under STATGPU_BACKEND_AUTO, Lloyd's iterations run on the GPU from this
 * much work per iteration (n_obs x n_vars x k): below it the copy to the
 * device and the per-iteration launches cost more than the CPU's pass. At
 * 2000 x 4, k = 4 (32,000), 20 iterations, the GPU's whole call took 0.88 ms
 * and the CPU's 1.27 on 16 threads (bench/NOTES.md, "AUTO"); scaled by
 * dispatch.h for more threads. */
#define SG_KMEANS_AUTO_CUDA_MIN_WORK 16384.0

#define SG_KMEANS_PARAMS_MIN_BYTES (offsetof(statgpu_kmeans_params, seed) + sizeof(uint64_t))

void statgpu_kmeans_params_init(statgpu_kmeans_params *params)
{
    if (params == NULL)
        return;
    memset(params, 0, sizeof *params);
    params->struct_bytes   = sizeof *params;
    /* Ten runs: k-means has local minima, and the best of ten k-means++ starts
     * finds the global one on well-separated data nearly always (ten was
     * scikit-learn's n_init for years); each run costs as much as the first. */
    params->restart_count  = 10;
    params->max_iterations = 300;
    params->tolerance      = 1e-4;
    params->init           = STATGPU_KMEANS_INIT_AUTO;
}

void statgpu_kmeans_result_destroy(statgpu_kmeans_result *result)
{
    if (result == NULL)
        return;
    free(result->centroids);
    free(result->labels);
    free(result->cluster_sizes);
    free(result->within_ss);
    free(result);
}

/* A result with its arrays, or NULL. */
static statgpu_kmeans_result *sg_kmeans_result_create(size_t n_obs, size_t n_vars, size_t k)
{
    statgpu_kmeans_result *result = calloc(1, sizeof *result);
    if (result == NULL)
        return NULL;
    result->k = k;
    result->n_obs = n_obs;
    result->n_vars = n_vars;
    result->centroids = malloc(k * n_vars * sizeof *result->centroids);
    result->labels = malloc(n_obs * sizeof *result->labels);
    result->cluster_sizes = malloc(k * sizeof *result->cluster_sizes);
    result->within_ss = malloc(k * sizeof *result->within_ss);
    if (!result->centroids || !result->labels || !result->cluster_sizes || !result->within_ss) {
        statgpu_kmeans_result_destroy(result);
        return NULL;
    }
    return result;
}

static sg_kmeans_run sg_run_of(statgpu_kmeans_result *result)
{
    sg_kmeans_run run = { result->centroids, result->labels, result->cluster_sizes, result->within_ss,
                          0.0, 0, 0, 0 };
    return run;
}

static statgpu_status sg_check_kmeans_arguments(statgpu_context *context, const double *data, size_t n_obs,
                                                size_t n_vars, size_t ld, size_t k,
                                                const statgpu_kmeans_params *params)
{
    if (data == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "data is NULL");
    if (n_obs == 0)
        return sg_fail(context, STATGPU_ERROR_EMPTY_INPUT, "the data hold no observations");
    if (n_vars == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the data hold no variables");
    if (ld < n_obs)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "the leading dimension %zu is less than the %zu observations", ld, n_obs);
    if (n_vars > SIZE_MAX / sizeof(double) / ld)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the data are larger than memory can address");
    if (k == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "k = 0: at least one cluster is needed");
    if (k > n_obs)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "k = %zu is more than the %zu observations",
                       k, n_obs);
    if (k > INT32_MAX || n_obs > SIZE_MAX / sizeof(double) / 2)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "k = %zu is too large", k);
    if (params->restart_count == 0 && params->init != STATGPU_KMEANS_INIT_GIVEN)  /* given: one run, not used */
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "restart_count is 0: at least one run is needed");
    if (params->restart_count > STATGPU_KMEANS_MAX_RESTART_COUNT)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "restart_count = %zu is more than the %u runs a call may ask for",
                       params->restart_count, STATGPU_KMEANS_MAX_RESTART_COUNT);
    if (params->max_iterations == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "max_iterations is 0");
    if (!(params->tolerance >= 0.0 && params->tolerance <= DBL_MAX))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the tolerance %.17g is not a finite number >= 0",
                       params->tolerance);
    if (params->init < STATGPU_KMEANS_INIT_AUTO || params->init > STATGPU_KMEANS_INIT_GIVEN)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "unknown initialisation %d", (int)params->init);
    if (params->init == STATGPU_KMEANS_INIT_GIVEN && params->initial_centroids == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "STATGPU_KMEANS_INIT_GIVEN needs initial_centroids");
    return STATGPU_OK;
}

/* Squared distances and their sums stay finite when every magnitude is below
 * this: a squared distance is at most n_vars (2 max)^2, and up to n_obs of
 * them are added, with a factor 2 to spare. */
static double sg_magnitude_limit(size_t n_obs, size_t n_vars)
{
    return sqrt(DBL_MAX / (8.0 * (double)n_obs * (double)n_vars));
}

static statgpu_status sg_check_data(statgpu_context *context, const sg_kmeans_problem *problem,
                                    sg_kmeans_workspace *workspace, sg_kmeans_scan *scan)
{
    sg_cpu_kmeans_scan(problem, workspace, scan);
    if (!scan->finite) {
        double value = problem->data[scan->bad_row + problem->ld * scan->bad_var];
        if (scan->first_bad_is_nan)
            return sg_fail(context, STATGPU_ERROR_NAN_IN_DATA,
                           "the data contain NaN (observation %zu, variable %zu)", scan->bad_row + 1,
                           scan->bad_var + 1);
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "the data contain %s (observation %zu, variable %zu); k-means needs finite numbers",
                       value > 0 ? "+Inf" : "-Inf", scan->bad_row + 1, scan->bad_var + 1);
    }
    /* Data far from ordinary size are scaled before the runs (and checked
     * again); the limit is for the data the runs see. */
    double limit = sg_magnitude_limit(problem->n_obs, problem->n_vars);
    if (scan->max_abs > limit && sg_units_exponent(scan->max_abs) == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "the data hold %g, and squared distances could overflow above %.3g at this size; "
                       "rescale the data", scan->max_abs, limit);
    return STATGPU_OK;
}

static statgpu_status sg_check_given_centroids(statgpu_context *context, const double *centroids, size_t k,
                                               size_t n_vars, double limit)
{
    for (size_t v = 0; v < n_vars; ++v)
        for (size_t j = 0; j < k; ++j) {
            double value = centroids[j + k * v];
            if (!(fabs(value) <= limit))
                return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                               "initial centroid %zu, variable %zu is %g: not finite, or too large", j + 1,
                               v + 1, value);
        }
    return STATGPU_OK;
}

/* Points problem (and chosen's initial centroids, if given) at copies of
 * the data times 2^unit_exponent; the copies are the caller's to free. */
static statgpu_status sg_kmeans_scale_units(statgpu_context *context, sg_kmeans_problem *problem,
                                            statgpu_kmeans_params *chosen, int unit_exponent, double **data,
                                            double **centroids)
{
    size_t n_obs = problem->n_obs, n_vars = problem->n_vars, k = problem->k;
    *data = malloc(n_obs * n_vars * sizeof **data);
    if (chosen->init == STATGPU_KMEANS_INIT_GIVEN)
        *centroids = malloc(k * n_vars * sizeof **centroids);
    if (*data == NULL || (chosen->init == STATGPU_KMEANS_INIT_GIVEN && *centroids == NULL))
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY,
                       "could not allocate k-means work space for %zu x %zu data and k = %zu", n_obs, n_vars, k);
    for (size_t v = 0; v < n_vars; ++v)
        for (size_t i = 0; i < n_obs; ++i)
            (*data)[i + n_obs * v] = ldexp(problem->data[i + problem->ld * v], unit_exponent);
    problem->data = *data;
    problem->ld = n_obs;
    if (chosen->init == STATGPU_KMEANS_INIT_GIVEN) {
        for (size_t c = 0; c < k * n_vars; ++c)
            (*centroids)[c] = ldexp(chosen->initial_centroids[c], unit_exponent);
        chosen->initial_centroids = *centroids;
    }
    return STATGPU_OK;
}

/* The message for a failed run. */
static statgpu_status sg_run_failed(statgpu_context *context, statgpu_status status, size_t k)
{
    switch (status) {
    case STATGPU_ERROR_INVALID_ARGUMENT:
        return sg_fail(context, status, "the data have fewer than k = %zu distinct rows", k);
    case STATGPU_ERROR_CANCELLED:
        return sg_fail(context, status, "cancelled");
    case STATGPU_ERROR_OUT_OF_MEMORY:
        return sg_fail(context, status, "could not allocate work space for k-means");
    default:
        return sg_fail(context, STATGPU_ERROR_INTERNAL, "k-means failed: %s", statgpu_status_string(status));
    }
}

/* What the runs of one call share. session is NULL on the CPU. */
typedef struct sg_kmeans_runs {
    const sg_kmeans_problem     *problem;
    sg_kmeans_workspace         *workspace;
    const statgpu_kmeans_params *params;
    statgpu_kmeans_init          init;
    size_t                       run_count;
    double                       absolute_tolerance;
    statgpu_cuda_kmeans_session *session;
    statgpu_cuda_timing          timing;
    char                         message[256];  /* why CUDA failed */
} sg_kmeans_runs;

/* The runs, each from its own initial centroids; the one of least inertia
 * ends in *best. STATGPU_ERROR_BACKEND when the CUDA backend failed (the
 * reason in runs->message); any other failure is the run's status. */
static statgpu_status sg_kmeans_make_runs(statgpu_context *context, sg_kmeans_runs *runs,
                                          statgpu_kmeans_result **best, statgpu_kmeans_result **trial)
{
    const sg_kmeans_problem *problem = runs->problem;
    const size_t k = problem->k;
    for (size_t r = 0; r < runs->run_count; ++r) {
        sg_kmeans_progress progress = { context, r, runs->run_count };
        statgpu_status status = STATGPU_OK;
        statgpu_kmeans_result *result = *trial;
        if (runs->init == STATGPU_KMEANS_INIT_GIVEN)
            memcpy(result->centroids, runs->params->initial_centroids, k * problem->n_vars * sizeof *result->centroids);
        else {
            uint64_t stream = sg_kmeans_stream(context->params.seed, runs->params->seed, r);
            status = runs->init == STATGPU_KMEANS_INIT_PARALLEL
                         ? sg_cpu_kmeans_parallel(problem, runs->workspace, stream, &progress, result->centroids)
                         : sg_cpu_kmeans_plus_plus(problem, runs->workspace, stream, &progress, result->centroids);
        }
        sg_kmeans_run run = sg_run_of(result);
        if (status == STATGPU_OK && runs->session != NULL) {
            statgpu_cuda_status cuda_status = sg_cuda_kmeans_lloyd(runs->session, runs->params->max_iterations,
                                                                   runs->absolute_tolerance, &progress, &run,
                                                                   &runs->timing, runs->message,
                                                                   sizeof runs->message);
            if (cuda_status == STATGPU_CUDA_CANCELLED)
                status = STATGPU_ERROR_CANCELLED;
            else if (cuda_status == STATGPU_CUDA_INVALID_ARGUMENT)  /* an empty cluster could not be re-seeded */
                status = STATGPU_ERROR_INVALID_ARGUMENT;
            else if (cuda_status != STATGPU_CUDA_OK)
                status = STATGPU_ERROR_BACKEND;
        } else if (status == STATGPU_OK) {
            status = sg_cpu_kmeans_lloyd(problem, runs->workspace, runs->params->max_iterations,
                                         runs->absolute_tolerance, &progress, &run);
        }
        if (status != STATGPU_OK)
            return status;
        result->inertia = run.inertia;
        result->iterations = run.iterations;
        result->converged = run.converged ? 1 : 0;
        result->reseed_count = run.reseed_count;
        result->best_restart = r;
        if (r == 0 || result->inertia < (*best)->inertia) {
            *trial = *best;
            *best = result;
        }
    }
    return STATGPU_OK;
}

statgpu_status statgpu_kmeans(statgpu_context *context, const double *data, size_t n_obs, size_t n_vars,
                              size_t ld, size_t k, const statgpu_kmeans_params *params,
                              statgpu_kmeans_result **out_result)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_result is NULL");
    *out_result = NULL;

    statgpu_kmeans_params chosen;
    statgpu_kmeans_params_init(&chosen);
    if (params != NULL) {
        /* A caller built against an older, shorter struct passes its own size;
         * fields it does not know keep their defaults. */
        if (params->struct_bytes < SG_KMEANS_PARAMS_MIN_BYTES || params->struct_bytes > sizeof chosen)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "params->struct_bytes is %zu; call statgpu_kmeans_params_init first",
                           params->struct_bytes);
        memcpy(&chosen, params, params->struct_bytes);
        chosen.struct_bytes = sizeof chosen;
    }
    statgpu_status status = sg_check_kmeans_arguments(context, data, n_obs, n_vars, ld, k, &chosen);
    if (status != STATGPU_OK)
        return status;

    /* Rows go in blocks of up to 1024 (kmeans_cpu.c); an assignment pass costs
     * about n_obs x n_vars x k operations. */
    int threads = sg_threads_for(context->cpu_thread_count, (n_obs + 1023) / 1024,
                                 (double)n_obs * (double)n_vars * (double)k);
    sg_kmeans_problem problem = { data, n_obs, n_vars, ld, k, threads };
    sg_kmeans_runs runs;
    memset(&runs, 0, sizeof runs);
    double *scaled_data = NULL, *scaled_centroids = NULL;  /* the data in the units the runs use */
    sg_kmeans_workspace *workspace = sg_cpu_kmeans_workspace_create(&problem);
    statgpu_kmeans_result *best = sg_kmeans_result_create(n_obs, n_vars, k);
    statgpu_kmeans_result *trial = sg_kmeans_result_create(n_obs, n_vars, k);
    if (workspace == NULL || best == NULL || trial == NULL) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY,
                         "could not allocate k-means work space for %zu x %zu data and k = %zu", n_obs, n_vars, k);
        goto done;
    }

    sg_kmeans_scan scan;
    status = sg_check_data(context, &problem, workspace, &scan);
    /* Squared distances leave the range of a double long before the data do:
     * data far from ordinary size run as data times 2^unit_exponent, one
     * factor for every variable so that distances keep their proportions
     * (core/units.h). */
    int unit_exponent = status == STATGPU_OK ? sg_units_exponent(scan.max_abs) : 0;
    if (unit_exponent != 0) {
        status = sg_kmeans_scale_units(context, &problem, &chosen, unit_exponent, &scaled_data, &scaled_centroids);
        if (status == STATGPU_OK)
            status = sg_check_data(context, &problem, workspace, &scan);
    }
    /* The total sum of squares in the data's units is a result: where it is
     * beyond the doubles the call fails before any run, with that reason
     * (runs on data near the largest double had failed first, saying the
     * data had fewer than k distinct rows). */
    if (status == STATGPU_OK && unit_exponent != 0 && isinf(ldexp(scan.total_ss, -2 * unit_exponent)))
        status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                         "the total sum of squares is larger than the largest double in the data's units "
                         "(the data hold %g); divide the data by a power of ten",
                         ldexp(scan.max_abs, -unit_exponent));
    if (status == STATGPU_OK && chosen.init == STATGPU_KMEANS_INIT_GIVEN)
        status = sg_check_given_centroids(context, chosen.initial_centroids, k, n_vars,
                                          sg_magnitude_limit(n_obs, n_vars));
    if (status != STATGPU_OK)
        goto done;

    statgpu_kmeans_init init = chosen.init;
    if (init == STATGPU_KMEANS_INIT_AUTO)
        init = n_obs >= SG_KMEANS_PARALLEL_MIN_OBS ? STATGPU_KMEANS_INIT_PARALLEL : STATGPU_KMEANS_INIT_PLUS_PLUS;
    runs.problem = &problem;
    runs.workspace = workspace;
    runs.params = &chosen;
    runs.init = init;
    runs.run_count = init == STATGPU_KMEANS_INIT_GIVEN ? 1 : chosen.restart_count;
    runs.absolute_tolerance = chosen.tolerance * scan.mean_variance;

    /* The backend: CUDA where wanted and usable, else the CPU; a CUDA failure
     * (no device, out of device memory, any CUDA error) runs the whole call
     * again on the CPU and the report's note says why. */
    /* Lloyd's iterations go to the GPU where the dispatch rule says (the
     * work of an assignment pass is about n_obs x n_vars x k); a CUDA failure
     * during the runs runs them all again on the CPU. */
    sg_dispatch_begin(context);
    bool on_cuda = false;
    double work = (double)problem.n_obs * (double)problem.n_vars * (double)problem.k;
    if (sg_dispatch_wants_cuda_above(context, work, SG_KMEANS_AUTO_CUDA_MIN_WORK, false)) {
        statgpu_cuda_status cuda_status = STATGPU_CUDA_NO_DEVICE;
        if (sg_dispatch_cuda_ready(context, runs.message, sizeof runs.message))
            cuda_status = sg_cuda_kmeans_begin(context, &problem, &runs.session, &runs.timing, runs.message,
                                               sizeof runs.message);
        on_cuda = cuda_status == STATGPU_CUDA_OK;
        if (!on_cuda)
            sg_dispatch_note_cpu(context, cuda_status, runs.message, "k-means");
    }
    status = sg_kmeans_make_runs(context, &runs, &best, &trial);
    sg_cuda_kmeans_end(runs.session);
    runs.session = NULL;
    if (status == STATGPU_ERROR_BACKEND) {
        sg_dispatch_note_cpu(context, STATGPU_CUDA_ERROR, runs.message, "k-means");
        on_cuda = false;
        status = sg_kmeans_make_runs(context, &runs, &best, &trial);
    }
    if (status != STATGPU_OK) {
        status = sg_run_failed(context, status, k);
        goto done;
    }
    if (!isfinite(best->inertia)) {  /* the magnitude limit rules this out */
        status = sg_fail(context, STATGPU_ERROR_INTERNAL, "k-means produced a non-finite inertia");
        goto done;
    }
    best->total_ss = scan.total_ss;
    best->between_share = scan.total_ss > 0.0 ? 1.0 - best->inertia / scan.total_ss : 0.0;
    if (unit_exponent != 0) {
        /* Back to the data's units: centroids in them, sums of squares in their square. */
        sg_units_scale(best->centroids, k * n_vars, -unit_exponent);
        sg_units_scale(best->within_ss, k, -unit_exponent * 2);
        best->inertia = ldexp(best->inertia, -2 * unit_exponent);
        best->total_ss = ldexp(best->total_ss, -2 * unit_exponent);  /* finite: checked before the runs */
    }
    best->restart_count = runs.run_count;
    best->init = init;
    sg_dispatch_ran(context, on_cuda ? STATGPU_BACKEND_CUDA : STATGPU_BACKEND_CPU, runs.timing.transfer_seconds,
                    runs.timing.compute_seconds);
    *out_result = best;
    best = NULL;
    status = sg_succeed(context);

done:
    statgpu_kmeans_result_destroy(best);
    statgpu_kmeans_result_destroy(trial);
    sg_cpu_kmeans_workspace_destroy(workspace);
    free(scaled_data);
    free(scaled_centroids);
    return status;
}

statgpu_status statgpu_kmeans_matrix(statgpu_context *context, const statgpu_matrix *data, size_t k,
                                     const statgpu_kmeans_params *params, statgpu_kmeans_result **out_result)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_result is NULL");
    *out_result = NULL;
    sg_host_doubles host;
    statgpu_status status = sg_matrix_host_doubles(context, data, "data", &host);
    if (status != STATGPU_OK)
        return status;
    status = statgpu_kmeans(context, host.data, data->rows, data->cols, host.ld, k, params, out_result);
    free(host.owned);
    return status;
}
