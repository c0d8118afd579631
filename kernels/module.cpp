/*
 * module.cpp: the entry of the CUDA backend module: the one exported symbol,
 * statgpu_cuda_module_init, the function table it returns, and the device
 * state's life cycle (find the device, describe it, create the stream and the
 * workspace, free them).
 *
 * The CUDA runtime is linked in statically and loads the driver itself on the
 * first call, so this module loads on machines with no CUDA at all; there the
 * first call, cudaGetDeviceCount, fails and state_create answers
 * STATGPU_CUDA_NO_DEVICE. Nothing here prints, aborts or resets the device:
 * the module runs inside the user's spreadsheet.
 */
#include "backend/cuda_module.h"
#include "cuda_state.h"

#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>
#include <new>

#if defined(__GNUC__)
#  define STATGPU_CUDA_EXPORT __attribute__((visibility("default")))
#else
#  define STATGPU_CUDA_EXPORT
#endif

namespace statgpu_cuda {

void write_message(char *msg, size_t msg_bytes, const char *format, ...)
{
    if (msg == nullptr || msg_bytes == 0)
        return;
    va_list args;
    va_start(args, format);
    std::vsnprintf(msg, msg_bytes, format, args);
    va_end(args);
    msg[msg_bytes - 1] = '\0';
}

statgpu_cuda_status report_cuda_error(cudaError_t error, const char *what, char *msg, size_t msg_bytes)
{
    /* Clears the error unless it is sticky (then the context is lost and every
     * later call fails too, which the engine turns into the CPU path). */
    (void)cudaGetLastError();
    write_message(msg, msg_bytes, "%s: %s", what, cudaGetErrorString(error));
    return error == cudaErrorMemoryAllocation ? STATGPU_CUDA_OUT_OF_MEMORY : STATGPU_CUDA_ERROR;
}

cudaError_t ensure_device_buffer(DeviceBuffer *buffer, size_t bytes)
{
    if (bytes <= buffer->bytes)
        return cudaSuccess;
    release_device_buffer(buffer);
    /* Whole MiB steps, so that slightly larger calls reuse the buffer. */
    const size_t step = size_t{1} << 20;
    const size_t rounded = bytes > SIZE_MAX - step ? bytes : (bytes + step - 1) / step * step;
    void *d_ptr = nullptr;
    const cudaError_t error = cudaMalloc(&d_ptr, rounded);
    if (error != cudaSuccess)
        return error;
    buffer->d_ptr = d_ptr;
    buffer->bytes = rounded;
    return cudaSuccess;
}

cudaError_t carve_session_arrays(statgpu_cuda_state *state, const SessionArray *arrays, size_t count)
{
    return carve_arrays(&state->sessions, arrays, count);
}

cudaError_t carve_arrays(DeviceBuffer *workspace, const SessionArray *arrays, size_t count)
{
    size_t total = 0;
    for (size_t a = 0; a < count; ++a) {
        const size_t aligned = (arrays[a].bytes + 255) / 256 * 256;
        if (aligned < arrays[a].bytes || total > SIZE_MAX - aligned)
            return cudaErrorMemoryAllocation;
        total += aligned;
    }
    const cudaError_t error = ensure_device_buffer(workspace, total > 0 ? total : 1);
    if (error != cudaSuccess)
        return error;
    char *next = static_cast<char *>(workspace->d_ptr);
    for (size_t a = 0; a < count; ++a) {
        *arrays[a].pointer = next;
        next += (arrays[a].bytes + 255) / 256 * 256;
    }
    return cudaSuccess;
}

void release_device_buffer(DeviceBuffer *buffer)
{
    if (buffer->d_ptr != nullptr)
        (void)cudaFree(buffer->d_ptr);  /* the memory is gone either way */
    buffer->d_ptr = nullptr;
    buffer->bytes = 0;
}

namespace {

void destroy_state(statgpu_cuda_state *state)
{
    if (state == nullptr)
        return;
    (void)cudaSetDevice(state->device);
    if (state->stream != nullptr)
        (void)cudaStreamSynchronize(state->stream);
    release_transfer_lanes(state);  /* their copies end before the memory they read goes */
    DeviceBuffer *buffers[] = {&state->data,     &state->candidates[0], &state->candidates[1], &state->segments,
                               &state->keys[0],  &state->keys[1],       &state->cub_temp,      &state->partials,
                               &state->gather,   &state->control,       &state->sessions,
                               &state->mixture, &state->subset};
    for (DeviceBuffer *buffer : buffers)
        release_device_buffer(buffer);
    if (state->h_pinned != nullptr)
        (void)cudaFreeHost(state->h_pinned);
    for (cudaEvent_t event : state->events)
        if (event != nullptr)
            (void)cudaEventDestroy(event);
    if (state->stream != nullptr)
        (void)cudaStreamDestroy(state->stream);
    /* At process exit the runtime may already be unloading; nothing to report. */
    (void)cudaGetLastError();
    delete state;
}

statgpu_cuda_status no_device(cudaError_t error, char *msg, size_t msg_bytes)
{
    (void)cudaGetLastError();
    switch (error) {
    case cudaErrorNoDevice:
        write_message(msg, msg_bytes, "no CUDA device");
        break;
    case cudaErrorInsufficientDriver: {
        /* The runtime says this both when the driver is too old and when there
         * is none; a missing driver reports version 0. */
        int driver_version = 0, runtime_version = 0;
        (void)cudaDriverGetVersion(&driver_version);
        (void)cudaRuntimeGetVersion(&runtime_version);
        if (driver_version == 0)
            write_message(msg, msg_bytes, "no CUDA driver");
        else
            write_message(msg, msg_bytes, "the CUDA driver supports CUDA %d.%d, this module needs %d.%d",
                          driver_version / 1000, driver_version % 1000 / 10,
                          runtime_version / 1000, runtime_version % 1000 / 10);
        break;
    }
    default:
        write_message(msg, msg_bytes, "no CUDA driver (%s)", cudaGetErrorString(error));
        break;
    }
    return STATGPU_CUDA_NO_DEVICE;
}

statgpu_cuda_status state_create(int device, int host_threads, statgpu_cuda_state **out_state,
                                 statgpu_cuda_device_info *out_info, char *msg, size_t msg_bytes)
{
    if (out_state == nullptr) {
        write_message(msg, msg_bytes, "state_create: out_state is NULL");
        return STATGPU_CUDA_INVALID_ARGUMENT;
    }
    *out_state = nullptr;

    int device_count = 0;
    cudaError_t error = cudaGetDeviceCount(&device_count);
    if (error != cudaSuccess)
        return no_device(error, msg, msg_bytes);
    if (device_count == 0)
        return no_device(cudaErrorNoDevice, msg, msg_bytes);
    if (device < 0 || device >= device_count) {
        write_message(msg, msg_bytes, "CUDA device %d does not exist (devices 0 to %d)", device,
                      device_count - 1);
        return STATGPU_CUDA_NO_DEVICE;
    }
    error = cudaSetDevice(device);
    if (error != cudaSuccess) {
        (void)cudaGetLastError();
        write_message(msg, msg_bytes, "CUDA device %d cannot be used: %s", device, cudaGetErrorString(error));
        return STATGPU_CUDA_NO_DEVICE;
    }
    cudaDeviceProp properties;
    error = cudaGetDeviceProperties(&properties, device);
    if (error != cudaSuccess)
        return report_cuda_error(error, "reading the device's properties", msg, msg_bytes);

    statgpu_cuda_state *state = new (std::nothrow) statgpu_cuda_state;
    if (state == nullptr) {
        write_message(msg, msg_bytes, "state_create: out of host memory");
        return STATGPU_CUDA_OUT_OF_MEMORY;
    }
    state->device = device;
    state->host_threads = host_threads > 0 ? host_threads : 1;
    state->multiprocessor_count = properties.multiProcessorCount;

    /* A blocking stream: it waits for work that other code of the process
     * (PyTorch, CuPy) queued on the legacy default stream of the same
     * context, so device data that such work just produced are complete
     * before a pass reads them. */
    error = cudaStreamCreateWithFlags(&state->stream, cudaStreamDefault);
    if (error != cudaSuccess) {
        state->stream = nullptr;
        destroy_state(state);
        return report_cuda_error(error, "creating a CUDA stream", msg, msg_bytes);
    }
    error = prepare_selection(state);
    if (error == cudaErrorNoKernelImageForDevice || error == cudaErrorInvalidDeviceFunction ||
        error == cudaErrorUnsupportedPtxVersion) {
        destroy_state(state);
        (void)cudaGetLastError();
        write_message(msg, msg_bytes, "this module has no code for %s (compute capability %d.%d): %s",
                      properties.name, properties.major, properties.minor, cudaGetErrorString(error));
        return STATGPU_CUDA_NO_DEVICE;
    }
    if (error != cudaSuccess) {
        destroy_state(state);
        return report_cuda_error(error, "preparing the GPU workspace", msg, msg_bytes);
    }

    if (out_info != nullptr) {
        std::memset(out_info, 0, sizeof *out_info);
        const size_t name_bytes = strnlen(properties.name, sizeof out_info->name - 1);
        std::memcpy(out_info->name, properties.name, name_bytes);  /* the rest is zero already */
        (void)cudaRuntimeGetVersion(&out_info->runtime_version);
        (void)cudaDriverGetVersion(&out_info->driver_version);
        out_info->multiprocessor_count = properties.multiProcessorCount;
        out_info->global_memory_bytes = properties.totalGlobalMem;
    }
    *out_state = state;
    if (msg != nullptr && msg_bytes > 0)
        msg[0] = '\0';
    return STATGPU_CUDA_OK;
}

statgpu_cuda_status copy_to_host(statgpu_cuda_state *state, const void *device, size_t bytes, void *host, char *msg,
                                 size_t msg_bytes)
{
    if (state == nullptr || device == nullptr || host == nullptr) {
        write_message(msg, msg_bytes, "copy_to_host: a NULL argument");
        return STATGPU_CUDA_INVALID_ARGUMENT;
    }
    cudaError_t error = cudaSetDevice(state->device);
    if (error == cudaSuccess)
        error = cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, state->stream);
    if (error == cudaSuccess)
        error = cudaStreamSynchronize(state->stream);
    if (error != cudaSuccess)
        return report_cuda_error(error, "copying device data to the host", msg, msg_bytes);
    return STATGPU_CUDA_OK;
}

/* Every entry that reports through msg runs inside Guarded::call: the C++
 * inside may throw (std::bad_alloc from host containers), and nothing may
 * unwind into the engine's C code. msg and msg_bytes are every such entry's
 * last two parameters. */
template <const char *What, auto Entry> struct Guarded;

template <const char *What, typename... Args, statgpu_cuda_status (*Entry)(Args...)>
struct Guarded<What, Entry> {
    static statgpu_cuda_status call(Args... args)
    {
        try {
            return Entry(args...);
        } catch (...) {
            auto arguments = std::forward_as_tuple(args...);
            constexpr size_t count = sizeof...(Args);
            write_message(std::get<count - 2>(arguments), std::get<count - 1>(arguments), "%s: unexpected failure",
                          What);
            return STATGPU_CUDA_ERROR;
        }
    }
};

constexpr char kDevice[] = "CUDA device";
constexpr char kSelection[] = "GPU selection";
constexpr char kKmeans[] = "GPU k-means";
constexpr char kLts[] = "GPU least trimmed squares";
constexpr char kGmm[] = "GPU Gaussian mixture";
constexpr char kSubset[] = "GPU best subset search";
constexpr char kIgmm[] = "GPU inverse Gaussian mixtures";

const statgpu_cuda_select_i select_table = {
    Guarded<kSelection, select_ranks>::call,
};

const statgpu_cuda_kmeans_i kmeans_table = {
    Guarded<kKmeans, kmeans_begin>::call,
    Guarded<kKmeans, kmeans_lloyd>::call,
    kmeans_end,
};

const statgpu_cuda_lts_i lts_table = {
    Guarded<kLts, lts_begin>::call,
    Guarded<kLts, lts_csteps>::call,
    lts_end,
};

const statgpu_cuda_gmm_i gmm_table = {
    Guarded<kGmm, gmm_begin>::call,
    Guarded<kGmm, gmm_estep>::call,
    gmm_end,
};

const statgpu_cuda_subset_i subset_table = {
    Guarded<kSubset, subset_search>::call,
};

const statgpu_cuda_igmm_i igmm_table = {
    Guarded<kIgmm, igmm_fit>::call,
};

const statgpu_cuda_module_i module_table = {
    STATGPU_CUDA_MODULE_API_VERSION,
    Guarded<kDevice, state_create>::call,
    destroy_state,
    Guarded<kDevice, copy_to_host>::call,
    &select_table,
    &kmeans_table,
    &lts_table,
    &gmm_table,
    &subset_table,
    &igmm_table,
};

} /* namespace */
} /* namespace statgpu_cuda */

extern "C" STATGPU_CUDA_EXPORT const statgpu_cuda_module_i *statgpu_cuda_module_init(uint32_t engine_api_version)
{
    if (engine_api_version != STATGPU_CUDA_MODULE_API_VERSION)
        return nullptr;
    return &statgpu_cuda::module_table;
}
