/*
 * select_plan.cpp: rank bookkeeping and the AUTO method choice (see
 * select_plan.h).
 */
#include "select_plan.h"

namespace statgpu_cuda {

Method choose_method(int requested, uint64_t data_count, size_t distinct_rank_count)
{
    if (data_count <= kSmallCount)
        return Method::kSmall;
    switch (requested) {
    case 1: return Method::kCuttingPlane;
    case 2: return Method::kRadix;
    case 3: return Method::kSort;
    default: break;
    }
    if (data_count <= kAutoSortMaxCount)
        return Method::kSort;
    return distinct_rank_count <= kAutoRadixMaxRanks ? Method::kRadix : Method::kSort;
}

const char *method_name(Method method)
{
    switch (method) {
    case Method::kSmall: return "block sort";
    case Method::kCuttingPlane: return "cutting plane";
    case Method::kRadix: return "radix select";
    case Method::kSort: return "radix sort";
    }
    return "?";
}

bool RankSet::assign(const size_t *ranks, size_t rank_count, uint64_t data_count)
{
    distinct_.clear();
    index_of_input_.clear();
    if (ranks == nullptr || rank_count == 0)
        return false;
    for (size_t i = 0; i < rank_count; ++i)
        if (ranks[i] < 1 || ranks[i] > data_count || (i > 0 && ranks[i] < ranks[i - 1]))
            return false;
    index_of_input_.resize(rank_count);
    for (size_t i = 0; i < rank_count; ++i) {
        if (distinct_.empty() || distinct_.back() != ranks[i])
            distinct_.push_back(ranks[i]);
        index_of_input_[i] = distinct_.size() - 1;
    }
    return true;
}

void RankSet::expand(const double *distinct_values, double *results) const
{
    for (size_t i = 0; i < index_of_input_.size(); ++i)
        results[i] = distinct_values[index_of_input_[i]];
}

} /* namespace statgpu_cuda */
