// bestsubset.cxx: BESTSUBSET: Y and X row by row (call.cxx's
// readRegressionRows, whose first row of texts names the predictors and is
// not counted as a row left out), the exhaustive search through the engine,
// and the table its Output names.
#include "call.hxx"

namespace statgpu::addin
{
namespace
{
// Validation: omitted or empty is "press"; "holdout" (a fifth of the rows)
// or "holdout F" (the share F, 0 < F < 1); "kfold" (10 folds) or "kfold K".
void readValidation(const Any& argument, statgpu_bestsubset_params& params)
{
    const sal_Int16 position = argument::bestSubset::validation;
    const Any given = optionalArgument(argument, ZeroIs::Empty, position);
    if (!given.hasValue())
        return;
    const char* message = "Validation is not \"press\", \"holdout\", \"holdout F\" (a share of rows, 0 < F < 1), "
                          "\"kfold\" or \"kfold K\" (K folds, from 2)";
    OUString text;
    if (!(given >>= text))
        raiseCalcError(CalcError::IllegalArgument, message, position);
    OUString word = text.trim(), number;
    const sal_Int32 space = word.indexOf(' ');
    if (space >= 0)
    {
        number = word.copy(space + 1).trim();
        word = word.copy(0, space);
    }
    double value = 0.0;
    const bool has_number = !number.isEmpty();
    if (has_number && !textToNumber(number, value))
        raiseCalcError(CalcError::IllegalArgument, message, position);
    if (word.equalsIgnoreAsciiCase("press") && !has_number)
        params.validation = STATGPU_SUBSET_PRESS;
    else if (word.equalsIgnoreAsciiCase("holdout"))
    {
        params.validation = STATGPU_SUBSET_HOLDOUT;
        if (has_number && !(value > 0.0 && value < 1.0))
            raiseCalcError(CalcError::IllegalArgument, "the holdout share is not between 0 and 1", position);
        if (has_number)
            params.holdout_fraction = value;
    }
    else if (word.equalsIgnoreAsciiCase("kfold"))
    {
        params.validation = STATGPU_SUBSET_KFOLD;
        if (has_number && !(value >= 2.0 && value <= 1e9))
            raiseCalcError(CalcError::IllegalArgument, "the folds of kfold are not from 2", position);
        if (has_number)
            params.fold_count = static_cast<std::size_t>(value);
    }
    else
        raiseCalcError(CalcError::IllegalArgument, message, position);
}

// Criterion: omitted or empty is "validation"; "cp", "bic" or "adjr2".
statgpu_subset_criterion readCriterion(const Any& argument)
{
    const Any given = optionalArgument(argument, ZeroIs::Empty, argument::bestSubset::criterion);
    if (!given.hasValue())
        return STATGPU_SUBSET_BY_VALIDATION;
    static const char* const words[] = { "validation", "cp", "bic", "adjr2" };
    OUString text;
    if (given >>= text)
        for (int w = 0; w < 4; ++w)
            if (text.trim().equalsIgnoreAsciiCaseAscii(words[w]))
                return static_cast<statgpu_subset_criterion>(w);
    raiseCalcError(CalcError::IllegalArgument, "Criterion is not \"validation\", \"cp\", \"bic\" or \"adjr2\"",
                   argument::bestSubset::criterion);
}

} // namespace

Any SAL_CALL StatGpuAddIn::bestSubset(const Range& y, const Range& x, const Any& maxSize, const Any& output,
                                      const Any& intercept, const Any& validation, const Any& criterion,
                                      const Any& nbest, const Any& seed)
{
    return guarded([&] {
        const OutputChoice chosen = readOutput(output, "bestsubset", false, argument::bestSubset::output);
        statgpu_bestsubset_params params;
        statgpu_bestsubset_params_init(&params);
        params.max_size = readOptionalWholeNumber(maxSize, 0, 1, STATGPU_BESTSUBSET_MAX_VARS,
                                                  argument::bestSubset::maxSize,
                                                  "MaxSize is not a whole number from 1 to 128");
        params.intercept = readIntercept(intercept, argument::bestSubset::intercept) ? 1 : 0;
        readValidation(validation, params);
        params.criterion = readCriterion(criterion);
        params.nbest = readOptionalWholeNumber(nbest, 1, 1, 1000, argument::bestSubset::nbest,
                                               "NBest is not a whole number from 1 to 1000");
        params.seed = readSeed(seed, argument::bestSubset::seed);
        const RegressionRows rows = readRegressionRows(y, x, argument::bestSubset::y, argument::bestSubset::x);
        if (rows.count == 0)
            raiseCalcError(CalcError::IllegalArgument, "Y and X have no row without missing values",
                           argument::bestSubset::y);
        // Too few rows, a constant Y, too many predictors: the engine says
        // which, as Err:502.
        statgpu_bestsubset_result* fitted = nullptr;
        runEngine("BESTSUBSET", [&](statgpu_context* context) {
            return statgpu_bestsubset(context, rows.y.data(), rows.x.data(), rows.count, rows.predictors, rows.count,
                                      &params, &fitted);
        });
        const std::unique_ptr<statgpu_bestsubset_result, void (*)(statgpu_bestsubset_result*)> result(
            fitted, statgpu_bestsubset_result_destroy);
        // The row of names (never complete) is no row of data: leaving it out
        // of the row map keeps it out of the summary's rows left out. No
        // table of BESTSUBSET has a row per row of the range, so nothing has
        // to line up with the range's rows.
        std::vector<bool> complete = rows.complete;
        if (!rows.names.empty())
            complete.erase(complete.begin());
        return resultTable(
            [&](statgpu_context* context, const statgpu_table_params* table_params, statgpu_table_set** set) {
                return statgpu_bestsubset_tables(context, result.get(), table_params, set);
            },
            chosen.table, complete, rows.names);
    });
}

} // namespace statgpu::addin
