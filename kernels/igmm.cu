/*
 * igmm.cu: mixtures of inverse Gaussians by EM for many data sets at once
 * (cuda_module.h's igmm table), every (data set, start) pair in one launch.
 *
 * A block per data set: its values, -3/2 log x and 1/x go to shared memory
 * once (where they fit; longer data sets read their values from global
 * memory and take the two terms afresh each pass), and the block's threads
 * run its starts one after another: per EM iteration one pass over the
 * values (a value per thread in turn) computes the responsibilities, the
 * log-likelihood and the M-step's sums (sum w, sum w x, sum w / x per
 * component) together; each warp's sums are reduced by a butterfly of
 * shuffles, then the warps' in warp order, so every thread holds the same
 * sums and a repeat gives the same bits. (A warp per start instead left one
 * warp per block when a call has one start, and four blocks of a 2000-value
 * data set fill a multiprocessor's shared memory: 46 s for 40,000 data sets
 * x 10 starts on the H100.) The M-step is the CPU's
 * (engine/src/methods/igmm.c); a start whose M-step would re-seed a
 * component stops and says so, and the engine fits that one on the CPU,
 * where the re-seeding's random draws live. The component count is a
 * template parameter (1 to 8), so every per-component array stays in
 * registers.
 */
#include "cuda_state.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace statgpu_cuda {
namespace {

constexpr int kWarp = 32;
/* Warps per block: they share one start's pass over the values. */
constexpr int kWarps = 8;
/* Shared memory a block may take for its data set: values up to this many
 * (3 doubles each) sit on chip. */
constexpr size_t kMostSharedValues = 8192;
constexpr double kLog2Pi = 1.8378770664093454835606594728112;
/* Values whose sums are multiplied before one log: at most 8^64 = 2^192. */
constexpr int kLogBatch = 64;

__device__ inline double warp_sum(double value)
{
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
        value += __shfl_xor_sync(0xffffffffu, value, offset);
    return value;
}

struct FitArgs {
    const double *values;          /* every data set, one after another */
    const unsigned long long *offsets;
    const unsigned long long *lengths;
    const uint8_t *fitted;
    int start_count;
    unsigned long long max_iterations;
    double tolerance;
    statgpu_cuda_igmm_component *components;
    statgpu_cuda_igmm_fit *fits;
    size_t shared_values;          /* values a block's shared memory holds */
};

template <int K>
__global__ void igmm_fit_kernel(FitArgs args)
{
    extern __shared__ double shared[];
    constexpr int kSums = 3 * K + 1;  /* the log-likelihood, then w, w x and w / x per component */
    const int set = blockIdx.x;
    if (!args.fitted[set])
        return;
    const size_t n = args.lengths[set];
    const double *x_global = args.values + args.offsets[set];
    const bool on_chip = n <= args.shared_values;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
    double *x = shared, *log_term = shared + args.shared_values, *inverse = shared + 2 * args.shared_values;
    double *partial = shared + 3 * args.shared_values;  /* warps x kSums */
    double *totals = partial + warps * kSums;           /* kSums */
    if (on_chip) {
        for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
            const double value = x_global[i];
            x[i] = value;
            log_term[i] = -1.5 * log(value);
            inverse[i] = 1.0 / value;
        }
    }
    __syncthreads();
    for (int start = 0; start < args.start_count; ++start) {
        const size_t task = size_t(set) * args.start_count + start;
        statgpu_cuda_igmm_component *component = args.components + task * K;
        double alpha[K], mu[K], lambda[K];
#pragma unroll
        for (int j = 0; j < K; ++j) {
            alpha[j] = component[j].alpha;
            mu[j] = component[j].mu;
            lambda[j] = component[j].lambda;
        }
        double previous = -INFINITY, log_likelihood = 0.0;
        unsigned long long iteration = 0;
        int converged = 0, needs_cpu = 0;
        for (;;) {
            double offset[K], scale[K], sums[kSums];
#pragma unroll
            for (int j = 0; j < K; ++j) {
                offset[j] = log(alpha[j]) + 0.5 * (log(lambda[j]) - kLog2Pi);
                scale[j] = lambda[j] / (2.0 * mu[j] * mu[j]);
            }
#pragma unroll
            for (int v = 0; v < kSums; ++v)
                sums[v] = 0.0;
            /* The logs of the values' sums (each in [1, K]) are taken of
             * their products, once per kLogBatch values, as the CPU does. */
            double product = 1.0;
            int in_product = 0;
            for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
                double xi, term, inv;
                if (on_chip) {
                    xi = x[i];
                    term = log_term[i];
                    inv = inverse[i];
                } else {
                    xi = x_global[i];
                    term = -1.5 * log(xi);
                    inv = 1.0 / xi;
                }
                double row[K];
                double largest = -INFINITY;
                int top = 0;
#pragma unroll
                for (int j = 0; j < K; ++j) {
                    const double difference = xi - mu[j];
                    row[j] = offset[j] + term - scale[j] * difference * difference * inv;
                    if (row[j] > largest) {
                        largest = row[j];
                        top = j;
                    }
                }
                double sum = 0.0;
                if constexpr (K == 2) {
                    /* One exp a value: the larger term's is 1, the other's
                     * exp(smaller - larger) (the general loop's values, bit
                     * for bit; a warp whose values differ in which is larger
                     * took both exps there). */
                    const double other = exp(fmin(row[0], row[1]) - largest);
                    row[0] = top == 0 ? 1.0 : other;
                    row[1] = top == 0 ? other : 1.0;
                    sum = row[0] + row[1];
                } else {
#pragma unroll
                    for (int j = 0; j < K; ++j) {
                        row[j] = j == top ? 1.0 : exp(row[j] - largest);
                        sum += row[j];
                    }
                }
                const double inverse_sum = 1.0 / sum;
                sums[0] += largest;
                product *= sum;
                if (++in_product == kLogBatch) {
                    sums[0] += log(product);
                    product = 1.0;
                    in_product = 0;
                }
#pragma unroll
                for (int j = 0; j < K; ++j) {
                    const double r = row[j] * inverse_sum;
                    sums[1 + j] += r;
                    sums[1 + K + j] += r * xi;
                    sums[1 + 2 * K + j] += r * inv;
                }
            }
            sums[0] += log(product);
            /* The block's sums in a fixed order: each warp's by a butterfly,
             * then the warps' in warp order. */
#pragma unroll
            for (int v = 0; v < kSums; ++v) {
                const double value = warp_sum(sums[v]);
                if (lane == 0)
                    partial[warp * kSums + v] = value;
            }
            __syncthreads();
            if (threadIdx.x < kSums) {
                double total = 0.0;
                for (int w = 0; w < warps; ++w)
                    total += partial[w * kSums + threadIdx.x];
                totals[threadIdx.x] = total;
            }
            __syncthreads();
#pragma unroll
            for (int v = 0; v < kSums; ++v)
                sums[v] = totals[v];
            __syncthreads();  /* totals and partial are written again next pass */
            log_likelihood = sums[0];
            if (iteration > 0 && fabs(log_likelihood - previous) < args.tolerance) {
                converged = 1;
                break;
            }
            if (iteration == args.max_iterations)
                break;
            previous = log_likelihood;
            /* The M-step, the same on every thread. */
            double weight_total = 0.0, next_alpha[K], next_mu[K], next_lambda[K];
            bool valid = true;
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const double wj = sums[1 + j], wxj = sums[1 + K + j], woj = sums[1 + 2 * K + j];
                const double m = wxj / wj, denominator = woj - wj / m, l = wj / denominator;
                valid = valid && wj > 0.0 && isfinite(m) && m > 0.0 && denominator > 0.0 && isfinite(l) && l > 0.0;
                next_alpha[j] = wj;
                next_mu[j] = m;
                next_lambda[j] = l;
                weight_total += wj;
            }
            if (!valid) {
                needs_cpu = 1;
                break;
            }
#pragma unroll
            for (int j = 0; j < K; ++j) {
                alpha[j] = next_alpha[j] / weight_total;
                mu[j] = next_mu[j];
                lambda[j] = next_lambda[j];
            }
            ++iteration;
        }
        if (threadIdx.x == 0) {
#pragma unroll
            for (int j = 0; j < K; ++j) {
                component[j].alpha = alpha[j];
                component[j].mu = mu[j];
                component[j].lambda = lambda[j];
            }
            statgpu_cuda_igmm_fit outcome;
            outcome.log_likelihood = log_likelihood;
            outcome.iterations = static_cast<uint32_t>(iteration);
            outcome.converged = static_cast<uint8_t>(converged);
            outcome.needs_cpu = static_cast<uint8_t>(needs_cpu);
            outcome.pad[0] = outcome.pad[1] = 0;
            args.fits[task] = outcome;
        }
    }
}

template <int K>
cudaError_t launch_fit(const FitArgs &args, size_t set_count, int warps, size_t shared_bytes, cudaStream_t stream)
{
    cudaError_t error = cudaFuncSetAttribute(igmm_fit_kernel<K>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(shared_bytes));
    if (error != cudaSuccess)
        return error;
    igmm_fit_kernel<K><<<static_cast<unsigned int>(set_count), warps * kWarp, shared_bytes, stream>>>(args);
    return cudaGetLastError();
}

cudaError_t launch_for(size_t k, const FitArgs &args, size_t set_count, int warps, size_t shared_bytes,
                       cudaStream_t stream)
{
    switch (k) {
    case 1: return launch_fit<1>(args, set_count, warps, shared_bytes, stream);
    case 2: return launch_fit<2>(args, set_count, warps, shared_bytes, stream);
    case 3: return launch_fit<3>(args, set_count, warps, shared_bytes, stream);
    case 4: return launch_fit<4>(args, set_count, warps, shared_bytes, stream);
    case 5: return launch_fit<5>(args, set_count, warps, shared_bytes, stream);
    case 6: return launch_fit<6>(args, set_count, warps, shared_bytes, stream);
    case 7: return launch_fit<7>(args, set_count, warps, shared_bytes, stream);
    default: return launch_fit<8>(args, set_count, warps, shared_bytes, stream);
    }
}

} /* namespace */

statgpu_cuda_status igmm_fit(statgpu_cuda_state *state, const double *const *sets, const size_t *lengths,
                             const uint8_t *fitted, size_t set_count, size_t k, size_t start_count,
                             size_t max_iterations, double tolerance, statgpu_cuda_igmm_component *components,
                             statgpu_cuda_igmm_fit *fits, statgpu_cuda_timing *timing, char *msg, size_t msg_bytes)
{
    CallStatus call(msg, msg_bytes);
    if (state == nullptr || sets == nullptr || lengths == nullptr || fitted == nullptr || components == nullptr
        || fits == nullptr || set_count == 0 || set_count > 0x7fffffffu || k == 0
        || k > STATGPU_CUDA_IGMM_MOST_COMPONENTS || start_count == 0 || start_count > 0x7fffffffu) {
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "igmm_fit: invalid arguments");
        return call.status();
    }
    if (timing != nullptr)
        *timing = statgpu_cuda_timing{ 0.0, 0.0 };
    std::vector<unsigned long long> offsets(set_count), counts(set_count);
    size_t total = 0, longest = 0;
    for (size_t s = 0; s < set_count; ++s) {
        offsets[s] = total;
        counts[s] = fitted[s] ? lengths[s] : 0;
        total += counts[s];
        longest = std::max<size_t>(longest, counts[s]);
    }
    std::vector<uint8_t> flags(fitted, fitted + set_count);
    for (size_t s = 0; s < set_count; ++s)
        flags[s] = flags[s] && counts[s] > 0;
    const size_t tasks = set_count * start_count;
    if (!call.check(cudaSetDevice(state->device), "selecting the CUDA device"))
        return call.status();
    cudaStream_t stream = state->stream;

    double *d_values = nullptr;
    unsigned long long *d_offsets = nullptr, *d_lengths = nullptr;
    uint8_t *d_fitted = nullptr;
    statgpu_cuda_igmm_component *d_components = nullptr;
    statgpu_cuda_igmm_fit *d_fits = nullptr;
    const SessionArray arrays[] = {
        { reinterpret_cast<void **>(&d_values), std::max<size_t>(total, 1) * sizeof(double) },
        { reinterpret_cast<void **>(&d_offsets), set_count * sizeof(unsigned long long) },
        { reinterpret_cast<void **>(&d_lengths), set_count * sizeof(unsigned long long) },
        { reinterpret_cast<void **>(&d_fitted), set_count },
        { reinterpret_cast<void **>(&d_components), tasks * k * sizeof(statgpu_cuda_igmm_component) },
        { reinterpret_cast<void **>(&d_fits), tasks * sizeof(statgpu_cuda_igmm_fit) },
    };
    if (!call.check(carve_arrays(&state->mixture, arrays, sizeof arrays / sizeof *arrays),
                    "allocating the inverse Gaussian mixtures"))
        return call.status();
    /* Each data set straight from the caller's memory into its place, the
     * sets side by side on the device (one bus copy per chunk). */
    std::vector<StagedPiece> pieces;
    pieces.reserve(set_count);
    for (size_t s = 0; s < set_count; ++s)
        if (counts[s] > 0)
            pieces.push_back({const_cast<double *>(sets[s]), d_values + offsets[s], counts[s] * sizeof(double)});
    if (!call.check(cudaEventRecord(state->events[kEventStart], stream), "timing the inverse Gaussian mixtures")
        || !call.check(upload_staged(state, pieces.data(), pieces.size(), stream), "copying the data sets")
        || !call.check(cudaMemcpyAsync(d_offsets, offsets.data(), set_count * sizeof(unsigned long long),
                                       cudaMemcpyHostToDevice, stream), "copying the data sets")
        || !call.check(cudaMemcpyAsync(d_lengths, counts.data(), set_count * sizeof(unsigned long long),
                                       cudaMemcpyHostToDevice, stream), "copying the data sets")
        || !call.check(cudaMemcpyAsync(d_fitted, flags.data(), set_count, cudaMemcpyHostToDevice, stream),
                       "copying the data sets")
        || !call.check(cudaMemcpyAsync(d_components, components, tasks * k * sizeof(statgpu_cuda_igmm_component),
                                       cudaMemcpyHostToDevice, stream), "copying the starts")
        || !call.check(cudaEventRecord(state->events[kEventData], stream), "timing the inverse Gaussian mixtures"))
        return call.status();

    FitArgs args;
    args.values = d_values;
    args.offsets = d_offsets;
    args.lengths = d_lengths;
    args.fitted = d_fitted;
    args.start_count = static_cast<int>(start_count);
    args.max_iterations = max_iterations;
    args.tolerance = tolerance;
    args.components = d_components;
    args.fits = d_fits;
    args.shared_values = std::min(longest, kMostSharedValues);
    const int warps = kWarps;
    const size_t shared_bytes = (3 * std::max<size_t>(args.shared_values, 1) + (kWarps + 1) * (3 * k + 1))
                                * sizeof(double);
    if (!call.check(launch_for(k, args, set_count, warps, shared_bytes, stream), "launching the mixtures' EM")
        || !call.check(cudaEventRecord(state->events[kEventEnd], stream), "timing the inverse Gaussian mixtures")
        || !call.check(cudaMemcpyAsync(components, d_components, tasks * k * sizeof(statgpu_cuda_igmm_component),
                                       cudaMemcpyDeviceToHost, stream), "reading the fits")
        || !call.check(cudaMemcpyAsync(fits, d_fits, tasks * sizeof(statgpu_cuda_igmm_fit), cudaMemcpyDeviceToHost,
                                       stream), "reading the fits")
        || !call.check(cudaStreamSynchronize(stream), "running the inverse Gaussian mixtures"))
        return call.status();
    if (timing != nullptr) {
        timing->transfer_seconds = elapsed_ms(state->events[kEventStart], state->events[kEventData]) / 1e3;
        timing->compute_seconds = elapsed_ms(state->events[kEventData], state->events[kEventEnd]) / 1e3;
    }
    return STATGPU_CUDA_OK;
}

} /* namespace statgpu_cuda */
