/*
 * cutting_plane_plan.cpp: Kelley's cutting-plane iterations on the order
 * statistics objective, per cluster of ranks, and the bookkeeping that turns
 * the final copy_if + sort into exact answers (see cutting_plane_plan.h).
 */
#include "cutting_plane_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace statgpu_cuda {
namespace cutting_plane {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMaxFinite = std::numeric_limits<double>::max();
}

double transform(double x, bool log_transform)
{
    return log_transform ? std::copysign(std::log1p(std::fabs(x)), x) : x;
}

double inverse_transform(double u, bool log_transform)
{
    return log_transform ? std::copysign(std::expm1(std::fabs(u)), u) : u;
}

double kelley_point(double ua, double da, uint64_t below_a, double ub, double db, uint64_t upto_b, uint64_t n)
{
    /* Plane at a: da + (2 below_a - n)(u - ua); at b: db + (2 upto_b - n)(u - ub)
     * (the objective's terms in k add the same line to both and cancel). */
    const double slope_a = 2.0 * static_cast<double>(below_a) - static_cast<double>(n);
    const double slope_b = 2.0 * static_cast<double>(upto_b) - static_cast<double>(n);
    const double denominator = slope_b - slope_a;
    if (!(denominator > 0.0))
        return std::numeric_limits<double>::quiet_NaN();
    return (da - db + slope_b * ub - slope_a * ua) / denominator;
}

void Planner::reset(uint64_t data_count, const uint64_t *ranks, size_t rank_count)
{
    n_ = data_count;
    ranks_.assign(ranks, ranks + rank_count);
    values_.assign(rank_count, 0.0);
    resolved_.assign(rank_count, false);
    clusters_.clear();
    evaluated_.clear();
    points_.clear();
    copied_.clear();
    stats_ = Stats{};
    log_transform_ = false;
    passes_ = 0;
}

uint64_t Planner::sort_count() const
{
    return sort_count_override_ > 0 ? sort_count_override_ : std::max(kSortCount, n_ / kSortShare);
}

bool needs_log_transform(const Stats &stats)
{
    const double range = stats.max - stats.min;
    return !std::isfinite(range) || !std::isfinite(stats.sum) || range > kLogTransformRange;
}

double Planner::distance_offset(double u) const
{
    return (static_cast<double>(stats_.negative_infinity_count) - static_cast<double>(stats_.positive_infinity_count)) * u;
}

/* Rank `index` is an element equal in value to `value`, below_value elements
 * being smaller: the value itself, except that a zero needs its sign (the
 * -0.0 sort first among the zeros). */
void Planner::resolve(size_t index, double value, uint64_t below_value)
{
    if (value == 0.0)
        value = ranks_[index] - below_value <= stats_.negative_zero_count ? -0.0 : 0.0;
    values_[index] = value;
    resolved_[index] = true;
}

Status Planner::absorb_stats(const Stats &stats)
{
    stats_ = stats;
    if (stats.nan_count > 0)
        return Status::kNanInData;
    if (!(stats.min <= stats.max) || ranks_.empty())
        return Status::kInconsistent;
    log_transform_ = needs_log_transform(stats);
    if (stats.min == stats.max) {
        for (size_t i = 0; i < ranks_.size(); ++i)
            resolve(i, stats.min, 0);
        return Status::kOk;
    }
    const double finite = static_cast<double>(n_ - stats.negative_infinity_count - stats.positive_infinity_count);
    const double total = log_transform_ ? stats.transformed_sum : stats.sum;
    Cluster all;
    all.first = 0;
    all.last = ranks_.size() - 1;
    all.a = stats.min;
    all.b = stats.max;
    all.ua = transform(all.a, log_transform_);
    all.ub = transform(all.b, log_transform_);
    /* Every finite u(x) lies in [u(min), u(max)]; at an infinite end these
     * are not finite, and that end is split off before any plane is used. */
    all.da = total - finite * all.ua + distance_offset(all.ua);
    all.db = finite * all.ub - total + distance_offset(all.ub);
    all.below_a = 0;
    all.upto_b = n_;
    all.frozen = false;
    clusters_.push_back(all);
    return Status::kOk;
}

bool Planner::plan_pass(PassPoints *points)
{
    *points = PassPoints{};
    points->log_transform = log_transform_ ? 1 : 0;
    evaluated_.clear();
    points_.clear();
    if (passes_ >= kMaxPasses)
        return false;
    std::vector<size_t> candidates;
    for (size_t c = 0; c < clusters_.size(); ++c) {
        Cluster &cluster = clusters_[c];
        if (cluster.upto_b - cluster.below_a <= sort_count())
            cluster.frozen = true;
        if (!cluster.frozen)
            candidates.push_back(c);
    }
    if (candidates.empty() || candidates.size() > static_cast<size_t>(kMaxPoints))
        return false;
    for (size_t c : candidates) {
        const Cluster &cluster = clusters_[c];
        double y;
        if (cluster.a == -kInf) {
            y = -kMaxFinite;  /* splits the -Inf off: a < y <= b */
        } else if (cluster.b == kInf) {
            y = cluster.a < kMaxFinite ? kMaxFinite : kInf;
        } else {
            y = inverse_transform(
                kelley_point(cluster.ua, cluster.da, cluster.below_a, cluster.ub, cluster.db, cluster.upto_b, n_),
                log_transform_);
            if (!(y > cluster.a && y < cluster.b)) {
                /* The planes met outside (rounding) or not at all: bisect in u. */
                y = inverse_transform(cluster.ua / 2.0 + cluster.ub / 2.0, log_transform_);
            }
            if (!(y > cluster.a && y < cluster.b))
                y = cluster.b;  /* no number strictly between: split at b itself */
        }
        points->value[points->count] = y;
        points->transformed[points->count] = transform(y, log_transform_);
        ++points->count;
        evaluated_.push_back(c);
        points_.push_back(y);
    }
    ++passes_;
    return true;
}

Status Planner::absorb_pass(const PointResult *results)
{
    std::vector<Cluster> next;
    next.reserve(clusters_.size() + evaluated_.size());
    size_t e = 0;
    const double n = static_cast<double>(n_);
    for (size_t c = 0; c < clusters_.size(); ++c) {
        if (e >= evaluated_.size() || evaluated_[e] != c) {
            next.push_back(clusters_[c]);
            continue;
        }
        const Cluster cluster = clusters_[c];
        const PointResult &r = results[e];
        const double y = points_[e];
        ++e;
        const uint64_t less = r.less_count, upto = r.less_count + r.equal_count;
        /* a < y <= b, so #(x < a) <= #(x < y) and #(x <= y) <= #(x <= b). */
        if (upto < less || less < cluster.below_a || upto > cluster.upto_b)
            return Status::kInconsistent;
        const double uy = transform(y, log_transform_);
        const double dy = r.distance_sum + distance_offset(uy);  /* not finite only at y = +Inf, see plan_pass */
        size_t i = cluster.first;
        const size_t left_first = i;
        while (i <= cluster.last && ranks_[i] <= less)
            ++i;
        const size_t left_end = i;
        while (i <= cluster.last && ranks_[i] <= upto) {
            resolve(i, y, less);
            ++i;
        }
        const size_t right_first = i;
        if (left_end > left_first) {
            if (!(r.below_max >= cluster.a && r.below_max < y))
                return Status::kInconsistent;
            Cluster left = cluster;
            left.last = left_end - 1;
            left.b = r.below_max;
            left.ub = transform(left.b, log_transform_);
            /* No element lies strictly between below_max and y: the distance
             * sum is a line there, of slope 2 less - n. */
            left.db = dy - (uy - left.ub) * (2.0 * static_cast<double>(less) - n);
            left.upto_b = less;
            left.frozen = false;
            next.push_back(left);
        }
        if (right_first <= cluster.last) {
            if (!(r.above_min > y && r.above_min <= cluster.b))
                return Status::kInconsistent;
            Cluster right = cluster;
            right.first = right_first;
            right.a = r.above_min;
            right.ua = transform(right.a, log_transform_);
            right.da = dy + (right.ua - uy) * (2.0 * static_cast<double>(upto) - n);
            right.below_a = upto;
            right.frozen = false;
            next.push_back(right);
        }
    }
    clusters_ = std::move(next);
    /* A bracket of one value holds its ranks' answers. */
    std::vector<Cluster> open;
    for (const Cluster &cluster : clusters_) {
        if (cluster.a == cluster.b) {
            for (size_t i = cluster.first; i <= cluster.last; ++i)
                resolve(i, cluster.a, cluster.below_a);
            continue;
        }
        open.push_back(cluster);
    }
    clusters_ = std::move(open);
    return Status::kOk;
}

bool Planner::plan_copy(std::vector<Interval> *intervals, uint64_t *expected_count,
                        std::vector<uint64_t> *positions)
{
    intervals->clear();
    positions->clear();
    copied_.clear();
    *expected_count = 0;
    if (clusters_.empty())
        return false;
    /* Clusters ascend and are disjoint; merge neighbours (the elements
     * between them come along, their number known exactly) until few
     * enough intervals remain. */
    struct Part {
        double lo, hi;
        uint64_t below, upto;
        size_t first, last;
    };
    std::vector<Part> parts;
    for (const Cluster &cluster : clusters_)
        parts.push_back(Part{cluster.a, cluster.b, cluster.below_a, cluster.upto_b, cluster.first, cluster.last});
    while (parts.size() > kMaxIntervals) {
        size_t best = 0;
        for (size_t p = 1; p + 1 < parts.size(); ++p)
            if (parts[p + 1].below - parts[p].upto < parts[best + 1].below - parts[best].upto)
                best = p;
        parts[best].hi = parts[best + 1].hi;
        parts[best].upto = parts[best + 1].upto;
        parts[best].last = parts[best + 1].last;
        parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    }
    uint64_t offset = 0;
    for (const Part &part : parts) {
        intervals->push_back(Interval{part.lo, part.hi});
        for (size_t i = part.first; i <= part.last; ++i) {
            if (resolved_[i])
                continue;
            positions->push_back(offset + (ranks_[i] - part.below - 1));
            copied_.push_back(i);
        }
        offset += part.upto - part.below;
    }
    *expected_count = offset;
    return true;
}

void Planner::absorb_sorted(const double *values)
{
    for (size_t j = 0; j < copied_.size(); ++j) {
        values_[copied_[j]] = values[j];
        resolved_[copied_[j]] = true;
    }
    clusters_.clear();
    copied_.clear();
}

bool Planner::resolved() const
{
    return std::all_of(resolved_.begin(), resolved_.end(), [](bool r) { return r; });
}

void Planner::write_results(double *results) const
{
    std::copy(values_.begin(), values_.end(), results);
}

} /* namespace cutting_plane */
} /* namespace statgpu_cuda */
