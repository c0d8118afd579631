// report.hxx: the report sheet an analysis dialog writes.
//
// A title, the date, the inputs and options, the backend that ran and the
// time taken; then every table the user chose, with the data's labels as
// headers, bold headers and fitted widths, as values or as the cell
// functions' array formulas; then the method's charts beside the tables
// (report_charts.cxx), their data in a block below the tables. Written into
// a new sheet named after the analysis (made unique), at a cell of the
// current sheet, or into a new document; the whole report is one undo step.
#pragma once

#include "analyses.hxx"

#include <com/sun/star/awt/Rectangle.hpp>
#include <com/sun/star/frame/XFrame.hpp>
#include <com/sun/star/sheet/XSpreadsheet.hpp>
#include <com/sun/star/sheet/XSpreadsheetDocument.hpp>
#include <com/sun/star/uno/XComponentContext.hpp>

#include <limits>

namespace statgpu::dialogs
{
// Writes the report of outcome; returns what it wrote to ("sheet 'K-means'").
OUString writeReport(const css::uno::Reference<css::uno::XComponentContext>& context,
                     const css::uno::Reference<css::frame::XFrame>& frame, const Request& request,
                     const Outcome& outcome);

// ---- For the charts (report_charts.cxx) ------------------------------------------

// A chart's data, written as a block of columns, and its series, each drawn
// from two of the block's columns.
struct PlotSeries
{
    std::string name;
    std::size_t x = 0, y = 0;  // columns of the block
    bool line = false;         // a line without markers, or markers without a line
    sal_Int32 colour = 0;
    double symbol_mm = 1.6;
};

struct Plot
{
    std::string title, x_title, y_title;
    double x_step = 0.0;  // the x axis's step, or 0: the chart's own
    double x_min = std::numeric_limits<double>::quiet_NaN(), x_max = std::numeric_limits<double>::quiet_NaN();
    std::vector<std::string> headers;          // a header per column
    std::vector<std::vector<double>> columns;  // NaN: an empty cell
    std::vector<PlotSeries> series;
};

// The plots of an analysis: what a user would rather look at than read.
std::vector<Plot> plotsOf(const Request& request, const Outcome& outcome);

// Adds the chart of plot at rectangle (1/100 mm) of sheet, its series read
// from the block written at block (its header row first).
void addChart(const css::uno::Reference<css::uno::XComponentContext>& context,
              const css::uno::Reference<css::sheet::XSpreadsheet>& sheet,
              const css::uno::Reference<css::sheet::XSpreadsheetDocument>& document, const std::string& name, const css::awt::Rectangle& rectangle, const Plot& plot,
              const css::table::CellRangeAddress& block);
} // namespace statgpu::dialogs
