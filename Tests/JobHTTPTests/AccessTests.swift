import Foundation
import Hummingbird
import JobConfig
import JobValues
import TestSupport
import Testing

@testable import JobHTTP

/// Logins, sessions, roles and who is believed: ``DashboardAccess`` behind the listener.
@Suite struct AccessTests {
    /// A password only these tests use; it must never show in a log line or a page.
    static let password = "c0rrect-h0rse-battery-staple"

    /// A users file with `alice` (operate) and `bob` (read), and the access it gives.
    static func access(
        publicRead: Bool = false, trustedProxies: [String] = [], folder: TemporaryFolder
    ) throws -> (DashboardAccess, hash: String) {
        let hash = try PasswordHash.make(password, rounds: PasswordHash.minimumRounds)
        let path = folder.file("http-users")
        try "# dashboard users\nalice:operate:\(hash)\nbob:read:\(hash)\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let config = HTTPAccessConfiguration(users: .file(path), publicRead: publicRead, trustedProxies: trustedProxies)
        return (try DashboardAccess(config, listen: .tcp(host: "127.0.0.1", port: 0), environment: [:]), hash)
    }

    static func login(
        _ user: String, _ password: String, origin: String? = nil, _ endpoint: HTTPEndpoint
    ) async throws
        -> RawHTTP.Reply
    {
        let body = "user=\(user)&password=\(password)&next=%2Fschedules"
        let originLine = origin.map { "Origin: \($0)\r\n" } ?? ""
        return try await RawHTTP.send(
            "POST /login HTTP/1.1\r\nHost: test\r\n\(originLine)Content-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)", to: endpoint)
    }

    static func get(
        _ path: String, cookie: String?, headers: String = "", _ endpoint: HTTPEndpoint
    ) async throws -> RawHTTP.Reply {
        let cookieLine = cookie.map { "Cookie: \($0)\r\n" } ?? ""
        return try await RawHTTP.send(
            "GET \(path) HTTP/1.1\r\nHost: test\r\n\(cookieLine)\(headers)Connection: close\r\n\r\n", to: endpoint)
    }

    static func text(_ reply: RawHTTP.Reply) -> String { String(decoding: reply.body, as: UTF8.self) }

    @Test func aLoginOpensASessionThatLogoutEnds() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, storeFolder) = try emptyDashboard()
        _ = storeFolder
        let (access, hash) = try Self.access(folder: folder)
        let logs = LogLines()
        try await withHTTPService(dashboard: dashboard, access: access, logger: logs.logger) { endpoint in
            let anonymous = try await Self.get("/jobs/1", cookie: nil, endpoint)
            #expect(anonymous.status == 303)
            #expect(anonymous.headers["location"] == "../login?next=/jobs/1")
            #expect(try await RawHTTP.get("/metrics", endpoint).status == 200)

            let form = try await Self.get("/login?next=/jobs/1", cookie: nil, endpoint)
            #expect(form.status == 200)
            #expect(Self.text(form).contains("name=\"next\" value=\"/jobs/1\""))
            let hostile = try await Self.get(
                "/login?next=/%22%3E%3Cscript%3Ealert(1)%3C/script%3E", cookie: nil, endpoint)
            #expect(Self.text(hostile).contains("value=\"/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""))
            #expect(!Self.text(hostile).contains("<script>"))

            let wrong = try await Self.login("alice", "guess", endpoint)
            #expect(wrong.status == 401)
            #expect(wrong.headers["set-cookie"] == nil)
            let elsewhere = try await Self.login("alice", Self.password, origin: "http://evil.example", endpoint)
            #expect(elsewhere.status == 403)
            #expect(elsewhere.headers["set-cookie"] == nil)

            let right = try await Self.login("alice", Self.password, origin: "http://test", endpoint)
            #expect(right.status == 303, "\(right)")
            #expect(right.headers["location"] == "schedules")
            let setCookie = try #require(right.headers["set-cookie"])
            #expect(setCookie.hasPrefix("jobd_session="))
            #expect(setCookie.contains("; HttpOnly") && setCookie.contains("; SameSite=Strict"))
            #expect(setCookie.contains("; Max-Age=43200") && !setCookie.contains("Secure"))
            let cookie = String(setCookie.prefix { $0 != ";" })

            #expect(try await Self.get("/", cookie: cookie, endpoint).status == 200)
            let account = try await Self.get("/login", cookie: cookie, endpoint)
            let page = Self.text(account)
            #expect(page.contains("<b>alice</b>, role <b>operate</b>"))
            let csrf = try #require(page.firstMatch(of: /name="csrf" value="([^"]+)"/)?.1)

            let stale = try await RawHTTP.send(
                "POST /logout HTTP/1.1\r\nHost: test\r\nCookie: \(cookie)\r\nContent-Length: 10\r\nConnection: close\r\n\r\ncsrf=wrong",
                to: endpoint)
            #expect(stale.status == 403)
            #expect(try await Self.get("/", cookie: cookie, endpoint).status == 200)
            let body = "csrf=\(csrf)"
            let out = try await RawHTTP.send(
                "POST /logout HTTP/1.1\r\nHost: test\r\nCookie: \(cookie)\r\nContent-Length: \(body.utf8.count)\r\n"
                    + "Connection: close\r\n\r\n\(body)", to: endpoint)
            #expect(out.status == 303)
            #expect(out.headers["set-cookie"]?.contains("Max-Age=0") == true)
            #expect(try await Self.get("/", cookie: cookie, endpoint).status == 303)

            for reply in [form, wrong, account] {
                #expect(!Self.text(reply).contains(Self.password) && !Self.text(reply).contains(hash))
            }
        }
        let lines = logs.all
        #expect(lines.contains { $0.contains("failed login as \"alice\" from 127.0.0.1") }, "\(lines)")
        #expect(lines.contains { $0.contains("\"alice\" logged in (role operate)") }, "\(lines)")
        #expect(!lines.contains { $0.contains(Self.password) || $0.contains(hash) || $0.contains("guess") })
    }

    @Test func failedLoginsAreLimitedPerAddress() async throws {
        let folder = try TemporaryFolder()
        let (dashboard, storeFolder) = try emptyDashboard()
        _ = storeFolder
        let (access, _) = try Self.access(folder: folder)
        let logs = LogLines()
        try await withHTTPService(dashboard: dashboard, access: access, logger: logs.logger) { endpoint in
            for attempt in 1...LoginThrottle.maxFailures {
                #expect(try await Self.login("bob", "nope\(attempt)", endpoint).status == 401)
            }
            // Even the right password waits now.
            let refused = try await Self.login("bob", Self.password, endpoint)
            #expect(refused.status == 429)
            #expect(Int(refused.headers["retry-after"] ?? "") ?? 0 > 0)
            #expect(refused.headers["set-cookie"] == nil)
        }
        #expect(logs.all.filter { $0.contains("failed login as \"bob\"") }.count == LoginThrottle.maxFailures)
        #expect(logs.all.contains { $0.contains("login from 127.0.0.1 refused: too many failed logins") })
    }

    @Test func publicReadAndTrustedProxiesLetVisitorsIn() async throws {
        let folder = try TemporaryFolder()
        // A dashboard per listener: one stops its dashboard when it stops.
        let (first, firstFolder) = try emptyDashboard()
        let (open, _) = try Self.access(publicRead: true, folder: folder)
        try await withHTTPService(dashboard: first, access: open) { endpoint in
            let page = try await Self.get("/", cookie: nil, endpoint)
            #expect(page.status == 200)
        }
        let (second, secondFolder) = try emptyDashboard()
        let (proxied, _) = try Self.access(trustedProxies: ["127.0.0.1"], folder: folder)
        try await withHTTPService(dashboard: second, access: proxied) { endpoint async throws in
            let vouched = try await Self.get("/", cookie: nil, headers: "Remote-User: carol\r\n", endpoint)
            #expect(vouched.status == 200)
            #expect(try await Self.get("/", cookie: nil, endpoint).status == 303)
        }
        let (third, thirdFolder) = try emptyDashboard()
        let (elsewhere, _) = try Self.access(trustedProxies: ["10.9.9.9"], folder: folder)
        try await withHTTPService(dashboard: third, access: elsewhere) { endpoint in
            // Not from a trusted proxy: the header is no one's word.
            let page = try await Self.get("/", cookie: nil, headers: "Remote-User: alice\r\n", endpoint)
            #expect(page.status == 303)
        }
        withExtendedLifetime((firstFolder, secondFolder, thirdFolder)) {}
    }

    @Test func roles() throws {
        let folder = try TemporaryFolder()
        let (access, _) = try Self.access(trustedProxies: ["10.0.0.1"], folder: folder)
        var request = HTTPRequest(method: .get, scheme: nil, authority: "test", path: "/")
        request.headerFields[DashboardAccess.remoteUser] = "alice"
        #expect(access.visitor(request, peer: .init(address: "10.0.0.1"))?.role == .operate)
        request.headerFields[DashboardAccess.remoteUser] = "mallory"
        #expect(access.visitor(request, peer: .init(address: "10.0.0.1"))?.role == .read)
        #expect(access.visitor(request, peer: .init(address: "10.0.0.2")) == nil)

        let unix = DashboardAccess.open(listen: .unix(path: folder.file("http.sock")))
        #expect(unix.visitor(request, peer: .init(credentials: (uid: 0, gid: 0)))?.role == .operate)
        // nobody: not root, not in the jobd group.
        #expect(unix.visitor(request, peer: .init(credentials: (uid: 65534, gid: 65534)))?.role == .read)
    }

    @Test func aBadUsersFileNamesTheLineAndNeverTheHash() throws {
        let hash = try PasswordHash.make(Self.password, rounds: PasswordHash.minimumRounds)
        #expect(PasswordHash.verify(Self.password, against: hash))
        #expect(!PasswordHash.verify(Self.password + "x", against: hash))
        #expect(throws: UserTableError.self) { try UserTable(text: "alice:admin:\(hash)", path: "users") }
        do {
            _ = try UserTable(
                text: "# ok\nalice:operate:pbkdf2-sha256$1000$c2FsdHNhbHQ=$\(hash.suffix(44))", path: "users")
            Issue.record("a hash of 1000 rounds was accepted")
        } catch {
            #expect(
                error.message.hasPrefix("http: users:2: a password hash needs \(PasswordHash.minimumRounds)"),
                "\(error)")
            #expect(!error.message.contains(String(hash.suffix(44))))
        }
    }
}
