import Dispatch
import Locking
import Synchronization

/// Why the work of an attempt is being stopped from outside.
enum StopReason: Sendable {
    /// The stage's own `timeout` passed.
    case stageTimeout
    /// A sibling of a `when` failed, or another action of a `race` won.
    case settled
    /// The job is being stopped (cancel, job timeout, drain, lost lease).
    case job(EngineError)
}

/// What one attempt of a stage has running (processes, timers) so it can be
/// stopped from any thread: by its timeout, the job's cancellation or
/// timeout, or a drain. Stopping runs each registered stopper once.
final class AttemptControl: Sendable {
    private struct State {
        var stoppers: [@Sendable (StopReason) -> Void] = []
        var reason: StopReason?
        var finished = false
    }

    private let state = Mutex(State())

    /// Why it was stopped, if it was.
    var reason: StopReason? { state.withAnnouncedLock { $0.reason } }

    /// Registers how to stop one piece of running work. If the attempt is
    /// already stopped, `stopper` runs at once.
    func onStop(_ stopper: @escaping @Sendable (StopReason) -> Void) {
        let reason = state.withAnnouncedLock { state -> StopReason? in
            if state.finished { return nil }
            if let reason = state.reason { return reason }
            state.stoppers.append(stopper)
            return nil
        }
        if let reason { stopper(reason) }
    }

    /// Stops everything registered. The first reason sticks.
    func stop(_ reason: StopReason) {
        let stoppers = state.withAnnouncedLock { state -> [@Sendable (StopReason) -> Void] in
            guard !state.finished, state.reason == nil else { return [] }
            state.reason = reason
            defer { state.stoppers = [] }
            return state.stoppers
        }
        for stopper in stoppers { stopper(reason) }
    }

    /// The attempt ended: later stops do nothing.
    func finish() {
        state.withAnnouncedLock {
            $0.finished = true
            $0.stoppers = []
        }
    }
}
