/*
 * order_statistics.c: the public order-statistics functions: validation, the
 * ranks each one needs, dispatch to the CUDA or CPU backend, and the exact
 * arithmetic Calc uses to combine the selected values (MEDIAN, PERCENTILE.INC).
 */
#include "internal.h"
#include "core/clock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under STATGPU_BACKEND_AUTO, the values from which the GPU's whole call
 * (copy included) is faster than the CPU's on 16 threads: 2^12 took 0.08 ms
 * on the GPU and 0.04 on the CPU, 2^14 0.15 and 0.11, 2^16 0.20 and 0.34
 * (bench/NOTES.md, "AUTO", "CPU introselect, branch-free" and "CPU
 * introselect, sampled rounds"); scaled by dispatch.h for more threads. */
#define SG_AUTO_CUDA_MIN_COUNT ((size_t)1 << 15)

/* From 2^20 values of host data both backends run at about the host
 * memory's speed -- the CPU's window select reads the data once, the CUDA
 * route copies them across the bus -- and which is faster changes from
 * machine to machine and from one machine start to the next: at 2^27
 * doubles on the benchmark machine the CPU took 27.5 ms against CUDA's
 * 25.9 in one run, 19.9 against 28.7 in another, at 2^24 4.7 against 4.5
 * and 3.4 against 4.0 (bench/NOTES.md, "AUTO measured"), at 2^20 0.84
 * against 0.69 in one run, 0.67 against 0.74 in another (Host data v23).
 * So AUTO chooses there by measurement (backend/measured_choice.h), per
 * class of calls (sg_select_measured_class). */

/* ------------------------------------------------------------- validation */

static statgpu_status sg_check_vector(statgpu_context *context, const statgpu_vector *data,
                                      const void *result)
{
    if (data == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the vector is NULL");
    if (data->dtype != STATGPU_DTYPE_FLOAT64 && data->dtype != STATGPU_DTYPE_FLOAT32)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "unknown element type %d", (int)data->dtype);
    if (data->memory != STATGPU_MEMORY_HOST && data->memory != STATGPU_MEMORY_CUDA_DEVICE
        && data->memory != STATGPU_MEMORY_HOST_SCRATCH)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "unknown memory kind %d", (int)data->memory);
    if (data->count == 0)
        return sg_fail(context, STATGPU_ERROR_EMPTY_INPUT, "the data hold no numbers");
    if (data->data == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "data is NULL");
    if (result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the result pointer is NULL");
    return STATGPU_OK;
}

static statgpu_status sg_check_probability(statgpu_context *context, double p)
{
    if (!(p >= 0.0 && p <= 1.0))  /* also rejects NaN */
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "the probability %.17g lies outside [0, 1]", p);
    return STATGPU_OK;
}

static statgpu_vector sg_host_doubles(const double *data, size_t data_count)
{
    statgpu_vector vector = { data, data_count, STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST };
    return vector;
}

/* --------------------------------------------------------------- dispatch */

/* The class of a call whose backend AUTO chooses by measurement (the power
 * of two of its count, counted from 2^SG_SELECT_MEASURED_MIN_LOG2, its
 * element type, and whether it asks for one or two ranks -- a median, a
 * quantile -- or more, which cost the backends differently), or -1: an AUTO
 * context with AUTO's select method, host data of 2^20 values or more. */
static int sg_select_measured_class(const statgpu_context *context, const statgpu_vector *data,
                                    size_t rank_count)
{
    if (context->params.backend != STATGPU_BACKEND_AUTO || context->params.select_method != STATGPU_SELECT_AUTO
        || data->memory == STATGPU_MEMORY_CUDA_DEVICE || data->count >> SG_SELECT_MEASURED_MIN_LOG2 == 0)
        return -1;
    int log2 = 0;
    for (size_t count = data->count; count > 1; count >>= 1)
        ++log2;
    return 4 * (log2 - SG_SELECT_MEASURED_MIN_LOG2) + 2 * (rank_count > 2) + (data->dtype == STATGPU_DTYPE_FLOAT32);
}

/* AUTO's choice for a call of a measured class: true for CUDA. Writes the
 * note that says why when it is the CPU. */
static bool sg_select_measured_wants_cuda(statgpu_context *context, int measured_class)
{
    sg_measured_choice *choice = &context->select_measured[measured_class];
    bool trying = false;
    if (sg_measured_choose(choice, &trying) == STATGPU_BACKEND_CUDA)
        return true;
    const int log2 = measured_class / 4 + SG_SELECT_MEASURED_MIN_LOG2;
    if (choice->measured[0] < SG_MEASURED_TRIES)
        snprintf(context->note, sizeof context->note, "AUTO tried the CPU on host data of 2^%d values or more, "
                 "to measure it against CUDA", log2);
    else
        sg_format(context->note, sizeof context->note, "AUTO %s the CPU: on host data of 2^%d values or more its "
                 "recent calls took %.3g ns a value, CUDA's %.3g", trying ? "tried" : "chose", log2,
                 sg_measured_estimate(choice, STATGPU_BACKEND_CPU) * 1e9,
                 sg_measured_estimate(choice, STATGPU_BACKEND_CUDA) * 1e9);
    return false;
}

/* Exact order statistics of the given ascending, distinct 1-based ranks, on
 * the context's backend, falling back to the CPU when CUDA cannot run a call
 * on host data. */
static statgpu_status sg_select_ranks(statgpu_context *context, const statgpu_vector *data,
                                      const size_t *ranks, size_t rank_count, double *results)
{
    if (sg_progress_cancelled(context, 0.0))
        return sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");
    bool on_device = data->memory == STATGPU_MEMORY_CUDA_DEVICE;
    /* NaN is looked for by the backend that runs the call: the CUDA backend
     * in its first pass over the data (host data too: a host pass would cost
     * a third of the whole call at 2^27 doubles), the CPU below. */
    sg_dispatch_begin(context);
    /* A class's calls are measured once CUDA is set up (a call that sets it
     * up is not) and while they run on one backend from start to end. */
    int measured_class = context->cuda_state != NULL ? sg_select_measured_class(context, data, rank_count) : -1;
    const double started = sg_monotonic_seconds();
    if (sg_dispatch_wants_cuda_above(context, (double)data->count, (double)SG_AUTO_CUDA_MIN_COUNT, on_device)
        && (measured_class < 0 || sg_select_measured_wants_cuda(context, measured_class))) {
        char message[256] = "";
        statgpu_cuda_status status = STATGPU_CUDA_NO_DEVICE;
        if (context->params.backend == STATGPU_BACKEND_CPU && on_device)
            snprintf(message, sizeof message, "the context asks for the CPU backend");
        else if (sg_dispatch_cuda_ready(context, message, sizeof message))
            status = sg_cuda_select(context, data, ranks, rank_count, results, message, sizeof message);

        if (status == STATGPU_CUDA_OK) {
            if (measured_class >= 0)
                sg_measured_record(&context->select_measured[measured_class], STATGPU_BACKEND_CUDA,
                                   sg_monotonic_seconds() - started, (double)data->count);
            sg_dispatch_ran(context, STATGPU_BACKEND_CUDA, context->last_transfer_seconds,
                            context->last_compute_seconds);
            return STATGPU_OK;
        }
        if (status == STATGPU_CUDA_NAN_IN_DATA)
            return sg_fail(context, STATGPU_ERROR_NAN_IN_DATA, "the data contain NaN");
        if (on_device)
            return sg_fail(context, STATGPU_ERROR_BACKEND, "data in device memory need CUDA: %s", message);
        sg_dispatch_note_cpu(context, status, message, NULL);
        measured_class = -1;
    }

    statgpu_status status = sg_cpu_select_ranks_nan_checked(
        data->data, data->dtype, data->count, data->memory == STATGPU_MEMORY_HOST_SCRATCH, ranks, rank_count,
        context->params.select_method, results, context->cpu_thread_count);
    if (status == STATGPU_ERROR_NAN_IN_DATA)
        return sg_fail(context, STATGPU_ERROR_NAN_IN_DATA, "the data contain NaN");
    if (status != STATGPU_OK)
        return sg_fail(context, status, "could not allocate work space for %zu values", data->count);
    if (measured_class >= 0)
        sg_measured_record(&context->select_measured[measured_class], STATGPU_BACKEND_CPU,
                           sg_monotonic_seconds() - started, (double)data->count);
    sg_dispatch_ran(context, STATGPU_BACKEND_CPU, 0.0, 0.0);
    if (sg_progress_cancelled(context, 1.0))
        return sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");
    return STATGPU_OK;
}

static int sg_compare_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Sorts ranks and drops repeats in place; returns how many remain. */
static size_t sg_sort_distinct(size_t *ranks, size_t rank_count)
{
    qsort(ranks, rank_count, sizeof *ranks, sg_compare_size);
    size_t distinct = 0;
    for (size_t j = 0; j < rank_count; ++j)
        if (distinct == 0 || ranks[j] != ranks[distinct - 1])
            ranks[distinct++] = ranks[j];
    return distinct;
}

/* The value of rank among the selected distinct ranks. */
static double sg_lookup(const size_t *ranks, const double *values, size_t distinct, size_t rank)
{
    const size_t *found = bsearch(&rank, ranks, distinct, sizeof *ranks, sg_compare_size);
    return values[found - ranks];
}

/* ------------------------------------------------- Calc's exact arithmetic */

/* Calc's MEDIAN for an even count: (upper + lower) / 2. Where that overflows
 * the halves are added instead; between -Inf and +Inf there is no answer. */
static statgpu_status sg_midpoint(statgpu_context *context, double lower, double upper, double *result)
{
    if (isinf(lower) && isinf(upper) && lower != upper)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                       "the two middle values are -Inf and +Inf: the median is undefined");
    double sum = upper + lower;
    *result = isinf(sum) && !isinf(lower) && !isinf(upper) ? upper / 2 + lower / 2 : sum / 2;
    return STATGPU_OK;
}

/* Calc rounds a value to 15 significant decimal digits before taking its floor
 * in PERCENTILE.INC, so that p*(n-1) = 6.999999999999999 counts as 7. Values
 * with at most 11 fraction bits, integers and values beyond 2^41 are exact
 * enough already and are left alone, as Calc leaves them. */
static double sg_round_to_15_digits(double value)
{
    if (value == 0.0 || !isfinite(value) || value > 0x1p41)
        return value;
    double magnitude = fabs(value);
    if (magnitude == floor(magnitude) || magnitude * 0x1p11 == floor(magnitude * 0x1p11))
        return value;
    int exponent = 14 - (int)floor(log10(magnitude));
    double scale = pow(10.0, abs(exponent));
    double scaled = exponent < 0 ? magnitude / scale : magnitude * scale;
    if (!isfinite(scaled))
        return value;
    double rounded = round(scaled);
    rounded = exponent < 0 ? rounded * scale : rounded / scale;
    if (!isfinite(rounded))
        return value;
    return value < 0 ? -rounded : rounded;
}

typedef struct sg_quantile_plan {
    size_t lower_rank;  /* 1-based rank of x(i) */
    double fraction;    /* h - i, in [0, 1); 0 means x(i) exactly */
} sg_quantile_plan;

static sg_quantile_plan sg_plan_quantile(double p, size_t data_count)
{
    sg_quantile_plan plan = { 1, 0.0 };
    if (data_count == 1)
        return plan;
    double position = p * (double)(data_count - 1);
    double index = floor(sg_round_to_15_digits(position));
    if (index > (double)(data_count - 1))
        index = (double)(data_count - 1);
    plan.lower_rank = (size_t)index + 1;
    /* Like Calc's PERCENTILE.INC (ScInterpreter::GetPercentile), a position
     * that rounding put just below a whole number (h = 28.999999999999996
     * gives i = 29) takes x(i) itself: h - i <= 0 does not interpolate. Nor
     * does the last value, which has no successor. */
    plan.fraction = plan.lower_rank == data_count || !(position - index > 0.0) ? 0.0 : position - index;
    return plan;
}

/* x(i) + f*(x(i+1) - x(i)), as Calc computes it (so -0.0 next to +0.0 gives
 * +0.0 as in Calc), where that is finite; next to an infinity the limit, and
 * where the difference overflows (Calc: #NUM!) the same form in long double,
 * whose wider exponent holds the difference: the value rounded once more to a
 * double (-1.7e308 and 1.6e308 at 0.75: 7.75e307, correctly rounded, where
 * (1 - f) x(i) + f x(i+1) in doubles gave one ulp below). */
static statgpu_status sg_interpolate(statgpu_context *context, double lower, double upper,
                                     double fraction, double *result)
{
    if (fraction == 0.0) {
        *result = lower;
        return STATGPU_OK;
    }
    if (isinf(lower) || isinf(upper)) {
        if (isinf(lower) && isinf(upper) && lower != upper)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "the quantile lies between -Inf and +Inf and is undefined");
        *result = isinf(lower) ? lower : upper;
        return STATGPU_OK;
    }
    double difference = upper - lower;
    *result = isinf(difference) ? (double)((long double)lower
                                           + (long double)fraction * ((long double)upper - (long double)lower))
                                : lower + fraction * difference;
    return STATGPU_OK;
}

/* ------------------------------------------------------- public functions */

statgpu_status statgpu_vector_select(statgpu_context *context, const statgpu_vector *data,
                                     const size_t *ranks, size_t rank_count, double *results)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    statgpu_status status = sg_check_vector(context, data, results);
    if (status != STATGPU_OK)
        return status;
    if (ranks == NULL || rank_count == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "no ranks given");
    for (size_t j = 0; j < rank_count; ++j)
        if (ranks[j] < 1 || ranks[j] > data->count)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "k = %zu lies outside 1..%zu",
                           ranks[j], data->count);
    if (rank_count > SIZE_MAX / sizeof(size_t))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "too many ranks");

    size_t *sorted = malloc(rank_count * sizeof *sorted);
    double *values = malloc(rank_count * sizeof *values);
    if (sorted == NULL || values == NULL) {
        free(sorted);
        free(values);
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate %zu ranks", rank_count);
    }
    memcpy(sorted, ranks, rank_count * sizeof *sorted);
    size_t distinct = sg_sort_distinct(sorted, rank_count);
    status = sg_select_ranks(context, data, sorted, distinct, values);
    if (status == STATGPU_OK)
        for (size_t j = 0; j < rank_count; ++j)
            results[j] = sg_lookup(sorted, values, distinct, ranks[j]);
    free(sorted);
    free(values);
    return status == STATGPU_OK ? sg_succeed(context) : status;
}

statgpu_status statgpu_vector_median(statgpu_context *context, const statgpu_vector *data, double *result)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    statgpu_status status = sg_check_vector(context, data, result);
    if (status != STATGPU_OK)
        return status;
    size_t count = data->count;
    if (count % 2 == 1) {
        size_t rank = count / 2 + 1;
        status = sg_select_ranks(context, data, &rank, 1, result);
        return status == STATGPU_OK ? sg_succeed(context) : status;
    }
    size_t ranks[2] = { count / 2, count / 2 + 1 };
    double values[2];
    status = sg_select_ranks(context, data, ranks, 2, values);
    if (status == STATGPU_OK)
        status = sg_midpoint(context, values[0], values[1], result);
    return status == STATGPU_OK ? sg_succeed(context) : status;
}

statgpu_status statgpu_vector_quantiles(statgpu_context *context, const statgpu_vector *data,
                                        const double *p, size_t p_count, double *results)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    statgpu_status status = sg_check_vector(context, data, results);
    if (status != STATGPU_OK)
        return status;
    if (p == NULL || p_count == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "no probabilities given");
    for (size_t j = 0; j < p_count; ++j) {
        status = sg_check_probability(context, p[j]);
        if (status != STATGPU_OK)
            return status;
    }

    /* Every quantile needs x(i) and, when it interpolates, x(i+1): select the
     * distinct ranks once, then look each one up. */
    if (p_count > SIZE_MAX / 2 / sizeof(size_t))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "too many probabilities");
    size_t *ranks = malloc(2 * p_count * sizeof *ranks);
    double *values = malloc(2 * p_count * sizeof *values);
    if (ranks == NULL || values == NULL) {
        free(ranks);
        free(values);
        return sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate %zu ranks", 2 * p_count);
    }
    size_t rank_count = 0;
    for (size_t j = 0; j < p_count; ++j) {
        sg_quantile_plan plan = sg_plan_quantile(p[j], data->count);
        ranks[rank_count++] = plan.lower_rank;
        if (plan.fraction != 0.0)
            ranks[rank_count++] = plan.lower_rank + 1;
    }
    size_t distinct = sg_sort_distinct(ranks, rank_count);

    status = sg_select_ranks(context, data, ranks, distinct, values);
    for (size_t j = 0; j < p_count && status == STATGPU_OK; ++j) {
        sg_quantile_plan plan = sg_plan_quantile(p[j], data->count);
        double lower = sg_lookup(ranks, values, distinct, plan.lower_rank);
        double upper = plan.fraction != 0.0 ? sg_lookup(ranks, values, distinct, plan.lower_rank + 1) : lower;
        status = sg_interpolate(context, lower, upper, plan.fraction, &results[j]);
    }
    free(ranks);
    free(values);
    return status == STATGPU_OK ? sg_succeed(context) : status;
}

statgpu_status statgpu_kth_smallest(statgpu_context *context, const double *data, size_t data_count,
                                    size_t k, double *result)
{
    statgpu_vector vector = sg_host_doubles(data, data_count);
    return statgpu_vector_select(context, &vector, &k, 1, result);
}

statgpu_status statgpu_median(statgpu_context *context, const double *data, size_t data_count, double *result)
{
    statgpu_vector vector = sg_host_doubles(data, data_count);
    return statgpu_vector_median(context, &vector, result);
}

statgpu_status statgpu_quantile(statgpu_context *context, const double *data, size_t data_count,
                                double p, double *result)
{
    statgpu_vector vector = sg_host_doubles(data, data_count);
    return statgpu_vector_quantiles(context, &vector, &p, 1, result);
}

statgpu_status statgpu_quantiles(statgpu_context *context, const double *data, size_t data_count,
                                 const double *p, size_t p_count, double *results)
{
    statgpu_vector vector = sg_host_doubles(data, data_count);
    return statgpu_vector_quantiles(context, &vector, p, p_count, results);
}
