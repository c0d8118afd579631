/*
 * statgpu.h: the whole public interface of the statgpu engine.
 *
 * The engine computes statistics on caller-owned arrays of doubles. It runs on
 * the CPU (threads) or, when a CUDA GPU, its driver and the CUDA backend module
 * are present, on the GPU. Every function returns a status; none aborts, prints
 * or keeps hidden state beyond a once-initialised backend table.
 *
 * Objects
 *   statgpu_context   one per thread of use. Holds the backend choice, device,
 *                     thread count, RNG seed, progress callback, the message of
 *                     the last failed call and the report of the backend that
 *                     ran the last call. Created by statgpu_context_create(),
 *                     destroyed by statgpu_context_destroy() (NULL is a no-op).
 *
 * Conventions
 *   - Pointer parameters are inputs unless marked out. Inputs are never
 *     modified and remain owned by the caller.
 *   - Sizes name their unit: _count is a number of elements, _bytes of bytes.
 *   - Ranks (k) are 1-based, as in Calc's SMALL and LARGE.
 *   - Results are reproducible: the same input on the same backend gives the
 *     same bits. Order statistics are exact, so the CPU and CUDA backends
 *     return identical bits too.
 *
 * Ordering of doubles
 *   Order statistics use IEEE 754 total order restricted to non-NaN values:
 *   -Inf < negative numbers < -0.0 < +0.0 < positive numbers < +Inf. Any NaN in
 *   the data is rejected with STATGPU_ERROR_NAN_IN_DATA, never silently ordered.
 */
#ifndef STATGPU_H
#define STATGPU_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define STATGPU_API __declspec(dllimport)
#elif defined(__GNUC__)
#  define STATGPU_API __attribute__((visibility("default")))
#else
#  define STATGPU_API
#endif

/* ===== Version ============================================================ */

#define STATGPU_VERSION_MAJOR 0
#define STATGPU_VERSION_MINOR 1
#define STATGPU_VERSION_PATCH 0
#define STATGPU_VERSION_NUMBER \
    (STATGPU_VERSION_MAJOR * 10000 + STATGPU_VERSION_MINOR * 100 + STATGPU_VERSION_PATCH)
#define STATGPU_VERSION_STRING "0.1.0"

/* The version of the engine actually loaded; compare with STATGPU_VERSION_NUMBER
 * to detect a caller built against another engine. */
STATGPU_API unsigned    statgpu_version_number(void);
STATGPU_API const char *statgpu_version_string(void);

/* ===== Status codes ======================================================= */

/* Values are fixed forever; new codes are only appended. */
typedef enum statgpu_status {
    STATGPU_OK                     = 0,  /* success */
    STATGPU_ERROR_INVALID_ARGUMENT = 1,  /* NULL pointer, size or rank out of range, p outside [0,1] */
    STATGPU_ERROR_EMPTY_INPUT      = 2,  /* no observations */
    STATGPU_ERROR_NAN_IN_DATA      = 3,  /* a NaN in the data */
    STATGPU_ERROR_OUT_OF_MEMORY    = 4,  /* a host allocation failed */
    STATGPU_ERROR_NO_CONVERGENCE   = 5,  /* an iterative method did not converge */
    STATGPU_ERROR_CANCELLED        = 6,  /* the progress callback asked to stop */
    STATGPU_ERROR_BACKEND          = 7,  /* a backend failed and no fallback could run the call */
    STATGPU_ERROR_INTERNAL         = 8   /* a broken invariant: a bug in statgpu */
} statgpu_status;

/* A short English description of a status; never NULL, static storage. */
STATGPU_API const char *statgpu_status_string(statgpu_status status);

/* ===== Context ============================================================ */

typedef enum statgpu_backend {
    STATGPU_BACKEND_AUTO = 0,  /* CUDA when available, else CPU */
    STATGPU_BACKEND_CPU  = 1,
    STATGPU_BACKEND_CUDA = 2   /* CUDA; falls back to the CPU (and says so) when unavailable */
} statgpu_backend;

/* Called now and then during long computations with the fraction done in
 * [0,1]. Return non-zero to cancel: the call then returns STATGPU_ERROR_CANCELLED. */
typedef int (*statgpu_progress_fn)(void *user_data, double fraction_done);

/* How order statistics are selected. Every method is exact; they differ in
 * speed only. AUTO picks per size, type and backend from measurements. The
 * CPU backend has radix select, introselect and a full sort; there AUTO and
 * CUTTING_PLANE choose between the first two by size. */
typedef enum statgpu_select_method {
    STATGPU_SELECT_AUTO          = 0,
    STATGPU_SELECT_CUTTING_PLANE = 1,  /* Beliakov: Kelley's cutting planes, then sort the interval */
    STATGPU_SELECT_RADIX         = 2,  /* digit histograms over order-preserving bit patterns */
    STATGPU_SELECT_SORT          = 3   /* a full sort: the baseline */
} statgpu_select_method;

/* The most CPU threads a context may ask for: more would only oversubscribe
 * the cores, and thousands of threads can end the host process. */
#define STATGPU_MAX_THREAD_COUNT 1024

typedef struct statgpu_context_params {
    size_t              struct_bytes;  /* sizeof(statgpu_context_params); set by _init */
    statgpu_backend     backend;       /* default STATGPU_BACKEND_AUTO */
    int                 device;        /* CUDA device index; default 0 */
    int                 thread_count;  /* CPU threads, 0 .. STATGPU_MAX_THREAD_COUNT; 0 (default):
                                          OMP_NUM_THREADS where set, else the processors of
                                          the process's CPU affinity. A call uses fewer
                                          where its work is small (one thread per block of
                                          rows at most, one for tiny problems); results are
                                          the same bits at any count */
    uint64_t            seed;          /* RNG seed for randomised methods; default 0 */
    statgpu_progress_fn progress;      /* optional, default NULL */
    void               *progress_user_data;
    /* --- since 0.1: fields are only ever appended --- */
    statgpu_select_method select_method;  /* default STATGPU_SELECT_AUTO */
} statgpu_context_params;

typedef struct statgpu_context statgpu_context;

/* Fills params with the defaults. Always call it first: fields added later
 * then get their defaults too. */
STATGPU_API void statgpu_context_params_init(statgpu_context_params *params /* out */);

/* Creates a context. params may be NULL for the defaults. The CUDA backend is
 * loaded lazily, at the first call that may use it. */
STATGPU_API statgpu_status statgpu_context_create(const statgpu_context_params *params,
                                                  statgpu_context **out_context /* out */);

/* Destroys a context and everything it owns. NULL is a harmless no-op. */
STATGPU_API void statgpu_context_destroy(statgpu_context *context);

/* The message of the last call on this context that failed, or "" when the
 * last call succeeded. Owned by the context, valid until its next call. */
STATGPU_API const char *statgpu_context_last_error(const statgpu_context *context);

/* ===== Backend report ===================================================== */

typedef struct statgpu_backend_report {
    statgpu_backend requested;            /* what the context asked for */
    statgpu_backend last_used;            /* CPU or CUDA: the backend that ran the
                                             last successful call; AUTO before any */
    int             cuda_available;       /* 1 when the CUDA backend can run */
    int             cuda_device;          /* device index in use */
    int             cuda_runtime_version; /* e.g. 13000 for 13.0; 0 when unknown */
    int             cuda_driver_version;  /* likewise */
    int             cpu_thread_count;     /* threads the CPU backend uses */
    char            device_name[128];     /* GPU name, or "" */
    char            note[256];            /* why CUDA is unavailable, or why the last
                                             call fell back to the CPU; else "" */
    double          last_transfer_seconds;  /* host-to-device copy of the last CUDA call */
    double          last_compute_seconds;   /* device work of the last CUDA call */
} statgpu_backend_report;

/* Fills report. Loads and probes the CUDA backend if the context may use it
 * and has not yet done so. */
STATGPU_API statgpu_status statgpu_context_backend_report(statgpu_context *context,
                                                          statgpu_backend_report *report /* out */);

/* A one-line description of a report for people (Calc's GPUINFO shows it),
 * such as "CUDA: NVIDIA H100 80GB HBM3 (runtime 13.0, driver 13.0)" or
 * "CPU: 16 threads (CUDA not available: no CUDA driver)". Writes at most
 * text_bytes bytes, NUL included, truncating where needed. */
STATGPU_API statgpu_status statgpu_backend_describe(const statgpu_backend_report *report,
                                                    char *text /* out */, size_t text_bytes);

/* The name of a backend: "auto", "cpu" or "cuda". */
STATGPU_API const char *statgpu_backend_name(statgpu_backend backend);

/* ===== Vectors ============================================================ */

typedef enum statgpu_dtype {
    STATGPU_DTYPE_FLOAT64 = 0,
    STATGPU_DTYPE_FLOAT32 = 1
} statgpu_dtype;

typedef enum statgpu_memory {
    STATGPU_MEMORY_HOST         = 0,  /* ordinary (or pinned) host memory */
    STATGPU_MEMORY_CUDA_DEVICE  = 1,  /* memory of the context's CUDA device (cudaMalloc) */
    STATGPU_MEMORY_HOST_SCRATCH = 2   /* host memory of float64 data that the caller gives up for
                                         the call: the CPU backend selects in it instead of in a
                                         copy (data must be writable; their contents afterwards
                                         are unspecified). Float32 data are read as HOST. */
} statgpu_memory;

/* A read-only array of numbers, described, not owned. Data in device memory
 * are computed on that device only: where the context cannot run CUDA, such a
 * call fails with STATGPU_ERROR_BACKEND instead of falling back. The engine
 * reads device data after work queued on the legacy default stream (as
 * PyTorch and CuPy use by default) has finished; data produced on another
 * stream must be synchronised by the caller first. */
typedef struct statgpu_vector {
    const void    *data;   /* count elements of dtype */
    size_t         count;
    statgpu_dtype  dtype;
    statgpu_memory memory;
} statgpu_vector;

/* A matrix of numbers, described, not owned: rows x cols, column-major with
 * a leading dimension (row i, column j at element i + ld*j, ld >= rows),
 * float64 or float32, in host or device memory. The matrix methods take one
 * (statgpu_kmeans_matrix, statgpu_lts_matrix): float32 values are widened to
 * double exactly, and data in device memory are read there (copied to the
 * host where the call runs on the CPU; a context that cannot run CUDA fails
 * with STATGPU_ERROR_BACKEND, as for device vectors). HOST_SCRATCH is read
 * as HOST: the matrix methods never write their data. */
typedef struct statgpu_matrix {
    const void    *data;   /* element (i, j) at i + ld*j, in dtype */
    size_t         rows;
    size_t         cols;
    size_t         ld;
    statgpu_dtype  dtype;
    statgpu_memory memory;
} statgpu_matrix;

/* ===== Order statistics =================================================== */

/* Backend: data in device memory run on CUDA. Host data run on CUDA when the
 * context asks for it, and under AUTO from 2^15 values (more on machines
 * with more than 16 threads); from 2^20 values of host data AUTO chooses by
 * measurement on the context: its first calls of each power of two of the
 * count, element type and rank count (one or two, or more) run on CUDA and
 * the CPU in turn, three on each, later ones on the backend whose recent
 * calls took less (the median of its last five), the other tried again now
 * and then. The backend report's note says when and why a call ran on the
 * CPU. Results are the same bits on either backend. */

/* Order statistics of a vector: results[j] = the ranks[j]-th smallest
 * (1-based; any order, repeats allowed) for j < rank_count. Floats are
 * returned exactly, widened to double. */
STATGPU_API statgpu_status statgpu_vector_select(statgpu_context *context, const statgpu_vector *data,
                                                 const size_t *ranks, size_t rank_count,
                                                 double *results /* out, rank_count */);

/* As statgpu_median and statgpu_quantiles, for a vector. */
STATGPU_API statgpu_status statgpu_vector_median(statgpu_context *context, const statgpu_vector *data,
                                                 double *result /* out */);
STATGPU_API statgpu_status statgpu_vector_quantiles(statgpu_context *context, const statgpu_vector *data,
                                                    const double *p, size_t p_count,
                                                    double *results /* out, p_count */);

/* The functions below take host doubles; they are statgpu_vector_* calls on
 * {data, data_count, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST}. */

/* The k-th smallest of data[0 .. data_count-1], 1 <= k <= data_count. */
STATGPU_API statgpu_status statgpu_kth_smallest(statgpu_context *context,
                                                const double *data, size_t data_count,
                                                size_t k, double *result /* out */);

/* The median exactly as Calc's MEDIAN: the middle value for odd counts, the
 * mean of the two middle values for even counts (computed as (a+b)/2, or as
 * a/2+b/2 where a+b would overflow). */
STATGPU_API statgpu_status statgpu_median(statgpu_context *context,
                                          const double *data, size_t data_count,
                                          double *result /* out */);

/* The p-quantile exactly as Calc's PERCENTILE.INC (R's type 7): with
 * h = p*(n-1), i = floor(h) taken after rounding h to 15 significant digits as
 * Calc does, the result is x(i) + (h-i)*(x(i+1)-x(i)) on the sorted data
 * (0-based). 0 <= p <= 1. */
STATGPU_API statgpu_status statgpu_quantile(statgpu_context *context,
                                            const double *data, size_t data_count,
                                            double p, double *result /* out */);

/* Many quantiles in one call, sharing the work over the data:
 * results[j] = quantile of p[j], for j < p_count. results has room for
 * p_count doubles. Every p must lie in [0,1]. */
STATGPU_API statgpu_status statgpu_quantiles(statgpu_context *context,
                                             const double *data, size_t data_count,
                                             const double *p, size_t p_count,
                                             double *results /* out, p_count */);

/* ===== k-means clustering ================================================= */

/* Lloyd's algorithm on the rows of a matrix: observations in rows, variables
 * in columns, column-major with a leading dimension (observation i, variable
 * v at data[i + ld*v], ld >= n_obs).
 *
 * A call makes restart_count runs and keeps the one of lowest inertia (the
 * earlier on a tie). A run chooses k initial centroids, then iterates: assign
 * every observation to its nearest centroid, move every centroid to the mean
 * of its observations. It stops when an assignment changes no label, when the
 * centroids moved by at most the tolerance, or after max_iterations. The
 * arithmetic is scikit-learn's KMeans(algorithm="lloyd") and R's
 * kmeans(algorithm="Lloyd"):
 *   - distances are squared Euclidean, summed over the variables in order; an
 *     observation equally near two centroids goes to the lower-numbered one;
 *   - the tolerance is scikit-learn's: a run has converged when the squared
 *     distances the centroids moved in one iteration sum to at most
 *     tolerance x (the mean over the variables of their variances, divided
 *     by n_obs as numpy.var does);
 *   - iterations counts assignment passes, as scikit-learn's n_iter_ and R's
 *     iter (for a run that converged);
 *   - labels are always each observation's nearest centroid: a run that
 *     stops on the tolerance or at max_iterations gets one more assignment
 *     pass, as in scikit-learn;
 *   - a cluster left empty by an assignment is re-seeded with the
 *     observation farthest from its centroid, taken from a cluster that keeps
 *     at least one other (the lowest-numbered on a tie); the centroids are
 *     then the means of the new clusters. A cluster can end empty (size 0,
 *     centroid where it was) only in a run that stopped before its labels
 *     settled. No output is ever NaN.
 *
 * The data need k distinct rows: with fewer, the call fails with
 * STATGPU_ERROR_INVALID_ARGUMENT, as R's kmeans stops with "more cluster
 * centers than distinct data points". NaN gives STATGPU_ERROR_NAN_IN_DATA;
 * an infinity, or numbers so large that squared distances could overflow
 * (beyond about sqrt(DBL_MAX / (8 n_obs n_vars))), STATGPU_ERROR_INVALID_ARGUMENT.
 *
 * Reproducibility: the same data, k, params and context seed give the same
 * bits, whatever the thread count: sums run over fixed blocks of rows that
 * depend only on the problem's size, and blocks are added in a fixed order.
 * Up to 1024 rows form one block, summed in row order, as R sums.
 *
 * Backend: the initialisation (k-means++, k-means||) always runs on the CPU;
 * Lloyd's iterations run on the GPU when the context asks for CUDA, or under
 * AUTO when n_obs x n_vars x k >= 16384 (scaled up on machines with more
 * than 16 threads), and on the CPU otherwise. The GPU computes distances
 * in double (sums of fused multiply-adds of the differences; from 32
 * centroids the |x|^2 - 2 x.c + |c|^2 expansion on the tensor cores picks a
 * row's centroid only where a rigorous bound on both forms' rounding shows
 * the difference form picks the same), keeps each
 * cluster's coordinate sums as exact 128-bit integers (each value on a
 * fixed grid per variable: at 10^7 rows exact for values from 2^-51 times
 * the variable's largest up, within half a step below; a centroid is its sum
 * rounded once, divided by the size), and adds the within sums of squares
 * in a fixed order, with no floating-point atomics: the same data, k,
 * params and context seed give the same bits run after run, on any GPU with
 * at least 96 KiB of shared memory per block. GPU and CPU results agree to rounding
 * (centroids and inertia to about 1e-12 relative); labels, and through them
 * iterations, can differ only where an observation is within rounding of
 * equally near two centroids. The report's last_transfer_seconds and
 * last_compute_seconds are the device's (CUDA events). Where CUDA is missing
 * or fails, the call runs on the CPU and the report's note says why. */

typedef enum statgpu_kmeans_init {
    STATGPU_KMEANS_INIT_AUTO      = 0,  /* k-means++ below 100000 observations, k-means|| from there */
    STATGPU_KMEANS_INIT_PLUS_PLUS = 1,  /* greedy k-means++ as scikit-learn's: of 2 + floor(ln k)
                                           candidates drawn by D^2 weighting, the one that lowers
                                           the potential most becomes the next centroid */
    STATGPU_KMEANS_INIT_PARALLEL  = 2,  /* k-means|| (Bahmani et al. 2012): 5 rounds (more while
                                           fewer than k candidates), oversampling 2k, candidates
                                           weighted by the observations nearest to them, then
                                           reclustered by weighted k-means++ and Lloyd. It reads
                                           the data about 6 times where k-means++ reads them 2k times */
    STATGPU_KMEANS_INIT_GIVEN     = 3   /* the caller's initial_centroids; one run, restart_count
                                           is not used (as in R and scikit-learn) */
} statgpu_kmeans_init;

/* The most runs a call may ask for (restart_count); scikit-learn's default is
 * 10 and Calc's KMEANS allows 1000. */
#define STATGPU_KMEANS_MAX_RESTART_COUNT 1000000u

typedef struct statgpu_kmeans_params {
    size_t              struct_bytes;      /* sizeof(statgpu_kmeans_params); set by _init */
    size_t              restart_count;     /* runs from different initial centroids, 1 ..
                                              STATGPU_KMEANS_MAX_RESTART_COUNT; default 10 */
    size_t              max_iterations;    /* per run; default 300 (scikit-learn's) */
    double              tolerance;         /* relative, as scikit-learn's tol; default 1e-4;
                                              0 stops only when no label changes (R's rule) */
    statgpu_kmeans_init init;              /* default STATGPU_KMEANS_INIT_AUTO */
    const double       *initial_centroids; /* with INIT_GIVEN: k x n_vars, column-major, leading
                                              dimension k (the layout of the result's centroids);
                                              finite; read during the call only */
    uint64_t            seed;              /* mixed with the context's seed into the random
                                              streams of the runs; default 0 */
    /* --- fields are only ever appended --- */
} statgpu_kmeans_params;

/* The outcome of statgpu_kmeans: read its fields; owned by the caller, freed
 * by statgpu_kmeans_result_destroy. Fields are only ever appended. */
typedef struct statgpu_kmeans_result {
    size_t   k;
    size_t   n_obs;
    size_t   n_vars;
    double  *centroids;           /* k x n_vars, column-major, leading dimension k: cluster j,
                                     variable v at centroids[j + k*v] */
    int32_t *labels;              /* n_obs cluster numbers, 0-based: 0 .. k-1 (Calc shows them
                                     1-based) */
    size_t  *cluster_sizes;       /* k observation counts */
    double  *within_ss;           /* k sums of squared distances of observations to their centroid */
    double   inertia;             /* sum over observations of the squared distance to their
                                     centroid: R's tot.withinss, scikit-learn's inertia_ */
    double   total_ss;            /* sum of squared deviations from the overall mean (R's totss);
                                     1 - inertia/total_ss is the share the clusters explain */
    size_t   iterations;          /* Lloyd iterations of the winning run */
    int      converged;           /* 1 when the winning run stopped on no label change or the
                                     tolerance, 0 when max_iterations ended it */
    size_t   best_restart;        /* 0-based index of the winning run */
    size_t   restart_count;       /* runs made */
    size_t   reseed_count;        /* empty clusters re-seeded during the winning run */
    statgpu_kmeans_init init;     /* the initialisation the runs used (never AUTO) */
    /* --- appended --- */
    double   between_share;       /* 1 - inertia/total_ss, the share of the variation the clusters
                                     explain (0 when total_ss is 0), computed before inertia and
                                     total_ss are scaled back to the data's units, where data far
                                     from ordinary size may round them to 0 */
} statgpu_kmeans_result;

/* Fills params with the defaults. Always call it first: fields added later
 * then get their defaults too. */
STATGPU_API void statgpu_kmeans_params_init(statgpu_kmeans_params *params /* out */);

/* k-means clustering of the n_obs rows of data into k clusters,
 * 1 <= k <= n_obs, k <= INT32_MAX. params may be NULL for the defaults. On
 * success *out_result is a new result (destroy it); on failure it is NULL and
 * statgpu_context_last_error says why. The progress callback is called once
 * per iteration; cancelling returns STATGPU_ERROR_CANCELLED. */
STATGPU_API statgpu_status statgpu_kmeans(statgpu_context *context,
                                          const double *data, size_t n_obs, size_t n_vars, size_t ld,
                                          size_t k, const statgpu_kmeans_params *params,
                                          statgpu_kmeans_result **out_result /* out */);

/* As statgpu_kmeans, for a matrix of any element type and memory
 * (statgpu_matrix): observations in its rows, variables in its columns. The
 * same data give the same bits as through statgpu_kmeans. */
STATGPU_API statgpu_status statgpu_kmeans_matrix(statgpu_context *context, const statgpu_matrix *data, size_t k,
                                                 const statgpu_kmeans_params *params,
                                                 statgpu_kmeans_result **out_result /* out */);

/* Frees a result and its arrays. NULL is a harmless no-op. */
STATGPU_API void statgpu_kmeans_result_destroy(statgpu_kmeans_result *result);

/* ===== least trimmed squares regression ==================================== */

/* Robust linear regression by least trimmed squares (LTS): the coefficients
 * that minimise the sum of the h smallest squared residuals, found by
 * FAST-LTS (Rousseeuw & Van Driessen 2006), with the outputs of R's
 * robustbase::ltsReg. Least median of squares (LMS: minimise the h-th
 * smallest squared residual) is an option.
 *
 * The response y has n_obs values; the predictors x are n_obs x n_vars,
 * column-major with leading dimension ld >= n_obs (row i, predictor v at
 * x[i + ld*v]). With an intercept the model has p = n_vars + 1
 * coefficients, intercept first; without, p = n_vars.
 *
 * h = floor((n + p + 1) / 2) at alpha = 0.5, and robustbase's
 * h.alpha.n(alpha, n, p) = floor(2 n2 - n + 2 (n - n2) alpha),
 * n2 = floor((n + p + 1) / 2), for alpha in (0.5, 1].
 *
 * The search: start_count random elemental subsets (p rows each; a singular
 * one is replaced by another draw) give exact fits; each gets two
 * concentration steps (C-steps: refit by least squares on the h rows of
 * smallest squared residual); the best_count best are iterated until the
 * h-subset no longer changes (the objective stops falling) or max_steps.
 * The h-subset is found from the h-th smallest squared residual (an order
 * statistic, not a sort): the rows below it, then rows equal to it in row
 * order until there are h. Each C-step never raises the objective. Every
 * elemental subset is a start (result->exhaustive) where ltsReg lists them
 * all (n <= 500, 50, 22, 17, 15, 14 for p = 1 .. 6) or where they number at
 * most start_count. On the CPU, from 8000 rows, the starts' two C-steps run
 * on a random working subsample of 4000 rows, the best_count best are
 * iterated on one of min(n, 20000) rows and the best two of those on all the rows;
 * on the CUDA backend every step uses all the rows. The search runs on
 * standardised data (centred on medians, divided by median absolute
 * deviations; without an intercept only divided); every output is in the
 * data's own units.
 *
 * The raw fit (LTS) is the least squares fit (Householder QR) of the best
 * h-subset, as ltsReg refits it; objective is the sum of its h smallest
 * squared residuals in the data's units (robustbase's crit is the same sum
 * on the scale its Fortran standardises y to: crit x (mad(y))^2 with R's
 * mad). The reweighting step is robustbase's: the raw scale is
 * sqrt(objective / h) times a consistency factor and a small-sample
 * correction factor (LTScnp2); rows with |residual / raw scale| <=
 * qnorm(0.9875) get raw weight 1, the rest 0; the reweighted coefficients
 * are the least squares fit on the raw weight-1 rows, its scale
 * sqrt(sum w r^2 / (sum w - 1)) times a consistency factor and LTScnp2.rew
 * (both 1 when every row has weight 1); the final weights are
 * |residual / scale| <= qnorm(0.9875) for the reweighted fit. The factors
 * reported are those applied: robustbase applies the raw consistency factor
 * too but leaves raw.cnp2[1] at 1.
 *
 * alpha = 1 is least squares, as in ltsReg: h = n, the raw scale
 * sqrt(RSS / (n - p)), no small-sample factors.
 *
 * LMS: the elemental fits and the C-step fits are scored by the h-th
 * smallest squared residual and the best kept; the raw coefficients are that
 * fit itself (no refit), objective is its h-th smallest squared residual,
 * the raw scale sqrt(objective) / qnorm((n + h) / 2n) x (1 + 5 / (n - p))
 * (Rousseeuw and Leroy's LMS scale, at h), and the reweighting as for LTS
 * without the small-sample factor.
 *
 * Exact fit: when the raw scale is below 1e-7 times the response's robust
 * scale (at least h rows lie on one hyperplane) the raw coefficients are
 * that hyperplane, both scales are 0, the coefficients equal the raw ones,
 * result->exact_fit is 1 and the weights mark the rows within that tolerance
 * of it (robustbase's "exact fit" case, whose tolerance is 1e-7 absolute).
 *
 * Bad input: NaN in y or x gives STATGPU_ERROR_NAN_IN_DATA (callers drop
 * rows with missing values first); an infinity, n_obs <= 2 p (ltsReg's
 * "need more than twice as many observations as variables"), alpha outside
 * [0.5, 1], no coefficient at all, a predictor constant beside the
 * intercept, predictors collinear on all rows, or values so far from the
 * others (beyond 1e100 robust scales) that squares could overflow:
 * STATGPU_ERROR_INVALID_ARGUMENT with a message that names the problem. A
 * constant predictor without an intercept is allowed (it acts as one). A
 * fit on rows whose predictors are dependent (a subset where a dummy
 * variable is all zero) gives the dependent coefficients 0, where R gives
 * NA. No output is ever NaN.
 *
 * Reproducibility: the same data, params and context seed give the same
 * bits on the same backend, at any thread count. The CUDA backend computes
 * residuals and the h-subsets' cross products in double on the GPU; the
 * small p x p solves run on the CPU. Under STATGPU_BACKEND_AUTO the GPU is
 * used from 2000 rows (more on machines with more than 16 threads); where
 * CUDA cannot run or fails, the CPU does the work and the backend report's
 * note says why. */

typedef enum statgpu_lts_criterion {
    STATGPU_LTS_SQUARES = 0,  /* least trimmed squares (default) */
    STATGPU_LTS_MEDIAN  = 1   /* least median of squares: the h-th smallest squared residual */
} statgpu_lts_criterion;

/* The most random starts a call may ask for (start_count): far beyond any
 * useful search (ltsReg's default is 500), and a bound that keeps every size
 * the search derives from it representable. best_count may be anything >= 1:
 * a search carries at most start_count candidates, so a larger best_count
 * is the same search as best_count = start_count. max_steps may be anything
 * >= 1 (SIZE_MAX: until the h-subset no longer changes). */
#define STATGPU_LTS_MAX_START_COUNT 100000000u

typedef struct statgpu_lts_params {
    size_t                struct_bytes;   /* sizeof(statgpu_lts_params); set by _init */
    double                alpha;          /* share of rows the fit must explain, [0.5, 1]; default 0.5 */
    int                   intercept;      /* 1 (default): a column of ones comes first */
    statgpu_lts_criterion criterion;      /* default STATGPU_LTS_SQUARES */
    size_t                start_count;    /* random elemental starts, >= 1; default 500 (ltsReg's nsamp) */
    size_t                best_count;     /* starts iterated to convergence, >= 1; default 10 */
    size_t                max_steps;      /* C-steps per candidate and stage at most, >= 1; default 100 */
    uint64_t              seed;           /* mixed with the context's seed; default 0 */
    /* --- fields are only ever appended --- */
} statgpu_lts_params;

/* The outcome of statgpu_lts: owned by the caller, freed by
 * statgpu_lts_result_destroy. Fields are only ever appended. */
typedef struct statgpu_lts_result {
    size_t   n_obs, n_vars;
    size_t   p;                        /* coefficients: n_vars + intercept */
    int      intercept;
    statgpu_lts_criterion criterion;
    size_t   h;                        /* robustbase's quan */
    double   alpha;
    double  *raw_coefficients;         /* p, intercept first: robustbase's raw.coefficients */
    double   raw_scale;                /* raw.scale */
    double   raw_consistency_factor;   /* the factor applied (robustbase reports raw.cnp2[1] = 1) */
    double   raw_correction_factor;    /* raw.cnp2[2] */
    double  *coefficients;             /* p, the reweighted fit: coefficients */
    double   scale;                    /* scale */
    double   consistency_factor;       /* cnp2[1] */
    double   correction_factor;        /* cnp2[2] */
    double   objective;                /* LTS the sum of the h smallest squared residuals of the raw
                                          fit, in the data's units (robustbase's crit x mad(y)^2);
                                          LMS the h-th smallest */
    int32_t *raw_weights;              /* n_obs 0/1: |raw.resid| <= qnorm(0.9875) */
    int32_t *weights;                  /* n_obs 0/1: lts.wt, the final outlier flags (0 = outlier) */
    double  *residuals;                /* n_obs, of the reweighted fit: residuals */
    size_t  *best_subset;              /* h row numbers, 0-based, ascending: best (1-based in R) */
    size_t   outlier_count;            /* rows with weight 0 */
    int      exact_fit;                /* 1 when at least h rows lie on one hyperplane (scales 0) */
    size_t   starts_evaluated;         /* elemental subsets fitted (singular ones not counted) */
    size_t   c_steps;                  /* C-steps of the winning start */
    /* --- appended --- */
    double  *raw_residuals;            /* n_obs, of the raw fit (robustbase's raw.resid times raw.scale) */
    int      exhaustive;               /* 1 when every elemental subset was a start */
} statgpu_lts_result;

/* Fills params with the defaults. Always call it first. */
STATGPU_API void statgpu_lts_params_init(statgpu_lts_params *params /* out */);

/* LTS (or LMS) regression of y on x. params may be NULL for the defaults. On
 * success *out_result is a new result (destroy it); on failure it is NULL and
 * statgpu_context_last_error says why (STATGPU_ERROR_INVALID_ARGUMENT for,
 * among others, n_obs not above 2 p or more than 1000 coefficients p). The
 * progress callback is called between batches of C-steps; cancelling
 * returns STATGPU_ERROR_CANCELLED. */
STATGPU_API statgpu_status statgpu_lts(statgpu_context *context,
                                       const double *y, const double *x,
                                       size_t n_obs, size_t n_vars, size_t ld,
                                       const statgpu_lts_params *params,
                                       statgpu_lts_result **out_result /* out */);

/* As statgpu_lts, for y a vector and x a matrix of any element type and
 * memory (statgpu_vector, statgpu_matrix), with as many elements in y as x
 * has rows. The same data give the same bits as through statgpu_lts. */
STATGPU_API statgpu_status statgpu_lts_matrix(statgpu_context *context, const statgpu_vector *y,
                                              const statgpu_matrix *x, const statgpu_lts_params *params,
                                              statgpu_lts_result **out_result /* out */);

/* Frees a result and its arrays. NULL is a harmless no-op. */
STATGPU_API void statgpu_lts_result_destroy(statgpu_lts_result *result);

/* ===== Gaussian mixtures ================================================== */

/* Gaussian mixture models fitted by EM, as scikit-learn's GaussianMixture
 * defines them, so that results can be compared:
 *   - covariance types full (each component its own matrix), tied (one
 *     matrix for all), diag (each its own diagonal), spherical (each one
 *     variance); reg_covar is added to every variance (the diagonal) after
 *     each estimate, or with reg_covar_relative reg_covar times that
 *     variable's variance over all the rows (scikit-learn's 1e-6 is meant
 *     for standardised data: added as it is, it swamps the variances of
 *     data in small units, 0.0003 +- 0.0001, and makes a fit depend on the
 *     units; relative, a fit is the same in any units);
 *   - an iteration is an E-step (responsibilities from the current
 *     parameters, in log space: log-sum-exp over the components) and an
 *     M-step (nk = sum of responsibilities + 10 DBL_EPSILON, means,
 *     covariances around the new means, weights nk / sum nk, then the
 *     precisions' Cholesky factors); the run stops when the mean per-row
 *     log-likelihood of an E-step changed by less than tolerance from the
 *     previous one, or after max_iterations; a final E-step gives the
 *     responsibilities, labels and log-likelihood of the returned parameters;
 *   - initialisation from k-means (the engine's, k-means++ starts, one run:
 *     each row's cluster is its responsibility), from k-means++ seeds alone,
 *     from random responsibilities, or from given weights, means and
 *     precisions (the inverse covariances; for diag and spherical their
 *     diagonal or single value);
 *   - restart_count runs from different k-means starts keep the run of the
 *     highest final lower bound (the earlier on a tie).
 * A component whose covariance is not positive definite (a collapsed
 * component, duplicate rows, a constant column) is not an error: its
 * regulariser is multiplied by 10 until it is, and the result counts the
 * repairs. Nothing NaN or infinite is ever returned. */

typedef enum statgpu_gmm_covariance {
    STATGPU_GMM_FULL      = 0,
    STATGPU_GMM_TIED      = 1,
    STATGPU_GMM_DIAG      = 2,
    STATGPU_GMM_SPHERICAL = 3
} statgpu_gmm_covariance;

typedef enum statgpu_gmm_init {
    STATGPU_GMM_INIT_KMEANS    = 0,  /* default: responsibilities from a k-means run (k-means++ starts,
                                        Lloyd to convergence: scikit-learn's init_params="kmeans") */
    STATGPU_GMM_INIT_GIVEN     = 1,  /* initial_weights, initial_means, initial_precisions */
    STATGPU_GMM_INIT_PLUS_PLUS = 2,  /* k-means++ seeds alone as the means, each row given to its
                                        nearest seed, no Lloyd iteration */
    STATGPU_GMM_INIT_RANDOM    = 3   /* random responsibilities, uniform and each row scaled to sum 1
                                        (scikit-learn's init_params="random") */
} statgpu_gmm_init;

#define STATGPU_GMM_MAX_RESTART_COUNT 100000u

typedef struct statgpu_gmm_params {
    size_t                 struct_bytes;        /* sizeof(statgpu_gmm_params); set by _init */
    statgpu_gmm_covariance covariance;          /* default FULL */
    double                 reg_covar;           /* >= 0, default 1e-6 */
    double                 tolerance;           /* >= 0, default 1e-3 (scikit-learn's tol) */
    size_t                 max_iterations;      /* >= 1, default 100 */
    size_t                 restart_count;       /* >= 1, default 1 (scikit-learn's n_init) */
    statgpu_gmm_init       init;                /* default KMEANS */
    uint64_t               seed;                /* the k-means starts; default 0 */
    const double          *initial_weights;     /* GIVEN: k, positive, summing to 1 */
    const double          *initial_means;       /* GIVEN: k x n_vars, column-major, leading dimension k */
    const double          *initial_precisions;  /* GIVEN: full k blocks of n_vars x n_vars (block j at
                                                   j * n_vars^2, column-major); tied one block; diag
                                                   k x n_vars (leading dimension k); spherical k */
    int                    reg_covar_relative;  /* 0 (default, scikit-learn's): every variable's regulariser
                                                   is reg_covar; 1: variable v's is reg_covar times v's
                                                   variance over the rows (sum of squared deviations / n_obs;
                                                   a constant variable's: reg_covar times the largest
                                                   variance, or reg_covar when every variable is constant),
                                                   so that rescaling a variable rescales the fit with it and
                                                   nothing else changes; data beyond about 1e120 or below
                                                   1e-120 are then fitted times a power of two and the
                                                   results given in their units (an error where a fitted
                                                   variance is not a double: spreads beyond about 1e154 or
                                                   below 1e-154) */
} statgpu_gmm_params;

typedef struct statgpu_gmm_result {
    size_t   k, n_obs, n_vars;
    statgpu_gmm_covariance covariance;
    double  *weights;            /* k */
    double  *means;              /* k x n_vars, column-major, leading dimension k */
    double  *covariances;        /* as initial_precisions is laid out, for this covariance type */
    double  *precisions_cholesky;/* likewise: full and tied the upper triangular factor U with
                                    precision = U U^T (scikit-learn's precisions_cholesky_) */
    double  *responsibilities;   /* n_obs x k, column-major, leading dimension n_obs */
    double  *row_log_likelihood; /* n_obs: log density of each row under the mixture */
    int32_t *labels;             /* n_obs: the most likely component, 0-based (the lower on a tie) */
    double   log_likelihood;     /* the sum of row_log_likelihood */
    double   lower_bound;        /* the mean per-row log-likelihood of the last EM iteration's E-step
                                    (scikit-learn's lower_bound_) */
    size_t   iterations;         /* EM iterations of the kept run */
    int      converged;          /* 1 when it stopped on the tolerance */
    size_t   parameter_count;    /* free parameters: means, covariances, k - 1 weights */
    double   bic;                /* -2 log_likelihood + parameter_count ln n_obs (lower is better, as
                                    scikit-learn's; mclust's BIC is its negative: higher is better) */
    double   aic;                /* -2 log_likelihood + 2 parameter_count */
    size_t   best_restart;       /* 0-based */
    size_t   restart_count;
    size_t   regularised_count;  /* covariance estimates that needed more than reg_covar */
    size_t   candidate_count;    /* the models compared: 1 from statgpu_gmm, every (k, covariance type)
                                    from statgpu_gmm_select */
    struct statgpu_gmm_candidate *candidates; /* candidate_count, in the order fitted */
    size_t   best_candidate;     /* this fit's index in candidates */
    /* --- appended --- */
    size_t   singular_components;/* components whose own covariance estimate (the fitted one less the
                                    regulariser) has a variance below 1e-8 of the data's in some
                                    direction of the varying variables: on rows that repeat a value
                                    (integer or rounded data) the density is the regulariser's spike
                                    (mclust calls such fits singular; tied: all k when the shared
                                    estimate is) */
} statgpu_gmm_result;

/* One model of a comparison (statgpu_gmm_select), as mclust's BIC table
 * shows them. A candidate that cannot be fitted (more components than rows)
 * has status STATGPU_ERROR_INVALID_ARGUMENT and zeros, and is never chosen. */
typedef struct statgpu_gmm_candidate {
    size_t                 k;
    statgpu_gmm_covariance covariance;
    statgpu_status         status;
    double                 log_likelihood, bic, aic; /* as statgpu_gmm_result's */
    size_t                 parameter_count, iterations;
    int                    converged;
    size_t                 singular_components; /* as statgpu_gmm_result's */
} statgpu_gmm_candidate;

/* Fills params with the defaults. Always call it first. */
STATGPU_API void statgpu_gmm_params_init(statgpu_gmm_params *params /* out */);

/* A Gaussian mixture of k components fitted to the rows of data (n_obs x
 * n_vars, column-major, leading dimension ld, finite). params may be NULL for
 * the defaults. On success *out_result is a new result (destroy it); on
 * failure it is NULL and statgpu_context_last_error says why:
 * STATGPU_ERROR_INVALID_ARGUMENT for bad sizes (more than 256 variables or
 * 512 components among them), k = 0 or k > n_obs, bad
 * params or given parameters that are not finite, positive (weights) or
 * positive definite (precisions); STATGPU_ERROR_NAN_IN_DATA;
 * STATGPU_ERROR_OUT_OF_MEMORY; STATGPU_ERROR_CANCELLED. The progress
 * callback is called once per EM iteration.
 *
 * Backends: the E-steps (log densities, log-sum-exp, responsibilities and
 * the sums the M-step needs, in one pass over the data) run on the GPU when
 * the context asks for CUDA, or under AUTO when n_obs k n_vars^2 >= 2^18
 * (scaled up on machines with more than 16 threads), for up to 16 variables and 256 components; the M-step (k small
 * factorisations) stays on the host. The GPU sums in a fixed order (the same
 * bits on every repeat) but not the CPU's order, and takes the products
 * around the E-step's means, then moves them to the new means: results
 * agree with the CPU's to about 1e-10 relative in the log-likelihood. The
 * k-means starts run where statgpu_kmeans would run them. Any failure on
 * the GPU, or a mixture beyond its sizes, runs the call on the CPU, and the
 * backend report says why. */
STATGPU_API statgpu_status statgpu_gmm(statgpu_context *context, const double *data, size_t n_obs, size_t n_vars,
                                       size_t ld, size_t k, const statgpu_gmm_params *params,
                                       statgpu_gmm_result **out_result /* out */);

/* As statgpu_gmm, for data of any element type and memory (statgpu_matrix):
 * float32 widened exactly, device data read to the host first. The same data
 * give the same bits as through statgpu_gmm. */
STATGPU_API statgpu_status statgpu_gmm_matrix(statgpu_context *context, const statgpu_matrix *data, size_t k,
                                              const statgpu_gmm_params *params,
                                              statgpu_gmm_result **out_result /* out */);

/* Model choice in one call, as mclust's Mclust: a mixture fitted for every
 * k of k_values (k_count of them, in that order; a k listed again is the
 * same model, fitted once where first listed) and, within each k, every
 * covariance type of types (type_count of them; NULL and 0 for
 * params->covariance alone), each as statgpu_gmm with params (its restarts,
 * seed, initialisation and stopping rule; params->covariance is ignored,
 * and a GIVEN initialisation, which fits one k only, becomes k-means). The
 * result is
 * the candidate of the lowest BIC (the first listed on a tie) among those
 * without singular components (mclust's singular fits, whose BIC it gives as
 * NA; of every candidate where each has one), whole, with
 * every candidate's log-likelihood, BIC, AIC, parameters, iterations and
 * convergence in result->candidates. A k above the complete rows or above
 * their distinct values (a fit the data cannot give: STATGPU_ERROR_INVALID_
 * ARGUMENT from statgpu_gmm) is a candidate with that error status, left out
 * of the choice, not an error of the call, unless no candidate can be
 * fitted. Below 65,536 rows, where one fit leaves the GPU
 * and the threads idle, up to four candidates are fitted side by side, each
 * on a worker context the context keeps (its own CUDA stream and a share of
 * the threads); the results are the same bits as one candidate after
 * another. The progress callback is called from the calling thread only.
 * Other errors as statgpu_gmm's (the first failing candidate's, in order), and
 * STATGPU_ERROR_INVALID_ARGUMENT for no k, a k of 0 or a type listed twice. */
STATGPU_API statgpu_status statgpu_gmm_select(statgpu_context *context, const double *data, size_t n_obs,
                                              size_t n_vars, size_t ld, const size_t *k_values, size_t k_count,
                                              const statgpu_gmm_covariance *types, size_t type_count,
                                              const statgpu_gmm_params *params,
                                              statgpu_gmm_result **out_result /* out */);

/* Frees a result and its arrays. NULL is a harmless no-op. */
STATGPU_API void statgpu_gmm_result_destroy(statgpu_gmm_result *result);


/* ===== Inverse Gaussian mixtures ========================================== */

/* Mixtures of k inverse Gaussian distributions fitted by EM to many data sets
 * at once (positive, right-skewed data: response times, durations), each data
 * set from start_count random starts, the start of the highest final
 * log-likelihood kept (the earlier on a tie), as R's bulkem does, with two
 * deliberate differences:
 *   - the exact M-step: mu_j = sum_i r_ij x_i / W_j, then
 *     lambda_j = W_j / (sum_i r_ij / x_i - W_j / mu_j) with the new mu_j
 *     (bulkem puts the previous mu_j in lambda's update);
 *   - densities in log space: log f(x; mu, lambda) = (log lambda - log 2 pi)
 *     / 2 - 3/2 log x - lambda (x - mu)^2 / (2 mu^2 x), and the
 *     responsibilities through log-sum-exp (bulkem's CPU path multiplies
 *     densities that underflow).
 * An iteration is an E-step (responsibilities and the log-likelihood of the
 * current parameters) and an M-step; a start stops when an E-step's
 * log-likelihood changed by less than tolerance (absolute) from the
 * previous one, keeping the parameters of that E-step, or after
 * max_iterations M-steps, with the log-likelihood of the final parameters.
 * bulkem's random start: each component the inverse Gaussian maximum
 * likelihood estimate of 3 observations drawn at random, weights 1/k.
 *
 * Bad data are a data set's status, not an error of the call: a value that
 * is not positive, fewer than 3 k observations, all observations equal, or
 * values too far apart for the doubles (or subnormal) leave that data set
 * unfitted (its numbers 0) while the others are fitted. Values of any other
 * size are fitted: a data set beyond about 1e150 or below 1e-150 is fitted
 * scaled by a power of two and its parameters and log-likelihood given in
 * its own units.
 * A component that collapses (its weight, or its lambda's denominator, no
 * longer positive and finite) is re-seeded from 3 random observations, and
 * the result counts the re-seeds: never NaN. */

typedef enum statgpu_igmm_set_status {
    STATGPU_IGMM_FITTED       = 0,
    STATGPU_IGMM_NOT_POSITIVE = 1,  /* a value <= 0 (or not finite) */
    STATGPU_IGMM_TOO_FEW      = 2,  /* fewer than 3 k observations */
    STATGPU_IGMM_CONSTANT     = 3,  /* every observation equal */
    STATGPU_IGMM_OUT_OF_RANGE = 4   /* values spanning more than 2^1000 (about 1e301), or a fit beyond the
                                       doubles' range in the data's units */
} statgpu_igmm_set_status;

#define STATGPU_IGMM_MAX_START_COUNT 100000u

typedef struct statgpu_igmm_params {
    size_t        struct_bytes;      /* sizeof(statgpu_igmm_params); set by _init */
    size_t        start_count;       /* >= 1, default 10 */
    size_t        max_iterations;    /* >= 1, default 100 */
    double        tolerance;         /* >= 0, default 1e-6: absolute change of the log-likelihood */
    uint64_t      seed;              /* the random starts; default 0 */
    const double *initial_alpha;     /* NULL (random starts), or k weights summing to 1 and k means and */
    const double *initial_mu;        /*   k shapes, all positive: one start, the same for every data */
    const double *initial_lambda;    /*   set (start_count is then 1) */
    int           keep_responsibilities; /* default 0: 1 fills result->responsibilities */
} statgpu_igmm_params;

typedef struct statgpu_igmm_result {
    size_t   set_count, k;
    size_t  *lengths;          /* set_count: the observations of each data set */
    int32_t *status;           /* set_count statgpu_igmm_set_status */
    double  *alpha;            /* set_count x k: data set s's component j at s k + j */
    double  *mu;               /* likewise */
    double  *lambda;           /* likewise */
    double  *log_likelihood;   /* set_count */
    size_t  *iterations;       /* set_count: M-steps of the kept start */
    int32_t *converged;        /* set_count: 1 when the kept start stopped on the tolerance */
    size_t  *best_start;       /* set_count, 0-based */
    size_t  *reseed_count;     /* set_count: components re-seeded in the kept start */
    int32_t *labels;           /* sum of lengths: data set s's observation i at offsets[s] + i, the
                                  most likely component (0-based; -1 in an unfitted data set) */
    size_t  *offsets;          /* set_count: where each data set starts in labels and (times k)
                                  in responsibilities */
    double  *responsibilities; /* NULL unless keep_responsibilities: (sum of lengths) x k, observation
                                  offsets[s] + i's component j at (offsets[s] + i) k + j */
    size_t   start_count;
} statgpu_igmm_result;

/* Fills params with the defaults. Always call it first. */
STATGPU_API void statgpu_igmm_params_init(statgpu_igmm_params *params /* out */);

/* Mixtures of k inverse Gaussians, one per data set: set s is sets[s], of
 * lengths[s] values (data sets may differ in length). On success *out_result
 * is a new result (destroy it); on failure it is NULL and
 * statgpu_context_last_error says why: STATGPU_ERROR_INVALID_ARGUMENT for
 * NULL arrays, k = 0 or above 64, bad params or given starts;
 * STATGPU_ERROR_EMPTY_INPUT for no data set (set_count 0);
 * STATGPU_ERROR_OUT_OF_MEMORY; STATGPU_ERROR_CANCELLED. Bad data are a data
 * set's status (above). On the CPU the (data set, start) pairs are spread
 * over the context's threads: the same bits at any thread count; the
 * progress callback hears the share of pairs done about every 0.1 s while
 * they run, and a stop ends the fits within about 8 of their iterations (on
 * the GPU the callback is asked once the launch has ended). On the
 * CUDA backend (k <= 8) every pair of the data sets up to 8192 values runs
 * in one launch, a block per data set with its values, -3/2 log x and 1/x
 * in shared memory; the pairs of longer data sets (no size limit) are
 * spread over the whole GPU, blocks of 8192 values each, an iteration of all
 * of them two launches. One pass per iteration gives the responsibilities,
 * the log-likelihood and the M-step's sums, reduced in a fixed order: the
 * same bits on every repeat, and within rounding of the CPU's
 * (log-likelihoods to about 1e-14). A pair whose M-step would re-seed a
 * component is fitted on the CPU from its start. Under
 * STATGPU_BACKEND_AUTO the GPU fits from 1e6 values x starts x iterations
 * (scaled up on machines with more than 16 threads). */
STATGPU_API statgpu_status statgpu_igmm(statgpu_context *context, const double *const *sets, const size_t *lengths,
                                        size_t set_count, size_t k, const statgpu_igmm_params *params,
                                        statgpu_igmm_result **out_result /* out */);

/* Frees a result and its arrays. NULL is a harmless no-op. */
STATGPU_API void statgpu_igmm_result_destroy(statgpu_igmm_result *result);

/* A data set's status (result->status[s]) in words, as IGMMFIT's summary
 * shows it ("fitted", "a value is not positive", ...); never NULL. */
STATGPU_API const char *statgpu_igmm_status_string(int32_t status);


/* ===== Best subset regression ============================================= */

/* For every subset size, the subsets of predictors whose least squares fit
 * of y has the smallest residual sum of squares (RSS), exactly: the search
 * visits every subset or proves that it cannot be among the best (R's
 * leaps::regsubsets, method "exhaustive", gives the same subsets).
 *
 * The response y has n_obs values; the predictors x are n_obs x n_vars,
 * column-major with leading dimension ld >= n_obs. With an intercept every
 * model has one (it is never counted in a size); without, none.
 *
 * The search. The predictors (centred, with an intercept) and y are reduced
 * by one Householder QR; a subset's RSS is that of the triangular factor
 * with the subset's columns, and the tree of subsets is walked by dropping
 * columns (Gatu and Kontoghiorghes's dropping-column tree), each child's
 * factor restored by Givens rotations from its parent's. The RSS of a subset
 * is a lower bound for every subset of it, so a branch whose bound exceeds
 * the nbest-th best RSS of every size it could still reach is cut (Furnival
 * and Wilson's leaps and bounds); at nodes with many free columns those are
 * ordered first whose removal costs most, so the largest branches are the
 * likeliest to be cut. Branches are compared with a margin of 1e-10 times the
 * null model's RSS, so rounding can never cut a subset that belongs among
 * the best. Ties: subsets of equal RSS are ranked by their variables, the
 * one with the earliest differing variable first. The search runs on the
 * context's threads and gives the same subsets at any thread count.
 *
 * On the CUDA backend, with nbest = 1, the top of the tree (the nodes that
 * are reordered) is walked on the host and everything below it on the GPU:
 * a warp per subtree, subtrees handed to idle warps as they wait, the
 * bounds shared in device memory. The GPU's rotations are the CPU's
 * operations, unfused, so the tree, every RSS and the result are the same
 * bits as on the CPU (only subsets_evaluated may differ, as with threads).
 * Under STATGPU_BACKEND_AUTO the GPU searches from 32 free predictors;
 * nbest > 1 runs on the CPU (the backend report's note says so).
 *
 * Sizes count predictors (forced ones included), not the intercept: the
 * result reports sizes min_size .. max_size, min_size the count of
 * predictors forced in (1 when none is).
 *
 * Per reported subset, with k = size + intercept coefficients, n rows, RSS0
 * the null model's RSS (about the mean with an intercept, about 0 without)
 * and sigma^2 = RSS(full model) / (n - k_full), as leaps's summary defines
 * them:
 *   R^2 = 1 - RSS / RSS0; adjusted R^2 = 1 - (RSS / RSS0) (n - intercept) / (n - k);
 *   Cp = RSS / sigma^2 - (n - 2k);
 *   bic_leaps = n ln(RSS / RSS0) + k ln n (leaps's bic, relative to the null model);
 *   bic = n ln(RSS / n) + k ln n (the usual one, up to the likelihood's
 *         constant: it differs from bic_leaps by n ln(RSS0 / n) alone, so
 *         both choose the same size);
 *   press = sum over rows of (e_i / (1 - h_ii))^2, the exact leave-one-out
 *         prediction error, h_ii = ||R^-T x_i||^2 from the subset's QR (plus
 *         1/n with an intercept); a row with h_ii = 1 (fitted exactly by any
 *         fit) adds 0.
 * The validation error of a size (mean squared prediction error):
 *   PRESS (default)  press / n of that subset;
 *   HOLDOUT          round(holdout_fraction n) rows, chosen at random by the
 *                    seeds, are held out; the search runs on the others; the
 *                    best subset of each size found there, fitted there,
 *                    predicts the held-out rows;
 *   KFOLD            the rows are dealt at random (by the seeds) into
 *                    fold_count folds; the whole search runs once per fold
 *                    on the other folds; a size's error is the squared error
 *                    of its best subsets' predictions summed over all folds,
 *                    divided by n.
 * Under HOLDOUT and KFOLD the error belongs to a size, not a subset: only the
 * rank-1 subset of each size carries it (validation_error is NaN for the
 * others, and for a size that a fold's search could not reach).
 *
 * The chosen model: the size whose rank-1 subset has the lowest criterion
 * (the validation error by default, or Cp, bic, or the highest adjusted
 * R^2); ties go to the smaller size. Its coefficients and standard errors
 * (sqrt(RSS / (n - k)) times the root of the diagonal of (X'X)^-1) are
 * fitted on all rows.
 *
 * Bad input: NaN in y or x gives STATGPU_ERROR_NAN_IN_DATA (callers drop rows
 * with missing values first); an infinity, no free predictor, more than
 * STATGPU_BESTSUBSET_MAX_VARS predictors (free, forced in and left out
 * alike), nbest above 1000, a y that is an exact linear function of the
 * predictors (the full model's residuals 0: no subset has an RSS to
 * compare), n_obs not above the full
 * model's coefficients, max_size below min_size, an unknown validation or
 * criterion, a holdout leaving fewer rows on either side than a fit needs,
 * fold_count outside [2, n_obs], a force entry other than -1, 0 or 1:
 * STATGPU_ERROR_INVALID_ARGUMENT with a message. A predictor that the QR's
 * rank test (1e-7 of its norm, centred with an intercept) finds a linear
 * combination of those before it (a constant column beside the intercept, a
 * copy, a sum of others) is left out of the search and reported in dropped;
 * a forced predictor so dropped is an error. Predictors of any size are
 * taken as they are (near 1e-200 or 1e200 they give the subsets and RSS
 * they give near 1); a y whose sum of squares about its mean (about 0
 * without an intercept) is not a normal double is an error that says so.
 * No output is ever NaN except validation_error where it is said to be.
 *
 * The progress callback is called as the search goes (the share of the tree
 * walked or cut); cancelling returns STATGPU_ERROR_CANCELLED. */

/* The most free predictors a search takes: an exhaustive search of more is
 * out of reach on any machine unless the bounds cut nearly everything. */
#define STATGPU_BESTSUBSET_MAX_VARS 128

typedef enum statgpu_subset_validation {
    STATGPU_SUBSET_PRESS   = 0,  /* leave-one-out, exact (default) */
    STATGPU_SUBSET_HOLDOUT = 1,  /* one random share of the rows held out */
    STATGPU_SUBSET_KFOLD   = 2   /* K-fold cross-validation, the search repeated per fold */
} statgpu_subset_validation;

typedef enum statgpu_subset_criterion {
    STATGPU_SUBSET_BY_VALIDATION = 0,  /* lowest validation error (default) */
    STATGPU_SUBSET_BY_CP         = 1,  /* lowest Mallows' Cp */
    STATGPU_SUBSET_BY_BIC        = 2,  /* lowest BIC */
    STATGPU_SUBSET_BY_ADJR2      = 3   /* highest adjusted R^2 */
} statgpu_subset_criterion;

typedef struct statgpu_bestsubset_params {
    size_t                    struct_bytes;      /* sizeof(statgpu_bestsubset_params); set by _init */
    int                       intercept;         /* 1 (default): every model has an intercept */
    size_t                    max_size;          /* largest size reported; 0 (default): every size */
    size_t                    nbest;             /* subsets reported per size, >= 1; default 1 */
    const int8_t             *force;             /* n_vars entries: 1 forced in, -1 left out, 0 free;
                                                    NULL (default): all free */
    statgpu_subset_validation validation;        /* default STATGPU_SUBSET_PRESS */
    double                    holdout_fraction;  /* HOLDOUT's share of rows, in (0, 1); default 0.2 */
    size_t                    fold_count;        /* KFOLD's folds, 2 .. n_obs; default 10 */
    statgpu_subset_criterion  criterion;         /* default STATGPU_SUBSET_BY_VALIDATION */
    uint64_t                  seed;              /* mixed with the context's seed; default 0 */
    /* --- fields are only ever appended --- */
} statgpu_bestsubset_params;

/* The outcome of statgpu_bestsubset: owned by the caller, freed by
 * statgpu_bestsubset_result_destroy. Subsets are listed by size, then rank.
 * Fields are only ever appended. */
typedef struct statgpu_bestsubset_result {
    size_t   n_obs, n_vars;
    int      intercept;
    size_t   nbest;
    size_t   min_size, max_size;     /* the sizes reported */
    size_t   subset_count;           /* rows of the arrays below */
    size_t  *sizes;                  /* subset_count: predictors in the subset */
    size_t  *ranks;                  /* subset_count: 1 .. nbest within its size */
    uint8_t *which;                  /* subset_count x n_vars, row-major: 1 where the predictor is in */
    double  *rss, *r_squared, *adjusted_r_squared, *cp, *bic_leaps, *bic, *press;  /* subset_count each */
    double  *validation_error;       /* subset_count: see above (NaN where it does not apply) */
    double   null_rss;               /* RSS0 */
    double   full_rss;               /* RSS of the model with every predictor not dropped or left out */
    double   sigma2;                 /* Cp's variance estimate */
    statgpu_subset_validation validation;
    statgpu_subset_criterion  criterion;
    size_t   fold_count;             /* KFOLD's folds; 1 for HOLDOUT, 0 for PRESS */
    size_t   holdout_count;          /* HOLDOUT's held-out rows; 0 otherwise */
    size_t   chosen;                 /* the index of the chosen subset (a rank-1 row) */
    size_t   coefficient_count;      /* intercept + the chosen size */
    double  *coefficients;           /* coefficient_count: intercept first, then the chosen predictors in order */
    double  *standard_errors;        /* coefficient_count */
    size_t  *coefficient_vars;       /* coefficient_count: the predictor (0-based) of each, SIZE_MAX for the intercept */
    uint8_t *dropped;                /* n_vars: 1 where the rank test left a predictor out */
    size_t   dropped_count;
    uint64_t subsets_evaluated;      /* nodes of the tree whose factor was computed, all searches (it
                                        depends on the order the threads or warps met the bounds) */
} statgpu_bestsubset_result;

/* Fills params with the defaults. Always call it first. */
STATGPU_API void statgpu_bestsubset_params_init(statgpu_bestsubset_params *params /* out */);

/* Best subset regression of y on x. params may be NULL for the defaults. On
 * success *out_result is a new result (destroy it); on failure it is NULL
 * and statgpu_context_last_error says why. */
STATGPU_API statgpu_status statgpu_bestsubset(statgpu_context *context, const double *y, const double *x,
                                              size_t n_obs, size_t n_vars, size_t ld,
                                              const statgpu_bestsubset_params *params,
                                              statgpu_bestsubset_result **out_result /* out */);

/* How params' validation splits n_obs complete rows, by statgpu_bestsubset's
 * own rule (params NULL: the defaults): *held_out, the rows held out at once
 * (PRESS 1; HOLDOUT round(holdout_fraction n_obs); KFOLD the largest fold,
 * ceil(n_obs / fold_count)), and *kept = n_obs - *held_out, the fewest rows
 * a search runs on. statgpu_bestsubset then needs *kept above the full
 * model's coefficients (the predictors it keeps, plus the intercept).
 * STATGPU_ERROR_INVALID_ARGUMENT (both outputs 0) where statgpu_bestsubset
 * would refuse the validation itself: an unknown one, holdout_fraction
 * outside (0, 1) or holding out no row, fold_count outside [2, n_obs], no
 * row, or NULL outputs. For a caller (a dialog) that checks a choice before
 * it runs. */
STATGPU_API statgpu_status statgpu_bestsubset_split(const statgpu_bestsubset_params *params, size_t n_obs,
                                                    size_t *held_out /* out */, size_t *kept /* out */);

/* Frees a result and its arrays. NULL is a harmless no-op. */
STATGPU_API void statgpu_bestsubset_result_destroy(statgpu_bestsubset_result *result);

/* ===== Result tables ====================================================== */

/* A method's result as named tables: the one place where a result becomes
 * what people see. A Calc function returns the table its Output argument
 * names, the command-line tool prints any of them, a report sheet shows them
 * all. Each method defines here, once, its tables' names (the Output words),
 * titles, column headers, row labels and cells.
 *
 * A table is a grid of row_count x column_count cells; each cell is a number,
 * text (a name, such as a summary's or a variable's) or empty. Column headers
 * and row labels are not cells: a cell function returns the cells alone, a
 * report writes the headers above them and the row labels to their left.
 *
 * Per-row tables (one cell per row of the caller's data: k-means' labels,
 * LTS's weights and residuals) follow the caller's rows, given by a row map
 * (statgpu_table_params): a row the caller left out of the fit (a missing
 * value) is an empty cell at its place. A spreadsheet caller writes "" there,
 * so that COUNT, COUNTIF, SUM and AVERAGE ignore it, as they ignore Calc's
 * own "". No number cell is ever NaN or infinite.
 *
 * Objects
 *   statgpu_table_set  the tables of one result, in the method's order (the
 *                      first is the default Output). Made by a method's
 *                      statgpu_<method>_tables(), destroyed by
 *                      statgpu_table_set_destroy() (NULL is a no-op). It owns
 *                      copies of everything it shows: the result and the
 *                      params may be freed as soon as it is made.
 *   statgpu_table      one table, owned by its set; read its fields. */

typedef enum statgpu_cell_kind {
    STATGPU_CELL_NUMBER = 0,  /* values[] holds it */
    STATGPU_CELL_EMPTY  = 1,  /* a row the caller left out: values[] holds 0 */
    STATGPU_CELL_TEXT   = 2   /* texts[] holds it: values[] holds 0 */
} statgpu_cell_kind;

/* Cells are column-major with leading dimension row_count: row r, column c is
 * cell r + row_count * c of values, cell_kinds and texts. Fields are only ever
 * appended. */
typedef struct statgpu_table {
    const char          *name;              /* the Output word, lower case: "centroids" */
    const char          *title;             /* for reports: "Cluster centroids" */
    size_t               row_count;
    size_t               column_count;      /* >= 1 */
    const char *const   *column_headers;    /* column_count texts: "weight", or a variable's name */
    const char          *row_label_header;  /* heads the row labels' column ("cluster", "term");
                                               NULL when row_labels is NULL */
    const char *const   *row_labels;        /* row_count texts ("1", "(Intercept)"), or NULL: the
                                               rows are then numbered 1, 2, ... (for a per-row
                                               table, as the caller's rows are) */
    const double        *values;            /* row_count x column_count */
    const unsigned char *cell_kinds;        /* row_count x column_count statgpu_cell_kind values */
    const char *const   *texts;             /* row_count x column_count: the text of a TEXT cell,
                                               NULL at other cells; NULL when no cell is text */
} statgpu_table;

typedef struct statgpu_table_set statgpu_table_set;

/* The number of tables in set; 0 for NULL. */
STATGPU_API size_t statgpu_table_set_count(const statgpu_table_set *set);

/* The index-th table (0-based), or NULL when set is NULL or index is not
 * below the count. Owned by the set, valid until it is destroyed. */
STATGPU_API const statgpu_table *statgpu_table_set_get(const statgpu_table_set *set, size_t index);

/* The table called name, compared as Calc compares words: ASCII letters in
 * any case, blanks before and after ignored ("Labels " finds "labels").
 * NULL when set or name is NULL or no table has that name. */
STATGPU_API const statgpu_table *statgpu_table_set_find(const statgpu_table_set *set, const char *name);

/* Frees a set and its tables. NULL is a harmless no-op. */
STATGPU_API void statgpu_table_set_destroy(statgpu_table_set *set);

/* The names of the tables a method's results turn into, without a result, so
 * that an Output word can be checked before computing and help texts can
 * list them: a NULL-terminated array in the method's order, the first the
 * default Output, or NULL for an unknown method. Methods: "kmeans" (centroids,
 * labels, sizes, summary), "lts" (coefficients, weights, residuals, summary,
 * subset), "gmm" (summary, weights, means, covariances, labels,
 * probabilities, density, selection), "igmm" (parameters, summary, labels),
 * "bestsubset" (subsets, which, coefficients, summary). Static storage. */
STATGPU_API const char *const *statgpu_method_table_names(const char *method);

/* The title of a method's table (found as statgpu_table_set_find finds
 * names), or NULL for an unknown method or table. Static storage. */
STATGPU_API const char *statgpu_method_table_title(const char *method, const char *table_name);

/* How a result becomes tables. Read during the call only. */
typedef struct statgpu_table_params {
    size_t              struct_bytes;      /* sizeof(statgpu_table_params); set by _init */
    const char *const  *variable_names;    /* n_vars texts naming the data's columns (for LTS the
                                              predictors'), used as headers and row labels; NULL
                                              (default) for X1, X2, ... */
    size_t              source_row_count;  /* rows of the caller's data, those left out included;
                                              0 (default): as many as the result has observations */
    const size_t       *source_rows;       /* the row map: n_obs 0-based row numbers of the
                                              caller's data, strictly increasing, each below
                                              source_row_count: observation i came from row
                                              source_rows[i], and the rows not listed were left
                                              out. NULL (default): observation i is row i, and
                                              source_row_count must be 0 or n_obs */
    const char         *table_name;        /* NULL (default): every table; else only the one of
                                              that name (found as statgpu_table_set_find finds
                                              it), to spare the memory of the others */
    /* --- fields are only ever appended --- */
} statgpu_table_params;

/* Fills params with the defaults. Always call it first. */
STATGPU_API void statgpu_table_params_init(statgpu_table_params *params /* out */);

/* The tables of a k-means result, in this order:
 *   centroids  k x n_vars: cluster j's mean of each variable; headers the
 *              variables' names, row labels "1" .. "k" under "cluster"
 *   labels     source_row_count x 1 "cluster": each row's cluster, 1 .. k
 *              (1-based, as Calc shows them), empty for a row left out
 *   sizes      k x 1 "size": the observations in each cluster; row labels
 *              "1" .. "k" under "cluster"
 *   summary    9 x 2 "value", "name" (text): inertia (within-cluster sum of
 *              squares), total sum of squares, between / total sum of squares
 *              (1 - inertia / total; 0 when the total is 0), iterations,
 *              converged (1 yes, 0 no), restarts, best restart (1-based),
 *              observations used, rows left out (missing values)
 * On success *out_set is a new set (destroy it); on failure it is NULL and
 * statgpu_context_last_error says why: STATGPU_ERROR_INVALID_ARGUMENT for a
 * NULL or inconsistent result (one made by hand: a label outside 0 .. k-1, a
 * NULL array, a NaN or infinity in a table asked for), a bad row map, a NULL
 * among variable_names or an unknown table_name; STATGPU_ERROR_OUT_OF_MEMORY. */
STATGPU_API statgpu_status statgpu_kmeans_tables(statgpu_context *context, const statgpu_kmeans_result *result,
                                                 const statgpu_table_params *params,
                                                 statgpu_table_set **out_set /* out */);

/* The tables of an LTS (or LMS) result, in this order:
 *   coefficients  p x 1 "coefficient": the reweighted fit, intercept first;
 *                 row labels "(Intercept)" and the predictors' names under "term"
 *   weights       source_row_count x 1 "weight": 1, or 0 for an outlier;
 *                 empty for a row left out
 *   residuals     source_row_count x 1 "residual": of the reweighted fit;
 *                 empty for a row left out
 *   summary       9 x 2 "value", "name" (text): objective (its name says
 *                 which: the sum of the h smallest squared residuals, or for
 *                 LMS the h-th smallest), h, scale (reweighted fit), raw scale,
 *                 outliers (weight 0), least median of squares (1 yes, 0 no),
 *                 exact fit (1 yes, 0 no), observations used, rows left out
 *                 (missing values)
 *   subset        h x 1 "row": the best h-subset, as 1-based row numbers of
 *                 the caller's data, ascending
 * Failures as for statgpu_kmeans_tables. */
STATGPU_API statgpu_status statgpu_lts_tables(statgpu_context *context, const statgpu_lts_result *result,
                                              const statgpu_table_params *params,
                                              statgpu_table_set **out_set /* out */);

/* The tables of a Gaussian mixture, in this order:
 *   summary        13 x 2 "value", "name": log-likelihood, BIC, AIC,
 *                  parameters, components, covariance type (0 full, 1 tied,
 *                  2 diag, 3 spherical; its name says which), iterations,
 *                  converged, restarts, best restart, covariances repaired,
 *                  observations used, rows left out
 *   weights        k x 1 "weight"; row labels "1" .. "k" under "component"
 *   means          k x n_vars; headers the variables' names
 *   covariances    full: k stacked n_vars x n_vars blocks, row labels
 *                  "j, variable"; tied: one block; diag: k x n_vars variances;
 *                  spherical: k x 1 "variance"
 *   labels         source_row_count x 1 "component": the most likely, 1 .. k,
 *                  empty for a row left out
 *   probabilities  source_row_count x k, headers "1" .. "k"
 *   density        source_row_count x 1 "log density"
 * Failures as for statgpu_kmeans_tables. */
STATGPU_API statgpu_status statgpu_gmm_tables(statgpu_context *context, const statgpu_gmm_result *result,
                                              const statgpu_table_params *params,
                                              statgpu_table_set **out_set /* out */);

/* An inverse Gaussian mixture's tables: "parameters" (a row per data set and
 * component: data set, component, alpha, mu, lambda; the numbers empty for a
 * data set not fitted), "summary" (a row per data set: data set, values,
 * log-likelihood, iterations, converged, best start, re-seeded, status as a
 * word), "labels" (a column per data set, a row per value: the most likely
 * component, 1 to k; empty past a data set's end or where it was not
 * fitted). params' variable_names name the data sets (else they are
 * numbered); a row map does not apply. */
STATGPU_API statgpu_status statgpu_igmm_tables(statgpu_context *context, const statgpu_igmm_result *result,
                                               const statgpu_table_params *params,
                                               statgpu_table_set **out_set /* out */);

/* The tables of a best subset result, in this order:
 *   subsets       a row per subset (by size, then rank): size, rank, RSS, R2,
 *                 adjusted R2, Cp, BIC (leaps), BIC, PRESS, validation error
 *                 (empty where it does not apply), chosen (1 for the chosen
 *                 model), predictors (text: the names, ", "-separated)
 *   which         a row per subset: size, rank, then a column per predictor,
 *                 1 where it is in the subset, else 0
 *   coefficients  the chosen model: a row per term, the intercept first;
 *                 no row labels: "term" (text: "(Intercept)" or the
 *                 predictor's name), coefficient, standard error, t value
 *                 (empty where the standard error is 0)
 *   summary       14 x 2 "value", "name": chosen size, criterion and
 *                 validation (their names say which), folds, rows held out,
 *                 the chosen model's R2 and RSS, the full and null models'
 *                 RSS, sigma2, predictors left out as dependent (named),
 *                 subsets evaluated, observations used, rows left out
 * variable_names name the predictors. Failures as for statgpu_kmeans_tables. */
STATGPU_API statgpu_status statgpu_bestsubset_tables(statgpu_context *context,
                                                     const statgpu_bestsubset_result *result,
                                                     const statgpu_table_params *params,
                                                     statgpu_table_set **out_set /* out */);

#ifdef __cplusplus
}
#endif

#endif /* STATGPU_H */
