import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The name a jobd's engine leases jobs under (`jobs.lease_owner`):
/// `NODE/PID/TAG` — the host's `node:` name, the process id, and a random
/// tag that tells two processes that had the same pid apart. The node comes
/// first so that `split_part(lease_owner, '/', 1)` (PostgreSQL) or
/// `substr(lease_owner, 1, instr(lease_owner, '/') - 1)` (SQLite) is the host.
///
/// After a crash, jobd takes up at once the jobs of an owner of its own
/// node whose process is gone, instead of waiting for their leases to run
/// out: one node name per host, or one jobd could end another's leases.
public struct LeaseOwner: Sendable, Hashable, CustomStringConvertible {
    public var node: String
    public var pid: Int32
    public var tag: String

    public init(node: String, pid: Int32, tag: String) {
        self.node = node
        self.pid = pid
        self.tag = tag
    }

    /// This process on `node`, with a fresh tag.
    public static func current(node: String) -> LeaseOwner {
        LeaseOwner(node: node, pid: getpid(), tag: String(UInt32.random(in: 0...UInt32.max), radix: 16))
    }

    public var description: String { "\(node)/\(pid)/\(tag)" }

    /// Reads `NODE/PID/TAG`, or the form jobd wrote before nodes
    /// (`jobd-HOST-PID-TAG`, the host name as node); nil for anything else.
    public init?(parsing owner: String) {
        let slashed = owner.split(separator: "/", omittingEmptySubsequences: false)
        if slashed.count == 3, !slashed[0].isEmpty, let pid = Int32(slashed[1]), pid > 0 {
            self.init(node: String(slashed[0]), pid: pid, tag: String(slashed[2]))
            return
        }
        guard owner.hasPrefix("jobd-") else { return nil }
        let parts = owner.dropFirst(5).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, let pid = Int32(parts[parts.count - 2]), pid > 0 else { return nil }
        let host = parts.dropLast(2).joined(separator: "-")
        guard !host.isEmpty else { return nil }
        self.init(node: host, pid: pid, tag: String(parts[parts.count - 1]))
    }

    /// The node of a lease owner's name: its first part, or — a name of
    /// another shape (a test's, a tool's) — the name itself.
    public static func node(of owner: String) -> String {
        LeaseOwner(parsing: owner)?.node ?? owner
    }

    /// Whether `owner` names a process of `node` (this host) that no longer
    /// exists. In doubt (another node, an unknown shape, a live pid), false.
    public static func isDeadLocalProcess(_ owner: String, node: String, ownPid: Int32 = getpid()) -> Bool {
        guard let parsed = LeaseOwner(parsing: owner), parsed.node == node, parsed.pid != ownPid else { return false }
        return kill(parsed.pid, 0) != 0 && errno == ESRCH
    }
}
