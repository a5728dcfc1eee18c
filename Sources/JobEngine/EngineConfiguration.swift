import Dispatch
import Foundation
import JobCalendar
import JobConfig
import JobMetrics
import JobProcesses
import Logging

/// How an ``Engine`` runs: its queues and pools, its limits, its timing and
/// its log. Nothing here is read from or written to process-wide state: two
/// engines in one process share nothing they were not both given.
public struct EngineConfiguration: Sendable {
    /// The `Q` queues stage bodies run on, by name, with their concurrency
    /// (1 is serial). `map` (default 4) and `return` (default 1) always exist.
    public var queues: [String: Int]
    /// Named job pools and how many jobs of each run at once.
    public var pools: [String: Int]
    /// Jobs of a pool running at once across all hosts, for the pools with a limit.
    public var poolLimits: [String: Int] = [:]
    /// On a timeout or cancel, the delay between SIGTERM and SIGKILL to an
    /// action's process group.
    public var killGrace: Duration
    /// Stdout past this many bytes rejects a process: the store's value cap.
    public var outputLimit: Int
    /// Names this engine in leases (`lease_owner`); unique per engine.
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
    /// Whether the engine requeues the jobs of expired leases itself, at
    /// start and every `pollInterval`. jobd turns it off: there, one host at
    /// a time does it (the `maintenance` leader), and polls only claim.
    public var requeuesExpiredLeases: Bool
    /// How long a write the store could not make for now (`unavailable`,
    /// `busy`: the server restarting, a dropped connection) waits before it
    /// is made again, at first; the pause doubles up to `maxStoreRetryDelay`.
    public var storeRetryDelay: Duration
    public var maxStoreRetryDelay: Duration
    /// Where the engine logs, with `job` and `stage` metadata.
    public var logger: Logger
    /// What the engine counts and times (jobs resolved, stage durations,
    /// retries, processes, leaked promises); `.disabled` records nothing.
    public var metrics: JobMetrics
    /// The zone schedules are read in when they name none: the host's
    /// (`$TZ`, `:Area/City` included, else /etc/localtime).
    public var hostTimeZone: TimeZone
    /// The host's wall clock (tests pass a skewed one). The engine decides
    /// by the database's clock (timeouts, schedules, the times it writes);
    /// this one is only compared with it, to report the skew.
    public var clock: @Sendable () -> Date
    /// Called with a job's id when this engine is done with it: resolved,
    /// or left for later (drain, lost lease). For `--wait` and benchmarks.
    public var onJobEnd: (@Sendable (Int64) -> Void)?
    /// Makes, for each stage attempt that runs processes, where its stderr
    /// lines go besides the store (jobd: the journal); nil: nowhere else.
    public var stageLogMirror: (@Sendable (StageLogSource) -> (any StageLogMirror)?)?

    public static let mapQueue = "map"
    public static let returnQueue = "return"

    public init(
        queues: [String: Int] = [mapQueue: 4, returnQueue: 1],
        pools: [String: Int] = ["default": 16],
        killGrace: Duration = .seconds(5),
        outputLimit: Int = 1 << 20,
        owner: String = EngineConfiguration.defaultOwner(),
        leaseDuration: Duration = .seconds(30),
        renewInterval: Duration = .seconds(5),
        pollInterval: Duration = .seconds(5),
        maxClaimBatch: Int = 256,
        requeuesExpiredLeases: Bool = true,
        storeRetryDelay: Duration = .milliseconds(100),
        maxStoreRetryDelay: Duration = .seconds(5),
        logger: Logger = Logger(label: "jobd.engine"),
        metrics: JobMetrics = .disabled,
        hostTimeZone: TimeZone = HostTimeZone.current.zone,
        clock: @escaping @Sendable () -> Date = { Date() },
        onJobEnd: (@Sendable (Int64) -> Void)? = nil
    ) {
        self.queues = queues
        self.pools = pools
        self.killGrace = killGrace
        self.outputLimit = outputLimit
        self.owner = owner
        self.leaseDuration = leaseDuration
        self.renewInterval = renewInterval
        self.pollInterval = pollInterval
        self.maxClaimBatch = maxClaimBatch
        self.requeuesExpiredLeases = requeuesExpiredLeases
        self.storeRetryDelay = storeRetryDelay
        self.maxStoreRetryDelay = maxStoreRetryDelay
        self.logger = logger
        self.metrics = metrics
        self.hostTimeZone = hostTimeZone
        self.clock = clock
        self.onJobEnd = onJobEnd
    }

    /// `NODE/PID/TAG` (``LeaseOwner``), the node being the host name unless given.
    public static func defaultOwner(node: String = DaemonConfiguration.defaultNode()) -> String {
        LeaseOwner.current(node: node).description
    }
}
