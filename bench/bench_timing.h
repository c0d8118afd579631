/*
 * bench_timing.h: what the C benchmarks time with: the engine's monotonic
 * clock in seconds (core/clock.h; built with -I engine/src), and the median
 * of a set of times (sorted in place).
 */
#ifndef STATGPU_BENCH_TIMING_H
#define STATGPU_BENCH_TIMING_H

#include "core/clock.h"

#include <stdlib.h>

static inline double bench_now(void)
{
    return sg_monotonic_seconds();
}

static inline int bench_compare_times(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bench_median(double *times, size_t count)
{
    qsort(times, count, sizeof *times, bench_compare_times);
    return times[count / 2];
}

#endif
