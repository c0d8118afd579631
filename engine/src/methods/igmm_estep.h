/*
 * igmm_estep.h: the CPU's E-step of igmm.c over one data set, in blocks of
 * SG_IGMM_BLOCK observations whose loops run across the block so that the
 * compiler turns them into vector code; one kernel per instruction set,
 * chosen at run time, all giving the same bits.
 */
#ifndef STATGPU_METHODS_IGMM_ESTEP_H
#define STATGPU_METHODS_IGMM_ESTEP_H

#include <stddef.h>

#define SG_IGMM_MAX_K 64
#define SG_IGMM_BLOCK 32
#define SG_IGMM_LANES 8

/* Per observation, what every E-step and M-step of a fit reuses: -3/2 log x
 * and 1/x (n each). */
typedef struct sg_igmm_terms {
    double *log_term, *inverse;
} sg_igmm_terms;

/* Fills terms' arrays (n each) from x[0..n-1]. */
void sg_igmm_fill_terms(const double *x, size_t n, sg_igmm_terms *terms);

/* What an E-step hands the M-step and the log-likelihood, in lanes:
 * observation i in lane i mod SG_IGMM_LANES. */
typedef struct sg_igmm_sums {
    double weight[SG_IGMM_MAX_K][SG_IGMM_LANES];            /* sum of r_ij */
    double weighted_x[SG_IGMM_MAX_K][SG_IGMM_LANES];        /* sum of r_ij x_i */
    double weighted_inverse[SG_IGMM_MAX_K][SG_IGMM_LANES];  /* sum of r_ij / x_i */
    double largest[SG_IGMM_LANES];  /* sum of each observation's largest log term */
    double product[SG_IGMM_LANES];  /* product of the rows' sums since the last log */
    double logs;                    /* the logs of those products taken so far */
} sg_igmm_sums;

/* Each component's constants of an E-step. */
typedef struct sg_igmm_constants {
    double offset[SG_IGMM_MAX_K];  /* log alpha + (log lambda - log 2 pi) / 2 */
    double scale[SG_IGMM_MAX_K];   /* lambda / 2 mu^2 */
    double mu[SG_IGMM_MAX_K];
} sg_igmm_constants;

/* An E-step's loop over the blocks of one data set x[0..n-1] (k <=
 * SG_IGMM_MAX_K), compiled for one instruction set: adds to sums (the
 * caller sets products to 1, the rest to 0) and, where resp is not NULL,
 * writes the responsibilities (n x k, row-major). */
typedef void sg_igmm_e_kernel(const double *x, const sg_igmm_terms *terms, size_t n, size_t k,
                              const sg_igmm_constants *constants, double *resp, sg_igmm_sums *sums);

/* The kernel for this CPU (AVX2 where it has it, else the generic one). */
sg_igmm_e_kernel *sg_igmm_best_e_kernel(void);

/* The kernel named "generic" (SSE2 code on x86-64) or "avx2"; NULL for
 * another name or where this CPU cannot run it. For tests. */
sg_igmm_e_kernel *sg_igmm_e_kernel_named(const char *name);

#endif
