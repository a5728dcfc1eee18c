import Foundation
import JobStore
@_spi(Maintenance) import JobStorePostgres
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Child jobs over several hosts on one PostgreSQL, with the real binaries:
/// a parent fans out into children that run on three jobds; one jobd is
/// SIGKILLed and PostgreSQL restarted while they run. Every child ends, and
/// the parent ends once, fulfilled, with the children's results in item
/// order. `JOBD_TEST_CHILDREN` sets how many children (100 unless set).
@Suite(.serialized) struct SeveralHostsChildrenTests {
    static let fan = """
        pipeline:
          - each: double
            definition: item
            items: lines
            max-children: 100000
          - then: count
            run: [sh, -c, 'cat']
        """
    /// 0.2 s a child, so that children still run when a host is killed.
    static let item = """
        pipeline:
          - then: twice
            run: [sh, -c, 'read x; sleep 0.2; printf %s $((x * 2))']
        """

    @Test(.timeLimit(.minutes(5)))
    func childrenOverThreeHostsOneKilledAndTheServerRestartedJoinOnce() async throws {
        let count = ProcessInfo.processInfo.environment["JOBD_TEST_CHILDREN"].flatMap(Int.init) ?? 100
        let cluster = try await SeveralHostsDaemonTests.Cluster(
            hosts: 3, definitions: ["fan": Self.fan, "item": Self.item])
        defer { cluster.tearDown() }
        for host in cluster.hosts { try host.start() }
        for host in cluster.hosts {
            _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        }
        let inputs = (1...count).map(String.init)
        let file = cluster.client.folder + "/items"
        try (inputs.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let parent = try #require(
            Int64(
                try await cluster.jobctl(["submit", "fan", "--input-file", file])
                    .trimmingCharacters(in: .whitespacesAndNewlines)))

        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }
        // Once children run on host-0 and another host, host-0 dies and the server restarts.
        try await waitUntil(.seconds(60)) {
            let children = try await store.children(of: parent, limit: count)
            let nodes = Set(children.filter { $0.state == .running }.compactMap(\.leaseOwner).map(Self.node))
            return nodes.contains("host-0") && nodes.count >= 2
        }
        cluster.hosts[0].signal(SIGKILL)
        try await Task.sleep(for: .milliseconds(300))
        await cluster.server.kill()
        try await Task.sleep(for: .seconds(1))
        try await cluster.server.start()

        try await waitUntil(.seconds(240)) { try await store.job(parent)?.job.state.isResolved == true }
        let detail = try #require(try await store.job(parent))
        #expect(detail.job.state == .fulfilled, "\(detail.job.state) \(detail.job.error ?? "")")
        #expect(detail.job.attempt == 1)
        let expected = "[" + inputs.map { "\"\(Int($0)! * 2)\"" }.joined(separator: ",") + "]"
        let result = detail.job.result.map { String(decoding: $0, as: UTF8.self) }
        #expect(result == expected, "the results in item order")
        let children = try await store.children(of: parent, limit: count + 10)
        #expect(children.count == count, "one child per item")
        #expect(children.map(\.itemIndex) == Array(0..<count))
        #expect(children.allSatisfy { $0.state == .fulfilled }, "\(Set(children.map(\.state)))")
        // The parent's stage settled once: the join's value is the job's result.
        #expect(detail.stages.first?.value.map { String(decoding: $0, as: UTF8.self) } == expected)
        let finishers = Set(children.compactMap(\.leaseOwner).map(Self.node))
        #expect(finishers.isSuperset(of: ["host-1", "host-2"]), "\(finishers)")

        for host in cluster.hosts.dropFirst() { host.signal(SIGTERM) }
        for host in cluster.hosts.dropFirst() { #expect(await host.exitStatus() == 0, "\(host.log)") }
        await store.close()
    }

    /// `NODE/PID/TAG` → `NODE`.
    static func node(_ owner: String) -> String {
        String(owner.split(separator: "/").first ?? "")
    }

    func waitUntil(_ limit: Duration, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if (try? await condition()) == true { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("not within \(limit)")
    }
}
