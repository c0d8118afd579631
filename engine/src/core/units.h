/*
 * units.h: results that do not depend on the unit of measurement.
 *
 * Squared residuals and squared distances leave the range of a double long
 * before the data do: data near 1e-170 square to 1e-340, below the smallest
 * double, and data near 1e161 square to 1e322, above the largest, so a fit in
 * the data's own units sees every residual as 0 or infinity. The methods that
 * square their data therefore run on the data times 2^e, with e chosen from a
 * typical magnitude of the data, and scale their results back by 2^-e (values)
 * or 2^-2e (squares). Multiplying by a power of two is exact, so the run is
 * bit for bit the run on data of ordinary size, and data that are already of
 * ordinary size (a magnitude from 2^-400 to 2^400) are not scaled at all:
 * their results keep every bit.
 */
#ifndef STATGPU_CORE_UNITS_H
#define STATGPU_CORE_UNITS_H

#include <math.h>
#include <stddef.h>

/* Magnitudes from 2^-400 (about 4e-121) to 2^400 (about 3e120) are run as
 * they are: their squares, and sums of up to 2^100 of them, stay normal
 * doubles. */
#define SG_UNITS_ORDINARY_EXPONENT 400

/* The exponent e such that magnitude x 2^e lies in [1, 2), or 0 when the
 * magnitude is ordinary, zero or not finite. */
static inline int sg_units_exponent(double magnitude)
{
    if (!(magnitude > 0.0) || !isfinite(magnitude))
        return 0;
    int exponent = ilogb(magnitude);
    if (exponent >= -SG_UNITS_ORDINARY_EXPONENT && exponent <= SG_UNITS_ORDINARY_EXPONENT)
        return 0;
    return -exponent;
}

/* values[i] x 2^exponent for i < count, in place (exact unless a result
 * leaves the range of normal doubles). */
static inline void sg_units_scale(double *values, size_t count, int exponent)
{
    if (exponent == 0)
        return;
    for (size_t i = 0; i < count; ++i)
        values[i] = ldexp(values[i], exponent);
}

#endif
