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
        static_assert(argument::kmeans::maxIterations == argument::kmeans::restarts + 1
                          && argument::kmeans::seed == argument::kmeans::restarts + 2,
                      "Restarts, MaxIter and Seed follow each other");
        const RunArguments run = readRunArguments(restarts, maxIterations, seed, params.restart_count,
                                                  params.max_iterations, argument::kmeans::restarts);
        params.restart_count = run.restarts;
        params.max_iterations = run.max_iterations;
        params.seed = run.seed;
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
