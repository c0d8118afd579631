/*
 * radix_plan.cpp: the first pass of radix selection, planned on the host from
 * a sorted sample of the keys (see radix_plan.h for the method): Floyd-Rivest
 * windows around few ranks, or knots at sample quantiles for many, and a
 * bracket of its own for every key that the sample shows to be heavy.
 */
#include "radix_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace statgpu_cuda {
namespace radix {

namespace {

struct Window {
    uint32_t first;  /* sample positions first..last */
    uint32_t last;
};

/* Ascending cut points inside a key range: a knot starts a new subdivided
 * part at its key; a heavy key becomes a bracket of its own. */
struct Cut {
    uint64_t key;
    bool heavy;
};

class BracketList {
public:
    explicit BracketList(std::vector<Bracket> *out) : out_(out) {}

    void add(uint64_t lo, uint64_t hi, uint32_t flags)
    {
        Bracket b{};
        b.lo = lo;
        b.hi = hi;
        b.flags = flags;
        out_->push_back(b);
    }

    /* Brackets covering [from, to] exactly, split at cuts (ascending keys,
     * each inside [from, to]). Parts between cuts get part_flags. */
    void cover(uint64_t from, uint64_t to, const std::vector<Cut> &cuts, uint32_t part_flags)
    {
        uint64_t current = from;
        bool done = false;
        for (const Cut &cut : cuts) {
            if (done || cut.key < current)
                continue;
            if (cut.heavy) {
                if (cut.key > current)
                    add(current, cut.key - 1, part_flags);
                add(cut.key, cut.key, kCells);  /* one key: never compacted, resolves its ranks */
                if (cut.key == to)
                    done = true;
                else
                    current = cut.key + 1;
            } else if (cut.key > current) {
                add(current, cut.key - 1, part_flags);
                current = cut.key;
            }
        }
        if (!done)
            add(current, to, part_flags);
    }

private:
    std::vector<Bracket> *out_;
};

/* Runs of equal keys at least `threshold` long, as (key, first position, length). */
struct Run {
    uint64_t key;
    uint32_t first;
    uint32_t length;
};

std::vector<Run> heavy_runs(const uint64_t *sample, uint32_t count, uint32_t threshold)
{
    std::vector<Run> runs;
    uint32_t i = 0;
    while (i < count) {
        uint32_t j = i + 1;
        while (j < count && sample[j] == sample[i])
            ++j;
        if (j - i >= threshold)
            runs.push_back(Run{sample[i], i, j - i});
        i = j;
    }
    return runs;
}

/* Sample elements with keys in [lo, hi]. */
uint32_t sample_count_in(const uint64_t *sample, uint32_t count, uint64_t lo, uint64_t hi)
{
    const uint64_t *begin = std::lower_bound(sample, sample + count, lo);
    const uint64_t *end = std::upper_bound(sample, sample + count, hi);
    return end > begin ? static_cast<uint32_t>(end - begin) : 0;
}

}  /* namespace */

bool plan_first_pass(const uint64_t *sorted_sample, uint32_t sample_count, uint64_t data_count,
                     const uint64_t *ranks, uint32_t rank_count, uint32_t key_bits, uint64_t capacity_a,
                     uint64_t capacity_b, Plan *plan, FirstPassInfo *info)
{
    if (sorted_sample == nullptr || sample_count == 0 || data_count == 0 || ranks == nullptr ||
        rank_count == 0 || rank_count > kMaxRanks || (key_bits != 32 && key_bits != 64) || plan == nullptr)
        return false;
    for (uint32_t i = 0; i < rank_count; ++i)
        if (ranks[i] < 1 || ranks[i] > data_count || (i > 0 && ranks[i] <= ranks[i - 1]))
            return false;
    for (uint32_t i = 1; i < sample_count; ++i)
        if (sorted_sample[i] < sorted_sample[i - 1])
            return false;
    const uint64_t top = max_key(key_bits);
    if (sorted_sample[sample_count - 1] > top)
        return false;

    const double s = static_cast<double>(sample_count);
    const double n = static_cast<double>(data_count);

    /* Sample windows around the ranks, merged where they touch. */
    std::vector<Window> windows;
    for (uint32_t i = 0; i < rank_count; ++i) {
        const double q = (static_cast<double>(ranks[i]) - 0.5) / n;
        const double center = q * s - 0.5;
        const double half = kWindowSigmas * std::sqrt(s * q * (1.0 - q)) + kWindowSlack;
        const double lo = std::max(0.0, std::floor(center - half));
        const double hi = std::min(s - 1.0, std::ceil(center + half));
        Window w{static_cast<uint32_t>(lo), static_cast<uint32_t>(std::max(lo, hi))};
        if (!windows.empty() && w.first <= windows.back().last + 1)
            windows.back().last = std::max(windows.back().last, w.last);
        else
            windows.push_back(w);
    }

    /* A key whose sample run is long gets a bracket of its own; the bar rises
     * until the brackets fit. */
    std::vector<Bracket> brackets;
    uint32_t mode = 0;
    uint32_t threshold = 2;
    double window_share = 0.0;
    bool windows_allowed = true;
    for (;; threshold *= 2) {
        brackets.clear();
        const std::vector<Run> runs = heavy_runs(sorted_sample, sample_count, threshold);
        BracketList list(&brackets);

        /* Floyd-Rivest windows: their key ranges, the share of the sample
         * they hold apart from heavy keys, and the gaps between them. */
        double compacted = 0.0;
        std::vector<std::pair<uint64_t, uint64_t>> ranges;
        for (const Window &w : windows) {
            const uint64_t lo = w.first == 0 ? 0 : sorted_sample[w.first];
            const uint64_t hi = w.last + 1 >= sample_count ? top : sorted_sample[w.last];
            if (!ranges.empty() && lo <= ranges.back().second) {  /* runs of equal keys overlap */
                ranges.back().second = std::max(ranges.back().second, hi);
                continue;
            }
            ranges.emplace_back(lo, hi);
        }
        for (const auto &range : ranges) {
            double inside = sample_count_in(sorted_sample, sample_count, range.first, range.second);
            for (const Run &run : runs)
                if (run.key >= range.first && run.key <= range.second)
                    inside -= run.length;
            compacted += std::max(0.0, inside);
        }
        window_share = compacted / s;
        /* The compacted share is only estimated: leave room for four of its
         * standard deviations. */
        const double expected = window_share * n;
        const double margin = 4.0 * std::sqrt(std::max(1.0, compacted)) / s * n + 4096.0;
        const bool windows_fit = windows_allowed && window_share <= kMaxWindowShare &&
                                 expected + margin <= static_cast<double>(capacity_a);

        if (windows_fit) {
            mode = kModeWindows;
            uint64_t current = 0;
            bool done = false;
            for (const auto &range : ranges) {
                if (range.first > current)
                    list.add(current, range.first - 1, kCells | kSingleCell);  /* a gap: counted only */
                std::vector<Cut> cuts;
                for (const Run &run : runs)
                    if (run.key >= range.first && run.key <= range.second)
                        cuts.push_back(Cut{run.key, true});
                list.cover(range.first, range.second, cuts, kCells | kCompact);
                if (range.second == top) {
                    done = true;
                    break;
                }
                current = range.second + 1;
            }
            if (!done)
                list.add(current, top, kCells | kSingleCell);
        } else {
            /* Knots at every kKnotSpacing-th sample key, heavy keys apart. */
            mode = kModeKnots;
            std::vector<Cut> cuts;
            size_t run_index = 0;
            for (uint32_t position = kKnotSpacing; position < sample_count || run_index < runs.size();) {
                const uint64_t knot_key = position < sample_count ? sorted_sample[position] : top;
                if (run_index < runs.size() && runs[run_index].key <= knot_key) {
                    cuts.push_back(Cut{runs[run_index].key, true});
                    ++run_index;
                    continue;
                }
                if (position >= sample_count)
                    break;
                cuts.push_back(Cut{knot_key, false});
                position += kKnotSpacing;
            }
            list.cover(0, top, cuts, kCells);
        }
        if (brackets.size() <= kMaxBrackets)
            break;
        if (threshold > sample_count) {
            if (mode == kModeKnots)
                break;
            /* Too many separate windows: knots always fit. */
            windows_allowed = false;
            threshold = 1;
        }
    }
    if (brackets.size() > kMaxBrackets)
        return false;

    std::memset(static_cast<void *>(plan), 0, sizeof *plan);
    plan->outcome.status = kRunning;
    plan->outcome.mode = mode;
    plan->partition = 1;
    plan->bracket_count = static_cast<uint32_t>(brackets.size());
    std::copy(brackets.begin(), brackets.end(), plan->brackets);
    plan->cell_count = assign_cells(plan->brackets, plan->bracket_count);
    plan->key_bits = key_bits;
    if (mode == kModeWindows)
        assign_thresholds(plan);
    list_kernel_brackets(plan);
    plan->source = kSourceData;
    plan->output = kNoOutput;
    for (const Bracket &b : brackets)
        if (b.flags & kCompact)
            plan->output = kBufferA;
    plan->rank_count = rank_count;
    plan->data_count = data_count;
    plan->source_count = data_count;
    plan->capacity[kBufferA] = capacity_a;
    plan->capacity[kBufferB] = capacity_b;
    for (uint32_t i = 0; i < rank_count; ++i) {
        plan->ranks[i] = ranks[i];
        plan->rank_state[i] = kRankActive;
    }
    if (info != nullptr) {
        info->mode = mode;
        info->heavy_run_length = threshold;
        info->window_share = mode == kModeWindows ? window_share : 1.0;
    }
    return true;
}

} /* namespace radix */
} /* namespace statgpu_cuda */
