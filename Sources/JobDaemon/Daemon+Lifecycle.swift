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

extension Daemon {
    // MARK: Signals

    func handle(_ signal: Int32) {
        switch signal {
        case SIGHUP:
            lifecycle.async { self.reload() }
        default:
            lifecycle.async { self.shutdown(signal) }
        }
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
            let count = result.diagnostics.filter { $0.severity == .error }.count
            logger.error("reload refused: \(count) error(s) in the new configuration (above); the running configuration stays in force")
            notifier.ready(status: "reload refused, see the log; " + state.withAnnouncedLock { $0.lastStatus })
            return
        }
        // What the engine cannot change while it runs keeps its old value.
        var applied = loaded.daemon
        func keep<Value: Equatable>(_ key: WritableKeyPath<DaemonConfig, Value>, _ name: String) {
            guard applied[keyPath: key] != current[keyPath: key] else { return }
            logger.warning("`\(name)` changed: that takes a restart; this jobd keeps \(current[keyPath: key])")
            applied[keyPath: key] = current[keyPath: key]
        }
        keep(\.database, "database")
        keep(\.socket, "socket")
        keep(\.pollInterval, "poll-interval")
        keep(\.store, "store")
        engine.reload(config: applied, definitions: loaded.definitions.definitions)
        state.withAnnouncedLock { $0.config = applied }
        let names = loaded.definitions.names.sorted()
        logger.notice("reloaded: \(names.count) definition(s) (\(names.joined(separator: ", "))); pools \(Self.describe(applied.pools)); Q \(Self.describe(applied.queues.mapValues(\.concurrency))); log level \(applied.log.level.rawValue)")
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

    // MARK: Shutdown (SIGTERM, SIGINT)

    /// Stops claiming; running stages have `shutdown-grace` to finish, then
    /// their process groups are ended and their jobs left resumable. A
    /// second signal cuts the grace short.
    func shutdown(_ signal: Int32) {
        let (first, config) = state.withAnnouncedLock { state -> (Bool, DaemonConfig) in
            defer { state.stopping = true }
            return (!state.stopping, state.config)
        }
        guard first else {
            logger.warning("\(SignalWatcher.name(signal)) again: ending running stages now (their jobs resume at the next start)")
            engine.drain(grace: .zero) {}
            return
        }
        let running = engine.runningCount
        notifier.stopping(status: "stopping: \(running) job(s) running, grace \(config.shutdownGrace.jobdText)")
        logger.notice("\(SignalWatcher.name(signal)): stopping; no new jobs start, \(running) running job(s) have \(config.shutdownGrace.jobdText) to finish their stage")
        engine.drain(grace: config.shutdownGrace) { [self] in
            let server = state.withAnnouncedLock { $0.server }
            server?.stop()
            Task {
                do {
                    try await store.close()
                } catch {
                    logger.error("closing the database: \(error)")
                }
                logger.notice("stopped")
                finish(JobdExit.ok)
            }
        }
    }

    /// Stops at once on a failure jobd cannot run past: running stages are
    /// ended (their jobs resume at the next start) and `run` returns `status`.
    func fail(_ message: String, status: Int32) {
        let first = state.withAnnouncedLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        logger.critical("\(message); stopping")
        notifier.stopping(status: "failed: \(message)")
        engine.drain(grace: .zero) { [self] in
            state.withAnnouncedLock { $0.server }?.stop()
            finish(status)
        }
    }

    // MARK: Chores

    func statusText() async -> String {
        do {
            let status = try await engine.status()
            let draining = status.draining ? "stopping: " : ""
            return "\(draining)\(status.running) running, \(status.pending) pending"
        } catch {
            return "\(engine.runningCount) running, pending unknown (\(error))"
        }
    }

    /// Runs `chore` after `delay`, then again after the delay it returns,
    /// for as long as the daemon exists.
    func repeating(after delay: Duration, _ chore: @escaping @Sendable (Daemon) async -> Duration) {
        chores.asyncAfter(deadline: .now() + delay.dispatchInterval) { [weak self] in
            guard let self else { return }
            Task {
                let next = await chore(self)
                self.repeating(after: next, chore)
            }
        }
    }

    func startChores() {
        // STATUS= for systemctl status, when it changed, every 10 s. (Counting
        // the pending jobs reads an index range as long as the queue: about
        // 15 ms of CPU for 100,000 pending jobs.)
        repeating(after: .seconds(10)) { daemon in
            let text = await daemon.statusText()
            let changed = daemon.state.withAnnouncedLock { state -> Bool in
                defer { state.lastStatus = text }
                return state.lastStatus != text && !state.stopping
            }
            if changed { daemon.notifier.status(text) }
            return .seconds(10)
        }
        // WATCHDOG=1 every WATCHDOG_USEC/2, after a round trip to the
        // database: a jobd whose database is stuck stops petting the watchdog.
        if let interval = notifier.watchdogInterval {
            repeating(after: interval) { daemon in
                if (try? await daemon.store.countJobs(in: [.running])) != nil {
                    daemon.notifier.watchdog()
                } else {
                    daemon.logger.warning("watchdog: the database did not answer; not notifying systemd")
                }
                return interval
            }
        }
        // The database's path must still name the file jobd has open: one
        // removed or replaced under it (an `rm` of the file or of its `-wal`)
        // would take every later write with it. jobd stops, and systemd
        // restarts it on the file the path names now.
        repeating(after: .seconds(2)) { daemon in
            do {
                try daemon.store.checkFiles()
            } catch {
                daemon.fail("\(error)", status: JobdExit.ioError)
            }
            return .seconds(2)
        }
        // Resolved jobs older than `store.retention` go, a minute after the
        // start and then hourly.
        repeating(after: .seconds(60)) { daemon in
            guard case let .duration(retention) = daemon.state.withAnnouncedLock({ $0.config.store.retention }) else {
                return .seconds(3600)
            }
            do {
                let pruned = try await daemon.store.prune(olderThan: retention)
                if pruned > 0 { daemon.logger.info("pruned \(pruned) resolved job(s) older than \(retention.jobdText)") }
            } catch {
                daemon.logger.warning("pruning old jobs failed: \(error)")
            }
            return .seconds(3600)
        }
    }
}
