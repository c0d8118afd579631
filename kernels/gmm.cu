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
 *      k = 8 on the H100: bench/NOTES.md, "GMM v6"). On sm_90 machine code
 *      estep_tensor_kernel takes 8 and 16 variables instead (below).
 * After the last tile the lanes of a component are added by warp shuffles and
 * then in shared memory, in a fixed order, and each block writes its sums;
 * a second kernel adds the blocks' sums in block order. No atomics: the same
 * bits on every repeat. The data are padded to D = 1, 2, 4, 8 or 16 columns of
 * zeros (with zero means and factors there), so that a row lives in
 * registers; more than 16 variables run on the CPU.
 */
#include "cuda_state.h"
#include "gmm_pairs.h"
#include "math/exp_nonpositive.h"
#include "mma_f64.cuh"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

struct statgpu_cuda_gmm_session {
    statgpu_cuda_state *state = nullptr;
    size_t n = 0;
    int d = 0, padded = 0, k = 0, grid = 0;
    size_t shared_bytes = 0, entries = 0, stride = 0, model_doubles = 0;
    int major = 0;                  /* the major version of the m8n8k4 phase 2's machine code */
    bool tensor = false;            /* whether estep_tensor_kernel's machine code is sm_90's */
    bool pairs = true;              /* whether PairSums pairs components (STATGPU_CUDA_GMM_PAIRS=0: not) */
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

/* v added over the four lanes q of a fragment's group (lanes 4 g .. 4 g + 3)
 * by two shuffles: the same bits in each of them. */
__device__ __forceinline__ double quad_sum(double v)
{
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

/* The m8n8k4 phase 2's sums of the Own components a warp owns (w, w + 8):
 * per owned component the lane's two entries of the 8 x 8 products, its
 * r (x - mean)_v over its rows and its r. */
template <int Own>
struct MmaSums {
    double products[Own][2] = {}, first[Own] = {}, weight[Own] = {};

    /* The tile's rows: x at s_x[v kXStride + t], r at s_r[j kRows + t]. A's
     * 8 x 4 fragment: lane (v, s) holds r_s (x_s - mean)_v; B's 4 x 8: the
     * same lane holds (x_s - mean)_v. */
    __device__ __forceinline__ void add_tile(const double *s_x, const double *s_r, const double *s_means, int k)
    {
        const int warp = threadIdx.x / 32, v_lane = (threadIdx.x % 32) >> 2, s_lane = threadIdx.x & 3;
#pragma unroll
        for (int own = 0; own < Own; ++own) {
            const int j = warp + (kRows / 32) * own;
            if (j >= k)
                break;
            const double mean = s_means[j * 8 + v_lane];
            double d0 = products[own][0], d1 = products[own][1];
            double f = first[own], w = weight[own];
#pragma unroll 4
            for (int g = 0; g < kRows / 4; ++g) {
                const int row = 4 * g + s_lane;
                const double r = s_r[j * kRows + row];
                const double c = s_x[v_lane * kXStride + row] - mean;
                const double a = r * c;
                mma_8x8x4(d0, d1, a, c);
                f += a;
                w += r;
            }
            products[own][0] = d0;
            products[own][1] = d1;
            first[own] = f;
            weight[own] = w;
        }
    }

    /* A warp's components are its alone in the block: the four lanes of a
     * variable (rows s = 0..3) added by two shuffles (the same bits in
     * each), then written as the components' entries at out (1 + j E). */
    __device__ __forceinline__ void write(double *out, int k)
    {
        constexpr int E = entry_count(8, true);
        const int warp = threadIdx.x / 32, v_lane = (threadIdx.x % 32) >> 2, s_lane = threadIdx.x & 3;
#pragma unroll
        for (int own = 0; own < Own; ++own) {
            const int j = warp + (kRows / 32) * own;
            if (j >= k)
                break;
            double f = first[own], w = weight[own];
            f = quad_sum(f);
            w = quad_sum(w);
            double *component = out + 1 + static_cast<size_t>(j) * E;
            if (threadIdx.x % 32 == 0)
                component[0] = w;
            if (s_lane == 0)
                component[1 + v_lane] = f;
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int col = 2 * s_lane + e;  /* C's fragment: row v_lane, columns 2 s + e */
                if (v_lane <= col)
                    component[1 + 8 + col * (col + 1) / 2 + v_lane] = products[own][e];
            }
        }
    }
};

/* The 16-variable phase 2 on m16n8k8 products of 8 rows: A (16 x 8) holds
 * r_s (x_s - mean_j)_v, B (8 x 8) (x_s - mean_j)_u for u in one half of the
 * variables, so the two products (one per half) give every entry of the
 * 16 x 16 sums (the block below the diagonal twice, which m8n8k4's three
 * blocks would not, but at twice the FMAs an instruction). Lane (g, q) holds
 * variables g and g + 8 of rows 8 step + q and + 4: its A and B values are
 * the same centred x. Own: the components a warp owns (w, w + 8). */
template <int Own>
struct WideSums {
    double products[Own][2][4] = {}, first[Own][2] = {}, weight[Own] = {};

    __device__ __forceinline__ void add_tile(const double *s_x, const double *s_r, const double *s_means, int k)
    {
        const int warp = threadIdx.x / 32, g = (threadIdx.x % 32) >> 2, q = threadIdx.x & 3;
#pragma unroll
        for (int own = 0; own < Own; ++own) {
            const int j = warp + (kRows / 32) * own;
            if (j >= k)
                break;
            const double mean[2] = { s_means[j * 16 + g], s_means[j * 16 + 8 + g] };
            double w = weight[own];
#pragma unroll 2
            for (int step = 0; step < kRows / 8; ++step) {
                const int row = 8 * step + q;
                const double r[2] = { s_r[j * kRows + row], s_r[j * kRows + row + 4] };
                double c[2][2];  /* [half of the variables][row q or q + 4] */
#pragma unroll
                for (int h = 0; h < 2; ++h)
#pragma unroll
                    for (int e = 0; e < 2; ++e)
                        c[h][e] = s_x[(g + 8 * h) * kXStride + row + 4 * e] - mean[h];
                /* a[h + 2 e] = A[g + 8 h][q + 4 e] */
                const double a[4] = { r[0] * c[0][0], r[0] * c[1][0], r[1] * c[0][1], r[1] * c[1][1] };
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const double b[2] = { c[h][0], c[h][1] };  /* B[q + 4 e][g] of half h */
                    mma_16x8<8>(products[own][h], a, b);
                }
                first[own][0] += a[0] + a[2];
                first[own][1] += a[1] + a[3];
                w += r[0] + r[1];
            }
            weight[own] = w;
        }
    }

    /* The four lanes q added by two shuffles (the same bits in each), then
     * every entry written by a lane that holds it, at out (1 + j E). */
    __device__ __forceinline__ void write(double *out, int k)
    {
        constexpr int D = 16, E = entry_count(D, true);
        const int warp = threadIdx.x / 32, g = (threadIdx.x % 32) >> 2, q = threadIdx.x & 3;
#pragma unroll
        for (int own = 0; own < Own; ++own) {
            const int j = warp + (kRows / 32) * own;
            if (j >= k)
                break;
            double sums[3] = { weight[own], first[own][0], first[own][1] };
#pragma unroll
            for (int e = 0; e < 3; ++e)
                sums[e] = quad_sum(sums[e]);
            double *component = out + 1 + static_cast<size_t>(j) * E;
            if (threadIdx.x % 32 == 0)
                component[0] = sums[0];
            if (q == 0) {
                component[1 + g] = sums[1];
                component[1 + 8 + g] = sums[2];
            }
#pragma unroll
            for (int half = 0; half < 2; ++half)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int v = g + 8 * (e / 2), u = 8 * half + 2 * q + e % 2;  /* D[g + 8 h][2 q + i] */
                    if (v <= u)
                        component[1 + D + u * (u + 1) / 2 + v] = products[own][half][e];
                }
        }
    }
};

/* The 8-variable phase 2 on m16n8k8 products, two components a product.
 * m8n8k4 costs the FP64 pipe what its 256 FMAs would; m16n8k8 does 1,024 in
 * twice the time, but its A has 16 rows and an 8 x 8 block of sums needs 8.
 * A unit pairs components a and b: A's rows 0..7 hold r_a (x - mean_a)_v,
 * rows 8..15 r_b (x - mean_b)_v, and B (x - mean_a)_u for both, so the
 * product's lower block is b's sums centred on b's mean on one side and on
 * a's on the other: with delta = mean_a - mean_b,
 *   sum r_b (x - mean_b)(x - mean_a)^T = S_b - f_b delta^T,
 * S_b the sums wanted and f_b = sum r_b (x - mean_b), added back at the end.
 * Every term of that block is rounded at the size of |x - mean_b| |x -
 * mean_a|, so b's sums lose about log2(|delta| / spread_b) bits against a
 * product of its own: the host pairs only components whose loss it bounds
 * (pair_components), and a component left alone has A's rows 8..15 zero.
 * The units' table at the model's end: its count, then a and b per unit (b
 * -1 where alone). A unit's rows of a tile are split into Slices slices of
 * consecutive rows, one a warp, so that 4 units keep all 8 warps busy; a
 * warp owns jobs w and w + 8 (job = unit Slices + slice). The slices' sums
 * are added in order in shared memory at the end (a fixed order: the same
 * bits on every repeat). */
constexpr int kUnitDoubles = kPairTableDoubles;  /* gmm_pairs.h's table */
static_assert(kMmaComponents == kPairMostComponents, "the paired E-step's components");
constexpr int kStageDoubles = 16 * 8 + 2 * 8 + 2; /* a job's products, first moments and weights */

/* Slices per unit: the largest power of two that keeps units x slices within
 * the block's warps. */
__host__ __device__ constexpr int slices_for(int units)
{
    int slices = 1;
    while (2 * slices * units <= kRows / 32 && 2 * slices <= kRows / 32)
        slices *= 2;
    return slices;
}

template <int Own>
struct PairSums {
    double products[Own][4] = {}, first[Own][2] = {}, weight[Own][2] = {};
    int a[Own], b[Own], begin[Own];  /* the components (b < 0: none), the slice's first row */
    int jobs = 0, steps = 0;

    __device__ __forceinline__ void take_jobs(const double *units_table)
    {
        const int units = static_cast<int>(units_table[0]), slices = slices_for(units);
        jobs = units * slices;
        steps = kRows / 8 / slices;
        const int warp = threadIdx.x / 32;
#pragma unroll
        for (int own = 0; own < Own; ++own) {
            const int job = warp + (kRows / 32) * own, unit = job / slices;
            a[own] = job < jobs ? static_cast<int>(units_table[1 + 2 * unit]) : 0;
            b[own] = job < jobs ? static_cast<int>(units_table[2 + 2 * unit]) : -1;
            begin[own] = (job % slices) * (kRows / slices);
        }
    }

    /* Lane (g, q): A[g][q + 4 e] = r_a (x - mean_a)_g of row q + 4 e of the
     * step's 8, A[g + 8][.] the same for b, B[q + 4 e][g] = (x - mean_a)_g. */
    __device__ __forceinline__ void add_tile(const double *s_x, const double *s_r, const double *s_means, int)
    {
        const int warp = threadIdx.x / 32, g = (threadIdx.x % 32) >> 2, q = threadIdx.x & 3;
#pragma unroll
        for (int own = 0; own < Own; ++own) {
            if (warp + (kRows / 32) * own >= jobs)
                break;
            const double *x = s_x + g * kXStride + begin[own] + q;
            if (b[own] >= 0)
                add_job<true>(own, x, s_r, s_means, g, q);
            else
                add_job<false>(own, x, s_r, s_means, g, q);
        }
    }

    template <bool Paired>
    __device__ __forceinline__ void add_job(int own, const double *x, const double *s_r, const double *s_means,
                                            int g, int q)
    {
        const int ja = a[own], jb = Paired ? b[own] : ja;
        const double mean_a = s_means[ja * 8 + g], mean_b = s_means[jb * 8 + g];
        const double *ra = s_r + ja * kRows + begin[own] + q, *rb = s_r + jb * kRows + begin[own] + q;
        /* Two accumulators, even and odd steps (steps is even), where a warp
         * has one job: an m16n8k8 waits for the one before it into the same
         * accumulator. */
        double d[2][4] = { { products[own][0], products[own][1], products[own][2], products[own][3] }, {} };
        double fa = first[own][0], fb = first[own][1], wa = weight[own][0], wb = weight[own][1];
        auto add_step = [&](int step, double (&acc)[4]) {
            const double x0 = x[8 * step], x1 = x[8 * step + 4];
            const double ra0 = ra[8 * step], ra1 = ra[8 * step + 4];
            const double c0 = x0 - mean_a, c1 = x1 - mean_a;
            const double bv[2] = { c0, c1 };
            if constexpr (Paired) {
                const double rb0 = rb[8 * step], rb1 = rb[8 * step + 4];
                const double av[4] = { ra0 * c0, rb0 * (x0 - mean_b), ra1 * c1, rb1 * (x1 - mean_b) };
                mma_16x8<8>(acc, av, bv);
                fa += av[0] + av[2];
                fb += av[1] + av[3];
                wa += ra0 + ra1;
                wb += rb0 + rb1;
            } else {
                const double av[4] = { ra0 * c0, 0.0, ra1 * c1, 0.0 };
                mma_16x8<8>(acc, av, bv);
                fa += av[0] + av[2];
                wa += ra0 + ra1;
            }
        };
        if constexpr (Own == 1) {
            for (int step = 0; step < steps; step += 2) {
                add_step(step, d[0]);
                add_step(step + 1, d[1]);
            }
#pragma unroll
            for (int e = 0; e < 4; ++e)
                products[own][e] = d[0][e] + d[1][e];
        } else {  /* two jobs a warp: registers for one accumulator */
#pragma unroll 2
            for (int step = 0; step < steps; ++step)
                add_step(step, d[0]);
#pragma unroll
            for (int e = 0; e < 4; ++e)
                products[own][e] = d[0][e];
        }
        first[own][0] = fa;
        first[own][1] = fb;
        weight[own][0] = wa;
        weight[own][1] = wb;
    }

    /* The jobs' sums staged in shared memory (s_stage, the tile's space, free
     * after the last tile), then each entry of the components' sums added over
     * its unit's slices in order, b's products corrected, at out (1 + j E). */
    __device__ __forceinline__ void write(double *out, int k, const double *units_table, const double *s_means,
                                          double *s_stage)
    {
        constexpr int E = entry_count(8, true);
        const int warp = threadIdx.x / 32, g = (threadIdx.x % 32) >> 2, q = threadIdx.x & 3;
#pragma unroll
        for (int own = 0; own < Own; ++own) {
            const int job = warp + (kRows / 32) * own;
            if (job >= jobs)
                break;
            double sums[4] = { first[own][0], first[own][1], weight[own][0], weight[own][1] };
#pragma unroll
            for (int e = 0; e < 4; ++e)
                sums[e] = quad_sum(sums[e]);
            double *stage = s_stage + job * kStageDoubles;
#pragma unroll
            for (int e = 0; e < 4; ++e)  /* D[g + 8 (e / 2)][2 q + e % 2] */
                stage[(g + 8 * (e / 2)) * 8 + 2 * q + e % 2] = products[own][e];
            if (q == 0) {
                stage[128 + g] = sums[0];
                stage[136 + g] = sums[1];
            }
            if (threadIdx.x % 32 == 0) {
                stage[144] = sums[2];
                stage[145] = sums[3];
            }
        }
        __syncthreads();
        const int units = static_cast<int>(units_table[0]), slices = slices_for(units);
        for (int e = threadIdx.x; e < k * E; e += blockDim.x) {
            const int j = e / E, entry = e % E;
            int unit = 0, role = 0;
            for (int u = 0; u < units; ++u) {
                if (static_cast<int>(units_table[1 + 2 * u]) == j)
                    unit = u, role = 0;
                if (static_cast<int>(units_table[2 + 2 * u]) == j)
                    unit = u, role = 1;
            }
            int place, row = 0, col = 0;
            if (entry == 0) {
                place = 144 + role;
            } else if (entry <= 8) {
                place = 128 + 8 * role + entry - 1;
            } else {
                const int p = entry - 9;  /* p = col (col + 1) / 2 + row, row <= col */
                while ((col + 1) * (col + 2) / 2 <= p)
                    ++col;
                row = p - col * (col + 1) / 2;
                place = (8 * role + row) * 8 + col;
            }
            const double *stage = s_stage + unit * slices * kStageDoubles;
            double sum = 0.0, moment = 0.0;
            for (int s = 0; s < slices; ++s) {
                sum += stage[s * kStageDoubles + place];
                moment += stage[s * kStageDoubles + 136 + row];
            }
            if (role == 1 && entry > 8) {
                const int ja = static_cast<int>(units_table[1 + 2 * unit]);
                sum = fma(moment, s_means[ja * 8 + col] - s_means[j * 8 + col], sum);
            }
            out[1 + static_cast<size_t>(j) * E + entry] = sum;
        }
    }
};

/* A valid row's log-likelihood lse into the thread's sum, and to *row_ll
 * where asked. */
__device__ __forceinline__ void add_row_log_likelihood(bool valid, double lse, double *row_ll, double *ll)
{
    if (valid) {
        *ll += lse;
        if (row_ll != nullptr)
            *row_ll = lse;
    }
}

/* The block's log-likelihood into *out: the threads' sums added in each
 * warp, then the warps in order (a fixed order); s_reduce holds kRows / 32
 * doubles. Ends with a barrier, so s_reduce may be reused. */
__device__ void write_block_log_likelihood(double ll, double *s_reduce, double *out)
{
    for (int offset = 16; offset > 0; offset /= 2)
        ll += __shfl_down_sync(0xffffffffu, ll, offset);
    if (threadIdx.x % 32 == 0)
        s_reduce[threadIdx.x / 32] = ll;
    __syncthreads();
    if (threadIdx.x == 0) {
        double block_ll = 0.0;
        for (int w = 0; w < kRows / 32; ++w)
            block_ll += s_reduce[w];
        *out = block_ll;
    }
    __syncthreads();
}

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
    MmaSums<kMmaOwn> mma_sums;  /* the tensor-core phase 2's */
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
        add_row_log_likelihood(valid, lse, row_ll == nullptr ? nullptr : row_ll + i, &ll);
        __syncthreads();

        if constexpr (Mma) {
            mma_sums.add_tile(s_x, s_r, s_means, k);
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

    double *s_reduce = s_x;  /* the tile's space, free now */
    write_block_log_likelihood(ll, s_reduce, partials + blockIdx.x * stride);

    if constexpr (Mma) {
        mma_sums.write(partials + blockIdx.x * stride, k);
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

/* The E-step with phase 1's quadratic forms on the sm_90 tensor-core shapes
 * (mma.sync m16n8k8 and m16n8k16), for D = 8 or 16 (padded) variables with
 * full factors and at most kMmaComponents components. Per tile, warp w takes
 * rows 32 w ... 32 w + 31:
 *   1. per component j and 16 rows, Y = (X - mean_j) F_j as D / 8 products
 *      (one per 8 columns; the FMA kernel read a factor entry from shared
 *      memory for every entry it multiplied, here a lane reads D / 4 per
 *      product and 16 rows), each row's |y|^2 from its four lanes by two
 *      shuffles; lp into s_r;
 *   2. lane l takes row 32 w + l: one exp per component, the log-sum-exp and
 *      the responsibilities;
 *   3. after the block's barrier, the sums: for D = 8 on m16n8k8, two
 *      components a product where the host found them near enough
 *      (PairSums; estep_kernel's m8n8k4 phase 2 spent the pipe's time on
 *      one), for D = 16 on m16n8k8 (WideSums; the FMA kernel's phase 2 kept
 *      153 sums a thread and spilled).
 * On the H100 FP64 vector instructions and FP64 tensor-core products share
 * one pipe (Nsight Compute's "shared pipe"; an m8n8k4 product costs it what
 * its 256 FMAs would, an m16n8k8 half that): phase 1 on the tensor cores
 * saves issue slots and shared loads, not FP64 work (half of a triangular
 * factor is zeros), and at D = 8 the whole fit takes what the FMA kernel's
 * did (at D = 16 a quarter). Tried at D = 8: the row sums as a product with
 * a B of -1/2 (the pipe went to 65% and the E-step got slower), and an
 * m16n8k8 phase 2 with the first moments in A's spare rows (the same time
 * as m8n8k4's); bench/NOTES.md, "GMM v8".
 * Slots (8 or 16, at least k) sizes the unrolled per-row loops: with no
 * branch among them, the exps' constants stay in registers (the exp is
 * math/exp_nonpositive.h's, fused: 28 instructions where CUDA's took 50).
 * Fixed order throughout: the same bits on every repeat. */
template <int D, int Slots>
__global__ void __launch_bounds__(kRows, 2)
    estep_tensor_kernel(const double *__restrict__ data, size_t n, int k, const double *__restrict__ model,
                        size_t model_stride, double *__restrict__ partials, size_t stride,
                        double *__restrict__ resp, double *__restrict__ row_ll)
{
    constexpr int kS = D / 4, kHalves = D / 8;  /* A's and B's values a lane per product, products per 16 rows */
    extern __shared__ double shared[];
    model += blockIdx.y * model_stride;
    partials += static_cast<size_t>(blockIdx.y) * gridDim.x * stride;
    double *s_log_norm = shared;
    double *s_means = s_log_norm + k;    /* j D + v */
    double *s_factors = s_means + k * D; /* j D^2 + (half kS + s) 32 + lane: lane (g, q)'s
                                            b[s] = F_j[q + 4 s][8 half + g] */
    double *s_x = s_factors + k * D * D; /* v kXStride + t */
    double *s_r = s_x + D * kXStride;    /* j kRows + t */
    for (int e = threadIdx.x; e < k * (1 + D); e += blockDim.x)
        shared[e] = model[e];
    for (int e = threadIdx.x; e < k * D * D; e += blockDim.x) {
        const int j = e / (D * D), s = (e / 32) % kS, half = (e % (D * D)) / (32 * kS), lane = e % 32;
        s_factors[e] = model[k * (1 + D) + j * D * D + (lane % 4 + 4 * s) + D * (8 * half + lane / 4)];
    }

    const int t = threadIdx.x, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
    using Sums = typename std::conditional<D == 8, PairSums<Slots / (kRows / 32)>, WideSums<Slots / (kRows / 32)>>::type;
    Sums sums;
    const double *units_table = model + k * (1 + D + D * D);
    if constexpr (D == 8)
        sums.take_jobs(units_table);
    double ll = 0.0;
    __syncthreads();

    const size_t tiles = (n + kRows - 1) / kRows;
    for (size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const size_t i = tile * kRows + t;
        const bool valid = i < n;
#pragma unroll
        for (int v = 0; v < D; ++v)
            s_x[v * kXStride + t] = valid ? data[i + n * v] : 0.0;
        __syncwarp();

        /* 1. The warp's 32 rows as two 16-row A fragments: x[rows][h + 2 s] =
         * X[32 warp + 16 rows + g + 8 h][q + 4 s]. */
        double x[2][2 * kS];
#pragma unroll
        for (int rows = 0; rows < 2; ++rows)
#pragma unroll
            for (int e = 0; e < 2 * kS; ++e)
                x[rows][e] = s_x[(q + 4 * (e / 2)) * kXStride + 32 * warp + 16 * rows + g + 8 * (e % 2)];
        /* Two components a step at 8 variables and k <= 8 (two chains of
         * product, squares and shuffles in flight; 126 registers, no spill;
         * the wider kernels spill with it): 10^6 x 8, k = 8, 50 iterations
         * on the H100 7.64-7.68 -> 7.59-7.60 ms, 10^5 1.84-1.88 -> 1.78-1.82. */
#pragma unroll(D == 8 && Slots == 8 ? 2 : 1)
        for (int j = 0; j < k; ++j) {
            double mean[kS];
#pragma unroll
            for (int s = 0; s < kS; ++s)
                mean[s] = s_means[j * D + q + 4 * s];
            const double log_norm = s_log_norm[j];
#pragma unroll
            for (int rows = 0; rows < 2; ++rows) {
                double a[2 * kS];
#pragma unroll
                for (int e = 0; e < 2 * kS; ++e)
                    a[e] = x[rows][e] - mean[e / 2];
                /* y[2 h + i] = Y[g + 8 h][8 half + 2 q + i]: row g + 8 h's
                 * squares over this lane's columns, then over the four lanes q. */
                double part[2] = { 0.0, 0.0 };
#pragma unroll
                for (int half = 0; half < kHalves; ++half) {
                    double b[kS], y[4] = {};
#pragma unroll
                    for (int s = 0; s < kS; ++s)
                        b[s] = s_factors[j * D * D + (half * kS + s) * 32 + lane];
                    mma_16x8<D>(y, a, b);
#pragma unroll
                    for (int h = 0; h < 2; ++h)
                        part[h] = fma(y[2 * h + 1], y[2 * h + 1], fma(y[2 * h], y[2 * h], part[h]));
                }
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    part[h] = quad_sum(part[h]);
                /* lanes q and q + 2 write the same value to the same place,
                 * with no branch */
                s_r[j * kRows + 32 * warp + 16 * rows + g + 8 * (q & 1)] =
                    fma(-0.5, (q & 1) == 0 ? part[0] : part[1], log_norm);
            }
        }
        __syncwarp();

        /* 2. Row t: r_j = exp(lp_j - largest) / sum; the slots past k hold
         * -inf, whose exp is 0. */
        double e[Slots];
        double largest = -INFINITY;
#pragma unroll
        for (int j = 0; j < Slots; ++j) {
            e[j] = j < k ? s_r[j * kRows + t] : -INFINITY;
            largest = e[j] > largest ? e[j] : largest;  /* fmax's NaN rules cost 10 instructions */
        }
        double total = 0.0;
#pragma unroll
        for (int j = 0; j < Slots; ++j) {
            const double y = e[j] - largest;  /* at most 0; below -746 the exp is 0 */
            e[j] = sg_exp_nonpositive_with(y < -746.0 ? -746.0 : y, 1);
            total += e[j];
        }
        const double lse = largest + log(total), inverse = 1.0 / total;
#pragma unroll
        for (int j = 0; j < Slots; ++j)
            if (j < k) {
                const double r = valid ? e[j] * inverse : 0.0;
                s_r[j * kRows + t] = r;
                if (resp != nullptr && valid)
                    resp[i + n * j] = r;
            }
        add_row_log_likelihood(valid, lse, row_ll == nullptr ? nullptr : row_ll + i, &ll);
        __syncthreads();

        /* 3. The sums. */
        sums.add_tile(s_x, s_r, s_means, k);
        __syncthreads();
    }

    write_block_log_likelihood(ll, s_x, partials + blockIdx.x * stride);
    if constexpr (D == 8)
        sums.write(partials + blockIdx.x * stride, k, units_table, s_means, s_x);
    else
        sums.write(partials + blockIdx.x * stride, k);
}

/* reduced[e] = the blocks' partials[b stride + e] added for e below used,
 * per model: kAddGroups runs of consecutive blocks, each added in block
 * order by a thread of its own, then the runs in order (a fixed order: the
 * same bits on every repeat). One thread adding all 264 blocks of an entry
 * took 11.8 us an E-step at 10^6 x 8, k = 8 on the H100 (a CUPTI trace,
 * bench/NOTES.md "GMM v8"), a chain of dependent adds. */
constexpr int kAddLanes = 32, kAddGroups = 8;

__global__ void __launch_bounds__(kAddLanes * kAddGroups)
    add_blocks_kernel(const double *__restrict__ partials, int blocks, size_t stride, size_t used,
                      double *__restrict__ reduced)
{
    __shared__ double s_runs[kAddGroups][kAddLanes];
    const size_t e = blockIdx.x * static_cast<size_t>(kAddLanes) + threadIdx.x;
    partials += static_cast<size_t>(blockIdx.y) * blocks * stride;  /* blockIdx.y: the model */
    reduced += blockIdx.y * stride;
    const int per_run = (blocks + kAddGroups - 1) / kAddGroups;
    const int first = static_cast<int>(threadIdx.y) * per_run, end = min(blocks, first + per_run);
    double total = 0.0;
    if (e < used)
        for (int b = first; b < end; ++b)
            total += partials[b * stride + e];
    s_runs[threadIdx.y][threadIdx.x] = total;
    __syncthreads();
    if (threadIdx.y == 0 && e < used) {
        double sum = s_runs[0][threadIdx.x];
        for (int run = 1; run < kAddGroups; ++run)
            sum += s_runs[run][threadIdx.x];
        reduced[e] = sum;
    }
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

/* Whether estep_tensor_kernel runs: D = 8 or 16 with full factors, at most
 * kMmaComponents components, its machine code sm_90's. */
bool use_tensor(const statgpu_cuda_gmm_session *session, bool triangular)
{
    return session->tensor && (session->padded == 8 || session->padded == 16) && triangular &&
           session->k <= kMmaComponents;
}

using TensorKernel = void (*)(const double *, size_t, int, const double *, size_t, double *, size_t, double *,
                              double *);

TensorKernel tensor_kernel_of(int padded, int k)
{
    if (padded == 8)
        return k <= 8 ? estep_tensor_kernel<8, 8> : estep_tensor_kernel<8, kMmaComponents>;
    return k <= 8 ? estep_tensor_kernel<16, 8> : estep_tensor_kernel<16, kMmaComponents>;
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
    cudaFuncAttributes tensor_attributes;
    session->tensor = cudaFuncGetAttributes(&tensor_attributes, estep_tensor_kernel<8, 8>) == cudaSuccess &&
                      tensor_attributes.binaryVersion >= 90;
    (void)cudaGetLastError();
    /* STATGPU_CUDA_GMM_MMA=0 keeps the E-step off the tensor cores, =1 keeps it
     * to the m8n8k4 phase 2: to compare the three. */
    if (const char *mma = std::getenv("STATGPU_CUDA_GMM_MMA"); mma != nullptr && std::strcmp(mma, "0") == 0) {
        session->major = std::min(session->major, 7);
        session->tensor = false;
    } else if (mma != nullptr && std::strcmp(mma, "1") == 0) {
        session->tensor = false;
    }
    if (session->shared_bytes > static_cast<size_t>(std::max(optin, 48 * 1024))) {
        free_session(session);
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "this mixture's model does not fit in the GPU's shared memory");
        return call.status();
    }
    const int padded = session->padded;
    session->entries = entry_count(padded, true);
    session->stride = 1 + k * session->entries;
    session->model_doubles = k * (1 + padded + padded * padded) + kUnitDoubles;
    if (const char *pairs = std::getenv("STATGPU_CUDA_GMM_PAIRS"); pairs != nullptr && std::strcmp(pairs, "0") == 0)
        session->pairs = false;
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
    if (ok && session->shared_bytes > 48 * 1024 && use_tensor(session, true))
        ok = call.check(cudaFuncSetAttribute(tensor_kernel_of(session->padded, session->k),
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(session->shared_bytes)),
                        "reserving shared memory for the GMM E-step");
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
        if (triangular && padded == 8 && k <= kMmaComponents)
            pair_components(k, d, model->means, model->factors, session->pairs,
                            h + static_cast<size_t>(k) * (1 + padded + factor_doubles));
    }
    if (!call.check(cudaEventRecord(events[kEventStart], stream), "recording an event") ||
        !call.check(cudaMemcpyAsync(session->d_model, session->h_model, model_count * model_stride * sizeof(double),
                                    cudaMemcpyHostToDevice, stream), "copying the GMM models to the GPU"))
        return call.status();
    const int parts = parts_for(padded, triangular, k);
    const dim3 grid(static_cast<unsigned>(session->grid), static_cast<unsigned>(model_count));
    double *resp = final_step ? session->d_resp : nullptr, *row_ll = final_step ? session->d_row_ll : nullptr;
    if (use_tensor(session, triangular))
        tensor_kernel_of(padded, k)<<<grid, kRows, session->shared_bytes, stream>>>(
            session->d_data, session->n, k, session->d_model, model_stride, session->d_partials, session->stride,
            resp, row_ll);
    else
        estep_kernel_of(padded, triangular, parts, use_mma(padded, triangular, k, session->major))
            <<<grid, kRows, session->shared_bytes, stream>>>(session->d_data, session->n, k, lanes_for(k, parts),
                                                            session->d_model, model_stride, session->d_partials,
                                                            session->stride, resp, row_ll);
    if (!call.check(cudaGetLastError(), "running the GMM E-step"))
        return call.status();
    const size_t used = 1 + static_cast<size_t>(k) * entry_count(padded, triangular);
    const dim3 add_grid(static_cast<unsigned>((used + kAddLanes - 1) / kAddLanes),
                        static_cast<unsigned>(model_count));
    add_blocks_kernel<<<add_grid, dim3(kAddLanes, kAddGroups), 0, stream>>>(
        session->d_partials, session->grid, session->stride, used, session->d_reduced);
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
