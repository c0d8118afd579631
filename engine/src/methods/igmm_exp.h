/*
 * igmm_exp.h: the exp of igmm.c's E-step, branch-free so that the E-step's
 * loops vectorise (libm's exp is a call per value), in a header of its own
 * so that tests/test_igmm.c measures it against libm's.
 */
#ifndef STATGPU_METHODS_IGMM_EXP_H
#define STATGPU_METHODS_IGMM_EXP_H

#include <stdint.h>
#include <string.h>

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
 * bits of n + 1.5 * 2^52), so a NaN or -inf is no undefined behaviour. No
 * multiply-add is fused (the engine is built without -mfma and the AVX2
 * kernel is compiled for "avx2" alone): the same bits on every x86-64. */
static inline __attribute__((always_inline)) double sg_igmm_exp_nonpositive(double y)
{
    const double shift = 0x1.8p52, inverse_ln2 = 0x1.71547652b82fep0;
    const double ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33;
    const double n_shifted = y * inverse_ln2 + shift, n = n_shifted - shift;
    const double r_high = y - n * ln2_hi, r = r_high - n * ln2_lo, r_squared = r * r;
    const double r_rounding = (r_high - r) - n * ln2_lo;  /* what rounding r left out */
    double q = 1.6059043836821613e-10;  /* 1/13! */
    q = q * r + 2.08767569878681e-09;
    q = q * r + 2.505210838544172e-08;
    q = q * r + 2.755731922398589e-07;
    q = q * r + 2.7557319223985893e-06;
    q = q * r + 2.48015873015873e-05;
    q = q * r + 0.0001984126984126984;
    q = q * r + 0.001388888888888889;
    q = q * r + 0.008333333333333333;
    q = q * r + 0.041666666666666664;
    q = q * r + 0.16666666666666666;
    q = q * r + 0.5;
    const double exp_r = 1.0 + (r + (r_squared * q + r_rounding));
    /* n (in [-1076, 0]) = first + second, each in [-538, 0]; the bits of
     * m + 1.5 * 2^52 are those of 1.5 * 2^52 plus m, and 2^m's exponent
     * field is m + 1023. */
    const double first_shifted = n * 0.5 + shift;
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

#endif
