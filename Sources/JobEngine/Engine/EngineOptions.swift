import Dispatch
import Foundation

/// How an `Engine` runs, beyond jobd.yaml. The defaults suit the daemon.
public struct EngineOptions: Sendable {
    /// Names this process in leases (`lease_owner`); unique per process.
    public var owner: String
    /// A running job's lease lasts this long unless renewed. After a crash,
    /// its jobs are taken up again once it has passed.
    public var leaseDuration: Duration
    /// How often leases are renewed — which is also how soon a
    /// cancellation requested with `jobctl cancel` is seen.
    public var renewInterval: Duration
    /// How often the engine looks for work nobody told it about (jobs
    /// submitted without a nudge, leases of dead runners that expired).
    public var pollInterval: Duration
    /// The most jobs taken in one claim.
    public var maxClaimBatch: Int
    /// Runs `run` / `shell` actions. The default calls its completions on
    /// a serial queue of its own (they only resolve a promise).
    public var processRunner: ProcessRunner
    /// Replaces a stage's action when it returns a promise (tests: an
    /// action that loses its resolver, for the finalizer path).
    public var customAction: CustomAction?
    /// Whether `start()` sets the process-wide `conf.Q` (to the `map` and
    /// `return` queues) and `conf.leakHandler` / `conf.logHandler` (to the
    /// engine's logger, rejecting leaked promises). The daemon wants this;
    /// the finalizer path needs it. Tests that share a process with other
    /// users of `conf` turn it off.
    public var configuresPromises: Bool
    /// Called with a job's id when this engine is done with it: resolved,
    /// or left for later (drain, lost lease). For `--wait` and benchmarks.
    public var onJobEnd: (@Sendable (Int64) -> Void)?

    public init(
        owner: String = EngineOptions.defaultOwner(),
        leaseDuration: Duration = .seconds(30),
        renewInterval: Duration = .seconds(5),
        pollInterval: Duration = .seconds(5),
        maxClaimBatch: Int = 256,
        processRunner: ProcessRunner = ProcessRunner(completionQueue: DispatchQueue(label: "jobd.engine.process-completions")),
        customAction: CustomAction? = nil,
        configuresPromises: Bool = true,
        onJobEnd: (@Sendable (Int64) -> Void)? = nil
    ) {
        self.owner = owner
        self.leaseDuration = leaseDuration
        self.renewInterval = renewInterval
        self.pollInterval = pollInterval
        self.maxClaimBatch = maxClaimBatch
        self.processRunner = processRunner
        self.customAction = customAction
        self.configuresPromises = configuresPromises
        self.onJobEnd = onJobEnd
    }

    /// `jobd-HOST-PID-RANDOM`.
    public static func defaultOwner() -> String {
        let host = ProcessInfo.processInfo.hostName
        let random = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        return "jobd-\(host)-\(getpid())-\(random)"
    }
}
