// igmm.cxx: IGMMFIT: every column of Data a data set, mixtures of inverse
// Gaussians through the engine, and the table its Output names (labels in
// the shape of Data).
#include "call.hxx"

#include <rtl/math.hxx>

namespace statgpu::addin
{
namespace
{
// The columns of Data as data sets: each column's numbers in order and the
// rows they came from (empty and text cells skipped, as MEDIAN skips them).
struct DataSets
{
    std::vector<std::vector<double>> values;
    std::vector<std::vector<sal_Int32>> rows;
    sal_Int32 row_count = 0;
    std::vector<std::string> names;  // from a first row of texts, or empty
};

DataSets readDataSets(const Range& data)
{
    DataSets sets;
    // The labels end at the last row holding anything (usedRowCount).
    sets.row_count = usedRowCount(data);
    const sal_Int32 columns = data.getLength() > 0 ? data[0].getLength() : 0;
    sets.values.resize(static_cast<std::size_t>(columns));
    sets.rows.resize(static_cast<std::size_t>(columns));
    for (sal_Int32 row = 0; row < sets.row_count; ++row)
    {
        if (data[row].getLength() != columns)
            raiseCalcError(CalcError::IllegalArgument, "the rows of Data differ in length", argument::igmmFit::data);
        for (sal_Int32 column = 0; column < columns; ++column)
        {
            double value = 0.0;
            if (readCell(data[row][column], kDataCells, argument::igmmFit::data, value))
            {
                sets.values[static_cast<std::size_t>(column)].push_back(value);
                sets.rows[static_cast<std::size_t>(column)].push_back(row);
            }
        }
    }
    if (columns == 0)
        raiseCalcError(CalcError::IllegalArgument, "Data is empty", argument::igmmFit::data);
    // A first row of texts (skipped as every text is) names the data sets.
    for (sal_Int32 column = 0; column < columns; ++column)
    {
        OUString name;
        if (!(data[0][column] >>= name) || name.trim().isEmpty())
        {
            sets.names.clear();
            break;
        }
        sets.names.push_back(OUStringToOString(name.trim(), RTL_TEXTENCODING_UTF8).getStr());
    }
    return sets;
}

// Each value's most likely component (1 to k) at its cell of Data; "" (which
// COUNT and SUM ignore) at the cells that held no value and in a data set
// that was not fitted.
Any labelCells(const DataSets& sets, const statgpu_igmm_result& result)
{
    Range cells(sets.row_count);
    for (sal_Int32 row = 0; row < sets.row_count; ++row)
    {
        Sequence<Any>& line = cells.getArray()[row];
        line.realloc(static_cast<sal_Int32>(sets.values.size()));
        for (sal_Int32 column = 0; column < line.getLength(); ++column)
            line.getArray()[column] <<= OUString();
    }
    for (std::size_t s = 0; s < sets.values.size(); ++s)
        for (std::size_t i = 0; i < sets.rows[s].size(); ++i)
        {
            const int32_t label = result.labels[result.offsets[s] + i];
            if (label >= 0)
                cells.getArray()[sets.rows[s][i]].getArray()[static_cast<sal_Int32>(s)] <<= double(label + 1);
        }
    return Any(cells);
}
} // namespace

Any SAL_CALL StatGpuAddIn::igmmFit(const Range& data, double k, const Any& output, const Any& starts,
                                   const Any& maxIterations, const Any& seed)
{
    return guarded([&] {
        const OutputChoice chosen = readOutput(output, "igmm", false, argument::igmmFit::output);
        const double components = rtl::math::approxFloor(k);
        if (!(components >= 1.0 && components <= 64.0))
            raiseCalcError(CalcError::IllegalArgument, "k is not between 1 and 64", argument::igmmFit::k);
        statgpu_igmm_params params;
        statgpu_igmm_params_init(&params);
        static_assert(argument::igmmFit::maxIterations == argument::igmmFit::starts + 1
                          && argument::igmmFit::seed == argument::igmmFit::starts + 2,
                      "Starts, MaxIter and Seed follow each other");
        const RunArguments run = readRunArguments(starts, maxIterations, seed, params.start_count,
                                                  params.max_iterations, argument::igmmFit::starts);
        params.start_count = run.restarts;
        params.max_iterations = run.max_iterations;
        params.seed = run.seed;
        const DataSets sets = readDataSets(data);
        std::vector<const double*> pointers;
        std::vector<std::size_t> lengths;
        for (const auto& values : sets.values)
        {
            pointers.push_back(values.data());
            lengths.push_back(values.size());
        }
        statgpu_igmm_result* fitted = nullptr;
        runEngine("IGMMFIT", [&](statgpu_context* context) {
            return statgpu_igmm(context, pointers.data(), lengths.data(), pointers.size(),
                                static_cast<std::size_t>(components), &params, &fitted);
        });
        const std::unique_ptr<statgpu_igmm_result, void (*)(statgpu_igmm_result*)> result(fitted,
                                                                                          statgpu_igmm_result_destroy);
        if (chosen.table == "labels")
            return labelCells(sets, *result);
        Any table = resultTable(
            [&](statgpu_context* context, const statgpu_table_params* table_params, statgpu_table_set** set) {
                return statgpu_igmm_tables(context, result.get(), table_params, set);
            },
            chosen.table, {}, sets.names);
        // A dialog's report keeps the labels as this function gives them: in Data's shape.
        if (ReportRun* const report = currentReportRun(); report != nullptr)
            for (CollectedTable& collected : report->tables)
                if (collected.name == "labels")
                {
                    collected.cells = labelCells(sets, *result);
                    collected.row_labels.clear();
                }
        return table;
    });
}

} // namespace statgpu::addin
