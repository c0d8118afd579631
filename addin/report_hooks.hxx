// report_hooks.hxx: how an analysis dialog runs the add-in's own Calc
// functions (dialogs.cxx), so that a report holds exactly what the cell
// functions give on the same data.
//
// While a ReportRun is installed on a thread (ReportRunScope), a Calc
// function called on that thread still returns the one table its Output
// names, and also keeps every table of its result, with titles and headers,
// in the run; the data's labels name the variables where the function has no
// names of its own; and the engine's progress goes to the run too, which may
// ask the engine to stop. Without a run (a cell in a sheet) nothing changes.
#pragma once

#include <com/sun/star/uno/Any.hxx>

#include <functional>
#include <string>
#include <vector>

namespace statgpu::addin
{
// One table of a result: Calc's array as the function returns it, and what
// a report writes around it.
struct CollectedTable
{
    std::string name;                         // the Output word: "centroids"
    std::string title;                        // "Cluster centroids"
    std::string row_label_header;             // heads the row labels, or empty
    std::vector<std::string> row_labels;      // per row, or empty (rows numbered)
    std::vector<std::string> column_headers;  // per column
    css::uno::Any cells;                      // sequence< sequence< any > >
};

struct ReportRun
{
    // The data's labels, used as the variables' names by functions that have none.
    std::vector<std::string> variable_names;
    // Every table of the last result made on this thread.
    std::vector<CollectedTable> tables;
    // Called with the fraction done at each engine callback; returns true to stop.
    std::function<bool(double)> progress;
};

// The run installed on this thread, or nullptr.
ReportRun* currentReportRun();

class ReportRunScope
{
public:
    explicit ReportRunScope(ReportRun& run);
    ~ReportRunScope();
    ReportRunScope(const ReportRunScope&) = delete;
    ReportRunScope& operator=(const ReportRunScope&) = delete;

private:
    ReportRun* previous_;
};
} // namespace statgpu::addin
