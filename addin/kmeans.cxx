// kmeans.cxx: KMEANS: the rows of Data as observations, k-means through
// the engine, and the table its Output names.
#include "call.hxx"

namespace statgpu::addin
{
std::unique_ptr<statgpu_kmeans_result, void (*)(statgpu_kmeans_result*)>
StatGpuAddIn::fitKmeans(const std::vector<double>& values, std::size_t n_obs, std::size_t n_vars, std::size_t k,
                        const statgpu_kmeans_params& params)
{
    statgpu_kmeans_result* result = nullptr;
    runEngine("KMEANS", [&](statgpu_context* context) {
        return statgpu_kmeans(context, values.data(), n_obs, n_vars, n_obs, k, &params, &result);
    });
    return { result, statgpu_kmeans_result_destroy };
}

Any SAL_CALL StatGpuAddIn::kmeans(const Range& data, double k, const Any& output, const Any& restarts,
                                  const Any& maxIterations, const Any& seed)
{
    return guarded([&] {
        const OutputChoice chosen = readOutput(output, "kmeans", false, argument::kmeans::output);
        const Observations observations = readObservations(data, argument::kmeans::data);
        const std::size_t clusters = readClusterCount(k, observations.count, argument::kmeans::k);
        statgpu_kmeans_params params;
        statgpu_kmeans_params_init(&params);
        params.restart_count = readOptionalWholeNumber(restarts, params.restart_count, 1, 1000,
                                                       argument::kmeans::restarts, "Restarts is not between 1 and 1000");
        params.max_iterations = readOptionalWholeNumber(maxIterations, params.max_iterations, 1, 100000,
                                                        argument::kmeans::maxIterations,
                                                        "MaxIter is not between 1 and 100000");
        params.seed = readOptionalWholeNumber(seed, 0, 0, 0x1p53, argument::kmeans::seed,
                                              "Seed is not a whole number from 0 to 2^53");
        const auto result = fitKmeans(observations.values, observations.count, observations.variables, clusters,
                                      params);
        return resultTable(
            [&](statgpu_context* context, const statgpu_table_params* table_params, statgpu_table_set** set) {
                return statgpu_kmeans_tables(context, result.get(), table_params, set);
            },
            chosen.table, observations.complete);
    });
}

} // namespace statgpu::addin
