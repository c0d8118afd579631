/*
 * context.h: the context's layout, and how a call reports its failure, its
 * success and its progress (core/context.c).
 */
#ifndef STATGPU_CORE_CONTEXT_H
#define STATGPU_CORE_CONTEXT_H

#include "statgpu.h"
#include "backend/cuda_module.h"
#include "backend/measured_choice.h"

#include <stdbool.h>

#define SG_MESSAGE_BYTES 512

/* The counts of order statistics whose backend AUTO chooses by measurement
 * (methods/order_statistics.c): 2^20 and up, one class per power of two,
 * element type, and one or two ranks or more. */
#define SG_SELECT_MEASURED_MIN_LOG2 20
#define SG_SELECT_MEASURED_CLASSES  (4 * (64 - SG_SELECT_MEASURED_MIN_LOG2))

struct statgpu_context {
    statgpu_context_params params;
    int                    cpu_thread_count;  /* resolved: never 0 */
    char                   last_error[SG_MESSAGE_BYTES];
    statgpu_backend        last_used;
    double                 last_transfer_seconds;  /* of the last CUDA call */
    double                 last_compute_seconds;
    char                   note[256];         /* why the last call fell back, else "" */
    int                    dispatch_thread_count;  /* the threads AUTO's crossovers scale by: cpu_thread_count,
                                                      or for a worker its parent's, so that a call chooses
                                                      the same backend on either */

    /* AUTO's measured choice for order statistics of large host data, one
     * per class of calls (methods/order_statistics.c). */
    sg_measured_choice       select_measured[SG_SELECT_MEASURED_CLASSES];

    /* The contexts of the threads that fit a model choice's candidates side
     * by side (statgpu_gmm_select), made at the first such call and kept:
     * each has its own CUDA state (stream and workspace). */
    struct statgpu_context **workers;
    int                      worker_count;

    /* CUDA, set up lazily by sg_cuda_ensure(). */
    bool                     cuda_probed;
    statgpu_cuda_state      *cuda_state;      /* NULL when CUDA is unavailable */
    statgpu_cuda_device_info cuda_info;
    char                     cuda_unavailable[256];
};

/* Records a failure on the context and returns status. The message is
 * printf-formatted, as sg_format formats. */
statgpu_status sg_fail(statgpu_context *context, statgpu_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* snprintf with '.' as the decimal point whatever the process's locale:
 * for every message and note the engine writes. */
void sg_format(char *out, size_t bytes, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Records a success: clears the last error. Returns STATGPU_OK. */
statgpu_status sg_succeed(statgpu_context *context);

/* Asks the progress callback, if any; returns true when the caller cancelled. */
bool sg_progress_cancelled(statgpu_context *context, double fraction_done);

#endif
