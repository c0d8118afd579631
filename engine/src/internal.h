/*
 * internal.h: every private header of the engine, for a source file that
 * needs several. Each part lives where its code does:
 *   core/context.h            the context's layout, sg_fail, progress
 *   core/random.h             random streams
 *   backend/cuda_loader.h     the CUDA module, loaded at run time
 *   backend/dispatch.h        which backend runs a call
 *   methods/order_statistics.h, methods/kmeans.h, methods/lts.h, methods/gmm.h
 *                             each method's CPU and CUDA entry points
 */
#ifndef STATGPU_INTERNAL_H
#define STATGPU_INTERNAL_H

#include "core/context.h"
#include "core/random.h"
#include "backend/cuda_loader.h"
#include "backend/dispatch.h"
#include "methods/order_statistics.h"
#include "methods/kmeans.h"
#include "methods/lts.h"
#include "methods/gmm.h"

#endif /* STATGPU_INTERNAL_H */
