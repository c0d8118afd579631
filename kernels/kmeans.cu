/*
 * kmeans.cu: the module's k-means entries: Lloyd's iterations on the device,
 * with the CPU path's rules (engine/src/kmeans_cpu.c, sg_cpu_kmeans_lloyd).
 *
 * One iteration (an assignment pass) is two launches and 40 bytes written
 * into page-locked host memory:
 *   assignment kernel  each row's nearest centroid (the lower index on a
 *                      tie); the rows that changed cluster are taken from
 *                      the exact sums of the cluster they left and added to
 *                      those of the cluster they joined (see "exact sums"):
 *                      the rows that stay, most of them after the first few
 *                      iterations, cost no sums at all;
 *   centroids_kernel   the new centroids from the exact sums, the centroid
 *                      shift, the sizes, the centroids' moves (for the
 *                      bounds) and the totals the host reads to decide
 *                      whether to stop.
 * The host queues each pass before it reads the last one's totals (see
 * kmeans_lloyd), so the GPU does not wait for the host between passes; it
 * reads them when their sequence number has arrived (wait_pass), so that
 * nothing but the two kernels is queued a pass, and on sm_90 each kernel is
 * launched before the one ahead of it ends (programmatic dependent launch:
 * wait_for_previous_grid).
 * After the last assignment a summing pass (by the labels) gives the within
 * sums of squares and the inertia: a register or generic kernel adds each
 * row's squared distance to its centroid (where the iteration limit ended
 * the run, the distances the register and screen kernels wrote in the last
 * assignment, the same bits, instead of the rows) by reduce-by-key
 * (accumulate_groups: the rows of one label form a group whose lowest lane
 * adds them in lane order, then one read-modify-write into the warp's
 * shared accumulator), and
 * reduce_kernel adds the blocks' partials in block order. That pass has a
 * fixed grid, a function of (n_obs, n_vars, k) only, and a shared-memory plan
 * for a fixed 96 KiB budget: the same bits on every GPU.
 *
 * Reproducible: each row's label and bound are its own, the sums are exact
 * integers (any order of addition gives the same), and the summing pass adds
 * in a fixed order; so the assignment pass may take any grid (as many blocks
 * as the GPU runs at once) and its warps any order. No floating-point atomics.
 *
 * Distances are computed in double as sum_v fma(x_v - c_v, x_v - c_v, .), the
 * difference form (no |x|^2 - 2 x.c + |c|^2 expansion, whose cancellation loses
 * digits when the data sit far from the origin). For n_vars <= 32 a thread
 * keeps its rows' coordinates in registers (templates for 4, 8, 16 and 32
 * padded variables, two rows per thread up to 16), with the centroids in
 * shared memory read as 16-byte pairs; beyond 32 variables, or where the
 * centroids do not fit in shared memory, a generic kernel reads the
 * coordinates from global memory (cached) and the centroids from shared or
 * global memory.
 *
 * From kScreenFromK centroids, where the GPU runs the module's sm_90 code, the
 * assignment is screened on the FP64 tensor cores (assign_screen_kernel):
 * the expanded form picks each row's centroid wherever a rigorous bound on
 * both forms' rounding says the difference form picks the same, and the
 * difference form decides the other rows, so the labels are those of
 * move_registers_kernel, bit for bit. There each row also keeps a lower
 * bound on its distance to the other centroids (Hamerly's bound, rounded
 * down); a row whose own centroid is nearer than the bound less the
 * centroids' moves keeps its centroid without the screen (about half the
 * rows, on the benchmark's data).
 *
 * Empty clusters (rare) are re-seeded on the host with the CPU's rule, from
 * the distances of every row to its centroid computed here exactly as the CPU
 * computes them (products and sums without fused multiply-adds); the moves
 * then go into the exact sums like any others.
 */
#include "cuda_state.h"
#include "mma_f64.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

/* The device data and work buffers of one k-means call. */
struct statgpu_cuda_kmeans_session {
    statgpu_cuda_state *state = nullptr;
    uint64_t n_obs = 0;
    int n_vars = 0;
    int k = 0;

    /* The launch plan (see plan_kmeans). */
    int padded_vars = 0;        /* 4, 8, 16, 32: registers; 0: the generic kernel */
    int rows_per_thread = 1;
    int centroids_shared = 0;   /* the centroids in shared memory */
    int screen = 0;             /* the tensor-core screen (assign_screen_kernel) */
    int fixed_share = 12;       /* sixteenths of each warp's chunks taken in a fixed order (assign_screen_kernel) */
    int copies = 0;             /* shared accumulators per block; 0: the block's global slot */
    int copies_log2 = 0;        /* log2 of max(copies, 1) */
    size_t shared_bytes = 0;    /* the summing pass (by labels) */
    int moves_shared = 0;       /* the assignment's moves gathered in shared sums (else global) */
    size_t move_shared_bytes = 0;  /* the assignment pass */
    uint64_t move_tile_count = 0;  /* its tiles ... */
    int move_grid = 1;             /* ... and blocks: as many as the GPU runs at once */
    int grid = 1;
    uint64_t tile_count = 0;
    size_t partial_stride = 0;  /* doubles per block: 2 k + 3 (within sums of squares, counts, totals) */

    double *d_data = nullptr;       /* n_obs x n_vars, column-major, leading dimension n_obs */
    int32_t *d_labels = nullptr;    /* n_obs */
    double *d_partials = nullptr;   /* grid x partial_stride */
    double *d_centroids = nullptr;  /* k x n_vars, column-major, leading dimension k */
    double *d_next = nullptr;       /* likewise */
    double *d_reduced = nullptr;    /* partial_stride: the partials added over the blocks */
    unsigned *d_counter = nullptr;  /* blocks of reduce_kernel done; 0 between launches */
    double *d_counts = nullptr;     /* k, exact integers */
    double *d_wss = nullptr;        /* k */
    double *d_totals = nullptr;     /* kTotalCount */
    double *d_distances = nullptr;  /* n_obs: the rows' distances (the summing pass; re-seeding), where there is room */
    float *d_bounds = nullptr;      /* n_obs, with the screen: the rows' lower bounds */
    double *d_drift = nullptr;      /* k + 1, with the screen: the centroids' last moves, then their running total */
    bool use_bounds = false;        /* the screen keeps bounds (STATGPU_CUDA_KMEANS_BOUNDS=0: not) */
    bool bounds_ready = false;      /* d_bounds and d_drift hold the last assignment's */
    double bound_scale = 1.0;       /* the bounds' power of two (kmeans_lloyd) */
    /* The exact sums (see "Exact sums" in the kernels' part): */
    unsigned long long *d_sums = nullptr;    /* k x n_vars 128-bit integers (low, high word), cluster-major */
    unsigned long long *d_sizes = nullptr;   /* k, two's complement */
    unsigned long long *d_pass = nullptr;    /* kPassCount: the pass's changed and screened rows */
    int *d_shift = nullptr;                  /* n_vars: each variable's power of two */
    unsigned long long *d_largest = nullptr; /* n_vars: the largest |x| of each variable, as bits */
    cudaEvent_t trace[3] = {};               /* STATGPU_CUDA_KMEANS_TRACE: the passes' kernels timed */
    double *h_totals = nullptr;     /* page-locked: d_totals as last read, then two passes' slots */
    /* The passes queued ahead (see kmeans_lloyd): */
    int *d_hold = nullptr;          /* 1: the queued pass does nothing (the last one settled or emptied a cluster) */
    double *h_slots = nullptr;      /* h_totals + kTotalCount: two passes' totals and sequence numbers (kSlot) */
    double *dh_slots = nullptr;     /* h_slots as the GPU writes it (mapped), or null: copied from d_totals */
    double slot_sequence[2] = {};   /* the sequence number of the pass queued into each slot (dh_slots) */
    double sequence = 0.0;          /* the passes queued in the session */
    bool early_launch = false;      /* the kernels of consecutive passes launched early (programmatic dependent
                                       launch, sm_90 code) */
    bool after_pass = false;        /* the last work queued is a pass's centroids_kernel */
    bool last_distances = false;    /* the last assignment writes d_distances for the summing pass */
    bool distances_written = false; /* the last pass queued writes d_distances (the last assignment) */
    cudaEvent_t slot_read[2] = {};  /* each slot's totals on the host */
};

namespace statgpu_cuda {

namespace {

constexpr int kKmeansThreads = 256;
constexpr int kKmeansWarps = kKmeansThreads / 32;
/* Blocks of the assignment pass: two per SM of an H100 (132 SMs), for every
 * GPU alike, so that the partial sums are the same on all of them. */
constexpr int kKmeansGrid = 264;
/* The shared-memory budget the plan is made for. */
constexpr size_t kSharedBudget = 96 * 1024;
/* The partials (grid x (2 k + 3) doubles) stay below this many doubles. */
constexpr size_t kPartialsMax = size_t{1} << 25;

/* The totals the host reads each iteration. */
/* kTotalScreened: the rows the screen kernel screened (the others its bounds settled). */
enum { kTotalChanged = 0, kTotalShift = 1, kTotalInertia = 2, kTotalEmpty = 3, kTotalScreened = 4, kTotalCount = 5 };
/* A pass's slot in the page-locked h_slots: its totals, then its sequence
 * number, written last. */
constexpr int kSlot = kTotalCount + 1;
/* The counters an assignment pass adds to (integers: any order, same count). */
/* kPassClaims: the chunks the screen kernel's warps have claimed past their
 * fixed rounds (see assign_screen_kernel). */
enum { kPassChanged = 0, kPassScreened = 1, kPassClaims = 2, kPassCount = 3 };

/* Programmatic dependent launch (sm_90): a pass's kernels are launched
 * before the kernel ahead of them has finished, so that their blocks are
 * resident when it ends; each waits for that kernel's results before it
 * reads anything (wait_for_previous_grid), and lets the next one launch as
 * it starts (allow_next_grid). Both are no-ops for a kernel launched
 * without it, and in code for older GPUs. */
__device__ __forceinline__ void wait_for_previous_grid()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void allow_next_grid()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

struct AssignArgs {
    const double *d_data;
    uint64_t n_obs;
    int n_vars;
    int k;
    const double *d_centroids;
    int32_t *d_labels;
    double *d_partials;
    size_t partial_stride;
    uint64_t tile_count;
    int moves;             /* 1: the assignment pass (labels, and the moved rows into the exact sums);
                              0: the summing pass (every row by its label into the partials) */
    int centroids_shared;
    int copies;
    int copies_log2;       /* log2 of max(copies, 1): copies is 0 or a power of two */
    float *d_bounds;       /* the screen's rows' lower bounds (see assign_screen_kernel), or null */
    const double *d_drift; /* k: each centroid's move since the last assignment, rounded up */
    int bounds_valid;      /* d_bounds and d_drift hold the last assignment's */
    double bound_scale;    /* d_bounds holds each bound times this power of two ... */
    double bound_unscale;  /* ... and this one's inverse (kmeans_lloyd) */
    unsigned long long *d_sums;   /* the exact sums (moves) */
    unsigned long long *d_sizes;  /* the clusters' sizes (moves) */
    unsigned long long *d_pass;   /* kPassCount (moves) */
    const int *d_shift;           /* n_vars (moves) */
    int moves_shared;             /* the block gathers its moves in shared memory first */
    const int *d_hold;            /* the assignment pass does nothing where *d_hold (kmeans_lloyd), or null */
    int fixed_share;              /* sixteenths of its chunks each warp of the screen kernel takes in a fixed order */
    double *d_distances;          /* n_obs or null: the register and screen kernels' assignment writes each row's
                                     squared distance to its new centroid there (the last assignment), and the
                                     summing pass reads them instead of the rows (see sum_registers_kernel) */
};

/* The warp adds its 32 rows (lane r: label, squared distance, valid) to
 * the accumulator acc: within sums of squares at acc[label], counts at
 * acc[k + label]; and their distances to the warp's inertia (the same in
 * every lane). Rows in lane order: a fixed order. Called by the whole warp. */
__device__ __forceinline__ void accumulate_warp(double *acc, int k, int label, double distance, bool valid,
                                                double &inertia)
{
    const int lane = static_cast<int>(threadIdx.x & 31u);
    const unsigned valid_mask = __ballot_sync(0xffffffffu, valid);
    double *wss = acc;
    double *counts = acc + k;
    for (int r = 0; r < 32; ++r) {
        const int label_r = __shfl_sync(0xffffffffu, label, r);
        const double distance_r = __shfl_sync(0xffffffffu, distance, r);
        if (((valid_mask >> r) & 1u) == 0)
            continue;  /* the same for every lane */
        inertia += distance_r;
        if (lane == 0) {
            wss[label_r] += distance_r;
            counts[label_r] += 1.0;
        }
    }
}

/* The block's accumulators: `copies` of them in shared memory (warp w uses
 * copy w % copies, warps sharing a copy take turns in warp order), or, when
 * copies is 0, the block's slot of the global partials, one warp at a time. */
__device__ __forceinline__ void accumulate_block(double *s_acc, double *d_slot, int copies, int k, int label,
                                                 double distance, bool valid, double &inertia)
{
    const int warp = static_cast<int>(threadIdx.x >> 5);
    const size_t acc_size = 2 * static_cast<size_t>(k);
    const int groups = copies > 0 ? copies : 1;
    double *acc = copies > 0 ? s_acc + static_cast<size_t>(warp % groups) * acc_size : d_slot;
    const int turns = kKmeansWarps / groups;
    for (int turn = 0; turn < turns; ++turn) {
        if (turns > 1)
            __syncthreads();
        if (warp / groups == turn)
            accumulate_warp(acc, k, label, distance, valid, inertia);
    }
    if (turns > 1)
        __syncthreads();
}

/* The warp adds its 32 rows (lane r: its squared distance, label and
 * whether it is a row) to the block's accumulators by reduce-by-key: the
 * rows of one label form a group (__match_any_sync), and the group's lowest
 * lane adds the group's distances in ascending lane order (fetched by
 * shuffles), then adds the sum and the group's row count to its cluster's
 * within sum of squares and count. Groups have distinct labels, so no two
 * lanes write the same place, and the order of every addition is a
 * function of the data alone. Warps sharing an accumulator (copies < 8)
 * take turns in warp order; copies == 0: the block's global slot. Called by
 * the whole block. */
__device__ __forceinline__ void accumulate_groups(double *s_acc, double *d_slot, const AssignArgs &args,
                                                  double distance, int label, bool valid)
{
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const int k = args.k;
    const unsigned group = __match_any_sync(0xffffffffu, valid ? label : -1);
    const bool leader = valid && (__ffs(group) - 1) == lane;
    double sum = distance;
    unsigned rest = leader ? group & (group - 1u) : 0u;
    while (__any_sync(0xffffffffu, rest != 0u)) {
        const bool add = rest != 0u;
        const double value = __shfl_sync(0xffffffffu, distance, add ? __ffs(rest) - 1 : lane);
        if (add) {
            sum += value;
            rest &= rest - 1u;
        }
    }
    /* The copies' count is a power of two (plan_kmeans): a shift and a
     * mask, where the divisions took some 30 instructions a call. */
    const int groups_log2 = args.copies_log2;
    const int turns = kKmeansWarps >> groups_log2;
    const double count = static_cast<double>(__popc(group));
    /* Shared- and global-memory instructions, where one pointer for both
     * took generic ones. */
    auto add_group = [&](double *acc) {
        acc[label] += sum;
        acc[k + label] += count;
    };
    for (int turn = 0; turn < turns; ++turn) {
        if (turns > 1)
            __syncthreads();
        if (leader && (warp >> groups_log2) == turn) {
            if (args.copies > 0)
                add_group(s_acc + static_cast<size_t>(warp & ((1 << groups_log2) - 1)) * 2 * k);
            else
                add_group(d_slot);
        }
    }
    /* The next call's leader of a label may be another lane of this warp:
     * its read of the cluster must see this one's write (the shuffles and
     * match_any order the lanes' execution, not their memory; compute-
     * sanitizer's racecheck reported these as hazards). */
    if (turns > 1)
        __syncthreads();
    else
        __syncwarp();
}

/* Shared memory of the summing pass (by labels), in doubles: centroids (when
 * shared), the accumulator copies, and the warps' inertia and changed-label
 * counts. */
struct SharedLayout {
    size_t centroids, acc, warp_totals, total;
};

/* The screen kernel's centroids lie PADDED + kScreenPad doubles apart: each
 * lane reads its own row's centroid, and rows 16 doubles apart would put
 * every lane's 16-byte read in the same banks (Nsight Compute: 60% of the
 * kernel's shared-memory wavefronts were such conflicts). */
constexpr int kScreenPad = 2;

/* The register kernel's queue of a tile's moves holds this many rows. */
constexpr int kMoveTileRows = 2 * kKmeansThreads;
/* The screen kernel's warps' queues (WarpQueue), in doubles: room for
 * kKmeansWarps x kWarpQueueDoubles (a static_assert checks it). */
constexpr size_t kScreenQueueDoubles = 1024;

/* The screen's arrays (assign_screen_kernel): the centroids' mean, the
 * centred centroids as mma fragments, their offsets, five scalars (the
 * centroids' reach, the moves' largest two, the largest's centroid and the
 * moves' running total) and the warps' queues. */
__host__ __device__ inline size_t screen_doubles(int padded_vars, int k)
{
    const size_t slots = static_cast<size_t>(k + 7) / 8 * 8;
    return static_cast<size_t>(padded_vars) + slots * padded_vars + slots + 6 + kScreenQueueDoubles;
}

__host__ __device__ inline SharedLayout shared_layout(int padded_vars, int n_vars, int k, int centroids_shared,
                                                      int copies)
{
    SharedLayout layout;
    size_t at = 0;
    layout.centroids = at;
    if (padded_vars > 0)
        at += static_cast<size_t>(k) * padded_vars;
    else if (centroids_shared)
        at += static_cast<size_t>(k) * n_vars;
    layout.acc = at;
    at += static_cast<size_t>(copies) * 2 * k;  /* a copy: k within sums of squares, k counts */
    layout.warp_totals = at;
    at += 2 * kKmeansWarps;
    layout.total = at;
    return layout;
}

/* ------------------------------------------------------------- exact sums
 *
 * The assignment passes keep the clusters' coordinate sums as exact
 * integers. A value x of variable v stands for X = x 2^shift_v rounded to the
 * nearest integer (ties to even), with shift_v = B - E_v, 2^E_v above the
 * variable's largest |x| and B = 127 - bits(n_obs): |X| <= 2^B, so the X of
 * any n_obs rows add up without overflow in 128-bit two's complement. Values
 * of at least 2^(E_v - B + 52) are taken exactly (at n_obs = 10^7, every
 * value from 2^-51 times the variable's largest up), the others within
 * 2^(E_v - B - 1). A cluster's sum is then the exact sum of its rows' X:
 * the same integer whatever the order of the additions. So an assignment
 * takes each row that changed cluster from the one it left and adds it to
 * the one it joined (integer atomics, no fixed order needed), and the rows
 * that stay cost nothing; the result is that of summing every row afresh.
 * The new centroid is the sum rounded once to a double, divided by the size,
 * times 2^-shift_v. */

/* X of a value (its low and high words). scalbn is exact here (a result
 * below 2^-1022 rounds to 0 either way); y = h 2^63 + r exactly, with
 * |r| < 2^63 the bits of y below 2^63, so rounding r rounds y. */
__device__ __forceinline__ void to_fixed(double x, int shift, unsigned long long &low, unsigned long long &high)
{
    const double y = scalbn(x, shift);
    const double h = trunc(y * 0x1p-63);
    const double r = __fma_rn(-h, 0x1p63, y);
    const long long upper = __double2ll_rz(h);
    const long long lower = __double2ll_rn(r);
    const unsigned long long upper_low = static_cast<unsigned long long>(upper) << 63;
    low = upper_low + static_cast<unsigned long long>(lower);
    high = static_cast<unsigned long long>(upper >> 1) + (lower < 0 ? ~0ull : 0ull) + (low < upper_low ? 1ull : 0ull);
}

/* -X from X. */
__device__ __forceinline__ void negate_fixed(unsigned long long &low, unsigned long long &high)
{
    low = ~low + 1ull;
    high = ~high + (low == 0ull ? 1ull : 0ull);
}

/* A 128-bit integer (two's complement) rounded to the nearest double, ties
 * to even: its top 64 bits, with any bit below them folded into the
 * lowest (a sticky bit, 11 places under the rounding point). */
__device__ __forceinline__ double fixed_to_double(unsigned long long low, unsigned long long high)
{
    const bool negative = static_cast<long long>(high) < 0;
    if (negative)
        negate_fixed(low, high);
    double magnitude;
    if (high == 0ull) {
        magnitude = __ull2double_rn(low);
    } else {
        const int bits = 64 - __clzll(static_cast<long long>(high));
        unsigned long long top = bits == 64 ? high : (high << (64 - bits)) | (low >> bits);
        const unsigned long long rest = bits == 64 ? low : low << (64 - bits);
        top |= rest != 0ull ? 1ull : 0ull;
        magnitude = scalbn(__ull2double_rn(top), bits);
    }
    return negative ? -magnitude : magnitude;
}

/* Adds X to the 128-bit integer whose low and high words are at `low_word`
 * and low_word[high_at], with two atomic adds: the low word's old value
 * gives this add's carry, so the high word gets every carry exactly,
 * whatever the order of the adds (the sum is modulo 2^128; the final one is
 * in range). */
__device__ __forceinline__ void add_fixed(unsigned long long *low_word, int high_at, unsigned long long low,
                                          unsigned long long high)
{
    const unsigned long long old = atomicAdd(low_word, low);
    atomicAdd(low_word + high_at, high + (old + low < old ? 1ull : 0ull));
}

/* Where exact sums lie: entry e = j n_vars + v (cluster j, variable v).
 * The device's d_sums interleave each entry's low and high words (low at
 * 2 e, high after it); a block's shared sums take the entries sixteen at a
 * time, their sixteen low words and then their sixteen high ones
 * (block_sum_at), so that the lanes of a move, one a variable, add to
 * consecutive words: 64-bit atomics of 16 lanes in one 128-byte wavefront
 * instead of two (bench/NOTES.md, k-means v17). A fixed distance from low
 * to high word keeps the screen kernel's registers as they were. */
constexpr int kSumGroup = 16;

__host__ __device__ inline size_t block_sums_words(size_t entries)
{
    return (entries + kSumGroup - 1) / kSumGroup * (2 * kSumGroup);
}

/* A block's entries are fewer than 2^32: 32-bit arithmetic (the size_t
 * form put the screen kernel at 44 bytes of spills). */
__device__ __forceinline__ unsigned block_sum_at(unsigned e)
{
    return e / kSumGroup * (2 * kSumGroup) + e % kSumGroup;
}

struct ExactSums {
    unsigned long long *words;
    bool blocked;  /* a block's shared layout (block_sum_at), else the device's */
};

/* Cluster j's variable v (a block's entries, fewer than 2^32, in 32 bits). */
__device__ __forceinline__ unsigned long long *low_word_of(const ExactSums &sums, int j, int n_vars, int v)
{
    if (sums.blocked)
        return sums.words + block_sum_at(static_cast<unsigned>(j * n_vars + v));
    return sums.words + 2 * (static_cast<size_t>(j) * n_vars + v);
}

__device__ __forceinline__ int high_at_of(const ExactSums &sums)
{
    return sums.blocked ? kSumGroup : 1;
}

__device__ __forceinline__ ExactSums device_sums(unsigned long long *d_sums)
{
    return ExactSums{d_sums, false};
}

__device__ __forceinline__ ExactSums block_sums(unsigned long long *s_sums)
{
    return ExactSums{s_sums, true};
}

/* Variable v's value x of a row that moved from cluster `from` (-1: none
 * yet) to `to`: taken from the one's sums and added to the other's (and,
 * for variable 0, the sizes: a block's shared ints or the global
 * two's-complement counts). */
template <typename Size>
__device__ __forceinline__ void move_value(const ExactSums &sums, Size *sizes, int n_vars, int v, int shift, double x,
                                           int from, int to)
{
    unsigned long long low, high;
    to_fixed(x, shift, low, high);
    add_fixed(low_word_of(sums, to, n_vars, v), high_at_of(sums), low, high);
    if (v == 0)
        atomicAdd(sizes + to, static_cast<Size>(1));
    if (from >= 0) {
        negate_fixed(low, high);
        add_fixed(low_word_of(sums, from, n_vars, v), high_at_of(sums), low, high);
        if (v == 0)
            atomicAdd(sizes + from, static_cast<Size>(-1));
    }
}

/* The moves of a tile (rows that changed cluster), gathered in shared
 * memory: tile positions, the clusters left (-1: none yet) and joined,
 * their count by the tile's parity, and the block's changed rows. */
struct MoveQueue {
    int *from;
    int *to;
    int *count;
    int *changed;
    unsigned short *row;
};

constexpr size_t kMoveQueueDoubles =
    (kMoveTileRows * (2 * sizeof(int) + sizeof(unsigned short)) + 4 * sizeof(int) + 7) / 8;

__device__ __forceinline__ MoveQueue move_queue(double *at)
{
    MoveQueue queue;
    int *base = reinterpret_cast<int *>(at);
    queue.from = base;
    queue.to = base + kMoveTileRows;
    queue.count = base + 2 * kMoveTileRows;
    queue.changed = queue.count + 2;
    queue.row = reinterpret_cast<unsigned short *>(queue.count + 4);
    return queue;
}

/* Shared memory of the assignment pass (moves) of the register and screen
 * kernels, in doubles: the centroids (PADDED apart, PADDED + kScreenPad with
 * the screen), the screen's arrays, the block's sums (when shared), the
 * sizes' changes (ints) and the register kernel's move queue. */
struct MoveLayout {
    size_t centroids, screen, sums, sizes, queue, total;
};

__host__ __device__ inline MoveLayout move_layout(int padded_vars, int n_vars, int k, bool screen, bool sums_shared)
{
    MoveLayout layout;
    size_t at = 0;
    layout.centroids = at;
    at += static_cast<size_t>(k) * (padded_vars + (screen ? kScreenPad : 0));
    layout.screen = at;
    if (screen)
        at += screen_doubles(padded_vars, k);
    layout.sums = at;
    if (sums_shared)
        at += block_sums_words(static_cast<size_t>(k) * n_vars);
    layout.sizes = at;
    at += (static_cast<size_t>(k) + 1) / 2;
    layout.queue = at;
    if (!screen)  /* the screen's warps keep their own queues (screen_doubles) */
        at += kMoveQueueDoubles;
    layout.total = at;
    return layout;
}

/* Clears the block's sums (where shared) and sizes' changes. */
__device__ __forceinline__ void clear_sums(unsigned long long *s_sums, int *s_sizes, const AssignArgs &args)
{
    if (args.moves_shared)
        for (size_t e = threadIdx.x; e < block_sums_words(static_cast<size_t>(args.k) * args.n_vars); e += blockDim.x)
            s_sums[e] = 0ull;
    for (int j = threadIdx.x; j < args.k; j += blockDim.x)
        s_sizes[j] = 0;
}

/* Queues the lane's row (tile position `position`) when it moved from
 * `from` to `to`; the whole warp calls, each lane with its own row. */
__device__ __forceinline__ void queue_move(const MoveQueue &queue, int parity, bool moved, int position, int from,
                                           int to)
{
    const int lane = static_cast<int>(threadIdx.x & 31u);
    const unsigned movers = __ballot_sync(0xffffffffu, moved);
    int at = 0;
    if (lane == 0 && movers != 0u)
        at = atomicAdd(&queue.count[parity], __popc(movers));
    at = __shfl_sync(0xffffffffu, at, 0) + __popc(movers & ((1u << lane) - 1u));
    if (moved) {
        queue.row[at] = static_cast<unsigned short>(position);
        queue.from[at] = from;
        queue.to[at] = to;
    }
}

/* The tile's moves into the sums: lane (r, v) of each warp takes variable
 * v < n_vars of its r-th queued row (32 / PADDED rows a step), converts it,
 * takes it from the cluster left and adds it to the cluster joined; sums in
 * shared (the block's changes) or global memory. Called by the
 * whole block, after a barrier that follows the queue's writes. */
template <int PADDED>
__device__ __forceinline__ void add_moves(const AssignArgs &args, const ExactSums &sums, int *s_sizes,
                                          const MoveQueue &queue, int moves, uint64_t tile_first)
{
    constexpr int kRowsAStep = 32 / PADDED;
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const int v = lane % PADDED;
    const int n_vars = args.n_vars;
    if (threadIdx.x == 0)
        *queue.changed += moves;
    if (v >= n_vars)
        return;
    const int shift = args.d_shift[v];
    const double *column = args.d_data + args.n_obs * static_cast<uint64_t>(v);
    for (int i = warp * kRowsAStep + lane / PADDED; i < moves; i += kKmeansWarps * kRowsAStep)
        move_value(sums, s_sizes, n_vars, v, shift, __ldg(column + tile_first + queue.row[i]), queue.from[i],
                   queue.to[i]);
}

/* The block's changes into the global sums and sizes. Called by the whole
 * block after a barrier. */
__device__ __forceinline__ void flush_sums(const AssignArgs &args, const unsigned long long *s_sums,
                                           const int *s_sizes)
{
    const size_t kd = static_cast<size_t>(args.k) * args.n_vars;
    if (args.moves_shared)
        for (size_t e = threadIdx.x; e < kd; e += blockDim.x) {
            const unsigned long long *at = s_sums + block_sum_at(static_cast<unsigned>(e));
            const unsigned long long low = at[0], high = at[kSumGroup];
            if ((low | high) != 0ull)
                add_fixed(args.d_sums + 2 * e, 1, low, high);
        }
    for (int j = threadIdx.x; j < args.k; j += blockDim.x)
        if (s_sizes[j] != 0)
            atomicAdd(args.d_sizes + j, static_cast<unsigned long long>(static_cast<long long>(s_sizes[j])));
}

/* Zeroes the block's accumulators. */
__device__ __forceinline__ void clear_accumulators(double *s_acc, double *d_slot, const AssignArgs &args)
{
    double *acc = args.copies > 0 ? s_acc : d_slot;
    const size_t count = 2 * static_cast<size_t>(args.k) * (args.copies > 0 ? args.copies : 1);
    for (size_t e = threadIdx.x; e < count; e += blockDim.x)
        acc[e] = 0.0;
}

/* The centroids as rows of PADDED doubles (STRIDE apart), zero past n_vars. */
template <int PADDED, int STRIDE = PADDED>
__device__ __forceinline__ void load_padded_centroids(double *s_centroids, const AssignArgs &args)
{
    const int n_vars = args.n_vars, k = args.k;
    for (size_t e = threadIdx.x; e < static_cast<size_t>(k) * STRIDE; e += blockDim.x) {
        const int j = static_cast<int>(e / STRIDE), v = static_cast<int>(e % STRIDE);
        s_centroids[e] = v < n_vars ? args.d_centroids[j + static_cast<size_t>(k) * v] : 0.0;
    }
}

/* Variables first, first + step, ... (N of them) of row `row`, zero past
 * n_vars or where the row is not one: one pointer walked down the columns
 * (written as base + n_obs v, each load took eight instructions of 64-bit
 * address arithmetic: bench/NOTES.md, k-means v8). */
template <int N>
__device__ __forceinline__ void load_columns(double (&x)[N], const AssignArgs &args, uint64_t row, bool valid,
                                             int first, int step)
{
    const double *at = args.d_data + row + args.n_obs * static_cast<uint64_t>(first);
    const uint64_t stride = args.n_obs * static_cast<uint64_t>(step);
    if (valid && first + step * (N - 1) < args.n_vars) {
#pragma unroll
        for (int i = 0; i < N; ++i) {
            x[i] = __ldg(at);
            at += stride;
        }
    } else {
#pragma unroll
        for (int i = 0; i < N; ++i) {
            x[i] = (valid && first + step * i < args.n_vars) ? __ldg(at) : 0.0;
            at += stride;
        }
    }
}

/* Adds the warps' totals and the accumulator copies in order into the block's
 * slot of the partials. */
__device__ __forceinline__ void write_partials(double *s_acc, double *s_warp_totals, double *d_slot, double inertia,
                                               unsigned changed, const AssignArgs &args, double screened = 0.0)
{
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    for (int offset = 16; offset > 0; offset >>= 1)
        changed += __shfl_down_sync(0xffffffffu, changed, offset);
    if (lane == 0) {
        s_warp_totals[warp] = inertia;  /* the same in every lane */
        s_warp_totals[kKmeansWarps + warp] = static_cast<double>(changed);
    }
    __syncthreads();
    const size_t acc_size = 2 * static_cast<size_t>(args.k);
    if (args.copies > 0)
        for (size_t e = threadIdx.x; e < acc_size; e += blockDim.x) {
            double sum = s_acc[e];
            for (int c = 1; c < args.copies; ++c)
                sum += s_acc[static_cast<size_t>(c) * acc_size + e];
            d_slot[e] = sum;
        }
    if (threadIdx.x == 0) {
        double block_inertia = 0.0, block_changed = 0.0;
        for (int w = 0; w < kKmeansWarps; ++w) {
            block_inertia += s_warp_totals[w];
            block_changed += s_warp_totals[kKmeansWarps + w];
        }
        d_slot[acc_size] = block_inertia;
        d_slot[acc_size + 1] = block_changed;
        d_slot[acc_size + 2] = screened;  /* thread 0's count: the block's */
    }
}

/* Row x's squared distance to a centre (PADDED doubles, zero past n_vars) by
 * the difference form, the variables in order: the arithmetic of
 * move_registers_kernel, so that all the kernels give the same bits. */
template <int PADDED>
__device__ __forceinline__ double exact_distance(const double (&x)[PADDED], const double *centre_doubles)
{
    const double2 *centre = reinterpret_cast<const double2 *>(centre_doubles);
    double distance = 0.0;
#pragma unroll
    for (int v2 = 0; v2 < PADDED / 2; ++v2) {
        const double2 c = centre[v2];
        const double a = __dsub_rn(x[2 * v2], c.x);
        distance = __fma_rn(a, a, distance);
        const double b = __dsub_rn(x[2 * v2 + 1], c.y);
        distance = __fma_rn(b, b, distance);
    }
    return distance;
}

/* The summing pass, n_vars <= PADDED: each row's squared distance to its
 * labelled centroid (the difference form), and the clusters' within sums of
 * squares, sizes and the inertia by reduce-by-key into the block's partials
 * (the centroids come from the exact sums: no coordinate sums here); each
 * thread keeps ROWS rows' coordinates in registers, tile t holds rows
 * t * 256 ROWS + s * 256 + thread. Where the last assignment wrote the
 * distances (args.d_distances, the same arithmetic: exact_distance), they
 * are read instead of the rows: 12 bytes a row instead of 8 n_vars + 4, the
 * same order of addition, the same bits. */
template <int PADDED, int ROWS>
__global__ void __launch_bounds__(kKmeansThreads, PADDED <= 16 ? 2 : 1)
    sum_registers_kernel(const __grid_constant__ AssignArgs args)
{
    extern __shared__ double2 s_shared2[];  /* 16-byte aligned */
    double *s_shared = reinterpret_cast<double *>(s_shared2);
    const SharedLayout layout = shared_layout(PADDED, args.n_vars, args.k, 1, args.copies);
    double *s_centroids = s_shared + layout.centroids;
    double *s_acc = s_shared + layout.acc;
    double *s_warp_totals = s_shared + layout.warp_totals;
    double *d_slot = args.d_partials + static_cast<size_t>(blockIdx.x) * args.partial_stride;

    load_padded_centroids<PADDED>(s_centroids, args);
    clear_accumulators(s_acc, d_slot, args);
    __syncthreads();

    double inertia = 0.0;  /* the lane's rows' */
    const auto row_of = [&](uint64_t tile, int s) {
        return tile * (static_cast<uint64_t>(kKmeansThreads) * ROWS) + static_cast<uint64_t>(s) * kKmeansThreads +
               threadIdx.x;
    };
    if (args.d_distances != nullptr) {
        /* The next tile's labels and distances loaded while this one's are
         * added (the loads' latency, not the bytes, bounded this loop). */
        int label[ROWS];
        double distance[ROWS];
        const auto load = [&](uint64_t tile, int (&labels)[ROWS], double (&distances)[ROWS]) {
#pragma unroll
            for (int s = 0; s < ROWS; ++s) {
                const uint64_t row = row_of(tile, s);
                const bool valid = tile < args.tile_count && row < args.n_obs;
                labels[s] = valid ? args.d_labels[row] : 0;
                distances[s] = valid ? args.d_distances[row] : 0.0;
            }
        };
        load(blockIdx.x, label, distance);
        for (uint64_t tile = blockIdx.x; tile < args.tile_count; tile += gridDim.x) {
            int next_label[ROWS];
            double next_distance[ROWS];
            load(tile + gridDim.x, next_label, next_distance);
#pragma unroll
            for (int s = 0; s < ROWS; ++s) {
                const bool valid = row_of(tile, s) < args.n_obs;
                if (valid)
                    inertia += distance[s];
                accumulate_groups(s_acc, d_slot, args, distance[s], label[s], valid);
                label[s] = next_label[s];
                distance[s] = next_distance[s];
            }
        }
    } else {
        for (uint64_t tile = blockIdx.x; tile < args.tile_count; tile += gridDim.x) {
#pragma unroll
            for (int s = 0; s < ROWS; ++s) {
                const uint64_t row = row_of(tile, s);
                const bool valid = row < args.n_obs;
                const int label = valid ? args.d_labels[row] : 0;
                double x[PADDED];
                load_columns<PADDED>(x, args, row, valid, 0, 1);
                const double distance =
                    valid ? exact_distance<PADDED>(x, s_centroids + static_cast<size_t>(label) * PADDED) : 0.0;
                if (valid)
                    inertia += distance;
                /* The warp adds the rows of slot s by label. */
                accumulate_groups(s_acc, d_slot, args, distance, label, valid);
            }
        }
    }
    /* The lanes' inertias added in a fixed butterfly: the same in every lane. */
    for (int offset = 16; offset > 0; offset >>= 1)
        inertia += __shfl_xor_sync(0xffffffffu, inertia, offset);
    __syncthreads();
    write_partials(s_acc, s_warp_totals, d_slot, inertia, 0u, args);
}

/* The assignment pass by the difference form alone, n_vars <= PADDED: each
 * row's nearest centroid (the lower index on a tie), the rows that changed
 * cluster into the exact sums. Each thread keeps ROWS rows' coordinates in
 * registers; tile t holds rows t * 256 ROWS + s * 256 + thread. */
template <int PADDED, int ROWS>
__global__ void __launch_bounds__(kKmeansThreads, PADDED <= 16 ? 2 : 1)
    move_registers_kernel(const __grid_constant__ AssignArgs args)
{
    wait_for_previous_grid();
    allow_next_grid();
    if (args.d_hold != nullptr && *args.d_hold != 0)
        return;
    extern __shared__ double2 s_shared2[];  /* 16-byte aligned */
    double *s_shared = reinterpret_cast<double *>(s_shared2);
    const MoveLayout layout = move_layout(PADDED, args.n_vars, args.k, false, args.moves_shared != 0);
    double *s_centroids = s_shared + layout.centroids;
    unsigned long long *s_sums = reinterpret_cast<unsigned long long *>(s_shared + layout.sums);
    int *s_sizes = reinterpret_cast<int *>(s_shared + layout.sizes);
    const MoveQueue queue = move_queue(s_shared + layout.queue);
    const int n_vars = args.n_vars, k = args.k;

    load_padded_centroids<PADDED>(s_centroids, args);
    clear_sums(s_sums, s_sizes, args);
    if (threadIdx.x < 4)
        queue.count[threadIdx.x] = 0;  /* both parities, changed and a spare */
    __syncthreads();

    int parity = 0;
    for (uint64_t tile = blockIdx.x; tile < args.tile_count; tile += gridDim.x, parity ^= 1) {
        const uint64_t tile_first = tile * (static_cast<uint64_t>(kKmeansThreads) * ROWS);
        double x[ROWS][PADDED];
        uint64_t row[ROWS];
        bool valid[ROWS];
        int previous[ROWS];
#pragma unroll
        for (int s = 0; s < ROWS; ++s) {
            row[s] = tile_first + static_cast<uint64_t>(s) * kKmeansThreads + threadIdx.x;
            valid[s] = row[s] < args.n_obs;
            previous[s] = valid[s] ? args.d_labels[row[s]] : -1;
#pragma unroll
            for (int v = 0; v < PADDED; ++v)
                x[s][v] = (valid[s] && v < n_vars)
                              ? __ldg(args.d_data + row[s] + args.n_obs * static_cast<uint64_t>(v))
                              : 0.0;
        }
        double best[ROWS];
        int label[ROWS];
#pragma unroll
        for (int s = 0; s < ROWS; ++s) {
            best[s] = INFINITY;
            label[s] = 0;
        }
        for (int j = 0; j < k; ++j) {
            const double2 *centre = reinterpret_cast<const double2 *>(s_centroids + static_cast<size_t>(j) * PADDED);
            double distance[ROWS];
#pragma unroll
            for (int s = 0; s < ROWS; ++s)
                distance[s] = 0.0;
#pragma unroll
            for (int v2 = 0; v2 < PADDED / 2; ++v2) {
                const double2 c = centre[v2];
#pragma unroll
                for (int s = 0; s < ROWS; ++s) {
                    const double a = __dsub_rn(x[s][2 * v2], c.x);
                    distance[s] = __fma_rn(a, a, distance[s]);
                    const double b = __dsub_rn(x[s][2 * v2 + 1], c.y);
                    distance[s] = __fma_rn(b, b, distance[s]);
                }
            }
#pragma unroll
            for (int s = 0; s < ROWS; ++s)
                if (distance[s] < best[s]) {
                    best[s] = distance[s];
                    label[s] = j;
                }
        }
#pragma unroll
        for (int s = 0; s < ROWS; ++s) {
            const bool moved = valid[s] && previous[s] != label[s];
            if (moved)
                args.d_labels[row[s]] = label[s];
            if (args.d_distances != nullptr && valid[s])  /* the nearest's: exact_distance's bits */
                args.d_distances[row[s]] = best[s];
            queue_move(queue, parity, moved, s * kKmeansThreads + static_cast<int>(threadIdx.x), previous[s],
                       label[s]);
        }
        __syncthreads();
        if (threadIdx.x == 0)
            queue.count[parity ^ 1] = 0;  /* the next tile's; this one's was read by then */
        const int moves = queue.count[parity];
        if (args.moves_shared)
            add_moves<PADDED>(args, block_sums(s_sums), s_sizes, queue, moves, tile_first);
        else
            add_moves<PADDED>(args, device_sums(args.d_sums), s_sizes, queue, moves, tile_first);
        __syncthreads();
    }
    flush_sums(args, s_sums, s_sizes);
    if (threadIdx.x == 0 && *queue.changed != 0)
        atomicAdd(args.d_pass + kPassChanged, static_cast<unsigned long long>(*queue.changed));
}

/* The screen compares s_j by the top 32 bits of the double (sign, exponent
 * and 20 bits of mantissa), made an integer of the same order: integer
 * compares and selects where the doubles' took two instructions each. A
 * key stands for a value within 2^-20 of it (relative). */
__device__ __forceinline__ int order_key(double value)
{
    const int high = __double2hiint(value);
    return high ^ ((high >> 31) & 0x7fffffff);
}

/* A lower bound (>= 0) as d_bounds keeps it: times the run's power of two
 * and rounded down to a float, so that the floats' range (about 1e-38 to
 * 3.4e38) sits around the data's distances whatever their scale. Rounded
 * down throughout: a product past DBL_MAX stays finite, and one below the
 * floats' range goes to a smaller bound or 0, never up. */
__device__ __forceinline__ float stored_bound(double bound, const AssignArgs &args)
{
    return __double2float_rd(__dmul_rd(bound, args.bound_scale));
}

/* A bound as d_bounds keeps it: anchored to the moves' running total
 * (d_drift[k] when the bound was found), so that a row whose bound still
 * settles it need not write it again (see assign_screen_kernel). */
__device__ __forceinline__ float stored_anchor(double bound, double total, const AssignArgs &args)
{
    return stored_bound(__dadd_rd(bound, total), args);
}

/* The largest value the key can stand for, less its truncation: the value
 * with the key's top word and a zero bottom word. */
__device__ __forceinline__ double key_value(int key)
{
    return __hiloint2double(key ^ ((key >> 31) & 0x7fffffff), 0);
}

/* Keeps the largest key seen (top, at index top_j) and the largest of the
 * others (second); a tie leaves second == top. */
__device__ __forceinline__ void track_largest(double value, int j, int &top, int &second, int &top_j)
{
    const int key = order_key(value);
    second = max(second, min(top, key));
    top_j = key > top ? j : top_j;
    top = max(top, key);
}

/* The screen's constants (see assign_screen_kernel). */
constexpr double kUnitRoundoff = 0x1p-53;
constexpr int kChunkRows = 16;               /* rows of one screening mma */
constexpr unsigned kUndecided = 0x8000u;     /* s_results: left to the difference form */
/* 1 - 2^-40: the bounds' margin over the difference form's rounding. */
constexpr double kPassFactor = 1.0 - 0x1p-40;

/* The screen of a unit of the warp's queue: rows w_rows[0 .. count - 1]
 * (count <= 16): each row's centroid, or kUndecided, in w_results, and,
 * where decided, its bound in d_bounds. Called by the whole warp. */
template <int PADDED>
__device__ __forceinline__ void screen_queued(const AssignArgs &args, const uint64_t *w_rows, int count,
                                              unsigned short *w_results, const double *s_fragments,
                                              const double *s_offsets, const double *s_mean, double reach_c,
                                              int tiles, double total)
{
    constexpr int kK = PADDED < 16 ? PADDED : 16;  /* the product's depth: m16n8k4, k8 or k16 */
    constexpr int kChunks = PADDED / kK;
    constexpr int kSlots = kK / 4;
    const int lane = static_cast<int>(threadIdx.x & 31u), g = lane >> 2, q = lane & 3;
    const int n_vars = args.n_vars;
    /* As mma operands (one m-tile: two took more registers than three
     * blocks a multiprocessor allow): rows g and g + 8, A's halves h, each
     * with its tracker. */
    double a[kChunks][2 * kSlots];
    double spread[2];  /* the lane's part of |x'|^2 of its rows */
    int position[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int i = 8 * h + g;
        position[h] = i < count ? i : -1;
        const uint64_t r = position[h] >= 0 ? w_rows[i] : 0;
        double raw[PADDED / 4];  /* variables q + 4 i */
        load_columns<PADDED / 4>(raw, args, r, position[h] >= 0, q, 4);
        spread[h] = 0.0;
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
            for (int slot = 0; slot < kSlots; ++slot) {
                const int v = c * kK + q + 4 * slot;
                const double centred =
                    (position[h] >= 0 && v < n_vars) ? __dsub_rn(raw[c * kSlots + slot], s_mean[v]) : 0.0;
                a[c][h + 2 * slot] = centred;
                spread[h] = __fma_rn(centred, centred, spread[h]);
            }
    }
    int top[2] = {INT_MIN, INT_MIN}, second[2] = {INT_MIN, INT_MIN}, top_j[2] = {0, 0};
    for (int tile_j = 0; tile_j < tiles; ++tile_j) {
        double b[kChunks][kSlots];
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
#pragma unroll
            for (int slot = 0; slot < kSlots; ++slot)
                b[c][slot] = s_fragments[((tile_j * kChunks + c) * kSlots + slot) * 32 + lane];
        const int j0 = tile_j * 8 + 2 * q;
        const double2 offset = *reinterpret_cast<const double2 *>(s_offsets + j0);
        double d[4] = {offset.x, offset.y, offset.x, offset.y};
#pragma unroll
        for (int c = 0; c < kChunks; ++c)
            mma_16x8<kK>(d, a[c], b[c]);
        track_largest(d[0], j0, top[0], second[0], top_j[0]);
        track_largest(d[1], j0 + 1, top[0], second[0], top_j[0]);
        track_largest(d[2], j0, top[1], second[1], top_j[1]);
        track_largest(d[3], j0 + 1, top[1], second[1], top_j[1]);
    }
    /* The four lanes of a row merge (the lower index on a tie, which the
     * margin then sends to the difference form). */
#pragma unroll
    for (int tau = 0; tau < 2; ++tau)
#pragma unroll
        for (int offset = 1; offset <= 2; offset <<= 1) {
            const int other_top = __shfl_xor_sync(0xffffffffu, top[tau], offset);
            const int other_second = __shfl_xor_sync(0xffffffffu, second[tau], offset);
            const int other_j = __shfl_xor_sync(0xffffffffu, top_j[tau], offset);
            spread[tau] += __shfl_xor_sync(0xffffffffu, spread[tau], offset);
            second[tau] = max(max(second[tau], other_second), min(top[tau], other_top));
            if (other_top > top[tau] || (other_top == top[tau] && other_j < top_j[tau])) {
                top[tau] = other_top;
                top_j[tau] = other_j;
            }
        }
    /* Lane 4g + tau decides tracker tau's row (the bound above). The
     * lower bound: for j other than the top, s_j <= key_value(second) +
     * 2^-19 R^2 (the key's truncation), the exact s_j within (2 n_vars + 8)
     * u R^2 of the computed one, and the exact |x - m|^2 >= |x'|^2 -
     * (n_vars + 3) u R^2 (R = |x'| + max |c'|); so the exact squared
     * distance to every other centroid is at least |x'|^2 -
     * 2 key_value(second) - (2^-18 + (5 n_vars + 19) u) R^2, less the few
     * roundings of its evaluation (2^-40 R^2 covers them). */
    const double bound_scale = (4.0 * n_vars + 16.0) * kUnitRoundoff + 0x1p-19;
    const double lower_scale = 0x1p-18 + (6.0 * n_vars + 24.0) * kUnitRoundoff + 0x1p-40;
    int mine = -1, my_top = 0, my_second = 0, my_j = 0;
    double my_spread = 0.0;
#pragma unroll
    for (int tau = 0; tau < 2; ++tau)
        if (q == tau) {
            mine = position[tau];
            my_top = top[tau];
            my_second = second[tau];
            my_j = top_j[tau];
            my_spread = spread[tau];
        }
    if (mine >= 0) {
        const double reach = sqrt(my_spread) + reach_c;
        const double reach2 = reach * reach;
        const double second_value = key_value(my_second);
        const bool decided = key_value(my_top) - second_value > bound_scale * reach2;
        w_results[mine] = decided ? static_cast<unsigned short>(my_j) : kUndecided;
        if (decided && args.d_bounds != nullptr) {
            const double lower2 = my_spread - 2.0 * second_value - lower_scale * reach2;
            args.d_bounds[w_rows[mine]] =
                stored_anchor(lower2 > 0.0 ? __dsqrt_rd(fmin(lower2, DBL_MAX)) : 0.0, total, args);
        }
    }
}

/* The warp's queue (shared memory): rows the bounds did not settle, their
 * last labels, the screen's results for a unit, and the unit's moves. */
constexpr int kWarpQueue = 48;  /* 15 left from a unit and 32 new rows fit */
struct WarpQueue {
    uint64_t *rows;          /* kWarpQueue */
    int *previous;           /* kWarpQueue */
    uint64_t *move_rows;     /* kChunkRows */
    int *move_from;          /* kChunkRows */
    int *move_to;            /* kChunkRows */
    unsigned short *results; /* kChunkRows */
};
constexpr size_t kWarpQueueDoubles =
    kWarpQueue + (kWarpQueue * sizeof(int) + 7) / 8 + kChunkRows + kChunkRows + (kChunkRows * sizeof(unsigned short) + 7) / 8;

static_assert(kKmeansWarps * kWarpQueueDoubles <= kScreenQueueDoubles, "the warps' queues fit");
static_assert(kKmeansThreads <= kScreenQueueDoubles, "the mean's parts fit in the queues' room");

__device__ __forceinline__ WarpQueue warp_queue(double *at)
{
    WarpQueue queue;
    queue.rows = reinterpret_cast<uint64_t *>(at);
    queue.move_rows = queue.rows + kWarpQueue;
    queue.previous = reinterpret_cast<int *>(queue.move_rows + kChunkRows);
    queue.move_from = queue.previous + kWarpQueue;
    queue.move_to = queue.move_from + kChunkRows;
    queue.results = reinterpret_cast<unsigned short *>(queue.move_to + kChunkRows);
    return queue;
}

/* The unit's moves into the sums: lane (r, v) takes variable v < n_vars of
 * its r-th move (32 / PADDED moves a step), converts it, takes it from the
 * cluster left and adds it to the cluster joined; sums in shared or global
 * memory. Called by the whole warp. */
template <int PADDED>
__device__ __forceinline__ void add_warp_moves(const AssignArgs &args, const ExactSums &sums, int *s_sizes,
                                               const WarpQueue &queue, int moves)
{
    constexpr int kMovesAStep = 32 / PADDED;
    const int lane = static_cast<int>(threadIdx.x & 31u);
    const int v = lane % PADDED, n_vars = args.n_vars;
    if (v >= n_vars)
        return;
    const int shift = args.d_shift[v];
    const double *column = args.d_data + args.n_obs * static_cast<uint64_t>(v);
    for (int i = lane / PADDED; i < moves; i += kMovesAStep)
        move_value(sums, s_sizes, n_vars, v, shift, __ldg(column + queue.move_rows[i]), queue.move_from[i],
                   queue.move_to[i]);
}

/* The chunks of 32 rows each warp of the screen kernel takes in a fixed
 * order (every (grid x warps)-th from its own) before it claims the rest
 * one at a time: fixed_share sixteenths of its share, at least one. */
__device__ __forceinline__ uint64_t fixed_rounds_of(const AssignArgs &args)
{
    const uint64_t chunks = (args.n_obs + 31) / 32;
    const uint64_t warps = static_cast<uint64_t>(gridDim.x) * kKmeansWarps;
    return args.fixed_share >= 16 ? chunks
                                  : max(uint64_t{1}, chunks / warps * static_cast<uint64_t>(args.fixed_share) / 16);
}

/* The assignment pass with a screen on the FP64 tensor cores, for n_vars <=
 * PADDED: the labels of move_registers_kernel, bit for bit.
 *
 * The screen: with m the centroids' mean, x' = x - m and c' = c_j - m (both
 * rounded), the tensor cores give a row's s_j = x' . c' - |c'|^2 / 2
 * (mma.sync m16n8k16, k8 or k4 by the padded width: 16 rows times 8
 * centroids, the offsets as the accumulator's start), where the difference
 * form takes two FP64 instructions a term. The squared distance is
 * |x'|^2 - 2 s_j, so the nearest centroid is the largest s_j. Each lane keeps
 * its rows' largest s_j and the largest of the others, compared as 32-bit
 * keys (order_key: within 2^-20 of the value), the four lanes of a row merge
 * theirs, and one decides:
 *   rounding bound: every computed s_j is within (4 n_vars + 16) u
 *   (|x'| + max_j |c'_j|)^2 / 2 of the value that, with |x'|^2, gives the
 *   difference form's rounded distance (u = 2^-53; the products' sums
 *   (n_vars + 1 terms), |c'|^2 (n_vars terms), the rounding of x - m and
 *   c - m, and the difference form's own n_vars + 2 roundings: (3 n_vars + 5) u
 *   in all, with a margin for the bound's own rounding), and a key's value
 *   within 2^-20 |s_j| <= 2^-20 (|x'| + max_j |c'_j|)^2 of it;
 *   so where the largest key's value exceeds the second's by more than both
 *   bounds twice over, the difference form has a unique nearest centroid,
 *   that one; otherwise (near ties, exact ties included) the row takes
 *   every centroid by the difference form with the lower index on a tie,
 *   as move_registers_kernel does.
 *
 * The bounds (Hamerly's): each row keeps a lower bound on its true distance to
 * every centroid but its own (d_bounds: a float, rounded down, in units of a
 * power of two that follows the run's starting centroids: stored_bound and
 * bound_scale_of). From the screen it is sqrt(|x'|^2 - 2 s_second - e) with e
 * covering the rounding, the keys' truncation and |x'|^2's rounding
 * (screen_queued); from the difference form, the second-nearest distance less
 * its rounding. When the centroids move, every bound drops by the largest move
 * of a centroid other than the row's own (d_drift, rounded up; the triangle
 * inequality). So that a row the bound settles writes nothing, a bound is
 * stored anchored: plus the running total of each pass's largest move
 * (d_drift[k], rounded up, when it was found), and read back less the total
 * now, which is what it has dropped by at most; a row of the centroid that
 * moved most gets the others' largest move back for this pass, and writes
 * its bound anew where it settles (bench/NOTES.md, k-means v15). A row whose
 * distance to its last centroid, by the difference form, is below
 * (1 - 2^-40) times its bound squared (the difference form's rounding is
 * (n_vars + 2) u relative, far inside 2^-40 at n_vars <= 32) keeps that
 * centroid: the difference form has no nearer one and no tie.
 *
 * Each warp works alone (no block barriers in the loop), on chunks of 32
 * rows (chunk c: rows 32 c ...; each warp of the grid takes every
 * (grid x 8)-th chunk from its own for three quarters of its share, then
 * claims the chunks left one at a time, so that warps whose rows needed
 * more screening do not hold up the pass: bench/NOTES.md, k-means v16):
 *   A: each lane takes its row (all its loads at once: label, bound,
 *      coordinates), its distance to its last centroid and the bound's
 *      test; the rows the bound does not settle join the warp's queue;
 *   B: whenever 16 rows are queued (and for the rest at the end), the warp
 *      screens them (one mma a tile of 8 centroids);
 *   C: each of those rows takes its centroid (undecided rows: every
 *      centroid by the difference form), and the rows that moved go into
 *      the exact sums (add_warp_moves).
 * Results depend on no order: each row's label and bound are its own, and
 * the sums are exact. Measured on the H100 machine: bench/NOTES.md, k-means
 * v6 to v10. */
template <int PADDED, int MINB, bool LAST>
__global__ void __launch_bounds__(kKmeansThreads, MINB)
    assign_screen_kernel(const __grid_constant__ AssignArgs args)
{
    wait_for_previous_grid();
    allow_next_grid();
    if (args.d_hold != nullptr && *args.d_hold != 0)
        return;
    constexpr int kK = PADDED < 16 ? PADDED : 16;
    constexpr int kChunks = PADDED / kK;
    constexpr int kSlots = kK / 4;
    extern __shared__ double2 s_shared2[];
    double *s_shared = reinterpret_cast<double *>(s_shared2);
    const MoveLayout layout = move_layout(PADDED, args.n_vars, args.k, true, args.moves_shared != 0);
    double *s_centroids = s_shared + layout.centroids;
    unsigned long long *s_sums = reinterpret_cast<unsigned long long *>(s_shared + layout.sums);
    int *s_sizes = reinterpret_cast<int *>(s_shared + layout.sizes);
    const int k = args.k;
    const int tiles = (k + 7) / 8;
    double *s_mean = s_shared + layout.screen;               /* PADDED */
    double *s_fragments = s_mean + PADDED;                   /* ((tile kChunks + chunk) kSlots + slot) 32 + lane */
    double *s_offsets = s_fragments + tiles * 8 * PADDED;    /* -|c'_j|^2 / 2; -inf past k */
    double *s_reach = s_offsets + tiles * 8;                 /* max_j |c'_j| */
    double *s_drift = s_reach + 1;  /* the largest move, the others' largest, its centroid, the moves' total,
                                       the first chunk claimed */
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const WarpQueue queue = warp_queue(s_reach + 6 + static_cast<size_t>(warp) * kWarpQueueDoubles);

    constexpr int kStride = PADDED + kScreenPad;  /* centroid j at j kStride */
    load_padded_centroids<PADDED, kStride>(s_centroids, args);
    clear_sums(s_sums, s_sizes, args);
    if (warp == kKmeansWarps - 1) {
        /* The moves' largest, its centroid (the lowest index of a tie) and
         * the largest of the others (the largest again on a tie): each lane
         * every 32nd centroid, then merged across the warp, whose loads are
         * all in flight at once (one thread's loop waited for each). */
        double first = 0.0, other = 0.0;
        int first_at = -1;
        if (args.bounds_valid)
            for (int j = lane; j < k; j += 32) {
                const double move = args.d_drift[j];
                if (move > first) {
                    other = first;
                    first = move;
                    first_at = j;
                } else if (move > other) {
                    other = move;
                }
            }
        for (int offset = 16; offset > 0; offset >>= 1) {
            const double their_first = __shfl_xor_sync(0xffffffffu, first, offset);
            const double their_other = __shfl_xor_sync(0xffffffffu, other, offset);
            const int their_at = __shfl_xor_sync(0xffffffffu, first_at, offset);
            if (first > their_first || (first == their_first && first_at < their_at)) {
                other = fmax(other, their_first);
            } else {
                other = fmax(their_other, first);
                first = their_first;
                first_at = their_at;
            }
        }
        if (lane == 0) {
            s_drift[0] = first;
            s_drift[1] = other;
            s_drift[2] = first_at;
            s_drift[3] = args.d_bounds != nullptr ? args.d_drift[k] : 0.0;
            /* The first chunk claimed: past every warp's fixed rounds. */
            *reinterpret_cast<uint64_t *>(s_drift + 4) =
                fixed_rounds_of(args) * static_cast<uint64_t>(gridDim.x) * kKmeansWarps;
        }
    }
    __syncthreads();
    /* The centroids' mean: thread (part, v) adds every kParts-th centroid's
     * variable v from centroid `part` on, then the parts are added in order
     * (in the queues' room, unused until the loop). */
    constexpr int kParts = kKmeansThreads / PADDED;
    double *s_parts = s_reach + 6;
    {
        const int v = static_cast<int>(threadIdx.x) % PADDED, part = static_cast<int>(threadIdx.x) / PADDED;
        double sum = 0.0;
        for (int j = part; j < k; j += kParts)
            sum += s_centroids[static_cast<size_t>(j) * kStride + v];
        s_parts[threadIdx.x] = sum;
    }
    __syncthreads();
    if (threadIdx.x < PADDED) {
        double sum = 0.0;
        for (int part = 0; part < kParts; ++part)
            sum += s_parts[part * PADDED + threadIdx.x];
        s_mean[threadIdx.x] = sum / k;
    }
    __syncthreads();
    for (int e = threadIdx.x; e < tiles * 8 * PADDED; e += blockDim.x) {
        const int lane_e = e & 31, slot = (e >> 5) % kSlots, chunk = (e >> 5) / kSlots % kChunks;
        const int tile = (e >> 5) / (kSlots * kChunks);
        const int j = tile * 8 + (lane_e >> 2), v = chunk * kK + (lane_e & 3) + 4 * slot;
        s_fragments[e] = j < k ? __dsub_rn(s_centroids[static_cast<size_t>(j) * kStride + v], s_mean[v]) : 0.0;
    }
    for (int j = threadIdx.x; j < tiles * 8; j += blockDim.x) {
        double norm = 0.0;
        for (int v = 0; v < PADDED && j < k; ++v) {
            const double c = __dsub_rn(s_centroids[static_cast<size_t>(j) * kStride + v], s_mean[v]);
            norm = __fma_rn(c, c, norm);
        }
        s_offsets[j] = j < k ? -0.5 * norm : -INFINITY;
    }
    __syncthreads();
    if (warp == 0) {
        /* The centroids' reach: the largest |c'_j| (a maximum: any order). */
        double largest = 0.0;
        for (int j = lane; j < k; j += 32)
            largest = fmax(largest, -2.0 * s_offsets[j]);
        for (int offset = 16; offset > 0; offset >>= 1)
            largest = fmax(largest, __shfl_xor_sync(0xffffffffu, largest, offset));
        if (lane == 0)
            s_reach[0] = sqrt(largest);
    }
    __syncthreads();

    const double reach_c = s_reach[0];
    /* The moves' total and, for the largest mover's rows (whose bounds drop
     * by the others' largest move), the total less what they get back; the
     * screen reads the total from shared memory (its registers are full). */
    const int drift_at = static_cast<int>(s_drift[2]);
    const double total = s_drift[3], total_mover = __dsub_ru(total, __dsub_rd(s_drift[0], s_drift[1]));
    volatile double *s_total = s_drift + 3;
    const bool bounds = args.bounds_valid != 0;
    const unsigned lanes_below = (1u << lane) - 1u;
    unsigned long long changed = 0, screened = 0;  /* the warp's (the same in every lane) */
    int queued = 0;                                /* the same in every lane */

    /* B and C for the first `count` queued rows, then the rest of the
     * queue moved to its front. */
    auto screen_unit = [&](int count) {
        screen_queued<PADDED>(args, queue.rows, count, queue.results, s_fragments, s_offsets, s_mean, reach_c,
                              tiles, *s_total);
        __syncwarp();
        bool moved = false;
        int label = -1, previous = -1;
        uint64_t row = 0;
        if (lane < count) {
            row = queue.rows[lane];
            previous = queue.previous[lane];
            const unsigned result = queue.results[lane];
            if (result & kUndecided) {
                double x[PADDED];
                load_columns<PADDED>(x, args, row, true, 0, 1);
                double best = INFINITY, runner_up = INFINITY;
                for (int j = 0; j < k; ++j) {
                    const double distance =
                        exact_distance<PADDED>(x, s_centroids + static_cast<size_t>(j) * kStride);
                    if (distance < best) {
                        runner_up = best;
                        best = distance;
                        label = j;
                    } else if (distance < runner_up) {
                        runner_up = distance;
                    }
                }
                /* A runner-up past DBL_MAX (or none) bounds the others at DBL_MAX. */
                if (args.d_bounds != nullptr)
                    args.d_bounds[row] =
                        stored_anchor(__dsqrt_rd(fmin(runner_up, DBL_MAX) * kPassFactor), *s_total, args);
                if (LAST)
                    args.d_distances[row] = best;
            } else {
                label = static_cast<int>(result);
                /* The last assignment: step A wrote the distance to the last
                 * centroid, where there was one; a row that moved takes its
                 * new one's. */
                if (LAST && !(bounds && label == previous)) {
                    double x[PADDED];
                    load_columns<PADDED>(x, args, row, true, 0, 1);
                    args.d_distances[row] =
                        exact_distance<PADDED>(x, s_centroids + static_cast<size_t>(label) * kStride);
                }
            }
            moved = label != previous;
            if (moved)
                args.d_labels[row] = label;
        }
        const unsigned movers = __ballot_sync(0xffffffffu, moved);
        if (moved) {
            const int at = __popc(movers & lanes_below);
            queue.move_rows[at] = row;
            queue.move_from[at] = previous;
            queue.move_to[at] = label;
        }
        /* The rest of the queue, read before the front is written. */
        const int rest = queued - count;
        uint64_t rest_row = 0;
        int rest_previous = 0;
        if (lane < rest) {
            rest_row = queue.rows[count + lane];
            rest_previous = queue.previous[count + lane];
        }
        __syncwarp();
        const int moves = __popc(movers);
        if (args.moves_shared)
            add_warp_moves<PADDED>(args, block_sums(s_sums), s_sizes, queue, moves);
        else
            add_warp_moves<PADDED>(args, device_sums(args.d_sums), s_sizes, queue, moves);
        if (lane < rest) {
            queue.rows[lane] = rest_row;
            queue.previous[lane] = rest_previous;
        }
        changed += static_cast<unsigned long long>(moves);
        screened += static_cast<unsigned long long>(count);
        queued = rest;
        __syncwarp();
    };

    /* The chunks: each warp takes every warps-th chunk from its own for
     * its fixed rounds, then claims the rest one at a time (the claim for
     * the next chunk issued before the current one is worked), so that the
     * warps whose rows needed more screening do not hold up the pass. The
     * claims count from 0 each pass (centroids_kernel clears them), fewer
     * than 2^32 (n_obs is far below 2^37 on any GPU's memory). */
    const uint64_t chunks = (args.n_obs + 31) / 32;
    const uint64_t warps = static_cast<uint64_t>(gridDim.x) * kKmeansWarps;
    unsigned *claims = reinterpret_cast<unsigned *>(args.d_pass + kPassClaims);
    unsigned fixed_left = static_cast<unsigned>(min(fixed_rounds_of(args), uint64_t{UINT_MAX}));
    /* The first chunk claimed, read from shared memory when needed (the
     * loop's registers are full, as for s_total). */
    const volatile uint64_t *s_claimed_from = reinterpret_cast<const volatile uint64_t *>(s_drift + 4);
    unsigned claim = 0;
    for (uint64_t chunk = static_cast<uint64_t>(blockIdx.x) * kKmeansWarps + warp; chunk < chunks;) {
        const bool claim_next = fixed_left <= 1u;
        if (claim_next && lane == 0)
            claim = atomicAdd(claims, 1u);
        /* A: the lane's row: its loads at once, the bound's test, the queue. */
        const uint64_t row = chunk * 32 + static_cast<uint64_t>(lane);
        const bool valid = row < args.n_obs;
        const int previous = valid ? args.d_labels[row] : -1;
        const float bound_in = bounds && valid ? args.d_bounds[row] : 0.0f;
        /* Loaded without bounds too (the first pass screens every row): the
         * screen then finds the rows in L1, fetched with the chunk's other
         * loads. */
        double x[PADDED];
        load_columns<PADDED>(x, args, row, valid, 0, 1);
        bool queue_row = valid;
        if (bounds && valid && previous >= 0 && previous < k) {
            const double distance = exact_distance<PADDED>(x, s_centroids + static_cast<size_t>(previous) * kStride);
            const bool largest_mover = previous == drift_at;
            const double lower = __dsub_rd(__dmul_rd(static_cast<double>(bound_in), args.bound_unscale),
                                           largest_mover ? total_mover : total);
            if (LAST)  /* the last assignment: kept where the row stays */
                args.d_distances[row] = distance;
            if (lower > 0.0 && distance < lower * lower * kPassFactor) {
                queue_row = false;
                if (largest_mover)  /* the others' bounds still hold as stored */
                    args.d_bounds[row] = stored_anchor(lower, total, args);
            }
        }
        const unsigned joining = __ballot_sync(0xffffffffu, queue_row);
        if (queue_row) {
            const int at = queued + __popc(joining & lanes_below);
            queue.rows[at] = row;
            queue.previous[at] = previous;
        }
        queued += __popc(joining);
        __syncwarp();
        while (queued >= kChunkRows)
            screen_unit(kChunkRows);
        fixed_left -= fixed_left > 1u ? 1u : 0u;  /* from 1 on, every chunk is claimed */
        chunk = claim_next ? *s_claimed_from + __shfl_sync(0xffffffffu, claim, 0) : chunk + warps;
    }
    if (queued > 0)
        screen_unit(queued);
    if (lane == 0) {
        if (changed != 0ull)
            atomicAdd(args.d_pass + kPassChanged, changed);
        if (screened != 0ull)
            atomicAdd(args.d_pass + kPassScreened, screened);
    }
    __syncthreads();
    flush_sums(args, s_sums, s_sizes);
}

/* Any n_vars: one row per thread, its coordinates read from global memory
 * (cached), the centroids from shared memory when they fit, else from global
 * memory. The assignment pass (args.moves) takes each row's nearest centroid
 * (the lower index on a tie) and adds the rows that moved straight into the
 * global exact sums; the summing pass adds every row by its label into the
 * block's partials, with its squared distance. */
__global__ void __launch_bounds__(kKmeansThreads) assign_generic_kernel(const __grid_constant__ AssignArgs args)
{
    wait_for_previous_grid();
    allow_next_grid();
    if (args.d_hold != nullptr && *args.d_hold != 0)
        return;
    extern __shared__ double2 s_shared2[];
    double *s_shared = reinterpret_cast<double *>(s_shared2);
    const SharedLayout layout = shared_layout(0, args.n_vars, args.k, args.centroids_shared,
                                              args.moves ? 0 : args.copies);
    double *s_centroids = s_shared + layout.centroids;
    double *s_acc = s_shared + layout.acc;
    double *s_warp_totals = s_shared + layout.warp_totals;
    const int n_vars = args.n_vars, k = args.k;
    double *d_slot = args.moves ? nullptr : args.d_partials + static_cast<size_t>(blockIdx.x) * args.partial_stride;

    if (args.centroids_shared)  /* row-major: cluster j at j * n_vars */
        for (size_t e = threadIdx.x; e < static_cast<size_t>(k) * n_vars; e += blockDim.x) {
            const size_t j = e / n_vars, v = e % n_vars;
            s_centroids[e] = args.d_centroids[j + static_cast<size_t>(k) * v];
        }
    if (!args.moves)
        clear_accumulators(s_acc, d_slot, args);
    __syncthreads();

    /* Row `row`'s squared distance to centroid j by the difference form. */
    auto distance_to = [&](uint64_t row, int j) {
        double distance = 0.0;
        for (int v = 0; v < n_vars; ++v) {
            const double centre = args.centroids_shared ? s_centroids[static_cast<size_t>(j) * n_vars + v]
                                                        : __ldg(args.d_centroids + j + static_cast<size_t>(k) * v);
            const double a = __dsub_rn(__ldg(args.d_data + row + args.n_obs * static_cast<uint64_t>(v)), centre);
            distance = __fma_rn(a, a, distance);
        }
        return distance;
    };
    double inertia = 0.0;
    unsigned changed = 0;
    for (uint64_t tile = blockIdx.x; tile < args.tile_count; tile += gridDim.x) {
        const uint64_t row = tile * kKmeansThreads + threadIdx.x;
        const bool valid = row < args.n_obs;
        if (!args.moves) {
            const int label = valid ? args.d_labels[row] : 0;
            const double distance = valid ? distance_to(row, label) : 0.0;
            accumulate_block(s_acc, d_slot, args.copies, k, label, distance, valid, inertia);
            continue;
        }
        if (!valid)
            continue;
        double best = INFINITY;
        int label = 0;
        for (int j = 0; j < k; ++j) {
            const double distance = distance_to(row, j);
            if (distance < best) {
                best = distance;
                label = j;
            }
        }
        const int previous = args.d_labels[row];
        if (previous != label) {
            args.d_labels[row] = label;
            ++changed;
            for (int v = 0; v < n_vars; ++v)
                move_value(device_sums(args.d_sums), args.d_sizes, n_vars, v, args.d_shift[v],
                           __ldg(args.d_data + row + args.n_obs * static_cast<uint64_t>(v)), previous, label);
        }
    }
    if (args.moves) {
        for (int offset = 16; offset > 0; offset >>= 1)
            changed += __shfl_down_sync(0xffffffffu, changed, offset);
        if ((threadIdx.x & 31u) == 0 && changed != 0)
            atomicAdd(args.d_pass + kPassChanged, static_cast<unsigned long long>(changed));
        return;
    }
    __syncthreads();
    write_partials(s_acc, s_warp_totals, d_slot, inertia, 0u, args);
}

/* Each centroid's move (d_drift, for the bounds), rounded up: scaled by its
 * largest difference (no underflow), and 2^-40 over the few roundings
 * ((n_vars + 6) u at most). Returns the largest of the thread's moves.
 * Called by one block. */
__device__ __forceinline__ double write_drift(const double *d_centroids, const double *d_next, int n_vars, int k,
                                              double *d_drift)
{
    double thread_largest = 0.0;
    for (size_t j = threadIdx.x; j < static_cast<size_t>(k); j += blockDim.x) {
        double largest = 0.0;
        for (int v = 0; v < n_vars; ++v) {
            const size_t at = j + static_cast<size_t>(k) * v;
            largest = fmax(largest, fabs(d_next[at] - d_centroids[at]));
        }
        double move = 0.0;
        if (largest > 0.0) {
            double sum = 0.0;
            for (int v = 0; v < n_vars; ++v) {
                const size_t at = j + static_cast<size_t>(k) * v;
                const double scaled = (d_next[at] - d_centroids[at]) / largest;
                sum = __fma_rn(scaled, scaled, sum);
            }
            move = __dmul_ru(__dmul_ru(largest, __dsqrt_ru(sum)), 1.0 + 0x1p-40);
        }
        d_drift[j] = move;
        thread_largest = fmax(thread_largest, move);
    }
    return thread_largest;
}

/* The summing pass's partials added, in one launch of ceil(partial_stride /
 * 32) blocks of kReduceThreads threads. Block c takes the 32 entries
 * 32c + lane of the partials; its warp w adds the partials of blocks w,
 * w + kReduceWarps, ... in order, then lane l of warp 0 adds the warps' sums
 * in warp order (a fixed order: the same bits every run). The last block to
 * finish (an integer counter) writes the counts, the within sums of squares
 * and the totals the host reads, and re-arms the counter. */
constexpr int kReduceThreads = 512;
constexpr int kReduceWarps = kReduceThreads / 32;

/* The block's threads' squared moves into s_shift[0] (each thread's, then a
 * fixed tree) and their empty clusters into *s_empty (an integer: any order
 * gives the same count). Called by the whole block of kReduceThreads. */
__device__ __forceinline__ void add_block_totals(double *s_shift, double shift, unsigned *s_empty, unsigned empty)
{
    s_shift[threadIdx.x] = shift;
    if (empty > 0)
        atomicAdd(s_empty, empty);
    __syncthreads();
    for (int half = kReduceThreads / 2; half > 0; half >>= 1) {
        if (static_cast<int>(threadIdx.x) < half)
            s_shift[threadIdx.x] += s_shift[threadIdx.x + half];
        __syncthreads();
    }
}

__global__ void __launch_bounds__(kReduceThreads)
    reduce_kernel(const double *__restrict__ d_partials, size_t partial_stride, int blocks, int k,
                  double *d_reduced, unsigned *d_counter, double *__restrict__ d_counts, double *__restrict__ d_wss,
                  double *__restrict__ d_totals)
{
    __shared__ double s_part[kReduceWarps][32];
    __shared__ bool s_last;
    __shared__ unsigned s_empty;
    const int lane = static_cast<int>(threadIdx.x & 31u), warp = static_cast<int>(threadIdx.x >> 5);
    const size_t entry = static_cast<size_t>(blockIdx.x) * 32 + lane;
    double sum = 0.0;
    if (entry < partial_stride) {
        const double *at = d_partials + entry;
        int b = warp;
        /* Four loads in flight, added in block order. */
        for (; b + 3 * kReduceWarps < blocks; b += 4 * kReduceWarps) {
            const double p0 = at[static_cast<size_t>(b) * partial_stride];
            const double p1 = at[static_cast<size_t>(b + kReduceWarps) * partial_stride];
            const double p2 = at[static_cast<size_t>(b + 2 * kReduceWarps) * partial_stride];
            const double p3 = at[static_cast<size_t>(b + 3 * kReduceWarps) * partial_stride];
            sum += p0;
            sum += p1;
            sum += p2;
            sum += p3;
        }
        for (; b < blocks; b += kReduceWarps)
            sum += at[static_cast<size_t>(b) * partial_stride];
    }
    s_part[warp][lane] = sum;
    __syncthreads();
    if (warp == 0) {
        double total = s_part[0][lane];
        for (int w = 1; w < kReduceWarps; ++w)
            total += s_part[w][lane];
        if (entry < partial_stride)
            d_reduced[entry] = total;
        __threadfence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        s_last = atomicAdd(d_counter, 1u) == gridDim.x - 1;
        s_empty = 0;
    }
    __syncthreads();
    if (!s_last)
        return;
    __threadfence();

    unsigned empty = 0;
    for (size_t j = threadIdx.x; j < static_cast<size_t>(k); j += blockDim.x) {
        const double count = __ldcg(d_reduced + k + j);
        d_counts[j] = count;
        d_wss[j] = __ldcg(d_reduced + j);
        empty += count == 0.0 ? 1u : 0u;
    }
    if (empty > 0)
        atomicAdd(&s_empty, empty);
    __syncthreads();
    if (threadIdx.x == 0) {
        d_totals[kTotalChanged] = __ldcg(d_reduced + 2 * k + 1);
        d_totals[kTotalShift] = 0.0;
        d_totals[kTotalInertia] = __ldcg(d_reduced + 2 * k);
        d_totals[kTotalEmpty] = static_cast<double>(s_empty);
        d_totals[kTotalScreened] = __ldcg(d_reduced + 2 * k + 2);
        *d_counter = 0u;
    }
}

/* The new centroids from the exact sums, in one block of kReduceThreads
 * threads: each centroid's sum rounded once to a double, divided by the
 * cluster's size and scaled back (a cluster with no rows keeps its
 * centroid); the squared moves' sum (each thread's entries in order, then a
 * fixed tree), the moves for the bounds, the sizes and the totals the host
 * reads (with `sequence` > 0, d_totals is a pass's slot in page-locked host
 * memory and gets that number after the totals); and the pass's counters
 * cleared for the next. */
__global__ void __launch_bounds__(kReduceThreads)
    centroids_kernel(const unsigned long long *__restrict__ d_sums, const unsigned long long *__restrict__ d_sizes,
                     unsigned long long *d_pass, const int *__restrict__ d_shift, int n_vars, int k,
                     const double *__restrict__ d_centroids, double *__restrict__ d_next,
                     double *__restrict__ d_counts, double *__restrict__ d_totals, double *__restrict__ d_drift,
                     int *d_hold, double sequence)
{
    __shared__ double s_shift[kReduceThreads];
    __shared__ unsigned s_empty;
    __shared__ unsigned long long s_largest_move;
    wait_for_previous_grid();
    allow_next_grid();
    if (d_hold != nullptr && *d_hold != 0)  /* thread 0 writes it after the barriers below */
        return;
    if (threadIdx.x == 0) {
        s_empty = 0;
        s_largest_move = 0ull;
    }
    const size_t kd = static_cast<size_t>(k) * n_vars;
    double shift = 0.0;
    for (size_t e = threadIdx.x; e < kd; e += blockDim.x) {
        const size_t j = e / n_vars;
        const int v = static_cast<int>(e % n_vars);
        const double count = static_cast<double>(static_cast<long long>(d_sizes[j]));
        const size_t at = j + static_cast<size_t>(k) * v;
        const double old = d_centroids[at];
        const double moved_to =
            count > 0.0 ? scalbn(fixed_to_double(d_sums[2 * e], d_sums[2 * e + 1]) / count, -d_shift[v]) : old;
        const double difference = moved_to - old;
        d_next[at] = moved_to;
        shift = __fma_rn(difference, difference, shift);
    }
    __syncthreads();  /* d_next, written by this block; s_empty */
    if (d_drift != nullptr) {
        /* The moves, and their largest added to the running total d_drift[k]
         * (rounded up): what every row's bound has dropped by at most. */
        const double largest = write_drift(d_centroids, d_next, n_vars, k, d_drift);
        if (largest > 0.0)  /* non-negative doubles' bits keep their order */
            atomicMax(&s_largest_move, static_cast<unsigned long long>(__double_as_longlong(largest)));
    }
    unsigned empty = 0;
    for (size_t j = threadIdx.x; j < static_cast<size_t>(k); j += blockDim.x) {
        const double count = static_cast<double>(static_cast<long long>(d_sizes[j]));
        d_counts[j] = count;
        empty += count == 0.0 ? 1u : 0u;
    }
    add_block_totals(s_shift, shift, &s_empty, empty);
    if (threadIdx.x == 0) {
        d_totals[kTotalChanged] = static_cast<double>(d_pass[kPassChanged]);
        d_totals[kTotalShift] = s_shift[0];
        d_totals[kTotalInertia] = 0.0;  /* the summing pass's */
        d_totals[kTotalEmpty] = static_cast<double>(s_empty);
        d_totals[kTotalScreened] = static_cast<double>(d_pass[kPassScreened]);
        /* The pass queued next is not wanted (no label changed) or waits for the host's re-seeding. */
        if (d_hold != nullptr)
            *d_hold = d_pass[kPassChanged] == 0ull || s_empty > 0 ? 1 : 0;
        d_pass[kPassChanged] = 0ull;
        d_pass[kPassScreened] = 0ull;
        d_pass[kPassClaims] = 0ull;
        if (d_drift != nullptr)  /* s_largest_move: add_block_totals' barriers */
            d_drift[k] = __dadd_ru(d_drift[k], __longlong_as_double(static_cast<long long>(s_largest_move)));
        if (sequence > 0.0) {  /* d_totals is a slot of page-locked memory: its sequence number after the totals */
            __threadfence_system();
            *reinterpret_cast<volatile double *>(d_totals + kTotalCount) = sequence;
        }
    }
}

/* Each variable's largest |x| (its bits: the order of non-negative doubles)
 * over the values begin ... end - 1 of the column-major data, block y
 * taking the part of variable begin / n_obs + y among them. */
__global__ void largest_kernel(const double *__restrict__ d_data, uint64_t n_obs, uint64_t begin, uint64_t end,
                               unsigned long long *d_largest)
{
    const uint64_t v = begin / n_obs + blockIdx.y;
    const uint64_t first = max(begin, v * n_obs), last = min(end, (v + 1) * n_obs);
    unsigned long long largest = 0ull;
    for (uint64_t i = first + static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < last;
         i += static_cast<uint64_t>(gridDim.x) * blockDim.x)
        largest = max(largest, static_cast<unsigned long long>(__double_as_longlong(fabs(d_data[i]))));
    for (int offset = 16; offset > 0; offset >>= 1)
        largest = max(largest, __shfl_down_sync(0xffffffffu, largest, offset));
    if ((threadIdx.x & 31u) == 0 && largest != 0ull)
        atomicMax(d_largest + v, largest);
}

/* Each variable's power of two for the exact sums from its largest |x|:
 * shift_v = top - (ilogb(largest) + 1), 0 for a variable of zeros. */
__global__ void shifts_kernel(const unsigned long long *__restrict__ d_largest, int n_vars, int top, int *d_shift)
{
    for (int v = threadIdx.x; v < n_vars; v += blockDim.x) {
        const double value = __longlong_as_double(static_cast<long long>(d_largest[v]));
        d_shift[v] = value > 0.0 ? top - (ilogb(value) + 1) : 0;
    }
}

/* The re-seeding's moves (row rows[i] from cluster from[i] to to[i]) into
 * the exact sums: a thread a move and variable. */
__global__ void apply_moves_kernel(const double *__restrict__ d_data, uint64_t n_obs, int n_vars,
                                   const int *__restrict__ d_shift, const uint64_t *__restrict__ rows,
                                   const int *__restrict__ from, const int *__restrict__ to, int count,
                                   unsigned long long *d_sums, unsigned long long *d_sizes)
{
    const size_t e = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= static_cast<size_t>(count) * n_vars)
        return;
    const int i = static_cast<int>(e / n_vars), v = static_cast<int>(e % n_vars);
    move_value(device_sums(d_sums), d_sizes, n_vars, v, d_shift[v], d_data[rows[i] + n_obs * static_cast<uint64_t>(v)],
               from[i], to[i]);
}

/* Each row's squared distance to its labelled centroid, summed over the
 * variables in order with separate products and sums: the CPU's arithmetic,
 * so that the re-seeding picks the same row. */
__global__ void distances_kernel(const double *__restrict__ d_data, uint64_t n_obs, int n_vars, int k,
                                 const double *__restrict__ d_centroids, const int32_t *__restrict__ d_labels,
                                 double *__restrict__ d_distances)
{
    const uint64_t row = static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (row >= n_obs)
        return;
    const int label = d_labels[row];
    double distance = 0.0;
    for (int v = 0; v < n_vars; ++v) {
        const double a = __dsub_rn(d_data[row + n_obs * static_cast<uint64_t>(v)],
                                   d_centroids[label + static_cast<size_t>(k) * v]);
        distance = __dadd_rn(distance, __dmul_rn(a, a));
    }
    d_distances[row] = distance;
}

/* ---------------------------------------------------------------- host */

/* The screen pays from this many centroids (bench/NOTES.md, k-means v6). */
constexpr int kScreenFromK = 32;

/* Chooses the kernels and the shared-memory layouts for the budget. The
 * summing pass (by labels): the register kernel where its centroids fit,
 * with as many accumulator copies as fit, else the generic kernel. The
 * assignment pass: the tensor-core screen (fp64_mma: its binary has the
 * FP64 tensor-core products, sm_90 and later; screen_mode 0: never, 1:
 * wherever it can run, -1: by kScreenFromK), else the register kernel, else
 * the generic one; the block's moves in shared sums where they fit. Both
 * passes take the same tiles. */
void plan_kmeans(statgpu_cuda_kmeans_session *session, size_t budget, bool fp64_mma, int screen_mode)
{
    const int d = session->n_vars, k = session->k;
    const auto bytes = [](size_t doubles) { return doubles * sizeof(double); };
    int padded = d <= 4 ? 4 : d <= 8 ? 8 : d <= 16 ? 16 : d <= 32 ? 32 : 0;
    if (padded > 0 && (bytes(shared_layout(padded, d, k, 1, 0).total) > budget ||
                       bytes(move_layout(padded, d, k, false, false).total) > budget))
        padded = 0;
    int centroids_shared = 1;
    if (padded == 0 && bytes(shared_layout(0, d, k, 1, 0).total) > budget / 2)
        centroids_shared = 0;
    int copies = 0;
    for (int c = kKmeansWarps; c >= 1; c /= 2)
        if (bytes(shared_layout(padded, d, k, centroids_shared, c).total) <= budget) {
            copies = c;
            break;
        }
    const bool screen = padded > 0 && fp64_mma && screen_mode != 0 && (screen_mode == 1 || k >= kScreenFromK) &&
                        k < static_cast<int>(kUndecided) &&
                        bytes(move_layout(padded, d, k, true, false).total) <= budget;
    session->padded_vars = padded;
    session->rows_per_thread = padded > 0 && padded <= 16 ? 2 : 1;
    session->centroids_shared = centroids_shared;
    session->screen = screen ? 1 : 0;
    session->copies = copies;
    session->copies_log2 = 0;
    while ((2 << session->copies_log2) <= copies)  /* copies is 0 or a power of two */
        ++session->copies_log2;
    session->shared_bytes = bytes(shared_layout(padded, d, k, centroids_shared, copies).total);
    if (padded > 0) {
        session->moves_shared = bytes(move_layout(padded, d, k, screen, true).total) <= budget ? 1 : 0;
        session->move_shared_bytes = bytes(move_layout(padded, d, k, screen, session->moves_shared != 0).total);
    } else {
        session->moves_shared = 0;
        session->move_shared_bytes = bytes(shared_layout(0, d, k, centroids_shared, 0).total);
    }
    const uint64_t tile_rows = static_cast<uint64_t>(kKmeansThreads) * session->rows_per_thread;
    session->tile_count = (session->n_obs + tile_rows - 1) / tile_rows;
    /* The screen's warps take chunks of 32 rows: 8 a block's "tile". */
    const uint64_t move_tile_rows = static_cast<uint64_t>(kKmeansThreads) * (screen ? 1 : session->rows_per_thread);
    session->move_tile_count = (session->n_obs + move_tile_rows - 1) / move_tile_rows;
    session->partial_stride = 2 * static_cast<size_t>(k) + 3;
    const uint64_t by_memory = std::max<uint64_t>(1, kPartialsMax / session->partial_stride);
    session->grid = static_cast<int>(
        std::min<uint64_t>({static_cast<uint64_t>(kKmeansGrid), session->tile_count, by_memory}));
}

using AssignKernel = void (*)(AssignArgs);

/* The assignment pass's kernel; `last`: the screen's for the last
 * assignment, which writes the rows' distances (its own instance, so that
 * the other passes' kernel, whose registers are full, carries none of it). */
AssignKernel move_kernel_of(const statgpu_cuda_kmeans_session *session, bool last = false)
{
    if (session->screen && last)
        switch (session->padded_vars) {
        case 4: return assign_screen_kernel<4, 3, true>;
        case 8: return assign_screen_kernel<8, 3, true>;
        case 16: return assign_screen_kernel<16, 3, true>;
        default: return assign_screen_kernel<32, 2, true>;
        }
    if (session->screen)
        switch (session->padded_vars) {
        case 4: return assign_screen_kernel<4, 3, false>;
        case 8: return assign_screen_kernel<8, 3, false>;
        case 16: return assign_screen_kernel<16, 3, false>;
        default: return assign_screen_kernel<32, 2, false>;
        }
    switch (session->padded_vars) {
    case 4: return move_registers_kernel<4, 2>;
    case 8: return move_registers_kernel<8, 2>;
    case 16: return move_registers_kernel<16, 2>;
    case 32: return move_registers_kernel<32, 1>;
    default: return assign_generic_kernel;
    }
}

/* The summing pass's kernel. */
AssignKernel sum_kernel_of(const statgpu_cuda_kmeans_session *session)
{
    switch (session->padded_vars) {
    case 4: return sum_registers_kernel<4, 2>;
    case 8: return sum_registers_kernel<8, 2>;
    case 16: return sum_registers_kernel<16, 2>;
    case 32: return sum_registers_kernel<32, 1>;
    default: return assign_generic_kernel;
    }
}

void free_session(statgpu_cuda_kmeans_session *session)
{
    if (session == nullptr)
        return;
    if (session->state != nullptr) {
        (void)cudaSetDevice(session->state->device);
        (void)cudaStreamSynchronize(session->state->stream);
    }
    /* The other arrays are the state's session workspace, kept for the next call. */
    if (session->d_distances != nullptr)
        (void)cudaFree(session->d_distances);
    if (session->h_totals != nullptr)
        (void)cudaFreeHost(session->h_totals);
    for (cudaEvent_t event : session->slot_read)
        if (event != nullptr)
            (void)cudaEventDestroy(event);
    for (cudaEvent_t event : session->trace)
        if (event != nullptr)
            (void)cudaEventDestroy(event);
    (void)cudaGetLastError();
    delete session;
}


/* The launch arguments of a pass; `distances`: the last assignment writes
 * the rows' distances there, the summing pass reads them (or null). */
AssignArgs pass_args(const statgpu_cuda_kmeans_session *session, bool moves, double *distances = nullptr)
{
    AssignArgs args;
    args.d_data = session->d_data;
    args.n_obs = session->n_obs;
    args.n_vars = session->n_vars;
    args.k = session->k;
    args.d_centroids = session->d_centroids;
    args.d_labels = session->d_labels;
    args.d_partials = session->d_partials;
    args.partial_stride = session->partial_stride;
    args.tile_count = moves ? session->move_tile_count : session->tile_count;
    args.moves = moves ? 1 : 0;
    args.centroids_shared = session->centroids_shared;
    args.copies = session->copies;
    args.copies_log2 = session->copies_log2;
    args.d_bounds = session->use_bounds ? session->d_bounds : nullptr;
    args.d_drift = session->d_drift;
    args.bounds_valid = session->use_bounds && session->bounds_ready && moves ? 1 : 0;
    args.bound_scale = session->bound_scale;
    args.bound_unscale = 1.0 / session->bound_scale;
    args.d_sums = session->d_sums;
    args.d_sizes = session->d_sizes;
    args.d_pass = session->d_pass;
    args.d_shift = session->d_shift;
    args.moves_shared = session->moves_shared;
    args.d_hold = moves ? session->d_hold : nullptr;
    args.fixed_share = session->fixed_share;
    args.d_distances = session->padded_vars > 0 ? distances : nullptr;
    return args;
}

/* Reads the totals back and waits for the pass. */
bool read_totals(CallStatus &call, statgpu_cuda_kmeans_session *session)
{
    cudaStream_t stream = session->state->stream;
    return call.check(cudaMemcpyAsync(session->h_totals, session->d_totals, kTotalCount * sizeof(double),
                                      cudaMemcpyDeviceToHost, stream),
                      "reading the k-means totals") &&
           call.check(cudaStreamSynchronize(stream), "running a k-means iteration");
}

/* Launches `kernel` on `stream`; with `early`, as a programmatic dependent
 * launch: its blocks may start before the kernel ahead of it ends, and wait
 * for it (wait_for_previous_grid). */
template <typename... Params, typename... Args>
cudaError_t launch(void (*kernel)(Params...), unsigned blocks, unsigned threads, size_t shared_bytes,
                   cudaStream_t stream, bool early, Args... args)
{
    cudaLaunchAttribute attribute;
    attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = shared_bytes;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = early ? 1 : 0;
    return cudaLaunchKernelEx(&config, kernel, args...);
}

/* The new centroids (d_next) and the totals from the exact sums, written
 * to `totals` (d_totals, or with sequence > 0 a slot of the page-locked
 * h_slots, which the GPU writes over the bus); with `hold`, nothing where
 * *d_hold, and *d_hold set for the pass after; `early`: right behind the
 * pass's assignment kernel, launched before it ends. */
bool launch_centroids(CallStatus &call, statgpu_cuda_kmeans_session *session, double *totals, double sequence = 0.0,
                      bool hold = false, bool early = false)
{
    return call.check(launch(centroids_kernel, 1, kReduceThreads, 0, session->state->stream, early,
                             session->d_sums, session->d_sizes, session->d_pass, session->d_shift, session->n_vars,
                             session->k, session->d_centroids, session->d_next, session->d_counts,
                             totals, session->use_bounds ? session->d_drift : nullptr,
                             hold ? session->d_hold : nullptr, sequence),
                      "launching the k-means centroid update");
}

/* Queues one assignment: the labels, the moved rows into the exact sums,
 * the new centroids and the totals, into totals slot `slot` (read by
 * wait_pass). Nothing where *d_hold. `last`: the assignment after the last
 * iteration, which also writes the rows' distances for the summing pass
 * (where the session has room for them). Where the GPU writes the slots
 * (dh_slots), nothing is queued between a pass's two kernels and the next
 * pass's, so that each can be launched early (early_launch); the trace's
 * events go between them. */
bool queue_pass(CallStatus &call, statgpu_cuda_kmeans_session *session, int slot, bool last)
{
    cudaStream_t stream = session->state->stream;
    double *distances = last && session->last_distances ? session->d_distances : nullptr;
    const AssignArgs args = pass_args(session, true, distances);
    session->distances_written = args.d_distances != nullptr;
    const bool traced = session->trace[0] != nullptr;
    const bool early = session->early_launch && !traced;
    if (traced)
        (void)cudaEventRecord(session->trace[0], stream);
    if (!call.check(launch(move_kernel_of(session, args.d_distances != nullptr),
                           static_cast<unsigned>(session->move_grid), kKmeansThreads, session->move_shared_bytes,
                           stream, early && session->after_pass, args),
                    "launching the k-means assignment"))
        return false;
    if (traced)
        (void)cudaEventRecord(session->trace[1], stream);
    session->after_pass = false;
    session->bounds_ready = true;
    if (session->dh_slots != nullptr) {
        session->sequence += 1.0;
        session->slot_sequence[slot] = session->sequence;
        if (!launch_centroids(call, session, session->dh_slots + slot * kSlot, session->sequence, true, early))
            return false;
        session->after_pass = !traced;
    } else if (!launch_centroids(call, session, session->d_totals, 0.0, true) ||
               !call.check(cudaMemcpyAsync(session->h_slots + slot * kSlot, session->d_totals,
                                           kTotalCount * sizeof(double), cudaMemcpyDeviceToHost, stream),
                           "reading the k-means totals") ||
               !call.check(cudaEventRecord(session->slot_read[slot], stream), "recording an event")) {
        return false;
    }
    if (traced)
        (void)cudaEventRecord(session->trace[2], stream);
    return true;
}

/* Waits for the pass queued in `slot`; its totals into session->h_totals.
 * Where the GPU writes the slot, until its sequence number is there (the
 * stream asked now and then, so that an error or a pass that never reports
 * ends the wait). */
bool wait_pass(CallStatus &call, statgpu_cuda_kmeans_session *session, int slot)
{
    const double *at = session->h_slots + slot * kSlot;
    if (session->dh_slots == nullptr) {
        if (!call.check(cudaEventSynchronize(session->slot_read[slot]), "running a k-means iteration"))
            return false;
    } else {
        const volatile double *sequence = at + kTotalCount;
        const double expected = session->slot_sequence[slot];
        for (unsigned spins = 1; *sequence != expected; ++spins) {
            if (spins % 1024 != 0)
                continue;
            const cudaError_t state = cudaStreamQuery(session->state->stream);
            if (state == cudaErrorNotReady)
                continue;
            if (!call.check(state, "running a k-means iteration"))
                return false;
            if (*sequence != expected)
                return call.fail(STATGPU_CUDA_ERROR, "running a k-means iteration: the pass did not report");
        }
        std::atomic_thread_fence(std::memory_order_acquire);
    }
    std::memcpy(session->h_totals, at, kTotalCount * sizeof(double));
    return true;
}

/* The summing pass: every row's squared distance to its labelled centroid,
 * the within sums of squares, sizes and inertia added in a fixed order. */
bool sum_pass(CallStatus &call, statgpu_cuda_kmeans_session *session, bool distances_ready)
{
    cudaStream_t stream = session->state->stream;
    const AssignArgs args = pass_args(session, false, distances_ready ? session->d_distances : nullptr);
    if (session->trace[0] != nullptr)
        (void)cudaEventRecord(session->trace[0], stream);
    sum_kernel_of(session)<<<session->grid, kKmeansThreads, session->shared_bytes, stream>>>(args);
    if (!call.check(cudaGetLastError(), "launching the k-means sums"))
        return false;
    const unsigned blocks = static_cast<unsigned>((session->partial_stride + 31) / 32);
    reduce_kernel<<<blocks, kReduceThreads, 0, stream>>>(session->d_partials, session->partial_stride, session->grid,
                                                         session->k, session->d_reduced, session->d_counter,
                                                         session->d_counts, session->d_wss, session->d_totals);
    if (session->trace[1] != nullptr)
        (void)cudaEventRecord(session->trace[1], stream);
    if (!call.check(cudaGetLastError(), "launching the k-means sums' reduction") || !read_totals(call, session))
        return false;
    if (session->trace[1] != nullptr)
        std::fprintf(stderr, "statgpu k-means: summing pass %.1f us (%s)\n",
                     1e3 * elapsed_ms(session->trace[0], session->trace[1]),
                     args.d_distances != nullptr ? "the last assignment's distances" : "the rows");
    return true;
}

/* Each variable's power of two for the exact sums (see "exact sums"):
 * shift_v = B - E_v, with 2^E_v above the variable's largest |x| (d_largest,
 * taken as the data arrived) and B = 127 - bits(n_obs); 0 for a variable of
 * zeros. Once a session, queued behind the data's upload. */
cudaError_t launch_shifts(statgpu_cuda_kmeans_session *session, cudaStream_t stream)
{
    int n_bits = 0;
    for (uint64_t n = session->n_obs; n != 0; n >>= 1)
        ++n_bits;
    shifts_kernel<<<1, 32, 0, stream>>>(session->d_largest, session->n_vars, 127 - n_bits, session->d_shift);
    return cudaGetLastError();
}

/* Re-seeds every empty cluster (in index order) with the row farthest from
 * its centroid among clusters that keep another row, the lowest row on a tie:
 * sg_reseed_empty's rule; then the moves into the exact sums, and the new
 * centroids and totals (session->h_totals). *moved counts the moves. */
bool reseed_empty(CallStatus &call, statgpu_cuda_kmeans_session *session, size_t *moved)
{
    cudaStream_t stream = session->state->stream;
    const uint64_t n = session->n_obs;
    const int k = session->k;
    if (session->d_distances == nullptr &&
        !call.check(cudaMalloc(&session->d_distances, n * sizeof(double)), "allocating the re-seeding distances"))
        return false;
    const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
    distances_kernel<<<blocks, 256, 0, stream>>>(session->d_data, n, session->n_vars, k, session->d_centroids,
                                                 session->d_labels, session->d_distances);
    if (!call.check(cudaGetLastError(), "launching the re-seeding distances"))
        return false;
    std::vector<double> distance(n), counts_double(static_cast<size_t>(k));
    std::vector<int32_t> labels(n);
    if (!call.check(cudaMemcpyAsync(distance.data(), session->d_distances, n * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream), "reading the re-seeding distances") ||
        !call.check(cudaMemcpyAsync(labels.data(), session->d_labels, n * sizeof(int32_t), cudaMemcpyDeviceToHost,
                                    stream), "reading the labels") ||
        !call.check(cudaMemcpyAsync(counts_double.data(), session->d_counts, k * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream), "reading the cluster sizes") ||
        !call.check(cudaStreamSynchronize(stream), "re-seeding empty clusters"))
        return false;
    std::vector<uint64_t> counts(static_cast<size_t>(k));
    for (int j = 0; j < k; ++j)
        counts[j] = static_cast<uint64_t>(counts_double[j]);
    std::vector<uint64_t> rows;
    std::vector<int> from, to;
    for (int empty = 0; empty < k; ++empty) {
        if (counts[empty] != 0)
            continue;
        uint64_t farthest = UINT64_MAX;
        double largest = 0.0;
        for (uint64_t i = 0; i < n; ++i)
            if (distance[i] > largest && counts[labels[i]] >= 2) {
                largest = distance[i];
                farthest = i;
            }
        if (farthest == UINT64_MAX)
            return call.fail(STATGPU_CUDA_INVALID_ARGUMENT,
                             "an empty cluster cannot be re-seeded: the data have fewer than k distinct rows");
        counts[labels[farthest]] -= 1;
        rows.push_back(farthest);
        from.push_back(labels[farthest]);
        to.push_back(empty);
        labels[farthest] = empty;
        counts[empty] = 1;
        distance[farthest] = -1.0;
        ++*moved;
    }
    if (rows.empty())
        return true;
    /* The moves into the exact sums, then the new centroids. */
    const int count = static_cast<int>(rows.size());
    void *d_moves = nullptr;
    const size_t moves_bytes = rows.size() * (sizeof(uint64_t) + 2 * sizeof(int));
    if (!call.check(cudaMalloc(&d_moves, moves_bytes), "allocating the re-seeding moves"))
        return false;
    uint64_t *d_rows = static_cast<uint64_t *>(d_moves);
    int *d_from = reinterpret_cast<int *>(d_rows + count), *d_to = d_from + count;
    const size_t threads = rows.size() * static_cast<size_t>(session->n_vars);
    bool ok = call.check(cudaMemcpyAsync(d_rows, rows.data(), count * sizeof(uint64_t), cudaMemcpyHostToDevice,
                                         stream), "writing the re-seeding moves") &&
              call.check(cudaMemcpyAsync(d_from, from.data(), count * sizeof(int), cudaMemcpyHostToDevice, stream),
                         "writing the re-seeding moves") &&
              call.check(cudaMemcpyAsync(d_to, to.data(), count * sizeof(int), cudaMemcpyHostToDevice, stream),
                         "writing the re-seeding moves") &&
              call.check(cudaMemcpyAsync(session->d_labels, labels.data(), n * sizeof(int32_t),
                                         cudaMemcpyHostToDevice, stream), "writing the re-seeded labels");
    if (ok) {
        apply_moves_kernel<<<static_cast<unsigned>((threads + 255) / 256), 256, 0, stream>>>(
            session->d_data, n, session->n_vars, session->d_shift, d_rows, d_from, d_to, count, session->d_sums,
            session->d_sizes);
        ok = call.check(cudaGetLastError(), "launching the re-seeding moves") &&
             launch_centroids(call, session, session->d_totals) && read_totals(call, session);
    }
    (void)cudaFree(d_moves);  /* after the stream's work (read_totals waited for it) */
    /* The re-seeding's moves are not in the drift: the next assignment
     * screens every row. */
    session->bounds_ready = false;
    return ok;
}

/* The bounds' power of two for a run from its starting centroids (k x n_vars,
 * column-major): 2^-e with 2^e at most their largest distance from their
 * mean in any variable, so that the bounds, which are distances of the
 * order of the centroids' spread, are kept near 1 as floats (1 when that
 * spread is 0 or not finite). A power of two: the scaling is exact. */
double bound_scale_of(const double *centroids, int k, int n_vars)
{
    double spread = 0.0;
    for (int v = 0; v < n_vars; ++v) {
        const double *column = centroids + static_cast<size_t>(k) * v;
        double mean = 0.0;
        for (int j = 0; j < k; ++j)
            mean += column[j] / k;
        for (int j = 0; j < k; ++j)
            spread = std::fmax(spread, std::fabs(column[j] - mean));
    }
    if (!(spread > 0.0) || !std::isfinite(spread))
        return 1.0;
    return std::ldexp(1.0, -std::clamp(std::ilogb(spread), -900, 900));
}

} /* namespace */

statgpu_cuda_status kmeans_begin(statgpu_cuda_state *state, const double *data, size_t n_obs, size_t n_vars,
                                 size_t ld, size_t k, statgpu_cuda_kmeans_session **out_session,
                                 statgpu_cuda_timing *timing, char *msg, size_t msg_bytes)
{
    CallStatus call(msg, msg_bytes);
    if (out_session == nullptr) {
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "kmeans_begin: out_session is NULL");
        return call.status();
    }
    *out_session = nullptr;
    if (state == nullptr || data == nullptr || n_obs == 0 || n_vars == 0 || ld < n_obs || k == 0 || k > n_obs ||
        k > INT32_MAX || n_vars > INT32_MAX) {
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "kmeans_begin: invalid arguments");
        return call.status();
    }
    if (!call.check(cudaSetDevice(state->device), "selecting the CUDA device"))
        return call.status();

    statgpu_cuda_kmeans_session *session = new (std::nothrow) statgpu_cuda_kmeans_session;
    if (session == nullptr) {
        call.fail(STATGPU_CUDA_OUT_OF_MEMORY, "kmeans_begin: out of host memory");
        return call.status();
    }
    session->state = state;
    session->n_obs = n_obs;
    session->n_vars = static_cast<int>(n_vars);
    session->k = static_cast<int>(k);

    int optin = 0;
    (void)cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, state->device);
    /* The machine code the GPU runs: sm_90's has the FP64 tensor-core
     * shapes; code compiled from older PTX does not. */
    cudaFuncAttributes screen_attributes;
    const bool fp64_mma =
        cudaFuncGetAttributes(&screen_attributes, assign_screen_kernel<16, 3, false>) == cudaSuccess &&
        screen_attributes.binaryVersion >= 90;
    (void)cudaGetLastError();
    /* STATGPU_CUDA_KMEANS_SCREEN=0 or 1: never or always the tensor-core
     * screen where it can run, to compare the two (same results either way). */
    int screen_mode = -1;
    if (const char *mode = std::getenv("STATGPU_CUDA_KMEANS_SCREEN"); mode != nullptr && mode[0] != '\0')
        screen_mode = std::strcmp(mode, "0") == 0 ? 0 : 1;
    plan_kmeans(session, std::min<size_t>(kSharedBudget, optin > 0 ? static_cast<size_t>(optin) : 48 * 1024),
                fp64_mma, screen_mode);
    /* The passes' kernels launched early where the GPU runs the sm_90 code
     * (STATGPU_CUDA_KMEANS_EARLY=0: not, to compare; the same results). */
    const char *early = std::getenv("STATGPU_CUDA_KMEANS_EARLY");
    session->early_launch = fp64_mma && !(early != nullptr && std::strcmp(early, "0") == 0);
    /* STATGPU_CUDA_KMEANS_FIXED=0 ... 16: the sixteenths of each warp's
     * chunks the screen kernel takes in a fixed order before it claims
     * the rest (16: all; the results are the same whatever the share). */
    if (const char *share = std::getenv("STATGPU_CUDA_KMEANS_FIXED"); share != nullptr && share[0] != '\0')
        session->fixed_share = std::max(0, std::min(16, std::atoi(share)));
    /* STATGPU_CUDA_KMEANS_BOUNDS=0: the screen without the bounds, every
     * row screened every iteration, to compare (same results either way). */
    const char *bounds_mode = std::getenv("STATGPU_CUDA_KMEANS_BOUNDS");
    session->use_bounds = session->screen && !(bounds_mode != nullptr && std::strcmp(bounds_mode, "0") == 0);

    const size_t kd = k * n_vars;
    cudaStream_t stream = state->stream;
    const SessionArray arrays[] = {
        {reinterpret_cast<void **>(&session->d_data), n_obs * n_vars * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_labels), n_obs * sizeof(int32_t)},
        {reinterpret_cast<void **>(&session->d_partials),
         static_cast<size_t>(session->grid) * session->partial_stride * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_centroids), kd * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_next), kd * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_reduced), session->partial_stride * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_counter), sizeof(unsigned)},
        {reinterpret_cast<void **>(&session->d_counts), k * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_wss), k * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_totals), kTotalCount * sizeof(double)},
        {reinterpret_cast<void **>(&session->d_bounds), session->use_bounds ? n_obs * sizeof(float) : 0},
        {reinterpret_cast<void **>(&session->d_drift), session->use_bounds ? (k + 1) * sizeof(double) : 0},
        {reinterpret_cast<void **>(&session->d_sums), 2 * kd * sizeof(unsigned long long)},
        {reinterpret_cast<void **>(&session->d_sizes), k * sizeof(unsigned long long)},
        {reinterpret_cast<void **>(&session->d_pass), kPassCount * sizeof(unsigned long long)},
        {reinterpret_cast<void **>(&session->d_shift), n_vars * sizeof(int)},
        {reinterpret_cast<void **>(&session->d_largest), n_vars * sizeof(unsigned long long)},
        {reinterpret_cast<void **>(&session->d_hold), sizeof(int)},
    };
    bool ok = call.check(carve_session_arrays(state, arrays, sizeof arrays / sizeof arrays[0]),
                         "allocating the k-means arrays") &&
              call.check(cudaMemsetAsync(session->d_counter, 0, sizeof(unsigned), stream), "clearing the k-means counter") &&
              call.check(cudaHostAlloc(&session->h_totals, (kTotalCount + 2 * kSlot) * sizeof(double),
                                       cudaHostAllocMapped),
                         "allocating the totals") &&
              call.check(cudaEventCreateWithFlags(&session->slot_read[0], cudaEventDisableTiming), "creating an event") &&
              call.check(cudaEventCreateWithFlags(&session->slot_read[1], cudaEventDisableTiming), "creating an event");
    if (ok) {
        session->h_slots = session->h_totals + kTotalCount;
        std::fill(session->h_slots, session->h_slots + 2 * kSlot, 0.0);  /* no sequence number yet */
        /* The passes' totals written by centroids_kernel straight into
         * page-locked memory, with no copy queued behind each pass
         * (STATGPU_CUDA_KMEANS_MAPPED=0: copied, to compare). */
        const char *mapped = std::getenv("STATGPU_CUDA_KMEANS_MAPPED");
        if ((mapped == nullptr || std::strcmp(mapped, "0") != 0) &&
            cudaHostGetDevicePointer(reinterpret_cast<void **>(&session->dh_slots), session->h_slots, 0) !=
                cudaSuccess) {
            session->dh_slots = nullptr;
            (void)cudaGetLastError();
        }
        /* The rows' distances, which the last assignment writes so that the
         * summing pass need not read the rows again (register and screen
         * kernels), where there is room: without them the summing pass
         * reads the rows, the same bits (STATGPU_CUDA_KMEANS_DISTANCES=0:
         * without, to compare). */
        const char *distances = std::getenv("STATGPU_CUDA_KMEANS_DISTANCES");
        session->last_distances =
            session->padded_vars > 0 && (distances == nullptr || std::strcmp(distances, "0") != 0);
        if (session->last_distances && cudaMalloc(&session->d_distances, n_obs * sizeof(double)) != cudaSuccess) {
            session->d_distances = nullptr;
            session->last_distances = false;
            (void)cudaGetLastError();
        }
    }
    if (ok && session->shared_bytes > 48 * 1024)
        ok = call.check(cudaFuncSetAttribute(sum_kernel_of(session), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(session->shared_bytes)),
                        "reserving shared memory for the k-means sums");
    /* The generic kernel runs both passes: the larger of its two plans. */
    const size_t move_bytes = move_kernel_of(session) == sum_kernel_of(session)
                                  ? std::max(session->move_shared_bytes, session->shared_bytes)
                                  : session->move_shared_bytes;
    for (const bool last : {false, true})
        if (ok && move_bytes > 48 * 1024)
            ok = call.check(cudaFuncSetAttribute(move_kernel_of(session, last),
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(move_bytes)),
                            "reserving shared memory for the k-means assignment");
    if (ok) {
        /* The assignment's results do not depend on its grid (each row's
         * alone, and exact sums): as many blocks as the GPU runs at once. */
        int per_sm = 0, sms = 0;
        ok = call.check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, move_kernel_of(session), kKmeansThreads,
                                                                      session->move_shared_bytes),
                        "sizing the k-means assignment") &&
             call.check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, state->device),
                        "sizing the k-means assignment");
        session->move_grid = static_cast<int>(std::min<uint64_t>(
            session->move_tile_count, static_cast<uint64_t>(std::max(1, per_sm) * std::max(1, sms))));
    }
    if (ok) {
        cudaEvent_t *events = state->events;
        /* Each variable's largest |x| (for the exact sums' powers of two),
         * taken from each part of the data as it arrives, while the rest
         * crosses the bus. */
        const double *d_data = session->d_data;
        unsigned long long *d_largest = session->d_largest;
        const ArrivalWork ranges = [d_data, d_largest, n_obs](const void *device, size_t bytes, cudaStream_t on) {
            const uint64_t begin = static_cast<uint64_t>(static_cast<const double *>(device) - d_data);
            const uint64_t end = begin + bytes / sizeof(double);
            const unsigned columns = static_cast<unsigned>((end - 1) / n_obs - begin / n_obs + 1);
            const unsigned blocks = static_cast<unsigned>(std::min<uint64_t>(32, (end - begin + 2047) / 2048));
            largest_kernel<<<dim3(blocks, columns), 256, 0, on>>>(d_data, n_obs, begin, end, d_largest);
            return cudaGetLastError();
        };
        ok = call.check(cudaEventRecord(events[kEventStart], stream), "recording an event") &&
             call.check(cudaMemsetAsync(d_largest, 0, n_vars * sizeof(unsigned long long), stream),
                        "clearing the k-means ranges") &&
             call.check(upload_columns(state, data, n_obs, n_vars, ld, session->d_data, stream, &ranges),
                        "copying the k-means data to the GPU") &&
             call.check(launch_shifts(session, stream), "launching the k-means ranges") &&
             call.check(cudaEventRecord(events[kEventEnd], stream), "recording an event") &&
             call.check(cudaStreamSynchronize(stream), "copying the k-means data to the GPU");
        if (ok && timing != nullptr)
            timing->transfer_seconds += elapsed_ms(events[kEventStart], events[kEventEnd]) * 1e-3;
    }
    if (!ok) {
        free_session(session);
        return call.status();
    }
    *out_session = session;
    if (msg != nullptr && msg_bytes > 0)
        msg[0] = '\0';
    return STATGPU_CUDA_OK;
}

statgpu_cuda_status kmeans_lloyd(statgpu_cuda_kmeans_session *session, size_t max_iterations,
                                 double absolute_tolerance, statgpu_cuda_cancel_fn cancelled,
                                 void *cancel_user_data, statgpu_cuda_kmeans_run *run,
                                 statgpu_cuda_timing *timing, char *msg, size_t msg_bytes)
{
    CallStatus call(msg, msg_bytes);
    if (session == nullptr || run == nullptr || run->centroids == nullptr || run->labels == nullptr ||
        run->cluster_sizes == nullptr || run->within_ss == nullptr) {
        call.fail(STATGPU_CUDA_INVALID_ARGUMENT, "kmeans_lloyd: invalid arguments");
        return call.status();
    }
    statgpu_cuda_state *state = session->state;
    if (!call.check(cudaSetDevice(state->device), "selecting the CUDA device"))
        return call.status();
    cudaStream_t stream = state->stream;
    cudaEvent_t *events = state->events;
    const uint64_t n = session->n_obs;
    const size_t k = static_cast<size_t>(session->k), kd = k * session->n_vars;

    run->converged = 0;
    run->reseed_count = 0;
    run->iterations = 0;
    run->inertia = 0.0;
    session->bounds_ready = false;  /* the labels are cleared below */
    session->after_pass = false;
    session->bound_scale = bound_scale_of(run->centroids, session->k, session->n_vars);
    if (!call.check(cudaEventRecord(events[kEventStart], stream), "recording an event") ||
        !call.check(cudaMemcpyAsync(session->d_centroids, run->centroids, kd * sizeof(double), cudaMemcpyHostToDevice,
                                    stream), "copying the initial centroids to the GPU") ||
        !call.check(cudaMemsetAsync(session->d_labels, 0xff, n * sizeof(int32_t), stream), "clearing the labels") ||
        !call.check(cudaMemsetAsync(session->d_sums, 0, 2 * kd * sizeof(unsigned long long), stream),
                    "clearing the k-means sums") ||
        !call.check(cudaMemsetAsync(session->d_sizes, 0, k * sizeof(unsigned long long), stream),
                    "clearing the k-means sizes") ||
        !call.check(cudaMemsetAsync(session->d_pass, 0, kPassCount * sizeof(unsigned long long), stream),
                    "clearing the k-means counters") ||
        !call.check(cudaMemsetAsync(session->d_hold, 0, sizeof(int), stream), "clearing the k-means counters") ||
        (session->use_bounds &&
         !call.check(cudaMemsetAsync(session->d_drift + k, 0, sizeof(double), stream), "clearing the k-means moves")))
        return call.status();

    /* STATGPU_CUDA_KMEANS_TRACE=1: each assignment's screened rows (with the
     * screen) and the summing pass on stderr. */
    const char *trace_mode = std::getenv("STATGPU_CUDA_KMEANS_TRACE");
    const bool trace = trace_mode != nullptr && std::strcmp(trace_mode, "1") == 0;
    for (cudaEvent_t &event : session->trace)
        if (trace && event == nullptr && cudaEventCreate(&event) != cudaSuccess)
            event = nullptr;
    /* Pass i + 1 is queued before pass i's totals are read (one pass ahead,
     * so that the GPU does not wait for the host between passes): it is
     * wanted after every pass but one that changed no label (then the
     * labels are final) or emptied a cluster (then the host re-seeds
     * first), and in those two cases centroids_kernel has set d_hold and
     * the queued pass does nothing. The pass after the last iteration is
     * the one that gives every row its nearest centroid. The trace times
     * one pass at a time. */
    const auto cancel = [&]() {
        if (cancelled == nullptr || cancelled(cancel_user_data) == 0)
            return false;
        (void)cudaStreamSynchronize(stream);
        call.fail(STATGPU_CUDA_CANCELLED, "cancelled");
        return true;
    };
    int slot = 0;  /* the totals' slot of the pass waited for next */
    bool settled = false;  /* the last pass changed no label (the pass queued after it did nothing) */
    if (cancel() || !queue_pass(call, session, slot, max_iterations == 0))
        return call.status();
    while (run->iterations < max_iterations) {
        /* The next pass, ahead, with this pass's new centroids: the last
         * one if this is the last iteration. */
        std::swap(session->d_centroids, session->d_next);
        const bool ahead = !trace;
        if ((ahead && !queue_pass(call, session, slot ^ 1, run->iterations + 1 == max_iterations)) ||
            !wait_pass(call, session, slot))
            return call.status();
        ++run->iterations;
        /* The pass's sequence number arrives before its last kernel ends. */
        if (trace && session->screen && cudaEventSynchronize(session->trace[2]) == cudaSuccess)
            std::fprintf(stderr, "statgpu k-means: assignment %zu screened %.0f of %llu rows (%.1f us, centroids %.1f us)\n",
                         run->iterations, session->h_totals[kTotalScreened], static_cast<unsigned long long>(n),
                         1e3 * elapsed_ms(session->trace[0], session->trace[1]),
                         1e3 * elapsed_ms(session->trace[1], session->trace[2]));
        double changed = session->h_totals[kTotalChanged];
        bool next_queued = ahead;
        if (session->h_totals[kTotalEmpty] > 0.0) {
            /* The pass ahead did nothing (d_hold): re-seed from this pass's
             * centroids (behind it on the stream), then queue the next pass
             * afresh. */
            std::swap(session->d_centroids, session->d_next);
            size_t moved = 0;
            if (!reseed_empty(call, session, &moved) ||
                !call.check(cudaMemsetAsync(session->d_hold, 0, sizeof(int), stream), "re-seeding empty clusters"))
                return call.status();
            session->after_pass = false;
            changed += static_cast<double>(moved);
            run->reseed_count += moved;
            std::swap(session->d_centroids, session->d_next);
            next_queued = false;
        }
        const double shift = session->h_totals[kTotalShift];
        slot ^= 1;
        /* scikit-learn's order: unchanged labels first, then the tolerance.
         * The pass ahead of a pass that changed nothing did nothing. */
        if (changed == 0.0) {
            run->converged = 1;
            settled = true;
            break;
        }
        if (!next_queued && !queue_pass(call, session, slot, run->iterations == max_iterations))
            return call.status();
        if (shift <= absolute_tolerance) {
            run->converged = 1;
            break;
        }
        if (cancel())
            return call.status();
    }
    /* Labels are each row's nearest centroid: the pass queued after the last
     * iteration (when that one changed nothing, the queued pass did nothing
     * and the labels already were); then the within sums of squares, whose
     * read-back waits for both, from the distances that pass wrote where it
     * was queued as the last (the iteration limit ended the run) and did
     * run, else from the rows. */
    if (!sum_pass(call, session, session->distances_written && !settled))
        return call.status();
    if (!call.check(cudaEventRecord(events[kEventData], stream), "recording an event"))
        return call.status();

    std::vector<double> counts(k);
    if (!call.check(cudaMemcpyAsync(run->centroids, session->d_centroids, kd * sizeof(double), cudaMemcpyDeviceToHost,
                                    stream), "reading the centroids") ||
        !call.check(cudaMemcpyAsync(counts.data(), session->d_counts, k * sizeof(double), cudaMemcpyDeviceToHost,
                                    stream), "reading the cluster sizes") ||
        !call.check(cudaMemcpyAsync(run->within_ss, session->d_wss, k * sizeof(double), cudaMemcpyDeviceToHost,
                                    stream), "reading the within sums of squares"))
        return call.status();
    const StagedPiece labels = {run->labels, session->d_labels, n * sizeof(int32_t)};
    if (!call.check(download_staged(session->state, &labels, 1, stream), "reading the labels") ||
        !call.check(cudaEventRecord(events[kEventEnd], stream), "recording an event") ||
        !call.check(cudaStreamSynchronize(stream), "reading the k-means result"))
        return call.status();
    for (size_t j = 0; j < k; ++j)
        run->cluster_sizes[j] = static_cast<size_t>(counts[j]);
    run->inertia = session->h_totals[kTotalInertia];
    if (timing != nullptr) {
        timing->compute_seconds += elapsed_ms(events[kEventStart], events[kEventData]) * 1e-3;
        timing->transfer_seconds += elapsed_ms(events[kEventData], events[kEventEnd]) * 1e-3;
    }
    if (msg != nullptr && msg_bytes > 0)
        msg[0] = '\0';
    return STATGPU_CUDA_OK;
}

void kmeans_end(statgpu_cuda_kmeans_session *session)
{
    free_session(session);
}

} /* namespace statgpu_cuda */
