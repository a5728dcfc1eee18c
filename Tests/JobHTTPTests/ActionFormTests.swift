import Foundation
import JobDashboard
import JobStore
import JobStoreSQLite
import TestSupport
import Testing

/// Operators act from the dashboard: a job's buttons, a selection's confirmation page, and every refusal.
@Suite struct ActionFormTests {
    /// A dashboard over a store of its own, with actions.
    static func dashboard(_ folder: TemporaryFolder) throws -> (Dashboard, SQLiteJobStore) {
        let store = try SQLiteJobStore(path: folder.file("jobs.sqlite"))
        let source = StoreDashboardSource(store: store) {
            DashboardSnapshot(pools: [], build: BuildInfo(version: "t", node: "n"))
        }
        return (Dashboard(source: source, actions: DashboardActions(store)), store)
    }

    static func newJobs(_ count: Int, _ store: SQLiteJobStore) async throws -> [Int64] {
        try await store.submit(
            (0..<count).map { _ in
                NewJob(definition: "report", stages: [StagePlan(name: "fetch", kind: "then")])
            }
        ).map(\.id)
    }

    /// Logs in and gives the cookie and the CSRF token the pages carry.
    static func session(_ user: String, _ endpoint: HTTPEndpoint) async throws -> (cookie: String, csrf: String) {
        let reply = try await AccessTests.login(user, AccessTests.password, endpoint)
        let cookie = String(try #require(reply.headers["set-cookie"]).prefix { $0 != ";" })
        let page = AccessTests.text(try await AccessTests.get("/login", cookie: cookie, endpoint))
        let csrf = String(try #require(page.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1))
        return (cookie, csrf)
    }

    static func post(
        _ path: String, _ body: String, cookie: String?, origin: String? = "http://test",
        _ endpoint: HTTPEndpoint
    ) async throws -> RawHTTP.Reply {
        let lines = (cookie.map { "Cookie: \($0)\r\n" } ?? "") + (origin.map { "Origin: \($0)\r\n" } ?? "")
        return try await RawHTTP.send(
            "POST \(path) HTTP/1.1\r\nHost: test\r\n\(lines)Content-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)", to: endpoint)
    }

    @Test func anOperatorRetriesAJobFromItsPage() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, store) = try Self.dashboard(folder)
        let id = try await Self.newJobs(1, store)[0]
        _ = try await store.requestCancellation(of: id)
        let (access, _) = try AccessTests.access(folder: folder)
        try await withHTTPService(dashboard: dashboard, access: access) { endpoint in
            let alice = try await Self.session("alice", endpoint)
            let page = AccessTests.text(try await AccessTests.get("/jobs/\(id)", cookie: alice.cookie, endpoint))
            #expect(page.contains("action=\"\(id)/retry\""), "\(page)")
            #expect(page.contains("action=\"\(id)/delete\"") && !page.contains("/cancel\""))
            #expect(page.contains("name=\"csrf\" value=\"\(alice.csrf)\""))

            let done = try await Self.post("/jobs/\(id)/retry", "csrf=\(alice.csrf)", cookie: alice.cookie, endpoint)
            #expect(done.status == 303, "\(done)")
            #expect(done.headers["location"] == "../\(id)")
        }
        #expect(try await store.job(id)?.job.attempt == 2)
        let events = try await store.events(of: id).map(\.message)
        #expect(events.contains("retried by alice via dashboard from 127.0.0.1 (action 1)"), "\(events)")
    }

    /// No CSRF token, a wrong one, another Origin, a `read` user, no
    /// session: each 403, and the job and the audit trail unchanged.
    @Test func everyForgedOrUnentitledPostIsRefused() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, store) = try Self.dashboard(folder)
        let id = try await Self.newJobs(1, store)[0]
        _ = try await store.requestCancellation(of: id)
        let (access, _) = try AccessTests.access(folder: folder)
        try await withHTTPService(dashboard: dashboard, access: access) { endpoint in
            let alice = try await Self.session("alice", endpoint)
            let bob = try await Self.session("bob", endpoint)
            let attempts: [(String, RawHTTP.Reply)] = [
                ("no token", try await Self.post("/jobs/\(id)/retry", "", cookie: alice.cookie, endpoint)),
                (
                    "wrong token",
                    try await Self.post("/jobs/\(id)/retry", "csrf=\(bob.csrf)", cookie: alice.cookie, endpoint)
                ),
                (
                    "other origin",
                    try await Self.post(
                        "/jobs/\(id)/retry", "csrf=\(alice.csrf)", cookie: alice.cookie, origin: "http://evil.example",
                        endpoint)
                ),
                (
                    "read user",
                    try await Self.post("/jobs/\(id)/retry", "csrf=\(bob.csrf)", cookie: bob.cookie, endpoint)
                ),
                ("no session", try await Self.post("/jobs/\(id)/retry", "csrf=\(alice.csrf)", cookie: nil, endpoint)),
                (
                    "bulk, read user",
                    try await Self.post(
                        "/actions", "verb=retry&state=cancelled&csrf=\(bob.csrf)", cookie: bob.cookie, endpoint)
                ),
            ]
            for (what, reply) in attempts {
                #expect(reply.status == 403, "\(what): \(reply.status)")
                #expect(AccessTests.text(reply).contains("Nothing was changed"), "\(what)")
            }
            // A read user's pages show no forms.
            let page = AccessTests.text(try await AccessTests.get("/jobs/\(id)", cookie: bob.cookie, endpoint))
            #expect(!page.contains("<form method=\"post\""))
        }
        #expect(try await store.job(id)?.job.attempt == 1)
        #expect(try await store.actions(limit: 10, before: nil).isEmpty)
    }

    @Test func aSelectionIsCancelledThroughItsConfirmationPage() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, store) = try Self.dashboard(folder)
        let ids = try await Self.newJobs(5, store)
        let (access, _) = try AccessTests.access(folder: folder)
        try await withHTTPService(dashboard: dashboard, access: access) { endpoint in
            let alice = try await Self.session("alice", endpoint)
            let list = AccessTests.text(try await AccessTests.get("/?state=pending", cookie: alice.cookie, endpoint))
            #expect(list.contains("href=\"actions?verb=cancel&amp;state=pending\""), "\(list)")
            let confirm = try await AccessTests.get(
                "/actions?verb=cancel&state=pending", cookie: alice.cookie, endpoint)
            #expect(AccessTests.text(confirm).contains("Cancel 5 jobs?"))
            // Looking changed nothing.
            #expect(try await store.countJobs(in: [.pending])[.pending] == 5)
            let done = try await Self.post(
                "/actions", "verb=cancel&state=pending&csrf=\(alice.csrf)", cookie: alice.cookie, endpoint)
            #expect(done.status == 303, "\(done)")
            #expect(done.headers["location"] == "./?state=pending")
        }
        #expect(try await store.countJobs(in: [.cancelled])[.cancelled] == 5)
        let action = try #require(try await store.actions(limit: 1, before: nil).first)
        #expect(action.filter == "state=pending" && action.changed == 5 && action.actor.name == "alice")
        #expect(try await store.events(of: ids[4]).map(\.message) == [action.eventMessage])
    }

    /// A selection by search and time range: refused (403, nothing changed)
    /// without a token, from another Origin, to a `read` user and without a
    /// session; an operator's form changes exactly the jobs that match.
    @Test func aSearchedSelectionIsRefusedUnlessAnOperatorSendsIt() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, store) = try Self.dashboard(folder)
        let ids = try await store.submit(
            ["disk full on /var", "network down", "disk full on /srv"].map { input in
                NewJob(definition: "report", input: Data(input.utf8), stages: [StagePlan(name: "fetch", kind: "then")])
            }
        ).map(\.id)
        let (access, _) = try AccessTests.access(folder: folder)
        try await withHTTPService(dashboard: dashboard, access: access) { endpoint in
            let alice = try await Self.session("alice", endpoint)
            let bob = try await Self.session("bob", endpoint)
            let filter = "verb=cancel&state=pending&since=1h&match=disk+full"
            let refused: [(String, RawHTTP.Reply)] = [
                ("no token", try await Self.post("/actions", filter, cookie: alice.cookie, endpoint)),
                (
                    "other origin",
                    try await Self.post(
                        "/actions", filter + "&csrf=\(alice.csrf)", cookie: alice.cookie, origin: "http://evil.example",
                        endpoint)
                ),
                (
                    "read user",
                    try await Self.post("/actions", filter + "&csrf=\(bob.csrf)", cookie: bob.cookie, endpoint)
                ),
                ("no session", try await Self.post("/actions", filter + "&csrf=\(alice.csrf)", cookie: nil, endpoint)),
            ]
            for (what, reply) in refused {
                #expect(reply.status == 403, "\(what): \(reply.status)")
            }
            #expect(try await store.countJobs(in: [.pending])[.pending] == 3)
            #expect(try await store.actions(limit: 10, before: nil).isEmpty)

            let done = try await Self.post("/actions", filter + "&csrf=\(alice.csrf)", cookie: alice.cookie, endpoint)
            #expect(done.status == 303, "\(done)")
            #expect(done.headers["location"] == "./?state=pending&since=1h&match=disk%20full")
        }
        var states: [JobState?] = []
        for id in ids { states.append(try await store.job(id)?.job.state) }
        #expect(states == [.cancelled, .pending, .cancelled])
    }
}
