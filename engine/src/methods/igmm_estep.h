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
 * observation i in lane i mod SG_IGMM_LANES.
 *
 * The M-step's sums are centred on the E-step's mu_j (a below): with
 * W = sum r_ij, D = sum r_ij (a - x_i) and S = sum r_ij (a - x_i)^2 / (a x_i),
 * the new mean is mu = a - D / W, and since 1/x = 1/a + (a - x)/a^2
 * + (a - x)^2 / (a^2 x) and W / mu = W / a + D / (a mu),
 *     sum r_ij / x_i - W / mu = (S - (D / mu) (D / W) / a) / a   exactly,
 * so lambda = W a / (S - (D / mu) (D / W) / a). Why: the uncentred sums,
 * sum r x and sum r / x, give lambda's denominator as the difference of two
 * numbers that agree to about cv^2 (cv the component's coefficient of
 * variation), which kept about eps / cv^2 of it: lambda 3% off at cv 1e-7.
 * Here S's terms are all >= 0, and the part taken off, about
 * W ((a - mu) / a)^2, is at most S (Cauchy-Schwarz) and only a share
 * ((a - mu) / (cv a))^2 of it: once the mean has settled, lambda is within
 * a few eps at any cv. (Centred sums of r (a - x) / x in place of S would
 * still lose eps / cv: their terms are about cv, of both signs.) Each term
 * of S is a/x + x/a - 2, below 2^1001 for a mean among values within the
 * fit's range (igmm.c's SG_IGMM_RANGE), where (a - x)^2 / x alone could
 * overflow. */
typedef struct sg_igmm_sums {
    double weight[SG_IGMM_MAX_K][SG_IGMM_LANES];              /* W: sum of r_ij */
    double weighted_deviation[SG_IGMM_MAX_K][SG_IGMM_LANES];  /* D: sum of r_ij (mu_j - x_i) */
    double weighted_spread[SG_IGMM_MAX_K][SG_IGMM_LANES];     /* S: sum of r_ij (mu_j - x_i)^2 / (mu_j x_i) */
    double largest[SG_IGMM_LANES];  /* sum of each observation's largest log term */
    double product[SG_IGMM_LANES];  /* product of the rows' sums since the last log */
    double logs;                    /* the logs of those products taken so far */
} sg_igmm_sums;

/* Each component's constants of an E-step. The log density's last term,
 * lambda (x - mu)^2 / (2 mu^2 x), is taken as lambda / (2 mu) times the
 * spread (mu - x)^2 / (mu x), which the M-step's sums reuse. */
typedef struct sg_igmm_constants {
    double offset[SG_IGMM_MAX_K];              /* log alpha + (log lambda - log 2 pi) / 2 */
    double half_shape_over_mu[SG_IGMM_MAX_K];  /* lambda / (2 mu) */
    double mu[SG_IGMM_MAX_K];
    double inverse_mu[SG_IGMM_MAX_K];          /* 1 / mu */
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
