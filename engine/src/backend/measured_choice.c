/*
 * measured_choice.c: AUTO's choice between the CPU and CUDA by measurement
 * (see measured_choice.h).
 */
#include "backend/measured_choice.h"

#include <math.h>

/* Whether x sorts after y, NaN (a clock gone wrong) after every number. */
static bool sg_after(double x, double y)
{
    return x > y || (isnan(x) && !isnan(y));
}

double sg_measured_estimate(const sg_measured_choice *choice, statgpu_backend backend)
{
    const int which = backend == STATGPU_BACKEND_CUDA;
    const int kept = choice->kept[which];
    if (kept == 0)
        return NAN;
    double sorted[SG_MEASURED_KEPT];
    for (int i = 0; i < kept; ++i) {
        const double value = choice->seconds_per_unit[which][i];
        int j = i;
        for (; j > 0 && sg_after(sorted[j - 1], value); --j)
            sorted[j] = sorted[j - 1];
        sorted[j] = value;
    }
    return kept % 2 ? sorted[kept / 2] : 0.5 * (sorted[kept / 2 - 1] + sorted[kept / 2]);
}

statgpu_backend sg_measured_choose(sg_measured_choice *choice, bool *trying)
{
    const unsigned char *measured = choice->measured;
    *trying = true;
    if (measured[1] < SG_MEASURED_TRIES && measured[1] <= measured[0])
        return STATGPU_BACKEND_CUDA;
    if (measured[0] < SG_MEASURED_TRIES)
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
    if (choice->measured[which] < SG_MEASURED_TRIES)
        ++choice->measured[which];
    if (choice->measured[which] == 1 && choice->kept[which] == 0)
        return;  /* the first call, which paid for the allocations */
    choice->seconds_per_unit[which][choice->next[which]] = seconds / units;
    choice->next[which] = (unsigned char)((choice->next[which] + 1) % SG_MEASURED_KEPT);
    if (choice->kept[which] < SG_MEASURED_KEPT)
        ++choice->kept[which];
}
