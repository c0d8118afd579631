// statgpu_addin.hxx: the Calc add-in component (service org.statgpu.StatGpu).
//
// The UNO glue between Calc and the statgpu engine, and nothing else: service
// boilerplate, XAddIn's metadata looked up in the generated table, and entry
// points that read the cells, validate, call the engine and check the result.
// No statistics are computed here.
#pragma once

#include <statgpu.h>

#include <com/sun/star/lang/Locale.hpp>
#include <com/sun/star/lang/XServiceInfo.hpp>
#include <com/sun/star/lang/XServiceName.hpp>
#include <com/sun/star/sheet/XAddIn.hpp>
#include <cppuhelper/implbase4.hxx>
#include <org/statgpu/XStatGpu.hpp>

#include "statgpu_functions.hxx"

#include <com/sun/star/uno/XComponentContext.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace statgpu::addin
{
using rtl::OUString;

class CallProgress;

struct ContextDestroyer
{
    void operator()(statgpu_context* context) const { statgpu_context_destroy(context); }
};

class StatGpuAddIn final
    : public cppu::WeakImplHelper4<css::sheet::XAddIn,  // and, through it, XLocalizable
                                   css::lang::XServiceName, css::lang::XServiceInfo,
                                   org::statgpu::XStatGpu>
{
public:
    // context: the office's, for the progress bar of long calls; may be empty.
    explicit StatGpuAddIn(css::uno::Reference<css::uno::XComponentContext> context);

    static OUString implementationName();
    static css::uno::Sequence<OUString> serviceNames();

    // XServiceName
    OUString SAL_CALL getServiceName() override;

    // XServiceInfo
    OUString SAL_CALL getImplementationName() override;
    sal_Bool SAL_CALL supportsService(const OUString& service_name) override;
    css::uno::Sequence<OUString> SAL_CALL getSupportedServiceNames() override;

    // XLocalizable: the texts are English only; the locale is kept for getLocale.
    void SAL_CALL setLocale(const css::lang::Locale& locale) override;
    css::lang::Locale SAL_CALL getLocale() override;

    // XAddIn
    OUString SAL_CALL getProgrammaticFuntionName(const OUString& display_name) override;
    OUString SAL_CALL getDisplayFunctionName(const OUString& programmatic_name) override;
    OUString SAL_CALL getFunctionDescription(const OUString& programmatic_name) override;
    OUString SAL_CALL getDisplayArgumentName(const OUString& programmatic_name, sal_Int32 argument) override;
    OUString SAL_CALL getArgumentDescription(const OUString& programmatic_name, sal_Int32 argument) override;
    OUString SAL_CALL getProgrammaticCategoryName(const OUString& programmatic_name) override;
    OUString SAL_CALL getDisplayCategoryName(const OUString& programmatic_name) override;

    // XStatGpu: the Calc functions
    // Data 2 ... Data 30 as numbered parameters (data2, ...; addin/functions.py).
    double SAL_CALL gpuMedian(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& data,
                              STATGPU_GPUMEDIAN_NUMBERED_PARAMETERS,
                              const css::uno::Sequence<css::uno::Any>& moreData) override;
    css::uno::Any SAL_CALL gpuSmall(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& data,
                                    const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& k) override;
    css::uno::Any SAL_CALL gpuLarge(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& data,
                                    const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& k) override;
    css::uno::Any SAL_CALL gpuQuantile(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& data,
                                       const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& p) override;
    css::uno::Any SAL_CALL kmeans(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& data, double k,
                                  const css::uno::Any& output, const css::uno::Any& restarts,
                                  const css::uno::Any& maxIterations, const css::uno::Any& seed) override;
    css::uno::Any SAL_CALL ltsFit(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& y,
                                  const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& x,
                                  const css::uno::Any& alpha, const css::uno::Any& output,
                                  const css::uno::Any& intercept, const css::uno::Any& seed) override;
    css::uno::Any SAL_CALL gmmFit(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& data,
                                 const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& k,
                                  const css::uno::Any& covariance, const css::uno::Any& output,
                                  const css::uno::Any& restarts, const css::uno::Any& maxIterations,
                                  const css::uno::Any& seed) override;
    css::uno::Any SAL_CALL igmmFit(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& data, double k,
                                   const css::uno::Any& output, const css::uno::Any& starts,
                                   const css::uno::Any& maxIterations, const css::uno::Any& seed) override;
    css::uno::Any SAL_CALL bestSubset(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& y,
                                      const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& x,
                                      const css::uno::Any& maxSize, const css::uno::Any& output,
                                      const css::uno::Any& intercept, const css::uno::Any& validation,
                                      const css::uno::Any& criterion, const css::uno::Any& nbest,
                                      const css::uno::Any& seed) override;
    OUString SAL_CALL gpuInfo() override;

private:
    // One engine call, call(context) -> statgpu_status, with everything every
    // call needs (statgpu_addin.cxx); title names it in the status bar.
    template <typename Call> void runEngine(const char* title, Call&& call);
    // The engine context, created at first use; the caller holds engine_mutex_.
    statgpu_context* engineContext();
    // GPUSMALL (largest false) and GPULARGE: the k-th smallest or largest of
    // Data's numbers for each k, through the engine, which may reorder the
    // numbers read instead of copying them.
    css::uno::Any orderStatistics(const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& data,
                                  const css::uno::Sequence<css::uno::Sequence<css::uno::Any>>& k, bool largest,
                                  const char* title);
    // k-means of n_obs rows (column-major, leading dimension n_obs), through the engine.
    std::unique_ptr<statgpu_kmeans_result, void (*)(statgpu_kmeans_result*)>
    fitKmeans(const std::vector<double>& values, std::size_t n_obs, std::size_t n_vars, std::size_t k,
              const statgpu_kmeans_params& params);
    // LTS regression of y on x (n_obs rows, column-major, leading dimension n_obs), through the engine.
    std::unique_ptr<statgpu_lts_result, void (*)(statgpu_lts_result*)>
    fitLts(const std::vector<double>& y, const std::vector<double>& x, std::size_t n_obs, std::size_t n_vars,
           const statgpu_lts_params& params);

    // The table called name of a result, as Calc's array: make_tables is the
    // method's statgpu_<method>_tables on that result; complete marks the
    // rows of the range that were observations.
    using TableMaker = std::function<statgpu_status(statgpu_context*, const statgpu_table_params*,
                                                    statgpu_table_set**)>;
    // names, where not empty, name the data's variables (headers, labels).
    css::uno::Any resultTable(const TableMaker& make_tables, const std::string& name,
                              const std::vector<bool>& complete, const std::vector<std::string>& names = {});

    css::lang::Locale locale_;
    // One context for the whole component; the engine wants one per thread,
    // so every call holds the mutex while it uses the context.
    std::mutex engine_mutex_;
    // The thread holding engine_mutex_: a call that comes back in on that
    // thread (the office handles input while a long call shows its
    // progress, and a recalculation may call a function again) must not
    // wait for itself.
    std::atomic<std::thread::id> engine_owner_{};
    css::uno::Reference<css::uno::XComponentContext> component_context_;
    // The progress of the engine call in flight, for the engine's callback.
    CallProgress* progress_slot_ = nullptr;
    friend class EngineLock;
    std::unique_ptr<statgpu_context, ContextDestroyer> context_;
};

} // namespace statgpu::addin
