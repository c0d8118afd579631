/*
 * gmm_estep.h: the CPU's E-step of gmm.c over a range of rows, in chunks of
 * SG_GMM_ESTEP_ROWS rows whose loops run across the rows so that the
 * compiler turns them into vector code; one kernel per instruction set,
 * chosen at run time, all giving the same bits.
 */
#ifndef STATGPU_METHODS_GMM_ESTEP_H
#define STATGPU_METHODS_GMM_ESTEP_H

#include "statgpu.h"

#include <stddef.h>

/* Rows a chunk takes; the last chunk of a range is filled up with copies of
 * its last row, whose responsibilities are set to 0. */
#define SG_GMM_ESTEP_ROWS 32

/* The mixture an E-step evaluates; layouts as gmm.c's sg_gmm_model. */
typedef struct sg_gmm_estep_model {
    size_t                 n_vars, k;
    statgpu_gmm_covariance type;
    const double          *means;     /* k x n_vars, leading dimension k */
    const double          *factors;   /* the precision factors (prec_chol) */
    const double          *constant;  /* k: log w_j + log det U_j - n_vars log(2 pi) / 2 */
} sg_gmm_estep_model;

/* Where an E-step over rows [begin, end) writes. partial (zeroed by the
 * caller) receives, added in row order within each chunk's lanes and chunk
 * by chunk: [0] the sum of the rows' log-likelihoods, [1 + j] the sum of
 * r_ij, [1 + k + j + k v] the sum of r_ij (x_iv - mean_jv), and from
 * 1 + k + k n_vars the products: full and tied an n_vars x n_vars block per
 * component (upper triangle), diag and spherical n_vars squares per
 * component. */
typedef struct sg_gmm_estep_out {
    double *resp;      /* column j at resp + resp_ld j, row i at [i]; or NULL */
    size_t  resp_ld;
    double *row_ll;    /* row i at [i] */
    double *partial;
} sg_gmm_estep_out;

/* The doubles of scratch one kernel call needs (one per thread). */
size_t sg_gmm_estep_scratch_count(size_t n_vars, size_t k);

typedef void sg_gmm_estep_kernel(const sg_gmm_estep_model *model, const double *data, size_t ld, size_t begin,
                                 size_t end, const sg_gmm_estep_out *out, double *scratch);

/* The kernel for this CPU (AVX2 where it has it, else SSE2 on x86-64). */
sg_gmm_estep_kernel *sg_gmm_estep_best_kernel(void);

/* The kernel named "generic" (SSE2 code on x86-64) or "avx2"; NULL for
 * another name or where this CPU cannot run it. For tests. */
sg_gmm_estep_kernel *sg_gmm_estep_kernel_named(const char *name);

#endif
