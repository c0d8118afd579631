/*
 * test_select_plan.cpp: the host logic of the CUDA backend's selection methods,
 * tested without a GPU. The device passes are simulated on the CPU, with the
 * kernels' exact semantics (bracket search, cell histogram, compaction with
 * its capacity, collection into segments), and driven by the very planning
 * code the module runs: radix_plan.h (whose picker also runs on the device),
 * cutting_plane_plan.h and select_plan.h. Every result is checked bit for bit
 * against std::sort in IEEE total order, on random and adversarial data, in
 * float64 and float32; bad inputs to the planners must be refused, and
 * contradictory counts must be reported, never answered.
 *
 * Standalone (no cmocka, no CUDA): prints one line per failure and a final
 * "N passed, M failed"; exits non-zero on any failure. An optional argument
 * scales the sizes (default 1).
 */
#include "cutting_plane_plan.h"
#include "radix_plan.h"
#include "select_plan.h"
#include "total_order.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace statgpu_cuda;

namespace {

int g_passed = 0;
int g_failed = 0;

void check(bool condition, const std::string &what)
{
    if (condition) {
        ++g_passed;
    } else {
        ++g_failed;
        std::printf("FAIL: %s\n", what.c_str());
    }
}

constexpr double kInf = std::numeric_limits<double>::infinity();

/* Data as the kernels see them: total-order keys of one width. */
struct Data {
    std::string name;
    uint32_t key_bits = 64;
    std::vector<uint64_t> keys;

    double value(size_t i) const { return key_to_double(keys[i], key_bits); }
};

Data make_data(const std::string &name, const std::vector<double> &values, bool as_float)
{
    Data data;
    data.name = name + (as_float ? " f32" : " f64");
    data.key_bits = as_float ? 32 : 64;
    data.keys.resize(values.size());
    for (size_t i = 0; i < values.size(); ++i)
        data.keys[i] = as_float ? total_order_key(static_cast<float>(values[i])) : total_order_key(values[i]);
    return data;
}

bool has_nan(const Data &data)
{
    for (uint64_t key : data.keys)
        if (data.key_bits == 32 ? key_is_nan(static_cast<uint32_t>(key)) : key_is_nan(key))
            return true;
    return false;
}

/* The reference: keys sorted, so the k-th smallest is sorted[k - 1]. */
std::vector<uint64_t> sorted_keys(const Data &data)
{
    std::vector<uint64_t> sorted = data.keys;
    std::sort(sorted.begin(), sorted.end());
    return sorted;
}

/* ------------------------------------------------------------ generators */

std::vector<double> generate(const std::string &kind, size_t n, std::mt19937_64 &rng)
{
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> uniform;
    std::cauchy_distribution<double> cauchy;
    std::vector<double> v(n);
    auto coin = [&](double p) { return uniform(rng) < p; };
    for (size_t i = 0; i < n; ++i) {
        double &x = v[i];
        if (kind == "uniform") x = uniform(rng);
        else if (kind == "normal") x = normal(rng);
        else if (kind == "half-normal") x = std::fabs(normal(rng));
        else if (kind == "cauchy") x = cauchy(rng);
        else if (kind == "lognormal") x = std::exp(3.0 * normal(rng));
        else if (kind == "mix 0.5 N(0,1) + 0.5 N(10,1)") x = coin(0.5) ? normal(rng) : normal(rng) + 10.0;
        else if (kind == "mix 0.95 U + 0.05 N(1000,1)") x = coin(0.95) ? uniform(rng) : normal(rng) + 1000.0;
        else if (kind == "mix N(0,1e-6) + N(0,1e6)") x = coin(0.5) ? normal(rng) * 1e-6 : normal(rng) * 1e6;
        else if (kind == "normal + a few 1e9") x = i % 100003 == 7 ? 1e9 * (i % 2 ? 1 : -1) : normal(rng);
        else if (kind == "normal + a few 1e20") x = i % 100003 == 7 ? 1e20 * (i % 2 ? 1 : -1) : normal(rng);
        else if (kind == "normal + a few 1e300") x = i % 100003 == 7 ? 3e300 * (i % 2 ? 1 : -1) : normal(rng);
        else if (kind == "sorted") x = static_cast<double>(i) * 0.37 - 100.0;
        else if (kind == "reverse-sorted") x = static_cast<double>(n - i) * 0.25;
        else if (kind == "all-equal") x = 3.25;
        else if (kind == "two-valued") x = coin(0.5) ? 1.0 : -1.0;
        else if (kind == "-0.0 next to +0.0") x = coin(0.1) ? normal(rng) : (coin(0.5) ? -0.0 : 0.0);
        else if (kind == "zeros only") x = coin(0.5) ? -0.0 : 0.0;
        else if (kind == "subnormal") x = (uniform(rng) - 0.5) * 0x1p-1060;
        else if (kind == "few subnormals") x = static_cast<double>(rng() % 1000) * 4.9406564584124654e-324 * (coin(0.5) ? 1 : -1);
        else if (kind == "integers 0..999") x = static_cast<double>(rng() % 1000);
        else if (kind == "seven values") x = static_cast<double>(rng() % 7) - 3.0;
        else if (kind == "sparse (90% zeros)") x = coin(0.9) ? 0.0 : normal(rng);
        else if (kind == "infinities") x = coin(0.3) ? -kInf : coin(0.4) ? kInf : normal(rng);
        else if (kind == "huge") x = (coin(0.5) ? 1.0 : -1.0) * 1.7976931348623157e308 * uniform(rng);
        else if (kind == "extremes") {
            const double specials[] = {-kInf, kInf, -1.7976931348623157e308, 1.7976931348623157e308,
                                       4.9406564584124654e-324, -4.9406564584124654e-324, -0.0, 0.0};
            x = coin(0.05) ? specials[rng() % 8] : normal(rng);
        }
        else if (kind == "point mass near the median") x = coin(0.3) ? 0.125 : normal(rng);
        else if (kind == "ulp cluster") x = std::nextafter(1.0, coin(0.5) ? 2.0 : 0.0) + (coin(0.5) ? 0x1p-52 * static_cast<double>(rng() % 16) : 0.0);
        else { std::printf("unknown generator %s\n", kind.c_str()); std::abort(); }
    }
    if (kind == "sorted" || kind == "reverse-sorted")
        return v;
    return v;
}

const char *const kKinds[] = {
    "uniform", "normal", "half-normal", "cauchy", "lognormal", "mix 0.5 N(0,1) + 0.5 N(10,1)",
    "mix 0.95 U + 0.05 N(1000,1)", "mix N(0,1e-6) + N(0,1e6)", "normal + a few 1e9", "normal + a few 1e20",
    "normal + a few 1e300", "sorted", "reverse-sorted", "all-equal", "two-valued", "-0.0 next to +0.0",
    "zeros only", "subnormal", "few subnormals", "integers 0..999", "seven values", "sparse (90% zeros)",
    "infinities", "huge", "extremes", "point mass near the median", "ulp cluster",
};

std::vector<uint64_t> median_ranks(uint64_t n)
{
    return n % 2 ? std::vector<uint64_t>{(n + 1) / 2} : std::vector<uint64_t>{n / 2, n / 2 + 1};
}

/* The ranks of PERCENTILE.INC at p = 0, 0.01, ..., 1: x(i) and x(i+1). */
std::vector<uint64_t> percentile_ranks(uint64_t n)
{
    std::vector<uint64_t> ranks;
    for (int j = 0; j <= 100; ++j) {
        const double h = j / 100.0 * static_cast<double>(n - 1);
        const uint64_t i = static_cast<uint64_t>(std::floor(h)) + 1;
        ranks.push_back(i);
        if (i < n)
            ranks.push_back(i + 1);
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return ranks;
}

/* ------------------------------------------------ radix selection, simulated */

struct RadixOutcome {
    bool ok = false;
    std::string error;
    int passes = 0;            /* all passes */
    int data_passes = 0;       /* passes that read all the data */
    uint64_t elements_read = 0;
    uint32_t mode = 0;
    std::vector<double> values;
};

/* One pass of radix_pass_kernel over source. */
void simulate_pass(const radix::Plan &plan, const std::vector<uint64_t> &source, bool from_data, uint32_t key_bits,
                   std::vector<uint64_t> *output, std::vector<std::vector<uint64_t>> *segments,
                   radix::Counters *counters)
{
    output->clear();
    const radix::Bracket *b = plan.brackets;
    const uint32_t count = plan.kernel_bracket_count;
    /* As the kernel: only its loops for at most one looked-up bracket count
     * thresholds. */
    const uint32_t threshold_count = count <= 1 ? plan.threshold_count : 0;
    for (uint64_t key : source) {
        if (from_data && plan.partition && (key_bits == 32 ? key_is_nan(static_cast<uint32_t>(key)) : key_is_nan(key)))
            ++counters->nan_count;
        for (uint32_t t = 0; t < threshold_count; ++t)
            counters->below_threshold[t] += key < plan.thresholds[t];
        int position = -1;
        for (uint32_t i = 0; i < count; ++i)  /* plain scan: checks the kernel's binary search too */
            if (b[plan.kernel_brackets[i]].lo <= key)
                position = static_cast<int>(plan.kernel_brackets[i]);
        if (position < 0 || key > b[position].hi)
            continue;
        const radix::Bracket &bracket = b[position];
        if (bracket.flags & radix::kCells) {
            const uint32_t cell = radix::cell_of(key, bracket);
            if (cell >= plan.cell_count || cell < bracket.cell_base || cell >= bracket.cell_base + bracket.cell_count) {
                std::printf("simulate_pass: cell %u out of range\n", cell);
                std::abort();
            }
            ++counters->cells[cell];
        }
        if (bracket.flags & radix::kCollect) {
            const unsigned position_in = counters->segment_fill[bracket.segment]++;
            if (position_in < radix::kSegmentCapacity)
                (*segments)[bracket.segment].push_back(key);
        }
        if ((bracket.flags & radix::kCompact) && plan.output != radix::kNoOutput) {
            if (counters->output_count < plan.capacity[plan.output])
                output->push_back(key);
            ++counters->output_count;
        }
    }
}

/* The picker kernel, serially. */
void simulate_pick(radix::Plan *plan, radix::Counters *counters)
{
    if (plan->outcome.status != radix::kRunning)
        return;
    for (uint32_t j = 0; j < plan->bracket_count; ++j)
        radix::fill_threshold_cell(*plan, counters, j);
    counters->prefix[0] = 0;
    for (uint32_t c = 0; c < plan->cell_count; ++c)
        counters->prefix[c + 1] = counters->prefix[c] + counters->cells[c];
    /* The device's picker checks the pass's counts before settle_bracket,
     * every thread a share, and hands them to build_next: the plan it then
     * builds must be build_next's own, byte for byte. */
    radix::PassChecks checks{true, true, 0};
    for (uint32_t seg = plan->fresh_segment; seg < plan->outcome.segment_count; ++seg)
        checks.segments_hold = checks.segments_hold && radix::segment_fill_holds(*plan, *counters, seg);
    for (uint32_t j = 0; j < plan->bracket_count; ++j) {
        checks.counts_hold = checks.counts_hold && radix::bracket_count_holds(*plan, counters->prefix, j);
        if (plan->brackets[j].flags & radix::kCompact)
            checks.compacted += plan->brackets[j].count;
    }
    if (plan->partition)
        for (uint32_t j = 0; j < plan->bracket_count; ++j)
            radix::settle_bracket(plan, counters->prefix, j);
    std::vector<radix::Located> located(radix::kMaxRanks);
    for (uint32_t r = 0; r < plan->rank_count; ++r)
        located[r] = radix::locate_rank(*plan, counters->prefix, r);
    std::unique_ptr<radix::Plan> checked(new radix::Plan(*plan));
    radix::build_next(checked.get(), located.data(), counters->prefix, *counters, &checks);
    radix::build_next(plan, located.data(), counters->prefix, *counters);
    check(std::memcmp(checked.get(), plan, sizeof *plan) == 0,
          "build_next with the picker's checks plans the same pass as without");
    std::memset(counters->cells, 0, sizeof counters->cells);
    std::memset(counters->segment_fill, 0, sizeof counters->segment_fill);
    std::memset(counters->below_threshold, 0, sizeof counters->below_threshold);
    counters->output_count = 0;
    counters->nan_count = 0;
}

RadixOutcome simulate_radix(const Data &data, const std::vector<uint64_t> &ranks, double capacity_share = -1.0)
{
    RadixOutcome outcome;
    const uint64_t n = data.keys.size();
    /* The sample kernel. */
    std::vector<uint64_t> sample(radix::kSampleCount);
    for (uint32_t i = 0; i < radix::kSampleCount; ++i)
        sample[i] = data.keys[radix::sample_position(i, n)];
    std::sort(sample.begin(), sample.end());
    uint64_t capacity_a = std::min<uint64_t>(n, n / 8 + 65536), capacity_b = std::min<uint64_t>(n, n / 32 + 65536);
    if (capacity_share >= 0.0) {
        capacity_a = static_cast<uint64_t>(capacity_share * static_cast<double>(n));
        capacity_b = capacity_a / 4;
    }
    std::unique_ptr<radix::Plan> plan(new radix::Plan);
    std::unique_ptr<radix::Counters> counters(new radix::Counters);
    outcome.values.assign(ranks.size(), 0.0);
    for (size_t first = 0; first < ranks.size(); first += radix::kMaxRanks) {
        const uint32_t rank_count = static_cast<uint32_t>(std::min<size_t>(radix::kMaxRanks, ranks.size() - first));
        radix::FirstPassInfo info{};
        if (!radix::plan_first_pass(sample.data(), radix::kSampleCount, n, ranks.data() + first, rank_count,
                                    data.key_bits, capacity_a, capacity_b, plan.get(), &info)) {
            outcome.error = "plan_first_pass refused";
            return outcome;
        }
        outcome.mode = info.mode;
        if (plan->threshold_count > 0 && plan->kernel_bracket_count > 1) {
            outcome.error = "thresholds with several looked-up brackets (the kernel would not count them)";
            return outcome;
        }
        std::memset(counters.get(), 0, sizeof *counters);
        std::vector<uint64_t> buffers[3];
        std::vector<std::vector<uint64_t>> segments(radix::kMaxRanks);
        while (plan->outcome.status == radix::kRunning) {
            const uint32_t source = plan->source;
            const std::vector<uint64_t> &src = source == radix::kSourceData ? data.keys : buffers[source];
            if (source != radix::kSourceData && src.size() != plan->source_count) {
                outcome.error = "source count differs from the buffer";
                return outcome;
            }
            std::vector<uint64_t> output;
            simulate_pass(*plan, src, source == radix::kSourceData, data.key_bits, &output, &segments, counters.get());
            ++outcome.passes;
            outcome.data_passes += source == radix::kSourceData;
            outcome.elements_read += src.size();
            if (plan->output != radix::kNoOutput)
                buffers[plan->output] = output;
            simulate_pick(plan.get(), counters.get());
            if (outcome.passes > 200) {
                outcome.error = "no end";
                return outcome;
            }
        }
        if (plan->outcome.status == radix::kNanInData) {
            outcome.error = "nan";
            return outcome;
        }
        if (plan->outcome.status != radix::kFinished) {
            outcome.error = "inconsistent";
            return outcome;
        }
        /* The final kernel. */
        for (uint32_t s = 0; s < plan->outcome.segment_count; ++s) {
            std::vector<uint64_t> keys = segments[s];
            const radix::Segment &segment = plan->segments[s];
            if (keys.size() != segment.count) {
                outcome.error = "segment size";
                return outcome;
            }
            std::sort(keys.begin(), keys.end());
            for (uint32_t r = segment.rank_first; r < segment.rank_end; ++r)
                plan->outcome.results[r] = key_to_double(keys[plan->ranks[r] - segment.below - 1], data.key_bits);
        }
        for (uint32_t r = 0; r < rank_count; ++r)
            outcome.values[first + r] = plan->outcome.results[r];
    }
    outcome.ok = true;
    return outcome;
}

bool same_key(double value, uint64_t key, uint32_t key_bits)
{
    if (key_bits == 32)
        return total_order_key(static_cast<float>(value)) == static_cast<uint32_t>(key) &&
               static_cast<double>(static_cast<float>(value)) == value;
    return total_order_key(value) == key;
}

bool results_exact(const std::vector<double> &values, const std::vector<uint64_t> &ranks,
                   const std::vector<uint64_t> &sorted, uint32_t key_bits, std::string *detail)
{
    for (size_t i = 0; i < ranks.size(); ++i)
        if (!same_key(values[i], sorted[ranks[i] - 1], key_bits)) {
            char text[160];
            std::snprintf(text, sizeof text, "rank %llu: got %a, expected %a", static_cast<unsigned long long>(ranks[i]),
                          values[i], key_to_double(sorted[ranks[i] - 1], key_bits));
            *detail = text;
            return false;
        }
    return true;
}

/* --------------------------------------------- cutting plane, simulated */

struct CuttingPlaneOutcome {
    bool ok = false;
    std::string error;
    int passes = 0;
    uint64_t sorted_count = 0;
    bool log_transform = false;
    std::vector<double> values;
};

/* sort_count: where the iterations stop (0: the module's default). The
 * sizes here are small, so the tests stop much earlier than the module would,
 * to exercise the iterations. */
CuttingPlaneOutcome simulate_cutting_plane(const Data &data, const std::vector<uint64_t> &ranks,
                                           uint64_t sort_count = 512)
{
    CuttingPlaneOutcome outcome;
    const uint64_t n = data.keys.size();
    std::vector<double> x(n);
    for (size_t i = 0; i < n; ++i)
        x[i] = data.value(i);
    cutting_plane::Stats stats{kInf, -kInf, 0.0, 0.0, 0, 0, 0, 0, 0, 0};
    for (double v : x) {
        if (v != v) {
            ++stats.nan_count;
            continue;
        }
        stats.min = std::fmin(stats.min, v);
        stats.max = std::fmax(stats.max, v);
        stats.negative_count += v < 0.0;
        if (std::isinf(v)) {
            stats.negative_infinity_count += v < 0.0;
            stats.positive_infinity_count += v > 0.0;
            continue;
        }
        stats.sum += v;
        stats.transformed_sum += cutting_plane::transform(v, true);
        stats.zero_count += v == 0.0;
        stats.negative_zero_count += v == 0.0 && std::signbit(v);
    }
    cutting_plane::Planner planner;
    planner.reset(n, ranks.data(), ranks.size());
    planner.set_sort_count(sort_count);
    cutting_plane::Status status = planner.absorb_stats(stats);
    outcome.log_transform = planner.log_transform();
    cutting_plane::PassPoints points;
    while (status == cutting_plane::Status::kOk && planner.plan_pass(&points)) {
        cutting_plane::PointResult results[cutting_plane::kMaxPoints];
        for (int j = 0; j < points.count; ++j)
            results[j] = cutting_plane::PointResult{0.0, 0, 0, -kInf, kInf};
        for (double v : x) {
            const double u = points.log_transform ? cutting_plane::transform(v, true) : v;
            for (int j = 0; j < points.count; ++j) {
                cutting_plane::PointResult &r = results[j];
                if (!std::isinf(v))
                    r.distance_sum += std::fabs(u - points.transformed[j]);
                if (v < points.value[j]) {
                    ++r.less_count;
                    r.below_max = std::fmax(r.below_max, v);
                } else if (v > points.value[j]) {
                    r.above_min = std::fmin(r.above_min, v);
                } else {
                    ++r.equal_count;
                }
            }
        }
        ++outcome.passes;
        status = planner.absorb_pass(results);
    }
    if (status == cutting_plane::Status::kNanInData) {
        outcome.error = "nan";
        return outcome;
    }
    if (status != cutting_plane::Status::kOk) {
        outcome.error = "inconsistent";
        return outcome;
    }
    std::vector<cutting_plane::Interval> intervals;
    std::vector<uint64_t> positions;
    uint64_t expected = 0;
    if (planner.plan_copy(&intervals, &expected, &positions)) {
        for (size_t i = 1; i < intervals.size(); ++i)
            if (!(intervals[i].lo > intervals[i - 1].hi)) {
                outcome.error = "intervals overlap";
                return outcome;
            }
        std::vector<uint64_t> copied;
        for (size_t i = 0; i < n; ++i) {
            const double v = x[i];
            for (const cutting_plane::Interval &interval : intervals)
                if (v >= interval.lo && v <= interval.hi) {
                    copied.push_back(data.keys[i]);
                    break;
                }
        }
        if (copied.size() != expected) {
            outcome.error = "copy count";
            return outcome;
        }
        std::sort(copied.begin(), copied.end());
        std::vector<double> values;
        for (uint64_t p : positions) {
            if (p >= copied.size()) {
                outcome.error = "position";
                return outcome;
            }
            values.push_back(key_to_double(copied[p], data.key_bits));
        }
        planner.absorb_sorted(values.data());
        outcome.sorted_count = expected;
    }
    if (!planner.resolved()) {
        outcome.error = "unresolved";
        return outcome;
    }
    outcome.values.assign(ranks.size(), 0.0);
    planner.write_results(outcome.values.data());
    outcome.ok = true;
    return outcome;
}

/* ------------------------------------------------------------------ cases */

struct Tally {
    int worst_data_passes = 0;
    std::string worst_case;
};

void run_case(const Data &data, const std::vector<uint64_t> &ranks, const std::string &rank_name, bool run_cp,
              Tally *tally, bool quiet = true)
{
    const std::vector<uint64_t> sorted = sorted_keys(data);
    const std::string what = data.name + ", n=" + std::to_string(data.keys.size()) + ", " + rank_name;
    const bool nan = has_nan(data);

    RadixOutcome radix_outcome = simulate_radix(data, ranks);
    if (nan) {
        check(!radix_outcome.ok && radix_outcome.error == "nan", "radix reports NaN: " + what);
    } else {
        std::string detail = radix_outcome.error;
        const bool exact = radix_outcome.ok && results_exact(radix_outcome.values, ranks, sorted, data.key_bits, &detail);
        check(exact, "radix exact: " + what + " (" + detail + ")");
        /* At most two reads of the data: the first pass, and either a second
         * for knots or a window that missed. */
        check(radix_outcome.data_passes <= 2,
              "radix reads the data at most twice: " + what + " (" + std::to_string(radix_outcome.data_passes) + ")");
        if (radix_outcome.data_passes > tally->worst_data_passes) {
            tally->worst_data_passes = radix_outcome.data_passes;
            tally->worst_case = what;
        }
        if (!quiet)
            std::printf("  %-60s radix: %s, %d passes, %d over the data, %.2f reads\n", what.c_str(),
                        radix_outcome.mode == radix::kModeWindows ? "windows" : "knots", radix_outcome.passes,
                        radix_outcome.data_passes,
                        static_cast<double>(radix_outcome.elements_read) / static_cast<double>(data.keys.size()));
    }
    if (!run_cp)
        return;
    CuttingPlaneOutcome cp = simulate_cutting_plane(data, ranks);
    if (nan) {
        check(!cp.ok && cp.error == "nan", "cutting plane reports NaN: " + what);
    } else {
        std::string detail = cp.error;
        const bool exact = cp.ok && results_exact(cp.values, ranks, sorted, data.key_bits, &detail);
        check(exact, "cutting plane exact: " + what + " (" + detail + ")");
        check(cp.passes <= cutting_plane::kMaxPasses, "cutting plane passes bounded: " + what);
        if (!quiet)
            std::printf("  %-60s cutting plane: %d Kelley passes%s, %llu sorted\n", what.c_str(), cp.passes,
                        cp.log_transform ? " (log)" : "", static_cast<unsigned long long>(cp.sorted_count));
    }
}

void test_distributions(double scale, bool verbose)
{
    std::mt19937_64 rng(20240611);
    Tally tally;
    const size_t sizes[] = {static_cast<size_t>(5000), static_cast<size_t>(200003 * scale)};
    for (size_t n : sizes) {
        for (const char *kind : kKinds) {
            const std::vector<double> values = generate(kind, n, rng);
            for (bool as_float : {false, true}) {
                const Data data = make_data(kind, values, as_float);
                const uint64_t count = data.keys.size();
                run_case(data, median_ranks(count), "median", true, &tally, !verbose || n < 10000);
                run_case(data, percentile_ranks(count), "101 percentiles", n < 10000 || as_float, &tally,
                         !verbose || n < 10000);
                run_case(data, {1, 2, count - 1, count}, "extremes", true, &tally);
                run_case(data, {count / 4, count / 2, 3 * count / 4}, "quartiles", false, &tally);
            }
        }
    }
    std::printf("radix: worst case read the data %d times (%s)\n", tally.worst_data_passes, tally.worst_case.c_str());
}

/* Random data, ranks, sizes and capacities, including a compaction buffer too
 * small for the first pass's windows (the overflow must be noticed). */
void test_fuzz(int iterations)
{
    std::mt19937_64 rng(99);
    Tally tally;
    const double specials[] = {0.0, -0.0, 1.0, -1.0, kInf, -kInf, 1.7976931348623157e308, -1.7976931348623157e308,
                               4.9406564584124654e-324, -4.9406564584124654e-324, 1e300, 1e-300, 2.5};
    for (int it = 0; it < iterations; ++it) {
        const size_t n = 4097 + rng() % 150000;
        std::vector<double> v(n);
        const int mix = static_cast<int>(rng() % 7);
        std::normal_distribution<double> normal;
        std::cauchy_distribution<double> cauchy;
        const double special_rate = rng() % 4 == 0 ? 0.5 : rng() % 3 == 0 ? 0.01 : 0.0001;
        const uint64_t distinct = 1 + rng() % 50;
        for (double &x : v) {
            const double u = static_cast<double>(rng() >> 11) * 0x1.0p-53;
            if (u < special_rate) {
                x = specials[rng() % 13];
                continue;
            }
            switch (mix) {
            case 0: x = normal(rng); break;
            case 1: x = cauchy(rng); break;
            case 2: x = static_cast<double>(rng() % distinct); break;
            case 3: x = std::ldexp(1.0, static_cast<int>(rng() % 2000) - 1000) * (rng() & 1 ? 1 : -1); break;
            case 4: x = normal(rng) * 1e-308; break;
            case 5: x = std::nextafter(1.0, 2.0) * (1.0 + static_cast<double>(rng() % 64) * 0x1p-52); break;
            default: x = std::exp(5 * normal(rng)); break;
            }
        }
        if (rng() % 5 == 0)
            std::sort(v.begin(), v.end());
        const bool as_float = rng() % 3 == 0;
        const Data data = make_data("fuzz " + std::to_string(it) + " mix " + std::to_string(mix), v, as_float);
        const size_t rank_count = rng() % 4 == 0 ? 1 + rng() % 600 : 1 + rng() % 16;
        std::vector<uint64_t> ranks;
        for (size_t i = 0; i < rank_count; ++i) {
            switch (rng() % 4) {
            case 0: ranks.push_back(1 + rng() % 5); break;
            case 1: ranks.push_back(n - rng() % 5); break;
            default: ranks.push_back(1 + rng() % n); break;
            }
        }
        if (rng() % 3 == 0) {
            const uint64_t base = 1 + rng() % (n - 200);
            ranks.clear();
            for (size_t i = 0; i < rank_count; ++i)
                ranks.push_back(base + rng() % 200);
        }
        std::sort(ranks.begin(), ranks.end());
        ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
        const std::vector<uint64_t> sorted = sorted_keys(data);
        const double share = rng() % 4 == 0 ? static_cast<double>(rng() % 100) / 2000.0 : -1.0;
        RadixOutcome outcome = simulate_radix(data, ranks, share);
        std::string detail = outcome.error;
        check(outcome.ok && results_exact(outcome.values, ranks, sorted, data.key_bits, &detail),
              "radix fuzz exact: " + data.name + " n=" + std::to_string(n) + " (" + detail + ")");
        if (ranks.size() <= 64) {
            CuttingPlaneOutcome cp = simulate_cutting_plane(data, ranks);
            detail = cp.error;
            check(cp.ok && results_exact(cp.values, ranks, sorted, data.key_bits, &detail),
                  "cutting plane fuzz exact: " + data.name + " n=" + std::to_string(n) + " (" + detail + ")");
        }
    }
}

void test_nan()
{
    std::mt19937_64 rng(5);
    std::vector<double> v = generate("normal", 100000, rng);
    v[777] = std::numeric_limits<double>::quiet_NaN();
    Tally tally;
    run_case(make_data("normal with a NaN", v, false), median_ranks(v.size()), "median", true, &tally);
    run_case(make_data("normal with a NaN", v, true), median_ranks(v.size()), "median", true, &tally);
    v[777] = -std::numeric_limits<double>::quiet_NaN();
    run_case(make_data("normal with a negative NaN", v, false), {1, v.size()}, "extremes", true, &tally);
}

/* --------------------------------------------------- pieces and bad input */

void test_total_order()
{
    const double values[] = {-kInf, -1e308, -1.0, -4.9406564584124654e-324, -0.0, 0.0, 4.9406564584124654e-324,
                             1.0, 1e308, kInf};
    for (size_t i = 1; i < sizeof values / sizeof *values; ++i) {
        check(total_order_key(values[i - 1]) < total_order_key(values[i]), "64-bit keys ascend");
        const float a = static_cast<float>(values[i - 1]), b = static_cast<float>(values[i]);
        check(total_order_key(a) <= total_order_key(b), "32-bit keys do not descend");
    }
    check(total_order_key(-0.0f) < total_order_key(0.0f), "-0.0f before +0.0f");
    check(key_is_nan(total_order_key(std::numeric_limits<double>::quiet_NaN())), "NaN key recognised");
    check(key_is_nan(total_order_key(-std::numeric_limits<double>::quiet_NaN())), "negative NaN key recognised");
    check(key_is_nan(total_order_key(std::numeric_limits<float>::quiet_NaN())), "float NaN key recognised");
    check(!key_is_nan(total_order_key(kInf)) && !key_is_nan(total_order_key(-kInf)), "infinities are not NaN");
    check(key_to_double(total_order_key(1.5f), 32) == 1.5, "32-bit key widens exactly");
    check(bit_length(0) == 0 && bit_length(1) == 1 && bit_length(~uint64_t{0}) == 64, "bit_length");
    for (uint64_t n : {uint64_t{4097}, uint64_t{100000}, uint64_t{1} << 40}) {
        uint64_t previous = 0;
        bool ascending = true, inside = true;
        for (uint32_t i = 0; i < radix::kSampleCount; ++i) {
            const uint64_t p = radix::sample_position(i, n);
            inside = inside && p < n;
            ascending = ascending && (i == 0 || p > previous);
            previous = p;
        }
        check(inside && ascending, "sample positions ascend inside the data, n=" + std::to_string(n));
    }
}

void test_method_choice()
{
    check(choose_method(0, 4096, 1) == Method::kSmall, "small arrays: one block sort");
    check(choose_method(2, 100, 1) == Method::kSmall, "small arrays: whatever the method");
    check(choose_method(0, 1 << 20, 2) == Method::kRadix, "AUTO median: radix");
    check(choose_method(0, 1 << 16, 2) == Method::kSort, "AUTO median of 2^16: sort");
    check(choose_method(0, 1 << 27, 202) == Method::kRadix, "AUTO percentiles: radix");
    check(choose_method(0, 1 << 27, 100000) == Method::kSort, "AUTO many ranks: sort");
    check(choose_method(1, 1 << 20, 2) == Method::kCuttingPlane, "CUTTING_PLANE as asked");
    check(choose_method(2, 1 << 20, 5000) == Method::kRadix, "RADIX as asked, even for many ranks");
    check(choose_method(3, 1 << 20, 1) == Method::kSort, "SORT as asked");

    RankSet set;
    const size_t good[] = {1, 3, 3, 7};
    check(set.assign(good, 4, 7) && set.distinct().size() == 3, "repeated ranks merge");
    double distinct_values[] = {10.0, 30.0, 70.0}, results[4];
    set.expand(distinct_values, results);
    check(results[0] == 10.0 && results[1] == 30.0 && results[2] == 30.0 && results[3] == 70.0, "results expand");
    const size_t zero[] = {0, 1};
    const size_t beyond[] = {1, 8};
    const size_t descending[] = {5, 2};
    check(!set.assign(zero, 2, 7), "rank 0 refused");
    check(!set.assign(beyond, 2, 7), "rank beyond the data refused");
    check(!set.assign(descending, 2, 7), "descending ranks refused");
    check(!set.assign(nullptr, 1, 7) && !set.assign(good, 0, 7), "no ranks refused");
}

void test_bad_planner_input()
{
    std::vector<uint64_t> sample(radix::kSampleCount);
    for (uint32_t i = 0; i < radix::kSampleCount; ++i)
        sample[i] = total_order_key(static_cast<double>(i));
    std::unique_ptr<radix::Plan> plan(new radix::Plan);
    const uint64_t median[] = {50000, 50001};
    check(radix::plan_first_pass(sample.data(), radix::kSampleCount, 100000, median, 2, 64, 20000, 5000, plan.get(),
                                 nullptr),
          "a good first pass is planned");
    check(plan->outcome.mode == radix::kModeWindows, "a median is planned with windows");
    check(plan->threshold_count == 2 && plan->kernel_bracket_count == 1,
          "its gaps are counted by two thresholds, its window by the kernel");
    const uint64_t zero[] = {0};
    const uint64_t beyond[] = {100001};
    const uint64_t repeated[] = {5, 5};
    check(!radix::plan_first_pass(sample.data(), radix::kSampleCount, 100000, zero, 1, 64, 1, 1, plan.get(), nullptr),
          "rank 0 refused by the radix planner");
    check(!radix::plan_first_pass(sample.data(), radix::kSampleCount, 100000, beyond, 1, 64, 1, 1, plan.get(), nullptr),
          "rank beyond the data refused by the radix planner");
    check(!radix::plan_first_pass(sample.data(), radix::kSampleCount, 100000, repeated, 2, 64, 1, 1, plan.get(), nullptr),
          "repeated ranks refused by the radix planner");
    check(!radix::plan_first_pass(sample.data(), radix::kSampleCount, 100000, median, 0, 64, 1, 1, plan.get(), nullptr),
          "no ranks refused by the radix planner");
    check(!radix::plan_first_pass(sample.data(), radix::kSampleCount, 100000, median, 2, 48, 1, 1, plan.get(), nullptr),
          "a key width of 48 refused");
    check(!radix::plan_first_pass(sample.data(), radix::kSampleCount, 100000, median, 2, 32, 1, 1, plan.get(), nullptr),
          "64-bit sample keys refused as 32-bit keys");
    std::vector<uint64_t> unsorted = sample;
    std::swap(unsorted[10], unsorted[20]);
    check(!radix::plan_first_pass(unsorted.data(), radix::kSampleCount, 100000, median, 2, 64, 1, 1, plan.get(), nullptr),
          "an unsorted sample refused");
    std::vector<uint64_t> too_many(radix::kMaxRanks + 1);
    for (size_t i = 0; i < too_many.size(); ++i)
        too_many[i] = i + 1;
    check(!radix::plan_first_pass(sample.data(), radix::kSampleCount, 100000, too_many.data(),
                                  static_cast<uint32_t>(too_many.size()), 64, 1, 1, plan.get(), nullptr),
          "more than kMaxRanks ranks refused in one run");

    /* Counts that contradict the plan must stop the picker, never answer. */
    std::mt19937_64 rng(3);
    const Data data = make_data("normal", generate("normal", 100000, rng), false);
    std::vector<uint64_t> data_sample(radix::kSampleCount);
    for (uint32_t i = 0; i < radix::kSampleCount; ++i)
        data_sample[i] = data.keys[radix::sample_position(i, data.keys.size())];
    std::sort(data_sample.begin(), data_sample.end());
    std::unique_ptr<radix::Counters> counters(new radix::Counters);
    auto first_pass = [&](void) {
        radix::plan_first_pass(data_sample.data(), radix::kSampleCount, 100000, median, 2, 64, 20000, 5000, plan.get(),
                               nullptr);
        std::memset(counters.get(), 0, sizeof *counters);
        std::vector<uint64_t> output;
        std::vector<std::vector<uint64_t>> segments(radix::kMaxRanks);
        simulate_pass(*plan, data.keys, true, 64, &output, &segments, counters.get());
    };
    first_pass();
    counters->cells[plan->brackets[plan->kernel_brackets[0]].cell_base] += 1;  /* one element too many */
    simulate_pick(plan.get(), counters.get());
    check(plan->outcome.status == radix::kInconsistent, "a total that is not the data's count is caught");
    first_pass();
    counters->below_threshold[0] += 1;
    simulate_pick(plan.get(), counters.get());
    check(plan->outcome.status == radix::kInconsistent, "a threshold count that does not add up is caught");
    first_pass();
    counters->nan_count = 1;
    simulate_pick(plan.get(), counters.get());
    check(plan->outcome.status == radix::kNanInData, "a NaN stops the picker");
    first_pass();
    simulate_pick(plan.get(), counters.get());
    check(plan->outcome.status == radix::kRunning && plan->bracket_count >= 1, "a second pass is planned");
    /* The second pass: falsify what it counts. */
    {
        std::vector<uint64_t> output;
        std::vector<std::vector<uint64_t>> segments(radix::kMaxRanks);
        const std::vector<uint64_t> &src = data.keys;  /* wrong source on purpose if the plan wants a buffer */
        simulate_pass(*plan, src, plan->source == radix::kSourceData, 64, &output, &segments, counters.get());
        for (uint32_t s = 0; s < radix::kMaxRanks; ++s)
            counters->segment_fill[s] += 1;
        counters->cells[0] += 3;
        simulate_pick(plan.get(), counters.get());
        check(plan->outcome.status == radix::kInconsistent, "segments or cells that do not match are caught");
    }

    /* The cutting-plane planner. */
    check(std::isnan(cutting_plane::kelley_point(0.0, 1.0, 5, 1.0, 1.0, 5, 10)), "no plane intersection: NaN");
    const double y = cutting_plane::kelley_point(0.0, 10.0, 0, 10.0, 10.0, 4, 4);
    check(y > 0.0 && y < 10.0, "Kelley's point lies inside the bracket");
    for (double x : {0.0, -0.0, 1.0, -3.5, 1e300, -1e-300, 7e-310}) {
        const double back = cutting_plane::inverse_transform(cutting_plane::transform(x, true), true);
        check(std::fabs(back - x) <= 1e-12 * std::fabs(x) + 1e-300, "the log transform inverts");
    }
    check(cutting_plane::transform(2.0, true) < cutting_plane::transform(3.0, true) &&
              cutting_plane::transform(-3.0, true) < cutting_plane::transform(-2.0, true),
          "the log transform is monotone");
    cutting_plane::Planner planner;
    const uint64_t big = uint64_t{1} << 24;
    const uint64_t big_rank[] = {big / 3};
    planner.reset(big, big_rank, 1);
    cutting_plane::Stats big_stats{0.0, 9.0, 4.5 * static_cast<double>(big), 0.0, 0, 0, 1, 0, 0, 0};
    check(planner.absorb_stats(big_stats) == cutting_plane::Status::kOk, "stats absorbed");
    cutting_plane::PassPoints points;
    check(planner.plan_pass(&points) && points.count == 1 && points.value[0] > 0.0 && points.value[0] < 9.0,
          "one point inside the bracket for one rank");
    cutting_plane::PointResult contradiction{0.0, big + 1, 0, 0.0, 9.0};  /* more below than there are */
    check(planner.absorb_pass(&contradiction) == cutting_plane::Status::kInconsistent,
          "a count beyond the data is caught");
    const uint64_t ranks[] = {3};
    planner.reset(10, ranks, 1);
    cutting_plane::Stats stats{0.0, 9.0, 45.0, 0.0, 0, 0, 1, 0, 0, 0};
    check(planner.absorb_stats(stats) == cutting_plane::Status::kOk && !planner.plan_pass(&points),
          "ten elements are sorted at once");
    cutting_plane::PointResult unused{0.0, 11, 0, 0.0, 9.0};
    (void)unused;
    planner.reset(10, ranks, 1);
    stats.nan_count = 1;
    check(planner.absorb_stats(stats) == cutting_plane::Status::kNanInData, "NaN stops the cutting plane");
    planner.reset(10, ranks, 1);
    cutting_plane::Stats huge{-1e300, 1e300, 0.0, 0.0, 0, 5, 0, 0, 0, 0};
    planner.absorb_stats(huge);
    check(planner.log_transform(), "a range of 2e300 takes the log transform");
    planner.reset(10, ranks, 1);
    cutting_plane::Stats narrow{-1.0, 1.0, 0.0, 0.0, 0, 5, 0, 0, 0, 0};
    planner.absorb_stats(narrow);
    check(!planner.log_transform(), "a range of 2 does not");
    planner.reset(10, ranks, 1);
    cutting_plane::Stats zeros{-0.0, 0.0, 0.0, 0.0, 0, 0, 10, 4, 0, 0};
    planner.absorb_stats(zeros);
    double value = 1.0;
    planner.write_results(&value);
    check(planner.resolved() && value == 0.0 && std::signbit(value), "rank 3 of four -0.0 and six +0.0 is -0.0");
}

}  /* namespace */

int main(int argc, char **argv)
{
    const double scale = argc > 1 ? std::atof(argv[1]) : 1.0;
    const bool verbose = argc > 2;
    test_total_order();
    test_method_choice();
    test_bad_planner_input();
    test_nan();
    test_distributions(scale > 0 ? scale : 1.0, verbose);
    test_fuzz(static_cast<int>(200 * (scale > 0 ? scale : 1.0)));
    std::printf("%d passed, %d failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
