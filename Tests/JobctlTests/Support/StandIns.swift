import Dispatch
import Foundation
import JobConfig
import JobControl
import JobEngine
import JobProcesses
import JobStore
import JobStoreSQLite
import JobValues
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The jobd end of the control socket, for tests: jobd's own
/// `ControlServer` on a unix socket, answering each request as jobd would
/// and counting what it was asked. `onNudge` runs for each nudge and
/// `onCancel` for each cancel and `onLogs` for each logs request (to reach
/// an in-process engine); `metrics`
/// is the exposition it answers with, after `metricsDelay`.
final class FakeDaemon: Sendable {
    let path: String
    private let server: ControlServer
    private let requests = Requests()
    let status: DaemonStatus

    private final class Requests: Sendable {
        let list = Mutex<[ControlRequest]>([])
    }

    init(
        path: String, status: DaemonStatus? = nil, onNudge: @escaping @Sendable () -> Void = {},
        onCancel: @escaping @Sendable (Int64) -> Void = { _ in },
        onLogs: (@Sendable (ControlRequest, @escaping @Sendable (ControlReply) -> Void) -> Void)? = nil,
        metrics: String = "# TYPE jobd_fake gauge\njobd_fake 1\n", metricsDelay: Duration = .zero
    ) throws {
        self.path = path
        let status =
            status
            ?? DaemonStatus(
                version: JobdVersion.string, pid: 4242, running: 1, pending: 7, pools: ["default": 1, "slow": 0],
                draining: false, startedAt: "2026-11-21T08:00:00.000Z", config: "/etc/jobd/jobd.yaml")
        self.status = status
        let requests = self.requests
        do {
            server = try ControlServer(path: path, groupOf: nil) { request, reply in
                requests.list.withLock { $0.append(request) }
                switch request.command {
                case .nudge:
                    onNudge()
                    reply(ControlReply(ok: true))
                case .cancel:
                    if let id = request.job { onCancel(id) }
                    reply(ControlReply(ok: true))
                case .status:
                    reply(ControlReply(ok: true, status: status))
                case .logs:
                    if let onLogs {
                        onLogs(request, reply)
                    } else {
                        reply(ControlReply(ok: true, logs: LiveLogs(running: false)))
                    }
                case .metrics:
                    // On a Dispatch thread, not a task: the whole suite's
                    // tasks share two cooperative threads here, and a reply
                    // waiting for one of them could miss jobctl's deadline.
                    let (seconds, attoseconds) = metricsDelay.components
                    let delay = DispatchTimeInterval.nanoseconds(
                        Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
                    DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
                        reply(ControlReply(ok: true, metrics: metrics))
                    }
                }
            }
        } catch {
            throw FakeDaemonError(message: error.description)
        }
        server.start()
    }

    /// The commands received so far, in order.
    var received: [ControlRequest.Command] { requests.list.withLock { $0.map(\.command) } }
    /// The requests received so far, in order.
    var receivedRequests: [ControlRequest] { requests.list.withLock { $0 } }

    /// Stops listening and removes the socket file.
    func stop() {
        server.stop()
    }
}

struct FakeDaemonError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A stand-in for jobd in the test process: an engine on the sandbox's
/// database and definitions, and the control socket, whose nudges reach
/// the engine. Its poll interval is long, so a job starts quickly only if
/// jobctl's nudge arrives.
final class TestDaemon: Sendable {
    let store: SQLiteJobStore
    /// The store the engine writes through when its log writes are held.
    let heldLogs: HeldLogStore?
    let engine: Engine
    let socket: FakeDaemon

    /// `holdingLogs`: the engine's stage-log writes wait until the store's `release()`.
    init(_ sandbox: Sandbox, pollInterval: Duration = .seconds(30), holdingLogs: Bool = false) throws {
        let configuration = try sandbox.configuration()
        let config = configuration.daemon
        let store = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(
                path: config.database, maxValueBytes: config.store.valueCap.bytes, checkpointInterval: nil))
        self.store = store
        heldLogs = holdingLogs ? HeldLogStore(store) : nil
        let engine = Engine(
            configuration: EngineConfiguration(
                queues: config.queues.mapValues(\.concurrency), pools: config.pools, killGrace: .milliseconds(200),
                outputLimit: config.store.valueCap.bytes, leaseDuration: .seconds(5), renewInterval: .milliseconds(100),
                pollInterval: pollInterval),
            definitions: configuration.definitions.definitions, store: heldLogs ?? store, processRunner: ProcessRunner()
        )
        self.engine = engine
        socket = try FakeDaemon(
            path: config.socket, onNudge: { engine.nudge() }, onCancel: { engine.cancellationRequested($0) },
            onLogs: { request, reply in
                // As jobd answers (Daemon+Logs.swift).
                let after = request.after.map {
                    StageLogCursor(
                        jobAttempt: $0.jobAttempt, position: $0.position, attempt: $0.attempt, sequence: $0.sequence)
                }
                let wait = Duration.milliseconds(min(request.waitMilliseconds ?? 0, 2000))
                engine.followStageLog(request.job ?? 0, after: after, wait: wait) { read in
                    let lines = read.lines.compactMap { entry -> LogLine? in
                        guard case let .line(bytes) = entry.content else { return nil }
                        let cursor = entry.cursor
                        return LogLine(
                            cursor: LogCursor(
                                jobAttempt: cursor.jobAttempt, position: cursor.position, attempt: cursor.attempt,
                                sequence: cursor.sequence),
                            at: entry.at.timeIntervalSince1970, line: Data(bytes),
                            stream: entry.stream == .stderr ? nil : entry.stream.rawValue)
                    }
                    let from = read.memoryFrom.map {
                        LogCursor(
                            jobAttempt: $0.jobAttempt, position: $0.position, attempt: $0.attempt, sequence: $0.sequence
                        )
                    }
                    reply(ControlReply(ok: true, logs: LiveLogs(running: read.running, memoryFrom: from, lines: lines)))
                }
            })
        engine.start()
    }

    func stop() async {
        socket.stop()
        await engine.drain(grace: .zero)
        try? await store.close()
    }
}
