import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The name a jobd's engine leases jobs under (`jobs.lease_owner`):
/// `NODE/PID/TAG` — the host's `node:` name, the process id, and a tag that
/// tells two processes that had the same pid apart: a random part, a dot,
/// and the process's start time (`/proc/PID/stat`'s `starttime`, in clock
/// ticks since boot). The node comes first so that
/// `split_part(lease_owner, '/', 1)` (PostgreSQL) or
/// `substr(lease_owner, 1, instr(lease_owner, '/') - 1)` (SQLite) is the host.
///
/// After a crash, jobd takes up at once the jobs of an owner of its own
/// node whose process is gone, instead of waiting for their leases to run
/// out: one node name per host, or one jobd could end another's leases. A
/// process is gone when its pid names no process, a zombie (killed, not yet
/// reaped by its parent), or a process that started at another time (the
/// pid was given out again).
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
        let pid = getpid()
        var tag = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        if let start = ProcessStatus(pid: pid)?.startTime { tag += ".\(start)" }
        return LeaseOwner(node: node, pid: pid, tag: tag)
    }

    /// The start time the tag records (clock ticks since boot), if it records one.
    public var startTime: UInt64? {
        guard let dot = tag.lastIndex(of: ".") else { return nil }
        return UInt64(tag[tag.index(after: dot)...])
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
    /// exists: no process has its pid, or only a zombie, or one that started
    /// at another time than the tag records. `ownOwner`: this process's
    /// own owner name; an owner with this process's pid and another name was
    /// an earlier process (a container's jobd is often pid 1 every time).
    /// In doubt (another node, an unknown shape, a live pid), false.
    public static func isDeadLocalProcess(
        _ owner: String, node: String, ownPid: Int32 = getpid(), ownOwner: String? = nil
    ) -> Bool {
        guard let parsed = LeaseOwner(parsing: owner), parsed.node == node, owner != ownOwner else { return false }
        if parsed.pid == ownPid { return ownOwner != nil }
        guard let status = ProcessStatus(pid: parsed.pid) else {
            // No /proc entry: gone, unless /proc itself cannot be read here.
            if FileManager.default.fileExists(atPath: "/proc/self/stat") { return true }
            return kill(parsed.pid, 0) != 0 && errno == ESRCH
        }
        if status.isZombie { return true }
        if let recorded = parsed.startTime, let start = status.startTime, recorded != start { return true }
        return false
    }
}

/// What `/proc/PID/stat` says of a process: its state and start time.
struct ProcessStatus {
    /// The state letter: `R`, `S`, `D`, `T`, `Z` (zombie), `X` (dead)…
    var state: Character
    /// Clock ticks after boot at which it started.
    var startTime: UInt64?

    var isZombie: Bool { state == "Z" || state == "X" }

    /// Nil when there is no such process (or no /proc).
    init?(pid: Int32) {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        self.init(stat: text)
    }

    /// `pid (comm) state ppid … starttime …`: the command name may hold
    /// spaces and parentheses, so the fields are counted after its last `)`.
    init?(stat text: String) {
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard let state = fields.first?.first else { return nil }
        self.state = state
        // Field 22 of the line; the 20th after the command name.
        startTime = fields.count > 19 ? UInt64(fields[19]) : nil
    }
}
