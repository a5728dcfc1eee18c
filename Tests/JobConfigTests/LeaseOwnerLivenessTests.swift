import Foundation
import JobConfig
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A restarted jobd tells its dead predecessor from a live jobd by the
/// predecessor's pid: gone, a zombie not reaped yet, or a pid given out again.
@Suite struct LeaseOwnerLivenessTests {
    @Test func aZombieIsDead() throws {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/true"), nil]
        defer { for pointer in argv { free(pointer) } }
        #expect(posix_spawn(&pid, "/bin/true", nil, nil, argv, environ) == 0)
        // Not reaped until the end: a zombie once it exited.
        defer {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while Self.state(of: pid) != "Z", ContinuousClock.now < deadline { usleep(10_000) }
        try #require(Self.state(of: pid) == "Z")
        #expect(LeaseOwner.isDeadLocalProcess("here/\(pid)/a", node: "here", ownPid: 1))
    }

    @Test func aPidGivenOutAgainIsDead() throws {
        let current = LeaseOwner.current(node: "here")
        let start = try #require(current.startTime, "the tag records the start time: \(current)")
        let me = getpid()
        #expect(!LeaseOwner.isDeadLocalProcess("here/\(me)/a.\(start)", node: "here", ownPid: 1), "this process")
        #expect(LeaseOwner.isDeadLocalProcess("here/\(me)/a.\(start + 1)", node: "here", ownPid: 1), "another start")
        #expect(!LeaseOwner.isDeadLocalProcess("here/\(me)/a", node: "here", ownPid: 1), "no start recorded: alive")
    }

    @Test func anEarlierProcessWithThisPidIsDead() {
        let own = "here/5/b.7"
        #expect(LeaseOwner.isDeadLocalProcess("here/5/a.3", node: "here", ownPid: 5, ownOwner: own))
        #expect(!LeaseOwner.isDeadLocalProcess(own, node: "here", ownPid: 5, ownOwner: own), "itself")
    }

    static func state(of pid: pid_t) -> Character? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        return stat[stat.index(after: close)...].split(separator: " ").first?.first
    }
}
