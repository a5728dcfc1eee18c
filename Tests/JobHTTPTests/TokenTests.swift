import Foundation
import JobDashboard
import JobStore
import JobStoreSQLite
import JobValues
import TestSupport
import Testing

@testable import JobHTTP

/// Scripts with a token (`Authorization: Bearer`): an `operate` token acts
/// without a CSRF token or an Origin; a `read` token, a token of no user, or
/// none at all changes nothing; the token is in no page and no log line.
@Suite struct TokenTests {
    static func post(
        _ path: String, _ body: String, token: String?, _ endpoint: HTTPEndpoint
    ) async throws
        -> RawHTTP.Reply
    {
        let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
        return try await RawHTTP.send(
            "POST \(path) HTTP/1.1\r\nHost: test\r\n\(authorization)Content-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)", to: endpoint)
    }

    @Test func anOperateTokenActsAndNoOtherDoes() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, store) = try ActionFormTests.dashboard(folder)
        let ids = try await ActionFormTests.newJobs(2, store)
        let operate = APIToken.make()
        let read = APIToken.make()
        let hash = try PasswordHash.make(AccessTests.password, rounds: PasswordHash.minimumRounds)
        let users = folder.file("http-users")
        try "alice:operate:\(hash)\nci:operate:\(operate.hash)\nviewer:read:\(read.hash)\n".write(
            toFile: users, atomically: true, encoding: .utf8)
        let access = try DashboardAccess(
            HTTPAccessConfiguration(users: .file(users)), listen: .tcp(host: "127.0.0.1", port: 0), environment: [:])
        let logs = LogLines()
        try await withHTTPService(dashboard: dashboard, access: access, logger: logs.logger) { endpoint in
            let body = "verb=cancel&state=pending"
            for (what, token) in [("read token", read.token), ("none", nil)] {
                let reply = try await Self.post("/actions", body, token: token, endpoint)
                #expect(reply.status == 403, "\(what): \(reply.status)")
            }
            // A token of no user is a failed login.
            let unknown = try await Self.post("/actions", body, token: APIToken.make().token, endpoint)
            #expect(unknown.status == 401 && unknown.headers["www-authenticate"] == "Bearer", "\(unknown)")
            // A token is no password: the login form refuses it.
            #expect(try await AccessTests.login("ci", operate.token, endpoint).status == 401)
            #expect(try await store.countJobs(in: [.pending])[.pending] == 2)

            let done = try await Self.post("/actions", body, token: operate.token, endpoint)
            #expect(done.status == 303, "\(done)")
            let page = try await RawHTTP.send(
                "GET / HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer \(read.token)\r\nConnection: close\r\n\r\n",
                to: endpoint)
            #expect(page.status == 200)
            #expect(!AccessTests.text(page).contains("<form method=\"post\""))
            #expect(!AccessTests.text(page).contains(read.token))
        }
        for id in ids { #expect(try await store.job(id)?.job.state == .cancelled) }
        let action = try #require(try await store.actions(limit: 10, before: nil).first)
        #expect(action.actor.name == "ci" && action.actor.origin == "dashboard token from 127.0.0.1")
        #expect(try await store.actions(limit: 10, before: nil).count == 1)
        let lines = logs.all.joined(separator: "\n")
        #expect(lines.contains("http: \"ci\" cancelled 2 jobs"), "\(lines)")
        #expect(!lines.contains(operate.token) && !lines.contains(read.token))
    }

    /// Wrong tokens count toward the address's failed logins, as wrong
    /// passwords do: past the limit even a good token waits; each is logged
    /// without the token.
    @Test func wrongTokensAreLimitedPerAddressAndLogged() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, _) = try ActionFormTests.dashboard(folder)
        let good = APIToken.make()
        let users = folder.file("http-users")
        try "ci:read:\(good.hash)\n".write(toFile: users, atomically: true, encoding: .utf8)
        let access = try DashboardAccess(
            HTTPAccessConfiguration(users: .file(users)), listen: .tcp(host: "127.0.0.1", port: 0), environment: [:])
        let logs = LogLines()
        let wrong = (1...LoginThrottle.maxFailures).map { _ in APIToken.make().token }
        try await withHTTPService(dashboard: dashboard, access: access, logger: logs.logger) { endpoint in
            func get(_ path: String, _ token: String) async throws -> RawHTTP.Reply {
                try await RawHTTP.send(
                    "GET \(path) HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n",
                    to: endpoint)
            }
            #expect(try await get("/", good.token).status == 200)
            for token in wrong { #expect(try await get("/", token).status == 401) }
            let refused = try await get("/", good.token)
            #expect(refused.status == 429 && Int(refused.headers["retry-after"] ?? "") ?? 0 > 0, "\(refused)")
            // The metrics need no login, whatever the header says.
            #expect(try await get("/metrics", wrong[0]).status == 200)
        }
        let lines = logs.all
        #expect(lines.filter { $0.contains("a token that matches no user, from 127.0.0.1") }.count == wrong.count)
        #expect(lines.contains { $0.contains("token from 127.0.0.1 refused: too many failed logins") }, "\(lines)")
        #expect(!lines.contains { line in line.contains(good.token) || wrong.contains { line.contains($0) } })
    }

    @Test func aUsersFileKeepsOnlyWellFormedTokenHashes() throws {
        let (_, hash) = APIToken.make()
        let table = try UserTable(text: "ci:operate:\(hash)\n", path: "users")
        #expect(table.tokenUser("jobd_wrong") == nil)
        for bad in ["token-sha256$abc", "token-sha256$" + String(repeating: "A", count: 64)] {
            #expect(throws: UserTableError.self) { try UserTable(text: "ci:operate:\(bad)\n", path: "users") }
        }
        #expect(throws: UserTableError.self) {
            try UserTable(text: "ci:operate:\(hash)\nbot:read:\(hash)\n", path: "users")
        }
        let token = APIToken.make()
        #expect(token.token.hasPrefix(APIToken.prefix) && token.token.count > 40)
        #expect(try UserTable(text: "ci:read:\(token.hash)\n", path: "u").tokenUser(token.token)?.role == .read)
    }
}
