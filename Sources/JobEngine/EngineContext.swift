import Dispatch
import Foundation
import JobStore
import Logging

/// What every running job shares: the store, the queues, the action
/// executor, the settings, the timers and the log. A running job keeps the
/// copy it started with; `Engine.reload` makes new ones with new queues and
/// executor.
struct EngineContext: Sendable {
    let store: any EngineStore
    /// The store as it keeps stage logs, if it does.
    var logs: (any StageLogStore)? { store as? any StageLogStore }
    var queues: StageQueues
    var executor: ActionExecutor
    let configuration: EngineConfiguration
    var owner: String { configuration.owner }
    /// Stage and job timeouts, backoff, sleeps and wake-ups: this engine's own.
    let deadlines: TimerHeap
    /// Where the renewal and poll timers fire.
    let timers: DispatchQueue
    /// Where claim results and other bookkeeping run (off the store's writer thread).
    let control: DispatchQueue
    /// The database's clock: what stored times are compared with, and the
    /// times the engine writes.
    let databaseClock: DatabaseClock
    /// The stage logs being written, for followers on this host.
    let liveLogs: LiveStageLogs

    /// Logs `message` with the job and stage as metadata.
    func log(_ level: Logger.Level, _ message: String, job: Int64? = nil, stage: Int? = nil) {
        var metadata: Logger.Metadata = [:]
        if let job { metadata["job"] = "\(job)" }
        if let stage { metadata["stage"] = "\(stage)" }
        configuration.logger.log(level: level, "\(message)", metadata: metadata)
    }
}
