// cells.hxx: the one converter from the cells Calc hands the add-in to numbers.
//
// Calc passes a range argument declared as sequence< sequence< any > > cell by
// cell: void for an empty cell, a string for text, a double for a number (a
// boolean cell is a number in Calc and arrives as one; a bool any is taken as
// 0 or 1 too). A range holding an error cell never gets here: Calc answers with
// the error itself. Which cells a function skips is its cell policy, named at
// each call; nothing is implied.
#pragma once

#include <com/sun/star/uno/Any.hxx>
#include <com/sun/star/uno/Reference.hxx>
#include <com/sun/star/uno/XComponentContext.hpp>
#include <com/sun/star/uno/Sequence.hxx>
#include <rtl/ustring.hxx>

#include <vector>

namespace statgpu::addin
{
enum class CellKind
{
    Empty,   // a blank cell
    Number,  // a number (or a boolean, as 0 or 1)
    Text,    // a string, including the empty string of a formula
    Other    // anything Calc does not put in a cell; always rejected
};

// What a function does with a cell that holds no number.
enum class EmptyCells
{
    Skip,   // left out, as inside the data range of MEDIAN
    AsZero  // read as 0, as Calc reads an empty cell given for a number (PERCENTILE.INC's p)
};
enum class TextCells
{
    Skip,    // left out, as inside the data range of MEDIAN
    Convert  // the number the text shows, else #VALUE!, as Calc reads text given for a number
};

struct CellPolicy
{
    EmptyCells empty;
    TextCells text;
};

// Data ranges of MEDIAN, SMALL, LARGE and PERCENTILE.INC: Calc skips empty
// cells and text inside a range; so do we.
inline constexpr CellPolicy kDataCells{ EmptyCells::Skip, TextCells::Skip };
// A number argument, or a range of them (GPUQUANTILE's p), cell by cell as
// Calc reads PERCENTILE.INC's p: empty is 0, text is converted (textToNumber).
inline constexpr CellPolicy kParameterCells{ EmptyCells::AsZero, TextCells::Convert };

// The number a text shows, as Calc 7.4 converts text given where a number is
// needed under its default setting ("Convert also locale dependent"): white
// space around it is ignored, the decimal separator of the office's locale
// (officeDecimalSeparator), an exponent and a trailing percent sign are read
// ("0.5", " .5", "5E-1" and "50%" are 0.5 in English; "0,5" in German), and
// the locale's words for TRUE and FALSE in any case are 1 and 0 ("true" in
// English, "WAHR" in German).
// Returns false for anything else, which Calc answers with #VALUE!: empty
// text, "0,5" in English, "abc", a number too large for a double, and in a
// locale whose decimal separator is not '.' any text with a '.' ("1.000":
// Calc reads a thousand there, this refuses rather than guess). Calc also
// reads dates and times in the document's locale ("1/2"); they are no
// probability or count, and here they are #VALUE!.
bool textToNumber(const rtl::OUString& text, double& value);

// The context textToNumber reads the office's locale through (the add-in's,
// set when it is made); without one, '.' is the decimal separator.
void setOfficeContext(const css::uno::Reference<css::uno::XComponentContext>& context);

// The decimal separator of the office's locale (Tools > Options > Language
// Settings > Languages > Locale setting, or the system's where that is
// "Default"), '.' where it cannot be read.
sal_Unicode officeDecimalSeparator();

// Classifies one cell; sets value when the cell is a Number.
CellKind classifyCell(const css::uno::Any& cell, double& value);

// Applies policy to one cell: returns true and sets value when the cell gives
// a number, false when it is skipped; throws the Calc error when it is
// rejected (#VALUE! for text, Err:502 for a value no cell holds).
// argument_position (0-based, as XAddIn counts) is named in the exception.
bool readCell(const css::uno::Any& cell, CellPolicy policy, sal_Int16 argument_position, double& value);

// Appends the numbers of range, row by row, to numbers (readCell on each
// cell), in one pass; the caller reserves room (numberCount) where a range
// may be large. An empty text in a range of several cells is an empty cell:
// Calc hands empty cells so.
void appendNumbers(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& range,
                   CellPolicy policy, sal_Int16 argument_position, std::vector<double>& numbers);

// The count of cells of a range (rows may differ in length in a UNO sequence).
std::size_t cellCount(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& range);

// How many numbers appendNumbers reads from range under policy: every cell
// where empty cells and text give numbers, else the cells that hold one (a
// pass over the cells' types, so that a whole column of a few numbers
// reserves room for those, not for its million cells).
std::size_t numberCount(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& range, CellPolicy policy);

// The rows of range down to the last one holding anything (a number, a text
// that is not empty): a whole column (A:A) handed over as its 1,048,576 rows
// counts as the rows its data fills. A function's per-row output ends there;
// the rows below hold no data to label, and Calc 7.4 takes time quadratic in
// the length of a non-numeric run to read an array result (a million empty
// texts took about a minute).
sal_Int32 usedRowCount(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& range);

} // namespace statgpu::addin
