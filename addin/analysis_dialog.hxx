// analysis_dialog.hxx: the dialog of one analysis, built in code from its
// row of the analyses' table (analyses.hxx).
//
// Three tabs as XLSTAT's: General (the input ranges, each with a button that
// shrinks the dialog to pick the range in the sheet; "first row has labels";
// the main parameter), Options (the method's options with the cell
// function's defaults, and what happens to missing data) and Outputs (the
// tables to write, charts, results to a new sheet, a cell or a new document,
// live formulas or values). OK checks every field first and names the one at
// fault in the dialog's message line; then the analysis runs on the office's
// main thread, its progress in the dialog and the status bar, Cancel (or Esc,
// or the command org.statgpu.dialog:stop) stopping it with nothing written;
// then the report is written as one undo step and the dialog closes. A
// close of the document or its window during the run is refused, stops the
// run, and closes them once it has stopped (addin::CloseGuard).
//
// The dialog is not modal: Calc stays usable while it is open, and a test
// drives it through the UNO API (the control of each field is named by its
// id; see tests/libreoffice/calc_dialogs.py).
#pragma once

#include "analyses.hxx"
#include "progress.hxx"

#include <com/sun/star/awt/XActionListener.hpp>
#include <com/sun/star/awt/XCallback.hpp>
#include <com/sun/star/awt/XControl.hpp>
#include <com/sun/star/awt/XItemListener.hpp>
#include <com/sun/star/awt/XTopWindowListener.hpp>
#include <com/sun/star/beans/XPropertySet.hpp>
#include <com/sun/star/container/XNameContainer.hpp>
#include <com/sun/star/frame/XDispatchResultListener.hpp>
#include <com/sun/star/frame/XFrame.hpp>
#include <com/sun/star/sheet/XRangeSelectionListener.hpp>
#include <com/sun/star/uno/XComponentContext.hpp>
#include <cppuhelper/implbase5.hxx>

#include <atomic>
#include <map>
#include <optional>

namespace statgpu::dialogs
{
// Set to stop the analysis that runs (the dialog's Cancel while it runs, the
// command org.statgpu.dialog:stop); cleared when an analysis starts.
extern std::atomic<bool> g_stop_requested;

class AnalysisDialog final
    : public cppu::WeakImplHelper5<css::awt::XActionListener, css::awt::XItemListener,
                                  css::sheet::XRangeSelectionListener, css::awt::XTopWindowListener,
                                  css::awt::XCallback>
{
public:
    // Opens the dialog of analysis over frame's spreadsheet, its ranges filled
    // from the selection, and returns its control (a css::awt::XDialog).
    static css::uno::Reference<css::awt::XControl>
    open(const css::uno::Reference<css::uno::XComponentContext>& context,
         const css::uno::Reference<css::frame::XFrame>& frame, const Analysis& analysis);

    // XActionListener: the buttons (tabs, range pickers, OK, Cancel).
    void SAL_CALL actionPerformed(const css::awt::ActionEvent& event) override;
    // XItemListener: "Results to" enables the cell field.
    void SAL_CALL itemStateChanged(const css::awt::ItemEvent& event) override;
    // XRangeSelectionListener: the range picked in the sheet.
    void SAL_CALL done(const css::sheet::RangeSelectionEvent& event) override;
    void SAL_CALL aborted(const css::sheet::RangeSelectionEvent& event) override;
    // XTopWindowListener: closing the window is Cancel.
    void SAL_CALL windowClosing(const css::lang::EventObject& event) override;
    void SAL_CALL windowOpened(const css::lang::EventObject&) override {}
    void SAL_CALL windowClosed(const css::lang::EventObject&) override {}
    void SAL_CALL windowMinimized(const css::lang::EventObject&) override {}
    void SAL_CALL windowNormalized(const css::lang::EventObject&) override {}
    void SAL_CALL windowActivated(const css::lang::EventObject&) override {}
    void SAL_CALL windowDeactivated(const css::lang::EventObject&) override {}
    // XCallback: the run, posted by OK to the office's main thread.
    void SAL_CALL notify(const css::uno::Any& data) override;
    // XEventListener
    void SAL_CALL disposing(const css::lang::EventObject& source) override;

private:
    AnalysisDialog(const css::uno::Reference<css::uno::XComponentContext>& context,
                   const css::uno::Reference<css::frame::XFrame>& frame, const Analysis& analysis);

    void build();
    void fillFromSelection();
    void showPage(sal_Int32 page);
    void enableDependentFields();
    void pickRange(const std::string& field);
    void run();
    void runWatched();
    void close();
    void showMessage(const std::string& text, const std::string& field = std::string());
    bool progress(double fraction);
    bool stopAsked() const;  // Stop, the stop command, or a close of the document

    Values values() const;
    std::string text(const std::string& id) const;
    void setText(const std::string& id, const OUString& text);
    css::uno::Reference<css::beans::XPropertySet> model(const std::string& id) const;

    css::uno::Reference<css::uno::XComponentContext> context_;
    css::uno::Reference<css::frame::XFrame> frame_;
    const Analysis& analysis_;
    css::uno::Reference<css::awt::XControl> dialog_;
    css::uno::Reference<css::container::XNameContainer> models_;
    std::string picking_;     // the field whose range is being picked
    bool running_ = false;
    rtl::Reference<addin::CloseGuard> close_guard_;  // while a run goes on
    bool closed_ = false;
    double last_progress_ = -1.0;
    // A run whose report was held back by the question whether to replace
    // the data in its block: OK again with the same fields and the same
    // input cells writes it without running again.
    struct Pending
    {
        Values values;
        std::map<std::string, css::uno::Sequence<css::uno::Sequence<css::uno::Any>>> cells;
        Outcome outcome;
        css::table::CellRangeAddress block;
    };
    std::optional<Pending> pending_;
};
} // namespace statgpu::dialogs
