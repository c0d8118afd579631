// kmeans.cxx: KMEANS: the rows of Data as observations, k-means through
// the engine, and the table its Output names.
#include "call.hxx"

#include <rtl/math.hxx>

namespace statgpu::addin
{
namespace
{
// KMEANS' Data and k sit where the order statistics' Data and k do.
constexpr sal_Int16 kDataArgument = argument::kmeans::data;
constexpr sal_Int16 kSecondArgument = argument::kmeans::k;

// KMEANS' Data, row by row: a row is an observation when every cell of it
// gives a number (kDataCells: an empty or text cell makes the row missing).
struct Observations
{
    std::vector<double> values;          // count x variables, column-major
    std::vector<bool> complete;          // per row of the range
    std::size_t count = 0;
    std::size_t variables = 0;
};

Observations readObservations(const Range& data)
{
    const auto start = std::chrono::steady_clock::now();
    Observations observations;
    const sal_Int32 rows = data.getLength();
    observations.variables = rows > 0 ? static_cast<std::size_t>(data[0].getLength()) : 0;
    observations.complete.assign(static_cast<std::size_t>(rows), false);
    std::vector<double> row_major;
    row_major.reserve(cellCount(data));
    for (sal_Int32 row = 0; row < rows; ++row)
    {
        const Sequence<Any>& cells = data[row];
        if (static_cast<std::size_t>(cells.getLength()) != observations.variables)
            raiseCalcError(CalcError::IllegalArgument, "the rows of Data differ in length", kDataArgument);
        const std::size_t mark = row_major.size();
        bool complete = true;
        for (const Any& cell : cells)
        {
            double value;
            complete = readCell(cell, kDataCells, kDataArgument, value) && complete;
            row_major.push_back(value);
        }
        if (complete)
            observations.complete[static_cast<std::size_t>(row)] = true;
        else
            row_major.resize(mark);
    }
    observations.count = observations.variables ? row_major.size() / observations.variables : 0;
    observations.values.resize(row_major.size());
    for (std::size_t i = 0; i < observations.count; ++i)
        for (std::size_t v = 0; v < observations.variables; ++v)
            observations.values[i + observations.count * v] = row_major[i * observations.variables + v];
    t_call_times.cells += cellCount(data);
    t_call_times.convert_seconds += secondsSince(start);
    return observations;
}

// KMEANS' k: rounded down, from 1 to the number of complete rows.

// KMEANS' k: rounded down, from 1 to the number of complete rows.
std::size_t readClusterCount(double k, std::size_t observations)
{
    const double count = rtl::math::approxFloor(k);
    if (!(count >= 1.0))
        raiseCalcError(CalcError::IllegalArgument, "k is less than 1", kSecondArgument);
    if (count > static_cast<double>(observations))
        raiseCalcError(CalcError::IllegalArgument, "k is more than the rows of Data without missing values",
                       kSecondArgument);
    return static_cast<std::size_t>(count);
}

// An optional whole number (Restarts, MaxIter, Seed): omitted (void) is the
// default; a number is rounded down and must lie in [low, high]; text is
// converted (textToNumber) and an empty cell is 0, as Calc reads a number
// argument.

} // namespace

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
        const Observations observations = readObservations(data);
        if (observations.count == 0)
            raiseCalcError(CalcError::IllegalArgument, "Data has no row without missing values", kDataArgument);
        const std::size_t clusters = readClusterCount(k, observations.count);
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
