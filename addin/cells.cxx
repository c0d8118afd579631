// cells.cxx: the one converter from Calc's cells to numbers (see cells.hxx).
#include "cells.hxx"

#include "calc_errors.hxx"

#include <rtl/math.hxx>

#include <cmath>

namespace statgpu::addin
{
using css::uno::Any;
using css::uno::Sequence;
using css::uno::TypeClass;

CellKind classifyCell(const Any& cell, double& value)
{
    switch (cell.getValueTypeClass())
    {
        case css::uno::TypeClass_VOID:
            return CellKind::Empty;
        case css::uno::TypeClass_DOUBLE:
            value = *static_cast<const double*>(cell.getValue());
            return CellKind::Number;
        case css::uno::TypeClass_STRING:
            return CellKind::Text;
        case css::uno::TypeClass_BOOLEAN:
            value = *static_cast<const sal_Bool*>(cell.getValue()) ? 1.0 : 0.0;
            return CellKind::Number;
        case css::uno::TypeClass_BYTE:
        case css::uno::TypeClass_SHORT:
        case css::uno::TypeClass_UNSIGNED_SHORT:
        case css::uno::TypeClass_LONG:
        case css::uno::TypeClass_UNSIGNED_LONG:
        case css::uno::TypeClass_HYPER:
        case css::uno::TypeClass_UNSIGNED_HYPER:
        case css::uno::TypeClass_FLOAT:
            // Not from a cell, but a number all the same (e.g. from a macro).
            return (cell >>= value) ? CellKind::Number : CellKind::Other;
        default:
            return CellKind::Other;
    }
}

bool textToNumber(const rtl::OUString& text, double& value)
{
    rtl::OUString number = text.trim();
    bool percent = false;
    if (number.endsWith("%"))
    {
        percent = true;
        number = number.copy(0, number.getLength() - 1).trim();
    }
    if (number.isEmpty())
        return false;
    rtl_math_ConversionStatus status = rtl_math_ConversionStatus_Ok;
    sal_Int32 end = 0;
    const double parsed = rtl::math::stringToDouble(number, '.', 0, &status, &end);
    if (status != rtl_math_ConversionStatus_Ok || end != number.getLength() || !std::isfinite(parsed))
        return false;
    value = percent ? parsed / 100.0 : parsed;
    return true;
}

std::size_t cellCount(const Sequence<Sequence<Any>>& range)
{
    std::size_t count = 0;
    for (const Sequence<Any>& row : range)
        count += static_cast<std::size_t>(row.getLength());
    return count;
}

bool readCell(const Any& cell, CellPolicy policy, sal_Int16 argument_position, double& value)
{
    switch (classifyCell(cell, value))
    {
        case CellKind::Number:
            return true;
        case CellKind::Empty:
            value = 0.0;
            return policy.empty == EmptyCells::AsZero;
        case CellKind::Text:
            if (policy.text == TextCells::Skip)
                return false;
            if (!textToNumber(*static_cast<const rtl::OUString*>(cell.getValue()), value))
                raiseCalcError(CalcError::NoValue, "text that is no number where a number is needed");
            return true;
        case CellKind::Other:
            break;
    }
    raiseCalcError(CalcError::IllegalArgument, "a value that no cell holds", argument_position);
}

void appendNumbers(const Sequence<Sequence<Any>>& range, CellPolicy policy,
                   sal_Int16 argument_position, std::vector<double>& numbers)
{
    numbers.reserve(numbers.size() + cellCount(range));
    const Any empty;
    // Calc hands an empty cell of a range of several cells as an empty text:
    // read it as the empty cell it is (PERCENTILE.INC reads it as 0). A lone
    // "" is the text constant it looks like (#VALUE! where text must convert).
    const bool several = cellCount(range) > 1;
    for (const Sequence<Any>& row : range)
    {
        for (const Any& cell : row)
        {
            rtl::OUString text;
            const bool blank = several && (cell >>= text) && text.isEmpty();
            double value;
            if (readCell(blank ? empty : cell, policy, argument_position, value))
                numbers.push_back(value);
        }
    }
}

} // namespace statgpu::addin
