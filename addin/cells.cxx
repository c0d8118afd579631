// cells.cxx: the one converter from Calc's cells to numbers (see cells.hxx).
#include "cells.hxx"

#include "calc_errors.hxx"

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
            if (policy.text == TextCells::Reject)
                raiseCalcError(CalcError::NoValue, "text where a number is needed");
            return false;
        case CellKind::Other:
            break;
    }
    raiseCalcError(CalcError::IllegalArgument, "a value that no cell holds", argument_position);
}

void appendNumbers(const Sequence<Sequence<Any>>& range, CellPolicy policy,
                   sal_Int16 argument_position, std::vector<double>& numbers)
{
    numbers.reserve(numbers.size() + cellCount(range));
    for (const Sequence<Any>& row : range)
    {
        for (const Any& cell : row)
        {
            double value;
            if (readCell(cell, policy, argument_position, value))
                numbers.push_back(value);
        }
    }
}

} // namespace statgpu::addin
