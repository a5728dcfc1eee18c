import Foundation
import Spawn

#if canImport(Glibc)
import Glibc
#endif

/// Where an HTTP server under test listens.
public enum HTTPEndpoint: Sendable, Hashable {
    case tcp(host: String, port: Int)
    case unix(path: String)

    /// `http://HOST:PORT` (empty for a unix socket: no browser reaches one).
    public var baseURL: String {
        guard case .tcp(let host, let port) = self else { return "" }
        return "http://\(host):\(port)"
    }
}

/// One HTTP/1.1 exchange over a fresh socket, as bytes: what a test needs to
/// send requests no ordinary client sends (other methods, bodies, huge
/// headers) and to reach a unix socket.
public enum RawHTTP {
    public struct Reply: Sendable, Equatable {
        public var status: Int
        /// Names in lower case.
        public var headers: [String: String]
        public var body: Data
    }

    /// Sends `request` and reads the reply to its end, on a thread of its
    /// own (``onOwnThread(_:)``): a server under test may run on the
    /// cooperative pool too.
    public static func send(_ request: String, to endpoint: HTTPEndpoint) async throws -> Reply {
        try await onOwnThread { try sendBlocking(request, to: endpoint) }
    }

    /// `GET path` (or another `method`), the connection closed after the reply.
    public static func get(_ path: String, _ endpoint: HTTPEndpoint, method: String = "GET") async throws -> Reply {
        try await send("\(method) \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n", to: endpoint)
    }

    private static func sendBlocking(_ request: String, to endpoint: HTTPEndpoint) throws -> Reply {
        let fd: Int32
        switch endpoint {
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
            // A signal caught by the test process ends a read that has a
            // receive timeout with EINTR even under SA_RESTART (signal(7)).
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            received.append(contentsOf: buffer[0..<count])
        }
        return try parse(received)
    }

    private static func connect<Address>(_ fd: Int32, _ address: inout Address, _ size: Int) throws {
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(size)) }
        }
        guard result == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw TestFailure("connect: \(message)")
        }
    }

    private static func parse(_ data: Data) throws -> Reply {
        guard let end = data.range(of: Data("\r\n\r\n".utf8)) else {
            throw TestFailure("no HTTP response head in \(data.count) bytes")
        }
        let head = String(decoding: data[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = head[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw TestFailure("bad status line \(head[0])")
        }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Reply(status: status, headers: headers, body: Data(data[end.upperBound...]))
    }
}
