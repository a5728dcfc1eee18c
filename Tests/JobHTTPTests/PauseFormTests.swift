import Foundation
import JobDashboard
import JobStore
@_spi(Maintenance) import JobStoreSQLite
import TestSupport
import Testing

/// Operators pause and resume pools and definitions from the dashboard; the
/// pages mark what is paused and say why pending jobs wait.
@Suite struct PauseFormTests {
    /// A dashboard over a store of its own, with actions, one pool and the rules it claims by.
    static func dashboard(_ folder: TemporaryFolder) throws -> (Dashboard, SQLiteJobStore) {
        let store = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
        let source = StoreDashboardSource(
            store: store,
            snapshot: {
                DashboardSnapshot(
                    pools: [PoolRow(name: "default", capacity: 2, running: 0)],
                    build: BuildInfo(version: "t", node: "n"))
            }, waitRules: { WaitRules(poolSizes: ["default": 2]) })
        return (Dashboard(source: source, actions: DashboardActions(store)), store)
    }

    /// An operator pauses a definition for an hour with a reason: its
    /// pending job says so on the list and on its page, the pause is
    /// marked, the audit trail has it; then resumes it.
    @Test func anOperatorPausesAndResumesADefinition() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, store) = try Self.dashboard(folder)
        let id = try await ActionFormTests.newJobs(1, store)[0]
        let (access, _) = try AccessTests.access(folder: folder)
        try await withHTTPService(dashboard: dashboard, access: access) { endpoint in
            let alice = try await Self.session(endpoint)
            let list = AccessTests.text(
                try await AccessTests.get("/?definition=report", cookie: alice.cookie, endpoint))
            #expect(list.contains("action=\"pauses\""), "\(list)")
            #expect(list.contains(">ready</span>"), "\(list)")
            let done = try await ActionFormTests.post(
                "/pauses", "do=pause&scope=definition&name=report&for=1h&reason=%3Cdisk%3E+full&csrf=\(alice.csrf)",
                cookie: alice.cookie, endpoint)
            #expect(done.status == 303, "\(done)")
            #expect(done.headers["location"] == "./?definition=report")
            let pause = try #require(try await store.pauses().first)
            #expect(pause.scope == .definition && pause.name == "report" && pause.reason == "<disk> full")
            #expect(pause.actor == "alice via dashboard from 127.0.0.1")
            let until = try #require(pause.until)
            #expect(abs(until.timeIntervalSinceNow - 3600) < 60)

            let paused = AccessTests.text(
                try await AccessTests.get("/?definition=report", cookie: alice.cookie, endpoint))
            #expect(paused.contains("s-paused"), "\(paused)")
            #expect(paused.contains("&lt;disk&gt; full") && !paused.contains("<disk>"))
            #expect(paused.contains(">paused (definition)</span>"), "\(paused)")
            let page = AccessTests.text(try await AccessTests.get("/jobs/\(id)", cookie: alice.cookie, endpoint))
            #expect(page.contains("paused: definition report was paused by alice via dashboard"), "\(page)")

            let resumed = try await ActionFormTests.post(
                "/pauses", "do=resume&scope=definition&name=report&csrf=\(alice.csrf)", cookie: alice.cookie, endpoint)
            #expect(resumed.status == 303, "\(resumed)")
        }
        #expect(try await store.pauses().isEmpty)
        let trail = try await store.queryStrings(
            "SELECT kind || ': ' || message FROM events WHERE job_id IS NULL ORDER BY id")
        #expect(trail.count == 2, "\(trail)")
        #expect(
            trail.first??.hasPrefix("paused: definition report paused by alice via dashboard from 127.0.0.1 until ")
                == true)
        #expect(trail.last == "resumed: definition report resumed by alice via dashboard from 127.0.0.1")
        // The same rows of the audit trail as `jobctl pause` and `resume` write.
        let audit = try await store.queryStrings(
            "SELECT verb || ' ' || actor || ' ' || origin || ' ' || filter || ' ' || coalesce(definition, '-') "
                + "FROM actions ORDER BY id")
        #expect(
            audit == [
                "pause alice dashboard from 127.0.0.1 definition report report",
                "resume alice dashboard from 127.0.0.1 definition report report",
            ])
    }

    /// The pools card offers a pool's pause to an operator; a POST without
    /// a token, from a read user, or from another Origin is refused (403)
    /// and nothing is paused; a read user sees no form.
    @Test func aPoolsPauseIsRefusedWithoutTheRightsAndDoneWithThem() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, store) = try Self.dashboard(folder)
        let (access, _) = try AccessTests.access(folder: folder)
        try await withHTTPService(dashboard: dashboard, access: access) { endpoint in
            let alice = try await Self.session(endpoint)
            let bob = try await ActionFormTests.session("bob", endpoint)
            let form = "do=pause&scope=pool&name=default&for="
            let refused: [(String, RawHTTP.Reply)] = [
                ("no token", try await ActionFormTests.post("/pauses", form, cookie: alice.cookie, endpoint)),
                (
                    "read user",
                    try await ActionFormTests.post("/pauses", form + "&csrf=\(bob.csrf)", cookie: bob.cookie, endpoint)
                ),
                (
                    "other origin",
                    try await ActionFormTests.post(
                        "/pauses", form + "&csrf=\(alice.csrf)", cookie: alice.cookie, origin: "http://evil.example",
                        endpoint)
                ),
            ]
            for (what, reply) in refused {
                #expect(reply.status == 403, "\(what): \(reply.status)")
            }
            #expect(try await store.pauses().isEmpty)
            let readPage = AccessTests.text(try await AccessTests.get("/", cookie: bob.cookie, endpoint))
            #expect(!readPage.contains("action=\"pauses\""))

            let done = try await ActionFormTests.post(
                "/pauses", form + "&csrf=\(alice.csrf)", cookie: alice.cookie, endpoint)
            #expect(done.status == 303, "\(done)")
            let page = AccessTests.text(try await AccessTests.get("/", cookie: alice.cookie, endpoint))
            #expect(page.contains("<h2>Paused</h2>") && page.contains("s-paused"), "\(page)")
            let bad = try await ActionFormTests.post(
                "/pauses", "do=pause&scope=pool&name=default&for=3y&csrf=\(alice.csrf)", cookie: alice.cookie, endpoint)
            #expect(bad.status == 400, "\(bad)")
        }
        let pause = try #require(try await store.pauses().first)
        #expect(pause.scope == .pool && pause.name == "default" && pause.until == nil && pause.reason == nil)
        let audit = try await store.queryStrings(
            "SELECT verb || ' ' || filter || ' ' || coalesce(definition, '-') FROM actions")
        #expect(audit == ["pause pool default -"], "a pool's pause names no definition")
    }

    static func session(_ endpoint: HTTPEndpoint) async throws -> (cookie: String, csrf: String) {
        try await ActionFormTests.session("alice", endpoint)
    }
}
