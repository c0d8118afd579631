/*
 * cuda_state.h: the device state behind the engine's opaque statgpu_cuda_state
 * (device, stream, workspace), and the helpers that turn CUDA failures into a
 * status and a message. Internal to the CUDA backend module.
 */
#ifndef STATGPU_KERNELS_CUDA_STATE_H
#define STATGPU_KERNELS_CUDA_STATE_H

#include "cuda_module.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace statgpu_cuda {

/* Device memory that only grows: calls ask for the size they need, and a
 * buffer that is already large enough is reused as is. */
struct DeviceBuffer {
    void  *d_ptr = nullptr;
    size_t bytes = 0;
};

/* Pass kernel variants, for their occupancy-derived grid sizes. */
enum PassVariant {
    kPassFirst8 = 0,   /* first pass, up to 8 probes */
    kPassFirst16 = 1,  /* first pass, up to 16 probes */
    kPassLater16 = 2,  /* later passes */
    kPassVariantCount = 3
};

} /* namespace statgpu_cuda */

struct statgpu_cuda_state {
    int device = 0;
    cudaStream_t stream = nullptr;
    int multiprocessor_count = 0;
    int pass_grid[statgpu_cuda::kPassVariantCount] = {};  /* blocks that fill the device */

    statgpu_cuda::DeviceBuffer data;       /* host data copied in */
    statgpu_cuda::DeviceBuffer values[2];  /* compacted elements, read and written in turn */
    statgpu_cuda::DeviceBuffer keys[2];    /* sort input and output */
    statgpu_cuda::DeviceBuffer cub_temp;   /* CUB's temporary storage */
    statgpu_cuda::DeviceBuffer partials;   /* per-block results of a pass */
    statgpu_cuda::DeviceBuffer gather;     /* sorted positions in, selected values out */
    statgpu_cuda::DeviceBuffer small;      /* a pass's result, the output counter, the sample */

    void *h_pinned = nullptr;              /* page-locked mirror of `small`, for quick copies */
};

namespace statgpu_cuda {

/* Writes a NUL-terminated message (truncated to msg_bytes) when msg_bytes > 0. */
void write_message(char *msg, size_t msg_bytes, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Turns a CUDA error into a status with "<what>: <CUDA's text>" in msg, and
 * clears the runtime's last error so the next call starts clean. An allocation
 * failure becomes STATGPU_CUDA_OUT_OF_MEMORY, so that the engine retries on
 * the CPU. */
statgpu_cuda_status report_cuda_error(cudaError_t error, const char *what,
                                      char *msg, size_t msg_bytes);

/* Makes buffer hold at least `bytes`; on failure it is left empty. */
cudaError_t ensure_device_buffer(DeviceBuffer *buffer, size_t bytes);
void release_device_buffer(DeviceBuffer *buffer);

/* Sizes the pass kernels' grids for the state's device; fails where the
 * module holds no code that the device can run. */
cudaError_t prepare_selection(statgpu_cuda_state *state);

/* Exact order statistics of data already on the device (see
 * select_ranks_host in cuda_module.h for the contract). d_data must stay
 * unchanged until the call returns; it is only read. */
statgpu_cuda_status select_ranks_device(statgpu_cuda_state *state,
                                        const double *d_data, size_t data_count,
                                        const size_t *ranks, size_t rank_count,
                                        double *results, char *msg, size_t msg_bytes);

/* The module's select_ranks_host: copies h_data into the state's workspace
 * on the state's stream, then select_ranks_device. */
statgpu_cuda_status select_ranks_host(statgpu_cuda_state *state,
                                      const double *h_data, size_t data_count,
                                      const size_t *ranks, size_t rank_count,
                                      double *results, char *msg, size_t msg_bytes);

} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_CUDA_STATE_H */
