/*
 * kmeans_cuda.c: k-means' calls into the CUDA module (backend/cuda_module.h,
 * kmeans_begin, kmeans_lloyd, kmeans_end), and the progress adapter the
 * module's cancel callback needs.
 */
#include "internal.h"

#include <stdio.h>

statgpu_cuda_status sg_cuda_kmeans_begin(statgpu_context *context, const sg_kmeans_problem *problem,
                                         statgpu_cuda_kmeans_session **session, statgpu_cuda_timing *timing,
                                         char *message, size_t message_bytes)
{
    const statgpu_cuda_module_i *module = sg_cuda_module(NULL);
    if (module == NULL || module->kmeans == NULL) {
        snprintf(message, message_bytes, "the CUDA module has no k-means");
        return STATGPU_CUDA_NO_DEVICE;
    }
    return module->kmeans->begin(context->cuda_state, problem->data, problem->n_obs, problem->n_vars, problem->ld,
                                problem->k, session, timing, message, message_bytes);
}

/* The module's cancel callback: the CPU path's progress fraction, counted
 * here since the module asks once per iteration. */
typedef struct sg_kmeans_cancel {
    const sg_kmeans_progress *progress;
    size_t                    max_iterations, asked;
} sg_kmeans_cancel;

static int sg_kmeans_cancelled(void *user_data)
{
    sg_kmeans_cancel *cancel = user_data;
    const sg_kmeans_progress *progress = cancel->progress;
    double fraction = ((double)progress->run + (double)cancel->asked / (double)cancel->max_iterations)
                      / (double)progress->run_count;
    ++cancel->asked;
    return sg_progress_cancelled(progress->context, fraction) ? 1 : 0;
}

statgpu_cuda_status sg_cuda_kmeans_lloyd(statgpu_cuda_kmeans_session *session, size_t max_iterations,
                                         double absolute_tolerance, const sg_kmeans_progress *progress,
                                         sg_kmeans_run *run, statgpu_cuda_timing *timing, char *message,
                                         size_t message_bytes)
{
    const statgpu_cuda_module_i *module = sg_cuda_module(NULL);
    sg_kmeans_cancel cancel = { progress, max_iterations, 0 };
    return module->kmeans->lloyd(session, max_iterations, absolute_tolerance, sg_kmeans_cancelled, &cancel, run,
                                 timing, message, message_bytes);
}

void sg_cuda_kmeans_end(statgpu_cuda_kmeans_session *session)
{
    const statgpu_cuda_module_i *module = sg_cuda_module(NULL);
    if (session != NULL && module != NULL && module->kmeans != NULL)
        module->kmeans->end(session);
}
