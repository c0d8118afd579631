// statgpu_addin.cxx: the Calc add-in component: boilerplate, metadata from the
// generated table, and the entry points (read cells -> validate -> engine ->
// check the result). See statgpu_addin.hxx.
#include "statgpu_addin.hxx"

#include "calc_errors.hxx"
#include "cells.hxx"
#include "progress.hxx"
#include "statgpu_functions.hxx"

#include <com/sun/star/beans/XPropertySet.hpp>

#include <com/sun/star/lang/XMultiServiceFactory.hpp>
#include <com/sun/star/lang/XSingleServiceFactory.hpp>
#include <cppuhelper/factory.hxx>
#include <cppuhelper/supportsservice.hxx>
#include <rtl/math.hxx>
#include <uno/environment.h>
#include <uno/lbnames.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace statgpu::addin
{
using css::uno::Any;
using css::uno::Sequence;

namespace
{
using Range = Sequence<Sequence<Any>>;

// Argument positions come from the function table (statgpu_functions.hxx).
// Data and the second argument (k, p) sit at the same places in the order
// statistics.
constexpr sal_Int16 kDataArgument = argument::gpuMedian::data;
constexpr sal_Int16 kSecondArgument = argument::gpuSmall::k;
static_assert(argument::gpuSmall::data == kDataArgument && argument::gpuLarge::k == kSecondArgument
                  && argument::gpuQuantile::p == kSecondArgument && argument::kmeans::data == kDataArgument
                  && argument::kmeans::k == kSecondArgument,
              "the order statistics and KMEANS share Data's and k's places");

OUString fromUtf8(const char* text)
{
    return OUString(text, static_cast<sal_Int32>(std::strlen(text)), RTL_TEXTENCODING_UTF8);
}

// ---- Metadata ---------------------------------------------------------------

const FunctionInfo* findFunction(const OUString& programmatic_name)
{
    for (const FunctionInfo& function : kFunctions)
        if (programmatic_name.equalsAscii(function.programmatic_name))
            return &function;
    return nullptr;
}

const ArgumentInfo* findArgument(const OUString& programmatic_name, sal_Int32 argument)
{
    const FunctionInfo* function = findFunction(programmatic_name);
    if (!function || argument < 0 || static_cast<std::size_t>(argument) >= function->argument_count)
        return nullptr;
    return &function->arguments[argument];
}

// ---- Timing trace -------------------------------------------------------------

// For the benchmarks only: with STATGPU_TRACE=FILE in LibreOffice's environment,
// every call appends one line "cells convert_seconds engine_seconds" to FILE,
// so the time from cell to result can be split into Calc's marshalling, the
// add-in's conversion and the engine. Off (one getenv per call) otherwise.
struct CallTimes
{
    std::size_t cells = 0;
    double convert_seconds = 0.0;
    double engine_seconds = 0.0;
};
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

// Runs an engine call, adding its time to the call's trace.
template <typename Call> statgpu_status timedEngine(Call&& call)
{
    const auto start = std::chrono::steady_clock::now();
    const statgpu_status status = call();
    t_call_times.engine_seconds += secondsSince(start);
    return status;
}

// ---- Input parsers ----------------------------------------------------------

// Data: the numbers of a range; empty cells and text are skipped, as Calc's
// MEDIAN, SMALL, LARGE and PERCENTILE.INC skip them inside a range.
std::vector<double> readData(const Range& data, std::size_t more_cells = 0)
{
    const auto start = std::chrono::steady_clock::now();
    std::vector<double> numbers;
    numbers.reserve(cellCount(data) + more_cells);  // one allocation, however many arguments
    appendNumbers(data, kDataCells, kDataArgument, numbers);
    t_call_times.cells += cellCount(data);
    t_call_times.convert_seconds += secondsSince(start);
    return numbers;
}

// The cells of MEDIAN's further arguments that are ranges, for one allocation.
std::size_t moreDataCells(const Sequence<Any>& more)
{
    std::size_t cells = 0;
    for (const Any& argument : more)
    {
        // An Any holds a sequence by reference: peeking at it copies nothing.
        if (argument.getValueType() == cppu::UnoType<Range>::get())
            cells += cellCount(*static_cast<const Range*>(argument.getValue()));
        else
            cells += 1;
    }
    return cells;
}

// The numbers read from the cells, handed to the engine to select in place:
// the add-in keeps the only copy of a large range (Calc's own is the
// argument), and the engine makes none (STATGPU_MEMORY_HOST_SCRATCH).
statgpu_vector scratchVector(std::vector<double>& numbers)
{
    return statgpu_vector{ numbers.data(), numbers.size(), STATGPU_DTYPE_FLOAT64, STATGPU_MEMORY_HOST_SCRATCH };
}

// MEDIAN's further arguments (Number 2, 3, ...), each as Calc hands an add-in
// a value or a range: a range or an array is read as Data; a number (a
// boolean is one) counts; an argument left out (;;) counts as 0, as MEDIAN
// counts it; text is skipped, because Calc hands over a reference to a text
// cell (which MEDIAN skips) and a text constant (which MEDIAN refuses) alike.
// Calc also hands over a reference to one empty cell as the number 0, where
// MEDIAN skips it; a range of one cell (D1:D1) keeps it empty.
void appendMoreData(const Sequence<Any>& more, std::vector<double>& numbers)
{
    const auto start = std::chrono::steady_clock::now();
    sal_Int16 position = kSecondArgument;
    for (const Any& argument : more)
    {
        Range range;
        double value = 0.0;
        if (argument >>= range)
        {
            appendNumbers(range, kDataCells, position, numbers);
            t_call_times.cells += cellCount(range);
        }
        else if (!argument.hasValue())
            numbers.push_back(0.0);
        else if (readCell(argument, kDataCells, position, value))
            numbers.push_back(value);
        ++position;
    }
    t_call_times.convert_seconds += secondsSince(start);
}

// k of SMALL and LARGE, as Calc reads it: rounded down (approxFloor), and it
// must lie in 1..n, else Err:502 (statgpu's policy for a rank out of range;
// Calc 7.4's SMALL shows #VALUE! there).
std::size_t readRank(double k, std::size_t count)
{
    const double rank = rtl::math::approxFloor(k);
    if (!(rank >= 1.0) || rank > static_cast<double>(count))
        raiseCalcError(CalcError::IllegalArgument, "k is not between 1 and the count of numbers", kSecondArgument);
    return static_cast<std::size_t>(rank);
}

// p of PERCENTILE.INC: outside [0,1] is Err:502 in Calc, which checks p before
// it counts the data.
double checkProbability(double p)
{
    if (!(p >= 0.0 && p <= 1.0))
        raiseCalcError(CalcError::IllegalArgument, "p is outside [0,1]", kSecondArgument);
    return p;
}

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
std::size_t readOptionalWholeNumber(const Any& argument, std::size_t default_value, double low, double high,
                                    sal_Int16 position, const char* out_of_range)
{
    if (!argument.hasValue())
        return default_value;
    double value = 0.0;
    readCell(argument, kParameterCells, position, value);
    value = rtl::math::approxFloor(value);
    if (!(value >= low && value <= high))
        raiseCalcError(CalcError::IllegalArgument, out_of_range, position);
    return static_cast<std::size_t>(value);
}

// ---- Results ----------------------------------------------------------------

double finiteResult(double value)
{
    if (!std::isfinite(value))
        raiseCalcError(CalcError::IllegalArgument, "the result is not a finite number");
    return value;
}

// ---- Result tables ----------------------------------------------------------

// An Output argument: omitted (void) is the method's first table; otherwise
// one of its tables' names, which the engine defines (statgpu_method_table_names),
// in any case, blanks around it ignored. With criteria, it may be followed
// by " lms" (least median of squares) or " lts" (the default).
struct OutputChoice
{
    std::string table;
    bool lms = false;
};

OutputChoice readOutput(const Any& output, const char* method, bool with_criteria, sal_Int16 position)
{
    const char* const* names = statgpu_method_table_names(method);
    OutputChoice choice;
    choice.table = names[0];
    if (!output.hasValue())
        return choice;
    OUString text;
    if (output >>= text)
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

// ---- LTSFIT -------------------------------------------------------------------



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
template <typename Compute> auto guarded(Compute&& compute) -> decltype(compute())
{
    t_call_times = CallTimes{};
    try
    {
        auto result = compute();
        writeTrace();
        return result;
    }
    catch (const std::bad_alloc&)
    {
        raiseCalcError(CalcError::NoValue, "out of memory");
    }
    catch (const std::exception& failure)
    {
        raiseCalcError(CalcError::NoValue, failure.what());
    }
    catch (const css::uno::Exception&)
    {
        throw;  // already one Calc shows as an error
    }
    catch (...)
    {
        raiseCalcError(CalcError::NoValue, "an unknown failure");
    }
}

// The Function Wizard's and the service manager's questions must not throw
// at all: a failure to build the answer (out of memory) gives the fallback,
// an empty text by default, which Calc shows as no name or no description.
template <typename Answer, typename Result = decltype(std::declval<Answer>()())>
Result answered(Answer&& answer, Result fallback = Result()) noexcept
{
    try
    {
        return answer();
    }
    catch (...)
    {
        return fallback;
    }
}

statgpu_backend backendFromEnvironment()
{
    // STATGPU_BACKEND=cpu|cuda|auto chooses the backend (tests use it); unset
    // or anything else is auto.
    const char* name = std::getenv("STATGPU_BACKEND");
    if (name && std::strcmp(name, "cpu") == 0)
        return STATGPU_BACKEND_CPU;
    if (name && std::strcmp(name, "cuda") == 0)
        return STATGPU_BACKEND_CUDA;
    return STATGPU_BACKEND_AUTO;
}

} // namespace

// Holds the engine for one call. A call from another thread waits its turn;
// a call that comes back in on the thread that holds the engine (while a long
// call lets the office handle input) fails at once, as #VALUE!, instead of
// waiting for itself; Calc computes that cell again at the next recalculation.
class EngineLock
{
public:
    explicit EngineLock(StatGpuAddIn& addin)
        : addin_(addin)
    {
        if (addin.engine_owner_.load() == std::this_thread::get_id())
            raiseCalcError(CalcError::NoValue, "statgpu is busy with a long calculation in this window");
        addin.engine_mutex_.lock();
        addin.engine_owner_.store(std::this_thread::get_id());
    }
    ~EngineLock()
    {
        addin_.engine_owner_.store(std::thread::id());
        addin_.engine_mutex_.unlock();
    }
    EngineLock(const EngineLock&) = delete;
    EngineLock& operator=(const EngineLock&) = delete;

private:
    StatGpuAddIn& addin_;
};

// The progress of the engine call in flight, for the engine's callback.
class ProgressScope
{
public:
    ProgressScope(CallProgress*& slot, CallProgress& progress)
        : slot_(slot)
    {
        slot_ = &progress;
    }
    ~ProgressScope() { slot_ = nullptr; }
    ProgressScope(const ProgressScope&) = delete;
    ProgressScope& operator=(const ProgressScope&) = delete;

private:
    CallProgress*& slot_;
};

// ---- Service boilerplate ----------------------------------------------------

StatGpuAddIn::StatGpuAddIn(css::uno::Reference<css::uno::XComponentContext> context)
    : component_context_(std::move(context))
{
}


OUString StatGpuAddIn::implementationName() { return OUString::createFromAscii(kImplementationName); }

Sequence<OUString> StatGpuAddIn::serviceNames()
{
    Sequence<OUString> names(2);
    names.getArray()[0] = "com.sun.star.sheet.AddIn";
    names.getArray()[1] = OUString::createFromAscii(kServiceName);
    return names;
}

// Like XAddIn's questions below, these answer through answered(): nothing
// thrown while building an answer leaves the component.
OUString SAL_CALL StatGpuAddIn::getServiceName()
{
    return answered([] { return OUString::createFromAscii(kServiceName); });
}
OUString SAL_CALL StatGpuAddIn::getImplementationName()
{
    return answered([] { return implementationName(); });
}
sal_Bool SAL_CALL StatGpuAddIn::supportsService(const OUString& service_name)
{
    return answered([&] { return cppu::supportsService(this, service_name); }, false);
}
Sequence<OUString> SAL_CALL StatGpuAddIn::getSupportedServiceNames()
{
    return answered([] { return serviceNames(); }, Sequence<OUString>());
}

void SAL_CALL StatGpuAddIn::setLocale(const css::lang::Locale& locale) { locale_ = locale; }
css::lang::Locale SAL_CALL StatGpuAddIn::getLocale() { return locale_; }

// ---- XAddIn: the generated table --------------------------------------------

OUString SAL_CALL StatGpuAddIn::getProgrammaticFuntionName(const OUString& display_name)
{
    return answered([&] {
        for (const FunctionInfo& function : kFunctions)
            if (display_name.equalsIgnoreAsciiCaseAscii(function.display_name))
                return OUString::createFromAscii(function.programmatic_name);
        return OUString();
    });
}

OUString SAL_CALL StatGpuAddIn::getDisplayFunctionName(const OUString& programmatic_name)
{
    return answered([&] {
        const FunctionInfo* function = findFunction(programmatic_name);
        return function ? fromUtf8(function->display_name) : OUString();
    });
}

OUString SAL_CALL StatGpuAddIn::getFunctionDescription(const OUString& programmatic_name)
{
    return answered([&] {
        const FunctionInfo* function = findFunction(programmatic_name);
        return function ? fromUtf8(function->description) : OUString();
    });
}

OUString SAL_CALL StatGpuAddIn::getDisplayArgumentName(const OUString& programmatic_name, sal_Int32 argument)
{
    return answered([&] {
        const ArgumentInfo* info = findArgument(programmatic_name, argument);
        return info ? fromUtf8(info->display_name) : OUString();
    });
}

OUString SAL_CALL StatGpuAddIn::getArgumentDescription(const OUString& programmatic_name, sal_Int32 argument)
{
    return answered([&] {
        const ArgumentInfo* info = findArgument(programmatic_name, argument);
        return info ? fromUtf8(info->description) : OUString();
    });
}

OUString SAL_CALL StatGpuAddIn::getProgrammaticCategoryName(const OUString&)
{
    return answered([] { return OUString::createFromAscii(kCategory); });
}

OUString SAL_CALL StatGpuAddIn::getDisplayCategoryName(const OUString& programmatic_name)
{
    return getProgrammaticCategoryName(programmatic_name);
}

// ---- The engine context -----------------------------------------------------

statgpu_context* StatGpuAddIn::engineContext()
{
    if (context_)
        return context_.get();
    if (statgpu_version_number() != STATGPU_VERSION_NUMBER)
    {
        const std::string message = std::string("the statgpu engine is version ") + statgpu_version_string()
                                    + ", the add-in was built for " STATGPU_VERSION_STRING;
        raiseCalcError(CalcError::NoValue, message.c_str());
    }
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = backendFromEnvironment();
    params.progress = CallProgress::engineCallback;
    params.progress_user_data = &progress_slot_;
    statgpu_context* context = nullptr;
    checkEngineStatus(statgpu_context_create(&params, &context), nullptr);
    context_.reset(context);
    return context;
}

// ---- One engine call -----------------------------------------------------------

// Every engine call goes through here: the engine held (EngineLock), the
// context made at first use, the call's progress in the status bar when it
// runs long (progress.hxx), its time in the trace, and a failure turned into
// the Calc error for it. call(context) returns the engine's status.
template <typename Call> void StatGpuAddIn::runEngine(const char* title, Call&& call)
{
    EngineLock lock(*this);
    statgpu_context* context = engineContext();
    CallProgress progress(component_context_, title);
    ProgressScope scope(progress_slot_, progress);
    checkEngineStatus(timedEngine([&] { return call(context); }), context);
}

// ---- XStatGpu: the Calc functions -------------------------------------------

double SAL_CALL StatGpuAddIn::gpuMedian(const Range& data, const Sequence<Any>& moreData)
{
    return guarded([&] {
        std::vector<double> numbers = readData(data, moreDataCells(moreData));
        appendMoreData(moreData, numbers);
        double median = 0.0;
        const statgpu_vector vector = scratchVector(numbers);
        runEngine("GPUMEDIAN",
                  [&](statgpu_context* context) { return statgpu_vector_median(context, &vector, &median); });
        return finiteResult(median);
    });
}

double StatGpuAddIn::kthSmallest(std::vector<double>& numbers, std::size_t rank)
{
    double value = 0.0;
    const statgpu_vector vector = scratchVector(numbers);
    runEngine("GPUSMALL",
              [&](statgpu_context* context) { return statgpu_vector_select(context, &vector, &rank, 1, &value); });
    return finiteResult(value);
}

double SAL_CALL StatGpuAddIn::gpuSmall(const Range& data, double k)
{
    return guarded([&] {
        std::vector<double> numbers = readData(data);
        return kthSmallest(numbers, readRank(k, numbers.size()));
    });
}

double SAL_CALL StatGpuAddIn::gpuLarge(const Range& data, double k)
{
    return guarded([&] {
        std::vector<double> numbers = readData(data);
        // The k-th largest is the (n-k+1)-th smallest.
        return kthSmallest(numbers, numbers.size() - readRank(k, numbers.size()) + 1);
    });
}

Any SAL_CALL StatGpuAddIn::gpuQuantile(const Range& data, const Range& p)
{
    return guarded([&] {
        std::vector<double> numbers = readData(data);

        // p is one number (Calc hands it over as a 1 x 1 range) or a range of
        // them (an array formula over a range of p): then the result has the
        // range's shape. Calc's PERCENTILE.INC would give an error in one cell
        // only where one p is bad; an add-in cannot return errors cell by
        // cell, so one bad p fails the whole array. An empty cell is 0 and
        // text is converted, as PERCENTILE.INC reads p.
        std::vector<double> probabilities;
        appendNumbers(p, kParameterCells, kSecondArgument, probabilities);
        if (probabilities.empty())
            raiseCalcError(CalcError::IllegalArgument, "p is empty", kSecondArgument);
        for (double probability : probabilities)
            checkProbability(probability);
        std::vector<double> quantiles(probabilities.size());
        const statgpu_vector vector = scratchVector(numbers);
        runEngine("GPUQUANTILE", [&](statgpu_context* context) {
            return statgpu_vector_quantiles(context, &vector, probabilities.data(), probabilities.size(),
                                            quantiles.data());
        });
        if (quantiles.size() == 1)
            return Any(finiteResult(quantiles[0]));
        Sequence<Sequence<double>> result(p.getLength());
        Sequence<double>* result_row = result.getArray();
        std::size_t next = 0;
        for (const Sequence<Any>& p_row : p)
        {
            result_row->realloc(p_row.getLength());
            double* quantile = result_row->getArray();
            for (sal_Int32 column = 0; column < p_row.getLength(); ++column)
                quantile[column] = finiteResult(quantiles[next++]);
            ++result_row;
        }
        return Any(result);
    });
}

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

Any StatGpuAddIn::resultTable(const TableMaker& make_tables, const std::string& name,
                              const std::vector<bool>& complete)
{
    const std::vector<std::size_t> rows = sourceRows(complete);
    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.source_row_count = complete.size();
    params.source_rows = rows.data();
    params.table_name = name.c_str();
    statgpu_table_set* set = nullptr;
    runEngine("tables", [&](statgpu_context* context) { return make_tables(context, &params, &set); });
    const std::unique_ptr<statgpu_table_set, void (*)(statgpu_table_set*)> owned(set, statgpu_table_set_destroy);
    const statgpu_table* table = statgpu_table_set_find(set, name.c_str());
    if (table == nullptr)
        raiseCalcError(CalcError::NoValue, "the result has no such table");
    return tableCells(*table);
}

OUString SAL_CALL StatGpuAddIn::gpuInfo()
{
    return guarded([&] {
        EngineLock lock(*this);
        statgpu_context* context = engineContext();
        statgpu_backend_report report;
        checkEngineStatus(statgpu_context_backend_report(context, &report), context);
        char text[512];
        checkEngineStatus(statgpu_backend_describe(&report, text, sizeof text), context);
        return fromUtf8(text);
    });
}

} // namespace statgpu::addin

// ---- Component registration -------------------------------------------------

namespace
{
css::uno::Reference<css::uno::XInterface> SAL_CALL
createStatGpuAddIn(const css::uno::Reference<css::lang::XMultiServiceFactory>& service_manager)
{
    // The office's component context, for the progress bar of long calls.
    css::uno::Reference<css::uno::XComponentContext> context;
    try
    {
        css::uno::Reference<css::beans::XPropertySet> properties(service_manager, css::uno::UNO_QUERY);
        if (properties.is())
            properties->getPropertyValue("DefaultContext") >>= context;
    }
    catch (const css::uno::Exception&)
    {
    }
    return static_cast<cppu::OWeakObject*>(new statgpu::addin::StatGpuAddIn(context));
}
} // namespace

extern "C" {

SAL_DLLPUBLIC_EXPORT void SAL_CALL component_getImplementationEnvironment(const char** environment_type_name,
                                                                          uno_Environment**)
{
    *environment_type_name = CPPU_CURRENT_LANGUAGE_BINDING_NAME;
}

SAL_DLLPUBLIC_EXPORT void* SAL_CALL component_getFactory(const char* implementation_name, void* service_manager,
                                                         void* /*registry_key*/)
{
    using statgpu::addin::StatGpuAddIn;
    if (!service_manager || !StatGpuAddIn::implementationName().equalsAscii(implementation_name))
        return nullptr;
    // One instance per office process: Calc asks for the service more than once,
    // and the engine context should be made only once.
    css::uno::Reference<css::lang::XSingleServiceFactory> factory = cppu::createOneInstanceFactory(
        static_cast<css::lang::XMultiServiceFactory*>(service_manager), StatGpuAddIn::implementationName(),
        createStatGpuAddIn, StatGpuAddIn::serviceNames());
    if (!factory.is())
        return nullptr;
    factory->acquire();
    return factory.get();
}

} // extern "C"
