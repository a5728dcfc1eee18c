import Foundation
import JobDashboard
import JobConfig
import JobHTTP
import JobMetrics
import Logging
import ServiceLifecycle
import Synchronization
import Testing

/// A folder of its own for each test, removed at the end.
final class TemporaryFolder: Sendable {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "jobhttp-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Runs a ``JobHTTPService`` in a ServiceGroup for the duration of `body`,
/// then shuts it down gracefully and waits for it.
@discardableResult
func withHTTPService<T: Sendable>(
    address: HTTPListenAddress = .tcp(host: "127.0.0.1", port: 0),
    dashboard: Dashboard, prometheus: PrometheusJobMetrics = PrometheusJobMetrics(version: "test"),
    _ body: @Sendable (JobHTTPService.BoundAddress) async throws -> T
) async throws -> T {
    let bound = AsyncStream.makeStream(of: JobHTTPService.BoundAddress.self)
    var logger = Logger(label: "jobhttp-test")
    logger.logLevel = .warning
    let service = JobHTTPService(
        address: address, dashboard: dashboard, exposition: { prometheus.exposition() }, logger: logger,
        onListening: { bound.continuation.yield($0) })
    let group = ServiceGroup(configuration: .init(services: [service], logger: logger))
    return try await withThrowingTaskGroup(of: T?.self) { tasks in
        tasks.addTask {
            defer { bound.continuation.finish() }
            try await group.run()
            return nil
        }
        var iterator = bound.stream.makeAsyncIterator()
        guard let address = await iterator.next() else {
            // The service ended before it listened: its error, if it threw one.
            try await tasks.waitForAll()
            throw TestFailure("the service ended without listening")
        }
        do {
            let result = try await body(address)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension JobHTTPService.BoundAddress {
    var baseURL: String {
        guard case .tcp(let host, let port) = self else { return "" }
        return "http://\(host):\(port)"
    }
}

/// One HTTP/1.1 exchange over a fresh socket, as bytes: what a test needs to
/// send requests no ordinary client sends (other methods, bodies, huge
/// headers) and to reach a unix socket.
struct RawHTTP {
    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: Data
    }

    /// Sends `request` and reads the reply to its end, on a thread of its
    /// own: blocking a thread of Swift's small cooperative pool would starve
    /// the server under test, which runs there too.
    static func send(_ request: String, to address: JobHTTPService.BoundAddress) async throws -> Reply {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try sendBlocking(request, to: address) }) }
        }
    }

    private static func sendBlocking(_ request: String, to address: JobHTTPService.BoundAddress) throws -> Reply {
        let fd: Int32
        switch address {
        case .tcp(let host, let port):
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var target = sockaddr_in()
            target.sin_family = sa_family_t(AF_INET)
            target.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &target.sin_addr)
            try connect(fd, &target, MemoryLayout<sockaddr_in>.size)
        case .unix(let path):
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var target = sockaddr_un()
            target.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &target.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
            try connect(fd, &target, MemoryLayout<sockaddr_un>.size)
        }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count <= 0 { break }  // the server may close early (a refused request); read what it said
            sent += count
        }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return try parse(received)
    }

    private static func connect<Address>(_ fd: Int32, _ address: inout Address, _ size: Int) throws {
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(size)) }
        }
        guard result == 0 else { throw TestFailure("connect: \(String(cString: strerror(errno)))") }
    }

    private static func parse(_ data: Data) throws -> Reply {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else {
            throw TestFailure("no HTTP response head in \(data.count) bytes")
        }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = head[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw TestFailure("bad status line \(head[0])") }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Reply(status: status, headers: headers, body: Data(data[end.upperBound...]))
    }

    static func get(_ path: String, _ address: JobHTTPService.BoundAddress, method: String = "GET") async throws -> Reply {
        try await send("\(method) \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", to: address)
    }
}

/// A child process whose output goes to files (no pipe can fill up), ended
/// by its pid.
final class Child {
    let process: Process
    let output: String

    /// - Parameters:
    ///   - output: stderr, and stdout unless `stdout` names another file.
    init(_ executable: String, _ arguments: [String], output: String, stdout: String? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardError = handle
        if let stdout {
            _ = FileManager.default.createFile(atPath: stdout, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdout))
        } else {
            process.standardOutput = handle
        }
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
        self.output = output
    }

    var log: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }

    /// Waits for the child to exit by itself, for up to `timeout`; then
    /// kills it. Returns its exit status, or nil if it had to be killed.
    func wait(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                stop()
                return nil
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationStatus
    }

    /// SIGTERM, then SIGKILL after 5 s; reaps it.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// A TCP port nobody listens on now (bound to port 0, read, closed).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw TestFailure("no free port: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}

extension String {
    func occurrences(of needle: String) -> Int {
        components(separatedBy: needle).count - 1
    }
}
