/*
 * measured_choice.c: AUTO's choice between the CPU and CUDA by measurement
 * (see measured_choice.h).
 */
#include "backend/measured_choice.h"

#include <math.h>

/* Whether x sorts after y, NaN after every number. */
static bool sg_after(double x, double y)
{
    return x > y || (isnan(x) && !isnan(y));
}

double sg_measured_estimate(const sg_measured_choice *choice, statgpu_backend backend)
{
    const int which = backend == STATGPU_BACKEND_CUDA;
    const double *kept = choice->seconds_per_unit[which];
    switch (choice->kept[which]) {
    case 0:
        return NAN;
    case 1:
        return kept[0];
    case 2:
        return 0.5 * (kept[0] + kept[1]);
    default: {
        /* The median of three: NaN (a clock gone wrong) counts as the largest. */
        double a = kept[0], b = kept[1], c = kept[2];
        if (sg_after(a, b)) { double t = a; a = b; b = t; }
        if (sg_after(b, c)) b = c;
        return sg_after(a, b) ? a : b;
    }
    }
}

statgpu_backend sg_measured_choose(sg_measured_choice *choice, bool *trying)
{
    const unsigned char *measured = choice->measured;
    *trying = true;
    if (measured[1] < 2 && measured[1] <= measured[0])
        return STATGPU_BACKEND_CUDA;
    if (measured[0] < 2)
        return STATGPU_BACKEND_CPU;
    const double cpu = sg_measured_estimate(choice, STATGPU_BACKEND_CPU);
    const double cuda = sg_measured_estimate(choice, STATGPU_BACKEND_CUDA);
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
    if (choice->measured[which] < 2)
        ++choice->measured[which];
    if (choice->measured[which] == 1 && choice->kept[which] == 0)
        return;  /* the first call, which paid for the allocations */
    choice->seconds_per_unit[which][choice->next[which]] = seconds / units;
    choice->next[which] = (unsigned char)((choice->next[which] + 1) % SG_MEASURED_KEPT);
    if (choice->kept[which] < SG_MEASURED_KEPT)
        ++choice->kept[which];
}
