import Foundation
import JobDashboard
import JobHTTP
import JobStore
import JobStoreSQLite
import Spawn
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What one client may hold of the listener (``ConnectionLimits``), and
/// the decoder's limits as docs/dashboard.md gives them.
@Suite struct ConnectionLimitTests {
    /// 200 connections from 25 addresses that send part of a request head
    /// and then nothing: `/healthz` and `/metrics` answer meanwhile, and
    /// each slow one gets a 408 once the header deadline has passed.
    @Test func slowClientsLockNobodyOutAndAreClosedAtTheHeaderDeadline() async throws {
        let (dashboard, folder) = try emptyDashboard()
        _ = folder
        try await withHTTPService(dashboard: dashboard, limits: ConnectionLimits()) { address in
            guard case .tcp(_, let port) = address else { throw TestFailure("not TCP") }
            var slow: [SlowClient] = []
            defer { for client in slow { client.close() } }
            for index in 0..<200 {
                let client = try SlowClient(from: "127.0.1.\(index % 25 + 1)", port: port)
                try client.send("GET / HTTP/1.1\r\nHost: te")
                slow.append(client)
            }
            #expect(try await RawHTTP.get("/healthz", address).status == 200)
            #expect(try await RawHTTP.get("/metrics", address).status == 200)
            let replies = await onOwnThread { [slow] in slow.map { $0.readAll(timeout: 10) } }
            let timedOut = replies.filter { $0.hasPrefix("HTTP/1.1 408 Request Timeout\r\n") }.count
            #expect(timedOut == 200, "\(Set(replies.map { $0.prefix(40) }))")
        }
    }

    /// One address holds at most `perAddress` connections; one more is
    /// answered 503 at once, and another address is still served.
    @Test func oneAddressHoldsAtMostItsShareOfConnections() async throws {
        let (dashboard, folder) = try emptyDashboard()
        _ = folder
        // A header deadline that keeps the held connections open throughout.
        let limits = ConnectionLimits(headerDeadline: .seconds(60), perAddress: 4)
        try await withHTTPService(dashboard: dashboard, limits: limits) { address in
            guard case .tcp(_, let port) = address else { throw TestFailure("not TCP") }
            var held: [SlowClient] = []
            defer { for client in held { client.close() } }
            // One more than its share. The listener admits connections in
            // the order its event loops see them, which need not be the
            // order they were opened: whichever comes last is refused.
            for _ in 0...limits.perAddress { held.append(try SlowClient(from: "127.0.2.1", port: port)) }
            let reply = await onOwnThread { [held] in SlowClient.firstReply(among: held, timeout: 20) }
            #expect(reply.hasPrefix("HTTP/1.1 503 Service Unavailable\r\n"), "\(reply)")
            #expect(reply.contains("holds \(limits.perAddress) connections"))
            #expect(try await RawHTTP.get("/healthz", address).status == 200)
        }
    }

    /// A client that asks for a large value and reads nothing is closed
    /// once the response has waited `writeDeadline` for it: it receives what
    /// the sockets' buffers held, then the end of the connection.
    @Test func aClientThatReadsNothingIsClosedAtTheWriteDeadline() async throws {
        let folder = try TemporaryFolder()
        let store = try SQLiteJobStore(
            SQLiteJobStoreConfiguration(path: folder.file("jobs.sqlite"), maxValueBytes: 8 << 20))
        let big = Data(repeating: UInt8(ascii: "w"), count: 6 << 20)
        let id = try await store.submit(
            NewJob(definition: "big", input: big, stages: [StagePlan(name: "s", kind: "then")])
        ).id
        let source = StoreDashboardSource(store: store) {
            DashboardSnapshot(pools: [], build: BuildInfo(version: "t", node: "n"))
        }
        let limits = ConnectionLimits(writeDeadline: .milliseconds(300))
        try await withHTTPService(dashboard: Dashboard(source: source), limits: limits) { address in
            guard case .tcp(_, let port) = address else { throw TestFailure("not TCP") }
            let client = try SlowClient(from: "127.0.0.1", port: port, receiveBuffer: 64 * 1024)
            defer { client.close() }
            try client.send("GET /jobs/\(id)/values/input HTTP/1.1\r\nHost: t\r\n\r\n")
            // Reads nothing until the server has stopped sending for a second
            // (its buffers and the client's are full), well past the write
            // deadline: on a loaded machine the value may take a while to come.
            var waiting = 0
            var stable = 0
            var last: Int32 = -1
            while stable < 4, waiting < 240 {
                try await Task.sleep(for: .milliseconds(250))
                waiting += 1
                var queued: Int32 = 0
                _ = ioctl(client.fd, UInt(FIONREAD), &queued)
                stable = queued > 0 && queued == last ? stable + 1 : 0
                last = queued
            }
            let (received, closed) = await onOwnThread { client.readToEnd(timeout: 20) }
            #expect(closed, "the connection was not closed; \(received) bytes received")
            #expect(received > 0 && received < big.count, "\(received) bytes of a \(big.count)-byte value")
        }
        try await store.close()
    }

    /// docs/dashboard.md: headers up to 16 KiB in all and 100 fields are
    /// taken; more is a 400.
    @Test func headerLimitsAreTheDocumentedOnes() async throws {
        let (dashboard, folder) = try emptyDashboard()
        _ = folder
        try await withHTTPService(dashboard: dashboard) { address in
            func request(_ headers: [String]) -> String {
                "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n" + headers.map { $0 + "\r\n" }.joined()
                    + "\r\n"
            }
            let tenKB = try await RawHTTP.send(
                request(["X-Big: " + String(repeating: "b", count: 10_000)]), to: address)
            #expect(tenKB.status == 200)
            // With Host and Connection: 100 fields.
            let many = try await RawHTTP.send(request((0..<98).map { "X-H\($0): v" }), to: address)
            #expect(many.status == 200)
            let tooBig = try? await RawHTTP.send(
                request(["X-Big: " + String(repeating: "b", count: 17 * 1024)]), to: address)
            #expect(tooBig?.status == 400)
            let tooMany = try? await RawHTTP.send(request((0..<99).map { "X-H\($0): v" }), to: address)
            #expect(tooMany?.status == 400)
        }
    }

    /// Pipelined requests on one connection are each answered, in order.
    @Test func pipelinedRequestsAreEachAnswered() async throws {
        let (dashboard, folder) = try emptyDashboard()
        _ = folder
        try await withHTTPService(dashboard: dashboard) { address in
            guard case .tcp(_, let port) = address else { throw TestFailure("not TCP") }
            let client = try SlowClient(from: "127.0.0.1", port: port)
            defer { client.close() }
            let count = 30
            let requests = (0..<count).map { index in
                "GET /healthz HTTP/1.1\r\nHost: t\r\n\(index == count - 1 ? "Connection: close\r\n" : "")\r\n"
            }
            try client.send(requests.joined())
            let reply = await onOwnThread { client.readAll(timeout: 10) }
            #expect(reply.components(separatedBy: "HTTP/1.1 200 OK\r\n").count - 1 == count, "\(reply.suffix(300))")
        }
    }

    @Test func metricsAreNotSniffed() async throws {
        let (dashboard, folder) = try emptyDashboard()
        _ = folder
        try await withHTTPService(dashboard: dashboard) { address in
            let metrics = try await RawHTTP.get("/metrics", address)
            #expect(metrics.headers["x-content-type-options"] == "nosniff")
        }
    }
}

/// A TCP client from a chosen loopback address (any of 127/8 reaches the
/// listener on 127.0.0.1), sending what the test says and when.
final class SlowClient: Sendable {
    let fd: Int32

    /// - Parameter receiveBuffer: `SO_RCVBUF`, set before connecting.
    init(from source: String, port: Int, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, source, &local.sin_addr)
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &target.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        let connected = withUnsafePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, connected == 0 else {
            let message = String(cString: strerror(errno))
            Glibc.close(fd)
            throw TestFailure("connect from \(source): \(message)")
        }
    }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw TestFailure("send: \(String(cString: strerror(errno)))") }
            sent += count
        }
    }

    /// What the server sends until it closes, or until `timeout` seconds
    /// pass without a byte.
    func readAll(timeout: Double) -> String {
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            // A signal caught by the test process ends a read that has a
            // receive timeout with EINTR even under SA_RESTART (signal(7)).
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// The reply to the first of `clients` the server writes to or closes
    /// within `timeout` seconds; empty when none is.
    static func firstReply(among clients: [SlowClient], timeout: Double) -> String {
        var fds = clients.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        var ready = poll(&fds, nfds_t(fds.count), Int32(timeout * 1000))
        while ready < 0 && errno == EINTR { ready = poll(&fds, nfds_t(fds.count), Int32(timeout * 1000)) }
        guard ready > 0, let index = fds.firstIndex(where: { $0.revents != 0 }) else { return "" }
        return clients[index].readAll(timeout: timeout)
    }

    /// Bytes received until the server closes (`closed`), or until
    /// `timeout` seconds pass without a byte.
    func readToEnd(timeout: Double) -> (bytes: Int, closed: Bool) {
        var limit = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            if count == 0 { return (total, true) }
            // A reset is a close too (the server closed with bytes unread).
            if count < 0 { return (total, errno == ECONNRESET) }
            total += count
        }
    }

    func close() { Glibc.close(fd) }
}
