import Dispatch
import Foundation
import JobEngine
import JobStore
import Locking
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A running jobd: the store, the engine, the control socket, systemd
/// notifications, signals and the periodic chores (status, watchdog,
/// pruning). `Daemon.run` is the whole life of the process after argument
/// parsing; see docs/jobd.md.
public final class Daemon: Sendable {
    let location: ConfigLocator.Location
    let output: LogOutput
    let logger: Logger
    let notifier: SystemdNotifier
    let store: SQLiteJobStore
    let engine: Engine
    let definitionNames: [String]
    private let startedAt = Date()
    /// Reloads and shutdown, one at a time.
    let lifecycle = DispatchQueue(label: "jobd.daemon.lifecycle")
    let chores = DispatchQueue(label: "jobd.daemon.chores")

    struct State {
        /// The configuration in force (database and socket as opened).
        var config: DaemonConfig
        var server: ControlServer?
        var stopping = false
        var lastStatus = ""
        /// Resumes `run` with the exit status, once it waits for it.
        var finished: (@Sendable (Int32) -> Void)?
        /// The exit status, if jobd stopped before `run` waited for it.
        var exitStatus: Int32?
    }

    let state: Mutex<State>

    init(location: ConfigLocator.Location, configuration: Configuration, output: LogOutput, logger: Logger,
         notifier: SystemdNotifier, store: SQLiteJobStore) {
        self.location = location
        self.output = output
        self.logger = logger
        self.notifier = notifier
        self.store = store
        let log = logger
        engine = Engine(
            config: configuration.daemon, definitions: configuration.definitions.definitions, store: store,
            options: EngineOptions(pollInterval: configuration.daemon.pollInterval),
            log: { record in Daemon.log(record, to: log) })
        definitionNames = configuration.definitions.names.sorted()
        state = Mutex(State(config: configuration.daemon))
    }

    // MARK: Running

    /// Starts jobd with `configuration` and returns its exit status once it
    /// stopped (a drain after SIGTERM/SIGINT gives 0).
    public static func run(location: ConfigLocator.Location, configuration: Configuration, output: LogOutput) async -> Int32 {
        let logger = Logger(label: "jobd") { _ in JobdLogHandler(output: output) }
        let config = configuration.daemon
        for diagnostic in configuration.definitions.diagnostics { logger.warning("\(diagnostic)") }
        let store: SQLiteJobStore
        do {
            store = try openStore(config)
        } catch {
            logger.critical("cannot open the database \(config.database): \(error)")
            return JobdExit.cantCreate
        }
        let daemon = Daemon(
            location: location, configuration: configuration, output: output, logger: logger,
            notifier: SystemdNotifier(), store: store)
        return await daemon.run()
    }

    private func run() async -> Int32 {
        let config = state.withAnnouncedLock { $0.config }
        await recover()
        let server: ControlServer
        do {
            server = try ControlServer(path: config.socket, groupOf: config.database) { [weak self] request, reply in
                self?.answer(request, reply: reply) ?? reply(ControlReply(ok: false, error: "jobd is stopping"))
            }
        } catch {
            logger.critical("\(error)")
            try? await store.close()
            return JobdExit.unavailable
        }
        state.withAnnouncedLock { $0.server = server }
        server.start()
        engine.start()
        SignalWatcher.start { [self] signal in handle(signal) }
        let status = await statusText()
        logger.info("jobd \(JobdVersion.string) ready (pid \(getpid())): \(status)", metadata: [
            "config": "\(location.path)", "database": "\(config.database)", "socket": "\(config.socket)",
            "definitions": "\(definitionNames.joined(separator: ","))",
        ])
        notifier.ready(status: status)
        state.withAnnouncedLock { $0.lastStatus = status }
        startChores()
        return await withCheckedContinuation { continuation in
            let early = state.withAnnouncedLock { state -> Int32? in
                if let status = state.exitStatus { return status }
                state.finished = { continuation.resume(returning: $0) }
                return nil
            }
            if let early { continuation.resume(returning: early) }
        }
    }

    /// jobd stopped: `run` returns `status`.
    func finish(_ status: Int32) {
        let finished = state.withAnnouncedLock { state -> (@Sendable (Int32) -> Void)? in
            defer { state.finished = nil }
            if state.finished == nil { state.exitStatus = status }
            return state.finished
        }
        finished?(status)
    }

    static func openStore(_ config: DaemonConfig) throws -> SQLiteJobStore {
        let folder = (config.database as NSString).deletingLastPathComponent
        if !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            // Owner and group only, whatever the umask (the unit's model: group jobd).
            guard chmod(folder, 0o770) == 0 else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: folder])
            }
        }
        return try SQLiteJobStore(JobStoreConfiguration(
            path: config.database,
            synchronous: config.store.durability == .full ? .full : .normal,
            maxValueBytes: config.store.valueCap.bytes,
            // jobd's readers count the queue for STATUS (a sweep of the
            // `jobs_state` index) and read little else: small caches keep its
            // memory flat however long the queue.
            readerCacheKiB: 1024,
            checkIntegrity: true))
    }

    /// Before claiming anything: jobs left running by a jobd of this host
    /// that is gone (killed, crashed) go back to pending at once; those of
    /// runners that may be alive wait for their leases to run out.
    private func recover() async {
        do {
            let owners = try await store.leaseOwners()
            let dead = owners.keys.filter { LeaseOwner.isDeadLocalProcess($0) }.sorted()
            if !dead.isEmpty {
                let ended = try await store.expireLeases(of: dead)
                logger.notice("taking up \(ended) job(s) of stopped runner(s) \(dead.joined(separator: ", "))")
            }
            let requeued = try await store.requeueExpiredLeases()
            if !requeued.isEmpty {
                logger.notice("recovered \(requeued.count) job(s) left running: \(requeued.prefix(20).map(String.init).joined(separator: ", ")); each resumes at its first stage without a fulfilled result")
            }
            let alive = owners.keys.filter { !dead.contains($0) }
            if !alive.isEmpty {
                logger.info("jobs held by other runners are left to them until their leases expire: \(alive.sorted().joined(separator: ", "))")
            }
        } catch {
            logger.error("crash recovery failed: \(error); jobs left running resume when their leases expire")
        }
    }

    // MARK: Control socket

    private func answer(_ request: ControlRequest, reply: @escaping @Sendable (ControlReply) -> Void) {
        switch request.command {
        case .nudge:
            engine.nudge()
            reply(ControlReply(ok: true))
        case .status:
            Task {
                do {
                    let status = try await engine.status()
                    reply(ControlReply(ok: true, status: DaemonStatus(
                        version: JobdVersion.string, pid: getpid(), running: status.running, pending: status.pending,
                        pools: status.runningByPool, draining: status.draining,
                        startedAt: ISO8601DateFormatter().string(from: startedAt), config: location.path)))
                } catch {
                    reply(ControlReply(ok: false, error: "could not read the job counts: \(error)"))
                }
            }
        }
    }

    // MARK: Logging

    static func log(_ record: EngineLogRecord, to logger: Logger) {
        var metadata: Logger.Metadata = [:]
        if let job = record.jobID { metadata["job"] = "\(job)" }
        if let position = record.position { metadata["stage"] = "\(position)" }
        logger.log(level: Logger.Level(record.level), "\(record.message)", metadata: metadata)
    }

}

extension Logger.Level {
    init(_ level: LogConfig.Level) {
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
    /// The database cannot be opened or created.
    public static let cantCreate: Int32 = 73
    /// The database was removed or replaced under the running jobd.
    public static let ioError: Int32 = 74
    /// jobd.yaml or a definition is wrong.
    public static let config: Int32 = 78
}
