/*
 * igmm.c: mixtures of inverse Gaussian distributions by EM for many data sets
 * at once (statgpu.h's statgpu_igmm), on the CPU.
 *
 * Every (data set, start) pair is a task of its own, run on the engine's
 * threads in blocks that depend on the counts alone, with its own random
 * stream (from the context's and the call's seeds and the pair's index); the
 * start of the highest log-likelihood is kept per data set afterwards, so the
 * result is the same bits at any thread count.
 */
#include "internal.h"
#include "backend/cuda_loader.h"
#include "core/clock.h"
#include "core/pool.h"
#include "core/threads.h"
#include "methods/igmm_estep.h"

#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SG_IGMM_PARAMS_MIN_BYTES (offsetof(statgpu_igmm_params, keep_responsibilities) + sizeof(int))
#define SG_IGMM_LOG_2PI 1.8378770664093454835606594728112
/* Draws of 3 observations before a component's start gives up on distinct
 * ones and takes the whole data set's estimate. */
#define SG_IGMM_START_TRIES 32

/* One component's parameters. */
typedef struct sg_igmm_component {
    double alpha, mu, lambda;
} sg_igmm_component;

/* What one (data set, start) run ends with; its k components are the job's
 * components from task k on (kept apart: with room for SG_IGMM_MAX_K in
 * each run, 400,000 runs took 627 MB, and writing them a third of a second). */
typedef struct sg_igmm_run {
    double log_likelihood;
    size_t iterations, reseeds;
    int    converged;
} sg_igmm_run;

typedef struct sg_igmm_job {
    const double *const      *sets;
    const size_t             *lengths;
    const int32_t            *status;
    size_t                    k, start_count;
    const statgpu_igmm_params *params;
    uint64_t                  context_seed;
    sg_igmm_run              *runs;         /* set_count x start_count */
    sg_igmm_component        *components;   /* set_count x start_count x k */
    double                  **scratch;      /* per slot: (largest length) x (k + 2) */
    sg_igmm_e_kernel         *e_kernel;     /* the E-step's kernel for this CPU */
    const int                *exponents;    /* per set: sets[s] holds the values times 2^-e (sg_igmm_scale) */
    /* Stop and progress while the fits run (sg_igmm_poll): */
    statgpu_context          *context;
    size_t                    task_count;
    atomic_bool               stop;         /* the caller's progress callback asked to stop */
    atomic_size_t             done;         /* tasks finished */
    double                    next_poll;    /* when the calling thread next calls the callback (slot 0's) */
} sg_igmm_job;

/* On the calling thread (slot 0 of the engine's loops, the only thread the
 * progress callback may be called from), at most every 0.1 s: the share of
 * fits done to the callback, and its answer to stop into job->stop, which
 * every fit reads between iterations. A long fit (many values, components
 * and iterations) can thus be stopped within about a tenth of a second of
 * work, where it had run to its end. Results do not depend on it. */
static void sg_igmm_poll(sg_igmm_job *job, int slot)
{
    if (slot != 0 || job->context == NULL || job->context->params.progress == NULL)
        return;
    const double seconds = sg_monotonic_seconds();
    if (seconds < job->next_poll)
        return;
    job->next_poll = seconds + 0.1;
    const double fraction =
        (double)atomic_load_explicit(&job->done, memory_order_relaxed) / (double)(job->task_count ? job->task_count : 1);
    if (sg_progress_cancelled(job->context, fraction))
        atomic_store_explicit(&job->stop, true, memory_order_relaxed);
}

/* One component's M-step from its sums centred on its current mean centre
 * (igmm_estep.h's sg_igmm_sums: weight W, deviation D, spread S): the new
 * mu = centre - D / W and lambda = W centre / (S - (D / mu) (D / W) / centre),
 * whose denominator is (sum r / x - W / mu) centre without the
 * cancellation. False where they are not positive and finite.
 * kernels/igmm.cu's m_step is the same on the GPU. */
static bool sg_igmm_update(double weight, double deviation, double spread, double centre, double *mu,
                           double *lambda)
{
    const double shift = deviation / weight, next_mu = centre - shift;
    const double denominator = spread - deviation / next_mu * (shift / centre);
    const double next_lambda = weight * centre / denominator;
    if (!(weight > 0.0 && isfinite(next_mu) && next_mu > 0.0 && denominator > 0.0 && isfinite(next_lambda)
          && next_lambda > 0.0))
        return false;
    *mu = next_mu;
    *lambda = next_lambda;
    return true;
}

/* The inverse Gaussian maximum likelihood estimate of values[0..count-1]:
 * false when it does not exist (all equal). Two passes, the mean and then
 * the sums centred on it, as the M-step's (sg_igmm_update): within a few eps
 * however close together the values are, where the one-pass
 * sum 1/x - n / mean lost eps / cv^2 of lambda's denominator and could come
 * out 0 or negative for values that are not all equal. Equal values are
 * told by comparing them: their mean may round away from them. */
static bool sg_igmm_estimate(const double *values, size_t count, double *mu, double *lambda)
{
    double sum = 0.0;
    bool equal = true;
    for (size_t i = 0; i < count; ++i) {
        sum += values[i];
        equal = equal && values[i] == values[0];
    }
    if (equal)
        return false;
    const double mean = sum / (double)count;
    double deviation = 0.0, spread = 0.0;
    for (size_t i = 0; i < count; ++i) {
        const double difference = mean - values[i];
        deviation += difference;
        spread += (difference / mean) * (difference / values[i]);
    }
    return sg_igmm_update((double)count, deviation, spread, mean, mu, lambda);
}

/* bulkem's start for one component: the estimate of 3 distinct random
 * observations, else of the whole data set. */
static void sg_igmm_seed_component(const double *x, size_t n, sg_rng *rng, sg_igmm_component *component)
{
    for (int attempt = 0; attempt < SG_IGMM_START_TRIES; ++attempt) {
        double three[3] = { x[sg_rng_below(rng, n)], x[sg_rng_below(rng, n)], x[sg_rng_below(rng, n)] };
        if (sg_igmm_estimate(three, 3, &component->mu, &component->lambda))
            return;
    }
    (void)sg_igmm_estimate(x, n, &component->mu, &component->lambda);  /* the data set is not constant */
}

/* An E-step through igmm_estep.c's kernel: the sums for the M-step and,
 * where resp is not NULL, the responsibilities (n x k, row-major); returns
 * the log-likelihood. Each component's constants are taken once per
 * E-step, each observation's terms once per fit. */
static double sg_igmm_e_step(sg_igmm_e_kernel *kernel, const double *x, const sg_igmm_terms *terms, size_t n,
                             size_t k, const sg_igmm_component *components, double *resp, sg_igmm_sums *sums)
{
    sg_igmm_constants constants;
    for (size_t j = 0; j < k; ++j) {
        constants.offset[j] = log(components[j].alpha) + 0.5 * (log(components[j].lambda) - SG_IGMM_LOG_2PI);
        constants.half_shape_over_mu[j] = components[j].lambda / (2.0 * components[j].mu);
        constants.mu[j] = components[j].mu;
        constants.inverse_mu[j] = 1.0 / components[j].mu;
    }
    for (size_t j = 0; j < k; ++j) {
        for (size_t l = 0; l < SG_IGMM_LANES; ++l) {
            sums->weight[j][l] = 0.0;
            sums->weighted_deviation[j][l] = 0.0;
            sums->weighted_spread[j][l] = 0.0;
        }
    }
    for (size_t l = 0; l < SG_IGMM_LANES; ++l) {
        sums->largest[l] = 0.0;
        sums->product[l] = 1.0;
    }
    sums->logs = 0.0;
    kernel(x, terms, n, k, &constants, resp, sums);
    double total = 0.0;
    for (size_t l = 0; l < SG_IGMM_LANES; ++l)
        total += sums->largest[l];
    return total + sums->logs;
}

/* The M-step (exact: lambda with the new mu) from an E-step's sums, which
 * are centred on the components' mu (the E-step's); a component whose
 * update is not positive and finite is re-seeded. Returns the re-seeds. */
static size_t sg_igmm_m_step(const double *x, size_t n, size_t k, const sg_igmm_sums *sums, sg_rng *rng,
                             sg_igmm_component *components)
{
    size_t reseeds = 0;
    double weight_total = 0.0;
    for (size_t j = 0; j < k; ++j) {
        double weight = 0.0, deviation = 0.0, spread = 0.0;
        for (size_t l = 0; l < SG_IGMM_LANES; ++l) {
            weight += sums->weight[j][l];
            deviation += sums->weighted_deviation[j][l];
            spread += sums->weighted_spread[j][l];
        }
        if (sg_igmm_update(weight, deviation, spread, components[j].mu, &components[j].mu, &components[j].lambda)) {
            components[j].alpha = weight;
        } else {
            sg_igmm_seed_component(x, n, rng, &components[j]);
            components[j].alpha = (double)n / (double)k;
            ++reseeds;
        }
        weight_total += components[j].alpha;
    }
    for (size_t j = 0; j < k; ++j)
        components[j].alpha /= weight_total;
    return reseeds;
}

/* The start of (data set, start) pair task: given, or bulkem's random one
 * from the pair's own stream, which rng continues (the re-seeds draw from it). */
static void sg_igmm_start(const sg_igmm_job *job, size_t task, sg_igmm_component *components, sg_rng *rng)
{
    const size_t set = task / job->start_count, k = job->k;
    const double *x = job->sets[set];
    const size_t n = job->lengths[set];
    const statgpu_igmm_params *p = job->params;
    rng->state = sg_derive_stream(job->context_seed, p->seed, 0x16A7E55ull, task);
    for (size_t j = 0; j < k; ++j) {
        if (p->initial_alpha != NULL) {
            /* A scaled data set takes the given start scaled alike. */
            const int e = job->exponents != NULL ? job->exponents[set] : 0;
            components[j] = (sg_igmm_component){ p->initial_alpha[j], ldexp(p->initial_mu[j], -e),
                                                 ldexp(p->initial_lambda[j], -e) };
        } else {
            sg_igmm_seed_component(x, n, rng, &components[j]);
            components[j].alpha = 1.0 / (double)k;
        }
    }
}

static void sg_igmm_task(void *context, size_t task, int slot)
{
    sg_igmm_job *job = context;
    const size_t set = task / job->start_count, start = task % job->start_count, k = job->k;
    sg_igmm_run *run = &job->runs[task];
    sg_igmm_component *components = job->components + task * k;
    memset(run, 0, sizeof *run);
    if (job->status[set] != STATGPU_IGMM_FITTED || atomic_load_explicit(&job->stop, memory_order_relaxed))
        return;
    const double *x = job->sets[set];
    const size_t n = job->lengths[set];
    double *scratch = job->scratch[slot];
    sg_igmm_terms terms = { scratch + n * k, scratch + n * k + n };
    sg_igmm_fill_terms(x, n, &terms);
    sg_igmm_sums sums;
    sg_rng rng;
    sg_igmm_start(job, task, components, &rng);
    const statgpu_igmm_params *p = job->params;
    (void)start;
    double previous = -INFINITY;
    size_t iteration = 0;
    for (;;) {
        double log_likelihood = sg_igmm_e_step(job->e_kernel, x, &terms, n, k, components, NULL, &sums);
        run->log_likelihood = log_likelihood;
        if (iteration > 0 && fabs(log_likelihood - previous) < p->tolerance) {
            run->converged = 1;
            break;
        }
        if (iteration == p->max_iterations)
            break;
        previous = log_likelihood;
        run->reseeds += sg_igmm_m_step(x, n, k, &sums, &rng, components);
        ++iteration;
        if ((iteration & 7) == 0) {
            sg_igmm_poll(job, slot);
            if (atomic_load_explicit(&job->stop, memory_order_relaxed))
                break;
        }
    }
    run->iterations = iteration;
    atomic_fetch_add_explicit(&job->done, 1, memory_order_relaxed);
    sg_igmm_poll(job, slot);
}

/* The pairs the GPU left to the CPU (listed), one per block. */
typedef struct sg_igmm_listed {
    sg_igmm_job  *job;
    const size_t *tasks;
} sg_igmm_listed;

static void sg_igmm_listed_task(void *context, size_t b, int slot)
{
    sg_igmm_listed *listed = context;
    sg_igmm_task(listed->job, listed->tasks[b], slot);
}

/* Under STATGPU_BACKEND_AUTO the GPU fits from this much work (values x
 * starts x iterations at most): below it the CPU's threads finish first.
 * 10 data sets of 2,000, one start, 100 iterations (2e6) took 0.76 ms on
 * the GPU and 8.6 on the CPU's 16 threads (bench/NOTES.md, "AUTO"); scaled
 * by dispatch.h for more threads. */
#define SG_IGMM_AUTO_CUDA_MIN_WORK 1e6

/* The GPU's starts, a block of tasks at a time on the engine's threads
 * (each task's start comes from its own random stream, so the team does not
 * matter): a start reads three random observations per component, and one
 * thread took a quarter of a second for 400,000 tasks. */
#define SG_IGMM_START_BLOCK ((size_t)4096)

typedef struct sg_igmm_starting {
    const sg_igmm_job           *job;
    statgpu_cuda_igmm_component *components;  /* tasks x k */
    size_t                       tasks;
    const statgpu_cuda_igmm_fit *fits;        /* after the fit: its outcomes, else NULL */
} sg_igmm_starting;

/* Before the fit (fits NULL) a block's starts for the GPU; after it, the
 * GPU's fits into the job's runs (whose pages are first written here). */
static void sg_igmm_exchange_block(void *context, size_t b, int slot)
{
    (void)slot;
    const sg_igmm_starting *exchange = context;
    const sg_igmm_job *job = exchange->job;
    const size_t k = job->k, end = (b + 1) * SG_IGMM_START_BLOCK;
    for (size_t task = b * SG_IGMM_START_BLOCK; task < end && task < exchange->tasks; ++task) {
        statgpu_cuda_igmm_component *device = exchange->components + task * k;
        const bool fitted = job->status[task / job->start_count] == STATGPU_IGMM_FITTED;
        if (exchange->fits == NULL) {
            sg_igmm_component start[SG_IGMM_MAX_K];
            sg_rng rng;
            if (fitted)
                sg_igmm_start(job, task, start, &rng);
            for (size_t j = 0; fitted && j < k; ++j)
                device[j] = (statgpu_cuda_igmm_component){ start[j].alpha, start[j].mu, start[j].lambda };
            continue;
        }
        sg_igmm_run *run = &job->runs[task];
        const statgpu_cuda_igmm_fit *fit = &exchange->fits[task];
        memset(run, 0, sizeof *run);
        if (!fitted || fit->needs_cpu)
            continue;
        for (size_t j = 0; j < k; ++j)
            job->components[task * k + j] = (sg_igmm_component){ device[j].alpha, device[j].mu, device[j].lambda };
        run->log_likelihood = fit->log_likelihood;
        run->iterations = fit->iterations;
        run->converged = fit->converged;
    }
}

/* Every fitted pair on the GPU, from the CPU's starts; the pairs whose
 * M-step would re-seed a component go back to the CPU (from their start,
 * with their own streams). False (with why in message) when the GPU could
 * not run them: the caller fits everything on the CPU. */
/* The GPU's fit (block 0) and, while the device works, the first writes of
 * the labels' pages (the other blocks): 320 MB of fresh pages at 40,000 data
 * sets, whose faults took most of the 100 ms of the labelling after the fit
 * on the H100 machine. */
#define SG_IGMM_TOUCH_LABELS ((size_t)1 << 21)  /* labels per block: 8 MB */
/* Threads that write those pages: two are done well within the fit (320 MB
 * in tens of ms against 0.8 s), and fewer writers leave the memory bus to
 * the upload's lanes, which run in the same first tens of ms. */
#define SG_IGMM_TOUCH_THREADS 2

typedef struct sg_igmm_device_fit {
    statgpu_context               *context;
    const statgpu_cuda_module_i   *module;
    const sg_igmm_job             *job;
    const uint8_t                 *fitted;
    size_t                         set_count;
    statgpu_cuda_igmm_component   *components;
    statgpu_cuda_igmm_fit         *fits;
    statgpu_cuda_timing           *timing;
    char                          *message;
    size_t                         message_bytes;
    statgpu_cuda_status            status;
    int32_t                       *labels;
    size_t                         label_count;
} sg_igmm_device_fit;

static void sg_igmm_device_block(void *context, size_t b, int slot)
{
    (void)slot;
    sg_igmm_device_fit *device = context;
    const sg_igmm_job *job = device->job;
    if (b == 0) {
        device->status = device->module->igmm->fit(device->context->cuda_state, job->sets, job->lengths,
                                                   device->fitted, device->set_count, job->k, job->start_count,
                                                   job->params->max_iterations, job->params->tolerance,
                                                   device->components, device->fits, device->timing,
                                                   device->message, device->message_bytes);
        return;
    }
    const size_t begin = (b - 1) * SG_IGMM_TOUCH_LABELS;
    const size_t count = device->label_count - begin < SG_IGMM_TOUCH_LABELS ? device->label_count - begin
                                                                            : SG_IGMM_TOUCH_LABELS;
    memset(device->labels + begin, 0xff, count * sizeof *device->labels);  /* -1: no label yet */
}

static bool sg_igmm_on_gpu(statgpu_context *context, sg_igmm_job *job, size_t set_count, int team,
                           int32_t *labels, size_t label_count, char *message, size_t message_bytes,
                           statgpu_cuda_status *why)
{
    const statgpu_cuda_module_i *module = sg_cuda_module(NULL);
    *why = STATGPU_CUDA_NO_DEVICE;
    if (module == NULL || module->igmm == NULL) {
        snprintf(message, message_bytes, "the CUDA module has no inverse Gaussian mixtures");
        return false;
    }
    const size_t k = job->k, starts = job->start_count, tasks = set_count * starts;
    statgpu_cuda_igmm_component *components = malloc(tasks * k * sizeof *components);
    statgpu_cuda_igmm_fit *fits = calloc(tasks, sizeof *fits);
    uint8_t *fitted = malloc(set_count);
    size_t *cpu_tasks = malloc(tasks * sizeof *cpu_tasks);
    bool ok = components && fits && fitted && cpu_tasks;
    if (!ok) {
        snprintf(message, message_bytes, "out of host memory for the GPU's mixtures");
        *why = STATGPU_CUDA_OUT_OF_MEMORY;
    }
    if (ok) {
        sg_igmm_starting starting = { job, components, tasks, NULL };
        sg_parallel_for(team, (tasks + SG_IGMM_START_BLOCK - 1) / SG_IGMM_START_BLOCK, sg_igmm_exchange_block,
                        &starting);
    }
    for (size_t s = 0; ok && s < set_count; ++s)
        fitted[s] = job->status[s] == STATGPU_IGMM_FITTED;
    statgpu_cuda_timing timing = { 0.0, 0.0 };
    if (ok) {
        sg_igmm_device_fit device = { context, module, job, fitted, set_count, components, fits, &timing, message,
                                      message_bytes, STATGPU_CUDA_OK, labels, label_count };
        sg_parallel_for(team < 1 + SG_IGMM_TOUCH_THREADS ? team : 1 + SG_IGMM_TOUCH_THREADS,
                        1 + (label_count + SG_IGMM_TOUCH_LABELS - 1) / SG_IGMM_TOUCH_LABELS,
                        sg_igmm_device_block, &device);
        *why = device.status;
        ok = *why == STATGPU_CUDA_OK;
    }
    size_t cpu_count = 0;
    if (ok) {
        sg_igmm_starting taking = { job, components, tasks, fits };
        sg_parallel_for(team, (tasks + SG_IGMM_START_BLOCK - 1) / SG_IGMM_START_BLOCK, sg_igmm_exchange_block,
                        &taking);
    }
    for (size_t task = 0; ok && task < tasks; ++task)
        if (job->status[task / starts] == STATGPU_IGMM_FITTED && fits[task].needs_cpu)
            cpu_tasks[cpu_count++] = task;
    if (ok && cpu_count > 0) {
        const double begin = sg_monotonic_seconds();
        sg_igmm_listed listed = { job, cpu_tasks };
        sg_parallel_for(team, cpu_count, sg_igmm_listed_task, &listed);
        /* The report says how much of the call the CPU took over. */
        sg_format(context->note, sizeof context->note, "%zu of %zu fits re-seeded a component and were fitted on "
                 "the CPU (%.3f s)", cpu_count, tasks, sg_monotonic_seconds() - begin);
    }
    if (ok)
        sg_dispatch_ran(context, STATGPU_BACKEND_CUDA, timing.transfer_seconds, timing.compute_seconds);
    free(components);
    free(fits);
    free(fitted);
    free(cpu_tasks);
    return ok;
}

/* Each observation's most likely component (the lower on a tie): the
 * largest log alpha_j + log lambda_j / 2 - lambda_j (x - mu_j)^2 / (2 mu_j^2 x),
 * the log-weighted density less the terms every component shares (-3/2
 * log x, -log(2 pi) / 2), so no log or exp per observation: the E-step's
 * exps and logs had been most of the host's time after a GPU fit. */
static void sg_igmm_label(const double *x, size_t n, size_t k, const sg_igmm_component *components,
                          int32_t *labels)
{
    double offset[SG_IGMM_MAX_K], scale[SG_IGMM_MAX_K];
    for (size_t j = 0; j < k; ++j) {
        offset[j] = log(components[j].alpha) + 0.5 * log(components[j].lambda);
        scale[j] = components[j].lambda / (2.0 * components[j].mu * components[j].mu);
    }
    for (size_t i = 0; i < n; ++i) {
        const double inverse = 1.0 / x[i];
        size_t top = 0;
        double best = -INFINITY;
        for (size_t j = 0; j < k; ++j) {
            const double difference = x[i] - components[j].mu;
            const double term = offset[j] - scale[j] * difference * difference * inverse;
            if (term > best || j == 0) {
                best = term;
                top = j;
            }
        }
        labels[i] = (int32_t)top;
    }
}

/* The last step of a call, per data set. */
typedef struct sg_igmm_finish_job {
    sg_igmm_job             *job;
    statgpu_igmm_result     *result;
    const double *const     *sets;
    const size_t            *lengths;
} sg_igmm_finish_job;

/* Data set s's best start (the highest log-likelihood, the earlier on a
 * tie), its parameters, labels and responsibilities. */
static void sg_igmm_finish_set(void *context, size_t s, int slot)
{
    sg_igmm_finish_job *finish = context;
    const sg_igmm_job *job = finish->job;
    statgpu_igmm_result *result = finish->result;
    const size_t n = finish->lengths[s], k = job->k, starts = job->start_count;
    int32_t *labels = result->labels + result->offsets[s];
    if (result->status[s] != STATGPU_IGMM_FITTED) {
        for (size_t i = 0; i < n; ++i)
            labels[i] = -1;
        return;
    }
    size_t best = 0;
    for (size_t start = 1; start < starts; ++start)
        if (job->runs[s * starts + start].log_likelihood > job->runs[s * starts + best].log_likelihood)
            best = start;
    const sg_igmm_run *run = &job->runs[s * starts + best];
    const sg_igmm_component *components = job->components + (s * starts + best) * k;
    for (size_t j = 0; j < k; ++j) {
        result->alpha[s * k + j] = components[j].alpha;
        result->mu[s * k + j] = components[j].mu;
        result->lambda[s * k + j] = components[j].lambda;
    }
    result->log_likelihood[s] = run->log_likelihood;
    result->iterations[s] = run->iterations;
    result->converged[s] = run->converged;
    result->best_start[s] = best;
    result->reseed_count[s] = run->reseeds;
    sg_igmm_label(finish->sets[s], n, k, components, labels);
    if (result->responsibilities != NULL) {
        double *resp = job->scratch[slot];
        sg_igmm_terms terms = { resp + n * k, resp + n * k + n };
        sg_igmm_fill_terms(finish->sets[s], n, &terms);
        sg_igmm_sums sums;
        (void)sg_igmm_e_step(job->e_kernel, finish->sets[s], &terms, n, k, components, resp, &sums);
        memcpy(result->responsibilities + result->offsets[s] * k, resp, n * k * sizeof(double));
    }
}

/* The statuses of the data sets, one per block. */
/* Values far from ordinary size: the E-step squares x - mu and divides by
 * mu^2 x, which leaves the doubles' range near 1e154 and loses digits in
 * the subnormals near 1e-154. Such a data set is fitted as x times 2^-e,
 * its values then within [2^-SG_IGMM_RANGE, 2^SG_IGMM_RANGE]: the inverse
 * Gaussian is a scale family (mu and lambda scale with x, the
 * log-likelihood moves by -n e log 2, the labels stay), and a power of two
 * scales the values exactly. A data set already within that range is left
 * as it is (e = 0: the same bits as before); one whose values span more
 * than 2^(2 SG_IGMM_RANGE) cannot be brought within it and is not fitted
 * (STATGPU_IGMM_OUT_OF_RANGE). */
#define SG_IGMM_RANGE 500

typedef struct sg_igmm_status_job {
    const double *const *sets;
    const size_t        *lengths;
    size_t               k;
    int32_t             *status;
    int                 *exponents;
} sg_igmm_status_job;

/* Data set s's status and, where it is fitted, its exponent (above), from
 * one pass over its values. */
static void sg_igmm_status_of(void *context, size_t s, int slot)
{
    (void)slot;
    const sg_igmm_status_job *job = context;
    const double *x = job->sets[s];
    bool positive = true, constant = true;
    double smallest = job->lengths[s] > 0 ? x[0] : 1.0, largest = smallest;
    for (size_t i = 0; i < job->lengths[s]; ++i) {
        if (!(x[i] > 0.0) || !isfinite(x[i]))
            positive = false;
        if (x[i] != x[0])
            constant = false;
        smallest = x[i] < smallest ? x[i] : smallest;
        largest = x[i] > largest ? x[i] : largest;
    }
    job->status[s] = !positive ? STATGPU_IGMM_NOT_POSITIVE
                     : job->lengths[s] < 3 * job->k ? STATGPU_IGMM_TOO_FEW
                     : constant ? STATGPU_IGMM_CONSTANT : STATGPU_IGMM_FITTED;
    job->exponents[s] = 0;
    if (job->status[s] != STATGPU_IGMM_FITTED)
        return;
    int low = 0, high = 0;  /* smallest in [2^(low-1), 2^low), largest in [2^(high-1), 2^high) */
    (void)frexp(smallest, &low);
    (void)frexp(largest, &high);
    if (low - 1 >= -SG_IGMM_RANGE && high <= SG_IGMM_RANGE)
        return;
    if (high - (low - 1) > 2 * SG_IGMM_RANGE)
        job->status[s] = STATGPU_IGMM_OUT_OF_RANGE;
    else
        job->exponents[s] = (low - 1 + high) / 2;  /* the span's middle to 2^0 */
}

/* For the data sets with an exponent, a copy of their values times 2^-e in
 * scaled[s]. False out of memory. */
static bool sg_igmm_scale(const double *const *sets, const size_t *lengths, size_t set_count,
                          const int *exponents, double **scaled)
{
    for (size_t s = 0; s < set_count; ++s) {
        if (exponents[s] == 0)
            continue;
        if ((scaled[s] = malloc(lengths[s] * sizeof(double))) == NULL)
            return false;
        for (size_t i = 0; i < lengths[s]; ++i)
            scaled[s][i] = ldexp(sets[s][i], -exponents[s]);
    }
    return true;
}

/* A scaled data set's fit back in the data's units; a fit that leaves the
 * doubles' normal range there (a lambda beyond DBL_MAX, a mu among the
 * subnormals, where scaling back would round it) or whose log-likelihood is
 * not finite is not fitted (STATGPU_IGMM_OUT_OF_RANGE). */
static void sg_igmm_unscale(statgpu_igmm_result *result, size_t s, int e)
{
    const size_t k = result->k;
    bool finite = isfinite(result->log_likelihood[s]);
    if (e != 0) {
        for (size_t j = 0; j < k; ++j) {
            const double mu = result->mu[s * k + j], lambda = result->lambda[s * k + j];
            result->mu[s * k + j] = ldexp(mu, e);
            result->lambda[s * k + j] = ldexp(lambda, e);
            /* Exact both ways, or the parameters would not be the fit's
             * (subnormal or beyond DBL_MAX in the data's units). */
            finite = finite && ldexp(result->mu[s * k + j], -e) == mu && ldexp(result->lambda[s * k + j], -e) == lambda;
        }
        result->log_likelihood[s] -= (double)result->lengths[s] * (double)e * 0.69314718055994530942;  /* log 2 */
    }
    if (finite)
        return;
    result->status[s] = STATGPU_IGMM_OUT_OF_RANGE;
    for (size_t j = 0; j < k; ++j)
        result->alpha[s * k + j] = result->mu[s * k + j] = result->lambda[s * k + j] = 0.0;
    result->log_likelihood[s] = 0.0;
    result->iterations[s] = result->best_start[s] = result->reseed_count[s] = 0;
    result->converged[s] = 0;
    for (size_t i = 0; i < result->lengths[s]; ++i)
        result->labels[result->offsets[s] + i] = -1;
    if (result->responsibilities != NULL)
        memset(result->responsibilities + result->offsets[s] * k, 0, result->lengths[s] * k * sizeof(double));
}

void statgpu_igmm_params_init(statgpu_igmm_params *params)
{
    if (params == NULL)
        return;
    memset(params, 0, sizeof *params);
    params->struct_bytes = sizeof *params;
    params->start_count = 10;
    params->max_iterations = 100;
    params->tolerance = 1e-6;
}

void statgpu_igmm_result_destroy(statgpu_igmm_result *result)
{
    if (result == NULL)
        return;
    free(result->lengths);
    free(result->status);
    free(result->alpha);
    free(result->mu);
    free(result->lambda);
    free(result->log_likelihood);
    free(result->iterations);
    free(result->converged);
    free(result->best_start);
    free(result->reseed_count);
    free(result->labels);
    free(result->offsets);
    free(result->responsibilities);
    free(result);
}

static statgpu_status sg_igmm_check(statgpu_context *context, const double *const *sets, const size_t *lengths,
                                    size_t set_count, size_t k, const statgpu_igmm_params *p)
{
    if (sets == NULL || lengths == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "sets or lengths is NULL");
    if (set_count == 0)
        return sg_fail(context, STATGPU_ERROR_EMPTY_INPUT, "no data set");
    if (k == 0 || k > SG_IGMM_MAX_K)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "k = %zu is not from 1 to %d", k, SG_IGMM_MAX_K);
    for (size_t s = 0; s < set_count; ++s)
        if (sets[s] == NULL && lengths[s] > 0)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "data set %zu is NULL", s + 1);
    if (p->start_count == 0 || p->start_count > STATGPU_IGMM_MAX_START_COUNT)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "start_count = %zu is not from 1 to %u",
                       p->start_count, STATGPU_IGMM_MAX_START_COUNT);
    if (p->max_iterations == 0)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "max_iterations is 0");
    if (!(p->tolerance >= 0.0 && p->tolerance <= DBL_MAX))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the tolerance %.17g is not a finite number >= 0",
                       p->tolerance);
    if (set_count > SIZE_MAX / p->start_count / sizeof(sg_igmm_run))
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "%zu data sets x %zu starts are too many", set_count,
                       p->start_count);
    bool given = p->initial_alpha != NULL || p->initial_mu != NULL || p->initial_lambda != NULL;
    if (given) {
        if (p->initial_alpha == NULL || p->initial_mu == NULL || p->initial_lambda == NULL)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "a given start needs initial_alpha, initial_mu and initial_lambda");
        double total = 0.0;
        for (size_t j = 0; j < k; ++j) {
            if (!(p->initial_alpha[j] > 0.0 && p->initial_mu[j] > 0.0 && p->initial_lambda[j] > 0.0)
                || !isfinite(p->initial_mu[j]) || !isfinite(p->initial_lambda[j]))
                return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                               "the given start's component %zu is not positive and finite", j + 1);
            total += p->initial_alpha[j];
        }
        if (!(fabs(total - 1.0) <= 1e-8))
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "the given weights sum to %.17g, not 1", total);
    }
    return STATGPU_OK;
}

statgpu_status statgpu_igmm(statgpu_context *context, const double *const *sets, const size_t *lengths,
                            size_t set_count, size_t k, const statgpu_igmm_params *params,
                            statgpu_igmm_result **out_result)
{
    if (context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (out_result == NULL)
        return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "out_result is NULL");
    *out_result = NULL;
    statgpu_igmm_params chosen;
    statgpu_igmm_params_init(&chosen);
    if (params != NULL) {
        if (params->struct_bytes < SG_IGMM_PARAMS_MIN_BYTES || params->struct_bytes > sizeof chosen)
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT,
                           "params->struct_bytes is %zu; call statgpu_igmm_params_init first", params->struct_bytes);
        memcpy(&chosen, params, params->struct_bytes);
        chosen.struct_bytes = sizeof chosen;
    }
    if (chosen.initial_alpha != NULL)
        chosen.start_count = 1;
    statgpu_status status = sg_igmm_check(context, sets, lengths, set_count, k, &chosen);
    if (status != STATGPU_OK)
        return status;
    sg_dispatch_begin(context);

    const size_t starts = chosen.start_count, tasks = set_count * starts;
    size_t total_length = 0, largest = 0;
    for (size_t s = 0; s < set_count; ++s) {
        if (lengths[s] > SIZE_MAX / 2 / (k + 2) / sizeof(double) || total_length > SIZE_MAX / sizeof(double) / (k + 2)
            - lengths[s])
            return sg_fail(context, STATGPU_ERROR_INVALID_ARGUMENT, "data set %zu is too long", s + 1);
        total_length += lengths[s];
        if (lengths[s] > largest)
            largest = lengths[s];
    }
    statgpu_igmm_result *result = calloc(1, sizeof *result);
    int team = sg_threads_for(context->cpu_thread_count, tasks, (double)total_length * (double)starts * (double)k
                                                               * (double)chosen.max_iterations);
    sg_igmm_job job = { sets, lengths, NULL, k, starts, &chosen, context->params.seed, NULL, NULL, NULL,
                        sg_igmm_best_e_kernel(), NULL, context, tasks, false, 0, 0.0 };
    atomic_init(&job.stop, false);
    atomic_init(&job.done, 0);
    job.next_poll = 0.0;
    int *exponents = NULL;          /* per set: its values scaled by 2^-e (sg_igmm_scale) */
    double **scaled = NULL;         /* per set: the scaled copy, or NULL */
    const double **fit_sets = NULL; /* per set: what the fits read */
    if (result != NULL) {
        result->set_count = set_count;
        result->k = k;
        result->start_count = starts;
        result->lengths = malloc(set_count * sizeof(size_t));
        result->status = calloc(set_count, sizeof(int32_t));
        result->alpha = calloc(set_count * k, sizeof(double));
        result->mu = calloc(set_count * k, sizeof(double));
        result->lambda = calloc(set_count * k, sizeof(double));
        result->log_likelihood = calloc(set_count, sizeof(double));
        result->iterations = calloc(set_count, sizeof(size_t));
        result->converged = calloc(set_count, sizeof(int32_t));
        result->best_start = calloc(set_count, sizeof(size_t));
        result->reseed_count = calloc(set_count, sizeof(size_t));
        result->labels = malloc((total_length ? total_length : 1) * sizeof(int32_t));
        result->offsets = malloc(set_count * sizeof(size_t));
        if (chosen.keep_responsibilities)
            result->responsibilities = calloc(total_length ? total_length * k : 1, sizeof(double));
    }
    job.runs = malloc(tasks * sizeof *job.runs);
    job.components = malloc(tasks * k * sizeof *job.components);
    job.scratch = calloc((size_t)team, sizeof *job.scratch);
    bool ok = result != NULL && result->lengths && result->status && result->alpha && result->mu && result->lambda
              && result->log_likelihood && result->iterations && result->converged && result->best_start
              && result->reseed_count && result->labels && result->offsets
              && (!chosen.keep_responsibilities || result->responsibilities) && job.runs && job.components
              && job.scratch;
    for (int slot = 0; ok && slot < team; ++slot)
        ok = (job.scratch[slot] = malloc((largest ? largest : 1) * (k + 2) * sizeof(double))) != NULL;
    if (!ok) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the mixtures of %zu data sets",
                         set_count);
        goto done;
    }

    /* Each data set's status (a data set per block on the engine's
     * threads), then every (data set, start) in parallel. */
    for (size_t s = 0, offset = 0; s < set_count; ++s) {
        result->lengths[s] = lengths[s];
        result->offsets[s] = offset;
        offset += lengths[s];
    }
    exponents = calloc(set_count, sizeof *exponents);
    scaled = calloc(set_count, sizeof *scaled);
    fit_sets = malloc(set_count * sizeof *fit_sets);
    if (exponents == NULL || scaled == NULL || fit_sets == NULL) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the scaled data sets");
        goto done;
    }
    sg_igmm_status_job status_job = { sets, lengths, k, result->status, exponents };
    sg_parallel_for(team, set_count, sg_igmm_status_of, &status_job);
    job.status = result->status;
    if (!sg_igmm_scale(sets, lengths, set_count, exponents, scaled)) {
        status = sg_fail(context, STATGPU_ERROR_OUT_OF_MEMORY, "could not allocate the scaled data sets");
        goto done;
    }
    for (size_t s = 0; s < set_count; ++s)
        fit_sets[s] = scaled[s] != NULL ? scaled[s] : sets[s];
    job.sets = fit_sets;
    job.exponents = exponents;
    bool on_gpu = false;
    if (sg_dispatch_wants_cuda_above(context, (double)total_length * (double)starts * (double)chosen.max_iterations,
                               SG_IGMM_AUTO_CUDA_MIN_WORK, false)) {
        char message[256] = "";
        statgpu_cuda_status why = STATGPU_CUDA_NO_DEVICE;
        if (k > STATGPU_CUDA_IGMM_MOST_COMPONENTS)
            snprintf(message, sizeof message, "the GPU fits at most %u components", STATGPU_CUDA_IGMM_MOST_COMPONENTS);
        else if (sg_dispatch_cuda_ready(context, message, sizeof message))
            on_gpu = sg_igmm_on_gpu(context, &job, set_count, team, result->labels, total_length, message,
                                    sizeof message, &why);
        if (!on_gpu)
            sg_dispatch_note_cpu(context, why, message, "inverse Gaussian mixtures");
    }
    if (!on_gpu)
        sg_parallel_for(team, tasks, sg_igmm_task, &job);
    if (atomic_load_explicit(&job.stop, memory_order_relaxed) || sg_progress_cancelled(context, 1.0)) {
        status = sg_fail(context, STATGPU_ERROR_CANCELLED, "cancelled");
        goto done;
    }

    /* The best start of each data set, its labels and responsibilities, a
     * data set per block on the engine's threads (one pass over the values
     * each: serial, it took 4 s of a 40,000-set call). */
    sg_igmm_finish_job finish = { &job, result, fit_sets, lengths };
    sg_parallel_for(team, set_count, sg_igmm_finish_set, &finish);
    for (size_t s = 0; s < set_count; ++s)
        if (result->status[s] == STATGPU_IGMM_FITTED)
            sg_igmm_unscale(result, s, exponents[s]);
    if (!on_gpu)
        sg_dispatch_ran(context, STATGPU_BACKEND_CPU, 0.0, 0.0);
    *out_result = result;
    result = NULL;
    status = sg_succeed(context);
done:
    statgpu_igmm_result_destroy(result);
    for (size_t s = 0; scaled != NULL && s < set_count; ++s)
        free(scaled[s]);
    free(scaled);
    free(fit_sets);
    free(exponents);
    for (int slot = 0; job.scratch != NULL && slot < team; ++slot)
        free(job.scratch[slot]);
    free(job.scratch);
    free(job.runs);
    free(job.components);
    return status;
}
