/*
 * selection.h: one selection call as the method drivers see it (the state,
 * where failures are reported, buffer helpers), the layout of the small
 * control buffer, and the drivers of the methods. Internal to the CUDA
 * backend module.
 */
#ifndef STATGPU_KERNELS_SELECTION_H
#define STATGPU_KERNELS_SELECTION_H

#include "cuda_state.h"
#include "radix_plan.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace statgpu_cuda {

/* Layout of state->control (device) and state->h_pinned (host). */
constexpr size_t kAlignment = 256;
constexpr size_t align_up(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }
constexpr size_t kPlanOffset = 0;
constexpr size_t kCountersOffset = align_up(kPlanOffset + sizeof(radix::Plan));
constexpr size_t kSampleOffset = align_up(kCountersOffset + sizeof(radix::Counters));
constexpr size_t kSlotsOffset = align_up(kSampleOffset + radix::kSampleCount * sizeof(uint64_t));
constexpr size_t kSlotBytes = 1024;                /* a reduction's result slots */
constexpr size_t kCounterOffset = kSlotsOffset + kSlotBytes;  /* one 8-byte counter */
constexpr size_t kIntervalsOffset = align_up(kCounterOffset + 8);
constexpr size_t kIntervalBytes = 4096;            /* cutting plane: copy_if intervals */
constexpr size_t kControlBytes = align_up(kIntervalsOffset + kIntervalBytes);

/* One call of select_ranks: its state, and the status and message of the
 * first failure. */
class Call : public CallStatus {
public:
    Call(statgpu_cuda_state *state, char *msg, size_t msg_bytes) : CallStatus(msg, msg_bytes), state_(state) {}

    statgpu_cuda_state *state() const { return state_; }
    cudaStream_t stream() const { return state_->stream; }

    template <typename T>
    T *control(size_t offset) const
    {
        return reinterpret_cast<T *>(static_cast<char *>(state_->control.d_ptr) + offset);
    }
    template <typename T>
    T *pinned(size_t offset) const
    {
        return reinterpret_cast<T *>(static_cast<char *>(state_->h_pinned) + offset);
    }

private:
    statgpu_cuda_state *state_;
};

/* The methods. d_data: count elements of dtype on the device (count >
 * kSmallCount except for select_small); ranks: distinct, ascending, 1-based;
 * values: one per rank. On failure they return false with the call's status
 * set. */
bool select_small(Call &call, const void *d_data, int dtype, uint64_t count,
                  const std::vector<uint64_t> &ranks, double *values);
bool select_sort(Call &call, const void *d_data, int dtype, uint64_t count,
                 const std::vector<uint64_t> &ranks, double *values);
bool select_radix(Call &call, const void *d_data, int dtype, uint64_t count,
                  const std::vector<uint64_t> &ranks, double *values);
bool select_cutting_plane(Call &call, const void *d_data, int dtype, uint64_t count,
                          const std::vector<uint64_t> &ranks, double *values);

/* Shared by the drivers: sorts the first items keys of state->keys[0] (32-bit
 * when floats, else 64-bit) into state->keys[1] on bits [0, end_bit), with the
 * state's CUB workspace (asked for, grown, then used). */
bool sort_keys(Call &call, unsigned long long items, bool floats, int end_bit);

/* Shared by the drivers: values[i] = the key at d_sorted[positions[i]],
 * widened to double (key_bits 64 or 32). */
bool gather_sorted(Call &call, const void *d_sorted, uint32_t key_bits,
                   const std::vector<uint64_t> &positions, double *values);

/* Sizes the grids of the radix and cutting-plane kernels. */
cudaError_t prepare_radix(statgpu_cuda_state *state);
cudaError_t prepare_cutting_plane(statgpu_cuda_state *state);

} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_SELECTION_H */
