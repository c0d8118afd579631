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
 *   2. threads by (component j, part, lane): each lane takes every L-th row
 *      of the tile and adds its part of r, r (x - mean_j) and the products
 *      r (x - mean_j)(x - mean_j)^T (upper triangle, or the diagonal) to
 *      registers; or, for 8 (padded) variables with full factors and at most
 *      16 components on a GPU of compute capability 8.0 or later, a warp per
 *      component adds the products on the FP64 tensor cores, four rows per
 *      8 x 4 by 4 x 8 matrix product (17% less time per E-step at 10^6 x 8,
 *      k = 8 on the H100: bench/NOTES.md, "GMM v6").
 * After the last tile the lanes of a component are added by warp shuffles and
 * then in shared memory, in a fixed order, and each block writes its sums;
 * a second kernel adds the blocks' sums in block order. No atomics: the same
 * bits on every repeat. The data are padded to D = 1, 2, 4, 8 or 16 columns of
 * zeros (with zero means and factors there), so that a row lives in
 * registers; more than 16 variables run on the CPU.
 */
#include "cuda_state.h"
#include "mma_f64.cuh"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

struct statgpu_cuda_gmm_session {
    statgpu_cuda_state *state = nullptr;
    size_t n = 0;
    int d = 0, padded = 0, k = 0, grid = 0;
    size_t shared_bytes = 0, entries = 0, stride = 0, model_doubles = 0;
    int major = 0;                  /* the major version of the tensor-core kernel's machine code */
    double *d_data = nullptr;       /* n x padded, column-major; these arrays are carved from the
                                       state's mixture workspace */
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
constexpr size_t kMostModels = STATGPU_CUDA_GMM_MOST_MODELS;

/* Entries of one component's sums: r, r (x - c) (D), and the products. */
__host__ __device__ constexpr int product_count(int d, bool triangular)
{
    return triangular ? d * (d + 1) / 2 : d;
}
__host__ __device__ constexpr int entry_count(int d, bool triangular)
{
    return 1 + d + product_count(d, triangular);
}

/* Phase 2's threads split a component's sums into Parts parts, so that each
 * thread's share fits in registers beside two blocks per multiprocessor
 * (an array of doubles indexed only by constants, unrolled). Part p adds the
 * products of columns [part_low(p), part_low(p + 1)); part 0 also r and
 * r (x - c). Measured on the H100, 50 E-steps: n = 10^6, d = 8, k = 8, one
 * part (166 registers, one block per multiprocessor) 12.7 ms, two parts
 * (124 registers, two blocks) 10.7 ms; n = 10^7, d = 16, k = 16, one part
 * 1.13 s, eight parts (each recomputing x - mean for 2 lanes) 1.60 s: d = 16
 * keeps one. */
__host__ __device__ constexpr int part_low(int d, int parts, int p)
{
    if (parts == 2 && d == 8) {
        constexpr int bounds[] = { 0, 5, 8 };
        return bounds[p];
    }
    return p == 0 ? 0 : d;
}

__host__ __device__ constexpr int part_entries(int d, bool triangular, int parts, int p)
{
    const int low = part_low(d, parts, p), high = part_low(d, parts, p + 1);
    const int products = triangular ? high * (high + 1) / 2 - low * (low + 1) / 2 : (p == 0 ? d : 0);
    return (p == 0 ? 1 + d : 0) + products;
}

__host__ __device__ constexpr int most_part_entries(int d, bool triangular, int parts)
{
    int most = 0;
    for (int p = 0; p < parts; ++p)
        most = part_entries(d, triangular, parts, p) > most ? part_entries(d, triangular, parts, p) : most;
    return most;
}

/* The part that holds entry e of a component's sums, and e's place in it. */
__device__ inline void locate_entry(int d, bool triangular, int parts, int e, int *part, int *place)
{
    if (e <= d || !triangular || parts == 1) {
        *part = 0;
        *place = e;
        return;
    }
    const int product = e - 1 - d;  /* column b's products start at b (b + 1) / 2 */
    int b = 0;
    while ((b + 1) * (b + 2) / 2 <= product)
        ++b;
    int p = 0;
    while (part_low(d, parts, p + 1) <= b)
        ++p;
    const int low = part_low(d, parts, p);
    *part = p;
    *place = (p == 0 ? 1 + d : 0) + product - low * (low + 1) / 2;
}

template <int D, bool Triangular, int Parts, int P>
__device__ __forceinline__ void add_part(double *acc, double r, const double *c)
{
    constexpr int low = part_low(D, Parts, P), high = part_low(D, Parts, P + 1);
    int place = 0;
    if (P == 0) {
        acc[0] += r;
#pragma unroll
        for (int v = 0; v < D; ++v)
            acc[1 + v] = fma(r, c[v], acc[1 + v]);
        place = 1 + D;
    }
    if (Triangular) {
#pragma unroll
        for (int b = low; b < high; ++b) {
            const double w = r * c[b];
#pragma unroll
            for (int v = 0; v <= b; ++v)
                acc[place + b * (b + 1) / 2 - low * (low + 1) / 2 + v] =
                    fma(w, c[v], acc[place + b * (b + 1) / 2 - low * (low + 1) / 2 + v]);
        }
    } else if (P == 0) {
#pragma unroll
        for (int v = 0; v < D; ++v)
            acc[place + v] = fma(r * c[v], c[v], acc[place + v]);
    }
}

template <int D, bool Triangular, int Parts, int P = 0>
__device__ __forceinline__ void add_to_part(int part, double *acc, double r, const double *c)
{
    if (part == P)
        add_part<D, Triangular, Parts, P>(acc, r, c);
    else if constexpr (P + 1 < Parts)
        add_to_part<D, Triangular, Parts, P + 1>(part, acc, r, c);
}

/* Phase 2 on FP64 tensor cores (mma.sync m8n8k4, sm_80 and later) for
 * D = 8 with full factors and at most kMmaComponents components: warp w
 * owns components w and w + 8, and adds, four rows at a time, the products
 * r (x - mean_j)(x - mean_j)^T as one 8 x 4 by 4 x 8 matrix product into
 * its accumulator, with r and r (x - mean_j) beside it, in a fixed order (the
 * same bits on every repeat). */
constexpr int kMmaComponents = 16;
constexpr int kMmaOwn = kMmaComponents / (kRows / 32);

/* The tile's x in shared memory: variable v's kRows values at v kXStride, the
 * stride padded so that the eight variables of four rows that an mma's lanes
 * read fall in different banks. */
constexpr int kXStride = kRows + 4;

template <int D, bool Triangular, int Parts, bool Mma = false>
__global__ void __launch_bounds__(kRows, (D <= 8 || Parts > 1) ? 2 : 1)
    estep_kernel(const double *__restrict__ data, size_t n, int k, int lanes, const double *__restrict__ model,
                 size_t model_stride, double *__restrict__ partials, size_t stride, double *__restrict__ resp,
                 double *__restrict__ row_ll)
{
    constexpr int E = entry_count(D, Triangular);
    constexpr int A = most_part_entries(D, Triangular, Parts);
    extern __shared__ double shared[];
    /* blockIdx.y: the model of the launch (a restart), with its own sums. */
    model += blockIdx.y * model_stride;
    partials += static_cast<size_t>(blockIdx.y) * gridDim.x * stride;
    const int factor_doubles = Triangular ? D * D : D;
    double *s_log_norm = shared;
    double *s_means = s_log_norm + k;                 /* j D + v */
    double *s_factors = s_means + k * D;              /* j D^2 + r + D c, or j D + v */
    double *s_x = s_factors + k * factor_doubles;     /* v kXStride + t */
    double *s_r = s_x + D * kXStride;                 /* j kRows + t */
    const int model_doubles = k * (1 + D + factor_doubles);
    for (int e = threadIdx.x; e < model_doubles; e += blockDim.x)
        shared[e] = model[e];

    /* Phase 2's thread: group (component, part), then its lane. */
    const int t = threadIdx.x;
    const int group = t / lanes, lane = t % lanes;
    const int j_own = group / Parts, part = group % Parts;
    double acc[A];
#pragma unroll
    for (int a = 0; a < A; ++a)
        acc[a] = 0.0;
    double ll = 0.0;
    /* The tensor-core phase 2's sums: per owned component, the lane's two
     * entries of the 8 x 8 products, its r (x - mean)_v over its rows and its r. */
    const int warp = t / 32, v_lane = (t % 32) >> 2, s_lane = t & 3;
    double mma_products[kMmaOwn][2] = {}, mma_first[kMmaOwn] = {}, mma_r[kMmaOwn] = {};
    __syncthreads();

    const size_t tiles = (n + kRows - 1) / kRows;
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const size_t i = tile * kRows + t;
        const bool valid = i < n;
        double x[D];
#pragma unroll
        for (int v = 0; v < D; ++v) {
            x[v] = valid ? data[i + n * v] : 0.0;
            s_x[v * kXStride + t] = x[v];
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
        /* One exp per component: r_j = exp(lp_j - largest) / sum. */
        double total = 0.0;
        for (int j = 0; j < k; ++j) {
            const double e = exp(s_r[j * kRows + t] - largest);
            s_r[j * kRows + t] = e;
            total += e;
        }
        const double lse = largest + log(total), inverse = 1.0 / total;
        for (int j = 0; j < k; ++j) {
            const double r = valid ? s_r[j * kRows + t] * inverse : 0.0;
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

        if constexpr (Mma) {
            /* A's 8 x 4 fragment: lane (v, s) holds r_s (x_s - mean)_v; B's
             * 4 x 8: the same lane holds (x_s - mean)_v. */
#pragma unroll
            for (int own = 0; own < kMmaOwn; ++own) {
                const int j = warp + (kRows / 32) * own;
                if (j >= k)
                    break;
                const double mean = s_means[j * D + v_lane];
                double d0 = mma_products[own][0], d1 = mma_products[own][1];
                double first = mma_first[own], weight = mma_r[own];
#pragma unroll 4
                for (int g = 0; g < kRows / 4; ++g) {
                    const int row = 4 * g + s_lane;
                    const double r = s_r[j * kRows + row];
                    const double c = s_x[v_lane * kXStride + row] - mean;
                    const double a = r * c;
                    mma_8x8x4(d0, d1, a, c);
                    first += a;
                    weight += r;
                }
                mma_products[own][0] = d0;
                mma_products[own][1] = d1;
                mma_first[own] = first;
                mma_r[own] = weight;
            }
        } else if (j_own < k) {
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
                    c[v] = s_x[v * kXStride + row] - mean[v];
                add_to_part<D, Triangular, Parts>(part, acc, r, c);
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

    if constexpr (Mma) {
        /* A warp's own components are its alone in the block: the four lanes
         * of a variable (rows s = 0..3) added by two shuffles (the same bits
         * in each), then written as the component's entries. */
#pragma unroll
        for (int own = 0; own < kMmaOwn; ++own) {
            const int j = warp + (kRows / 32) * own;
            if (j >= k)
                break;
            double first = mma_first[own], weight = mma_r[own];
            first += __shfl_xor_sync(0xffffffffu, first, 1);
            first += __shfl_xor_sync(0xffffffffu, first, 2);
            weight += __shfl_xor_sync(0xffffffffu, weight, 1);
            weight += __shfl_xor_sync(0xffffffffu, weight, 2);
            double *out = partials + blockIdx.x * stride + 1 + static_cast<size_t>(j) * E;
            if (t % 32 == 0)
                out[0] = weight;
            if (s_lane == 0)
                out[1 + v_lane] = first;
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int col = 2 * s_lane + e;  /* C's fragment: row v_lane, columns 2 s + e */
                if (v_lane <= col)
                    out[1 + D + col * (col + 1) / 2 + v_lane] = mma_products[own][e];
            }
        }
        return;
    }

    /* A group's lanes: segments of width w = min(lanes, 32) by shuffles (every
     * thread its whole array, whatever its part), then the segments of the
     * group in order. */
    const int width = lanes < 32 ? lanes : 32;
    const int segments = lanes / width;
    const int segment = t / width;  /* group * segments + lane / width */
#pragma unroll
    for (int a = 0; a < A; ++a) {
        double value = acc[a];
        for (int offset = width / 2; offset > 0; offset /= 2)
            value += __shfl_down_sync(0xffffffffu, value, offset, width);
        if (t % width == 0 && j_own < k)
            s_reduce[segment * A + a] = value;
    }
    __syncthreads();
    for (int e = t; e < k * E; e += blockDim.x) {
        const int j = e / E, entry = e % E;
        int owner = 0, place = 0;
        locate_entry(D, Triangular, Parts, entry, &owner, &place);
        const int first_segment = (j * Parts + owner) * segments;
        double value = 0.0;
        for (int q = 0; q < segments; ++q)
            value += s_reduce[(first_segment + q) * A + place];
        partials[blockIdx.x * stride + 1 + e] = value;
    }
}

/* reduced[e] = the blocks' partials[b stride + e] added in block order, for
 * e below used, per model. */
__global__ void add_blocks_kernel(const double *__restrict__ partials, int blocks, size_t stride, size_t used,
                                  double *__restrict__ reduced)
{
    const size_t e = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    partials += static_cast<size_t>(blockIdx.y) * blocks * stride;  /* blockIdx.y: the model */
    reduced += blockIdx.y * stride;
    if (e >= used)
        return;
    double total = 0.0;
    for (int b = 0; b < blocks; ++b)
        total += partials[b * stride + e];
    reduced[e] = total;
}

using EstepKernel = void (*)(const double *, size_t, int, int, const double *, size_t, double *, size_t,
                             double *, double *);

/* The parts of phase 2 for a padded width, a covariance kind and k: more
 * where the products are many, as long as every (component, part) keeps a
 * lane. */
int parts_for(int padded, bool triangular, int k)
{
    if (!triangular)
        return 1;
    if (padded == 8 && 2 * k <= kRows)
        return 2;
    return 1;
}

/* Whether the tensor-core phase 2 runs: D = 8 with full factors, at most
 * kMmaComponents components, a GPU of compute capability 8.0 or later. */
bool use_mma(int padded, bool triangular, int k, int major)
{
    return padded == 8 && triangular && k <= kMmaComponents && major >= 8;
}

EstepKernel estep_kernel_of(int padded, bool triangular, int parts, bool mma = false)
{
    if (mma)
        return estep_kernel<8, true, 1, true>;
    switch (padded) {
    case 1:  return triangular ? estep_kernel<1, true, 1> : estep_kernel<1, false, 1>;
    case 2:  return triangular ? estep_kernel<2, true, 1> : estep_kernel<2, false, 1>;
    case 4:  return triangular ? estep_kernel<4, true, 1> : estep_kernel<4, false, 1>;
    case 8:
        if (!triangular)
            return estep_kernel<8, false, 1>;
        return parts == 2 ? estep_kernel<8, true, 2> : estep_kernel<8, true, 1>;
    default:
        return triangular ? estep_kernel<16, true, 1> : estep_kernel<16, false, 1>;
    }
}

/* Lanes per (component, part): the largest power of two that fills the block. */
int lanes_for(int k, int parts)
{
    int lanes = 1;
    while (static_cast<size_t>(lanes) * 2 * k * parts <= static_cast<size_t>(kRows))
        lanes *= 2;
    return lanes;
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
    const size_t tile = static_cast<size_t>(padded) * kXStride + static_cast<size_t>(k) * kRows;
    const int width = lanes < 32 ? lanes : 32;
    const size_t sums = static_cast<size_t>(kRows / width) * entry_count(padded, true);
    return (model + std::max(tile, std::max(sums, static_cast<size_t>(kRows / 32)))) * sizeof(double);
}

void free_session(statgpu_cuda_gmm_session *session)
{
    if (session == nullptr)
        return;
    cudaFreeHost(session->h_model);  /* the device arrays belong to the state's workspace */
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
    /* Shared memory is sized for the smallest lane count either kind of factor uses. */
    const int lanes = std::min(lanes_for(session->k, parts_for(session->padded, true, session->k)),
                               lanes_for(session->k, 1));
    session->shared_bytes = shared_bytes_for(session->padded, session->k, lanes);
    int optin = 0;
    (void)cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, state->device);
    /* The tensor-core kernel's machine code, not the GPU, decides: code the
     * driver compiled from the module's older PTX has no FP64 mma. */
    cudaFuncAttributes mma_attributes;
    session->major = cudaFuncGetAttributes(&mma_attributes, estep_kernel<8, true, 1, true>) == cudaSuccess
                         ? mma_attributes.binaryVersion / 10
                         : 0;
    (void)cudaGetLastError();
    /* STATGPU_CUDA_GMM_MMA=0 keeps phase 2 off the tensor cores, to compare the two. */
    if (const char *mma = std::getenv("STATGPU_CUDA_GMM_MMA"); mma != nullptr && std::strcmp(mma, "0") == 0)
        session->major = std::min(session->major, 7);
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
    /* Every device array from the state's mixture workspace: no cudaMalloc once
     * a call of this size has run. */
    const SessionArray arrays[] = {
        {reinterpret_cast<void **>(&session->d_data), n_obs * padded * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_model), kMostModels * session->model_doubles * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_partials),
         kMostModels * session->grid * session->stride * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_reduced), kMostModels * session->stride * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_resp), n_obs * k * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_row_ll), n_obs * sizeof(double)},
    };
    bool ok = call.check(carve_arrays(&state->mixture, arrays, sizeof arrays / sizeof arrays[0]),
                         "allocating the GMM arrays") &&
              call.check(cudaMallocHost(&session->h_model, kMostModels * session->model_doubles * sizeof(double)),
                         "allocating the GMM model") &&
              call.check(cudaMallocHost(&session->h_reduced, kMostModels * session->stride * sizeof(double)),
                         "allocating the GMM sums");
    for (bool triangular : {true, false})
        if (ok && session->shared_bytes > 48 * 1024)
            ok = call.check(cudaFuncSetAttribute(estep_kernel_of(padded, triangular,
                                                                 parts_for(padded, triangular, session->k),
                                                                 use_mma(padded, triangular, session->k,
                                                                         session->major)),
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(session->shared_bytes)),
                            "reserving shared memory for the GMM E-step");
    if (ok)
        ok = call.check(cudaEventRecord(events[kEventStart], stream), "recording an event") &&
             call.check(upload_columns(state, data, n_obs, n_vars, ld, session->d_data, stream),
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

statgpu_cuda_status gmm_estep(statgpu_cuda_gmm_session *session, const statgpu_cuda_gmm_model *models,
                              statgpu_cuda_gmm_sums *outs, size_t model_count, statgpu_cuda_timing *timing,
                              char *msg, size_t msg_bytes)
{
    CallStatus call(msg, msg_bytes);
    bool valid = session != nullptr && models != nullptr && outs != nullptr && model_count >= 1 &&
                 model_count <= kMostModels;
    for (size_t m = 0; valid && m < model_count; ++m)
        valid = models[m].log_norm != nullptr && models[m].means != nullptr && models[m].factors != nullptr &&
                models[m].triangular == models[0].triangular && outs[m].sums != nullptr &&
                outs[m].moments != nullptr &&
                (model_count == 1 || (outs[m].responsibilities == nullptr && outs[m].row_log_likelihood == nullptr));
    if (!valid) {
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "gmm_estep: invalid arguments");
        return call.status();
    }
    statgpu_cuda_state *state = session->state;
    if (!call.check(cudaSetDevice(state->device), "selecting the CUDA device"))
        return call.status();
    const int k = session->k, d = session->d, padded = session->padded;
    const bool triangular = models[0].triangular != 0;
    const bool final_step = outs[0].responsibilities != nullptr || outs[0].row_log_likelihood != nullptr;
    cudaStream_t stream = state->stream;
    cudaEvent_t *events = state->events;

    /* The models, padded, one after another: log_norm, means (j padded + v),
     * factors. */
    const int factor_doubles = triangular ? padded * padded : padded;
    const size_t model_stride = session->model_doubles;
    std::memset(session->h_model, 0, model_count * model_stride * sizeof(double));
    for (size_t m = 0; m < model_count; ++m) {
        const statgpu_cuda_gmm_model *model = &models[m];
        double *h = session->h_model + m * model_stride;
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
    }
    if (!call.check(cudaEventRecord(events[kEventStart], stream), "recording an event") ||
        !call.check(cudaMemcpyAsync(session->d_model, session->h_model, model_count * model_stride * sizeof(double),
                                    cudaMemcpyHostToDevice, stream), "copying the GMM models to the GPU"))
        return call.status();
    const int parts = parts_for(padded, triangular, k);
    const dim3 grid(static_cast<unsigned>(session->grid), static_cast<unsigned>(model_count));
    estep_kernel_of(padded, triangular, parts, use_mma(padded, triangular, k, session->major))
        <<<grid, kRows, session->shared_bytes, stream>>>(
        session->d_data, session->n, k, lanes_for(k, parts), session->d_model, model_stride, session->d_partials,
        session->stride, final_step ? session->d_resp : nullptr, final_step ? session->d_row_ll : nullptr);
    if (!call.check(cudaGetLastError(), "running the GMM E-step"))
        return call.status();
    const size_t used = 1 + static_cast<size_t>(k) * entry_count(padded, triangular);
    const dim3 add_grid(static_cast<unsigned>((used + 255) / 256), static_cast<unsigned>(model_count));
    add_blocks_kernel<<<add_grid, 256, 0, stream>>>(session->d_partials, session->grid, session->stride, used,
                                                   session->d_reduced);
    if (!call.check(cudaGetLastError(), "adding the GMM sums") ||
        !call.check(cudaEventRecord(events[kEventData], stream), "recording an event") ||
        !call.check(cudaMemcpyAsync(session->h_reduced, session->d_reduced, model_count * session->stride *
                                    sizeof(double), cudaMemcpyDeviceToHost, stream), "reading the GMM sums"))
        return call.status();
    if (final_step) {
        StagedPiece pieces[2];
        size_t count = 0;
        if (outs[0].responsibilities != nullptr)
            pieces[count++] = {outs[0].responsibilities, session->d_resp, session->n * k * sizeof(double)};
        if (outs[0].row_log_likelihood != nullptr)
            pieces[count++] = {outs[0].row_log_likelihood, session->d_row_ll, session->n * sizeof(double)};
        if (!call.check(download_staged(state, pieces, count, stream), "reading the responsibilities"))
            return call.status();
    }
    if (!call.check(cudaEventRecord(events[kEventEnd], stream), "recording an event") ||
        !call.check(cudaStreamSynchronize(stream), "running the GMM E-step"))
        return call.status();

    /* Unpadded, in the engine's layouts. */
    const int entries = entry_count(padded, triangular);
    for (size_t m = 0; m < model_count; ++m) {
        const double *reduced = session->h_reduced + m * session->stride;
        statgpu_cuda_gmm_sums *out = &outs[m];
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
