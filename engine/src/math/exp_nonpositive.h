/*
 * exp_nonpositive.h: the exp of the mixtures' E-steps (gmm_estep.c, igmm.c,
 * and the CUDA module's GMM E-step), branch-free so that the CPU's loops
 * vectorise (libm's exp is a call per value) and the GPU's constants stay
 * in registers (CUDA's exp took 50 instructions, this one 28), in a header
 * of its own so that tests/test_igmm.c measures it against libm's.
 */
#ifndef STATGPU_MATH_EXP_NONPOSITIVE_H
#define STATGPU_MATH_EXP_NONPOSITIVE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define SG_EXP_INLINE static __host__ __device__ __forceinline__
#else
#define SG_EXP_INLINE static inline __attribute__((always_inline))
#endif

/* a b + c: fused (one rounding, C's and CUDA's fma) or not (two). */
SG_EXP_INLINE double sg_exp_muladd(double a, double b, double c, int fused)
{
    return fused ? fma(a, b, c) : a * b + c;
}

/* exp(y) for y in [-746, 0] and NaN (NaN gives NaN; the caller clamps y
 * from below, in a loop of its own: a clamp inside this function made GCC
 * split the loop's paths, which then did not vectorise), within 1 ulp of
 * the exact value (measured against glibc's exp: tests/test_igmm.c),
 * exactly 1 at 0, subnormal or 0 below -708: y = n ln 2 + r with |r| <= ln 2 / 2
 * (ln 2 in two parts, fdlibm's, so that n ln2_hi is exact and y - n ln2_hi
 * too), exp(r) by its Taylor polynomial to r^13 (the first term left out is
 * below 2^-58 of the result), and 2^n as two powers of 2 of half n each, so
 * that the result rounds once into the subnormal range. Branch-free, and
 * no conversion of a double to an integer (the integer n is read from the
 * bits of n + 1.5 * 2^52), so a NaN or -inf is no undefined behaviour.
 * Every multiply-add is sg_exp_muladd's with the constant fused: the CPU's
 * (fused 0; the engine is built without -mfma and the AVX2 kernels for
 * "avx2" alone) gives the same bits on every x86-64, the GPU's (fused 1) the
 * same bits as C's fma on the CPU, where the test measures both. */
SG_EXP_INLINE double sg_exp_nonpositive_with(double y, int fused)
{
    const double shift = 0x1.8p52, inverse_ln2 = 0x1.71547652b82fep0;
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    const double n_shifted = sg_exp_muladd(y, inverse_ln2, shift, fused), n = n_shifted - shift;
    const double r_high = sg_exp_muladd(-n, ln2_hi, y, fused);
    const double r = sg_exp_muladd(-n, ln2_lo, r_high, fused), r_squared = r * r;
    const double r_rounding = sg_exp_muladd(-n, ln2_lo, r_high - r, fused);  /* what rounding r left out */
    double q = 1.6059043836821613e-10;  /* 1/13! */
    q = sg_exp_muladd(q, r, 2.08767569878681e-09, fused);
    q = sg_exp_muladd(q, r, 2.505210838544172e-08, fused);
    q = sg_exp_muladd(q, r, 2.755731922398589e-07, fused);
    q = sg_exp_muladd(q, r, 2.7557319223985893e-06, fused);
    q = sg_exp_muladd(q, r, 2.48015873015873e-05, fused);
    q = sg_exp_muladd(q, r, 0.0001984126984126984, fused);
    q = sg_exp_muladd(q, r, 0.001388888888888889, fused);
    q = sg_exp_muladd(q, r, 0.008333333333333333, fused);
    q = sg_exp_muladd(q, r, 0.041666666666666664, fused);
    q = sg_exp_muladd(q, r, 0.16666666666666666, fused);
    q = sg_exp_muladd(q, r, 0.5, fused);
    const double exp_r = 1.0 + (r + sg_exp_muladd(r_squared, q, r_rounding, fused));
    /* n (in [-1076, 0]) = first + second, each in [-538, 0]; the bits of
     * m + 1.5 * 2^52 are those of 1.5 * 2^52 plus m, and 2^m's exponent
     * field is m + 1023. */
    const double first_shifted = sg_exp_muladd(n, 0.5, shift, fused);
    uint64_t n_bits, first_bits;
    memcpy(&n_bits, &n_shifted, sizeof n_bits);
    memcpy(&first_bits, &first_shifted, sizeof first_bits);
    const uint64_t first_power_bits = (first_bits + 1023u) << 52;
    const uint64_t second_power_bits = (n_bits - first_bits + 1023u) << 52;
    double first_power, second_power;
    memcpy(&first_power, &first_power_bits, sizeof first_power);
    memcpy(&second_power, &second_power_bits, sizeof second_power);
    return exp_r * first_power * second_power;
}

/* The CPU's exp: nothing fused. */
SG_EXP_INLINE double sg_exp_nonpositive(double y)
{
    return sg_exp_nonpositive_with(y, 0);
}

#endif
