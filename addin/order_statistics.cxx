// order_statistics.cxx: GPUMEDIAN, GPUSMALL, GPULARGE and GPUQUANTILE: their
// arguments read as MEDIAN, SMALL, LARGE and PERCENTILE.INC read theirs.
#include "call.hxx"

#include <rtl/math.hxx>

namespace statgpu::addin
{
namespace
{
// Argument positions come from the function table (statgpu_functions.hxx).
// Data and the second argument (k, p) sit at the same places in the order
// statistics.
constexpr sal_Int16 kDataArgument = argument::gpuMedian::data;
constexpr sal_Int16 kSecondArgument = argument::gpuSmall::k;
static_assert(argument::gpuSmall::data == kDataArgument && argument::gpuLarge::k == kSecondArgument
                  && argument::gpuQuantile::p == kSecondArgument && argument::kmeans::data == kDataArgument
                  && argument::kmeans::k == kSecondArgument,
              "the order statistics and KMEANS share Data's and k's places");

// Data: the numbers of a range; empty cells and text are skipped, as Calc's
// MEDIAN, SMALL, LARGE and PERCENTILE.INC skip them inside a range.
std::vector<double> readData(const Range& data, std::size_t more_cells = 0)
{
    const auto start = std::chrono::steady_clock::now();
    std::vector<double> numbers;
    numbers.reserve(numberCount(data, kDataCells) + more_cells);  // one allocation, however many arguments
    appendNumbers(data, kDataCells, kDataArgument, numbers);
    t_call_times.cells += cellCount(data);
    t_call_times.convert_seconds += secondsSince(start);
    return numbers;
}

// MEDIAN's further arguments (Number 2, 3, ...), each as Calc hands an add-in
// a value or a range: GPUMEDIAN's Data 2 ... Data 30 and then the rest.
// Calc hands an argument left out in the middle (;;) and one not given at
// all alike, as a void; a void before a later argument is one left out,
// which MEDIAN counts as 0, and the voids after the last argument given are
// no arguments.
std::vector<const Any*> moreArguments(const std::initializer_list<const Any*> numbered, const Sequence<Any>& rest)
{
    std::vector<const Any*> given(numbered);
    for (const Any& argument : rest)
        given.push_back(&argument);
    while (!given.empty() && !given.back()->hasValue())
        given.pop_back();
    return given;
}

// The numbers of MEDIAN's further arguments, at most, for one allocation.
std::size_t moreDataCells(const std::vector<const Any*>& more)
{
    std::size_t cells = 0;
    for (const Any* argument : more)
    {
        // An Any holds a sequence by reference: peeking at it copies nothing.
        if (argument->getValueType() == cppu::UnoType<Range>::get())
            cells += numberCount(*static_cast<const Range*>(argument->getValue()), kDataCells);
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

// MEDIAN's further arguments, each read as MEDIAN reads it: a range or an
// array is read as Data; a number (a boolean is one) counts; an argument
// left out (;;) counts as 0, as MEDIAN counts it; text is skipped, because
// Calc hands over a reference to a text cell (which MEDIAN skips) and a text
// constant (which MEDIAN refuses) alike. Calc also hands over a reference to
// one empty cell as the number 0, where MEDIAN skips it; a range of one cell
// (D1:D1) keeps it empty.
void appendMoreData(const std::vector<const Any*>& more, std::vector<double>& numbers)
{
    const auto start = std::chrono::steady_clock::now();
    sal_Int16 position = kSecondArgument;
    for (const Any* argument : more)
    {
        Range range;
        double value = 0.0;
        if (*argument >>= range)
        {
            appendNumbers(range, kDataCells, position, numbers);
            t_call_times.cells += cellCount(range);
        }
        else if (!argument->hasValue())
            numbers.push_back(0.0);
        else if (readCell(*argument, kDataCells, position, value))
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

// The second argument of SMALL, LARGE and PERCENTILE.INC (k or p): one
// number, or a range or array of them, cell by cell as Calc reads those
// functions' k and p (an empty cell is 0, text is converted). Calc 7.4's
// SMALL and LARGE take an array of k as PERCENTILE.INC takes one of p, and
// give an array of results of its shape (a plain formula shows the first).
std::vector<double> readSecondArgument(const Range& given, const char* name)
{
    std::vector<double> numbers;
    appendNumbers(given, kParameterCells, kSecondArgument, numbers);
    if (numbers.empty())
        raiseCalcError(CalcError::IllegalArgument, (std::string(name) + " is empty").c_str(), kSecondArgument);
    return numbers;
}

// The results for each k or p in the shape of the argument they came from:
// one number where that was one cell, else an array. Calc's functions give
// an error in one cell only where one k or p is bad; an add-in cannot return
// errors cell by cell, so one bad k or p fails the whole array.
Any shapedAs(const Range& shape, const std::vector<double>& results)
{
    if (results.size() == 1)
        return Any(finiteResult(results[0]));
    Sequence<Sequence<double>> cells(shape.getLength());
    Sequence<double>* cells_row = cells.getArray();
    std::size_t next = 0;
    for (const Sequence<Any>& shape_row : shape)
    {
        cells_row->realloc(shape_row.getLength());
        double* cell = cells_row->getArray();
        for (sal_Int32 column = 0; column < shape_row.getLength(); ++column)
            cell[column] = finiteResult(results[next++]);
        ++cells_row;
    }
    return Any(cells);
}

} // namespace

double SAL_CALL StatGpuAddIn::gpuMedian(const Range& data, STATGPU_GPUMEDIAN_NUMBERED_PARAMETERS,
                                        const Sequence<Any>& moreData)
{
    return guarded([&] {
        const std::vector<const Any*> more = moreArguments({ STATGPU_GPUMEDIAN_NUMBERED_ADDRESSES }, moreData);
        std::vector<double> numbers = readData(data, moreDataCells(more));
        appendMoreData(more, numbers);
        double median = 0.0;
        const statgpu_vector vector = scratchVector(numbers);
        runEngine("GPUMEDIAN",
                  [&](statgpu_context* context) { return statgpu_vector_median(context, &vector, &median); });
        return finiteResult(median);
    });
}

Any StatGpuAddIn::orderStatistics(const Range& data, const Range& k, bool largest, const char* title)
{
    std::vector<double> numbers = readData(data);
    const std::vector<double> given = readSecondArgument(k, "k");
    // The k-th largest is the (n-k+1)-th smallest.
    std::vector<std::size_t> ranks;
    ranks.reserve(given.size());
    for (double rank : given)
        ranks.push_back(largest ? numbers.size() - readRank(rank, numbers.size()) + 1
                                : readRank(rank, numbers.size()));
    std::vector<double> values(ranks.size());
    const statgpu_vector vector = scratchVector(numbers);
    runEngine(title, [&](statgpu_context* context) {
        return statgpu_vector_select(context, &vector, ranks.data(), ranks.size(), values.data());
    });
    return shapedAs(k, values);
}

Any SAL_CALL StatGpuAddIn::gpuSmall(const Range& data, const Range& k)
{
    return guarded([&] { return orderStatistics(data, k, false, "GPUSMALL"); });
}

Any SAL_CALL StatGpuAddIn::gpuLarge(const Range& data, const Range& k)
{
    return guarded([&] { return orderStatistics(data, k, true, "GPULARGE"); });
}

Any SAL_CALL StatGpuAddIn::gpuQuantile(const Range& data, const Range& p)
{
    return guarded([&] {
        std::vector<double> numbers = readData(data);
        // p as PERCENTILE.INC reads it; a range of p gives a range of quantiles.
        const std::vector<double> probabilities = readSecondArgument(p, "p");
        for (double probability : probabilities)
            checkProbability(probability);
        std::vector<double> quantiles(probabilities.size());
        const statgpu_vector vector = scratchVector(numbers);
        runEngine("GPUQUANTILE", [&](statgpu_context* context) {
            return statgpu_vector_quantiles(context, &vector, probabilities.data(), probabilities.size(),
                                            quantiles.data());
        });
        return shapedAs(p, quantiles);
    });
}

} // namespace statgpu::addin
