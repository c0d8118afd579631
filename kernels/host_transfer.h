/*
 * host_transfer.h: copies between the caller's pageable host memory and the
 * device at the speed of the bus.
 *
 * From pageable memory the driver moves data through its own small bounce
 * buffers on one host thread, at about 10 GB/s on the H100 machine, a fifth
 * of what the bus carries from page-locked memory. Here a team of host
 * threads (the state's host thread count, at most kMostTransferLanes) each
 * owns a lane: a stream and two page-locked slots. The bytes are cut into
 * chunks dealt to the lanes in turn; a lane copies its chunk into a slot on
 * the host while the bus carries its other slot, so the host copies run in
 * parallel and the bus never waits for one thread's memcpy. The state's
 * stream waits for every lane before the kernels that read the data.
 * Internal to the CUDA backend module.
 */
#ifndef STATGPU_KERNELS_HOST_TRANSFER_H
#define STATGPU_KERNELS_HOST_TRANSFER_H

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <vector>

struct statgpu_cuda_state;

namespace statgpu_cuda {

/* The most lanes (host threads) of a transfer. One thread copies pageable
 * memory into page-locked memory at about 7 GB/s on the H100 machine, the
 * bus carries 54 GB/s from page-locked memory: the median of 2^27 doubles
 * from pageable memory took 169 ms with 1 lane, 56 with 8 (before the host's
 * NaN pass went), then 22.7 ms with 8 lanes, 24.8 with 12, 25.8 with 16
 * (more copies than 8 slow the bus's own reads of host memory;
 * bench/NOTES.md, "Host data v1"). */
constexpr int kMostTransferLanes = 8;

/* A piece of a staged copy: bytes between host memory and device memory.
 * Pieces whose device ranges follow each other cross the bus together. */
struct StagedPiece {
    void       *host;    /* read by upload_staged, written by download_staged */
    void       *device;
    size_t      bytes;
};

/* Appends the pieces of an n_rows x n_cols column-major block of host
 * doubles (leading dimension ld) bound for packed columns at device. */
void add_columns(std::vector<StagedPiece> *pieces, const double *host, size_t n_rows, size_t n_cols, size_t ld,
                 double *device);

/* Work on bytes that have just arrived on the device: queued by the
 * upload on `stream` right behind their copy, so that it runs while later
 * bytes still cross the bus. */
using ArrivalWork = std::function<cudaError_t(const void *device, size_t bytes, cudaStream_t stream)>;

/* Copies pieces of pageable host memory to the device for work queued next
 * on stream: returns once every byte is on its way (in page-locked memory),
 * with stream waiting for the copies (and for `arrived`'s work, called for
 * every run of bytes copied, where given); the caller's memory may change
 * after the return. Small copies take the driver's path on stream. */
cudaError_t upload_staged(statgpu_cuda_state *state, const StagedPiece *pieces, size_t count,
                          cudaStream_t stream, const ArrivalWork *arrived = nullptr);

/* upload_staged of one block of add_columns. */
cudaError_t upload_columns(statgpu_cuda_state *state, const double *host, size_t n_rows, size_t n_cols, size_t ld,
                           double *device, cudaStream_t stream, const ArrivalWork *arrived = nullptr);

/* Copies pieces of device memory, written by work queued on stream, back to
 * pageable host memory; returns when every byte is in host memory. */
cudaError_t download_staged(statgpu_cuda_state *state, const StagedPiece *pieces, size_t count,
                            cudaStream_t stream);

/* Stops the state's transfer threads and frees their streams and
 * page-locked slots; a state without them is left as it is. */
void release_transfer_lanes(statgpu_cuda_state *state);

} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_HOST_TRANSFER_H */
