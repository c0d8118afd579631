/*
 * cuda_state.h: the device state behind the engine's opaque statgpu_cuda_state
 * (device, stream, events, workspace), and the helpers that turn CUDA failures
 * into a status and a message. Internal to the CUDA backend module.
 */
#ifndef STATGPU_KERNELS_CUDA_STATE_H
#define STATGPU_KERNELS_CUDA_STATE_H

#include "backend/cuda_module.h"
#include "host_transfer.h"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace statgpu_cuda {

class TransferTeam;  /* host_transfer.cpp */

/* Device memory that only grows: calls ask for the size they need, and a
 * buffer that is already large enough is reused as is. */
struct DeviceBuffer {
    void  *d_ptr = nullptr;
    size_t bytes = 0;
};

/* Streaming kernels whose grids are sized from their occupancy. */
enum GridKind {
    kGridRadixPass64 = 0,
    kGridRadixPass32 = 1,
    kGridStream = 2,        /* reductions, copies, keys */
    kGridKindCount = 3
};

/* Events of a call: start, data on the device, end. */
enum { kEventStart = 0, kEventData = 1, kEventEnd = 2, kEventCount = 3 };

} /* namespace statgpu_cuda */

struct statgpu_cuda_state {
    int device = 0;
    cudaStream_t stream = nullptr;
    int multiprocessor_count = 0;
    int grid[statgpu_cuda::kGridKindCount] = {};  /* blocks that fill the device */

    statgpu_cuda::DeviceBuffer data;           /* host data copied in */
    statgpu_cuda::DeviceBuffer candidates[2];  /* radix: compacted keys (buffers A and B) */
    statgpu_cuda::DeviceBuffer segments;       /* radix: keys of the collected brackets */
    statgpu_cuda::DeviceBuffer keys[2];        /* sort and cutting plane: keys, sorted keys */
    statgpu_cuda::DeviceBuffer cub_temp;       /* CUB's temporary storage */
    statgpu_cuda::DeviceBuffer partials;       /* per-block results of a reduction */
    statgpu_cuda::DeviceBuffer gather;         /* positions in, values out */
    statgpu_cuda::DeviceBuffer control;        /* radix plan and counters, sample, small results */
    statgpu_cuda::DeviceBuffer sessions;       /* the arrays of the k-means or LTS session in flight,
                                                  carved by carve_session_arrays; kept between calls */
    statgpu_cuda::DeviceBuffer mixture;        /* the arrays of the Gaussian mixture session in flight
                                                  (its own: the k-means of its starts carve `sessions`
                                                  while it is open); kept between calls */

    statgpu_cuda::DeviceBuffer subset;         /* the best subset search's tasks, stacks and bounds;
                                                  kept between calls */

    void *h_pinned = nullptr;                  /* page-locked mirror of parts of `control` */
    int host_threads = 1;                      /* the engine's CPU threads: the lanes of staged copies */
    statgpu_cuda::TransferTeam *transfer = nullptr;  /* staged copies' threads, streams and page-locked
                                                        slots (host_transfer.h), made at first use */
    cudaEvent_t events[statgpu_cuda::kEventCount] = {};
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

/* One array of a session: where its pointer goes, and its size. */
struct SessionArray {
    void **pointer;
    size_t bytes;
};

/* Points each array at its own part (256-byte aligned) of the state's session
 * workspace, grown when it is too small: a session's arrays cost no
 * cudaMalloc (and no cudaFree, which waits for the device) once a call of
 * that size has run. The parts stay valid until the next carve; one session
 * is in flight per state. */
cudaError_t carve_session_arrays(statgpu_cuda_state *state, const SessionArray *arrays, size_t count);
/* The same from any grow-only workspace. */
cudaError_t carve_arrays(DeviceBuffer *workspace, const SessionArray *arrays, size_t count);
void release_device_buffer(DeviceBuffer *buffer);

/* The outcome of one module call: the status and message of its first
 * failure. The entries' drivers return false as soon as a step fails. */
class CallStatus {
public:
    CallStatus(char *msg, size_t msg_bytes) : msg_(msg), msg_bytes_(msg_bytes) {}

    statgpu_cuda_status status() const { return status_; }

    bool check(cudaError_t error, const char *what)
    {
        if (error == cudaSuccess)
            return true;
        if (status_ == STATGPU_CUDA_OK)
            status_ = report_cuda_error(error, what, msg_, msg_bytes_);
        return false;
    }
    bool fail(statgpu_cuda_status status, const char *text)
    {
        if (status_ == STATGPU_CUDA_OK) {
            status_ = status;
            write_message(msg_, msg_bytes_, "%s", text);
        }
        return false;
    }
    bool ensure(DeviceBuffer *buffer, size_t bytes, const char *what)
    {
        return check(ensure_device_buffer(buffer, bytes), what);
    }

private:
    char *msg_;
    size_t msg_bytes_;
    statgpu_cuda_status status_ = STATGPU_CUDA_OK;
};

/* Milliseconds between two recorded events; 0 when they cannot be read. */
inline float elapsed_ms(cudaEvent_t from, cudaEvent_t to)
{
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, from, to) == cudaSuccess)
        return ms;
    (void)cudaGetLastError();  /* a timing that failed must not fail the next call's check */
    return 0.0f;
}

/* Sizes the kernels' grids for the state's device and allocates the small
 * fixed workspace; fails where the module holds no code that the device can
 * run. */
cudaError_t prepare_selection(statgpu_cuda_state *state);

/* The module's select_ranks (see cuda_module.h). */
statgpu_cuda_status select_ranks(statgpu_cuda_state *state, const statgpu_cuda_array *array,
                                 const size_t *ranks, size_t rank_count, int method,
                                 double *results, statgpu_cuda_timing *timing,
                                 char *msg, size_t msg_bytes);

/* The module's k-means entries (kmeans.cu; see cuda_module.h). */
statgpu_cuda_status kmeans_begin(statgpu_cuda_state *state, const double *data, size_t n_obs, size_t n_vars,
                                 size_t ld, size_t k, statgpu_cuda_kmeans_session **out_session,
                                 statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
statgpu_cuda_status kmeans_lloyd(statgpu_cuda_kmeans_session *session, size_t max_iterations,
                                 double absolute_tolerance, statgpu_cuda_cancel_fn cancelled,
                                 void *cancel_user_data, statgpu_cuda_kmeans_run *run,
                                 statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
void kmeans_end(statgpu_cuda_kmeans_session *session);

/* The module's least trimmed squares entries (lts.cu; see cuda_module.h). */
statgpu_cuda_status lts_begin(statgpu_cuda_state *state, const double *x, size_t n, size_t p, size_t ld,
                              const double *y, statgpu_cuda_lts_session **out_session,
                              statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
statgpu_cuda_status lts_csteps(statgpu_cuda_lts_session *session, size_t h, const double *coef, size_t m,
                               double *kth, double *objective, double *gram, double *xty,
                               statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
void lts_end(statgpu_cuda_lts_session *session);

/* The module's Gaussian mixture entries (gmm.cu; see cuda_module.h). */
statgpu_cuda_status gmm_begin(statgpu_cuda_state *state, const double *data, size_t n_obs, size_t n_vars,
                              size_t ld, size_t k, statgpu_cuda_gmm_session **out_session,
                              statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);
statgpu_cuda_status gmm_estep(statgpu_cuda_gmm_session *session, const statgpu_cuda_gmm_model *models,
                              statgpu_cuda_gmm_sums *outs, size_t model_count, statgpu_cuda_timing *timing,
                              char *msg, size_t msg_bytes);
void gmm_end(statgpu_cuda_gmm_session *session);

/* The module's inverse Gaussian mixtures (igmm.cu; see cuda_module.h). */
statgpu_cuda_status igmm_fit(statgpu_cuda_state *state, const double *const *sets, const size_t *lengths,
                             const uint8_t *fitted, size_t set_count, size_t k, size_t start_count,
                             size_t max_iterations, double tolerance, statgpu_cuda_igmm_component *components,
                             statgpu_cuda_igmm_fit *fits, statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);

/* The module's best subset search (subset.cu; see cuda_module.h). */
statgpu_cuda_status subset_search(statgpu_cuda_state *state, const statgpu_cuda_subset_node *nodes,
                                  size_t node_count, const double *blocks, size_t block_doubles, size_t columns,
                                  size_t min_size, size_t max_size, double margin, double *bounds,
                                  statgpu_cuda_subset_found *found, size_t found_capacity, size_t *found_count,
                                  uint64_t *nodes_evaluated, statgpu_cuda_cancel_fn cancelled,
                                  void *cancel_user_data, statgpu_cuda_timing *timing, char *msg, size_t msg_bytes);

} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_CUDA_STATE_H */
