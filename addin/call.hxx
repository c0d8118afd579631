// call.hxx: what every Calc function of the add-in shares: reading its
// arguments (whole numbers, Output words), the engine held for one call
// (runEngine), the trace of its time, guarded() around it, and a result
// table as Calc's array. Each function lives in the file of its method
// (order_statistics.cxx, kmeans.cxx, lts.cxx); statgpu_addin.cxx is the
// component itself.
#pragma once

#include "statgpu_addin.hxx"

#include "calc_errors.hxx"
#include "cells.hxx"
#include "progress.hxx"
#include "report_hooks.hxx"
#include "statgpu_functions.hxx"

#include <chrono>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <thread>
#include <vector>

namespace statgpu::addin
{
using css::uno::Any;
using css::uno::Sequence;
using Range = Sequence<Sequence<Any>>;

OUString fromUtf8(const char* text);

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
extern thread_local CallTimes t_call_times;

double secondsSince(std::chrono::steady_clock::time_point start);
void writeTrace();

// Runs an engine call, adding its time to the call's trace.
template <typename Call> statgpu_status timedEngine(Call&& call)
{
    const auto start = std::chrono::steady_clock::now();
    const statgpu_status status = call();
    t_call_times.engine_seconds += secondsSince(start);
    return status;
}

// ---- Arguments ------------------------------------------------------------------

// How an empty cell given for an optional argument reaches the add-in: Calc
// hands a reference to one (=KMEANS(A1:B9;2;C1)) over as the number 0
// (interpr4.cxx, ScExternal), a one-cell range of one (C1:C1) as a 1 x 1
// array of an empty text (rangeseq.cxx, FillMixedArray), and a formula cell
// giving "" as that text.
enum class ZeroIs
{
    Empty,  // 0 is no value of the argument: it is the empty cell Calc made it from
    Number  // 0 is a value (Intercept's FALSE): an empty cell is 0, as LINEST reads its Const
};

// An optional argument as the one value it holds, or void where it holds
// none, so that an empty cell reads as the argument left out: omitted, an
// empty text, a one-cell range of an empty cell, and with ZeroIs::Empty the
// number 0. A one-cell range gives its cell; a larger one is Err:502 at
// position.
Any optionalArgument(const Any& argument, ZeroIs zero, sal_Int16 position);

// An optional whole number (Restarts, MaxIter, NBest, MaxSize): omitted or
// empty (optionalArgument; none of them takes 0) is the default; a number is
// rounded down and must lie in [low, high]; text is converted (textToNumber).
std::size_t readOptionalWholeNumber(const Any& argument, std::size_t default_value, double low, double high,
                                    sal_Int16 position, const char* out_of_range);

// Seed, the same for every function: a whole number (rounded down) from 0 to
// 2^53, the largest up to which every whole number is a double, so that two
// different Seeds typed are never the same number; omitted or empty is 0;
// beyond that range Err:502, as every argument out of its range.
std::uint64_t readSeed(const Any& argument, sal_Int16 position);

// Restarts (1 to 1000), MaxIter (1 to 100000) and Seed (readSeed) of KMEANS,
// GMMFIT and IGMMFIT, at positions restarts_position and the two after it;
// omitted ones take the defaults given (Seed's is 0).
struct RunArguments
{
    std::size_t restarts;
    std::size_t max_iterations;
    std::uint64_t seed;
};
RunArguments readRunArguments(const Any& restarts, const Any& maxIterations, const Any& seed,
                              std::size_t default_restarts, std::size_t default_iterations,
                              sal_Int16 restarts_position);

// Data of KMEANS and GMMFIT, row by row: a row is an observation when every
// cell of it gives a number (kDataCells: an empty or text cell makes the row
// missing). Err:502 when no row is complete; position names Data.
struct Observations
{
    std::vector<double> values;  // count x variables, column-major
    std::vector<bool> complete;  // per row of the range
    std::size_t count = 0;
    std::size_t variables = 0;
};
Observations readObservations(const Range& data, sal_Int16 position);

// Y and X of a regression (LTSFIT, BESTSUBSET), row by row: a row is an
// observation when Y's cell and every cell of X's row give a number
// (kDataCells: an empty or text cell makes the row missing). When every cell
// of X's first row is text, those texts name the predictors (the row, not a
// number, is left out as any other). Err:502 for a Y of more than one column
// or an X of other rows; y_position and x_position name them.
struct RegressionRows
{
    std::vector<double> y;           // count
    std::vector<double> x;           // count x predictors, column-major
    std::vector<bool> complete;      // per row of the ranges
    std::vector<std::string> names;  // the predictors' names, or empty
    std::size_t count = 0;
    std::size_t predictors = 0;
};
RegressionRows readRegressionRows(const Range& y, const Range& x, sal_Int16 y_position, sal_Int16 x_position);

// Intercept: omitted (void) is TRUE; otherwise a boolean or a number, TRUE
// when not 0, as Calc reads a logical argument; text is converted as for a
// number. An empty cell is FALSE: Calc hands a reference to one over as 0,
// which FALSE is too, and LINEST reads an empty Const so.
bool readIntercept(const Any& argument, sal_Int16 position);

// A count of clusters or components: rounded down, from 1 to the number of
// complete rows; position names it.
std::size_t readClusterCount(double k, std::size_t observations, sal_Int16 position);

// An Output argument: omitted or empty (optionalArgument) is the method's
// first table; otherwise one of its tables' names, which the engine defines (statgpu_method_table_names),
// in any case; with criteria it may be followed by " lms" or " lts".
struct OutputChoice
{
    std::string table;
    bool lms = false;
};
OutputChoice readOutput(const Any& output, const char* method, bool with_criteria, sal_Int16 position);

// ---- Results --------------------------------------------------------------------

// value, or Err:502 when it is not finite.
double finiteResult(double value);
// The row map of a fit: the rows of the range that gave an observation.
std::vector<std::size_t> sourceRows(const std::vector<bool>& complete);
// A table as Calc's array; a row left out is an empty text.
Any tableCells(const statgpu_table& table);
// A table as a report writes it: the array and its titles and headers.
CollectedTable collectTable(const statgpu_table& table);

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

} // namespace statgpu::addin
