/*
 * select_plan.cpp: where each selection pass probes the data, and how the exact
 * counts that come back narrow each requested rank to a group (see
 * select_plan.h for the method).
 */
#include "select_plan.h"

#include "total_order.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace statgpu_cuda {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/* Ranks whose sample windows overlap are served by one window and one set of
 * probes in the first pass. Positions are in units of sample elements. */
struct Cluster {
    size_t first;        /* distinct rank indices first..last */
    size_t last;
    double center_lo;    /* sample position of the first rank */
    double center_hi;    /* sample position of the last rank */
    double spread;       /* largest standard deviation of a rank's sample position */
};

/* Where x_(k) falls among the sorted sample: the number of sample elements
 * below it is binomial(s, q) with q = k/n. */
double sample_center(uint64_t k, uint64_t n, double s)
{
    const double q = (static_cast<double>(k) - 0.5) / static_cast<double>(n);
    return q * s - 0.5;
}

double sample_spread(uint64_t k, uint64_t n, double s)
{
    const double q = (static_cast<double>(k) - 0.5) / static_cast<double>(n);
    return std::sqrt(s * q * (1.0 - q));
}

/* Half-width of the speculative window, in sample elements: four standard
 * deviations plus a little for tiny spreads near the ends. */
double window_half_width(double spread) { return 4.0 * spread + 2.0; }

/* Speculative windows above this share of the data cost more to write than
 * they save. */
constexpr double kMaxWindowShare = 0.5;

std::vector<Cluster> cluster_ranks(const std::vector<uint64_t> &ranks, uint64_t n, double s)
{
    std::vector<Cluster> clusters;
    for (size_t i = 0; i < ranks.size(); ++i) {
        const double center = sample_center(ranks[i], n, s);
        const double spread = sample_spread(ranks[i], n, s);
        if (!clusters.empty()) {
            Cluster &last = clusters.back();
            /* Merge when the windows would share a sample element: their
             * outputs must not overlap. */
            const double last_upper = std::ceil(last.center_hi + window_half_width(last.spread));
            const double lower = std::floor(center - window_half_width(spread));
            if (lower <= last_upper) {
                last.last = i;
                last.center_hi = center;
                last.spread = std::max(last.spread, spread);
                continue;
            }
        }
        clusters.push_back(Cluster{i, i, center, center, spread});
    }
    return clusters;
}

/* The share of the data that the first pass's speculative windows hold,
 * estimated from sample positions. */
double window_share(const std::vector<Cluster> &clusters, double s)
{
    double share = 0.0;
    for (const Cluster &cluster : clusters) {
        const double half = window_half_width(cluster.spread);
        const double lo = std::max(0.0, std::floor(cluster.center_lo - half));
        const double hi = std::min(s, std::ceil(cluster.center_hi + half));
        share += (hi - lo) / s;
    }
    return share;
}

/* Adds value to probes unless it is there already; a repeat (a run of equal
 * values in the sample) becomes the next double up, which isolates the run. */
bool add_probe_value(std::vector<double> *probes, double value, double lo, double hi)
{
    for (int attempt = 0; attempt < 2; ++attempt) {
        if (std::isnan(value) || !(value > lo) || !(value <= hi))
            return false;
        if (std::find(probes->begin(), probes->end(), value) == probes->end()) {
            probes->push_back(value);
            return true;
        }
        value = std::nextafter(value, kInf);
    }
    return false;
}

/* The value below which about `count_below` of the group's elements lie, if
 * they were spread evenly in value between lo and hi. */
double interpolate_value(const Group &group, double count_below)
{
    const double count = static_cast<double>(group.count);
    const bool exact_ends = group.lo_is_element && group.hi_is_element;
    const double t = exact_ends ? (count_below - 0.5) / (count - 1.0) : count_below / count;
    const double width = group.hi - group.lo;
    if (std::isfinite(width))
        return group.lo + t * width;
    /* The width overflows near +-DBL_MAX; halves do not. */
    return 2.0 * (group.lo / 2.0 + t * (group.hi / 2.0 - group.lo / 2.0));
}

/* Likewise, spread evenly in total-order key space: roughly even in the
 * logarithm of the magnitude, which suits heavy tails and wide gaps. */
double interpolate_key(const Group &group, double count_below)
{
    const double count = static_cast<double>(group.count);
    const uint64_t key_lo = total_order_key(group.lo);
    const uint64_t key_hi = total_order_key(group.hi);
    if (key_hi <= key_lo + 1)
        return std::numeric_limits<double>::quiet_NaN();
    const uint64_t span = key_hi - key_lo;
    const long double t = static_cast<long double>(count_below) / static_cast<long double>(count);
    long double offset = t * static_cast<long double>(span);
    uint64_t step = offset < 1.0L ? 1 : offset >= static_cast<long double>(span) ? span
                                                                               : static_cast<uint64_t>(offset);
    return total_order_value(key_lo + step);
}

} /* namespace */

void SelectionPlanner::reset(uint64_t data_count, const size_t *ranks, size_t rank_count)
{
    n_ = data_count;
    distinct_ranks_.clear();
    rank_of_input_.assign(rank_count, 0);
    for (size_t i = 0; i < rank_count; ++i) {
        if (distinct_ranks_.empty() || distinct_ranks_.back() != ranks[i])
            distinct_ranks_.push_back(ranks[i]);
        rank_of_input_[i] = distinct_ranks_.size() - 1;
    }
    values_.assign(distinct_ranks_.size(), 0.0);
    resolved_.assign(distinct_ranks_.size(), false);
    groups_.clear();
    stats_ = StatsResult{};
    last_desc_ = PassDesc{};
    probed_groups_.clear();
    first_windows_.clear();
    later_passes_ = 0;
}

bool SelectionPlanner::prefers_full_sort() const
{
    /* Every group holds at least one distinct rank, and every first-pass
     * cluster needs two probes for its window. Without the speculative
     * windows every later pass reads all data again: on an H100, 16 ranks
     * spread over 2^27 elements took 47 ms that way, one sort of all keys
     * under 10 ms. */
    if (distinct_ranks_.size() > static_cast<size_t>(kMaxGroups))
        return true;
    const std::vector<Cluster> clusters = cluster_ranks(distinct_ranks_, n_, kSampleCount);
    return clusters.size() > static_cast<size_t>(kMaxProbes / 2) ||
           window_share(clusters, kSampleCount) > kMaxWindowShare;
}

double SelectionPlanner::resolve_value(uint64_t rank, double value) const
{
    if (value != 0.0)
        return value;
    /* Elements that compare equal to zero are the signed zeros; in total order
     * every -0.0 comes before every +0.0, and #(x < 0) counts neither. */
    const uint64_t rank_among_zeros = rank - stats_.negative_count;
    return rank_among_zeros <= stats_.negative_zero_count ? -0.0 : 0.0;
}

void SelectionPlanner::resolve_trivial_groups()
{
    std::vector<Group> kept;
    kept.reserve(groups_.size());
    for (Group &group : groups_) {
        std::vector<size_t> open;
        for (size_t index : group.ranks) {
            const uint64_t k = distinct_ranks_[index];
            bool done = true;
            if (group.lo == group.hi)
                values_[index] = resolve_value(k, group.lo);  /* all elements compare equal */
            else if (k == group.below + 1 && group.lo_is_element)
                values_[index] = resolve_value(k, group.lo);
            else if (k == group.below + group.count && group.hi_is_element)
                values_[index] = resolve_value(k, group.hi);
            else
                done = false;
            if (done)
                resolved_[index] = true;
            else
                open.push_back(index);
        }
        if (!open.empty()) {
            group.ranks = std::move(open);
            kept.push_back(std::move(group));
        }
    }
    groups_ = std::move(kept);
}

PlanStatus SelectionPlanner::split_group(const Group &group, const std::vector<int> &probe_indices,
                                         const PassDesc &desc, const PassResult &result,
                                         bool extremes_tracked, std::vector<Group> *out) const
{
    const size_t m = probe_indices.size();
    std::vector<uint64_t> less(m + 2);
    std::vector<double> sums(m + 2);
    less[0] = group.below;
    sums[0] = 0.0;
    for (size_t t = 0; t < m; ++t) {
        less[t + 1] = group.below + result.probe[probe_indices[t]].less_count;
        sums[t + 1] = result.probe[probe_indices[t]].less_sum;
    }
    less[m + 1] = group.below + group.count;
    sums[m + 1] = group.sum;
    for (size_t t = 0; t + 1 < less.size(); ++t)
        if (less[t] > less[t + 1])
            return PlanStatus::kInconsistent;

    size_t next_rank = 0;
    for (size_t cell = 0; cell <= m; ++cell) {
        Group child;
        child.below = less[cell];
        child.count = less[cell + 1] - less[cell];
        while (next_rank < group.ranks.size()) {
            const uint64_t k = distinct_ranks_[group.ranks[next_rank]];
            if (k <= child.below || k > child.below + child.count)
                break;
            child.ranks.push_back(group.ranks[next_rank]);
            ++next_rank;
        }
        if (child.ranks.empty())
            continue;

        if (cell == 0) {
            child.lo = group.lo;
            child.lo_is_element = group.lo_is_element;
        } else if (extremes_tracked) {
            child.lo = result.probe[probe_indices[cell - 1]].at_or_above_min;
            child.lo_is_element = true;
        } else {
            child.lo = desc.probe[probe_indices[cell - 1]];
            child.lo_is_element = false;
        }
        if (cell == m) {
            child.hi = group.hi;
            child.hi_is_element = group.hi_is_element;
        } else if (extremes_tracked) {
            child.hi = result.probe[probe_indices[cell]].below_max;
            child.hi_is_element = true;
        } else {
            /* The cell is x < p: its closed upper bound is the double below p. */
            child.hi = std::nextafter(desc.probe[probe_indices[cell]], -kInf);
            child.hi_is_element = false;
        }
        if (!(child.lo <= child.hi) || child.lo < group.lo || child.hi > group.hi)
            return PlanStatus::kInconsistent;
        child.sum = sums[cell + 1] - sums[cell];
        out->push_back(std::move(child));
    }
    if (next_rank != group.ranks.size())
        return PlanStatus::kInconsistent;
    return PlanStatus::kOk;
}

void SelectionPlanner::plan_first_pass(const double *sorted_sample, size_t sample_count, PassDesc *desc)
{
    *desc = PassDesc{};
    desc->group_count = 1;
    desc->group_lo[0] = -kInf;
    desc->group_hi[0] = kInf;
    first_windows_.clear();
    if (sample_count == 0) {  /* every sampled element was a NaN: the pass will say so */
        last_desc_ = *desc;
        return;
    }

    const double s = static_cast<double>(sample_count);
    const std::vector<Cluster> clusters = cluster_ranks(distinct_ranks_, n_, s);
    /* One cluster of nearby ranks (a median, a single quantile): 8 probes, as
     * every probe adds work per element to the fused first pass. */
    const bool single_target = clusters.size() == 1 &&
        distinct_ranks_.back() - distinct_ranks_.front() < n_ / static_cast<uint64_t>(s) + 1;
    const size_t budget = single_target ? 8 : static_cast<size_t>(kMaxProbes);
    const size_t per_cluster = std::max<size_t>(2, budget / clusters.size());

    auto sample_at = [&](double position) -> long {
        if (position < 0.0)
            return -1;                 /* before the sample: no bound on this side */
        if (position > s - 1.0)
            return static_cast<long>(sample_count);  /* after it */
        return static_cast<long>(position);
    };

    std::vector<double> probes;
    struct WindowIndex { long lo, hi; };
    std::vector<WindowIndex> window_indices;
    /* Window ends first: they are what makes the speculative output checkable. */
    for (const Cluster &cluster : clusters) {
        const double half = window_half_width(cluster.spread);
        const long lo = sample_at(std::floor(cluster.center_lo - half));
        const long hi = sample_at(std::ceil(cluster.center_hi + half));
        window_indices.push_back(WindowIndex{lo, hi});
    }
    std::vector<std::vector<double>> wanted(clusters.size());
    for (size_t c = 0; c < clusters.size(); ++c) {
        const Cluster &cluster = clusters[c];
        auto add_pair = [&](double width) {
            const long lo = sample_at(std::floor(cluster.center_lo - width));
            const long hi = sample_at(std::ceil(cluster.center_hi + width));
            if (lo >= 0)
                wanted[c].push_back(sorted_sample[lo]);
            if (hi < static_cast<long>(sample_count))
                wanted[c].push_back(sorted_sample[hi]);
        };
        add_pair(1.3 * cluster.spread + 1.0);
        /* Separate ranks of one cluster that lie far apart. */
        for (size_t i = cluster.first; i < cluster.last; ++i) {
            const double a = sample_center(distinct_ranks_[i], n_, s);
            const double b = sample_center(distinct_ranks_[i + 1], n_, s);
            if (b - a > cluster.spread / 2.0 + 2.0) {
                const long mid = sample_at(std::floor((a + b) / 2.0 + 0.5));
                if (mid >= 0 && mid < static_cast<long>(sample_count))
                    wanted[c].push_back(sorted_sample[mid]);
            }
        }
        add_pair(0.5 * cluster.spread + 1.0);
        add_pair(2.5 * cluster.spread + 1.0);
    }

    std::vector<size_t> used(clusters.size(), 0);
    for (size_t c = 0; c < clusters.size(); ++c) {
        const WindowIndex w = window_indices[c];
        double lo_value = -kInf, hi_value = kInf;
        if (w.lo >= 0) {
            lo_value = sorted_sample[w.lo];
            if (std::find(probes.begin(), probes.end(), lo_value) == probes.end())
                probes.push_back(lo_value);
            ++used[c];
        }
        if (w.hi < static_cast<long>(sample_count)) {
            hi_value = sorted_sample[w.hi];
            if (hi_value == lo_value)  /* a run of equal values: take all of it */
                hi_value = std::nextafter(hi_value, kInf);
            if (std::find(probes.begin(), probes.end(), hi_value) == probes.end())
                probes.push_back(hi_value);
            ++used[c];
        }
        /* Window c holds lo_value <= x < hi_value. */
        Window window;
        window.lo = lo_value;
        window.hi = hi_value;
        first_windows_.push_back(window);
    }
    /* A run of equal values can make neighbouring windows overlap (an upper
     * end of +Inf is no bound at all); their outputs must not, so merge them. */
    {
        std::vector<Window> merged;
        for (const Window &window : first_windows_) {
            if (!merged.empty() && (merged.back().hi == kInf || window.lo < merged.back().hi))
                merged.back().hi = std::max(merged.back().hi, window.hi);
            else
                merged.push_back(window);
        }
        first_windows_ = std::move(merged);
    }
    /* Then the ladders, round robin so every cluster gets its share. */
    for (size_t level = 0;; ++level) {
        bool any = false;
        for (size_t c = 0; c < clusters.size(); ++c) {
            if (level >= wanted[c].size() || used[c] >= per_cluster || probes.size() >= static_cast<size_t>(kMaxProbes))
                continue;
            any = true;
            if (add_probe_value(&probes, wanted[c][level], -kInf, kInf))
                ++used[c];
        }
        if (!any)
            break;
    }
    std::sort(probes.begin(), probes.end());
    if (probes.size() > static_cast<size_t>(kMaxProbes))
        probes.resize(kMaxProbes);  /* cannot happen: at most 8 clusters of 2 window ends */
    desc->probe_count = static_cast<int>(probes.size());
    for (size_t j = 0; j < probes.size(); ++j) {
        desc->probe[j] = probes[j];
        desc->probe_group[j] = 0;
    }

    /* Speculative output: worth it while the windows hold a small part of the
     * data; its size is only estimated, so the buffer has a margin and an
     * overflow merely cancels the speculation. */
    double fraction = 0.0, estimate = 0.0;
    for (const WindowIndex &w : window_indices) {
        const double lo = w.lo < 0 ? 0.0 : static_cast<double>(w.lo);
        const double hi = w.hi >= static_cast<long>(sample_count) ? s : static_cast<double>(w.hi);
        const double share = (hi - lo) / s;
        fraction += share;
        /* The share of the data between two sample elements that lie j apart
         * has a relative spread of about 1/sqrt(j): allow four of those. */
        estimate += share * static_cast<double>(n_) * (1.0 + 4.0 / std::sqrt(std::max(1.0, hi - lo)));
    }
    if (fraction <= kMaxWindowShare) {
        desc->output_kind = kOutputValues;
        desc->output_capacity = std::min<uint64_t>(n_, static_cast<uint64_t>(estimate + 65536.0));
        desc->window_count = static_cast<int>(first_windows_.size());
        for (size_t w = 0; w < first_windows_.size(); ++w) {
            desc->window_lo[w] = first_windows_[w].lo;
            /* [lo, hi) as a closed interval; hi = +Inf means no upper bound,
             * so +Inf elements belong to the window. */
            const double hi = first_windows_[w].hi;
            desc->window_hi[w] = hi == kInf ? kInf : std::nextafter(hi, -kInf);
        }
    }
    last_desc_ = *desc;
}

PlanStatus SelectionPlanner::absorb_first_pass(const PassResult &result, bool *output_usable)
{
    *output_usable = false;
    stats_ = result.stats;
    if (stats_.nan_count > 0)
        return PlanStatus::kNanInData;

    Group all;
    all.lo = stats_.min;
    all.hi = stats_.max;
    all.lo_is_element = true;
    all.hi_is_element = true;
    all.below = 0;
    all.count = n_;
    all.sum = stats_.sum;
    for (size_t i = 0; i < distinct_ranks_.size(); ++i)
        all.ranks.push_back(i);

    const PassDesc &desc = last_desc_;
    std::vector<int> probe_indices;
    for (int j = 0; j < desc.probe_count; ++j)
        probe_indices.push_back(j);
    std::vector<Group> children;
    const PlanStatus status = split_group(all, probe_indices, desc, result, false, &children);
    if (status != PlanStatus::kOk)
        return status;
    groups_ = std::move(children);
    resolve_trivial_groups();

    if (desc.output_kind == kOutputNone)
        return PlanStatus::kOk;
    if (result.output_count > desc.output_capacity)
        return PlanStatus::kOk;  /* the speculation overflowed its buffer */

    /* Window ends are probes, so each window's count is exact; an infinite
     * end stands for no bound on that side. */
    auto less_than = [&](double value, uint64_t *below) -> bool {
        for (int j = 0; j < desc.probe_count; ++j)
            if (desc.probe[j] == value) {
                *below = result.probe[j].less_count;
                return true;
            }
        return false;
    };
    uint64_t expected = 0;
    for (const Window &window : first_windows_) {
        uint64_t below_lo = 0, below_hi = n_;
        if ((window.lo != -kInf && !less_than(window.lo, &below_lo)) ||
            (window.hi != kInf && !less_than(window.hi, &below_hi)) || below_hi < below_lo)
            return PlanStatus::kInconsistent;
        expected += below_hi - below_lo;
    }
    if (result.output_count != expected)
        return PlanStatus::kInconsistent;

    for (const Group &group : groups_) {
        bool inside = false;
        for (const Window &window : first_windows_)
            if (group.lo >= window.lo && (window.hi == kInf || group.hi < window.hi))
                inside = true;
        if (!inside)
            return PlanStatus::kOk;
    }
    *output_usable = true;
    return PlanStatus::kOk;
}

void SelectionPlanner::add_later_probes(const Group &group, int group_index, int budget,
                                        PassDesc *desc) const
{
    const double count = static_cast<double>(group.count);
    const double ready = static_cast<double>(kReadyCount);

    /* Ranks closer together than half a sortable group share a target. */
    struct Target { double first, last; };
    std::vector<Target> targets;
    for (size_t index : group.ranks) {
        const double r = static_cast<double>(distinct_ranks_[index] - group.below);
        if (!targets.empty() && r - targets.back().last <= ready / 2.0)
            targets.back().last = r;
        else
            targets.push_back(Target{r, r});
    }

    /* Candidates in order of preference: tight value-space brackets first,
     * Kelley's point, key-space points for skewed or gapped data, then ever
     * wider brackets in case the interpolation is far off. */
    enum Kind { kValue, kKey, kKelley, kTop };
    struct Candidate { Kind kind; double below; int side; };  /* side -1 lower, +1 upper, 0 centre */
    const std::vector<Candidate> ladder = {
        {kValue, ready / 4.0, -1},  {kValue, ready / 4.0, +1},
        {kValue, ready, -1},        {kValue, ready, +1},
        {kKelley, 0.0, 0},          {kKey, 0.0, 0},
        {kValue, 4.0 * ready, -1},  {kValue, 4.0 * ready, +1},
        {kKey, ready, -1},          {kKey, ready, +1},
        {kValue, 16.0 * ready, -1}, {kValue, 16.0 * ready, +1},
        {kKey, 16.0 * ready, -1},   {kKey, 16.0 * ready, +1},
        {kValue, 64.0 * ready, -1}, {kValue, 64.0 * ready, +1},
        {kTop, 0.0, 0},
    };

    std::vector<double> probes;
    bool kelley_done = false;
    for (size_t level = 0; level < ladder.size() && static_cast<int>(probes.size()) < budget; ++level) {
        for (const Target &target : targets) {
            if (static_cast<int>(probes.size()) >= budget)
                break;
            const Candidate &c = ladder[level];
            double value = std::numeric_limits<double>::quiet_NaN();
            if (c.kind == kKelley) {
                if (kelley_done)
                    continue;
                kelley_done = true;
                value = group.sum / count;
            } else if (c.kind == kTop) {
                value = group.hi;
            } else {
                double below = c.side < 0 ? target.first - c.below
                             : c.side > 0 ? target.last + c.below
                                          : (target.first + target.last) / 2.0;
                if (below < 1.0 || below > count - 1.0)
                    continue;  /* the group's own bound already does this */
                value = c.kind == kValue ? interpolate_value(group, below) : interpolate_key(group, below);
            }
            add_probe_value(&probes, value, group.lo, group.hi);
        }
    }
    std::sort(probes.begin(), probes.end());
    for (double value : probes) {
        desc->probe[desc->probe_count] = value;
        desc->probe_group[desc->probe_count] = group_index;
        ++desc->probe_count;
    }
}

SelectionPlanner::Next SelectionPlanner::plan_next_pass(uint64_t source_count, PassDesc *desc)
{
    resolve_trivial_groups();
    if (groups_.empty())
        return Next::kDone;
    if (later_passes_ >= kMaxLaterPasses)
        return Next::kFinalSort;

    std::vector<int> active;
    uint64_t total = 0;
    for (size_t g = 0; g < groups_.size(); ++g) {
        total += groups_[g].count;
        if (groups_[g].count > kReadyCount)
            active.push_back(static_cast<int>(g));
    }
    if (active.empty())
        return Next::kFinalSort;

    *desc = PassDesc{};
    desc->group_count = static_cast<int>(groups_.size());
    for (size_t g = 0; g < groups_.size(); ++g) {
        desc->group_lo[g] = groups_[g].lo;
        desc->group_hi[g] = groups_[g].hi;
    }
    /* Copy the groups out while reading the source anyway, once that shrinks
     * what later passes read severalfold. */
    if (source_count / 4 >= total) {
        desc->output_kind = kOutputValues;
        desc->output_capacity = total;
        desc->window_count = desc->group_count;
        for (size_t g = 0; g < groups_.size(); ++g) {
            desc->window_lo[g] = groups_[g].lo;
            desc->window_hi[g] = groups_[g].hi;
        }
    }
    const size_t probed = std::min<size_t>(active.size(), kMaxProbes / 2);
    const int budget = kMaxProbes / static_cast<int>(probed);
    probed_groups_.clear();
    for (size_t a = 0; a < probed; ++a) {
        probed_groups_.push_back(active[a]);
        add_later_probes(groups_[active[a]], active[a], budget, desc);
    }
    last_desc_ = *desc;
    ++later_passes_;
    return Next::kProbe;
}

PlanStatus SelectionPlanner::absorb_pass(const PassResult &result)
{
    const PassDesc &desc = last_desc_;
    if (desc.output_kind != kOutputNone && result.output_count != desc.output_capacity)
        return PlanStatus::kInconsistent;

    std::vector<Group> next;
    for (size_t g = 0; g < groups_.size(); ++g) {
        std::vector<int> probe_indices;
        for (int j = 0; j < desc.probe_count; ++j)
            if (desc.probe_group[j] == static_cast<int>(g))
                probe_indices.push_back(j);
        if (probe_indices.empty()) {
            next.push_back(groups_[g]);
            continue;
        }
        const PlanStatus status = split_group(groups_[g], probe_indices, desc, result, true, &next);
        if (status != PlanStatus::kOk)
            return status;
    }
    groups_ = std::move(next);
    resolve_trivial_groups();
    return PlanStatus::kOk;
}

void SelectionPlanner::plan_final_sort(PassDesc *desc, std::vector<uint64_t> *positions,
                                       uint64_t *key_count, uint64_t *key_min, uint64_t *key_max) const
{
    *desc = PassDesc{};
    positions->clear();
    uint64_t offset = 0;
    desc->window_count = static_cast<int>(groups_.size());
    for (size_t g = 0; g < groups_.size(); ++g) {
        const Group &group = groups_[g];
        desc->window_lo[g] = group.lo;
        desc->window_hi[g] = group.hi;
        for (size_t index : group.ranks)
            positions->push_back(offset + (distinct_ranks_[index] - group.below - 1));
        offset += group.count;
    }
    desc->output_kind = kOutputKeys;
    desc->output_capacity = offset;
    *key_count = offset;
    if (groups_.empty()) {
        *key_min = 0;
        *key_max = 0;
        return;
    }
    /* A bound that compares equal to zero may stand for either signed zero. */
    const double lo = groups_.front().lo, hi = groups_.back().hi;
    *key_min = total_order_key(lo == 0.0 ? -0.0 : lo);
    *key_max = total_order_key(hi == 0.0 ? 0.0 : hi);
}

void SelectionPlanner::absorb_final_sort(const double *values)
{
    size_t i = 0;
    for (const Group &group : groups_)
        for (size_t index : group.ranks) {
            values_[index] = values[i++];
            resolved_[index] = true;
        }
    groups_.clear();
}

void SelectionPlanner::write_results(double *results) const
{
    for (size_t i = 0; i < rank_of_input_.size(); ++i)
        results[i] = values_[rank_of_input_[i]];
}

} /* namespace statgpu_cuda */
