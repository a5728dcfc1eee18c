import Foundation
import Hummingbird
import JobDashboard
import Logging

/// Logging in and out.
extension JobHTTPResponder {
    /// The most a login or logout form may send.
    static let maxFormBytes = 4096

    /// `GET /login`: the form, or who is logged in with the logout form.
    func loginPage(_ request: Request, peer: DashboardAccess.Peer) -> Response {
        let node = self.node
        if let (_, session) = access.session(request.head) {
            return Self.html(
                .ok,
                AccessPages.account(
                    node: node, user: session.user, role: session.role.rawValue,
                    csrf: session.csrf))
        }
        guard access.hasLogins else {
            return Self.html(
                .notFound,
                AccessPages.refusal(
                    node: node, heading: "No logins here",
                    detail: "This listener has no users file ('users' of 'http' in jobd.yaml)."))
        }
        let next = QueryString.items(request.uri.query).first { $0.0 == "next" }?.1
        return Self.html(.ok, AccessPages.login(node: node, message: nil, next: Self.localPath(next)))
    }

    /// Where a visitor who must log in is sent: the login form, or a 403 when there is none.
    func mustLogIn(_ request: Request) -> Response {
        guard access.hasLogins else {
            return Self.html(
                .forbidden,
                AccessPages.refusal(
                    node: node, heading: "Forbidden", detail: "This dashboard does not serve you."))
        }
        let next = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        var response = Response(status: .seeOther, headers: [.cacheControl: "no-store"])
        response.headers[.location] = Self.base(of: request.uri.path) + "login?next=" + Self.percentEncoded(next)
        return response
    }

    /// The answer to a request whose `Authorization: Bearer` token matches
    /// no user, or that comes from an address refused for too many failed
    /// logins; nil when the token is good, or there is none. A wrong token
    /// is a failed login: it counts toward the address's limit, as a wrong
    /// password does, and is logged (the token itself never is). `/metrics`
    /// and `/healthz` need no login and are answered whatever the header.
    func tokenRefusal(_ request: Request, peer: DashboardAccess.Peer) -> Response? {
        guard DashboardAccess.bearer(request.head) != nil,
            request.uri.path != "/metrics", request.uri.path != "/healthz"
        else { return nil }
        let address = peer.origin
        if let wait = access.throttle.wait(for: address) {
            logger.warning(
                "http: token from \(address) refused: too many failed logins; it may try again in \(wait.components.seconds)s"
            )
            var response = Self.text(
                .tooManyRequests, "Too many failed logins: try again in \(wait.components.seconds + 1) seconds.\n")
            response.headers[.retryAfter] = String(wait.components.seconds + 1)
            return response
        }
        guard access.visitor(request.head, peer: peer) == nil else { return nil }
        access.throttle.failed(address)
        logger.warning("http: a token that matches no user, from \(address): refused")
        var response = Self.text(.unauthorized, "The token matches no user of this dashboard.\n")
        response.headers[.wwwAuthenticate] = "Bearer"
        return response
    }

    /// `POST /login` and `POST /logout`.
    func accountAction(_ request: Request, peer: DashboardAccess.Peer) async -> Response {
        let node = self.node
        guard Self.sameOrigin(request) else {
            return Self.html(
                .forbidden,
                AccessPages.refusal(
                    node: node, heading: "Forbidden", detail: "This form was sent from another site."))
        }
        guard let form = await Self.form(request) else {
            return Self.html(
                .contentTooLarge,
                AccessPages.refusal(
                    node: node, heading: "Too large", detail: "A form here holds at most \(Self.maxFormBytes) bytes."))
        }
        let secure = access.overTLS(request.head, peer: peer)
        if request.uri.path == "/logout" {
            guard let (token, session) = access.session(request.head),
                let csrf = form["csrf"], PasswordHash.constantTimeEqual(Array(csrf.utf8), Array(session.csrf.utf8))
            else {
                return Self.html(
                    .forbidden,
                    AccessPages.refusal(
                        node: node, heading: "Forbidden",
                        detail: "No session to end, or the form is stale: reload the page."))
            }
            access.sessions.close(token)
            var response = Response(status: .seeOther, headers: [.cacheControl: "no-store", .location: "login"])
            response.headers[.setCookie] = access.clearedCookie(secure: secure)
            return response
        }
        guard access.hasLogins else { return mustLogIn(request) }
        let address = peer.origin
        if let wait = access.throttle.wait(for: address) {
            logger.warning(
                "http: login from \(address) refused: too many failed logins; it may try again in \(wait.components.seconds)s"
            )
            var response = Self.html(
                .tooManyRequests,
                AccessPages.refusal(
                    node: node, heading: "Too many failed logins",
                    detail: "Try again in \(wait.components.seconds + 1) seconds."))
            response.headers[.retryAfter] = String(wait.components.seconds + 1)
            return response
        }
        let user = form["user"] ?? ""
        let next = Self.localPath(form["next"])
        let users = access.users
        let password = form["password"] ?? ""
        guard let role = await PasswordChecks.run({ users.check(user, password: password) }) else {
            access.throttle.failed(address)
            logger.warning("http: failed login as \(Self.loggable(user)) from \(address)")
            return Self.html(
                .unauthorized, AccessPages.login(node: node, message: "Wrong user or password.", next: next))
        }
        access.throttle.succeeded(address)
        logger.info("http: \(Self.loggable(user)) logged in (role \(role.rawValue)) from \(address)")
        let token = access.sessions.open(user: user, role: role)
        var response = Response(status: .seeOther, headers: [.cacheControl: "no-store"])
        response.headers[.location] = String(next.dropFirst())
        if response.headers[.location]?.isEmpty ?? true { response.headers[.location] = "./" }
        response.headers[.setCookie] = access.sessionCookie(token, secure: secure)
        return response
    }

    // MARK: Helpers

    /// A POST from a page of this dashboard: its `Origin` (or, without one,
    /// its `Referer`) names the host the request was sent to. A request with
    /// neither (not a browser's) is let through: the form's token still holds.
    static func sameOrigin(_ request: Request) -> Bool {
        guard let host = request.head.authority else { return false }
        if let origin = request.headers[.origin] {
            return origin == "http://\(host)" || origin == "https://\(host)"
        }
        if let referer = request.headers[.referer] {
            return referer.hasPrefix("http://\(host)/") || referer.hasPrefix("https://\(host)/")
        }
        return true
    }

    /// An `application/x-www-form-urlencoded` body, nil when it is too large.
    static func form(_ request: Request) async -> [String: String]? {
        var body = request.body.makeAsyncIterator()
        var bytes: [UInt8] = []
        while let chunk = try? await body.next() {
            bytes += chunk.readableBytesView
            if bytes.count > maxFormBytes { return nil }
        }
        var fields: [String: String] = [:]
        for (name, value) in QueryString.items(String(decoding: bytes, as: UTF8.self)) where fields[name] == nil {
            fields[name] = value
        }
        return fields
    }

    /// `next` if it is a path of this dashboard (`/…`, not `//host`), else `/`.
    static func localPath(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.contains("\\"),
            next.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f })
        else { return "/" }
        return next
    }

    /// `../` per folder of `path`, so that a redirect works under a proxy's path prefix too.
    static func base(of path: String) -> String {
        let depth = path.split(separator: "/", omittingEmptySubsequences: false).count - 2
        return depth > 0 ? String(repeating: "../", count: depth) : ""
    }

    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    /// A user name as the log shows it: printable ASCII, at most 64 characters, quoted.
    static func loggable(_ name: String) -> String {
        let printable = name.unicodeScalars.prefix(64).map { $0.value >= 0x20 && $0.value < 0x7f ? String($0) : "?" }
        return "\"" + printable.joined() + "\""
    }

    static func html(_ status: HTTPResponse.Status, _ html: String) -> Response {
        Response(
            status: status,
            headers: [
                .contentType: "text/html; charset=utf-8",
                .contentSecurityPolicy: DashboardPage.contentSecurityPolicy + "; frame-ancestors 'none'",
                .xContentTypeOptions: "nosniff",
                .cacheControl: "no-store",
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
