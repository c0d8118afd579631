// calc_errors.cxx: engine statuses and add-in failures as Calc cell errors (see calc_errors.hxx).
#include "calc_errors.hxx"

#include <com/sun/star/lang/IllegalArgumentException.hpp>
#include <com/sun/star/sheet/NoConvergenceException.hpp>
#include <com/sun/star/uno/RuntimeException.hpp>

#include <rtl/ustring.hxx>

namespace statgpu::addin
{
using rtl::OUString;

void raiseCalcError(CalcError error, const char* message, sal_Int16 argument_position)
{
    const OUString text = "statgpu: " + OUString(message, rtl_str_getLength(message), RTL_TEXTENCODING_UTF8);
    switch (error)
    {
        case CalcError::IllegalArgument:
            throw css::lang::IllegalArgumentException(text, nullptr, argument_position);
        case CalcError::NoConvergence:
            throw css::sheet::NoConvergenceException(text, nullptr);
        case CalcError::NoValue:
            break;
    }
    throw css::uno::RuntimeException(text);
}

CalcError calcErrorOf(statgpu_status status)
{
    switch (status)
    {
        // statgpu's bad-input policy: no numbers, a rank or probability out of
        // range are Err:502 ("invalid argument") for every function, where
        // Calc 7.4's own MEDIAN, SMALL and LARGE show #VALUE! for some of them.
        case STATGPU_ERROR_INVALID_ARGUMENT:
        case STATGPU_ERROR_EMPTY_INPUT:
        case STATGPU_ERROR_NAN_IN_DATA:
            return CalcError::IllegalArgument;
        case STATGPU_ERROR_NO_CONVERGENCE:
            return CalcError::NoConvergence;
        case STATGPU_OK:                      // not an error; callers never ask
        case STATGPU_ERROR_OUT_OF_MEMORY:
        case STATGPU_ERROR_CANCELLED:
        case STATGPU_ERROR_BACKEND:
        case STATGPU_ERROR_INTERNAL:
            break;
    }
    return CalcError::NoValue;
}

void checkEngineStatus(statgpu_status status, const statgpu_context* context)
{
    if (status == STATGPU_OK)
        return;
    const char* message = context ? statgpu_context_last_error(context) : "";
    raiseCalcError(calcErrorOf(status), *message ? message : statgpu_status_string(status));
}

} // namespace statgpu::addin
