// lts.cxx: LTSFIT: Y and X row by row (call.cxx's readRegressionRows), least trimmed squares through the
// engine, and the table its Output names.
#include "call.hxx"

namespace statgpu::addin
{
namespace
{
// Alpha: omitted or empty (optionalArgument: 0 is no Alpha) is the default;
// a number in [0.5, 1]; text is converted, as Calc reads a number argument.
double readAlpha(const Any& argument, double default_value)
{
    const Any given = optionalArgument(argument, ZeroIs::Empty, argument::ltsFit::alpha);
    if (!given.hasValue())
        return default_value;
    double value = 0.0;
    readCell(given, kParameterCells, argument::ltsFit::alpha, value);
    if (!(value >= 0.5 && value <= 1.0))
        raiseCalcError(CalcError::IllegalArgument, "Alpha is not between 0.5 and 1", argument::ltsFit::alpha);
    return value;
}

} // namespace

std::unique_ptr<statgpu_lts_result, void (*)(statgpu_lts_result*)>
StatGpuAddIn::fitLts(const std::vector<double>& y, const std::vector<double>& x, std::size_t n_obs,
                     std::size_t n_vars, const statgpu_lts_params& params)
{
    statgpu_lts_result* result = nullptr;
    runEngine("LTSFIT", [&](statgpu_context* context) {
        return statgpu_lts(context, y.data(), x.data(), n_obs, n_vars, n_obs, &params, &result);
    });
    return { result, statgpu_lts_result_destroy };
}

Any SAL_CALL StatGpuAddIn::ltsFit(const Range& y, const Range& x, const Any& alpha, const Any& output,
                                  const Any& intercept, const Any& seed)
{
    return guarded([&] {
        const OutputChoice chosen = readOutput(output, "lts", true, argument::ltsFit::output);
        statgpu_lts_params params;
        statgpu_lts_params_init(&params);
        params.alpha = readAlpha(alpha, params.alpha);
        params.intercept = readIntercept(intercept, argument::ltsFit::intercept) ? 1 : 0;
        params.criterion = chosen.lms ? STATGPU_LTS_MEDIAN : STATGPU_LTS_SQUARES;
        params.seed = readSeed(seed, argument::ltsFit::seed);
        const RegressionRows rows = readRegressionRows(y, x, argument::ltsFit::y, argument::ltsFit::x);
        if (rows.count == 0)
            raiseCalcError(CalcError::IllegalArgument, "Y and X have no row without missing values",
                           argument::ltsFit::y);
        // Too few rows for the model, collinear predictors: the engine says
        // which, as Err:502.
        const auto result = fitLts(rows.y, rows.x, rows.count, rows.predictors, params);
        return resultTable(
            [&](statgpu_context* context, const statgpu_table_params* table_params, statgpu_table_set** set) {
                return statgpu_lts_tables(context, result.get(), table_params, set);
            },
            chosen.table, rows.complete, rows.names);
    });
}

} // namespace statgpu::addin
