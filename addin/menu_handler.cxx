// menu_handler.cxx: the menu's protocol handler (see menu_handler.hxx).
#include "menu_handler.hxx"

#include "analysis_dialog.hxx"
#include "cells.hxx"

#include <statgpu.h>

#include <com/sun/star/awt/MessageBoxButtons.hpp>
#include <com/sun/star/awt/MessageBoxType.hpp>
#include <com/sun/star/awt/Toolkit.hpp>
#include <com/sun/star/awt/XMessageBox.hpp>
#include <com/sun/star/awt/XMessageBoxFactory.hpp>
#include <com/sun/star/awt/XWindowPeer.hpp>
#include <com/sun/star/frame/DispatchResultEvent.hpp>
#include <com/sun/star/frame/DispatchResultState.hpp>
#include <com/sun/star/frame/FeatureStateEvent.hpp>
#include <com/sun/star/frame/XController.hpp>
#include <com/sun/star/frame/XDispatchResultListener.hpp>
#include <com/sun/star/frame/XModel.hpp>
#include <com/sun/star/frame/XStatusListener.hpp>
#include <com/sun/star/sheet/XSpreadsheetDocument.hpp>
#include <cppuhelper/supportsservice.hxx>
#include <org/statgpu/XStatGpu.hpp>

namespace statgpu::dialogs
{
using css::uno::Any;
using css::uno::Reference;
using css::uno::Sequence;
using css::uno::UNO_QUERY;
using rtl::OUString;

namespace
{
constexpr char kProtocol[] = "org.statgpu.dialog:";
}

MenuHandler::MenuHandler(Reference<css::uno::XComponentContext> context)
    : context_(std::move(context))
{
    // The office's locale (its decimal separator) for the dialogs, which may
    // open before any cell has made the add-in.
    addin::setOfficeContext(context_);
}

OUString MenuHandler::implementationName()
{
    return "org.statgpu.MenuHandlerImpl";
}

Sequence<OUString> MenuHandler::serviceNames()
{
    return sequenceOf<OUString>({ "com.sun.star.frame.ProtocolHandler" });
}

void SAL_CALL MenuHandler::initialize(const Sequence<Any>& arguments)
{
    Reference<css::frame::XFrame> frame;
    if (arguments.getLength() > 0 && (arguments[0] >>= frame))
        frame_ = frame;
}

bool MenuHandler::servesFrame() const
{
    const Reference<css::frame::XFrame> frame(frame_);
    if (!frame.is() || !frame->getController().is())
        return false;
    return Reference<css::sheet::XSpreadsheetDocument>(frame->getController()->getModel(), UNO_QUERY).is();
}

Reference<css::frame::XDispatch> SAL_CALL MenuHandler::queryDispatch(const css::util::URL& url, const OUString&, sal_Int32)
{
    if (!url.Complete.startsWith(kProtocol))
        return nullptr;
    const OUString path = url.Complete.copy(static_cast<sal_Int32>(sizeof kProtocol - 1));
    const bool known = path == "about" || path == "stop" || findAnalysis(toUtf8(path)) != nullptr;
    if (!known || !servesFrame())
        return nullptr;
    return this;
}

Sequence<Reference<css::frame::XDispatch>> SAL_CALL
MenuHandler::queryDispatches(const Sequence<css::frame::DispatchDescriptor>& requests)
{
    Sequence<Reference<css::frame::XDispatch>> dispatches(requests.getLength());
    for (sal_Int32 i = 0; i < requests.getLength(); ++i)
        dispatches.getArray()[i] =
            queryDispatch(requests[i].FeatureURL, requests[i].FrameName, requests[i].SearchFlags);
    return dispatches;
}

OUString MenuHandler::aboutText() const
{
    OUString backend;
    try
    {
        const Reference<org::statgpu::XStatGpu> functions(
            context_->getServiceManager()->createInstanceWithContext("org.statgpu.StatGpu", context_), UNO_QUERY);
        if (functions.is())
            backend = functions->gpuInfo();
    }
    catch (const css::uno::Exception& failure)
    {
        backend = "unknown (" + failure.Message + ")";
    }
    return "statgpu " + OUString::createFromAscii(statgpu_version_string())
           + ": GPU statistics for LibreOffice Calc.\n\nBackend: " + backend
           + "\n\nThe analyses of this menu write report sheets; the same methods are cell functions "
             "(GPUMEDIAN, GPUQUANTILE, KMEANS, GMMFIT, LTSFIT, BESTSUBSET, IGMMFIT) in the Statistical "
             "category of the Function Wizard.";
}

void SAL_CALL MenuHandler::dispatchWithNotification(const css::util::URL& url, const Sequence<css::beans::PropertyValue>&,
                                                    const Reference<css::frame::XDispatchResultListener>& listener)
{
    css::frame::DispatchResultEvent result;
    result.Source = static_cast<cppu::OWeakObject*>(this);
    result.State = css::frame::DispatchResultState::FAILURE;
    const std::string path = url.Complete.startsWith(kProtocol)
                                 ? toUtf8(url.Complete.copy(static_cast<sal_Int32>(sizeof kProtocol - 1)))
                                 : std::string();
    try
    {
        if (path == "stop")
        {
            // Only a flag: this may come from another thread while the
            // analysis holds the office's main thread.
            g_stop_requested.store(true);
            result.State = css::frame::DispatchResultState::SUCCESS;
        }
        else if (path == "about")
        {
            const OUString text = aboutText();
            result.Result <<= text;
            result.State = css::frame::DispatchResultState::SUCCESS;
            const Reference<css::frame::XFrame> frame(frame_);
            const Reference<css::awt::XMessageBoxFactory> boxes(css::awt::Toolkit::create(context_), UNO_QUERY);
            if (boxes.is() && frame.is())
            {
                const Reference<css::awt::XMessageBox> box = boxes->createMessageBox(
                    Reference<css::awt::XWindowPeer>(frame->getContainerWindow(), UNO_QUERY),
                    css::awt::MessageBoxType_INFOBOX, css::awt::MessageBoxButtons::BUTTONS_OK, "About statgpu", text);
                if (box.is())
                    box->execute();
            }
        }
        else if (const Analysis* analysis = findAnalysis(path); analysis != nullptr && servesFrame())
        {
            result.Result <<= AnalysisDialog::open(context_, Reference<css::frame::XFrame>(frame_), *analysis);
            result.State = css::frame::DispatchResultState::SUCCESS;
        }
    }
    catch (const css::uno::Exception& failure)
    {
        result.Result <<= failure.Message;
    }
    catch (const std::exception& failure)
    {
        result.Result <<= fromUtf8(failure.what());
    }
    if (listener.is())
        listener->dispatchFinished(result);
}

void SAL_CALL MenuHandler::dispatch(const css::util::URL& url, const Sequence<css::beans::PropertyValue>& arguments)
{
    dispatchWithNotification(url, arguments, nullptr);
}

void SAL_CALL MenuHandler::addStatusListener(const Reference<css::frame::XStatusListener>& listener,
                                             const css::util::URL& url)
{
    if (!listener.is())
        return;
    css::frame::FeatureStateEvent state;
    state.Source = static_cast<cppu::OWeakObject*>(this);
    state.FeatureURL = url;
    state.IsEnabled = true;
    listener->statusChanged(state);
}

void SAL_CALL MenuHandler::removeStatusListener(const Reference<css::frame::XStatusListener>&, const css::util::URL&)
{
}

OUString SAL_CALL MenuHandler::getImplementationName()
{
    return implementationName();
}

sal_Bool SAL_CALL MenuHandler::supportsService(const OUString& service_name)
{
    return cppu::supportsService(this, service_name);
}

Sequence<OUString> SAL_CALL MenuHandler::getSupportedServiceNames()
{
    return serviceNames();
}
} // namespace statgpu::dialogs
