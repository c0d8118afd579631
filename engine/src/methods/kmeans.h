/*
 * kmeans.h: k-means' CPU passes (kmeans_cpu.c) and its calls into the CUDA
 * module (kmeans_cuda.c), driven by kmeans.c.
 */
#ifndef STATGPU_METHODS_KMEANS_H
#define STATGPU_METHODS_KMEANS_H

#include "core/context.h"

#include <stdbool.h>
#include <stdint.h>

/* The data of a k-means call as the CPU passes read them. */
typedef struct sg_kmeans_problem {
    const double *data;          /* n_obs x n_vars, column-major, leading dimension ld */
    size_t        n_obs, n_vars, ld, k;
    int           thread_count;
} sg_kmeans_problem;

/* Per-block partial sums and the other scratch of one call. Rows are cut into
 * blocks that depend on (n_obs, n_vars, k) only, never on the thread count. */
typedef struct sg_kmeans_workspace sg_kmeans_workspace;

/* What a scan of the data found. */
typedef struct sg_kmeans_scan {
    bool   finite;           /* no NaN or infinity */
    bool   first_bad_is_nan; /* the first non-finite value (lowest row, then variable) is NaN */
    size_t bad_row, bad_var; /* where that value is, 0-based */
    double max_abs;          /* the largest magnitude */
    double total_ss;         /* sum over variables of squared deviations from their means */
    double mean_variance;    /* mean over variables of total_ss_v / n_obs */
} sg_kmeans_scan;

/* One Lloyd run. centroids holds the initial centroids on entry and the
 * final ones on return; the arrays belong to the caller. */
typedef statgpu_cuda_kmeans_run sg_kmeans_run;  /* one struct for the CPU and the CUDA module */

/* Cancellation between iterations: run r of run_count asks the context's
 * progress callback once per iteration. */
typedef struct sg_kmeans_progress {
    statgpu_context *context;
    size_t           run, run_count;
} sg_kmeans_progress;

/* NULL when out of memory. */
sg_kmeans_workspace *sg_cpu_kmeans_workspace_create(const sg_kmeans_problem *problem);
void sg_cpu_kmeans_workspace_destroy(sg_kmeans_workspace *workspace);

/* The random stream of run `run` (0-based) from the context's seed and the
 * call's seed. */
uint64_t sg_kmeans_stream(uint64_t context_seed, uint64_t call_seed, size_t run);

void sg_cpu_kmeans_scan(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                        sg_kmeans_scan *scan);

/* Initial centroids (k x n_vars, leading dimension k) from the stream.
 * STATGPU_ERROR_INVALID_ARGUMENT when the data have fewer than k distinct
 * rows; STATGPU_ERROR_OUT_OF_MEMORY; STATGPU_ERROR_CANCELLED when progress
 * (NULL: none) asked to stop, polled at most every 0.1 s between seeds. */
statgpu_status sg_cpu_kmeans_plus_plus(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                                       uint64_t stream, const sg_kmeans_progress *progress, double *centroids);
statgpu_status sg_cpu_kmeans_parallel(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                                      uint64_t stream, const sg_kmeans_progress *progress, double *centroids);

/* Lloyd iterations from run->centroids. absolute_tolerance bounds the sum of
 * squared centroid moves. STATGPU_ERROR_INVALID_ARGUMENT when an empty
 * cluster cannot be re-seeded (fewer than k distinct rows),
 * STATGPU_ERROR_CANCELLED, STATGPU_ERROR_OUT_OF_MEMORY. */
statgpu_status sg_cpu_kmeans_lloyd(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                                   size_t max_iterations, double absolute_tolerance,
                                   const sg_kmeans_progress *progress, sg_kmeans_run *run);

/* ----- k-means on the CUDA backend (methods/kmeans_cuda.c; sg_cuda_ensure() must
 * have succeeded). Timings are added to *timing. ----- */

/* Copies the problem's data to the device for the runs that follow. */
statgpu_cuda_status sg_cuda_kmeans_begin(statgpu_context *context, const sg_kmeans_problem *problem,
                                         statgpu_cuda_kmeans_session **session, statgpu_cuda_timing *timing,
                                         char *message, size_t message_bytes);

/* sg_cpu_kmeans_lloyd's run on the device; the progress callback is asked
 * once per iteration. */
statgpu_cuda_status sg_cuda_kmeans_lloyd(statgpu_cuda_kmeans_session *session, size_t max_iterations,
                                         double absolute_tolerance, const sg_kmeans_progress *progress,
                                         sg_kmeans_run *run, statgpu_cuda_timing *timing, char *message,
                                         size_t message_bytes);

/* NULL is a no-op. */
void sg_cuda_kmeans_end(statgpu_cuda_kmeans_session *session);

#endif
