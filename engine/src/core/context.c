/*
 * context.c: the engine's context object, status texts, version and the
 * backend report.
 */
#define _GNU_SOURCE  /* uselocale, newlocale */
#include "internal.h"
#include "core/threads.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


unsigned statgpu_version_number(void) { return STATGPU_VERSION_NUMBER; }

const char *statgpu_version_string(void) { return STATGPU_VERSION_STRING; }

const char *statgpu_status_string(statgpu_status status)
{
    switch (status) {
    case STATGPU_OK:                     return "success";
    case STATGPU_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case STATGPU_ERROR_EMPTY_INPUT:      return "no observations";
    case STATGPU_ERROR_NAN_IN_DATA:      return "the data contain NaN";
    case STATGPU_ERROR_OUT_OF_MEMORY:    return "out of memory";
    case STATGPU_ERROR_NO_CONVERGENCE:   return "no convergence";
    case STATGPU_ERROR_CANCELLED:        return "cancelled";
    case STATGPU_ERROR_BACKEND:          return "backend failure";
    case STATGPU_ERROR_INTERNAL:         return "internal error";
    }
    return "unknown status";
}

const char *statgpu_backend_name(statgpu_backend backend)
{
    switch (backend) {
    case STATGPU_BACKEND_AUTO: return "auto";
    case STATGPU_BACKEND_CPU:  return "cpu";
    case STATGPU_BACKEND_CUDA: return "cuda";
    }
    return "unknown";
}

void statgpu_context_params_init(statgpu_context_params *params)
{
    if (params == NULL)
        return;
    memset(params, 0, sizeof *params);
    params->struct_bytes = sizeof *params;
    params->backend      = STATGPU_BACKEND_AUTO;
}

statgpu_status statgpu_context_create(const statgpu_context_params *params,
                                      statgpu_context **out_context)
{
    if (out_context == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    *out_context = NULL;

    statgpu_context_params chosen;
    statgpu_context_params_init(&chosen);
    if (params != NULL) {
        /* A caller built against an older, shorter params struct passes its own
         * size; fields it does not know keep their defaults. */
        if (params->struct_bytes < offsetof(statgpu_context_params, progress_user_data) + sizeof(void *)
            || params->struct_bytes > sizeof chosen)
            return STATGPU_ERROR_INVALID_ARGUMENT;
        memcpy(&chosen, params, params->struct_bytes);
        chosen.struct_bytes = sizeof chosen;
    }
    if (chosen.backend != STATGPU_BACKEND_AUTO && chosen.backend != STATGPU_BACKEND_CPU
        && chosen.backend != STATGPU_BACKEND_CUDA)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (chosen.select_method < STATGPU_SELECT_AUTO || chosen.select_method > STATGPU_SELECT_SORT)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (chosen.device < 0 || chosen.thread_count < 0 || chosen.thread_count > STATGPU_MAX_THREAD_COUNT)
        return STATGPU_ERROR_INVALID_ARGUMENT;

    statgpu_context *context = calloc(1, sizeof *context);
    if (context == NULL)
        return STATGPU_ERROR_OUT_OF_MEMORY;
    context->params           = chosen;
    context->cpu_thread_count = chosen.thread_count > 0 ? chosen.thread_count : sg_threads_default();
    context->dispatch_thread_count = context->cpu_thread_count;
    context->last_used        = STATGPU_BACKEND_AUTO;
    *out_context = context;
    return STATGPU_OK;
}

void statgpu_context_destroy(statgpu_context *context)
{
    if (context == NULL)
        return;
    for (int w = 0; w < context->worker_count; ++w)
        statgpu_context_destroy(context->workers[w]);
    free(context->workers);
    sg_cuda_release(context);
    free(context);
}

const char *statgpu_context_last_error(const statgpu_context *context)
{
    return context != NULL ? context->last_error : "no context";
}

/* vsnprintf with '.' as the decimal point: inside the office the process's
 * locale is the desktop's, where a German one writes 0,5 beside the
 * messages' own "[0.5, 1]". Only this thread's locale changes, and only
 * while it formats; where the C locale cannot be made, the process's. */
static void sg_vformat(char *out, size_t bytes, const char *format, va_list args)
{
    locale_t c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    locale_t previous = c_numeric != (locale_t)0 ? uselocale(c_numeric) : (locale_t)0;
    vsnprintf(out, bytes, format, args);
    if (c_numeric != (locale_t)0) {
        uselocale(previous);
        freelocale(c_numeric);
    }
}

void sg_format(char *out, size_t bytes, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    sg_vformat(out, bytes, format, args);
    va_end(args);
}

statgpu_status sg_fail(statgpu_context *context, statgpu_status status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    sg_vformat(context->last_error, sizeof context->last_error, format, args);
    va_end(args);
    return status;
}

statgpu_status sg_succeed(statgpu_context *context)
{
    context->last_error[0] = '\0';
    return STATGPU_OK;
}

bool sg_progress_cancelled(statgpu_context *context, double fraction_done)
{
    if (context->params.progress == NULL)
        return false;
    return context->params.progress(context->params.progress_user_data, fraction_done) != 0;
}

statgpu_status statgpu_context_backend_report(statgpu_context *context,
                                              statgpu_backend_report *report)
{
    if (context == NULL || report == NULL)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    memset(report, 0, sizeof *report);
    report->requested        = context->params.backend;
    report->last_used        = context->last_used;
    report->cuda_device      = context->params.device;
    report->cpu_thread_count = context->cpu_thread_count;
    report->last_transfer_seconds = context->last_transfer_seconds;
    report->last_compute_seconds  = context->last_compute_seconds;

    if (context->params.backend != STATGPU_BACKEND_CPU && sg_cuda_ensure(context)) {
        report->cuda_available       = 1;
        report->cuda_runtime_version = context->cuda_info.runtime_version;
        report->cuda_driver_version  = context->cuda_info.driver_version;
        snprintf(report->device_name, sizeof report->device_name, "%s", context->cuda_info.name);
    }
    if (context->note[0] != '\0')
        snprintf(report->note, sizeof report->note, "%s", context->note);
    else if (context->params.backend != STATGPU_BACKEND_CPU && !report->cuda_available)
        snprintf(report->note, sizeof report->note, "%s", context->cuda_unavailable);
    else if (context->params.backend == STATGPU_BACKEND_CPU)
        snprintf(report->note, sizeof report->note, "the CPU backend was requested");
    return sg_succeed(context);
}

static void sg_version_text(int version, char *text, size_t text_bytes)
{
    if (version <= 0)
        snprintf(text, text_bytes, "unknown");
    else
        snprintf(text, text_bytes, "%d.%d", version / 1000, version % 1000 / 10);
}

statgpu_status statgpu_backend_describe(const statgpu_backend_report *report, char *text, size_t text_bytes)
{
    if (report == NULL || text == NULL || text_bytes == 0)
        return STATGPU_ERROR_INVALID_ARGUMENT;
    if (report->requested != STATGPU_BACKEND_CPU && report->cuda_available) {
        char runtime[16], driver[16];
        sg_version_text(report->cuda_runtime_version, runtime, sizeof runtime);
        sg_version_text(report->cuda_driver_version, driver, sizeof driver);
        int written = snprintf(text, text_bytes, "CUDA: %s (runtime %s, driver %s)", report->device_name,
                               runtime, driver);
        if (report->last_used == STATGPU_BACKEND_CPU && report->note[0] != '\0' && written >= 0
            && (size_t)written < text_bytes)
            snprintf(text + written, text_bytes - (size_t)written, "; the last call ran on the CPU: %s",
                     report->note);
        return STATGPU_OK;
    }
    if (report->requested == STATGPU_BACKEND_CPU)
        snprintf(text, text_bytes, "CPU: %d threads (CPU backend requested)", report->cpu_thread_count);
    else
        snprintf(text, text_bytes, "CPU: %d threads (CUDA not available: %s)", report->cpu_thread_count,
                 report->note[0] != '\0' ? report->note : "no reason given");
    return STATGPU_OK;
}
