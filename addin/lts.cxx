// lts.cxx: LTSFIT: Y and X row by row, least trimmed squares through the
// engine, and the table its Output names.
#include "call.hxx"

namespace statgpu::addin
{
namespace
{
// LTSFIT's Y and X, row by row: a row is an observation when Y's cell and
// every cell of X's row give a number (kDataCells: an empty or text cell makes
// the row missing).
struct RegressionRows
{
    std::vector<double> y;         // count
    std::vector<double> x;         // count x predictors, column-major
    std::vector<bool> complete;    // per row of the ranges
    std::size_t count = 0;
    std::size_t predictors = 0;
};

RegressionRows readRegressionRows(const Range& y, const Range& x)
{
    const auto start = std::chrono::steady_clock::now();
    RegressionRows rows;
    const sal_Int32 row_count = y.getLength();
    if (row_count == 0)
        raiseCalcError(CalcError::IllegalArgument, "Y is empty", argument::ltsFit::y);
    for (const Sequence<Any>& cells : y)
        if (cells.getLength() != 1)
            raiseCalcError(CalcError::IllegalArgument, "Y is not one column", argument::ltsFit::y);
    if (x.getLength() != row_count)
        raiseCalcError(CalcError::IllegalArgument, "X does not have as many rows as Y", argument::ltsFit::x);
    rows.predictors = static_cast<std::size_t>(x[0].getLength());
    if (rows.predictors == 0)
        raiseCalcError(CalcError::IllegalArgument, "X has no column", argument::ltsFit::x);
    rows.complete.assign(static_cast<std::size_t>(row_count), false);
    std::vector<double> row_major;
    row_major.reserve(cellCount(x));
    rows.y.reserve(static_cast<std::size_t>(row_count));
    for (sal_Int32 row = 0; row < row_count; ++row)
    {
        const Sequence<Any>& cells = x[row];
        if (static_cast<std::size_t>(cells.getLength()) != rows.predictors)
            raiseCalcError(CalcError::IllegalArgument, "the rows of X differ in length", argument::ltsFit::x);
        double response = 0.0;
        bool complete = readCell(y[row][0], kDataCells, argument::ltsFit::y, response);
        const std::size_t mark = row_major.size();
        for (const Any& cell : cells)
        {
            double value;
            complete = readCell(cell, kDataCells, argument::ltsFit::x, value) && complete;
            row_major.push_back(value);
        }
        if (complete)
        {
            rows.complete[static_cast<std::size_t>(row)] = true;
            rows.y.push_back(response);
        }
        else
            row_major.resize(mark);
    }
    rows.count = rows.y.size();
    rows.x.resize(row_major.size());
    for (std::size_t i = 0; i < rows.count; ++i)
        for (std::size_t v = 0; v < rows.predictors; ++v)
            rows.x[i + rows.count * v] = row_major[i * rows.predictors + v];
    t_call_times.cells += cellCount(y) + cellCount(x);
    t_call_times.convert_seconds += secondsSince(start);
    return rows;
}

// Alpha: omitted (void) is the default; a number in [0.5, 1]; text is
// converted and an empty cell is 0 (so Err:502), as Calc reads a number argument.

// Alpha: omitted (void) is the default; a number in [0.5, 1]; text is
// converted and an empty cell is 0 (so Err:502), as Calc reads a number argument.
double readAlpha(const Any& argument, double default_value)
{
    if (!argument.hasValue())
        return default_value;
    double value = 0.0;
    readCell(argument, kParameterCells, argument::ltsFit::alpha, value);
    if (!(value >= 0.5 && value <= 1.0))
        raiseCalcError(CalcError::IllegalArgument, "Alpha is not between 0.5 and 1", argument::ltsFit::alpha);
    return value;
}

// Intercept: omitted (void) is TRUE; otherwise a boolean or a number, TRUE
// when not 0, as Calc reads a logical argument; text is converted as for a number.

// Intercept: omitted (void) is TRUE; otherwise a boolean or a number, TRUE
// when not 0, as Calc reads a logical argument; text is converted as for a number.
bool readIntercept(const Any& argument)
{
    if (!argument.hasValue())
        return true;
    double value = 0.0;
    readCell(argument, kParameterCells, argument::ltsFit::intercept, value);
    return value != 0.0;
}

// Only UNO exceptions may cross the bridge into Calc; anything else would end
// the office process (and lose the user's work), so it becomes #VALUE!.

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
        params.intercept = readIntercept(intercept) ? 1 : 0;
        params.criterion = chosen.lms ? STATGPU_LTS_MEDIAN : STATGPU_LTS_SQUARES;
        params.seed = readOptionalWholeNumber(seed, 0, 0, 0x1p53, argument::ltsFit::seed,
                                              "Seed is not a whole number from 0 to 2^53");
        const RegressionRows rows = readRegressionRows(y, x);
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
            chosen.table, rows.complete);
    });
}

} // namespace statgpu::addin
