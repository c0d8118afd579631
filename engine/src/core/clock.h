/*
 * clock.h: the monotonic clock in seconds, for the engine's own timings
 * (AUTO's measured choice, the progress callback's pace, notes that say
 * how long a part took).
 */
#ifndef STATGPU_CORE_CLOCK_H
#define STATGPU_CORE_CLOCK_H

#include <time.h>

static inline double sg_monotonic_seconds(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
}

#endif /* STATGPU_CORE_CLOCK_H */
