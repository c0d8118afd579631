/*
 * dispatch.h: which backend runs a call, by one rule for every method.
 *
 * A call tries CUDA when the context asks for CUDA, when its data lie in
 * device memory, or when the context leaves the choice to the engine (AUTO)
 * and the call's work reaches the method's threshold (below it, copying the
 * data to the device costs more than the device saves). Where CUDA cannot
 * run the call -- no module, no driver or device, out of device memory, any
 * CUDA error, before or during the call -- the call runs on the CPU, except
 * with data in device memory, which fail. The backend report's note says why
 * a call that tried CUDA ran on the CPU whenever that is news: always when
 * CUDA failed, and when CUDA is unavailable only if the context asked for it
 * (an AUTO context on a machine without a GPU is the ordinary case).
 *
 * A method's entry point:
 *     sg_dispatch_begin(context);
 *     if (sg_dispatch_wants_cuda(context, work, AUTO_MIN_WORK, on_device)
 *         && sg_dispatch_cuda_ready(context, message, sizeof message))
 *         status = <the method's CUDA path>;
 *     if (<CUDA was wanted and did not run>)
 *         sg_dispatch_note_cpu(context, status, message, "k-means");
 *     ... the CPU path ...
 *     sg_dispatch_ran(context, backend, transfer_seconds, compute_seconds);
 */
#ifndef STATGPU_BACKEND_DISPATCH_H
#define STATGPU_BACKEND_DISPATCH_H

#include "statgpu.h"
#include "backend/cuda_module.h"

#include <stdbool.h>
#include <stddef.h>


/* Clears the record of the last call: no note, no timings. */
void sg_dispatch_begin(statgpu_context *context);

/* True when the call should try CUDA: the context asks for CUDA, the data
 * are in device memory, or the context says AUTO and work >= auto_min_work.
 * Under AUTO, where an earlier call found a GPU, a call below the bar gets
 * a note that says so (GPUINFO and the CLI's --time show it). */
bool sg_dispatch_wants_cuda(statgpu_context *context, double work, double auto_min_work, bool on_device);

/* The same for a method whose CPU time falls with the threads and whose
 * GPU time is about constant at the bar: crossover is the work at which the
 * GPU's whole call (copies, launches) takes what the CPU's takes on
 * SG_DISPATCH_CROSSOVER_THREADS threads, measured on the benchmark machine
 * (bench/NOTES.md, "AUTO"), and the bar is crossover times the context's
 * threads over those (never below crossover: with fewer threads the CPU
 * still runs a small call on one). */
bool sg_dispatch_wants_cuda_above(statgpu_context *context, double work, double crossover, bool on_device);

/* The CPU threads of the machine that measured the crossovers. */
#define SG_DISPATCH_CROSSOVER_THREADS 16

/* Loads the CUDA module and the context's device state (once per context).
 * True when CUDA can run; otherwise false, with why in message. */
bool sg_dispatch_cuda_ready(statgpu_context *context, char *message, size_t message_bytes);

/* A call that tried CUDA runs on the CPU: status is why (STATGPU_CUDA_NO_DEVICE
 * when CUDA was unavailable), message says more, what names the work for the
 * note ("k-means", "LTS"). Writes the backend report's note by the rule above. */
void sg_dispatch_note_cpu(statgpu_context *context, statgpu_cuda_status status, const char *message,
                          const char *what);

/* The backend that ran the call, and on CUDA its copy and compute times. */
void sg_dispatch_ran(statgpu_context *context, statgpu_backend backend, double transfer_seconds,
                     double compute_seconds);

#endif
