import Locking
import Promises
import Synchronization

/// The engine's `conf.leakHandler` and `conf.logHandler` (process-wide, so
/// shared by every engine of the process: each event goes to the logger of
/// every engine started and not yet drained).
///
/// A promise deallocated while pending means an action lost its resolver:
/// the handler logs where the promise was made and rejects it with
/// `PendingPromiseDeallocated`, so the chain waiting on it goes on; the
/// stage that ran the action then names the job and the stage, records a
/// `finalizer-warning` event and rejects the job (`JobRun.stageError`).
enum LeakRelay {
    private static let loggers = Mutex<[ObjectIdentifier: EngineLogger]>([:])

    static func register(_ engine: AnyObject, log: @escaping EngineLogger) {
        loggers.withAnnouncedLock { $0[ObjectIdentifier(engine)] = log }
        conf.leakHandler = { leak in
            if leak.canReject {
                broadcast(EngineLogRecord(
                    level: .warning, message: "\(leak.event) (made at \(leak.location)); rejecting it so its job goes on"))
                leak.reject(PendingPromiseDeallocated(location: leak.location))
            } else {
                broadcast(EngineLogRecord(level: .warning, message: "\(leak.event) (made at \(leak.location))"))
            }
        }
        conf.logHandler = { event in
            broadcast(EngineLogRecord(level: .warning, message: "promises: \(event)"))
        }
    }

    static func unregister(_ engine: AnyObject) {
        loggers.withAnnouncedLock { _ = $0.removeValue(forKey: ObjectIdentifier(engine)) }
    }

    private static func broadcast(_ record: EngineLogRecord) {
        for log in loggers.withAnnouncedLock({ Array($0.values) }) { log(record) }
    }
}
