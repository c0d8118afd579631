/*
 * measured_choice.c: AUTO's choice between the CPU and CUDA by measurement
 * (see measured_choice.h).
 */
#include "backend/measured_choice.h"

#include <math.h>

statgpu_backend sg_measured_choose(sg_measured_choice *choice, bool *trying)
{
    const unsigned char *measured = choice->measured;
    *trying = true;
    if (measured[1] < 2 && measured[1] <= measured[0])
        return STATGPU_BACKEND_CUDA;
    if (measured[0] < 2)
        return STATGPU_BACKEND_CPU;
    const double cpu = choice->seconds_per_unit[0], cuda = choice->seconds_per_unit[1];
    const bool cuda_faster = !(cuda > cpu);
    const double ratio = cuda_faster ? cpu / cuda : cuda / cpu;
    /* Over a period of p calls one retry on a backend r times slower costs
     * (r - 1) / p of the time: p >= (r - 1) / SG_MEASURED_RETRY_COST keeps
     * it under that (r = 1.2 retries every 16 calls, r = 4 every 100). */
    const double calls = ceil((ratio - 1.0) / SG_MEASURED_RETRY_COST);
    const unsigned period = calls > SG_MEASURED_RETRY_MIN_CALLS ? (calls < 1e6 ? (unsigned)calls : 1000000u)
                                                                : SG_MEASURED_RETRY_MIN_CALLS;
    *trying = ++choice->calls % period == 0;
    return cuda_faster != *trying ? STATGPU_BACKEND_CUDA : STATGPU_BACKEND_CPU;
}

void sg_measured_record(sg_measured_choice *choice, statgpu_backend backend, double seconds, double units)
{
    const int which = backend == STATGPU_BACKEND_CUDA;
    choice->seconds_per_unit[which] = seconds / units;
    if (choice->measured[which] < 2)
        ++choice->measured[which];
}
