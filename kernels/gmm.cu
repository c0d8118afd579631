/*
 * gmm.cu: the E-step of a Gaussian mixture and its sufficient statistics in
 * one pass over the data (cuda_module.h's statgpu_cuda_gmm_i).
 *
 * One launch per E-step: a fixed grid of blocks of kRows threads, each block
 * taking tiles of kRows rows in turn. For a tile,
 *   1. a thread per row: x in registers, the k log densities (log_norm_j -
 *      |F_j^T (x - mean_j)|^2 / 2, the model in shared memory), their
 *      log-sum-exp, the responsibilities into shared memory beside the tile's
 *      x; the row's log-likelihood into the thread's running sum;
 *   2. threads by (component j, lane): each lane takes every L-th row of the
 *      tile and adds r (x - mean_j), r and the products r (x - mean_j)(x -
 *      mean_j)^T (upper triangle, or the diagonal) to registers.
 * After the last tile the lanes of a component are added by warp shuffles and
 * then in shared memory, in a fixed order, and each block writes its sums;
 * a second kernel adds the blocks' sums in block order. No atomics: the same
 * bits on every repeat. The data are padded to D = 1, 2, 4, 8 or 16 columns of
 * zeros (with zero means and factors there), so that a row lives in
 * registers; more than 16 variables run on the CPU.
 */
#include "cuda_state.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

struct statgpu_cuda_gmm_session {
    statgpu_cuda_state *state = nullptr;
    size_t n = 0;
    int d = 0, padded = 0, k = 0, lanes = 0, grid = 0;
    size_t shared_bytes = 0, entries = 0, stride = 0, model_doubles = 0;
    double *d_data = nullptr;       /* n x padded, column-major */
    double *d_model = nullptr;      /* log_norm k, means k x padded (j padded + v), factors */
    double *d_partials = nullptr;   /* grid x stride */
    double *d_reduced = nullptr;    /* stride */
    double *d_resp = nullptr;       /* n x k, for the final E-step */
    double *d_row_ll = nullptr;     /* n */
    double *h_model = nullptr;      /* pinned */
    double *h_reduced = nullptr;    /* pinned */
};

namespace statgpu_cuda {
namespace {

constexpr int kRows = 256;  /* rows per tile = threads per block */

/* Entries of one component's sums: r, r (x - c) (D), and the products. */
__host__ __device__ constexpr int product_count(int d, bool triangular)
{
    return triangular ? d * (d + 1) / 2 : d;
}
__host__ __device__ constexpr int entry_count(int d, bool triangular)
{
    return 1 + d + product_count(d, triangular);
}

template <int D, bool Triangular>
__global__ void __launch_bounds__(kRows) estep_kernel(const double *__restrict__ data, size_t n, int k, int lanes,
                                                      const double *__restrict__ model, double *__restrict__ partials,
                                                      size_t stride, double *__restrict__ resp,
                                                      double *__restrict__ row_ll)
{
    constexpr int E = entry_count(D, Triangular);
    constexpr int P = product_count(D, Triangular);
    extern __shared__ double shared[];
    const int factor_doubles = Triangular ? D * D : D;
    double *s_log_norm = shared;
    double *s_means = s_log_norm + k;                 /* j D + v */
    double *s_factors = s_means + k * D;              /* j D^2 + r + D c, or j D + v */
    double *s_x = s_factors + k * factor_doubles;     /* v kRows + t */
    double *s_r = s_x + D * kRows;                    /* j kRows + t */
    const int model_doubles = k * (1 + D + factor_doubles);
    for (int e = threadIdx.x; e < model_doubles; e += blockDim.x)
        shared[e] = model[e];

    const int t = threadIdx.x;
    const int j_own = t / lanes, lane = t % lanes;
    double own_r = 0.0, own_first[D], own_products[P];
#pragma unroll
    for (int v = 0; v < D; ++v)
        own_first[v] = 0.0;
#pragma unroll
    for (int p = 0; p < P; ++p)
        own_products[p] = 0.0;
    double ll = 0.0;
    __syncthreads();

    const size_t tiles = (n + kRows - 1) / kRows;
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const size_t i = tile * kRows + t;
        const bool valid = i < n;
        double x[D];
#pragma unroll
        for (int v = 0; v < D; ++v) {
            x[v] = valid ? data[i + n * v] : 0.0;
            s_x[v * kRows + t] = x[v];
        }
        double largest = -INFINITY;
        for (int j = 0; j < k; ++j) {
            double c[D];
#pragma unroll
            for (int v = 0; v < D; ++v)
                c[v] = x[v] - s_means[j * D + v];
            double quadratic = 0.0;
            if (Triangular) {
                const double *f = s_factors + j * D * D;
#pragma unroll
                for (int col = 0; col < D; ++col) {
                    double y = 0.0;
#pragma unroll
                    for (int row = 0; row <= col; ++row)
                        y = fma(c[row], f[row + D * col], y);
                    quadratic = fma(y, y, quadratic);
                }
            } else {
                const double *f = s_factors + j * D;
#pragma unroll
                for (int v = 0; v < D; ++v) {
                    const double y = c[v] * f[v];
                    quadratic = fma(y, y, quadratic);
                }
            }
            const double lp = s_log_norm[j] - 0.5 * quadratic;
            s_r[j * kRows + t] = lp;
            largest = fmax(largest, lp);
        }
        double total = 0.0;
        for (int j = 0; j < k; ++j)
            total += exp(s_r[j * kRows + t] - largest);
        const double lse = largest + log(total);
        for (int j = 0; j < k; ++j) {
            const double r = valid ? exp(s_r[j * kRows + t] - lse) : 0.0;
            s_r[j * kRows + t] = r;
            if (resp != nullptr && valid)
                resp[i + n * j] = r;
        }
        if (valid) {
            ll += lse;
            if (row_ll != nullptr)
                row_ll[i] = lse;
        }
        __syncthreads();

        if (j_own < k) {
            double mean[D];
#pragma unroll
            for (int v = 0; v < D; ++v)
                mean[v] = s_means[j_own * D + v];
            for (int row = lane; row < kRows; row += lanes) {
                const double r = s_r[j_own * kRows + row];
                if (r == 0.0)
                    continue;
                double c[D];
#pragma unroll
                for (int v = 0; v < D; ++v)
                    c[v] = s_x[v * kRows + row] - mean[v];
                own_r += r;
#pragma unroll
                for (int v = 0; v < D; ++v) {
                    const double w = r * c[v];
                    own_first[v] += w;
                    if (Triangular) {
#pragma unroll
                        for (int b = v; b < D; ++b)  /* entry (v, b), v <= b: column b, row v */
                            own_products[b * (b + 1) / 2 + v] = fma(w, c[b], own_products[b * (b + 1) / 2 + v]);
                    } else {
                        own_products[v] = fma(w, c[v], own_products[v]);
                    }
                }
            }
        }
        __syncthreads();
    }

    /* The log-likelihood: warps, then the warps in order. */
    double *s_reduce = s_x;  /* the tile's space, free now */
    for (int offset = 16; offset > 0; offset /= 2)
        ll += __shfl_down_sync(0xffffffffu, ll, offset);
    if (t % 32 == 0)
        s_reduce[t / 32] = ll;
    __syncthreads();
    if (t == 0) {
        double block_ll = 0.0;
        for (int w = 0; w < kRows / 32; ++w)
            block_ll += s_reduce[w];
        partials[blockIdx.x * stride] = block_ll;
    }
    __syncthreads();

    /* A component's lanes: segments of width w = min(lanes, 32) by shuffles,
     * then the segments of that component in order. */
    const int width = lanes < 32 ? lanes : 32;
    const int segments = lanes / width;
    auto fold = [&](double value) {
        for (int offset = width / 2; offset > 0; offset /= 2)
            value += __shfl_down_sync(0xffffffffu, value, offset, width);
        return value;
    };
    const int segment = t / width;  /* j_own * segments + lane / width */
    {
        double value = fold(own_r);
        if (t % width == 0 && j_own < k)
            s_reduce[segment * E] = value;
    }
#pragma unroll
    for (int v = 0; v < D; ++v) {
        double value = fold(own_first[v]);
        if (t % width == 0 && j_own < k)
            s_reduce[segment * E + 1 + v] = value;
    }
#pragma unroll
    for (int p = 0; p < P; ++p) {
        double value = fold(own_products[p]);
        if (t % width == 0 && j_own < k)
            s_reduce[segment * E + 1 + D + p] = value;
    }
    __syncthreads();
    for (int e = t; e < k * E; e += blockDim.x) {
        const int j = e / E, entry = e % E;
        double value = 0.0;
        for (int q = 0; q < segments; ++q)
            value += s_reduce[(j * segments + q) * E + entry];
        partials[blockIdx.x * stride + 1 + e] = value;
    }
}

/* reduced[e] = the blocks' partials[b stride + e] added in block order. */
__global__ void add_blocks_kernel(const double *__restrict__ partials, int blocks, size_t stride,
                                  double *__restrict__ reduced)
{
    const size_t e = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (e >= stride)
        return;
    double total = 0.0;
    for (int b = 0; b < blocks; ++b)
        total += partials[b * stride + e];
    reduced[e] = total;
}

using EstepKernel = void (*)(const double *, size_t, int, int, const double *, double *, size_t, double *,
                             double *);

EstepKernel estep_kernel_of(int padded, bool triangular)
{
    switch (padded) {
    case 1:  return triangular ? estep_kernel<1, true> : estep_kernel<1, false>;
    case 2:  return triangular ? estep_kernel<2, true> : estep_kernel<2, false>;
    case 4:  return triangular ? estep_kernel<4, true> : estep_kernel<4, false>;
    case 8:  return triangular ? estep_kernel<8, true> : estep_kernel<8, false>;
    default: return triangular ? estep_kernel<16, true> : estep_kernel<16, false>;
    }
}

int padded_columns(size_t d)
{
    int padded = 1;
    while (static_cast<size_t>(padded) < d)
        padded *= 2;
    return padded;
}

/* Shared memory of a launch: the model (with triangular factors, the larger),
 * and the tile or, after it, the lanes' sums. */
size_t shared_bytes_for(int padded, int k, int lanes)
{
    const size_t model = static_cast<size_t>(k) * (1 + padded + padded * padded);
    const size_t tile = static_cast<size_t>(padded + k) * kRows;
    const int width = lanes < 32 ? lanes : 32;
    const size_t sums = static_cast<size_t>(kRows / width) * entry_count(padded, true);
    return (model + std::max(tile, std::max(sums, static_cast<size_t>(kRows / 32)))) * sizeof(double);
}

void free_session(statgpu_cuda_gmm_session *session)
{
    if (session == nullptr)
        return;
    cudaFree(session->d_data);
    cudaFree(session->d_model);
    cudaFree(session->d_partials);
    cudaFree(session->d_reduced);
    cudaFree(session->d_resp);
    cudaFree(session->d_row_ll);
    cudaFreeHost(session->h_model);
    cudaFreeHost(session->h_reduced);
    delete session;
}

} /* namespace */

statgpu_cuda_status gmm_begin(statgpu_cuda_state *state, const double *data, size_t n_obs, size_t n_vars,
                              size_t ld, size_t k, statgpu_cuda_gmm_session **out_session,
                              statgpu_cuda_timing *timing, char *msg, size_t msg_bytes)
{
    CallStatus call(msg, msg_bytes);
    if (out_session == nullptr) {
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "gmm_begin: out_session is NULL");
        return call.status();
    }
    *out_session = nullptr;
    if (state == nullptr || data == nullptr || n_obs == 0 || n_vars == 0 || ld < n_obs || k == 0 || k > n_obs) {
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "gmm_begin: invalid arguments");
        return call.status();
    }
    if (n_vars > 16 || k > static_cast<size_t>(kRows)) {
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "the GPU's Gaussian mixtures take at most 16 variables and 256 "
                                                 "components");
        return call.status();
    }
    if (!call.check(cudaSetDevice(state->device), "selecting the CUDA device"))
        return call.status();
    statgpu_cuda_gmm_session *session = new (std::nothrow) statgpu_cuda_gmm_session;
    if (session == nullptr) {
        call.fail(STATGPU_CUDA_OUT_OF_MEMORY, "gmm_begin: out of host memory");
        return call.status();
    }
    session->state = state;
    session->n = n_obs;
    session->d = static_cast<int>(n_vars);
    session->padded = padded_columns(n_vars);
    session->k = static_cast<int>(k);
    int lanes = 1;
    while (static_cast<size_t>(lanes) * 2 * k <= static_cast<size_t>(kRows))
        lanes *= 2;
    session->lanes = lanes;
    session->shared_bytes = shared_bytes_for(session->padded, session->k, lanes);
    int optin = 0;
    (void)cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, state->device);
    if (session->shared_bytes > static_cast<size_t>(std::max(optin, 48 * 1024))) {
        free_session(session);
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "this mixture's model does not fit in the GPU's shared memory");
        return call.status();
    }
    const int padded = session->padded;
    session->entries = entry_count(padded, true);
    session->stride = 1 + k * session->entries;
    session->model_doubles = k * (1 + padded + padded * padded);
    /* Two blocks per multiprocessor, no more than there are tiles. */
    const size_t tiles = (n_obs + kRows - 1) / kRows;
    session->grid = static_cast<int>(std::min<size_t>(tiles, 2 * static_cast<size_t>(state->multiprocessor_count)));
    cudaStream_t stream = state->stream;
    cudaEvent_t *events = state->events;
    bool ok = call.check(cudaMalloc(&session->d_data, n_obs * padded * sizeof(double)), "allocating the GMM data") &&
              call.check(cudaMalloc(&session->d_model, session->model_doubles * sizeof(double)),
                         "allocating the GMM model") &&
              call.check(cudaMalloc(&session->d_partials, session->grid * session->stride * sizeof(double)),
                         "allocating the GMM sums") &&
              call.check(cudaMalloc(&session->d_reduced, session->stride * sizeof(double)), "allocating the GMM sums") &&
              call.check(cudaMallocHost(&session->h_model, session->model_doubles * sizeof(double)),
                         "allocating the GMM model") &&
              call.check(cudaMallocHost(&session->h_reduced, session->stride * sizeof(double)),
                         "allocating the GMM sums");
    for (bool triangular : {true, false})
        if (ok && session->shared_bytes > 48 * 1024)
            ok = call.check(cudaFuncSetAttribute(estep_kernel_of(padded, triangular),
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(session->shared_bytes)),
                            "reserving shared memory for the GMM E-step");
    if (ok)
        ok = call.check(cudaEventRecord(events[kEventStart], stream), "recording an event") &&
             call.check(cudaMemcpy2DAsync(session->d_data, n_obs * sizeof(double), data, ld * sizeof(double),
                                          n_obs * sizeof(double), n_vars, cudaMemcpyHostToDevice, stream),
                        "copying the GMM data to the GPU") &&
             (static_cast<size_t>(padded) == n_vars ||
              call.check(cudaMemsetAsync(session->d_data + n_obs * n_vars, 0,
                                         n_obs * (padded - n_vars) * sizeof(double), stream),
                         "padding the GMM data")) &&
             call.check(cudaEventRecord(events[kEventEnd], stream), "recording an event") &&
             call.check(cudaStreamSynchronize(stream), "copying the GMM data to the GPU");
    if (!ok) {
        free_session(session);
        return call.status();
    }
    if (timing != nullptr)
        timing->transfer_seconds += elapsed_ms(events[kEventStart], events[kEventEnd]) * 1e-3;
    *out_session = session;
    if (msg != nullptr && msg_bytes > 0)
        msg[0] = '\0';
    return STATGPU_CUDA_OK;
}

statgpu_cuda_status gmm_estep(statgpu_cuda_gmm_session *session, const statgpu_cuda_gmm_model *model,
                              statgpu_cuda_gmm_sums *out, statgpu_cuda_timing *timing, char *msg, size_t msg_bytes)
{
    CallStatus call(msg, msg_bytes);
    if (session == nullptr || model == nullptr || out == nullptr || model->log_norm == nullptr ||
        model->means == nullptr || model->factors == nullptr || out->sums == nullptr || out->moments == nullptr) {
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "gmm_estep: invalid arguments");
        return call.status();
    }
    statgpu_cuda_state *state = session->state;
    if (!call.check(cudaSetDevice(state->device), "selecting the CUDA device"))
        return call.status();
    const int k = session->k, d = session->d, padded = session->padded;
    const bool triangular = model->triangular != 0;
    const bool final_step = out->responsibilities != nullptr || out->row_log_likelihood != nullptr;
    cudaStream_t stream = state->stream;
    cudaEvent_t *events = state->events;

    /* The model, padded: log_norm, means (j padded + v), factors. */
    double *h = session->h_model;
    const int factor_doubles = triangular ? padded * padded : padded;
    std::memset(h, 0, session->model_doubles * sizeof(double));
    for (int j = 0; j < k; ++j) {
        h[j] = model->log_norm[j];
        for (int v = 0; v < d; ++v)
            h[k + j * padded + v] = model->means[j + static_cast<size_t>(k) * v];
        double *f = h + k + k * padded + static_cast<size_t>(j) * factor_doubles;
        if (triangular) {
            for (int col = 0; col < d; ++col)
                for (int row = 0; row <= col; ++row)
                    f[row + padded * col] = model->factors[static_cast<size_t>(j) * d * d + row + d * col];
        } else {
            for (int v = 0; v < d; ++v)
                f[v] = model->factors[j + static_cast<size_t>(k) * v];
        }
    }
    if (final_step && session->d_resp == nullptr &&
        (!call.check(cudaMalloc(&session->d_resp, session->n * k * sizeof(double)), "allocating the responsibilities") ||
         !call.check(cudaMalloc(&session->d_row_ll, session->n * sizeof(double)), "allocating the log densities")))
        return call.status();
    const size_t model_used = static_cast<size_t>(k) * (1 + padded + factor_doubles);
    if (!call.check(cudaEventRecord(events[kEventStart], stream), "recording an event") ||
        !call.check(cudaMemcpyAsync(session->d_model, h, model_used * sizeof(double), cudaMemcpyHostToDevice, stream),
                    "copying the GMM model to the GPU"))
        return call.status();
    estep_kernel_of(padded, triangular)<<<session->grid, kRows, session->shared_bytes, stream>>>(
        session->d_data, session->n, k, session->lanes, session->d_model, session->d_partials, session->stride,
        final_step ? session->d_resp : nullptr, final_step ? session->d_row_ll : nullptr);
    if (!call.check(cudaGetLastError(), "running the GMM E-step"))
        return call.status();
    const size_t used = 1 + static_cast<size_t>(k) * entry_count(padded, triangular);
    add_blocks_kernel<<<static_cast<unsigned>((used + 255) / 256), 256, 0, stream>>>(session->d_partials,
                                                                                    session->grid, session->stride,
                                                                                    session->d_reduced);
    if (!call.check(cudaGetLastError(), "adding the GMM sums") ||
        !call.check(cudaEventRecord(events[kEventData], stream), "recording an event") ||
        !call.check(cudaMemcpyAsync(session->h_reduced, session->d_reduced, used * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream), "reading the GMM sums"))
        return call.status();
    if (final_step) {
        if (out->responsibilities != nullptr &&
            !call.check(cudaMemcpyAsync(out->responsibilities, session->d_resp, session->n * k * sizeof(double),
                                        cudaMemcpyDeviceToHost, stream), "reading the responsibilities"))
            return call.status();
        if (out->row_log_likelihood != nullptr &&
            !call.check(cudaMemcpyAsync(out->row_log_likelihood, session->d_row_ll, session->n * sizeof(double),
                                        cudaMemcpyDeviceToHost, stream), "reading the log densities"))
            return call.status();
    }
    if (!call.check(cudaEventRecord(events[kEventEnd], stream), "recording an event") ||
        !call.check(cudaStreamSynchronize(stream), "running the GMM E-step"))
        return call.status();

    /* Unpadded, in the engine's layouts. */
    const double *reduced = session->h_reduced;
    const int entries = entry_count(padded, triangular);
    out->log_likelihood = reduced[0];
    for (int j = 0; j < k; ++j) {
        const double *component = reduced + 1 + static_cast<size_t>(j) * entries;
        out->sums[j] = component[0];
        for (int v = 0; v < d; ++v)
            out->sums[k + j + static_cast<size_t>(k) * v] = component[1 + v];
        const double *products = component + 1 + padded;
        if (triangular) {
            double *block = out->moments + static_cast<size_t>(j) * d * d;
            for (int col = 0; col < d; ++col)
                for (int row = 0; row < d; ++row)
                    block[row + d * col] = row <= col ? products[col * (col + 1) / 2 + row] : 0.0;
        } else {
            for (int v = 0; v < d; ++v)
                out->moments[static_cast<size_t>(j) * d + v] = products[v];
        }
    }
    if (timing != nullptr) {
        timing->compute_seconds += elapsed_ms(events[kEventStart], events[kEventData]) * 1e-3;
        timing->transfer_seconds += elapsed_ms(events[kEventData], events[kEventEnd]) * 1e-3;
    }
    if (msg != nullptr && msg_bytes > 0)
        msg[0] = '\0';
    return STATGPU_CUDA_OK;
}

void gmm_end(statgpu_cuda_gmm_session *session)
{
    if (session != nullptr)
        (void)cudaSetDevice(session->state->device);
    free_session(session);
}

} /* namespace statgpu_cuda */
