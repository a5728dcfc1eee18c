import Foundation
import JobDashboard
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import TestSupport
import Testing

/// The schedules page's forms: run now, pause and resume, for operators only.
@Suite struct ScheduleActionFormTests {
    /// A dashboard whose one schedule is `nightly`'s, over a store of its own.
    static func dashboard(_ folder: TemporaryFolder) throws -> (Dashboard, SQLiteJobStore) {
        let store = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
        let source = StoreDashboardSource(store: store) {
            let paused = try? await store.pauses().first { $0.scope == .schedule }
            return DashboardSnapshot(
                pools: [],
                schedules: [
                    ScheduleRow(definition: "nightly", expression: "every: 1d (UTC)", nextFire: nil, paused: paused)
                ],
                build: BuildInfo(version: "t", node: "n"))
        }
        var actions = DashboardActions(store)
        actions?.scheduleJob = { name in
            name == "nightly" ? NewJob(definition: "nightly", stages: [StagePlan(name: "fetch", kind: "then")]) : nil
        }
        return (Dashboard(source: source, actions: actions), store)
    }

    /// An operator runs the schedule now, pauses it and resumes it from the
    /// page; each is in the audit trail with the operator's name.
    @Test func anOperatorRunsPausesAndResumesASchedule() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, store) = try Self.dashboard(folder)
        let (access, _) = try AccessTests.access(folder: folder)
        try await withHTTPService(dashboard: dashboard, access: access) { endpoint in
            let alice = try await ActionFormTests.session("alice", endpoint)
            let page = AccessTests.text(try await AccessTests.get("/schedules", cookie: alice.cookie, endpoint))
            #expect(page.contains("name=\"verb\" value=\"run\"") && page.contains("name=\"verb\" value=\"pause\""))

            let run = try await ActionFormTests.post(
                "/schedules", "verb=run&definition=nightly&csrf=\(alice.csrf)", cookie: alice.cookie, endpoint)
            #expect(run.status == 303, "\(run)")
            #expect(run.headers["location"] == "schedules")
            let paused = try await ActionFormTests.post(
                "/schedules", "verb=pause&definition=nightly&reason=month+end&csrf=\(alice.csrf)",
                cookie: alice.cookie, endpoint)
            #expect(paused.status == 303, "\(paused)")
            let marked = AccessTests.text(try await AccessTests.get("/schedules", cookie: alice.cookie, endpoint))
            #expect(marked.contains("paused") && marked.contains("month end"))
            #expect(marked.contains("name=\"verb\" value=\"resume\""))
            #expect(try await store.pauses().map(\.name) == ["nightly"])
            let resumed = try await ActionFormTests.post(
                "/schedules", "verb=resume&definition=nightly&csrf=\(alice.csrf)", cookie: alice.cookie, endpoint)
            #expect(resumed.status == 303, "\(resumed)")
        }
        #expect(try await store.pauses().isEmpty)
        #expect(try await store.queryStrings("SELECT fired_by FROM jobs WHERE definition = 'nightly'") == ["manual"])
        let audit = try await store.queryStrings(
            "SELECT verb || ' ' || actor || ' ' || origin FROM actions ORDER BY id")
        #expect(
            audit == [
                "run alice dashboard from 127.0.0.1", "pause alice dashboard from 127.0.0.1",
                "resume alice dashboard from 127.0.0.1",
            ])
        // The same events of no job as `jobctl pause schedule` and `resume schedule` write.
        let trail = try await store.queryStrings(
            "SELECT kind || ': ' || message FROM events WHERE job_id IS NULL ORDER BY id")
        #expect(
            trail == [
                "paused: schedule nightly paused by alice via dashboard from 127.0.0.1 until resumed: month end",
                "resumed: schedule nightly resumed by alice via dashboard from 127.0.0.1",
            ])
    }

    /// A `read` user, no token, another Origin: 403, and nothing run or paused.
    @Test func aReadUserOrAForgedFormChangesNothing() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, store) = try Self.dashboard(folder)
        let (access, _) = try AccessTests.access(folder: folder)
        try await withHTTPService(dashboard: dashboard, access: access) { endpoint in
            let alice = try await ActionFormTests.session("alice", endpoint)
            let bob = try await ActionFormTests.session("bob", endpoint)
            let attempts: [(String, RawHTTP.Reply)] = [
                (
                    "read user",
                    try await ActionFormTests.post(
                        "/schedules", "verb=run&definition=nightly&csrf=\(bob.csrf)", cookie: bob.cookie, endpoint)
                ),
                (
                    "no token",
                    try await ActionFormTests.post(
                        "/schedules", "verb=pause&definition=nightly", cookie: alice.cookie, endpoint)
                ),
                (
                    "other origin",
                    try await ActionFormTests.post(
                        "/schedules", "verb=run&definition=nightly&csrf=\(alice.csrf)", cookie: alice.cookie,
                        origin: "http://evil.example", endpoint)
                ),
            ]
            for (what, reply) in attempts { #expect(reply.status == 403, "\(what): \(reply.status)") }
            let page = AccessTests.text(try await AccessTests.get("/schedules", cookie: bob.cookie, endpoint))
            #expect(!page.contains("<form method=\"post\""))
        }
        #expect(try await store.queryStrings("SELECT count(*) FROM jobs") == ["0"])
        #expect(try await store.pauses().isEmpty)
        #expect(try await store.queryStrings("SELECT count(*) FROM actions") == ["0"])
    }
}
