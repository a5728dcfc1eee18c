import Dispatch
import Foundation
import JobStore

/// What every running job shares: the store, the queues, the action
/// executor, the settings and the log. A running job keeps the copy it
/// started with; `Engine.reload` makes new ones with new queues and executor.
struct EngineContext: Sendable {
    let store: any JobStore
    var queues: StageQueues
    var executor: ActionExecutor
    let options: EngineOptions
    let owner: String
    let log: EngineLogger
    /// Where engine timers fire (stage and job timeouts, backoff, wake-ups).
    let timers: DispatchQueue
    /// Where claim results and other bookkeeping run (off the store's writer thread).
    let control: DispatchQueue
}
