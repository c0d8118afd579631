/*
 * cuda_loader.h: the CUDA module, loaded at run time (cuda_loader.c).
 */
#ifndef STATGPU_BACKEND_CUDA_LOADER_H
#define STATGPU_BACKEND_CUDA_LOADER_H

#include "core/context.h"

/* The process-wide module table, loaded once; NULL when unavailable, with the
 * reason in *reason (static storage). */
const statgpu_cuda_module_i *sg_cuda_module(const char **reason);

/* Probes CUDA for this context once: loads the module and creates the device
 * state. Returns true when the context can run on CUDA. */
bool sg_cuda_ensure(statgpu_context *context);

/* Releases the context's device state. */
void sg_cuda_release(statgpu_context *context);

#endif
