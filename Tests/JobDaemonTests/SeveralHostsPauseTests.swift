import Foundation
import JobStore
@_spi(Maintenance) import JobStorePostgres
import TestSupport
import Testing

/// Pauses across three jobds on one PostgreSQL, made with jobctl from a
/// folder where no jobd runs: every host obeys a definition's pause within
/// a second of jobctl returning, `--for` ends it on time, and every host's
/// firer holds a paused schedule and catches it up on resume.
@Suite(.serialized) struct SeveralHostsPauseTests {
    static let quick = """
        pipeline:
          - then: work
            run: [sh, -c, 'sleep 0.2; echo ok']
        """
    static let tick = """
        schedule:
          every: 1s
          overlap: allow
          catch-up: all
        pipeline:
          - then: work
            run: [true]
        """

    /// The start times of `definition`'s jobs, by the database's clock.
    static func starts(_ store: PostgresJobStore, _ definition: String) async throws -> [Date] {
        try await store.list(JobQuery(definition: definition, limit: 1000)).jobs.compactMap(\.startedAt).sorted()
    }

    @Test(.timeLimit(.minutes(2)))
    func aPauseHoldsOnEveryHostWithinASecondAndExpiresOnTime() async throws {
        let cluster = try await SeveralHostsDaemonTests.Cluster(
            hosts: 3, definitions: ["quick": Self.quick, "tick": Self.tick], sharingTheServer: true)
        defer { cluster.tearDown() }
        for host in cluster.hosts { try host.start() }
        for host in cluster.hosts {
            _ = try #require(await host.notify.waitFor("READY", "1"), "jobd did not start: \(host.log)")
        }
        let (store, running) = try await cluster.openStore()
        defer { running.cancel() }

        // A definition: 90 jobs of 0.2 s on 12 slots, paused while they run.
        _ = try await cluster.jobctl(["submit", "quick"], stdin: String(repeating: "x\n", count: 90))
        while try await Self.starts(store, "quick").count < 12 { try await Task.sleep(for: .milliseconds(20)) }
        let pause = try await cluster.jobctl(["pause", "definition", "quick", "--for", "3s", "--json"])
        let returned = Date()
        let until = try #require(
            (try JSONSerialization.jsonObject(with: Data(pause.utf8)) as? [String: Any])?["until"] as? String)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let end = try #require(formatter.date(from: until))

        // A schedule firing every second on each host's firer.
        while try await store.list(JobQuery(definition: "tick")).jobs.count < 2 {
            try await Task.sleep(for: .milliseconds(50))
        }
        _ = try await cluster.jobctl(["pause", "schedule", "tick"])
        let scheduleReturned = Date()

        // The first start after the end, read as it comes (a loaded machine
        // may take a while to record it): the expiry is what is checked,
        // within a bound no poll-interval (1 s) outlasts twice.
        try await Task.sleep(for: .seconds(max(0, end.timeIntervalSinceNow)))
        var starts = try await Self.starts(store, "quick")
        while !starts.contains(where: { $0 >= end }), Date() < end + 15 {
            try await Task.sleep(for: .milliseconds(100))
            starts = try await Self.starts(store, "quick")
        }
        let held = starts.filter { $0 > returned + 1 && $0 < end }
        #expect(held.isEmpty, "started while paused, after pause + 1 s: \(held) (pause returned \(returned))")
        let after = try #require(starts.filter { $0 >= end }.min(), "nothing started after the pause's end")
        #expect(
            after.timeIntervalSince(end) < 2.5,
            "the first start after --for ran out came \(after.timeIntervalSince(end)) s late")
        let fired = try await store.list(JobQuery(definition: "tick", limit: 1000)).jobs.compactMap(\.scheduledFor)
        let late = fired.filter { $0 > scheduleReturned + 1 }
        #expect(late.isEmpty, "occurrences fired after the schedule's pause: \(late)")

        // Resumed with catch-up none: what the pause held back is skipped, and it fires on time again.
        let resumed = Date()
        _ = try await cluster.jobctl(["resume", "schedule", "tick", "--catch-up", "none"])
        try await Task.sleep(for: .seconds(2.5))
        let now = try await store.list(JobQuery(definition: "tick", limit: 1000)).jobs.compactMap(\.scheduledFor)
        let heldBack = now.filter { $0 > scheduleReturned + 1 && $0 < resumed - 0.5 }
        #expect(heldBack.isEmpty, "catch-up none fired held-back occurrences: \(heldBack)")
        #expect(now.contains { $0 > resumed + 0.5 }, "the schedule fires again after the resume: \(now.sorted())")
        #expect(Set(now).count == now.count, "each occurrence once")
        await store.close()
    }
}
