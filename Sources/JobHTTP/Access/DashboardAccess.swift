import Crypto
import Foundation
import Glibc
import HTTPTypes
import JobValues

/// Who may do what on the dashboard: the visitor a request comes from, logins and sessions.
///
/// In the order tried:
/// 1. a unix-socket listener: the peer's credentials (SO_PEERCRED) — root
///    and members of `operator-group` operate, other local users read;
/// 2. a `Remote-User` header, from a `trusted-proxies` address only — the
///    role the users file gives that name, else `read`;
/// 3. a script's token (`Authorization: Bearer TOKEN`): the role of the
///    users file's line that holds its hash; a token that matches none is
///    no visitor at all;
/// 4. a login session (cookie `jobd_session`);
/// 5. anonymous `read`, with `public: read`, or on a listener without any
///    authentication configured (loopback only: a listener other hosts can
///    reach is refused at start without one).
public struct DashboardAccess: Sendable {
    let config: HTTPAccessConfiguration
    let users: UserTable
    let sessions: SessionStore
    let throttle = LoginThrottle()
    let unixListener: Bool
    /// Signs the CSRF tokens of visitors without a session (peer credentials, a proxy's user); new at each start.
    let csrfKey = SymmetricKey(size: .bits256)

    static let cookie = "jobd_session"

    /// - Throws: the users file cannot be read or has a bad line.
    public init(
        _ config: HTTPAccessConfiguration, listen: HTTPListenAddress, environment: [String: String]
    ) throws(UserTableError) {
        self.config = config
        users =
            try config.users.map { source throws(UserTableError) in try UserTable(source, environment: environment) }
            ?? UserTable()
        sessions = SessionStore(lifetime: config.sessionLifetime)
        if case .unix = listen { unixListener = true } else { unixListener = false }
    }

    /// Today's behaviour: no authentication, everyone reads.
    public static func open(listen: HTTPListenAddress) -> DashboardAccess {
        // An empty configuration reads no file and cannot fail.
        (try? DashboardAccess(HTTPAccessConfiguration(), listen: listen, environment: [:]))!
    }

    /// Whether there is a login form to send visitors to.
    var hasLogins: Bool { !users.isEmpty }

    /// Anyone reads without proving who they are.
    var anonymousRead: Bool { config.publicRead || !config.authenticates }

    /// The client as the listener sees it.
    struct Peer: Sendable {
        /// An IP address, or nil on a unix socket.
        var address: String?
        /// The unix socket peer's uid and gid.
        var credentials: (uid: uid_t, gid: gid_t)?

        init(address: String? = nil, credentials: (uid: uid_t, gid: gid_t)? = nil) {
            self.address = address
            self.credentials = credentials
        }

        var origin: String {
            if let address { return address }
            if let credentials { return "unix socket uid \(credentials.uid)" }
            return "unix socket"
        }
    }

    /// The visitor `request` comes from; nil when it must log in first.
    func visitor(_ request: HTTPRequest, peer: Peer) -> Visitor? {
        if unixListener, let credentials = peer.credentials {
            let name = Self.userName(credentials.uid)
            let operates = credentials.uid == 0 || isOperator(uid: credentials.uid, gid: credentials.gid, name: name)
            return Visitor(
                name: name ?? "uid \(credentials.uid)", role: operates ? .operate : .read, way: .peer,
                origin: peer.origin)
        }
        if let address = peer.address, config.trustedProxies.contains(address),
            let name = request.headerFields[Self.remoteUser], !name.isEmpty
        {
            return Visitor(name: name, role: users.role(of: name) ?? .read, way: .proxy, origin: "\(address) (proxy)")
        }
        if let token = Self.bearer(request) {
            guard let user = users.tokenUser(token) else { return nil }
            return Visitor(name: user.name, role: user.role, way: .token, origin: peer.origin)
        }
        if let token = Self.cookie(request), let session = sessions.session(token) {
            return Visitor(name: session.user, role: session.role, way: .session, origin: peer.origin)
        }
        return anonymousRead ? Visitor(name: nil, role: .read, way: .anonymous, origin: peer.origin) : nil
    }

    /// The session of the request's cookie, if live.
    func session(_ request: HTTPRequest) -> (token: String, session: SessionStore.Session)? {
        guard let token = Self.cookie(request), let session = sessions.session(token) else { return nil }
        return (token, session)
    }

    /// The token an operator's forms carry: the session's, or for a visitor
    /// known without a session, one signed for their name; nil for an anonymous one.
    func csrfToken(for visitor: Visitor, _ request: HTTPRequest) -> String? {
        switch visitor.way {
        case .session: return session(request)?.session.csrf
        // A script sends its token itself: no browser adds it to a forged form.
        case .anonymous, .token: return nil
        case .peer, .proxy:
            let mac = HMAC<SHA256>.authenticationCode(
                for: Array("\(visitor.way.rawValue):\(visitor.name ?? "")".utf8), using: csrfKey)
            return Data(mac).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
    }

    /// Whether the request came over TLS to a trusted proxy (the cookie then gets `Secure`).
    func overTLS(_ request: HTTPRequest, peer: Peer) -> Bool {
        guard let address = peer.address, config.trustedProxies.contains(address) else { return false }
        return request.headerFields[Self.forwardedProto]?.lowercased() == "https"
    }

    /// `Set-Cookie` for a new session.
    func sessionCookie(_ token: String, secure: Bool) -> String {
        let seconds = Int(config.sessionLifetime.components.seconds)
        return
            "\(Self.cookie)=\(token); Path=/; Max-Age=\(seconds); HttpOnly; SameSite=Strict\(secure ? "; Secure" : "")"
    }

    /// `Set-Cookie` that ends the session cookie.
    func clearedCookie(secure: Bool) -> String {
        "\(Self.cookie)=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict\(secure ? "; Secure" : "")"
    }

    static let remoteUser = HTTPField.Name("Remote-User")!
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!

    /// The token of an `Authorization: Bearer TOKEN` header.
    static func bearer(_ request: HTTPRequest) -> String? {
        guard let value = request.headerFields[.authorization] else { return nil }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    static func cookie(_ request: HTTPRequest) -> String? {
        for header in request.headerFields[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == cookie { return String(parts[1]) }
            }
        }
        return nil
    }

    // MARK: Unix users and groups

    static func userName(_ uid: uid_t) -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &result) == 0, result != nil, let name = entry.pw_name
        else { return nil }
        return String(cString: name)
    }

    /// Whether the user is in `operator-group`: as the peer's gid, or among the user's groups.
    func isOperator(uid: uid_t, gid: gid_t, name: String?) -> Bool {
        var entry = group()
        var result: UnsafeMutablePointer<group>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getgrnam_r(config.operatorGroup, &entry, &buffer, buffer.count, &result) == 0, result != nil else {
            return false
        }
        let operators = entry.gr_gid
        if gid == operators { return true }
        guard let name else { return false }
        var count: Int32 = 64
        var groups = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(name, gid, &groups, &count) < 0 {
            groups = [gid_t](repeating: 0, count: Int(count))
            guard getgrouplist(name, gid, &groups, &count) >= 0 else { return false }
        }
        return groups.prefix(Int(count)).contains(operators)
    }
}
