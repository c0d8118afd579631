// statgpu_addin.cxx: the Calc add-in component: boilerplate, metadata from the
// generated table, the engine context and GPUINFO. The Calc functions live in
// the files of their methods (order_statistics.cxx, kmeans.cxx, lts.cxx) on
// what call.hxx shares. See statgpu_addin.hxx.
#include "call.hxx"
#include "menu_handler.hxx"

#include <com/sun/star/beans/XPropertySet.hpp>
#include <com/sun/star/lang/XMultiServiceFactory.hpp>
#include <com/sun/star/lang/XSingleServiceFactory.hpp>
#include <cppuhelper/factory.hxx>
#include <cppuhelper/supportsservice.hxx>
#include <uno/environment.h>
#include <uno/lbnames.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace statgpu::addin
{
namespace
{
// ---- Metadata ---------------------------------------------------------------

const FunctionInfo* findFunction(const OUString& programmatic_name)
{
    for (const FunctionInfo& function : kFunctions)
        if (programmatic_name.equalsAscii(function.programmatic_name))
            return &function;
    return nullptr;
}

const ArgumentInfo* findArgument(const OUString& programmatic_name, sal_Int32 argument)
{
    const FunctionInfo* function = findFunction(programmatic_name);
    if (!function || argument < 0 || static_cast<std::size_t>(argument) >= function->argument_count)
        return nullptr;
    return &function->arguments[argument];
}

// The Function Wizard's and the service manager's questions must not throw
// at all: a failure to build the answer (out of memory) gives the fallback,
// an empty text by default, which Calc shows as no name or no description.
template <typename Answer, typename Result = decltype(std::declval<Answer>()())>
Result answered(Answer&& answer, Result fallback = Result()) noexcept
{
    try
    {
        return answer();
    }
    catch (...)
    {
        return fallback;
    }
}

statgpu_backend backendFromEnvironment()
{
    // STATGPU_BACKEND=cpu|cuda|auto chooses the backend (tests use it); unset
    // or anything else is auto.
    const char* name = std::getenv("STATGPU_BACKEND");
    if (name && std::strcmp(name, "cpu") == 0)
        return STATGPU_BACKEND_CPU;
    if (name && std::strcmp(name, "cuda") == 0)
        return STATGPU_BACKEND_CUDA;
    return STATGPU_BACKEND_AUTO;
}

} // namespace

// ---- Service boilerplate ----------------------------------------------------

StatGpuAddIn::StatGpuAddIn(css::uno::Reference<css::uno::XComponentContext> context)
    : component_context_(std::move(context))
{
    setOfficeContext(component_context_);
}


OUString StatGpuAddIn::implementationName() { return OUString::createFromAscii(kImplementationName); }

Sequence<OUString> StatGpuAddIn::serviceNames()
{
    Sequence<OUString> names(2);
    names.getArray()[0] = "com.sun.star.sheet.AddIn";
    names.getArray()[1] = OUString::createFromAscii(kServiceName);
    return names;
}

// Like XAddIn's questions below, these answer through answered(): nothing
// thrown while building an answer leaves the component.
OUString SAL_CALL StatGpuAddIn::getServiceName()
{
    return answered([] { return OUString::createFromAscii(kServiceName); });
}
OUString SAL_CALL StatGpuAddIn::getImplementationName()
{
    return answered([] { return implementationName(); });
}
sal_Bool SAL_CALL StatGpuAddIn::supportsService(const OUString& service_name)
{
    return answered([&] { return cppu::supportsService(this, service_name); }, false);
}
Sequence<OUString> SAL_CALL StatGpuAddIn::getSupportedServiceNames()
{
    return answered([] { return serviceNames(); }, Sequence<OUString>());
}

void SAL_CALL StatGpuAddIn::setLocale(const css::lang::Locale& locale) { locale_ = locale; }
css::lang::Locale SAL_CALL StatGpuAddIn::getLocale() { return locale_; }

// ---- XAddIn: the generated table --------------------------------------------

OUString SAL_CALL StatGpuAddIn::getProgrammaticFuntionName(const OUString& display_name)
{
    return answered([&] {
        for (const FunctionInfo& function : kFunctions)
            if (display_name.equalsIgnoreAsciiCaseAscii(function.display_name))
                return OUString::createFromAscii(function.programmatic_name);
        return OUString();
    });
}

OUString SAL_CALL StatGpuAddIn::getDisplayFunctionName(const OUString& programmatic_name)
{
    return answered([&] {
        const FunctionInfo* function = findFunction(programmatic_name);
        return function ? fromUtf8(function->display_name) : OUString();
    });
}

OUString SAL_CALL StatGpuAddIn::getFunctionDescription(const OUString& programmatic_name)
{
    return answered([&] {
        const FunctionInfo* function = findFunction(programmatic_name);
        return function ? fromUtf8(function->description) : OUString();
    });
}

OUString SAL_CALL StatGpuAddIn::getDisplayArgumentName(const OUString& programmatic_name, sal_Int32 argument)
{
    return answered([&] {
        const ArgumentInfo* info = findArgument(programmatic_name, argument);
        return info ? fromUtf8(info->display_name) : OUString();
    });
}

OUString SAL_CALL StatGpuAddIn::getArgumentDescription(const OUString& programmatic_name, sal_Int32 argument)
{
    return answered([&] {
        const ArgumentInfo* info = findArgument(programmatic_name, argument);
        return info ? fromUtf8(info->description) : OUString();
    });
}

OUString SAL_CALL StatGpuAddIn::getProgrammaticCategoryName(const OUString&)
{
    return answered([] { return OUString::createFromAscii(kCategory); });
}

OUString SAL_CALL StatGpuAddIn::getDisplayCategoryName(const OUString& programmatic_name)
{
    return getProgrammaticCategoryName(programmatic_name);
}

// ---- The engine context -----------------------------------------------------

statgpu_context* StatGpuAddIn::engineContext()
{
    if (context_)
        return context_.get();
    if (statgpu_version_number() != STATGPU_VERSION_NUMBER)
    {
        const std::string message = std::string("the statgpu engine is version ") + statgpu_version_string()
                                    + ", the add-in was built for " STATGPU_VERSION_STRING;
        raiseCalcError(CalcError::NoValue, message.c_str());
    }
    statgpu_context_params params;
    statgpu_context_params_init(&params);
    params.backend = backendFromEnvironment();
    params.progress = CallProgress::engineCallback;
    params.progress_user_data = &progress_slot_;
    statgpu_context* context = nullptr;
    checkEngineStatus(statgpu_context_create(&params, &context), nullptr);
    context_.reset(context);
    return context;
}

Any StatGpuAddIn::resultTable(const TableMaker& make_tables, const std::string& name,
                              const std::vector<bool>& complete, const std::vector<std::string>& names)
{
    const std::vector<std::size_t> rows = sourceRows(complete);
    ReportRun* const report = currentReportRun();
    std::vector<const char*> name_texts;
    for (const std::string& text : names.empty() && report != nullptr ? report->variable_names : names)
        name_texts.push_back(text.c_str());
    statgpu_table_params params;
    statgpu_table_params_init(&params);
    params.variable_names = name_texts.empty() ? nullptr : name_texts.data();
    params.source_row_count = complete.size();
    params.source_rows = rows.data();
    // A dialog's report wants every table; a cell only the one it shows.
    params.table_name = report != nullptr ? nullptr : name.c_str();
    statgpu_table_set* set = nullptr;
    runEngine("tables", [&](statgpu_context* context) { return make_tables(context, &params, &set); });
    const std::unique_ptr<statgpu_table_set, void (*)(statgpu_table_set*)> owned(set, statgpu_table_set_destroy);
    const statgpu_table* table = statgpu_table_set_find(set, name.c_str());
    if (table == nullptr)
        raiseCalcError(CalcError::NoValue, "the result has no such table");
    if (report != nullptr)
    {
        report->tables.clear();
        for (std::size_t index = 0; index < statgpu_table_set_count(set); ++index)
            report->tables.push_back(collectTable(*statgpu_table_set_get(set, index)));
    }
    return tableCells(*table);
}

OUString SAL_CALL StatGpuAddIn::gpuInfo()
{
    return guarded([&] {
        EngineLock lock(*this);
        statgpu_context* context = engineContext();
        statgpu_backend_report report;
        checkEngineStatus(statgpu_context_backend_report(context, &report), context);
        char text[512];
        checkEngineStatus(statgpu_backend_describe(&report, text, sizeof text), context);
        return fromUtf8(text);
    });
}

} // namespace statgpu::addin

// ---- Component registration -------------------------------------------------

namespace
{
// The office's component context (for the progress bar of long calls, and
// the menu's dialogs), or empty.
css::uno::Reference<css::uno::XComponentContext>
officeContext(const css::uno::Reference<css::lang::XMultiServiceFactory>& service_manager)
{
    css::uno::Reference<css::uno::XComponentContext> context;
    try
    {
        css::uno::Reference<css::beans::XPropertySet> properties(service_manager, css::uno::UNO_QUERY);
        if (properties.is())
            properties->getPropertyValue("DefaultContext") >>= context;
    }
    catch (const css::uno::Exception&)
    {
    }
    return context;
}

css::uno::Reference<css::uno::XInterface> SAL_CALL
createStatGpuAddIn(const css::uno::Reference<css::lang::XMultiServiceFactory>& service_manager)
{
    return static_cast<cppu::OWeakObject*>(new statgpu::addin::StatGpuAddIn(officeContext(service_manager)));
}

css::uno::Reference<css::uno::XInterface> SAL_CALL
createMenuHandler(const css::uno::Reference<css::lang::XMultiServiceFactory>& service_manager)
{
    return static_cast<cppu::OWeakObject*>(new statgpu::dialogs::MenuHandler(officeContext(service_manager)));
}
} // namespace

extern "C" {

SAL_DLLPUBLIC_EXPORT void SAL_CALL component_getImplementationEnvironment(const char** environment_type_name,
                                                                          uno_Environment**)
{
    *environment_type_name = CPPU_CURRENT_LANGUAGE_BINDING_NAME;
}

SAL_DLLPUBLIC_EXPORT void* SAL_CALL component_getFactory(const char* implementation_name, void* service_manager,
                                                         void* /*registry_key*/)
{
    using statgpu::addin::StatGpuAddIn;
    using statgpu::dialogs::MenuHandler;
    if (!service_manager)
        return nullptr;
    if (MenuHandler::implementationName().equalsAscii(implementation_name))
    {
        // A handler per frame: the office makes one and initializes it with the frame.
        css::uno::Reference<css::lang::XSingleServiceFactory> factory = cppu::createSingleFactory(
            static_cast<css::lang::XMultiServiceFactory*>(service_manager), MenuHandler::implementationName(),
            createMenuHandler, MenuHandler::serviceNames());
        if (!factory.is())
            return nullptr;
        factory->acquire();
        return factory.get();
    }
    if (!StatGpuAddIn::implementationName().equalsAscii(implementation_name))
        return nullptr;
    // One instance per office process: Calc asks for the service more than once,
    // and the engine context should be made only once.
    css::uno::Reference<css::lang::XSingleServiceFactory> factory = cppu::createOneInstanceFactory(
        static_cast<css::lang::XMultiServiceFactory*>(service_manager), StatGpuAddIn::implementationName(),
        createStatGpuAddIn, StatGpuAddIn::serviceNames());
    if (!factory.is())
        return nullptr;
    factory->acquire();
    return factory.get();
}

} // extern "C"
