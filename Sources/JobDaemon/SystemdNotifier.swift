import Foundation
import JobControl
import JobEngine

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
    /// The datagram socket and where it sends, when `NOTIFY_SOCKET` is usable.
    private let target: (fd: Int32, address: UnixSocketAddress)?
    /// Where `NOTIFY_SOCKET` points, if set.
    public let socketPath: String?
    /// How often to send `WATCHDOG=1` (half of `WATCHDOG_USEC`), when
    /// systemd asked this process for it.
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment, pid: Int32 = getpid()) {
        watchdogInterval = Self.watchdogInterval(environment: environment, pid: pid)
        let path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        socketPath = path
        guard let path, path.hasPrefix("/") || path.hasPrefix("@"), let address = UnixSocketAddress(path: path) else {
            target = nil
            return
        }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        target = fd >= 0 ? (fd, address) : nil
    }

    deinit {
        if let target { close(target.fd) }
    }

    /// Whether systemd (or a test) listens.
    public var isActive: Bool { target != nil }

    /// Sends `fields` (`KEY=VALUE`) in one datagram. Gives false if it
    /// could not be sent (no socket, or the send failed).
    @discardableResult
    public func send(_ fields: [String]) -> Bool {
        guard let target else { return false }
        let message = Array(fields.joined(separator: "\n").utf8)
        let sent = target.address.withSocketAddress { address, length in
            message.withUnsafeBytes { bytes in
                sendto(target.fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), address, length)
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
