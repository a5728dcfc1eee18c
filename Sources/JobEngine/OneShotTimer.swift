import Dispatch
import Foundation
import JobConfig
import JobValues
import Synchronization

/// A timer that runs its body once unless cancelled first. No thread waits
/// for it.
///
/// All timers share one dispatch timer source over a min-heap of deadlines
/// (`TimerHeap`), and cancelling one takes it out of the heap at once: a job
/// timeout of ten minutes, cancelled when the job ends a millisecond later,
/// does not keep its closure alive for ten minutes (as `asyncAfter` would,
/// and a cancelled `DispatchWorkItem` too).
final class OneShotTimer: Sendable {
    private let heap: TimerHeap
    private let id: UInt64

    private init(heap: TimerHeap, id: UInt64) {
        self.heap = heap
        self.id = id
    }

    /// Runs `body` after `delay`, on `heap`'s serial queue (keep it short).
    @discardableResult
    static func schedule(
        on heap: TimerHeap, after delay: DispatchTimeInterval, _ body: @escaping @Sendable () -> Void
    ) -> OneShotTimer {
        OneShotTimer(heap: heap, id: heap.add(deadline: .now() + delay, body))
    }

    /// Runs `body` at `date` of the clock that reads `now` (the database's
    /// for a stored time), at once if it is past; the wait is counted on the
    /// monotonic clock. Safe for any date, even one read back from the
    /// database: a wait longer than ``Duration/jobdMaximum`` is cut to it
    /// (the timer then fires early and whoever set it looks again), and a
    /// date that is not a number fires at once.
    @discardableResult
    static func schedule(
        on heap: TimerHeap, at date: Date, now: Date, _ body: @escaping @Sendable () -> Void
    ) -> OneShotTimer {
        schedule(on: heap, after: .until(date, now: now), body)
    }

    /// Keeps the body from running, if it has not run yet, and lets it go.
    func cancel() {
        heap.remove(id)
    }
}

extension DispatchTimeInterval {
    /// From `now` until `date`, between zero and ``Duration/jobdMaximum``.
    static func until(_ date: Date, now: Date) -> DispatchTimeInterval {
        let seconds = date.timeIntervalSince(now)
        // Also false for NaN.
        guard seconds > 0 else { return .milliseconds(0) }
        let maximum = Double(Duration.jobdMaximumMilliseconds) / 1000
        return .milliseconds(Int(min(seconds, maximum) * 1000))
    }
}
