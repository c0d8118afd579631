/*
 * radix_plan.h: the planning half of radix selection (STATGPU_SELECT_RADIX):
 * which key ranges each pass over the data looks at, how the histogram that a
 * pass returns narrows every requested rank, and when the candidates are few
 * enough to finish in one block. Plain C++ with no CUDA calls: the device's
 * picker kernel runs these same functions between passes (no host round trip),
 * and the CPU test simulates the passes with them.
 *
 * Keys are IEEE total-order keys (total_order.h), 64-bit for doubles and
 * 32-bit for floats, always carried here in 64 bits.
 *
 * The method. A pass reads a source (the data, or a buffer of candidate keys
 * compacted by an earlier pass) and looks at brackets: disjoint, ascending key
 * ranges [lo, hi]. A bracket is split into cells,
 *     cell = cell_base + min((key - lo) >> shift, cell_count - 1),
 * so the cells of a bracket are consecutive key ranges: a radix digit of the
 * key relative to lo. The pass histograms the cells (block-local shared-memory
 * histograms, then one global add), optionally copies the keys of the brackets
 * out (compaction), and copies the keys of small brackets into per-bracket
 * segments (collection). Between passes the picker, one block on the device,
 * takes the exclusive prefix sum of the histogram and puts every rank into its
 * cell; the rank's cell becomes the next pass's bracket. A bracket whose range
 * holds a single key resolves its ranks outright; one that holds at most
 * kSegmentCapacity elements is collected, then sorted by one block.
 *
 * The first pass is sample-guided. A sorted sample of kSampleCount keys says
 * roughly where each rank lies. If the ranks are few (a median, a few
 * quantiles), the first pass brackets a window of about +-4 standard
 * deviations of the sample position around each rank (a Floyd-Rivest
 * bracket), counts everything below, histograms and compacts the window: the
 * one full read of the data, and later passes read only the window. If the
 * windows would hold much of the data (many spread ranks, percentiles), the
 * first pass instead partitions the whole key range at sample quantiles
 * (knots) and histograms every part finely, without compaction; the second
 * pass then compacts exactly the cells that hold ranks. In both modes a key
 * repeated often in the sample gets a bracket of its own, so a rank that falls
 * into a heavy point mass (all-equal, two-valued, many zeros) is resolved
 * after the first pass. Every count is exact, so a sample that misleads costs
 * a pass, never the answer: a rank outside its window is found in the count
 * of the gap that holds it, and the next pass reads the data again.
 */
#ifndef STATGPU_KERNELS_RADIX_PLAN_H
#define STATGPU_KERNELS_RADIX_PLAN_H

#include "total_order.h"

#include <cstddef>
#include <cstdint>

namespace statgpu_cuda {
namespace radix {

/* Distinct ranks per run; more are selected in several runs. */
constexpr uint32_t kMaxRanks = 256;
/* Brackets per pass. */
constexpr uint32_t kMaxBrackets = 512;
/* Cells shared by the subdivided brackets of a pass; brackets of one cell
 * come on top, so a pass never uses more than kMaxCells. */
constexpr uint32_t kCellBudget = 4096;
constexpr uint32_t kMaxCells = kCellBudget + kMaxBrackets;
/* Sorted sample that places the first pass. */
constexpr uint32_t kSampleCount = 4096;
/* A bracket of at most this many elements is collected and sorted by one block. */
constexpr uint64_t kSegmentCapacity = 4096;
/* Knot mode: sample elements between knots (so 64 parts of the key range). */
constexpr uint32_t kKnotSpacing = 64;
/* Half-width of a first-pass window, in standard deviations of the rank's
 * position in the sample; plus kWindowSlack sample elements. */
constexpr double kWindowSigmas = 4.0;
constexpr double kWindowSlack = 2.0;
/* The windows are compacted (Floyd-Rivest mode) only while the sample says
 * they hold at most this share of the data. */
constexpr double kMaxWindowShare = 0.125;
/* Later passes compact once the brackets hold at most 1/kCompactRatio of what
 * the pass reads. */
constexpr uint64_t kCompactRatio = 4;
/* Passes after which the picker gives up (a bug, never the data: every pass
 * shrinks every bracket's key range at least 16-fold). */
constexpr uint32_t kMaxLevels = 64;
/* First pass: key thresholds t whose counts #(key < t) the kernel keeps in
 * registers. The gaps between windows and the heavy keys hold most of the
 * data and need only a count: two comparisons per element instead of a
 * shared-memory atomic on one hot cell. Used only while at most one bracket
 * remains for the kernel to look up (see assign_thresholds). */
constexpr uint32_t kMaxThresholds = 8;

/* Bracket flags. */
constexpr uint32_t kCells = 1u;       /* histogram its cells */
constexpr uint32_t kCompact = 2u;     /* copy its keys to the pass's output buffer */
constexpr uint32_t kCollect = 4u;     /* copy its keys to its segment (no cells) */
constexpr uint32_t kSingleCell = 8u;  /* first-pass gap: one cell, whatever its range */
constexpr uint32_t kThreshold = 16u;  /* counted through thresholds, not by the kernel's histogram */

/* Where a pass reads from and writes to. */
constexpr uint32_t kSourceData = 0u;
constexpr uint32_t kBufferA = 1u;
constexpr uint32_t kBufferB = 2u;
constexpr uint32_t kNoOutput = 0u;

/* Outcome status. */
constexpr uint32_t kRunning = 0u;
constexpr uint32_t kFinished = 1u;     /* every rank resolved or collected */
constexpr uint32_t kNanInData = 2u;
constexpr uint32_t kInconsistent = 3u; /* counts that contradict each other: a bug */

/* Rank state. */
constexpr uint32_t kRankActive = 0u;
constexpr uint32_t kRankResolved = 1u;
constexpr uint32_t kRankCollected = 2u;

struct Bracket {
    uint64_t lo;          /* keys lo..hi, inclusive */
    uint64_t hi;
    uint64_t below;       /* elements of the whole data with key < lo (set by the picker in the first pass) */
    uint64_t count;       /* elements with key in [lo, hi] (likewise) */
    uint32_t flags;
    uint32_t cell_base;   /* kCells: cells cell_base .. cell_base + cell_count - 1 */
    uint32_t cell_count;
    uint32_t shift;       /* kCells: cell width is 2^shift keys (the last cell takes the rest) */
    uint32_t segment;     /* kCollect: its segment */
    uint32_t rank_first;  /* later passes: ranks rank_first .. rank_end - 1 lie here */
    uint32_t rank_end;
    uint32_t pad;
};

/* A collected bracket: sorted by one block at the end. */
struct Segment {
    uint64_t below;
    uint64_t count;
    uint64_t lo;  /* its keys lie in [lo, hi]: the sort looks at the bits they differ in */
    uint64_t hi;
    uint32_t rank_first;
    uint32_t rank_end;
};

/* What the host copies back. */
struct Outcome {
    uint32_t status;
    uint32_t level;          /* passes planned so far */
    uint32_t segment_count;
    uint32_t mode;           /* first pass: 1 windows (Floyd-Rivest), 2 knots */
    double results[kMaxRanks];
};

constexpr uint32_t kModeWindows = 1u;
constexpr uint32_t kModeKnots = 2u;

/* The device-resident state between passes. */
struct Plan {
    Outcome outcome;
    uint32_t partition;      /* brackets partition the key space: the first pass */
    uint32_t bracket_count;
    uint32_t cell_count;
    uint32_t source;         /* kSourceData, kBufferA or kBufferB */
    uint32_t output;         /* kNoOutput, kBufferA or kBufferB */
    uint32_t rank_count;
    uint32_t key_bits;       /* 64 or 32 */
    uint32_t fresh_segment;  /* segments from this index on are filled by the coming pass */
    uint64_t data_count;
    uint64_t source_count;
    uint64_t capacity[3];    /* elements that buffers A ([1]) and B ([2]) hold */
    uint32_t threshold_count;
    uint32_t kernel_bracket_count;   /* brackets the kernel looks up: those without kThreshold */
    uint64_t thresholds[kMaxThresholds];  /* ascending keys */
    uint64_t ranks[kMaxRanks];       /* 1-based, ascending, distinct */
    uint32_t rank_state[kMaxRanks];
    Segment segments[kMaxRanks];
    uint16_t kernel_brackets[kMaxBrackets];  /* their indices, ascending */
    Bracket brackets[kMaxBrackets];
};

/* Written by a pass, read and cleared by the picker. */
struct Counters {
    unsigned long long cells[kMaxCells];
    unsigned long long prefix[kMaxCells + 1];  /* the picker's exclusive prefix sum of cells */
    unsigned long long output_count;           /* keys the pass compacted (may exceed the capacity) */
    unsigned long long nan_count;              /* first pass only */
    unsigned long long below_threshold[kMaxThresholds];  /* #(key < thresholds[t]) */
    unsigned int segment_fill[kMaxRanks];
};

/* Where one rank lies after a pass. */
struct Located {
    uint64_t lo;
    uint64_t hi;
    uint64_t below;
    uint64_t count;
    uint32_t valid;
    uint32_t compacted;  /* its bracket's keys are in the pass's output */
};

STATGPU_HOST_DEVICE inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* The sample position of element i of kSampleCount: one element of each of
 * kSampleCount equal strides, at a hashed offset inside the stride, so that
 * periodic data does not fool the sample and sorted data gives a perfect one. */
STATGPU_HOST_DEVICE inline uint64_t sample_position(uint32_t i, uint64_t n)
{
    const uint64_t s = kSampleCount;
    const uint64_t start = (n / s) * i + ((n % s) * i) / s;
    const uint64_t next = (n / s) * (i + 1) + ((n % s) * (i + 1)) / s;
    const uint64_t stride = next > start ? next - start : 1;
    uint64_t z = (static_cast<uint64_t>(i) + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const uint64_t position = start + z % stride;
    return position < n ? position : n - 1;
}

/* The cell of key within bracket fields (lo, cell_base, cell_count, shift);
 * the kernel's formula, for the simulations. */
STATGPU_HOST_DEVICE inline uint32_t cell_of(uint64_t key, const Bracket &b)
{
    const uint64_t offset = (key - b.lo) >> b.shift;
    return b.cell_base + static_cast<uint32_t>(min_u64(offset, b.cell_count - 1));
}

/* Whether a bracket of cells takes a share of the cell budget (more than
 * one cell possible). */
STATGPU_HOST_DEVICE inline bool shares_cell_budget(const Bracket &b)
{
    return (b.flags & kCells) && !(b.flags & kSingleCell) && b.hi > b.lo;
}

/* A bracket of cells' shift for its share `budget` of the cells, and its
 * cells in *cells. */
STATGPU_HOST_DEVICE inline uint32_t cell_shift(const Bracket &b, uint32_t budget, uint64_t *cells)
{
    const uint64_t span = b.hi - b.lo;  /* keys in the bracket, minus one */
    uint32_t shift = 0;
    *cells = 1;
    if (!(b.flags & kSingleCell) && span > 0 && budget > 1) {
        /* The smallest shift with span >> shift < budget: at most budget
         * cells. From the bit lengths, then at most one step more. */
        const int excess = bit_length(span) - bit_length(budget);
        shift = excess > 0 ? static_cast<uint32_t>(excess) : 0u;
        if ((span >> shift) >= budget)
            ++shift;
        *cells = (span >> shift) + 1;
    } else if (span > 0) {
        shift = 63;  /* one cell: every offset clamps to 0 */
    }
    return shift;
}

/* Splits each kCells bracket into cells: a subdivided bracket gets at most
 * kCellBudget / (number of subdivided brackets) cells of 2^shift keys each;
 * a single key, a kSingleCell gap and anything else one cell. Returns the
 * cells used. */
STATGPU_HOST_DEVICE inline uint32_t assign_cells(Bracket *brackets, uint32_t bracket_count)
{
    uint32_t subdivided = 0;
    for (uint32_t j = 0; j < bracket_count; ++j)
        if (shares_cell_budget(brackets[j]))
            ++subdivided;
    const uint32_t budget = subdivided > 0 ? kCellBudget / subdivided : 1;
    uint32_t base = 0;
    for (uint32_t j = 0; j < bracket_count; ++j) {
        Bracket &b = brackets[j];
        if (!(b.flags & kCells)) {
            b.cell_base = 0;
            b.cell_count = 0;
            b.shift = 0;
            continue;
        }
        uint64_t cells;
        const uint32_t shift = cell_shift(b, budget, &cells);
        b.cell_base = base;
        b.cell_count = static_cast<uint32_t>(cells);
        b.shift = shift;
        base += static_cast<uint32_t>(cells);
    }
    return base;
}

/* Lists the brackets the kernel looks up (all but the threshold-counted). */
STATGPU_HOST_DEVICE inline void list_kernel_brackets(Plan *plan)
{
    uint32_t count = 0;
    for (uint32_t j = 0; j < plan->bracket_count; ++j)
        if (!(plan->brackets[j].flags & kThreshold))
            plan->kernel_brackets[count++] = static_cast<uint16_t>(j);
    plan->kernel_bracket_count = count;
}

/* First pass: lets the thresholds count the gaps (kSingleCell) and the
 * single keys, in key order, while kMaxThresholds suffice. Bracket j needs
 * lo_j (unless 0) and hi_j + 1 (unless the largest key); neighbours share.
 * The kernel counts thresholds only in its loops for at most one looked-up
 * bracket (the median's window), so where more brackets would remain, none
 * is threshold-counted and the histogram counts every bracket. */
STATGPU_HOST_DEVICE inline void assign_thresholds(Plan *plan)
{
    const uint64_t top = max_key(plan->key_bits);
    uint32_t count = 0;
    for (uint32_t j = 0; j < plan->bracket_count; ++j) {
        Bracket &b = plan->brackets[j];
        b.flags &= ~kThreshold;
        if (!(b.flags & kCells) || b.cell_count != 1 || (b.flags & (kCompact | kCollect)))
            continue;
        if (!(b.flags & kSingleCell) && b.lo != b.hi)
            continue;
        uint64_t wanted[2];
        uint32_t wanted_count = 0;
        if (b.lo > 0 && (count == 0 || plan->thresholds[count - 1] != b.lo))
            wanted[wanted_count++] = b.lo;
        if (b.hi < top)
            wanted[wanted_count++] = b.hi + 1;
        if (count + wanted_count > kMaxThresholds)
            break;
        for (uint32_t w = 0; w < wanted_count; ++w)
            plan->thresholds[count++] = wanted[w];
        b.flags |= kThreshold;
    }
    uint32_t looked_up = 0;
    for (uint32_t j = 0; j < plan->bracket_count; ++j)
        looked_up += (plan->brackets[j].flags & kThreshold) ? 0u : 1u;
    if (looked_up > 1) {
        for (uint32_t j = 0; j < plan->bracket_count; ++j)
            plan->brackets[j].flags &= ~kThreshold;
        count = 0;
    }
    plan->threshold_count = count;
}

/* #(key < t) for a threshold t of the plan; ~0 when t is none (a bug that
 * the picker's total check then catches). */
STATGPU_HOST_DEVICE inline unsigned long long below_threshold(const Plan &plan, const Counters &counters, uint64_t t)
{
    for (uint32_t i = 0; i < plan.threshold_count; ++i)
        if (plan.thresholds[i] == t)
            return counters.below_threshold[i];
    return ~0ull;
}

/* Picker, before the prefix sum: the cell of a threshold-counted bracket
 * gets its count, #(key <= hi) - #(key < lo). */
STATGPU_HOST_DEVICE inline void fill_threshold_cell(const Plan &plan, Counters *counters, uint32_t j)
{
    const Bracket &b = plan.brackets[j];
    if (!(b.flags & kThreshold))
        return;
    const unsigned long long upto = b.hi == max_key(plan.key_bits) ? plan.source_count
                                                                   : below_threshold(plan, *counters, b.hi + 1);
    const unsigned long long below = b.lo == 0 ? 0ull : below_threshold(plan, *counters, b.lo);
    counters->cells[b.cell_base] = upto - below;
}

/* First pass only: the bracket's exact count and the elements below it, from
 * the prefix sum (its brackets partition the key space in ascending order). */
STATGPU_HOST_DEVICE inline void settle_bracket(Plan *plan, const unsigned long long *prefix, uint32_t j)
{
    Bracket &b = plan->brackets[j];
    b.below = prefix[b.cell_base];
    b.count = prefix[b.cell_base + b.cell_count] - prefix[b.cell_base];
}

/* Puts rank index r into the cell of the last pass that holds it. */
STATGPU_HOST_DEVICE inline Located locate_rank(const Plan &plan, const unsigned long long *prefix, uint32_t r)
{
    Located located{};
    if (r >= plan.rank_count || plan.rank_state[r] != kRankActive || plan.bracket_count == 0)
        return located;
    const uint64_t k = plan.ranks[r];
    /* The last bracket at or before the rank. */
    uint32_t first = 0, last = plan.bracket_count - 1;
    while (first < last) {
        const uint32_t middle = first + (last - first + 1) / 2;
        const bool at_or_before = plan.partition ? plan.brackets[middle].below < k
                                                 : plan.brackets[middle].rank_first <= r;
        if (at_or_before)
            first = middle;
        else
            last = middle - 1;
    }
    const Bracket &b = plan.brackets[first];
    if (!(b.flags & kCells) || b.cell_count == 0)
        return located;
    if (!plan.partition && (r < b.rank_first || r >= b.rank_end))
        return located;
    if (k <= b.below || k - b.below > b.count)
        return located;
    const uint64_t local = k - b.below;
    /* The first cell whose running count reaches the local rank. */
    const unsigned long long start = prefix[b.cell_base];
    uint32_t lo = 0, hi = b.cell_count - 1;
    while (lo < hi) {
        const uint32_t middle = lo + (hi - lo) / 2;
        if (prefix[b.cell_base + middle + 1] - start >= local)
            hi = middle;
        else
            lo = middle + 1;
    }
    const uint32_t c = lo;
    located.below = b.below + (prefix[b.cell_base + c] - start);
    located.count = prefix[b.cell_base + c + 1] - prefix[b.cell_base + c];
    if (b.cell_count == 1) {
        located.lo = b.lo;
        located.hi = b.hi;
    } else {
        located.lo = b.lo + (static_cast<uint64_t>(c) << b.shift);
        const uint64_t width_less_one = (uint64_t{1} << b.shift) - 1;
        located.hi = (c == b.cell_count - 1 || width_less_one >= b.hi - located.lo) ? b.hi
                                                                                   : located.lo + width_less_one;
    }
    located.compacted = (b.flags & kCompact) != 0;
    located.valid = located.count > 0 && located.lo <= located.hi;
    return located;
}

/* build_next's checks of the pass's counts, where the caller made them (the
 * device's picker, with every thread of its block): whether the fresh
 * segments' fills and the subdivided brackets' cell counts match what was
 * known before the pass (see pass_checks_hold), and the count of the keys in
 * compacted brackets. */
struct PassChecks {
    bool segments_hold;
    bool counts_hold;
    uint64_t compacted;
};

/* Check j (of max(segments, brackets)) of the pass's counts: false where it
 * fails. Segment j (from fresh_segment) filled exactly; bracket j's cells
 * (a pass that was no partition) adding up to its known count. */
STATGPU_HOST_DEVICE inline bool segment_fill_holds(const Plan &p, const Counters &counters, uint32_t s)
{
    return s < p.fresh_segment || s >= p.outcome.segment_count || counters.segment_fill[s] == p.segments[s].count;
}
STATGPU_HOST_DEVICE inline bool bracket_count_holds(const Plan &p, const unsigned long long *prefix, uint32_t j)
{
    const Bracket &b = p.brackets[j];
    return p.partition || !(b.flags & kCells) || prefix[b.cell_base + b.cell_count] - prefix[b.cell_base] == b.count;
}

/* The bracket that rank r, located at l, starts. */
STATGPU_HOST_DEVICE inline Bracket bracket_of(const Located &l, uint32_t r)
{
    Bracket b{};
    b.lo = l.lo;
    b.hi = l.hi;
    b.below = l.below;
    b.count = l.count;
    b.flags = l.compacted ? kCompact : 0u;  /* until classified: where its keys are */
    b.rank_first = r;
    b.rank_end = r + 1;
    return b;
}

/* The segment that collects bracket b's keys. */
STATGPU_HOST_DEVICE inline Segment segment_of(const Bracket &b)
{
    Segment segment;
    segment.below = b.below;
    segment.count = b.count;
    segment.lo = b.lo;
    segment.hi = b.hi;
    segment.rank_first = b.rank_first;
    segment.rank_end = b.rank_end;
    return segment;
}

/* The next pass's source and output, once its brackets are kept: the
 * compacted keys when they hold every bracket (else the same source again:
 * a first-pass window that missed, or an overflow), and an output where the
 * subdivided brackets' keys are few enough to compact. Returns whether they
 * are (their brackets then take kCompact). */
STATGPU_HOST_DEVICE inline bool choose_next_source(Plan &p, bool output_valid, bool all_compacted,
                                                   uint64_t output_count, uint64_t subdivided_total)
{
    if (output_valid && all_compacted) {
        p.source = p.output;
        p.source_count = output_count;
    }
    const uint32_t target = p.source == kBufferA ? kBufferB : kBufferA;
    p.output = kNoOutput;
    if (subdivided_total > 0 && subdivided_total <= p.source_count / kCompactRatio &&
        subdivided_total <= p.capacity[target]) {
        p.output = target;
        return true;
    }
    return false;
}

/* The picker's serial part, after every rank is located: checks the counts,
 * resolves and collects, and writes the next pass's brackets, source and
 * output into plan. prefix: the exclusive prefix sum of counters.cells
 * (wherever the picker keeps it). Thread 0 of the picker runs it. */
STATGPU_HOST_DEVICE inline void build_next(Plan *plan, const Located *located, const unsigned long long *prefix,
                                           const Counters &counters, const PassChecks *checks = nullptr)
{
    Plan &p = *plan;
    Outcome &o = p.outcome;
    if (o.status != kRunning)
        return;
    if (p.partition && counters.nan_count > 0) {
        o.status = kNanInData;
        return;
    }
    if (p.partition && prefix[p.cell_count] != p.data_count) {
        o.status = kInconsistent;
        return;
    }
    /* Segments created last time were filled by this pass: exactly. Counts
     * known before this pass must match what it counted. */
    bool hold = checks != nullptr ? checks->segments_hold && checks->counts_hold : true;
    for (uint32_t s = p.fresh_segment; checks == nullptr && s < o.segment_count; ++s)
        hold = hold && segment_fill_holds(p, counters, s);
    for (uint32_t j = 0; checks == nullptr && j < p.bracket_count; ++j)
        hold = hold && bracket_count_holds(p, prefix, j);
    if (!hold) {
        o.status = kInconsistent;
        return;
    }
    p.fresh_segment = o.segment_count;
    const bool output_valid = p.output != kNoOutput && counters.output_count <= p.capacity[p.output];
    if (p.output != kNoOutput && output_valid && !p.partition) {
        /* A later pass compacts every subdivided bracket, all counts known. */
        uint64_t expected = checks != nullptr ? checks->compacted : 0;
        for (uint32_t j = 0; checks == nullptr && j < p.bracket_count; ++j)
            if (p.brackets[j].flags & kCompact)
                expected += p.brackets[j].count;
        if (expected != counters.output_count) {
            o.status = kInconsistent;
            return;
        }
    }

    /* The next brackets, in place: every rank's cell, ranks sharing a cell
     * sharing a bracket (ranks ascend, so they are neighbours). */
    uint32_t count = 0;
    bool all_compacted = true;
    for (uint32_t r = 0; r < p.rank_count; ++r) {
        if (p.rank_state[r] != kRankActive)
            continue;
        const Located &l = located[r];
        if (!l.valid || p.ranks[r] <= l.below || p.ranks[r] - l.below > l.count) {
            o.status = kInconsistent;
            return;
        }
        if (count > 0) {
            Bracket &previous = p.brackets[count - 1];
            if (previous.lo == l.lo && previous.below == l.below) {
                previous.rank_end = r + 1;
                continue;
            }
        }
        if (count >= kMaxBrackets) {  /* at most one per rank, so never */
            o.status = kInconsistent;
            return;
        }
        p.brackets[count++] = bracket_of(l, r);
    }
    uint32_t kept = 0;
    uint64_t subdivided_total = 0;
    for (uint32_t j = 0; j < count; ++j) {
        Bracket b = p.brackets[j];
        const bool compacted = (b.flags & kCompact) != 0;
        if (b.lo == b.hi) {  /* one key: the value of every rank here */
            const double value = key_to_double(b.lo, p.key_bits);
            for (uint32_t r = b.rank_first; r < b.rank_end; ++r) {
                o.results[r] = value;
                p.rank_state[r] = kRankResolved;
            }
            continue;
        }
        if (b.count <= kSegmentCapacity) {
            const uint32_t s = o.segment_count++;
            p.segments[s] = segment_of(b);
            for (uint32_t r = b.rank_first; r < b.rank_end; ++r)
                p.rank_state[r] = kRankCollected;
            b.flags = kCollect;
            b.segment = s;
        } else {
            b.flags = kCells;
            subdivided_total += b.count;
        }
        all_compacted = all_compacted && compacted;
        p.brackets[kept++] = b;
    }
    p.bracket_count = kept;
    p.partition = 0;
    ++o.level;
    if (kept == 0) {
        o.status = kFinished;
        p.output = kNoOutput;
        p.cell_count = 0;
        return;
    }
    if (o.level >= kMaxLevels) {
        o.status = kInconsistent;
        return;
    }
    if (choose_next_source(p, output_valid, all_compacted, counters.output_count, subdivided_total))
        for (uint32_t j = 0; j < kept; ++j)
            if (p.brackets[j].flags & kCells)
                p.brackets[j].flags |= kCompact;
    p.cell_count = assign_cells(p.brackets, kept);
    p.threshold_count = 0;
    list_kernel_brackets(&p);
}

/* What plan_first_pass decided, for tests and notes. */
struct FirstPassInfo {
    uint32_t mode;             /* kModeWindows or kModeKnots */
    uint32_t heavy_run_length; /* sample run that earned a key its own bracket */
    double window_share;       /* estimated share of the data in compacted windows */
};

/* Plans the first pass (host only): ranks[0..rank_count-1] ascending and
 * distinct in [1, data_count], rank_count <= kMaxRanks; sample sorted keys,
 * sample_count of them (NaN keys may be among them). capacity_a and
 * capacity_b: elements the candidate buffers hold. Returns false on bad
 * arguments. */
bool plan_first_pass(const uint64_t *sorted_sample, uint32_t sample_count, uint64_t data_count,
                     const uint64_t *ranks, uint32_t rank_count, uint32_t key_bits, uint64_t capacity_a,
                     uint64_t capacity_b, Plan *plan, FirstPassInfo *info);

} /* namespace radix */
} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_RADIX_PLAN_H */
