/*
 * gmm_cuda.c: Gaussian mixtures' calls into the CUDA module
 * (backend/cuda_module.h's gmm table).
 */
#include "internal.h"
#include "methods/gmm.h"

#include <stdio.h>

statgpu_cuda_status sg_cuda_gmm_begin(statgpu_context *context, const double *data, size_t n_obs, size_t n_vars,
                                      size_t ld, size_t k, sg_gmm_device *device)
{
    const statgpu_cuda_module_i *module = sg_cuda_module(NULL);
    if (module == NULL || module->gmm == NULL) {
        snprintf(device->message, sizeof device->message, "the CUDA module has no Gaussian mixtures");
        return STATGPU_CUDA_NO_DEVICE;
    }
    return module->gmm->begin(context->cuda_state, data, n_obs, n_vars, ld, k, &device->session, &device->timing,
                              device->message, sizeof device->message);
}

statgpu_cuda_status sg_cuda_gmm_estep(sg_gmm_device *device, const statgpu_cuda_gmm_model *models,
                                      statgpu_cuda_gmm_sums *outs, size_t count)
{
    return sg_cuda_module(NULL)->gmm->estep(device->session, models, outs, count, &device->timing,
                                             device->message, sizeof device->message);
}

void sg_cuda_gmm_end(sg_gmm_device *device)
{
    const statgpu_cuda_module_i *module = sg_cuda_module(NULL);
    if (device->session != NULL && module != NULL && module->gmm != NULL)
        module->gmm->end(device->session);
    device->session = NULL;
}
