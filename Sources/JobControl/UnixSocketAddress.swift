#if canImport(Glibc)
import Glibc
#endif

/// A unix socket address (`sockaddr_un`) for `bind`, `connect` and
/// `sendto`: a path, or `@name` in the abstract namespace (as systemd
/// writes `NOTIFY_SOCKET`). Used by the control socket's two ends and by
/// jobd's sd_notify.
public struct UnixSocketAddress: Sendable {
    /// The longest path that fits (`sun_path` less its terminating NUL).
    public static let maximumPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    private let storage: sockaddr_un
    private let length: socklen_t

    /// Nil if `path` is empty or longer than ``maximumPathBytes``.
    public init?(path: String) {
        var bytes = Array(path.utf8)
        guard !bytes.isEmpty, bytes.count <= Self.maximumPathBytes else { return nil }
        let abstract = bytes[0] == UInt8(ascii: "@")
        if abstract { bytes[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        storage = address
        // An abstract name is exactly as long as it is; a path takes its NUL.
        length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
    }

    /// Calls `body` with the address as the socket calls take it.
    public func withSocketAddress<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
