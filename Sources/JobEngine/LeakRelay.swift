import Logging
import Promises

extension Engine {
    /// What to install as `conf.leakHandler` in a process that runs engines
    /// (the daemon does; an engine never touches `conf` itself).
    ///
    /// A promise deallocated while pending means an action lost its resolver:
    /// the handler logs where the promise was made and rejects it with
    /// `PendingPromiseDeallocated`, so the chain waiting on it goes on; the
    /// stage that ran the action then names the job and the stage, records a
    /// `finalizer-warning` event and rejects the job (`JobRun.stageError`).
    public static func leakHandler(logger: Logger) -> @Sendable (PMKLeakReport) -> Void {
        { leak in
            if leak.canReject {
                logger.warning("\(leak.event.message) (made at \(leak.location)); rejecting it so its job goes on")
                leak.reject(PendingPromiseDeallocated(location: leak.location))
            } else {
                logger.warning("\(leak.event.message) (made at \(leak.location))")
            }
        }
    }
}
