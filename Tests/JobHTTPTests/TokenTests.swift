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
            for (what, token) in [("read token", read.token), ("unknown token", APIToken.make().token), ("none", nil)] {
                let reply = try await Self.post("/actions", body, token: token, endpoint)
                #expect(reply.status == 403, "\(what): \(reply.status)")
            }
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
