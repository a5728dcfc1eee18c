import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 to a port of 127.0.0.1 that can go silent the
/// way a NAT or a proxy that lost its state does: after ``freeze()`` the
/// connections open then pass nothing either way (what arrives is read
/// and dropped) and are never closed; connections made later work.
public final class FreezingProxy: Sendable {
    public let port: Int
    private let listener: Int32
    private let target: Int

    /// One accepted connection and its link to the target.
    private final class Link: Sendable {
        let client: Int32
        let server: Int32
        let frozen = Mutex(false)

        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }
    }

    private struct State {
        var links: [Link] = []
        var stopped = false
    }

    private let state = Mutex(State())

    private init(to target: Int) throws {
        self.target = target
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound, listen(listener, 64) == 0 else {
            close(listener)
            throw TestFailure("the proxy cannot listen: \(String(cString: strerror(errno)))")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    /// A proxy listening, and passing each connection on to `target`.
    public static func start(to target: Int) throws -> FreezingProxy {
        let proxy = try FreezingProxy(to: target)
        Thread { proxy.acceptLoop() }.start()
        return proxy
    }

    /// Every connection open now stops passing data, and stays open.
    public func freeze() {
        for link in state.withLock({ $0.links }) { link.frozen.withLock { $0 = true } }
    }

    /// Stops listening and closes every connection.
    public func stop() {
        let links = state.withLock { state in
            state.stopped = true
            defer { state.links = [] }
            return state.links
        }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for link in links {
            shutdown(link.client, Int32(SHUT_RDWR))
            shutdown(link.server, Int32(SHUT_RDWR))
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = Self.loopback(port: target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else {
                close(client)
                close(server)
                continue
            }
            let link = Link(client: client, server: server)
            let stopped = state.withLock { state -> Bool in
                if !state.stopped { state.links.append(link) }
                return state.stopped
            }
            if stopped {
                close(client)
                close(server)
                return
            }
            Thread { Self.pump(from: client, to: server, link) }.start()
            Thread { Self.pump(from: server, to: client, link) }.start()
        }
    }

    /// Copies what `from` sends to `to` until either closes; drops it once the link is frozen.
    private static func pump(from: Int32, to: Int32, _ link: Link) {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            if link.frozen.withLock({ $0 }) { continue }
            var sent = 0
            while sent < count {
                let wrote = buffer.withUnsafeBytes { write(to, $0.baseAddress! + sent, count - sent) }
                if wrote < 0 && errno == EINTR { continue }
                guard wrote > 0 else { break }
                sent += wrote
            }
        }
        // Closed by one side: so is the other (unless frozen: then nothing is passed on, not even that).
        if !link.frozen.withLock({ $0 }) { shutdown(to, Int32(SHUT_RDWR)) }
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return address
    }
}
