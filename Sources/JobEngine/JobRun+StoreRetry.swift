import Foundation
import JobConfig
import JobStore
import JobValues
import Logging
import Promises

extension JobRun {
    /// Makes one of this job's writes (a stage's start or result, the
    /// job's end) and calls `completion` with how it went. While the store
    /// cannot write for now — ``JobStoreError/Code/isRetryable``: the
    /// server restarting, a dropped connection, a lock held too long — the
    /// write is made again after a pause (`storeRetryDelay`, doubling up to
    /// `maxStoreRetryDelay`), for as long as the job is not halted (the
    /// drain's grace ran out, its lease was lost). The job waits meanwhile;
    /// it neither fails nor moves on.
    ///
    /// A write that failed while its commit was under way may have been
    /// committed: made again, a stage's start or result writes the same
    /// values once more; a finish gets `lease-lost` (see ``finish(_:)``).
    func persist(
        _ what: String, position: Int? = nil,
        _ write: @escaping @Sendable (@escaping @Sendable (Swift.Result<Void, any Error>) -> Void) -> Void,
        completion: @escaping @Sendable (_ result: Swift.Result<Void, any Error>, _ tries: Int) -> Void
    ) {
        persist(
            what, position: position, tries: 1, delay: context.configuration.storeRetryDelay, write,
            completion: completion)
    }

    private func persist(
        _ what: String, position: Int?, tries: Int, delay: Duration,
        _ write: @escaping @Sendable (@escaping @Sendable (Swift.Result<Void, any Error>) -> Void) -> Void,
        completion: @escaping @Sendable (Swift.Result<Void, any Error>, Int) -> Void
    ) {
        write { result in
            guard case let .failure(error) = result, let storeError = error as? JobStoreError,
                storeError.code.isRetryable, !self.isHalted
            else {
                if tries > 1, case .success = result {
                    self.log(
                        .notice, "could \(what) after \(tries) tries: the database answers again", position: position)
                }
                completion(result, tries)
                return
            }
            if tries == 1 {
                self.log(
                    .warning,
                    "could not \(what) for now; the job waits and tries again (every \(delay.jobdText) at "
                        + "first, then up to every \(self.context.configuration.maxStoreRetryDelay.jobdText)): \(storeError)",
                    position: position)
            }
            let next = min(delay * 2, self.context.configuration.maxStoreRetryDelay)
            _ = OneShotTimer.schedule(on: self.context.deadlines, after: delay.dispatchInterval) {
                // Halted while it waited: the job stops here (unresolved, resumable).
                if self.isHalted { return completion(result, tries) }
                self.persist(what, position: position, tries: tries + 1, delay: next, write, completion: completion)
            }
        }
    }
}

extension JobRun {
    /// A stage's start, written as ``persist(_:position:_:completion:)`` writes.
    func promise(start: StageStart, of stage: StageDefinition) -> Promise<Void> {
        let (promise, resolver) = Promise<Void>.pending()
        let store = context.store
        persist(
            "record the start of stage `\(stage.name)`", position: stage.position,
            { store.recordStageStart(start, completion: $0) }
        ) { result, _ in
            resolver.resolve(result)
        }
        return promise
    }
}
