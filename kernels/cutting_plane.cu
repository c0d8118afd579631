/*
 * cutting_plane.cu: STATGPU_SELECT_CUTTING_PLANE on the device, Beliakov's
 * hybrid (cutting_plane_plan.h has the method): the first reduction (min,
 * max, sum, NaN and zero counts), the Kelley pass that evaluates the
 * objective and its subgradient counts at each new point in one
 * transform-reduce, the copy_if of the final intervals, a CUB radix sort of
 * their keys, and the host loop that runs the planner against them. Each
 * pass ends with one small copy back, because the next point depends on it.
 */
#include "cutting_plane_plan.h"
#include "device_common.cuh"
#include "selection.h"

#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace statgpu_cuda {

namespace {

using cutting_plane::Interval;
using cutting_plane::PassPoints;
using cutting_plane::PointResult;
using cutting_plane::Stats;

constexpr int kStatsSlots = 10;
constexpr int kPointSlots = 5;
static_assert(kPointSlots * cutting_plane::kMaxPoints <= kMaxSlots, "slots of a Kelley pass");
static_assert(sizeof(Stats) == kStatsSlots * sizeof(uint64_t), "Stats is flat slots");
static_assert(sizeof(PointResult) == kPointSlots * sizeof(uint64_t), "PointResult is flat slots");
static_assert(cutting_plane::kMaxIntervals * 2 * sizeof(double) <= kIntervalBytes, "intervals fit the control buffer");

template <typename Word> __device__ __forceinline__ double value_of(Word word);
template <> __device__ __forceinline__ double value_of<uint64_t>(uint64_t word) { return bits_to_double(word); }
template <> __device__ __forceinline__ double value_of<uint32_t>(uint32_t word)
{
    return static_cast<double>(bits_to_float(word));
}

__device__ __forceinline__ double log_transform(double x) { return copysign(log1p(fabs(x)), x); }

/* Reduces N slots over the block (a shuffle tree in each warp, then the
 * warps in order) and writes them to d_partial. */
template <int N>
__device__ void block_reduce_slots(uint64_t (&value)[N], const SlotOps &ops, uint64_t *d_partial)
{
    __shared__ uint64_t s_slots[kWarps][N];
    const int warp = threadIdx.x >> 5;
#pragma unroll
    for (int slot = 0; slot < N; ++slot) {
        const uint64_t reduced = warp_reduce_slot(ops.op[slot], value[slot]);
        if (lane_id() == 0)
            s_slots[warp][slot] = reduced;
    }
    __syncthreads();
    for (int slot = threadIdx.x; slot < N; slot += blockDim.x) {
        uint64_t combined = slot_identity(ops.op[slot]);
        for (int w = 0; w < kWarps; ++w)
            combined = slot_combine(ops.op[slot], combined, s_slots[w][slot]);
        d_partial[slot] = combined;
    }
}

/* The paper's first reduction: min, max, sum, NaN, zero and infinity
 * counts; with kTransformed also the sum of the log transform (a second
 * reduction, only for data whose range is huge). */
template <typename Word, bool kTransformed>
__global__ void __launch_bounds__(kThreads)
    cp_stats_kernel(const void *__restrict__ d_data, uint64_t count, int vector_ok, const __grid_constant__ SlotOps ops,
                    uint64_t *__restrict__ d_partials)
{
    using TileOf = Tile<Word>;
    const double inf = __longlong_as_double(0x7ff0000000000000ll);
    double min_value = inf, max_value = -inf, sum = 0.0, transformed_sum = 0.0;
    unsigned nan_count = 0, negative_count = 0, zero_count = 0, negative_zero_count = 0;
    unsigned negative_infinity_count = 0, positive_infinity_count = 0;
    const Word *src = static_cast<const Word *>(d_data);
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * TileOf::kSize;
    for (uint64_t tile = static_cast<uint64_t>(blockIdx.x) * TileOf::kSize; tile < count; tile += stride) {
        Word word[TileOf::kItems];
        bool valid[TileOf::kItems];
        load_tile<Word>(src, count, tile, vector_ok != 0, word, valid);
#pragma unroll
        for (int i = 0; i < TileOf::kItems; ++i) {
            if (!valid[i])
                continue;
            const double x = value_of<Word>(word[i]);
            if (x != x) {
                ++nan_count;
                continue;
            }
            min_value = fmin(min_value, x);
            max_value = fmax(max_value, x);
            negative_count += x < 0.0;
            if (isinf(x)) {
                negative_infinity_count += x < 0.0;
                positive_infinity_count += x > 0.0;
                continue;
            }
            sum += x;
            if (kTransformed)
                transformed_sum += log_transform(x);
            zero_count += x == 0.0;
            negative_zero_count += (x == 0.0) & (signbit(x) != 0);
        }
    }
    uint64_t slots[kStatsSlots] = {double_to_bits(min_value), double_to_bits(max_value), double_to_bits(sum),
                                   double_to_bits(transformed_sum), nan_count, negative_count, zero_count,
                                   negative_zero_count, negative_infinity_count, positive_infinity_count};
    block_reduce_slots<kStatsSlots>(slots, ops, d_partials + static_cast<size_t>(blockIdx.x) * kStatsSlots);
}

/* One Kelley pass: at each point y, sum |u(x) - u(y)| over the finite x,
 * #(x < y), #(x == y), the largest x below y and the smallest above it. */
template <typename Word, int kPoints>
__global__ void __launch_bounds__(kThreads)
    cp_points_kernel(const void *__restrict__ d_data, uint64_t count, int vector_ok,
                     const __grid_constant__ PassPoints points, const __grid_constant__ SlotOps ops, uint64_t *__restrict__ d_partials)
{
    using TileOf = Tile<Word>;
    const double inf = __longlong_as_double(0x7ff0000000000000ll);
    double distance[kPoints], below_max[kPoints], above_min[kPoints];
    unsigned less[kPoints], equal[kPoints];
#pragma unroll
    for (int j = 0; j < kPoints; ++j) {
        distance[j] = 0.0;
        below_max[j] = -inf;
        above_min[j] = inf;
        less[j] = 0;
        equal[j] = 0;
    }
    const Word *src = static_cast<const Word *>(d_data);
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * TileOf::kSize;
    for (uint64_t tile = static_cast<uint64_t>(blockIdx.x) * TileOf::kSize; tile < count; tile += stride) {
        Word word[TileOf::kItems];
        bool valid[TileOf::kItems];
        load_tile<Word>(src, count, tile, vector_ok != 0, word, valid);
#pragma unroll
        for (int i = 0; i < TileOf::kItems; ++i) {
            if (!valid[i])
                continue;
            const double x = value_of<Word>(word[i]);
            const double u = points.log_transform ? log_transform(x) : x;
            const bool finite = !isinf(x);
#pragma unroll
            for (int j = 0; j < kPoints; ++j) {
                if (j < points.count) {
                    const bool lt = x < points.value[j];
                    const bool gt = x > points.value[j];
                    distance[j] += finite ? fabs(u - points.transformed[j]) : 0.0;
                    less[j] += lt;
                    equal[j] += !lt && !gt;
                    below_max[j] = lt ? fmax(below_max[j], x) : below_max[j];
                    above_min[j] = gt ? fmin(above_min[j], x) : above_min[j];
                }
            }
        }
    }
    uint64_t slots[kPoints * kPointSlots];
#pragma unroll
    for (int j = 0; j < kPoints; ++j) {
        slots[j * kPointSlots + 0] = double_to_bits(distance[j]);
        slots[j * kPointSlots + 1] = less[j];
        slots[j * kPointSlots + 2] = equal[j];
        slots[j * kPointSlots + 3] = double_to_bits(below_max[j]);
        slots[j * kPointSlots + 4] = double_to_bits(above_min[j]);
    }
    block_reduce_slots<kPoints * kPointSlots>(slots, ops,
                                              d_partials + static_cast<size_t>(blockIdx.x) * kPoints * kPointSlots);
}

/* copy_if: the keys of the elements inside the intervals (closed, in value;
 * ascending and disjoint), block-staged. */
template <typename Word>
__global__ void __launch_bounds__(kThreads)
    cp_copy_kernel(const void *__restrict__ d_data, uint64_t count, int vector_ok,
                   const double *__restrict__ d_intervals, int interval_count, Word *__restrict__ d_output,
                   unsigned long long *__restrict__ d_output_count, uint64_t capacity)
{
    using TileOf = Tile<Word>;
    __shared__ double s_lo[cutting_plane::kMaxIntervals];
    __shared__ double s_hi[cutting_plane::kMaxIntervals];
    __shared__ Word s_stage[Stage<Word>::kCapacity];
    __shared__ unsigned s_stage_count;
    __shared__ unsigned long long s_flush_base;
    for (int i = threadIdx.x; i < interval_count; i += blockDim.x) {
        s_lo[i] = d_intervals[2 * i];
        s_hi[i] = d_intervals[2 * i + 1];
    }
    if (threadIdx.x == 0)
        s_stage_count = 0;
    __syncthreads();
    int top = 1;
    while (top * 2 <= interval_count)
        top *= 2;
    const Word *src = static_cast<const Word *>(d_data);
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * TileOf::kSize;
    for (uint64_t tile = static_cast<uint64_t>(blockIdx.x) * TileOf::kSize; tile < count; tile += stride) {
        Word word[TileOf::kItems];
        bool valid[TileOf::kItems];
        load_tile<Word>(src, count, tile, vector_ok != 0, word, valid);
#pragma unroll
        for (int i = 0; i < TileOf::kItems; ++i) {
            const double x = value_of<Word>(word[i]);
            int position = -1;
            for (int step = top; step > 0; step >>= 1) {
                const int probe = position + step;
                if (probe < interval_count && s_lo[probe] <= x)
                    position = probe;
            }
            const bool inside = valid[i] && position >= 0 && x <= s_hi[position < 0 ? 0 : position];
            stage_append<Word>(inside, key_from_bits(word[i]), s_stage, &s_stage_count);
        }
        stage_maybe_flush<Word>(s_stage, &s_stage_count, &s_flush_base, d_output, d_output_count, capacity, false);
    }
    stage_maybe_flush<Word>(s_stage, &s_stage_count, &s_flush_base, d_output, d_output_count, capacity, true);
}

SlotOps stats_ops()
{
    SlotOps ops{};
    ops.count = kStatsSlots;
    const unsigned char layout[kStatsSlots] = {kMinDouble, kMaxDouble, kSumDouble, kSumDouble, kSumCount,
                                               kSumCount,  kSumCount,  kSumCount,  kSumCount,  kSumCount};
    std::copy(layout, layout + kStatsSlots, ops.op);
    return ops;
}

SlotOps point_ops(int points)
{
    SlotOps ops{};
    ops.count = points * kPointSlots;
    for (int j = 0; j < points; ++j) {
        ops.op[j * kPointSlots + 0] = kSumDouble;
        ops.op[j * kPointSlots + 1] = kSumCount;
        ops.op[j * kPointSlots + 2] = kSumCount;
        ops.op[j * kPointSlots + 3] = kMaxDouble;
        ops.op[j * kPointSlots + 4] = kMinDouble;
    }
    return ops;
}

class CuttingPlane {
public:
    CuttingPlane(Call &call, const void *d_data, int dtype, uint64_t count)
        : call_(call), d_data_(d_data), dtype_(dtype), count_(count),
          vector_ok_(reinterpret_cast<uintptr_t>(d_data) % 16 == 0 ? 1 : 0),
          grid_(static_cast<int>(std::max<uint64_t>(
              1, std::min<uint64_t>(call.state()->grid[kGridStream], (count + 1023) / 1024)))) {}

    bool run(const std::vector<uint64_t> &ranks, double *values);

private:
    bool reduce(const SlotOps &ops, void *result, size_t result_bytes);
    bool stats(bool transformed, Stats *stats);
    bool evaluate(const PassPoints &points, PointResult *results);
    bool copy_and_sort(const std::vector<Interval> &intervals, uint64_t expected,
                       const std::vector<uint64_t> &positions, std::vector<double> *values);

    Call &call_;
    const void *d_data_;
    int dtype_;
    uint64_t count_;
    int vector_ok_;
    int grid_;
};

/* After a kernel wrote per-block slots to the partials buffer: combines them
 * and copies the result to the host. */
bool CuttingPlane::reduce(const SlotOps &ops, void *result, size_t result_bytes)
{
    statgpu_cuda_state *state = call_.state();
    uint64_t *d_result = call_.control<uint64_t>(kSlotsOffset);
    uint64_t *h_result = call_.pinned<uint64_t>(kSlotsOffset);
    finalize_slots_kernel<<<1, kThreads, 0, call_.stream()>>>(static_cast<const uint64_t *>(state->partials.d_ptr),
                                                               grid_, ops, d_result);
    if (!call_.check(cudaGetLastError(), "launching the reduction") ||
        !call_.check(cudaMemcpyAsync(h_result, d_result, result_bytes, cudaMemcpyDeviceToHost, call_.stream()),
                     "copying a reduction from the GPU") ||
        !call_.check(cudaStreamSynchronize(call_.stream()), "running a cutting-plane pass"))
        return false;
    std::copy(reinterpret_cast<const char *>(h_result), reinterpret_cast<const char *>(h_result) + result_bytes,
              static_cast<char *>(result));
    return true;
}

bool CuttingPlane::stats(bool transformed, Stats *stats)
{
    const SlotOps ops = stats_ops();
    uint64_t *d_partials = static_cast<uint64_t *>(call_.state()->partials.d_ptr);
    cudaStream_t stream = call_.stream();
    const bool floats = dtype_ == STATGPU_CUDA_FLOAT32;
    if (floats && transformed)
        cp_stats_kernel<uint32_t, true><<<grid_, kThreads, 0, stream>>>(d_data_, count_, vector_ok_, ops, d_partials);
    else if (floats)
        cp_stats_kernel<uint32_t, false><<<grid_, kThreads, 0, stream>>>(d_data_, count_, vector_ok_, ops, d_partials);
    else if (transformed)
        cp_stats_kernel<uint64_t, true><<<grid_, kThreads, 0, stream>>>(d_data_, count_, vector_ok_, ops, d_partials);
    else
        cp_stats_kernel<uint64_t, false><<<grid_, kThreads, 0, stream>>>(d_data_, count_, vector_ok_, ops, d_partials);
    if (!call_.check(cudaGetLastError(), "launching the first reduction"))
        return false;
    return reduce(ops, stats, sizeof *stats);
}

template <typename Word, int kPoints>
void launch_points(int grid, cudaStream_t stream, const void *d_data, uint64_t count, int vector_ok,
                   const PassPoints &points, const SlotOps &ops, uint64_t *d_partials)
{
    cp_points_kernel<Word, kPoints><<<grid, kThreads, 0, stream>>>(d_data, count, vector_ok, points, ops, d_partials);
}

bool CuttingPlane::evaluate(const PassPoints &points, PointResult *results)
{
    const int width = points.count <= 1 ? 1 : points.count <= 4 ? 4 : cutting_plane::kMaxPoints;
    const SlotOps ops = point_ops(width);
    uint64_t *d_partials = static_cast<uint64_t *>(call_.state()->partials.d_ptr);
    cudaStream_t stream = call_.stream();
    const bool floats = dtype_ == STATGPU_CUDA_FLOAT32;
    if (width == 1)
        floats ? launch_points<uint32_t, 1>(grid_, stream, d_data_, count_, vector_ok_, points, ops, d_partials)
               : launch_points<uint64_t, 1>(grid_, stream, d_data_, count_, vector_ok_, points, ops, d_partials);
    else if (width == 4)
        floats ? launch_points<uint32_t, 4>(grid_, stream, d_data_, count_, vector_ok_, points, ops, d_partials)
               : launch_points<uint64_t, 4>(grid_, stream, d_data_, count_, vector_ok_, points, ops, d_partials);
    else
        floats ? launch_points<uint32_t, 16>(grid_, stream, d_data_, count_, vector_ok_, points, ops, d_partials)
               : launch_points<uint64_t, 16>(grid_, stream, d_data_, count_, vector_ok_, points, ops, d_partials);
    if (!call_.check(cudaGetLastError(), "launching a cutting-plane pass"))
        return false;
    PointResult all[cutting_plane::kMaxPoints];
    if (!reduce(ops, all, static_cast<size_t>(width) * sizeof(PointResult)))
        return false;
    std::copy(all, all + points.count, results);
    return true;
}

bool CuttingPlane::copy_and_sort(const std::vector<Interval> &intervals, uint64_t expected,
                                 const std::vector<uint64_t> &positions, std::vector<double> *values)
{
    statgpu_cuda_state *state = call_.state();
    cudaStream_t stream = call_.stream();
    const bool floats = dtype_ == STATGPU_CUDA_FLOAT32;
    const size_t key_bytes = floats ? sizeof(uint32_t) : sizeof(uint64_t);
    const uint64_t capacity = std::max<uint64_t>(expected, 1);
    if (!call_.ensure(&state->keys[0], capacity * key_bytes, "allocating the copied keys") ||
        !call_.ensure(&state->keys[1], capacity * key_bytes, "allocating the sorted keys"))
        return false;
    double *h_intervals = call_.pinned<double>(kIntervalsOffset);
    double *d_intervals = call_.control<double>(kIntervalsOffset);
    for (size_t i = 0; i < intervals.size(); ++i) {
        h_intervals[2 * i] = intervals[i].lo;
        h_intervals[2 * i + 1] = intervals[i].hi;
    }
    unsigned long long *d_copied = call_.control<unsigned long long>(kCounterOffset);
    unsigned long long *h_copied = call_.pinned<unsigned long long>(kCounterOffset);
    if (!call_.check(cudaMemcpyAsync(d_intervals, h_intervals, intervals.size() * 2 * sizeof(double),
                                     cudaMemcpyHostToDevice, stream),
                     "copying the intervals to the GPU") ||
        !call_.check(cudaMemsetAsync(d_copied, 0, sizeof *d_copied, stream), "clearing the copy counter"))
        return false;
    const int interval_count = static_cast<int>(intervals.size());
    if (floats)
        cp_copy_kernel<uint32_t><<<grid_, kThreads, 0, stream>>>(d_data_, count_, vector_ok_, d_intervals, interval_count,
                                                                static_cast<uint32_t *>(state->keys[0].d_ptr), d_copied,
                                                                capacity);
    else
        cp_copy_kernel<uint64_t><<<grid_, kThreads, 0, stream>>>(d_data_, count_, vector_ok_, d_intervals, interval_count,
                                                                static_cast<uint64_t *>(state->keys[0].d_ptr), d_copied,
                                                                capacity);
    if (!call_.check(cudaGetLastError(), "launching the copy of the intervals") ||
        !call_.check(cudaMemcpyAsync(h_copied, d_copied, sizeof *h_copied, cudaMemcpyDeviceToHost, stream),
                     "copying the copy count from the GPU") ||
        !call_.check(cudaStreamSynchronize(stream), "copying the intervals"))
        return false;
    if (*h_copied != expected)
        return call_.fail(STATGPU_CUDA_ERROR, "cutting plane: counts that contradict each other (internal error)");

    /* The keys lie between those of the first interval's lower end and the
     * last one's upper end: the sort skips the high bits they share. */
    const double lo = intervals.front().lo == 0.0 ? -0.0 : intervals.front().lo;
    const double hi = intervals.back().hi == 0.0 ? 0.0 : intervals.back().hi;
    const uint64_t key_lo = floats ? total_order_key(static_cast<float>(lo)) : total_order_key(lo);
    const uint64_t key_hi = floats ? total_order_key(static_cast<float>(hi)) : total_order_key(hi);
    const int end_bit = std::max(1, bit_length(key_lo ^ key_hi));
    if (!sort_keys(call_, expected, floats, end_bit))
        return false;
    values->assign(positions.size(), 0.0);
    return gather_sorted(call_, state->keys[1].d_ptr, floats ? 32u : 64u, positions, values->data());
}

bool CuttingPlane::run(const std::vector<uint64_t> &ranks, double *values)
{
    const size_t slots = static_cast<size_t>(grid_) * cutting_plane::kMaxPoints * kPointSlots;
    if (!call_.ensure(&call_.state()->partials, slots * sizeof(uint64_t), "allocating the reduction workspace"))
        return false;
    cutting_plane::Planner planner;
    planner.reset(count_, ranks.data(), ranks.size());
    Stats first{};
    if (!stats(false, &first))
        return false;
    if (first.nan_count == 0 && cutting_plane::needs_log_transform(first) && !stats(true, &first))
        return false;
    cutting_plane::Status status = planner.absorb_stats(first);
    PassPoints points;
    PointResult results[cutting_plane::kMaxPoints];
    while (status == cutting_plane::Status::kOk && planner.plan_pass(&points)) {
        if (!evaluate(points, results))
            return false;
        status = planner.absorb_pass(results);
    }
    if (status == cutting_plane::Status::kNanInData)
        return call_.fail(STATGPU_CUDA_NAN_IN_DATA, "the data hold a NaN");
    if (status != cutting_plane::Status::kOk)
        return call_.fail(STATGPU_CUDA_ERROR, "cutting plane: counts that contradict each other (internal error)");
    std::vector<Interval> intervals;
    std::vector<uint64_t> positions;
    uint64_t expected = 0;
    if (planner.plan_copy(&intervals, &expected, &positions)) {
        std::vector<double> sorted_values;
        if (!copy_and_sort(intervals, expected, positions, &sorted_values))
            return false;
        planner.absorb_sorted(sorted_values.data());
    }
    if (!planner.resolved())
        return call_.fail(STATGPU_CUDA_ERROR, "cutting plane: ranks left unresolved (internal error)");
    planner.write_results(values);
    return true;
}

} /* namespace */

bool select_cutting_plane(Call &call, const void *d_data, int dtype, uint64_t count,
                          const std::vector<uint64_t> &ranks, double *values)
{
    CuttingPlane method(call, d_data, dtype, count);
    return method.run(ranks, values);
}

cudaError_t prepare_cutting_plane(statgpu_cuda_state *state)
{
    int blocks = 0;
    cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, reinterpret_cast<const void *>(&cp_stats_kernel<uint64_t, true>), kThreads, 0);
    if (error != cudaSuccess)
        return error;
    state->grid[kGridStream] = std::max(1, blocks) * state->multiprocessor_count;
    return cudaSuccess;
}

} /* namespace statgpu_cuda */
