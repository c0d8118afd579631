/*
 * dispatch.c: which backend runs a call (see dispatch.h).
 */
#include "internal.h"

#include <stdio.h>

void sg_dispatch_begin(statgpu_context *context)
{
    context->note[0] = '\0';
    context->last_transfer_seconds = context->last_compute_seconds = 0.0;
}

bool sg_dispatch_wants_cuda(statgpu_context *context, double work, double auto_min_work, bool on_device)
{
    statgpu_backend backend = context->params.backend;
    if (on_device || backend == STATGPU_BACKEND_CUDA)
        return true;
    if (backend != STATGPU_BACKEND_AUTO)
        return false;
    if (work >= auto_min_work)
        return true;
    if (context->cuda_state != NULL)  /* a GPU is there (an earlier call found it): say why it is not used */
        sg_format(context->note, sizeof context->note, "AUTO chose the CPU: the call's work (%.3g) is below the "
             "GPU's break-even on %d threads (%.3g)", work, context->dispatch_thread_count, auto_min_work);
    return false;
}

bool sg_dispatch_wants_cuda_above(statgpu_context *context, double work, double crossover, bool on_device)
{
    const double threads = (double)context->dispatch_thread_count;
    const double scale = threads > SG_DISPATCH_CROSSOVER_THREADS ? threads / SG_DISPATCH_CROSSOVER_THREADS : 1.0;
    return sg_dispatch_wants_cuda(context, work, crossover * scale, on_device);
}

bool sg_dispatch_cuda_ready(statgpu_context *context, char *message, size_t message_bytes)
{
    if (sg_cuda_ensure(context))
        return true;
    snprintf(message, message_bytes, "%s", context->cuda_unavailable);
    return false;
}

void sg_dispatch_note_cpu(statgpu_context *context, statgpu_cuda_status status, const char *message,
                          const char *what)
{
    bool unavailable = status == STATGPU_CUDA_NO_DEVICE;
    if (unavailable && context->params.backend != STATGPU_BACKEND_CUDA)
        return;
    snprintf(context->note, sizeof context->note, "CUDA %s (%s); %s%sran on the CPU",
             unavailable ? "unavailable" : "failed", message != NULL ? message : "", what != NULL ? what : "",
             what != NULL ? " " : "");
}

void sg_dispatch_ran(statgpu_context *context, statgpu_backend backend, double transfer_seconds,
                     double compute_seconds)
{
    context->last_used = backend;
    context->last_transfer_seconds = backend == STATGPU_BACKEND_CUDA ? transfer_seconds : 0.0;
    context->last_compute_seconds = backend == STATGPU_BACKEND_CUDA ? compute_seconds : 0.0;
}
