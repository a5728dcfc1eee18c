import Dispatch
import Synchronization

/// A timer that fires its body once on a queue unless cancelled first. No
/// thread waits for it. (Not `DispatchWorkItem`, which is not `Sendable`.)
final class OneShotTimer: Sendable {
    private let done = Atomic<Bool>(false)

    /// Starts a timer that runs `body` on `queue` after `delay`.
    @discardableResult
    static func schedule(on queue: DispatchQueue, after delay: DispatchTimeInterval, _ body: @escaping @Sendable () -> Void) -> OneShotTimer {
        let timer = OneShotTimer()
        queue.asyncAfter(deadline: .now() + delay) {
            if timer.claim() { body() }
        }
        return timer
    }

    /// Keeps the body from running, if it has not run yet.
    func cancel() {
        done.store(true, ordering: .relaxed)
    }

    /// True once: for the fire or the cancel that comes first.
    private func claim() -> Bool {
        !done.exchange(true, ordering: .acquiringAndReleasing)
    }
}
