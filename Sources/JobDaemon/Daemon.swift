import Foundation
import JobConfig
import JobControl
import JobDashboard
import JobDatabase
import JobEngine
import JobHTTP
import JobMetrics
import JobProcesses
import JobStore
import JobStorePostgres
import JobValues
import Locking
import Logging
import Promises
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A running jobd: the store, the engine, the control socket, systemd
/// notifications, signals and the periodic chores (status, watchdog, the
/// database's files, pruning), each long-running part a `Service` of one
/// `ServiceGroup`. `Daemon.run` is the whole life of the process after
/// argument parsing; see docs/jobd.md.
public final class Daemon: Sendable {
    let location: ConfigLocator.Location
    let output: LogOutput
    let logger: Logger
    let notifier: SystemdNotifier
    /// The database: a SQLite file, or PostgreSQL shared with other hosts.
    let opened: OpenedStore
    let store: any JobStore
    /// This jobd's name in leases and leader leases: `NODE/PID/TAG`.
    let owner: String
    /// Who leads the chores shared among jobds, and the database's health.
    let maintenance = Maintenance()
    let engine: Engine
    /// What jobd counts: served at `/metrics` and by `jobctl metrics`.
    let prometheus: PrometheusJobMetrics
    let startedAt = Date()
    /// Whether the HTTP listener listens (true at once without one).
    let listenerStarted: StartSignal

    struct State {
        /// The configuration in force (database and socket as opened).
        var config: DaemonConfiguration
        var lastStatus = ""
        /// Set by the first SIGTERM/SIGINT (or a fatal failure).
        var stopping = false
        /// A failure jobd cannot run past: its exit status.
        var failure: Int32?
        /// The engine's drain, once started (SIGTERM, a failure).
        var drain: Task<Void, Never>?
        /// The HTTP listener's dashboard: stopped at the first SIGTERM.
        var dashboard: Dashboard?
    }

    let state: Mutex<State>

    init(
        location: ConfigLocator.Location, configuration: Configuration, output: LogOutput, logger: Logger,
        store: OpenedStore, prometheus: PrometheusJobMetrics
    ) {
        self.location = location
        self.output = output
        self.logger = logger
        self.notifier = SystemdNotifier()
        self.opened = store
        self.store = store.store
        self.prometheus = prometheus
        let owner = LeaseOwner.current(node: configuration.daemon.node).description
        self.owner = owner
        engine = Engine(
            configuration: EngineConfiguration(
                configuration.daemon, owner: owner, logger: logger, metrics: prometheus.metrics),
            definitions: configuration.definitions.definitions, store: store.store,
            // The engine's completions only resolve a promise (the next
            // step is a store write, queued): done on the process loop's
            // thread, without a hop.
            processRunner: ProcessRunner(
                completionQueue: DispatchQueue(label: "jobd.engine.process-completions"), completesOnLoopThread: true))
        state = Mutex(State(config: configuration.daemon))
        listenerStarted = StartSignal(outcome: configuration.daemon.http == nil ? true : nil)
    }

    // MARK: Running

    /// Starts jobd with `configuration` and returns its exit status once it
    /// stopped (a drain after SIGTERM/SIGINT gives 0).
    public static func run(
        location: ConfigLocator.Location, configuration: Configuration, output: LogOutput
    ) async -> Int32 {
        let logger = Logger(label: "jobd") { _ in JobdLogHandler(output: output) }
        let config = configuration.daemon
        for diagnostic in configuration.definitions.diagnostics { logger.warning("\(diagnostic)") }
        // Once per process: swift-metrics' global system is jobd's registry.
        let prometheus = PrometheusJobMetrics.bootstrapProcess(version: JobdVersion.string)
        let store: OpenedStore
        do {
            store = try await openStore(config, metrics: prometheus.metrics)
        } catch {
            logger.critical("cannot open the database \(config.databaseDescription): \(Self.message(error))")
            return exitStatus(forStoreError: error)
        }
        let daemon = Daemon(
            location: location, configuration: configuration, output: output, logger: logger, store: store,
            prometheus: prometheus)
        let server: ControlServer
        do {
            let group = config.databaseLocation.sqlitePath
            server = try ControlServer(path: config.socket, groupOf: group) { [weak daemon] request, reply in
                guard let daemon else { return reply(ControlReply(ok: false, error: "jobd is stopping")) }
                daemon.answer(request, reply: reply)
            }
        } catch {
            logger.critical("\(error)")
            try? await store.close()
            return JobdExit.unavailable
        }
        return await daemon.serve(server)
    }

    /// Runs the services until the group has shut down, then closes the
    /// database.
    private func serve(_ server: ControlServer) async -> Int32 {
        // Process-wide promise settings are the daemon's to make: jobs run as
        // chains on jobd.yaml's `Q` queues, and a leaked promise is logged
        // and rejected so its job goes on.
        configurePromises()
        conf.leakHandler = Engine.leakHandler(logger: logger)
        let logger = self.logger
        conf.logHandler = { event in logger.warning("promises: \(event)") }

        let signals = SignalService(daemon: self)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: signals)]
        // Before the engine: it stops after the engine drained.
        if let postgres = opened.postgres { services.append(.init(service: postgres)) }
        services.append(.init(service: ControlService(server: server)))
        if let http = state.withAnnouncedLock({ $0.config.http }) {
            // A listener that cannot bind ends jobd: it was asked for.
            services.append(.init(service: httpService(http), failureTerminationBehavior: .gracefullyShutdownGroup))
        }
        services.append(.init(service: EngineService(daemon: self)))
        services.append(.init(service: MaintenanceService(daemon: self)))
        services += chores().map { .init(service: $0, failureTerminationBehavior: .gracefullyShutdownGroup) }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: services, logger: logger))
        signals.group.withAnnouncedLock { $0 = group }
        do {
            try await group.run()
        } catch {
            // A failure `fail` logged already is not told twice.
            if state.withAnnouncedLock({ $0.failure }) == nil { logger.error("\(error)") }
        }
        do {
            try await opened.close()
        } catch {
            logger.error("closing the database: \(error)")
        }
        let failure = state.withAnnouncedLock { $0.failure }
        logger.notice("stopped")
        return failure ?? JobdExit.ok
    }

    /// `conf.Q` from the engine's `map` and `return` queues.
    func configurePromises() {
        let queues = engine.queues
        conf.Q = (map: queues.map.queue, return: queues.return.queue)
    }

    // MARK: Control socket

    func answer(_ request: ControlRequest, reply: @escaping @Sendable (ControlReply) -> Void) {
        switch request.command {
        case .nudge:
            engine.nudge()
            // jobctl nudges after a schedule's pause ends too: its missed
            // occurrences are dealt with now, not at the next occurrence.
            engine.lookAtSchedules()
            reply(ControlReply(ok: true))
        case .cancel:
            guard let id = request.job, id > 0 else {
                let given = request.job.map { " (got \($0))" } ?? ""
                reply(
                    ControlReply(
                        ok: false,
                        error:
                            "cancel needs \"job\": the id of a job, a positive integer\(given), as in {\"command\":\"cancel\",\"job\":12}"
                    ))
                return
            }
            // The flag is in the store already (jobctl set it); the next
            // renewal would see it too.
            engine.cancellationRequested(id)
            Task {
                do {
                    if try await store.job(id) == nil {
                        reply(ControlReply(ok: false, error: "there is no job \(id)"))
                    } else {
                        reply(ControlReply(ok: true))
                    }
                } catch {
                    reply(ControlReply(ok: false, error: "could not look job \(id) up: \(error)"))
                }
            }
        case .metrics:
            Task { reply(ControlReply(ok: true, metrics: String(decoding: await metricsExposition(), as: UTF8.self))) }
        case .logs:
            answerLogs(request, reply: reply)
        case .status:
            Task {
                do {
                    let status = try await engine.status()
                    reply(
                        ControlReply(
                            ok: true,
                            status: DaemonStatus(
                                version: JobdVersion.string, pid: getpid(), running: status.running,
                                pending: status.pending,
                                pools: status.runningByPool, draining: status.draining,
                                startedAt: ISO8601DateFormatter().string(from: startedAt), config: location.path,
                                timezone: engine.hostTimeZone.identifier, clockSkew: engine.clockSkew)))
                } catch {
                    reply(ControlReply(ok: false, error: "could not read the job counts: \(error)"))
                }
            }
        }
    }

    func statusText() async -> String {
        do {
            let status = try await engine.status()
            let draining = status.draining ? "stopping: " : ""
            return "\(draining)\(status.running) running, \(status.pending) pending"
        } catch {
            return "\(engine.runningCount) running, pending unknown (\(error))"
        }
    }
}

extension EngineConfiguration {
    /// What of jobd.yaml the engine runs by.
    /// Expired leases are requeued by the `maintenance` leader (MaintenanceService), not by each engine.
    init(_ config: DaemonConfiguration, owner: String, logger: Logger, metrics: JobMetrics) {
        self.init(
            queues: config.queues.mapValues(\.concurrency), pools: config.pools, killGrace: config.killGrace,
            outputLimit: config.store.valueCap.bytes, owner: owner, leaseDuration: config.lease,
            renewInterval: config.lease / 6, pollInterval: config.pollInterval, requeuesExpiredLeases: false,
            logger: logger, metrics: metrics)
        poolLimits = config.poolLimits
        if config.log.journal, let journal = Journal.system {
            stageLogMirror = { JournalStageLog(journal: journal, source: $0) }
        }
    }
}

extension Logger.Level {
    init(_ level: LogConfiguration.Level) {
        self = Logger.Level(rawValue: level.rawValue) ?? .info
    }
}

/// jobd's exit statuses (sysexits.h).
public enum JobdExit {
    public static let ok: Int32 = 0
    /// `--check` found problems.
    public static let checkFailed: Int32 = 1
    public static let usage: Int32 = 64
    /// Another jobd listens on the socket, or it cannot be made.
    public static let unavailable: Int32 = 69
    /// The database cannot be opened or created, or is damaged; the
    /// PostgreSQL database does not exist, or its schema is newer than jobd.
    public static let cantCreate: Int32 = 73
    /// The PostgreSQL server cannot be reached now (down, restarting, the network).
    public static let tempFail: Int32 = 75
    /// The database refused this user: file permissions, PostgreSQL's login or grants.
    public static let noPermission: Int32 = 77
    /// The database was removed or replaced under the running jobd.
    public static let ioError: Int32 = 74
    /// jobd.yaml or a definition is wrong.
    public static let config: Int32 = 78
}
