import Foundation
import JobConfig
import JobStore
import JobValues
import Locking
import Logging
import Synchronization

/// The engine's side of schedules: when to tick the `ScheduleFirer`.
struct SchedulingState: Sendable {
    var firer: ScheduleFirer?
    /// Steps of the wall clock between ticks.
    var steps: WallClockSteps?
    var timer: OneShotTimer?
    var ticking = false
    /// A tick was asked for while one ran: run another after it.
    var again = false
    /// An occurrence waits for a scheduled job to end (`overlap: queue`).
    var deferred = false
    var stopped = false
}

extension Engine {
    /// Fires what is due now, has the pools claim the jobs it wrote, then
    /// sets a timer for the next occurrence (or to look again after
    /// `pollInterval` while an occurrence waits, or after a failure).
    func tickSchedules() {
        let context = baseContext
        let configuration = context.configuration
        let ticking = scheduling.withAnnouncedLock { state -> (ScheduleFirer, WallClockSteps)? in
            guard !state.stopped else { return nil }
            if state.ticking {
                state.again = true
                return nil
            }
            state.ticking = true
            let firer =
                state.firer
                ?? ScheduleFirer(
                    store: context.store, hostZone: configuration.hostTimeZone, metrics: configuration.metrics,
                    log: { level, message in context.log(level, message) })
            // Occurrences are fired by the database's clock, which stored
            // marks and run_at are on: a host whose own clock is ahead
            // must not fire early, nor one behind late.
            let clock = context.databaseClock
            let steps = state.steps ?? WallClockSteps(wall: { clock.now() })
            (state.firer, state.steps) = (firer, steps)
            return (firer, steps)
        }
        guard let (firer, steps) = ticking else { return }
        let definitions = self.definitions.filter { !$0.schedules.isEmpty }
        Task {
            let (now, step) = steps.look()
            if let step, step > 0 { firer.clockStepped(by: step, at: now) }
            let tick = await firer.tick(at: now, definitions: definitions)
            var wake = tick.next
            let deferred = tick.deferred
            // The jobs just written are due (or have a jittered run_at):
            // their pools claim now, not at the next poll.
            self.fill(tick.pools)
            if deferred {
                let soon = context.databaseClock.now() + configuration.pollInterval.timeInterval
                wake = min(wake ?? soon, soon)
            }
            self.scheduleNextTick(at: wake, deferred: deferred)
        }
    }

    private func scheduleNextTick(at wake: Date?, deferred: Bool) {
        let context = baseContext
        let now = context.databaseClock.now()
        let (again, old) = scheduling.withAnnouncedLock { state -> (Bool, OneShotTimer?) in
            state.ticking = false
            state.deferred = deferred
            defer { state.again = false }
            let old = state.timer
            state.timer = nil
            guard !state.stopped else { return (false, old) }
            if let wake, !state.again {
                // The timer counts on the monotonic clock from now.
                state.timer = OneShotTimer.schedule(on: context.deadlines, at: wake, now: now) { [weak self] in
                    self?.tickSchedules()
                }
            }
            return (state.again, old)
        }
        old?.cancel()
        if again { tickSchedules() }
    }

    private func fill(_ names: Set<String>) {
        guard !names.isEmpty else { return }
        let pools = self.pools
        for name in names.sorted() { pools[name]?.fill() }
    }

    /// A scheduled job ended: an occurrence waiting for it may fire now.
    func scheduledJobEnded() {
        if scheduling.withAnnouncedLock({ $0.deferred }) { tickSchedules() }
    }

    /// No more ticks (a drain).
    func stopSchedules() {
        let timer = scheduling.withAnnouncedLock { state -> OneShotTimer? in
            state.stopped = true
            defer { state.timer = nil }
            return state.timer
        }
        timer?.cancel()
    }
}
