// progress.hxx: a long call's progress in the office's status bar, and
// Escape to cancel it.
//
// Calc calls an add-in function on its main thread and waits for it; the
// engine calls back between batches of work (statgpu_progress_fn). Once a
// call has run for kShowAfter, each callback (at most every kUpdateEvery)
// moves a progress bar in the status bar of the office's current window.
// Setting its value lets the office handle pending events, as Calc's own
// progress bars do during a recalculation: the window repaints, and a key
// handler on the window's controller sees Escape, after which the callback
// asks the engine to stop (STATGPU_ERROR_CANCELLED, the cell shows #VALUE!).
// Short calls never touch the user interface. Without a window (a headless
// office, a call from a macro with no frame) there is no progress bar and no
// Escape; the call runs to its end. While the office handles events, no
// document may close under the call (CloseGuard).
#pragma once

#include <com/sun/star/awt/XKeyHandler.hpp>
#include <com/sun/star/awt/XReschedule.hpp>
#include <com/sun/star/awt/XUserInputInterception.hpp>
#include <com/sun/star/task/XStatusIndicator.hpp>
#include <com/sun/star/uno/XComponentContext.hpp>
#include <com/sun/star/util/XCloseBroadcaster.hpp>
#include <com/sun/star/util/XCloseListener.hpp>
#include <com/sun/star/util/XCloseable.hpp>
#include <cppuhelper/implbase1.hxx>
#include <rtl/ref.hxx>

#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

namespace statgpu::addin
{
// Remembers whether Escape was pressed while it was registered.
class EscapeKeyHandler final : public cppu::WeakImplHelper1<css::awt::XKeyHandler>
{
public:
    bool pressed() const { return pressed_.load(); }

    // XKeyHandler: Escape is taken (the office does not see it), any other key passes.
    sal_Bool SAL_CALL keyPressed(const css::awt::KeyEvent& event) override;
    sal_Bool SAL_CALL keyReleased(const css::awt::KeyEvent& event) override;
    // XEventListener
    void SAL_CALL disposing(const css::lang::EventObject& source) override;

private:
    std::atomic<bool> pressed_{ false };
};

// While a long call lets the office handle events, a document or window
// may not close under it: closed then, a document is gone while the call
// (and Calc's recalculation around a cell's call) still works on it, and
// the office crashes. CloseGuard refuses such a close (CloseVetoException);
// a document or window watched as the call's own also asks the call to stop
// (asked()). With closes_after, a close that hands the closing over
// (close(true), as the office's own Close does) is remembered (end()) for
// closeLater, which closes it once the office's main thread is back at its
// events: an analysis dialog's run, which no recalculation surrounds. A
// cell's call leaves the close to be asked again once it has stopped: an
// event handled in the rest of Calc's recalculation would close the
// document under it.
class CloseGuard final : public cppu::WeakImplHelper1<css::util::XCloseListener>
{
public:
    explicit CloseGuard(bool closes_after) : closes_after_(closes_after) {}
    // Watches object (a document or a frame) where it broadcasts its closing;
    // own: a close of it stops the call.
    void watch(const css::uno::Reference<css::uno::XInterface>& object, bool own);
    // Watches every document and window of the office, the current one as own.
    void watchOffice(const css::uno::Reference<css::uno::XComponentContext>& context);
    // Whether an own document or window was asked to close.
    bool asked() const { return asked_.load(); }
    // Ends the watch: the objects whose closing was handed over.
    std::vector<css::uno::Reference<css::util::XCloseable>> end();
    // Closes objects (close(true)) once the office's main thread is back at its events.
    static void closeLater(const css::uno::Reference<css::uno::XComponentContext>& context,
                           std::vector<css::uno::Reference<css::util::XCloseable>> objects);

    // XCloseListener
    void SAL_CALL queryClosing(const css::lang::EventObject& source, sal_Bool gets_ownership) override;
    void SAL_CALL notifyClosing(const css::lang::EventObject& source) override;
    // XEventListener
    void SAL_CALL disposing(const css::lang::EventObject& source) override;

private:
    struct Watched
    {
        css::uno::Reference<css::util::XCloseBroadcaster> broadcaster;
        bool own;
    };
    std::mutex mutex_;
    std::vector<Watched> watched_;
    std::vector<css::uno::Reference<css::util::XCloseable>> handed_over_;
    std::atomic<bool> asked_{ false };
    const bool closes_after_;
};

// One engine call's progress; made before the call, destroyed after it.
class CallProgress
{
public:
    static constexpr std::chrono::milliseconds kShowAfter{ 500 };
    static constexpr std::chrono::milliseconds kUpdateEvery{ 100 };

    // title: what the status bar says, such as "KMEANS". context may be empty
    // (then nothing is shown).
    CallProgress(css::uno::Reference<css::uno::XComponentContext> context, const char* title);
    ~CallProgress();
    CallProgress(const CallProgress&) = delete;
    CallProgress& operator=(const CallProgress&) = delete;

    // The engine's callback: fraction done in [0, 1]. Returns true when the
    // user pressed Escape. Never throws.
    bool update(double fraction) noexcept;

    // The engine's statgpu_progress_fn, with user_data a CallProgress* (or NULL).
    static int engineCallback(void* user_data, double fraction);

private:
    void show();
    bool stopAsked() const noexcept;  // Escape, or a close of the call's own document

    css::uno::Reference<css::uno::XComponentContext> context_;
    const char* title_;
    std::chrono::steady_clock::time_point started_;
    std::chrono::steady_clock::time_point last_update_;
    bool tried_to_show_ = false;
    css::uno::Reference<css::task::XStatusIndicator> indicator_;
    css::uno::Reference<css::awt::XUserInputInterception> interception_;
    css::uno::Reference<css::awt::XReschedule> reschedule_;
    EscapeKeyHandler* escape_ = nullptr;                        // owned through escape_handler_
    css::uno::Reference<css::awt::XKeyHandler> escape_handler_;
    rtl::Reference<CloseGuard> close_guard_;                    // while the office handles events
};
} // namespace statgpu::addin
