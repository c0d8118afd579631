/*
 * gmm.c: Gaussian mixtures by EM (statgpu.h's statgpu_gmm), on the CPU, with
 * scikit-learn's GaussianMixture's definitions (sklearn/mixture/_gaussian_mixture.py):
 * the same E-step in log space, the same M-step (nk with 10 DBL_EPSILON,
 * covariances around the new means plus reg_covar, weights nk / sum nk), the
 * same stopping rule and the same final E-step.
 *
 * Passes over the rows run on fixed blocks of SG_GMM_BLOCK_ROWS rows: each
 * block writes its own partial sums, added in block order, so the result is
 * the same bits at any thread count. An iteration is one pass: the E-step
 * also sums the products of the rows around the means it used, and the
 * M-step moves them to the new means (never raw second moments, which lose
 * the digits of data far from the origin); the GPU's E-step (gmm.cu) sums
 * the same quantities.
 */
#include "internal.h"
#include "core/pool.h"
#include "core/threads.h"
#include "core/matrix.h"
#include "core/units.h"
#include "methods/gmm_estep.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#define SG_GMM_BLOCK_ROWS ((size_t)4096)
#define SG_GMM_PARAMS_MIN_BYTES (offsetof(statgpu_gmm_params, initial_precisions) + sizeof(const double *))
#define SG_GMM_LOG_2PI 1.8378770664093454835606594728112
/* The largest problems a call takes: a row's work lives on the stack. */
#define SG_GMM_MAX_VARS 256
#define SG_GMM_MAX_K 512

/* A covariance estimate that is not positive definite gets its regulariser
 * multiplied by 10, at most this many times (from each variable's, or 1e-12
 * of its largest variance where that is 0). */
#define SG_GMM_MAX_REPAIRS 40

typedef struct sg_gmm_model {
    double *weights;      /* k */
    double *means;        /* k x d, leading dimension k */
    double *covariances;  /* per type, as statgpu_gmm_result */
    double *prec_chol;    /* likewise */
    double *log_det;      /* k: log det of each precision factor */
} sg_gmm_model;

typedef struct sg_gmm_fit {
    const double          *data;
    size_t                 n, d, ld, k;
    statgpu_gmm_covariance type;
    const double          *reg;        /* d: each variable's regulariser (sg_gmm_regularisers) */
    int                    threads;
    size_t                 blocks;
    double                *resp;       /* n x k, leading dimension n */
    double                *row_ll;     /* n */
    double                *partials;   /* blocks x stride */
    size_t                 stride;
    sg_gmm_model           model;
    size_t                 regularised;
    sg_gmm_device         *device;     /* the data on the GPU, or NULL: the CPU's passes */
    bool                   keep_resp;  /* the CPU's E-step writes resp (the final one) */
    double                *moments;    /* the E-step's products (k d^2) */
    double                *log_norm;   /* k: log w_j + log det U_j - d log(2 pi) / 2 (CPU and device) */
    double                *factors;    /* device: tied's and spherical's factors, one per component */
    statgpu_cuda_status    device_status;
    sg_gmm_estep_kernel   *e_kernel;   /* the CPU's E-step for this processor */
    double                *e_scratch;  /* threads x sg_gmm_estep_scratch_count */
    bool                   out_of_memory; /* the last M-step's failure was an allocation's (else a
                                             covariance beyond repair) */
} sg_gmm_fit;

static size_t sg_gmm_cov_count(statgpu_gmm_covariance type, size_t k, size_t d)
{
    switch (type) {
    case STATGPU_GMM_FULL:      return k * d * d;
    case STATGPU_GMM_TIED:      return d * d;
    case STATGPU_GMM_DIAG:      return k * d;
    case STATGPU_GMM_SPHERICAL: return k;
    }
    return 0;
}

static size_t sg_gmm_parameter_count(statgpu_gmm_covariance type, size_t k, size_t d)
{
    size_t covariance = type == STATGPU_GMM_FULL ? k * d * (d + 1) / 2
                        : type == STATGPU_GMM_TIED ? d * (d + 1) / 2
                        : type == STATGPU_GMM_DIAG ? k * d
                                                   : k;
    return covariance + d * k + k - 1;
}

static void sg_gmm_block_range(const sg_gmm_fit *fit, size_t b, size_t *begin, size_t *end)
{
    *begin = b * SG_GMM_BLOCK_ROWS;
    *end = *begin + SG_GMM_BLOCK_ROWS < fit->n ? *begin + SG_GMM_BLOCK_ROWS : fit->n;
}

/* ------------------------------------------------------ the regularisers */

/* One pass over a block of rows: per variable the sum of x (means NULL) or
 * of (x - mean)^2, into partials + b * stride. */
typedef struct sg_gmm_spread_pass {
    const sg_gmm_fit *fit;
    const double     *means;
    double           *partials;
} sg_gmm_spread_pass;

static void sg_gmm_spread_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_gmm_spread_pass *pass = context;
    const sg_gmm_fit *fit = pass->fit;
    size_t begin, end;
    sg_gmm_block_range(fit, b, &begin, &end);
    double *out = pass->partials + b * fit->stride;
    for (size_t v = 0; v < fit->d; ++v) {
        const double *x = fit->data + fit->ld * v;
        double total = 0.0;
        if (pass->means == NULL) {
            for (size_t i = begin; i < end; ++i)
                total += x[i];
        } else {
            const double mean = pass->means[v];
            for (size_t i = begin; i < end; ++i)
                total += (x[i] - mean) * (x[i] - mean);
        }
        out[v] = total;
    }
}

/* The blocks' sums of each variable, added in block order (the same bits at
 * any thread count), divided by n, into out (d). */
static void sg_gmm_spread_totals(const sg_gmm_fit *fit, const double *means, double *out)
{
    sg_gmm_spread_pass pass = { fit, means, fit->partials };
    sg_parallel_for(fit->threads, fit->blocks, sg_gmm_spread_block, &pass);
    for (size_t v = 0; v < fit->d; ++v) {
        double total = 0.0;
        for (size_t b = 0; b < fit->blocks; ++b)
            total += fit->partials[b * fit->stride + v];
        out[v] = total / (double)fit->n;
    }
}

/* Each variable's regulariser into reg (d): reg_covar, or with relative
 * reg_covar times the variable's variance over the rows (two passes, the
 * means then the squared deviations; fit->partials is scratch); a constant
 * variable takes reg_covar times the largest variance, and reg_covar where
 * every variable is constant. */
static void sg_gmm_regularisers(const sg_gmm_fit *fit, double reg_covar, bool relative, double *reg)
{
    const size_t d = fit->d;
    for (size_t v = 0; v < d; ++v)
        reg[v] = reg_covar;
    if (!relative)
        return;
    double means[SG_GMM_MAX_VARS], variances[SG_GMM_MAX_VARS];
    sg_gmm_spread_totals(fit, NULL, means);
    sg_gmm_spread_totals(fit, means, variances);
    double largest = 0.0;
    for (size_t v = 0; v < d; ++v)
        largest = fmax(largest, variances[v]);
    for (size_t v = 0; v < d; ++v)
        reg[v] = reg_covar * (variances[v] > 0.0 ? variances[v] : largest > 0.0 ? largest : 1.0);
}

/* ------------------------------------------------------------ the E-step */

/* Per block: responsibilities (kept when fit->keep_resp) and row
 * log-likelihoods of its rows; partial sums of the log-likelihood, of nk, of
 * r (x - mean_j) and of the products r (x - mean_j)(x - mean_j)^T (full and
 * tied: upper triangles of d x d blocks; diag and spherical: the squares),
 * around the means this E-step uses: the M-step moves them to the new means
 * (sg_gmm_m_step_moments), so one pass over the data makes an iteration.
 * The rows go through gmm_estep.c's kernel in chunks. */
static void sg_gmm_e_block(void *context, size_t b, int slot)
{
    sg_gmm_fit *fit = context;
    const size_t d = fit->d, k = fit->k;
    const sg_gmm_model *m = &fit->model;
    bool products = fit->type == STATGPU_GMM_FULL || fit->type == STATGPU_GMM_TIED;
    double *partial = fit->partials + b * fit->stride;
    memset(partial, 0, (1 + k + k * d + k * (products ? d * d : d)) * sizeof *partial);
    const sg_gmm_estep_model model = { d, k, fit->type, m->means, m->prec_chol, fit->log_norm };
    const sg_gmm_estep_out out = { fit->keep_resp ? fit->resp : NULL, fit->n, fit->row_ll, partial };
    size_t begin, end;
    sg_gmm_block_range(fit, b, &begin, &end);
    fit->e_kernel(&model, fit->data, fit->ld, begin, end, &out,
                  fit->e_scratch + (size_t)slot * sg_gmm_estep_scratch_count(d, k));
}

/* The E-step: responsibilities (when fit->keep_resp), row log-likelihoods;
 * returns the mean per-row log-likelihood, and leaves nk and the sums of
 * r (x - mean_j) (k + k*d) in sums and the products in moments, added in
 * block order. */
static double sg_gmm_e_step(sg_gmm_fit *fit, double *sums, double *moments)
{
    const size_t k = fit->k, d = fit->d;
    bool products = fit->type == STATGPU_GMM_FULL || fit->type == STATGPU_GMM_TIED;
    size_t per_component = products ? d * d : d;
    for (size_t j = 0; j < k; ++j)  /* as sg_gmm_device_model's */
        fit->log_norm[j] = log(fit->model.weights[j]) + fit->model.log_det[j] - 0.5 * (double)d * SG_GMM_LOG_2PI;
    sg_parallel_for(fit->threads, fit->blocks, sg_gmm_e_block, fit);
    double total = 0.0;
    memset(sums, 0, (k + k * d) * sizeof *sums);
    memset(moments, 0, k * per_component * sizeof *moments);
    for (size_t b = 0; b < fit->blocks; ++b) {
        const double *partial = fit->partials + b * fit->stride;
        total += partial[0];
        for (size_t e = 0; e < k + k * d; ++e)
            sums[e] += partial[1 + e];
        for (size_t e = 0; e < k * per_component; ++e)
            moments[e] += partial[1 + k + k * d + e];
    }
    return total / (double)fit->n;
}

/* ------------------------------------------------------------ the M-step */

/* Per block: the responsibility-weighted squares and products of the rows
 * around the new means (full and tied: the d x d products per component;
 * diag and spherical: the d squares per component). */
static void sg_gmm_cov_block(void *context, size_t b, int slot)
{
    (void)slot;
    sg_gmm_fit *fit = context;
    const size_t d = fit->d, k = fit->k, n = fit->n;
    bool products = fit->type == STATGPU_GMM_FULL || fit->type == STATGPU_GMM_TIED;
    size_t per_component = products ? d * d : d;
    double *partial = fit->partials + b * fit->stride;
    memset(partial, 0, k * per_component * sizeof *partial);
    double c[SG_GMM_MAX_VARS];
    size_t begin, end;
    sg_gmm_block_range(fit, b, &begin, &end);
    for (size_t j = 0; j < k; ++j) {
        double *out = partial + j * per_component;
        for (size_t i = begin; i < end; ++i) {
            double r = fit->resp[i + n * j];
            for (size_t v = 0; v < d; ++v)
                c[v] = fit->data[i + fit->ld * v] - fit->model.means[j + k * v];
            if (products) {
                for (size_t col = 0; col < d; ++col)
                    for (size_t row = 0; row <= col; ++row)
                        out[row + d * col] += r * c[row] * c[col];
            } else {
                for (size_t v = 0; v < d; ++v)
                    out[v] += r * c[v] * c[v];
            }
        }
    }
}

/* Cholesky of the symmetric a (d x d, upper triangle read), lower factor in
 * l; false when a is not positive definite. */
static bool sg_gmm_cholesky(const double *a, size_t d, double *l)
{
    memset(l, 0, d * d * sizeof *l);
    for (size_t j = 0; j < d; ++j) {
        double diagonal = a[j + d * j];
        for (size_t p = 0; p < j; ++p)
            diagonal -= l[j + d * p] * l[j + d * p];
        if (!(diagonal > 0.0) || !isfinite(diagonal))
            return false;
        double root = sqrt(diagonal);
        l[j + d * j] = root;
        for (size_t i = j + 1; i < d; ++i) {
            double s = a[j + d * i];  /* a(i, j) from the upper triangle: a(j, i) */
            for (size_t p = 0; p < j; ++p)
                s -= l[i + d * p] * l[j + d * p];
            l[i + d * j] = s / root;
        }
    }
    return true;
}

/* The precision factor of a full covariance: U = inv(L)^T, upper, with L the
 * lower Cholesky factor of the covariance (scikit-learn's
 * solve_triangular(cov_chol, I, lower=True).T); returns sum log diag(U). The
 * covariance's diagonal is raised by its regularisers (reg, d) times 10
 * until it is positive definite; *repaired counts the raises. */
static bool sg_gmm_full_factor(double *covariance, size_t d, const double *reg, double *u, double *l,
                               double *log_det, size_t *repaired)
{
    double largest = 0.0;
    for (size_t v = 0; v < d; ++v)
        largest = fmax(largest, fabs(covariance[v + d * v]));
    double *extra = u;  /* the raises, until u is made */
    for (size_t v = 0; v < d; ++v)
        extra[v] = reg[v] > 0.0 ? reg[v] : largest > 0.0 ? 1e-12 * largest : 1e-12;
    for (int attempt = 0; !sg_gmm_cholesky(covariance, d, l); ++attempt) {
        if (attempt == SG_GMM_MAX_REPAIRS)
            return false;
        for (size_t v = 0; v < d; ++v) {
            covariance[v + d * v] += extra[v];
            extra[v] *= 10.0;
        }
        ++*repaired;
    }
    /* inv(L) by forward substitution, one column at a time, then U = inv(L)^T. */
    memset(u, 0, d * d * sizeof *u);
    double sum_log = 0.0;
    for (size_t col = 0; col < d; ++col) {
        for (size_t row = col; row < d; ++row) {
            double s = row == col ? 1.0 : 0.0;
            for (size_t p = col; p < row; ++p)
                s -= l[row + d * p] * u[col + d * p];  /* inv(L)(p, col) stored as u(col, p) */
            u[col + d * row] = s / l[row + d * row];   /* inv(L)(row, col) -> U(col, row) */
        }
        sum_log += log(u[col + d * col]);
    }
    *log_det = sum_log;
    return true;
}

static bool sg_gmm_m_finish(sg_gmm_fit *fit, const double *nk, double nk_total, const double *sum, double *l);

/* The M-step from the E-step's sums (nk and weighted sums of x): weights,
 * means, covariances, precision factors. false when out of memory or a
 * covariance cannot be repaired. */
static bool sg_gmm_m_step(sg_gmm_fit *fit, const double *sums)
{
    const size_t k = fit->k, d = fit->d;
    sg_gmm_model *m = &fit->model;
    double nk_total = 0.0;
    double *nk = malloc(k * sizeof *nk);
    double *l = malloc(d * d * sizeof *l);
    double *scratch = malloc(d * d * sizeof *scratch);
    fit->out_of_memory = false;
    if (nk == NULL || l == NULL || scratch == NULL) {
        free(nk);
        free(l);
        free(scratch);
        fit->out_of_memory = true;
        return false;
    }
    for (size_t j = 0; j < k; ++j) {
        nk[j] = sums[j] + 10.0 * DBL_EPSILON;
        nk_total += nk[j];
        for (size_t v = 0; v < d; ++v)
            m->means[j + k * v] = sums[k + j + k * v] / nk[j];
    }
    for (size_t j = 0; j < k; ++j)
        m->weights[j] = nk[j] / nk_total;

    sg_parallel_for(fit->threads, fit->blocks, sg_gmm_cov_block, fit);
    bool products = fit->type == STATGPU_GMM_FULL || fit->type == STATGPU_GMM_TIED;
    size_t per_component = products ? d * d : d;
    double *sum = calloc(k * per_component, sizeof *sum);
    if (sum == NULL) {
        free(nk);
        free(l);
        free(scratch);
        fit->out_of_memory = true;
        return false;
    }
    for (size_t b = 0; b < fit->blocks; ++b)
        for (size_t e = 0; e < k * per_component; ++e)
            sum[e] += fit->partials[b * fit->stride + e];
    bool ok = sg_gmm_m_finish(fit, nk, nk_total, sum, l);
    free(sum);
    free(nk);
    free(l);
    free(scratch);
    return ok;
}

/* The M-step's covariances from the weighted squares and products around
 * the new means (sum: full and tied k blocks of d x d, upper triangle, diag
 * and spherical k x d at j d + v), nk and their total: covariances, then the
 * precision factors, each covariance repaired where it must be. l is d x d
 * scratch. */
static bool sg_gmm_m_finish(sg_gmm_fit *fit, const double *nk, double nk_total, const double *sum, double *l)
{
    const size_t k = fit->k, d = fit->d;
    sg_gmm_model *m = &fit->model;
    bool ok = true;
    switch (fit->type) {
    case STATGPU_GMM_FULL:
        for (size_t j = 0; j < k && ok; ++j) {
            double *cov = m->covariances + j * d * d;
            for (size_t col = 0; col < d; ++col)
                for (size_t row = 0; row <= col; ++row) {
                    double value = sum[j * d * d + row + d * col] / nk[j];
                    cov[row + d * col] = cov[col + d * row] = value;
                }
            for (size_t v = 0; v < d; ++v)
                cov[v + d * v] += fit->reg[v];
            ok = sg_gmm_full_factor(cov, d, fit->reg, m->prec_chol + j * d * d, l, &m->log_det[j],
                                    &fit->regularised);
            if (ok)  /* the repaired diagonal goes to both triangles */
                for (size_t col = 0; col < d; ++col)
                    for (size_t row = 0; row < col; ++row)
                        cov[col + d * row] = cov[row + d * col];
        }
        break;
    case STATGPU_GMM_TIED: {
        double *cov = m->covariances;
        for (size_t col = 0; col < d; ++col)
            for (size_t row = 0; row <= col; ++row) {
                double total = 0.0;
                for (size_t j = 0; j < k; ++j)
                    total += sum[j * d * d + row + d * col];
                cov[row + d * col] = cov[col + d * row] = total / nk_total;
            }
        for (size_t v = 0; v < d; ++v)
            cov[v + d * v] += fit->reg[v];
        double log_det = 0.0;
        ok = sg_gmm_full_factor(cov, d, fit->reg, m->prec_chol, l, &log_det, &fit->regularised);
        for (size_t j = 0; j < k; ++j)
            m->log_det[j] = log_det;
        break;
    }
    case STATGPU_GMM_DIAG:
    case STATGPU_GMM_SPHERICAL:
        for (size_t j = 0; j < k; ++j) {
            double mean_variance = 0.0;
            for (size_t v = 0; v < d; ++v) {
                double variance = sum[j * d + v] / nk[j] + fit->reg[v];
                if (!(variance > 0.0)) {  /* a constant column of a lone component, no regulariser */
                    variance = fit->reg[v] > 0.0 ? fit->reg[v] : 1e-12;
                    ++fit->regularised;
                }
                mean_variance += variance;
                if (fit->type == STATGPU_GMM_DIAG)
                    m->covariances[j + k * v] = variance;
            }
            if (fit->type == STATGPU_GMM_SPHERICAL)
                m->covariances[j] = mean_variance / (double)d;
        }
        if (fit->type == STATGPU_GMM_DIAG) {
            for (size_t j = 0; j < k; ++j) {
                double log_det = 0.0;
                for (size_t v = 0; v < d; ++v) {
                    double factor = 1.0 / sqrt(m->covariances[j + k * v]);
                    m->prec_chol[j + k * v] = factor;
                    log_det += log(factor);
                }
                m->log_det[j] = log_det;
            }
        } else {
            for (size_t j = 0; j < k; ++j) {
                m->prec_chol[j] = 1.0 / sqrt(m->covariances[j]);
                m->log_det[j] = (double)d * log(m->prec_chol[j]);
            }
        }
        break;
    }
    return ok;
}

/* The M-step from the device's E-step: sums hold nk and the weighted sums of
 * x - c_j, moments the weighted products of x - c_j, c_j the means the
 * E-step used (fit->model.means on entry). The new means are c_j + s_j / nk
 * (nk with its 10 DBL_EPSILON, as the CPU's), and the products around them
 * S - s d^T - d s^T + nk d d^T with d = new mean - c_j: the same sums as the
 * CPU's second pass, added in another order. */
static bool sg_gmm_m_step_moments(sg_gmm_fit *fit, const double *sums, const double *moments)
{
    const size_t k = fit->k, d = fit->d;
    sg_gmm_model *m = &fit->model;
    bool products = fit->type == STATGPU_GMM_FULL || fit->type == STATGPU_GMM_TIED;
    size_t per_component = products ? d * d : d;
    double *nk = malloc(k * sizeof *nk);
    double *l = malloc(d * d * sizeof *l);
    double *sum = calloc(k * per_component, sizeof *sum);
    fit->out_of_memory = false;
    if (nk == NULL || l == NULL || sum == NULL) {
        free(nk);
        free(l);
        free(sum);
        fit->out_of_memory = true;
        return false;
    }
    double nk_total = 0.0, shift[SG_GMM_MAX_VARS];
    for (size_t j = 0; j < k; ++j) {
        double raw = sums[j];
        nk[j] = raw + 10.0 * DBL_EPSILON;
        nk_total += nk[j];
        for (size_t v = 0; v < d; ++v) {
            double centre = m->means[j + k * v], first = sums[k + j + k * v];
            double mean = (first + centre * raw) / nk[j];
            m->means[j + k * v] = mean;
            shift[v] = mean - centre;
        }
        if (products) {
            for (size_t col = 0; col < d; ++col)
                for (size_t row = 0; row <= col; ++row)
                    sum[j * d * d + row + d * col] = moments[j * d * d + row + d * col]
                                                    - sums[k + j + k * row] * shift[col]
                                                    - shift[row] * sums[k + j + k * col]
                                                    + raw * shift[row] * shift[col];
        } else {
            for (size_t v = 0; v < d; ++v)
                sum[j * d + v] = moments[j * d + v] - 2.0 * sums[k + j + k * v] * shift[v]
                                 + raw * shift[v] * shift[v];
        }
    }
    for (size_t j = 0; j < k; ++j)
        m->weights[j] = nk[j] / nk_total;
    bool ok = sg_gmm_m_finish(fit, nk, nk_total, sum, l);
    free(sum);
    free(nk);
    free(l);
    return ok;
}

/* The model as the device's E-step takes it: log_norm and the factors, in
 * triangular blocks (full; tied repeated k times) or a k x d diagonal (diag;
 * spherical's one value repeated over the variables), written to log_norm
 * (k) and factors (k d^2) where they are not the model's own. */
static statgpu_cuda_gmm_model sg_gmm_device_model(const sg_gmm_fit *fit, const sg_gmm_model *m, double *log_norm,
                                                  double *factors)
{
    const size_t k = fit->k, d = fit->d;
    statgpu_cuda_gmm_model model = { 0, log_norm, m->means, factors };
    for (size_t j = 0; j < k; ++j)
        log_norm[j] = log(m->weights[j]) + m->log_det[j] - 0.5 * (double)d * SG_GMM_LOG_2PI;
    switch (fit->type) {
    case STATGPU_GMM_FULL:
        model.triangular = 1;
        model.factors = m->prec_chol;
        break;
    case STATGPU_GMM_TIED:
        model.triangular = 1;
        for (size_t j = 0; j < k; ++j)
            memcpy(factors + j * d * d, m->prec_chol, d * d * sizeof *factors);
        break;
    case STATGPU_GMM_DIAG:
        model.factors = m->prec_chol;
        break;
    case STATGPU_GMM_SPHERICAL:
        for (size_t v = 0; v < d; ++v)
            for (size_t j = 0; j < k; ++j)
                factors[j + k * v] = m->prec_chol[j];
        break;
    }
    return model;
}

/* The final E-step on the device, of fit->model: responsibilities and row
 * log-likelihoods into fit->resp and fit->row_ll. false with
 * fit->device_status when the device failed. */
static bool sg_gmm_device_final_e_step(sg_gmm_fit *fit, double *sums)
{
    statgpu_cuda_gmm_model model = sg_gmm_device_model(fit, &fit->model, fit->log_norm, fit->factors);
    statgpu_cuda_gmm_sums out = { 0.0, sums, fit->moments, fit->resp, fit->row_ll };
    fit->device_status = sg_cuda_gmm_estep(fit->device, &model, &out, 1);
    return fit->device_status == STATGPU_CUDA_OK;
}

/* A run (restart) in flight: its model, its E-step's sums, where it stands.
 * On the device up to STATGPU_CUDA_GMM_MOST_MODELS runs go together, each
 * E-step of all of them one launch; on the CPU one at a time. */
static void sg_gmm_model_free(sg_gmm_model *m);
static bool sg_gmm_model_alloc(sg_gmm_model *m, statgpu_gmm_covariance type, size_t k, size_t d);

typedef struct sg_gmm_slot {
    sg_gmm_model model;
    double      *sums, *moments, *log_norm, *factors;
    double       bound;
    size_t       iterations, regularised;
    int          converged, active;
} sg_gmm_slot;

static bool sg_gmm_slot_alloc(sg_gmm_slot *slot, statgpu_gmm_covariance type, size_t k, size_t d)
{
    slot->sums = malloc((k + k * d) * sizeof(double));
    slot->moments = malloc(k * d * d * sizeof(double));
    slot->log_norm = malloc(k * sizeof(double));
    slot->factors = malloc(k * d * d * sizeof(double));
    return sg_gmm_model_alloc(&slot->model, type, k, d) && slot->sums && slot->moments && slot->log_norm
           && slot->factors;
}

static void sg_gmm_slot_free(sg_gmm_slot *slot)
{
    sg_gmm_model_free(&slot->model);
    free(slot->sums);
    free(slot->moments);
    free(slot->log_norm);
    free(slot->factors);
}

/* One EM iteration of every active slot: the E-steps (on the device, one
 * launch for all), each slot's bound, then each one's M-step. 0, or 1 when
 * an M-step failed (out of memory, a covariance beyond repair), or 2 when the
 * device failed (fit->device_status). */
static int sg_gmm_iterate_slots(sg_gmm_fit *fit, sg_gmm_slot *slots, size_t count)
{
    const sg_gmm_model working = fit->model;
    int failure = 0;
    if (fit->device != NULL) {
        statgpu_cuda_gmm_model models[STATGPU_CUDA_GMM_MOST_MODELS];
        statgpu_cuda_gmm_sums outs[STATGPU_CUDA_GMM_MOST_MODELS];
        size_t index[STATGPU_CUDA_GMM_MOST_MODELS], active = 0;
        for (size_t s = 0; s < count; ++s)
            if (slots[s].active) {
                models[active] = sg_gmm_device_model(fit, &slots[s].model, slots[s].log_norm, slots[s].factors);
                outs[active] = (statgpu_cuda_gmm_sums){ 0.0, slots[s].sums, slots[s].moments, NULL, NULL };
                index[active++] = s;
            }
        fit->device_status = sg_cuda_gmm_estep(fit->device, models, outs, active);
        if (fit->device_status != STATGPU_CUDA_OK)
            return 2;
        for (size_t a = 0; a < active; ++a)
            slots[index[a]].bound = outs[a].log_likelihood / (double)fit->n;
    } else {
        for (size_t s = 0; s < count; ++s)
            if (slots[s].active) {
                fit->model = slots[s].model;
                slots[s].bound = sg_gmm_e_step(fit, slots[s].sums, slots[s].moments);
            }
    }
    for (size_t s = 0; s < count; ++s)
        if (slots[s].active) {
            fit->model = slots[s].model;
            fit->regularised = slots[s].regularised;
            if (!sg_gmm_m_step_moments(fit, slots[s].sums, slots[s].moments))
                failure = 1;
            slots[s].regularised = fit->regularised;
        }
    fit->model = working;
    return failure;
}

/* ------------------------------------------------------------- the entry */

void statgpu_gmm_params_init(statgpu_gmm_params *params)
{
    if (params == NULL)
        return;
    memset(params, 0, sizeof *params);
    params->struct_bytes = sizeof *params;
    params->covariance = STATGPU_GMM_FULL;
    params->reg_covar = 1e-6;
    params->tolerance = 1e-3;
    params->max_iterations = 100;
    params->restart_count = 1;
    params->init = STATGPU_GMM_INIT_KMEANS;
}

void statgpu_gmm_result_destroy(statgpu_gmm_result *result)
{
    if (result == NULL)
        return;
    free(result->weights);
    free(result->means);
    free(result->covariances);
    free(result->precisions_cholesky);
    free(result->responsibilities);
    free(result->row_log_likelihood);
    free(result->labels);
    free(result->candidates);
    free(result);
}

static void sg_gmm_model_free(sg_gmm_model *m)
{
    free(m->weights);
    free(m->means);
    free(m->covariances);
    free(m->prec_chol);
    free(m->log_det);
    memset(m, 0, sizeof *m);
}

static bool sg_gmm_model_alloc(sg_gmm_model *m, statgpu_gmm_covariance type, size_t k, size_t d)
{
    size_t cov = sg_gmm_cov_count(type, k, d);
    m->weights = malloc(k * sizeof(double));
    m->means = malloc(k * d * sizeof(double));
    m->covariances = calloc(cov, sizeof(double));
    m->prec_chol = calloc(cov, sizeof(double));
    m->log_det = malloc(k * sizeof(double));
    return m->weights && m->means && m->covariances && m->prec_chol && m->log_det;
}

/* The arguments' checks; with largest not NULL, the data's largest
 * magnitude too, from the finiteness scan's own pass. */
static statgpu_status sg_gmm_check(statgpu_context *context, const double *data, size_t n, size_t d, size_t ld,
                                   size_t k, const statgpu_gmm_params *p, double *largest)
{
    if (data == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "data is NULL");
    if (n == 0)
        return sg_fail(context, STATGPU_ERROR_EMPTY_INPUT, "the data hold no observations");
    if (d == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the data hold no variables");
    if (ld < n)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "the leading dimension %zu is less than the %zu observations", ld, n);
    if (d > SG_GMM_MAX_VARS || d > SIZE_MAX / sizeof(double) / ld)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%zu variables are more than a mixture takes (%d)", d,
                       SG_GMM_MAX_VARS);
    if (k == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "k = 0: at least one component is needed");
    if (k > n)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "k = %zu is more than the %zu observations", k, n);
    if (k > SG_GMM_MAX_K || k > SIZE_MAX / sizeof(double) / n)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "k = %zu is more than a mixture takes (%d)", k,
                       SG_GMM_MAX_K);
    if (p->covariance < STATGPU_GMM_FULL || p->covariance > STATGPU_GMM_SPHERICAL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "unknown covariance type %d", (int)p->covariance);
    if (!(p->reg_covar >= 0.0 && p->reg_covar <= DBL_MAX))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "reg_covar %.17g is not a finite number >= 0",
                       p->reg_covar);
    if (p->reg_covar_relative != 0 && p->reg_covar_relative != 1)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "reg_covar_relative is %d: 0 or 1",
                       p->reg_covar_relative);
    if (!(p->tolerance >= 0.0 && p->tolerance <= DBL_MAX))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the tolerance %.17g is not a finite number >= 0",
                       p->tolerance);
    if (p->max_iterations == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "max_iterations is 0");
    if (p->restart_count == 0 || p->restart_count > STATGPU_GMM_MAX_RESTART_COUNT)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "restart_count = %zu is not from 1 to %u",
                       p->restart_count, STATGPU_GMM_MAX_RESTART_COUNT);
    if (p->init < STATGPU_GMM_INIT_KMEANS || p->init > STATGPU_GMM_INIT_RANDOM)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "unknown initialisation %d", (int)p->init);
    if (p->init == STATGPU_GMM_INIT_GIVEN
        && (p->initial_weights == NULL || p->initial_means == NULL || p->initial_precisions == NULL))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "STATGPU_GMM_INIT_GIVEN needs initial_weights, initial_means and initial_precisions");
    if (sg_columns_finite_largest(data, n, d, ld, context->cpu_thread_count, largest))
        return STATGPU_OK;
    for (size_t v = 0; v < d; ++v)  /* the first bad value, by variable then observation */
        for (size_t i = 0; i < n; ++i) {
            double x = data[i + ld * v];
            if (isnan(x))
                return sg_fail(context, STATGPU_ERROR_NAN_IN_DATA, "the data contain NaN (observation %zu, "
                               "variable %zu)", i + 1, v + 1);
            if (!isfinite(x))
                return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the data contain an infinity (observation "
                               "%zu, variable %zu)", i + 1, v + 1);
        }
    return STATGPU_OK;
}

/* An upper triangular u with u u^T = precision (d x d, symmetric), the kind
 * of factor the M-step makes (so that every E-step reads the upper triangle
 * alone): the lower Cholesky factor of the precision with rows and columns
 * in reverse order, reversed back. STATGPU_ERROR_INVALID_ARGUMENT when the
 * precision is not positive definite, STATGPU_ERROR_OUT_OF_MEMORY. */
static statgpu_status sg_gmm_upper_factor(const double *precision, size_t d, double *u)
{
    double *reversed = malloc(2 * d * d * sizeof *reversed);
    if (reversed == NULL)
        return STATGPU_ERROR_OUT_OF_MEMORY;
    double *lower = reversed + d * d;
    for (size_t c = 0; c < d; ++c)
        for (size_t r = 0; r < d; ++r)
            reversed[r + d * c] = precision[(d - 1 - r) + d * (d - 1 - c)];
    bool ok = sg_gmm_cholesky(reversed, d, lower);
    if (ok)
        for (size_t c = 0; c < d; ++c)
            for (size_t r = 0; r < d; ++r)
                u[r + d * c] = lower[(d - 1 - r) + d * (d - 1 - c)];
    free(reversed);
    return ok ? STATGPU_OK : STATGPU_ERROR_INVALID_ARGUMENT;
}

/* The given parameters as the model: weights and means as they are, the
 * precision factors from the given precisions (full and tied: an upper
 * factor u u^T of each, where scikit-learn takes the lower Cholesky factor of
 * precisions_init: the same quadratic forms; diag and spherical: square
 * roots). */
static statgpu_status sg_gmm_given(statgpu_context *context, sg_gmm_fit *fit, const statgpu_gmm_params *p)
{
    const size_t k = fit->k, d = fit->d;
    sg_gmm_model *m = &fit->model;
    double weight_sum = 0.0;
    for (size_t j = 0; j < k; ++j) {
        if (!(p->initial_weights[j] > 0.0 && p->initial_weights[j] <= 1.0))
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "initial weight %zu is %.17g, not in (0, 1]",
                           j + 1, p->initial_weights[j]);
        m->weights[j] = p->initial_weights[j];
        weight_sum += m->weights[j];
    }
    if (!(fabs(weight_sum - 1.0) <= 1e-8))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the initial weights sum to %.17g, not 1",
                       weight_sum);
    for (size_t e = 0; e < k * d; ++e) {
        if (!isfinite(p->initial_means[e]))
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "an initial mean is not finite");
        m->means[e] = p->initial_means[e];
    }
    size_t blocks = fit->type == STATGPU_GMM_FULL ? k : fit->type == STATGPU_GMM_TIED ? 1 : 0;
    for (size_t j = 0; j < blocks; ++j) {
        const double *precision = p->initial_precisions + j * d * d;
        double *factor = m->prec_chol + j * d * d;
        for (size_t e = 0; e < d * d; ++e)
            if (!isfinite(precision[e]))
                return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "an initial precision is not finite");
        statgpu_status factored = sg_gmm_upper_factor(precision, d, factor);
        if (factored == STATGPU_ERROR_OUT_OF_MEMORY)
            return sg_fail(context, factored, "could not allocate the factor of initial precision %zu", j + 1);
        if (factored != STATGPU_OK)
            return sg_fail(context, factored, "initial precision %zu is not positive definite", j + 1);
        double log_det = 0.0;
        for (size_t v = 0; v < d; ++v)
            log_det += log(factor[v + d * v]);
        if (fit->type == STATGPU_GMM_TIED)
            for (size_t c = 0; c < k; ++c)
                m->log_det[c] = log_det;
        else
            m->log_det[j] = log_det;
    }
    if (fit->type == STATGPU_GMM_DIAG || fit->type == STATGPU_GMM_SPHERICAL) {
        size_t count = fit->type == STATGPU_GMM_DIAG ? k * d : k;
        for (size_t e = 0; e < count; ++e) {
            if (!(p->initial_precisions[e] > 0.0) || !isfinite(p->initial_precisions[e]))
                return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "initial precision %zu is %.17g, not "
                               "positive", e + 1, p->initial_precisions[e]);
            m->prec_chol[e] = sqrt(p->initial_precisions[e]);
        }
        for (size_t j = 0; j < k; ++j) {
            double log_det = 0.0;
            if (fit->type == STATGPU_GMM_DIAG)
                for (size_t v = 0; v < d; ++v)
                    log_det += log(m->prec_chol[j + k * v]);
            else
                log_det = (double)d * log(m->prec_chol[j]);
            m->log_det[j] = log_det;
        }
    }
    return STATGPU_OK;
}

/* The M-step from responsibilities already in fit->resp: nk and the sums of
 * r x, then sg_gmm_m_step (which sums the products around the new means). */
static statgpu_status sg_gmm_from_responsibilities(statgpu_context *context, sg_gmm_fit *fit, double *sums)
{
    const size_t n = fit->n, k = fit->k, d = fit->d;
    memset(sums, 0, (k + k * d) * sizeof *sums);
    for (size_t j = 0; j < k; ++j)
        for (size_t i = 0; i < n; ++i) {
            double r = fit->resp[i + n * j];
            sums[j] += r;
            for (size_t v = 0; v < d; ++v)
                sums[k + j + k * v] += r * fit->data[i + fit->ld * v];
        }
    if (!sg_gmm_m_step(fit, sums))
        return fit->out_of_memory
                   ? sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate GMM work space")
                   : sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "a covariance could not be made positive "
                             "definite: the data are too far from ordinary size");
    return STATGPU_OK;
}

/* The model from a k-means run's labels: one-hot responsibilities, then the
 * M-step (scikit-learn's _initialize with init_params="kmeans"). */
static statgpu_status sg_gmm_from_kmeans(statgpu_context *context, sg_gmm_fit *fit, uint64_t seed, double *sums)
{
    statgpu_kmeans_params params;
    statgpu_kmeans_params_init(&params);
    params.restart_count = 1;
    params.seed = seed;
    params.init = STATGPU_KMEANS_INIT_PLUS_PLUS;
    statgpu_kmeans_result *clusters = NULL;
    statgpu_status status = statgpu_kmeans(context, fit->data, fit->n, fit->d, fit->ld, fit->k, &params, &clusters);
    if (status != STATGPU_OK)
        return status;
    for (size_t j = 0; j < fit->k; ++j)
        for (size_t i = 0; i < fit->n; ++i)
            fit->resp[i + fit->n * j] = clusters->labels[i] == (int32_t)j ? 1.0 : 0.0;
    statgpu_kmeans_result_destroy(clusters);
    return sg_gmm_from_responsibilities(context, fit, sums);
}

/* k-means++ seeds (the engine's, as KMEANS draws them) as the means, each row
 * given wholly to its nearest seed (the lower index on a tie), no Lloyd
 * iteration; then the M-step. */
static statgpu_status sg_gmm_from_plus_plus(statgpu_context *context, sg_gmm_fit *fit, uint64_t stream, double *sums)
{
    const size_t n = fit->n, k = fit->k, d = fit->d;
    sg_kmeans_problem problem = { fit->data, n, d, fit->ld, k, fit->threads };
    sg_kmeans_workspace *workspace = sg_cpu_kmeans_workspace_create(&problem);
    double *seeds = malloc(k * d * sizeof *seeds);
    statgpu_status status = workspace != NULL && seeds != NULL ? STATGPU_OK : STATGPU_ERROR_OUT_OF_MEMORY;
    const sg_kmeans_progress progress = { context, 0, 1 };  /* the seeding may be stopped */
    if (status == STATGPU_OK)
        status = sg_cpu_kmeans_plus_plus(&problem, workspace, stream, &progress, seeds);
    if (status == STATGPU_OK) {
        for (size_t i = 0; i < n; ++i) {
            size_t nearest = 0;
            double best = INFINITY;
            for (size_t j = 0; j < k; ++j) {
                double distance = 0.0;
                for (size_t v = 0; v < d; ++v) {
                    double difference = fit->data[i + fit->ld * v] - seeds[j + k * v];
                    distance += difference * difference;
                }
                if (distance < best) {
                    best = distance;
                    nearest = j;
                }
            }
            for (size_t j = 0; j < k; ++j)
                fit->resp[i + n * j] = j == nearest ? 1.0 : 0.0;
        }
    }
    sg_cpu_kmeans_workspace_destroy(workspace);
    free(seeds);
    if (status == STATGPU_ERROR_INVALID_ARGUMENT)
        return sg_fail(context, status, "the data have fewer than k = %zu distinct rows", k);
    if (status != STATGPU_OK)
        return sg_fail(context, status, "could not allocate the k-means++ seeds");
    return sg_gmm_from_responsibilities(context, fit, sums);
}

/* Random responsibilities, uniform on (0, 1) and each row scaled to sum 1
 * (scikit-learn's init_params="random"); then the M-step. */
static statgpu_status sg_gmm_from_random(statgpu_context *context, sg_gmm_fit *fit, uint64_t stream, double *sums)
{
    const size_t n = fit->n, k = fit->k;
    sg_rng rng = { stream };
    for (size_t i = 0; i < n; ++i) {
        double total = 0.0;
        for (size_t j = 0; j < k; ++j) {
            double u = ((double)(sg_rng_next(&rng) >> 11) + 0.5) * 0x1p-53;
            fit->resp[i + n * j] = u;
            total += u;
        }
        for (size_t j = 0; j < k; ++j)
            fit->resp[i + n * j] /= total;
    }
    return sg_gmm_from_responsibilities(context, fit, sums);
}

/* A call's start: context and out_result checked (*out_result NULL), the
 * caller's params (NULL: the defaults) as this build's struct. */
static statgpu_status sg_gmm_begin(statgpu_context *context, const statgpu_gmm_params *params,
                                   statgpu_gmm_result **out_result, statgpu_gmm_params *chosen)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_result is NULL");
    *out_result = NULL;
    statgpu_gmm_params_init(chosen);
    if (params == NULL)
        return STATGPU_OK;
    if (params->struct_bytes < SG_GMM_PARAMS_MIN_BYTES || params->struct_bytes > sizeof *chosen)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "params->struct_bytes is %zu; call statgpu_gmm_params_init first", params->struct_bytes);
    memcpy(chosen, params, params->struct_bytes);
    chosen->struct_bytes = sizeof *chosen;
    return STATGPU_OK;
}

/* A component is singular, as mclust calls a fit whose covariance estimate
 * cannot be inverted, where its own estimate (the fitted covariance less the
 * regulariser) has a variance below SG_GMM_SINGULAR_SHARE of the data's in
 * some direction of the variables that vary: a component on rows that repeat
 * one value (integer data, rounded data) has 0 there, and its density is
 * then the regulariser's spike, whose likelihood grows without bound as the
 * regulariser shrinks; a model of such components wins BIC comparisons it
 * should not (Old Faithful's integer waiting times: k = 38 of diagonal
 * spikes, BIC 1954 against the 2314 of mclust's three components). */
#define SG_GMM_SINGULAR_SHARE 1e-8

/* The singular components of a fit's final covariances (laid out as
 * statgpu_gmm_result's; fit->partials is scratch). */
static size_t sg_gmm_singular_components(const sg_gmm_fit *fit, const double *covariances)
{
    const size_t d = fit->d, k = fit->k;
    double means[SG_GMM_MAX_VARS], variances[SG_GMM_MAX_VARS];
    sg_gmm_spread_totals(fit, NULL, means);
    sg_gmm_spread_totals(fit, means, variances);
    size_t varying[SG_GMM_MAX_VARS], m = 0;
    for (size_t v = 0; v < d; ++v)
        if (variances[v] > 0.0)
            varying[m++] = v;
    size_t singular = 0;
    switch (fit->type) {
    case STATGPU_GMM_FULL:
    case STATGPU_GMM_TIED: {
        /* The estimate in units of the data's spread, less the share on its
         * diagonal: not positive definite (Cholesky) where it is singular. */
        double *a = malloc((m > 0 ? 2 * m * m : 1) * sizeof *a);  /* the matrix, then its factor */
        if (a == NULL)
            return 0;
        double *l = a + m * m;
        const size_t blocks = fit->type == STATGPU_GMM_FULL ? k : 1;
        for (size_t j = 0; j < blocks; ++j) {
            const double *cov = covariances + j * d * d;
            for (size_t c = 0; c < m; ++c)
                for (size_t r = 0; r < m; ++r) {
                    const size_t vr = varying[r], vc = varying[c];
                    double value = cov[vr + d * vc] - (r == c ? fit->reg[vr] : 0.0);
                    a[r + m * c] = value / sqrt(variances[vr] * variances[vc]) - (r == c ? SG_GMM_SINGULAR_SHARE : 0.0);
                }
            if (!sg_gmm_cholesky(a, m, l))
                singular += fit->type == STATGPU_GMM_FULL ? 1 : k;
        }
        free(a);
        break;
    }
    case STATGPU_GMM_DIAG:
        for (size_t j = 0; j < k; ++j) {
            bool low = false;
            for (size_t r = 0; r < m; ++r) {
                const size_t v = varying[r];
                low = low || covariances[j + k * v] - fit->reg[v] < SG_GMM_SINGULAR_SHARE * variances[v];
            }
            singular += low;
        }
        break;
    case STATGPU_GMM_SPHERICAL: {
        /* One variance for every variable: its estimate against the data's
         * mean variance (its regulariser is the regularisers' mean). */
        double mean_reg = 0.0, mean_variance = 0.0;
        for (size_t v = 0; v < d; ++v) {
            mean_reg += fit->reg[v] / (double)d;
            mean_variance += variances[v] / (double)d;
        }
        for (size_t j = 0; j < k && m > 0; ++j)
            singular += covariances[j] - mean_reg < SG_GMM_SINGULAR_SHARE * mean_variance;
        break;
    }
    }
    return singular;
}

/* A fit's line in a comparison. */
static void sg_gmm_describe(const statgpu_gmm_result *result, statgpu_gmm_candidate *candidate)
{
    candidate->k = result->k;
    candidate->covariance = result->covariance;
    candidate->status = STATGPU_OK;
    candidate->log_likelihood = result->log_likelihood;
    candidate->bic = result->bic;
    candidate->aic = result->aic;
    candidate->parameter_count = result->parameter_count;
    candidate->iterations = result->iterations;
    candidate->converged = result->converged;
    candidate->singular_components = result->singular_components;
}

/* The work of statgpu_gmm on checked arguments, with the E-steps on the
 * device where device is not NULL; STATGPU_ERROR_BACKEND (with the device's
 * status in device->message) when the device failed. */
/* The final labels (the most likely component of each row, the first of
 * equals) and per block the sum of the rows' log-likelihoods, on the
 * fit's threads. */
typedef struct sg_gmm_labelling {
    const sg_gmm_fit   *fit;
    statgpu_gmm_result *result;
    double             *block_ll;  /* per block */
} sg_gmm_labelling;

static void sg_gmm_label_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_gmm_labelling *labelling = context;
    const statgpu_gmm_result *result = labelling->result;
    const size_t n = labelling->fit->n, k = labelling->fit->k;
    size_t begin, end;
    sg_gmm_block_range(labelling->fit, b, &begin, &end);
    double total = 0.0;
    for (size_t i = begin; i < end; ++i) {
        size_t label = 0;
        for (size_t j = 1; j < k; ++j)
            if (result->responsibilities[i + n * j] > result->responsibilities[i + n * label])
                label = j;
        result->labels[i] = (int32_t)label;
        total += result->row_log_likelihood[i];
    }
    labelling->block_ll[b] = total;
}

/* Labels result's rows and returns the total log-likelihood: the blocks'
 * sums added in block order (fit->partials holds blocks x stride >= blocks
 * doubles and is free by now). */
static double sg_gmm_label_rows(const sg_gmm_fit *fit, statgpu_gmm_result *result)
{
    sg_gmm_labelling labelling = { fit, result, fit->partials };
    sg_parallel_for(fit->threads, fit->blocks, sg_gmm_label_block, &labelling);
    double total = 0.0;
    for (size_t b = 0; b < fit->blocks; ++b)
        total += labelling.block_ll[b];
    return total;
}

static statgpu_status sg_gmm_fit_data(statgpu_context *context, const double *data, size_t n, size_t d, size_t ld,
                                      size_t k, const statgpu_gmm_params *params, sg_gmm_device *device,
                                      statgpu_gmm_result **out_result)
{
    const statgpu_gmm_params chosen = *params;
    statgpu_status status = STATGPU_OK;
    bool products = chosen.covariance == STATGPU_GMM_FULL || chosen.covariance == STATGPU_GMM_TIED;
    size_t blocks = (n + SG_GMM_BLOCK_ROWS - 1) / SG_GMM_BLOCK_ROWS;
    size_t stride = 1 + k + k * d + k * (products ? d * d : d);
    sg_gmm_fit fit = { data, n, d, ld, k, chosen.covariance, NULL,
                       sg_threads_for(context->cpu_thread_count, blocks, (double)n * (double)k * (double)d * (double)d),
                       blocks, NULL, NULL, NULL, stride, { 0 }, 0, device, false, NULL, NULL, NULL,
                       STATGPU_CUDA_OK, sg_gmm_estep_best_kernel(), NULL, false };
    sg_gmm_model best = { 0 };
    sg_gmm_slot *slots = NULL;
    size_t slot_count = 0;
    statgpu_gmm_result *result = calloc(1, sizeof *result);
    double *sums = malloc((k + k * d) * sizeof *sums);
    double *reg = malloc(d * sizeof *reg);
    fit.resp = malloc(n * k * sizeof *fit.resp);
    fit.row_ll = malloc(n * sizeof *fit.row_ll);
    fit.partials = malloc(blocks * stride * sizeof *fit.partials);
    fit.moments = malloc(k * d * d * sizeof *fit.moments);
    fit.log_norm = malloc(k * sizeof *fit.log_norm);
    fit.e_scratch = malloc((size_t)(fit.threads > 1 ? fit.threads : 1) * sg_gmm_estep_scratch_count(d, k)
                           * sizeof *fit.e_scratch);
    if (device != NULL)
        fit.factors = malloc(k * d * d * sizeof *fit.factors);
    if (result == NULL || sums == NULL || reg == NULL || fit.resp == NULL || fit.row_ll == NULL || fit.partials == NULL
        || fit.moments == NULL || fit.log_norm == NULL || fit.e_scratch == NULL || (device != NULL && fit.factors == NULL)
        || !sg_gmm_model_alloc(&fit.model, chosen.covariance, k, d)
        || !sg_gmm_model_alloc(&best, chosen.covariance, k, d)) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate GMM work space for %zu x %zu "
                         "data and k = %zu", n, d, k);
        goto done;
    }
    sg_gmm_regularisers(&fit, chosen.reg_covar, chosen.reg_covar_relative != 0, reg);
    fit.reg = reg;
    size_t runs = chosen.init == STATGPU_GMM_INIT_GIVEN ? 1 : chosen.restart_count;
    double best_bound = -INFINITY;
    size_t best_iterations = 0, best_run = 0, best_regularised = 0;
    int best_converged = 0;
    size_t cov_count = sg_gmm_cov_count(chosen.covariance, k, d);
    const size_t batch = device != NULL ? STATGPU_CUDA_GMM_MOST_MODELS : 1;
    slot_count = runs < batch ? runs : batch;
    slots = calloc(slot_count, sizeof *slots);
    for (size_t s = 0; slots != NULL && s < slot_count; ++s)
        if (!sg_gmm_slot_alloc(&slots[s], chosen.covariance, k, d)) {
            slot_count = s + 1;
            status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate GMM restarts");
            goto done;
        }
    if (slots == NULL) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate GMM restarts");
        goto done;
    }
    for (size_t first = 0; first < runs; first += slot_count) {
        const size_t count = runs - first < slot_count ? runs - first : slot_count;
        for (size_t s = 0; s < count; ++s) {
            sg_gmm_slot *slot = &slots[s];
            fit.regularised = 0;
            uint64_t stream = sg_derive_stream(context->params.seed, chosen.seed, 0x5DEECE66Dull, first + s);
            switch (chosen.init) {
            case STATGPU_GMM_INIT_GIVEN:     status = sg_gmm_given(context, &fit, &chosen); break;
            case STATGPU_GMM_INIT_PLUS_PLUS: status = sg_gmm_from_plus_plus(context, &fit, stream, sums); break;
            case STATGPU_GMM_INIT_RANDOM:    status = sg_gmm_from_random(context, &fit, stream, sums); break;
            default:                         status = sg_gmm_from_kmeans(context, &fit, stream, sums); break;
            }
            if (status != STATGPU_OK)
                goto done;
            memcpy(slot->model.weights, fit.model.weights, k * sizeof(double));
            memcpy(slot->model.means, fit.model.means, k * d * sizeof(double));
            memcpy(slot->model.covariances, fit.model.covariances, cov_count * sizeof(double));
            memcpy(slot->model.prec_chol, fit.model.prec_chol, cov_count * sizeof(double));
            memcpy(slot->model.log_det, fit.model.log_det, k * sizeof(double));
            slot->regularised = fit.regularised;
            slot->bound = -INFINITY;
            slot->iterations = chosen.max_iterations;
            slot->converged = 0;
            slot->active = 1;
        }
        size_t active = count;
        for (size_t iteration = 1; iteration <= chosen.max_iterations && active > 0; ++iteration) {
            double previous[STATGPU_CUDA_GMM_MOST_MODELS];
            for (size_t s = 0; s < count; ++s)
                previous[s] = slots[s].bound;
            int failure = sg_gmm_iterate_slots(&fit, slots, count);
            if (failure == 2) {
                status = STATGPU_ERROR_BACKEND;
                goto done;
            }
            if (failure != 0) {
                status = fit.out_of_memory
                             ? sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate GMM work space")
                             : sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "a covariance could not be made "
                                       "positive definite: the data are too far from ordinary size");
                goto done;
            }
            if (sg_progress_cancelled(context, ((double)first + (double)count * (double)iteration
                                                                 / (double)chosen.max_iterations)
                                                   / (double)runs)) {
                status = sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");
                goto done;
            }
            for (size_t s = 0; s < count; ++s)
                if (slots[s].active && fabs(slots[s].bound - previous[s]) < chosen.tolerance) {
                    slots[s].converged = 1;
                    slots[s].iterations = iteration;
                    slots[s].active = 0;
                    --active;
                }
        }
        for (size_t s = 0; s < count; ++s) {
            const sg_gmm_slot *slot = &slots[s];
            if (slot->bound > best_bound || best_bound == -INFINITY) {
                best_bound = slot->bound;
                best_iterations = slot->iterations;
                best_converged = slot->converged;
                best_run = first + s;
                best_regularised = slot->regularised;
                memcpy(best.weights, slot->model.weights, k * sizeof(double));
                memcpy(best.means, slot->model.means, k * d * sizeof(double));
                memcpy(best.covariances, slot->model.covariances, cov_count * sizeof(double));
                memcpy(best.prec_chol, slot->model.prec_chol, cov_count * sizeof(double));
                memcpy(best.log_det, slot->model.log_det, k * sizeof(double));
            }
        }
    }

    /* The final E-step, on the kept parameters. */
    sg_gmm_model working = fit.model;
    fit.model = best;
    bool final_ok = true;
    if (device != NULL) {
        final_ok = sg_gmm_device_final_e_step(&fit, sums);
    } else {
        fit.keep_resp = true;
        (void)sg_gmm_e_step(&fit, sums, fit.moments);
    }
    fit.model = working;
    if (!final_ok) {
        status = STATGPU_ERROR_BACKEND;
        goto done;
    }
    result->k = k;
    result->n_obs = n;
    result->n_vars = d;
    result->covariance = chosen.covariance;
    result->weights = best.weights;
    result->means = best.means;
    result->covariances = best.covariances;
    result->precisions_cholesky = best.prec_chol;
    free(best.log_det);
    memset(&best, 0, sizeof best);
    result->responsibilities = fit.resp;
    result->row_log_likelihood = fit.row_ll;
    fit.resp = NULL;
    fit.row_ll = NULL;
    result->labels = malloc(n * sizeof *result->labels);
    if (result->labels == NULL) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the GMM labels");
        goto done;
    }
    result->log_likelihood = sg_gmm_label_rows(&fit, result);
    result->lower_bound = best_bound;
    result->iterations = best_iterations;
    result->converged = best_converged;
    result->parameter_count = sg_gmm_parameter_count(chosen.covariance, k, d);
    result->bic = -2.0 * result->log_likelihood + (double)result->parameter_count * log((double)n);
    result->aic = -2.0 * result->log_likelihood + 2.0 * (double)result->parameter_count;
    result->best_restart = best_run;
    result->restart_count = runs;
    result->regularised_count = best_regularised;
    result->singular_components = sg_gmm_singular_components(&fit, result->covariances);
    result->candidate_count = 1;
    result->best_candidate = 0;
    result->candidates = malloc(sizeof *result->candidates);
    if (result->candidates == NULL) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the GMM result");
        goto done;
    }
    sg_gmm_describe(result, result->candidates);
    if (!isfinite(result->log_likelihood) || !isfinite(result->bic)) {
        status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                         "the log-likelihood is not finite: the data are too far from ordinary size");
        goto done;
    }
    *out_result = result;
    result = NULL;
    status = sg_succeed(context);
done:
    statgpu_gmm_result_destroy(result);
    sg_gmm_model_free(&fit.model);
    sg_gmm_model_free(&best);
    free(fit.resp);
    free(fit.row_ll);
    free(fit.partials);
    for (size_t s = 0; slots != NULL && s < slot_count; ++s)
        sg_gmm_slot_free(&slots[s]);
    free(slots);
    free(fit.moments);
    free(fit.e_scratch);
    free(fit.factors);
    free(fit.log_norm);
    free(sums);
    free(reg);
    return status;
}

/* ------------------------------------------------ data of any magnitude */

/* Gives a fit of the data times 2^e in the data's own units: means times
 * 2^-e, covariances 2^-2e, precision factors 2^e, and every log density
 * d e ln 2 higher (the density of x is that of x 2^e times 2^(d e)). False,
 * with *decade the power of ten of the first one that is, where a variance
 * leaves the normal doubles or a precision factor overflows (data whose
 * squares are not doubles: near 1e-160 or 1e155). */
static bool sg_gmm_unscale(statgpu_gmm_result *result, int e, int *decade)
{
    const size_t k = result->k, d = result->n_vars, n = result->n_obs;
    const size_t cov = sg_gmm_cov_count(result->covariance, k, d);
    const bool products = result->covariance == STATGPU_GMM_FULL || result->covariance == STATGPU_GMM_TIED;
    for (size_t c = 0; c < cov; ++c) {
        const bool diagonal = !products || c % d == (c / d) % d;
        const double value = ldexp(result->covariances[c], -2 * e);
        if ((diagonal && !(value >= DBL_MIN && value <= DBL_MAX))
            || !(fabs(ldexp(result->precisions_cholesky[c], e)) <= DBL_MAX)) {
            *decade = (int)floor(log10(fabs(result->covariances[c])) - 2.0 * (double)e * log10(2.0));
            return false;
        }
    }
    sg_units_scale(result->means, k * d, -e);
    sg_units_scale(result->covariances, cov, -2 * e);
    sg_units_scale(result->precisions_cholesky, cov, e);
    const double shift = (double)d * (double)e * M_LN2;
    for (size_t i = 0; i < n; ++i)
        result->row_log_likelihood[i] += shift;
    result->log_likelihood += (double)n * shift;
    result->lower_bound += shift;
    result->bic = -2.0 * result->log_likelihood + (double)result->parameter_count * log((double)n);
    result->aic = -2.0 * result->log_likelihood + 2.0 * (double)result->parameter_count;
    sg_gmm_describe(result, result->candidates);
    return true;
}

/* statgpu_gmm on the data times 2^e (and given means times 2^e, given
 * precisions times 2^-2e), its result in the data's units: with relative
 * regularisers that is the fit of the data themselves, bit for bit but the
 * log densities' shift, where their squares would leave the doubles. */
static statgpu_status sg_gmm_fit_scaled(statgpu_context *context, const double *data, size_t n, size_t d, size_t ld,
                                        size_t k, const statgpu_gmm_params *params, int e,
                                        statgpu_gmm_result **out_result)
{
    statgpu_gmm_params scaled = *params;
    const size_t cov = sg_gmm_cov_count(params->covariance, k, d);
    const bool given = params->init == STATGPU_GMM_INIT_GIVEN;
    double *copy = malloc(n * d * sizeof *copy);
    double *means = given ? malloc(k * d * sizeof *means) : NULL;
    double *precisions = given ? malloc(cov * sizeof *precisions) : NULL;
    if (copy == NULL || (given && (means == NULL || precisions == NULL))) {
        free(copy);
        free(means);
        free(precisions);
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate GMM work space for %zu x %zu data",
                       n, d);
    }
    for (size_t v = 0; v < d; ++v)
        for (size_t i = 0; i < n; ++i)
            copy[i + n * v] = ldexp(data[i + ld * v], e);
    if (given) {
        for (size_t c = 0; c < k * d; ++c)
            means[c] = ldexp(params->initial_means[c], e);
        for (size_t c = 0; c < cov; ++c)
            precisions[c] = ldexp(params->initial_precisions[c], -2 * e);
        scaled.initial_means = means;
        scaled.initial_precisions = precisions;
    }
    statgpu_status status = statgpu_gmm(context, copy, n, d, n, k, &scaled, out_result);
    int decade = 0;
    if (status == STATGPU_OK && !sg_gmm_unscale(*out_result, e, &decade)) {
        statgpu_gmm_result_destroy(*out_result);
        *out_result = NULL;
        status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                         "a fitted variance, about 1e%d in the data's units squared, is beyond the range of a "
                         "double; rescale the data", decade);
    }
    free(copy);
    free(means);
    free(precisions);
    return status;
}

/* Work at which AUTO tries the GPU: an E-step costs about n k d^2
 * operations on either side. At 2000 x 8, k = 8 (2^20), 20 iterations, the
 * GPU's whole call took 1.2 ms and the CPU's 38 on 16 threads (bench/NOTES.md,
 * "AUTO"): the bar sits a quarter below, scaled by dispatch.h for more
 * threads. */
#define SG_GMM_AUTO_CUDA_MIN_WORK 262144.0

statgpu_status statgpu_gmm(statgpu_context *context, const double *data, size_t n_obs, size_t n_vars, size_t ld,
                           size_t k, const statgpu_gmm_params *params, statgpu_gmm_result **out_result)
{
    statgpu_gmm_params chosen;
    statgpu_status taken = sg_gmm_begin(context, params, out_result, &chosen);
    if (taken != STATGPU_OK)
        return taken;
    /* Relative regularisers make a fit the same in any units, so data
     * whose squares would leave the doubles are fitted scaled. */
    double largest = 0.0;
    statgpu_status status =
        sg_gmm_check(context, data, n_obs, n_vars, ld, k, &chosen, chosen.reg_covar_relative ? &largest : NULL);
    if (status != STATGPU_OK)
        return status;
    const int e = chosen.reg_covar_relative ? sg_units_exponent(largest) : 0;
    if (e != 0)
        return sg_gmm_fit_scaled(context, data, n_obs, n_vars, ld, k, &chosen, e, out_result);

    const statgpu_gmm_params checked = chosen;

    /* E-steps go to the GPU where the dispatch rule says; a failure there
     * (sizes beyond the device's kernels included) runs the whole call
     * again on the CPU, and the report's note says why. */
    sg_dispatch_begin(context);
    sg_gmm_device device = { 0 };
    bool on_cuda = false;
    statgpu_cuda_status cuda_status = STATGPU_CUDA_OK;
    double work = (double)n_obs * (double)k * (double)n_vars * (double)n_vars;
    if (sg_dispatch_wants_cuda_above(context, work, SG_GMM_AUTO_CUDA_MIN_WORK, false)) {
        cuda_status = STATGPU_CUDA_NO_DEVICE;
        if (sg_dispatch_cuda_ready(context, device.message, sizeof device.message))
            cuda_status = sg_cuda_gmm_begin(context, data, n_obs, n_vars, ld, k, &device);
        on_cuda = cuda_status == STATGPU_CUDA_OK;
    }
    status = sg_gmm_fit_data(context, data, n_obs, n_vars, ld, k, &checked, on_cuda ? &device : NULL, out_result);
    sg_cuda_gmm_end(&device);
    if (status == STATGPU_ERROR_BACKEND) {
        cuda_status = STATGPU_CUDA_ERROR;
        on_cuda = false;
        status = sg_gmm_fit_data(context, data, n_obs, n_vars, ld, k, &checked, NULL, out_result);
    }
    /* The k-means starts keep their own record: the mixture's goes after them. */
    if (cuda_status != STATGPU_CUDA_OK)
        sg_dispatch_note_cpu(context, cuda_status, device.message, "Gaussian mixture");
    if (status == STATGPU_OK) {
        sg_dispatch_ran(context, on_cuda ? STATGPU_BACKEND_CUDA : STATGPU_BACKEND_CPU,
                        on_cuda ? device.timing.transfer_seconds : 0.0, on_cuda ? device.timing.compute_seconds : 0.0);
        return sg_succeed(context);
    }
    return status;
}

/* Model choice fits its candidates side by side, each on a worker context
 * of its own (its own CUDA stream and workspace, a share of the threads),
 * where one fit leaves the machine idle: fewer rows than this, where an
 * E-step fills neither the GPU (132 multiprocessors x 2 blocks x 256 rows on
 * the H100) nor the CPU's threads (rows go to threads by blocks). The
 * results are the same bits as one after another: each fit's seeds come
 * from its candidate, its CPU sums are the same at any thread count, and a
 * worker's AUTO chooses as its parent would (dispatch_thread_count). */
#define SG_GMM_SIDE_BY_SIDE_ROWS ((size_t)65536)
#define SG_GMM_MOST_WORKERS 4

/* One candidate fitted on a worker: what statgpu_gmm gave, and the
 * worker's backend record after it. */
typedef struct sg_gmm_outcome {
    statgpu_gmm_result *fit;
    statgpu_status      status;
    char                message[SG_MESSAGE_BYTES];
    statgpu_backend     used;
    double              transfer_seconds, compute_seconds;
    char                note[256];
} sg_gmm_outcome;

typedef struct sg_gmm_select_job {
    const double                *data;
    size_t                       n_obs, n_vars, ld;
    const statgpu_gmm_params    *params;
    const statgpu_gmm_candidate *candidates;
    size_t                       count;
    sg_gmm_outcome              *outcomes;  /* count */
    pthread_mutex_t              mutex;
    pthread_cond_t               progress;
    size_t                       next, finished, first_failure;
    atomic_bool                  cancelled;
} sg_gmm_select_job;

typedef struct sg_gmm_select_worker {
    sg_gmm_select_job *job;
    statgpu_context   *context;
} sg_gmm_select_worker;

static int sg_gmm_select_cancelled(void *user_data, double fraction)
{
    (void)fraction;
    sg_gmm_select_job *job = user_data;
    return atomic_load_explicit(&job->cancelled, memory_order_relaxed);
}

static void *sg_gmm_select_work(void *argument)
{
    sg_gmm_select_worker *worker = argument;
    sg_gmm_select_job *job = worker->job;
    statgpu_context *context = worker->context;
    for (;;) {
        pthread_mutex_lock(&job->mutex);
        size_t c = job->next++;
        /* After a failure only the candidates before it still matter. */
        bool skip = c > job->first_failure || atomic_load_explicit(&job->cancelled, memory_order_relaxed);
        pthread_mutex_unlock(&job->mutex);
        if (c >= job->count)
            return NULL;
        const statgpu_gmm_candidate *candidate = &job->candidates[c];
        sg_gmm_outcome *outcome = &job->outcomes[c];
        if (candidate->status != STATGPU_OK) {
            /* a k above the rows: not fitted */
        } else if (skip) {
            outcome->status = STATGPU_ERROR_CANCELLED;
            snprintf(outcome->message, sizeof outcome->message, "cancelled");
        } else {
            statgpu_gmm_params params = *job->params;
            params.covariance = candidate->covariance;
            outcome->status = statgpu_gmm(context, job->data, job->n_obs, job->n_vars, job->ld, candidate->k, &params,
                                          &outcome->fit);
            snprintf(outcome->message, sizeof outcome->message, "%s", context->last_error);
            outcome->used = context->last_used;
            outcome->transfer_seconds = context->last_transfer_seconds;
            outcome->compute_seconds = context->last_compute_seconds;
            snprintf(outcome->note, sizeof outcome->note, "%s", context->note);
        }
        pthread_mutex_lock(&job->mutex);
        /* A candidate the data cannot give (fewer distinct rows than its k)
         * is left out of the choice; any other failure ends the call. */
        if (outcome->status != STATGPU_OK && outcome->status != STATGPU_ERROR_INVALID_ARGUMENT
            && c < job->first_failure)
            job->first_failure = c;
        ++job->finished;
        pthread_cond_signal(&job->progress);
        pthread_mutex_unlock(&job->mutex);
    }
}

/* The parent's worker contexts, made at the first call that needs them:
 * its parameters but a share of its threads and no progress callback of
 * the caller's (the parent alone calls that). False when none can be made. */
static bool sg_gmm_select_workers(statgpu_context *context, int count, int threads_each)
{
    if (context->worker_count < count) {
        statgpu_context **workers = realloc(context->workers, (size_t)count * sizeof *workers);
        if (workers == NULL)
            return false;
        context->workers = workers;
        for (int w = context->worker_count; w < count; ++w) {
            statgpu_context_params params = context->params;
            params.progress = NULL;
            params.progress_user_data = NULL;
            params.thread_count = threads_each;
            if (statgpu_context_create(&params, &workers[w]) != STATGPU_OK)
                return false;
            context->worker_count = w + 1;
        }
    }
    for (int w = 0; w < count; ++w) {
        statgpu_context *worker = context->workers[w];
        worker->cpu_thread_count = threads_each;
        worker->params.thread_count = threads_each;
        worker->dispatch_thread_count = context->dispatch_thread_count;
    }
    return true;
}

/* Fits every candidate whose status is OK on `workers` threads into
 * outcomes (count, zeroed), each as statgpu_gmm would give it one after
 * another, and gives the parent the backend record of the last candidate
 * fitted. STATGPU_ERROR_OUT_OF_MEMORY, having fitted none, where the
 * workers cannot be made. */
static statgpu_status sg_gmm_fit_side_by_side(statgpu_context *context, const double *data, size_t n_obs,
                                              size_t n_vars, size_t ld, const statgpu_gmm_params *params,
                                              const statgpu_gmm_candidate *candidates, size_t count, int workers,
                                              sg_gmm_outcome *outcomes, bool *cancelled)
{
    *cancelled = false;
    int threads_each = context->cpu_thread_count / workers;
    if (threads_each < 1)
        threads_each = 1;
    sg_gmm_select_worker *list = calloc((size_t)workers, sizeof *list);
    pthread_t *threads = calloc((size_t)workers, sizeof *threads);
    if (!list || !threads || !sg_gmm_select_workers(context, workers, threads_each)) {
        free(list);
        free(threads);
        return STATGPU_ERROR_OUT_OF_MEMORY;
    }
    sg_gmm_select_job job = { .data = data, .n_obs = n_obs, .n_vars = n_vars, .ld = ld, .params = params,
                              .candidates = candidates, .count = count, .outcomes = outcomes,
                              .first_failure = SIZE_MAX };
    pthread_mutex_init(&job.mutex, NULL);
    pthread_cond_init(&job.progress, NULL);
    atomic_init(&job.cancelled, false);
    int started = 0;
    for (int w = 0; w < workers; ++w) {
        list[w] = (sg_gmm_select_worker){ &job, context->workers[w] };
        context->workers[w]->params.progress = sg_gmm_select_cancelled;
        context->workers[w]->params.progress_user_data = &job;
        if (pthread_create(&threads[started], NULL, sg_gmm_select_work, &list[w]) == 0)
            ++started;
    }
    if (started == 0)
        sg_gmm_select_work(&list[0]);  /* no thread could start: this one fits them all */
    /* The parent asks the caller's progress callback while it waits, and
     * at least once: a stop asked for is heard even where the workers
     * finish every candidate before the parent first looks (a parent kept
     * off the cores for a moment had returned the fit). */
    pthread_mutex_lock(&job.mutex);
    do {
        size_t finished = job.finished;
        pthread_mutex_unlock(&job.mutex);
        if (sg_progress_cancelled(context, (double)finished / (double)count))
            atomic_store_explicit(&job.cancelled, true, memory_order_relaxed);
        pthread_mutex_lock(&job.mutex);
        if (job.finished < count) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 20000000L;  /* 20 ms */
            if (until.tv_nsec >= 1000000000L) {
                until.tv_nsec -= 1000000000L;
                ++until.tv_sec;
            }
            pthread_cond_timedwait(&job.progress, &job.mutex, &until);
        }
    } while (job.finished < count);
    pthread_mutex_unlock(&job.mutex);
    for (int w = 0; w < started; ++w)
        pthread_join(threads[w], NULL);
    for (int w = 0; w < workers; ++w) {
        context->workers[w]->params.progress = NULL;
        context->workers[w]->params.progress_user_data = NULL;
    }
    for (size_t c = count; c-- > 0;)
        if (candidates[c].status == STATGPU_OK && outcomes[c].status == STATGPU_OK) {
            sg_dispatch_ran(context, outcomes[c].used, outcomes[c].transfer_seconds, outcomes[c].compute_seconds);
            snprintf(context->note, sizeof context->note, "%s", outcomes[c].note);
            break;
        }
    /* The callback asked to stop: the call is cancelled, even where every
     * candidate had finished before its fit heard it. */
    *cancelled = atomic_load_explicit(&job.cancelled, memory_order_relaxed);
    pthread_cond_destroy(&job.progress);
    pthread_mutex_destroy(&job.mutex);
    free(list);
    free(threads);
    return STATGPU_OK;
}

/* statgpu_gmm_select on k_values listing each k once. */
static statgpu_status sg_gmm_select_distinct(statgpu_context *context, const double *data, size_t n_obs,
                                             size_t n_vars, size_t ld, const size_t *k_values, size_t k_count,
                                             const statgpu_gmm_covariance *types, size_t type_count,
                                             const statgpu_gmm_params *params, statgpu_gmm_result **out_result)
{
    statgpu_gmm_params chosen;
    statgpu_status taken = sg_gmm_begin(context, params, out_result, &chosen);
    if (taken != STATGPU_OK)
        return taken;
    if (chosen.init == STATGPU_GMM_INIT_GIVEN)
        chosen.init = STATGPU_GMM_INIT_KMEANS;
    const statgpu_gmm_covariance own_type = chosen.covariance;
    if (types == NULL || type_count == 0) {
        types = &own_type;
        type_count = 1;
    }
    if (k_values == NULL || k_count == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "no k to fit: k_values is empty");
    if (type_count > 4)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%zu covariance types: there are 4", type_count);
    for (size_t t = 0; t < type_count; ++t) {
        if (types[t] < STATGPU_GMM_FULL || types[t] > STATGPU_GMM_SPHERICAL)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "unknown covariance type %d", (int)types[t]);
        for (size_t u = 0; u < t; ++u)
            if (types[u] == types[t])
                return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "covariance type %d is listed twice",
                               (int)types[t]);
    }
    for (size_t c = 0; c < k_count; ++c)
        if (k_values[c] == 0)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "k = 0 (candidate %zu): at least one component "
                           "is needed", c + 1);
    if (k_count > SIZE_MAX / sizeof(statgpu_gmm_candidate) / type_count)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%zu candidates are too many", k_count);
    size_t count = k_count * type_count;
    statgpu_gmm_candidate *candidates = calloc(count, sizeof *candidates);
    if (candidates == NULL)
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate %zu candidates", count);
    statgpu_gmm_result *best = NULL;
    size_t best_index = 0;
    statgpu_status status = STATGPU_OK;
    sg_gmm_outcome *outcomes = NULL;  /* side by side: every candidate's fit */
    size_t fitted = 0;
    for (size_t c = 0; c < count; ++c) {
        statgpu_gmm_candidate *candidate = &candidates[c];
        candidate->k = k_values[c / type_count];
        candidate->covariance = types[c % type_count];
        if (candidate->k > n_obs && n_obs > 0)
            candidate->status = STATGPU_ERROR_INVALID_ARGUMENT;
        else
            ++fitted;
    }
    /* Side by side where the machine has room (SG_GMM_SIDE_BY_SIDE_ROWS),
     * else one after another on every thread. */
    int workers = fitted < SG_GMM_MOST_WORKERS ? (int)fitted : SG_GMM_MOST_WORKERS;
    if (workers > context->cpu_thread_count)
        workers = context->cpu_thread_count;
    if (workers > 1 && n_obs < SG_GMM_SIDE_BY_SIDE_ROWS) {
        outcomes = calloc(count, sizeof *outcomes);
        bool cancelled = false;
        if (outcomes != NULL && sg_gmm_fit_side_by_side(context, data, n_obs, n_vars, ld, &chosen, candidates, count,
                                                        workers, outcomes, &cancelled) != STATGPU_OK) {
            /* No room for the workers: one candidate after another. */
            free(outcomes);
            outcomes = NULL;
        }
        if (cancelled) {
            status = sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");
            goto done;
        }
    }
    char left_out[256] = "";  /* why the first candidate left out of the choice was */
    for (size_t c = 0; c < count; ++c) {
        statgpu_gmm_candidate *candidate = &candidates[c];
        if (candidate->status != STATGPU_OK)
            continue;
        statgpu_gmm_result *fit = NULL;
        if (outcomes != NULL) {
            fit = outcomes[c].fit;
            outcomes[c].fit = NULL;
            status = outcomes[c].status;
            if (status != STATGPU_OK)
                sg_fail(context, status, "%s", outcomes[c].message);
        } else {
            chosen.covariance = candidate->covariance;
            status = statgpu_gmm(context, data, n_obs, n_vars, ld, candidate->k, &chosen, &fit);
        }
        /* A candidate the data cannot give (fewer distinct rows than its k)
         * is left out, as a k above the rows is; any other failure (out of
         * memory, cancelled) ends the call. */
        if (status == STATGPU_ERROR_INVALID_ARGUMENT) {
            candidate->status = status;
            if (left_out[0] == '\0')
                snprintf(left_out, sizeof left_out, "%s", statgpu_context_last_error(context));
            status = STATGPU_OK;
            continue;
        }
        if (status != STATGPU_OK)
            goto done;
        sg_gmm_describe(fit, candidate);
        /* The lowest BIC of the candidates without singular components,
         * as mclust leaves singular fits' BIC out (NA); of them all only
         * where every candidate has one. */
        const bool regular = fit->singular_components == 0, best_regular = best != NULL && best->singular_components == 0;
        if (best == NULL || (regular && !best_regular) || (regular == best_regular && fit->bic < best->bic)) {
            statgpu_gmm_result_destroy(best);
            best = fit;
            best_index = c;
        } else {
            statgpu_gmm_result_destroy(fit);
        }
    }
    if (best == NULL) {
        if (left_out[0] != '\0')
            status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "no candidate can be fitted: %s", left_out);
        else
            status = sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "no candidate can be fitted: every k is more "
                             "than the %zu observations", n_obs);
        goto done;
    }
    free(best->candidates);
    best->candidates = candidates;
    best->candidate_count = count;
    best->best_candidate = best_index;
    candidates = NULL;
    *out_result = best;
    best = NULL;
    status = sg_succeed(context);
done:
    statgpu_gmm_result_destroy(best);
    for (size_t c = 0; outcomes != NULL && c < count; ++c)
        statgpu_gmm_result_destroy(outcomes[c].fit);
    free(outcomes);
    free(candidates);
    return status;
}

/* Orders (k, place in the list) pairs by k, then by place. */
static int sg_gmm_compare_listed(const void *a, const void *b)
{
    const size_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

statgpu_status statgpu_gmm_select(statgpu_context *context, const double *data, size_t n_obs, size_t n_vars,
                                  size_t ld, const size_t *k_values, size_t k_count,
                                  const statgpu_gmm_covariance *types, size_t type_count,
                                  const statgpu_gmm_params *params, statgpu_gmm_result **out_result)
{
    bool zero = false;  /* said with its place in the list as given */
    for (size_t c = 0; k_values != NULL && c < k_count; ++c)
        zero = zero || k_values[c] == 0;
    if (context == NULL || out_result == NULL || k_values == NULL || k_count < 2 || zero)
        return sg_gmm_select_distinct(context, data, n_obs, n_vars, ld, k_values, k_count, types, type_count,
                                      params, out_result);
    /* A k listed again is the same model: each k once, where first listed
     * (sorted with its place, a k's first place kept). */
    *out_result = NULL;
    size_t *listed = k_count <= SIZE_MAX / (3 * sizeof *listed) ? malloc(3 * k_count * sizeof *listed) : NULL;
    if (listed == NULL)
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate a list of %zu k", k_count);
    size_t *pairs = listed, *distinct = listed + 2 * k_count;
    for (size_t c = 0; c < k_count; ++c) {
        pairs[2 * c] = k_values[c];
        pairs[2 * c + 1] = c;
    }
    qsort(pairs, k_count, 2 * sizeof *pairs, sg_gmm_compare_listed);
    memset(distinct, 0, k_count * sizeof *distinct);
    for (size_t c = 0; c < k_count; ++c)
        if (c == 0 || pairs[2 * c] != pairs[2 * c - 2])
            distinct[pairs[2 * c + 1]] = 1;  /* the first place of its k */
    size_t count = 0;
    for (size_t c = 0; c < k_count; ++c)
        if (distinct[c])
            pairs[count++] = k_values[c];
    const statgpu_status status = sg_gmm_select_distinct(context, data, n_obs, n_vars, ld, pairs, count, types,
                                                          type_count, params, out_result);
    free(listed);
    return status;
}

statgpu_status statgpu_gmm_matrix(statgpu_context *context, const statgpu_matrix *data, size_t k,
                                  const statgpu_gmm_params *params, statgpu_gmm_result **out_result)
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
    status = statgpu_gmm(context, host.data, data->rows, data->cols, host.ld, k, params, out_result);
    free(host.owned);
    return status;
}
