import Foundation
import JobEngine
import JobStore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The jobd end of the control socket, for tests: listens on a unix
/// socket, answers each request with `ControlReply` as jobd would, and
/// counts what it was asked. `onNudge` runs for each nudge (to nudge an
/// in-process engine).
final class FakeDaemon: Sendable {
    let path: String
    private let listener: Int32
    private let requests = Mutex<[ControlRequest.Command]>([])
    private let onNudge: @Sendable () -> Void
    let status: DaemonStatus

    init(path: String, status: DaemonStatus? = nil, onNudge: @escaping @Sendable () -> Void = {}) throws {
        self.path = path
        self.onNudge = onNudge
        self.status = status ?? DaemonStatus(
            version: JobdVersion.string, pid: 4242, running: 1, pending: 7, pools: ["default": 1, "slow": 0],
            draining: false, startedAt: "2026-11-21T08:00:00.000Z", config: "/etc/jobd/jobd.yaml")
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        self.listener = listener
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 16) == 0 else {
            let message = String(cString: strerror(errno))
            close(listener)
            throw FakeDaemonError(message: "cannot listen on \(path): \(message)")
        }
        Thread.detachNewThread { [self] in serve(listener) }
    }

    /// The commands received so far, in order.
    var received: [ControlRequest.Command] { requests.withLock { $0 } }

    /// Stops listening and removes the socket file. The listening socket is
    /// closed by the serving thread once its `accept` fails: closed here, its
    /// number could be reused by another test's socket before that thread's
    /// next `accept`, which would then take that test's connections.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        unlink(path)
    }

    private func serve(_ listener: Int32) {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                close(listener)
                return
            }
            answer(connection)
            close(connection)
        }
    }

    private func answer(_ connection: Int32) {
        var line = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !line.contains(UInt8(ascii: "\n")) {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            line.append(contentsOf: buffer[0..<count])
        }
        let body = line.prefix { $0 != UInt8(ascii: "\n") }
        let reply: ControlReply
        if let request = try? ControlCoding.decodeLine(ControlRequest.self, from: Data(body)) {
            requests.withLock { $0.append(request.command) }
            switch request.command {
            case .nudge:
                onNudge()
                reply = ControlReply(ok: true)
            case .status:
                reply = ControlReply(ok: true, status: status)
            }
        } else {
            reply = ControlReply(ok: false, error: "not a control request")
        }
        guard let data = try? ControlCoding.encodeLine(reply) else { return }
        _ = data.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
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
    let engine: Engine
    let socket: FakeDaemon

    init(_ sandbox: Sandbox, pollInterval: Duration = .seconds(30)) throws {
        let configuration = try sandbox.configuration()
        var config = configuration.daemon
        config.killGrace = .milliseconds(200)
        store = try SQLiteJobStore(JobStoreConfiguration(
            path: config.database, maxValueBytes: config.store.valueCap.bytes, checkpointInterval: nil))
        var options = EngineOptions(
            leaseDuration: .seconds(5), renewInterval: .milliseconds(100), pollInterval: pollInterval)
        // `conf` is process-wide; other suites check its defaults.
        options.configuresPromises = false
        let engine = Engine(config: config, definitions: configuration.definitions.definitions, store: store,
                            options: options)
        self.engine = engine
        socket = try FakeDaemon(path: config.socket) { engine.nudge() }
        engine.start()
    }

    func stop() async {
        socket.stop()
        await engine.drain(grace: .zero)
        try? await store.close()
    }
}
