/*
 * select_plan.h: the host half of exact order-statistics selection on the GPU:
 * where to probe the data on each pass over it, and what the counts that come
 * back prove about where each requested rank lies. Plain C++, no CUDA, so
 * that the logic can be exercised on a machine without a GPU.
 *
 * The method is Beliakov's cutting-plane hybrid ("Parallel calculation of the
 * median and order statistics on GPUs with application to robust regression",
 * 2011). The k-th smallest x_(k) minimises the convex, piecewise-linear
 *     f_k(y) = sum_i |x_i - y| + (n - 2k + 1) y,
 * whose subdifferential at y is [2L - 2k + 1, 2(L + E) - 2k + 1] with
 * L = #(x < y) and E = #(x == y); y is the answer iff L < k <= L + E. Kelley's
 * method keeps a bracket [a, b] with #(x < a) < k <= #(x <= b) and evaluates f
 * where the cutting planes at a and b meet. With the planes taken from the
 * inner sides (right slope at a, left slope at b) they meet at
 *     y = (sum of the elements strictly inside (a, b)) / (their count),
 * so a pass only needs counts and partial sums, not f itself. Once the bracket
 * holds few elements they are copied out as total-order keys, radix sorted and
 * the rank read off, so the result is exact in IEEE total order.
 *
 * Kelley's point alone moves like bisection on smooth data (on a uniform
 * interior it is the midpoint), and a pass over the data costs the same for
 * one probe or sixteen. So each pass evaluates several probes at once:
 *   - the first pass, fused with the reduction (min, max, sum, NaN count),
 *     places its probes at order statistics of a small regular sample of the
 *     data, and speculatively copies out the elements of a window around each
 *     requested rank, so later passes read a small fraction of the data;
 *   - later passes add to Kelley's point interpolated positions in value and
 *     in total-order key space, on a ladder of widths around each rank.
 * Every probe is only a guess: the counts returned for it are exact, so a bad
 * guess costs time, never correctness.
 *
 * Groups. After a pass the elements of a bracket are split by the probes into
 * consecutive cells {x : p_j <= x < p_{j+1}}. A cell that holds a requested rank
 * becomes a group: [lo, hi] bounds its elements, count and the number of
 * elements below it are exact. Groups are disjoint and kept in ascending order.
 * A cell never splits elements that compare equal, so -0.0 and +0.0 always fall
 * in the same group; which zero a rank gets is settled by counting (see
 * resolve_value) or by the final key sort.
 */
#ifndef STATGPU_KERNELS_SELECT_PLAN_H
#define STATGPU_KERNELS_SELECT_PLAN_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace statgpu_cuda {

/* Probes and groups per pass: the kernels keep one set of accumulators per
 * probe in registers, so these stay small. */
constexpr int kMaxProbes = 16;
constexpr int kMaxGroups = 16;

/* Elements of the regular sample that places the first pass's probes. */
constexpr int kSampleCount = 2048;

/* A group of at most this many elements is finished by sorting its keys. */
constexpr uint64_t kReadyCount = 2048;

/* Below this many elements one sort of all keys is cheaper than probing. */
constexpr uint64_t kSortAllMaxCount = uint64_t{1} << 15;

/* Passes after the first before whatever is left is sorted outright. */
constexpr int kMaxLaterPasses = 32;

enum OutputKind : int {
    kOutputNone   = 0,
    kOutputValues = 1,  /* copy matching elements out as doubles */
    kOutputKeys   = 2   /* copy matching elements out as total-order keys */
};

/* What one pass over the data evaluates; passed to the kernel by value. */
struct PassDesc {
    int group_count;   /* groups whose elements the probes count (ignored by the first pass: one group, all data) */
    int probe_count;
    int window_count;  /* closed intervals whose elements are copied out */
    int output_kind;   /* OutputKind */
    uint64_t output_capacity;  /* elements the output buffer holds */
    double group_lo[kMaxGroups];
    double group_hi[kMaxGroups];
    double probe[kMaxProbes];
    int    probe_group[kMaxProbes];
    double window_lo[kMaxGroups];
    double window_hi[kMaxGroups];
};

/* Over all elements; only the first pass computes it. */
struct StatsResult {
    double min;
    double max;
    double sum;
    uint64_t nan_count;
    uint64_t negative_count;       /* x < 0 (so -0.0 is not negative) */
    uint64_t negative_zero_count;  /* x is -0.0 */
    uint64_t zero_count;           /* x == 0, either sign */
};

/* Over the elements x of the probe's group. */
struct ProbeResult {
    uint64_t less_count;     /* #(x < p) */
    double   less_sum;       /* sum of x < p */
    double   below_max;      /* max of x < p, or -Inf; not tracked by the first pass */
    double   at_or_above_min;/* min of x >= p, or +Inf; not tracked by the first pass */
};

struct PassResult {
    StatsResult stats;
    ProbeResult probe[kMaxProbes];
    uint64_t output_count;  /* elements that matched a window (may exceed the capacity) */
};

enum class PlanStatus {
    kOk,
    kNanInData,
    kInconsistent  /* counts that contradict each other: a bug, never an answer */
};

struct Group {
    double lo;            /* every element x of the group has lo <= x <= hi */
    double hi;
    bool lo_is_element;   /* lo is the group's smallest element (not just a bound) */
    bool hi_is_element;
    uint64_t below;       /* elements of the whole data below the group */
    uint64_t count;
    double sum;           /* of the group's elements; only steers Kelley's point */
    std::vector<size_t> ranks;  /* indices into the distinct ranks, unresolved */
};

class SelectionPlanner {
public:
    enum class Next { kProbe, kFinalSort, kDone };

    /* ranks ascending, 1 <= ranks[i] <= data_count. May throw std::bad_alloc. */
    void reset(uint64_t data_count, const size_t *ranks, size_t rank_count);

    /* True when the ranks are too many or too spread out for the probe passes
     * to beat one sort of all keys. */
    bool prefers_full_sort() const;

    /* The first pass, from the sorted sample (NaNs removed). Its stats decide
     * about NaN; its output buffer receives the speculative windows. */
    void plan_first_pass(const double *sorted_sample, size_t sample_count, PassDesc *desc);
    /* output_usable: the first pass's output holds every element of every
     * remaining group, so later passes may read it instead of the data. */
    PlanStatus absorb_first_pass(const PassResult &result, bool *output_usable);

    /* source_count: elements that the next pass reads. On kProbe, desc may ask
     * for compaction (output of every group's elements as values). */
    Next plan_next_pass(uint64_t source_count, PassDesc *desc);
    PlanStatus absorb_pass(const PassResult &result);

    /* The final pass copies every remaining group out as keys (desc), sorted
     * together: group g occupies a contiguous run of the sorted keys. positions
     * are indices into the sorted keys, one per unresolved rank; key_min and
     * key_max bound every key, so the sort may skip their common high bits. */
    void plan_final_sort(PassDesc *desc, std::vector<uint64_t> *positions,
                         uint64_t *key_count, uint64_t *key_min, uint64_t *key_max) const;
    /* values[i] is the element at positions[i]. */
    void absorb_final_sort(const double *values);

    /* results[i] for the i-th rank given to reset (all resolved by now). */
    void write_results(double *results) const;

    /* For tests and diagnostics. */
    int passes_after_first() const { return later_passes_; }
    const std::vector<Group> &groups() const { return groups_; }

private:
    struct Window { double lo, hi; };  /* lo <= x < hi; hi = +Inf: no upper bound */

    double resolve_value(uint64_t rank, double value) const;
    void resolve_trivial_groups();
    PlanStatus split_group(const Group &group, const std::vector<int> &probe_indices,
                           const PassDesc &desc, const PassResult &result,
                           bool extremes_tracked, std::vector<Group> *out) const;
    void add_later_probes(const Group &group, int group_index, int budget, PassDesc *desc) const;

    uint64_t n_ = 0;
    std::vector<size_t> rank_of_input_;  /* input index -> distinct rank index */
    std::vector<uint64_t> distinct_ranks_;
    std::vector<double> values_;          /* per distinct rank */
    std::vector<bool> resolved_;
    std::vector<Group> groups_;
    StatsResult stats_{};
    PassDesc last_desc_{};                /* the pass whose result is absorbed next */
    std::vector<int> probed_groups_;      /* group index of each group sent with probes */
    std::vector<Window> first_windows_;
    int later_passes_ = 0;
};

} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_SELECT_PLAN_H */
