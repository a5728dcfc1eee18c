import Foundation
import JobEngine

#if canImport(Glibc)
import Glibc
#endif

/// Lease owners are `jobd-HOST-PID-RANDOM` (`EngineOptions.defaultOwner`).
/// After a crash, jobd takes up at once the jobs of an owner of its own
/// host whose process is gone, instead of waiting for the lease to expire.
enum LeaseOwner {
    /// The host and pid of an owner name, if it has the usual shape.
    static func parse(_ owner: String) -> (host: String, pid: Int32)? {
        guard owner.hasPrefix("jobd-") else { return nil }
        let parts = owner.dropFirst(5).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]), pid > 0 else { return nil }
        return (parts.dropLast(2).joined(separator: "-"), pid)
    }

    /// Whether `owner` names a process of this host that no longer exists.
    /// In doubt (another host, an unknown shape, a live pid), false.
    static func isDeadLocalProcess(
        _ owner: String, host: String = ProcessInfo.processInfo.hostName, ownPid: Int32 = getpid()
    ) -> Bool {
        guard let parsed = parse(owner), parsed.host == host, parsed.pid != ownPid else { return false }
        return kill(parsed.pid, 0) != 0 && errno == ESRCH
    }
}
