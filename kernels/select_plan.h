/*
 * select_plan.h: what every selection method shares on the host: checking and
 * de-duplicating the requested ranks, and choosing the method (AUTO) from the
 * size of the work. Plain C++, no CUDA, so that it is tested without a GPU.
 * The methods' own planning lives in radix_plan.h and cutting_plane_plan.h.
 */
#ifndef STATGPU_KERNELS_SELECT_PLAN_H
#define STATGPU_KERNELS_SELECT_PLAN_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace statgpu_cuda {

/* Arrays of at most this many elements are sorted by one block, whatever the
 * method: one launch, and every method would end in such a sort anyway. */
constexpr uint64_t kSmallCount = 4096;

/* AUTO sorts arrays of at most this many elements: radix selection has a
 * fixed cost of about 0.15 ms (sample, host plan, a few launches), and on an
 * H100 CUB's sort of up to 2^18 keys is as fast or faster. */
constexpr uint64_t kAutoSortMaxCount = uint64_t{1} << 18;

/* AUTO takes radix selection up to this many distinct ranks (in runs of
 * radix::kMaxRanks), a full sort beyond: on an H100, 101 percentiles of 2^27
 * doubles by radix selection cost a third or less of a full sort. */
constexpr size_t kAutoRadixMaxRanks = 1024;

enum class Method { kSmall, kCuttingPlane, kRadix, kSort };

/* The method for a call: requested is STATGPU_CUDA_SELECT_* (0 AUTO,
 * 1 CUTTING_PLANE, 2 RADIX, 3 SORT). */
Method choose_method(int requested, uint64_t data_count, size_t distinct_rank_count);

const char *method_name(Method method);

/* The requested ranks, checked and with repeats merged. */
class RankSet {
public:
    /* False (and nothing kept) unless 1 <= ranks[i] <= data_count and the
     * ranks do not descend. May throw std::bad_alloc. */
    bool assign(const size_t *ranks, size_t rank_count, uint64_t data_count);

    const std::vector<uint64_t> &distinct() const { return distinct_; }
    /* results[i] for the i-th requested rank, from values of the distinct ranks. */
    void expand(const double *distinct_values, double *results) const;

private:
    std::vector<uint64_t> distinct_;
    std::vector<size_t> index_of_input_;
};

} /* namespace statgpu_cuda */

#endif /* STATGPU_KERNELS_SELECT_PLAN_H */
