/*
 * gmm_estep.c: the CPU's E-step of gmm.c (gmm_estep.h), a chunk of rows at a
 * time.
 *
 * A chunk's data are gathered once into a variables x rows array; every
 * loop then runs across the chunk's rows (each component's centred rows,
 * its quadratic forms through the upper-triangular precision factor in
 * tiles of SG_GMM_ESTEP_TILE rows held in registers, the largest term, the
 * exps, the responsibilities, the weighted sums), which the compiler turns
 * into vector code. Row at a time with loops over run-time d and k, reading
 * the data with a stride per variable and component, the E-step had taken
 * 0.65 microseconds a row at d = 8, k = 8 (bench/NOTES.md, "GMM v7").
 *
 * The exp is math/exp_nonpositive.h's (within 1 ulp of libm's; libm's is a call per
 * value), the log of each row's sum libm's. Sums over a chunk's rows are
 * kept in SG_GMM_ESTEP_LANES lanes, row b in lane b mod SG_GMM_ESTEP_LANES,
 * joined in a fixed tree: the order of every addition is the code's, not
 * the vector width's, so the SSE2 and AVX2 kernels give the same bits, and
 * no multiply-add is fused (this file is built with -ffp-contract=off and
 * the AVX2 kernel for "avx2" alone).
 */
#include "methods/gmm_estep.h"
#include "math/exp_nonpositive.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define SG_GMM_ESTEP_LANES 8
#define SG_GMM_ESTEP_TILE 16

size_t sg_gmm_estep_scratch_count(size_t n_vars, size_t k)
{
    /* the gathered rows, one component's centred and weighted rows, the
     * terms then responsibilities (k), the largest terms and the sums */
    return (3 * n_vars + k + 2) * SG_GMM_ESTEP_ROWS;
}

/* Four doubles, through GCC's vector extension: two SSE2 registers or one
 * AVX2 register, the same additions in the same order either way. */
typedef double sg_gmm_estep_v4 __attribute__((vector_size(32)));

/* The vectors are loaded by memcpy (the rows need no alignment) and handed
 * by address: a vector passed or returned by value is an ABI question
 * (GCC's -Wpsabi) the inlined code never asks. */
#define SG_GMM_ESTEP_LOAD(vector, values) memcpy(&(vector), (values), sizeof(vector))

/* Eight lanes joined: lane l with lane l + 4, then those two by two. */
static inline __attribute__((always_inline)) double sg_gmm_estep_join(const sg_gmm_estep_v4 *low,
                                                                      const sg_gmm_estep_v4 *high)
{
    const sg_gmm_estep_v4 pairs = *low + *high;
    return (pairs[0] + pairs[2]) + (pairs[1] + pairs[3]);
}

/* The chunk's values[0..SG_GMM_ESTEP_ROWS) added in lanes. */
static inline __attribute__((always_inline)) double sg_gmm_estep_sum(const double *values)
{
    sg_gmm_estep_v4 low, high, next;
    SG_GMM_ESTEP_LOAD(low, values);
    SG_GMM_ESTEP_LOAD(high, values + 4);
#pragma GCC unroll 4
    for (size_t b = SG_GMM_ESTEP_LANES; b < SG_GMM_ESTEP_ROWS; b += SG_GMM_ESTEP_LANES) {
        SG_GMM_ESTEP_LOAD(next, values + b);
        low += next;
        SG_GMM_ESTEP_LOAD(next, values + b + 4);
        high += next;
    }
    return sg_gmm_estep_join(&low, &high);
}

/* sum_b first[b] second[b] over the chunk, in lanes as sg_gmm_estep_sum. */
static inline __attribute__((always_inline)) double sg_gmm_estep_dot(const double *first, const double *second)
{
    sg_gmm_estep_v4 low, high, a, b;
    SG_GMM_ESTEP_LOAD(a, first);
    SG_GMM_ESTEP_LOAD(b, second);
    low = a * b;
    SG_GMM_ESTEP_LOAD(a, first + 4);
    SG_GMM_ESTEP_LOAD(b, second + 4);
    high = a * b;
#pragma GCC unroll 4
    for (size_t row = SG_GMM_ESTEP_LANES; row < SG_GMM_ESTEP_ROWS; row += SG_GMM_ESTEP_LANES) {
        SG_GMM_ESTEP_LOAD(a, first + row);
        SG_GMM_ESTEP_LOAD(b, second + row);
        low += a * b;
        SG_GMM_ESTEP_LOAD(a, first + row + 4);
        SG_GMM_ESTEP_LOAD(b, second + row + 4);
        high += a * b;
    }
    return sg_gmm_estep_join(&low, &high);
}

/* Component j's centred rows: centred[v][b] = x[v][b] - mean_jv. */
static inline __attribute__((always_inline)) void sg_gmm_estep_centre(const sg_gmm_estep_model *model, size_t j,
                                                                      const double *x, double *centred)
{
    enum { R = SG_GMM_ESTEP_ROWS };
    const size_t d = model->n_vars, k = model->k;
    for (size_t v = 0; v < d; ++v) {
        const double mean = model->means[j + k * v];
        for (size_t b = 0; b < R; ++b)
            centred[v * R + b] = x[v * R + b] - mean;
    }
}

/* Component j's terms log w_j + log N(x_b | j) of the chunk's rows. */
static inline __attribute__((always_inline)) void sg_gmm_estep_terms(const sg_gmm_estep_model *model, size_t j,
                                                                     const double *centred, double *term)
{
    enum { R = SG_GMM_ESTEP_ROWS, T = SG_GMM_ESTEP_TILE };
    const size_t d = model->n_vars, k = model->k;
    const double constant = model->constant[j];
    switch (model->type) {
    case STATGPU_GMM_FULL:
    case STATGPU_GMM_TIED: {
        const double *factor = model->factors + (model->type == STATGPU_GMM_FULL ? j * d * d : 0);
        /* A tile's partial products y in T / 4 vectors: as many chains of
         * additions in flight (with two, their latency bounded the loop). */
        for (size_t tile = 0; tile < R; tile += T) {
            sg_gmm_estep_v4 quadratic[T / 4] = { { 0.0 } };
            for (size_t c = 0; c < d; ++c) {  /* the factor is upper triangular: rows 0..c of column c */
                sg_gmm_estep_v4 y[T / 4] = { { 0.0 } }, row;
                for (size_t r = 0; r <= c; ++r) {
                    const double u = factor[r + d * c];
                    for (size_t t = 0; t < T / 4; ++t) {
                        SG_GMM_ESTEP_LOAD(row, centred + r * R + tile + 4 * t);
                        y[t] += row * u;
                    }
                }
                for (size_t t = 0; t < T / 4; ++t)
                    quadratic[t] += y[t] * y[t];
            }
            for (size_t t = 0; t < T / 4; ++t) {
                const sg_gmm_estep_v4 value = constant - 0.5 * quadratic[t];
                memcpy(term + tile + 4 * t, &value, sizeof value);
            }
        }
        break;
    }
    case STATGPU_GMM_DIAG: {
        double quadratic[R] = { 0.0 };
        for (size_t v = 0; v < d; ++v) {
            const double factor = model->factors[j + k * v];
            for (size_t b = 0; b < R; ++b) {
                const double y = centred[v * R + b] * factor;
                quadratic[b] += y * y;
            }
        }
        for (size_t b = 0; b < R; ++b)
            term[b] = constant - 0.5 * quadratic[b];
        break;
    }
    case STATGPU_GMM_SPHERICAL: {
        const double factor = model->factors[j];
        double squares[R] = { 0.0 };
        for (size_t v = 0; v < d; ++v)
            for (size_t b = 0; b < R; ++b)
                squares[b] += centred[v * R + b] * centred[v * R + b];
        for (size_t b = 0; b < R; ++b)
            term[b] = constant - 0.5 * (squares[b] * factor * factor);
        break;
    }
    }
}

/* One chunk: rows first .. first + count - 1 (count <= SG_GMM_ESTEP_ROWS). */
static inline __attribute__((always_inline)) void sg_gmm_estep_chunk(const sg_gmm_estep_model *model,
                                                                     const double *data, size_t ld, size_t first,
                                                                     size_t count, const sg_gmm_estep_out *out,
                                                                     double *scratch)
{
    enum { R = SG_GMM_ESTEP_ROWS };
    const size_t d = model->n_vars, k = model->k;
    const bool products = model->type == STATGPU_GMM_FULL || model->type == STATGPU_GMM_TIED;
    const size_t per_component = products ? d * d : d;
    double *x = scratch, *centred = x + d * R, *weighted = centred + d * R, *term = weighted + d * R;
    double *largest = term + k * R, *sum = largest + R;
    double *partial = out->partial, *first_sums = partial + 1 + k, *second = first_sums + k * d;

    for (size_t v = 0; v < d; ++v) {
        const double *column = data + first + ld * v;
        for (size_t b = 0; b < R; ++b)
            x[v * R + b] = column[b < count ? b : count - 1];
    }
    for (size_t j = 0; j < k; ++j) {
        sg_gmm_estep_centre(model, j, x, centred);
        sg_gmm_estep_terms(model, j, centred, term + j * R);
    }

    /* Responsibilities by one exp per term: r_j = exp(t_j - largest) / sum. */
    for (size_t b = 0; b < R; ++b)
        largest[b] = term[b];
    for (size_t j = 1; j < k; ++j)
        for (size_t b = 0; b < R; ++b)
            largest[b] = term[j * R + b] > largest[b] ? term[j * R + b] : largest[b];
    for (size_t j = 0; j < k; ++j) {
        double *row = term + j * R;
        for (size_t b = 0; b < R; ++b) {
            const double below = row[b] - largest[b];
            row[b] = below < -746.0 ? -746.0 : below;  /* exp(-746) rounds to 0; NaN stays NaN */
        }
        for (size_t b = 0; b < R; ++b)
            row[b] = sg_exp_nonpositive(row[b]);
    }
    for (size_t b = 0; b < R; ++b)
        sum[b] = term[b];
    for (size_t j = 1; j < k; ++j)
        for (size_t b = 0; b < R; ++b)
            sum[b] += term[j * R + b];
    for (size_t b = 0; b < count; ++b) {
        const double row_ll = largest[b] + log(sum[b]);
        out->row_ll[first + b] = row_ll;
        partial[0] += row_ll;
    }
    for (size_t b = 0; b < R; ++b)
        sum[b] = b < count ? 1.0 / sum[b] : 0.0;  /* the filling rows weigh nothing */
    for (size_t j = 0; j < k; ++j)
        for (size_t b = 0; b < R; ++b)
            term[j * R + b] *= sum[b];
    if (out->resp != NULL)
        for (size_t j = 0; j < k; ++j)
            memcpy(out->resp + first + out->resp_ld * j, term + j * R, count * sizeof *term);

    /* The sums of r, r (x - mean_j) and its products, around the means used. */
    for (size_t j = 0; j < k; ++j) {
        const double *r = term + j * R;
        const double weight = sg_gmm_estep_sum(r);
        partial[1 + j] += weight;
        if (weight == 0.0)  /* no row of the chunk here: every term below is 0 */
            continue;
        sg_gmm_estep_centre(model, j, x, centred);
        for (size_t v = 0; v < d; ++v)
            for (size_t b = 0; b < R; ++b)
                weighted[v * R + b] = r[b] * centred[v * R + b];
        for (size_t v = 0; v < d; ++v)
            first_sums[j + k * v] += sg_gmm_estep_sum(weighted + v * R);
        double *product = second + j * per_component;
        if (products) {
            for (size_t col = 0; col < d; ++col)
                for (size_t row = 0; row <= col; ++row)
                    product[row + d * col] += sg_gmm_estep_dot(weighted + col * R, centred + row * R);
        } else {
            for (size_t v = 0; v < d; ++v)
                product[v] += sg_gmm_estep_dot(weighted + v * R, centred + v * R);
        }
    }
}

static inline __attribute__((always_inline)) void sg_gmm_estep_range(const sg_gmm_estep_model *model,
                                                                     const double *data, size_t ld, size_t begin,
                                                                     size_t end, const sg_gmm_estep_out *out,
                                                                     double *scratch)
{
    for (size_t first = begin; first < end; first += SG_GMM_ESTEP_ROWS) {
        const size_t count = end - first < SG_GMM_ESTEP_ROWS ? end - first : SG_GMM_ESTEP_ROWS;
        sg_gmm_estep_chunk(model, data, ld, first, count, out, scratch);
    }
}

static void sg_gmm_estep_generic(const sg_gmm_estep_model *model, const double *data, size_t ld, size_t begin,
                                 size_t end, const sg_gmm_estep_out *out, double *scratch)
{
    sg_gmm_estep_range(model, data, ld, begin, end, out, scratch);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* "avx2" without "fma": four doubles a vector, the same roundings as SSE2's two. */
__attribute__((target("avx2"))) static void sg_gmm_estep_avx2(const sg_gmm_estep_model *model, const double *data,
                                                               size_t ld, size_t begin, size_t end,
                                                               const sg_gmm_estep_out *out, double *scratch)
{
    sg_gmm_estep_range(model, data, ld, begin, end, out, scratch);
}
#endif

sg_gmm_estep_kernel *sg_gmm_estep_kernel_named(const char *name)
{
    if (strcmp(name, "generic") == 0)
        return sg_gmm_estep_generic;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2"))
        return sg_gmm_estep_avx2;
#endif
    return NULL;
}

sg_gmm_estep_kernel *sg_gmm_estep_best_kernel(void)
{
    sg_gmm_estep_kernel *avx2 = sg_gmm_estep_kernel_named("avx2");
    return avx2 != NULL ? avx2 : sg_gmm_estep_generic;
}
