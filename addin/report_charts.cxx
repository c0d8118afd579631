// report_charts.cxx: the charts of a report (see report.hxx): what each
// method's results look like, and a chart of them through the chart2 API.
#include "report.hxx"

#include <com/sun/star/beans/XPropertySet.hpp>
#include <com/sun/star/chart/XAxisXSupplier.hpp>
#include <com/sun/star/chart/XAxisYSupplier.hpp>
#include <com/sun/star/chart/ChartAxisPosition.hpp>
#include <com/sun/star/chart/ChartLegendPosition.hpp>
#include <com/sun/star/chart/XChartDocument.hpp>
#include <com/sun/star/chart/XDiagram.hpp>
#include <com/sun/star/chart2/Symbol.hpp>
#include <com/sun/star/chart2/SymbolStyle.hpp>
#include <com/sun/star/chart2/XChartDocument.hpp>
#include <com/sun/star/chart2/XChartTypeContainer.hpp>
#include <com/sun/star/chart2/XCoordinateSystemContainer.hpp>
#include <com/sun/star/chart2/XDataSeries.hpp>
#include <com/sun/star/chart2/XDataSeriesContainer.hpp>
#include <com/sun/star/chart2/data/LabeledDataSequence.hpp>
#include <com/sun/star/chart2/data/XDataProvider.hpp>
#include <com/sun/star/chart2/data/XDataSink.hpp>
#include <com/sun/star/container/XNameAccess.hpp>
#include <com/sun/star/document/XEmbeddedObjectSupplier.hpp>
#include <com/sun/star/drawing/LineStyle.hpp>
#include <com/sun/star/lang/XMultiServiceFactory.hpp>
#include <com/sun/star/table/XTableCharts.hpp>
#include <com/sun/star/table/XTableChartsSupplier.hpp>

#include <rtl/math.hxx>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>

namespace statgpu::dialogs
{
using css::uno::Any;
using css::uno::Reference;
using css::uno::Sequence;
using css::uno::UNO_QUERY;
using css::uno::UNO_QUERY_THROW;

namespace
{
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Points drawn per chart at most; a larger data set is drawn by every m-th row.
constexpr std::size_t kMostPoints = 20000;
const sal_Int32 kPalette[] = { 0x1F77B4, 0xFF7F0E, 0x2CA02C, 0xD62728, 0x9467BD,
                               0x8C564B, 0xE377C2, 0x7F7F7F, 0xBCBD22, 0x17BECF };

sal_Int32 colourOf(std::size_t index)
{
    return kPalette[index % (sizeof kPalette / sizeof kPalette[0])];
}

double numberAt(const Cells& cells, sal_Int32 row, sal_Int32 column)
{
    double value = kNaN;
    if (row < cells.getLength() && column < cells[row].getLength())
        cells[row][column] >>= value;
    return value;
}

const ReportTable* findTable(const Outcome& outcome, const std::string& name)
{
    for (const ReportTable& table : outcome.tables)
        if (table.table.name == name)
            return &table;
    return nullptr;
}

Cells cellsOf(const ReportTable* table)
{
    Cells cells;
    if (table != nullptr)
        table->table.cells >>= cells;
    return cells;
}

// A summary's value by the start of its name ("scale", "chosen size").
double summaryValue(const Outcome& outcome, const std::string& name_start)
{
    const Cells cells = cellsOf(findTable(outcome, "summary"));
    for (sal_Int32 r = 0; r < cells.getLength(); ++r)
    {
        OUString name;
        if (cells[r].getLength() >= 2 && (cells[r][1] >>= name) && toUtf8(name).rfind(name_start, 0) == 0)
            return numberAt(cells, r, 0);
    }
    return kNaN;
}

std::size_t columnOf(const ReportTable* table, const std::string& header)
{
    if (table != nullptr)
        for (std::size_t c = 0; c < table->table.column_headers.size(); ++c)
            if (table->table.column_headers[c] == header)
                return c;
    return std::string::npos;
}

// A column's label as a chart shows it (axis title, series name), cut to
// kLongestLabel characters: a 20,000-character label held the office for
// about 45 s while the chart laid it out, and a legend of labels of 100
// characters overlapped itself (the tables keep them whole).
constexpr std::size_t kLongestLabel = 40;

std::string label(const InputRange& input, std::size_t column, const char* fallback)
{
    std::string text = column < input.labels.size() ? input.labels[column] : fallback;
    std::size_t characters = 0, end = 0;
    for (; end < text.size(); ++end)
        if ((static_cast<unsigned char>(text[end]) & 0xC0) != 0x80 && ++characters > kLongestLabel)
            break;  // the first byte of the character after the last kept
    if (end < text.size())
        text = text.substr(0, end) + "\u2026";  // an ellipsis
    return text;
}

// Points of the data coloured by group (labels: 1..k per row, NaN when left
// out), and the groups' centres: the KMEANS and GMMFIT scatter.
Plot groupScatter(const std::string& title, const InputRange& data, const Cells& labels, const Cells& centres,
                  const char* group_word, const char* centre_word)
{
    Plot plot;
    plot.title = title;
    const sal_Int32 rows = data.cells.getLength();
    const sal_Int32 variables = rows > 0 ? data.cells[0].getLength() : 0;
    const bool two = variables >= 2;
    plot.x_title = two ? label(data, 0, "variable 1") : "row";
    plot.y_title = label(data, two ? 1 : 0, "variable 2");
    const std::size_t groups = static_cast<std::size_t>(centres.getLength());
    const std::size_t step = std::max<std::size_t>(1, static_cast<std::size_t>(rows) / kMostPoints + 1);
    plot.headers.push_back(plot.x_title);
    plot.columns.emplace_back();
    for (std::size_t g = 0; g < groups; ++g)
    {
        plot.headers.push_back(std::string(group_word) + " " + std::to_string(g + 1));
        plot.columns.emplace_back();
    }
    for (sal_Int32 r = 0; r < rows; r += static_cast<sal_Int32>(step))
    {
        const double group = numberAt(labels, r, 0);
        const double x = two ? numberAt(data.cells, r, 0) : r + 1.0;
        const double y = numberAt(data.cells, r, two ? 1 : 0);
        if (!std::isfinite(group) || !std::isfinite(x) || !std::isfinite(y) || group < 1 || group > groups)
            continue;
        plot.columns[0].push_back(x);
        for (std::size_t g = 0; g < groups; ++g)
            plot.columns[g + 1].push_back(static_cast<std::size_t>(group) == g + 1 ? y : kNaN);
    }
    for (std::size_t g = 0; g < groups; ++g)
        plot.series.push_back({ plot.headers[g + 1], 0, g + 1, false, colourOf(g), 1.2 });
    if (two)
    {
        plot.headers.insert(plot.headers.end(), { std::string(centre_word) + " x", centre_word });
        std::vector<double> xs, ys;
        for (sal_Int32 g = 0; g < centres.getLength(); ++g)
        {
            xs.push_back(numberAt(centres, g, 0));
            ys.push_back(numberAt(centres, g, 1));
        }
        plot.columns.push_back(xs);
        plot.columns.push_back(ys);
        plot.series.push_back({ centre_word, plot.columns.size() - 2, plot.columns.size() - 1, false, 0x000000, 4.5 });
    }
    return plot;
}

// The 2x2 covariance of the first two variables of component g, from
// GMMFIT's covariances table of any type (full: k stacked d x d blocks;
// tied: one d x d; diag: k rows of d variances; spherical: k rows of one).
bool covariance2(const Cells& table, sal_Int32 g, sal_Int32 components, sal_Int32 variables, double s[3])
{
    const sal_Int32 rows = table.getLength();
    const sal_Int32 columns = rows > 0 ? table[0].getLength() : 0;
    if (rows == components * variables && columns == variables)
    {
        s[0] = numberAt(table, g * variables, 0);
        s[1] = numberAt(table, g * variables, 1);
        s[2] = numberAt(table, g * variables + 1, 1);
    }
    else if (rows == variables && columns == variables)
    {
        s[0] = numberAt(table, 0, 0);
        s[1] = numberAt(table, 0, 1);
        s[2] = numberAt(table, 1, 1);
    }
    else if (rows == components && columns == variables)
    {
        s[0] = numberAt(table, g, 0);
        s[1] = 0.0;
        s[2] = numberAt(table, g, 1);
    }
    else if (rows == components && columns == 1)
    {
        s[0] = s[2] = numberAt(table, g, 0);
        s[1] = 0.0;
    }
    else
        return false;
    return std::isfinite(s[0]) && std::isfinite(s[1]) && std::isfinite(s[2]) && s[0] > 0.0
           && s[0] * s[2] - s[1] * s[1] > 0.0;
}

std::vector<Plot> mixturePlots(const Request& request, const Outcome& outcome)
{
    std::vector<Plot> plots;
    const InputRange& data = request.ranges.at("data");
    const Cells means = cellsOf(findTable(outcome, "means"));
    Plot scatter = groupScatter("Components, with 95% ellipses", data, cellsOf(findTable(outcome, "labels")), means,
                                "component", "mean");
    const sal_Int32 variables = data.cells.getLength() > 0 ? data.cells[0].getLength() : 0;
    const Cells covariances = cellsOf(findTable(outcome, "covariances"));
    // The 95% region of a bivariate normal: Mahalanobis radius sqrt(chi2_2(0.95)).
    const double radius = std::sqrt(-2.0 * std::log(0.05));
    for (sal_Int32 g = 0; variables >= 2 && g < means.getLength(); ++g)
    {
        double s[3];
        if (!covariance2(covariances, g, means.getLength(), variables, s))
            continue;
        const double l11 = std::sqrt(s[0]), l21 = s[1] / l11, l22 = std::sqrt(s[2] - l21 * l21);
        std::vector<double> xs, ys;
        for (int i = 0; i <= 72; ++i)
        {
            const double t = 2.0 * M_PI * i / 72.0, u = radius * std::cos(t), v = radius * std::sin(t);
            xs.push_back(numberAt(means, g, 0) + l11 * u);
            ys.push_back(numberAt(means, g, 1) + l21 * u + l22 * v);
        }
        const std::string name = "ellipse " + std::to_string(g + 1);
        scatter.headers.insert(scatter.headers.end(), { name + " x", name });
        scatter.columns.push_back(xs);
        scatter.columns.push_back(ys);
        scatter.series.push_back({ name, scatter.columns.size() - 2, scatter.columns.size() - 1, true,
                                   colourOf(static_cast<std::size_t>(g)), 0.0 });
    }
    plots.push_back(scatter);

    const ReportTable* selection = findTable(outcome, "selection");
    const Cells candidates = cellsOf(selection);
    if (candidates.getLength() > 1)
    {
        const std::size_t k_column = columnOf(selection, "k"), type_column = columnOf(selection, "covariance"),
                          bic_column = columnOf(selection, "BIC"), best_column = columnOf(selection, "best");
        if (k_column != std::string::npos && bic_column != std::string::npos)
        {
            Plot bic;
            bic.title = "BIC against k (lower is better)";
            bic.x_title = "components (k)";
            bic.x_step = 1.0;
            bic.y_title = "BIC";
            std::vector<std::string> types;
            for (sal_Int32 r = 0; r < candidates.getLength(); ++r)
            {
                OUString type;
                if (type_column != std::string::npos)
                    candidates[r][static_cast<sal_Int32>(type_column)] >>= type;
                if (std::find(types.begin(), types.end(), toUtf8(type)) == types.end())
                    types.push_back(toUtf8(type));
            }
            for (const std::string& type : types)
            {
                std::vector<double> ks, values;
                for (sal_Int32 r = 0; r < candidates.getLength(); ++r)
                {
                    OUString row_type;
                    if (type_column != std::string::npos)
                        candidates[r][static_cast<sal_Int32>(type_column)] >>= row_type;
                    if (toUtf8(row_type) != type)
                        continue;
                    ks.push_back(numberAt(candidates, r, static_cast<sal_Int32>(k_column)));
                    values.push_back(numberAt(candidates, r, static_cast<sal_Int32>(bic_column)));
                }
                bic.headers.insert(bic.headers.end(), { "k (" + type + ")", "BIC " + type });
                bic.columns.push_back(ks);
                bic.columns.push_back(values);
                bic.series.push_back({ "BIC " + type, bic.columns.size() - 2, bic.columns.size() - 1, true,
                                       colourOf(bic.series.size()), 0.0 });
            }
            if (best_column != std::string::npos)
                for (sal_Int32 r = 0; r < candidates.getLength(); ++r)
                    if (numberAt(candidates, r, static_cast<sal_Int32>(best_column)) == 1.0)
                    {
                        bic.headers.insert(bic.headers.end(), { "chosen k", "chosen BIC" });
                        bic.columns.push_back({ numberAt(candidates, r, static_cast<sal_Int32>(k_column)) });
                        bic.columns.push_back({ numberAt(candidates, r, static_cast<sal_Int32>(bic_column)) });
                        bic.series.push_back({ "chosen", bic.columns.size() - 2, bic.columns.size() - 1, false,
                                               0x000000, 3.0 });
                    }
            plots.push_back(bic);
        }
    }
    return plots;
}

Plot residualPlot(const Request& request, const Outcome& outcome)
{
    Plot plot;
    plot.title = "Standardised residuals against fitted values";
    plot.x_title = "fitted value";
    plot.y_title = "residual / scale";
    const InputRange& y = request.ranges.at("y");
    const Cells residuals = cellsOf(findTable(outcome, "residuals"));
    const Cells weights = cellsOf(findTable(outcome, "weights"));
    double scale = summaryValue(outcome, "scale");
    if (!(scale > 0.0))
        scale = 1.0;
    plot.headers = { "fitted", "kept", "outlier", "line x", "+2.5", "-2.5" };
    plot.columns.resize(6);
    const std::size_t step = std::max<std::size_t>(1, static_cast<std::size_t>(y.cells.getLength()) / kMostPoints + 1);
    double low = std::numeric_limits<double>::infinity(), high = -low;
    for (sal_Int32 r = 0; r < y.cells.getLength(); r += static_cast<sal_Int32>(step))
    {
        const double response = numberAt(y.cells, r, 0), residual = numberAt(residuals, r, 0),
                     weight = numberAt(weights, r, 0);
        if (!std::isfinite(response) || !std::isfinite(residual))
            continue;
        const double fitted = response - residual;
        low = std::min(low, fitted);
        high = std::max(high, fitted);
        plot.columns[0].push_back(fitted);
        plot.columns[1].push_back(weight == 0.0 ? kNaN : residual / scale);
        plot.columns[2].push_back(weight == 0.0 ? residual / scale : kNaN);
    }
    if (std::isfinite(low))
    {
        plot.columns[3] = { low, high };
        plot.columns[4] = { 2.5, 2.5 };
        plot.columns[5] = { -2.5, -2.5 };
    }
    plot.series = { { "kept", 0, 1, false, colourOf(0), 1.6 },
                    { "outlier", 0, 2, false, colourOf(3), 2.2 },
                    { "+2.5", 3, 4, true, 0x808080, 0.0 },
                    { "-2.5", 3, 5, true, 0x808080, 0.0 } };
    return plot;
}

Plot criterionPlot(const Request& request, const Outcome& outcome)
{
    const ReportTable* subsets = findTable(outcome, "subsets");
    const Cells rows = cellsOf(subsets);
    const std::string criterion = request.values.count("criterion") ? request.values.at("criterion") : "validation";
    const std::string header = criterion == "cp" ? "Cp" : criterion == "bic" ? "BIC" : criterion == "adjr2"
                                                                                        ? "adjusted R2"
                                                                                        : "validation error";
    Plot plot;
    plot.title = header + " against subset size";
    plot.title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(plot.title[0])));
    plot.x_title = "predictors in the subset";
    plot.x_step = 1.0;
    plot.y_title = header;
    const std::size_t size_column = columnOf(subsets, "size"), rank_column = columnOf(subsets, "rank"),
                      value_column = columnOf(subsets, header), chosen_column = columnOf(subsets, "chosen");
    if (size_column == std::string::npos || value_column == std::string::npos)
        return plot;
    plot.headers = { "size", header, "chosen size", "chosen " + header };
    plot.columns.resize(4);
    for (sal_Int32 r = 0; r < rows.getLength(); ++r)
    {
        if (rank_column != std::string::npos && numberAt(rows, r, static_cast<sal_Int32>(rank_column)) != 1.0)
            continue;
        const double size = numberAt(rows, r, static_cast<sal_Int32>(size_column));
        const double value = numberAt(rows, r, static_cast<sal_Int32>(value_column));
        plot.columns[0].push_back(size);
        plot.columns[1].push_back(value);
        if (chosen_column != std::string::npos && numberAt(rows, r, static_cast<sal_Int32>(chosen_column)) == 1.0)
        {
            plot.columns[2].push_back(size);
            plot.columns[3].push_back(value);
        }
    }
    plot.series = { { header, 0, 1, true, colourOf(0), 0.0 }, { "chosen size", 2, 3, false, colourOf(3), 3.0 } };
    return plot;
}

// The first data set's histogram (as a density) with the fitted mixture's density.
Plot histogramPlot(const Request& request, const Outcome& outcome)
{
    const InputRange& data = request.ranges.at("data");
    Plot plot;
    const std::string name = label(data, 0, "data set 1");
    plot.title = "Histogram of " + name + " with the fitted density";
    plot.x_title = name;
    plot.y_title = "density";
    std::vector<double> values;
    for (sal_Int32 r = 0; r < data.cells.getLength(); ++r)
    {
        const double v = numberAt(data.cells, r, 0);
        if (std::isfinite(v) && v > 0.0)
            values.push_back(v);
    }
    if (values.size() < 2)
        return plot;
    const auto [low_it, high_it] = std::minmax_element(values.begin(), values.end());
    const double low = *low_it, high = *high_it;
    if (!(high > low))
        return plot;
    const std::size_t bins = std::clamp<std::size_t>(static_cast<std::size_t>(std::sqrt(values.size())), 10, 40);
    const double width = (high - low) / static_cast<double>(bins);
    std::vector<double> counts(bins, 0.0);
    for (double v : values)
        counts[std::min(bins - 1, static_cast<std::size_t>((v - low) / width))] += 1.0;
    plot.headers = { "x", "histogram", "x ", "fitted density" };
    plot.columns.resize(4);
    // The histogram's outline: up, across and down each bin.
    for (std::size_t b = 0; b < bins; ++b)
    {
        const double height = counts[b] / (static_cast<double>(values.size()) * width);
        const double left = low + width * static_cast<double>(b), right = left + width;
        for (const auto& [x, y] : { std::pair{ left, 0.0 }, std::pair{ left, height }, std::pair{ right, height },
                                    std::pair{ right, 0.0 } })
        {
            plot.columns[0].push_back(x);
            plot.columns[1].push_back(y);
        }
    }
    // The fitted mixture of the first data set: the parameters' rows of its name (or the first rows).
    const ReportTable* parameters = findTable(outcome, "parameters");
    const Cells rows = cellsOf(parameters);
    const std::size_t set_column = columnOf(parameters, "data set"), alpha_column = columnOf(parameters, "alpha"),
                      mu_column = columnOf(parameters, "mu"), lambda_column = columnOf(parameters, "lambda");
    std::vector<std::array<double, 3>> components;
    if (alpha_column != std::string::npos && mu_column != std::string::npos && lambda_column != std::string::npos)
    {
        Any first_set;
        for (sal_Int32 r = 0; r < rows.getLength(); ++r)
        {
            const Any set = set_column != std::string::npos ? rows[r][static_cast<sal_Int32>(set_column)] : Any();
            if (r == 0)
                first_set = set;
            if (set != first_set)
                break;
            components.push_back({ numberAt(rows, r, static_cast<sal_Int32>(alpha_column)),
                                   numberAt(rows, r, static_cast<sal_Int32>(mu_column)),
                                   numberAt(rows, r, static_cast<sal_Int32>(lambda_column)) });
        }
    }
    for (int i = 0; i <= 200 && !components.empty(); ++i)
    {
        const double x = low + (high - low) * i / 200.0;
        double density = 0.0;
        for (const auto& [alpha, mu, lambda] : components)
            density += alpha * std::sqrt(lambda / (2.0 * M_PI * x * x * x))
                       * std::exp(-lambda * (x - mu) * (x - mu) / (2.0 * mu * mu * x));
        plot.columns[2].push_back(x);
        plot.columns[3].push_back(std::isfinite(density) ? density : kNaN);
    }
    plot.series = { { "histogram", 0, 1, true, 0x7F7F7F, 0.0 }, { "fitted density", 2, 3, true, colourOf(3), 0.0 } };
    return plot;
}

Plot quantilePlot(const Request& request, const Outcome& outcome)
{
    const InputRange& data = request.ranges.at("data");
    Plot plot;
    plot.title = "Sorted values (quantile function), the chosen quantiles marked";
    plot.x_title = "p";
    plot.x_min = 0.0;
    plot.x_max = 1.0;
    plot.y_title = "value";
    plot.headers.push_back("p");
    plot.columns.emplace_back();
    for (int i = 0; i <= 100; ++i)
        plot.columns[0].push_back(i / 100.0);
    const ReportTable* statistics = findTable(outcome, "statistics");
    const Cells table = cellsOf(statistics);
    for (std::size_t g = 0; g < outcome.quantile_curves.size(); ++g)
    {
        if (outcome.quantile_curves[g].empty())
            continue;
        const std::string name = label(data, g, "group");
        plot.headers.push_back(name);
        plot.columns.push_back(outcome.quantile_curves[g]);
        plot.series.push_back({ name, 0, plot.columns.size() - 1, true, colourOf(g), 0.0 });
        std::vector<double> ps, values;
        for (std::size_t r = 0; statistics != nullptr && r < statistics->table.row_labels.size(); ++r)
        {
            const std::string& row = statistics->table.row_labels[r];
            if (row.rfind("quantile ", 0) != 0)
                continue;
            // "quantile 0.05", or "quantile 0,05" in a locale of decimal commas.
            std::string p = row.substr(9);
            std::replace(p.begin(), p.end(), ',', '.');
            ps.push_back(rtl::math::stringToDouble(fromUtf8(p), '.', 0));
            values.push_back(numberAt(table, static_cast<sal_Int32>(r), static_cast<sal_Int32>(g)));
        }
        plot.headers.insert(plot.headers.end(), { "p (" + name + ")", "quantiles of " + name });
        plot.columns.push_back(ps);
        plot.columns.push_back(values);
        plot.series.push_back({ "quantiles of " + name, plot.columns.size() - 2, plot.columns.size() - 1, false,
                                colourOf(g), 2.6 });
    }
    return plot;
}

Reference<css::chart2::data::XLabeledDataSequence>
sequence(const Reference<css::uno::XComponentContext>& context,
         const Reference<css::chart2::data::XDataProvider>& provider, const OUString& values, const char* role,
         const OUString& label)
{
    const Reference<css::chart2::data::XDataSequence> data = provider->createDataSequenceByRangeRepresentation(values);
    Reference<css::beans::XPropertySet>(data, UNO_QUERY_THROW)->setPropertyValue("Role", Any(OUString::createFromAscii(role)));
    const Reference<css::chart2::data::XLabeledDataSequence> labelled(
        css::chart2::data::LabeledDataSequence::create(context), UNO_QUERY_THROW);
    labelled->setValues(data);
    if (!label.isEmpty())
    {
        const Reference<css::chart2::data::XDataSequence> name = provider->createDataSequenceByRangeRepresentation(label);
        Reference<css::beans::XPropertySet>(name, UNO_QUERY_THROW)->setPropertyValue("Role", Any(OUString("label")));
        labelled->setLabel(name);
    }
    return labelled;
}

// Column c of block, below its header row, or that column's header cell, as
// the chart's data provider reads a range.
OUString columnReference(const Reference<css::sheet::XSpreadsheetDocument>& document,
                         const css::table::CellRangeAddress& block, std::size_t c, bool header)
{
    const sal_Int32 column = block.StartColumn + static_cast<sal_Int32>(c);
    return rangeReference(document,
                          header ? css::table::CellRangeAddress(block.Sheet, column, block.StartRow, column, block.StartRow)
                                 : css::table::CellRangeAddress(block.Sheet, column, block.StartRow + 1, column,
                                                                block.EndRow),
                          true);
}
} // namespace

std::vector<Plot> plotsOf(const Request& request, const Outcome& outcome)
{
    const std::string& command = request.analysis->command;
    std::vector<Plot> plots;
    if (command == "median")
        plots.push_back(quantilePlot(request, outcome));
    else if (command == "kmeans")
        plots.push_back(groupScatter("Clusters and their centroids", request.ranges.at("data"),
                                     cellsOf(findTable(outcome, "labels")), cellsOf(findTable(outcome, "centroids")),
                                     "cluster", "centroid"));
    else if (command == "gmm")
        plots = mixturePlots(request, outcome);
    else if (command == "lts")
        plots.push_back(residualPlot(request, outcome));
    else if (command == "bestsubset")
        plots.push_back(criterionPlot(request, outcome));
    else if (command == "igmm")
        plots.push_back(histogramPlot(request, outcome));
    plots.erase(std::remove_if(plots.begin(), plots.end(), [](const Plot& plot) { return plot.series.empty(); }),
                plots.end());
    return plots;
}

void addChart(const Reference<css::uno::XComponentContext>& context, const Reference<css::sheet::XSpreadsheet>& sheet,
              const Reference<css::sheet::XSpreadsheetDocument>& document, const std::string& name,
              const css::awt::Rectangle& rectangle,
              const Plot& plot, const css::table::CellRangeAddress& block)
{
    const Reference<css::table::XTableCharts> charts =
        Reference<css::table::XTableChartsSupplier>(sheet, UNO_QUERY_THROW)->getCharts();
    OUString chart_name = fromUtf8(name);
    for (int n = 2; Reference<css::container::XNameAccess>(charts, UNO_QUERY_THROW)->hasByName(chart_name); ++n)
        chart_name = fromUtf8(name + " " + std::to_string(n));
    charts->addNewByName(chart_name, rectangle, sequenceOf<css::table::CellRangeAddress>({ block }), true, false);
    const Reference<css::document::XEmbeddedObjectSupplier> embedded(
        Reference<css::container::XNameAccess>(charts, UNO_QUERY_THROW)->getByName(chart_name), UNO_QUERY_THROW);
    const Reference<css::chart2::XChartDocument> chart(embedded->getEmbeddedObject(), UNO_QUERY_THROW);
    const Reference<css::chart::XChartDocument> old_chart(chart, UNO_QUERY_THROW);
    old_chart->setDiagram(Reference<css::chart::XDiagram>(
        Reference<css::lang::XMultiServiceFactory>(old_chart, UNO_QUERY_THROW)->createInstance("com.sun.star.chart.XYDiagram"),
        UNO_QUERY_THROW));
    const Reference<css::beans::XPropertySet> chart_properties(old_chart, UNO_QUERY_THROW);
    chart_properties->setPropertyValue("HasMainTitle", Any(true));
    Reference<css::beans::XPropertySet>(old_chart->getTitle(), UNO_QUERY_THROW)
        ->setPropertyValue("String", Any(fromUtf8(plot.title)));
    chart_properties->setPropertyValue("HasLegend", Any(true));
    const Reference<css::chart::XDiagram> diagram = old_chart->getDiagram();
    const Reference<css::beans::XPropertySet> diagram_properties(diagram, UNO_QUERY_THROW);
    diagram_properties->setPropertyValue("HasXAxisTitle", Any(true));
    diagram_properties->setPropertyValue("HasYAxisTitle", Any(true));
    Reference<css::beans::XPropertySet>(Reference<css::chart::XAxisXSupplier>(diagram, UNO_QUERY_THROW)->getXAxisTitle(),
                                        UNO_QUERY_THROW)
        ->setPropertyValue("String", Any(fromUtf8(plot.x_title)));
    Reference<css::beans::XPropertySet>(Reference<css::chart::XAxisYSupplier>(diagram, UNO_QUERY_THROW)->getYAxisTitle(),
                                        UNO_QUERY_THROW)
        ->setPropertyValue("String", Any(fromUtf8(plot.y_title)));
    // The legend below the plot, which keeps the plot's width; each axis
    // where the other starts (not through 0, across the points); the x
    // axis's step and range where the plot gives them (whole k, p in [0, 1]).
    Reference<css::beans::XPropertySet>(old_chart->getLegend(), UNO_QUERY_THROW)
        ->setPropertyValue("Alignment", Any(css::chart::ChartLegendPosition_BOTTOM));
    const Reference<css::beans::XPropertySet> x_axis(Reference<css::chart::XAxisXSupplier>(diagram, UNO_QUERY_THROW)->getXAxis(),
                                                     UNO_QUERY_THROW);
    const Reference<css::beans::XPropertySet> y_axis(Reference<css::chart::XAxisYSupplier>(diagram, UNO_QUERY_THROW)->getYAxis(),
                                                     UNO_QUERY_THROW);
    x_axis->setPropertyValue("CrossoverPosition", Any(css::chart::ChartAxisPosition_START));
    y_axis->setPropertyValue("CrossoverPosition", Any(css::chart::ChartAxisPosition_START));
    if (plot.x_step > 0.0)
    {
        x_axis->setPropertyValue("AutoStepMain", Any(false));
        x_axis->setPropertyValue("StepMain", Any(plot.x_step));
    }
    if (std::isfinite(plot.x_min))
    {
        x_axis->setPropertyValue("AutoMin", Any(false));
        x_axis->setPropertyValue("Min", Any(plot.x_min));
    }
    if (std::isfinite(plot.x_max))
    {
        x_axis->setPropertyValue("AutoMax", Any(false));
        x_axis->setPropertyValue("Max", Any(plot.x_max));
    }

    const Reference<css::chart2::data::XDataProvider> provider = chart->getDataProvider();
    std::vector<Reference<css::chart2::XDataSeries>> all;
    for (const PlotSeries& item : plot.series)
    {
        const Reference<css::chart2::XDataSeries> series(
            context->getServiceManager()->createInstanceWithContext("com.sun.star.chart2.DataSeries", context),
            UNO_QUERY_THROW);
        Reference<css::chart2::data::XDataSink>(series, UNO_QUERY_THROW)
            ->setData(sequenceOf<Reference<css::chart2::data::XLabeledDataSequence>>({ sequence(context, provider, columnReference(document, block, item.x, false), "values-x",
                                 OUString()),
                        sequence(context, provider, columnReference(document, block, item.y, false), "values-y",
                                 columnReference(document, block, item.y, true)) }));
        const Reference<css::beans::XPropertySet> properties(series, UNO_QUERY_THROW);
        properties->setPropertyValue("Color", Any(item.colour));
        css::chart2::Symbol symbol;
        if (item.line)
        {
            properties->setPropertyValue("LineStyle", Any(css::drawing::LineStyle_SOLID));
            properties->setPropertyValue("LineWidth", Any(static_cast<sal_Int32>(35)));
            symbol.Style = css::chart2::SymbolStyle_NONE;
        }
        else
        {
            properties->setPropertyValue("LineStyle", Any(css::drawing::LineStyle_NONE));
            symbol.Style = css::chart2::SymbolStyle_STANDARD;
            // chart2's standard symbols: 1 a diamond (centres, marks), 8 a circle (data).
            symbol.StandardSymbol = item.symbol_mm >= 2.5 ? 1 : 8;
            symbol.Size = css::awt::Size(static_cast<sal_Int32>(item.symbol_mm * 100), static_cast<sal_Int32>(item.symbol_mm * 100));
            symbol.FillColor = item.colour;
            symbol.BorderColor = item.colour;
        }
        properties->setPropertyValue("Symbol", Any(symbol));
        all.push_back(series);
    }
    const Reference<css::chart2::XCoordinateSystemContainer> systems(chart->getFirstDiagram(), UNO_QUERY_THROW);
    const Reference<css::chart2::XChartTypeContainer> types(systems->getCoordinateSystems()[0], UNO_QUERY_THROW);
    Reference<css::chart2::XDataSeriesContainer>(types->getChartTypes()[0], UNO_QUERY_THROW)
        ->setDataSeries(Sequence<Reference<css::chart2::XDataSeries>>(all.data(), static_cast<sal_Int32>(all.size())));
}
} // namespace statgpu::dialogs
