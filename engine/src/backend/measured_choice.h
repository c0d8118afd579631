/*
 * measured_choice.h: AUTO's choice between the CPU and CUDA by measurement,
 * for a class of calls whose two backends take about the same time, so that
 * no constant crossover says which is faster on the machine at hand (the
 * order statistics of large host data: methods/order_statistics.c).
 *
 * The first calls run CUDA and the CPU in turn, SG_MEASURED_TRIES on each
 * (the first call on each pays for its allocations and is not counted),
 * then the backend whose recent calls took less a unit of work -- the
 * median of its last SG_MEASURED_KEPT counted calls, so that a call or two
 * slowed by something else on the machine do not turn the choice -- and
 * the other again after SG_MEASURED_RETRY_MIN_CALLS calls, or after as many
 * as keep the retries' cost under SG_MEASURED_RETRY_COST of the calls' time
 * where it took much longer.
 */
#ifndef STATGPU_BACKEND_MEASURED_CHOICE_H
#define STATGPU_BACKEND_MEASURED_CHOICE_H

#include "statgpu.h"

#include <stdbool.h>

#define SG_MEASURED_TRIES           3
#define SG_MEASURED_KEPT            5
#define SG_MEASURED_RETRY_MIN_CALLS 16u
#define SG_MEASURED_RETRY_COST      0.03

typedef struct sg_measured_choice {
    double        seconds_per_unit[2][SG_MEASURED_KEPT];  /* counted calls': [0] the CPU, [1] CUDA */
    unsigned char measured[2];                            /* calls recorded on each, up to SG_MEASURED_TRIES */
    unsigned char kept[2];                                /* counted calls kept, up to SG_MEASURED_KEPT */
    unsigned char next[2];                                /* where the next counted call goes */
    unsigned      calls;                                  /* choices made since both were measured */
} sg_measured_choice;

/* The backend the next call of the class runs (STATGPU_BACKEND_CPU or
 * _CUDA); *trying is set when it runs there to measure it (the first calls,
 * or a retry of the slower), not because it was the faster. A zeroed
 * sg_measured_choice is a class with nothing measured yet. */
statgpu_backend sg_measured_choose(sg_measured_choice *choice, bool *trying);

/* Records a call of the class that ran on backend from start to end,
 * taking seconds for units of work. */
void sg_measured_record(sg_measured_choice *choice, statgpu_backend backend, double seconds, double units);

/* A backend's recent seconds a unit: the median of its kept calls (the mean
 * of the middle two of an even count), or NaN before it has one. */
double sg_measured_estimate(const sg_measured_choice *choice, statgpu_backend backend);

#endif
