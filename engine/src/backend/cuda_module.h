/*
 * cuda_module.h: the contract between the engine and its CUDA backend module
 * (kernels/, built as libstatgpu_cuda.so and dlopen()ed at first use).
 *
 * The module exports one symbol, statgpu_cuda_module_init, which returns a
 * table of function pointers when the engine's API version matches its own and
 * NULL otherwise. The engine treats a missing module, a missing symbol, a NULL
 * table or any failure status as "CUDA not available" and runs host data on
 * the CPU.
 *
 * Every function is C ABI, never throws, never aborts, never prints, and
 * reports CUDA and CUB failures as a status plus a message in msg
 * (msg_bytes bytes, always NUL-terminated when msg_bytes > 0).
 */
#ifndef STATGPU_CUDA_MODULE_H
#define STATGPU_CUDA_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever the table below changes shape or meaning. */
#define STATGPU_CUDA_MODULE_API_VERSION 9u

#define STATGPU_CUDA_MODULE_INIT_SYMBOL "statgpu_cuda_module_init"

typedef enum statgpu_cuda_status {
    STATGPU_CUDA_OK               = 0,
    STATGPU_CUDA_NO_DEVICE        = 1,  /* no driver, no device, or bad device index */
    STATGPU_CUDA_OUT_OF_MEMORY    = 2,  /* a device allocation failed */
    STATGPU_CUDA_ERROR            = 3,  /* any other CUDA/CUB failure */
    STATGPU_CUDA_NAN_IN_DATA      = 4,  /* the data hold a NaN */
    STATGPU_CUDA_INVALID_ARGUMENT = 5,  /* a broken precondition */
    STATGPU_CUDA_CANCELLED        = 6   /* the caller's cancel callback said stop */
} statgpu_cuda_status;

/* Values match statgpu_dtype, statgpu_memory and statgpu_select_method. */
enum {
    STATGPU_CUDA_FLOAT64 = 0, STATGPU_CUDA_FLOAT32 = 1,
    STATGPU_CUDA_HOST_MEMORY = 0, STATGPU_CUDA_DEVICE_MEMORY = 1,
    STATGPU_CUDA_SELECT_AUTO = 0, STATGPU_CUDA_SELECT_CUTTING_PLANE = 1,
    STATGPU_CUDA_SELECT_RADIX = 2, STATGPU_CUDA_SELECT_SORT = 3
};

typedef struct statgpu_cuda_device_info {
    char name[128];
    int  runtime_version;  /* cudaRuntimeGetVersion */
    int  driver_version;   /* cudaDriverGetVersion */
    int  multiprocessor_count;
    size_t global_memory_bytes;
} statgpu_cuda_device_info;

/* Where the time of the last call went, measured with CUDA events. */
typedef struct statgpu_cuda_timing {
    double transfer_seconds;  /* host-to-device copy of host data; 0 for device data */
    double compute_seconds;   /* everything on the device after the data are there */
} statgpu_cuda_timing;

/* Per-context device state (stream, workspace): opaque to the engine. */
typedef struct statgpu_cuda_state statgpu_cuda_state;

/* One array to select from. */
typedef struct statgpu_cuda_array {
    const void *data;    /* host pointer or a pointer into the state's device memory */
    size_t      count;   /* >= 1 */
    int         dtype;   /* STATGPU_CUDA_FLOAT64 or _FLOAT32 */
    int         memory;  /* STATGPU_CUDA_HOST_MEMORY or _DEVICE_MEMORY */
} statgpu_cuda_array;

/* ----- k-means ----- */

/* The data of one k-means call, resident on the device between runs. */
typedef struct statgpu_cuda_kmeans_session statgpu_cuda_kmeans_session;

/* One Lloyd run, with the meaning of sg_cpu_kmeans_lloyd's sg_kmeans_run
 * (engine/src/internal.h): centroids hold the initial centroids on entry and
 * the final ones on return; every array belongs to the caller. */
typedef struct statgpu_cuda_kmeans_run {
    double  *centroids;      /* k x n_vars, column-major, leading dimension k */
    int32_t *labels;         /* n_obs */
    size_t  *cluster_sizes;  /* k */
    double  *within_ss;      /* k */
    double   inertia;
    size_t   iterations;
    int      converged;
    size_t   reseed_count;
} statgpu_cuda_kmeans_run;

/* Asked once per iteration; nonzero means stop with STATGPU_CUDA_CANCELLED. */
typedef int (*statgpu_cuda_cancel_fn)(void *user_data);

/* ----- least trimmed squares ----- */

/* The design matrix and response of one LTS call, resident on the device. */
typedef struct statgpu_cuda_lts_session statgpu_cuda_lts_session;

/* ----- Gaussian mixtures ----- */

/* The most models one E-step launch takes. */
#define STATGPU_CUDA_GMM_MOST_MODELS 16u

/* The data of one Gaussian mixture call, resident on the device. */
typedef struct statgpu_cuda_gmm_session statgpu_cuda_gmm_session;

/* The parameters of an E-step: k components in n_vars dimensions, with the
 * meaning of the CPU path's (engine/src/methods/gmm.c): row i's log density
 * under component j plus log w_j is
 *     log_norm[j] - 0.5 * |F_j^T (x_i - mean_j)|^2,
 * with F_j the precision factor: an upper triangular n_vars x n_vars block
 * (triangular = 1: full and tied, block j at factors + j n_vars^2,
 * column-major) or a diagonal (triangular = 0: diag and spherical, entry
 * (j, v) at factors[j + k v]). */
typedef struct statgpu_cuda_gmm_model {
    int           triangular;
    const double *log_norm;  /* k: log w_j + log det F_j - n_vars/2 log(2 pi) */
    const double *means;     /* k x n_vars, leading dimension k */
    const double *factors;
} statgpu_cuda_gmm_model;

/* One E-step's sums, added in a fixed order (the same bits on every repeat):
 * per component j, with r_ij the responsibilities and c_j = mean_j the
 * model's means,
 *   sums[j]                  = sum_i r_ij
 *   sums[k + j + k v]        = sum_i r_ij (x_iv - c_jv)
 *   moments (triangular)     = sum_i r_ij (x_i - c_j)(x_i - c_j)^T, the upper
 *                              triangle of block j at moments + j n_vars^2
 *                              (row <= col at row + n_vars col; the rest 0)
 *   moments (diagonal)       = sum_i r_ij (x_iv - c_jv)^2 at moments[j n_vars + v]
 * and the total log-likelihood sum_i log sum_j exp(...). */
typedef struct statgpu_cuda_gmm_sums {
    double  log_likelihood;
    double *sums;                /* k + k n_vars */
    double *moments;             /* k n_vars^2 (triangular) or k n_vars */
    double *responsibilities;    /* NULL, or n_obs x k, leading dimension n_obs: written */
    double *row_log_likelihood;  /* NULL, or n_obs: written */
} statgpu_cuda_gmm_sums;

/* Each method's entries are a table of their own; the module table points
 * at one per method, NULL where the module does not provide that method
 * (the engine then runs it on the CPU and says so). Every entry that takes
 * msg writes why it failed there and never lets an exception escape. */

typedef struct statgpu_cuda_select_i {
    /* Exact order statistics: results[j] is the ranks[j]-th smallest
     * (1-based) of the array in IEEE total order (-0.0 before +0.0), floats
     * widened exactly to double. ranks are ascending and distinct,
     * 1 <= ranks[j] <= count, rank_count >= 1. NaN anywhere gives
     * STATGPU_CUDA_NAN_IN_DATA. The data are not modified. method is one of
     * STATGPU_CUDA_SELECT_*; AUTO lets the module choose. timing may be NULL. */
    statgpu_cuda_status (*select_ranks)(statgpu_cuda_state *state, const statgpu_cuda_array *array,
                                        const size_t *ranks, size_t rank_count, int method,
                                        double *results, statgpu_cuda_timing *timing,
                                        char *msg, size_t msg_bytes);
} statgpu_cuda_select_i;

typedef struct statgpu_cuda_kmeans_i {
    /* begin copies host data (n_obs x n_vars, column-major, leading
     * dimension ld; finite) to the device for clustering into k clusters.
     * lloyd runs Lloyd's iterations from run->centroids with the CPU path's
     * rules (sg_cpu_kmeans_lloyd): absolute_tolerance bounds the sum of
     * squared centroid moves, 0 stops only when no label changes; a final
     * assignment pass when the run stops on the tolerance or at
     * max_iterations; empty clusters re-seeded with the farthest observation
     * of a cluster that keeps another. cancelled may be NULL.
     * STATGPU_CUDA_INVALID_ARGUMENT when an empty cluster cannot be
     * re-seeded. end frees the session; NULL is a no-op. */
    statgpu_cuda_status (*begin)(statgpu_cuda_state *state, const double *data, size_t n_obs, size_t n_vars,
                                 size_t ld, size_t k, statgpu_cuda_kmeans_session **out_session,
                                 statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
    statgpu_cuda_status (*lloyd)(statgpu_cuda_kmeans_session *session, size_t max_iterations,
                                 double absolute_tolerance, statgpu_cuda_cancel_fn cancelled,
                                 void *cancel_user_data, statgpu_cuda_kmeans_run *run,
                                 statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
    void (*end)(statgpu_cuda_kmeans_session *session);
} statgpu_cuda_kmeans_i;

typedef struct statgpu_cuda_lts_i {
    /* begin copies the design x (n x p, column-major, leading dimension ld)
     * and the response y (n) to the device. csteps evaluates m coefficient
     * vectors at once with the meaning of sg_cpu_lts_csteps
     * (engine/src/internal.h): for vector j (coef + p*j) the residuals of all
     * n rows, the h-subset of the h smallest squared residuals (ties to the
     * lower row index), and kth[j], objective[j], gram (p x p at gram +
     * p*p*j) and xty (p at xty + p*j); an output pointer that is NULL is not
     * computed. end frees the session; NULL is a no-op. */
    statgpu_cuda_status (*begin)(statgpu_cuda_state *state, const double *x, size_t n, size_t p, size_t ld,
                                 const double *y, statgpu_cuda_lts_session **out_session,
                                 statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
    statgpu_cuda_status (*csteps)(statgpu_cuda_lts_session *session, size_t h, const double *coef, size_t m,
                                  double *kth, double *objective, double *gram, double *xty,
                                  statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
    void (*end)(statgpu_cuda_lts_session *session);
} statgpu_cuda_lts_i;

typedef struct statgpu_cuda_gmm_i {
    /* begin copies the data (n_obs x n_vars, column-major, leading dimension
     * ld; finite) to the device for a mixture of k components;
     * STATGPU_CUDA_INVALID_ARGUMENT (with why) for sizes the module's kernels
     * do not take (more than 16 variables, more than 256 components, or a
     * model beyond shared memory), which the engine runs on the CPU. estep
     * runs one E-step for each of model_count models (1 to
     * STATGPU_CUDA_GMM_MOST_MODELS, all triangular or all diagonal: the
     * restarts of a fit) in one launch, and fills outs[m] for models[m] (see
     * statgpu_cuda_gmm_sums; responsibilities and row log-likelihoods only
     * with one model). Each model's sums are the same bits whatever else is
     * in the launch. end frees the session; NULL is a no-op. */
    statgpu_cuda_status (*begin)(statgpu_cuda_state *state, const double *data, size_t n_obs, size_t n_vars,
                                 size_t ld, size_t k, statgpu_cuda_gmm_session **out_session,
                                 statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
    statgpu_cuda_status (*estep)(statgpu_cuda_gmm_session *session, const statgpu_cuda_gmm_model *models,
                                 statgpu_cuda_gmm_sums *outs, size_t model_count, statgpu_cuda_timing *timing,
                                 char *msg, size_t msg_bytes);
    void (*end)(statgpu_cuda_gmm_session *session);
} statgpu_cuda_gmm_i;

/* ----- best subset regression ----- */

/* The most columns (predictors, forced ones included) a search takes. */
#define STATGPU_CUDA_SUBSET_MOST_COLUMNS 128u

/* A node of the dropping-column tree (engine/src/methods/bestsubset_search.c):
 * its m columns (their predictors in vars), its subset (mask: bit v for
 * predictor v), the first column its subtree keeps (k) and the trailing
 * block of its triangular factor from row and column k, of order
 * q = m - k + 1 with the response last (column-major, leading dimension q,
 * at block_offset doubles into the blocks array). Its children drop the
 * columns j = k .. child_end - 1. */
typedef struct statgpu_cuda_subset_node {
    uint32_t m, k, child_end;
    uint64_t mask[2];
    uint8_t  vars[STATGPU_CUDA_SUBSET_MOST_COLUMNS];
    size_t   block_offset;
} statgpu_cuda_subset_node;

/* A subset the search met whose RSS was at most its size's bound then. */
typedef struct statgpu_cuda_subset_found {
    double   rss;
    uint32_t size;
    uint64_t mask[2];
} statgpu_cuda_subset_found;

typedef struct statgpu_cuda_subset_i {
    /* search walks the subtrees below node_count nodes (the nodes themselves
     * already offered) by the engine's rule, with one best subset per size:
     * a child is computed by the engine's Givens rotations (the same
     * operations, so the same bits), kept in found when its size lies in
     * [min_size, max_size] and its RSS is at most the size's bound, which
     * then falls to it; a subtree is cut when its bound exceeds bound + margin
     * at every size it reaches. bounds (columns + 1) are the engine's on
     * entry and the search's on return; found holds up to found_capacity
     * subsets (STATGPU_CUDA_OUT_OF_MEMORY when more were met: the engine
     * searches on the CPU). nodes_evaluated counts the children computed.
     * cancelled is asked between rounds of the search. */
    statgpu_cuda_status (*search)(statgpu_cuda_state *state, const statgpu_cuda_subset_node *nodes,
                                  size_t node_count, const double *blocks, size_t block_doubles,
                                  size_t columns, size_t min_size, size_t max_size, double margin,
                                  double *bounds, statgpu_cuda_subset_found *found, size_t found_capacity,
                                  size_t *found_count, uint64_t *nodes_evaluated,
                                  statgpu_cuda_cancel_fn cancelled, void *cancel_user_data,
                                  statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
} statgpu_cuda_subset_i;

/* ----- inverse Gaussian mixtures ----- */

/* The most components the GPU's fits take. */
#define STATGPU_CUDA_IGMM_MOST_COMPONENTS 8u

/* One (data set, start) fit's parameters: k weights, means and shapes. */
typedef struct statgpu_cuda_igmm_component {
    double alpha, mu, lambda;
} statgpu_cuda_igmm_component;

/* How a fit ended. */
typedef struct statgpu_cuda_igmm_fit {
    double   log_likelihood;
    uint32_t iterations;
    uint8_t  converged;
    uint8_t  needs_cpu;   /* an M-step would re-seed a component: the engine fits this one on the CPU */
    uint8_t  pad[2];
} statgpu_cuda_igmm_fit;

typedef struct statgpu_cuda_igmm_i {
    /* fit runs EM for every (data set, start) pair in one launch, with the
     * meaning of the CPU's (engine/src/methods/igmm.c): data set s is
     * sets[s][0 .. lengths[s]) (positive and finite), fitted where fitted[s]
     * is 1; pair (s, t) starts from components[(s start_count + t) k ..] and
     * leaves its final parameters there and its outcome in
     * fits[s start_count + t]. A pair stops at the first M-step that would
     * re-seed a component (needs_cpu). Each data set's values, -3/2 log x
     * and 1/x sit in shared memory where they fit (a block per data set, a
     * warp per start); the sums are reduced in a fixed order, so a repeat
     * gives the same bits. k <= STATGPU_CUDA_IGMM_MOST_COMPONENTS. */
    statgpu_cuda_status (*fit)(statgpu_cuda_state *state, const double *const *sets, const size_t *lengths,
                               const uint8_t *fitted, size_t set_count, size_t k,
                               size_t start_count, size_t max_iterations, double tolerance,
                               statgpu_cuda_igmm_component *components, statgpu_cuda_igmm_fit *fits,
                               statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
} statgpu_cuda_igmm_i;

typedef struct statgpu_cuda_module_i {
    uint32_t api_version;  /* STATGPU_CUDA_MODULE_API_VERSION */

    /* Binds to device `device`, creates a stream and an empty workspace.
     * host_threads is the engine's CPU thread count: staged copies of host
     * data run on up to that many host threads (at most 8). */
    statgpu_cuda_status (*state_create)(int device, int host_threads, statgpu_cuda_state **out_state,
                                        statgpu_cuda_device_info *out_info,
                                        char *msg, size_t msg_bytes);
    /* Frees everything; NULL is a no-op. */
    void (*state_destroy)(statgpu_cuda_state *state);
    /* Copies bytes from the device's memory to host memory, after the work
     * queued on the legacy default stream (as the selection reads device data). */
    statgpu_cuda_status (*copy_to_host)(statgpu_cuda_state *state, const void *device, size_t bytes, void *host,
                                        char *msg, size_t msg_bytes);

    const statgpu_cuda_select_i *select;  /* each NULL when not provided */
    const statgpu_cuda_kmeans_i *kmeans;
    const statgpu_cuda_lts_i    *lts;
    const statgpu_cuda_gmm_i    *gmm;
    const statgpu_cuda_subset_i *subset;
    const statgpu_cuda_igmm_i   *igmm;
} statgpu_cuda_module_i;

typedef const statgpu_cuda_module_i *(*statgpu_cuda_module_init_fn)(uint32_t engine_api_version);

#ifdef __cplusplus
}
#endif

#endif /* STATGPU_CUDA_MODULE_H */
