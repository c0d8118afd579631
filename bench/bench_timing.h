/*
 * bench_timing.h: what the C benchmarks time with: a monotonic clock in
 * seconds, and the median of a set of times (sorted in place).
 */
#ifndef STATGPU_BENCH_TIMING_H
#define STATGPU_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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
