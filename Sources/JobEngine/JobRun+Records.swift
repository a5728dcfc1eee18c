import Foundation
import JobConfig
import JobMetrics
import JobStore
import Promises

extension JobRun {
    /// Runs `stage` on the chain's outcome so far and says how the chain
    /// goes on, once the stage's result is in SQLite.
    ///
    /// The action reads the value (a rejected chain: the error's text). On
    /// success the chain carries the action's output for the kinds that
    /// replace the value, and the incoming outcome for `get`, `tap`, `catch`,
    /// `ensure` and `finally`. A failure rejects the chain for the kinds
    /// that produce a value; `tap`, `catch`, `ensure` and `finally` record
    /// it and leave the outcome alone — except a lost promise, which always
    /// rejects the job.
    func run(_ stage: StageDefinition, incoming: Result<[UInt8]>, on queue: DispatchQueue) -> Promise<[UInt8]> {
        if let refusal = refusal(for: stage) {
            return Promise(error: refusal)
        }
        advance(to: stage.position)
        let input: [UInt8]
        switch incoming {
        case let .fulfilled(value): input = value
        case let .rejected(error): input = Array("\(error)".utf8)
        }
        // Not `then { }.recover { }`: the recover would also see the
        // rejection a `catch` or `ensure` passes on after it succeeded.
        let (promise, resolver) = Promise<[UInt8]>.pending()
        perform(stage, input: input, on: queue).pipe { result in
            let next: Promise<[UInt8]>
            switch result {
            case let .fulfilled(output): next = self.recordSuccess(stage, output, incoming: incoming)
            case let .rejected(error): next = self.recordFailure(stage, error, incoming: incoming)
            }
            next.pipe { resolver.resolve($0) }
        }
        return promise
    }

    private func recordSuccess(
        _ stage: StageDefinition, _ output: ActionOutput, incoming: Result<[UInt8]>
    ) -> Promise<[UInt8]> {
        let next: Result<[UInt8]> = stage.kind.replacesValue ? .fulfilled(output.bytes) : incoming
        if stage.kind == .done { setDoneValue(output.bytes) }
        // A fulfilled stage's value is the chain's value after it, so the
        // value of the last fulfilled stage is where a resumed job goes on.
        let recorded: [UInt8]
        if case let .fulfilled(value) = next { recorded = value } else { recorded = output.bytes }
        let (promise, resolver) = Promise<[UInt8]>.pending()
        record(stage, .fulfilled(Data(recorded)), exitCode: output.exitCode).pipe { written in
            switch written {
            case .fulfilled: resolver.resolve(next)
            // Too big to keep: recorded as the stage's failure.
            case let .rejected(error):
                self.recordFailure(stage, error, incoming: incoming).pipe { resolver.resolve($0) }
            }
        }
        return promise
    }

    private func recordFailure(
        _ stage: StageDefinition, _ error: any Error, incoming: Result<[UInt8]>
    ) -> Promise<[UInt8]> {
        let failure =
            error as? EngineError ?? stageError(error, stage: stage, attempt: attempt(at: stage.position).number)
        if failure.haltsJob { return Promise(error: failure) }
        let written: Promise<Void> =
            failure.recorded
            ? .value(())
            : record(stage, .rejected(failure.message), exitCode: failure.exitCode, errorCode: failure.code)
        return written.then(on: nil) { () -> Promise<[UInt8]> in
            if stage.kind.failureRejectsChain || failure.code == .promiseLeaked {
                return Promise(error: failure)
            }
            return incoming.promise
        }
    }

    /// Writes the stage's result (its last attempt's number and start; for
    /// a rejection, `errorCode` says why). A value over the store's cap is
    /// recorded as the stage's failure instead; a lost lease or a store that
    /// cannot write halts the job. While the store cannot write for now
    /// (a server restarting), the job waits and the write is made again.
    func record(
        _ stage: StageDefinition, _ outcome: StageOutcome, exitCode: Int32?, errorCode: EngineError.Code? = nil
    ) -> Promise<Void> {
        let attempt = self.attempt(at: stage.position)
        let result = StageResult(
            lease: lease, position: stage.position, outcome: outcome, exitCode: exitCode,
            errorCode: errorCode?.rawValue, attempt: attempt.number, startedAt: attempt.startedAt,
            at: context.databaseClock.now())
        // The completion runs on the store's writer thread: the common case
        // only resolves the promise (one box, one handler).
        let (promise, resolver) = Promise<Void>.pending()
        let (metrics, definition) = (context.configuration.metrics, self.definition.name)
        let store = context.store
        persist(
            "record the result of stage `\(stage.name)`", position: stage.position,
            { store.recordStageResult(result, completion: $0) }
        ) { written, _ in
            switch written {
            case .success:
                if let startedAt = attempt.startedAt {
                    metrics.stageAttemptFinished(
                        definition: definition, kind: stage.kind, since: startedAt, until: result.at)
                }
                resolver.fulfill(())
            case let .failure(error):
                self.recordFailed(stage, outcome, exitCode: exitCode, error).pipe { resolver.resolve($0) }
            }
        }
        return promise
    }

    private func recordFailed(
        _ stage: StageDefinition, _ outcome: StageOutcome, exitCode: Int32?, _ error: any Error
    ) -> Promise<Void> {
        if let storeError = error as? JobStoreError, storeError.code == .valueTooLarge,
            case let .fulfilled(value) = outcome
        {
            var failure = EngineError(
                .stageFailed,
                "stage `\(stage.name)` produced \(value.count) bytes, more than the store keeps (\(storeError.message))",
                jobID: id, position: stage.position, exitCode: exitCode)
            failure.recorded = true
            return record(stage, .rejected(failure.message), exitCode: exitCode, errorCode: failure.code).then(on: nil)
            { () -> Promise<Void> in
                throw failure
            }
        }
        return Promise(
            error: storeFailure(error, doing: "record the result of stage `\(stage.name)`", position: stage.position))
    }
}

extension Result {
    /// A promise already resolved with this outcome.
    var promise: Promise<T> {
        switch self {
        case let .fulfilled(value): return .value(value)
        case let .rejected(error): return Promise(error: error)
        }
    }
}

extension JobMetrics {
    /// One attempt of a stage of `kind`, started at `start`, ended at `end` (by the same clock).
    func stageAttemptFinished(definition: String, kind: StageKind, since start: Date, until end: Date) {
        stageAttemptFinished(
            definition: definition, kind: kind.rawValue, duration: .seconds(max(0, end.timeIntervalSince(start))))
    }
}
