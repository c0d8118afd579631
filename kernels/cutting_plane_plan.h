/*
 * cutting_plane_plan.h: the host logic of STATGPU_SELECT_CUTTING_PLANE, the
 * hybrid of Beliakov, "Parallel calculation of the median and order statistics
 * on GPUs with application to robust regression" (2011). Plain C++, no CUDA:
 * the device does the reductions, this decides where to evaluate next.
 *
 * The k-th smallest x_(k) of n numbers minimises the convex, piecewise-linear
 *     f_k(y) = sum_i |x_i - y| + (n - 2k + 1) y,
 * whose left and right slopes at y are 2L - 2k + 1 and 2(L + E) - 2k + 1 with
 * L = #(x < y) and E = #(x == y). The method, as in the paper:
 *   1. one reduction gives min, max and sum, so f_k and a subgradient are
 *      known at both ends of [min, max];
 *   2. Kelley's cutting-plane iterations: the next point is where the
 *      cutting planes (tangent lines) at the two ends of the current bracket
 *      meet; one pass over the data evaluates f_k and the subgradient counts
 *      there in one transform-reduce (sum |x_i - y|, L, E), and the bracket
 *      end on the wrong side of the answer moves to that point;
 *   3. after a few iterations, copy_if of the elements inside the bracket and
 *      a radix sort of their total-order keys; the answer is read off at its
 *      position, so it is exact in IEEE total order.
 * Each pass also returns the largest element below the point and the smallest
 * above it, so a bracket end is always an element and the bracket can shrink
 * to a single value (all-equal or two-valued data end at once).
 *
 * The paper's log transform: when max - min or the sum overflows or is huge,
 * the iterations run on u = sign(x) log(1 + |x|) instead of x. The map is
 * strictly monotone, so it changes no count and no rank, only where the planes
 * meet (in value space Kelley's point moves like bisection across a range of
 * 1e300; in u it takes a few steps). The point is mapped back with
 * sign(u) (exp(|u|) - 1); every count is still taken on x itself.
 *
 * Infinities: the sum of distances is taken over the finite elements, plus
 * (#-Inf - #+Inf) u for the infinite ones; that differs from the true sum by
 * an infinite constant, which cancels where two planes meet. A bracket end
 * at -Inf or +Inf is split off first, by a point at -DBL_MAX or +DBL_MAX.
 *
 * Several ranks: the ranks start as one cluster sharing one bracket; a point
 * that falls between ranks splits the cluster, and each cluster then iterates
 * on its own bracket (its own cutting planes). A pass evaluates one new point
 * for each of up to kMaxPoints clusters. Intervals of the clusters are
 * disjoint, so one copy_if and one sort serve them all.
 */
#ifndef STATGPU_KERNELS_CUTTING_PLANE_PLAN_H
#define STATGPU_KERNELS_CUTTING_PLANE_PLAN_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace statgpu_cuda {
namespace cutting_plane {

/* Points one pass evaluates (the kernel keeps their sums in registers). */
constexpr int kMaxPoints = 16;
/* Kelley passes before whatever is left is sorted. */
constexpr int kMaxPasses = 12;
/* A cluster whose bracket holds at most max(kSortCount, n / kSortShare)
 * elements stops iterating: sorting them costs less than another pass. */
constexpr uint64_t kSortCount = uint64_t{1} << 20;
constexpr uint64_t kSortShare = 128;
/* Intervals the copy_if pass takes at most (neighbours merge beyond). */
constexpr size_t kMaxIntervals = 256;
/* max - min beyond this (or not finite), or a sum that is not finite: the
 * iterations run on the log transform. */
constexpr double kLogTransformRange = 1e8;

/* Over all elements x (floats widened to double); the first pass. */
struct Stats {
    double min;
    double max;
    double sum;              /* of the finite x */
    double transformed_sum;  /* of sign(x) log(1 + |x|) over the finite x */
    uint64_t nan_count;
    uint64_t negative_count;       /* x < 0 (so -0.0 is not negative) */
    uint64_t zero_count;           /* x == 0, either sign */
    uint64_t negative_zero_count;  /* x is -0.0 */
    uint64_t negative_infinity_count;
    uint64_t positive_infinity_count;
};

/* What one pass evaluates; passed to the kernel by value. */
struct PassPoints {
    int count;
    int log_transform;              /* distances are taken in u, not x */
    double value[kMaxPoints];       /* y: counts compare x with y */
    double transformed[kMaxPoints]; /* u(y) */
};

/* At one point y, over all elements x. */
struct PointResult {
    double distance_sum;  /* sum |u(x) - u(y)| over the finite x */
    uint64_t less_count;  /* #(x < y) */
    uint64_t equal_count; /* #(x == y) */
    double below_max;     /* largest x < y, or -Inf */
    double above_min;     /* smallest x > y, or +Inf */
};

/* A closed value interval for copy_if. */
struct Interval {
    double lo;
    double hi;
};

enum class Status { kOk, kNanInData, kInconsistent };

double transform(double x, bool log_transform);

/* Whether the iterations run on the log transform: max - min or the sum is
 * not finite, or the range exceeds kLogTransformRange. The first reduction
 * skips the transformed sum; only then does a second one take it. */
bool needs_log_transform(const Stats &stats);
double inverse_transform(double u, bool log_transform);

/* Kelley's point: where the cutting planes of f at the bracket ends meet.
 * ua, ub: the ends (in u); da, db: sum |u(x) - u| there; below_a = #(x < a),
 * upto_b = #(x <= b); the slopes are those of the objective at each end from
 * outside the bracket. The rank k cancels: the planes of f_k for any k meet
 * at the same u. Returns NaN where the planes do not meet. */
double kelley_point(double ua, double da, uint64_t below_a, double ub, double db, uint64_t upto_b,
                    uint64_t n);

class Planner {
public:
    /* ranks ascending and distinct in [1, data_count]. May throw std::bad_alloc. */
    void reset(uint64_t data_count, const uint64_t *ranks, size_t rank_count);
    /* A bracket of at most this many elements stops iterating (default
     * max(kSortCount, n / kSortShare)); for tests and tuning. */
    void set_sort_count(uint64_t count) { sort_count_override_ = count; }

    Status absorb_stats(const Stats &stats);
    bool log_transform() const { return log_transform_; }

    /* The next pass's points; false when the iterations are over: every
     * bracket is small, kMaxPasses are done, or more brackets remain than one
     * pass evaluates (spread ranks: their brackets cover most of the data,
     * which the sort then takes). */
    bool plan_pass(PassPoints *points);
    Status absorb_pass(const PointResult *results);

    /* The copy_if: disjoint ascending intervals, the elements they hold in
     * all, and for each unresolved rank its position among their sorted keys.
     * False when every rank is resolved already. */
    bool plan_copy(std::vector<Interval> *intervals, uint64_t *expected_count,
                   std::vector<uint64_t> *positions);
    /* values[i]: the element at positions[i]. */
    void absorb_sorted(const double *values);

    bool resolved() const;
    void write_results(double *results) const;  /* per distinct rank */
    int passes() const { return passes_; }
    size_t cluster_count() const { return clusters_.size(); }

private:
    struct Cluster {
        size_t first;      /* distinct ranks first..last */
        size_t last;
        double a, b;       /* every answer of the cluster lies in [a, b]; both are elements */
        double ua, ub;     /* u(a), u(b) */
        double da, db;     /* sum |u(x) - u(a)|, likewise at b */
        uint64_t below_a;  /* #(x < a) */
        uint64_t upto_b;   /* #(x <= b) */
        bool frozen;
    };

    void resolve(size_t index, double value, uint64_t below_value);
    uint64_t sort_count() const;
    /* The sum of distances at u, up to the constant of the infinities. */
    double distance_offset(double u) const;

    uint64_t n_ = 0;
    std::vector<uint64_t> ranks_;
    std::vector<double> values_;
    std::vector<bool> resolved_;
    std::vector<Cluster> clusters_;
    std::vector<size_t> evaluated_;  /* clusters evaluated by the last pass, in point order */
    std::vector<double> points_;
    std::vector<size_t> copied_;     /* ranks read from the sorted copy, in position order */
    Stats stats_{};
    bool log_transform_ = false;
    int passes_ = 0;
    uint64_t sort_count_override_ = 0;
};

} /* namespace cutting_plane */
} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_CUTTING_PLANE_PLAN_H */
