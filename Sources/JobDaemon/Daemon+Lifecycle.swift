import Foundation
import JobConfig
import JobControl
import JobDashboard
import JobDatabase
import JobEngine
import JobMetrics
import JobStore
import JobStoreSQLite
import JobValues
import Locking
import Logging

#if canImport(Glibc)
import Glibc
#endif

extension Daemon {
    // MARK: Start

    func announceReady() async {
        let config = state.withAnnouncedLock { $0.config }
        let status = await statusText()
        logger.info(
            "jobd \(JobdVersion.string) ready (pid \(getpid())): \(status)",
            metadata: [
                "config": "\(location.path)", "database": "\(config.databaseDescription)", "node": "\(config.node)",
                "owner": "\(owner)", "socket": "\(config.socket)",
                "definitions": "\(DefinitionSet.summary(of: engine.definitionNames))",
            ])
        state.withAnnouncedLock { $0.lastStatus = status }
        notifier.ready(status: status)
    }

    // MARK: Reload (SIGHUP)

    /// Loads the config file and definitions again and applies them, or —
    /// if anything in them is wrong — logs every problem and keeps running
    /// the configuration it has. systemd sees RELOADING=1 … READY=1 either way.
    func reload() {
        guard !state.withAnnouncedLock({ $0.stopping }) else { return }
        notifier.reloading()
        logger.notice("SIGHUP: reloading \(location.path)")
        let result = Configuration.load(at: location)
        for diagnostic in result.diagnostics {
            logger.log(level: diagnostic.severity == .error ? .error : .warning, "\(diagnostic)")
        }
        let current = state.withAnnouncedLock { $0.config }
        guard let loaded = result.value else {
            let count = result.diagnostics.errorCount
            logger.error(
                "reload refused: \(count) error(s) in the new configuration (above); the running configuration stays in force"
            )
            notifier.ready(status: "reload refused, see the log; " + state.withAnnouncedLock { $0.lastStatus })
            return
        }
        // What the engine cannot change while it runs keeps its old value.
        var applied = loaded.daemon
        func keep<Value: Equatable>(
            _ key: WritableKeyPath<DaemonConfiguration, Value>, _ name: String, shown: String? = nil
        ) {
            guard applied[keyPath: key] != current[keyPath: key] else { return }
            logger.warning(
                "`\(name)` changed: that takes a restart; this jobd keeps \(shown ?? "\(current[keyPath: key])")")
            applied[keyPath: key] = current[keyPath: key]
        }
        // A URL's password is never logged.
        keep(\.database, "database", shown: current.databaseDescription)
        keep(\.node, "node")
        keep(\.socket, "socket")
        keep(\.pollInterval, "poll-interval")
        keep(\.lease, "lease")
        keep(\.store, "store")
        keep(\.http, "http", shown: current.http.map { "http.listen \($0.listen)" } ?? "no HTTP listener")
        engine.reload(
            EngineConfiguration(applied, owner: owner, logger: logger, metrics: prometheus.metrics),
            definitions: loaded.definitions.definitions)
        configurePromises()
        state.withAnnouncedLock { $0.config = applied }
        let names = loaded.definitions.names
        logger.notice(
            "reloaded: \(names.count) definition(s) (\(DefinitionSet.summary(of: names))); pools \(Self.describe(applied.pools)); Q \(Self.describe(applied.queues.mapValues(\.concurrency))); log level \(applied.log.level.rawValue)"
        )
        output.minimumLevel = Logger.Level(applied.log.level)
        Task {
            let status = await statusText()
            state.withAnnouncedLock { $0.lastStatus = status }
            notifier.ready(status: status)
        }
    }

    static func describe(_ values: [String: Int]) -> String {
        values.keys.sorted().map { "\($0)=\(values[$0]!)" }.joined(separator: " ")
    }

    // MARK: Stop (SIGTERM, SIGINT, a fatal failure)

    /// The first stop request: true, and the group is to shut down. A later
    /// one (a second SIGTERM) ends the running stages at once: false.
    func beginStopping(signal: String) -> Bool {
        let first = state.withAnnouncedLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        if first {
            let grace = state.withAnnouncedLock { $0.config.shutdownGrace }
            let running = engine.runningCount
            notifier.stopping(status: "stopping: \(running) job(s) running, grace \(grace.jobdText)")
            logger.notice(
                "\(signal): stopping; no new jobs start, \(running) running job(s) have \(grace.jobdText) to finish their stage"
            )
            // At once, not when the group reaches the engine: the services
            // stopped before it may wait for a database that does not answer.
            startDrain()
            // Pages waiting for a turn are answered at once: none is made
            // while jobd stops.
            state.withAnnouncedLock { $0.dashboard }?.stop()
        } else {
            logger.warning("\(signal) again: ending running stages now (their jobs resume at the next start)")
            engine.drain(grace: .zero) {}
        }
        return first
    }

    /// A failure jobd cannot run past: logged, and the group shuts down with
    /// no grace for running stages (their jobs resume at the next start).
    func fail(_ message: String, status: Int32) {
        let first = state.withAnnouncedLock { state -> Bool in
            defer {
                state.stopping = true
                if state.failure == nil { state.failure = status }
            }
            return !state.stopping
        }
        logger.critical("\(message); stopping")
        if first { notifier.stopping(status: "failed: \(message)") }
    }

    /// Stops claiming and lets running stages finish within the grace (none
    /// after a failure); the first call starts the drain, later ones
    /// return the same one.
    @discardableResult
    func startDrain() -> Task<Void, Never> {
        let (grace, failed) = state.withAnnouncedLock { ($0.config.shutdownGrace, $0.failure != nil) }
        let engine = self.engine
        return state.withAnnouncedLock { state in
            if let started = state.drain { return started }
            let drain = Task { await engine.drain(grace: failed ? .zero : grace) }
            state.drain = drain
            return drain
        }
    }

    /// How long after the grace and the kill grace the drain may still wait
    /// for the last stage results to be written.
    static let drainMargin = Duration.seconds(3)

    /// Waits for the drain (started if need be), at most the grace, the
    /// kill grace and ``drainMargin``: a result that could not be written
    /// by then (the database does not answer) stays unwritten, and its
    /// stage runs again at the next start.
    func drain() async {
        let drain = startDrain()
        let (grace, killGrace, failed) = state.withAnnouncedLock {
            ($0.config.shutdownGrace, $0.config.killGrace, $0.failure != nil)
        }
        let limit = (failed ? .zero : grace) + killGrace + Self.drainMargin
        guard await awaitAtMost(limit, { await drain.value }) == nil else { return }
        let waiting = engine.runningCount
        logger.warning(
            "\(waiting) job(s) still wait to write the result of their last stage (the database does not answer); jobd stops without it: those stages run again at the next start, or on another host once their leases expire"
        )
    }

    // MARK: Chores

    func chores() -> [PeriodicChore] {
        var chores: [PeriodicChore] = []
        // STATUS= for systemctl status, when it changed, every 10 s. (Counting
        // the pending jobs reads an index range as long as the queue: about
        // 15 ms of CPU for 100,000 pending jobs.)
        chores.append(
            PeriodicChore(name: "status", interval: .seconds(10)) { [self] in
                let text = await statusText()
                let changed = state.withAnnouncedLock { state -> Bool in
                    defer { state.lastStatus = text }
                    return state.lastStatus != text && !state.stopping
                }
                if changed { notifier.status(text) }
            })
        // WATCHDOG=1 every WATCHDOG_USEC/2, after a round trip to the
        // database: a jobd whose database is stuck stops petting the watchdog.
        if let interval = notifier.watchdogInterval {
            chores.append(
                PeriodicChore(name: "watchdog", interval: interval) { [self] in
                    if (try? await store.countJobs(in: [.running])) != nil {
                        notifier.watchdog()
                    } else {
                        logger.warning("watchdog: the database did not answer; not notifying systemd")
                    }
                })
        }
        // The database's path must still name the file jobd has open: one
        // removed or replaced under it (an `rm` of the file or of its `-wal`)
        // would take every later write with it. jobd stops, and systemd
        // restarts it on the file the path names now.
        // (SQLite only: a PostgreSQL database has no file here.)
        if let sqlite = opened.sqlite {
            chores.append(
                PeriodicChore(name: "database files", interval: .seconds(2)) { [self] in
                    do {
                        try sqlite.checkFiles()
                    } catch {
                        fail("\(error)", status: JobdExit.ioError)
                        throw error
                    }
                })
        }
        // Pruning is the maintenance leader's (MaintenanceService).
        return chores
    }
}
