/*
 * internal.h: what the engine's source files share and the public header
 * does not show: the context's layout, error reporting, backend dispatch and
 * the CPU kernels' entry points.
 */
#ifndef STATGPU_INTERNAL_H
#define STATGPU_INTERNAL_H

#include "statgpu.h"
#include "backend/cuda_module.h"

#include <stdbool.h>

#define SG_MESSAGE_BYTES 512

struct statgpu_context {
    statgpu_context_params params;
    int                    cpu_thread_count;  /* resolved: never 0 */
    char                   last_error[SG_MESSAGE_BYTES];
    statgpu_backend        last_used;
    double                 last_transfer_seconds;  /* of the last CUDA call */
    double                 last_compute_seconds;
    char                   note[256];         /* why the last call fell back, else "" */

    /* CUDA, set up lazily by sg_cuda_ensure(). */
    bool                     cuda_probed;
    statgpu_cuda_state      *cuda_state;      /* NULL when CUDA is unavailable */
    statgpu_cuda_device_info cuda_info;
    char                     cuda_unavailable[256];
};

/* Records a failure on the context and returns status. The message is
 * printf-formatted. */
statgpu_status sg_fail(statgpu_context *context, statgpu_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Records a success: clears the last error. Returns STATGPU_OK. */
statgpu_status sg_succeed(statgpu_context *context);

/* Asks the progress callback, if any; returns true when the caller cancelled. */
bool sg_progress_cancelled(statgpu_context *context, double fraction_done);

/* ----- CUDA backend (backend/cuda_loader.c) ----- */

/* The process-wide module table, loaded once; NULL when unavailable, with the
 * reason in *reason (static storage). */
const statgpu_cuda_module_i *sg_cuda_module(const char **reason);

/* Probes CUDA for this context once: loads the module and creates the device
 * state. Returns true when the context can run on CUDA. */
bool sg_cuda_ensure(statgpu_context *context);

/* Releases the context's device state. */
void sg_cuda_release(statgpu_context *context);

/* Order statistics on the context's device (methods/order_statistics_cuda.c;
 * sg_cuda_ensure() must have succeeded): ranks ascending and distinct. */
statgpu_cuda_status sg_cuda_select(statgpu_context *context, const statgpu_vector *data,
                                   const size_t *ranks, size_t rank_count, double *results,
                                   char *message, size_t message_bytes);

/* ----- which backend runs a call (backend/dispatch.c) ----- */

#include "backend/dispatch.h"

/* ----- random streams (k-means and LTS) ----- */

static inline uint64_t sg_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

#define SG_GOLDEN 0x9E3779B97F4A7C15ull

/* splitmix64: a sequential stream, enough for the few draws of an initialisation. */
typedef struct sg_rng { uint64_t state; } sg_rng;

static inline uint64_t sg_rng_next(sg_rng *rng) { return sg_mix64(rng->state += SG_GOLDEN); }

/* Uniform on 0 .. bound-1, without bias (Lemire's multiply and reject). */
static inline size_t sg_rng_below(sg_rng *rng, size_t bound)
{
    uint64_t n = (uint64_t)bound;
    unsigned __int128 product = (unsigned __int128)sg_rng_next(rng) * n;
    uint64_t low = (uint64_t)product;
    if (low < n) {
        uint64_t threshold = (0 - n) % n;
        while (low < threshold) {
            product = (unsigned __int128)sg_rng_next(rng) * n;
            low = (uint64_t)product;
        }
    }
    return (size_t)(product >> 64);
}

/* The seed of independent stream `index` of a call, from the context's and
 * the call's seeds; `salt` keeps the streams of different methods apart. */
static inline uint64_t sg_derive_stream(uint64_t context_seed, uint64_t call_seed, uint64_t salt, size_t index)
{
    uint64_t base = sg_mix64(context_seed + SG_GOLDEN) ^ sg_mix64(call_seed ^ salt);
    return sg_mix64(base + ((uint64_t)index + 1) * SG_GOLDEN);
}

/* ----- CPU order statistics (cpu_select.c) ----- */

/* IEEE total-order keys: a < b as doubles (with -0.0 < +0.0) iff key(a) < key(b). */
static inline uint64_t sg_key_from_double(double value)
{
    uint64_t bits;
    __builtin_memcpy(&bits, &value, sizeof bits);
    return (bits & 0x8000000000000000ull) ? ~bits : (bits | 0x8000000000000000ull);
}

static inline double sg_double_from_key(uint64_t key)
{
    uint64_t bits = (key & 0x8000000000000000ull) ? (key & ~0x8000000000000000ull) : ~key;
    double value;
    __builtin_memcpy(&value, &bits, sizeof value);
    return value;
}

/* True when any element of the host array is NaN. */
bool sg_cpu_has_nan(const void *data, statgpu_dtype dtype, size_t data_count, int thread_count);

/* results[j] = the ranks[j]-th smallest (1-based) of a host array, ranks
 * ascending, distinct and within [1, data_count]. The CPU has radix select
 * (RADIX), introselect and a full sort (SORT); AUTO and CUTTING_PLANE choose
 * between the first two by size. Returns STATGPU_OK or
 * STATGPU_ERROR_OUT_OF_MEMORY. */
statgpu_status sg_cpu_select_ranks(const void *data, statgpu_dtype dtype, size_t data_count,
                                   const size_t *ranks, size_t rank_count, statgpu_select_method method,
                                   double *results, int thread_count);

/* As sg_cpu_select_ranks for float64 data the caller gives up: the data
 * become their keys in place and are selected there (no copy of them is
 * made; a radix select still copies the shrinking candidates, at most half
 * the data). The data's contents are unspecified afterwards. */
statgpu_status sg_cpu_select_ranks_in_place(double *data, size_t data_count, const size_t *ranks, size_t rank_count,
                                            statgpu_select_method method, double *results, int thread_count);

/* ----- CPU k-means (kmeans_cpu.c) ----- */

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
 * rows; STATGPU_ERROR_OUT_OF_MEMORY. */
statgpu_status sg_cpu_kmeans_plus_plus(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                                       uint64_t stream, double *centroids);
statgpu_status sg_cpu_kmeans_parallel(const sg_kmeans_problem *problem, sg_kmeans_workspace *workspace,
                                      uint64_t stream, double *centroids);

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

/* ----- least trimmed squares (lts.c drives, lts_cpu.c and the CUDA module
 * evaluate) ----- */

/* The standardised problem the C-steps see: x is n x p column-major with
 * leading dimension n (the intercept's column of ones first when there is
 * one), y has n values. */
typedef struct sg_lts_problem {
    const double *x, *y;
    size_t        n, p;
    int           thread_count;
} sg_lts_problem;

/* The C-step primitive, the same on both backends: for each of m coefficient
 * vectors (column j at coef + p*j)
 *   r_i = y_i - sum_v x[i + n*v] coef[v + p*j]  for every row i,
 *   H_j = the h rows of smallest r_i^2: those below the h-th smallest, then
 *         those equal to it in row order until there are h,
 *   kth[j]       = the h-th smallest r_i^2,
 *   objective[j] = sum over H_j of r_i^2,
 *   gram         = X_H^T X_H, p x p, full, at gram + p*p*j,
 *   xty          = X_H^T y_H, p values at xty + p*j.
 * An output pointer that is NULL is not computed. 1 <= h <= n.
 * Returns STATGPU_OK or STATGPU_ERROR_OUT_OF_MEMORY. */
statgpu_status sg_cpu_lts_csteps(const sg_lts_problem *problem, size_t h, const double *coef, size_t m,
                                 double *kth, double *objective, double *gram, double *xty);

#endif /* STATGPU_INTERNAL_H */
