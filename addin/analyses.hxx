// analyses.hxx: the analyses of the menu Data > Statistics > GPU Statistics
// (statgpu), one per method.
//
// Each analysis is a row of one table (analyses()): the fields of its dialog
// with the cell function's defaults, the Calc function it calls and the
// engine's tables it can write. readRequest() turns what a dialog holds into
// a validated request, naming the field at fault; runAnalysis() calls the
// method's own Calc function once (report_hooks.hxx keeps every table of the
// result), so a report holds exactly what the cell functions give on the same
// data. The dialog is analysis_dialog.cxx, the report sheet report.cxx.
#pragma once

#include "report_hooks.hxx"

#include <com/sun/star/sheet/XSpreadsheet.hpp>
#include <com/sun/star/sheet/XSpreadsheetDocument.hpp>
#include <com/sun/star/table/CellAddress.hpp>
#include <com/sun/star/table/CellRangeAddress.hpp>
#include <org/statgpu/XStatGpu.hpp>

#include <rtl/string.hxx>
#include <rtl/ustring.hxx>

#include <functional>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace statgpu::dialogs
{
using rtl::OUString;
using Cells = css::uno::Sequence<css::uno::Sequence<css::uno::Any>>;

enum class FieldKind
{
    Range,   // a cell range of the document: "A1:B20", "$Sheet1.$A$1:$B$20"
    Whole,   // a whole number in [low, high]
    Number,  // a number in [low, high]
    Text,    // free text the analysis reads itself (a list of k, of p)
    Choice,  // one of choices (a drop-down list)
    Check    // a check box: "1" or "0"
};

// The dialog's tabs, as XLSTAT's: the data and the main parameter, the
// method's options, and what to write where.
enum class Page
{
    General = 1,
    Options = 2,
    Outputs = 3
};

struct Field
{
    std::string id;     // the control's name; the key of Values
    std::string label;  // what the dialog shows before it
    FieldKind kind;
    Page page;
    std::string initial;                // the cell function's default, as text
    double low = 0.0, high = 0.0;       // Whole and Number
    std::vector<std::string> choices;   // Choice: the words the function takes
    bool may_be_empty = false;          // Whole, Number, Text: empty means the function's default
    std::string help;                   // the control's tooltip
};

struct Analysis
{
    std::string command;     // the menu URL's path: org.statgpu.dialog:kmeans
    std::string title;       // "K-means clustering": the menu entry, the dialog, the report
    std::string sheet_name;  // the report sheet's name (made unique)
    std::string function;    // the Calc function: "KMEANS"
    std::string method;      // the engine's tables (statgpu_method_table_names); empty: order statistics
    std::vector<Field> fields;
};

// The menu's analyses, in its order.
const std::vector<Analysis>& analyses();
// The analysis of command, or nullptr.
const Analysis* findAnalysis(const std::string& command);
// The tables an analysis can write: the engine's names, or "statistics".
std::vector<std::string> tableNames(const Analysis& analysis);
// "Cluster centroids" for ("kmeans", "centroids").
std::string tableTitle(const Analysis& analysis, const std::string& table);

// A dialog's contents: text per field id ("1"/"0" for a check box, the word
// for a choice), and the common fields: labels, grouped ("columns"/"rows"),
// output_<table> ("1"/"0"), charts, target ("sheet", "cell", "document"),
// target_cell, write ("values", "formulas").
using Values = std::map<std::string, std::string>;

// Invalid input, caught before anything runs: the field and a message that names it.
struct FieldError : std::runtime_error
{
    FieldError(std::string field_id, const std::string& message)
        : std::runtime_error(message)
        , field(std::move(field_id))
    {
    }
    std::string field;
};

// An input range as validated.
struct InputRange
{
    css::table::CellRangeAddress whole;  // as given, labels included
    css::table::CellRangeAddress data;   // without the labels
    OUString given;                      // as the user wrote it
    OUString reference;                  // the data, absolute, as a formula refers to it
    OUString whole_reference;            // the range as given, absolute
    css::uno::Sequence<css::uno::Any> label_cells;  // the label row's cells (labels in the first row)
    std::vector<std::string> labels;     // a name per column (per row when grouped by rows)
    std::vector<OUString> group_references;  // order statistics: each group's reference
    Cells cells;                         // the data's cells, as Calc hands them to a function
};

enum class Target
{
    NewSheet,
    Cell,
    NewDocument
};

struct Request
{
    const Analysis* analysis = nullptr;
    Values values;
    std::map<std::string, InputRange> ranges;  // by field id
    bool labels = false;
    bool by_rows = false;
    bool live = false;    // write array formulas instead of values
    bool charts = true;
    std::vector<std::string> outputs;  // the tables to write, in the analysis's order
    Target target = Target::NewSheet;
    css::table::CellAddress target_cell{};
    // Results to a cell over cells that hold something: written only where
    // the user has been asked and said yes (OK again) for this very block.
    bool replace_confirmed = false;
    css::table::CellRangeAddress replace_block{};
};

// A report to a cell whose block holds data: the question, put in the
// dialog's message line, and the block it is about.
struct ReplaceQuestion : FieldError
{
    ReplaceQuestion(const std::string& message, const css::table::CellRangeAddress& about)
        : FieldError("target_cell", message)
        , block(about)
    {
    }
    css::table::CellRangeAddress block;
};

// Whether two ranges share a cell.
bool overlaps(const css::table::CellRangeAddress& a, const css::table::CellRangeAddress& b);
// The input range of request (as given, labels included) that block would
// write over, or nullptr: a report's cells, or the one cell it starts at.
const InputRange* inputUnder(const Request& request, const css::table::CellRangeAddress& block);

// Reads and checks every field (ranges through the document's own address
// syntax, relative to sheet active_sheet); throws FieldError. What the
// function would refuse after the run has started is refused here: Y inside
// X, a holdout or folds the complete rows cannot give, a Data range without
// numbers.
Request readRequest(const Analysis& analysis, const Values& values,
                    const css::uno::Reference<css::sheet::XSpreadsheetDocument>& document,
                    sal_Int16 active_sheet);

// One table of a report: what the function returned, and the formula that
// gives it live (an array formula over the table's cells), or one formula
// per cell (order statistics).
struct ReportTable
{
    addin::CollectedTable table;
    OUString array_formula;
    std::vector<std::vector<OUString>> cell_formulas;
    // The rows are the data's rows (a per-row table): labelled by the sheet's row numbers,
    // from first_row (0-based).
    bool per_row = false;
    sal_Int32 first_row = 0;
};

struct Outcome
{
    std::vector<ReportTable> tables;                              // every table, in order
    std::vector<std::pair<std::string, std::string>> settings;  // the options, as the report lists them
    double seconds = 0.0;
    std::string backend;
    // Order statistics: each group's quantiles at p = 0, 0.01, ..., 1, for the chart.
    std::vector<std::vector<double>> quantile_curves;
};

// Runs the analysis through the add-in's Calc function (one call; order
// statistics one call per statistic and group). progress(fraction) is
// called from the engine and returns true to stop; a stop or a failure
// throws (css::uno::Exception from the function), and nothing is kept.
Outcome runAnalysis(const Request& request, const css::uno::Reference<org::statgpu::XStatGpu>& functions,
                    const std::function<bool(double)>& progress);

// Helpers shared by the dialog and the report.
// address as a formula refers to it ($Sheet1.$A$2:$B$10, persistent) or as
// the document shows it to its user (its own reference syntax).
OUString rangeReference(const css::uno::Reference<css::sheet::XSpreadsheetDocument>& document,
                        const css::table::CellRangeAddress& address, bool persistent);
// A sequence of the items given (this SDK's Sequence has no initializer-list constructor).
template <typename T> css::uno::Sequence<T> sequenceOf(std::initializer_list<T> items)
{
    return css::uno::Sequence<T>(items.begin(), static_cast<sal_Int32>(items.size()));
}
std::string toUtf8(const OUString& text);
OUString fromUtf8(const std::string& text);
// A number as the report and formulas write it: shortest round-trip, '.' as the point.
std::string numberText(double value);
// Numbers written by numberText as the office's locale shows them to its
// user ("0,05; 0,25" where the decimal separator is a comma): for what a
// dialog or a report shows, never for a formula.
std::string shownNumbers(const std::string& text);
// A field's value as the dialog and the report's settings show it:
// shownNumbers for the fields of fractions (Number, the quantiles).
std::string shownValue(const Field& field, const std::string& text);
} // namespace statgpu::dialogs
