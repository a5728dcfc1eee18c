import Dispatch
import Foundation
import JobMetrics
import JobStore
import JobValues
import Locking
import Logging
import Synchronization

/// Claims the jobs of one pool: never more running than the pool's size,
/// highest priority first then the oldest (the store's order), within the
/// concurrency limits of its definitions (``ClaimFlow``), and a timer to
/// the next delayed job's `run_at` instead of polling for it.
///
/// A job held back by a concurrency limit is runnable but not claimed: no
/// timer can say when its slot frees. The pool claims again when one of its
/// jobs ends here, on a wake-up (on PostgreSQL a limited job's end,
/// anywhere, sends one), and at the latest after `pollInterval`. A job held
/// back by its rate waits for a known time: the pool asks the store when
/// the next rate slot frees and claims then.
final class PoolScheduler: Sendable {
    let name: String
    private let context: EngineContext
    private let launch: @Sendable (ClaimedJob, PoolScheduler, ContinuousClock.Instant) -> Void

    private struct State {
        var capacity: Int
        var flow: ClaimFlow
        var running = 0
        var claiming = false
        /// More work may be waiting: claim again when the claim under way returns.
        var again = false
        var stopped = false
        var probing = false
        var wake: (at: Date, timer: OneShotTimer)?
    }

    private let state: Mutex<State>

    init(
        name: String, capacity: Int, flow: ClaimFlow, context: EngineContext,
        launch: @escaping @Sendable (ClaimedJob, PoolScheduler, ContinuousClock.Instant) -> Void
    ) {
        self.name = name
        state = Mutex(State(capacity: max(1, capacity), flow: flow))
        self.context = context
        self.launch = launch
        // A pool that has run nothing yet reads 0, not absent.
        context.configuration.metrics.setJobsRunning(pool: name, 0)
    }

    var running: Int { state.withAnnouncedLock { $0.running } }

    /// Claims as many jobs as there are free slots (one claim at a time).
    func fill() {
        let (limit, flow) = state.withAnnouncedLock { state -> (Int, ClaimFlow) in
            guard !state.stopped else { return (0, state.flow) }
            if state.claiming {
                state.again = true
                return (0, state.flow)
            }
            let free = state.capacity - state.running
            guard free > 0 else { return (0, state.flow) }
            state.claiming = true
            state.again = false
            return (min(free, context.configuration.maxClaimBatch), state.flow)
        }
        guard limit > 0 else { return }
        // The leases it gets were set no earlier than now (LeaseFence).
        let sent = ContinuousClock.now
        context.store.claim(
            pool: name, owner: context.owner, limit: limit, leaseDuration: context.configuration.leaseDuration,
            flow: flow
        ) { result in
            self.context.control.async { self.claimed(result, limit: limit, sent: sent) }
        }
    }

    private func claimed(_ result: Swift.Result<[ClaimedJob], any Error>, limit: Int, sent: ContinuousClock.Instant) {
        switch result {
        case let .success(jobs):
            let (again, running) = state.withAnnouncedLock { state -> (Bool, Int) in
                state.claiming = false
                state.running += jobs.count
                return (state.again || jobs.count == limit, state.running)
            }
            if !jobs.isEmpty { context.configuration.metrics.setJobsRunning(pool: name, running) }
            for job in jobs { launch(job, self, sent) }
            if again { fill() } else { probeNextRunAt() }
        case let .failure(error):
            state.withAnnouncedLock { $0.claiming = false }
            context.log(.error, "could not claim jobs of pool \(name): \(error)")
            wake(at: context.databaseClock.now() + context.configuration.pollInterval.timeInterval)
        }
    }

    /// A reload changed the pool's size: claims up to the new size (running
    /// jobs over a smaller size finish; no new one starts until below it).
    func resize(to capacity: Int, flow: ClaimFlow) {
        state.withAnnouncedLock { state in
            state.capacity = max(1, capacity)
            state.flow = flow
        }
        fill()
    }

    /// A job of this pool ended: its slot is free.
    func jobEnded() {
        let running = state.withAnnouncedLock { state -> Int in
            state.running -= 1
            return state.running
        }
        context.configuration.metrics.setJobsRunning(pool: name, running)
        fill()
    }

    /// Stops claiming (a drain).
    func stop() {
        let timer = state.withAnnouncedLock { state -> OneShotTimer? in
            state.stopped = true
            defer { state.wake = nil }
            return state.wake?.timer
        }
        timer?.cancel()
    }

    /// Asks the store when the next pending job becomes runnable, and sets
    /// a timer for it.
    private func probeNextRunAt() {
        let go = state.withAnnouncedLock { state -> Bool in
            guard !state.probing, !state.stopped else { return false }
            state.probing = true
            return true
        }
        guard go else { return }
        context.store.nextRunAt(pool: name) { result in
            self.context.control.async {
                self.state.withAnnouncedLock { $0.probing = false }
                switch result {
                case let .success(date?):
                    // Already due (submitted while the claim ran): claim again
                    // shortly. run_at is the database's time. In a pool with
                    // limits, a due job may be one held back by its limit:
                    // claiming again at once would find it held back still.
                    let now = self.context.databaseClock.now()
                    let flow = self.state.withAnnouncedLock { $0.flow }
                    if !flow.isUnlimited && date <= now {
                        self.wake(at: now + self.context.configuration.pollInterval.timeInterval)
                        if !flow.rates.isEmpty { self.probeNextRateSlot(flow) }
                    } else {
                        self.wake(at: max(date, now + 0.005))
                    }
                case .success(nil):
                    break
                case let .failure(error):
                    self.context.log(.warning, "could not read the next run_at of pool \(self.name): \(error)")
                }
            }
        }
    }

    /// Asks the store when a rate slot frees for a job held back by its
    /// rate, and sets a timer for it.
    private func probeNextRateSlot(_ flow: ClaimFlow) {
        context.store.nextRateSlot(pool: name, flow: flow) { result in
            self.context.control.async {
                switch result {
                case let .success(date?):
                    self.wake(at: max(date, self.context.databaseClock.now() + 0.005))
                case .success(nil):
                    break
                case let .failure(error):
                    self.context.log(.warning, "could not read the next rate slot of pool \(self.name): \(error)")
                }
            }
        }
    }

    /// Claims at `date`, unless an earlier wake-up is set.
    private func wake(at date: Date) {
        // Set under the lock so that two wake-ups cannot both replace a third.
        let old = state.withAnnouncedLock { state -> OneShotTimer?? in
            guard !state.stopped else { return .none }
            if let wake = state.wake, wake.at <= date { return .none }
            let old = state.wake?.timer
            let timer = OneShotTimer.schedule(on: context.deadlines, at: date, now: context.databaseClock.now()) {
                [weak self] in
                guard let self else { return }
                self.state.withAnnouncedLock { state in
                    if state.wake?.at == date { state.wake = nil }
                }
                self.fill()
            }
            state.wake = (date, timer)
            return .some(old)
        }
        if case let .some(previous) = old { previous?.cancel() }
    }
}
