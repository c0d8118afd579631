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

typedef struct statgpu_context_params {
    size_t              struct_bytes;  /* sizeof(statgpu_context_params); set by _init */
    statgpu_backend     backend;       /* default STATGPU_BACKEND_AUTO */
    int                 device;        /* CUDA device index; default 0 */
    int                 thread_count;  /* CPU threads; 0 (default) = all cores */
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
    STATGPU_MEMORY_HOST        = 0,  /* ordinary (or pinned) host memory */
    STATGPU_MEMORY_CUDA_DEVICE = 1   /* memory of the context's CUDA device (cudaMalloc) */
} statgpu_memory;

/* A read-only array of numbers, described, not owned. Data in device memory
 * are computed on that device only: where the context cannot run CUDA, such a
 * call fails with STATGPU_ERROR_BACKEND instead of falling back. */
typedef struct statgpu_vector {
    const void    *data;   /* count elements of dtype */
    size_t         count;
    statgpu_dtype  dtype;
    statgpu_memory memory;
} statgpu_vector;

/* ===== Order statistics =================================================== */

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

#ifdef __cplusplus
}
#endif

#endif /* STATGPU_H */
