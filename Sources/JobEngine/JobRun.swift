import Dispatch
import Foundation
import JobConfig
import JobStore
import JobValues
import Locking
import Logging
import Promises
import Synchronization

/// One claimed job, run as a promise chain (see `JobRun+Chain.swift`): its
/// lease, what it is doing now, and how to stop it.
///
/// The chain runs one stage at a time, so the state below changes from one
/// thread at a time in the chain's order; it sits behind a `Mutex` because
/// stops (cancel, timeouts, drain) arrive from other threads.
final class JobRun: Sendable {
    let context: EngineContext
    let claimed: ClaimedJob
    let definition: JobDefinition
    /// The definitions loaded when the job was claimed: its children's.
    let definitions: [String: JobDefinition]
    let drain: DrainFlag
    private let onEnd: @Sendable (JobRun) -> Void

    struct Attempt {
        var position: Int
        var number: Int
        var startedAt: Date?
    }

    private struct State {
        /// Why the job is being stopped, if it is.
        var stop: EngineError?
        /// The work under way (an attempt, or the wait before a retry).
        var current: (kind: StageKind, control: AttemptControl)?
        /// The last attempt begun, for the stage's record.
        var attempt: Attempt?
        /// The attempt number a stage resumed after a crash starts from.
        var resumedAttempt: Attempt?
        /// Positions below this were run or recorded as skipped.
        var cursor = 0
        /// The output of the `done` stage, the job's result.
        var doneValue: [UInt8]?
        var jobTimer: OneShotTimer?
        var ended = false
        /// When the request that last set the lease's expiry was sent (LeaseFence).
        var leaseConfirmed: ContinuousClock.Instant
    }

    private let state: Mutex<State>

    var id: Int64 { claimed.job.id }
    var lease: Lease { claimed.lease }

    /// `leaseConfirmed`: when the claim that gave `claimed` its lease was sent.
    init(
        context: EngineContext, claimed: ClaimedJob, definition: JobDefinition,
        definitions: [String: JobDefinition] = [:], drain: DrainFlag, leaseConfirmed: ContinuousClock.Instant = .now,
        onEnd: @escaping @Sendable (JobRun) -> Void
    ) {
        state = Mutex(State(leaseConfirmed: leaseConfirmed))
        self.context = context
        self.claimed = claimed
        self.definition = definition
        self.definitions = definitions
        self.drain = drain
        self.onEnd = onEnd
    }

    // MARK: Lease

    /// When the request that last set the lease's expiry was sent.
    var leaseConfirmed: ContinuousClock.Instant {
        state.withAnnouncedLock { $0.leaseConfirmed }
    }

    /// A renewal sent at `sent` came back with the lease renewed.
    func confirmLease(sent: ContinuousClock.Instant) {
        state.withAnnouncedLock { $0.leaseConfirmed = max($0.leaseConfirmed, sent) }
    }

    // MARK: Stopping

    /// Stops the job: the running stage is stopped (its process group ended)
    /// unless it is a `catch` / `ensure` / `finally` and `error` does not
    /// halt the job; stages that have not started are skipped as the chain
    /// reaches them. A halting error (drain, lost lease) overrides a
    /// cancellation or timeout; otherwise the first reason sticks.
    func stop(_ error: EngineError) {
        let control = state.withAnnouncedLock { state -> AttemptControl? in
            if let existing = state.stop, existing.haltsJob || !error.haltsJob { return nil }
            state.stop = error
            guard let current = state.current else { return nil }
            return error.haltsJob || !current.kind.isCleanup ? current.control : nil
        }
        control?.stop(.job(error))
    }

    /// Whether the job is being stopped without being resolved (the drain's
    /// grace ran out, its lease was lost, the store failed).
    var isHalted: Bool {
        state.withAnnouncedLock { $0.stop?.haltsJob ?? false }
    }

    /// Why `stage` may not start now, if it may not: the engine is draining,
    /// or the job is being stopped (cleanup stages still run then, unless
    /// the stop halts the job).
    func refusal(for stage: StageDefinition) -> EngineError? {
        if drain.isDraining {
            return EngineError(
                .draining, "jobd is stopping: job \(id) stops before stage `\(stage.name)` and resumes there later",
                jobID: id, position: stage.position)
        }
        guard let stop = state.withAnnouncedLock({ $0.stop }) else { return nil }
        return stop.haltsJob || !stage.kind.isCleanup ? stop : nil
    }

    /// Makes `control` the job's current work; stopped at once if the job
    /// is being stopped and the stop applies to this stage.
    func begin(_ control: AttemptControl, for stage: StageDefinition, attempt: Attempt?) {
        let stop = state.withAnnouncedLock { state -> EngineError? in
            state.current = (stage.kind, control)
            if let attempt { state.attempt = attempt }
            guard let stop = state.stop, stop.haltsJob || !stage.kind.isCleanup else { return nil }
            return stop
        }
        if let stop { control.stop(.job(stop)) }
    }

    /// Records an attempt that has nothing to stop (an in-process transform).
    func note(_ attempt: Attempt) {
        state.withAnnouncedLock { $0.attempt = attempt }
    }

    func end(_ control: AttemptControl) {
        control.finish()
        state.withAnnouncedLock { state in
            if state.current?.control === control { state.current = nil }
        }
    }

    // MARK: Bookkeeping

    /// The last attempt at `position`.
    func attempt(at position: Int) -> Attempt {
        state.withAnnouncedLock { state in
            if let attempt = state.attempt, attempt.position == position { return attempt }
            return Attempt(position: position, number: 1, startedAt: nil)
        }
    }

    /// The number of the first attempt at `position`: 1, or one more than
    /// were made before a crash.
    func firstAttemptNumber(at position: Int) -> Int {
        state.withAnnouncedLock { state in
            if let resumed = state.resumedAttempt, resumed.position == position { return resumed.number }
            return 1
        }
    }

    func setResumedAttempt(_ attempt: Attempt) {
        state.withAnnouncedLock { $0.resumedAttempt = attempt }
    }

    func setCursor(_ position: Int) {
        state.withAnnouncedLock { $0.cursor = position }
    }

    func setDoneValue(_ value: [UInt8]) {
        state.withAnnouncedLock { $0.doneValue = value }
    }

    var doneValue: [UInt8]? { state.withAnnouncedLock { $0.doneValue } }

    /// `stage` is about to run: the stages between the last one that ran and
    /// it did not, and are recorded as skipped (in order, before its own
    /// writes; nobody waits for these).
    func advance(to position: Int) {
        let skipped = state.withAnnouncedLock { state -> Range<Int> in
            let range = state.cursor..<max(state.cursor, position)
            state.cursor = max(state.cursor, position + 1)
            return range
        }
        let store = context.store
        for position in skipped {
            let skip = StageResult(lease: lease, position: position, outcome: .skipped, at: context.databaseClock.now())
            persist(
                "record stage \(position) as skipped", position: position,
                { store.recordStageResult(skip, completion: $0) }
            ) { result, _ in
                if case let .failure(error) = result {
                    self.log(.warning, "could not record the stage as skipped: \(error)", position: position)
                }
            }
        }
    }

    /// Stops the job at `deadline`, a time of the clock that reads `now`.
    func armJobTimeout(deadline: Date, now: Date, _ timeout: Duration) {
        let error = EngineError(
            .jobTimedOut, "job \(id) (\(definition.name)) ran past its timeout of \(timeout.jobdText)", jobID: id)
        let timer = OneShotTimer.schedule(on: context.deadlines, at: deadline, now: now) { [weak self] in
            self?.stop(error)
        }
        state.withAnnouncedLock { $0.jobTimer = timer }
    }

    /// The job is done with (resolved, parked or abandoned): tell the engine, once.
    func ended() {
        let (first, timer) = state.withAnnouncedLock { state -> (Bool, OneShotTimer?) in
            guard !state.ended else { return (false, nil) }
            state.ended = true
            defer { state.jobTimer = nil }
            return (true, state.jobTimer)
        }
        guard first else { return }
        timer?.cancel()
        onEnd(self)
    }

    func log(_ level: Logger.Level, _ message: String, position: Int? = nil) {
        context.log(level, message, job: id, stage: position)
    }
}

/// Whether the engine is draining; read by every stage before it starts.
final class DrainFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isDraining: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}

extension StageKind {
    /// `catch`, `ensure`, `finally`: they run after a cancellation or a job
    /// timeout, and are not stopped by one.
    var isCleanup: Bool {
        self == .catch || self == .ensure || self == .finally
    }

    /// Whether the stage's own failure rejects the chain. `tap`, `catch`,
    /// `ensure` and `finally` leave the outcome as it was.
    var failureRejectsChain: Bool {
        switch self {
        case .firstly, .then, .map, .get, .when, .race, .each, .done, .recover: return true
        case .tap, .catch, .ensure, .finally: return false
        }
    }
}
