/*
 * order_statistics_cuda.c: the order statistics' calls into the CUDA module
 * (backend/cuda_module.h, select_ranks).
 */
#include "internal.h"

#include <stdio.h>

statgpu_cuda_status sg_cuda_select(statgpu_context *context, const statgpu_vector *data,
                                   const size_t *ranks, size_t rank_count, double *results,
                                   char *message, size_t message_bytes)
{
    const statgpu_cuda_module_i *module = sg_cuda_module(NULL);
    if (module == NULL || module->select == NULL) {
        snprintf(message, message_bytes, "the CUDA module has no selection");
        return STATGPU_CUDA_NO_DEVICE;
    }
    /* Host scratch memory is host memory to the CUDA module: it copies it. */
    int memory = data->memory == STATGPU_MEMORY_CUDA_DEVICE ? STATGPU_CUDA_DEVICE_MEMORY : STATGPU_CUDA_HOST_MEMORY;
    statgpu_cuda_array array = { data->data, data->count, (int)data->dtype, memory };
    statgpu_cuda_timing timing = { 0.0, 0.0 };
    statgpu_cuda_status status = module->select->select_ranks(context->cuda_state, &array, ranks, rank_count,
                                                      (int)context->params.select_method, results, &timing,
                                                      message, message_bytes);
    context->last_transfer_seconds = timing.transfer_seconds;
    context->last_compute_seconds = timing.compute_seconds;
    return status;
}
