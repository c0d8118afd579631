// calc_errors.hxx: the one place where a failure becomes one of Calc's cell errors.
//
// Calc turns what an add-in function throws into a cell error (sc addincol.cxx):
//   IllegalArgumentException -> Err:502 "Invalid argument"
//   NoConvergenceException   -> Err:523 "The calculation does not converge"
//   any other exception      -> #VALUE! (Err:519)
// Calc's own MEDIAN, SMALL, LARGE and PERCENTILE.INC (7.4) answer #VALUE! for a
// range without numbers and for a rank outside 1..n, and Err:502 for p outside
// [0,1]; the functions here answer the same, so GPU* can replace them.
#pragma once

#include <statgpu.h>

#include <sal/types.h>

namespace statgpu::addin
{
enum class CalcError
{
    IllegalArgument,  // Err:502
    NoValue,          // #VALUE! (Err:519)
    NoConvergence     // Err:523
};

// Throws the exception Calc shows as error. argument_position (0-based) names
// the offending argument of an IllegalArgumentException; -1 when none.
[[noreturn]] void raiseCalcError(CalcError error, const char* message,
                                 sal_Int16 argument_position = -1);

// The Calc error for an engine status other than STATGPU_OK.
CalcError calcErrorOf(statgpu_status status);

// Returns when status is STATGPU_OK; otherwise throws the Calc error for it,
// with the engine's message for the last call on context.
void checkEngineStatus(statgpu_status status, const statgpu_context* context);

} // namespace statgpu::addin
