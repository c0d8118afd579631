// report.cxx: writing an analysis's report (see report.hxx).
#include "report.hxx"

#include <statgpu.h>

#include <com/sun/star/awt/FontWeight.hpp>
#include <com/sun/star/awt/Point.hpp>
#include <com/sun/star/beans/PropertyValue.hpp>
#include <com/sun/star/beans/XPropertySet.hpp>
#include <com/sun/star/container/XIndexAccess.hpp>
#include <com/sun/star/container/XNamed.hpp>
#include <com/sun/star/document/XUndoManager.hpp>
#include <com/sun/star/document/XUndoManagerSupplier.hpp>
#include <com/sun/star/frame/Desktop.hpp>
#include <com/sun/star/frame/XComponentLoader.hpp>
#include <com/sun/star/frame/XController.hpp>
#include <com/sun/star/frame/XModel.hpp>
#include <com/sun/star/lang/XMultiServiceFactory.hpp>
#include <com/sun/star/sheet/XArrayFormulaRange.hpp>
#include <com/sun/star/sheet/XCellRangeAddressable.hpp>
#include <com/sun/star/sheet/XCellRangeData.hpp>
#include <com/sun/star/sheet/XCellRangeMovement.hpp>
#include <com/sun/star/sheet/XCellRangesQuery.hpp>
#include <com/sun/star/sheet/XSheetAnnotation.hpp>
#include <com/sun/star/sheet/XSheetAnnotationsSupplier.hpp>
#include <com/sun/star/sheet/XSheetCellRanges.hpp>
#include <com/sun/star/sheet/XSheetCellCursor.hpp>
#include <com/sun/star/sheet/XSheetCellRange.hpp>
#include <com/sun/star/sheet/XSpreadsheetDocument.hpp>
#include <com/sun/star/sheet/XSpreadsheetView.hpp>
#include <com/sun/star/sheet/XSpreadsheets.hpp>
#include <com/sun/star/table/XCell.hpp>
#include <com/sun/star/table/XCellRange.hpp>
#include <com/sun/star/table/XColumnRowRange.hpp>
#include <com/sun/star/text/XText.hpp>
#include <com/sun/star/table/XTableColumns.hpp>
#include <com/sun/star/util/XNumberFormats.hpp>
#include <com/sun/star/util/XNumberFormatsSupplier.hpp>

#include <algorithm>
#include <cmath>
#include <ctime>

namespace statgpu::dialogs
{
using css::uno::Any;
using css::uno::Reference;
using css::uno::Sequence;
using css::uno::UNO_QUERY;
using css::uno::UNO_QUERY_THROW;

namespace
{
// A chart's size (1/100 mm), and the rows kept for the charts (at the default
// row height of 0.45 cm, a little more than the charts' height).
constexpr sal_Int32 kChartWidth = 16000, kChartHeight = 10000;
constexpr sal_Int32 kChartRows = 24;
// The widest a column is fitted to (1/100 mm).
constexpr sal_Int32 kWidestColumn = 5000;
// Tables of at most this many rows are given number formats cell by cell.
constexpr sal_Int32 kCellByCell = 64;

// Where the report goes and how far it has come.
class SheetWriter
{
public:
    SheetWriter(Reference<css::sheet::XSpreadsheetDocument> document, Reference<css::sheet::XSpreadsheet> sheet,
                sal_Int32 column, sal_Int32 row)
        : document_(std::move(document))
        , sheet_(std::move(sheet))
        , left_(column)
        , row_(row)
    {
    }

    sal_Int32 row() const { return row_; }
    sal_Int32 left() const { return left_; }
    sal_Int32 widest() const { return widest_; }
    const Reference<css::sheet::XSpreadsheet>& sheet() const { return sheet_; }
    const Reference<css::sheet::XSpreadsheetDocument>& document() const { return document_; }

    Reference<css::table::XCellRange> range(sal_Int32 column, sal_Int32 row, sal_Int32 columns, sal_Int32 rows) const
    {
        return sheet_->getCellRangeByPosition(column, row, column + columns - 1, row + rows - 1);
    }

    // A row of texts and numbers at the report's left edge, and on to the next row.
    void line(const std::vector<Any>& cells, bool bold = false, float height = 0.0f)
    {
        if (!cells.empty())
        {
            const auto target = range(left_, row_, static_cast<sal_Int32>(cells.size()), 1);
            Reference<css::sheet::XCellRangeData>(target, UNO_QUERY_THROW)
                ->setDataArray(sequenceOf<Sequence<Any>>({ Sequence<Any>(cells.data(), static_cast<sal_Int32>(cells.size())) }));
            if (bold)
                Reference<css::beans::XPropertySet>(target, UNO_QUERY_THROW)
                    ->setPropertyValue("CharWeight", Any(css::awt::FontWeight::BOLD));
            if (height > 0.0f)
                Reference<css::beans::XPropertySet>(target, UNO_QUERY_THROW)->setPropertyValue("CharHeight", Any(height));
            widest_ = std::max(widest_, static_cast<sal_Int32>(cells.size()));
        }
        ++row_;
    }

    void skip(sal_Int32 rows = 1) { row_ += rows; }

    // A block of cells at (column offset, the current row), without moving on.
    void block(sal_Int32 column_offset, const Sequence<Sequence<Any>>& cells)
    {
        if (cells.getLength() == 0 || cells[0].getLength() == 0)
            return;
        const auto target = range(left_ + column_offset, row_, cells[0].getLength(), cells.getLength());
        Reference<css::sheet::XCellRangeData>(target, UNO_QUERY_THROW)->setDataArray(cells);
        widest_ = std::max(widest_, column_offset + cells[0].getLength());
    }

private:
    Reference<css::sheet::XSpreadsheetDocument> document_;
    Reference<css::sheet::XSpreadsheet> sheet_;
    sal_Int32 left_;
    sal_Int32 row_;
    sal_Int32 widest_ = 0;
};

Any text(const std::string& value)
{
    return Any(fromUtf8(value));
}

std::string today()
{
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char text[64];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M", &local);
    return text;
}

OUString uniqueSheetName(const Reference<css::sheet::XSpreadsheets>& sheets, const std::string& base)
{
    OUString name = fromUtf8(base);
    for (int n = 2; sheets->hasByName(name); ++n)
        name = fromUtf8(base + " " + std::to_string(n));
    return name;
}

// A number format for each numeric column of a table: whole numbers as
// such, others with six decimals, or in scientific notation where they are
// very small or very large; the cells keep every digit. Set with the undo
// manager locked: Calc 7.4 cannot undo a number format set inside an undo
// context (the whole report would stay), and the report's sheet takes its
// formats with it when it is undone.
void formatColumns(const SheetWriter& writer, const Sequence<Sequence<Any>>& cells)
{
    if (cells.getLength() == 0)
        return;
    const Reference<css::document::XUndoManager> undo =
        Reference<css::document::XUndoManagerSupplier>(writer.document(), UNO_QUERY_THROW)->getUndoManager();
    undo->lock();
    struct Unlock
    {
        const Reference<css::document::XUndoManager>& undo;
        ~Unlock() { undo->unlock(); }
    } unlock{ undo };
    const Reference<css::util::XNumberFormats> formats =
        Reference<css::util::XNumberFormatsSupplier>(writer.document(), UNO_QUERY_THROW)->getNumberFormats();
    // The codes are written in English; converted to the office's locale
    // (the empty Locale) they show its decimal separator: 3,520000 to a
    // German reader, to whom 3.520000 would be three and a half million.
    const auto key = [&](const char* code) {
        return formats->addNewConverted(OUString::createFromAscii(code), css::lang::Locale("en", "US", ""),
                                        css::lang::Locale());
    };
    for (sal_Int32 c = 0; c < cells[0].getLength(); ++c)
    {
        bool numbers = false, whole = true, plain = true;
        for (const auto& row : cells)
        {
            double value = 0.0;
            if (!(row[c] >>= value))
                continue;
            numbers = true;
            whole = whole && value == std::floor(value) && std::fabs(value) < 1e15;
            plain = plain && (value == 0.0 || (std::fabs(value) >= 1e-3 && std::fabs(value) < 1e9));
        }
        if (!numbers)
            continue;
        if (cells.getLength() <= kCellByCell)
        {
            // A short table (a summary: counts beside sums) cell by cell.
            for (sal_Int32 r = 0; r < cells.getLength(); ++r)
            {
                double value = 0.0;
                if (!(cells[r][c] >>= value))
                    continue;
                const bool one_whole = value == std::floor(value) && std::fabs(value) < 1e15;
                const bool one_plain = value == 0.0 || (std::fabs(value) >= 1e-3 && std::fabs(value) < 1e9);
                Reference<css::beans::XPropertySet>(writer.sheet()->getCellByPosition(writer.left() + 1 + c,
                                                                                      writer.row() + r),
                                                    UNO_QUERY_THROW)
                    ->setPropertyValue("NumberFormat",
                                       Any(key(one_whole ? "0" : one_plain ? "0.000000" : "0.000000E+00")));
            }
            continue;
        }
        Reference<css::beans::XPropertySet>(writer.range(writer.left() + 1 + c, writer.row(), 1, cells.getLength()),
                                            UNO_QUERY_THROW)
            ->setPropertyValue("NumberFormat", Any(key(whole ? "0" : plain ? "0.000000" : "0.000000E+00")));
    }
}

void writeTable(SheetWriter& writer, const Request& request, const ReportTable& written)
{
    const addin::CollectedTable& table = written.table;
    Sequence<Sequence<Any>> cells;
    table.cells >>= cells;
    const sal_Int32 rows = cells.getLength();
    // Beside the title, the function call that gives the table: its Output word.
    if (request.analysis->method.empty())
        writer.line({ text(table.title) }, true);
    else
        writer.line({ text(table.title), text(request.analysis->function + " Output \"" + table.name + "\"") }, true);
    std::vector<Any> header{ text(written.per_row                  ? "sheet row"
                                  : !table.row_label_header.empty() ? table.row_label_header
                                                                    : "row") };
    for (const std::string& column : table.column_headers)
        header.push_back(text(column));
    writer.line(header, true);
    Sequence<Sequence<Any>> labels(rows);
    const sal_Int32 first_row = written.first_row;
    for (sal_Int32 r = 0; r < rows; ++r)
    {
        const std::size_t index = static_cast<std::size_t>(r);
        // A per-row table's rows are the sheet's; a label that is a whole number is one.
        Any label(static_cast<double>(written.per_row ? first_row + r + 1 : r + 1));
        if (!written.per_row && index < table.row_labels.size())
        {
            const std::string& row_label = table.row_labels[index];
            const bool whole = !row_label.empty() && row_label.size() < 10
                               && row_label.find_first_not_of("0123456789") == std::string::npos;
            label = whole ? Any(std::stod(row_label)) : text(row_label);
        }
        labels.getArray()[r] = sequenceOf<Any>({ label });
    }
    writer.block(0, labels);
    formatColumns(writer, cells);
    if (request.live && !written.array_formula.isEmpty() && rows > 0)
    {
        const auto target = writer.range(writer.left() + 1, writer.row(), cells[0].getLength(), rows);
        Reference<css::sheet::XArrayFormulaRange>(target, UNO_QUERY_THROW)->setArrayFormula(written.array_formula);
    }
    else if (request.live && !written.cell_formulas.empty())
    {
        for (sal_Int32 r = 0; r < rows; ++r)
            for (sal_Int32 c = 0; c < cells[r].getLength(); ++c)
            {
                const OUString& formula = written.cell_formulas[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)];
                const auto cell = writer.sheet()->getCellByPosition(writer.left() + 1 + c, writer.row() + r);
                if (!formula.isEmpty())
                    cell->setFormula(formula);
            }
    }
    else
        writer.block(1, cells);
    writer.skip(rows + 1);
}

void fitWidths(const SheetWriter& writer)
{
    const Reference<css::table::XColumnRowRange> columns(
        writer.range(writer.left(), 0, std::max<sal_Int32>(1, writer.widest()), 1), UNO_QUERY_THROW);
    const Reference<css::container::XIndexAccess> all(columns->getColumns(), UNO_QUERY_THROW);
    for (sal_Int32 c = 0; c < all->getCount(); ++c)
    {
        const Reference<css::beans::XPropertySet> column(all->getByIndex(c), UNO_QUERY_THROW);
        column->setPropertyValue("OptimalWidth", Any(true));
        // A long setting (the backend's text) runs on into the empty cells
        // beside it rather than widening its column for every table below.
        sal_Int32 width = 0;
        column->getPropertyValue("Width") >>= width;
        if (width > kWidestColumn)
            column->setPropertyValue("Width", Any(kWidestColumn));
    }
}

// Every plot's data block below the tables; returns the blocks, header row
// first, relative to the report's top left cell.
std::vector<css::table::CellRangeAddress> writeChartData(SheetWriter& writer, const std::vector<Plot>& plots,
                                                         sal_Int32 top_row)
{
    std::vector<css::table::CellRangeAddress> blocks;
    if (plots.empty())
        return blocks;
    writer.skip();
    writer.line({ text("Chart data") }, true);
    for (const Plot& plot : plots)
    {
        writer.line({ text(plot.title) }, true);
        std::size_t rows = 0;
        for (const auto& column : plot.columns)
            rows = std::max(rows, column.size());
        Sequence<Sequence<Any>> cells(static_cast<sal_Int32>(rows + 1));
        for (sal_Int32 r = 0; r <= static_cast<sal_Int32>(rows); ++r)
        {
            Sequence<Any>& row = cells.getArray()[r];
            row.realloc(static_cast<sal_Int32>(plot.columns.size()));
            for (std::size_t c = 0; c < plot.columns.size(); ++c)
            {
                if (r == 0)
                    row.getArray()[c] = text(plot.headers[c]);
                else if (static_cast<std::size_t>(r - 1) < plot.columns[c].size()
                         && std::isfinite(plot.columns[c][static_cast<std::size_t>(r - 1)]))
                    row.getArray()[c] <<= plot.columns[c][static_cast<std::size_t>(r - 1)];
                else
                    row.getArray()[c] <<= OUString();
            }
        }
        writer.block(0, cells);
        Reference<css::beans::XPropertySet>(writer.range(writer.left(), writer.row(), static_cast<sal_Int32>(plot.columns.size()), 1),
                                            UNO_QUERY_THROW)
            ->setPropertyValue("CharWeight", Any(css::awt::FontWeight::BOLD));
        blocks.emplace_back(0, 0, writer.row() - top_row, static_cast<sal_Int32>(plot.columns.size()) - 1,
                            writer.row() - top_row + static_cast<sal_Int32>(rows));
        writer.skip(static_cast<sal_Int32>(rows) + 2);
    }
    return blocks;
}

// The charts side by side at row chart_row of sheet, from column left; their
// series read the blocks, moved to (left, top).
void addCharts(const Reference<css::uno::XComponentContext>& context,
               const Reference<css::sheet::XSpreadsheetDocument>& document, const Reference<css::sheet::XSpreadsheet>& sheet,
               sal_Int32 left, sal_Int32 top, sal_Int32 chart_row, const std::vector<Plot>& plots,
               const std::vector<css::table::CellRangeAddress>& blocks)
{
    if (plots.empty())
        return;
    css::awt::Point origin;
    Reference<css::beans::XPropertySet>(sheet->getCellByPosition(left, chart_row), UNO_QUERY_THROW)
        ->getPropertyValue("Position") >>= origin;
    const sal_Int16 sheet_index =
        Reference<css::sheet::XCellRangeAddressable>(sheet, UNO_QUERY_THROW)->getRangeAddress().Sheet;
    // Chart names are the document's, not the sheet's: the sheet's name makes them unique.
    const std::string sheet_name = toUtf8(Reference<css::container::XNamed>(sheet, UNO_QUERY_THROW)->getName());
    for (std::size_t p = 0; p < plots.size(); ++p)
    {
        const css::table::CellRangeAddress block(sheet_index, left + blocks[p].StartColumn, top + blocks[p].StartRow,
                                                 left + blocks[p].EndColumn, top + blocks[p].EndRow);
        const css::awt::Rectangle rectangle(origin.X + static_cast<sal_Int32>(p) * (kChartWidth + 500), origin.Y,
                                            kChartWidth, kChartHeight);
        addChart(context, sheet, document, sheet_name + " chart " + std::to_string(p + 1),
                 rectangle, plots[p], block);
    }
}

// Whether block of sheet holds anything a report would replace: a value,
// text or formula in a cell, or a note. The empty cells are counted, as
// Calc 7.4's queryContentCells answers a range without content with the
// cells of the nearest filled column to its left.
bool holdsSomething(const Reference<css::sheet::XSpreadsheet>& sheet, const css::table::CellRangeAddress& block)
{
    const Reference<css::sheet::XCellRangesQuery> query(
        Reference<css::table::XCellRange>(sheet, UNO_QUERY_THROW)
            ->getCellRangeByPosition(block.StartColumn, block.StartRow, block.EndColumn, block.EndRow),
        UNO_QUERY_THROW);
    sal_Int64 empty = 0;
    for (const css::table::CellRangeAddress& part : query->queryEmptyCells()->getRangeAddresses())
        empty += sal_Int64(part.EndColumn - part.StartColumn + 1) * (part.EndRow - part.StartRow + 1);
    if (empty < sal_Int64(block.EndColumn - block.StartColumn + 1) * (block.EndRow - block.StartRow + 1))
        return true;
    const Reference<css::container::XIndexAccess> notes(
        Reference<css::sheet::XSheetAnnotationsSupplier>(sheet, UNO_QUERY_THROW)->getAnnotations(), UNO_QUERY_THROW);
    for (sal_Int32 i = 0; i < notes->getCount(); ++i)
    {
        const css::table::CellAddress at =
            Reference<css::sheet::XSheetAnnotation>(notes->getByIndex(i), UNO_QUERY_THROW)->getPosition();
        if (at.Column >= block.StartColumn && at.Column <= block.EndColumn && at.Row >= block.StartRow
            && at.Row <= block.EndRow)
            return true;
    }
    return false;
}
} // namespace

OUString writeReport(const Reference<css::uno::XComponentContext>& context, const Reference<css::frame::XFrame>& frame,
                     const Request& request, const Outcome& outcome)
{
    Reference<css::sheet::XSpreadsheetDocument> document(frame->getController()->getModel(), UNO_QUERY_THROW);
    const Reference<css::sheet::XSpreadsheetView> view(frame->getController(), UNO_QUERY_THROW);
    Reference<css::sheet::XSpreadsheetView> target_view = view;
    Reference<css::sheet::XSpreadsheet> sheet;  // where the report is written, from its top left cell
    OUString where;
    const Analysis& analysis = *request.analysis;
    if (request.target == Target::NewDocument)
    {
        const Reference<css::frame::XComponentLoader> loader(css::frame::Desktop::create(context), UNO_QUERY_THROW);
        document.set(loader->loadComponentFromURL("private:factory/scalc", "_blank", 0, {}), UNO_QUERY_THROW);
        const Reference<css::container::XIndexAccess> sheets(document->getSheets(), UNO_QUERY_THROW);
        sheet.set(sheets->getByIndex(0), UNO_QUERY_THROW);
        Reference<css::container::XNamed>(sheet, UNO_QUERY_THROW)->setName(fromUtf8(analysis.sheet_name));
        target_view.set(Reference<css::frame::XModel>(document, UNO_QUERY_THROW)->getCurrentController(), UNO_QUERY);
        where = "a new document";
    }
    const Reference<css::document::XUndoManager> undo =
        Reference<css::document::XUndoManagerSupplier>(document, UNO_QUERY_THROW)->getUndoManager();
    const OUString undo_title = fromUtf8("statgpu: " + analysis.title + " report");
    undo->enterUndoContext(undo_title);
    try
    {
        const Reference<css::sheet::XSpreadsheets> sheets = document->getSheets();
        // Cells written in blocks (setDataArray) are not undone by Calc 7.4;
        // a new sheet is undone whole, and a copy of cells is undone with
        // what it covered. So a report to a cell is written to a sheet of its
        // own first, copied to the cell, and that sheet removed.
        OUString scratch_name;
        Reference<css::sheet::XSpreadsheet> target_sheet;
        if (request.target == Target::NewSheet)
        {
            const sal_Int16 active = Reference<css::sheet::XCellRangeAddressable>(view->getActiveSheet(), UNO_QUERY_THROW)
                                         ->getRangeAddress()
                                         .Sheet;
            const OUString name = uniqueSheetName(sheets, analysis.sheet_name);
            sheets->insertNewByName(name, static_cast<sal_Int16>(active + 1));
            sheet.set(sheets->getByName(name), UNO_QUERY_THROW);
            where = "sheet '" + name + "'";
        }
        else if (request.target == Target::Cell)
        {
            const Reference<css::container::XIndexAccess> all(sheets, UNO_QUERY_THROW);
            target_sheet.set(all->getByIndex(request.target_cell.Sheet), UNO_QUERY_THROW);
            scratch_name = uniqueSheetName(sheets, "statgpu report being written");
            sheets->insertNewByName(scratch_name, static_cast<sal_Int16>(all->getCount()));
            sheet.set(sheets->getByName(scratch_name), UNO_QUERY_THROW);
            where = "the cell " + rangeReference(document,
                                                 css::table::CellRangeAddress(request.target_cell.Sheet,
                                                                              request.target_cell.Column,
                                                                              request.target_cell.Row,
                                                                              request.target_cell.Column,
                                                                              request.target_cell.Row),
                                                 false);
        }

        SheetWriter writer(document, sheet, 0, 0);
        writer.line({ text(analysis.title) }, true, 14.0f);
        writer.line({ text(std::string("statgpu ") + statgpu_version_string() + " report, " + today()) });
        writer.skip();
        writer.line({ text("Inputs and options") }, true);
        for (const auto& [name, shown] : outcome.settings)
            writer.line({ text(name), text(shown) });
        writer.line({ text("Backend"), text(outcome.backend) });
        writer.line({ text("Time (s)"), Any(std::round(outcome.seconds * 1e4) / 1e4) });
        writer.line({ text("Computed by"),
                      text(analysis.method.empty()
                               ? "COUNT, GPUSMALL, GPUQUANTILE, GPUMEDIAN and GPULARGE on the same data give the same numbers"
                               : analysis.function + "(..., Output) on the same data gives the same tables") });
        writer.skip();
        // The charts first, where the report opens; then the short tables,
        // then those with a row per row of the data.
        const std::vector<Plot> plots = request.charts ? plotsOf(request, outcome) : std::vector<Plot>();
        const sal_Int32 chart_row = writer.row();
        if (!plots.empty())
            writer.skip(kChartRows);
        for (const bool per_row : { false, true })
            for (const std::string& name : request.outputs)
                for (const ReportTable& written : outcome.tables)
                    if (written.table.name == name && written.per_row == per_row)
                        writeTable(writer, request, written);
        const std::vector<css::table::CellRangeAddress> blocks = writeChartData(writer, plots, 0);
        if (request.target == Target::Cell)
        {
            // The report's block at the cell: inside the sheet, over no input.
            const css::table::CellRangeAddress edge =
                Reference<css::sheet::XCellRangeAddressable>(target_sheet, UNO_QUERY_THROW)->getRangeAddress();
            const sal_Int32 last_row = request.target_cell.Row + std::max<sal_Int32>(1, writer.row()) - 1;
            const sal_Int32 last_column = request.target_cell.Column + std::max<sal_Int32>(1, writer.widest()) - 1;
            if (last_row > edge.EndRow || last_column > edge.EndColumn)
                throw FieldError("target_cell", "Results to cell: the report needs " + std::to_string(writer.row())
                                                    + " rows and " + std::to_string(writer.widest())
                                                    + " columns from that cell, past the sheet's end; choose a "
                                                      "cell higher up or further left.");
            if (inputUnder(request, css::table::CellRangeAddress(request.target_cell.Sheet, request.target_cell.Column,
                                                                  request.target_cell.Row, last_column, last_row))
                != nullptr)
                throw FieldError("target_cell", "Results to cell: the report (" + std::to_string(writer.row())
                                                    + " rows, " + std::to_string(writer.widest())
                                                    + " columns) would overwrite the input range; choose a "
                                                      "cell clear of it.");
            // A merged block that crosses the report's edge would hide the
            // cells under it (one wholly inside is unmerged by the copy, and
            // the undo merges it again): the block grown by the merges it
            // touches is then larger than the block.
            const css::table::CellRangeAddress block(request.target_cell.Sheet, request.target_cell.Column,
                                                     request.target_cell.Row, last_column, last_row);
            const Reference<css::sheet::XSheetCellCursor> merges = target_sheet->createCursorByRange(
                Reference<css::sheet::XSheetCellRange>(
                    Reference<css::table::XCellRange>(target_sheet, UNO_QUERY_THROW)
                        ->getCellRangeByPosition(block.StartColumn, block.StartRow, block.EndColumn, block.EndRow),
                    UNO_QUERY_THROW));
            merges->collapseToMergedArea();
            const css::table::CellRangeAddress grown =
                Reference<css::sheet::XCellRangeAddressable>(merges, UNO_QUERY_THROW)->getRangeAddress();
            if (grown.StartColumn != block.StartColumn || grown.StartRow != block.StartRow
                || grown.EndColumn != block.EndColumn || grown.EndRow != block.EndRow)
                throw FieldError("target_cell", "Results to cell: merged cells cross the edge of the report's "
                                                "block (" + std::to_string(writer.row()) + " rows, "
                                                + std::to_string(writer.widest())
                                                + " columns from that cell) and would hide part of it; choose a "
                                                  "cell clear of them.");
            // Cells that hold something are replaced only when the user has
            // said so for this block (as Calc asks before pasting over data).
            const bool same_block = request.replace_block.Sheet == block.Sheet
                                    && request.replace_block.StartColumn == block.StartColumn
                                    && request.replace_block.StartRow == block.StartRow
                                    && request.replace_block.EndColumn == block.EndColumn
                                    && request.replace_block.EndRow == block.EndRow;
            if (!(request.replace_confirmed && same_block) && holdsSomething(target_sheet, block))
                throw ReplaceQuestion("Results to cell: the report's block " + toUtf8(rangeReference(document, block, false))
                                          + " holds data, which the report would replace. Click OK again to "
                                            "replace it (Undo restores it), or choose another cell.",
                                      block);
            const sal_Int16 scratch_index =
                Reference<css::sheet::XCellRangeAddressable>(sheet, UNO_QUERY_THROW)->getRangeAddress().Sheet;
            Reference<css::sheet::XCellRangeMovement>(target_sheet, UNO_QUERY_THROW)
                ->copyRange(request.target_cell,
                            css::table::CellRangeAddress(scratch_index, 0, 0, std::max<sal_Int32>(0, writer.widest() - 1),
                                                         std::max<sal_Int32>(0, writer.row() - 1)));
            // Calc refuses a copy over part of an array formula without a
            // word: the title is then not where it should be.
            const Reference<css::text::XText> title(
                Reference<css::table::XCellRange>(target_sheet, UNO_QUERY_THROW)
                    ->getCellByPosition(request.target_cell.Column, request.target_cell.Row),
                UNO_QUERY_THROW);
            if (title->getString() != fromUtf8(analysis.title))
                throw FieldError("target_cell", "Results to cell: Calc refused to write the report there (its "
                                                "block covers part of an array formula, or protected cells); "
                                                "choose a cell clear of them.");
            sheets->removeByName(scratch_name);
            addCharts(context, document, target_sheet, request.target_cell.Column, request.target_cell.Row,
                      request.target_cell.Row + chart_row, plots, blocks);
        }
        else
        {
            fitWidths(writer);
            addCharts(context, document, sheet, 0, 0, chart_row, plots, blocks);
            if (target_view.is())
                target_view->setActiveSheet(sheet);
        }
        undo->leaveUndoContext();
    }
    catch (...)
    {
        // Nothing half-written stays: what this report did so far is undone.
        undo->leaveUndoContext();
        try
        {
            if (undo->isUndoPossible() && undo->getCurrentUndoActionTitle() == undo_title)
            {
                undo->undo();
                undo->clearRedo();  // Edit > Redo must not write the refused report
            }
        }
        catch (...)
        {
        }
        throw;
    }
    return where;
}
} // namespace statgpu::dialogs
