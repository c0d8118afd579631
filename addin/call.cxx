// call.cxx: what every Calc function shares (see call.hxx).
#include "call.hxx"

#include <rtl/math.hxx>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace statgpu::addin
{
OUString fromUtf8(const char* text)
{
    return OUString(text, static_cast<sal_Int32>(std::strlen(text)), RTL_TEXTENCODING_UTF8);
}

thread_local CallTimes t_call_times;

double secondsSince(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void writeTrace()
{
    const char* path = std::getenv("STATGPU_TRACE");
    if (!path || !*path)
        return;
    if (std::FILE* file = std::fopen(path, "a"))
    {
        std::fprintf(file, "%zu %.9f %.9f\n", t_call_times.cells, t_call_times.convert_seconds,
                     t_call_times.engine_seconds);
        std::fclose(file);
    }
}

Any optionalArgument(const Any& argument, ZeroIs zero, sal_Int16 position)
{
    Any value = argument;
    Range range;
    if (argument >>= range)
    {
        if (cellCount(range) != 1)
            raiseCalcError(CalcError::IllegalArgument, "a range of several cells where one value is needed",
                           position);
        for (const Sequence<Any>& row : range)
            for (const Any& cell : row)
                value = cell;
    }
    OUString text;
    double number = 0.0;
    const bool empty = !value.hasValue() || ((value >>= text) && text.isEmpty())
                       || (zero == ZeroIs::Empty && classifyCell(value, number) == CellKind::Number && number == 0.0);
    return empty ? Any() : value;
}

std::size_t readOptionalWholeNumber(const Any& argument, std::size_t default_value, double low, double high,
                                    sal_Int16 position, const char* out_of_range)
{
    const Any given = optionalArgument(argument, ZeroIs::Empty, position);
    if (!given.hasValue())
        return default_value;
    double value = 0.0;
    readCell(given, kParameterCells, position, value);
    value = rtl::math::approxFloor(value);
    if (!(value >= low && value <= high))
        raiseCalcError(CalcError::IllegalArgument, out_of_range, position);
    return static_cast<std::size_t>(value);
}

double finiteResult(double value)
{
    if (!std::isfinite(value))
        raiseCalcError(CalcError::IllegalArgument, "the result is not a finite number");
    return value;
}

std::uint64_t readSeed(const Any& argument, sal_Int16 position)
{
    return readOptionalWholeNumber(argument, 0, 0, 0x1p53, position, "Seed is not a whole number from 0 to 2^53");
}

// With criteria, Output may be followed by " lms" (least median of squares)
// or " lts" (the default); blanks around it are ignored.
OutputChoice readOutput(const Any& output, const char* method, bool with_criteria, sal_Int16 position)
{
    const char* const* names = statgpu_method_table_names(method);
    OutputChoice choice;
    choice.table = names[0];
    const Any given = optionalArgument(output, ZeroIs::Empty, position);
    if (!given.hasValue())
        return choice;
    OUString text;
    if (given >>= text)
    {
        OUString word = text.trim();
        bool known_criterion = true;
        const sal_Int32 space = word.indexOf(' ');
        if (with_criteria && space >= 0)
        {
            const OUString criterion = word.copy(space + 1).trim();
            word = word.copy(0, space);
            choice.lms = criterion.equalsIgnoreAsciiCase("lms");
            known_criterion = choice.lms || criterion.equalsIgnoreAsciiCase("lts");
        }
        for (const char* const* name = names; known_criterion && *name != nullptr; ++name)
            if (word.equalsIgnoreAsciiCaseAscii(*name))
            {
                choice.table = *name;
                return choice;
            }
    }
    std::string message = "Output is not one of ";
    for (const char* const* name = names; *name != nullptr; ++name)
        message += std::string(name == names ? "\"" : ", \"") + *name + "\"";
    if (with_criteria)
        message += ", optionally followed by \" lms\"";
    raiseCalcError(CalcError::IllegalArgument, message.c_str(), position);
}

RegressionRows readRegressionRows(const Range& y, const Range& x, sal_Int16 y_position, sal_Int16 x_position)
{
    const auto start = std::chrono::steady_clock::now();
    RegressionRows rows;
    const sal_Int32 row_count = y.getLength();
    if (row_count == 0)
        raiseCalcError(CalcError::IllegalArgument, "Y is empty", y_position);
    for (const Sequence<Any>& cells : y)
        if (cells.getLength() != 1)
            raiseCalcError(CalcError::IllegalArgument, "Y is not one column", y_position);
    if (x.getLength() != row_count)
        raiseCalcError(CalcError::IllegalArgument, "X does not have as many rows as Y", x_position);
    rows.predictors = static_cast<std::size_t>(x[0].getLength());
    if (rows.predictors == 0)
        raiseCalcError(CalcError::IllegalArgument, "X has no column", x_position);
    // The rows below the last one holding anything in Y or X are no
    // observations and get no row of a per-row output (usedRowCount).
    const sal_Int32 used_rows = std::max(usedRowCount(y), usedRowCount(x));
    rows.complete.assign(static_cast<std::size_t>(used_rows), false);
    std::vector<double> row_major;
    row_major.reserve(static_cast<std::size_t>(used_rows) * rows.predictors);
    rows.y.reserve(static_cast<std::size_t>(used_rows));
    for (sal_Int32 row = 0; row < used_rows; ++row)
    {
        const Sequence<Any>& cells = x[row];
        if (static_cast<std::size_t>(cells.getLength()) != rows.predictors)
            raiseCalcError(CalcError::IllegalArgument, "the rows of X differ in length", x_position);
        double response = 0.0;
        bool complete = readCell(y[row][0], kDataCells, y_position, response);
        const std::size_t mark = row_major.size();
        for (const Any& cell : cells)
        {
            double value;
            complete = readCell(cell, kDataCells, x_position, value) && complete;
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
    // A first row of texts names the predictors.
    std::vector<std::string> names;
    for (const Any& cell : x[0])
    {
        OUString text;
        if (!(cell >>= text) || text.trim().isEmpty())
            break;
        names.push_back(OUStringToOString(text.trim(), RTL_TEXTENCODING_UTF8).getStr());
    }
    if (names.size() == rows.predictors)
        rows.names = std::move(names);
    rows.count = rows.y.size();
    rows.x.resize(row_major.size());
    for (std::size_t i = 0; i < rows.count; ++i)
        for (std::size_t v = 0; v < rows.predictors; ++v)
            rows.x[i + rows.count * v] = row_major[i * rows.predictors + v];
    t_call_times.cells += cellCount(y) + cellCount(x);
    t_call_times.convert_seconds += secondsSince(start);
    return rows;
}

bool readIntercept(const Any& argument, sal_Int16 position)
{
    if (!argument.hasValue())
        return true;
    const Any given = optionalArgument(argument, ZeroIs::Number, position);
    double value = 0.0;
    if (given.hasValue())
        readCell(given, kParameterCells, position, value);
    return value != 0.0;
}

// The row map of a fit: the rows of the range that gave an observation.
std::vector<std::size_t> sourceRows(const std::vector<bool>& complete)
{
    std::vector<std::size_t> rows;
    for (std::size_t row = 0; row < complete.size(); ++row)
        if (complete[row])
            rows.push_back(row);
    return rows;
}

// A table as Calc's array: numbers, texts, and an empty text for a row that
// was left out (Calc's own "" idiom: COUNT, COUNTIF, SUM and AVERAGE ignore
// it, where a void element would count as 0).
Any tableCells(const statgpu_table& table)
{
    Range cells(static_cast<sal_Int32>(table.row_count));
    for (std::size_t r = 0; r < table.row_count; ++r)
    {
        Sequence<Any>& row = cells.getArray()[r];
        row.realloc(static_cast<sal_Int32>(table.column_count));
        for (std::size_t c = 0; c < table.column_count; ++c)
        {
            const std::size_t cell = r + table.row_count * c;
            switch (table.cell_kinds[cell])
            {
                case STATGPU_CELL_NUMBER:
                    row.getArray()[c] <<= finiteResult(table.values[cell]);
                    break;
                case STATGPU_CELL_TEXT:
                    row.getArray()[c] <<= fromUtf8(table.texts[cell]);
                    break;
                default:
                    row.getArray()[c] <<= OUString();
                    break;
            }
        }
    }
    return Any(cells);
}

CollectedTable collectTable(const statgpu_table& table)
{
    CollectedTable collected;
    collected.name = table.name;
    collected.title = table.title != nullptr ? table.title : table.name;
    if (table.row_label_header != nullptr)
        collected.row_label_header = table.row_label_header;
    if (table.row_labels != nullptr)
        collected.row_labels.assign(table.row_labels, table.row_labels + table.row_count);
    for (std::size_t c = 0; c < table.column_count; ++c)
        collected.column_headers.emplace_back(table.column_headers[c] != nullptr ? table.column_headers[c] : "");
    collected.cells = tableCells(table);
    return collected;
}

namespace
{
thread_local ReportRun* t_report_run = nullptr;
}

ReportRun* currentReportRun()
{
    return t_report_run;
}

ReportRunScope::ReportRunScope(ReportRun& run)
    : previous_(t_report_run)
{
    t_report_run = &run;
}

ReportRunScope::~ReportRunScope()
{
    t_report_run = previous_;
}

Observations readObservations(const Range& data, sal_Int16 position)
{
    const auto start = std::chrono::steady_clock::now();
    Observations observations;
    // The rows below the last one holding anything are no observations and
    // get no row of a per-row output (usedRowCount).
    const sal_Int32 rows = usedRowCount(data);
    observations.variables = data.getLength() > 0 ? static_cast<std::size_t>(data[0].getLength()) : 0;
    observations.complete.assign(static_cast<std::size_t>(rows), false);
    std::vector<double> row_major;
    row_major.reserve(static_cast<std::size_t>(rows) * observations.variables);
    for (sal_Int32 row = 0; row < rows; ++row)
    {
        const Sequence<Any>& cells = data[row];
        if (static_cast<std::size_t>(cells.getLength()) != observations.variables)
            raiseCalcError(CalcError::IllegalArgument, "the rows of Data differ in length", position);
        const std::size_t mark = row_major.size();
        bool complete = true;
        for (const Any& cell : cells)
        {
            double value;
            complete = readCell(cell, kDataCells, position, value) && complete;
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
    if (observations.count == 0)
        raiseCalcError(CalcError::IllegalArgument, "Data has no row without missing values", position);
    t_call_times.cells += cellCount(data);
    t_call_times.convert_seconds += secondsSince(start);
    return observations;
}

std::size_t readClusterCount(double k, std::size_t observations, sal_Int16 position)
{
    const double count = rtl::math::approxFloor(k);
    if (!(count >= 1.0))
        raiseCalcError(CalcError::IllegalArgument, "k is less than 1", position);
    if (count > static_cast<double>(observations))
        raiseCalcError(CalcError::IllegalArgument, "k is more than the rows of Data without missing values",
                       position);
    return static_cast<std::size_t>(count);
}

RunArguments readRunArguments(const Any& restarts, const Any& maxIterations, const Any& seed,
                              std::size_t default_restarts, std::size_t default_iterations,
                              sal_Int16 restarts_position)
{
    RunArguments run;
    run.restarts = readOptionalWholeNumber(restarts, default_restarts, 1, 1000, restarts_position,
                                           "Restarts is not between 1 and 1000");
    run.max_iterations = readOptionalWholeNumber(maxIterations, default_iterations, 1, 100000,
                                                 static_cast<sal_Int16>(restarts_position + 1),
                                                 "MaxIter is not between 1 and 100000");
    run.seed = readSeed(seed, static_cast<sal_Int16>(restarts_position + 2));
    return run;
}

} // namespace statgpu::addin
