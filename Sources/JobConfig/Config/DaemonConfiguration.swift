import JobValues

/// jobd.yaml, loaded: every path absolute, every default filled in.
///
///     database: ../var/jobd.sqlite   # default /var/lib/jobd/jobd.sqlite; or postgres://user@host/db
///     node: web-1                    # this host in leases and logs; default: the host name
///     definitions: jobs.d            # default jobs.d
///     socket: ../var/jobd.sock       # default /run/jobd/jobd.sock
///     Q:                             # `map` and `return` always exist
///       map:    { concurrency: 4 }   # default 4
///       return: { concurrency: 1 }   # default 1
///       slow:   { concurrency: 2 }   # more queues: a stage's `on: slow`
///     pools: { default: 16 }         # `default` always exists (16)
///     log: { level: info }           # trace … critical, default info
///     store:
///       durability: normal           # SQLite synchronous: normal | full
///       value-cap: 1MiB              # largest stage value (stdout) kept
///       retention: 30d               # prune resolved jobs older; `forever` keeps all
///     shutdown-grace: 30s            # SIGTERM: how long running stages may finish
///     kill-grace: 5s                 # SIGTERM to a process group, SIGKILL after this
///     poll-interval: 5s              # look for work nobody nudged jobd about
///     lease: 30s                     # a dead host's jobs are taken over after this
///     http: { listen: 127.0.0.1:9464 }  # optional: /metrics and the dashboard
///
/// Relative paths resolve against the folder of the config file.
public struct DaemonConfiguration: Sendable, Hashable {
    /// The absolute path of the file this came from (nil for `defaults`).
    public var sourcePath: String?
    /// The SQLite database file, absolute; or a PostgreSQL URL, as written
    /// (``databaseLocation``). May hold a password: print ``databaseDescription``.
    public var database: String
    /// This host's name in leases (`jobs.lease_owner`), logs and jobctl's
    /// output. Several jobds sharing one PostgreSQL database need distinct ones.
    public var node: String
    /// The folder of `*.yaml` job definitions, absolute.
    public var definitions: String
    /// The unix socket jobctl nudges, absolute.
    public var socket: String
    /// `conf.Q`: the named dispatch queues stage bodies run on. Always holds
    /// `map` and `return`.
    public var queues: [String: QueueConfiguration]
    /// Named job pools and how many jobs of each run at once. Always holds
    /// `default`.
    public var pools: [String: Int]
    /// Jobs of a pool running at once across all hosts, for the pools
    /// with `limit: { global: N }`.
    public var poolLimits: [String: Int] = [:]
    public var log: LogConfiguration
    public var store: StoreConfiguration
    /// On SIGTERM/SIGINT, how long running stages may go on before their
    /// process groups are ended (their jobs stay resumable).
    public var shutdownGrace: Duration
    /// On a timeout or cancel, the delay between SIGTERM and SIGKILL to an
    /// action's process group.
    public var killGrace: Duration
    /// How often jobd looks for work it was not told about: jobs written
    /// without a nudge (jobd was down, or an INSERT by hand) and leases of
    /// runners that died. A `jobctl submit` nudges, so this is a fallback.
    public var pollInterval: Duration
    /// How long a running job stays this host's without a heartbeat: jobd
    /// renews its leases every sixth of it, and a host that died has its
    /// jobs taken over by the others once it has passed.
    public var lease: Duration
    /// The HTTP listener for `/metrics` and the dashboard; nil (the
    /// default) listens nowhere.
    public var http: HTTPConfiguration?

    public static let mapQueue = "map"
    public static let returnQueue = "return"
    public static let defaultPool = "default"
    /// Jobs of one pool running at once.
    public static let poolSizeRange = 1...10_000
    /// A pool's size when `{ size: N }` leaves it out.
    public static let defaultPoolSize = 16
    /// The largest `limit: { global: N }` of a pool.
    public static let maxPoolLimit = 1_000_000
    /// How many `Q` entries and pools jobd.yaml may name.
    public static let maxQueues = 64
    public static let maxPools = 256
    /// What `lease` may be: long enough for a few heartbeats over a slow
    /// network, short enough that a dead host's jobs do not wait a day.
    public static let leaseRange: ClosedRange<Duration> = .seconds(3) ... .seconds(3600)

    /// Every setting at its default, paths resolved against `folder`.
    public static func defaults(relativeTo folder: String) -> DaemonConfiguration {
        DaemonConfiguration(
            sourcePath: nil,
            database: "/var/lib/jobd/jobd.sqlite",
            node: defaultNode(),
            definitions: ConfigPaths.resolve("jobs.d", against: folder),
            socket: "/run/jobd/jobd.sock",
            queues: [mapQueue: QueueConfiguration(concurrency: 4), returnQueue: QueueConfiguration(concurrency: 1)],
            pools: [defaultPool: 16],
            log: LogConfiguration(level: .info),
            store: StoreConfiguration(
                durability: .normal, valueCap: StoreConfiguration.defaultValueCap, retention: .days(30)),
            shutdownGrace: .seconds(30),
            killGrace: .seconds(5),
            pollInterval: .seconds(5),
            lease: .seconds(30),
            http: nil
        )
    }

    /// What definitions are checked against: the queue and pool names.
    public var definitionContext: DefinitionContext {
        DefinitionContext(
            queues: Set(queues.keys), pools: Set(pools.keys), valueCap: store.valueCap.bytes,
            limitedPools: Set(poolLimits.keys))
    }
}

/// One `Q` entry: a dispatch queue for stage bodies.
public struct QueueConfiguration: Sendable, Hashable {
    /// How many stage bodies may run on it at once; 1 makes it serial.
    public var concurrency: Int

    /// What `concurrency` may be: each slot is a dispatch queue, made at start.
    public static let concurrencyRange = 1...1024

    public init(concurrency: Int) {
        self.concurrency = concurrency
    }
}

/// `http:` in jobd.yaml.
public struct HTTPConfiguration: Sendable, Hashable {
    public var listen: HTTPListenAddress
    /// Logins and roles (``HTTPAccessConfiguration``); none by default: read-only, for whoever reaches the listener.
    public var access: HTTPAccessConfiguration

    public init(listen: HTTPListenAddress, access: HTTPAccessConfiguration = HTTPAccessConfiguration()) {
        self.listen = listen
        self.access = access
    }
}

public struct LogConfiguration: Sendable, Hashable {
    /// swift-log's levels, spelled as swift-log spells them.
    public enum Level: String, Sendable, Hashable, CaseIterable {
        case trace, debug, info, notice, warning, error, critical
    }

    public var level: Level
    /// Whether stage logs also go to journald when jobd runs under systemd
    /// (`log: { journal: false }` turns it off).
    public var journal: Bool

    public init(level: Level, journal: Bool = true) {
        self.level = level
        self.journal = journal
    }
}

public struct StoreConfiguration: Sendable, Hashable {
    /// SQLite's `synchronous` in WAL mode: `normal` may lose the last
    /// transactions on power loss (never on a crash of jobd), `full` does not
    /// and costs an fsync per commit.
    public enum Durability: String, Sendable, Hashable, CaseIterable {
        case normal, full
    }

    /// How long resolved jobs are kept before pruning.
    public enum Retention: Sendable, Hashable {
        case forever
        case duration(Duration)

        static func days(_ n: Int64) -> Retention { .duration(.seconds(n * 86_400)) }
    }

    public var durability: Durability
    /// The largest value (an action's stdout, a job's input) kept; an action
    /// printing more is rejected with an error that says so.
    public var valueCap: ByteSize
    public var retention: Retention

    /// `value-cap` when jobd.yaml gives none.
    public static let defaultValueCap = ByteSize.mebibytes(1)

    public init(durability: Durability, valueCap: ByteSize, retention: Retention) {
        self.durability = durability
        self.valueCap = valueCap
        self.retention = retention
    }
}
