/*
 * internal.h: what the engine's source files share and the public header
 * does not show: the context's layout, error reporting, backend dispatch and
 * the CPU kernels' entry points.
 */
#ifndef STATGPU_INTERNAL_H
#define STATGPU_INTERNAL_H

#include "statgpu.h"
#include "cuda_module.h"

#include <stdbool.h>

#define SG_MESSAGE_BYTES 512

struct statgpu_context {
    statgpu_context_params params;
    int                    cpu_thread_count;  /* resolved: never 0 */
    char                   last_error[SG_MESSAGE_BYTES];
    statgpu_backend        last_used;
    char                   note[256];         /* why the last call fell back, else "" */

    /* CUDA, set up lazily by sg_cuda_ensure(). */
    bool                     cuda_probed;
    statgpu_cuda_state      *cuda_state;      /* NULL when CUDA is unavailable */
    statgpu_cuda_device_info cuda_info;
    char                     cuda_unavailable[256];
};

/* Records a failure on the context and returns status. The message is
 * printf-formatted. */
statgpu_status sg_fail(statgpu_context *context, statgpu_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Records a success: clears the last error. Returns STATGPU_OK. */
statgpu_status sg_succeed(statgpu_context *context);

/* Asks the progress callback, if any; returns true when the caller cancelled. */
bool sg_progress_cancelled(statgpu_context *context, double fraction_done);

/* ----- CUDA backend (cuda_loader.c) ----- */

/* The process-wide module table, loaded once; NULL when unavailable, with the
 * reason in *reason (static storage). */
const statgpu_cuda_module_i *sg_cuda_module(const char **reason);

/* Probes CUDA for this context once: loads the module and creates the device
 * state. Returns true when the context can run on CUDA. */
bool sg_cuda_ensure(statgpu_context *context);

/* Releases the context's device state. */
void sg_cuda_release(statgpu_context *context);

/* Order statistics on the context's device (sg_cuda_ensure() must have
 * succeeded): ranks ascending and distinct. */
statgpu_cuda_status sg_cuda_select(statgpu_context *context, const statgpu_vector *data,
                                   const size_t *ranks, size_t rank_count, double *results,
                                   char *message, size_t message_bytes);

/* ----- CPU order statistics (cpu_select.c) ----- */

/* IEEE total-order keys: a < b as doubles (with -0.0 < +0.0) iff key(a) < key(b). */
static inline uint64_t sg_key_from_double(double value)
{
    uint64_t bits;
    __builtin_memcpy(&bits, &value, sizeof bits);
    return (bits & 0x8000000000000000ull) ? ~bits : (bits | 0x8000000000000000ull);
}

static inline double sg_double_from_key(uint64_t key)
{
    uint64_t bits = (key & 0x8000000000000000ull) ? (key & ~0x8000000000000000ull) : ~key;
    double value;
    __builtin_memcpy(&value, &bits, sizeof value);
    return value;
}

/* True when any element of the host array is NaN. */
bool sg_cpu_has_nan(const void *data, statgpu_dtype dtype, size_t data_count, int thread_count);

/* results[j] = the ranks[j]-th smallest (1-based) of a host array, ranks
 * ascending, distinct and within [1, data_count]. The CPU has radix select
 * (RADIX), introselect and a full sort (SORT); AUTO and CUTTING_PLANE choose
 * between the first two by size. Returns STATGPU_OK or
 * STATGPU_ERROR_OUT_OF_MEMORY. */
statgpu_status sg_cpu_select_ranks(const void *data, statgpu_dtype dtype, size_t data_count,
                                   const size_t *ranks, size_t rank_count, statgpu_select_method method,
                                   double *results, int thread_count);

#endif /* STATGPU_INTERNAL_H */
