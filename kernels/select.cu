/*
 * select.cu: exact order statistics on the GPU, the cutting-plane hybrid of
 * Beliakov (2011) described in select_plan.h. This file holds the device side
 * (the counting pass, the sample, the sorts) and the host loop that runs a
 * SelectionPlanner against it.
 *
 * One call: copy the data in (host entry only); sort a regular sample of 2048
 * elements in one block; one fused pass over all data computes min, max, sum,
 * the NaN and signed-zero counts, the counts and partial sums at the probes,
 * and copies the elements of a window around each rank to a small buffer;
 * later passes read only that buffer and narrow each rank to a group of at
 * most 2048 elements, whose total-order keys are radix sorted so the answer is
 * read off exactly. All work is on the state's stream; each pass ends with one
 * small copy back and a synchronisation, because the next probes depend on it.
 */
#include "cuda_state.h"
#include "select_plan.h"
#include "total_order.h"

#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstddef>
#include <new>
#include <vector>

namespace statgpu_cuda {

namespace {

constexpr int kPassThreads = 256;
constexpr int kPassWarps = kPassThreads / 32;
constexpr int kItemsPerThread = 4;  /* two 16-byte loads in flight per thread */
constexpr int kTileItems = kPassThreads * kItemsPerThread;
/* Elements staged in shared memory before a block copies them out in one
 * burst: one global atomic per burst instead of one per warp. */
constexpr int kStageCapacity = 2 * kTileItems;

constexpr int kSampleThreads = 256;
constexpr int kSampleItemsPerThread = kSampleCount / kSampleThreads;
static_assert(kSampleThreads * kSampleItemsPerThread == kSampleCount, "sample shape");
/* Final groups up to this size are sorted by one block. */
constexpr uint64_t kBlockSortCapacity = kSampleCount;
static_assert(kReadyCount <= kBlockSortCapacity, "a ready group fits one block sort");

/* A PassResult is a flat array of 8-byte slots, reduced slot by slot. */
constexpr int kStatsSlots = 7;
constexpr int kSlotsPerProbe = 4;
constexpr int kResultSlots = kStatsSlots + kSlotsPerProbe * kMaxProbes + 1;
static_assert(sizeof(PassResult) == kResultSlots * sizeof(uint64_t), "PassResult is flat slots");
static_assert(offsetof(PassResult, probe) == kStatsSlots * sizeof(uint64_t), "stats slots");
static_assert(sizeof(ProbeResult) == kSlotsPerProbe * sizeof(uint64_t), "probe slots");

/* Layout of the state's small buffer and of its pinned mirror. */
constexpr size_t kSmallResultOffset = 0;
constexpr size_t kSmallCounterOffset = 1024;
constexpr size_t kSmallSampleOffset = 2048;
constexpr size_t kSmallBytes = kSmallSampleOffset + kSampleCount * sizeof(uint64_t);
static_assert(sizeof(PassResult) <= kSmallCounterOffset, "small buffer layout");

enum SlotOp { kOpMin, kOpMax, kOpSumDouble, kOpSumCount };

__host__ __device__ inline SlotOp slot_op(int slot)
{
    if (slot < kStatsSlots)
        return slot == 0 ? kOpMin : slot == 1 ? kOpMax : slot == 2 ? kOpSumDouble : kOpSumCount;
    if (slot == kResultSlots - 1)
        return kOpSumCount;
    switch ((slot - kStatsSlots) % kSlotsPerProbe) {
    case 0: return kOpSumCount;
    case 1: return kOpSumDouble;
    case 2: return kOpMax;
    default: return kOpMin;
    }
}

__device__ inline double device_infinity() { return __longlong_as_double(0x7ff0000000000000ll); }

__device__ inline uint64_t slot_identity(SlotOp op)
{
    switch (op) {
    case kOpMin: return double_to_bits(device_infinity());
    case kOpMax: return double_to_bits(-device_infinity());
    default: return 0;
    }
}

template <SlotOp kOp>
__device__ __forceinline__ uint64_t combine_slot(uint64_t a, uint64_t b)
{
    if constexpr (kOp == kOpMin)
        return double_to_bits(fmin(bits_to_double(a), bits_to_double(b)));
    else if constexpr (kOp == kOpMax)
        return double_to_bits(fmax(bits_to_double(a), bits_to_double(b)));
    else if constexpr (kOp == kOpSumDouble)
        return double_to_bits(bits_to_double(a) + bits_to_double(b));
    else
        return a + b;
}

__device__ inline uint64_t combine_slot(SlotOp op, uint64_t a, uint64_t b)
{
    switch (op) {
    case kOpMin: return combine_slot<kOpMin>(a, b);
    case kOpMax: return combine_slot<kOpMax>(a, b);
    case kOpSumDouble: return combine_slot<kOpSumDouble>(a, b);
    default: return combine_slot<kOpSumCount>(a, b);
    }
}

/* Fixed shuffle tree: the same data on the same grid gives the same bits. */
template <SlotOp kOp>
__device__ __forceinline__ uint64_t warp_reduce_slot(uint64_t value)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        value = combine_slot<kOp>(value, __shfl_down_sync(0xffffffffu, value, offset));
    return value;
}

/* Reserves room for this warp's wanted elements in the block's stage. */
__device__ __forceinline__ void stage_element(bool want, uint64_t bits, uint64_t *s_stage,
                                              unsigned int *s_stage_count)
{
    const unsigned int mask = __ballot_sync(0xffffffffu, want);
    if (mask == 0)
        return;
    const unsigned int lane = threadIdx.x & 31u;
    const int leader = __ffs(static_cast<int>(mask)) - 1;
    unsigned int base = 0;
    if (static_cast<int>(lane) == leader)
        base = atomicAdd(s_stage_count, static_cast<unsigned int>(__popc(mask)));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (want)
        s_stage[base + __popc(mask & ((1u << lane) - 1u))] = bits;
}

/* Called by the whole block, after a barrier. Elements past the capacity are
 * counted but not written: the host sees the overflow in the count. */
__device__ void flush_stage(uint64_t *s_stage, unsigned int *s_stage_count,
                            unsigned long long *s_flush_base, uint64_t *d_output,
                            unsigned long long *d_output_count, uint64_t capacity)
{
    const unsigned int count = *s_stage_count;
    if (threadIdx.x == 0)
        *s_flush_base = atomicAdd(d_output_count, static_cast<unsigned long long>(count));
    __syncthreads();
    const unsigned long long base = *s_flush_base;
    for (unsigned int i = threadIdx.x; i < count; i += blockDim.x)
        if (base + i < capacity)
            d_output[base + i] = s_stage[i];
    __syncthreads();
    if (threadIdx.x == 0)
        *s_stage_count = 0;
    __syncthreads();
}

/*
 * One pass over d_source. Every element: the global statistics (first pass
 * only), then for each probe of the element's group: #(x < p), the sum of those
 * x, and (later passes) the largest x < p and the smallest x >= p, which make
 * the next groups' bounds actual elements. Elements inside a window are copied
 * out. Each block writes its reduced slots to d_partials; finalize_pass_kernel
 * combines them.
 *
 * The first pass has one group, all data, so it skips the group search and the
 * extremes (they cost as much as the rest, on every element).
 */
template <int kProbeCapacity, bool kFirstPass>
__global__ void __launch_bounds__(kPassThreads)
    pass_kernel(const double *__restrict__ d_source, uint64_t source_count, int vector_loads,
                const __grid_constant__ PassDesc desc, uint64_t *__restrict__ d_partials,
                uint64_t *__restrict__ d_output, unsigned long long *__restrict__ d_output_count)
{
    __shared__ uint64_t s_stage[kStageCapacity];
    __shared__ unsigned int s_stage_count;
    __shared__ unsigned long long s_flush_base;
    __shared__ uint64_t s_slots[kPassWarps][kResultSlots];

    const double inf = device_infinity();
    double min_value = inf, max_value = -inf, sum = 0.0;
    unsigned int nan_count = 0, negative_count = 0, negative_zero_count = 0, zero_count = 0;
    unsigned int less_count[kProbeCapacity];
    double less_sum[kProbeCapacity];
    double below_max[kProbeCapacity];
    double above_min[kProbeCapacity];
#pragma unroll
    for (int j = 0; j < kProbeCapacity; ++j) {
        less_count[j] = 0;
        less_sum[j] = 0.0;
        below_max[j] = -inf;
        above_min[j] = inf;
    }

    const bool output = desc.output_kind != kOutputNone;
    const bool output_keys = desc.output_kind == kOutputKeys;
    if (threadIdx.x == 0)
        s_stage_count = 0;
    __syncthreads();

    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * kTileItems;
    for (uint64_t tile = static_cast<uint64_t>(blockIdx.x) * kTileItems; tile < source_count; tile += stride) {
        double x[kItemsPerThread];
        bool valid[kItemsPerThread];
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const uint64_t e = tile + static_cast<uint64_t>(half) * (kPassThreads * 2) + 2u * threadIdx.x;
            double first = 0.0, second = 0.0;
            if (e + 1 < source_count) {
                if (vector_loads) {
                    const double2 pair = __ldg(reinterpret_cast<const double2 *>(d_source + e));
                    first = pair.x;
                    second = pair.y;
                } else {
                    first = d_source[e];
                    second = d_source[e + 1];
                }
            } else if (e < source_count) {
                first = d_source[e];
            }
            x[2 * half] = first;
            x[2 * half + 1] = second;
            valid[2 * half] = e < source_count;
            valid[2 * half + 1] = e + 1 < source_count;
        }

#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {
            if (!valid[i])
                continue;
            const double v = x[i];
            int group = 0;
            if (kFirstPass) {
                min_value = fmin(min_value, v);  /* fmin and fmax skip NaNs; they are counted */
                max_value = fmax(max_value, v);
                sum += v;
                nan_count += v != v;
                negative_count += v < 0.0;
                zero_count += v == 0.0;
                negative_zero_count += (v == 0.0) & (signbit(v) != 0);
            } else {
                group = -1;
                for (int g = 0; g < desc.group_count; ++g)
                    if (v >= desc.group_lo[g] && v <= desc.group_hi[g])
                        group = g;
            }
            if (group < 0)
                continue;
#pragma unroll
            for (int j = 0; j < kProbeCapacity; ++j) {
                if (j < desc.probe_count) {
                    const bool member = kFirstPass || desc.probe_group[j] == group;
                    const bool less = member && v < desc.probe[j];
                    less_count[j] += less;
                    less_sum[j] += less ? v : 0.0;
                    if (!kFirstPass) {
                        below_max[j] = less ? fmax(below_max[j], v) : below_max[j];
                        above_min[j] = (member && !less) ? fmin(above_min[j], v) : above_min[j];
                    }
                }
            }
        }

        if (output) {
#pragma unroll
            for (int i = 0; i < kItemsPerThread; ++i) {
                bool want = false;
                if (valid[i])
                    for (int w = 0; w < desc.window_count; ++w)
                        want |= (x[i] >= desc.window_lo[w]) & (x[i] <= desc.window_hi[w]);
                stage_element(want, output_keys ? total_order_key(x[i]) : double_to_bits(x[i]),
                              s_stage, &s_stage_count);
            }
            __syncthreads();
            if (s_stage_count > kStageCapacity - kTileItems)
                flush_stage(s_stage, &s_stage_count, &s_flush_base, d_output, d_output_count,
                            desc.output_capacity);
        }
    }
    if (output) {
        __syncthreads();
        if (s_stage_count > 0)
            flush_stage(s_stage, &s_stage_count, &s_flush_base, d_output, d_output_count,
                        desc.output_capacity);
    }

    /* Block reduction: a shuffle tree in each warp, then one thread per slot
     * over the warps, both in a fixed order. */
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    if (kFirstPass) {
        const uint64_t r0 = warp_reduce_slot<kOpMin>(double_to_bits(min_value));
        const uint64_t r1 = warp_reduce_slot<kOpMax>(double_to_bits(max_value));
        const uint64_t r2 = warp_reduce_slot<kOpSumDouble>(double_to_bits(sum));
        const uint64_t r3 = warp_reduce_slot<kOpSumCount>(nan_count);
        const uint64_t r4 = warp_reduce_slot<kOpSumCount>(negative_count);
        const uint64_t r5 = warp_reduce_slot<kOpSumCount>(negative_zero_count);
        const uint64_t r6 = warp_reduce_slot<kOpSumCount>(zero_count);
        if (lane == 0) {
            s_slots[warp][0] = r0;
            s_slots[warp][1] = r1;
            s_slots[warp][2] = r2;
            s_slots[warp][3] = r3;
            s_slots[warp][4] = r4;
            s_slots[warp][5] = r5;
            s_slots[warp][6] = r6;
        }
    }
#pragma unroll
    for (int j = 0; j < kProbeCapacity; ++j) {
        const int slot = kStatsSlots + j * kSlotsPerProbe;
        const uint64_t count = warp_reduce_slot<kOpSumCount>(less_count[j]);
        const uint64_t partial_sum = warp_reduce_slot<kOpSumDouble>(double_to_bits(less_sum[j]));
        if (lane == 0) {
            s_slots[warp][slot] = count;
            s_slots[warp][slot + 1] = partial_sum;
        }
        if (!kFirstPass) {
            const uint64_t below = warp_reduce_slot<kOpMax>(double_to_bits(below_max[j]));
            const uint64_t above = warp_reduce_slot<kOpMin>(double_to_bits(above_min[j]));
            if (lane == 0) {
                s_slots[warp][slot + 2] = below;
                s_slots[warp][slot + 3] = above;
            }
        }
    }
    __syncthreads();
    uint64_t *d_partial = d_partials + static_cast<size_t>(blockIdx.x) * kResultSlots;
    for (int slot = threadIdx.x; slot < kResultSlots; slot += blockDim.x) {
        const SlotOp op = slot_op(slot);
        bool computed;
        if (slot < kStatsSlots)
            computed = kFirstPass;
        else if (slot < kStatsSlots + kSlotsPerProbe * kProbeCapacity)
            computed = !kFirstPass || (slot - kStatsSlots) % kSlotsPerProbe < 2;
        else
            computed = false;
        uint64_t value = slot_identity(op);
        if (computed)
            for (int w = 0; w < kPassWarps; ++w)
                value = combine_slot(op, value, s_slots[w][slot]);
        d_partial[slot] = value;
    }
}

/* Combines the blocks' slots: one warp per slot, lanes over blocks in a fixed
 * order, so the result does not depend on which block finished first. */
__global__ void __launch_bounds__(kPassThreads)
    finalize_pass_kernel(const uint64_t *__restrict__ d_partials, int partial_count,
                         const unsigned long long *__restrict__ d_output_count, int has_output,
                         uint64_t *__restrict__ d_result)
{
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    for (int slot = warp; slot < kResultSlots - 1; slot += kPassWarps) {
        const SlotOp op = slot_op(slot);
        uint64_t value = slot_identity(op);
        for (int b = lane; b < partial_count; b += 32)
            value = combine_slot(op, value, d_partials[static_cast<size_t>(b) * kResultSlots + slot]);
        for (int offset = 16; offset > 0; offset >>= 1)
            value = combine_slot(op, value, __shfl_down_sync(0xffffffffu, value, offset));
        if (lane == 0)
            d_result[slot] = value;
    }
    if (threadIdx.x == 0)
        d_result[kResultSlots - 1] = has_output ? *d_output_count : 0;
}

/* Keys of a regular sample, d_source[i * count / 2048], sorted in one block. */
__global__ void __launch_bounds__(kSampleThreads)
    sample_kernel(const double *__restrict__ d_source, uint64_t source_count,
                  uint64_t *__restrict__ d_sample_keys)
{
    using BlockSort = cub::BlockRadixSort<uint64_t, kSampleThreads, kSampleItemsPerThread>;
    __shared__ typename BlockSort::TempStorage temp;
    uint64_t keys[kSampleItemsPerThread];
#pragma unroll
    for (int i = 0; i < kSampleItemsPerThread; ++i) {
        const uint64_t index = static_cast<uint64_t>(threadIdx.x) * kSampleItemsPerThread + i;
        keys[i] = total_order_key(d_source[index * source_count / kSampleCount]);
    }
    BlockSort(temp).Sort(keys);
#pragma unroll
    for (int i = 0; i < kSampleItemsPerThread; ++i)
        d_sample_keys[threadIdx.x * kSampleItemsPerThread + i] = keys[i];
}

/* Sorts up to 2048 keys in one block: one launch instead of a device-wide
 * radix sort's several. Padding keys (all ones) sort after every real key. */
__global__ void __launch_bounds__(kSampleThreads)
    block_sort_kernel(const uint64_t *__restrict__ d_keys_in, uint64_t count,
                      uint64_t *__restrict__ d_keys_out)
{
    using BlockSort = cub::BlockRadixSort<uint64_t, kSampleThreads, kSampleItemsPerThread>;
    __shared__ typename BlockSort::TempStorage temp;
    uint64_t keys[kSampleItemsPerThread];
#pragma unroll
    for (int i = 0; i < kSampleItemsPerThread; ++i) {
        const uint64_t index = static_cast<uint64_t>(threadIdx.x) * kSampleItemsPerThread + i;
        keys[i] = index < count ? d_keys_in[index] : ~uint64_t{0};
    }
    BlockSort(temp).Sort(keys);
#pragma unroll
    for (int i = 0; i < kSampleItemsPerThread; ++i) {
        const uint64_t index = static_cast<uint64_t>(threadIdx.x) * kSampleItemsPerThread + i;
        if (index < count)
            d_keys_out[index] = keys[i];
    }
}

__global__ void gather_kernel(const uint64_t *__restrict__ d_sorted_keys,
                              const uint64_t *__restrict__ d_positions, size_t count,
                              double *__restrict__ d_values)
{
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count)
        d_values[i] = total_order_value(d_sorted_keys[d_positions[i]]);
}

template <typename T>
T *as(const DeviceBuffer &buffer) { return static_cast<T *>(buffer.d_ptr); }

template <typename T>
T *small_at(const statgpu_cuda_state *state, size_t offset)
{
    return reinterpret_cast<T *>(static_cast<char *>(state->small.d_ptr) + offset);
}

template <typename T>
T *pinned_at(const statgpu_cuda_state *state, size_t offset)
{
    return reinterpret_cast<T *>(static_cast<char *>(state->h_pinned) + offset);
}

int pass_grid_limit(const statgpu_cuda_state *state)
{
    return std::max({state->pass_grid[kPassFirst8], state->pass_grid[kPassFirst16],
                     state->pass_grid[kPassLater16]});
}

/* One selection call: the planner, the state and where failures are reported. */
class Selection {
public:
    Selection(statgpu_cuda_state *state, char *msg, size_t msg_bytes)
        : state_(state), msg_(msg), msg_bytes_(msg_bytes) {}

    statgpu_cuda_status run(const double *d_data, uint64_t count, const size_t *ranks,
                            size_t rank_count, double *results);

private:
    bool check(cudaError_t error, const char *what)
    {
        if (error == cudaSuccess)
            return true;
        status_ = report_cuda_error(error, what, msg_, msg_bytes_);
        return false;
    }
    bool fail(statgpu_cuda_status status, const char *text)
    {
        status_ = status;
        write_message(msg_, msg_bytes_, "%s", text);
        return false;
    }
    bool plan_ok(PlanStatus status)
    {
        if (status == PlanStatus::kOk)
            return true;
        if (status == PlanStatus::kNanInData)
            return fail(STATGPU_CUDA_NAN_IN_DATA, "the data hold a NaN");
        return fail(STATGPU_CUDA_ERROR, "GPU selection: counts that contradict each other (internal error)");
    }
    bool ensure(DeviceBuffer *buffer, uint64_t bytes, const char *what)
    {
        return check(ensure_device_buffer(buffer, static_cast<size_t>(bytes)), what);
    }

    bool run_pass(bool first, const double *d_source, uint64_t source_count, const PassDesc &desc,
                  uint64_t *d_output, PassResult *result);
    bool sort_keys(const uint64_t *d_keys, uint64_t count, uint64_t key_min, uint64_t key_max,
                   const uint64_t **d_sorted);
    bool gather(const uint64_t *d_sorted, const std::vector<uint64_t> &positions,
                std::vector<double> *values);
    bool sort_all(const double *d_data, uint64_t count, const size_t *ranks, size_t rank_count,
                  double *results);
    bool probe_and_sort(const double *d_data, uint64_t count, double *results);

    statgpu_cuda_state *state_;
    char *msg_;
    size_t msg_bytes_;
    statgpu_cuda_status status_ = STATGPU_CUDA_OK;
    SelectionPlanner planner_;
};

bool Selection::run_pass(bool first, const double *d_source, uint64_t source_count,
                         const PassDesc &desc, uint64_t *d_output, PassResult *result)
{
    const PassVariant variant = !first ? kPassLater16
                              : desc.probe_count <= 8 ? kPassFirst8 : kPassFirst16;
    const uint64_t tiles = (source_count + kTileItems - 1) / kTileItems;
    const int grid = static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(tiles, state_->pass_grid[variant])));
    const int vector_loads = reinterpret_cast<uintptr_t>(d_source) % sizeof(double2) == 0;
    unsigned long long *d_output_count = small_at<unsigned long long>(state_, kSmallCounterOffset);
    uint64_t *d_result = small_at<uint64_t>(state_, kSmallResultOffset);
    uint64_t *d_partials = as<uint64_t>(state_->partials);
    cudaStream_t stream = state_->stream;
    const bool has_output = desc.output_kind != kOutputNone;

    if (has_output && !check(cudaMemsetAsync(d_output_count, 0, sizeof(unsigned long long), stream),
                             "clearing the output counter"))
        return false;
    switch (variant) {
    case kPassFirst8:
        pass_kernel<8, true><<<grid, kPassThreads, 0, stream>>>(d_source, source_count, vector_loads, desc,
                                                               d_partials, d_output, d_output_count);
        break;
    case kPassFirst16:
        pass_kernel<16, true><<<grid, kPassThreads, 0, stream>>>(d_source, source_count, vector_loads, desc,
                                                                d_partials, d_output, d_output_count);
        break;
    default:
        pass_kernel<16, false><<<grid, kPassThreads, 0, stream>>>(d_source, source_count, vector_loads, desc,
                                                                 d_partials, d_output, d_output_count);
        break;
    }
    if (!check(cudaGetLastError(), "launching a selection pass"))
        return false;
    finalize_pass_kernel<<<1, kPassThreads, 0, stream>>>(d_partials, grid, d_output_count,
                                                         has_output ? 1 : 0, d_result);
    if (!check(cudaGetLastError(), "launching the pass reduction"))
        return false;
    PassResult *h_result = pinned_at<PassResult>(state_, kSmallResultOffset);
    if (!check(cudaMemcpyAsync(h_result, d_result, sizeof(PassResult), cudaMemcpyDeviceToHost, stream),
               "copying a pass result from the GPU"))
        return false;
    if (!check(cudaStreamSynchronize(stream), "running a selection pass"))
        return false;
    *result = *h_result;
    return true;
}

bool Selection::sort_keys(const uint64_t *d_keys, uint64_t count, uint64_t key_min, uint64_t key_max,
                          const uint64_t **d_sorted)
{
    if (count <= 1 || key_min == key_max) {  /* nothing to order */
        *d_sorted = d_keys;
        return true;
    }
    uint64_t *d_out = nullptr;
    if (!ensure(&state_->keys[1], count * sizeof(uint64_t), "allocating the sorted keys"))
        return false;
    d_out = as<uint64_t>(state_->keys[1]);
    if (count <= kBlockSortCapacity) {
        block_sort_kernel<<<1, kSampleThreads, 0, state_->stream>>>(d_keys, count, d_out);
        if (!check(cudaGetLastError(), "launching the block sort"))
            return false;
        *d_sorted = d_out;
        return true;
    }
    /* Keys between key_min and key_max share every bit above the highest bit
     * where those two differ, so the sort can skip those bits. */
    const int end_bit = 64 - __builtin_clzll(key_min ^ key_max);
    const unsigned long long items = count;
    size_t temp_bytes = 0;
    if (!check(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, d_keys, d_out, items, 0, end_bit,
                                              state_->stream),
               "sizing the radix sort"))
        return false;
    if (!ensure(&state_->cub_temp, temp_bytes, "allocating the radix sort's workspace"))
        return false;
    if (!check(cub::DeviceRadixSort::SortKeys(state_->cub_temp.d_ptr, temp_bytes, d_keys, d_out, items, 0,
                                              end_bit, state_->stream),
               "radix sorting the keys"))
        return false;
    *d_sorted = d_out;
    return true;
}

bool Selection::gather(const uint64_t *d_sorted, const std::vector<uint64_t> &positions,
                       std::vector<double> *values)
{
    const size_t count = positions.size();
    values->assign(count, 0.0);
    if (count == 0)
        return true;
    if (!ensure(&state_->gather, count * (sizeof(uint64_t) + sizeof(double)), "allocating the gather buffer"))
        return false;
    uint64_t *d_positions = as<uint64_t>(state_->gather);
    double *d_values = reinterpret_cast<double *>(d_positions + count);
    cudaStream_t stream = state_->stream;
    if (!check(cudaMemcpyAsync(d_positions, positions.data(), count * sizeof(uint64_t),
                               cudaMemcpyHostToDevice, stream),
               "copying the wanted positions to the GPU"))
        return false;
    const unsigned int blocks = static_cast<unsigned int>((count + 255) / 256);
    gather_kernel<<<blocks, 256, 0, stream>>>(d_sorted, d_positions, count, d_values);
    if (!check(cudaGetLastError(), "launching the gather"))
        return false;
    if (!check(cudaMemcpyAsync(values->data(), d_values, count * sizeof(double), cudaMemcpyDeviceToHost,
                               stream),
               "copying the selected values from the GPU"))
        return false;
    return check(cudaStreamSynchronize(stream), "selecting the values");
}

/* Many ranks, or few elements: one pass turns all data into keys, one sort,
 * one gather. */
bool Selection::sort_all(const double *d_data, uint64_t count, const size_t *ranks, size_t rank_count,
                         double *results)
{
    const double inf = __builtin_huge_val();
    PassDesc desc{};
    desc.group_count = 1;
    desc.window_count = 1;
    desc.window_lo[0] = -inf;
    desc.window_hi[0] = inf;
    desc.output_kind = kOutputKeys;
    desc.output_capacity = count;
    if (!ensure(&state_->keys[0], count * sizeof(uint64_t), "allocating the keys"))
        return false;
    PassResult result;
    if (!run_pass(true, d_data, count, desc, as<uint64_t>(state_->keys[0]), &result))
        return false;
    if (result.stats.nan_count > 0)
        return plan_ok(PlanStatus::kNanInData);
    if (result.output_count != count)
        return plan_ok(PlanStatus::kInconsistent);
    const double lo = result.stats.min, hi = result.stats.max;
    const uint64_t key_min = total_order_key(lo == 0.0 ? -0.0 : lo);
    const uint64_t key_max = total_order_key(hi == 0.0 ? 0.0 : hi);
    const uint64_t *d_sorted = nullptr;
    if (!sort_keys(as<uint64_t>(state_->keys[0]), count, key_min, key_max, &d_sorted))
        return false;
    std::vector<uint64_t> positions(rank_count);
    for (size_t i = 0; i < rank_count; ++i)
        positions[i] = ranks[i] - 1;
    std::vector<double> values;
    if (!gather(d_sorted, positions, &values))
        return false;
    std::copy(values.begin(), values.end(), results);
    return true;
}

bool Selection::probe_and_sort(const double *d_data, uint64_t count, double *results)
{
    cudaStream_t stream = state_->stream;
    uint64_t *d_sample = small_at<uint64_t>(state_, kSmallSampleOffset);
    uint64_t *h_sample = pinned_at<uint64_t>(state_, kSmallSampleOffset);
    sample_kernel<<<1, kSampleThreads, 0, stream>>>(d_data, count, d_sample);
    if (!check(cudaGetLastError(), "launching the sample"))
        return false;
    if (!check(cudaMemcpyAsync(h_sample, d_sample, kSampleCount * sizeof(uint64_t), cudaMemcpyDeviceToHost,
                               stream),
               "copying the sample from the GPU"))
        return false;
    if (!check(cudaStreamSynchronize(stream), "sampling the data"))
        return false;
    const double inf = __builtin_huge_val();
    const uint64_t lowest = total_order_key(-inf), highest = total_order_key(inf);
    std::vector<double> sample;
    sample.reserve(kSampleCount);
    for (int i = 0; i < kSampleCount; ++i)
        if (h_sample[i] >= lowest && h_sample[i] <= highest)  /* NaNs sort outside */
            sample.push_back(total_order_value(h_sample[i]));

    PassDesc desc;
    PassResult result;
    planner_.plan_first_pass(sample.data(), sample.size(), &desc);
    uint64_t *d_output = nullptr;
    if (desc.output_kind != kOutputNone) {
        if (!ensure(&state_->values[0], desc.output_capacity * sizeof(double), "allocating the window buffer"))
            return false;
        d_output = as<uint64_t>(state_->values[0]);
    }
    if (!run_pass(true, d_data, count, desc, d_output, &result))
        return false;
    bool output_usable = false;
    if (!plan_ok(planner_.absorb_first_pass(result, &output_usable)))
        return false;

    const double *d_source = d_data;
    uint64_t source_count = count;
    int source_buffer = -1;  /* -1: the data; else an index into state->values */
    if (output_usable) {
        d_source = as<double>(state_->values[0]);
        source_count = result.output_count;
        source_buffer = 0;
    }
    for (;;) {
        const SelectionPlanner::Next next = planner_.plan_next_pass(source_count, &desc);
        if (next == SelectionPlanner::Next::kDone)
            break;
        if (next == SelectionPlanner::Next::kFinalSort) {
            std::vector<uint64_t> positions;
            uint64_t key_count = 0, key_min = 0, key_max = 0;
            planner_.plan_final_sort(&desc, &positions, &key_count, &key_min, &key_max);
            for (uint64_t position : positions)
                if (position >= key_count)
                    return plan_ok(PlanStatus::kInconsistent);
            if (!ensure(&state_->keys[0], key_count * sizeof(uint64_t), "allocating the keys"))
                return false;
            if (!run_pass(false, d_source, source_count, desc, as<uint64_t>(state_->keys[0]), &result))
                return false;
            if (result.output_count != key_count)
                return plan_ok(PlanStatus::kInconsistent);
            const uint64_t *d_sorted = nullptr;
            if (!sort_keys(as<uint64_t>(state_->keys[0]), key_count, key_min, key_max, &d_sorted))
                return false;
            std::vector<double> values;
            if (!gather(d_sorted, positions, &values))
                return false;
            planner_.absorb_final_sort(values.data());
            break;
        }
        int target = -1;
        d_output = nullptr;
        if (desc.output_kind != kOutputNone) {
            target = source_buffer == 0 ? 1 : 0;
            if (!ensure(&state_->values[target], desc.output_capacity * sizeof(double),
                        "allocating the group buffer"))
                return false;
            d_output = as<uint64_t>(state_->values[target]);
        }
        if (!run_pass(false, d_source, source_count, desc, d_output, &result))
            return false;
        if (!plan_ok(planner_.absorb_pass(result)))
            return false;
        if (target >= 0) {
            d_source = as<double>(state_->values[target]);
            source_count = result.output_count;
            source_buffer = target;
        }
    }
    planner_.write_results(results);
    return true;
}

statgpu_cuda_status Selection::run(const double *d_data, uint64_t count, const size_t *ranks,
                                   size_t rank_count, double *results)
{
    planner_.reset(count, ranks, rank_count);
    const bool done = count <= kSortAllMaxCount || planner_.prefers_full_sort()
                        ? sort_all(d_data, count, ranks, rank_count, results)
                        : probe_and_sort(d_data, count, results);
    if (done)
        return STATGPU_CUDA_OK;
    return status_ == STATGPU_CUDA_OK ? STATGPU_CUDA_ERROR : status_;
}

statgpu_cuda_status validate(const statgpu_cuda_state *state, const void *data, size_t data_count,
                             const size_t *ranks, size_t rank_count, const double *results,
                             char *msg, size_t msg_bytes)
{
    if (state == nullptr || data == nullptr || ranks == nullptr || results == nullptr) {
        write_message(msg, msg_bytes, "select_ranks: a NULL pointer");
        return STATGPU_CUDA_INVALID_ARGUMENT;
    }
    if (data_count == 0 || rank_count == 0) {
        write_message(msg, msg_bytes, "select_ranks: no data or no ranks");
        return STATGPU_CUDA_INVALID_ARGUMENT;
    }
    for (size_t i = 0; i < rank_count; ++i) {
        if (ranks[i] < 1 || ranks[i] > data_count || (i > 0 && ranks[i] < ranks[i - 1])) {
            write_message(msg, msg_bytes, "select_ranks: ranks must ascend within [1, %zu]", data_count);
            return STATGPU_CUDA_INVALID_ARGUMENT;
        }
    }
    return STATGPU_CUDA_OK;
}

} /* namespace */

cudaError_t prepare_selection(statgpu_cuda_state *state)
{
    /* Also the first touch of the module's kernels: a device that none of the
     * embedded code can run on fails here, not in the middle of a call. */
    struct Variant { const void *kernel; PassVariant index; };
    const Variant variants[] = {
        {reinterpret_cast<const void *>(&pass_kernel<8, true>), kPassFirst8},
        {reinterpret_cast<const void *>(&pass_kernel<16, true>), kPassFirst16},
        {reinterpret_cast<const void *>(&pass_kernel<16, false>), kPassLater16},
    };
    for (const Variant &variant : variants) {
        int blocks_per_multiprocessor = 0;
        const cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks_per_multiprocessor, variant.kernel, kPassThreads, 0);
        if (error != cudaSuccess)
            return error;
        state->pass_grid[variant.index] = std::max(1, blocks_per_multiprocessor) * state->multiprocessor_count;
    }
    cudaError_t error = ensure_device_buffer(&state->partials, static_cast<size_t>(pass_grid_limit(state)) *
                                                                   kResultSlots * sizeof(uint64_t));
    if (error == cudaSuccess)
        error = ensure_device_buffer(&state->small, kSmallBytes);
    if (error == cudaSuccess)
        error = cudaMallocHost(&state->h_pinned, kSmallBytes);
    return error;
}

statgpu_cuda_status select_ranks_device(statgpu_cuda_state *state, const double *d_data, size_t data_count,
                                        const size_t *ranks, size_t rank_count, double *results,
                                        char *msg, size_t msg_bytes)
{
    statgpu_cuda_status status = validate(state, d_data, data_count, ranks, rank_count, results, msg, msg_bytes);
    if (status != STATGPU_CUDA_OK)
        return status;
    try {
        const cudaError_t error = cudaSetDevice(state->device);
        if (error != cudaSuccess)
            return report_cuda_error(error, "selecting the CUDA device", msg, msg_bytes);
        Selection selection(state, msg, msg_bytes);
        status = selection.run(d_data, data_count, ranks, rank_count, results);
    } catch (const std::bad_alloc &) {
        write_message(msg, msg_bytes, "GPU selection: out of host memory");
        return STATGPU_CUDA_OUT_OF_MEMORY;
    } catch (...) {
        write_message(msg, msg_bytes, "GPU selection: unexpected failure");
        return STATGPU_CUDA_ERROR;
    }
    if (status == STATGPU_CUDA_OK && msg_bytes > 0)
        msg[0] = '\0';
    return status;
}

statgpu_cuda_status select_ranks_host(statgpu_cuda_state *state, const double *h_data, size_t data_count,
                                      const size_t *ranks, size_t rank_count, double *results,
                                      char *msg, size_t msg_bytes)
{
    statgpu_cuda_status status = validate(state, h_data, data_count, ranks, rank_count, results, msg, msg_bytes);
    if (status != STATGPU_CUDA_OK)
        return status;
    cudaError_t error = cudaSetDevice(state->device);
    if (error != cudaSuccess)
        return report_cuda_error(error, "selecting the CUDA device", msg, msg_bytes);
    if (data_count > SIZE_MAX / sizeof(double)) {
        write_message(msg, msg_bytes, "select_ranks: too many elements");
        return STATGPU_CUDA_INVALID_ARGUMENT;
    }
    const size_t bytes = data_count * sizeof(double);
    error = ensure_device_buffer(&state->data, bytes);
    if (error != cudaSuccess)
        return report_cuda_error(error, "allocating GPU memory for the data", msg, msg_bytes);
    double *d_data = static_cast<double *>(state->data.d_ptr);
    error = cudaMemcpyAsync(d_data, h_data, bytes, cudaMemcpyHostToDevice, state->stream);
    if (error != cudaSuccess)
        return report_cuda_error(error, "copying the data to the GPU", msg, msg_bytes);
    return select_ranks_device(state, d_data, data_count, ranks, rank_count, results, msg, msg_bytes);
}

} /* namespace statgpu_cuda */
