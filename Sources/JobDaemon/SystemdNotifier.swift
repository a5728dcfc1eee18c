import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// sd_notify(3) without libsystemd: one datagram per update to the socket
/// named by `NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace).
/// Without `NOTIFY_SOCKET` every call does nothing.
///
/// jobd sends the datagrams itself, from its main process, so
/// `NotifyAccess=main` suffices.
public final class SystemdNotifier: Sendable {
    private let fd: Int32?
    private let address: sockaddr_un
    private let addressLength: socklen_t
    /// Where `NOTIFY_SOCKET` points, if set.
    public let socketPath: String?
    /// How often to send `WATCHDOG=1` (half of `WATCHDOG_USEC`), when
    /// systemd asked this process for it.
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, pid: Int32 = getpid()) {
        watchdogInterval = Self.watchdogInterval(environment: environment, pid: pid)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty,
              path.hasPrefix("/") || path.hasPrefix("@")
        else {
            self.fd = nil
            self.address = address
            self.addressLength = 0
            self.socketPath = nil
            return
        }
        var bytes = Array(path.utf8)
        if bytes[0] == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard bytes.count < capacity, descriptor >= 0 else {
            if descriptor >= 0 { close(descriptor) }
            self.fd = nil
            self.address = address
            self.addressLength = 0
            self.socketPath = path
            return
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        self.fd = descriptor
        self.address = address
        // An abstract address is exactly as long as its name; a path gets its NUL.
        let pathLength = bytes[0] == 0 ? bytes.count : bytes.count + 1
        self.addressLength = socklen_t(MemoryLayout<sa_family_t>.size + pathLength)
        self.socketPath = path
    }

    deinit {
        if let fd { close(fd) }
    }

    /// Whether systemd (or a test) listens.
    public var isActive: Bool { fd != nil }

    /// Sends `fields` (`KEY=VALUE`) in one datagram. Gives false if it
    /// could not be sent (no socket, or the send failed).
    @discardableResult
    public func send(_ fields: [String]) -> Bool {
        guard let fd else { return false }
        let message = Array(fields.joined(separator: "\n").utf8)
        var address = self.address
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                message.withUnsafeBytes { bytes in
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, addressLength)
                }
            }
        }
        return sent == message.count
    }

    public func ready(status: String) { send(["READY=1", "STATUS=" + status]) }
    public func status(_ text: String) { send(["STATUS=" + text]) }
    public func stopping(status: String) { send(["STOPPING=1", "STATUS=" + status]) }
    public func watchdog() { send(["WATCHDOG=1"]) }

    /// `RELOADING=1` with the monotonic clock, as systemd wants it.
    public func reloading() {
        send(["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())", "STATUS=reloading configuration"])
    }

    public static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    /// Half of `WATCHDOG_USEC`, if set for this process (`WATCHDOG_PID`
    /// unset or equal to `pid`).
    static func watchdogInterval(environment: [String: String], pid: Int32) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let owner = environment["WATCHDOG_PID"], !owner.isEmpty, Int32(owner) != pid { return nil }
        return .microseconds(Int64(usec / 2))
    }
}
