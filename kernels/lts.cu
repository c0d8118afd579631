/*
 * lts.cu: the GPU side of least trimmed squares: the C-step primitive
 * (cuda_module.h, lts_csteps) for many coefficient vectors at once.
 *
 * For each vector j the primitive needs the h-th smallest squared residual
 * over all n rows, the h-subset it defines (ties to the lower row index), and
 * the cross products of that subset. No residual is ever stored for all rows
 * and starts; the residuals are recomputed where needed, which costs p fused
 * multiply-adds each, always in the same order with explicit roundings
 * (__fma_rn, __dmul_rn), so that every pass sees the same bits:
 *
 *   1. bracket (large n only): the squared residuals of a fixed sample of
 *      rows, sorted per vector, give a bracket [lower, upper] that holds the
 *      h-th smallest value with overwhelming probability;
 *   2. count: per vector, the rows below the bracket, and per warp of rows
 *      the rows inside it;
 *   3. the host checks that the h-th value lies in the bracket (else that
 *      vector takes the exact fallback: all n residuals sorted);
 *   4. collect: the rows inside the bracket, in row order, to one segment per
 *      vector (offsets from a scan of the warp counts);
 *   5. a stable segmented sort of the segments by squared residual: the
 *      (h - below)-th element gives the threshold value and, among rows equal
 *      to it, the last row number taken;
 *   6. cross products: a tiled kernel forms, per vector, the sums of
 *      x_a x_b and x_a y over the h-subset (a 0/1 weight times products of
 *      the row) and of the squared residuals, split over fixed row chunks and
 *      added in chunk order, so the result is the same bits on every run.
 *
 * Counts are integers and every floating-point sum runs in a fixed order: no
 * floating-point atomics anywhere.
 */
#include "cuda_state.h"

#include <math_constants.h>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

namespace statgpu_cuda {
namespace lts {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;
constexpr int kMaxP = 64;                    /* coefficients the kernels support */
constexpr size_t kSmallRows = 32768;         /* up to here every row is a candidate */
constexpr size_t kSampleRows = 16384;        /* the bracket's sample */
constexpr double kBracketSigmas = 5.0;       /* half-width of the bracket in binomial sd */
constexpr size_t kMaxBatch = 512;            /* vectors per pass */
constexpr size_t kCoefSharedBytes = 40 * 1024;

/* Cross-product kernel (cross_products_kernel, cross_plan): rows 32 at a
 * time, in chunks of at least kChunkRowsMin rows, at most kChunksMax chunks.
 * At n = 10^6, p = 10 (H100): 0.75 ms a C-step of 10 vectors and 16.3 ms
 * of 500, against 2.29 and 38.4 ms with 8192-row chunks and 2 x 4 outputs a
 * thread (bench/NOTES.md, LTS v6). */
constexpr int kTileRows = 32;
constexpr size_t kChunkRowsMin = 2048;
constexpr size_t kChunksMax = 256;

/* r^2 for one row and one coefficient vector, in one fixed order. */
__device__ __forceinline__ double squared_residual(const double *xrow, int xstride, double y,
                                                   const double *b, int p)
{
    double r = y;
    for (int v = 0; v < p; ++v)
        r = __fma_rn(-xrow[v * xstride], b[v], r);
    return __dmul_rn(r, r);
}

/* The same with the row in registers (PMAX >= p, unused entries never read). */
template <int PMAX>
__device__ __forceinline__ double squared_residual_reg(const double (&xrow)[PMAX], double y, const double *b, int p)
{
    double r = y;
#pragma unroll
    for (int v = 0; v < PMAX; ++v)
        if (v < p)
            r = __fma_rn(-xrow[v], b[v], r);
    return __dmul_rn(r, r);
}

template <int PMAX>
__device__ __forceinline__ void load_row(const double *x, size_t n, int p, size_t row, double (&xrow)[PMAX])
{
#pragma unroll
    for (int v = 0; v < PMAX; ++v)
        xrow[v] = v < p ? x[row + n * (size_t)v] : 0.0;
}

/* Squared residuals of the sample rows: out[j * S + s]. Grid: x over sample
 * rows, y over groups of vectors. */
template <int PMAX>
__global__ void sample_kernel(const double *x, const double *y, size_t n, int p, const uint32_t *rows,
                              size_t sample_count, const double *coef, int m, int group, double *out)
{
    extern __shared__ double s_coef[];
    const int j0 = blockIdx.y * group, j1 = min(m, j0 + group);
    for (int e = threadIdx.x; e < (j1 - j0) * p; e += blockDim.x)
        s_coef[e] = coef[(size_t)j0 * p + e];
    __syncthreads();
    const size_t s = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= sample_count)
        return;
    const size_t row = rows[s];
    double xrow[PMAX];
    load_row<PMAX>(x, n, p, row, xrow);
    const double yi = y[row];
    for (int j = j0; j < j1; ++j)
        out[(size_t)j * sample_count + s] = squared_residual_reg<PMAX>(xrow, yi, s_coef + (size_t)(j - j0) * p, p);
}

/* Per vector, the bracket around the h-th smallest from its sorted sample;
 * with no sample, everything. */
__global__ void bracket_kernel(const double *sorted, size_t sample_count, size_t n, size_t h, int m,
                               double *lower, double *upper)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m)
        return;
    if (sample_count == 0) {
        lower[j] = -1.0;  /* squared residuals are >= 0: nothing below */
        upper[j] = CUDART_INF;
        return;
    }
    const double q = (double)h / (double)n;
    const double centre = q * (double)sample_count;
    const double sd = sqrt((double)sample_count * q * (1.0 - q)) + 1.0;
    const double lo = floor(centre - kBracketSigmas * sd) - 1.0;
    const double hi = ceil(centre + kBracketSigmas * sd);
    const double *keys = sorted + (size_t)j * sample_count;
    lower[j] = lo < 0.0 ? -1.0 : keys[(size_t)lo];
    upper[j] = hi >= (double)sample_count ? CUDART_INF : keys[(size_t)hi];
}

/* Pass 2 (collect == false): per vector, the rows below its bracket (one
 * count per block) and the rows inside it (one count per warp). Pass 4
 * (collect == true): the rows inside, written in row order from the scanned
 * warp counts. Grid: x over blocks of 256 rows, y over groups of vectors. */
template <int PMAX, bool Collect>
__global__ void bracket_pass_kernel(const double *x, const double *y, size_t n, int p, const double *coef, int m,
                                    int group, const double *lower, const double *upper, uint32_t *warp_counts,
                                    uint32_t *below_counts, size_t warp_total, const unsigned long long *offsets,
                                    double *cand_keys, uint32_t *cand_rows)
{
    extern __shared__ double s_coef[];
    __shared__ uint32_t s_below[kMaxBatch];  /* group <= kMaxBatch */
    const int j0 = blockIdx.y * group, j1 = min(m, j0 + group);
    for (int e = threadIdx.x; e < (j1 - j0) * p; e += blockDim.x)
        s_coef[e] = coef[(size_t)j0 * p + e];
    if (!Collect)
        for (int e = threadIdx.x; e < j1 - j0; e += blockDim.x)
            s_below[e] = 0;
    __syncthreads();

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t row = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const bool valid = row < n;
    double xrow[PMAX];
    double yi = 0.0;
    if (valid) {
        load_row<PMAX>(x, n, p, row, xrow);
        yi = y[row];
    } else {
#pragma unroll
        for (int v = 0; v < PMAX; ++v)
            xrow[v] = 0.0;
    }
    const size_t warp_id = (size_t)blockIdx.x * kWarpsPerBlock + warp;
    const unsigned lanes_below = (1u << lane) - 1u;
    for (int j = j0; j < j1; ++j) {
        const double r2 = squared_residual_reg<PMAX>(xrow, yi, s_coef + (size_t)(j - j0) * p, p);
        const double lo = lower[j], hi = upper[j];
        const bool below = valid && r2 < lo;
        const bool inside = valid && !below && r2 <= hi;
        const unsigned inside_mask = __ballot_sync(0xffffffffu, inside);
        if (Collect) {
            if (inside) {
                const unsigned long long at = offsets[(size_t)j * warp_total + warp_id] +
                                              (unsigned long long)__popc(inside_mask & lanes_below);
                cand_keys[at] = r2;
                cand_rows[at] = (uint32_t)row;
            }
        } else {
            const unsigned below_mask = __ballot_sync(0xffffffffu, below);
            if (lane == 0) {
                warp_counts[(size_t)j * warp_total + warp_id] = (uint32_t)__popc(inside_mask);
                if (below_mask != 0)
                    atomicAdd(&s_below[j - j0], (uint32_t)__popc(below_mask));  /* integers: order-free */
            }
        }
    }
    if (!Collect) {
        __syncthreads();
        for (int e = threadIdx.x; e < j1 - j0; e += blockDim.x)
            below_counts[(size_t)(j0 + e) * gridDim.x + blockIdx.x] = s_below[e];
    }
}

/* Per vector: the threshold and the last tied row taken, from its sorted
 * segment; vectors on the fallback are skipped (done elsewhere). */
__global__ void pick_kernel(const double *sorted_keys, const uint32_t *sorted_rows,
                            const unsigned long long *segment_begin, const long long *rank_in_segment, int m,
                            double *threshold, uint32_t *last_tied_row)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m || rank_in_segment[j] < 1)
        return;
    const unsigned long long at = segment_begin[j] + (unsigned long long)(rank_in_segment[j] - 1);
    threshold[j] = sorted_keys[at];
    last_tied_row[j] = sorted_rows[at];
}

/* Every row's squared residual for one vector (the exact fallback). */
__global__ void all_residuals_kernel(const double *x, const double *y, size_t n, int p, const double *b,
                                     double *keys, uint32_t *rows)
{
    const size_t row = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n)
        return;
    keys[row] = squared_residual(x + row, (int)n, y[row], b, p);
    rows[row] = (uint32_t)row;
}

__global__ void store_pick_kernel(const double *sorted_keys, const uint32_t *sorted_rows, size_t h, int j,
                                  double *threshold, uint32_t *last_tied_row)
{
    threshold[j] = sorted_keys[h - 1];
    last_tied_row[j] = sorted_rows[h - 1];
}

/* The products a row contributes: x_a x_b for a <= b (row-major over a),
 * then x_a y. */
__device__ __forceinline__ double feature(const double *xs, int xstride, double yv, int f, int p, int pairs,
                                          const uint8_t *pair_a, const uint8_t *pair_b)
{
    if (f < pairs)
        return __dmul_rn(xs[pair_a[f] * xstride], xs[pair_b[f] * xstride]);
    return __dmul_rn(xs[(f - pairs) * xstride], yv);
}

/* Pass 6: partial[chunk][j][f] = sum over the chunk's rows of the h-subset of
 * vector j of feature f, and objective_partial[chunk][j] = the sum of their
 * squared residuals. Grid: x = chunk, y = feature tile (16 FPT features),
 * z = vector tile (VEC vectors). The block's 256 threads form 64 / VEC
 * groups of 4 VEC; thread (vy, fx) of a group owns vectors 4 vy .. 4 vy + 3
 * and features fx, fx + 16, ... of the tile (a register tile: two 16-byte
 * loads of weights and FPT loads of products feed 4 FPT fused
 * multiply-adds), and each group takes its own rows of every tile of 32
 * rows; at the chunk's end the groups' sums are added in group order. So
 * every sum runs in one fixed order for a given (n, m, p). */
template <int VEC, int FPT>
__global__ void __launch_bounds__(kThreads)
cross_products_kernel(const double *x, const double *y, size_t n, int p, const double *coef, int m,
                      const double *threshold, const uint32_t *last_tied_row, size_t chunk_rows,
                      int feature_count, int pairs, const uint8_t *pair_a_global, const uint8_t *pair_b_global,
                      double *partial, double *objective_partial)
{
    constexpr int kF = 16 * FPT;                     /* features of the tile */
    constexpr int kGroupThreads = 4 * VEC;           /* (VEC / 4) x 16 */
    constexpr int kGroups = kThreads / kGroupThreads;
    constexpr int kGroupRows = kTileRows / kGroups;  /* rows of a tile each group takes */
    constexpr int kObjPerThread = VEC / (kThreads / kTileRows);
    static_assert(kGroups * kGroupThreads == kThreads && kGroupRows * kGroups == kTileRows, "tiles");
    static_assert(kObjPerThread >= 1 && VEC <= kTileRows, "a vector a row lane at least; the groups' sums fit in s_z");
    extern __shared__ double2 smem2[];              /* 16-byte aligned: s_w is read in pairs */
    double *smem = reinterpret_cast<double *>(smem2);
    double *s_coef = smem;                           /* p x VEC */
    double *s_x = s_coef + (size_t)p * VEC;          /* kTileRows x (p + 1), row-major */
    double *s_w = s_x + (size_t)kTileRows * (p + 1); /* kTileRows x VEC */
    double *s_z = s_w + kTileRows * VEC;             /* kTileRows x kF; at the end the groups' sums */
    double *s_obj = s_z + kTileRows * kF;            /* kThreads */
    __shared__ double s_threshold[VEC];
    __shared__ uint32_t s_last[VEC];
    __shared__ uint8_t s_pair_a[kMaxP * (kMaxP + 1) / 2], s_pair_b[kMaxP * (kMaxP + 1) / 2];

    const int tid = threadIdx.x;
    const int j0 = blockIdx.z * VEC;
    const int starts = min(VEC, m - j0);
    const int f0 = blockIdx.y * kF;
    const size_t row_begin = (size_t)blockIdx.x * chunk_rows;
    const size_t row_end = min(n, row_begin + chunk_rows);
    const bool with_objective = blockIdx.y == 0;

    for (int e = tid; e < p * VEC; e += kThreads) {
        const int s = e / p, v = e % p;
        s_coef[v * VEC + s] = s < starts ? coef[(size_t)(j0 + s) * p + v] : 0.0;
    }
    if (tid < VEC) {
        s_threshold[tid] = tid < starts ? threshold[j0 + tid] : -1.0;
        s_last[tid] = tid < starts ? last_tied_row[j0 + tid] : 0u;
    }
    for (int e = tid; e < pairs; e += kThreads) {
        s_pair_a[e] = pair_a_global[e];
        s_pair_b[e] = pair_b_global[e];
    }

    const int group = tid / kGroupThreads, in_group = tid % kGroupThreads;
    const int vy = in_group / 16, fx = in_group % 16;
    double acc[4][FPT];
#pragma unroll
    for (int a = 0; a < 4; ++a)
#pragma unroll
        for (int c = 0; c < FPT; ++c)
            acc[a][c] = 0.0;
    /* The residual part: thread owns row lane r_own and vectors s_base + 8k. */
    const int r_own = tid % kTileRows, s_base = tid / kTileRows;
    double obj[kObjPerThread] = {};
    const int xstride = p + 1;

    for (size_t base = row_begin; base < row_end; base += kTileRows) {
        __syncthreads();
        /* Rows of the tile, with y as column p; rows beyond the end are 0. */
        for (int e = tid; e < kTileRows * (p + 1); e += kThreads) {
            const int r = e % kTileRows, v = e / kTileRows;
            const size_t row = base + r;
            double value = 0.0;
            if (row < row_end)
                value = v < p ? x[row + n * (size_t)v] : y[row];
            s_x[r * xstride + v] = value;
        }
        __syncthreads();
        /* 0/1 weights: in the h-subset of vector s. */
        {
            const size_t row = base + r_own;
            const double *xr = s_x + r_own * xstride;
#pragma unroll
            for (int k = 0; k < kObjPerThread; ++k) {
                const int s = s_base + k * (kThreads / kTileRows);
                bool in = false;
                if (row < row_end && s < starts) {
                    double r = xr[p];
                    for (int v = 0; v < p; ++v)
                        r = __fma_rn(-xr[v], s_coef[v * VEC + s], r);
                    const double r2 = __dmul_rn(r, r);
                    const double t = s_threshold[s];
                    in = r2 < t || (r2 == t && (uint32_t)row <= s_last[s]);
                    if (in)
                        obj[k] += r2;
                }
                s_w[r_own * VEC + s] = in ? 1.0 : 0.0;
            }
        }
        /* The tile's products. */
        for (int e = tid; e < kTileRows * kF; e += kThreads) {
            const int r = e / kF, f = e % kF;
            const int fg = f0 + f;
            s_z[r * kF + f] =
                fg < feature_count ? feature(s_x + r * xstride, 1, s_x[r * xstride + p], fg, p, pairs, s_pair_a, s_pair_b)
                                   : 0.0;
        }
        __syncthreads();
#pragma unroll 2
        for (int i = 0; i < kGroupRows; ++i) {
            const int r = group * kGroupRows + i;
            const double2 w01 = *reinterpret_cast<const double2 *>(s_w + r * VEC + 4 * vy);
            const double2 w23 = *reinterpret_cast<const double2 *>(s_w + r * VEC + 4 * vy + 2);
            const double w[4] = {w01.x, w01.y, w23.x, w23.y};
            const double *z = s_z + r * kF + fx;
#pragma unroll
            for (int c = 0; c < FPT; ++c) {
                const double zc = z[16 * c];
#pragma unroll
                for (int a = 0; a < 4; ++a)
                    acc[a][c] = __fma_rn(w[a], zc, acc[a][c]);
            }
        }
    }

    /* The groups' sums in group order, into group 0's registers. */
#pragma unroll 1
    for (int g = 1; g < kGroups; ++g) {
        __syncthreads();
        if (group == g)
#pragma unroll
            for (int a = 0; a < 4; ++a)
#pragma unroll
                for (int c = 0; c < FPT; ++c)
                    s_z[(4 * vy + a) * kF + fx + 16 * c] = acc[a][c];
        __syncthreads();
        if (group == 0)
#pragma unroll
            for (int a = 0; a < 4; ++a)
#pragma unroll
                for (int c = 0; c < FPT; ++c)
                    acc[a][c] += s_z[(4 * vy + a) * kF + fx + 16 * c];
    }

    const size_t chunk = blockIdx.x;
    if (group == 0)
#pragma unroll
        for (int a = 0; a < 4; ++a) {
            const int s = 4 * vy + a;
            if (s >= starts)
                continue;
#pragma unroll
            for (int c = 0; c < FPT; ++c) {
                const int f = f0 + fx + 16 * c;
                if (f < feature_count)
                    partial[(chunk * (size_t)m + (size_t)(j0 + s)) * feature_count + f] = acc[a][c];
            }
        }
    if (with_objective) {
        /* Per vector, the 32 row lanes' sums in lane order. */
#pragma unroll
        for (int k = 0; k < kObjPerThread; ++k) {
            __syncthreads();
            s_obj[tid] = obj[k];
            __syncthreads();
            if (tid < kThreads / kTileRows) {
                const int s = tid + k * (kThreads / kTileRows);
                double sum = 0.0;
                for (int r = 0; r < kTileRows; ++r)
                    sum += s_obj[tid * kTileRows + r];
                if (s < starts)
                    objective_partial[chunk * (size_t)m + (size_t)(j0 + s)] = sum;
            }
        }
    }
}

/* out[e] = sum over chunks, in chunk order, of partial[chunk][e]. */
__global__ void chunk_sum_kernel(const double *partial, size_t chunk_count, size_t entries, double *out)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= entries)
        return;
    double sum = 0.0;
    for (size_t c = 0; c < chunk_count; ++c)
        sum += partial[c * entries + e];
    out[e] = sum;
}

} /* namespace lts */
} /* namespace statgpu_cuda */

struct statgpu_cuda_lts_session {
    statgpu_cuda_state *state = nullptr;
    size_t n = 0;
    int p = 0;
    size_t sample_count = 0;
    double *d_x = nullptr, *d_y = nullptr;
    uint32_t *d_sample_rows = nullptr;
    uint8_t *d_pairs = nullptr;  /* pair_a then pair_b */
    statgpu_cuda::DeviceBuffer coef, sample_keys[2], bracket, warp_counts, below_counts, totals, offsets,
        segments, cand_keys[2], cand_rows[2], pick, ranks, partial, sums, cub_temp, all_keys[2], all_rows[2];
    cudaEvent_t events[2] = {nullptr, nullptr};
    std::vector<double> h_sums;
};

namespace statgpu_cuda {
namespace {

using lts::kThreads;


template <typename T> T *as(const DeviceBuffer &buffer) { return static_cast<T *>(buffer.d_ptr); }

constexpr size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

void free_session(statgpu_cuda_lts_session *session)
{
    if (session == nullptr)
        return;
    (void)cudaSetDevice(session->state->device);
    (void)cudaStreamSynchronize(session->state->stream);
    /* d_x, d_y, d_sample_rows and d_pairs are the state's session workspace,
     * kept for the next call. */
    DeviceBuffer *buffers[] = {&session->coef,           &session->sample_keys[0], &session->sample_keys[1],
                               &session->bracket,        &session->warp_counts,    &session->below_counts,
                               &session->totals,         &session->offsets,        &session->segments,
                               &session->cand_keys[0],   &session->cand_keys[1],   &session->cand_rows[0],
                               &session->cand_rows[1],   &session->pick,           &session->ranks,
                               &session->partial,        &session->sums,           &session->cub_temp,
                               &session->all_keys[0],    &session->all_keys[1],    &session->all_rows[0],
                               &session->all_rows[1]};
    for (DeviceBuffer *buffer : buffers)
        release_device_buffer(buffer);
    for (cudaEvent_t event : session->events)
        if (event != nullptr)
            (void)cudaEventDestroy(event);
    (void)cudaGetLastError();
    delete session;
}

/* The cross products' tiles (cross_products_kernel): VEC vectors, the
 * smallest of 8, 16, 32 that holds m (32 beyond), and 16 FPT features,
 * FPT the least that holds all feature_count products (at most 5: 80 a
 * tile). */
using CrossKernel = void (*)(const double *, const double *, size_t, int, const double *, int, const double *,
                             const uint32_t *, size_t, int, int, const uint8_t *, const uint8_t *, double *,
                             double *);
struct CrossPlan {
    int vec;
    int fpt;
    CrossKernel kernel;
};

template <int VEC>
CrossPlan cross_plan_for(int fpt)
{
    using namespace lts;
    switch (fpt) {
    case 1: return {VEC, 1, cross_products_kernel<VEC, 1>};
    case 2: return {VEC, 2, cross_products_kernel<VEC, 2>};
    case 3: return {VEC, 3, cross_products_kernel<VEC, 3>};
    case 4: return {VEC, 4, cross_products_kernel<VEC, 4>};
    default: return {VEC, 5, cross_products_kernel<VEC, 5>};
    }
}

CrossPlan cross_plan(int feature_count, int m)
{
    const int fpt = std::min(5, (feature_count + 15) / 16);
    if (m <= 8)
        return cross_plan_for<8>(fpt);
    if (m <= 16)
        return cross_plan_for<16>(fpt);
    return cross_plan_for<32>(fpt);
}

/* Vectors per group of the row passes: their coefficients fit in shared memory. */
int coef_group(int p, int m)
{
    const int fit = (int)(lts::kCoefSharedBytes / (sizeof(double) * (size_t)p));
    return std::max(1, std::min(m, fit));
}

/* One batch of at most kMaxBatch vectors. */
statgpu_cuda_status csteps_batch(statgpu_cuda_lts_session *session, size_t h, const double *coef, size_t m_size,
                                 double *kth, double *objective, double *gram, double *xty, CallStatus &call)
{
    using namespace lts;
    const cudaStream_t stream = session->state->stream;
    const size_t n = session->n;
    const int p = session->p;
    const int m = (int)m_size;
    const int group = coef_group(p, m);
    const unsigned groups = (unsigned)((m + group - 1) / group);
    const size_t coef_smem = (size_t)group * p * sizeof(double);
    const bool wide = p > 16;

    if (!call.ensure(&session->coef, m_size * p * sizeof(double), "GPU LTS: coefficients") ||
        !call.check(cudaMemcpyAsync(session->coef.d_ptr, coef, m_size * p * sizeof(double), cudaMemcpyHostToDevice,
                                    stream), "GPU LTS: copying coefficients"))
        return call.status();
    const double *d_coef = as<double>(session->coef);

    /* 1. The bracket. */
    if (!call.ensure(&session->bracket, 2 * m_size * sizeof(double), "GPU LTS: brackets"))
        return call.status();
    double *d_lower = as<double>(session->bracket), *d_upper = d_lower + m;
    const size_t sample = session->sample_count;
    if (sample > 0) {
        const size_t keys = sample * m_size;
        if (!call.ensure(&session->sample_keys[0], keys * sizeof(double), "GPU LTS: sample") ||
            !call.ensure(&session->sample_keys[1], keys * sizeof(double), "GPU LTS: sample") ||
            !call.ensure(&session->segments, (m_size + 1) * sizeof(long long), "GPU LTS: segments"))
            return call.status();
        const dim3 grid((unsigned)((sample + kThreads - 1) / kThreads), groups);
        if (wide)
            sample_kernel<kMaxP><<<grid, kThreads, coef_smem, stream>>>(session->d_x, session->d_y, n, p,
                                                                         session->d_sample_rows, sample, d_coef, m,
                                                                         group, as<double>(session->sample_keys[0]));
        else
            sample_kernel<16><<<grid, kThreads, coef_smem, stream>>>(session->d_x, session->d_y, n, p,
                                                                      session->d_sample_rows, sample, d_coef, m,
                                                                      group, as<double>(session->sample_keys[0]));
        if (!call.check(cudaGetLastError(), "GPU LTS: sample pass"))
            return call.status();
        std::vector<long long> offsets(m_size + 1);
        for (size_t j = 0; j <= m_size; ++j)
            offsets[j] = (long long)(j * sample);
        long long *d_offsets = as<long long>(session->segments);
        if (!call.check(cudaMemcpyAsync(d_offsets, offsets.data(), offsets.size() * sizeof(long long),
                                        cudaMemcpyHostToDevice, stream), "GPU LTS: sample offsets"))
            return call.status();
        size_t temp_bytes = 0;
        if (!call.check(cub::DeviceSegmentedSort::SortKeys(nullptr, temp_bytes, as<double>(session->sample_keys[0]),
                                                           as<double>(session->sample_keys[1]), (int64_t)keys,
                                                           (int64_t)m, d_offsets, d_offsets + 1, stream),
                        "GPU LTS: sample sort size") ||
            !call.ensure(&session->cub_temp, temp_bytes, "GPU LTS: sort workspace") ||
            !call.check(cub::DeviceSegmentedSort::SortKeys(session->cub_temp.d_ptr, temp_bytes,
                                                           as<double>(session->sample_keys[0]),
                                                           as<double>(session->sample_keys[1]), (int64_t)keys,
                                                           (int64_t)m, d_offsets, d_offsets + 1, stream),
                        "GPU LTS: sample sort"))
            return call.status();
        /* The sort may have synchronised: the host offsets vector lives until here. */
        if (!call.check(cudaStreamSynchronize(stream), "GPU LTS: sample sort"))
            return call.status();
    }
    bracket_kernel<<<(m + 127) / 128, 128, 0, stream>>>(as<double>(session->sample_keys[1]), sample, n, h, m,
                                                        d_lower, d_upper);
    if (!call.check(cudaGetLastError(), "GPU LTS: brackets"))
        return call.status();

    /* 2. Counts. */
    const unsigned row_blocks = (unsigned)((n + kThreads - 1) / kThreads);
    const size_t warp_total = (size_t)row_blocks * kWarpsPerBlock;
    const size_t counts = warp_total * m_size;
    if (!call.ensure(&session->warp_counts, counts * sizeof(uint32_t), "GPU LTS: counts") ||
        !call.ensure(&session->below_counts, (size_t)row_blocks * m_size * sizeof(uint32_t), "GPU LTS: counts") ||
        !call.ensure(&session->totals, align256(2 * m_size * sizeof(unsigned long long)) + 2 * (m_size + 1) *
                                         sizeof(long long), "GPU LTS: totals") ||
        !call.ensure(&session->offsets, counts * sizeof(unsigned long long), "GPU LTS: offsets"))
        return call.status();
    uint32_t *d_warp_counts = as<uint32_t>(session->warp_counts);
    uint32_t *d_below_counts = as<uint32_t>(session->below_counts);
    unsigned long long *d_inside_total = as<unsigned long long>(session->totals);
    unsigned long long *d_below_total = d_inside_total + m;
    long long *d_seg = reinterpret_cast<long long *>(static_cast<char *>(session->totals.d_ptr) +
                                                     align256(2 * m_size * sizeof(unsigned long long)));
    long long *d_seg_warps = d_seg, *d_seg_blocks = d_seg + (m_size + 1);
    {
        std::vector<long long> by_warps(m_size + 1), by_blocks(m_size + 1);
        for (size_t j = 0; j <= m_size; ++j) {
            by_warps[j] = (long long)(j * warp_total);
            by_blocks[j] = (long long)(j * row_blocks);
        }
        const dim3 grid(row_blocks, groups);
        if (wide)
            bracket_pass_kernel<kMaxP, false><<<grid, kThreads, coef_smem, stream>>>(
                session->d_x, session->d_y, n, p, d_coef, m, group, d_lower, d_upper, d_warp_counts, d_below_counts,
                warp_total, nullptr, nullptr, nullptr);
        else
            bracket_pass_kernel<16, false><<<grid, kThreads, coef_smem, stream>>>(
                session->d_x, session->d_y, n, p, d_coef, m, group, d_lower, d_upper, d_warp_counts, d_below_counts,
                warp_total, nullptr, nullptr, nullptr);
        if (!call.check(cudaGetLastError(), "GPU LTS: count pass") ||
            !call.check(cudaMemcpyAsync(d_seg_warps, by_warps.data(), (m_size + 1) * sizeof(long long),
                                        cudaMemcpyHostToDevice, stream), "GPU LTS: offsets") ||
            !call.check(cudaMemcpyAsync(d_seg_blocks, by_blocks.data(), (m_size + 1) * sizeof(long long),
                                        cudaMemcpyHostToDevice, stream), "GPU LTS: offsets"))
            return call.status();
        size_t temp_a = 0, temp_b = 0;
        if (!call.check(cub::DeviceSegmentedReduce::Sum(nullptr, temp_a, d_warp_counts, d_inside_total, m,
                                                        d_seg_warps, d_seg_warps + 1, stream), "GPU LTS: totals") ||
            !call.check(cub::DeviceSegmentedReduce::Sum(nullptr, temp_b, d_below_counts, d_below_total, m,
                                                        d_seg_blocks, d_seg_blocks + 1, stream), "GPU LTS: totals") ||
            !call.ensure(&session->cub_temp, std::max(temp_a, temp_b), "GPU LTS: reduce workspace") ||
            !call.check(cub::DeviceSegmentedReduce::Sum(session->cub_temp.d_ptr, temp_a, d_warp_counts,
                                                        d_inside_total, m, d_seg_warps, d_seg_warps + 1, stream),
                        "GPU LTS: totals") ||
            !call.check(cub::DeviceSegmentedReduce::Sum(session->cub_temp.d_ptr, temp_b, d_below_counts,
                                                        d_below_total, m, d_seg_blocks, d_seg_blocks + 1, stream),
                        "GPU LTS: totals"))
            return call.status();
        /* by_warps and by_blocks must outlive the copies. */
        if (!call.check(cudaStreamSynchronize(stream), "GPU LTS: totals"))
            return call.status();
    }

    /* 3. Which vectors the brackets serve. */
    std::vector<unsigned long long> totals(2 * m_size);
    if (!call.check(cudaMemcpy(totals.data(), d_inside_total, 2 * m_size * sizeof(unsigned long long),
                               cudaMemcpyDeviceToHost), "GPU LTS: reading totals"))
        return call.status();
    const unsigned long long cap = std::max<unsigned long long>(65536ull, (unsigned long long)(n / 4));
    std::vector<long long> rank(m_size);
    std::vector<int> fallback;
    unsigned long long collected = 0;
    for (size_t j = 0; j < m_size; ++j) {
        const unsigned long long inside = totals[j], below = totals[m_size + j];
        const long long t = (long long)h - (long long)below;
        if (t >= 1 && (unsigned long long)t <= inside && inside <= cap) {
            rank[j] = t;
            collected += inside;
        } else {
            rank[j] = 0;
            fallback.push_back((int)j);
        }
    }
    for (int j : fallback) {
        /* Nothing of this vector is collected. */
        const double none = -2.0;
        if (!call.check(cudaMemcpyAsync(d_lower + j, &none, sizeof none, cudaMemcpyHostToDevice, stream),
                        "GPU LTS: fallback") ||
            !call.check(cudaMemcpyAsync(d_upper + j, &none, sizeof none, cudaMemcpyHostToDevice, stream),
                        "GPU LTS: fallback") ||
            !call.check(cudaMemsetAsync(d_warp_counts + (size_t)j * warp_total, 0, warp_total * sizeof(uint32_t),
                                        stream), "GPU LTS: fallback") ||
            !call.check(cudaStreamSynchronize(stream), "GPU LTS: fallback"))
            return call.status();
    }

    if (!call.ensure(&session->pick, m_size * (sizeof(double) + sizeof(uint32_t)), "GPU LTS: thresholds") ||
        !call.ensure(&session->ranks, align256(m_size * sizeof(long long)) + m_size * sizeof(unsigned long long),
                   "GPU LTS: ranks"))
        return call.status();
    double *d_threshold = as<double>(session->pick);
    uint32_t *d_last = reinterpret_cast<uint32_t *>(d_threshold + m);
    long long *d_rank = as<long long>(session->ranks);
    unsigned long long *d_segment_begin =
        reinterpret_cast<unsigned long long *>(static_cast<char *>(session->ranks.d_ptr) +
                                               align256(m_size * sizeof(long long)));

    /* 4-5. Collect, sort, pick. */
    if (collected > 0) {
        unsigned long long *d_offsets = as<unsigned long long>(session->offsets);
        size_t temp_bytes = 0;
        /* 64-bit sums: the init value's type sets the accumulator's. */
        const unsigned long long zero = 0;
        if (!call.check(cub::DeviceScan::ExclusiveScan(nullptr, temp_bytes, d_warp_counts, d_offsets,
                                                       ::cuda::std::plus<>{}, zero, (int64_t)counts, stream),
                        "GPU LTS: scan size") ||
            !call.ensure(&session->cub_temp, temp_bytes, "GPU LTS: scan workspace") ||
            !call.check(cub::DeviceScan::ExclusiveScan(session->cub_temp.d_ptr, temp_bytes, d_warp_counts, d_offsets,
                                                       ::cuda::std::plus<>{}, zero, (int64_t)counts, stream),
                        "GPU LTS: scan") ||
            !call.ensure(&session->cand_keys[0], collected * sizeof(double), "GPU LTS: candidates") ||
            !call.ensure(&session->cand_keys[1], collected * sizeof(double), "GPU LTS: candidates") ||
            !call.ensure(&session->cand_rows[0], collected * sizeof(uint32_t), "GPU LTS: candidates") ||
            !call.ensure(&session->cand_rows[1], collected * sizeof(uint32_t), "GPU LTS: candidates"))
            return call.status();
        const dim3 grid(row_blocks, groups);
        if (wide)
            bracket_pass_kernel<kMaxP, true><<<grid, kThreads, coef_smem, stream>>>(
                session->d_x, session->d_y, n, p, d_coef, m, group, d_lower, d_upper, nullptr, nullptr, warp_total,
                d_offsets, as<double>(session->cand_keys[0]), as<uint32_t>(session->cand_rows[0]));
        else
            bracket_pass_kernel<16, true><<<grid, kThreads, coef_smem, stream>>>(
                session->d_x, session->d_y, n, p, d_coef, m, group, d_lower, d_upper, nullptr, nullptr, warp_total,
                d_offsets, as<double>(session->cand_keys[0]), as<uint32_t>(session->cand_rows[0]));
        if (!call.check(cudaGetLastError(), "GPU LTS: collect pass"))
            return call.status();
        /* Segment j runs from the offset of its first warp to its first warp
         * plus its total (fallback vectors: empty). */
        std::vector<unsigned long long> begin(m_size), end(m_size);
        unsigned long long at = 0;
        for (size_t j = 0; j < m_size; ++j) {
            begin[j] = at;
            if (rank[j] > 0)
                at += totals[j];
            end[j] = at;
        }
        std::vector<unsigned long long> bounds(2 * m_size);
        std::copy(begin.begin(), begin.end(), bounds.begin());
        std::copy(end.begin(), end.end(), bounds.begin() + m_size);
        if (!call.ensure(&session->segments, 2 * m_size * sizeof(unsigned long long), "GPU LTS: segments"))
            return call.status();
        unsigned long long *d_bounds = as<unsigned long long>(session->segments);
        if (!call.check(cudaMemcpyAsync(d_bounds, bounds.data(), bounds.size() * sizeof(unsigned long long),
                                        cudaMemcpyHostToDevice, stream), "GPU LTS: segments") ||
            !call.check(cudaMemcpyAsync(d_segment_begin, begin.data(), m_size * sizeof(unsigned long long),
                                        cudaMemcpyHostToDevice, stream), "GPU LTS: segments") ||
            !call.check(cudaMemcpyAsync(d_rank, rank.data(), m_size * sizeof(long long), cudaMemcpyHostToDevice,
                                        stream), "GPU LTS: ranks"))
            return call.status();
        temp_bytes = 0;
        if (!call.check(cub::DeviceSegmentedSort::StableSortPairs(
                            nullptr, temp_bytes, as<double>(session->cand_keys[0]), as<double>(session->cand_keys[1]),
                            as<uint32_t>(session->cand_rows[0]), as<uint32_t>(session->cand_rows[1]),
                            (int64_t)collected, (int64_t)m, d_bounds, d_bounds + m, stream),
                        "GPU LTS: candidate sort size") ||
            !call.ensure(&session->cub_temp, temp_bytes, "GPU LTS: sort workspace") ||
            !call.check(cub::DeviceSegmentedSort::StableSortPairs(
                            session->cub_temp.d_ptr, temp_bytes, as<double>(session->cand_keys[0]),
                            as<double>(session->cand_keys[1]), as<uint32_t>(session->cand_rows[0]),
                            as<uint32_t>(session->cand_rows[1]), (int64_t)collected, (int64_t)m, d_bounds,
                            d_bounds + m, stream),
                        "GPU LTS: candidate sort"))
            return call.status();
        pick_kernel<<<(m + 127) / 128, 128, 0, stream>>>(as<double>(session->cand_keys[1]),
                                                         as<uint32_t>(session->cand_rows[1]), d_segment_begin,
                                                         d_rank, m, d_threshold, d_last);
        if (!call.check(cudaGetLastError(), "GPU LTS: pick") ||
            !call.check(cudaStreamSynchronize(stream), "GPU LTS: pick"))
            return call.status();
    }

    /* The exact fallback: every residual of the vector, sorted (stable, rows
     * in order, so ties keep row order). */
    for (int j : fallback) {
        if (!call.ensure(&session->all_keys[0], n * sizeof(double), "GPU LTS: fallback") ||
            !call.ensure(&session->all_keys[1], n * sizeof(double), "GPU LTS: fallback") ||
            !call.ensure(&session->all_rows[0], n * sizeof(uint32_t), "GPU LTS: fallback") ||
            !call.ensure(&session->all_rows[1], n * sizeof(uint32_t), "GPU LTS: fallback"))
            return call.status();
        all_residuals_kernel<<<row_blocks, kThreads, 0, stream>>>(session->d_x, session->d_y, n, p,
                                                                  d_coef + (size_t)j * p,
                                                                  as<double>(session->all_keys[0]),
                                                                  as<uint32_t>(session->all_rows[0]));
        size_t temp_bytes = 0;
        if (!call.check(cudaGetLastError(), "GPU LTS: fallback residuals") ||
            !call.check(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, as<double>(session->all_keys[0]),
                                                        as<double>(session->all_keys[1]),
                                                        as<uint32_t>(session->all_rows[0]),
                                                        as<uint32_t>(session->all_rows[1]), (int64_t)n, 0, 64,
                                                        stream), "GPU LTS: fallback sort size") ||
            !call.ensure(&session->cub_temp, temp_bytes, "GPU LTS: sort workspace") ||
            !call.check(cub::DeviceRadixSort::SortPairs(session->cub_temp.d_ptr, temp_bytes,
                                                        as<double>(session->all_keys[0]),
                                                        as<double>(session->all_keys[1]),
                                                        as<uint32_t>(session->all_rows[0]),
                                                        as<uint32_t>(session->all_rows[1]), (int64_t)n, 0, 64,
                                                        stream), "GPU LTS: fallback sort"))
            return call.status();
        store_pick_kernel<<<1, 1, 0, stream>>>(as<double>(session->all_keys[1]), as<uint32_t>(session->all_rows[1]),
                                               h, j, d_threshold, d_last);
        if (!call.check(cudaGetLastError(), "GPU LTS: fallback pick"))
            return call.status();
    }

    if (kth != nullptr &&
        !call.check(cudaMemcpyAsync(kth, d_threshold, m_size * sizeof(double), cudaMemcpyDeviceToHost, stream),
                    "GPU LTS: reading thresholds"))
        return call.status();

    /* 6. Cross products and the objective. */
    if (objective != nullptr || gram != nullptr || xty != nullptr) {
        const int pairs = p * (p + 1) / 2;
        const int feature_count = pairs + p;
        size_t chunk_rows = std::max(kChunkRowsMin, (n + kChunksMax - 1) / kChunksMax);
        chunk_rows = (chunk_rows + kTileRows - 1) / kTileRows * kTileRows;
        const size_t chunk_count = (n + chunk_rows - 1) / chunk_rows;
        const size_t entries = m_size * (size_t)feature_count;
        if (!call.ensure(&session->partial, chunk_count * (entries + m_size) * sizeof(double), "GPU LTS: partial sums") ||
            !call.ensure(&session->sums, (entries + m_size) * sizeof(double), "GPU LTS: sums"))
            return call.status();
        double *d_partial = as<double>(session->partial);
        double *d_obj_partial = d_partial + chunk_count * entries;
        double *d_sums = as<double>(session->sums);
        const CrossPlan plan = cross_plan(feature_count, m);
        const size_t smem = ((size_t)p * plan.vec + (size_t)kTileRows * (p + 1) + (size_t)kTileRows * plan.vec +
                             (size_t)kTileRows * 16 * plan.fpt + kThreads) * sizeof(double);
        if (!call.check(cudaFuncSetAttribute(plan.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                        "GPU LTS: shared memory"))
            return call.status();
        const dim3 grid((unsigned)chunk_count, (unsigned)((feature_count + 16 * plan.fpt - 1) / (16 * plan.fpt)),
                        (unsigned)((m + plan.vec - 1) / plan.vec));
        plan.kernel<<<grid, kThreads, smem, stream>>>(
            session->d_x, session->d_y, n, p, d_coef, m, d_threshold, d_last, chunk_rows, feature_count, pairs,
            session->d_pairs, session->d_pairs + lts::kMaxP * (lts::kMaxP + 1) / 2, d_partial, d_obj_partial);
        if (!call.check(cudaGetLastError(), "GPU LTS: cross products"))
            return call.status();
        chunk_sum_kernel<<<(unsigned)((entries + 255) / 256), 256, 0, stream>>>(d_partial, chunk_count, entries,
                                                                             d_sums);
        chunk_sum_kernel<<<(unsigned)((m_size + 255) / 256), 256, 0, stream>>>(d_obj_partial, chunk_count, m_size,
                                                                            d_sums + entries);
        session->h_sums.resize(entries + m_size);
        if (!call.check(cudaGetLastError(), "GPU LTS: chunk sums") ||
            !call.check(cudaMemcpyAsync(session->h_sums.data(), d_sums, (entries + m_size) * sizeof(double),
                                        cudaMemcpyDeviceToHost, stream), "GPU LTS: reading sums") ||
            !call.check(cudaStreamSynchronize(stream), "GPU LTS: cross products"))
            return call.status();
        const double *sums = session->h_sums.data();
        for (size_t j = 0; j < m_size; ++j) {
            const double *row = sums + j * feature_count;
            if (gram != nullptr) {
                double *g = gram + j * (size_t)p * p;
                int f = 0;
                for (int a = 0; a < p; ++a)
                    for (int b = a; b < p; ++b, ++f) {
                        g[a + (size_t)p * b] = row[f];
                        g[b + (size_t)p * a] = row[f];
                    }
            }
            if (xty != nullptr)
                for (int a = 0; a < p; ++a)
                    xty[j * (size_t)p + a] = row[pairs + a];
            if (objective != nullptr)
                objective[j] = sums[entries + j];
        }
    }
    if (!call.check(cudaStreamSynchronize(stream), "GPU LTS"))
        return call.status();
    return STATGPU_CUDA_OK;
}

} /* namespace */

namespace {

/* The design's columns and the response through the transfer lanes. */
cudaError_t upload_data(statgpu_cuda_state *state, const double *x, size_t n, size_t p, size_t ld, const double *y,
                        double *d_x, double *d_y, cudaStream_t stream)
{
    std::vector<StagedPiece> pieces;
    add_columns(&pieces, x, n, p, ld, d_x);
    add_columns(&pieces, y, n, 1, n, d_y);
    return upload_staged(state, pieces.data(), pieces.size(), stream);
}

} /* namespace */

statgpu_cuda_status lts_begin(statgpu_cuda_state *state, const double *x, size_t n, size_t p, size_t ld,
                              const double *y, statgpu_cuda_lts_session **out_session, statgpu_cuda_timing *timing,
                              char *msg, size_t msg_bytes)
{
    if (out_session == nullptr) {
        write_message(msg, msg_bytes, "lts_begin: out_session is NULL");
        return STATGPU_CUDA_INVALID_ARGUMENT;
    }
    *out_session = nullptr;
    if (state == nullptr || x == nullptr || y == nullptr || n == 0 || p == 0 || ld < n) {
        write_message(msg, msg_bytes, "lts_begin: invalid arguments");
        return STATGPU_CUDA_INVALID_ARGUMENT;
    }
    if (p > (size_t)lts::kMaxP || n > (size_t)UINT32_MAX) {
        write_message(msg, msg_bytes, "GPU LTS supports at most %d coefficients and 2^32-1 rows", lts::kMaxP);
        return STATGPU_CUDA_INVALID_ARGUMENT;
    }
    cudaError_t error = cudaSetDevice(state->device);
    if (error != cudaSuccess)
        return report_cuda_error(error, "GPU LTS: selecting the device", msg, msg_bytes);

    statgpu_cuda_lts_session *session = new (std::nothrow) statgpu_cuda_lts_session;
    if (session == nullptr) {
        write_message(msg, msg_bytes, "GPU LTS: out of host memory");
        return STATGPU_CUDA_OUT_OF_MEMORY;
    }
    session->state = state;
    session->n = n;
    session->p = (int)p;
    CallStatus call(msg, msg_bytes);
    const cudaStream_t stream = state->stream;

    /* The products' index pairs (a <= b), row-major over a. */
    const int pairs_max = lts::kMaxP * (lts::kMaxP + 1) / 2;
    std::vector<uint8_t> pair_table(2 * (size_t)pairs_max, 0);
    int f = 0;
    for (int a = 0; a < (int)p; ++a)
        for (int b = a; b < (int)p; ++b, ++f) {
            pair_table[f] = (uint8_t)a;
            pair_table[pairs_max + f] = (uint8_t)b;
        }
    /* The bracket's sample: one row from each of kSampleRows equal strata,
     * at a position within the stratum from a fixed hash (the data may be
     * sorted). */
    std::vector<uint32_t> sample;
    if (n > lts::kSmallRows) {
        sample.resize(lts::kSampleRows);
        for (size_t s = 0; s < lts::kSampleRows; ++s) {
            const size_t begin = s * n / lts::kSampleRows, end = (s + 1) * n / lts::kSampleRows;
            uint64_t z = (uint64_t)s * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
            z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
            z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
            z ^= z >> 31;
            sample[s] = (uint32_t)(begin + (end > begin ? z % (end - begin) : 0));
        }
    }
    session->sample_count = sample.size();

    const SessionArray arrays[] = {
        {reinterpret_cast<void **>(&session->d_x), n * p * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_y), n * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_pairs), pair_table.size()},
        {reinterpret_cast<void **>(&session->d_sample_rows), sample.size() * sizeof(uint32_t)},
    };
    bool ok2 =
        call.check(cudaEventCreate(&session->events[0]), "GPU LTS: events") &&
        call.check(cudaEventCreate(&session->events[1]), "GPU LTS: events") &&
        call.check(cudaEventRecord(session->events[0], stream), "GPU LTS: events") &&
        call.check(carve_session_arrays(state, arrays, sizeof arrays / sizeof arrays[0]), "GPU LTS: data") &&
        call.check(upload_data(state, x, n, p, ld, y, session->d_x, session->d_y, stream),
                   "GPU LTS: copying the design matrix and the response") &&
        call.check(cudaMemcpyAsync(session->d_pairs, pair_table.data(), pair_table.size(), cudaMemcpyHostToDevice,
                                   stream), "GPU LTS: tables");
    if (ok2 && !sample.empty())
        ok2 = call.check(cudaMemcpyAsync(session->d_sample_rows, sample.data(), sample.size() * sizeof(uint32_t),
                                         cudaMemcpyHostToDevice, stream), "GPU LTS: sample");
    if (sample.empty())
        session->d_sample_rows = nullptr;
    ok2 = ok2 && call.check(cudaEventRecord(session->events[1], stream), "GPU LTS: events") &&
          call.check(cudaStreamSynchronize(stream), "GPU LTS: copying the data");
    if (!ok2) {
        free_session(session);
        return call.status();
    }
    if (timing != nullptr) {
        timing->transfer_seconds = elapsed_ms(session->events[0], session->events[1]) * 1e-3;
        timing->compute_seconds = 0.0;
    }
    *out_session = session;
    if (msg != nullptr && msg_bytes > 0)
        msg[0] = '\0';
    return STATGPU_CUDA_OK;
}

statgpu_cuda_status lts_csteps(statgpu_cuda_lts_session *session, size_t h, const double *coef, size_t m,
                               double *kth, double *objective, double *gram, double *xty,
                               statgpu_cuda_timing *timing, char *msg, size_t msg_bytes)
{
    if (session == nullptr || coef == nullptr || m == 0 || h < 1 || h > session->n) {
        write_message(msg, msg_bytes, "lts_csteps: invalid arguments");
        return STATGPU_CUDA_INVALID_ARGUMENT;
    }
    cudaError_t error = cudaSetDevice(session->state->device);
    if (error != cudaSuccess)
        return report_cuda_error(error, "GPU LTS: selecting the device", msg, msg_bytes);
    CallStatus call(msg, msg_bytes);
    const cudaStream_t stream = session->state->stream;
    if (!call.check(cudaEventRecord(session->events[0], stream), "GPU LTS: events"))
        return call.status();
    const size_t p = (size_t)session->p;
    /* Per vector the row passes keep a count and a 64-bit offset per warp of
     * rows: batches stay within about 2 GiB of them. */
    const size_t warps = (session->n + lts::kThreads - 1) / lts::kThreads * lts::kWarpsPerBlock;
    const size_t batch = std::max<size_t>(1, std::min(lts::kMaxBatch, (size_t{2} << 30) / (warps * 12)));
    for (size_t first = 0; first < m; first += batch) {
        const size_t count = std::min(batch, m - first);
        const statgpu_cuda_status status =
            csteps_batch(session, h, coef + first * p, count, kth ? kth + first : nullptr,
                         objective ? objective + first : nullptr, gram ? gram + first * p * p : nullptr,
                         xty ? xty + first * p : nullptr, call);
        if (status != STATGPU_CUDA_OK)
            return status;
    }
    if (!call.check(cudaEventRecord(session->events[1], stream), "GPU LTS: events") ||
        !call.check(cudaEventSynchronize(session->events[1]), "GPU LTS: events"))
        return call.status();
    if (timing != nullptr) {
        timing->transfer_seconds = 0.0;
        timing->compute_seconds = elapsed_ms(session->events[0], session->events[1]) * 1e-3;
    }
    if (msg != nullptr && msg_bytes > 0)
        msg[0] = '\0';
    return STATGPU_CUDA_OK;
}

void lts_end(statgpu_cuda_lts_session *session)
{
    free_session(session);
}

} /* namespace statgpu_cuda */
