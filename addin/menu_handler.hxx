// menu_handler.hxx: the menu Data > Statistics > GPU Statistics (statgpu).
//
// A protocol handler (service com.sun.star.frame.ProtocolHandler) for the
// URLs org.statgpu.dialog:<analysis> that the menu's entries dispatch
// (oxt/Addons.xcu merges them into Calc's Data > Statistics; oxt/
// ProtocolHandler.xcu registers the handler). Each opens its analysis's
// dialog (analysis_dialog.hxx); org.statgpu.dialog:about shows the version
// and the backend (GPUINFO's text); org.statgpu.dialog:stop stops the
// analysis that runs, as the dialog's Cancel does. Only a spreadsheet's
// frame is answered. dispatchWithNotification reports the dialog's control
// (or the about text) as its result, so a test can fill the dialog in.
#pragma once

#include <com/sun/star/frame/XDispatchProvider.hpp>
#include <com/sun/star/frame/XFrame.hpp>
#include <com/sun/star/frame/XNotifyingDispatch.hpp>
#include <com/sun/star/lang/XInitialization.hpp>
#include <com/sun/star/lang/XServiceInfo.hpp>
#include <com/sun/star/uno/XComponentContext.hpp>
#include <cppuhelper/implbase4.hxx>
#include <cppuhelper/weakref.hxx>

namespace statgpu::dialogs
{
class MenuHandler final
    : public cppu::WeakImplHelper4<css::frame::XDispatchProvider, css::frame::XNotifyingDispatch,
                                  css::lang::XInitialization, css::lang::XServiceInfo>
{
public:
    explicit MenuHandler(css::uno::Reference<css::uno::XComponentContext> context);

    static rtl::OUString implementationName();
    static css::uno::Sequence<rtl::OUString> serviceNames();

    // XInitialization: the frame the handler serves.
    void SAL_CALL initialize(const css::uno::Sequence<css::uno::Any>& arguments) override;

    // XDispatchProvider
    css::uno::Reference<css::frame::XDispatch> SAL_CALL queryDispatch(const css::util::URL& url,
                                                                      const rtl::OUString& target_frame,
                                                                      sal_Int32 search_flags) override;
    css::uno::Sequence<css::uno::Reference<css::frame::XDispatch>> SAL_CALL
    queryDispatches(const css::uno::Sequence<css::frame::DispatchDescriptor>& requests) override;

    // XNotifyingDispatch (and XDispatch)
    void SAL_CALL dispatchWithNotification(const css::util::URL& url,
                                           const css::uno::Sequence<css::beans::PropertyValue>& arguments,
                                           const css::uno::Reference<css::frame::XDispatchResultListener>& listener) override;
    void SAL_CALL dispatch(const css::util::URL& url, const css::uno::Sequence<css::beans::PropertyValue>& arguments) override;
    void SAL_CALL addStatusListener(const css::uno::Reference<css::frame::XStatusListener>& listener,
                                    const css::util::URL& url) override;
    void SAL_CALL removeStatusListener(const css::uno::Reference<css::frame::XStatusListener>& listener,
                                       const css::util::URL& url) override;

    // XServiceInfo
    rtl::OUString SAL_CALL getImplementationName() override;
    sal_Bool SAL_CALL supportsService(const rtl::OUString& service_name) override;
    css::uno::Sequence<rtl::OUString> SAL_CALL getSupportedServiceNames() override;

private:
    bool servesFrame() const;
    rtl::OUString aboutText() const;

    css::uno::Reference<css::uno::XComponentContext> context_;
    css::uno::WeakReference<css::frame::XFrame> frame_;
};
} // namespace statgpu::dialogs
