// analysis_dialog.cxx: one analysis's dialog (see analysis_dialog.hxx).
#include "analysis_dialog.hxx"

#include "progress.hxx"
#include "report.hxx"

#include <com/sun/star/awt/AsyncCallback.hpp>
#include <com/sun/star/awt/PosSize.hpp>
#include <com/sun/star/awt/Toolkit.hpp>
#include <com/sun/star/awt/XButton.hpp>
#include <com/sun/star/awt/XControlContainer.hpp>
#include <com/sun/star/awt/XControlModel.hpp>
#include <com/sun/star/awt/XListBox.hpp>
#include <com/sun/star/awt/XReschedule.hpp>
#include <com/sun/star/awt/XTopWindow.hpp>
#include <com/sun/star/awt/XWindow.hpp>
#include <com/sun/star/awt/XWindowPeer.hpp>
#include <com/sun/star/beans/PropertyValue.hpp>
#include <com/sun/star/beans/XPropertySet.hpp>
#include <com/sun/star/frame/XController.hpp>
#include <com/sun/star/frame/XModel.hpp>
#include <com/sun/star/lang/XComponent.hpp>
#include <com/sun/star/lang/XMultiServiceFactory.hpp>
#include <com/sun/star/sheet/XCellRangeAddressable.hpp>
#include <com/sun/star/sheet/XCellRangeData.hpp>
#include <com/sun/star/sheet/XRangeSelection.hpp>
#include <com/sun/star/sheet/XSheetCellCursor.hpp>
#include <com/sun/star/sheet/XSheetCellRange.hpp>
#include <com/sun/star/sheet/XSpreadsheet.hpp>
#include <com/sun/star/sheet/XSpreadsheetView.hpp>
#include <com/sun/star/sheet/XSpreadsheetDocument.hpp>
#include <com/sun/star/container/XIndexAccess.hpp>
#include <com/sun/star/table/XCellRange.hpp>
#include <rtl/ref.hxx>

#include <chrono>
#include <vector>

namespace statgpu::dialogs
{
using css::uno::Any;
using css::uno::Exception;
using css::uno::Reference;
using css::uno::Sequence;
using css::uno::UNO_QUERY;
using css::uno::UNO_QUERY_THROW;

std::atomic<bool> g_stop_requested{ false };

namespace
{
// The dialogs open now: a dialog lives until it is closed.
std::vector<rtl::Reference<AnalysisDialog>>& openDialogs()
{
    static std::vector<rtl::Reference<AnalysisDialog>> dialogs;
    return dialogs;
}

// Layout, in the dialog's own units (application font units).
constexpr sal_Int32 kWidth = 276;
constexpr sal_Int32 kHeight = 236;
constexpr sal_Int32 kLabelX = 8, kLabelWidth = 112;
constexpr sal_Int32 kFieldX = 122, kFieldWidth = 146;
constexpr sal_Int32 kPickerWidth = 18;
constexpr sal_Int32 kRowHeight = 17;
constexpr sal_Int32 kPageTop = 26;

const std::pair<const char*, const char*> kTargets[] = { { "sheet", "A new sheet" },
                                                         { "cell", "A cell of this sheet" },
                                                         { "document", "A new document" } };
const std::pair<const char*, const char*> kWrites[] = { { "values", "Values" },
                                                        { "formulas", "Live formulas (array formulas)" } };

// The words shown in a choice, and the value each stands for.
std::vector<std::pair<std::string, std::string>> choiceItems(const std::string& id,
                                                             const std::vector<std::string>& words)
{
    std::vector<std::pair<std::string, std::string>> items;
    if (id == "target")
        for (const auto& [word, shown] : kTargets)
            items.emplace_back(word, shown);
    else if (id == "write")
        for (const auto& [word, shown] : kWrites)
            items.emplace_back(word, shown);
    else
        for (const std::string& word : words)
            items.emplace_back(word, word);
    return items;
}

class ModelBuilder
{
public:
    explicit ModelBuilder(const Reference<css::container::XNameContainer>& models)
        : models_(models)
        , factory_(models, UNO_QUERY_THROW)
    {
    }

    Reference<css::beans::XPropertySet> add(const char* service, const std::string& name, sal_Int32 page,
                                            sal_Int32 x, sal_Int32 y, sal_Int32 width, sal_Int32 height)
    {
        Reference<css::beans::XPropertySet> model(factory_->createInstance(OUString::createFromAscii(service)),
                                                  UNO_QUERY_THROW);
        model->setPropertyValue("PositionX", Any(x));
        model->setPropertyValue("PositionY", Any(y));
        model->setPropertyValue("Width", Any(width));
        model->setPropertyValue("Height", Any(height));
        model->setPropertyValue("Step", Any(page));
        models_->insertByName(fromUtf8(name), Any(model));
        return model;
    }

    void label(const std::string& name, const std::string& text, sal_Int32 page, sal_Int32 x, sal_Int32 y,
               sal_Int32 width)
    {
        add("com.sun.star.awt.UnoControlFixedTextModel", name, page, x, y + 2, width, 12)
            ->setPropertyValue("Label", Any(fromUtf8(text)));
    }

    Reference<css::beans::XPropertySet> button(const std::string& name, const std::string& text, sal_Int32 page,
                                               sal_Int32 x, sal_Int32 y, sal_Int32 width)
    {
        auto model = add("com.sun.star.awt.UnoControlButtonModel", name, page, x, y, width, 14);
        model->setPropertyValue("Label", Any(fromUtf8(text)));
        return model;
    }

    void edit(const std::string& name, const std::string& text, const std::string& help, sal_Int32 page,
              sal_Int32 x, sal_Int32 y, sal_Int32 width)
    {
        auto model = add("com.sun.star.awt.UnoControlEditModel", name, page, x, y, width, 14);
        model->setPropertyValue("Text", Any(fromUtf8(text)));
        model->setPropertyValue("HelpText", Any(fromUtf8(help)));
    }

    void check(const std::string& name, const std::string& text, bool on, const std::string& help, sal_Int32 page,
               sal_Int32 x, sal_Int32 y, sal_Int32 width)
    {
        auto model = add("com.sun.star.awt.UnoControlCheckBoxModel", name, page, x, y, width, 14);
        model->setPropertyValue("Label", Any(fromUtf8(text)));
        model->setPropertyValue("State", Any(static_cast<sal_Int16>(on ? 1 : 0)));
        model->setPropertyValue("HelpText", Any(fromUtf8(help)));
    }

    void list(const std::string& name, const std::vector<std::pair<std::string, std::string>>& items,
              const std::string& selected, const std::string& help, sal_Int32 page, sal_Int32 x, sal_Int32 y,
              sal_Int32 width)
    {
        auto model = add("com.sun.star.awt.UnoControlListBoxModel", name, page, x, y, width, 14);
        Sequence<OUString> shown(static_cast<sal_Int32>(items.size()));
        sal_Int16 chosen = 0;
        for (std::size_t i = 0; i < items.size(); ++i)
        {
            shown.getArray()[i] = fromUtf8(items[i].second);
            if (items[i].first == selected)
                chosen = static_cast<sal_Int16>(i);
        }
        model->setPropertyValue("Dropdown", Any(true));
        model->setPropertyValue("StringItemList", Any(shown));
        model->setPropertyValue("SelectedItems", Any(sequenceOf<sal_Int16>({ chosen })));
        model->setPropertyValue("HelpText", Any(fromUtf8(help)));
    }

private:
    Reference<css::container::XNameContainer> models_;
    Reference<css::lang::XMultiServiceFactory> factory_;
};

Reference<css::sheet::XSpreadsheetDocument> documentOf(const Reference<css::frame::XFrame>& frame)
{
    return Reference<css::sheet::XSpreadsheetDocument>(frame->getController()->getModel(), UNO_QUERY_THROW);
}

sal_Int16 activeSheet(const Reference<css::frame::XFrame>& frame)
{
    const Reference<css::sheet::XSpreadsheetView> view(frame->getController(), UNO_QUERY_THROW);
    const Reference<css::sheet::XCellRangeAddressable> sheet(view->getActiveSheet(), UNO_QUERY_THROW);
    return sheet->getRangeAddress().Sheet;
}

} // namespace

AnalysisDialog::AnalysisDialog(const Reference<css::uno::XComponentContext>& context,
                               const Reference<css::frame::XFrame>& frame, const Analysis& analysis)
    : context_(context)
    , frame_(frame)
    , analysis_(analysis)
{
}

Reference<css::awt::XControl> AnalysisDialog::open(const Reference<css::uno::XComponentContext>& context,
                                                   const Reference<css::frame::XFrame>& frame,
                                                   const Analysis& analysis)
{
    rtl::Reference<AnalysisDialog> dialog(new AnalysisDialog(context, frame, analysis));
    dialog->build();
    try
    {
        dialog->fillFromSelection();
    }
    catch (const Exception&)
    {
        // A selection that gives no range (a chart, a drawing): the fields stay empty.
    }
    openDialogs().push_back(dialog);
    Reference<css::awt::XWindow>(dialog->dialog_, UNO_QUERY_THROW)->setVisible(true);
    return dialog->dialog_;
}

void AnalysisDialog::build()
{
    const Reference<css::lang::XMultiComponentFactory> services = context_->getServiceManager();
    models_.set(services->createInstanceWithContext("com.sun.star.awt.UnoControlDialogModel", context_),
                UNO_QUERY_THROW);
    const Reference<css::beans::XPropertySet> dialog_model(models_, UNO_QUERY_THROW);
    dialog_model->setPropertyValue("Title", Any(fromUtf8(analysis_.title + " (statgpu)")));
    dialog_model->setPropertyValue("Width", Any(kWidth));
    dialog_model->setPropertyValue("Height", Any(kHeight));
    dialog_model->setPropertyValue("Step", Any(static_cast<sal_Int32>(Page::General)));
    dialog_model->setPropertyValue("Moveable", Any(true));
    dialog_model->setPropertyValue("Closeable", Any(true));

    ModelBuilder add(models_);
    // The tabs.
    const char* tabs[] = { "General", "Options", "Outputs" };
    for (sal_Int32 page = 1; page <= 3; ++page)
    {
        auto tab = add.button("page" + std::to_string(page), tabs[page - 1], 0, 6 + (page - 1) * 64, 4, 62);
        tab->setPropertyValue("Toggle", Any(true));
        tab->setPropertyValue("State", Any(static_cast<sal_Int16>(page == 1 ? 1 : 0)));
    }
    add.add("com.sun.star.awt.UnoControlFixedLineModel", "tabline", 0, 4, 19, kWidth - 8, 4);

    sal_Int32 row_of_page[4] = { 0, 0, 0, 0 };
    auto next_y = [&](Page page) { return kPageTop + kRowHeight * row_of_page[static_cast<int>(page)]++; };
    bool labels_added = false;
    for (const Field& field : analysis_.fields)
    {
        if (field.kind != FieldKind::Range && field.page == Page::General && !labels_added)
        {
            add.check("labels", "First row has labels", false,
                      "The first row (first column when grouped by rows) names the variables.",
                      static_cast<sal_Int32>(Page::General), kLabelX, next_y(Page::General), 200);
            labels_added = true;
        }
        const sal_Int32 page = static_cast<sal_Int32>(field.page);
        const sal_Int32 y = next_y(field.page);
        switch (field.kind)
        {
            case FieldKind::Range:
                add.label("label_" + field.id, field.label, page, kLabelX, y, kLabelWidth);
                add.edit(field.id, "", field.help, page, kFieldX, y, kFieldWidth - kPickerWidth - 2);
                add.button("pick_" + field.id, "...", page, kFieldX + kFieldWidth - kPickerWidth, y, kPickerWidth)
                    ->setPropertyValue("HelpText", Any(OUString("Shrink the dialog and select the range in the sheet")));
                break;
            case FieldKind::Check:
                add.check(field.id, field.label, field.initial == "1", field.help, page, kLabelX, y, 200);
                break;
            case FieldKind::Choice:
                add.label("label_" + field.id, field.label, page, kLabelX, y, kLabelWidth);
                add.list(field.id, choiceItems(field.id, field.choices), field.initial, field.help, page, kFieldX,
                         y, kFieldWidth);
                break;
            default:
                add.label("label_" + field.id, field.label, page, kLabelX, y, kLabelWidth);
                add.edit(field.id, shownValue(field, field.initial), field.help, page, kFieldX, y, kFieldWidth);
                break;
        }
    }
    if (!labels_added)
        add.check("labels", "First row has labels", false, "The first row names the variables.",
                  static_cast<sal_Int32>(Page::General), kLabelX, next_y(Page::General), 200);
    // Missing data, on Options: what the cell functions do.
    {
        const sal_Int32 y = next_y(Page::Options) + 4;
        auto note = add.add("com.sun.star.awt.UnoControlFixedTextModel", "missing_note",
                            static_cast<sal_Int32>(Page::Options), kLabelX, y, kWidth - 16, 34);
        note->setPropertyValue("MultiLine", Any(true));
        const char* missing =
            analysis_.method.empty()    ? "Missing data: empty cells and text are skipped, as MEDIAN skips them."
            : analysis_.method == "igmm" ? "Missing data: empty cells and text are skipped in each column (data set), "
                                           "so the columns may differ in length."
                                         : "Missing data: a row with an empty or text cell is left out, as the cell "
                                           "function leaves it out; its per-row results stay empty (COUNT and SUM "
                                           "ignore them).";
        note->setPropertyValue("Label", Any(OUString::createFromAscii(missing)));
    }
    // Outputs.
    const sal_Int32 outputs = static_cast<sal_Int32>(Page::Outputs);
    add.label("label_tables", "Tables to write:", outputs, kLabelX, next_y(Page::Outputs), 200);
    const std::vector<std::string> tables = tableNames(analysis_);
    for (std::size_t t = 0; t < tables.size(); ++t)
    {
        const sal_Int32 column = static_cast<sal_Int32>(t % 2);
        const sal_Int32 y = column == 0 ? next_y(Page::Outputs) : kPageTop + kRowHeight * (row_of_page[3] - 1);
        add.check("output_" + tables[t], tableTitle(analysis_, tables[t]), true, "Output \"" + tables[t] + "\"",
                  outputs, kLabelX + 8 + column * 130, y, 126);
    }
    add.check("charts", "Charts", true, "The method's charts beside the tables.", outputs, kLabelX,
              next_y(Page::Outputs), 200);
    sal_Int32 y = next_y(Page::Outputs);
    add.label("label_target", "Results to:", outputs, kLabelX, y, kLabelWidth);
    add.list("target", choiceItems("target", {}), "sheet", "Where the report goes.", outputs, kFieldX, y, kFieldWidth);
    y = next_y(Page::Outputs);
    add.label("label_target_cell", "Cell:", outputs, kLabelX, y, kLabelWidth);
    add.edit("target_cell", "", "The top left cell of the report, when results go to a cell of this sheet.", outputs,
             kFieldX, y, kFieldWidth - kPickerWidth - 2);
    add.button("pick_target_cell", "...", outputs, kFieldX + kFieldWidth - kPickerWidth, y, kPickerWidth);
    y = next_y(Page::Outputs);
    add.label("label_write", "Write:", outputs, kLabelX, y, kLabelWidth);
    add.list("write", choiceItems("write", {}), "values",
             "Values, or array formulas of the cell functions that follow the data.", outputs, kFieldX, y,
             kFieldWidth);

    // Every page: the message line, the progress and the buttons.
    auto message = add.add("com.sun.star.awt.UnoControlFixedTextModel", "message", 0, 8, 178, kWidth - 16, 24);
    message->setPropertyValue("MultiLine", Any(true));
    message->setPropertyValue("TextColor", Any(static_cast<sal_Int32>(0xB00000)));
    auto bar = add.add("com.sun.star.awt.UnoControlProgressBarModel", "progress", 0, 8, 204, kWidth - 16, 8);
    bar->setPropertyValue("ProgressValueMin", Any(static_cast<sal_Int32>(0)));
    bar->setPropertyValue("ProgressValueMax", Any(static_cast<sal_Int32>(100)));
    add.button("ok", "OK", 0, kWidth - 124, 216, 56)->setPropertyValue("DefaultButton", Any(true));
    add.button("cancel", "Cancel", 0, kWidth - 64, 216, 56);

    dialog_.set(services->createInstanceWithContext("com.sun.star.awt.UnoControlDialog", context_), UNO_QUERY_THROW);
    dialog_->setModel(Reference<css::awt::XControlModel>(models_, UNO_QUERY_THROW));
    const Reference<css::awt::XToolkit> toolkit(css::awt::Toolkit::create(context_), UNO_QUERY_THROW);
    const Reference<css::awt::XWindowPeer> parent(frame_->getContainerWindow(), UNO_QUERY);
    dialog_->createPeer(toolkit, parent);

    const Reference<css::awt::XControlContainer> controls(dialog_, UNO_QUERY_THROW);
    const Reference<css::awt::XActionListener> self(this);
    for (const OUString& name : models_->getElementNames())
    {
        const Reference<css::awt::XButton> button(controls->getControl(name), UNO_QUERY);
        if (button.is())
        {
            button->setActionCommand(name);
            button->addActionListener(self);
        }
    }
    Reference<css::awt::XListBox>(controls->getControl("target"), UNO_QUERY_THROW)->addItemListener(this);
    if (const Reference<css::awt::XListBox> validation(controls->getControl("validation"), UNO_QUERY); validation.is())
        validation->addItemListener(this);
    enableDependentFields();
    model("progress")->setPropertyValue("EnableVisible", Any(false));
    Reference<css::awt::XTopWindow>(dialog_->getPeer(), UNO_QUERY_THROW)->addTopWindowListener(this);
    // Centred on the document's window, as the office's own dialogs open.
    const Reference<css::awt::XWindow> window(dialog_, UNO_QUERY_THROW);
    const css::awt::Rectangle outer = frame_->getContainerWindow()->getPosSize();
    const css::awt::Rectangle own = window->getPosSize();
    window->setPosSize(std::max<sal_Int32>(0, (outer.Width - own.Width) / 2),
                       std::max<sal_Int32>(0, (outer.Height - own.Height) / 2), 0, 0, css::awt::PosSize::POS);
}

// Fields that only one choice reads are enabled with it: the held-out share
// with holdout, the folds with k-fold, the cell with results to a cell.
void AnalysisDialog::enableDependentFields()
{
    const Values read = values();
    const auto enable = [&](const char* id, bool on) {
        if (const auto control = model(id); control.is())
            control->setPropertyValue("Enabled", Any(on));
    };
    const auto validation = read.find("validation");
    if (validation != read.end())
    {
        enable("holdout", validation->second == "holdout");
        enable("folds", validation->second == "kfold");
    }
    const bool cell = read.count("target") != 0 && read.at("target") == "cell";
    enable("target_cell", cell);
    enable("pick_target_cell", cell);
}

// The ranges from the selection, as Calc's own statistics dialogs take it: a
// single cell stands for the data around it; Y and X split a selection of
// several columns into its first and the rest; a first row of text is labels.
void AnalysisDialog::fillFromSelection()
{
    const Reference<css::sheet::XSpreadsheetDocument> document = documentOf(frame_);
    const Reference<css::sheet::XCellRangeAddressable> selected(frame_->getController()->getModel()->getCurrentSelection(),
                                                                UNO_QUERY);
    if (!selected.is())
        return;
    css::table::CellRangeAddress address = selected->getRangeAddress();
    const Reference<css::container::XIndexAccess> sheets(document->getSheets(), UNO_QUERY_THROW);
    const Reference<css::sheet::XSpreadsheet> sheet(sheets->getByIndex(address.Sheet), UNO_QUERY_THROW);
    if (address.StartColumn == address.EndColumn && address.StartRow == address.EndRow)
    {
        const Reference<css::sheet::XSheetCellCursor> cursor = sheet->createCursorByRange(
            Reference<css::sheet::XSheetCellRange>(
                sheet->getCellRangeByPosition(address.StartColumn, address.StartRow, address.EndColumn, address.EndRow),
                UNO_QUERY_THROW));
        cursor->collapseToCurrentRegion();
        address = Reference<css::sheet::XCellRangeAddressable>(cursor, UNO_QUERY_THROW)->getRangeAddress();
        if (address.StartColumn == address.EndColumn && address.StartRow == address.EndRow)
            return;  // an empty region: nothing to offer
    }
    // Labels: text in the first row and a number below it.
    const sal_Int32 last_probe_row = std::min(address.EndRow, address.StartRow + 1);
    const Cells probe = Reference<css::sheet::XCellRangeData>(
                            sheet->getCellRangeByPosition(address.StartColumn, address.StartRow, address.EndColumn,
                                                          last_probe_row),
                            UNO_QUERY_THROW)
                            ->getDataArray();
    bool text_first = false, number_second = false;
    for (sal_Int32 c = 0; probe.getLength() > 0 && c < probe[0].getLength(); ++c)
    {
        OUString text;
        text_first = text_first || ((probe[0][c] >>= text) && !text.isEmpty());
        number_second = number_second || (probe.getLength() > 1 && probe[1][c].getValueTypeClass() == css::uno::TypeClass_DOUBLE);
    }
    const bool labels = text_first && number_second;
    model("labels")->setPropertyValue("State", Any(static_cast<sal_Int16>(labels ? 1 : 0)));
    if (model("y").is() && model("x").is())
    {
        if (address.EndColumn == address.StartColumn)
            return;  // one column: Y or X is not clear
        css::table::CellRangeAddress y = address, x = address;
        y.EndColumn = y.StartColumn;
        x.StartColumn = y.StartColumn + 1;
        setText("y", rangeReference(document, y, true));
        setText("x", rangeReference(document, x, true));
    }
    else if (model("data").is())
        setText("data", rangeReference(document, address, true));
}

void AnalysisDialog::showPage(sal_Int32 page)
{
    Reference<css::beans::XPropertySet>(models_, UNO_QUERY_THROW)->setPropertyValue("Step", Any(page));
    for (sal_Int32 tab = 1; tab <= 3; ++tab)
        model("page" + std::to_string(tab))->setPropertyValue("State", Any(static_cast<sal_Int16>(tab == page ? 1 : 0)));
}

void AnalysisDialog::pickRange(const std::string& field)
{
    const Reference<css::sheet::XRangeSelection> selection(frame_->getController(), UNO_QUERY);
    if (!selection.is())
        return;
    picking_ = field;
    std::string title = field == "target_cell" ? "Results to cell" : field;
    for (const Field& candidate : analysis_.fields)
        if (candidate.id == field)
            title = candidate.label;
    selection->addRangeSelectionListener(this);
    Reference<css::awt::XWindow>(dialog_, UNO_QUERY_THROW)->setVisible(false);
    selection->startRangeSelection(sequenceOf<css::beans::PropertyValue>({ css::beans::PropertyValue("Title", 0, Any(fromUtf8(analysis_.title + ": " + title)),
                                                               css::beans::PropertyState_DIRECT_VALUE),
                                     css::beans::PropertyValue("InitialValue", 0, Any(fromUtf8(text(field))),
                                                               css::beans::PropertyState_DIRECT_VALUE),
                                     css::beans::PropertyValue("CloseOnMouseRelease", 0, Any(false),
                                                               css::beans::PropertyState_DIRECT_VALUE),
                                     css::beans::PropertyValue("SingleCellMode", 0, Any(field == "target_cell"),
                                                               css::beans::PropertyState_DIRECT_VALUE) }));
}

void SAL_CALL AnalysisDialog::done(const css::sheet::RangeSelectionEvent& event)
{
    const Reference<css::sheet::XRangeSelection> selection(frame_->getController(), UNO_QUERY);
    if (selection.is())
        selection->removeRangeSelectionListener(this);
    if (closed_)
        return;
    if (!picking_.empty() && !event.RangeDescriptor.isEmpty())
        setText(picking_, event.RangeDescriptor);
    picking_.clear();
    Reference<css::awt::XWindow>(dialog_, UNO_QUERY_THROW)->setVisible(true);
}

void SAL_CALL AnalysisDialog::aborted(const css::sheet::RangeSelectionEvent&)
{
    const Reference<css::sheet::XRangeSelection> selection(frame_->getController(), UNO_QUERY);
    if (selection.is())
        selection->removeRangeSelectionListener(this);
    picking_.clear();
    if (!closed_)
        Reference<css::awt::XWindow>(dialog_, UNO_QUERY_THROW)->setVisible(true);
}

void SAL_CALL AnalysisDialog::actionPerformed(const css::awt::ActionEvent& event)
{
    try
    {
        const std::string command = toUtf8(event.ActionCommand);
        if (command.rfind("page", 0) == 0)
            showPage(std::stoi(command.substr(4)));
        else if (command.rfind("pick_", 0) == 0)
            pickRange(command.substr(5));
        else if (command == "cancel")
        {
            if (running_)
                g_stop_requested.store(true);
            else
                close();
        }
        else if (command == "ok" && !running_)
        {
            // Runs on the office's main thread once this click is handled:
            // the click may come from another thread (a test, a macro).
            showMessage("");
            running_ = true;
            model("ok")->setPropertyValue("Enabled", Any(false));
            css::awt::AsyncCallback::create(context_)->addCallback(this, Any());
        }
    }
    catch (const Exception& failure)
    {
        showMessage(toUtf8(failure.Message));
    }
}

void SAL_CALL AnalysisDialog::itemStateChanged(const css::awt::ItemEvent&)
{
    enableDependentFields();
}

void SAL_CALL AnalysisDialog::notify(const Any&)
{
    run();
}

bool AnalysisDialog::progress(double fraction)
{
    if (stopAsked())
        return true;
    try
    {
        if (fraction - last_progress_ >= 0.01 || fraction < last_progress_)
        {
            last_progress_ = fraction;
            model("progress")->setPropertyValue("ProgressValue",
                                                Any(static_cast<sal_Int32>(100.0 * std::min(1.0, std::max(0.0, fraction)))));
        }
    }
    catch (...)
    {
    }
    return stopAsked();
}

bool AnalysisDialog::stopAsked() const
{
    return g_stop_requested.load() || (close_guard_.is() && close_guard_->asked());
}

// The document and its window do not close under a run (see CloseGuard):
// a close asked for stops it, and the document or window closes once it
// has stopped, the dialog with it.
void AnalysisDialog::run()
{
    const rtl::Reference<AnalysisDialog> self(this);  // through close() below
    close_guard_ = new addin::CloseGuard(true);
    close_guard_->watch(frame_, true);
    const Reference<css::frame::XController> controller(frame_.is() ? frame_->getController() : nullptr);
    close_guard_->watch(controller.is() ? controller->getModel() : nullptr, true);
    runWatched();
    std::vector<Reference<css::util::XCloseable>> handed_over = close_guard_->end();
    close_guard_.clear();
    if (handed_over.empty())
        return;
    close();
    addin::CloseGuard::closeLater(context_, std::move(handed_over));
}

void AnalysisDialog::runWatched()
{
    auto finish = [&] {
        running_ = false;
        if (!closed_)
        {
            model("progress")->setPropertyValue("EnableVisible", Any(false));
            model("ok")->setPropertyValue("Enabled", Any(true));
            model("cancel")->setPropertyValue("Label", Any(OUString("Cancel")));
            model("cancel")->setPropertyValue("Enabled", Any(true));
        }
    };
    try
    {
        const Reference<css::sheet::XSpreadsheetDocument> document = documentOf(frame_);
        Request request;
        try
        {
            request = readRequest(analysis_, values(), document, activeSheet(frame_));
        }
        catch (const FieldError& error)
        {
            finish();
            showMessage(error.what(), error.field);
            return;
        }
        g_stop_requested.store(false);
        last_progress_ = -1.0;
        model("progress")->setPropertyValue("EnableVisible", Any(true));
        model("progress")->setPropertyValue("ProgressValue", Any(static_cast<sal_Int32>(0)));
        model("cancel")->setPropertyValue("Label", Any(OUString("Stop")));
        showMessage("Running " + analysis_.function + "... (Stop or Esc cancels; nothing is written until it ends)");
        const Reference<org::statgpu::XStatGpu> functions(
            context_->getServiceManager()->createInstanceWithContext("org.statgpu.StatGpu", context_),
            UNO_QUERY_THROW);
        Outcome outcome;
        std::map<std::string, Sequence<Sequence<Any>>> cells;
        for (const auto& [id, input] : request.ranges)
            cells[id] = input.cells;
        const Values asked = values();
        const bool confirmed = pending_ && pending_->values == asked && pending_->cells == cells;
        if (confirmed)
        {
            outcome = pending_->outcome;
            request.replace_confirmed = true;
            request.replace_block = pending_->block;
        }
        pending_.reset();
        try
        {
            if (!confirmed)
                outcome = runAnalysis(request, functions, [this](double fraction) { return progress(fraction); });
        }
        catch (const Exception& failure)
        {
            finish();
            // Stop, the stop command, or Esc in the window (the engine's "cancelled").
            const bool stopped = stopAsked() || failure.Message.indexOf("cancelled") >= 0;
            g_stop_requested.store(false);
            std::string reason = toUtf8(failure.Message);
            if (!reason.empty() && reason.back() != '.')
                reason += '.';
            showMessage(stopped ? std::string("Stopped: nothing was written.")
                                : analysis_.function + " failed: " + reason + " Nothing was written.");
            return;
        }
        // The report is written in one go on this thread, as one undo step:
        // nothing can stop it half way, so Stop is greyed out and the
        // message says so, rather than a Stop that does nothing.
        model("cancel")->setPropertyValue("Enabled", Any(false));
        showMessage("Writing the report... (this last step cannot be stopped)");
        try
        {
            writeReport(context_, frame_, request, outcome);
        }
        catch (const ReplaceQuestion& question)
        {
            pending_ = Pending{ asked, cells, outcome, question.block };
            throw;
        }
        running_ = false;
        close();  // done: the dialog goes, as it is (no moment with OK enabled again)
    }
    catch (const FieldError& error)
    {
        finish();
        showMessage(error.what(), error.field);
    }
    catch (const Exception& failure)
    {
        finish();
        // Calc's own exceptions often carry only their source location
        // ("at ./sc/source/ui/unoobj/cellsuno.cxx:4679"): no reason a user
        // can act on, so the likely ones are named instead.
        std::string reason = toUtf8(failure.Message);
        if (reason.empty() || reason.rfind("at ", 0) == 0 || reason.find(".cxx:") != std::string::npos)
            reason = "Calc refused to write it there (the cells may be protected, merged or part of an array "
                     "formula, or past the sheet's end); choose a new sheet or another cell.";
        showMessage("The report could not be written: " + reason);
    }
    catch (const std::exception& failure)
    {
        finish();
        showMessage(std::string("The report could not be written: ") + failure.what());
    }
}

void AnalysisDialog::close()
{
    if (closed_)
        return;
    closed_ = true;
    try
    {
        Reference<css::lang::XComponent>(dialog_, UNO_QUERY_THROW)->dispose();
    }
    catch (...)
    {
    }
    auto& dialogs = openDialogs();
    for (auto it = dialogs.begin(); it != dialogs.end(); ++it)
        if (it->get() == this)
        {
            dialogs.erase(it);  // may release the last reference: nothing after this
            return;
        }
}

void SAL_CALL AnalysisDialog::windowClosing(const css::lang::EventObject&)
{
    if (running_)
        g_stop_requested.store(true);
    else
        close();
}

void SAL_CALL AnalysisDialog::disposing(const css::lang::EventObject&) {}

void AnalysisDialog::showMessage(const std::string& message, const std::string& field)
{
    if (closed_)
        return;
    model("message")->setPropertyValue("Label", Any(fromUtf8(message)));
    if (field.empty())
        return;
    for (const Field& candidate : analysis_.fields)
        if (candidate.id == field)
            showPage(static_cast<sal_Int32>(candidate.page));
    if (field == "target_cell" || field.rfind("output_", 0) == 0)
        showPage(static_cast<sal_Int32>(Page::Outputs));
    const Reference<css::awt::XControlContainer> controls(dialog_, UNO_QUERY_THROW);
    const Reference<css::awt::XWindow> control(controls->getControl(fromUtf8(field)), UNO_QUERY);
    if (control.is())
        control->setFocus();
}

Reference<css::beans::XPropertySet> AnalysisDialog::model(const std::string& id) const
{
    const OUString name = fromUtf8(id);
    if (!models_->hasByName(name))
        return nullptr;
    return Reference<css::beans::XPropertySet>(models_->getByName(name), UNO_QUERY);
}

std::string AnalysisDialog::text(const std::string& id) const
{
    OUString value;
    if (const auto control = model(id); control.is())
        control->getPropertyValue("Text") >>= value;
    return toUtf8(value);
}

void AnalysisDialog::setText(const std::string& id, const OUString& value)
{
    if (const auto control = model(id); control.is())
        control->setPropertyValue("Text", Any(value));
}

Values AnalysisDialog::values() const
{
    Values read;
    for (const OUString& name : models_->getElementNames())
    {
        const std::string id = toUtf8(name);
        const Reference<css::beans::XPropertySet> control = model(id);
        const Reference<css::beans::XPropertySetInfo> info = control->getPropertySetInfo();
        if (id.rfind("label_", 0) == 0 || id.rfind("page", 0) == 0 || id.rfind("pick_", 0) == 0)
            continue;
        if (info->hasPropertyByName("StringItemList"))
        {
            Sequence<sal_Int16> selected;
            control->getPropertyValue("SelectedItems") >>= selected;
            std::vector<std::string> words;
            for (const Field& field : analysis_.fields)
                if (field.id == id)
                    words = field.choices;
            const auto items = choiceItems(id, words);
            if (selected.getLength() > 0 && selected[0] >= 0 && static_cast<std::size_t>(selected[0]) < items.size())
                read[id] = items[static_cast<std::size_t>(selected[0])].first;
            else
                read[id] = "";
        }
        else if (info->hasPropertyByName("State") && !info->hasPropertyByName("Toggle"))
        {
            sal_Int16 state = 0;
            control->getPropertyValue("State") >>= state;
            read[id] = state == 1 ? "1" : "0";
        }
        else if (info->hasPropertyByName("Text"))
        {
            OUString value;
            control->getPropertyValue("Text") >>= value;
            read[id] = toUtf8(value);
        }
    }
    return read;
}
} // namespace statgpu::dialogs
