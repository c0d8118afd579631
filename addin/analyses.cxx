// analyses.cxx: the analyses' table, reading a dialog's values into a
// request, and running a request through the add-in's Calc functions (see
// analyses.hxx).
#include "analyses.hxx"
#include "call.hxx"

#include <statgpu.h>

#include <com/sun/star/beans/XPropertySet.hpp>
#include <com/sun/star/container/XIndexAccess.hpp>
#include <com/sun/star/container/XNameAccess.hpp>
#include <com/sun/star/container/XNamed.hpp>
#include <com/sun/star/lang/IllegalArgumentException.hpp>
#include <com/sun/star/lang/XMultiServiceFactory.hpp>
#include <com/sun/star/sheet/CellFlags.hpp>
#include <com/sun/star/sheet/FormulaResult.hpp>
#include <com/sun/star/sheet/XCellRangesQuery.hpp>
#include <com/sun/star/sheet/XSheetCellRanges.hpp>
#include <com/sun/star/sheet/XSheetCellRangeContainer.hpp>
#include <com/sun/star/sheet/XSpreadsheets.hpp>
#include <com/sun/star/table/CellAddress.hpp>
#include <com/sun/star/table/XCellRange.hpp>
#include <com/sun/star/sheet/XCellRangeData.hpp>
#include <com/sun/star/sheet/XCellRangeAddressable.hpp>
#include <com/sun/star/sheet/XCellRangeReferrer.hpp>
#include <com/sun/star/sheet/XSheetCellCursor.hpp>
#include <com/sun/star/sheet/XSpreadsheet.hpp>
#include <com/sun/star/sheet/XUsedAreaCursor.hpp>
#include <com/sun/star/frame/XStorable.hpp>
#include <com/sun/star/util/XProtectable.hpp>

#include <rtl/math.hxx>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace statgpu::dialogs
{
using css::uno::Any;
using css::uno::Reference;
using css::uno::Sequence;
using css::uno::UNO_QUERY;
using css::uno::UNO_QUERY_THROW;

namespace
{
constexpr double kSeedHigh = 9007199254740992.0;  // 2^53, the functions' limit

Field range(const char* id, const char* label, const char* help)
{
    return Field{ id, label, FieldKind::Range, Page::General, "", 0.0, 0.0, {}, false, help };
}

Field whole(const char* id, const char* label, Page page, const char* initial, double low, double high,
            const char* help, bool may_be_empty = false)
{
    return Field{ id, label, FieldKind::Whole, page, initial, low, high, {}, may_be_empty, help };
}

Field seed()
{
    return whole("seed", "Seed:", Page::Options, "0", 0.0, kSeedHigh,
                 "A whole number that chooses the random starts; the same seed gives the same result.");
}

Field choice(const char* id, const char* label, Page page, std::vector<std::string> words, const char* help)
{
    std::string first = words.front();
    return Field{ id, label, FieldKind::Choice, page, first, 0.0, 0.0, std::move(words), false, help };
}

std::vector<Analysis> makeAnalyses()
{
    const char* observations = "The observations: a row each, a column per variable. "
                               "A row with an empty or text cell is left out.";
    return {
        { "median", "Median and quantiles", "Order statistics", "GPUQUANTILE", "",
          { range("data", "Data:", "The numbers: a group per column (or per row). Empty cells and text are skipped."),
            choice("grouped", "Grouped by:", Page::General, { "columns", "rows" },
                   "Whether each column or each row of Data is a group."),
            Field{ "quantiles", "Quantiles (p):", FieldKind::Text, Page::Options, "0.05; 0.25; 0.5; 0.75; 0.95", 0.0,
                   1.0, {}, true, "Probabilities from 0 to 1, separated by ';': each group's p-quantile "
                                  "as PERCENTILE.INC gives it." } } },
        { "kmeans", "K-means clustering", "K-means", "KMEANS", "kmeans",
          { range("data", "Data:", observations),
            whole("k", "Number of clusters (k):", Page::General, "3", 1.0, 1e9,
                  "From 1 to the number of complete rows."),
            whole("restarts", "Restarts:", Page::Options, "10", 1.0, 1000.0,
                  "Runs from different k-means++ starts; the lowest inertia is kept."),
            whole("maxiter", "Maximum iterations:", Page::Options, "300", 1.0, 100000.0,
                  "The most iterations of each run."),
            seed() } },
        { "gmm", "Gaussian mixture", "Gaussian mixture", "GMMFIT", "gmm",
          { range("data", "Data:", observations),
            Field{ "k", "Components (k):", FieldKind::Text, Page::General, "2", 1.0, 1e9, {}, false,
                   "A number, or candidates to choose from by BIC: 1-6 or 2; 4; 8." },
            choice("covariance", "Covariance type:", Page::General, { "full", "tied", "diag", "spherical", "all" },
                   "full: each component its own matrix; tied: one for all; diag; spherical; "
                   "all: each type, the lowest BIC chosen."),
            whole("restarts", "Restarts:", Page::Options, "1", 1.0, 1000.0,
                  "Runs from different k-means starts; the highest likelihood is kept."),
            whole("maxiter", "Maximum iterations:", Page::Options, "100", 1.0, 100000.0,
                  "The most EM iterations of each run."),
            seed() } },
        { "lts", "Robust regression (LTS)", "Robust regression", "LTSFIT", "lts",
          { range("y", "Y (response):", "One column. A row with an empty or text cell in Y or X is left out."),
            range("x", "X (predictors):", "One or more columns, as many rows as Y."),
            Field{ "alpha", "Alpha (share explained):", FieldKind::Number, Page::General, "0.5", 0.5, 1.0, {},
                   false, "From 0.5 (the most robust) to 1." },
            Field{ "intercept", "Fit an intercept", FieldKind::Check, Page::Options, "1", 0.0, 0.0, {}, false,
                   "Off: a fit through 0." },
            seed() } },
        { "bestsubset", "Best subset regression", "Best subsets", "BESTSUBSET", "bestsubset",
          { range("y", "Y (response):", "One column. A row with an empty or text cell in Y or X is left out."),
            range("x", "X (candidate predictors):", "Up to 128 columns, as many rows as Y."),
            whole("maxsize", "Largest subset size:", Page::General, "", 1.0, 128.0,
                  "Empty: every size up to all predictors.", true),
            choice("criterion", "Choose the size by:", Page::General, { "validation", "cp", "bic", "adjr2" },
                   "validation: the lowest validation error; cp, bic: the lowest; adjr2: the highest."),
            choice("validation", "Validation:", Page::Options, { "press", "holdout", "kfold" },
                   "press: leave-one-out, exact; holdout: a share of the rows held out; kfold: k-fold "
                   "cross-validation, the search repeated per fold."),
            Field{ "holdout", "Share held out (holdout):", FieldKind::Number, Page::Options, "0.2", 0.01, 0.99, {},
                   false, "From 0.01 to 0.99." },
            whole("folds", "Folds (k-fold):", Page::Options, "10", 2.0, 1000.0, "From 2."),
            Field{ "intercept", "Fit an intercept", FieldKind::Check, Page::Options, "1", 0.0, 0.0, {}, false,
                   "Off: every model through 0." },
            whole("nbest", "Subsets per size:", Page::Options, "1", 1.0, 1000.0,
                  "How many of the best subsets of each size to report."),
            seed() } },
        { "igmm", "Inverse Gaussian mixture", "Inverse Gaussian mixture", "IGMMFIT", "igmm",
          { range("data", "Data:", "The data sets, one per column: positive numbers. "
                                   "Empty and text cells are skipped."),
            whole("k", "Components (k):", Page::General, "2", 1.0, 64.0, "From 1 to 64."),
            whole("starts", "Random starts:", Page::Options, "10", 1.0, 1000.0,
                  "Per data set; the highest likelihood is kept."),
            whole("maxiter", "Maximum iterations:", Page::Options, "100", 1.0, 100000.0,
                  "The most EM iterations of each start."),
            seed() } },
    };
}

const Field* findField(const Analysis& analysis, const std::string& id)
{
    for (const Field& field : analysis.fields)
        if (field.id == id)
            return &field;
    return nullptr;
}

std::string trimmed(const std::string& text)
{
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos)
        return "";
    return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

std::string fieldName(const Field& field)
{
    std::string name = field.label;
    if (!name.empty() && name.back() == ':')
        name.pop_back();
    return name;
}

// A number with '.' as its point, read whatever the process's C locale
// (the office runs in the desktop's, where strtod takes "0,5" and stops at
// "0.5"'s point under a German one): the whole text or nothing.
bool pointNumber(const std::string& text, double& value)
{
    rtl_math_ConversionStatus status = rtl_math_ConversionStatus_Ok;
    sal_Int32 end = 0;
    const OUString number = fromUtf8(text);
    const double parsed = rtl::math::stringToDouble(number, '.', 0, &status, &end);
    // A number below the doubles' range is its nearest double, as a cell
    // takes it ("1e-320" is 9.99989e-321, "1e-330" is 0); one above, no number.
    const bool underflow = status == rtl_math_ConversionStatus_OutOfRange && std::fabs(parsed) < 1.0;
    if ((status != rtl_math_ConversionStatus_Ok && !underflow) || end != number.getLength() || !std::isfinite(parsed))
        return false;
    value = parsed;
    return true;
}

// A number as a user types it: '.' or ',' as the point (one of them, once),
// digits, a sign and an exponent; no other text (no hexadecimal, no
// thousands separators: "1,000" is refused rather than read as 1).
bool parseNumber(const std::string& text, double& value)
{
    std::string copy = trimmed(text);
    int points = 0;
    for (char& c : copy)
    {
        if (c == ',')
            c = '.';
        if (c == '.')
            ++points;
        if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-' || c == 'e'
              || c == 'E'))
            return false;
    }
    if (copy.empty() || points > 1)
        return false;
    return pointNumber(copy, value);
}

// "1.000" or "2,500": a point or comma after a whole number other than 0,
// followed by exactly three digits, is a thousands separator to some
// readers and a decimal point to others (a thousand, or one).
bool groupedOrDecimal(const std::string& text)
{
    const std::string copy = trimmed(text);
    const std::size_t point = copy.find_first_of(".,");
    if (point == std::string::npos || copy.find_first_of(".,eE", point + 1) != std::string::npos
        || copy.size() - point - 1 != 3)
        return false;
    std::size_t first = copy[0] == '-' || copy[0] == '+' ? 1 : 0;
    const std::string whole = copy.substr(first, point - first);
    return !whole.empty() && whole.size() <= 3 && whole.find_first_not_of("0123456789") == std::string::npos
           && whole.find_first_not_of('0') != std::string::npos;
}

double readNumberField(const Field& field, const std::string& text)
{
    double value = 0.0;
    if (field.kind != FieldKind::Whole && groupedOrDecimal(text))
    {
        std::string digits = trimmed(text), pointed = digits;
        digits.erase(digits.find_first_of(".,"), 1);
        pointed[pointed.find_first_of(".,")] = '.';
        double as_point = 0.0, as_group = 0.0;
        pointNumber(pointed, as_point);
        pointNumber(digits, as_group);
        throw FieldError(field.id, fieldName(field) + ": \"" + trimmed(text) + "\" is " + numberText(as_point)
                                       + " to some readers and " + numberText(as_group) + " to others; write "
                                       + numberText(as_point) + " or " + numberText(as_group) + ".");
    }
    const bool whole_number = field.kind == FieldKind::Whole;
    // A whole number is typed without a point: "1,000" is a thousand to some
    // and 1.000 to others, so it is refused rather than guessed.
    const bool pointed = text.find_first_of(".,") != std::string::npos;
    if (!parseNumber(text, value) || (whole_number && (pointed || value != std::floor(value))) || value < field.low
        || value > field.high)
    {
        throw FieldError(field.id, fieldName(field) + ": enter " + (whole_number ? "a whole number" : "a number")
                                       + " from " + numberText(field.low) + " to " + numberText(field.high) + ".");
    }
    return value;
}

std::string columnLetters(sal_Int32 column)
{
    std::string letters;
    for (sal_Int32 c = column + 1; c > 0; c = (c - 1) / 26)
        letters.insert(letters.begin(), static_cast<char>('A' + (c - 1) % 26));
    return letters;
}

std::string cellText(const Any& cell)
{
    OUString text;
    double number = 0.0;
    if (cell >>= text)
        return toUtf8(text);
    if (cell >>= number)
        return shownNumbers(numberText(number));
    return "";
}

Reference<css::beans::XPropertySet> conversion(const Reference<css::sheet::XSpreadsheetDocument>& document,
                                               const char* service, sal_Int16 active_sheet)
{
    const Reference<css::lang::XMultiServiceFactory> factory(document, UNO_QUERY_THROW);
    Reference<css::beans::XPropertySet> converter(factory->createInstance(OUString::createFromAscii(service)),
                                                  UNO_QUERY_THROW);
    converter->setPropertyValue("ReferenceSheet", Any(static_cast<sal_Int32>(active_sheet)));
    return converter;
}

// The cells a named range or a database range of the document refers to,
// by its name (as Calc's formulas and Name Box take it), where one has
// that name and refers to cells.
bool namedRange(const Reference<css::sheet::XSpreadsheetDocument>& document, const OUString& name,
                css::table::CellRangeAddress& address)
{
    for (const char* collection : { "NamedRanges", "DatabaseRanges" })
    {
        try
        {
            Reference<css::container::XNameAccess> names;
            Reference<css::beans::XPropertySet>(document, UNO_QUERY_THROW)
                    ->getPropertyValue(OUString::createFromAscii(collection))
                >>= names;
            if (!names.is() || !names->hasByName(name))
                continue;
            const Reference<css::sheet::XCellRangeReferrer> referrer(names->getByName(name), UNO_QUERY);
            const Reference<css::sheet::XCellRangeAddressable> cells(
                referrer.is() ? referrer->getReferredCells() : nullptr, UNO_QUERY);
            if (!cells.is())
                continue;
            address = cells->getRangeAddress();
            return true;
        }
        catch (const css::uno::Exception&)
        {
        }
    }
    return false;
}

// A reference as typed, trimmed, and "A1 : B9" as a formula takes it: the
// spaces around a colon dropped (outside a quoted sheet name).
std::string closedUp(const std::string& text)
{
    std::string reference;
    bool quoted = false;
    const std::string given = trimmed(text);
    for (std::size_t i = 0; i < given.size(); ++i)
    {
        const char c = given[i];
        quoted = c == '\'' ? !quoted : quoted;
        if (!quoted && (c == ' ' || c == '\t'))
        {
            const std::size_t next = given.find_first_not_of(" \t", i);
            if ((!reference.empty() && reference.back() == ':') || (next != std::string::npos && given[next] == ':'))
                continue;
        }
        reference += c;
    }
    return reference;
}

css::table::CellRangeAddress parseRange(const Reference<css::sheet::XSpreadsheetDocument>& document,
                                        sal_Int16 active_sheet, const Field& field, const std::string& text)
{
    if (trimmed(text).empty())
        throw FieldError(field.id, fieldName(field) + ": select the cells of the range.");
    if (css::table::CellRangeAddress named; namedRange(document, fromUtf8(trimmed(text).c_str()), named))
        return named;
    const std::string reference = closedUp(text);
    try
    {
        const auto converter = conversion(document, "com.sun.star.table.CellRangeAddressConversion", active_sheet);
        // As the user's reference syntax writes it, or as Calc's own ($Sheet1.$A$1:$B$9).
        try
        {
            converter->setPropertyValue("UserInterfaceRepresentation", Any(fromUtf8(reference)));
        }
        catch (const css::uno::Exception&)
        {
            converter->setPropertyValue("PersistentRepresentation", Any(fromUtf8(reference)));
        }
        css::table::CellRangeAddress address;
        converter->getPropertyValue("Address") >>= address;
        return address;
    }
    catch (const css::uno::Exception&)
    {
        throw FieldError(field.id, fieldName(field) + ": \"" + trimmed(text) + "\" is not a cell range.");
    }
}

Reference<css::table::XCellRange> rangeOf(const Reference<css::sheet::XSpreadsheetDocument>& document,
                                          const css::table::CellRangeAddress& address)
{
    const Reference<css::container::XIndexAccess> sheets(document->getSheets(), UNO_QUERY_THROW);
    const Reference<css::table::XCellRange> sheet(sheets->getByIndex(address.Sheet), UNO_QUERY_THROW);
    return sheet->getCellRangeByPosition(address.StartColumn, address.StartRow, address.EndColumn, address.EndRow);
}

// A whole column (A:A, a range down to the sheet's last row) cut at the
// last row that holds something inside the range itself, and a whole row
// likewise at the last column: the report's tables then have a row per row
// the data use, not per row of the sheet, and cells elsewhere on the sheet
// (a note far below, other tables) do not lengthen them. A range the user
// drew cell by cell is read as drawn, empty cells and all.
css::table::CellRangeAddress clampToUsedArea(const Reference<css::sheet::XSpreadsheetDocument>& document,
                                             css::table::CellRangeAddress range)
{
    const Reference<css::container::XIndexAccess> sheets(document->getSheets(), UNO_QUERY_THROW);
    const Reference<css::sheet::XSpreadsheet> sheet(sheets->getByIndex(range.Sheet), UNO_QUERY_THROW);
    const css::table::CellRangeAddress edge =
        Reference<css::sheet::XCellRangeAddressable>(sheet, UNO_QUERY_THROW)->getRangeAddress();
    if (range.EndRow < edge.EndRow && range.EndColumn < edge.EndColumn)
        return range;
    const Reference<css::sheet::XCellRangesQuery> query(rangeOf(document, range), UNO_QUERY_THROW);
    const Reference<css::sheet::XSheetCellRanges> filled = query->queryContentCells(
        css::sheet::CellFlags::VALUE | css::sheet::CellFlags::DATETIME | css::sheet::CellFlags::STRING
        | css::sheet::CellFlags::FORMULA);
    sal_Int32 last_row = range.StartRow, last_column = range.StartColumn;
    if (filled.is())
        for (const css::table::CellRangeAddress& block : filled->getRangeAddresses())
        {
            last_row = std::max(last_row, block.EndRow);
            last_column = std::max(last_column, block.EndColumn);
        }
    if (range.EndRow >= edge.EndRow)
        range.EndRow = std::min(range.EndRow, last_row);
    if (range.EndColumn >= edge.EndColumn)
        range.EndColumn = std::min(range.EndColumn, last_column);
    return range;
}

InputRange readRange(const Reference<css::sheet::XSpreadsheetDocument>& document, sal_Int16 active_sheet,
                     const Field& field, const std::string& text, bool labels, bool by_rows)
{
    InputRange input;
    input.given = fromUtf8(closedUp(text));
    input.whole = clampToUsedArea(document, parseRange(document, active_sheet, field, text));
    input.data = input.whole;
    if (labels)
    {
        if (by_rows)
            ++input.data.StartColumn;
        else
            ++input.data.StartRow;
        if (input.data.StartColumn > input.data.EndColumn || input.data.StartRow > input.data.EndRow)
            throw FieldError(field.id, fieldName(field) + ": the range holds only the labels.");
    }
    const Reference<css::table::XCellRange> whole = rangeOf(document, input.whole);
    const Reference<css::sheet::XCellRangesQuery> query(whole, UNO_QUERY_THROW);
    const Reference<css::container::XIndexAccess> errors(
        query->queryFormulaCells(css::sheet::FormulaResult::ERROR), UNO_QUERY);
    if (errors.is() && errors->getCount() > 0)
    {
        const Reference<css::sheet::XSheetCellRangeContainer> ranges(errors, UNO_QUERY);
        const std::string where = ranges.is() ? toUtf8(ranges->getRangeAddressesAsString()) : std::string();
        throw FieldError(field.id, fieldName(field) + ": the range holds an error value" +
                                       (where.empty() ? std::string(".") : " (" + where + ")."));
    }
    const Cells all = Reference<css::sheet::XCellRangeData>(whole, UNO_QUERY_THROW)->getDataArray();
    const sal_Int32 rows = all.getLength();
    const sal_Int32 columns = rows > 0 ? all[0].getLength() : 0;
    const sal_Int32 skip_rows = input.data.StartRow - input.whole.StartRow;
    const sal_Int32 skip_columns = input.data.StartColumn - input.whole.StartColumn;
    input.cells.realloc(rows - skip_rows);
    for (sal_Int32 r = skip_rows; r < rows; ++r)
    {
        Sequence<Any>& row = input.cells.getArray()[r - skip_rows];
        row.realloc(columns - skip_columns);
        for (sal_Int32 c = skip_columns; c < columns; ++c)
            row.getArray()[c - skip_columns] = all[r][c];
    }
    const sal_Int32 groups = by_rows ? rows - skip_rows : columns - skip_columns;
    for (sal_Int32 g = 0; g < groups; ++g)
    {
        std::string label;
        if (labels)
            label = trimmed(by_rows ? cellText(all[g + skip_rows][0]) : cellText(all[0][g + skip_columns]));
        if (label.empty())
            label = by_rows ? "Row " + std::to_string(input.data.StartRow + g + 1)
                            : "Column " + columnLetters(input.data.StartColumn + g);
        input.labels.push_back(label);
    }
    input.reference = rangeReference(document, input.data, true);
    input.whole_reference = rangeReference(document, input.whole, true);
    if (labels && !by_rows && rows > 0)
        input.label_cells = all[0];
    return input;
}

std::vector<double> readProbabilities(const Field& field, const std::string& text)
{
    std::vector<double> values;
    std::string item;
    const std::string all = text + ";";
    for (char c : all)
    {
        if (c != ';')
        {
            item += c;
            continue;
        }
        if (!trimmed(item).empty())
        {
            double value = 0.0;
            if (!parseNumber(item, value) || value < 0.0 || value > 1.0 || groupedOrDecimal(item))
                throw FieldError(field.id, fieldName(field) + ": \"" + trimmed(item)
                                               + "\" is not a probability from 0 to 1.");
            values.push_back(value);
        }
        item.clear();
    }
    return values;
}

// k of GMMFIT: a number, a span "1-6" or a list "2; 4; 8" (or with ','); a
// k listed again the engine fits once.
std::vector<double> readComponentList(const Field& field, const std::string& text)
{
    constexpr double kMostComponents = 512.0;  // GMMFIT's own limit
    constexpr std::size_t kMostModels = 200;
    const std::string error = fieldName(field) + ": enter a number of components, a span such as 1-6 "
                                                 "or a list such as 2; 4; 8.";
    const auto check = [&](double k) {
        if (k > kMostComponents)
            throw FieldError(field.id, fieldName(field) + ": a mixture has at most 512 components (\""
                                           + trimmed(text) + "\").");
    };
    const std::string too_many = fieldName(field) + ": at most 200 numbers of components at once.";
    std::vector<double> counts;
    const std::string value = trimmed(text);
    const auto dash = value.find('-');
    if (dash != std::string::npos && dash > 0)
    {
        double low = 0.0, high = 0.0;
        if (!parseNumber(value.substr(0, dash), low) || !parseNumber(value.substr(dash + 1), high) || low < 1.0
            || high < low || low != std::floor(low) || high != std::floor(high))
            throw FieldError(field.id, error);
        check(high);
        if (high - low >= kMostModels)
            throw FieldError(field.id, too_many);
        for (double k = low; k <= high; k += 1.0)
            counts.push_back(k);
        return counts;
    }
    std::string item;
    for (char c : value + ";")
    {
        if (c != ';' && c != ',')
        {
            item += c;
            continue;
        }
        if (!trimmed(item).empty())
        {
            double k = 0.0;
            if (!parseNumber(item, k) || k < 1.0 || k != std::floor(k))
                throw FieldError(field.id, error);
            check(k);
            counts.push_back(k);
        }
        item.clear();
    }
    if (counts.empty())
        throw FieldError(field.id, error);
    if (counts.size() > kMostModels)
        throw FieldError(field.id, too_many);
    return counts;
}

std::string value(const Request& request, const std::string& id)
{
    const auto found = request.values.find(id);
    return found == request.values.end() ? std::string() : trimmed(found->second);
}

double number(const Request& request, const std::string& id)
{
    double result = 0.0;
    parseNumber(value(request, id), result);
    return result;
}

Any word(const std::string& text)
{
    return Any(fromUtf8(text));
}

OUString wordText(const std::string& text)
{
    return "\"" + fromUtf8(text) + "\"";
}

OUString num(double value)
{
    return fromUtf8(numberText(value));
}

Cells column(const std::vector<double>& values)
{
    Cells cells(static_cast<sal_Int32>(values.size()));
    for (std::size_t i = 0; i < values.size(); ++i)
        cells.getArray()[i] = sequenceOf<Any>({ Any(values[i]) });
    return cells;
}

OUString inlineArray(const std::vector<double>& values)
{
    OUString text = "{";
    for (std::size_t i = 0; i < values.size(); ++i)
        text += (i > 0 ? OUString(";") : OUString()) + num(values[i]);
    return text + "}";
}

// The settings a report lists: each field's label and value.
std::vector<std::pair<std::string, std::string>> settingsOf(const Request& request)
{
    std::vector<std::pair<std::string, std::string>> settings;
    for (const Field& field : request.analysis->fields)
    {
        if (field.kind == FieldKind::Range)
        {
            const InputRange& input = request.ranges.at(field.id);
            settings.emplace_back(fieldName(field), toUtf8(input.given) + "  (" + std::to_string(input.cells.getLength())
                                                         + " rows of data)");
            continue;
        }
        // Options the run does not read (the held-out share without holdout) are not listed.
        const std::string validation = value(request, "validation");
        if ((field.id == "holdout" && validation != "holdout") || (field.id == "folds" && validation != "kfold"))
            continue;
        std::string shown = value(request, field.id);
        if (field.kind == FieldKind::Check)
            shown = shown == "1" ? "yes" : "no";
        if (shown.empty())
            shown = "(default)";
        settings.emplace_back(fieldName(field), shownValue(field, shown));
    }
    settings.emplace_back("First row has labels", request.labels ? "yes" : "no");
    settings.emplace_back("Results written as", request.live ? "live formulas" : "values");
    return settings;
}

// ---- One run per method ------------------------------------------------------

using Functions = Reference<org::statgpu::XStatGpu>;

// The tables of the run, each with its array formula: formula_of(table).
// per_row_tables: the method's tables with a row per row of the data (laid
// out beside the data's rows), known by name: a table of k rows is not one
// of them where k happens to equal the rows.
void collect(Outcome& outcome, const addin::ReportRun& run, const std::function<OUString(const std::string&)>& formula_of,
             const InputRange& rows_of, std::initializer_list<const char*> per_row_tables)
{
    const sal_Int32 data_rows = rows_of.cells.getLength();
    for (const addin::CollectedTable& table : run.tables)
    {
        ReportTable written;
        written.table = table;
        written.array_formula = "=" + formula_of(table.name);
        Cells cells;
        table.cells >>= cells;
        bool named = false;
        for (const char* name : per_row_tables)
            named = named || table.name == name;
        written.per_row = named && cells.getLength() == data_rows;
        // The sheet row of the first: the label row's when the call took it.
        written.first_row = data_rows > rows_of.data.EndRow - rows_of.data.StartRow + 1 ? rows_of.whole.StartRow
                                                                                         : rows_of.data.StartRow;
        outcome.tables.push_back(std::move(written));
    }
}

void runOrderStatistics(const Request& request, const Functions& functions, Outcome& outcome)
{
    const InputRange& data = request.ranges.at("data");
    const std::vector<double> quantiles =
        readProbabilities(*findField(*request.analysis, "quantiles"), value(request, "quantiles"));
    const sal_Int32 rows = data.cells.getLength();
    const sal_Int32 columns = rows > 0 ? data.cells[0].getLength() : 0;
    const sal_Int32 groups = request.by_rows ? rows : columns;

    ReportTable written;
    addin::CollectedTable& table = written.table;
    table.name = "statistics";
    table.title = "Order statistics";
    table.row_label_header = "statistic";
    table.row_labels = { "count", "minimum" };
    for (double p : quantiles)
        table.row_labels.push_back("quantile " + shownNumbers(numberText(p)));
    table.row_labels.insert(table.row_labels.end(), { "median", "maximum" });
    const std::size_t statistics = table.row_labels.size();
    Cells cells(static_cast<sal_Int32>(statistics));
    for (sal_Int32 s = 0; s < cells.getLength(); ++s)
        cells.getArray()[s].realloc(groups);
    written.cell_formulas.assign(statistics, std::vector<OUString>(static_cast<std::size_t>(groups)));
    for (sal_Int32 g = 0; g < groups; ++g)
    {
        table.column_headers.push_back(data.labels[static_cast<std::size_t>(g)]);
        Cells group;
        if (request.by_rows)
            group = sequenceOf<Sequence<Any>>({ data.cells[g] });
        else
        {
            group.realloc(rows);
            for (sal_Int32 r = 0; r < rows; ++r)
                group.getArray()[r] = sequenceOf<Any>({ data.cells[r][g] });
        }
        const OUString& reference = data.group_references[static_cast<std::size_t>(g)];
        double count = 0.0;
        for (const auto& row : group)
            for (const Any& cell : row)
                if (cell.getValueTypeClass() == css::uno::TypeClass_DOUBLE)
                    count += 1.0;
        std::size_t s = 0;
        auto put = [&](const Any& result, const OUString& formula) {
            cells.getArray()[static_cast<sal_Int32>(s)].getArray()[g] = result;
            written.cell_formulas[s][static_cast<std::size_t>(g)] = formula;
            ++s;
        };
        put(Any(count), "=COUNT(" + reference + ")");
        if (count == 0.0)
        {
            // A group without numbers: its statistics are empty cells (the
            // functions' error there), as a report's other missing values are.
            while (s < statistics)
                put(Any(OUString()), OUString());
            continue;
        }
        put(functions->gpuSmall(group, column({ 1.0 })), "=GPUSMALL(" + reference + ";1)");
        for (double p : quantiles)
        {
            // One p gives a number, as PERCENTILE.INC does; a range an array.
            double quantile = 0.0;
            functions->gpuQuantile(group, column({ p })) >>= quantile;
            put(Any(quantile), "=GPUQUANTILE(" + reference + ";" + num(p) + ")");
        }
        put(Any(functions->gpuMedian(group, STATGPU_GPUMEDIAN_NUMBERED_OMITTED, {})), "=GPUMEDIAN(" + reference + ")");
        put(functions->gpuLarge(group, column({ 1.0 })), "=GPULARGE(" + reference + ";1)");
        if (request.charts && g < 6)
        {
            std::vector<double> ps;
            for (int i = 0; i <= 100; ++i)
                ps.push_back(i / 100.0);
            Sequence<Sequence<double>> curve;  // GPUQUANTILE's array, in p's shape
            std::vector<double> values;
            if (functions->gpuQuantile(group, column(ps)) >>= curve)
                for (const auto& row : curve)
                    values.push_back(row[0]);
            outcome.quantile_curves.resize(static_cast<std::size_t>(g) + 1);
            outcome.quantile_curves[static_cast<std::size_t>(g)] = values;
        }
    }
    table.cells <<= cells;
    outcome.tables.push_back(std::move(written));
}

void runKmeans(const Request& request, const Functions& functions, addin::ReportRun& run, Outcome& outcome)
{
    const InputRange& data = request.ranges.at("data");
    const double k = number(request, "k"), restarts = number(request, "restarts"),
                 iterations = number(request, "maxiter"), seed = number(request, "seed");
    functions->kmeans(data.cells, k, word("summary"), Any(restarts), Any(iterations), Any(seed));
    collect(outcome, run, [&](const std::string& table) {
        return "KMEANS(" + data.reference + ";" + num(k) + ";" + wordText(table) + ";" + num(restarts) + ";"
               + num(iterations) + ";" + num(seed) + ")";
    }, data, { "labels" });
}

void runGmm(const Request& request, const Functions& functions, addin::ReportRun& run, Outcome& outcome)
{
    const InputRange& data = request.ranges.at("data");
    const std::vector<double> counts = readComponentList(*findField(*request.analysis, "k"), value(request, "k"));
    const std::string covariance = value(request, "covariance");
    const double restarts = number(request, "restarts"), iterations = number(request, "maxiter"),
                 seed = number(request, "seed");
    functions->gmmFit(data.cells, column(counts), word(covariance), word("summary"), Any(restarts),
                      Any(iterations), Any(seed));
    const OUString k = counts.size() == 1 ? num(counts[0]) : inlineArray(counts);
    collect(outcome, run, [&](const std::string& table) {
        return "GMMFIT(" + data.reference + ";" + k + ";" + wordText(covariance) + ";" + wordText(table) + ";"
               + num(restarts) + ";" + num(iterations) + ";" + num(seed) + ")";
    }, data, { "labels", "probabilities", "density" });
}

void runLts(const Request& request, const Functions& functions, addin::ReportRun& run, Outcome& outcome)
{
    const InputRange& y = request.ranges.at("y");
    const InputRange& x = request.ranges.at("x");
    const double alpha = number(request, "alpha"), seed = number(request, "seed");
    const bool intercept = value(request, "intercept") == "1";
    functions->ltsFit(y.cells, x.cells, Any(alpha), word("summary"), Any(intercept), Any(seed));
    collect(outcome, run, [&](const std::string& table) {
        return "LTSFIT(" + y.reference + ";" + x.reference + ";" + num(alpha) + ";" + wordText(table) + ";"
               + OUString(intercept ? "1" : "0") + ";" + num(seed) + ")";
    }, y, { "weights", "residuals" });
}

// Whether input's label row is all text: BESTSUBSET and IGMMFIT take a
// first row of texts as names, and any other first row as data.
bool labelsAreNames(const InputRange& input)
{
    bool all_text = input.label_cells.getLength() > 0;
    for (const Any& cell : input.label_cells)
    {
        OUString text;
        all_text = all_text && (cell >>= text) && !text.isEmpty();
    }
    return all_text;
}

// input with its label row put back (the cells and the reference), for a
// function that names from it. A label row holding a number or a blank stays
// out (labelsAreNames; values and live formulas alike read the data rows
// only, the names then the functions' own).
InputRange withLabels(const InputRange& input)
{
    InputRange whole = input;
    whole.cells.realloc(input.cells.getLength() + 1);
    for (sal_Int32 r = input.cells.getLength(); r > 0; --r)
        whole.cells.getArray()[r] = input.cells[r - 1];
    whole.cells.getArray()[0] = input.label_cells;
    whole.reference = input.whole_reference;
    return whole;
}

void runBestSubset(const Request& request, const Functions& functions, addin::ReportRun& run, Outcome& outcome)
{
    // With labels that name every predictor, Y and X as given, the first row
    // included in both (whatever Y's label is): BESTSUBSET names the
    // predictors from X's first row of text itself, so the report's values
    // and its live formulas name them alike. Otherwise neither label row
    // (a blank or a number among X's labels had put Y's row in alone).
    const InputRange& y_data = request.ranges.at("y");
    const InputRange& x_data = request.ranges.at("x");
    const bool named = request.labels && labelsAreNames(x_data);
    const InputRange y = named ? withLabels(y_data) : y_data;
    const InputRange x = named ? withLabels(x_data) : x_data;
    // An empty MaxSize is left out (every size), so that more than 128
    // predictors are refused as that, not as a MaxSize nobody gave.
    const bool every_size = value(request, "maxsize").empty();
    const double max_size = every_size ? 0.0 : number(request, "maxsize");
    const bool intercept = value(request, "intercept") == "1";
    std::string validation = value(request, "validation");
    if (validation == "holdout")
        validation += " " + numberText(number(request, "holdout"));
    else if (validation == "kfold")
        validation += " " + numberText(number(request, "folds"));
    const std::string criterion = value(request, "criterion");
    const double nbest = number(request, "nbest"), seed = number(request, "seed");
    functions->bestSubset(y.cells, x.cells, every_size ? Any() : Any(max_size), word("summary"), Any(intercept), word(validation),
                          word(criterion), Any(nbest), Any(seed));
    collect(outcome, run, [&](const std::string& table) {
        return "BESTSUBSET(" + y.reference + ";" + x.reference + ";" + (every_size ? OUString() : num(max_size))
               + ";" + wordText(table) + ";"
               + OUString(intercept ? "1" : "0") + ";" + wordText(validation) + ";" + wordText(criterion) + ";"
               + num(nbest) + ";" + num(seed) + ")";
    }, y, {});
}

void runIgmm(const Request& request, const Functions& functions, addin::ReportRun& run, Outcome& outcome)
{
    // With labels, Data as given: IGMMFIT names the data sets from its first
    // row of texts itself, so the report's values and its live formulas name
    // them alike.
    const InputRange& given = request.ranges.at("data");
    const InputRange data = request.labels && labelsAreNames(given) ? withLabels(given) : given;
    const double k = number(request, "k"), starts = number(request, "starts"),
                 iterations = number(request, "maxiter"), seed = number(request, "seed");
    functions->igmmFit(data.cells, k, word("summary"), Any(starts), Any(iterations), Any(seed));
    collect(outcome, run, [&](const std::string& table) {
        return "IGMMFIT(" + data.reference + ";" + num(k) + ";" + wordText(table) + ";" + num(starts) + ";"
               + num(iterations) + ";" + num(seed) + ")";
    }, data, { "labels" });
}
} // namespace

// ---- The table ------------------------------------------------------------------

const std::vector<Analysis>& analyses()
{
    static const std::vector<Analysis> all = makeAnalyses();
    return all;
}

const Analysis* findAnalysis(const std::string& command)
{
    for (const Analysis& analysis : analyses())
        if (analysis.command == command)
            return &analysis;
    return nullptr;
}

std::vector<std::string> tableNames(const Analysis& analysis)
{
    if (analysis.method.empty())
        return { "statistics" };
    std::vector<std::string> names;
    for (const char* const* name = statgpu_method_table_names(analysis.method.c_str()); name && *name; ++name)
        names.emplace_back(*name);
    return names;
}

std::string tableTitle(const Analysis& analysis, const std::string& table)
{
    if (analysis.method.empty())
        return "Order statistics";
    const char* title = statgpu_method_table_title(analysis.method.c_str(), table.c_str());
    return title != nullptr ? title : table;
}

// ---- Reading a dialog --------------------------------------------------------------

namespace
{
bool holdsNumbers(const InputRange& input)
{
    for (const auto& row : input.cells)
        for (const Any& cell : row)
            if (cell.getValueTypeClass() == css::uno::TypeClass_DOUBLE)
                return true;
    return false;
}

// The rows of Y and X that BESTSUBSET fits, by its own reading
// (readRegressionRows); -1 where that reading refuses the ranges (the run
// then reports why).
sal_Int32 completeRows(const InputRange& y, const InputRange& x)
{
    try
    {
        return static_cast<sal_Int32>(statgpu::addin::readRegressionRows(y.cells, x.cells, 0, 1).count);
    }
    catch (const css::lang::IllegalArgumentException&)
    {
        return -1;
    }
}

// The held-out rows the engine would refuse whatever the data, by its own
// rule (statgpu_bestsubset_split): a holdout must hold out a row and keep
// more rows to fit on than the smallest full model's coefficients (one
// predictor and the intercept); k-fold takes at most one fold a row. How
// many coefficients the full model has the engine decides on the rows kept
// (a constant or dependent column is dropped), so a holdout that keeps fewer
// rows than X has columns is the run's to refuse, with the counts.
void checkValidationRows(const Request& request)
{
    const std::string validation = request.values.count("validation") != 0 ? trimmed(request.values.at("validation"))
                                                                              : std::string();
    if (validation != "holdout" && validation != "kfold")
        return;
    const InputRange& y = request.ranges.at("y");
    const InputRange& x = request.ranges.at("x");
    const sal_Int32 rows = completeRows(y, x);
    if (rows < 0)
        return;
    const Field& field = *findField(*request.analysis, validation == "holdout" ? "holdout" : "folds");
    double chosen = 0.0;
    parseNumber(request.values.at(field.id), chosen);
    statgpu_bestsubset_params params;
    statgpu_bestsubset_params_init(&params);
    params.validation = validation == "holdout" ? STATGPU_SUBSET_HOLDOUT : STATGPU_SUBSET_KFOLD;
    params.holdout_fraction = chosen;
    params.fold_count = chosen >= 0.0 ? static_cast<std::size_t>(chosen) : 0;  // the field holds a whole number
    std::size_t held = 0, kept = 0;
    const bool valid = statgpu_bestsubset_split(&params, static_cast<std::size_t>(rows), &held, &kept) == STATGPU_OK;
    if (validation == "kfold")
    {
        if (!valid)
            throw FieldError(field.id, fieldName(field) + ": " + numberText(chosen) + " folds of "
                                           + std::to_string(rows) + " complete rows; at most one fold a row.");
        return;
    }
    const bool intercept = value(request, "intercept") == "1";
    const std::size_t coefficients = 1 + (intercept ? 1 : 0);
    if (!valid || kept <= coefficients)
        throw FieldError(field.id, fieldName(field) + ": " + numberText(chosen) + " of " + std::to_string(rows)
                                       + " complete rows holds out " + std::to_string(held)
                                       + "; at least one row must be held out, and more rows kept to fit than "
                                       + (intercept ? "the two coefficients of a predictor and the intercept."
                                                    : "the one coefficient of a predictor."));
}
} // namespace

bool overlaps(const css::table::CellRangeAddress& a, const css::table::CellRangeAddress& b)
{
    return a.Sheet == b.Sheet && a.StartRow <= b.EndRow && b.StartRow <= a.EndRow && a.StartColumn <= b.EndColumn
           && b.StartColumn <= a.EndColumn;
}

const InputRange* inputUnder(const Request& request, const css::table::CellRangeAddress& block)
{
    for (const auto& [id, input] : request.ranges)
        if (overlaps(input.whole, block))
            return &input;
    return nullptr;
}

Request readRequest(const Analysis& analysis, const Values& values,
                    const Reference<css::sheet::XSpreadsheetDocument>& document, sal_Int16 active_sheet)
{
    Request request;
    request.analysis = &analysis;
    request.values = values;
    const auto get = [&](const std::string& id) {
        const auto found = values.find(id);
        return found == values.end() ? std::string() : trimmed(found->second);
    };
    request.labels = get("labels") == "1";
    request.by_rows = get("grouped") == "rows";
    request.live = get("write") == "formulas";
    request.charts = get("charts") != "0";
    for (const Field& field : analysis.fields)
    {
        const std::string text = get(field.id);
        switch (field.kind)
        {
            case FieldKind::Range:
                request.ranges[field.id] = readRange(document, active_sheet, field, text, request.labels,
                                                     request.by_rows);
                break;
            case FieldKind::Whole:
            case FieldKind::Number:
                // The share held out and the folds count only with their
                // validation (the dialog greys them out otherwise).
                if ((field.id == "holdout" && get("validation") != "holdout")
                    || (field.id == "folds" && get("validation") != "kfold"))
                    break;
                if (!(field.may_be_empty && text.empty()))
                    request.values[field.id] = numberText(readNumberField(field, text));
                break;
            case FieldKind::Choice:
            {
                bool known = false;
                for (const std::string& choice : field.choices)
                    known = known || choice == text;
                if (!known)
                    throw FieldError(field.id, fieldName(field) + ": choose one of the list.");
                break;
            }
            case FieldKind::Text:
                if (field.id == "quantiles")
                    readProbabilities(field, text);
                else if (field.id == "k")
                    readComponentList(field, text);
                break;
            case FieldKind::Check:
                request.values[field.id] = text == "1" ? "1" : "0";
                break;
        }
    }
    // Ranges that must agree.
    if (request.ranges.count("y") != 0)
    {
        const InputRange& y = request.ranges.at("y");
        const InputRange& x = request.ranges.at("x");
        if (y.whole.EndColumn != y.whole.StartColumn)
            throw FieldError("y", "Y (response): select one column.");
        if (x.whole.EndRow - x.whole.StartRow != y.whole.EndRow - y.whole.StartRow)
            throw FieldError("x", "X (predictors): select as many rows as Y has.");
        if (overlaps(y.whole, x.whole))
            throw FieldError("x", "X (predictors): it holds Y's cells, and a response among its own predictors "
                                  "is fitted exactly by itself; select X without Y's column.");
        if (analysis.command == "bestsubset")
            checkValidationRows(request);
    }
    if (request.ranges.count("data") != 0 && !holdsNumbers(request.ranges.at("data")))
        throw FieldError("data", "Data: the range holds no numbers.");
    if (analysis.command == "median")
    {
        InputRange& data = request.ranges.at("data");
        const sal_Int32 groups = request.by_rows ? data.data.EndRow - data.data.StartRow + 1
                                                 : data.data.EndColumn - data.data.StartColumn + 1;
        if (groups > 1000)
            throw FieldError("data", "Data: at most 1000 groups (columns or rows).");
        for (sal_Int32 g = 0; g < groups; ++g)
        {
            css::table::CellRangeAddress group = data.data;
            if (request.by_rows)
                group.StartRow = group.EndRow = data.data.StartRow + g;
            else
                group.StartColumn = group.EndColumn = data.data.StartColumn + g;
            data.group_references.push_back(rangeReference(document, group, true));
        }
    }
    for (const std::string& table : tableNames(analysis))
        if (get("output_" + table) != "0")
            request.outputs.push_back(table);
    if (request.outputs.empty())
        throw FieldError("output_" + tableNames(analysis).front(), "Outputs: choose at least one table to write.");
    const std::string target = get("target");
    request.target = target == "cell" ? Target::Cell : target == "document" ? Target::NewDocument : Target::NewSheet;
    // What would stop the report being written, said before the run.
    if (request.target == Target::NewDocument && request.live)
        throw FieldError("write", "Results written as: live formulas read this document's cells, which a new "
                                  "document cannot; write values there, or the report into this document.");
    if (request.target != Target::NewDocument)
    {
        const Reference<css::frame::XStorable> storable(document, UNO_QUERY);
        if (storable.is() && storable->isReadonly())
            throw FieldError("target", "Results to: this document is read-only; choose a new document.");
        // A new sheet, and the sheet a report to a cell is first written to.
        const Reference<css::util::XProtectable> structure(document, UNO_QUERY);
        if (structure.is() && structure->isProtected())
            throw FieldError("target", "Results to: the document's structure is protected (no sheet can be "
                                       "added); choose a new document.");
    }
    if (request.target == Target::Cell)
    {
        const Field cell_field{ "target_cell", "Results to cell", FieldKind::Range, Page::Outputs, "", 0, 0, {}, false, "" };
        const css::table::CellRangeAddress cell = parseRange(document, active_sheet, cell_field, get("target_cell"));
        request.target_cell = css::table::CellAddress(cell.Sheet, cell.StartColumn, cell.StartRow);
        const Reference<css::container::XIndexAccess> sheets(document->getSheets(), UNO_QUERY_THROW);
        const Reference<css::util::XProtectable> sheet(sheets->getByIndex(cell.Sheet), UNO_QUERY);
        if (sheet.is() && sheet->isProtected())
            throw FieldError("target_cell", "Results to cell: that sheet is protected; choose a cell of another "
                                            "sheet, or a new sheet.");
        if (inputUnder(request, css::table::CellRangeAddress(cell.Sheet, cell.StartColumn, cell.StartRow,
                                                              cell.StartColumn, cell.StartRow)) != nullptr)
            throw FieldError("target_cell", "Results to cell: the cell lies inside the input range; the report "
                                            "would overwrite the data. Choose a cell outside it.");
    }
    return request;
}

// ---- Running -------------------------------------------------------------------------

Outcome runAnalysis(const Request& request, const Functions& functions, const std::function<bool(double)>& progress)
{
    Outcome outcome;
    outcome.settings = settingsOf(request);
    addin::ReportRun run;
    run.progress = progress;
    const std::string& command = request.analysis->command;
    if (request.ranges.count("x") != 0 && request.labels)
        run.variable_names = request.ranges.at("x").labels;
    else if (request.ranges.count("data") != 0 && request.labels)
        run.variable_names = request.ranges.at("data").labels;
    const auto start = std::chrono::steady_clock::now();
    {
        addin::ReportRunScope scope(run);
        if (command == "median")
            runOrderStatistics(request, functions, outcome);
        else if (command == "kmeans")
            runKmeans(request, functions, run, outcome);
        else if (command == "gmm")
            runGmm(request, functions, run, outcome);
        else if (command == "lts")
            runLts(request, functions, run, outcome);
        else if (command == "bestsubset")
            runBestSubset(request, functions, run, outcome);
        else if (command == "igmm")
            runIgmm(request, functions, run, outcome);
    }
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    outcome.backend = toUtf8(functions->gpuInfo());
    return outcome;
}

OUString rangeReference(const Reference<css::sheet::XSpreadsheetDocument>& document,
                        const css::table::CellRangeAddress& address, bool persistent)
{
    if (!persistent)
    {
        const auto converter = conversion(document, "com.sun.star.table.CellRangeAddressConversion", address.Sheet);
        converter->setPropertyValue("Address", Any(address));
        OUString text;
        converter->getPropertyValue("UserInterfaceRepresentation") >>= text;
        return text;
    }
    // Absolute, with the sheet, in Calc's own syntax: $'My data'.$A$2:$B$10.
    const Reference<css::container::XIndexAccess> sheets(document->getSheets(), UNO_QUERY_THROW);
    const std::string name =
        toUtf8(Reference<css::container::XNamed>(sheets->getByIndex(address.Sheet), UNO_QUERY_THROW)->getName());
    bool plain = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name)
        plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    std::string sheet = "$" + name;
    if (!plain)
    {
        sheet = "$'";
        for (char c : name)
            sheet += c == '\'' ? std::string("''") : std::string(1, c);
        sheet += "'";
    }
    const auto cell = [](sal_Int32 column, sal_Int32 row) {
        return "$" + columnLetters(column) + "$" + std::to_string(row + 1);
    };
    return fromUtf8(sheet + "." + cell(address.StartColumn, address.StartRow) + ":"
                    + cell(address.EndColumn, address.EndRow));
}

// ---- Text ------------------------------------------------------------------------------

std::string toUtf8(const OUString& text)
{
    const rtl::OString bytes = rtl::OUStringToOString(text, RTL_TEXTENCODING_UTF8);
    return std::string(bytes.getStr(), static_cast<std::size_t>(bytes.getLength()));
}

OUString fromUtf8(const std::string& text)
{
    return OUString(text.data(), static_cast<sal_Int32>(text.size()), RTL_TEXTENCODING_UTF8);
}

std::string numberText(double value)
{
    // std::to_chars and from_chars: the C locale's digits whatever the
    // process's locale (printf's %g writes "0,5" under a German one, which a
    // formula's array {0,5;0,25} reads otherwise).
    char text[64];
    if (value == std::floor(value) && std::fabs(value) < 1e15)
        return std::string(text, std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, 0).ptr);
    char* end = text;
    for (int digits = 1; digits <= 17; ++digits)
    {
        end = std::to_chars(text, text + sizeof text, value, std::chars_format::general, digits).ptr;
        double back = 0.0;
        std::from_chars(text, end, back);
        if (back == value)
            break;
    }
    return std::string(text, end);
}

std::string shownNumbers(const std::string& text)
{
    std::string shown = text;
    if (addin::officeDecimalSeparator() == u',')
        std::replace(shown.begin(), shown.end(), '.', ',');
    return shown;
}

std::string shownValue(const Field& field, const std::string& text)
{
    // Only fields of fractions: a list of k may be separated by commas.
    return field.kind == FieldKind::Number || field.id == "quantiles" ? shownNumbers(text) : text;
}
} // namespace statgpu::dialogs
