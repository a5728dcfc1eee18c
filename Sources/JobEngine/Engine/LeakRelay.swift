import Promises
import Synchronization

/// Installs the engine's `conf.leakHandler` and `conf.logHandler` (they are
/// process-wide; the engine started last receives them).
///
/// A promise deallocated while pending means an action lost its resolver:
/// the handler logs where the promise was made and rejects it with
/// `PendingPromiseDeallocated`, so the chain waiting on it goes on; the
/// stage that ran the action then names the job and the stage, records a
/// `finalizer-warning` event and rejects the job (`JobRun.stageError`).
enum LeakRelay {
    static func install(log: @escaping EngineLogger) {
        conf.leakHandler = { leak in
            if leak.canReject {
                log(EngineLogRecord(
                    level: .warning, message: "\(leak.event) (made at \(leak.location)); rejecting it so its job goes on"))
                leak.reject(PendingPromiseDeallocated(location: leak.location))
            } else {
                log(EngineLogRecord(level: .warning, message: "\(leak.event) (made at \(leak.location))"))
            }
        }
        conf.logHandler = { event in
            log(EngineLogRecord(level: .warning, message: "promises: \(event)"))
        }
    }
}
