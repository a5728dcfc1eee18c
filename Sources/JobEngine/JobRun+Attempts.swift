import Dispatch
import Foundation
import JobConfig
import JobMetrics
import JobStore
import JobValues
import Logging
import Promises

extension JobRun {
    /// Runs `stage`'s action on `input`, retrying as its `retry` says.
    /// Fulfils with the output of the attempt that succeeded; rejects with
    /// the last attempt's error. Records each attempt's start (for actions
    /// with effects outside jobd: processes, timers) but not its result:
    /// the caller records that, as the stage's kind says.
    func perform(_ stage: StageDefinition, input: [UInt8], on queue: DispatchQueue) -> Promise<ActionOutput> {
        if case let .children(spec) = stage.action { return joinChildren(stage, spec, input: input) }
        let (promise, resolver) = Promise<ActionOutput>.pending()
        attempt(stage, input: input, number: firstAttemptNumber(at: stage.position), tries: 1, on: queue, resolver)
        return promise
    }

    private func attempt(
        _ stage: StageDefinition, input: [UInt8], number: Int, tries: Int, on queue: DispatchQueue,
        _ resolver: Resolver<ActionOutput>
    ) {
        if let refusal = refusal(for: stage) {
            resolver.reject(refusal)
            return
        }
        let control = AttemptControl()
        let startedAt = self.context.databaseClock.now()
        begin(control, for: stage, attempt: Attempt(position: stage.position, number: number, startedAt: startedAt))
        let log = stageLog(for: stage, attempt: number)
        let context = ActionContext(jobID: id, stage: stage, attempt: number, control: control, log: log)
        let executor = self.context.executor
        let action: Promise<ActionOutput>
        if stage.action.recordsStart || executor.customAction != nil {
            let start = StageStart(
                lease: lease, position: stage.position, attempt: number, at: startedAt, deferrable: stage.idempotent)
            let written = promise(start: start, of: stage).recover(on: nil) { error -> Promise<Void> in
                throw self.storeFailure(
                    error, doing: "record the start of stage `\(stage.name)`", position: stage.position)
            }
            if stage.idempotent {
                // Running it twice is harmless, so the action need not wait
                // for the start to be on disk: the write goes on meanwhile
                // (deferred: a result that comes first records the start
                // and the write is dropped), and the result is awaited
                // before the next stage.
                written.catch(on: nil, policy: .allErrors) { error in
                    if let failure = error as? EngineError { control.stop(.job(failure)) }
                }
                action = executor.run(stage.action, input: input, context)
            } else {
                // The start is on disk before the action can have an effect:
                // after a crash, the stage is known to have been in flight.
                action = written.then(on: queue) { () -> Promise<ActionOutput> in
                    if let reason = control.reason {
                        throw ActionExecutor.stopped(stage.action.keyword, stage: stage, reason)
                    }
                    return executor.run(stage.action, input: input, context)
                }
            }
        } else {
            action = executor.run(stage.action, input: input, context)
        }
        let timer = stage.timeout.map { timeout in
            OneShotTimer.schedule(on: self.context.deadlines, after: timeout.dispatchInterval) {
                control.stop(.stageTimeout)
            }
        }
        action.pipe { result in
            // Before the result is recorded: the last lines are queued ahead of it.
            log?.close()
            timer?.cancel()
            self.end(control)
            switch result {
            case let .fulfilled(output):
                resolver.fulfill(output)
            case let .rejected(error):
                let failure = self.stageError(error, stage: stage, attempt: number)
                if let delay = self.retryDelay(after: failure, stage: stage, tries: tries) {
                    self.log(
                        .warning,
                        "attempt \(number) of stage `\(stage.name)` failed, retrying in \(delay.jobdText): \(failure.message)",
                        position: stage.position)
                    // The last attempt is timed when the stage's result is recorded; this one here.
                    self.context.configuration.metrics.stageAttemptFinished(
                        definition: self.definition.name, kind: stage.kind, since: startedAt,
                        until: self.context.databaseClock.now())
                    self.context.configuration.metrics.stageRetried(definition: self.definition.name)
                    self.context.store.recordEvent(
                        NewEvent(
                            jobID: self.id, position: stage.position, kind: "stage-retry",
                            message:
                                "attempt \(number) failed: \(failure.message.prefix(2048)); attempt \(number + 1) in \(delay.jobdText)",
                            at: self.context.databaseClock.now())
                    ) { _ in }
                    self.backOff(stage, delay: delay) {
                        // Attempts run on the stage's queue, as its first did.
                        queue.async {
                            self.attempt(stage, input: input, number: number + 1, tries: tries + 1, on: queue, resolver)
                        }
                    } stopped: {
                        resolver.reject($0)
                    }
                } else {
                    resolver.reject(failure)
                }
            }
        }
    }

    /// Where an attempt's stderr goes: only actions that start processes
    /// have one. The store keeps it within `logs: { max }` (`0`: not at
    /// all); the journal, when on (`log: { journal }`), gets it either way:
    /// it has its own switch and its own rate limit.
    private func stageLog(for stage: StageDefinition, attempt: Int) -> StageLog? {
        guard stage.action.startsProcesses else { return nil }
        let store = stage.logLimit > 0 ? context.logs : nil
        let key = StageLogKey(jobID: id, jobAttempt: claimed.job.attempt, position: stage.position, attempt: attempt)
        let mirror = context.configuration.stageLogMirror?(
            StageLogSource(
                jobID: id, definition: definition.name, stage: stage.name, position: stage.position, attempt: attempt))
        guard store != nil || mirror != nil else { return nil }
        return StageLog(
            key: key, limit: stage.logLimit, store: store, timers: context.timers, mirror: mirror,
            live: context.liveLogs
        ) { [weak self] error in
            self?.log(
                .warning, "could not keep the log of stage `\(stage.name)` (lines are missing): \(error)",
                position: stage.position)
        }
    }

    /// Waits `delay` before `next`, or calls `stopped` if the job is stopped
    /// meanwhile. No thread waits: a timer fires.
    private func backOff(
        _ stage: StageDefinition, delay: Duration, next: @escaping @Sendable () -> Void,
        stopped: @escaping @Sendable (EngineError) -> Void
    ) {
        let control = AttemptControl()
        begin(control, for: stage, attempt: nil)
        let timer = OneShotTimer.schedule(on: context.deadlines, after: delay.dispatchInterval) {
            self.end(control)
            next()
        }
        control.onStop { reason in
            timer.cancel()
            self.end(control)
            stopped(ActionExecutor.stopped("waiting to retry", stage: stage, reason))
        }
    }

    /// The delay before another attempt, or nil if there is none: the
    /// error is the stage's own, attempts are left, and the job goes on.
    private func retryDelay(after failure: EngineError, stage: StageDefinition, tries: Int) -> Duration? {
        guard failure.code == .stageFailed || failure.code == .stageTimedOut else { return nil }
        guard refusal(for: stage) == nil else { return nil }
        var generator = SystemRandomNumberGenerator()
        return stage.retry.delay(afterAttempt: tries, using: &generator)
    }

    /// Any error of an attempt as the stage's `EngineError`. A promise that
    /// was deallocated while pending is reported here: logged with the job,
    /// the stage and where the promise was made, and recorded as an event.
    func stageError(_ error: any Error, stage: StageDefinition, attempt: Int) -> EngineError {
        var failure: EngineError
        switch error {
        case let engineError as EngineError:
            failure = engineError
        case let leak as PendingPromiseDeallocated:
            failure = EngineError(
                .promiseLeaked,
                "stage `\(stage.name)` (\(stage.kind), position \(stage.position)) of job \(id) (\(definition.name)), "
                    + "attempt \(attempt): its promise, made at \(leak.location), was deallocated while pending — "
                    + "the action lost its resolver and can never finish; the job is rejected")
            log(.warning, failure.message, position: stage.position)
            context.configuration.metrics.pendingPromiseDeallocated()
            context.store.recordEvent(
                NewEvent(
                    jobID: id, position: stage.position, kind: "finalizer-warning", message: failure.message,
                    at: context.databaseClock.now())
            ) { [context, id] result in
                if case let .failure(error) = result {
                    context.log(
                        .error, "could not record the finalizer warning: \(error)", job: id, stage: stage.position)
                }
            }
        default:
            failure = EngineError(.stageFailed, "\(error)")
        }
        failure.jobID = id
        if failure.position == nil || failure.code.isStageLevel { failure.position = stage.position }
        return failure
    }

    /// A failed store write as the error that stops the job: its lease is
    /// gone, or the store cannot be written. The job stops here unresolved.
    func storeFailure(_ error: any Error, doing what: String, position: Int?) -> EngineError {
        if let failure = error as? EngineError { return failure }
        if let late = error as? JobStoreError, late.cameAfterOwnEnd {
            // A retried write that lost the race with this run's own end:
            // nothing was lost, there is nothing to stop or warn about.
            log(.debug, "a write came after the job's end: \(late.message)", position: position)
            return EngineError(.leaseLost, late.message, jobID: id, position: position)
        }
        let lost = (error as? JobStoreError)?.code == .leaseLost
        let failure = EngineError(
            lost ? .leaseLost : .storeFailed,
            lost
                ? "job \(id) is no longer this engine's (its lease was lost); it stops here: \(error)"
                : "could not \(what) of job \(id); the job stops here and runs again once its lease expires: \(error)",
            jobID: id, position: position)
        log(lost ? .warning : .error, failure.message, position: position)
        stop(failure)
        return failure
    }
}

extension EngineError.Code {
    /// Codes that belong to the stage that raised them.
    var isStageLevel: Bool {
        self == .stageFailed || self == .stageTimedOut || self == .promiseLeaked
    }
}

extension Action {
    /// Whether it runs programs (itself, or one of its parallel actions).
    var startsProcesses: Bool {
        switch self {
        case .run, .shell: return true
        case let .all(actions), let .any(actions): return actions.contains { $0.startsProcesses }
        case .sleep, .fail, .transform, .children: return false
        }
    }

    /// Whether an attempt's start is written before the action runs:
    /// actions whose effects go beyond jobd, or that take time.
    var recordsStart: Bool {
        switch self {
        case .run, .shell, .sleep, .all, .any: return true
        case .fail, .transform, .children: return false
        }
    }
}
