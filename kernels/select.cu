/*
 * select.cu: the module's select_ranks: checks the call, copies host data to
 * the device on the state's stream, times the copy and the device work with
 * CUDA events, and runs the chosen method (select_plan.h). Here too: the
 * block sort of small arrays, the full-sort baseline (STATGPU_SELECT_SORT:
 * CUB's DeviceRadixSort of all keys, then a gather) and what the methods
 * share (the gather, the slot reduction).
 */
#include "device_common.cuh"
#include "select_plan.h"
#include "selection.h"

#include <cub/block/block_radix_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

namespace statgpu_cuda {

__global__ void __launch_bounds__(kThreads)
    finalize_slots_kernel(const uint64_t *__restrict__ d_partials, int block_count, const __grid_constant__ SlotOps ops,
                          uint64_t *__restrict__ d_result)
{
    const int warp = threadIdx.x >> 5;
    for (int slot = warp; slot < ops.count; slot += kWarps) {
        const unsigned char op = ops.op[slot];
        uint64_t value = slot_identity(op);
        for (int b = static_cast<int>(lane_id()); b < block_count; b += 32)
            value = slot_combine(op, value, d_partials[static_cast<size_t>(b) * ops.count + slot]);
        value = warp_reduce_slot(op, value);
        if (lane_id() == 0)
            d_result[slot] = value;
    }
}

namespace {

constexpr int kSmallThreads = 512;
constexpr int kSmallItems = 8;
static_assert(kSmallThreads * kSmallItems == kSmallCount, "one block sorts a small array");

/* Up to kSmallCount elements: key, count NaNs, sort in one block, read the
 * ranks off. */
template <typename Key>
__global__ void __launch_bounds__(kSmallThreads)
    small_select_kernel(const void *__restrict__ d_data, uint32_t count, const uint64_t *__restrict__ d_ranks,
                        uint32_t rank_count, Key *__restrict__ d_scratch, double *__restrict__ d_values,
                        unsigned long long *__restrict__ d_nan_count)
{
    using Sort = cub::BlockRadixSort<Key, kSmallThreads, kSmallItems>;
    __shared__ typename Sort::TempStorage temp;
    const Key *d_words = static_cast<const Key *>(d_data);
    Key keys[kSmallItems];
    bool nan = false;
#pragma unroll
    for (int i = 0; i < kSmallItems; ++i) {
        const uint32_t index = threadIdx.x * kSmallItems + i;
        keys[i] = index < count ? key_from_bits(d_words[index]) : ~Key{0};
        nan = nan || (index < count && key_is_nan(keys[i]));
    }
    const int nan_threads = __syncthreads_count(nan);
    Sort(temp).Sort(keys);
#pragma unroll
    for (int i = 0; i < kSmallItems; ++i)
        d_scratch[threadIdx.x * kSmallItems + i] = keys[i];
    __syncthreads();
    for (uint32_t r = threadIdx.x; r < rank_count; r += blockDim.x)
        d_values[r] = key_to_double(d_scratch[d_ranks[r] - 1], static_cast<uint32_t>(sizeof(Key) * 8));
    if (threadIdx.x == 0)
        *d_nan_count = static_cast<unsigned long long>(nan_threads);
}

/* The keys of all data, in place of the elements, and their NaN count. */
template <typename Key>
__global__ void __launch_bounds__(kThreads)
    keys_kernel(const void *__restrict__ d_data, uint64_t count, int vector_ok, Key *__restrict__ d_keys,
                unsigned long long *__restrict__ d_nan_count)
{
    using TileOf = Tile<Key>;
    constexpr int kPer = TileOf::kPerVector;
    union Vector { uint4 v; Key w[kPer]; };
    const Key *src = static_cast<const Key *>(d_data);
    unsigned nan_count = 0;
    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * TileOf::kSize;
    for (uint64_t tile = static_cast<uint64_t>(blockIdx.x) * TileOf::kSize; tile < count; tile += stride) {
        Key word[TileOf::kItems];
        bool valid[TileOf::kItems];
        load_tile<Key>(src, count, tile, vector_ok != 0, word, valid);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const uint64_t e = tile + static_cast<uint64_t>(half) * (kThreads * kPer) +
                               static_cast<uint64_t>(threadIdx.x) * kPer;
            Vector vector;
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                vector.w[i] = key_from_bits(word[half * kPer + i]);
                nan_count += (valid[half * kPer + i] && key_is_nan(vector.w[i])) ? 1u : 0u;
            }
            if (e + kPer <= count) {
                *reinterpret_cast<uint4 *>(d_keys + e) = vector.v;  /* d_keys is ours: aligned */
            } else {
#pragma unroll
                for (int i = 0; i < kPer; ++i)
                    if (e + i < count)
                        d_keys[e + i] = vector.w[i];
            }
        }
    }
    for (int offset = 16; offset > 0; offset >>= 1)
        nan_count += __shfl_down_sync(0xffffffffu, nan_count, offset);
    if (lane_id() == 0 && nan_count > 0)
        atomicAdd(d_nan_count, static_cast<unsigned long long>(nan_count));
}

template <typename Key>
__global__ void gather_kernel(const Key *__restrict__ d_sorted, const uint64_t *__restrict__ d_positions,
                              size_t count, double *__restrict__ d_values)
{
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count)
        d_values[i] = key_to_double(d_sorted[d_positions[i]], static_cast<uint32_t>(sizeof(Key) * 8));
}

int stream_grid(const statgpu_cuda_state *state, uint64_t count)
{
    return static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(state->grid[kGridStream], (count + 1023) / 1024)));
}

} /* namespace */

bool sort_keys(Call &call, unsigned long long items, bool floats, int end_bit)
{
    statgpu_cuda_state *state = call.state();
    cudaStream_t stream = call.stream();
    size_t temp_bytes = 0;
    cudaError_t error = floats
        ? cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, static_cast<const uint32_t *>(state->keys[0].d_ptr),
                                         static_cast<uint32_t *>(state->keys[1].d_ptr), items, 0, end_bit, stream)
        : cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, static_cast<const uint64_t *>(state->keys[0].d_ptr),
                                         static_cast<uint64_t *>(state->keys[1].d_ptr), items, 0, end_bit, stream);
    if (!call.check(error, "sizing the radix sort") ||
        !call.ensure(&state->cub_temp, temp_bytes, "allocating the radix sort's workspace"))
        return false;
    error = floats
        ? cub::DeviceRadixSort::SortKeys(state->cub_temp.d_ptr, temp_bytes,
                                         static_cast<const uint32_t *>(state->keys[0].d_ptr),
                                         static_cast<uint32_t *>(state->keys[1].d_ptr), items, 0, end_bit, stream)
        : cub::DeviceRadixSort::SortKeys(state->cub_temp.d_ptr, temp_bytes,
                                         static_cast<const uint64_t *>(state->keys[0].d_ptr),
                                         static_cast<uint64_t *>(state->keys[1].d_ptr), items, 0, end_bit, stream);
    return call.check(error, "radix sorting the keys");
}

bool gather_sorted(Call &call, const void *d_sorted, uint32_t key_bits, const std::vector<uint64_t> &positions,
                   double *values)
{
    const size_t count = positions.size();
    if (count == 0)
        return true;
    statgpu_cuda_state *state = call.state();
    cudaStream_t stream = call.stream();
    if (!call.ensure(&state->gather, count * (sizeof(uint64_t) + sizeof(double)), "allocating the gather buffer"))
        return false;
    uint64_t *d_positions = static_cast<uint64_t *>(state->gather.d_ptr);
    double *d_values = reinterpret_cast<double *>(d_positions + count);
    if (!call.check(cudaMemcpyAsync(d_positions, positions.data(), count * sizeof(uint64_t), cudaMemcpyHostToDevice,
                                    stream),
                    "copying the wanted positions to the GPU"))
        return false;
    const unsigned blocks = static_cast<unsigned>((count + 255) / 256);
    if (key_bits == 32)
        gather_kernel<uint32_t><<<blocks, 256, 0, stream>>>(static_cast<const uint32_t *>(d_sorted), d_positions,
                                                            count, d_values);
    else
        gather_kernel<uint64_t><<<blocks, 256, 0, stream>>>(static_cast<const uint64_t *>(d_sorted), d_positions,
                                                            count, d_values);
    return call.check(cudaGetLastError(), "launching the gather") &&
           call.check(cudaMemcpyAsync(values, d_values, count * sizeof(double), cudaMemcpyDeviceToHost, stream),
                      "copying the selected values from the GPU") &&
           call.check(cudaStreamSynchronize(stream), "selecting the values");
}

bool select_small(Call &call, const void *d_data, int dtype, uint64_t count, const std::vector<uint64_t> &ranks,
                  double *values)
{
    statgpu_cuda_state *state = call.state();
    cudaStream_t stream = call.stream();
    const size_t rank_count = ranks.size();  /* distinct, so at most count */
    const size_t bytes = rank_count * (sizeof(uint64_t) + sizeof(double)) + kSmallCount * sizeof(uint64_t);
    if (!call.ensure(&state->gather, bytes, "allocating the small-array workspace"))
        return false;
    uint64_t *d_ranks = static_cast<uint64_t *>(state->gather.d_ptr);
    double *d_values = reinterpret_cast<double *>(d_ranks + rank_count);
    void *d_scratch = d_values + rank_count;
    unsigned long long *d_nan = call.control<unsigned long long>(kCounterOffset);
    unsigned long long *h_nan = call.pinned<unsigned long long>(kCounterOffset);
    if (!call.check(cudaMemcpyAsync(d_ranks, ranks.data(), rank_count * sizeof(uint64_t), cudaMemcpyHostToDevice,
                                    stream),
                    "copying the ranks to the GPU"))
        return false;
    if (dtype == STATGPU_CUDA_FLOAT32)
        small_select_kernel<uint32_t><<<1, kSmallThreads, 0, stream>>>(d_data, static_cast<uint32_t>(count), d_ranks,
                                                                       static_cast<uint32_t>(rank_count),
                                                                       static_cast<uint32_t *>(d_scratch), d_values, d_nan);
    else
        small_select_kernel<uint64_t><<<1, kSmallThreads, 0, stream>>>(d_data, static_cast<uint32_t>(count), d_ranks,
                                                                       static_cast<uint32_t>(rank_count),
                                                                       static_cast<uint64_t *>(d_scratch), d_values, d_nan);
    if (!call.check(cudaGetLastError(), "launching the block sort") ||
        !call.check(cudaMemcpyAsync(values, d_values, rank_count * sizeof(double), cudaMemcpyDeviceToHost, stream),
                    "copying the selected values from the GPU") ||
        !call.check(cudaMemcpyAsync(h_nan, d_nan, sizeof *h_nan, cudaMemcpyDeviceToHost, stream),
                    "copying the NaN count from the GPU") ||
        !call.check(cudaStreamSynchronize(stream), "sorting a small array"))
        return false;
    if (*h_nan > 0)
        return call.fail(STATGPU_CUDA_NAN_IN_DATA, "the data hold a NaN");
    return true;
}

bool select_sort(Call &call, const void *d_data, int dtype, uint64_t count, const std::vector<uint64_t> &ranks,
                 double *values)
{
    statgpu_cuda_state *state = call.state();
    cudaStream_t stream = call.stream();
    const bool floats = dtype == STATGPU_CUDA_FLOAT32;
    const size_t key_bytes = floats ? sizeof(uint32_t) : sizeof(uint64_t);
    if (!call.ensure(&state->keys[0], count * key_bytes, "allocating the keys") ||
        !call.ensure(&state->keys[1], count * key_bytes, "allocating the sorted keys"))
        return false;
    unsigned long long *d_nan = call.control<unsigned long long>(kCounterOffset);
    unsigned long long *h_nan = call.pinned<unsigned long long>(kCounterOffset);
    if (!call.check(cudaMemsetAsync(d_nan, 0, sizeof *d_nan, stream), "clearing the NaN count"))
        return false;
    const int vector_ok = reinterpret_cast<uintptr_t>(d_data) % 16 == 0;
    const int grid = stream_grid(state, count);
    if (floats)
        keys_kernel<uint32_t><<<grid, kThreads, 0, stream>>>(d_data, count, vector_ok,
                                                             static_cast<uint32_t *>(state->keys[0].d_ptr), d_nan);
    else
        keys_kernel<uint64_t><<<grid, kThreads, 0, stream>>>(d_data, count, vector_ok,
                                                             static_cast<uint64_t *>(state->keys[0].d_ptr), d_nan);
    if (!call.check(cudaGetLastError(), "launching the key conversion"))
        return false;
    const int end_bit = floats ? 32 : 64;
    if (!sort_keys(call, count, floats, end_bit) ||
        !call.check(cudaMemcpyAsync(h_nan, d_nan, sizeof *h_nan, cudaMemcpyDeviceToHost, stream),
                    "copying the NaN count from the GPU"))
        return false;
    std::vector<uint64_t> positions(ranks.size());
    for (size_t i = 0; i < ranks.size(); ++i)
        positions[i] = ranks[i] - 1;
    if (!gather_sorted(call, state->keys[1].d_ptr, floats ? 32u : 64u, positions, values))
        return false;
    if (*h_nan > 0)
        return call.fail(STATGPU_CUDA_NAN_IN_DATA, "the data hold a NaN");
    return true;
}

cudaError_t prepare_selection(statgpu_cuda_state *state)
{
    cudaError_t error = prepare_radix(state);
    if (error == cudaSuccess)
        error = prepare_cutting_plane(state);
    if (error != cudaSuccess)
        return error;
    cudaFuncAttributes attributes;
    const void *kernels[] = {
        reinterpret_cast<const void *>(&small_select_kernel<uint64_t>),
        reinterpret_cast<const void *>(&small_select_kernel<uint32_t>),
        reinterpret_cast<const void *>(&keys_kernel<uint64_t>),
        reinterpret_cast<const void *>(&keys_kernel<uint32_t>),
        reinterpret_cast<const void *>(&finalize_slots_kernel),
    };
    for (const void *kernel : kernels) {
        error = cudaFuncGetAttributes(&attributes, kernel);
        if (error != cudaSuccess)
            return error;
    }
    error = ensure_device_buffer(&state->control, kControlBytes);
    if (error == cudaSuccess)
        error = cudaMallocHost(&state->h_pinned, kControlBytes);
    if (error != cudaSuccess)
        state->h_pinned = nullptr;
    for (int e = 0; e < kEventCount && error == cudaSuccess; ++e)
        error = cudaEventCreate(&state->events[e]);
    return error;
}

namespace {

statgpu_cuda_status invalid(char *msg, size_t msg_bytes, const char *text)
{
    write_message(msg, msg_bytes, "select_ranks: %s", text);
    return STATGPU_CUDA_INVALID_ARGUMENT;
}

/* Device memory must be memory of the state's device (or managed memory):
 * anything else would fault inside a kernel and take the context down. */
statgpu_cuda_status check_device_pointer(const statgpu_cuda_state *state, const void *data, char *msg,
                                         size_t msg_bytes)
{
    cudaPointerAttributes attributes;
    const cudaError_t error = cudaPointerGetAttributes(&attributes, data);
    if (error != cudaSuccess) {
        (void)cudaGetLastError();
        return invalid(msg, msg_bytes, "the data pointer is not CUDA memory");
    }
    if (attributes.type == cudaMemoryTypeManaged)
        return STATGPU_CUDA_OK;
    if (attributes.type != cudaMemoryTypeDevice)
        return invalid(msg, msg_bytes, "the data pointer is not device memory");
    if (attributes.device != state->device) {
        write_message(msg, msg_bytes, "select_ranks: the data are in the memory of device %d, the context uses device %d",
                      attributes.device, state->device);
        return STATGPU_CUDA_INVALID_ARGUMENT;
    }
    return STATGPU_CUDA_OK;
}

statgpu_cuda_status run_selection(statgpu_cuda_state *state, const statgpu_cuda_array *array, const RankSet &set,
                                  int method, double *results, statgpu_cuda_timing *timing, char *msg,
                                  size_t msg_bytes)
{
    Call call(state, msg, msg_bytes);
    cudaStream_t stream = state->stream;
    const uint64_t count = array->count;
    const size_t element_bytes = array->dtype == STATGPU_CUDA_FLOAT32 ? sizeof(float) : sizeof(double);
    if (!call.check(cudaEventRecord(state->events[kEventStart], stream), "recording a CUDA event"))
        return call.status();
    const void *d_data = array->data;
    if (array->memory == STATGPU_CUDA_HOST_MEMORY) {
        /* Through the state's transfer lanes (host_transfer.h), with the
         * passes queued on the state's stream behind the copy. */
        if (!call.ensure(&state->data, count * element_bytes, "allocating GPU memory for the data"))
            return call.status();
        const StagedPiece piece = {const_cast<void *>(array->data), state->data.d_ptr, count * element_bytes};
        if (!call.check(upload_staged(state, &piece, 1, stream), "copying the data to the GPU"))
            return call.status();
        d_data = state->data.d_ptr;
    }
    if (!call.check(cudaEventRecord(state->events[kEventData], stream), "recording a CUDA event"))
        return call.status();

    const std::vector<uint64_t> &ranks = set.distinct();
    std::vector<double> values(ranks.size(), 0.0);
    bool done = false;
    switch (choose_method(method, count, ranks.size())) {
    case Method::kSmall: done = select_small(call, d_data, array->dtype, count, ranks, values.data()); break;
    case Method::kCuttingPlane: done = select_cutting_plane(call, d_data, array->dtype, count, ranks, values.data()); break;
    case Method::kRadix: done = select_radix(call, d_data, array->dtype, count, ranks, values.data()); break;
    case Method::kSort: done = select_sort(call, d_data, array->dtype, count, ranks, values.data()); break;
    }
    if (!done)
        return call.status() != STATGPU_CUDA_OK ? call.status() : STATGPU_CUDA_ERROR;
    if (!call.check(cudaEventRecord(state->events[kEventEnd], stream), "recording a CUDA event") ||
        !call.check(cudaEventSynchronize(state->events[kEventEnd]), "finishing the selection"))
        return call.status();
    if (timing != nullptr) {
        float transfer_ms = 0.0f, compute_ms = 0.0f;
        if (call.check(cudaEventElapsedTime(&transfer_ms, state->events[kEventStart], state->events[kEventData]),
                       "reading a CUDA event") &&
            call.check(cudaEventElapsedTime(&compute_ms, state->events[kEventData], state->events[kEventEnd]),
                       "reading a CUDA event")) {
            timing->transfer_seconds = array->memory == STATGPU_CUDA_HOST_MEMORY ? transfer_ms * 1e-3 : 0.0;
            timing->compute_seconds = compute_ms * 1e-3;
        } else {
            return call.status();
        }
    }
    set.expand(values.data(), results);
    return STATGPU_CUDA_OK;
}

} /* namespace */

statgpu_cuda_status select_ranks(statgpu_cuda_state *state, const statgpu_cuda_array *array, const size_t *ranks,
                                 size_t rank_count, int method, double *results, statgpu_cuda_timing *timing,
                                 char *msg, size_t msg_bytes)
{
    if (timing != nullptr) {
        timing->transfer_seconds = 0.0;
        timing->compute_seconds = 0.0;
    }
    if (state == nullptr || array == nullptr || ranks == nullptr || results == nullptr)
        return invalid(msg, msg_bytes, "a NULL pointer");
    if (array->data == nullptr)
        return invalid(msg, msg_bytes, "the array's data pointer is NULL");
    if (array->count == 0 || rank_count == 0)
        return invalid(msg, msg_bytes, "no data or no ranks");
    if (array->dtype != STATGPU_CUDA_FLOAT64 && array->dtype != STATGPU_CUDA_FLOAT32)
        return invalid(msg, msg_bytes, "unknown element type");
    if (array->memory != STATGPU_CUDA_HOST_MEMORY && array->memory != STATGPU_CUDA_DEVICE_MEMORY)
        return invalid(msg, msg_bytes, "unknown memory kind");
    if (method < STATGPU_CUDA_SELECT_AUTO || method > STATGPU_CUDA_SELECT_SORT)
        return invalid(msg, msg_bytes, "unknown selection method");
    const size_t element_bytes = array->dtype == STATGPU_CUDA_FLOAT32 ? sizeof(float) : sizeof(double);
    if (array->count > SIZE_MAX / (2 * element_bytes))
        return invalid(msg, msg_bytes, "too many elements");
    statgpu_cuda_status status = STATGPU_CUDA_OK;
    try {
        RankSet set;
        if (!set.assign(ranks, rank_count, array->count)) {
            write_message(msg, msg_bytes, "select_ranks: ranks must ascend within [1, %zu]", array->count);
            return STATGPU_CUDA_INVALID_ARGUMENT;
        }
        const cudaError_t error = cudaSetDevice(state->device);
        if (error != cudaSuccess)
            return report_cuda_error(error, "selecting the CUDA device", msg, msg_bytes);
        if (array->memory == STATGPU_CUDA_DEVICE_MEMORY) {
            status = check_device_pointer(state, array->data, msg, msg_bytes);
            if (status != STATGPU_CUDA_OK)
                return status;
        }
        status = run_selection(state, array, set, method, results, timing, msg, msg_bytes);
    } catch (const std::bad_alloc &) {
        write_message(msg, msg_bytes, "GPU selection: out of host memory");
        return STATGPU_CUDA_OUT_OF_MEMORY;
    } catch (...) {
        write_message(msg, msg_bytes, "GPU selection: unexpected failure");
        return STATGPU_CUDA_ERROR;
    }
    if (status == STATGPU_CUDA_OK && msg != nullptr && msg_bytes > 0)
        msg[0] = '\0';
    return status;
}

} /* namespace statgpu_cuda */
