/*
 * igmm_estep.c: the CPU's E-step of igmm.c (igmm_estep.h).
 *
 * The E-step runs over blocks of SG_IGMM_BLOCK observations, each pass of a
 * block a loop over the block that the compiler turns into vector code:
 * the terms, the largest term, the exps, the normalisation and the sums the
 * M-step needs (centred on each component's mu: igmm_estep.h says why).
 * The exp is the engine's own (sg_exp_nonpositive), so that it vectorises:
 * libm's scalar exp and the branch on the largest term had been most of
 * the fit's time (bench/NOTES.md, "IGMM v5"). Running sums
 * are kept in SG_IGMM_LANES lanes, observation i in lane i mod
 * SG_IGMM_LANES, and the lanes are added in order at the end: the order of
 * every addition is fixed by the code, not by the vector width, so the
 * SSE2 and AVX2 kernels give the same bits.
 */
#include "methods/igmm_estep.h"
#include "math/exp_nonpositive.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

void sg_igmm_fill_terms(const double *x, size_t n, sg_igmm_terms *terms)
{
    for (size_t i = 0; i < n; ++i) {
        terms->log_term[i] = -1.5 * log(x[i]);
        terms->inverse[i] = 1.0 / x[i];
    }
}

/* A block's responsibilities at k = 2 from its terms (in place), with
 * each row's largest term and sum: one exp a row, exp(smaller - larger),
 * the larger's being exactly 1 (the bits of the general case's). */
static inline __attribute__((always_inline)) void sg_igmm_e_two(double (*term)[SG_IGMM_BLOCK], double *largest,
                                                                double *sum)
{
    double other[SG_IGMM_BLOCK];
    for (size_t b = 0; b < SG_IGMM_BLOCK; ++b) {
        const double first = term[0][b], second = term[1][b];
        largest[b] = second > first ? second : first;
        other[b] = -fabs(second - first);  /* the smaller less the larger */
    }
    for (size_t b = 0; b < SG_IGMM_BLOCK; ++b)
        other[b] = other[b] < -746.0 ? -746.0 : other[b];  /* exp(-746) rounds to 0; NaN stays NaN */
    for (size_t b = 0; b < SG_IGMM_BLOCK; ++b)
        other[b] = sg_exp_nonpositive(other[b]);
    for (size_t b = 0; b < SG_IGMM_BLOCK; ++b) {
        const bool second_larger = term[1][b] > term[0][b];
        sum[b] = 1.0 + other[b];
        const double inverse_sum = 1.0 / sum[b], smaller = other[b] * inverse_sum;
        term[0][b] = second_larger ? smaller : inverse_sum;
        term[1][b] = second_larger ? inverse_sum : smaller;
    }
}

/* One block: SG_IGMM_BLOCK observations (x, -3/2 log x and 1/x), of which
 * the first count are real and the rest copies of the last (so that every
 * term is as finite as a real one), added to sums; the rows of the real
 * ones written to resp when it is not NULL. */
static inline __attribute__((always_inline)) void sg_igmm_e_block(const double *x, const double *log_term,
                                                                  const double *inverse, size_t count, size_t k,
                                                                  const sg_igmm_constants *constants,
                                                                  double *resp, sg_igmm_sums *sums)
{
    enum { B = SG_IGMM_BLOCK, L = SG_IGMM_LANES };
    double term[SG_IGMM_MAX_K][SG_IGMM_BLOCK], spread[SG_IGMM_MAX_K][SG_IGMM_BLOCK];
    double largest[SG_IGMM_BLOCK], sum[SG_IGMM_BLOCK];
    for (size_t j = 0; j < k; ++j) {
        const double offset = constants->offset[j], half_shape_over_mu = constants->half_shape_over_mu[j];
        const double mu = constants->mu[j], inverse_mu = constants->inverse_mu[j];
        for (size_t b = 0; b < B; ++b) {
            const double deviation = mu - x[b];
            spread[j][b] = (deviation * inverse_mu) * (deviation * inverse[b]);
            term[j][b] = offset + log_term[b] - half_shape_over_mu * spread[j][b];
        }
    }
    if (k == 2) {
        sg_igmm_e_two(term, largest, sum);
    } else {
        for (size_t b = 0; b < B; ++b)
            largest[b] = term[0][b];
        for (size_t j = 1; j < k; ++j)
            for (size_t b = 0; b < B; ++b)
                largest[b] = term[j][b] > largest[b] ? term[j][b] : largest[b];
        for (size_t j = 0; j < k; ++j) {
            for (size_t b = 0; b < B; ++b) {
                const double below = term[j][b] - largest[b];
                term[j][b] = below < -746.0 ? -746.0 : below;  /* exp(-746) rounds to 0; NaN stays NaN */
            }
        }
        for (size_t b = 0; b < B; ++b)
            sum[b] = term[0][b] = sg_exp_nonpositive(term[0][b]);
        for (size_t j = 1; j < k; ++j) {
            for (size_t b = 0; b < B; ++b) {
                term[j][b] = sg_exp_nonpositive(term[j][b]);
                sum[b] += term[j][b];
            }
        }
        double inverse_sum[SG_IGMM_BLOCK];
        for (size_t b = 0; b < B; ++b)
            inverse_sum[b] = 1.0 / sum[b];
        for (size_t j = 0; j < k; ++j)
            for (size_t b = 0; b < B; ++b)
                term[j][b] *= inverse_sum[b];
    }
    for (size_t j = 0; j < k; ++j)
        for (size_t b = count; b < B; ++b)
            term[j][b] = 0.0;
    for (size_t b = count; b < B; ++b) {
        largest[b] = 0.0;
        sum[b] = 1.0;
    }
    /* The block's own sums first, in locals that stay in registers (added
     * through sums, they were loads and stores of every partial sum); centred
     * on the component's mu (igmm_estep.h's sg_igmm_sums says why). */
    for (size_t j = 0; j < k; ++j) {
        const double mu = constants->mu[j];
        double weight[L] = { 0.0 }, weighted_deviation[L] = { 0.0 }, weighted_spread[L] = { 0.0 };
        /* Unrolled whole, so that each lane is a vector element (as a loop it
         * was vectorised across the lanes, with a transposition). */
#pragma GCC unroll 8
        for (size_t b = 0; b < B; b += L) {
            for (size_t l = 0; l < L; ++l) {
                const double r = term[j][b + l];
                weight[l] += r;
                weighted_deviation[l] += r * (mu - x[b + l]);
                weighted_spread[l] += r * spread[j][b + l];
            }
        }
        for (size_t l = 0; l < L; ++l) {
            sums->weight[j][l] += weight[l];
            sums->weighted_deviation[j][l] += weighted_deviation[l];
            sums->weighted_spread[j][l] += weighted_spread[l];
        }
    }
    double block_largest[L] = { 0.0 }, block_product[L];
    for (size_t l = 0; l < L; ++l)
        block_product[l] = 1.0;
#pragma GCC unroll 8
    for (size_t b = 0; b < B; b += L) {
        for (size_t l = 0; l < L; ++l) {
            block_largest[l] += largest[b + l];
            block_product[l] *= sum[b + l];
        }
    }
    for (size_t l = 0; l < L; ++l) {
        sums->largest[l] += block_largest[l];
        sums->product[l] *= block_product[l];
    }
    if (resp != NULL)
        for (size_t b = 0; b < count; ++b)
            for (size_t j = 0; j < k; ++j)
                resp[b * k + j] = term[j][b];
}

/* The E-step's loop over the blocks, inlined into each kernel. The logs of
 * the rows' sums are taken of their products (sums lie in [1, k]), once
 * every flush blocks, when the lanes' products are multiplied together: at
 * most 2^1023 by then. */
static inline __attribute__((always_inline)) void sg_igmm_e_blocks(const double *x, const sg_igmm_terms *terms,
                                                                   size_t n, size_t k,
                                                                   const sg_igmm_constants *constants,
                                                                   double *resp, sg_igmm_sums *sums)
{
    size_t bits_per_row = 0;
    while (((size_t)1 << bits_per_row) < k)
        ++bits_per_row;
    const size_t flush = bits_per_row == 0 ? SIZE_MAX : 1023 / (SG_IGMM_BLOCK * bits_per_row);
    size_t since_flush = 0;
    for (size_t begin = 0; begin < n; begin += SG_IGMM_BLOCK) {
        const size_t count = n - begin < SG_IGMM_BLOCK ? n - begin : SG_IGMM_BLOCK;
        double *block_resp = resp == NULL ? NULL : resp + begin * k;
        if (count == SG_IGMM_BLOCK) {
            sg_igmm_e_block(x + begin, terms->log_term + begin, terms->inverse + begin, count, k, constants,
                            block_resp, sums);
        } else {
            double tail_x[SG_IGMM_BLOCK], tail_log_term[SG_IGMM_BLOCK], tail_inverse[SG_IGMM_BLOCK];
            for (size_t b = 0; b < SG_IGMM_BLOCK; ++b) {
                const size_t i = begin + (b < count ? b : count - 1);
                tail_x[b] = x[i];
                tail_log_term[b] = terms->log_term[i];
                tail_inverse[b] = terms->inverse[i];
            }
            sg_igmm_e_block(tail_x, tail_log_term, tail_inverse, count, k, constants, block_resp, sums);
        }
        if (++since_flush == flush || begin + SG_IGMM_BLOCK >= n) {
            double product = 1.0;
            for (size_t l = 0; l < SG_IGMM_LANES; ++l) {
                product *= sums->product[l];
                sums->product[l] = 1.0;
            }
            sums->logs += log(product);
            since_flush = 0;
        }
    }
}

static void sg_igmm_e_generic(const double *x, const sg_igmm_terms *terms, size_t n, size_t k,
                              const sg_igmm_constants *constants, double *resp, sg_igmm_sums *sums)
{
    sg_igmm_e_blocks(x, terms, n, k, constants, resp, sums);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* "avx2" without "fma": four lanes a vector, the same roundings as SSE2's two. */
__attribute__((target("avx2"))) static void sg_igmm_e_avx2(const double *x, const sg_igmm_terms *terms, size_t n,
                                                            size_t k, const sg_igmm_constants *constants,
                                                            double *resp, sg_igmm_sums *sums)
{
    sg_igmm_e_blocks(x, terms, n, k, constants, resp, sums);
}
#endif

sg_igmm_e_kernel *sg_igmm_e_kernel_named(const char *name)
{
    if (strcmp(name, "generic") == 0)
        return sg_igmm_e_generic;
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2"))
        return sg_igmm_e_avx2;
#endif
    return NULL;
}

sg_igmm_e_kernel *sg_igmm_best_e_kernel(void)
{
    sg_igmm_e_kernel *avx2 = sg_igmm_e_kernel_named("avx2");
    return avx2 != NULL ? avx2 : sg_igmm_e_generic;
}
