// progress.cxx: a long call's progress and Escape (see progress.hxx).
#include "progress.hxx"

#include "report_hooks.hxx"

#include <com/sun/star/awt/Key.hpp>
#include <com/sun/star/awt/Toolkit.hpp>
#include <com/sun/star/awt/XReschedule.hpp>
#include <com/sun/star/frame/Desktop.hpp>
#include <com/sun/star/frame/XController.hpp>
#include <com/sun/star/frame/XFrame.hpp>
#include <com/sun/star/task/XStatusIndicatorFactory.hpp>

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

CallProgress::CallProgress(Reference<css::uno::XComponentContext> context, const char* title)
    : context_(std::move(context))
    , title_(title)
    , started_(std::chrono::steady_clock::now())
    , last_update_(started_)
{
}

CallProgress::~CallProgress()
{
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
        return escape_ != nullptr && escape_->pressed();
    }
    catch (...)
    {
        return escape_ != nullptr && escape_->pressed();
    }
}

int CallProgress::engineCallback(void* user_data, double fraction)
{
    CallProgress* const* slot = static_cast<CallProgress* const*>(user_data);
    return slot != nullptr && *slot != nullptr && (*slot)->update(fraction) ? 1 : 0;
}

} // namespace statgpu::addin
