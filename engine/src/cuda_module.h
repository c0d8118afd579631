/*
 * cuda_module.h: the contract between the engine and its CUDA backend module
 * (kernels/, built as libstatgpu_cuda.so and dlopen()ed at first use).
 *
 * The module exports one symbol, statgpu_cuda_module_init, which returns a
 * table of function pointers when the engine's API version matches its own and
 * NULL otherwise. The engine treats a missing module, a missing symbol, a NULL
 * table or any failure status as "CUDA not available" and runs on the CPU.
 *
 * Every function is C ABI, never throws, never aborts, never prints, and
 * reports CUDA and CUB failures as a status plus a message in msg
 * (msg_bytes bytes, always NUL-terminated when msg_bytes > 0).
 */
#ifndef STATGPU_CUDA_MODULE_H
#define STATGPU_CUDA_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever the table below changes shape or meaning. */
#define STATGPU_CUDA_MODULE_API_VERSION 1u

#define STATGPU_CUDA_MODULE_INIT_SYMBOL "statgpu_cuda_module_init"

typedef enum statgpu_cuda_status {
    STATGPU_CUDA_OK               = 0,
    STATGPU_CUDA_NO_DEVICE        = 1,  /* no driver, no device, or bad device index */
    STATGPU_CUDA_OUT_OF_MEMORY    = 2,  /* a device allocation failed */
    STATGPU_CUDA_ERROR            = 3,  /* any other CUDA/CUB failure */
    STATGPU_CUDA_NAN_IN_DATA      = 4,  /* the data hold a NaN */
    STATGPU_CUDA_INVALID_ARGUMENT = 5   /* a broken precondition */
} statgpu_cuda_status;

typedef struct statgpu_cuda_device_info {
    char name[128];
    int  runtime_version;  /* cudaRuntimeGetVersion */
    int  driver_version;   /* cudaDriverGetVersion */
    int  multiprocessor_count;
    size_t global_memory_bytes;
} statgpu_cuda_device_info;

/* Per-context device state (stream, workspace): opaque to the engine. */
typedef struct statgpu_cuda_state statgpu_cuda_state;

typedef struct statgpu_cuda_module_i {
    uint32_t api_version;  /* STATGPU_CUDA_MODULE_API_VERSION */

    /* Binds to device `device`, creates a stream and an empty workspace. */
    statgpu_cuda_status (*state_create)(int device, statgpu_cuda_state **out_state,
                                        statgpu_cuda_device_info *out_info,
                                        char *msg, size_t msg_bytes);
    /* Frees everything; NULL is a no-op. */
    void (*state_destroy)(statgpu_cuda_state *state);

    /* Exact order statistics of host data: results[j] is the ranks[j]-th
     * smallest (1-based) of h_data[0 .. data_count-1] in the total order of
     * statgpu.h. ranks are sorted ascending, 1 <= ranks[j] <= data_count,
     * rank_count >= 1. The data must not be modified. */
    statgpu_cuda_status (*select_ranks_host)(statgpu_cuda_state *state,
                                             const double *h_data, size_t data_count,
                                             const size_t *ranks, size_t rank_count,
                                             double *results,
                                             char *msg, size_t msg_bytes);
} statgpu_cuda_module_i;

typedef const statgpu_cuda_module_i *(*statgpu_cuda_module_init_fn)(uint32_t engine_api_version);

#ifdef __cplusplus
}
#endif

#endif /* STATGPU_CUDA_MODULE_H */
