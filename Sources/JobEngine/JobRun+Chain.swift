import Dispatch
import Foundation
import JobConfig
import JobMetrics
import JobStore
import Logging
import Promises

/// Each job is a promise chain of the `Promises` library, one link per
/// stage, each body dispatched on its stage's `Q` queue:
///
/// | kind | link |
/// |---|---|
/// | `firstly` | `firstly { action(input) }`, on its queue |
/// | `then`, `get`, `done`, `when`, `race` | `then(on: q) { action($0) }` — `when(fulfilled:)` / `race(fulfilled:)` inside |
/// | `map` | `map(on: q) { transform($0) }`, then its record |
/// | `recover` | `recover(on: q, policy: .allErrorsExceptCancellation) { action($0) }` |
/// | `catch` | `recover(on: q, policy: .allErrors) { action($0); rethrow }` |
/// | `tap`, `ensure`, `finally` | `then(on: q) { … }.recover(on: q, policy: .allErrors) { … }` |
///
/// and the job resolves in `done { finish(.fulfilled) }.catch(policy: .allErrors) { finish }`.
/// PromiseKit's `get`, `tap`, `done`, `catch` and `ensure` take bodies
/// that cannot wait; a stage's action is a process and its record a write,
/// so those kinds chain the operators whose bodies return a promise, with
/// the kind's semantics (pass the value through, keep the rejection) in
/// `run(_:incoming:on:)`.
extension JobRun {
    /// Builds the chain from where the job resumes and lets it run.
    func launch(_ plan: ResumePlan) {
        let stages = definition.stages
        setCursor(plan.start)
        if plan.start < stages.count, stages[plan.start].kind == .firstly, case let .fulfilled(input) = plan.state {
            // PromiseKit's `firstly` runs its body where it is called: call it on the stage's queue.
            let stage = stages[plan.start]
            let queue = context.queues.queue(for: stage).slot()
            queue.async {
                let head = firstly { self.run(stage, incoming: .fulfilled(input), on: queue) }
                self.conclude(self.link(stages[(plan.start + 1)...], to: head))
            }
        } else {
            let head = firstly { plan.state.promise }
            conclude(link(stages[plan.start...], to: head))
        }
    }

    private func link(_ stages: ArraySlice<StageDefinition>, to head: Promise<[UInt8]>) -> Promise<[UInt8]> {
        var chain = head
        for stage in stages {
            chain = link(stage, to: chain)
        }
        return chain
    }

    private func link(_ stage: StageDefinition, to chain: Promise<[UInt8]>) -> Promise<[UInt8]> {
        let queue = context.queues.queue(for: stage).slot()
        switch stage.kind {
        case .firstly, .then, .get, .done, .when, .race, .each:
            return chain.then(on: queue) { self.run(stage, incoming: .fulfilled($0), on: queue) }
        case .map:
            return recordTransform(stage, chain.map(on: queue) { try self.transform(stage, $0) })
        case .recover:
            return chain.recover(on: queue, policy: .allErrorsExceptCancellation) { error -> Promise<[UInt8]> in
                if let failure = error as? EngineError, !failure.isRecoverable { throw failure }
                return self.run(stage, incoming: .rejected(error), on: queue)
            }
        case .catch:
            return chain.recover(on: queue, policy: .allErrors) { error -> Promise<[UInt8]> in
                if let failure = error as? EngineError, failure.haltsJob { throw failure }
                return self.run(stage, incoming: .rejected(error), on: queue)
            }
        case .tap, .ensure, .finally:
            return chain.then(on: queue) {
                self.run(stage, incoming: .fulfilled($0), on: queue)
            }.recover(on: queue, policy: .allErrors) { error -> Promise<[UInt8]> in
                // Not the stage's own failure, nor a halt: the chain arrived rejected.
                if let failure = error as? EngineError, failure.haltsJob || failure.position == stage.position {
                    throw failure
                }
                return self.run(stage, incoming: .rejected(error), on: queue)
            }
        }
    }

    // MARK: map

    /// The body of a `map` stage: its transform, in process, on its queue.
    private func transform(_ stage: StageDefinition, _ value: [UInt8]) throws -> [UInt8] {
        if let refusal = refusal(for: stage) { throw refusal }
        advance(to: stage.position)
        let number = firstAttemptNumber(at: stage.position)
        note(Attempt(position: stage.position, number: number, startedAt: context.databaseClock.now()))
        guard case let .transform(transform) = stage.action else {
            throw EngineError(
                .stageFailed, "a `map` stage takes a `transform`, not `\(stage.action.keyword)`", jobID: id,
                position: stage.position)
        }
        do {
            return try transform.apply(value)
        } catch {
            throw EngineError(
                .stageFailed, "transform \(transform) failed: \(error.message)", jobID: id, position: stage.position)
        }
    }

    /// Writes a `map` stage's outcome — when its body ran — before the chain goes on.
    private func recordTransform(_ stage: StageDefinition, _ mapped: Promise<[UInt8]>) -> Promise<[UInt8]> {
        let (promise, resolver) = Promise<[UInt8]>.pending()
        mapped.pipe { result in
            switch result {
            case let .fulfilled(value):
                self.record(stage, .fulfilled(Data(value)), exitCode: nil).pipe { written in
                    switch written {
                    case .fulfilled: resolver.fulfill(value)
                    case let .rejected(error): resolver.reject(error)
                    }
                }
            case let .rejected(failure as EngineError)
            where failure.code == .stageFailed && failure.position == stage.position:
                self.record(stage, .rejected(failure.message), exitCode: nil, errorCode: failure.code).then(on: nil) {
                    () -> Promise<[UInt8]> in
                    Promise(error: failure)
                }.pipe { resolver.resolve($0) }
            case .rejected:
                resolver.resolve(result)
            }
        }
        return promise
    }

    // MARK: The end

    /// Resolves the job as its chain did: fulfilled with the `done` stage's
    /// output (or the last value), rejected, or cancelled. A halted chain
    /// (drain, lost lease, store failure) leaves the job unresolved.
    private func conclude(_ chain: Promise<[UInt8]>) {
        chain.done(on: nil) { value in
            self.finish(.fulfilled(Data(self.doneValue ?? value)))
        }.catch(on: nil, policy: .allErrors) { error in
            guard let failure = error as? EngineError else {
                self.finish(.rejected("\(error)"))
                return
            }
            switch failure.code {
            case .draining: self.park(failure)
            case .waitingForChildren:
                self.log(.debug, failure.message, position: failure.position)
                self.ended()
            case .leaseLost, .storeFailed:
                self.log(.warning, "let go unresolved: \(failure.message)")
                self.ended()
            case .cancelled: self.finish(.cancelled(failure.message))
            default: self.finish(.rejected(failure.message))
            }
        }
    }

    func finish(_ outcome: JobOutcome) {
        let (store, finish) = (
            context.store,
            JobFinish(
                lease: lease, outcome: outcome, at: context.databaseClock.now(), parentID: claimed.job.parentID,
                startsChildren: definition.startsChildren)
        )
        persist("record the job's end", { store.finish(finish, completion: $0) }) { result, tries in
            switch result {
            case .success:
                self.resolved(outcome)
            case let .failure(error as JobStoreError) where error.code == .leaseLost && tries > 1:
                // An earlier try may have been committed as its connection failed.
                Task { await self.checkFinished(outcome, after: error) }
                return
            case let .failure(error):
                self.log(.error, "could not record the job's end (\(outcome)): \(error)")
            }
            self.ended()
        }
    }

    private func resolved(_ outcome: JobOutcome) {
        context.configuration.metrics.jobResolved(definition: definition.name, state: outcome.state)
    }

    /// A finish made again found the job no longer running under its lease:
    /// either an earlier try went through (the job is resolved as `outcome`
    /// with this lease's claim), or the lease was lost meanwhile.
    private func checkFinished(_ outcome: JobOutcome, after error: JobStoreError) async {
        let job = try? await context.store.job(id)?.job
        if let job, job.state == outcome.state, job.claims == lease.claim, job.leaseOwner == lease.owner {
            log(.info, "the job's end was recorded by an earlier try (its connection failed as it committed)")
            resolved(outcome)
        } else {
            log(.error, "could not record the job's end (\(outcome)): \(error)")
        }
        ended()
    }

    /// Leaves a job unresolved for the next engine: its lease is cut to a
    /// millisecond, so the next start requeues it at once.
    private func park(_ reason: EngineError) {
        log(.info, "parked: \(reason.message)")
        context.store.renew([lease], leaseDuration: .milliseconds(1)) { _ in
            self.ended()
        }
    }
}

extension JobOutcome {
    /// The state a job ends in with this outcome.
    var state: JobState {
        switch self {
        case .fulfilled: .fulfilled
        case .rejected: .rejected
        case .cancelled: .cancelled
        }
    }
}
