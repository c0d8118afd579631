// cells.cxx: the one converter from Calc's cells to numbers (see cells.hxx).
#include "cells.hxx"

#include "calc_errors.hxx"

#include <com/sun/star/beans/NamedValue.hpp>
#include <com/sun/star/configuration/theDefaultProvider.hpp>
#include <com/sun/star/container/XNameAccess.hpp>
#include <com/sun/star/i18n/LocaleData2.hpp>
#include <com/sun/star/lang/XMultiServiceFactory.hpp>

#include <rtl/math.hxx>

#include <cmath>
#include <utility>

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

namespace
{
css::uno::Reference<css::uno::XComponentContext>& officeContext()
{
    static css::uno::Reference<css::uno::XComponentContext> context;
    return context;
}

rtl::OUString configurationValue(const css::uno::Reference<css::lang::XMultiServiceFactory>& provider,
                                 const char* path, const char* name)
{
    const css::beans::NamedValue node("nodepath", Any(rtl::OUString::createFromAscii(path)));
    const Any argument(node);
    const Sequence<Any> arguments(&argument, 1);
    const css::uno::Reference<css::container::XNameAccess> access(
        provider->createInstanceWithArguments("com.sun.star.configuration.ConfigurationAccess",
                                              arguments),
        css::uno::UNO_QUERY_THROW);
    rtl::OUString value;
    access->getByName(rtl::OUString::createFromAscii(name)) >>= value;
    return value;
}
} // namespace

void setOfficeContext(const css::uno::Reference<css::uno::XComponentContext>& context)
{
    officeContext() = context;
}

namespace
{
// The office's locale (Tools > Options > Language Settings > Languages >
// Locale setting, or the system's where that is "Default").
css::lang::Locale officeLocale(const css::uno::Reference<css::uno::XComponentContext>& context)
{
    const css::uno::Reference<css::lang::XMultiServiceFactory> provider =
        css::configuration::theDefaultProvider::get(context);
    rtl::OUString tag = configurationValue(provider, "/org.openoffice.Setup/L10N", "ooSetupSystemLocale");
    if (tag.isEmpty())  // "Default": the system's
        tag = configurationValue(provider, "/org.openoffice.System/L10N", "Locale");
    // A BCP 47 tag: "de-DE" as language and country, anything longer as
    // the office writes such tags ("qlt" and the tag).
    const sal_Int32 dash = tag.indexOf('-');
    const bool simple = dash > 0 && tag.indexOf('-', dash + 1) < 0;
    return simple ? css::lang::Locale(tag.copy(0, dash), tag.copy(dash + 1), "")
           : dash < 0 ? css::lang::Locale(tag, "", "")
                      : css::lang::Locale("qlt", "", tag);
}

// The words the office's locale writes TRUE and FALSE with ("WAHR" and
// "FALSCH" in German), which Calc reads as 1 and 0 where a number is needed;
// English's where the locale cannot be read.
std::pair<rtl::OUString, rtl::OUString> officeBooleanWords()
{
    try
    {
        const css::uno::Reference<css::uno::XComponentContext>& context = officeContext();
        if (context.is())
        {
            const Sequence<rtl::OUString> words =
                css::i18n::LocaleData2::create(context)->getReservedWord(officeLocale(context));
            // css::i18n::reservedWords: TRUE_WORD 0, FALSE_WORD 1.
            if (words.getLength() > 1 && !words[0].isEmpty() && !words[1].isEmpty())
                return { words[0], words[1] };
        }
    }
    catch (const css::uno::Exception&)
    {
    }
    return { "TRUE", "FALSE" };
}

// Whether text is word in any case, as Calc compares a boolean word.
bool sameWord(const rtl::OUString& text, const rtl::OUString& word)
{
    return text.equalsIgnoreAsciiCase(word) || text.toAsciiUpperCase() == word.toAsciiUpperCase();
}
} // namespace

sal_Unicode officeDecimalSeparator()
{
    try
    {
        const css::uno::Reference<css::uno::XComponentContext>& context = officeContext();
        if (!context.is())
            return '.';
        const rtl::OUString decimal =
            css::i18n::LocaleData2::create(context)->getLocaleItem(officeLocale(context)).decimalSeparator;
        return decimal.getLength() == 1 ? decimal[0] : u'.';
    }
    catch (const css::uno::Exception&)
    {
        return '.';
    }
}

bool textToNumber(const rtl::OUString& text, double& value)
{
    rtl::OUString number = text.trim();
    // The locale's words for TRUE and FALSE are 1 and 0, as Calc reads them.
    const auto [true_word, false_word] = officeBooleanWords();
    if (sameWord(number, true_word) || sameWord(number, false_word))
    {
        value = sameWord(number, true_word) ? 1.0 : 0.0;
        return true;
    }
    // The locale's decimal separator, as Calc reads text where a number is
    // needed. Where it is not '.', a text with '.' is refused rather than read
    // one way or the other: "1.000" is a thousand to a German reader, 1 to an
    // English one (Calc's German reading; a misread MaxIter of 1 had been
    // silent).
    const sal_Unicode decimal = officeDecimalSeparator();
    if (decimal != u'.')
    {
        if (number.indexOf('.') >= 0)
            return false;
        number = number.replace(decimal, u'.');
    }
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

std::size_t numberCount(const Sequence<Sequence<Any>>& range, CellPolicy policy)
{
    if (policy.empty == EmptyCells::AsZero && policy.text == TextCells::Convert)
        return cellCount(range);
    std::size_t count = 0;
    for (const Sequence<Any>& row : range)
        for (const Any& cell : row)
        {
            const TypeClass type = cell.getValueTypeClass();
            count += type != css::uno::TypeClass_VOID && type != css::uno::TypeClass_STRING;
        }
    return count;
}

sal_Int32 usedRowCount(const Sequence<Sequence<Any>>& range)
{
    sal_Int32 rows = range.getLength();
    for (; rows > 0; --rows)
        for (const Any& cell : range[rows - 1])
        {
            double value;
            const CellKind kind = classifyCell(cell, value);
            if (kind == CellKind::Text ? !static_cast<const rtl::OUString*>(cell.getValue())->isEmpty()
                                       : kind != CellKind::Empty)
                return rows;
        }
    return 0;
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
