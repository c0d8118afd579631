// gmm.cxx: GMMFIT: the rows of Data as observations, a Gaussian mixture by EM
// through the engine, and the table its Output names.
#include "call.hxx"

namespace statgpu::addin
{
namespace
{
// Covariance: omitted (void) is "full"; otherwise one of the four words, in
// any case, blanks around it ignored.
statgpu_gmm_covariance readCovariance(const Any& covariance)
{
    if (!covariance.hasValue())
        return STATGPU_GMM_FULL;
    OUString word;
    if (covariance >>= word)
    {
        word = word.trim();
        const std::pair<const char*, statgpu_gmm_covariance> words[] = {
            { "full", STATGPU_GMM_FULL }, { "tied", STATGPU_GMM_TIED },
            { "diag", STATGPU_GMM_DIAG }, { "spherical", STATGPU_GMM_SPHERICAL } };
        for (const auto& [name, type] : words)
            if (word.equalsIgnoreAsciiCaseAscii(name))
                return type;
    }
    raiseCalcError(CalcError::IllegalArgument,
                   "Covariance is not one of \"full\", \"tied\", \"diag\", \"spherical\"", argument::gmmFit::covariance);
}
} // namespace

Any SAL_CALL StatGpuAddIn::gmmFit(const Range& data, double k, const Any& covariance, const Any& output,
                                  const Any& restarts, const Any& maxIterations, const Any& seed)
{
    return guarded([&] {
        const OutputChoice chosen = readOutput(output, "gmm", false, argument::gmmFit::output);
        statgpu_gmm_params params;
        statgpu_gmm_params_init(&params);
        params.covariance = readCovariance(covariance);
        static_assert(argument::gmmFit::maxIterations == argument::gmmFit::restarts + 1
                          && argument::gmmFit::seed == argument::gmmFit::restarts + 2,
                      "Restarts, MaxIter and Seed follow each other");
        const RunArguments run = readRunArguments(restarts, maxIterations, seed, params.restart_count,
                                                  params.max_iterations, argument::gmmFit::restarts);
        params.restart_count = run.restarts;
        params.max_iterations = run.max_iterations;
        params.seed = run.seed;
        const Observations observations = readObservations(data, argument::gmmFit::data);
        const std::size_t components = readClusterCount(k, observations.count, argument::gmmFit::k);
        statgpu_gmm_result* fitted = nullptr;
        runEngine("GMMFIT", [&](statgpu_context* context) {
            return statgpu_gmm(context, observations.values.data(), observations.count, observations.variables,
                               observations.count, components, &params, &fitted);
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
