/*
 * igmm.cu: mixtures of inverse Gaussians by EM for many data sets at once
 * (cuda_module.h's igmm table), every (data set, start) pair in one launch.
 *
 * A block per data set up to kMostSharedValues values: its values, -3/2
 * log x and 1/x go to shared memory once, and the block's threads run its
 * starts one after another (longer data sets take the grid path below,
 * spread over the whole GPU): per EM iteration one pass over the
 * values (a value per thread in turn) computes the responsibilities, the
 * log-likelihood and the M-step's sums (per component sum w, sum w (mu - x)
 * and sum w (mu - x)^2 / (mu x), centred on the E-step's mu:
 * engine/src/methods/igmm_estep.h says why) together; each warp's sums are
 * reduced by a butterfly of shuffles, then the warps' in warp order, so
 * every thread holds the same sums and a repeat gives the same bits. (A warp per start instead left one
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
    size_t shared_values;          /* values a block's shared memory holds; longer sets take the grid path */
};

/* A start's model as the E-step uses it: per component mu, log alpha +
 * log lambda / 2 - log(2 pi) / 2, lambda / (2 mu) and 1 / mu (the CPU's
 * sg_igmm_constants). */
template <int K>
struct Model {
    double mu[K], offset[K], half_shape_over_mu[K], inverse_mu[K];
};

template <int K>
__device__ __forceinline__ Model<K> model_of(const double (&alpha)[K], const double (&mu)[K],
                                             const double (&lambda)[K])
{
    Model<K> model;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        model.mu[j] = mu[j];
        model.offset[j] = log(alpha[j]) + 0.5 * (log(lambda[j]) - kLog2Pi);
        model.half_shape_over_mu[j] = lambda[j] / (2.0 * mu[j]);
        model.inverse_mu[j] = 1.0 / mu[j];
    }
    return model;
}

/* One value's part of an E-step (the value, its -3/2 log x and 1 / x): its
 * largest log term to sums[0], the sum of its terms' exps (relative to the
 * largest) into the thread's product, whose log goes to sums[0] once per
 * kLogBatch values, and its responsibilities' w, w (mu - x) and
 * w (mu - x)^2 / (mu x) per component to sums[1 ...]. */
template <int K>
__device__ __forceinline__ void add_value(const Model<K> &model, double xi, double term, double inv,
                                          double (&sums)[3 * K + 1], double &product, int &in_product)
{
    /* The log density's last term is lambda / (2 mu) times the spread
     * (mu - x)^2 / (mu x), which the sums reuse. */
    double row[K], spread[K];
    double largest = -INFINITY;
    int top = 0;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const double deviation = model.mu[j] - xi;
        spread[j] = (deviation * model.inverse_mu[j]) * (deviation * inv);
        row[j] = model.offset[j] + term - model.half_shape_over_mu[j] * spread[j];
        if (row[j] > largest) {
            largest = row[j];
            top = j;
        }
    }
    double sum = 0.0;
    if constexpr (K == 2) {
        /* One exp a value: the larger term's is 1, the other's
         * exp(smaller - larger) (the general loop's values, bit for bit; a
         * warp whose values differ in which is larger took both exps there). */
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
        sums[1 + K + j] += r * (model.mu[j] - xi);
        sums[1 + 2 * K + j] += r * spread[j];
    }
}

/* The block's sums in a fixed order: each warp's by a butterfly, then the
 * warps' in warp order; every thread returns with the totals. partial holds
 * warps x kSums doubles, totals kSums, both in shared memory. */
template <int K>
__device__ __forceinline__ void block_sums(double (&sums)[3 * K + 1], double *partial, double *totals)
{
    constexpr int kSums = 3 * K + 1;
    const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
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
}

/* The exact M-step from an E-step's sums, centred on mu (the E-step's;
 * engine/src/methods/igmm.c's sg_igmm_update): false, with the parameters
 * unchanged, where a component would need re-seeding. */
template <int K>
__device__ __forceinline__ bool m_step(const double (&sums)[3 * K + 1], double (&alpha)[K], double (&mu)[K],
                                       double (&lambda)[K])
{
    double weight_total = 0.0, next_alpha[K], next_mu[K], next_lambda[K];
    bool valid = true;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const double wj = sums[1 + j], deviation = sums[1 + K + j], spread = sums[1 + 2 * K + j];
        const double shift = deviation / wj, m = mu[j] - shift;
        const double denominator = spread - deviation / m * (shift / mu[j]), l = wj * mu[j] / denominator;
        valid = valid && wj > 0.0 && isfinite(m) && m > 0.0 && denominator > 0.0 && isfinite(l) && l > 0.0;
        next_alpha[j] = wj;
        next_mu[j] = m;
        next_lambda[j] = l;
        weight_total += wj;
    }
    if (!valid)
        return false;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        alpha[j] = next_alpha[j] / weight_total;
        mu[j] = next_mu[j];
        lambda[j] = next_lambda[j];
    }
    return true;
}

template <int K>
__device__ __forceinline__ void load_start(const statgpu_cuda_igmm_component *component, double (&alpha)[K],
                                           double (&mu)[K], double (&lambda)[K])
{
#pragma unroll
    for (int j = 0; j < K; ++j) {
        alpha[j] = component[j].alpha;
        mu[j] = component[j].mu;
        lambda[j] = component[j].lambda;
    }
}

template <int K>
__device__ __forceinline__ void store_start(statgpu_cuda_igmm_component *component, const double (&alpha)[K],
                                            const double (&mu)[K], const double (&lambda)[K])
{
#pragma unroll
    for (int j = 0; j < K; ++j) {
        component[j].alpha = alpha[j];
        component[j].mu = mu[j];
        component[j].lambda = lambda[j];
    }
}

__device__ __forceinline__ statgpu_cuda_igmm_fit fit_outcome(double log_likelihood, unsigned long long iteration,
                                                             int converged, int needs_cpu)
{
    statgpu_cuda_igmm_fit outcome;
    outcome.log_likelihood = log_likelihood;
    outcome.iterations = static_cast<uint32_t>(iteration);
    outcome.converged = static_cast<uint8_t>(converged);
    outcome.needs_cpu = static_cast<uint8_t>(needs_cpu);
    outcome.pad[0] = outcome.pad[1] = 0;
    return outcome;
}

/* Blocks an SM holds of igmm_fit_kernel<K> at the least: a cap on its
 * registers (80 at K <= 2, 128 at K <= 4, without spills on sm_90) that
 * keeps the occupancy the uncentred sums had (78 registers at K = 2, 122 at
 * K = 4). Uncapped, the spread kept from the terms to the sums took K = 2
 * to 86 registers, two blocks an SM instead of three: 40,000 data sets of
 * 2,000 values x 10 starts took 0.90 s on the H200 against 0.81 s capped
 * (0.78 s with the uncentred sums). */
constexpr int fit_blocks_per_sm(int k)
{
    return k <= 2 ? 3 : k <= 4 ? 2 : 1;
}

/* The data sets that fit in shared memory, a block each: its values, -3/2
 * log x and 1 / x on chip, its starts one after another. */
template <int K>
__global__ void __launch_bounds__(kWarps * kWarp, fit_blocks_per_sm(K)) igmm_fit_kernel(FitArgs args)
{
    extern __shared__ double shared[];
    /* The log-likelihood, then w, w (mu - x) and w (mu - x)^2 / (mu x) per component. */
    constexpr int kSums = 3 * K + 1;
    const int set = blockIdx.x;
    const size_t n = args.lengths[set];
    if (!args.fitted[set] || n > args.shared_values)
        return;  /* not fitted, or a long set: the grid path's */
    const double *x_global = args.values + args.offsets[set];
    const int warps = blockDim.x / kWarp;
    double *x = shared, *log_term = shared + args.shared_values, *inverse = shared + 2 * args.shared_values;
    double *partial = shared + 3 * args.shared_values;  /* warps x kSums */
    double *totals = partial + warps * kSums;           /* kSums */
    for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
        const double value = x_global[i];
        x[i] = value;
        log_term[i] = -1.5 * log(value);
        inverse[i] = 1.0 / value;
    }
    __syncthreads();
    for (int start = 0; start < args.start_count; ++start) {
        const size_t task = size_t(set) * args.start_count + start;
        statgpu_cuda_igmm_component *component = args.components + task * K;
        double alpha[K], mu[K], lambda[K];
        load_start<K>(component, alpha, mu, lambda);
        double previous = -INFINITY, log_likelihood = 0.0;
        unsigned long long iteration = 0;
        int converged = 0, needs_cpu = 0;
        for (;;) {
            const Model<K> model = model_of<K>(alpha, mu, lambda);
            double sums[kSums];
#pragma unroll
            for (int v = 0; v < kSums; ++v)
                sums[v] = 0.0;
            /* The logs of the values' sums (each in [1, K]) are taken of
             * their products, once per kLogBatch values, as the CPU does. */
            double product = 1.0;
            int in_product = 0;
            for (size_t i = threadIdx.x; i < n; i += blockDim.x)
                add_value<K>(model, x[i], log_term[i], inverse[i], sums, product, in_product);
            sums[0] += log(product);
            block_sums<K>(sums, partial, totals);
            log_likelihood = sums[0];
            if (iteration > 0 && fabs(log_likelihood - previous) < args.tolerance) {
                converged = 1;
                break;
            }
            if (iteration == args.max_iterations)
                break;
            previous = log_likelihood;
            /* The M-step, the same on every thread. */
            if (!m_step<K>(sums, alpha, mu, lambda)) {
                needs_cpu = 1;
                break;
            }
            ++iteration;
        }
        if (threadIdx.x == 0) {
            store_start<K>(component, alpha, mu, lambda);
            args.fits[task] = fit_outcome(log_likelihood, iteration, converged, needs_cpu);
        }
    }
}

/*
 * The grid path: data sets longer than shared memory holds, without a size
 * limit. Every (long data set, start) pair is a task; one EM iteration is two
 * launches over all of them: grid_e_kernel, a block per kChunkValues values of
 * a task (its -3/2 log x and 1 / x taken once, by grid_terms_kernel), writes
 * the block's sums; grid_m_kernel, a thread per task, adds its blocks' sums
 * in block order, tests convergence as igmm_fit_kernel does and takes the
 * M-step. A finished task's blocks return at once. The host launches the
 * pairs until every task has finished (at most max_iterations + 1).
 */
constexpr size_t kChunkValues = 8192;
constexpr int kGridThreads = 256;

struct GridTask {
    unsigned long long values;   /* the set's first value in FitArgs::values */
    unsigned long long terms;    /* its first term in the terms and inverses */
    unsigned long long length;
    unsigned long long task;     /* set x start_count + start */
    unsigned first_block;        /* its first block in grid_e_kernel's grid */
    unsigned block_count;
};

struct GridState {
    double previous;             /* the last E-step's log-likelihood */
    unsigned long long iteration;
    int done;
    int converged;
    int needs_cpu;
    int pad;
};

struct GridArgs {
    const double *values;
    double *terms;               /* -3/2 log x of the long sets' values */
    double *inverses;            /* 1 / x */
    const GridTask *tasks;
    const unsigned *block_task;  /* each block's task */
    GridState *state;
    double *partials;            /* blocks x kSums */
    unsigned *remaining;         /* tasks not finished */
    int task_count;
    int start_count;
    unsigned long long max_iterations;
    double tolerance;
    statgpu_cuda_igmm_component *components;
    statgpu_cuda_igmm_fit *fits;
};

/* -3/2 log x and 1 / x of every long set's values, by the blocks of each
 * set's first start. */
__global__ void __launch_bounds__(kGridThreads) grid_terms_kernel(GridArgs args)
{
    const GridTask task = args.tasks[args.block_task[blockIdx.x]];
    if (task.task % static_cast<unsigned long long>(args.start_count) != 0)
        return;
    const size_t begin = static_cast<size_t>(blockIdx.x - task.first_block) * kChunkValues;
    const size_t end = begin + kChunkValues < task.length ? begin + kChunkValues : task.length;
    for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
        const double value = args.values[task.values + i];
        args.terms[task.terms + i] = -1.5 * log(value);
        args.inverses[task.terms + i] = 1.0 / value;
    }
}

template <int K>
__global__ void __launch_bounds__(kGridThreads) grid_e_kernel(GridArgs args)
{
    constexpr int kSums = 3 * K + 1;
    __shared__ double partial[kGridThreads / kWarp * kSums], totals[kSums];
    const unsigned index = args.block_task[blockIdx.x];
    if (args.state[index].done)
        return;
    const GridTask task = args.tasks[index];
    double alpha[K], mu[K], lambda[K];
    load_start<K>(args.components + task.task * K, alpha, mu, lambda);
    const Model<K> model = model_of<K>(alpha, mu, lambda);
    double sums[kSums];
#pragma unroll
    for (int v = 0; v < kSums; ++v)
        sums[v] = 0.0;
    double product = 1.0;
    int in_product = 0;
    const size_t begin = static_cast<size_t>(blockIdx.x - task.first_block) * kChunkValues;
    const size_t end = begin + kChunkValues < task.length ? begin + kChunkValues : task.length;
    for (size_t i = begin + threadIdx.x; i < end; i += blockDim.x)
        add_value<K>(model, args.values[task.values + i], args.terms[task.terms + i], args.inverses[task.terms + i],
                     sums, product, in_product);
    sums[0] += log(product);
    block_sums<K>(sums, partial, totals);
    if (threadIdx.x < kSums)
        args.partials[static_cast<size_t>(blockIdx.x) * kSums + threadIdx.x] = totals[threadIdx.x];
}

template <int K>
__global__ void grid_m_kernel(GridArgs args)
{
    constexpr int kSums = 3 * K + 1;
    const int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= args.task_count || args.state[index].done)
        return;
    const GridTask task = args.tasks[index];
    GridState state = args.state[index];
    double sums[kSums];
#pragma unroll
    for (int v = 0; v < kSums; ++v)
        sums[v] = 0.0;
    for (unsigned b = 0; b < task.block_count; ++b)
#pragma unroll
        for (int v = 0; v < kSums; ++v)
            sums[v] += args.partials[static_cast<size_t>(task.first_block + b) * kSums + v];
    statgpu_cuda_igmm_component *component = args.components + task.task * K;
    double alpha[K], mu[K], lambda[K];
    load_start<K>(component, alpha, mu, lambda);
    const double log_likelihood = sums[0];
    if (state.iteration > 0 && fabs(log_likelihood - state.previous) < args.tolerance) {
        state.converged = 1;
        state.done = 1;
    } else if (state.iteration == args.max_iterations) {
        state.done = 1;
    } else {
        state.previous = log_likelihood;
        if (m_step<K>(sums, alpha, mu, lambda)) {
            store_start<K>(component, alpha, mu, lambda);
            ++state.iteration;
        } else {
            state.needs_cpu = 1;
            state.done = 1;
        }
    }
    if (state.done) {
        args.fits[task.task] = fit_outcome(log_likelihood, state.iteration, state.converged, state.needs_cpu);
        atomicSub(args.remaining, 1u);
    }
    args.state[index] = state;
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

/* One EM iteration of the grid path: the E-step's blocks, then the tasks'
 * M-steps. */
template <int K>
cudaError_t launch_grid_iteration(const GridArgs &args, unsigned blocks, cudaStream_t stream)
{
    grid_e_kernel<K><<<blocks, kGridThreads, 0, stream>>>(args);
    const unsigned m_blocks = static_cast<unsigned>((args.task_count + 127) / 128);
    grid_m_kernel<K><<<m_blocks, 128, 0, stream>>>(args);
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

cudaError_t grid_iteration_for(size_t k, const GridArgs &args, unsigned blocks, cudaStream_t stream)
{
    switch (k) {
    case 1: return launch_grid_iteration<1>(args, blocks, stream);
    case 2: return launch_grid_iteration<2>(args, blocks, stream);
    case 3: return launch_grid_iteration<3>(args, blocks, stream);
    case 4: return launch_grid_iteration<4>(args, blocks, stream);
    case 5: return launch_grid_iteration<5>(args, blocks, stream);
    case 6: return launch_grid_iteration<6>(args, blocks, stream);
    case 7: return launch_grid_iteration<7>(args, blocks, stream);
    default: return launch_grid_iteration<8>(args, blocks, stream);
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
    /* The grid path's tasks: every start of every set longer than shared
     * memory holds, kChunkValues values a block. */
    const size_t shared_values = std::min(longest, kMostSharedValues);
    constexpr size_t kMostSums = 3 * STATGPU_CUDA_IGMM_MOST_COMPONENTS + 1;
    std::vector<GridTask> grid_tasks;
    std::vector<unsigned> block_task;
    size_t long_values = 0;
    for (size_t s = 0; s < set_count; ++s) {
        if (!flags[s] || counts[s] <= shared_values)
            continue;
        const size_t chunks = (counts[s] + kChunkValues - 1) / kChunkValues;
        for (size_t start = 0; start < start_count; ++start) {
            if (block_task.size() + chunks > 0x7fffffffu) {
                call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "igmm_fit: too many long data sets x starts");
                return call.status();
            }
            grid_tasks.push_back({ offsets[s], long_values, counts[s], s * start_count + start,
                                   static_cast<unsigned>(block_task.size()), static_cast<unsigned>(chunks) });
            block_task.insert(block_task.end(), chunks, static_cast<unsigned>(grid_tasks.size() - 1));
        }
        long_values += counts[s];
    }
    std::vector<GridState> grid_states(grid_tasks.size(), GridState{ -INFINITY, 0, 0, 0, 0, 0 });
    if (!call.check(cudaSetDevice(state->device), "selecting the CUDA device"))
        return call.status();
    cudaStream_t stream = state->stream;

    double *d_values = nullptr;
    unsigned long long *d_offsets = nullptr, *d_lengths = nullptr;
    uint8_t *d_fitted = nullptr;
    statgpu_cuda_igmm_component *d_components = nullptr;
    statgpu_cuda_igmm_fit *d_fits = nullptr;
    GridArgs grid{};
    GridTask *d_tasks = nullptr;
    unsigned *d_block_task = nullptr;
    const SessionArray arrays[] = {
        { reinterpret_cast<void **>(&d_values), std::max<size_t>(total, 1) * sizeof(double) },
        { reinterpret_cast<void **>(&d_offsets), set_count * sizeof(unsigned long long) },
        { reinterpret_cast<void **>(&d_lengths), set_count * sizeof(unsigned long long) },
        { reinterpret_cast<void **>(&d_fitted), set_count },
        { reinterpret_cast<void **>(&d_components), tasks * k * sizeof(statgpu_cuda_igmm_component) },
        { reinterpret_cast<void **>(&d_fits), tasks * sizeof(statgpu_cuda_igmm_fit) },
        { reinterpret_cast<void **>(&grid.terms), std::max<size_t>(long_values, 1) * sizeof(double) },
        { reinterpret_cast<void **>(&grid.inverses), std::max<size_t>(long_values, 1) * sizeof(double) },
        { reinterpret_cast<void **>(&d_tasks), std::max<size_t>(grid_tasks.size(), 1) * sizeof(GridTask) },
        { reinterpret_cast<void **>(&d_block_task), std::max<size_t>(block_task.size(), 1) * sizeof(unsigned) },
        { reinterpret_cast<void **>(&grid.state), std::max<size_t>(grid_states.size(), 1) * sizeof(GridState) },
        { reinterpret_cast<void **>(&grid.partials), std::max<size_t>(block_task.size(), 1) * kMostSums * sizeof(double) },
        { reinterpret_cast<void **>(&grid.remaining), sizeof(unsigned) },
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
    args.shared_values = shared_values;
    const int warps = kWarps;
    const size_t shared_bytes = (3 * std::max<size_t>(args.shared_values, 1) + (kWarps + 1) * (3 * k + 1))
                                * sizeof(double);
    if (!call.check(launch_for(k, args, set_count, warps, shared_bytes, stream), "launching the mixtures' EM"))
        return call.status();
    if (!grid_tasks.empty()) {
        grid.values = d_values;
        grid.tasks = d_tasks;
        grid.block_task = d_block_task;
        grid.task_count = static_cast<int>(grid_tasks.size());
        grid.start_count = static_cast<int>(start_count);
        grid.max_iterations = max_iterations;
        grid.tolerance = tolerance;
        grid.components = d_components;
        grid.fits = d_fits;
        unsigned remaining = static_cast<unsigned>(grid_tasks.size());
        const unsigned blocks = static_cast<unsigned>(block_task.size());
        if (!call.check(cudaMemcpyAsync(d_tasks, grid_tasks.data(), grid_tasks.size() * sizeof(GridTask),
                                        cudaMemcpyHostToDevice, stream), "copying the long data sets' tasks")
            || !call.check(cudaMemcpyAsync(d_block_task, block_task.data(), block_task.size() * sizeof(unsigned),
                                           cudaMemcpyHostToDevice, stream), "copying the long data sets' tasks")
            || !call.check(cudaMemcpyAsync(grid.state, grid_states.data(), grid_states.size() * sizeof(GridState),
                                           cudaMemcpyHostToDevice, stream), "copying the long data sets' tasks")
            || !call.check(cudaMemcpyAsync(grid.remaining, &remaining, sizeof remaining, cudaMemcpyHostToDevice,
                                           stream), "copying the long data sets' tasks"))
            return call.status();
        grid_terms_kernel<<<blocks, kGridThreads, 0, stream>>>(grid);
        if (!call.check(cudaGetLastError(), "launching the long data sets' terms"))
            return call.status();
        /* At most max_iterations + 1 E-steps; every 4 iterations the host
         * asks whether any task is still running. */
        for (size_t iteration = 0; iteration <= max_iterations; ++iteration) {
            if (!call.check(grid_iteration_for(k, grid, blocks, stream), "launching the long data sets' EM"))
                return call.status();
            if (iteration % 4 == 3 || iteration == max_iterations) {
                if (!call.check(cudaMemcpyAsync(&remaining, grid.remaining, sizeof remaining, cudaMemcpyDeviceToHost,
                                                stream), "running the long data sets' EM")
                    || !call.check(cudaStreamSynchronize(stream), "running the long data sets' EM"))
                    return call.status();
                if (remaining == 0)
                    break;
            }
        }
    }
    if (!call.check(cudaEventRecord(state->events[kEventEnd], stream), "timing the inverse Gaussian mixtures")
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
