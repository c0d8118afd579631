// progress.cxx: a long call's progress and Escape (see progress.hxx).
#include "progress.hxx"

#include "report_hooks.hxx"

#include <com/sun/star/awt/AsyncCallback.hpp>
#include <com/sun/star/awt/Key.hpp>
#include <com/sun/star/awt/Toolkit.hpp>
#include <com/sun/star/awt/XCallback.hpp>
#include <com/sun/star/awt/XReschedule.hpp>
#include <com/sun/star/container/XEnumeration.hpp>
#include <com/sun/star/container/XIndexAccess.hpp>
#include <com/sun/star/frame/Desktop.hpp>
#include <com/sun/star/frame/XController.hpp>
#include <com/sun/star/frame/XFrame.hpp>
#include <com/sun/star/frame/XFrames.hpp>
#include <com/sun/star/frame/XModel.hpp>
#include <com/sun/star/task/XStatusIndicatorFactory.hpp>
#include <com/sun/star/util/CloseVetoException.hpp>

#include <cmath>
#include <utility>

namespace statgpu::addin
{
using css::uno::Reference;
using css::uno::UNO_QUERY;

sal_Bool SAL_CALL EscapeKeyHandler::keyPressed(const css::awt::KeyEvent& event)
{
    if (event.KeyCode != css::awt::Key::ESCAPE)
        return false;
    pressed_.store(true);
    return true;
}

sal_Bool SAL_CALL EscapeKeyHandler::keyReleased(const css::awt::KeyEvent& event)
{
    return event.KeyCode == css::awt::Key::ESCAPE && pressed_.load();
}

void SAL_CALL EscapeKeyHandler::disposing(const css::lang::EventObject&) {}

void CloseGuard::watch(const Reference<css::uno::XInterface>& object, bool own)
{
    const Reference<css::util::XCloseBroadcaster> broadcaster(object, UNO_QUERY);
    if (!broadcaster.is())
        return;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        for (Watched& watched : watched_)
            if (watched.broadcaster == broadcaster)
            {
                watched.own = watched.own || own;
                return;
            }
        watched_.push_back(Watched{ broadcaster, own });
    }
    try
    {
        broadcaster->addCloseListener(this);
    }
    catch (const css::uno::Exception&)
    {
    }
}

void CloseGuard::watchOffice(const Reference<css::uno::XComponentContext>& context)
{
    const Reference<css::frame::XDesktop2> desktop = css::frame::Desktop::create(context);
    const Reference<css::frame::XFrame> current = desktop->getCurrentFrame();
    if (current.is())
    {
        watch(current, true);
        const Reference<css::frame::XController> controller = current->getController();
        watch(controller.is() ? controller->getModel() : nullptr, true);
    }
    const Reference<css::container::XIndexAccess> frames(desktop->getFrames(), UNO_QUERY);
    for (sal_Int32 i = 0; frames.is() && i < frames->getCount(); ++i)
        watch(Reference<css::uno::XInterface>(frames->getByIndex(i), UNO_QUERY), false);
    const Reference<css::container::XEnumeration> components = desktop->getComponents()->createEnumeration();
    while (components.is() && components->hasMoreElements())
        watch(Reference<css::uno::XInterface>(components->nextElement(), UNO_QUERY), false);
}

std::vector<Reference<css::util::XCloseable>> CloseGuard::end()
{
    std::vector<Watched> watched;
    std::vector<Reference<css::util::XCloseable>> handed_over;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        watched.swap(watched_);
        handed_over.swap(handed_over_);
    }
    for (const Watched& one : watched)
    {
        try
        {
            one.broadcaster->removeCloseListener(this);
        }
        catch (const css::uno::Exception&)
        {
        }
    }
    return handed_over;
}

namespace
{
// Closes its objects when the office's main thread calls it back.
class LaterClose final : public cppu::WeakImplHelper1<css::awt::XCallback>
{
public:
    explicit LaterClose(std::vector<Reference<css::util::XCloseable>> objects)
        : objects_(std::move(objects))
    {
    }
    void SAL_CALL notify(const css::uno::Any&) override
    {
        for (const auto& object : objects_)
        {
            try
            {
                if (object.is())
                    object->close(true);
            }
            catch (const css::uno::Exception&)
            {
            }
        }
        objects_.clear();
    }

private:
    std::vector<Reference<css::util::XCloseable>> objects_;
};
} // namespace

void CloseGuard::closeLater(const Reference<css::uno::XComponentContext>& context,
                            std::vector<Reference<css::util::XCloseable>> objects)
{
    if (objects.empty())
        return;
    try
    {
        const Reference<css::awt::XCallback> later(new LaterClose(std::move(objects)));
        css::awt::AsyncCallback::create(context)->addCallback(later, css::uno::Any());
    }
    catch (const css::uno::Exception&)
    {
    }
}

void SAL_CALL CloseGuard::queryClosing(const css::lang::EventObject& source, sal_Bool gets_ownership)
{
    const Reference<css::util::XCloseBroadcaster> closing(source.Source, UNO_QUERY);
    bool own = false;
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        for (const Watched& watched : watched_)
            own = own || (watched.own && watched.broadcaster == closing);
        if (gets_ownership && closes_after_)
            handed_over_.emplace_back(source.Source, UNO_QUERY);
    }
    if (own)
        asked_.store(true);
    const char* const message =
        own ? (closes_after_ ? "statgpu: a calculation is running in this document; it stops now, and the "
                               "document closes once it has"
                             : "statgpu: a calculation is running in this document; it stops now: close the "
                               "document again once it has")
            : (closes_after_ ? "statgpu: a calculation is running; this document closes once it has ended"
                             : "statgpu: a calculation is running; close this document again once it has ended");
    throw css::util::CloseVetoException(rtl::OUString::createFromAscii(message), source.Source);
}

void SAL_CALL CloseGuard::notifyClosing(const css::lang::EventObject&) {}

void SAL_CALL CloseGuard::disposing(const css::lang::EventObject& source)
{
    const Reference<css::util::XCloseBroadcaster> gone(source.Source, UNO_QUERY);
    const std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = watched_.begin(); it != watched_.end(); ++it)
        if (it->broadcaster == gone)
        {
            watched_.erase(it);
            return;
        }
}

CallProgress::CallProgress(Reference<css::uno::XComponentContext> context, const char* title)
    : context_(std::move(context))
    , title_(title)
    , started_(std::chrono::steady_clock::now())
    , last_update_(started_)
{
}

CallProgress::~CallProgress()
{
    if (close_guard_.is())
        close_guard_->end();
    try
    {
        if (interception_.is() && escape_handler_.is())
            interception_->removeKeyHandler(escape_handler_);
    }
    catch (...)
    {
    }
    try
    {
        if (indicator_.is())
            indicator_->end();
    }
    catch (...)
    {
    }
}

void CallProgress::show()
{
    tried_to_show_ = true;
    if (!context_.is())
        return;
    const Reference<css::frame::XFrame> frame = css::frame::Desktop::create(context_)->getCurrentFrame();
    if (!frame.is())
        return;
    const Reference<css::task::XStatusIndicatorFactory> factory(frame, UNO_QUERY);
    if (factory.is())
    {
        indicator_ = factory->createStatusIndicator();
        if (indicator_.is())
            indicator_->start("statgpu " + rtl::OUString::createFromAscii(title_) + " (Esc cancels)", 100);
    }
    reschedule_.set(css::awt::Toolkit::create(context_), UNO_QUERY);
    // A dialog's run watches its own document, and closes it after.
    const ReportRun* const report = currentReportRun();
    if (reschedule_.is() && (report == nullptr || !report->progress))
    {
        close_guard_ = new CloseGuard(false);
        close_guard_->watchOffice(context_);
    }
    interception_.set(frame->getController(), UNO_QUERY);
    if (interception_.is())
    {
        escape_ = new EscapeKeyHandler;
        escape_handler_ = escape_;
        interception_->addKeyHandler(escape_handler_);
    }
}

bool CallProgress::update(double fraction) noexcept
{
    try
    {
        // A dialog's run shows its own progress and may stop the engine.
        if (ReportRun* const report = currentReportRun(); report != nullptr && report->progress)
            if (report->progress(fraction))
                return true;
        const auto now = std::chrono::steady_clock::now();
        if (now - started_ < kShowAfter)
            return false;
        if (!tried_to_show_)
            show();
        if (indicator_.is() && now - last_update_ >= kUpdateEvery)
        {
            last_update_ = now;
            const double percent = std::isfinite(fraction) ? 100.0 * fraction : 0.0;
            indicator_->setValue(static_cast<sal_Int32>(percent < 0.0 ? 0.0 : percent > 100.0 ? 100.0 : percent));
            // Let the office handle pending input: repaint, and Escape. The
            // toolkit's XReschedule is marked deprecated but is what it offers
            // for exactly this (Application::Reschedule); the published
            // alternative, processEventsToIdle, would also run idle jobs such
            // as recalculations.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
            if (reschedule_.is())
                reschedule_->reschedule();
#pragma GCC diagnostic pop
        }
        return stopAsked();
    }
    catch (...)
    {
        return stopAsked();
    }
}

bool CallProgress::stopAsked() const noexcept
{
    return (escape_ != nullptr && escape_->pressed()) || (close_guard_.is() && close_guard_->asked());
}

int CallProgress::engineCallback(void* user_data, double fraction)
{
    CallProgress* const* slot = static_cast<CallProgress* const*>(user_data);
    return slot != nullptr && *slot != nullptr && (*slot)->update(fraction) ? 1 : 0;
}

} // namespace statgpu::addin
