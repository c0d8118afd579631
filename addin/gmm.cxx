// gmm.cxx: GMMFIT: the rows of Data as observations, a Gaussian mixture by EM
// through the engine, and the table its Output names.
#include "call.hxx"

#include <rtl/math.hxx>

namespace statgpu::addin
{
namespace
{
// Covariance: omitted or empty (optionalArgument) is "full"; otherwise one
// of the four words, or "all" (every type), in any case, blanks around it ignored.
std::vector<statgpu_gmm_covariance> readCovariances(const Any& covariance)
{
    const Any given = optionalArgument(covariance, ZeroIs::Empty, argument::gmmFit::covariance);
    if (!given.hasValue())
        return { STATGPU_GMM_FULL };
    OUString word;
    if (given >>= word)
    {
        word = word.trim();
        if (word.equalsIgnoreAsciiCaseAscii("all"))
            return { STATGPU_GMM_FULL, STATGPU_GMM_TIED, STATGPU_GMM_DIAG, STATGPU_GMM_SPHERICAL };
        const std::pair<const char*, statgpu_gmm_covariance> words[] = {
            { "full", STATGPU_GMM_FULL }, { "tied", STATGPU_GMM_TIED },
            { "diag", STATGPU_GMM_DIAG }, { "spherical", STATGPU_GMM_SPHERICAL } };
        for (const auto& [name, type] : words)
            if (word.equalsIgnoreAsciiCaseAscii(name))
                return { type };
    }
    raiseCalcError(CalcError::IllegalArgument,
                   "Covariance is not one of \"full\", \"tied\", \"diag\", \"spherical\", \"all\"",
                   argument::gmmFit::covariance);
}

// k: one cell (a number, as Calc reads a number argument; an empty cell is
// 0, so Err:502, however it is handed over: k has no default), or a range or
// inline array of candidates, whose empty cells are skipped and whose text
// is converted; each rounded down and at least 1. A candidate above the
// complete rows is shown unfitted in the selection, not an error.
struct ComponentCounts
{
    std::vector<std::size_t> values;
    bool several = false;
};

ComponentCounts readComponentCounts(const Range& k, std::size_t observations)
{
    ComponentCounts counts;
    if (cellCount(k) == 1)
    {
        const Any cell = optionalArgument(Any(k), ZeroIs::Number, argument::gmmFit::k);
        double value = 0.0;
        if (cell.hasValue())
            readCell(cell, kParameterCells, argument::gmmFit::k, value);
        counts.values.push_back(readClusterCount(value, observations, argument::gmmFit::k));
        return counts;
    }
    std::vector<double> numbers;
    appendNumbers(k, CellPolicy{ EmptyCells::Skip, TextCells::Convert }, argument::gmmFit::k, numbers);
    if (numbers.empty())
        raiseCalcError(CalcError::IllegalArgument, "k holds no number", argument::gmmFit::k);
    for (const double number : numbers)
    {
        const double count = rtl::math::approxFloor(number);
        if (!(count >= 1.0 && count <= 1e9))
            raiseCalcError(CalcError::IllegalArgument, "a k of the list is not between 1 and 10^9",
                           argument::gmmFit::k);
        counts.values.push_back(static_cast<std::size_t>(count));
    }
    counts.several = true;
    return counts;
}
} // namespace

Any SAL_CALL StatGpuAddIn::gmmFit(const Range& data, const Range& k, const Any& covariance, const Any& output,
                                  const Any& restarts, const Any& maxIterations, const Any& seed)
{
    return guarded([&] {
        const OutputChoice chosen = readOutput(output, "gmm", false, argument::gmmFit::output);
        statgpu_gmm_params params;
        statgpu_gmm_params_init(&params);
        params.reg_covar_relative = 1;  /* the same fit in any units */
        const std::vector<statgpu_gmm_covariance> types = readCovariances(covariance);
        params.covariance = types.front();
        static_assert(argument::gmmFit::maxIterations == argument::gmmFit::restarts + 1
                          && argument::gmmFit::seed == argument::gmmFit::restarts + 2,
                      "Restarts, MaxIter and Seed follow each other");
        const RunArguments run = readRunArguments(restarts, maxIterations, seed, params.restart_count,
                                                  params.max_iterations, argument::gmmFit::restarts);
        params.restart_count = run.restarts;
        params.max_iterations = run.max_iterations;
        params.seed = run.seed;
        const Observations observations = readObservations(data, argument::gmmFit::data);
        const ComponentCounts counts = readComponentCounts(k, observations.count);
        statgpu_gmm_result* fitted = nullptr;
        runEngine("GMMFIT", [&](statgpu_context* context) {
            if (counts.several || types.size() > 1)
                return statgpu_gmm_select(context, observations.values.data(), observations.count,
                                          observations.variables, observations.count, counts.values.data(),
                                          counts.values.size(), types.data(), types.size(), &params, &fitted);
            return statgpu_gmm(context, observations.values.data(), observations.count, observations.variables,
                               observations.count, counts.values.front(), &params, &fitted);
        });
        const std::unique_ptr<statgpu_gmm_result, void (*)(statgpu_gmm_result*)> result(fitted,
                                                                                         statgpu_gmm_result_destroy);
        return resultTable(
            [&](statgpu_context* context, const statgpu_table_params* table_params, statgpu_table_set** set) {
                return statgpu_gmm_tables(context, result.get(), table_params, set);
            },
            chosen.table, observations.complete);
    });
}

} // namespace statgpu::addin
