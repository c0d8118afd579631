/*
 * methods/gmm.h: Gaussian mixtures' calls into the CUDA module
 * (methods/gmm_cuda.c), used by methods/gmm.c.
 */
#ifndef STATGPU_METHODS_GMM_H
#define STATGPU_METHODS_GMM_H

#include "statgpu.h"
#include "backend/cuda_module.h"

#include <stdbool.h>
#include <stddef.h>

/* A mixture's data on the device, and what its calls there cost and said. */
typedef struct sg_gmm_device {
    statgpu_cuda_gmm_session *session;
    statgpu_cuda_timing       timing;
    char                      message[256];
} sg_gmm_device;

/* Copies the data to the device (cuda_module.h's gmm begin). */
statgpu_cuda_status sg_cuda_gmm_begin(statgpu_context *context, const double *data, size_t n_obs, size_t n_vars,
                                      size_t ld, size_t k, sg_gmm_device *device);

/* One E-step on the device for each of count models (restarts), and their
 * sums (cuda_module.h's gmm estep). */
statgpu_cuda_status sg_cuda_gmm_estep(sg_gmm_device *device, const statgpu_cuda_gmm_model *models,
                                      statgpu_cuda_gmm_sums *outs, size_t count);

/* Frees the session; a device without one is left as it is. */
void sg_cuda_gmm_end(sg_gmm_device *device);

#endif /* STATGPU_METHODS_GMM_H */
