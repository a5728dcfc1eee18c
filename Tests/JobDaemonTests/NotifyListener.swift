import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A stand-in for systemd's notification socket: binds a datagram socket
/// and collects every message jobd sends to it.
final class NotifyListener: Sendable {
    let path: String
    private let fd: Int32
    private let messages = Mutex<[[String: String]]>([])
    private let closed = Atomic<Bool>(false)

    init(path: String) throws {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard fd >= 0, bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var limit = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [self] in receive() }
        thread.start()
    }

    deinit {
        closed.store(true, ordering: .releasing)
        close(fd)
        unlink(path)
    }

    private func receive() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !closed.load(ordering: .acquiring) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { continue }
            let text = String(decoding: buffer[0..<count], as: UTF8.self)
            var fields: [String: String] = [:]
            for line in text.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            messages.withLock { $0.append(fields) }
        }
    }

    var all: [[String: String]] { messages.withLock { $0 } }

    /// The index of the first message from `start` on that has `key` (with
    /// `value`, if given), waiting up to `limit`.
    func waitFor(
        _ key: String, _ value: String? = nil, from start: Int = 0, within limit: Duration = .seconds(20)
    ) async -> Int? {
        let deadline = ContinuousClock.now + limit
        while true {
            let list = all
            if start < list.count,
                let index = list[start...].firstIndex(where: { message in
                    message[key].map { value == nil || $0 == value } ?? false
                })
            {
                return index
            }
            if ContinuousClock.now > deadline { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }
}
