/*
 * radix_select.cu: STATGPU_SELECT_RADIX on the device (radix_plan.h has the
 * method): the sample kernel, the pass kernel (bracket search, cell
 * histogram, compaction, collection), the picker kernel that plans the next
 * pass on the device, the final per-segment block sort, and the host driver
 * that launches them.
 *
 * A call: sample and sort 4096 keys in one block; one copy of the sorted
 * sample to the host, which plans the first pass; then passes and pickers
 * back to back on the stream, with no host round trip in between, and the
 * final sorts; one copy of the outcome back. Passes that find nothing left
 * to do return at once, so the host launches a few levels at a time.
 */
#include "device_common.cuh"
#include "radix_plan.h"
#include "selection.h"

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace statgpu_cuda {

namespace {

using radix::Bracket;
using radix::Counters;
using radix::Located;
using radix::Plan;

constexpr int kPickThreads = 512;
constexpr int kPickItems = (radix::kMaxCells + kPickThreads - 1) / kPickThreads;
constexpr int kSortThreads = 512;
constexpr int kSortItems = 8;
static_assert(kSortThreads * kSortItems == static_cast<int>(radix::kSampleCount), "one block sorts the sample");
static_assert(kSortThreads * kSortItems == static_cast<int>(radix::kSegmentCapacity), "one block sorts a segment");
static_assert(radix::kMaxCells < (1u << 13) && radix::kMaxBrackets <= 65536, "packed bracket fields");
static_assert(radix::kMaxBrackets <= 512, "the general loop searches at most 2^9 brackets");

/* A bracket as the pass kernel keeps it: cell base (13 bits), cells - 1
 * (13 bits), shift (6 bits). */
__host__ __device__ inline uint32_t pack_cells(const Bracket &b)
{
    const uint32_t cells_less_one = b.cell_count > 0 ? b.cell_count - 1 : 0;
    return (b.cell_base & 0x1FFFu) | (cells_less_one & 0x1FFFu) << 13 | (b.shift & 0x3Fu) << 26;
}

/* Keys a warp stages before it writes them out with one global atomic:
 * room for two tiles' worth of its lanes. */
template <typename Key>
struct WarpStage {
    static constexpr int kCapacity = 2 * 32 * Tile<Key>::kItems;
};

template <typename Key>
struct PassShared {
    unsigned histogram[radix::kMaxCells];
    Key stage[kWarps][WarpStage<Key>::kCapacity];
    Key lo[radix::kMaxBrackets];
    Key hi[radix::kMaxBrackets];
    /* The general loop's search tree: lo[1 .. 2^depth - 1] in Eytzinger
     * (breadth-first) order at 1 .. 2^depth - 1, so that a step's probes
     * are consecutive entries (lo itself put every step's probes at
     * multiples of its stride, in a few banks): 32-bit keys whole, 64-bit
     * keys by their high words (where those strictly ascend; else the
     * search runs on lo, and a tree of whole 64-bit keys would not fit in
     * the 48 KiB of static shared memory). */
    uint32_t tree[radix::kMaxBrackets];
    uint32_t cells[radix::kMaxBrackets];
    uint16_t segment[radix::kMaxBrackets];
    uint8_t flags[radix::kMaxBrackets];
    Key thresholds[radix::kMaxThresholds];
    uint64_t source_count;
    uint64_t output_capacity;
    uint32_t status;
    uint32_t partition;
    uint32_t source;
    uint32_t output;
    uint32_t bracket_count;  /* the kernel's brackets */
    uint32_t threshold_count;
    uint32_t cell_count;
    uint32_t has_collect;
};

/* Copies the wanted lanes' keys into their segments: lanes of one segment
 * share one global atomic. Collected brackets are small, so this is rare. */
template <typename Key>
__device__ __forceinline__ void collect_append(bool want, unsigned segment, Key key, unsigned *d_fill,
                                               Key *d_segments)
{
    bool pending = want;
    for (;;) {
        const unsigned mask = __ballot_sync(0xffffffffu, pending);
        if (mask == 0)
            break;
        const int leader = __ffs(static_cast<int>(mask)) - 1;
        const unsigned leader_segment = __shfl_sync(0xffffffffu, segment, leader);
        const bool same = pending && segment == leader_segment;
        const unsigned group = __ballot_sync(0xffffffffu, same);
        unsigned base = 0;
        if (static_cast<int>(lane_id()) == leader)
            base = atomicAdd(&d_fill[leader_segment], static_cast<unsigned>(__popc(group)));
        base = __shfl_sync(0xffffffffu, base, leader);
        if (same) {
            const unsigned position = base + __popc(group & lanes_below());
            if (position < radix::kSegmentCapacity)
                d_segments[static_cast<size_t>(leader_segment) * radix::kSegmentCapacity + position] = key;
        }
        pending = pending && !same;
    }
}

/* A cell of a bracket packed by pack_cells, for a key inside it. */
template <typename Key>
__device__ __forceinline__ unsigned bracket_cell(Key key, Key lo, uint32_t cells)
{
    const uint64_t offset = static_cast<uint64_t>(static_cast<Key>(key - lo)) >> (cells >> 26);
    const uint64_t last = (cells >> 13) & 0x1FFFu;
    return (cells & 0x1FFFu) + static_cast<unsigned>(offset < last ? offset : last);
}

/* Writes a warp's staged keys at the next free place of d_output, one
 * global atomic for all of them; keys past `capacity` are counted but not
 * written, so the picker sees the overflow. kCount (the staged window,
 * kLoopWindowStaged): every staged key also counts in its cell of the
 * window (lo, cells), all lanes busy, rather than one divergent shared
 * atomic per key in the loop. */
template <typename Key, bool kCount>
__device__ __forceinline__ void warp_flush(const Key *warp_stage, unsigned count, Key *d_output,
                                           unsigned long long *d_output_count, uint64_t capacity,
                                           unsigned *histogram, Key lo, uint32_t cells)
{
    __syncwarp();
    unsigned long long base = 0;
    if (lane_id() == 0)
        base = atomicAdd(d_output_count, static_cast<unsigned long long>(count));
    base = __shfl_sync(0xffffffffu, base, 0);
    for (unsigned i = lane_id(); i < count; i += 32) {
        const Key key = warp_stage[i];
        if (base + i < capacity)
            d_output[base + i] = key;
        if (kCount)
            atomicAdd(&histogram[bracket_cell<Key>(key, lo, cells)], 1u);
    }
    __syncwarp();
}

/* What a pass kernel's loop needs besides the shared memory. */
template <typename Key>
struct PassLoop {
    const Key *src;
    Key *out;
    Key *d_segments;
    Counters *d_counters;
    uint64_t count;
    uint64_t output_capacity;
    uint32_t bracket_count;
    uint32_t threshold_count;
    bool convert;
    bool check_nan;
    bool vector_ok;
    bool compacting;
    bool collecting;
    bool high_words;  /* 64-bit keys whose brackets' high words strictly ascend */
};

/* Loop variants. kWindow: one bracket whose ends are the two thresholds
 * (the median's first pass: two comparisons give both gap counts and the
 * range test). kWindowStaged: the same where the window is both counted in
 * cells and compacted, and nothing collected: the loop only compares and
 * stages, and the cells are counted from the stage when it is flushed
 * (ncu, float32 median of 2^27 on the H200: 66 instructions an element in
 * kWindow, a third of them the divergent cell count). kFew: at most one
 * bracket, up to kMaxThresholds thresholds. kGeneral: a binary search over
 * the brackets. */
enum LoopKind { kLoopWindow, kLoopWindowStaged, kLoopFew, kLoopGeneral };

/* A pass's switches fixed at compile time (kFixed with the others), for the
 * general loops of the percentiles' two full passes: the first partitions
 * the keyed data and counts its NaNs, the second compacts from the data;
 * every other pass reads them at run time (kRunTime). */
enum PassSwitch {
    kRunTime = 0,
    kFixed = 1,
    kConvert = 2,
    kCheckNan = 4,
    kHighWords = 8,
    kCompacting = 16,
    kCollecting = 32,
    kJoined = 64,  /* the brackets cover the keys from 0 to the largest without a gap */
};
constexpr int kPartitionPass = kFixed | kConvert | kCheckNan | kHighWords;
constexpr int kCompactionPass = kFixed | kConvert | kHighWords | kCompacting;

/* The loop over the source. */
template <typename Key, int kKind, int kDepth = 0, int kSwitches = kRunTime>
__device__ __forceinline__ void pass_loop(PassShared<Key> &s, const PassLoop<Key> &loop)
{
    /* The switches, as constants where kSwitches fixes them. */
    PassLoop<Key> a = loop;
    if (kSwitches & kFixed) {
        a.convert = (kSwitches & kConvert) != 0;
        a.check_nan = (kSwitches & kCheckNan) != 0;
        a.high_words = (kSwitches & kHighWords) != 0;
        a.compacting = (kSwitches & kCompacting) != 0;
        a.collecting = (kSwitches & kCollecting) != 0;
    }
    using TileOf = Tile<Key>;
    constexpr int kItems = TileOf::kItems;
    constexpr unsigned kFlushAt = WarpStage<Key>::kCapacity - 32 * kItems;
    constexpr bool kStaged = kKind == kLoopWindowStaged;
    constexpr int kThresholds = kKind == kLoopWindow || kStaged ? 2
                                : kKind == kLoopFew               ? static_cast<int>(radix::kMaxThresholds)
                                                                  : 0;
    Key threshold[kThresholds > 0 ? kThresholds : 1];
    unsigned below[kThresholds > 0 ? kThresholds : 1];
#pragma unroll
    for (int t = 0; t < kThresholds; ++t) {
        threshold[t] = s.thresholds[t < static_cast<int>(a.threshold_count) ? t : 0];
        below[t] = 0;
    }
    /* At most one bracket: in registers (an empty range when there is none). */
    const Key few_lo = a.bracket_count > 0 ? s.lo[0] : Key{1};
    const Key few_hi = a.bracket_count > 0 ? s.hi[0] : Key{0};
    const uint32_t few_flags = a.bracket_count > 0 ? s.flags[0] : 0u;
    const uint32_t few_cells = s.cells[0];
    const unsigned few_segment = s.segment[0];
    const unsigned lane_mask_below = lanes_below();
    Key *const warp_stage = s.stage[threadIdx.x >> 5];
    unsigned *const histogram = s.histogram;
    unsigned staged = 0;  /* the same in every lane of the warp */
    unsigned nan_count = 0;

    const uint64_t stride = static_cast<uint64_t>(gridDim.x) * TileOf::kSize;
    uint64_t tile = static_cast<uint64_t>(blockIdx.x) * TileOf::kSize;
    Key word[kItems], next_word[kItems];
    bool valid[kItems], next_valid[kItems];
    load_tile<Key>(a.src, a.count, tile, a.vector_ok, word, valid);
    for (; tile < a.count; tile += stride) {
        if (tile + stride < a.count)
            load_tile<Key>(a.src, a.count, tile + stride, a.vector_ok, next_word, next_valid);
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            const Key key = a.convert ? key_from_bits(word[i]) : word[i];
            if (a.check_nan)
                nan_count += (valid[i] && key_is_nan(key)) ? 1u : 0u;
            bool inside;
            uint32_t flags, cells;
            Key lo;
            unsigned segment;
            if (kKind == kLoopWindow || kStaged) {
                const bool under_lo = key < threshold[0];
                const bool under_end = key < threshold[1];
                below[0] += (valid[i] && under_lo) ? 1u : 0u;
                below[1] += (valid[i] && under_end) ? 1u : 0u;
                inside = valid[i] && !under_lo && under_end;
                /* Staged: the cells are counted at the flush. */
                flags = inside ? (kStaged ? radix::kCompact : few_flags) : 0u;
                cells = few_cells;
                lo = threshold[0];
                segment = few_segment;
            } else if (kKind == kLoopFew) {
#pragma unroll
                for (int t = 0; t < kThresholds; ++t)
                    below[t] += (valid[i] && key < threshold[t]) ? 1u : 0u;
                inside = valid[i] && key >= few_lo && key <= few_hi;
                flags = inside ? few_flags : 0u;
                cells = few_cells;
                lo = few_lo;
                segment = few_segment;
            } else {
                /* The last bracket whose lower end is <= key, by kDepth
                 * unrolled steps down the tree of lower ends 1 .. 2^kDepth - 1
                 * (or over lo in order: probes reach 2^kDepth - 1 at most;
                 * those past the brackets are the largest key, so no real
                 * key passes them); lower end 0 by the check below. A step
                 * is a shared load, a compare and a shift-add; the loop
                 * bounded at run time took 12 instructions a step
                 * (ncu/SASS, H200 machine), and a search over lo in sorted
                 * order read each step's probes from a few banks (Nsight
                 * Compute: 61% of the pass's shared wavefronts were
                 * conflicts, bench/NOTES.md "order statistics v4"). */
                int position = 0;
                if (sizeof(Key) == 4 || a.high_words) {
                    /* 64-bit keys on the high words, then one full
                     * comparison: with strictly ascending high words only
                     * the candidate can share the key's high word and still
                     * lie above it. */
                    const uint32_t key_word =
                        static_cast<uint32_t>(sizeof(Key) == 8 ? static_cast<uint64_t>(key) >> 32 : key);
                    /* The node as a byte offset into the tree, so that a
                     * step is a load, a compare, a select and one
                     * shift-add (node by node it took six). After kDepth
                     * steps the node is 2^kDepth plus the count of lo[1 ..]
                     * passed. */
                    const char *tree = reinterpret_cast<const char *>(s.tree);
                    uint32_t offset = sizeof(uint32_t);  /* node 1 */
#pragma unroll
                    for (int step = 0; step < kDepth; ++step)
                        offset = 2 * offset +
                                 (*reinterpret_cast<const uint32_t *>(tree + offset) <= key_word ? 4u : 0u);
                    position = static_cast<int>(offset / sizeof(uint32_t)) - (1 << kDepth);  /* last of lo[1 ..], or 0 */
                } else {
                    constexpr int kFirstStep = kDepth > 0 ? 1 << (kDepth - 1) : 0;  /* general loops only */
#pragma unroll
                    for (int step = kFirstStep; step > 0; step >>= 1)
                        position += s.lo[position + step] <= key ? step : 0;
                }
                /* Below the first bracket (then no probe passed), or above
                 * the key within its high word. */
                if (s.lo[position] > key)
                    --position;
                const int j = position < 0 ? 0 : position;
                /* Joined brackets (each begins where the one before ends,
                 * from key 0 to the largest) hold every key: no upper
                 * check. */
                inside = (kSwitches & kJoined) ? valid[i] : valid[i] && position >= 0 && key <= s.hi[j];
                flags = inside ? s.flags[j] : 0u;
                cells = s.cells[j];
                lo = s.lo[j];
                segment = s.segment[j];
            }
            if (!kStaged && (flags & radix::kCells))
                atomicAdd(&histogram[bracket_cell<Key>(key, lo, cells)], 1u);
            if (!kStaged && a.collecting)
                collect_append<Key>((flags & radix::kCollect) != 0, segment, key, a.d_counters->segment_fill,
                                    a.d_segments);
            if (a.compacting) {
                const bool want = (flags & radix::kCompact) != 0;
                const unsigned mask = __ballot_sync(0xffffffffu, want);
                if (want)
                    warp_stage[staged + __popc(mask & lane_mask_below)] = key;
                staged += __popc(mask);
            }
        }
        if (a.compacting && staged > kFlushAt) {
            warp_flush<Key, kStaged>(warp_stage, staged, a.out, &a.d_counters->output_count, a.output_capacity,
                                     histogram, threshold[0], few_cells);
            staged = 0;
        }
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            word[i] = next_word[i];
            valid[i] = next_valid[i];
        }
    }
    if (a.compacting && staged > 0)
        warp_flush<Key, kStaged>(warp_stage, staged, a.out, &a.d_counters->output_count, a.output_capacity,
                                 histogram, threshold[0], few_cells);
#pragma unroll
    for (int t = 0; t < kThresholds; ++t) {
        if (t >= static_cast<int>(a.threshold_count))
            break;
        unsigned sum = below[t];
        for (int offset = 16; offset > 0; offset >>= 1)
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        if (lane_id() == 0 && sum > 0)
            atomicAdd(&a.d_counters->below_threshold[t], static_cast<unsigned long long>(sum));
    }
    if (a.check_nan) {
        for (int offset = 16; offset > 0; offset >>= 1)
            nan_count += __shfl_down_sync(0xffffffffu, nan_count, offset);
        if (lane_id() == 0 && nan_count > 0)
            atomicAdd(&a.d_counters->nan_count, static_cast<unsigned long long>(nan_count));
    }
}

/* The general loop of kDepth search steps, with the percentiles' two full
 * passes' switches fixed at compile time (joined or not) and any other
 * pass's read at run time. */
template <typename Key, int kDepth>
__device__ __forceinline__ void general_pass_loop(PassShared<Key> &s, const PassLoop<Key> &a, bool joined)
{
    const int switches = kFixed | (a.convert ? kConvert : 0) | (a.check_nan ? kCheckNan : 0) |
                         (a.high_words || sizeof(Key) == 4 ? kHighWords : 0) | (a.compacting ? kCompacting : 0) |
                         (a.collecting ? kCollecting : 0);
    if (switches == kPartitionPass && joined)
        pass_loop<Key, kLoopGeneral, kDepth, kPartitionPass | kJoined>(s, a);
    else if (switches == kPartitionPass)
        pass_loop<Key, kLoopGeneral, kDepth, kPartitionPass>(s, a);
    else if (switches == kCompactionPass)
        pass_loop<Key, kLoopGeneral, kDepth, kCompactionPass>(s, a);
    else
        pass_loop<Key, kLoopGeneral, kDepth>(s, a);
}

/*
 * One pass: every key of the source is compared with the thresholds (counts
 * in registers), looked up among the brackets (a binary search over their
 * lower ends), and counted in its cell, compacted and/or collected as its
 * bracket says. The data are keyed on the fly (and, in the first pass, NaNs
 * counted); buffers hold keys already. No block barrier inside the loop:
 * compaction stages per warp, and the next tile's loads are in flight while
 * a tile is processed.
 */
template <typename Value>
__global__ void __launch_bounds__(kThreads, 4)
    radix_pass_kernel(const void *__restrict__ d_data, int data_vector_ok,
                      typename KeyOf<Value>::type *d_buffer_a, typename KeyOf<Value>::type *d_buffer_b,
                      typename KeyOf<Value>::type *__restrict__ d_segments, const Plan *__restrict__ d_plan,
                      Counters *__restrict__ d_counters)
{
    using Key = typename KeyOf<Value>::type;
    using TileOf = Tile<Key>;
    __shared__ PassShared<Key> s;

    if (threadIdx.x == 0) {
        s.status = d_plan->outcome.status;
        s.partition = d_plan->partition;
        s.source = d_plan->source;
        s.output = d_plan->output;
        s.bracket_count = d_plan->kernel_bracket_count;
        s.threshold_count = d_plan->threshold_count;
        s.cell_count = d_plan->cell_count;
        s.source_count = d_plan->source_count;
        s.output_capacity = s.output != radix::kNoOutput ? d_plan->capacity[s.output] : 0;
        s.has_collect = 0;
    }
    __syncthreads();
    if (s.status != radix::kRunning || static_cast<uint64_t>(blockIdx.x) * TileOf::kSize >= s.source_count)
        return;
    const uint32_t bracket_count = s.bracket_count;
    for (uint32_t i = threadIdx.x; i < bracket_count; i += blockDim.x) {
        const Bracket &b = d_plan->brackets[d_plan->kernel_brackets[i]];
        s.lo[i] = static_cast<Key>(b.lo);
        s.hi[i] = static_cast<Key>(b.hi);
        s.cells[i] = pack_cells(b);
        s.segment[i] = static_cast<uint16_t>(b.segment);
        s.flags[i] = static_cast<uint8_t>(b.flags);
        if (b.flags & radix::kCollect)
            s.has_collect = 1;
    }
    /* Past the brackets: lower ends no real key reaches, for the general
     * loop's unrolled search (NaN keys may; they lie inside none). */
    for (uint32_t i = bracket_count + threadIdx.x; i < radix::kMaxBrackets; i += blockDim.x) {
        s.lo[i] = static_cast<Key>(~Key{0});
        s.hi[i] = Key{0};
        s.flags[i] = 0;
    }
    if (threadIdx.x < radix::kMaxThresholds)
        s.thresholds[threadIdx.x] =
            threadIdx.x < s.threshold_count ? static_cast<Key>(d_plan->thresholds[threadIdx.x]) : Key{0};
    for (uint32_t c = threadIdx.x; c < s.cell_count; c += blockDim.x)
        s.histogram[c] = 0;
    __syncthreads();
    /* The high-word search needs strictly ascending high words. */
    bool ascending = true;
    if (sizeof(Key) == 8)
        for (uint32_t i = threadIdx.x; i + 1 < bracket_count; i += blockDim.x)
            ascending = ascending && (static_cast<uint64_t>(s.lo[i]) >> 32) < (static_cast<uint64_t>(s.lo[i + 1]) >> 32);
    const bool high_words = __syncthreads_and(ascending) != 0;
    /* Whether the brackets join (the knots' partition): no key lies outside. */
    bool joined = bracket_count > 1;
    for (uint32_t i = threadIdx.x; joined && i + 1 < bracket_count; i += blockDim.x)
        joined = static_cast<Key>(s.hi[i] + 1) == s.lo[i + 1];
    if (threadIdx.x == 0)
        joined = joined && s.lo[0] == Key{0} && s.hi[bracket_count - 1] == static_cast<Key>(~Key{0});
    const bool all_joined = __syncthreads_and(joined) != 0;
    /* The search tree of the general loops: node i (level L, m-th of it)
     * holds lo[1 + ((2m + 1) << (depth - 1 - L)) - 1], lo's in-order rank. */
    const int depth = bracket_count <= 64 ? 6 : 9;
    for (int i = static_cast<int>(threadIdx.x) + 1; i < (1 << depth) && bracket_count > 1; i += blockDim.x) {
        const int level = 31 - __clz(i), m = i - (1 << level);
        const Key lo = s.lo[((2 * m + 1) << (depth - 1 - level))];
        s.tree[i] = static_cast<uint32_t>(sizeof(Key) == 8 ? static_cast<uint64_t>(lo) >> 32 : lo);
    }
    __syncthreads();

    PassLoop<Key> a;
    a.convert = s.source == radix::kSourceData;
    a.src = a.convert ? static_cast<const Key *>(d_data) : s.source == radix::kBufferA ? d_buffer_a : d_buffer_b;
    a.out = s.output == radix::kBufferA ? d_buffer_a : s.output == radix::kBufferB ? d_buffer_b : nullptr;
    a.d_segments = d_segments;
    a.d_counters = d_counters;
    a.count = s.source_count;
    a.output_capacity = s.output_capacity;
    a.bracket_count = bracket_count;
    a.threshold_count = s.threshold_count;
    a.check_nan = a.convert && s.partition != 0;
    a.vector_ok = a.convert ? data_vector_ok != 0 : true;
    a.compacting = a.out != nullptr;
    a.collecting = s.has_collect != 0;
    a.high_words = high_words;
    /* The median's first pass: one window, its two ends the thresholds. */
    const bool window = bracket_count == 1 && s.threshold_count == 2 && s.thresholds[0] == s.lo[0] &&
                        s.hi[0] != static_cast<Key>(~Key{0}) && s.thresholds[1] == static_cast<Key>(s.hi[0] + 1);
    const bool staged = window && a.compacting && !a.collecting &&
                        (s.flags[0] & (radix::kCells | radix::kCompact | radix::kCollect)) ==
                            (radix::kCells | radix::kCompact);
    if (staged)
        pass_loop<Key, kLoopWindowStaged>(s, a);
    else if (window)
        pass_loop<Key, kLoopWindow>(s, a);
    else if (bracket_count <= 1)
        pass_loop<Key, kLoopFew>(s, a);
    else if (depth == 6)
        general_pass_loop<Key, 6>(s, a, all_joined);
    else
        general_pass_loop<Key, 9>(s, a, all_joined);

    __syncthreads();
    for (uint32_t c = threadIdx.x; c < s.cell_count; c += blockDim.x)
        if (s.histogram[c] != 0)
            atomicAdd(&d_counters->cells[c], static_cast<unsigned long long>(s.histogram[c]));
}

/* Dynamic shared memory of the picker: the plan, the prefix sum and the
 * located ranks, so that the serial planning runs on shared memory rather
 * than on a chain of global loads. */
constexpr size_t kPickPlanWords = sizeof(Plan) / sizeof(uint64_t);
static_assert(sizeof(Plan) % sizeof(uint64_t) == 0, "the plan copies as 8-byte words");
constexpr size_t kPickSharedBytes = sizeof(Plan) + (radix::kMaxCells + 1) * sizeof(unsigned long long) +
                                    radix::kMaxRanks * sizeof(Located);
constexpr size_t kPickCheckSharedBytes = kPickSharedBytes + sizeof(Plan);  /* with STATGPU_CUDA_RADIX_CHECK=1 */
static_assert(sizeof(Located) % sizeof(uint64_t) == 0, "the check's plan copy is 8-byte aligned");

using PickScan = cub::BlockScan<unsigned long long, kPickThreads>;
static_assert(kPickThreads >= radix::kMaxBrackets && radix::kMaxBrackets >= radix::kMaxRanks,
              "build_next_block takes a rank or a bracket a thread");

/* build_next (radix_plan.h) by every thread of the picker's block, to the
 * same plan word for word (STATGPU_CUDA_RADIX_CHECK=1 runs both and
 * compares): the ranks' brackets by scans (a rank starts one where the
 * previous active rank's cell differs), the brackets classified a thread
 * each (segments and kept brackets numbered by scans), the cells by a scan.
 * Thread 0 alone took most of the picker, a few thousand dependent shared
 * loads (Nsight Compute, 101 percentiles of 2^27 doubles: the other warps
 * waited at its barrier in 76% of the second picker's stall samples, 110 us
 * under the profiler's clocks). */
__device__ void build_next_block(Plan *plan, const Located *located, const unsigned long long *prefix,
                                 const Counters &counters, const radix::PassChecks &checks,
                                 PickScan::TempStorage &scan)
{
    using namespace radix;
    Plan &p = *plan;
    Outcome &o = p.outcome;
    __shared__ uint32_t s_go, s_output_valid, s_mark;
    const uint32_t t = threadIdx.x;
    if (t == 0) {
        bool go = o.status == kRunning;
        if (go && p.partition && counters.nan_count > 0) {
            o.status = kNanInData;
            go = false;
        }
        if (go && ((p.partition && prefix[p.cell_count] != p.data_count) ||
                   !(checks.segments_hold && checks.counts_hold))) {
            o.status = kInconsistent;
            go = false;
        }
        bool output_valid = false;
        if (go) {
            p.fresh_segment = o.segment_count;
            output_valid = p.output != kNoOutput && counters.output_count <= p.capacity[p.output];
            if (p.output != kNoOutput && output_valid && !p.partition && checks.compacted != counters.output_count) {
                o.status = kInconsistent;
                go = false;
            }
        }
        s_go = go;
        s_output_valid = output_valid;
    }
    __syncthreads();
    if (!s_go)
        return;

    /* The next brackets: rank t starts one unless the previous active rank
     * lies in the same cell. */
    const bool active = t < p.rank_count && p.rank_state[t] == kRankActive;
    Located l{};
    if (active)
        l = located[t];
    const bool bad = active && (!l.valid || p.ranks[t] <= l.below || p.ranks[t] - l.below > l.count);
    unsigned long long previous;  /* the previous active rank, plus one; 0 for none */
    PickScan(scan).ExclusiveScan(active ? t + 1ull : 0ull, previous, 0ull, cuda::maximum<unsigned long long>{});
    __syncthreads();
    const bool starts = active && (previous == 0 || located[previous - 1].lo != l.lo ||
                                   located[previous - 1].below != l.below);
    unsigned long long started_before, count;
    PickScan(scan).ExclusiveSum(starts ? 1ull : 0ull, started_before, count);
    if (__syncthreads_or(bad)) {
        if (t == 0)
            o.status = kInconsistent;
        return;
    }
    if (starts)
        p.brackets[started_before] = bracket_of(l, t);
    __syncthreads();
    if (active && !starts)
        atomicMax(&p.brackets[started_before - 1].rank_end, t + 1);
    __syncthreads();

    /* Each bracket: resolved (one key), a segment, or subdivided. */
    const bool has = t < count;
    Bracket b{};
    if (has)
        b = p.brackets[t];
    const bool resolved = has && b.lo == b.hi, kept_here = has && !resolved;
    const bool segment = kept_here && b.count <= kSegmentCapacity, cells = kept_here && !segment;
    unsigned long long before, totals;  /* kept brackets in the high word, segments in the low */
    PickScan(scan).ExclusiveSum((kept_here ? 1ull << 32 : 0ull) | (segment ? 1ull : 0ull), before, totals);
    __syncthreads();
    unsigned long long subdivided_before, subdivided_total;
    PickScan(scan).ExclusiveSum(cells ? b.count : 0ull, subdivided_before, subdivided_total);
    const bool all_compacted = __syncthreads_and(!kept_here || (b.flags & kCompact)) != 0;
    const uint32_t kept = static_cast<uint32_t>(totals >> 32), segments_before = o.segment_count;
    if (resolved) {
        const double value = key_to_double(b.lo, p.key_bits);
        for (uint32_t r = b.rank_first; r < b.rank_end; ++r) {
            o.results[r] = value;
            p.rank_state[r] = kRankResolved;
        }
    } else if (segment) {
        const uint32_t s = segments_before + static_cast<uint32_t>(before & 0xffffffffu);
        p.segments[s] = segment_of(b);
        for (uint32_t r = b.rank_first; r < b.rank_end; ++r)
            p.rank_state[r] = kRankCollected;
        b.flags = kCollect;
        b.segment = s;
    } else if (cells) {
        b.flags = kCells;
    }
    if (kept_here)
        p.brackets[before >> 32] = b;
    __syncthreads();
    if (t == 0) {
        o.segment_count = segments_before + static_cast<uint32_t>(totals & 0xffffffffu);
        p.bracket_count = kept;
        p.partition = 0;
        ++o.level;
        bool go = true, mark = false;
        if (kept == 0) {
            o.status = kFinished;
            p.output = kNoOutput;
            p.cell_count = 0;
            go = false;
        } else if (o.level >= kMaxLevels) {
            o.status = kInconsistent;
            go = false;
        } else {
            mark = choose_next_source(p, s_output_valid != 0, all_compacted, counters.output_count, subdivided_total);
        }
        s_go = go;
        s_mark = mark;
    }
    __syncthreads();
    if (!s_go)
        return;

    /* assign_cells, a bracket a thread. */
    Bracket &mine = p.brackets[t < kept ? t : 0];
    const bool in = t < kept;
    if (in && s_mark && (mine.flags & kCells))
        mine.flags |= kCompact;
    const uint32_t subdivided = static_cast<uint32_t>(__syncthreads_count(in && shares_cell_budget(mine)));
    const uint32_t budget = subdivided > 0 ? kCellBudget / subdivided : 1;
    uint32_t shift = 0;
    uint64_t cells_here = 0;
    if (in && (mine.flags & kCells))
        shift = cell_shift(mine, budget, &cells_here);
    unsigned long long base, cell_total;
    PickScan(scan).ExclusiveSum(static_cast<unsigned long long>(static_cast<uint32_t>(cells_here)), base, cell_total);
    unsigned long long listed_before, listed;
    __syncthreads();
    PickScan(scan).ExclusiveSum(in && !(mine.flags & kThreshold) ? 1ull : 0ull, listed_before, listed);
    if (in) {
        const bool has_cells = (mine.flags & kCells) != 0;
        mine.cell_base = has_cells ? static_cast<uint32_t>(base) : 0u;
        mine.cell_count = has_cells ? static_cast<uint32_t>(cells_here) : 0u;
        mine.shift = has_cells ? shift : 0u;
        if (!(mine.flags & kThreshold))
            p.kernel_brackets[listed_before] = static_cast<uint16_t>(t);
    }
    if (t == 0) {
        p.cell_count = static_cast<uint32_t>(cell_total);
        p.threshold_count = 0;
        p.kernel_bracket_count = static_cast<uint32_t>(listed);
    }
    __syncthreads();
}

/* Between passes: the prefix sum of the histogram, every rank located in it
 * (in parallel) and the pass's counts checked (in parallel), then the next
 * pass planned by one thread (build_next), and
 * the counters cleared for it. */
__global__ void __launch_bounds__(kPickThreads) radix_pick_kernel(Plan *d_plan, Counters *d_counters, int check)
{
    using Scan = PickScan;
    __shared__ typename Scan::TempStorage scan;
    extern __shared__ uint64_t s_dynamic[];
    Plan *plan = reinterpret_cast<Plan *>(s_dynamic);
    unsigned long long *prefix = reinterpret_cast<unsigned long long *>(s_dynamic + kPickPlanWords);
    Located *located = reinterpret_cast<Located *>(prefix + radix::kMaxCells + 1);
    __shared__ uint32_t status;
    if (threadIdx.x == 0)
        status = d_plan->outcome.status;
    __syncthreads();
    if (status != radix::kRunning)
        return;
    /* The plan in: a fixed count of loads a thread, unrolled, so that all
     * of them are in flight at once (a loop bounded by blockDim.x waited
     * for each load before the next). */
    const uint64_t *d_words = reinterpret_cast<const uint64_t *>(d_plan);
    constexpr int kPlanLoads = static_cast<int>((kPickPlanWords + kPickThreads - 1) / kPickThreads);
    uint64_t words[kPlanLoads];
#pragma unroll
    for (int w = 0; w < kPlanLoads; ++w) {
        const size_t i = threadIdx.x + static_cast<size_t>(w) * kPickThreads;
        words[w] = i < kPickPlanWords ? d_words[i] : 0;
    }
#pragma unroll
    for (int w = 0; w < kPlanLoads; ++w) {
        const size_t i = threadIdx.x + static_cast<size_t>(w) * kPickThreads;
        if (i < kPickPlanWords)
            s_dynamic[i] = words[w];
    }
    __syncthreads();

    for (uint32_t j = threadIdx.x; j < plan->bracket_count; j += blockDim.x)
        radix::fill_threshold_cell(*plan, d_counters, j);
    __syncthreads();
    const uint32_t cell_count = plan->cell_count;
    unsigned long long items[kPickItems];
#pragma unroll
    for (int i = 0; i < kPickItems; ++i) {
        const uint32_t index = threadIdx.x * kPickItems + i;
        items[i] = index < cell_count ? d_counters->cells[index] : 0ull;
    }
    unsigned long long total = 0;
    Scan(scan).ExclusiveSum(items, items, total);
#pragma unroll
    for (int i = 0; i < kPickItems; ++i) {
        const uint32_t index = threadIdx.x * kPickItems + i;
        if (index < cell_count)
            prefix[index] = items[i];
    }
    if (threadIdx.x == 0)
        prefix[cell_count] = total;
    __syncthreads();

    /* build_next's checks of the pass's counts, by every thread (on thread
     * 0 alone they were loops over every bracket: with them here the
     * percentiles' second picker went from 92 to 88 us, the third from 35
     * to 24), before settle_bracket rewrites a partition's counts. */
    bool hold = true;
    unsigned long long compacted = 0;
    for (uint32_t seg = plan->fresh_segment + threadIdx.x; seg < plan->outcome.segment_count; seg += blockDim.x)
        hold = hold && radix::segment_fill_holds(*plan, *d_counters, seg);
    for (uint32_t j = threadIdx.x; j < plan->bracket_count; j += blockDim.x) {
        hold = hold && radix::bracket_count_holds(*plan, prefix, j);
        if (plan->brackets[j].flags & radix::kCompact)
            compacted += plan->brackets[j].count;
    }
    __shared__ unsigned long long s_compacted;
    if (threadIdx.x == 0)
        s_compacted = 0;
    __syncthreads();
    if (compacted != 0)
        atomicAdd(&s_compacted, compacted);  /* integers: the same sum in any order */
    const bool all_hold = __syncthreads_and(hold) != 0;
    const radix::PassChecks checks{all_hold, all_hold, s_compacted};

    if (plan->partition)
        for (uint32_t j = threadIdx.x; j < plan->bracket_count; j += blockDim.x)
            radix::settle_bracket(plan, prefix, j);
    __syncthreads();
    for (uint32_t r = threadIdx.x; r < plan->rank_count; r += blockDim.x)
        located[r] = radix::locate_rank(*plan, prefix, r);
    __syncthreads();
    /* check: the serial build_next on a copy of the plan (after the located
     * ranks in shared memory), compared word for word. */
    uint64_t *s_check = reinterpret_cast<uint64_t *>(located + radix::kMaxRanks);
    if (check)
        for (size_t i = threadIdx.x; i < kPickPlanWords; i += blockDim.x)
            s_check[i] = s_dynamic[i];
    __syncthreads();
    build_next_block(plan, located, prefix, *d_counters, checks, scan);
    if (check) {
        if (threadIdx.x == 0)
            radix::build_next(reinterpret_cast<Plan *>(s_check), located, prefix, *d_counters, &checks);
        __syncthreads();
        const uint32_t status = plan->outcome.status;
        const bool differs = __syncthreads_or((status == radix::kRunning || status == radix::kFinished) &&
                                               [&] {
                                                   for (size_t i = threadIdx.x; i < kPickPlanWords; i += blockDim.x)
                                                       if (s_check[i] != s_dynamic[i])
                                                           return true;
                                                   return false;
                                               }());
        if (threadIdx.x == 0 && (differs || reinterpret_cast<Plan *>(s_check)->outcome.status != status))
            plan->outcome.status = radix::kInconsistent;
        __syncthreads();
    }

    uint64_t *d_out = reinterpret_cast<uint64_t *>(d_plan);
    for (size_t i = threadIdx.x; i < kPickPlanWords; i += blockDim.x)
        d_out[i] = s_dynamic[i];
    for (uint32_t c = threadIdx.x; c < radix::kMaxCells; c += blockDim.x)
        d_counters->cells[c] = 0;
    for (uint32_t r = threadIdx.x; r < radix::kMaxRanks; r += blockDim.x)
        d_counters->segment_fill[r] = 0;
    if (threadIdx.x < radix::kMaxThresholds)
        d_counters->below_threshold[threadIdx.x] = 0;
    if (threadIdx.x == 0) {
        d_counters->output_count = 0;
        d_counters->nan_count = 0;
    }
}

/* Once every rank is resolved or collected: block s sorts segment s and
 * reads its ranks off. */
template <typename Key>
__global__ void __launch_bounds__(kSortThreads) radix_final_kernel(Plan *d_plan, const Key *__restrict__ d_segments)
{
    using Sort = cub::BlockRadixSort<Key, kSortThreads, kSortItems>;
    __shared__ typename Sort::TempStorage temp;
    __shared__ radix::Segment segment;
    __shared__ uint32_t go;
    if (threadIdx.x == 0) {
        go = d_plan->outcome.status == radix::kFinished && blockIdx.x < d_plan->outcome.segment_count;
        if (go)
            segment = d_plan->segments[blockIdx.x];
    }
    __syncthreads();
    if (!go)
        return;
    const Key *d_keys = d_segments + static_cast<size_t>(blockIdx.x) * radix::kSegmentCapacity;
    /* Offsets from the segment's low end: only the bits they differ in are
     * sorted. Padding sorts after every real offset (all ones, and the sort
     * is stable where a real offset has all the sorted bits set too). */
    const Key lo = static_cast<Key>(segment.lo);
    const int end_bit = max(1, bit_length(segment.hi - segment.lo));
    Key keys[kSortItems];
#pragma unroll
    for (int i = 0; i < kSortItems; ++i) {
        const uint32_t index = threadIdx.x * kSortItems + i;
        keys[i] = index < segment.count ? static_cast<Key>(d_keys[index] - lo) : ~Key{0};
    }
    Sort(temp).Sort(keys, 0, end_bit);
    for (uint32_t r = segment.rank_first; r < segment.rank_end; ++r) {
        const uint64_t local = d_plan->ranks[r] - segment.below - 1;
        if (local / kSortItems != threadIdx.x)
            continue;
#pragma unroll
        for (int i = 0; i < kSortItems; ++i)
            if (static_cast<uint64_t>(i) == local % kSortItems)
                d_plan->outcome.results[r] = key_to_double(static_cast<Key>(keys[i] + lo), static_cast<uint32_t>(sizeof(Key) * 8));
    }
}

/* Keys of kSampleCount elements at sample_position, sorted in one block. */
template <typename Key>
__global__ void __launch_bounds__(kSortThreads)
    radix_sample_kernel(const void *__restrict__ d_data, uint64_t count, uint64_t *__restrict__ d_sample)
{
    using Sort = cub::BlockRadixSort<Key, kSortThreads, kSortItems>;
    __shared__ typename Sort::TempStorage temp;
    const Key *d_words = static_cast<const Key *>(d_data);
    Key keys[kSortItems];
#pragma unroll
    for (int i = 0; i < kSortItems; ++i)
        keys[i] = key_from_bits(d_words[radix::sample_position(threadIdx.x * kSortItems + i, count)]);
    Sort(temp).Sort(keys);
#pragma unroll
    for (int i = 0; i < kSortItems; ++i)
        d_sample[threadIdx.x * kSortItems + i] = keys[i];
}

template <typename Value>
bool radix_select_typed(Call &call, const void *d_data, uint64_t count, const std::vector<uint64_t> &ranks,
                        double *values)
{
    using Key = typename KeyOf<Value>::type;
    statgpu_cuda_state *state = call.state();
    cudaStream_t stream = call.stream();

    /* Candidate buffers: A takes the first pass's windows (at most 1/8 of
     * the data by plan) or the second pass's cells; B what a later pass
     * compacts from A. Where memory is short they shrink, down to nothing:
     * the passes then re-read the data, slower but exact. */
    uint64_t capacity[2] = {std::min<uint64_t>(count, count / 8 + 65536), std::min<uint64_t>(count, count / 32 + 65536)};
    for (int b = 0; b < 2; ++b) {
        const uint64_t wanted = capacity[b];
        if (state->candidates[b].bytes < wanted * sizeof(Key)) {
            for (uint64_t attempt = wanted;; attempt /= 8) {
                if (ensure_device_buffer(&state->candidates[b], attempt * sizeof(Key)) == cudaSuccess)
                    break;
                (void)cudaGetLastError();
                if (attempt < 65536)
                    break;  /* none at all */
            }
        }
        capacity[b] = std::min<uint64_t>(count, state->candidates[b].bytes / sizeof(Key));
    }
    if (!call.ensure(&state->segments, radix::kMaxRanks * radix::kSegmentCapacity * sizeof(Key),
                     "allocating the GPU segments"))
        return false;

    Plan *d_plan = call.control<Plan>(kPlanOffset);
    Counters *d_counters = call.control<Counters>(kCountersOffset);
    uint64_t *d_sample = call.control<uint64_t>(kSampleOffset);
    Plan *h_plan = call.pinned<Plan>(kPlanOffset);
    uint64_t *h_sample = call.pinned<uint64_t>(kSampleOffset);
    Key *d_buffer_a = static_cast<Key *>(state->candidates[0].d_ptr);
    Key *d_buffer_b = static_cast<Key *>(state->candidates[1].d_ptr);
    Key *d_segments = static_cast<Key *>(state->segments.d_ptr);

    radix_sample_kernel<Key><<<1, kSortThreads, 0, stream>>>(d_data, count, d_sample);
    if (!call.check(cudaGetLastError(), "launching the sample kernel") ||
        !call.check(cudaMemcpyAsync(h_sample, d_sample, radix::kSampleCount * sizeof(uint64_t),
                                    cudaMemcpyDeviceToHost, stream),
                    "copying the sample from the GPU") ||
        !call.check(cudaStreamSynchronize(stream), "sampling the data"))
        return false;

    const int data_vector_ok = reinterpret_cast<uintptr_t>(d_data) % 16 == 0;
    /* STATGPU_CUDA_RADIX_CHECK=1: every picker also plans the next pass by
     * the serial build_next and fails the call unless the plans are equal
     * word for word (the GPU tests run with it). */
    static const int check_plans = [] {
        const char *value = std::getenv("STATGPU_CUDA_RADIX_CHECK");
        return value != nullptr && std::strcmp(value, "1") == 0 ? 1 : 0;
    }();
    const int grid = state->grid[sizeof(Key) == 8 ? kGridRadixPass64 : kGridRadixPass32];
    for (size_t first = 0; first < ranks.size(); first += radix::kMaxRanks) {
        const uint32_t rank_count = static_cast<uint32_t>(std::min<size_t>(radix::kMaxRanks, ranks.size() - first));
        radix::FirstPassInfo info{};
        if (!radix::plan_first_pass(h_sample, radix::kSampleCount, count, ranks.data() + first, rank_count,
                                    KeyOf<Value>::bits, capacity[0], capacity[1], h_plan, &info))
            return call.fail(STATGPU_CUDA_ERROR, "radix selection: no first pass could be planned (internal error)");
        if (!call.check(cudaMemcpyAsync(d_plan, h_plan, sizeof(Plan), cudaMemcpyHostToDevice, stream),
                        "copying the selection plan to the GPU") ||
            !call.check(cudaMemsetAsync(d_counters, 0, sizeof(Counters), stream), "clearing the GPU counters"))
            return false;
        /* Levels per launch batch: the windows usually finish in two passes,
         * the knots in four. */
        int levels = info.mode == radix::kModeWindows ? 3 : 5;
        for (;;) {
            for (int level = 0; level < levels; ++level) {
                radix_pass_kernel<Value><<<grid, kThreads, 0, stream>>>(d_data, data_vector_ok, d_buffer_a, d_buffer_b,
                                                                      d_segments, d_plan, d_counters);
                radix_pick_kernel<<<1, kPickThreads, check_plans ? kPickCheckSharedBytes : kPickSharedBytes, stream>>>(
                    d_plan, d_counters, check_plans);
            }
            radix_final_kernel<Key><<<radix::kMaxRanks, kSortThreads, 0, stream>>>(d_plan, d_segments);
            if (!call.check(cudaGetLastError(), "launching the radix selection passes") ||
                !call.check(cudaMemcpyAsync(&h_plan->outcome, &d_plan->outcome, sizeof(radix::Outcome),
                                            cudaMemcpyDeviceToHost, stream),
                            "copying the selection outcome from the GPU") ||
                !call.check(cudaStreamSynchronize(stream), "running the radix selection passes"))
                return false;
            const radix::Outcome &outcome = h_plan->outcome;
            if (outcome.status == radix::kFinished)
                break;
            if (outcome.status == radix::kNanInData)
                return call.fail(STATGPU_CUDA_NAN_IN_DATA, "the data hold a NaN");
            if (outcome.status != radix::kRunning || outcome.level >= radix::kMaxLevels)
                return call.fail(STATGPU_CUDA_ERROR,
                                 "radix selection: counts that contradict each other (internal error)");
            levels = 8;
        }
        std::copy(h_plan->outcome.results, h_plan->outcome.results + rank_count, values + first);
    }
    return true;
}

} /* namespace */

bool select_radix(Call &call, const void *d_data, int dtype, uint64_t count, const std::vector<uint64_t> &ranks,
                  double *values)
{
    return dtype == STATGPU_CUDA_FLOAT32 ? radix_select_typed<float>(call, d_data, count, ranks, values)
                                         : radix_select_typed<double>(call, d_data, count, ranks, values);
}

cudaError_t prepare_radix(statgpu_cuda_state *state)
{
    int blocks = 0;
    cudaError_t error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, reinterpret_cast<const void *>(&radix_pass_kernel<double>), kThreads, 0);
    if (error != cudaSuccess)
        return error;
    state->grid[kGridRadixPass64] = std::max(1, blocks) * state->multiprocessor_count;
    error = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, reinterpret_cast<const void *>(&radix_pass_kernel<float>), kThreads, 0);
    if (error != cudaSuccess)
        return error;
    state->grid[kGridRadixPass32] = std::max(1, blocks) * state->multiprocessor_count;
    /* The picker keeps the plan in shared memory beyond the default 48 KB. */
    error = cudaFuncSetAttribute(reinterpret_cast<const void *>(&radix_pick_kernel),
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kPickCheckSharedBytes));
    if (error != cudaSuccess)
        return error;
    /* The other kernels are touched here too, so a device that none of the
     * embedded code runs on fails now, not in the middle of a call. */
    cudaFuncAttributes attributes;
    const void *kernels[] = {
        reinterpret_cast<const void *>(&radix_pick_kernel),
        reinterpret_cast<const void *>(&radix_final_kernel<uint64_t>),
        reinterpret_cast<const void *>(&radix_final_kernel<uint32_t>),
        reinterpret_cast<const void *>(&radix_sample_kernel<uint64_t>),
        reinterpret_cast<const void *>(&radix_sample_kernel<uint32_t>),
    };
    for (const void *kernel : kernels) {
        error = cudaFuncGetAttributes(&attributes, kernel);
        if (error != cudaSuccess)
            return error;
    }
    return cudaSuccess;
}

} /* namespace statgpu_cuda */
