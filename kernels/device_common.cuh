/*
 * device_common.cuh: what the selection kernels share: tiles of 16-byte loads,
 * warp-aggregated shared-memory histogram updates, block-staged compaction
 * with one global atomic per burst, and fixed-order reductions (the same data
 * on the same grid give the same bits). Internal to the CUDA backend module.
 */
#ifndef STATGPU_KERNELS_DEVICE_COMMON_CUH
#define STATGPU_KERNELS_DEVICE_COMMON_CUH

#include "total_order.h"

#include <cuda_runtime.h>

#include <cstdint>

namespace statgpu_cuda {

/* Threads of every streaming kernel. */
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

/* A thread reads two 16-byte vectors per tile: 4 doubles or 8 floats, two
 * loads in flight before the first use. */
template <typename Word>
struct Tile {
    static constexpr int kPerVector = 16 / static_cast<int>(sizeof(Word));
    static constexpr int kItems = 2 * kPerVector;
    static constexpr int kSize = kThreads * kItems;
};

/* Staged elements before a block writes them out in one burst: room for two
 * tiles, flushed once more than one is staged. */
template <typename Word>
struct Stage {
    static constexpr int kCapacity = 2 * Tile<Word>::kSize;
};

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }
__device__ __forceinline__ unsigned lanes_below() { return (1u << lane_id()) - 1u; }

/* The thread's items of the tile that starts at element `tile`; items past
 * `count` are invalid. vector_ok: src is 16-byte aligned. */
template <typename Word>
__device__ __forceinline__ void load_tile(const Word *__restrict__ src, uint64_t count, uint64_t tile,
                                          bool vector_ok, Word (&word)[Tile<Word>::kItems],
                                          bool (&valid)[Tile<Word>::kItems])
{
    constexpr int kPer = Tile<Word>::kPerVector;
    union Vector { uint4 v; Word w[kPer]; };
#pragma unroll
    for (int half = 0; half < 2; ++half) {
        const uint64_t e = tile + static_cast<uint64_t>(half) * (kThreads * kPer) +
                           static_cast<uint64_t>(threadIdx.x) * kPer;
        if (vector_ok && e + kPer <= count) {
            Vector vector;
            vector.v = __ldg(reinterpret_cast<const uint4 *>(src + e));
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                word[half * kPer + i] = vector.w[i];
                valid[half * kPer + i] = true;
            }
        } else {
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                const bool inside = e + i < count;
                word[half * kPer + i] = inside ? src[e + i] : Word{0};
                valid[half * kPer + i] = inside;
            }
        }
    }
}

/* Appends the wanted lanes' words to the block's stage, one shared atomic
 * per warp. Called by all lanes of a converged warp. */
template <typename Word>
__device__ __forceinline__ void stage_append(bool want, Word word, Word *s_stage, unsigned *s_stage_count)
{
    const unsigned mask = __ballot_sync(0xffffffffu, want);
    if (mask == 0)
        return;
    const int leader = __ffs(static_cast<int>(mask)) - 1;
    unsigned base = 0;
    if (static_cast<int>(lane_id()) == leader)
        base = atomicAdd(s_stage_count, static_cast<unsigned>(__popc(mask)));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (want)
        s_stage[base + __popc(mask & lanes_below())] = word;
}

/* Writes the stage out at the next free place of d_output (one global atomic
 * for the burst) and empties it. Called by the whole block after a barrier;
 * words past `capacity` are counted but not written, so the host sees an
 * overflow in the count. */
template <typename Word>
__device__ void stage_flush(Word *s_stage, unsigned *s_stage_count, unsigned long long *s_flush_base,
                            Word *d_output, unsigned long long *d_output_count, uint64_t capacity)
{
    const unsigned count = *s_stage_count;
    if (threadIdx.x == 0)
        *s_flush_base = count > 0 ? atomicAdd(d_output_count, static_cast<unsigned long long>(count)) : 0ull;
    __syncthreads();
    const unsigned long long base = *s_flush_base;
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x)
        if (base + i < capacity)
            d_output[base + i] = s_stage[i];
    __syncthreads();
    if (threadIdx.x == 0)
        *s_stage_count = 0;
    __syncthreads();
}

/* After a tile's stage_append calls: flushes when another tile might not fit.
 * The decision is read between two barriers, so every thread takes the same
 * branch. */
template <typename Word>
__device__ __forceinline__ void stage_maybe_flush(Word *s_stage, unsigned *s_stage_count,
                                                  unsigned long long *s_flush_base, Word *d_output,
                                                  unsigned long long *d_output_count, uint64_t capacity,
                                                  bool final_flush)
{
    __syncthreads();
    const unsigned limit = final_flush ? 0u : static_cast<unsigned>(Stage<Word>::kCapacity - Tile<Word>::kSize);
    const int flush = __syncthreads_or(threadIdx.x == 0 && *s_stage_count > limit);
    if (flush)
        stage_flush(s_stage, s_stage_count, s_flush_base, d_output, d_output_count, capacity);
}

/* ---- fixed-order reductions of 8-byte slots ---- */

enum SlotOp : unsigned char { kSumDouble = 0, kSumCount = 1, kMinDouble = 2, kMaxDouble = 3 };

__device__ __forceinline__ uint64_t slot_identity(unsigned char op)
{
    switch (op) {
    case kMinDouble: return 0x7ff0000000000000ull;  /* +Inf */
    case kMaxDouble: return 0xfff0000000000000ull;  /* -Inf */
    default: return 0;
    }
}

__device__ __forceinline__ uint64_t slot_combine(unsigned char op, uint64_t a, uint64_t b)
{
    switch (op) {
    case kSumDouble: return double_to_bits(bits_to_double(a) + bits_to_double(b));
    case kMinDouble: return double_to_bits(fmin(bits_to_double(a), bits_to_double(b)));
    case kMaxDouble: return double_to_bits(fmax(bits_to_double(a), bits_to_double(b)));
    default: return a + b;
    }
}

__device__ __forceinline__ uint64_t warp_reduce_slot(unsigned char op, uint64_t value)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        value = slot_combine(op, value, __shfl_down_sync(0xffffffffu, value, offset));
    return value;
}

/* The operations of a reduction's slots; passed to kernels by value. */
constexpr int kMaxSlots = 96;
struct SlotOps {
    int count;
    unsigned char op[kMaxSlots];
};

/* Combines the blocks' partial slots (d_partials[block * slot_count + slot])
 * in a fixed order into d_result[slot]. One block of kThreads. */
__global__ void __launch_bounds__(kThreads)
    finalize_slots_kernel(const uint64_t *__restrict__ d_partials, int block_count, const __grid_constant__ SlotOps ops,
                          uint64_t *__restrict__ d_result);

} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_DEVICE_COMMON_CUH */
